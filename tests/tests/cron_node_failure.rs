//! The cron recipe, one pipeline (issue 14), on a node failure: a node set
//! down mid-run ends the job NODE_FAIL; the next runs of the pipeline
//! classify it infra, open and submit its retry once, excluding the failed
//! node, and the retry completes on the other node.
//!
//! A test binary of its own: it takes a node down, and cargo runs test
//! binaries one after another, so no other test's job is on that node
//! meanwhile.

use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use tao_tests::cluster;
use tao_tests::fixture::Fixture;

/// Puts a node back in service when dropped, whatever the test did.
struct ResumeNode(String);

impl Drop for ResumeNode {
    fn drop(&mut self) {
        let _ = std::process::Command::new("scontrol")
            .args(["update", &format!("nodename={}", self.0), "state=resume"])
            .status();
    }
}

#[test]
fn cron_pipeline_retries_a_node_failure_once_on_the_other_node() {
    let Some(c) = cluster() else { return };
    let f = Fixture::new(c, 5, 0.0);
    // A gate (see node_failure.rs): the job waits after training until the
    // test opens it, so it is running whenever the node goes down; the
    // retry, opened by the pipeline, waits until the gate opens and ends.
    let gate = tempfile::Builder::new()
        .prefix("tao-cron-node-failure-gate-")
        .tempdir()
        .unwrap();
    std::fs::set_permissions(gate.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let dir = gate.path().display();
    let wait = format!(
        "; for i in $(seq 600); do [ -e {dir}/open ] && break; [ -d {dir} ] || break; sleep 0.5; done"
    );
    let line = f.submit("--no-requeue", &wait);
    let id = line["id"].as_str().unwrap().to_string();
    let running = f.poll_until(&id, Duration::from_secs(180), |r| r["state"] == "RUNNING");
    let node = running["slurm"]["nodes"].as_str().unwrap().to_string();

    let guard = ResumeNode(node.clone());
    let st = std::process::Command::new("scontrol")
        .args([
            "update",
            &format!("nodename={node}"),
            "state=down",
            "reason=tao-slurm-test",
        ])
        .status()
        .expect("scontrol (the tests run as root on the cluster host)");
    assert!(st.success());
    // The pipeline sees NODE_FAIL, classifies, and opens and submits the retry.
    let chain = f.cron_until(&id, 10, Duration::from_secs(180), |ch| {
        ch.len() == 2 && ch[1]["slurm"]["job_id"].is_string()
    });
    std::fs::write(gate.path().join("open"), "").unwrap();
    let parent = &chain[0];
    assert_eq!(parent["state"], "ERROR", "{parent}");
    assert_eq!(parent["slurm"]["native_state"], "NODE_FAIL", "{parent}");
    let cl = &parent["classification"];
    assert_eq!(
        (cl["class"].as_str(), cl["retry"].as_bool()),
        (Some("infra"), Some(true)),
        "{cl}"
    );
    assert_eq!(cl["node"], node.as_str(), "{cl}");
    let child = &chain[1];
    assert_eq!(child["retry_of"], id.as_str());
    assert_eq!(child["attempt"], 2);
    assert!(
        child["resources"]["exclude"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n == node.as_str()),
        "retry must avoid {node}: {child}"
    );
    let rid = child["id"].as_str().unwrap().to_string();
    // The child runs to the end under the same pipeline; never a second retry.
    let chain = f.cron_until(&id, 10, Duration::from_secs(180), |ch| {
        ch.len() >= 2 && ch[1]["state"] == "COMPLETE"
    });
    drop(guard);
    assert_eq!(chain.len(), 2, "retried once: {chain:?}");
    let done = f.record(&rid);
    assert_eq!(done["state"], "COMPLETE", "{done}");
    assert_ne!(done["slurm"]["nodes"], node.as_str(), "{done}");
}
