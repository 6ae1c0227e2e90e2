//! tao-site-profile(5): the site-profile TOML format
//! (`tao_core::site::SiteProfile`): every key with its type, unit and
//! default, how a profile is chosen, and the built-in profiles, printed
//! from the very text compiled into the tools
//! (`SiteProfile::builtin_text`), so the page cannot drift from them. A
//! test checks that every key a profile serialises to is documented here.

use roff::Roff;
use tao_core::site::SiteProfile;

use crate::page::{finish, heading, para, see_also, tagged_list, text, title_line, verbatim};

/// Top-level keys: (key, type, default, meaning).
pub const TOP_KEYS: &[(&str, &str)] = &[
    ("name", "String, required. The profile's name, used in messages (site profile \"local\")."),
    ("runtime", "String, required: \"pyxis\" (srun --container-image: needs Pyxis and Enroot on the cluster) or \"none\" (plain srun, no container). The runtime of tao-record open when neither --runtime nor TAO_RUNTIME gives one."),
    ("remote_prefix", "String, default \"\" (nothing). POSIX sh text run first in every script on a login node (scripts run in sh -s whatever the login shell), e.g. \"PATH=/opt/slurm/bin:$PATH; export PATH;\" or \"module load slurm;\" where sbatch is not on the PATH of a non-interactive sh."),
    ("default_partition", "String, required. The partition, or a comma-separated list (Slurm takes the first that can run the job), of tao-record open when neither --partition nor SLURM_PARTITION names one. When [[partitions]] lists any, each name must be one of them."),
    ("max_gpus_per_node", "Integer (GPUs), required. The GPUs of one node: at or above this count a job's nodes are exclusive and its node count is derived from its total GPUs (8 on 4-GPU nodes: 2 nodes of 4); tao-record open records the derived shape and names it in a warning on standard error, and tao-render warns the same way for a line that asks for another shape than it renders."),
    ("[[partitions]]", "Array of tables, default empty. The partitions jobs may use, with their limits. When it lists any, tao-record open refuses a partition that is not listed, a --time longer than the partition's max_time, and a node count, GPU total, --cpus-per-task or --mem that none of the job's partitions can hold (max_nodes, gpus_per_node, cpus_per_node, mem_per_node), and tao-render refuses such a line too, at once instead of leaving the job pending for ever; when it is empty, any name is accepted and sbatch has the last word."),
    ("[conversion]", "Table, required. The CPU-partition job that converts a registry image into the .sqsh a pyxis job runs (enroot import), before the job itself."),
    ("[[nccl_knobs]]", "Array of tables, default empty. NCCL environments the communication probe of tao-submit tries, in order, after a probe with no NCCL settings hangs; the first that passes is cached per cluster and given to the job with sbatch --export."),
];

/// Keys of one `[[partitions]]` table.
pub const PARTITION_KEYS: &[(&str, &str)] = &[
    ("name", "String, required. The partition as Slurm knows it (sinfo -s)."),
    ("max_time", "String, required: a Slurm time string, as sbatch --time takes it: MINUTES, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS (04:00:00 is 4 hours, 2-00:00:00 two days). The partition's MaxTime (scontrol show partition)."),
    ("max_nodes", "Integer (nodes), optional. The most nodes one job may use (the partition's node count or MaxNodes, scontrol show partition). Absent: not checked."),
    ("gpus_per_node", "Integer (GPUs), optional. The GPUs of each node of the partition (Gres=gpu:N of its nodes; 0 for a CPU partition). A job whose GPUs per node, or whose GPU total spread over max_nodes nodes, exceed it is refused. Absent: not checked."),
    ("cpus_per_node", "Integer (CPUs), optional. The CPUs of each node of the partition (CPUTot, scontrol show node). A --cpus-per-task above it is refused (one task runs per node), and a request that names no CPU count gets TAO's default of 16 or this, whichever is smaller. Absent: not checked."),
    ("mem_per_node", "String, optional: sbatch --mem form (4000M, 64G; no unit is megabytes). The memory of each node (RealMemory, scontrol show node); a larger --mem is refused. Absent: not checked."),
];

