//! The cron recipe, one pipeline (issue 14), on a node failure: a node set
//! down mid-run ends the job NODE_FAIL; the next runs of the pipeline
//! classify it infra, open and submit its retry once, excluding the failed
//! node, and the retry completes on the other node.
//!
//! A test binary of its own: it takes a node down, and cargo runs test
//! binaries one after another, so no other test's job is on that node
//! meanwhile.

use std::time::Duration;

use tao_tests::cluster;
use tao_tests::fixture::Fixture;
use tao_tests::node_failure::{assert_excludes, fail_a_running_job};

#[test]
fn cron_pipeline_retries_a_node_failure_once_on_the_other_node() {
    let Some(c) = cluster() else { return };
    let f = Fixture::new(c, 5, 0.0);
    // The retry, opened by the pipeline, waits at the same gate until it
    // opens, then ends.
    let nf = fail_a_running_job(&f, "tao-cron-node-failure-gate-");
    let (id, node) = (nf.id.clone(), nf.node.clone());
    // The pipeline sees NODE_FAIL, classifies, and opens and submits the retry.
    let chain = f.cron_until(&id, 10, Duration::from_secs(180), |ch| {
        ch.len() == 2 && ch[1]["slurm"]["job_id"].is_string()
    });
    nf.gate.open();
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
    assert_excludes(child, &node);
    let rid = child["id"].as_str().unwrap().to_string();
    // The child runs to the end under the same pipeline; never a second retry.
    let chain = f.cron_until(&id, 10, Duration::from_secs(180), |ch| {
        ch.len() >= 2 && ch[1]["state"] == "COMPLETE"
    });
    drop(nf.down);
    assert_eq!(chain.len(), 2, "retried once: {chain:?}");
    let done = f.record(&rid);
    assert_eq!(done["state"], "COMPLETE", "{done}");
    assert_ne!(done["slurm"]["nodes"], node.as_str(), "{done}");
}
