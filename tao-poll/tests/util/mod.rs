//! Helpers for the tests that run against the local Slurm cluster
//! (`tests/cluster/up`): the environment it exports, submitting real jobs as
//! the cluster user with the project's storage layout, and running the
//! binary with a cleared environment.
//!
//! Before tao-submit exists, jobs are submitted here the way it will:
//! `sbatch --parsable --hold` as the cluster user, create
//! `<job_dir>/slurm-logs/<id>-<slurm_id>/`, then `scontrol release`.

#![allow(dead_code)]

use std::collections::HashMap;
use std::process::Command as Proc;
use std::time::{Duration, Instant};

use assert_cmd::Command;
use serde_json::{json, Value};

/// The cluster's exports (`$TAO_CLUSTER_DIR/env`, default
/// `/var/tmp/tao-cluster/env`), or why there are none.
pub fn cluster_env() -> Result<HashMap<String, String>, String> {
    let path = tao_testkit::cluster::env_file();
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("no {path} ({e}): run tests/cluster/up"))?;
    let env = tao_testkit::cluster::parse_exports(&text);
    let ok = Proc::new("sinfo")
        .arg("-h")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !ok {
        return Err("sinfo fails: the local cluster is not up (tests/cluster/up)".into());
    }
    Ok(env)
}

/// The cluster env, or: skip (CI unset) / fail (CI=true) with the reason.
pub fn need_cluster() -> Option<HashMap<String, String>> {
    match cluster_env() {
        Ok(e) => Some(e),
        Err(why) => {
            tao_testkit::ci::skip_or_fail(&why);
            None
        }
    }
}

/// The tao-poll binary as a process with a cleared environment plus the
/// cluster's variables (login, key, known hosts, site profile, results
/// root) and PATH=/usr/bin:/bin.
pub fn tao_poll_proc(env: &HashMap<String, String>) -> Proc {
    let mut c = Proc::new(assert_cmd::cargo::cargo_bin("tao-poll"));
    c.env_clear();
    for k in [
        "SLURM_USER",
        "SLURM_HOSTNAME",
        "SSH_KEY_PATH",
        "SSH_KNOWN_HOSTS",
        "TAO_SITE_PROFILE",
        "SLURM_BASE_RESULTS_DIR",
    ] {
        if let Some(v) = env.get(k) {
            c.env(k, v);
        }
    }
    c.env("PATH", "/usr/bin:/bin");
    c
}

/// tao-poll with a cleared environment plus the cluster's variables
/// ([`tao_poll_proc`]).
pub fn tao_poll(env: &HashMap<String, String>) -> Command {
    Command::from_std(tao_poll_proc(env))
}

