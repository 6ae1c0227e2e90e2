//! Failure classification and retries on the local cluster (issue 6): a
//! Python exception is the program's fault and is never retried; the retry
//! budget stops a job that keeps failing.
//!
//! The node-failure case is in `node_failure.rs`, a test binary of its own:
//! it takes a node down, and cargo runs test binaries one after another, so
//! no other test's job is on that node meanwhile.

use tao_tests::cluster;
use tao_tests::fixture::Fixture;

#[test]
fn python_exception_is_the_programs_fault_and_not_retried() {
    let Some(c) = cluster() else { return };
    let f = Fixture::new(c, 5, 0.0);
    let line = f.submit("", " --fail-at-epoch 1");
    let id = line["id"].as_str().unwrap().to_string();
    assert_eq!(f.final_state(&id)["state"], "ERROR");
    let cl = f.classify(&id, 3)["classification"].clone();
    assert_eq!(cl["class"], "program", "{cl}");
    assert_eq!(cl["retry"], false, "{cl}");
}

#[test]
fn retry_budget_stops_a_job_that_keeps_failing() {
    let Some(c) = cluster() else { return };
    let f = Fixture::new(c, 5, 0.0);
    // Every attempt dies the way a GPU that fell off the bus does (an infra fault).
    let line = f.submit(
        "",
        "; echo \"NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.\" >&2; exit 1",
    );
    let mut id = line["id"].as_str().unwrap().to_string();
    assert_eq!(f.final_state(&id)["state"], "ERROR");
    let first = f.classify(&id, 2)["classification"].clone();
    assert_eq!(
        (first["class"].as_str(), first["retry"].as_bool()),
        (Some("infra"), Some(true)),
        "{first}"
    );

    id = f.retry(&id)["id"].as_str().unwrap().to_string();
    assert_eq!(f.final_state(&id)["state"], "ERROR");
    let second = f.classify(&id, 2)["classification"].clone();
    assert_eq!(second["class"], "infra", "{second}");
    assert_eq!(
        second["retry"], false,
        "budget of 2 attempts is spent: {second}"
    );
    assert!(
        second["reason"]
            .as_str()
            .unwrap()
            .contains("retry budget exhausted (attempt 2 of 2)"),
        "{second}"
    );
}
