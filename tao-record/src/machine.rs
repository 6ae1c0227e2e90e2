//! The state machine of a record and how an observation is applied to it.
//!
//! Rules (tao-jobline(7), issue "tao-record"):
//! - COMPLETE, ERROR and CANCELED are final: leaving one is an error that
//!   names both states; reporting the same final state again is fine.
//! - RUNNING back to PENDING is legal: Slurm requeued the job
//!   (`--requeue`, node failure, preemption).
//! - Every other move between PENDING, RUNNING and UNKNOWN is legal, and
//!   any of them may end in a final state.
//! - An observation older (`observed_at`) than the last one recorded is
//!   stale: it changes nothing, and if it names another state than the
//!   record's it is refused with an error (contract: "tao-record refuses an
//!   observation older than the last one recorded"); the same state seen
//!   late is harmless and passes quietly. Equal times are not stale
//!   (tao-classify passes tao-poll's `observed_at` on). Only times on one
//!   clock compare: a record whose last observation is later than this
//!   host's clock now (the clock was set back, or the tool that wrote it
//!   ran on a clock ahead) is not used to call anything stale, so marks go
//!   on in the order they are applied instead of stopping until the clock
//!   catches up ([`is_stale`]).
//! - The same observation twice (same state and message as the last
//!   history entry, or the same state with no message) adds no history
//!   entry.
//! - An `error` carried in from an earlier tool is stored on the record;
//!   a later error-free observation clears it when it moves the state or
//!   comes from the tool that set the error (`observed_by` = `error.tool`:
//!   that tool has since succeeded). `mark ID --clear-error` clears it by
//!   hand (tools pass a line with an `error` through untouched, so a
//!   stored error would otherwise keep e.g. a failed submit from being
//!   run again).

use serde_json::{Map, Value};
use tao_core::{Error, Result, State};

use crate::store::Record;

/// The tool name written as `source` of entries made by tao-record itself
/// and as `error.tool` of errors it sets.
pub const TOOL: &str = "tao-record";

/// Top-level fields a `mark` never overwrites from an input line: the
/// identity, the storage binding, the retry links and the fields the state
/// machine itself owns.
pub const PROTECTED: &[&str] = &[
    "id",
    "history",
    "storage",
    "retry_of",
    "retried_by",
    "attempt",
    "state",
    "message",
    "observed_at",
    "observed_by",
    "error",
];

/// Check that a record in state `from` may move to `to`.
///
/// Errors: [`Error::Data`] "illegal transition from COMPLETE to RUNNING ..."
/// when `from` is final and `to` differs; its advice fits `from`: a retry
/// (`open --retry-of ID`) from ERROR or CANCELED, a new record
/// (`open ...`) from COMPLETE, which cannot be retried.
pub fn check_transition(from: State, to: State) -> Result<()> {
    if from.is_final() && from != to {
        // Only ERROR and CANCELED records can be retried (open.rs).
        let advice = if from == State::Complete {
            "the job completed; to run it again, open a new record with `tao-record open ...`"
        } else {
            "to run the job again, open its retry with `tao-record open --retry-of ID`"
        };
        return Err(Error::Data(format!(
            "illegal transition from {from} to {to}: {from} is final; {advice}"
        )));
    }
    Ok(())
}

/// One observation to apply to a record: a state with its message, when and
/// by whom it was seen, and the other fields to merge.
#[derive(Debug, Clone, Default)]
pub struct Observation {
    /// The observed state; `None` merges fields only (no transition).
    pub state: Option<State>,
    /// The native sub-state and why (`PENDING (Priority)`), if any.
    pub message: Option<String>,
    /// When it was observed, RFC 3339 UTC (`tao_core::time`).
    pub at: String,
    /// Who observed it (tool name, `user`, ...).
    pub source: String,
    /// An `error` object from an earlier tool, stored on the record.
    pub error: Option<Value>,
    /// Other top-level fields to merge (fields in [`PROTECTED`] are ignored;
    /// `slurm` is merged key by key, everything else replaced).
    pub fields: Map<String, Value>,
}

