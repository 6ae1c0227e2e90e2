//! Helpers for the end-to-end tests: the local cluster's environment, the
//! built tool binaries, and a shell runner with a cleared environment, so
//! the tests run the tools as a user would (a bash pipeline) without the
//! developer's own configuration leaking in.
//!
//! The cluster comes from `tests/cluster/up`, which writes its exports to
//! `$TAO_CLUSTER_DIR/env` (default `/var/tmp/tao-cluster/env`). When that
//! file is missing or the cluster does not answer, [`cluster`] fails the test
//! under CI (`CI=true`) and skips it otherwise, with the reason printed.

pub mod fixture;
pub mod node_failure;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The exports written by `tests/cluster/up`, as (name, value) pairs.
#[derive(Debug, Clone)]
pub struct Cluster {
    /// Variables from the env file (SLURM_USER, SLURM_HOSTNAME, ...).
    pub vars: Vec<(String, String)>,
}

impl Cluster {
    /// The value of one exported variable.
    ///
    /// Panics when the env file did not set it (a broken cluster script).
    pub fn var(&self, name: &str) -> &str {
        self.vars
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
            .unwrap_or_else(|| panic!("cluster env file does not set {name}"))
    }

    /// Run `command` on the login node over the system `ssh` client as the
    /// cluster user (for assertions: sacct, cat of remote files).
    pub fn ssh(&self, command: &str) -> Output {
        let host = self.var("SLURM_HOSTNAME");
        let (addr, port) = host.rsplit_once(':').unwrap_or((host, "22"));
        Command::new("ssh")
            .args([
                "-i",
                self.var("SSH_KEY_PATH"),
                "-p",
                port,
                "-o",
                "BatchMode=yes",
            ])
            .arg("-o")
            .arg(format!(
                "UserKnownHostsFile={}",
                self.var("SSH_KNOWN_HOSTS")
            ))
            .arg(format!("{}@{}", self.var("SLURM_USER"), addr))
            .arg(command)
            .stdin(Stdio::null())
            .output()
            .expect("running ssh")
    }
}

/// The env file `tests/cluster/up` wrote: `$TAO_CLUSTER_DIR/env`
/// (default `/var/tmp/tao-cluster/env`).
pub fn env_file() -> PathBuf {
    let dir = std::env::var("TAO_CLUSTER_DIR").unwrap_or_else(|_| "/var/tmp/tao-cluster".into());
    Path::new(&dir).join("env")
}

