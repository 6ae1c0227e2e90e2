//! `tao-record retry`: the retry loop as one pipeline stage.
//!
//! Reads classified job lines (`tao-poll --evidence | tao-classify |
//! tao-record mark`) on stdin and, for each failure tao-classify marked
//! retryable, opens the next attempt exactly as `tao-record open
//! --retry-of ID` does (same request, new id and directories, the blamed
//! node excluded once `tao-submit` has checked it exists), within a budget
//! of attempts. It prints the new records' lines only, for `tao-render |
//! tao-redact lint | tao-submit | tao-record mark`.
//!
//! A line is retried when, in the record store (the truth, not the line):
//! its state is ERROR, `classification.retry` is true, it has no retry yet
//! (`retried_by` naming an existing record), and its `attempt` (1 = the
//! first try) is below `--max-attempts` (default
//! [`tao_core::DEFAULT_MAX_ATTEMPTS`], 10). Every other line is dropped
//! (a running job, a program fault, an ERROR not classified yet, one
//! already retried), with one `ID: skipped: why` line on stderr under
//! `-v`, except a spent budget, which is always said on stderr and recorded in the store
//! (`classification.retry` set to false, `classification.reason` says
//! why), so the record leaves `tao-record list --live`.
//! Running the stage twice over the same lines opens nothing twice: a
//! record whose `retried_by` names an existing record is not retried again
//! (the check and the open run under the record's lock). Two runs at once
//! (overlapping cron runs): one opens the retry, the other skips the line
//! with one warning naming the retry the other opened, and counts it as
//! skipped, not failed (exit 0). A record marked
//! retryable whose retry was never opened (the pipeline died between
//! `mark` and `retry`) stays in `list --live`
//! (tao_store::query::awaits_retry), so the next cron run opens it.

use std::io::{BufRead, Write};

use serde_json::Value;
use tao_core::{Error, Filter, JobLine, LineWriter, OnBadLine, Result, State};

use crate::machine::TOOL;

use crate::open::{open, OpenArgs};
use crate::store::Store;

/// What one input line led to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// A retry record was opened (its id).
    Opened(String),
    /// Not a retryable failure (not ERROR, not classified, a program fault,
    /// or unknown to the store): why, in words for `-v`.
    NotRetryable(String),
    /// Already retried by this record.
    AlreadyRetried(String),
    /// Retried by this record, which another run (an overlapping cron
    /// run, `make retry`) opened between this run's check and its open:
    /// the parent's lock let one of them open it.
    RetriedByAnotherRun(String),
    /// The budget is spent: (attempt, max_attempts).
    BudgetSpent(u32, u32),
}

pub use crate::summary::Summary;

/// Decide and, when due, open the retry of the record `id`.
///
/// Errors: what [`open`] returns for `--retry-of` (I/O, a record changed
/// under us); [`Error::Usage`] never (no request flags are given).
pub fn retry_one(store: &Store, id: &str, max_attempts: u32) -> Result<(Outcome, Option<JobLine>)> {
    let Ok(rec) = store.get(id) else {
        return Ok((
            Outcome::NotRetryable("no such record in the store".into()),
            None,
        ));
    };
    if let Some(why) = not_retryable_reason(&rec) {
        return Ok((Outcome::NotRetryable(why), None));
    }
    if let Some(by) = store.existing_retry(rec.fields.get("retried_by")) {
        return Ok((Outcome::AlreadyRetried(by.to_string()), None));
    }
    let attempt = rec
        .fields
        .get("attempt")
        .and_then(Value::as_u64)
        .unwrap_or(1)
        .min(u32::MAX as u64) as u32;
    if attempt >= max_attempts {
        record_spent_budget(store, id, attempt, max_attempts)?;
        return Ok((Outcome::BudgetSpent(attempt, max_attempts), None));
    }
    let args = OpenArgs {
        platform: "slurm".into(),
        retry_of: Some(id.to_string()),
        ..OpenArgs::default()
    };
    let line = match open(store, &args) {
        Ok(line) => line,
        // Checked again under the parent's lock (open --retry-of): a run
        // that opened the retry since the check above won the race.
        Err(e) => {
            let by = store.get(id).ok().and_then(|rec| {
                store
                    .existing_retry(rec.fields.get("retried_by"))
                    .map(str::to_string)
            });
            return match by {
                Some(by) => Ok((Outcome::RetriedByAnotherRun(by), None)),
                None => Err(e),
            };
        }
    };
    let new_id = line.id().unwrap_or_default().to_string();
    Ok((Outcome::Opened(new_id), Some(line)))
}

