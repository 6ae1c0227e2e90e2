//! Site profiles: what is known about one cluster (partitions and their
//! wall-time limits, the image-conversion profile, NCCL knobs, a remote
//! command prefix such as `module load slurm;`). Site knowledge is data,
//! not code: profiles are TOML, two are compiled in (`local`,
//! `cs-oci-ord`), and `TAO_SITE_PROFILE` may name another file.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use crate::error::{Error, Result};

/// A partition and its limits. Only `max_time` is required; a limit that
/// is absent is not checked (sbatch has the last word).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Partition {
    /// Partition name as Slurm knows it.
    pub name: String,
    /// Maximum wall time in a Slurm time format (`HH:MM:SS`, `D-HH:MM:SS`, ...).
    pub max_time: String,
    /// Nodes a job may use at most (the partition's node count, or its
    /// MaxNodes; `scontrol show partition`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_nodes: Option<u32>,
    /// GPUs on each node (the nodes' `Gres=gpu:N`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpus_per_node: Option<u32>,
    /// CPUs of each node (the nodes' `CPUTot`, `scontrol show node`): the
    /// most CPUs one task may ask for (`--cpus-per-task`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus_per_node: Option<u32>,
    /// Memory of each node, in sbatch `--mem` form (the nodes'
    /// `RealMemory`, in megabytes when no unit is given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mem_per_node: Option<String>,
}

/// Resources of the CPU-partition job that converts an image to `.sqsh`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Conversion {
    /// CPU partition for conversion jobs (never a GPU partition).
    pub partition: String,
    /// CPUs per task.
    pub cpus: u32,
    /// Memory, in sbatch `--mem` form (`7200M`).
    pub mem: String,
    /// Wall time in a Slurm time format.
    pub time: String,
}

/// One NCCL environment to try when the communication probe hangs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NcclKnob {
    /// Variables to export, e.g. `NCCL_P2P_DISABLE=1`.
    pub env: BTreeMap<String, String>,
}

/// A site profile.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SiteProfile {
    /// Profile name.
    pub name: String,
    /// Default runtime: `pyxis` or `none`.
    pub runtime: String,
    /// Shell text run before every remote command (e.g. `module load slurm;`).
    #[serde(default)]
    pub remote_prefix: String,
    /// Partition used when neither a flag nor SLURM_PARTITION names one.
    pub default_partition: String,
    /// GPUs per node at which nodes become exclusive and the node count is derived.
    pub max_gpus_per_node: u32,
    /// Known partitions and their limits.
    #[serde(default)]
    pub partitions: Vec<Partition>,
    /// Image conversion job resources.
    pub conversion: Conversion,
    /// NCCL knob sets to try in order after a probe hang.
    #[serde(default)]
    pub nccl_knobs: Vec<NcclKnob>,
}

const BUILTIN: &[(&str, &str)] = &[
    ("local", include_str!("../profiles/local.toml")),
    ("cs-oci-ord", include_str!("../profiles/cs-oci-ord.toml")),
];

impl SiteProfile {
    /// Names of the compiled-in profiles.
    pub fn builtin_names() -> Vec<&'static str> {
        BUILTIN.iter().map(|(n, _)| *n).collect()
    }

    /// The TOML text of the compiled-in profile `name` (`local`,
    /// `cs-oci-ord`), as shipped: tao-site-profile(5) prints it.
    pub fn builtin_text(name: &str) -> Option<&'static str> {
        BUILTIN.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
    }

    /// Parse a profile from TOML text; `origin` names it in errors.
    /// Every `max_time` and the conversion `time` must be Slurm times
    /// ([`crate::slurm_time::SlurmTime::parse`]).
    ///
    /// Errors: [`Error::Config`] naming the origin and the TOML problem or
    /// the bad time.
    pub fn parse(text: &str, origin: &str) -> Result<Self> {
        let p: Self = toml::from_str(text)
            .map_err(|e| Error::Config(format!("site profile {origin:?}: {}", e.message())))?;
        let times = p
            .partitions
            .iter()
            .map(|x| (format!("partition {:?} max_time", x.name), &x.max_time))
            .chain([("conversion time".to_string(), &p.conversion.time)]);
        for x in &p.partitions {
            if let Some(m) = &x.mem_per_node {
                crate::mem::mem_megabytes(m).map_err(|e| {
                    Error::Config(format!(
                        "site profile {origin:?}: partition {:?} mem_per_node: {e}; fix the profile",
                        x.name
                    ))
                })?;
            }
        }
        for (what, t) in times {
            crate::slurm_time::SlurmTime::parse(t).map_err(|e| {
                Error::Config(format!(
                    "site profile {origin:?}: {what}: {e}; fix the profile"
                ))
            })?;
        }
        Ok(p)
    }

    /// Load a profile by built-in name or file path. `None` reads
    /// `TAO_SITE_PROFILE`, defaulting to `cs-oci-ord`.
    ///
    /// Errors: [`Error::Config`] when the name is neither built in nor a
    /// readable file, or the file is not a valid profile.
    pub fn load(name_or_path: Option<&str>) -> Result<Self> {
        let env = std::env::var("TAO_SITE_PROFILE").ok();
        let want = name_or_path
            .map(str::to_string)
            .or(env)
            .unwrap_or_else(|| "cs-oci-ord".to_string());
        if let Some((_, text)) = BUILTIN.iter().find(|(n, _)| *n == want) {
            return Self::parse(text, &want);
        }
        let text = std::fs::read_to_string(&want).map_err(|e| {
            Error::Config(format!(
                "site profile {want:?}: {e}; set TAO_SITE_PROFILE to one of {:?} or a profile file",
                Self::builtin_names()
            ))
        })?;
        Self::parse(&text, &want)
    }

    /// The partition entry named `name`, if the profile knows it.
    pub fn partition(&self, name: &str) -> Option<&Partition> {
        self.partitions.iter().find(|p| p.name == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_parse() {
        for name in SiteProfile::builtin_names() {
            let p = SiteProfile::load(Some(name)).unwrap();
            assert_eq!(p.name, name);
        }
        let ord = SiteProfile::load(Some("cs-oci-ord")).unwrap();
        assert_eq!(ord.conversion.partition, "cpu_long");
        assert_eq!(ord.conversion.cpus, 4);
        assert_eq!(ord.conversion.mem, "7200M");
        assert_eq!(ord.max_gpus_per_node, 8);
    }

    #[test]
    fn unknown_profile_names_the_fix() {
        let err = SiteProfile::load(Some("/nonexistent/x.toml")).unwrap_err();
        assert!(err.to_string().contains("TAO_SITE_PROFILE"), "{err}");
    }
}
