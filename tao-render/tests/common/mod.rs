//! Shared helpers for tao-render's integration tests: job-line fixtures
//! with fake values of the real format, the binary with a cleared
//! environment, shellcheck, and a real bash that runs rendered scripts with
//! a faked Slurm (stub `srun` and `scontrol` on PATH).

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{json, Value};
use tao_core::site::SiteProfile;
use tao_core::JobLine;

/// A fake record id of the real format.
pub const ID: &str = "tao-20261129-k3f9x2";

/// A job line as `tao-record open` writes it, under `base`.
pub fn line_under(base: &str, id: &str) -> Value {
    json!({
        "id": id,
        "platform": "slurm",
        "action": "train",
        "network_arch": "dino",
        "image": null,
        "runtime": "none",
        "command": "echo hello",
        "resources": {
            "nodes": 1, "gpus_per_node": 2, "cpus_per_task": 4,
            "time": "01:00:00", "child_timeout": "00:50:00",
            "partition": "gpu", "account": null, "exclusive": false,
            "requeue": true, "exclude": [], "mem": null
        },
        "storage": {
            "tier": "lustre",
            "base_dir": base,
            "job_dir": format!("{base}/jobs/{id}"),
            "results_dir": format!("{base}/results/{id}")
        },
        "mounts": [],
        "env": {},
        "secrets": []
    })
}

/// A job line under a fixed fake base directory.
pub fn line() -> Value {
    line_under("/lustre/fake/tao", ID)
}

/// Wrap a JSON value as a job line.
pub fn jobline(v: &Value) -> JobLine {
    JobLine::parse(&v.to_string(), 1).expect("fixture is a JSON object")
}

/// A built-in site profile.
pub fn profile(name: &str) -> SiteProfile {
    SiteProfile::load(Some(name)).expect("built-in profile")
}

/// The tao-render binary with a cleared environment.
pub fn bin() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tao-render"));
    cmd.env_clear();
    cmd
}

/// Run the binary with `args` and `stdin`.
pub fn run_bin(args: &[&str], stdin: &str) -> Output {
    // The tool may exit before reading all of it: a broken pipe is no error.
    tao_testkit::tool::feed(bin().args(args), stdin).wait_unread_ok()
}