/// Keys of the `[conversion]` table.
pub const CONVERSION_KEYS: &[(&str, &str)] = &[
    (
        "partition",
        "String, required. A CPU partition (never a GPU one) for conversion jobs.",
    ),
    ("cpus", "Integer (CPUs per task), required."),
    (
        "mem",
        "String, required: memory in sbatch --mem form (7200M, 16G).",
    ),
    (
        "time",
        "String, required: the conversion job's wall time, a Slurm time string.",
    ),
];

/// Keys of one `[[nccl_knobs]]` table.
pub const KNOB_KEYS: &[(&str, &str)] = &[
    ("env", "Table of strings, required: variable name ([A-Z_][A-Z0-9_]*, e.g. NCCL_P2P_DISABLE) to value (non-empty, letters, digits and _ . : / @ + ^ = -; no commas or spaces, since it travels in sbatch --export)."),
];

/// A site file in the format, for EXAMPLES.
const EXAMPLE: &str = "# /etc/tao-slurm/mysite.toml
name = \"mysite\"
runtime = \"pyxis\"
remote_prefix = \"module load slurm;\"
default_partition = \"batch\"
max_gpus_per_node = 8

[[partitions]]
name = \"batch\"
max_time = \"08:00:00\"
max_nodes = 16
gpus_per_node = 8
mem_per_node = \"1000G\"

[[partitions]]
name = \"cpu\"
max_time = \"1-00:00:00\"

[conversion]
partition = \"cpu\"
cpus = 4
mem = \"16G\"
time = \"02:00:00\"

