//! A node set down mid-run (issue 6): the job ends NODE_FAIL, is classified
//! infra, and its retry record's job runs to COMPLETE on the other node.
//!
//! This is a test binary of its own: it takes a node down, and cargo runs
//! test binaries one after another, so no other test's job is on that node
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
fn node_failure_is_infra_and_its_retry_completes_on_the_other_node() {
    let Some(c) = cluster() else { return };
    let f = Fixture::new(c, 5, 0.0);
    // A gate, not a guess at how long the job runs: after training, the
    // command waits until the test opens the gate (the file `open`), so the
    // job is still running whenever the node goes down, however fast or slow
    // this machine is. The retry (same command) finds it open and ends. The
    // wait is bounded (300 s) and ends when the directory is gone (the test
    // ended without opening it).
    let gate = tempfile::Builder::new()
        .prefix("tao-node-failure-gate-")
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
    let ended = f.final_state(&id);
    drop(guard);
    assert_eq!(ended["state"], "ERROR", "{ended}");
    assert_eq!(ended["slurm"]["native_state"], "NODE_FAIL", "{ended}");

    let classified = f.classify(&id, 3);
    let cl = &classified["classification"];
    assert_eq!(cl["class"], "infra", "{cl}");
    assert_eq!(cl["retry"], true, "{cl}");
    assert_eq!(cl["node"], node.as_str(), "{cl}");

    std::fs::write(gate.path().join("open"), "").unwrap();
    let retry = f.retry(&id);
    let rid = retry["id"].as_str().unwrap().to_string();
    assert_ne!(rid, id);
    assert_eq!(retry["retry_of"], id.as_str());
    assert_eq!(retry["attempt"], 2);
    assert_ne!(
        retry["storage"]["results_dir"],
        line["storage"]["results_dir"]
    );
    assert!(
        retry["resources"]["exclude"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n == node.as_str()),
        "retry must avoid {node}: {retry}"
    );
    let done = f.final_state(&rid);
    assert_eq!(done["state"], "COMPLETE", "{done}");
    assert_ne!(done["slurm"]["nodes"], node.as_str(), "{done}");
}