/// What applying an observation did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The state changed, or the message changed: one history entry added.
    Recorded,
    /// Same state and message as the last entry: fields merged, no new entry.
    Duplicate,
    /// Older than the last recorded observation, same state: nothing changed.
    Stale,
    /// No state given: fields merged only.
    Merged,
}

/// Apply `obs` to `record` following the rules in the module docs, with
/// this host's clock now ([`apply_at`]).
///
/// Errors: as [`apply_at`].
pub fn apply(record: &mut Record, obs: &Observation) -> Result<Outcome> {
    apply_at(record, obs, chrono::Utc::now())
}

/// Whether an observation made at `at` is stale against the record's last
/// observation at `last`, with this host's clock reading `now` (all UTC).
///
/// The rule: stale when `at` is before `last` and `last` is not after
/// `now`. Why: `observed_at` orders observations only while they come from
/// one clock that does not run backwards. When the launch host's clock is
/// set back (or a record was written on a host whose clock ran ahead), the
/// record's last time lies in this clock's future, and every new poll
/// would look older than it until the clock caught up (hours, for a clock
/// set back by hours), so a job's end would not be recorded. Then the
/// order in which lines are applied is the order they were observed in
/// (a pipeline `tao-poll | tao-record mark` applies them as the poll made
/// them), as it is for marks without `observed_at`; the state machine
/// still refuses leaving a final state, and once such an observation is
/// applied the record's time is back on this clock, so ordering by time
/// resumes. Other rules were weighed: the poll's own sequence number or
/// Slurm's event times are not on every line (a hand mark, tao-classify,
/// a replayed file), and letting a later state of the state table win
/// over an older time would also apply a late RUNNING after a requeue's
/// PENDING.
pub fn is_stale(
    at: chrono::DateTime<chrono::Utc>,
    last: chrono::DateTime<chrono::Utc>,
    now: chrono::DateTime<chrono::Utc>,
) -> bool {
    at < last && last <= now
}