/// Parse `export NAME=value` lines.
pub fn parse_env_file(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("export "))
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// The local cluster, or `None` (test skipped, reason printed) when it is
/// not up and CI is not set.
///
/// Panics under `CI=true` when the cluster is missing or does not answer:
/// in CI a missing cluster is a failure, never a skip.
pub fn cluster() -> Option<Cluster> {
    let ci = std::env::var("CI").is_ok_and(|v| v == "true" || v == "1");
    let path = env_file();
    let problem = match std::fs::read_to_string(&path) {
        Ok(text) => {
            let c = Cluster {
                vars: parse_env_file(&text),
            };
            let out = c.ssh("sinfo -h -o %P");
            if out.status.success() {
                return Some(c);
            }
            format!(
                "the local cluster does not answer over ssh: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            )
        }
        Err(e) => format!("{}: {e}; run `bash tests/cluster/up` first", path.display()),
    };
    if ci {
        panic!("CI=true and {problem}");
    }
    eprintln!("skipping: {problem}");
    None
}

/// The six tools, in pipeline order: [`tao_core::TOOLS`].
pub use tao_core::TOOLS;

/// Write `<dir>/site.toml`, the built-in `local` site profile with a
/// `remote_prefix` that puts `path_first` first on PATH on the login host
/// (so a wrapper there stands in for a Slurm command: a test double of a
/// site whose squeue or sacct behaves otherwise), and return its path.
pub fn local_profile_with_path_first(dir: &Path, path_first: &Path) -> PathBuf {
    let local = tao_core::site::SiteProfile::builtin_text("local").expect("built-in local");
    let prefix = format!(
        "remote_prefix = \"PATH={}:$PATH; export PATH;\"",
        path_first.display()
    );
    assert!(local.contains("remote_prefix = \"\""), "{local}");
    let path = dir.join("site.toml");
    std::fs::write(&path, local.replace("remote_prefix = \"\"", &prefix)).unwrap();
    path
}

/// A registry image in NGC's `registry#image:tag` spelling (never pulled
/// by the local tests: it only has to be a valid name).
pub const NGC_IMAGE: &str = "nvcr.io#nvidia/tao/tao-toolkit:5.5.0-pyt";

/// The `tao-record open` arguments of a DINO train request with results
/// under `results_root` and the image [`NGC_IMAGE`]: `--results-root
/// ROOT --image IMAGE --action train --network-arch dino` (add `open`,
/// `--dry-run`, `--command` and the rest around them).
pub fn dino_train(results_root: &str) -> [&str; 8] {
    [
        "--results-root",
        results_root,
        "--image",
        NGC_IMAGE,
        "--action",
        "train",
        "--network-arch",
        "dino",
    ]
}

/// Every way a tool reads job lines on stdin: (binary, arguments).
pub const READERS: &[(&str, &[&str])] = &[
    ("tao-render", &[]),
    ("tao-redact", &["lint"]),
    ("tao-submit", &[]),
    ("tao-submit", &["cancel"]),
    ("tao-submit", &["preflight", "--lines"]),
    ("tao-poll", &[]),
    ("tao-poll", &["logs"]),
    ("tao-classify", &[]),
    ("tao-record", &["mark"]),
];

/// The directory holding the built tool binaries (`target/debug` or
/// `target/release`, whichever this test binary was built into).
pub fn bin_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    // target/<profile>/deps/<test-binary>
    exe.parent()
        .and_then(Path::parent)
        .expect("test binary lives in target/<profile>/deps")
        .to_path_buf()
}

/// Path of one tool binary; panics with the fix when it was not built.
pub fn bin(name: &str) -> PathBuf {
    let p = bin_dir().join(name);
    assert!(
        p.exists(),
        "{} is missing: run `cargo build --workspace --bins` before the end-to-end tests",
        p.display()
    );
    p
}

/// Run `script` with bash (`set -euo pipefail`) in a cleared environment:
/// PATH (tool binaries first, then the system's), HOME, the cluster's
/// exports, and `extra`. Returns the whole output.
pub fn bash(cluster: &Cluster, extra: &[(&str, &str)], script: &str) -> Output {
    bash_in(cluster, extra, None, script)
}

/// [`bash`] with the working directory `dir` (the test's own when `None`).
pub fn bash_in(
    cluster: &Cluster,
    extra: &[(&str, &str)],
    dir: Option<&Path>,
    script: &str,
) -> Output {
    for tool in TOOLS {
        bin(tool);
    }
    let mut cmd = Command::new("bash");
    cmd.arg("-c")
        .arg(format!("set -euo pipefail\n{script}"))
        .env_clear()
        .env(
            "PATH",
            format!(
                "{}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                bin_dir().display()
            ),
        )
        .env(
            "HOME",
            std::env::var("HOME").unwrap_or_else(|_| "/root".into()),
        )
        .stdin(Stdio::null());
    if let Some(d) = dir {
        cmd.current_dir(d);
    }
    // PATH stays the tools' (env-24.11 puts its Slurm wrappers on PATH for
    // the tests' own local commands, as `$DIR/bin:$PATH`, unexpanded here).
    for (k, v) in cluster.vars.iter().filter(|(k, _)| k != "PATH") {
        cmd.env(k, v);
    }
    for (k, v) in extra {
        cmd.env(k, v);
    }
    cmd.output().expect("running bash")
}

/// Text of a byte buffer, lossily (for assertions and messages).
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[cfg(test)]
mod tests {
    #[test]
    fn parses_export_lines() {
        let vars = super::parse_env_file("# c\nexport A=1\nexport B=x:y\nnot=this\n");
        assert_eq!(
            vars,
            vec![("A".into(), "1".into()), ("B".into(), "x:y".into())]
        );
    }
}
