//! A real node failure for the node-failure tests: a job held running at a
//! gate, and its node set down with `scontrol` (put back in service when
//! the guard drops, whatever the test did). Nothing here is a double: the
//! node really goes down and Slurm ends the job NODE_FAIL.

use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use serde_json::Value;

use crate::fixture::Fixture;

/// A gate, not a guess at how long the job runs: after training, the
/// job's command waits until the test opens the gate (the file `open` in
/// a temporary directory), so the job is still running whenever the node
/// goes down, however fast or slow this machine is. A retry (same command)
/// finds it open and ends. The wait is bounded (300 s) and ends when the
/// directory is gone (the test ended without opening it).
pub struct Gate {
    dir: tempfile::TempDir,
}

impl Gate {
    /// A closed gate in a fresh temporary directory named `prefix...`
    /// (mode 755: the job runs as the cluster user).
    pub fn new(prefix: &str) -> Self {
        let dir = tempfile::Builder::new().prefix(prefix).tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        Gate { dir }
    }

    /// The shell to append to a job's command (it starts with `; `).
    pub fn wait_command(&self) -> String {
        let dir = self.dir.path().display();
        format!(
            "; for i in $(seq 600); do [ -e {dir}/open ] && break; [ -d {dir} ] || break; sleep 0.5; done"
        )
    }

    /// Open the gate: waiting jobs go on.
    pub fn open(&self) {
        std::fs::write(self.dir.path().join("open"), "").unwrap();
    }
}

/// A node set down (`scontrol update state=down`); resumed when dropped.
pub struct DownNode(pub String);

impl DownNode {
    /// Take `node` down now.
    ///
    /// Panics when scontrol fails (the tests run as root on the cluster host).
    pub fn take(node: &str) -> Self {
        let guard = DownNode(node.to_string());
        let st = std::process::Command::new("scontrol")
            .args([
                "update",
                &format!("nodename={node}"),
                "state=down",
                "reason=tao-slurm-test",
            ])
            .status()
            .expect("scontrol (the tests run as root on the cluster host)");
        assert!(st.success(), "scontrol could not take {node} down");
        guard
    }
}

impl Drop for DownNode {
    fn drop(&mut self) {
        let _ = std::process::Command::new("scontrol")
            .args(["update", &format!("nodename={}", self.0), "state=resume"])
            .status();
    }
}

/// A gated job whose node was taken down while it ran.
pub struct NodeFailure {
    /// The submitted job line.
    pub line: Value,
    /// Its record id.
    pub id: String,
    /// The node it ran on, now down.
    pub node: String,
    /// The gate the job (and a retry of it) waits at.
    pub gate: Gate,
    /// Puts the node back when dropped.
    pub down: DownNode,
}

/// Submit a gated job (`--no-requeue`, so the failure ends it), wait until
/// it runs (at most 180 s), then take its node down.
pub fn fail_a_running_job(f: &Fixture, gate_prefix: &str) -> NodeFailure {
    let gate = Gate::new(gate_prefix);
    let line = f.submit("--no-requeue", &gate.wait_command());
    let id = line["id"].as_str().unwrap().to_string();
    let running = f.poll_until(&id, Duration::from_secs(180), |r| r["state"] == "RUNNING");
    let node = running["slurm"]["nodes"].as_str().unwrap().to_string();
    let down = DownNode::take(&node);
    NodeFailure {
        line,
        id,
        node,
        gate,
        down,
    }
}

/// Assert that the job line `retry` excludes `node`.
pub fn assert_excludes(retry: &Value, node: &str) {
    assert!(
        retry["resources"]["exclude"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n == node),
        "retry must avoid {node}: {retry}"
    );
}