/// Apply `obs` to `record` following the rules in the module docs; `now`
/// is this host's clock (UTC), against which the record's last
/// observation is checked before it is used to call `obs` stale
/// ([`is_stale`]).
///
/// Errors: [`Error::Data`] for an illegal transition, a stale observation
/// of another state (the record is then unchanged) or an `observed_at`
/// that is not RFC 3339.
pub fn apply_at(
    record: &mut Record,
    obs: &Observation,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<Outcome> {
    let at = tao_core::time::parse_rfc3339(&obs.at).ok_or_else(|| {
        Error::Data(format!(
            "observed_at {:?} is not an RFC 3339 time; use e.g. \"2026-11-29T18:58:47Z\"",
            obs.at
        ))
    })?;
    let Some(to) = obs.state else {
        let clear = obs.error.is_none() && error_tool(record) == Some(obs.source.as_str());
        merge_fields(record, obs);
        if clear {
            record.fields.shift_remove("error");
        }
        return Ok(Outcome::Merged);
    };
    let last = record
        .fields
        .get("observed_at")
        .and_then(Value::as_str)
        .and_then(tao_core::time::parse_rfc3339);
    let from = record.state().unwrap_or(State::Unknown);
    if let Some(last) = last.filter(|last| is_stale(at, *last, now)) {
        if from == to {
            return Ok(Outcome::Stale);
        }
        return Err(Error::Data(format!(
            "stale observation: {to} observed at {} is older than the record's last observation ({from} at {}); not applied",
            obs.at,
            last.to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
        )));
    }
    check_transition(from, to)?;

    let clear =
        obs.error.is_none() && (from != to || error_tool(record) == Some(obs.source.as_str()));
    merge_fields(record, obs);
    if clear {
        record.fields.shift_remove("error");
    }
    let f = &mut record.fields;
    f.insert("state".into(), Value::String(to.as_str().into()));
    match &obs.message {
        Some(m) => {
            f.insert("message".into(), Value::String(m.clone()));
        }
        // No message about the same state: nothing new, keep the old one.
        None if from == to => {}
        None => {
            f.shift_remove("message");
        }
    }
    f.insert("observed_at".into(), Value::String(obs.at.clone()));
    f.insert("observed_by".into(), Value::String(obs.source.clone()));

    let message = obs.message.as_deref();
    let dup = record.history().last().is_some_and(|h| {
        h.get("state").and_then(Value::as_str) == Some(to.as_str())
            && (message.is_none() || h.get("message").and_then(Value::as_str) == message)
    });
    if dup {
        return Ok(Outcome::Duplicate);
    }
    push_history(record, &obs.at, to, &obs.source, message);
    Ok(Outcome::Recorded)
}

/// The `tool` of the record's stored `error`, if any.
fn error_tool(record: &Record) -> Option<&str> {
    record.fields.get("error")?.get("tool")?.as_str()
}

/// Append `{at, state, source, message}` to the record's history.
pub fn push_history(
    record: &mut Record,
    at: &str,
    state: State,
    source: &str,
    message: Option<&str>,
) {
    let mut e = Map::new();
    e.insert("at".into(), Value::String(at.into()));
    e.insert("state".into(), Value::String(state.as_str().into()));
    e.insert("source".into(), Value::String(source.into()));
    e.insert(
        "message".into(),
        message.map_or(Value::Null, |m| Value::String(m.into())),
    );
    let h = record
        .fields
        .entry("history")
        .or_insert_with(|| Value::Array(Vec::new()));
    if !h.is_array() {
        *h = Value::Array(Vec::new());
    }
    h.as_array_mut()
        .expect("just made an array")
        .push(Value::Object(e));
}

fn merge_fields(record: &mut Record, obs: &Observation) {
    let f = &mut record.fields;
    for (k, v) in &obs.fields {
        if PROTECTED.contains(&k.as_str()) {
            continue;
        }
        match (k.as_str(), f.get_mut(k), v) {
            ("slurm", Some(Value::Object(old)), Value::Object(new)) => {
                for (nk, nv) in new {
                    old.insert(nk.clone(), nv.clone());
                }
            }
            _ => {
                f.insert(k.clone(), v.clone());
            }
        }
    }
    if let Some(e) = &obs.error {
        f.insert("error".into(), e.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use State::*;

    const T0: &str = "2026-11-29T10:00:00.000000Z";
    const T1: &str = "2026-11-29T10:00:01.000000Z";
    const T2: &str = "2026-11-29T10:00:02.000000Z";

    fn record(state: State) -> Record {
        let mut r = Record::default();
        r.fields.insert("id".into(), json!("tao-x"));
        r.fields.insert("state".into(), json!(state.as_str()));
        r.fields.insert("observed_at".into(), json!(T1));
        push_history(&mut r, T0, Pending, TOOL, Some("opened"));
        if state != Pending {
            push_history(&mut r, T1, state, "tao-poll", Some("seen"));
        }
        r
    }

    fn obs(state: State, msg: &str, at: &str) -> Observation {
        Observation {
            state: Some(state),
            message: Some(msg.into()),
            at: at.into(),
            source: "tao-poll".into(),
            ..Default::default()
        }
    }

    #[test]
    fn transition_table() {
        // (from, to, legal)
        let table = [
            (Pending, Pending, true),
            (Pending, Running, true),
            (Pending, Complete, true),
            (Pending, Error, true),
            (Pending, Canceled, true),
            (Pending, Unknown, true),
            (Running, Pending, true), // requeue
            (Running, Running, true),
            (Running, Complete, true),
            (Running, Error, true),
            (Running, Canceled, true),
            (Running, Unknown, true),
            (Unknown, Pending, true),
            (Unknown, Running, true),
            (Unknown, Complete, true),
            (Unknown, Error, true),
            (Unknown, Canceled, true),
            (Complete, Complete, true),
            (Error, Error, true),
            (Canceled, Canceled, true),
            (Complete, Running, false),
            (Complete, Pending, false),
            (Complete, Error, false),
            (Complete, Unknown, false),
            (Error, Running, false),
            (Error, Pending, false),
            (Error, Complete, false),
            (Error, Canceled, false),
            (Canceled, Running, false),
            (Canceled, Complete, false),
            (Canceled, Unknown, false),
            (Complete, Canceled, false),
            (Error, Unknown, false),
            (Canceled, Pending, false),
            (Canceled, Error, false),
            (Unknown, Unknown, true),
        ];
        for (from, to, legal) in table {
            let r = check_transition(from, to);
            assert_eq!(r.is_ok(), legal, "{from} -> {to}");
            if let Err(e) = r {
                let m = e.to_string();
                assert!(m.contains(from.as_str()) && m.contains(to.as_str()), "{m}");
                // The advice must be one `open` accepts: COMPLETE cannot be retried.
                if from == Complete {
                    assert!(!m.contains("--retry-of") && m.contains("completed"), "{m}");
                    assert!(m.contains("`tao-record open ...`"), "{m}");
                } else {
                    assert!(m.contains("tao-record open --retry-of ID"), "{m}");
                }
            }
        }
        // Every pair is covered by the table.
        assert_eq!(table.len(), 36);
        for from in State::ALL {
            for to in State::ALL {
                let listed = table.iter().any(|(f, t, _)| *f == from && *t == to);
                assert!(listed, "{from}->{to} missing from the table");
            }
        }
    }

    #[test]
    fn apply_cases() {
        // (start, observation, outcome or error, resulting state, history length)
        let cases: Vec<(State, Observation, Option<Outcome>, State, usize)> = vec![
            (
                Pending,
                obs(Running, "RUNNING", T2),
                Some(Outcome::Recorded),
                Running,
                2,
            ),
            (
                Running,
                obs(Pending, "REQUEUED", T2),
                Some(Outcome::Recorded),
                Pending,
                3,
            ),
            (
                Running,
                obs(Running, "seen", T2),
                Some(Outcome::Duplicate),
                Running,
                2,
            ),
            (
                Running,
                obs(Running, "SUSPENDED", T2),
                Some(Outcome::Recorded),
                Running,
                3,
            ),
            (Running, obs(Complete, "COMPLETED", T0), None, Running, 2),
            (
                Running,
                obs(Running, "late", T0),
                Some(Outcome::Stale),
                Running,
                2,
            ),
            (
                Running,
                obs(Complete, "COMPLETED", T1),
                Some(Outcome::Recorded),
                Complete,
                3,
            ),
            (Complete, obs(Running, "RUNNING", T2), None, Complete, 2),
            (
                Error,
                obs(Error, "seen", T2),
                Some(Outcome::Duplicate),
                Error,
                2,
            ),
            (Canceled, obs(Pending, "x", T2), None, Canceled, 2),
        ];
        for (i, (start, o, want, end, hlen)) in cases.into_iter().enumerate() {
            let mut r = record(start);
            let before = r.clone();
            let got = apply(&mut r, &o);
            match want {
                Some(w) => assert_eq!(got.unwrap(), w, "case {i}"),
                None => {
                    assert!(got.is_err(), "case {i}");
                    assert_eq!(r, before, "case {i}: record changed on error");
                }
            }
            assert_eq!(r.state(), Some(end), "case {i}");
            assert_eq!(r.history().len(), hlen, "case {i}");
        }
    }

    /// The launch host's clock was set back: the record's last observation
    /// (RUNNING at T_future) lies in this clock's future, so the polls made
    /// now are applied in order instead of being refused as stale until the
    /// clock catches up; once one is applied, time order holds again.
    #[test]
    fn a_record_observed_in_the_future_does_not_make_new_observations_stale() {
        let future = "2126-11-29T10:00:00.000000Z";
        let now = tao_core::time::parse_rfc3339("2026-11-29T10:05:00Z").unwrap();
        let mut r = record(Running);
        r.fields.insert("observed_at".into(), json!(future));
        // A new message about the same state: recorded, not stale.
        let o = obs(
            Running,
            "RUNNING (epoch 3/10)",
            "2026-11-29T10:04:00.000000Z",
        );
        assert_eq!(apply_at(&mut r, &o, now).unwrap(), Outcome::Recorded);
        assert_eq!(r.fields["message"], "RUNNING (epoch 3/10)");
        assert_eq!(r.fields["observed_at"], "2026-11-29T10:04:00.000000Z");
        // Back on this clock: an older line is stale again ...
        let late = obs(Pending, "PENDING", "2026-11-29T10:03:00.000000Z");
        let before = r.clone();
        assert!(apply_at(&mut r, &late, now).is_err());
        assert_eq!(r, before);
        // ... and the job's end, seen now, is recorded.
        let mut r = record(Running);
        r.fields.insert("observed_at".into(), json!(future));
        let end = obs(Complete, "COMPLETED", "2026-11-29T10:04:30.000000Z");
        assert_eq!(apply_at(&mut r, &end, now).unwrap(), Outcome::Recorded);
        assert_eq!(r.state(), Some(Complete));
        // A final state is still final, whatever the clocks say.
        let again = obs(Running, "RUNNING", "2026-11-29T10:04:40.000000Z");
        assert!(apply_at(&mut r, &again, now).is_err());
        // The rule itself: older than a last time that is not in the future.
        let t = |s: &str| tao_core::time::parse_rfc3339(s).unwrap();
        assert!(is_stale(t(T0), t(T1), t(T2)));
        assert!(is_stale(t(T0), t(T1), t(T1)));
        assert!(!is_stale(t(T1), t(T1), t(T2)), "equal times are not stale");
        assert!(
            !is_stale(t(T0), t(T2), t(T1)),
            "last is in the clock's future"
        );
    }

    #[test]
    fn stale_observation_changes_nothing() {
        let mut r = record(Running);
        let before = r.clone();
        let mut o = obs(Running, "RUNNING", T0);
        o.fields.insert("slurm".into(), json!({"job_id": "9"}));
        assert_eq!(apply(&mut r, &o).unwrap(), Outcome::Stale);
        assert_eq!(r, before);
        o.state = Some(Error);
        let err = apply(&mut r, &o).unwrap_err().to_string();
        assert!(
            err.starts_with("stale observation: ERROR observed at"),
            "{err}"
        );
        assert_eq!(r, before);
    }

    #[test]
    fn error_is_stored_then_cleared_by_a_later_move() {
        let mut r = record(Pending);
        let mut o = Observation {
            at: T1.into(),
            source: "tao-submit".into(),
            error: Some(json!({"tool": "tao-submit", "code": "unavailable", "message": "x"})),
            ..Default::default()
        };
        assert_eq!(apply(&mut r, &o).unwrap(), Outcome::Merged);
        assert!(r.fields.contains_key("error"));
        o = obs(Pending, "opened", T2);
        apply(&mut r, &o).unwrap();
        assert!(r.fields.contains_key("error"), "same state keeps the error");
        apply(&mut r, &obs(Running, "RUNNING", T2)).unwrap();
        assert!(!r.fields.contains_key("error"));
        // The tool that failed succeeds later without a state change.
        let mut failed = obs(Running, "RUNNING", T2);
        failed.error = Some(json!({"tool": "tao-poll", "code": "unavailable", "message": "x"}));
        apply(&mut r, &failed).unwrap();
        assert!(r.fields.contains_key("error"));
        let mut other = obs(Running, "RUNNING", T2);
        other.source = "tao-classify".into();
        apply(&mut r, &other).unwrap();
        assert!(
            r.fields.contains_key("error"),
            "another tool's success does not clear it"
        );
        apply(&mut r, &obs(Running, "RUNNING", T2)).unwrap();
        assert!(!r.fields.contains_key("error"), "tao-poll succeeded again");
    }

    #[test]
    fn merge_respects_protected_fields_and_merges_slurm() {
        let mut r = record(Pending);
        r.fields
            .insert("slurm".into(), json!({"job_id": "5", "login_host": "h"}));
        r.fields
            .insert("storage".into(), json!({"results_dir": "/a"}));
        let mut o = obs(Running, "RUNNING", T2);
        o.fields
            .insert("slurm".into(), json!({"native_state": "RUNNING"}));
        o.fields
            .insert("storage".into(), json!({"results_dir": "/evil"}));
        o.fields.insert("id".into(), json!("other"));
        o.fields
            .insert("classification".into(), json!({"class": "infra"}));
        apply(&mut r, &o).unwrap();
        assert_eq!(
            r.fields["slurm"],
            json!({"job_id": "5", "login_host": "h", "native_state": "RUNNING"})
        );
        assert_eq!(r.fields["storage"], json!({"results_dir": "/a"}));
        assert_eq!(r.id(), "tao-x");
        assert_eq!(r.fields["classification"]["class"], "infra");
        assert_eq!(r.fields["observed_at"], T2);
        assert_eq!(r.fields["observed_by"], "tao-poll");
    }

    proptest::proptest! {
        // The same cases on every run (repeatable CI) unless
        // PROPTEST_RNG_SEED asks for others; PROPTEST_CASES for more.
        #![proptest_config(tao_core::testing::config_fixed_seed(256, 0x0007_a052))]
        /// Any sequence of observations keeps the invariants: a final state
        /// never changes, history times never go back, no two consecutive
        /// entries are the same observation, and the record's state is its
        /// last entry's.
        #[test]
        fn invariants_hold_for_any_sequence(
            steps in proptest::collection::vec((0usize..6, 0usize..3, 0i64..20, proptest::bool::ANY), 1..60)
        ) {
            let mut r = record(Pending);
            let base = tao_core::time::parse_rfc3339(T0).unwrap();
            let mut final_state: Option<State> = None;
            for (s, m, dt, has_state) in steps {
                let at = (base + chrono::Duration::seconds(dt))
                    .to_rfc3339_opts(chrono::SecondsFormat::Micros, true);
                let o = Observation {
                    state: has_state.then_some(State::ALL[s]),
                    message: Some(format!("m{m}")),
                    at,
                    source: "prop".into(),
                    ..Default::default()
                };
                let before = r.clone();
                if apply(&mut r, &o).is_err() {
                    proptest::prop_assert_eq!(&r, &before);
                }
                if let Some(f) = final_state {
                    proptest::prop_assert_eq!(r.state(), Some(f));
                }
                if r.state().is_some_and(State::is_final) {
                    final_state = r.state();
                }
                let h = r.history();
                let ats: Vec<&str> = h.iter().map(|e| e["at"].as_str().unwrap()).collect();
                let ordered = ats.windows(2).all(|w| w[0] <= w[1]);
                proptest::prop_assert!(ordered, "history out of time order");
                let no_repeat = h.windows(2).all(|w| {
                    (&w[0]["state"], &w[0]["message"]) != (&w[1]["state"], &w[1]["message"])
                });
                proptest::prop_assert!(no_repeat, "a repeated observation made two entries");
                proptest::prop_assert_eq!(
                    h.last().unwrap()["state"].as_str(),
                    r.state().map(State::as_str)
                );
            }
        }
    }

    #[test]
    fn same_state_without_message_is_a_duplicate_and_keeps_the_message() {
        let mut r = record(Running);
        r.fields.insert("message".into(), json!("seen"));
        let mut o = obs(Running, "", T2);
        o.message = None;
        assert_eq!(apply(&mut r, &o).unwrap(), Outcome::Duplicate);
        assert_eq!(r.fields["message"], "seen");
        o.state = Some(Complete);
        assert_eq!(apply(&mut r, &o).unwrap(), Outcome::Recorded);
        assert!(
            !r.fields.contains_key("message"),
            "a new state without a message drops the old one"
        );
    }

    #[test]
    fn bad_time_is_rejected() {
        let mut r = record(Pending);
        let err = apply(&mut r, &obs(Running, "x", "yesterday")).unwrap_err();
        assert!(err.to_string().contains("observed_at \"yesterday\""));
    }
}
