//! "Never twice" for retries as a property over generated sequences of
//! operations on a real record store (a temporary directory).
//!
//! Promise and source: src/retry.rs module doc ("Running the stage twice
//! over the same lines opens nothing twice: a record whose `retried_by`
//! names an existing record is not retried again (the check and the open
//! run under the record's lock)") and src/open/retry_of.rs (`retried_by`
//! is written in the parent before the child is created; "a crash between
//! the two leaves a parent naming a record that does not exist; the next
//! retry sees that and proceeds"), within the attempt budget.
//!
//! Operations, in any order, on any record of the chain: `retry_one`;
//! two `retry_one` of the same record at once (two cron runs); the record
//! fails again (ERROR, classified retryable, as `mark` after `classify`
//! leaves it); a crash between the parent's write and the child's create
//! (the child's file removed, when nothing retried it yet). After every
//! operation: no record has two existing retries (`retry_of` naming it),
//! a parent's existing `retried_by` is its one child, no attempt exceeds
//! the budget, and two concurrent retries open at most one record.
//! 64 cases of up to 16 operations (each write is two fsyncs).

use std::collections::HashMap;

use proptest::prelude::*;
use serde_json::{json, Map, Value};
use tao_record::retry::{retry_one, Outcome};
use tao_record::{Record, Store};

const MAX_ATTEMPTS: u32 = 4;

#[derive(Debug, Clone)]
enum Op {
    Retry(usize),
    RetryTwiceAtOnce(usize),
    FailAgain(usize),
    CrashBeforeCreate(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0usize..8).prop_map(Op::Retry),
        1 => (0usize..8).prop_map(Op::RetryTwiceAtOnce),
        3 => (0usize..8).prop_map(Op::FailAgain),
        1 => (0usize..8).prop_map(Op::CrashBeforeCreate),
    ]
}

fn root(id: &str) -> Record {
    let mut f = Map::new();
    f.insert("id".into(), json!(id));
    f.insert("platform".into(), json!("slurm"));
    f.insert(
        "image".into(),
        json!("nvcr.io/nvidia/tao/tao-toolkit:6.0.0-pyt"),
    );
    f.insert(
        "storage".into(),
        json!({"tier": "scratch", "base_dir": "/b", "job_dir": format!("/b/jobs/{id}"), "results_dir": format!("/b/results/{id}")}),
    );
    f.insert("state".into(), json!("ERROR"));
    f.insert("attempt".into(), json!(1));
    f.insert(
        "classification".into(),
        json!({"class": "infra", "retry": true}),
    );
    Record::from_map(f)
}

/// Every record in the store, by id.
fn all(store: &Store) -> HashMap<String, Record> {
    store
        .ids()
        .unwrap()
        .into_iter()
        .map(|id| {
            let r = store.load(&id).unwrap();
            (id, r)
        })
        .collect()
}

fn check(store: &Store) -> Result<(), TestCaseError> {
    let recs = all(store);
    let mut children: HashMap<&str, Vec<&str>> = HashMap::new();
    for (id, r) in &recs {
        if let Some(p) = r.fields.get("retry_of").and_then(Value::as_str) {
            children.entry(p).or_default().push(id);
        }
        let attempt = r.fields.get("attempt").and_then(Value::as_u64).unwrap_or(1);
        prop_assert!(
            attempt <= MAX_ATTEMPTS as u64,
            "{} at attempt {}",
            id,
            attempt
        );
    }
    for (p, c) in &children {
        prop_assert!(c.len() <= 1, "{} retried twice: {:?}", p, c);
        if let Some(by) = recs
            .get(*p)
            .and_then(|r| r.fields.get("retried_by"))
            .and_then(Value::as_str)
        {
            prop_assert_eq!(by, c[0], "{}'s retried_by", p);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(tao_core::testing::config(64))]

    /// See the module doc.
    #[test]
    fn a_record_is_never_retried_twice(ops in prop::collection::vec(op(), 1..16)) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().join("state")).unwrap();
        store.create(&root("tao-root-1")).unwrap();
        let mut opened = 0usize;
        for op in ops {
            let mut ids = store.ids().unwrap();
            ids.sort();
            let pick = |k: usize| ids[k % ids.len()].clone();
            match op {
                Op::Retry(k) => {
                    let id = pick(k);
                    let due = due(&store, &id);
                    let (outcome, _) = retry_one(&store, &id, MAX_ATTEMPTS).unwrap();
                    prop_assert_eq!(
                        matches!(outcome, Outcome::Opened(_)), due,
                        "{} due {} but {:?}", id, due, outcome
                    );
                    opened += usize::from(due);
                }
                Op::RetryTwiceAtOnce(k) => {
                    let id = pick(k);
                    let (a, b) = std::thread::scope(|s| {
                        let a = s.spawn(|| retry_one(&store, &id, MAX_ATTEMPTS));
                        let b = s.spawn(|| retry_one(&store, &id, MAX_ATTEMPTS));
                        (a.join().unwrap(), b.join().unwrap())
                    });
                    let opened = [&a, &b]
                        .iter()
                        .filter(|r| matches!(r, Ok((Outcome::Opened(_), _))))
                        .count();
                    prop_assert!(opened <= 1, "two retries at once: {:?} {:?}", a, b);
                }
                Op::FailAgain(k) => {
                    store
                        .update(&pick(k), |r| {
                            r.fields.insert("state".into(), json!("ERROR"));
                            r.fields.insert("classification".into(), json!({"class": "infra", "retry": true}));
                            Ok(())
                        })
                        .unwrap();
                }
                Op::CrashBeforeCreate(k) => {
                    let recs = all(&store);
                    let child = recs[&pick(k)]
                        .fields
                        .get("retried_by")
                        .and_then(Value::as_str)
                        .map(str::to_string);
                    if let Some(c) = child.filter(|c| {
                        recs.get(c).is_some_and(|r| !r.fields.contains_key("retried_by"))
                    }) {
                        std::fs::remove_file(store.record_path(&c)).unwrap();
                    }
                }
            }
            check(&store)?;
        }
        OPENED.with(|o| o.set(o.get() + opened));
    }
}

thread_local! {
    /// Retries opened by `Op::Retry` over the cases run on this thread (the
    /// property must have exercised the path it guards). Per thread: the
    /// harness runs this file's tests at once, so a shared counter would be
    /// read while the property is still adding to it.
    static OPENED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Whether a retry of `id` is due (src/retry.rs module doc): ERROR,
/// classified retryable, no existing retry, attempt below the budget.
fn due(store: &Store, id: &str) -> bool {
    let r = store.load(id).unwrap();
    r.fields.get("state") == Some(&json!("ERROR"))
        && r.fields.get("classification").and_then(|c| c.get("retry")) == Some(&json!(true))
        && store.existing_retry(r.fields.get("retried_by")).is_none()
        && r.fields.get("attempt").and_then(Value::as_u64).unwrap_or(1) < MAX_ATTEMPTS as u64
}

#[test]
fn the_property_opens_retries() {
    // The property's cases, run again on this thread (proptest runs them on
    // the calling thread), counted here alone.
    a_record_is_never_retried_twice();
    assert!(OPENED.with(|o| o.get()) > 10);
}