/// `bash -n` and `shellcheck -S warning` on a script; panics with the
/// findings.
pub fn lint_script(name: &str, text: &str) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(format!("{name}.sbatch"));
    std::fs::write(&path, text).unwrap();
    let out = Command::new("bash")
        .arg("-n")
        .arg(&path)
        .output()
        .expect("bash");
    assert!(
        out.status.success(),
        "bash -n {name}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let shellcheck = Path::new("/usr/bin/shellcheck");
    if !shellcheck.exists() {
        assert!(
            std::env::var_os("CI").is_none(),
            "shellcheck is required in CI (apt-get install shellcheck)"
        );
        eprintln!("skipping shellcheck for {name}: /usr/bin/shellcheck not installed");
        return;
    }
    let out = Command::new(shellcheck)
        .args(["-S", "warning", "-s", "bash"])
        .arg(&path)
        .output()
        .expect("shellcheck");
    assert!(
        out.status.success(),
        "shellcheck {name}:\n{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// A fake Slurm for running scripts with plain bash: a temp dir with a
/// `bin/` of stubs (`srun`, `scontrol`) put first on PATH.
pub struct FakeSlurm {
    pub dir: tempfile::TempDir,
}

/// `srun` stub that runs the command: skips options, then runs the command
/// once per node (TAO_FAKE_NODES, default 1) with SLURM_NODEID/SLURM_PROCID
/// set, the first in the foreground of the others, and exits with the
/// first non-zero status.
const SRUN_RUN: &str = r#"#!/bin/bash
while [ $# -gt 0 ]; do
  case "$1" in
    --*) shift ;;
    *) break ;;
  esac
done
n="${TAO_FAKE_NODES:-1}"
pids=()
for ((i = 0; i < n; i++)); do
  SLURM_NODEID=$i SLURM_PROCID=$i SLURMD_NODENAME="n$((i + 1))" "$@" &
  pids+=($!)
done
trap 'kill -TERM "${pids[@]}" 2>/dev/null' TERM INT
rc=0
for p in "${pids[@]}"; do
  wait "$p"; r=$?
  if [ "$rc" -eq 0 ]; then rc=$r; fi
done
exit "$rc"
"#;

/// `srun` stub that runs nothing: dumps its argv and environment
/// (NUL-separated) into $TAO_FAKE_DUMP/argv.N and env.N.
const SRUN_DUMP: &str = r#"#!/bin/bash
n=$(ls "$TAO_FAKE_DUMP" | wc -l)
printf '%s\0' "$@" > "$TAO_FAKE_DUMP/argv.$n"
env -0 > "$TAO_FAKE_DUMP/env.$n"
exit 0
"#;

const SCONTROL: &str = r#"#!/bin/bash
if [ "$1 $2" = "show hostnames" ]; then
  printf '%s\n' ${TAO_FAKE_HOSTS:-n1 n2}
  exit 0
fi
echo "fake scontrol: unsupported $*" >&2
exit 1
"#;

impl FakeSlurm {
    fn with_srun(srun: &str) -> Self {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        for (name, text) in [("srun", srun), ("scontrol", SCONTROL)] {
            let p = bin.join(name);
            std::fs::write(&p, text).unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        std::fs::create_dir(dir.path().join("dump")).unwrap();
        FakeSlurm { dir }
    }

    /// An srun that runs the step.
    pub fn running() -> Self {
        Self::with_srun(SRUN_RUN)
    }

    /// An srun that only records its argv and environment.
    pub fn dumping() -> Self {
        Self::with_srun(SRUN_DUMP)
    }

    /// Add an executable stub `name` to the stub directory.
    pub fn add_stub(&self, name: &str, text: &str) {
        use std::os::unix::fs::PermissionsExt;
        let p = self.dir.path().join("bin").join(name);
        std::fs::write(&p, text).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    /// A shared-storage base directory inside the temp dir.
    pub fn base(&self) -> PathBuf {
        let p = self.dir.path().join("shared");
        std::fs::create_dir_all(&p).unwrap();
        p
    }

    /// `bash SCRIPT` with a cleared environment, fake SLURM_* variables
    /// and the stubs first on PATH.
    pub fn bash(&self, script: &Path) -> Command {
        let mut cmd = Command::new("bash");
        cmd.arg(script).env_clear();
        cmd.env(
            "PATH",
            format!(
                "{}:/usr/local/bin:/usr/bin:/bin",
                self.dir.path().join("bin").display()
            ),
        )
        .env("SLURM_JOB_ID", "4242")
        .env("SLURM_JOB_NODELIST", "n[1-2]")
        .env("SLURM_RESTART_COUNT", "0")
        .env("TAO_FAKE_DUMP", self.dir.path().join("dump"))
        .stdin(std::process::Stdio::null());
        cmd
    }

    /// The dump files written by the dumping srun, in call order:
    /// (argv, env) with NUL-separated entries.
    pub fn dumps(&self) -> Vec<(Vec<String>, Vec<String>)> {
        let d = self.dir.path().join("dump");
        let mut out = Vec::new();
        for i in 0.. {
            let argv = d.join(format!("argv.{}", i * 2));
            let env = d.join(format!("env.{}", i * 2));
            if !argv.exists() {
                break;
            }
            let split = |p: &Path| {
                let bytes = std::fs::read(p).unwrap();
                let text = String::from_utf8(bytes).unwrap();
                // Every entry ends with a NUL; empty entries are kept.
                let mut v: Vec<String> = text.split('\0').map(str::to_string).collect();
                v.pop();
                v
            };
            out.push((split(&argv), split(&env)));
        }
        out
    }
}
