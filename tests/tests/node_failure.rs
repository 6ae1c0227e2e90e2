//! A node set down mid-run (issue 6): the job ends NODE_FAIL, is classified
//! infra, and its retry record's job runs to COMPLETE on the other node.
//!
//! This is a test binary of its own: it takes a node down, and cargo runs
//! test binaries one after another, so no other test's job is on that node
//! meanwhile.

use tao_tests::cluster;
use tao_tests::fixture::Fixture;
use tao_tests::node_failure::{assert_excludes, fail_a_running_job};

#[test]
fn node_failure_is_infra_and_its_retry_completes_on_the_other_node() {
    let Some(c) = cluster() else { return };
    let f = Fixture::new(c, 5, 0.0);
    let nf = fail_a_running_job(&f, "tao-node-failure-gate-");
    let (id, node) = (&nf.id, &nf.node);
    let ended = f.final_state(id);
    drop(nf.down);
    assert_eq!(ended["state"], "ERROR", "{ended}");
    assert_eq!(ended["slurm"]["native_state"], "NODE_FAIL", "{ended}");

    let classified = f.classify(id, 3);
    let cl = &classified["classification"];
    assert_eq!(cl["class"], "infra", "{cl}");
    assert_eq!(cl["retry"], true, "{cl}");
    assert_eq!(cl["node"], node.as_str(), "{cl}");

    nf.gate.open();
    let retry = f.retry(id);
    let rid = retry["id"].as_str().unwrap().to_string();
    assert_ne!(&rid, id);
    assert_eq!(retry["retry_of"], id.as_str());
    assert_eq!(retry["attempt"], 2);
    assert_ne!(
        retry["storage"]["results_dir"],
        nf.line["storage"]["results_dir"]
    );
    assert_excludes(&retry, node);
    let done = f.final_state(&rid);
    assert_eq!(done["state"], "COMPLETE", "{done}");
    assert_ne!(done["slurm"]["nodes"], node.as_str(), "{done}");
}