/// Why a stored record is not a retryable failure, in words (`None` when
/// it is one: state ERROR and `classification.retry` true). The rule of
/// [`retry_one`]; the words are what `tao-record retry -v` prints.
pub fn not_retryable_reason(rec: &JobLine) -> Option<String> {
    let state = rec.get_str(&["state"]).unwrap_or("none");
    if State::parse(state) != Some(State::Error) {
        return Some(format!(
            "state {state}, not ERROR: only a failed job is retried"
        ));
    }
    let Some(c) = rec.fields.get("classification") else {
        return Some(
            "ERROR but not classified yet: classify it first (tao-poll --evidence | tao-classify | tao-record mark)".into(),
        );
    };
    if c.get("retry") == Some(&Value::Bool(true)) {
        return None;
    }
    let class = c
        .get("class")
        .and_then(Value::as_str)
        .unwrap_or("not retryable");
    let reason = c
        .get("reason")
        .and_then(Value::as_str)
        .map(|r| format!(": {}", tao_core::cli::one_line(r)))
        .unwrap_or_default();
    Some(format!(
        "classified {class}{reason}; not retried (a program fault is never retried: fix the spec)"
    ))
}

/// Record in `id`'s classification that its retry budget is spent
/// (`retry` false, the reason said), so `tao-record list --live` no
/// longer holds it for the cron pipeline
/// (tao_store::query::awaits_retry). Nothing is written when the record
/// changed meanwhile (no longer marked retryable).
///
/// Errors: [`Error::Io`] when the record cannot be written.
fn record_spent_budget(store: &Store, id: &str, attempt: u32, max_attempts: u32) -> Result<()> {
    store.update(id, |r| {
        if let Some(Value::Object(c)) = r.fields.get_mut("classification") {
            if c.get("retry") == Some(&Value::Bool(true)) {
                c.insert("retry".into(), Value::Bool(false));
                c.insert(
                    "reason".into(),
                    Value::String(format!(
                        "retry budget spent (attempt {attempt} of {max_attempts}, tao-record retry --max-attempts)"
                    )),
                );
            }
        }
        Ok(())
    })
}

/// The stage: read job lines from `input`, open the due retries, write
/// their lines to `out`; bad lines (not JSON, no `id`) are reported on
/// `errors` as `tao-record: error: line N: ...` and the run goes on
/// (`tao_core::filter`); `warn` gets one line per spent budget or failure,
/// `note` one per retry opened and one per line skipped for another
/// reason (`ID: skipped: why`; the caller prints notes with `-v`).
///
/// Errors: a write error on `out`, an I/O error reading `input`; per-line
/// failures are counted in the [`Summary`].
pub fn retry_stream<R: BufRead, W: Write>(
    store: &Store,
    input: R,
    out: &mut LineWriter<W>,
    max_attempts: u32,
    errors: &mut dyn Write,
    warn: &mut dyn FnMut(&str),
    note: &mut dyn FnMut(&str),
) -> Result<Summary> {
    let mut lines = Filter::new(TOOL, input, OnBadLine::GoOn).with_errors(errors);
    let mut sum = Summary::default();
    let mut seen = std::collections::HashSet::new();
    while let Some(line) = lines.next_line()? {
        let Some(id) = line.id().map(str::to_string) else {
            lines.bad_line(&Error::BadLine {
                line: line.line_no,
                message: "no `id`; pipe lines from tao-record (list, mark)".into(),
            });
            continue;
        };
        if !seen.insert(id.clone()) {
            sum.skipped += 1;
            note(&format!("{id}: skipped: already read earlier in the input"));
            continue;
        }
        match retry_one(store, &id, max_attempts) {
            Ok((Outcome::Opened(new_id), Some(l))) => {
                sum.done += 1;
                note(&format!(
                    "{id}: opened retry {new_id} (attempt {})",
                    l.fields.get("attempt").and_then(Value::as_u64).unwrap_or(0)
                ));
                out.write(&l)?;
            }
            Ok((Outcome::BudgetSpent(a, m), _)) => {
                sum.skipped += 1;
                warn(&format!(
                    "{id}: retry budget spent (attempt {a} of {m}); not retried: look at the failure (tao-record show {id}) or raise --max-attempts"
                ));
            }
            Ok((Outcome::NotRetryable(why), _)) => {
                sum.skipped += 1;
                note(&format!("{id}: skipped: {why}"));
            }
            Ok((Outcome::AlreadyRetried(by), _)) => {
                sum.skipped += 1;
                note(&format!("{id}: skipped: already retried by {by}"));
            }
            // Said without -v: two runs overlapped, which the user may
            // want to know (examples/crontab's flock -n prevents it).
            Ok((Outcome::RetriedByAnotherRun(by), _)) => {
                sum.skipped += 1;
                warn(&format!(
                    "{id}: skipped: another run (an overlapping cron run, or make retry) opened its retry {by} at the same time; that run submits it"
                ));
            }
            Ok((Outcome::Opened(_), None)) => sum.skipped += 1,
            Err(e @ Error::Io { .. }) if tao_core::cli::is_broken_pipe(&e) => return Err(e),
            Err(e) => {
                sum.failed += 1;
                sum.io_failed += u64::from(matches!(e, Error::Io { .. }));
                warn(&format!("{id}: retry not opened: {e}"));
            }
        }
    }
    sum.malformed = lines.counts().malformed;
    Ok(sum)
}