/// tao-poll as a spawnable process (same environment as [`tao_poll`]),
/// stdin/stdout/stderr piped, for tests that act while it runs.
pub fn spawn_tao_poll(env: &HashMap<String, String>, args: &[&str]) -> std::process::Child {
    tao_poll_proc(env)
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

/// Assert that a finished tao-poll run exited 0; the failure shows its
/// stderr.
pub fn assert_exit_0(out: &std::process::Output) {
    tao_testkit::tool::assert_exit(out, 0);
}

/// Wait for a child at most `limit`; kills it and panics past the bound.
/// Returns (exit status, stdout, stderr).
pub fn wait_bounded(mut child: std::process::Child, limit: Duration) -> (i32, String, String) {
    let until = Instant::now() + limit;
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > until {
            let _ = child.kill();
            panic!("tao-poll still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Run a shell command as root; panics with its stderr on failure.
pub fn sh(cmd: &str) -> String {
    let out = Proc::new("sh").arg("-c").arg(cmd).output().unwrap();
    assert!(
        out.status.success(),
        "{cmd}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Run a shell command as the cluster user. On a cluster whose Slurm lives
/// in a root of its own (the 24.11 one: TAO_SLURM_ROOT in its env file), the
/// command runs there (the same user and uid; the shared directory is at the
/// same path inside).
pub fn as_user(env: &HashMap<String, String>, cmd: &str) -> String {
    let user = &env["SLURM_USER"];
    let chroot = env
        .get("TAO_SLURM_ROOT")
        .map(|r| format!("chroot {} ", tao_core::shell::quote(r)))
        .unwrap_or_default();
    sh(&format!(
        "{chroot}su -s /bin/sh {user} -c {}",
        tao_core::shell::quote(cmd)
    ))
}

/// A unique record id for a test job.
pub fn new_id(tag: &str) -> String {
    let n = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("tp-{tag}-{}", n % 10_000_000_000)
}

/// A submitted test job.
pub struct Job {
    /// Record id.
    pub id: String,
    /// Slurm job id.
    pub sid: String,
    /// The job line (input to tao-poll).
    pub line: Value,
}

/// Submit `body` (bash) as a job with the storage layout. `sbatch_args`
/// are extra sbatch flags (`--time=1`, `--requeue`, `-w n2`). The script
/// runs the body, writes completion.json with its exit code and exits with
/// it. With `release == false` the job stays held.
pub fn submit(
    env: &HashMap<String, String>,
    tag: &str,
    body: &str,
    sbatch_args: &str,
    release: bool,
) -> Job {
    let id = new_id(tag);
    let base = &env["SLURM_BASE_RESULTS_DIR"];
    let user = &env["SLURM_USER"];
    let job_dir = format!("{base}/jobs/{id}");
    let results = format!("{base}/results/{id}");
    sh(&format!("mkdir -p {job_dir}/slurm-logs {job_dir}/sbatch {results} && chown -R {user} {job_dir} {results}"));
    // The node-failure tests take n2 down: every other test job keeps off
    // it, so one test's node failure never requeues another test's job.
    let placement = if sbatch_args.contains("-w n2") {
        ""
    } else {
        "--exclude=n2"
    };
    let requeue = sbatch_args.contains("--requeue") && !sbatch_args.contains("--no-requeue");
    let script = format!(
        "#!/bin/bash\n#SBATCH --job-name={id}\n#SBATCH --output={job_dir}/slurm-logs/{id}-%j/main.out\n#SBATCH --error={job_dir}/slurm-logs/{id}-%j/main.err\n#SBATCH --open-mode=append\n#SBATCH --partition=gpu\nexport RESULTS_DIR={results}\nLOG={job_dir}/slurm-logs/{id}-$SLURM_JOB_ID\n( {body}\n); rc=$?\nprintf '{{\"exit_code\": %d, \"end\": \"%s\", \"slurm_job_id\": \"%s\", \"restart_count\": %d}}\\n' $rc \"$(date -u +%FT%TZ)\" \"$SLURM_JOB_ID\" \"${{SLURM_RESTART_COUNT:-0}}\" > \"$LOG/completion.json\"\nexit $rc\n"
    );
    let path = format!("{job_dir}/sbatch/job_{id}.sbatch");
    std::fs::write(&path, script).unwrap();
    sh(&format!("chown {user} {path}"));
    let sid = as_user(
        env,
        &format!("cd {job_dir} && sbatch --parsable --hold {placement} {sbatch_args} {path}"),
    )
    .trim()
    .to_string();
    assert!(
        sid.bytes().all(|b| b.is_ascii_digit()),
        "sbatch said {sid:?}"
    );
    sh(&format!(
        "mkdir -p {job_dir}/slurm-logs/{id}-{sid} && chown {user} {job_dir}/slurm-logs/{id}-{sid}"
    ));
    if release {
        sh(&format!("scontrol release {sid}"));
    }
    let line = json!({
        "id": id,
        "storage": {"job_dir": job_dir, "results_dir": results},
        "resources": {"requeue": requeue},
        "slurm": {"job_id": sid},
    });
    Job { id, sid, line }
}

impl Drop for Job {
    /// Cancel the job whatever happened (a finished job: scancel does nothing).
    fn drop(&mut self) {
        cancel(&self.sid);
    }
}

/// Poll one line once; returns the output line and the exit status.
pub fn poll_once(env: &HashMap<String, String>, line: &Value, args: &[&str]) -> (Value, i32) {
    let out = tao_poll(env)
        .args(args)
        .write_stdin(format!("{line}\n"))
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let v: Value = serde_json::from_str(text.lines().next().unwrap_or("null")).unwrap();
    (v, out.status.code().unwrap_or(-1))
}

/// Poll until `pred` holds (feeding each result back as the next input, as
/// cron does through tao-record), at most `limit`. Panics with the last
/// line on timeout.
pub fn poll_until(
    env: &HashMap<String, String>,
    line: &Value,
    limit: Duration,
    pred: impl Fn(&Value) -> bool,
) -> Value {
    let deadline = Instant::now() + limit;
    let mut cur = line.clone();
    loop {
        let (v, _) = poll_once(env, &cur, &[]);
        if pred(&v) {
            return v;
        }
        if v.get("state").is_some() {
            cur = v.clone();
        }
        assert!(Instant::now() < deadline, "timed out; last line: {v}");
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// `state` of a line.
pub fn state(v: &Value) -> &str {
    v["state"].as_str().unwrap_or("")
}

/// `message` of a line.
pub fn message(v: &Value) -> &str {
    v["message"].as_str().unwrap_or("")
}

/// scancel, ignoring errors (cleanup).
pub fn cancel(sid: &str) {
    let _ = Proc::new("scancel").arg(sid).output();
}

/// Resumes a node when dropped, whatever happened (a failed assertion too).
pub struct NodeGuard(pub String);

impl Drop for NodeGuard {
    fn drop(&mut self) {
        let _ = Proc::new("scontrol")
            .args(["update", &format!("nodename={}", self.0), "state=resume"])
            .output();
    }
}