[[nccl_knobs]]
env = { NCCL_P2P_DISABLE = \"1\" }

[[nccl_knobs]]
env = { NCCL_IB_DISABLE = \"1\", NCCL_SOCKET_IFNAME = \"eth0\" }";

fn subsection(out: &mut String, title: &str) {
    let mut r = Roff::new();
    r.control("SS", [title]);
    out.push_str(&r.to_roff());
}

/// Render the whole tao-site-profile(5) page.
///
/// Output: roff source, UTF-8, ending in a newline.
pub fn render() -> String {
    let mut out = title_line("TAO-SITE-PROFILE", "5");
    heading(&mut out, "NAME");
    out.push_str(&text("tao-site-profile - what the tao-slurm tools know about one cluster: partitions and their limits, image conversion, NCCL knobs"));
    heading(&mut out, "SYNOPSIS");
    verbatim(&mut out, "TAO_SITE_PROFILE=local | cs-oci-ord | /path/to/site.toml\n--site-profile NAME|FILE    (tao-render, tao-submit)");
    heading(&mut out, "DESCRIPTION");
    out.push_str(&text("Site knowledge is data, not code: a site profile is a TOML file that tells the tools the cluster's partitions and their wall-time limits, the runtime, the resources of the image-conversion job, the NCCL environments to try when the multi-node communication probe hangs, and a shell prefix for commands on the login node."));
    para(&mut out, "A profile is chosen by the --site-profile option where a tool has one, else by the TAO_SITE_PROFILE environment variable, else the built-in cs-oci-ord. The value is the name of a built-in profile (local, cs-oci-ord) or the path of a TOML file. Read by tao-record open (runtime, default_partition, max_gpus_per_node, partitions), tao-render (partitions, max_gpus_per_node, conversion), tao-submit (conversion, nccl_knobs, remote_prefix) and tao-poll (remote_prefix).");
    para(&mut out, "Every key not marked with a default is required; a key the format does not know is refused, as is a value of the wrong type. A profile that cannot be read or parsed is a configuration error: the tool exits 78 with one line naming the profile and the problem.");
    heading(&mut out, "KEYS");
    tagged_list(&mut out, TOP_KEYS);
    subsection(&mut out, "[[partitions]]");
    out.push_str(&text("One table per partition:"));
    tagged_list(&mut out, PARTITION_KEYS);
    subsection(&mut out, "[conversion]");
    tagged_list(&mut out, CONVERSION_KEYS);
    subsection(&mut out, "[[nccl_knobs]]");
    out.push_str(&text("One table per environment to try, in order:"));
    tagged_list(&mut out, KNOB_KEYS);
    heading(&mut out, "BUILT-IN PROFILES");
    for name in SiteProfile::builtin_names() {
        subsection(&mut out, name);
        out.push_str(&text(match name {
            "local" => "The project's local test cluster (tests/cluster/up): runtime none, partitions gpu and cpu_long.",
            "cs-oci-ord" => "The default: the packaged platform's cluster, with its 4-hour GPU partitions. Its source gives no CPUs, node counts or memory per node for them, so those limits are absent (not checked; sbatch decides).",
            _ => "A compiled-in profile.",
        }));
        verbatim(
            &mut out,
            SiteProfile::builtin_text(name)
                .expect("a built-in name has its text")
                .trim_end(),
        );
    }
    heading(&mut out, "EXAMPLES");
    out.push_str(&text("A profile for another site, kept in a file:"));
    verbatim(&mut out, EXAMPLE);
    para(&mut out, "Use it for every tool of a pipeline:");
    verbatim(&mut out, "export TAO_SITE_PROFILE=/etc/tao-slurm/mysite.toml\ntao-record open --spec spec.yaml --partition batch --time 06:00:00 \\\n    --image nvcr.io#nvidia/tao/tao-toolkit:5.5.0-pyt \\\n  | tao-render | tao-redact lint | tao-submit | tao-record mark");
    para(
        &mut out,
        "Check a file before use: tao-render loads the profile before it reads any line, and exits 78 naming the first problem:",
    );
    verbatim(
        &mut out,
        "tao-render --site-profile /etc/tao-slurm/mysite.toml < /dev/null && echo usable",
    );
    heading(&mut out, "ENVIRONMENT");
    tagged_list(
        &mut out,
        &[(
            "TAO_SITE_PROFILE",
            "The profile: a built-in name or a file path (default cs-oci-ord). --site-profile overrides it.",
        )],
    );
    see_also(
        &mut out,
        &[
            ("tao-record", 1),
            ("tao-render", 1),
            ("tao-submit", 1),
            ("tao-poll", 1),
            ("tao-jobline", 7),
            ("sbatch", 1),
        ],
    );
    finish("", &out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every key a profile has is documented, in its table.
    #[test]
    fn every_key_of_the_format_is_documented() {
        let p = SiteProfile::load(Some("cs-oci-ord")).unwrap();
        let v = serde_json::to_value(&p).unwrap();
        let documented = |list: &[(&str, &str)], key: &str| {
            list.iter()
                .any(|(k, _)| *k == key || k.trim_matches(['[', ']']) == key)
        };
        for (k, sub) in v.as_object().unwrap() {
            assert!(documented(TOP_KEYS, k), "top-level key {k}");
            let (list, item) = match k.as_str() {
                "partitions" => (PARTITION_KEYS, sub.get(0)),
                "conversion" => (CONVERSION_KEYS, Some(sub)),
                "nccl_knobs" => (KNOB_KEYS, sub.get(0)),
                _ => continue,
            };
            for key in item.unwrap().as_object().unwrap().keys() {
                assert!(documented(list, key), "{k}.{key}");
            }
        }
    }

    #[test]
    fn the_built_in_profiles_are_printed_as_shipped() {
        let page = render();
        assert!(page.contains("\n.TH TAO-SITE-PROFILE 5 "));
        for name in SiteProfile::builtin_names() {
            assert!(page.contains(&format!(".SS {name}\n")), "{name}");
        }
        assert!(page.contains("max_time = \"2\\-00:00:00\""), "{page}");
    }

    #[test]
    fn the_example_is_a_valid_profile() {
        let p = SiteProfile::parse(EXAMPLE, "example").unwrap();
        assert_eq!(p.partitions.len(), 2);
        assert_eq!(p.nccl_knobs.len(), 2);
    }
}
