//! Failure classification and retries on the local cluster (issue 6): a
//! Python exception is the program's fault and is never retried; the retry
//! budget stops a job that keeps failing.
//!
//! The node-failure case is in `node_failure.rs`, a test binary of its own:
//! it takes a node down, and cargo runs test binaries one after another, so
//! no other test's job is on that node meanwhile.

use std::time::Duration;

use tao_tests::cluster;
use tao_tests::fixture::{Fixture, GPU_OFF_THE_BUS, PYTHON_EXCEPTION};

#[test]
fn python_exception_is_the_programs_fault_and_not_retried() {
    let Some(c) = cluster() else { return };
    let f = Fixture::new(c, 5, 0.0);
    let line = f.submit("", PYTHON_EXCEPTION);
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
    // Every attempt dies as a GPU fallen off the bus (an infra fault).
    let line = f.submit("", GPU_OFF_THE_BUS);
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

/// The cron recipe, one pipeline (issue 14): a program fault is classified,
/// recorded and never retried, however often the pipeline runs.
#[test]
fn cron_pipeline_never_retries_a_program_fault() {
    let Some(c) = cluster() else { return };
    let f = Fixture::new(c, 5, 0.0);
    let line = f.submit("", PYTHON_EXCEPTION);
    let id = line["id"].as_str().unwrap().to_string();
    let chain = f.cron_until(&id, 10, Duration::from_secs(180), |ch| {
        ch[0]["state"] == "ERROR" && ch[0].get("classification").is_some()
    });
    let cl = &chain[0]["classification"];
    assert_eq!(
        (cl["class"].as_str(), cl["retry"].as_bool()),
        (Some("program"), Some(false)),
        "{cl}"
    );
    f.cron(10);
    let chain = f.chain(&id);
    assert_eq!(chain.len(), 1, "a program fault was retried: {chain:?}");
    assert!(chain[0].get("retried_by").is_none(), "{}", chain[0]);
}

/// The cron recipe stops a job that keeps failing on infrastructure at the
/// budget (2 attempts here): one retry, then none.
#[test]
fn cron_pipeline_budget_stops_a_job_that_keeps_failing_on_infrastructure() {
    let Some(c) = cluster() else { return };
    let f = Fixture::new(c, 5, 0.0);
    let line = f.submit("", GPU_OFF_THE_BUS);
    let id = line["id"].as_str().unwrap().to_string();
    let chain = f.cron_until(&id, 2, Duration::from_secs(300), |ch| {
        ch.len() == 2 && ch[1]["state"] == "ERROR" && ch[1].get("classification").is_some()
    });
    assert_eq!(chain[0]["classification"]["class"], "infra", "{}", chain[0]);
    assert_eq!(chain[1]["attempt"], 2, "{}", chain[1]);
    assert_eq!(chain[1]["retry_of"], id.as_str());
    assert_eq!(chain[1]["classification"]["class"], "infra", "{}", chain[1]);
    f.cron(2);
    let chain = f.chain(&id);
    assert_eq!(
        chain.len(),
        2,
        "the budget of 2 attempts was passed: {chain:?}"
    );
    assert!(chain[1].get("retried_by").is_none(), "{}", chain[1]);
}

/// A failure first seen by the watch pipeline (README: `tao-record list
/// --live | tao-poll --watch | tao-record mark`) is recorded ERROR with no
/// classification; the cron recipe must still pick it up (`list --live`
/// holds ERROR records not yet classified), classify it and open its retry
/// once, however often it runs.
#[test]
fn cron_pipeline_classifies_and_retries_a_failure_the_watch_pipeline_marked() {
    let Some(c) = cluster() else { return };
    let f = Fixture::new(c, 5, 0.0);
    let line = f.submit("", GPU_OFF_THE_BUS);
    let id = line["id"].as_str().unwrap().to_string();
    // Bounded: watch ends when every job it follows has ended.
    f.sh("timeout 300 sh -c 'tao-record list --live | tao-poll --watch | tao-record mark' >/dev/null || true");
    let rec = f.record(&id);
    assert_eq!(rec["state"], "ERROR", "{rec}");
    assert!(
        rec.get("classification").is_none_or(|c| c.is_null()),
        "watch does not classify: {rec}"
    );
    let live = f.sh("tao-record list --live");
    assert!(
        live.contains(&format!("\"id\":\"{id}\"")),
        "an unclassified failure left --live: {live}"
    );

    f.cron(3);
    let chain = f.chain(&id);
    let cl = &chain[0]["classification"];
    assert_eq!(
        (cl["class"].as_str(), cl["retry"].as_bool()),
        (Some("infra"), Some(true)),
        "{}",
        chain[0]
    );
    assert_eq!(chain.len(), 2, "the retry was not opened once: {chain:?}");
    let child = chain[1]["id"].as_str().unwrap().to_string();
    assert_eq!(chain[0]["retried_by"], child.as_str());
    // Classified now: it leaves --live, and a second run retries it not again.
    let live = f.sh("tao-record list --live");
    assert!(
        live.lines()
            .all(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["id"] != id.as_str()),
        "a classified failure stayed in --live: {live}"
    );
    f.cron(3);
    let chain = f.chain(&id);
    assert_eq!(chain[0]["retried_by"], child.as_str(), "{}", chain[0]);
    assert!(
        chain
            .iter()
            .filter(|r| r["retry_of"] == id.as_str())
            .count()
            == 1,
        "retried twice: {chain:?}"
    );
}

/// A cron run that dies between `tao-record mark` and `tao-record retry`
/// (killed, the machine rebooted) leaves an infra failure classified
/// retryable and no retry. `list --live` still holds it, so the next cron
/// run opens its retry: exactly once, however often cron runs after.
#[test]
fn cron_pipeline_retries_a_failure_whose_retry_a_crash_never_opened() {
    let Some(c) = cluster() else { return };
    let f = Fixture::new(c, 5, 0.0);
    let line = f.submit("", GPU_OFF_THE_BUS);
    let id = line["id"].as_str().unwrap().to_string();
    assert_eq!(f.final_state(&id)["state"], "ERROR");
    // The crashed run: the cron recipe up to `mark`, no `retry` stage.
    let rec = f.classify(&id, 10);
    assert_eq!(rec["classification"]["retry"], true, "{rec}");
    assert!(rec.get("retried_by").is_none(), "{rec}");
    let live = f.sh("tao-record list --live");
    assert!(
        live.contains(&format!("\"id\":\"{id}\"")),
        "a retryable failure without its retry left --live: {live}"
    );

    f.cron(3);
    let chain = f.chain(&id);
    assert_eq!(chain.len(), 2, "the retry was not opened once: {chain:?}");
    let child = chain[1]["id"].as_str().unwrap().to_string();
    assert_eq!(chain[0]["retried_by"], child.as_str());
    assert_eq!(chain[1]["retry_of"], id.as_str());
    f.cron(3);
    let chain = f.chain(&id);
    assert_eq!(chain[0]["retried_by"], child.as_str(), "{}", chain[0]);
    assert_eq!(
        chain
            .iter()
            .filter(|r| r["retry_of"] == id.as_str())
            .count(),
        1,
        "retried twice: {chain:?}"
    );
}
