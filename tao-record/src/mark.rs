//! `tao-record mark`: apply what later tools observed (job lines on
//! stdin, or one observation given by flags) to the records, and echo each
//! updated line so the pipeline can go on.
//!
//! Per-line failures (unknown id, illegal transition, a bad `state` or
//! `observed_at`) are data: the line goes on with `error` set by
//! tao-record and the run exits 1 at the end (tao-jobline(7)). A line that
//! is not a JSON object, or has no `id`, is malformed input: reported on
//! stderr with its line number, exit 65 at the end; every other line still
//! goes through.

use std::io::{BufRead, Write};

use serde_json::{Map, Value};
use tao_core::{Error, JobLine, LineReader, LineWriter, Result, State};

use crate::machine::{self, Observation, Outcome, PROTECTED, TOOL};
use crate::store::Store;

/// The `source` recorded for a line that names no `observed_by`.
pub const DEFAULT_SOURCE: &str = "pipe";

/// Apply one job line to its record. Returns the line to echo: the record
/// as now stored (without `history`), followed by any fields of the input
/// that the record does not keep. The observation time, when the line has
/// no `observed_at`, is taken under the record's lock (and never earlier
/// than the record's last observation), so marks made without one are
/// ordered as they are applied and are never stale.
///
/// Errors: [`Error::BadLine`] when the line has no string `id`;
/// [`Error::Data`] for an unknown id, an illegal transition, a `state`
/// that is not in the vocabulary or an `observed_at` that is not RFC 3339;
/// [`Error::Io`] for disk failures.
pub fn mark_line(store: &Store, line: &JobLine) -> Result<(JobLine, Outcome)> {
    let id = line.require_str(&["id"])?.to_string();
    tao_core::id::validate(&id)?;
    let state = match line.fields.get("state") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(State::parse(s).ok_or_else(|| {
            Error::Data(format!(
                "state {s:?} is not one of PENDING RUNNING COMPLETE ERROR CANCELED UNKNOWN"
            ))
        })?),
        Some(other) => {
            return Err(Error::Data(format!(
                "state must be a string, got {other}; use one of PENDING RUNNING COMPLETE ERROR CANCELED UNKNOWN"
            )))
        }
    };
    let message = match line.fields.get("message") {
        Some(Value::String(m)) => Some(m.clone()),
        _ => None,
    };
    let given_at = match line.fields.get("observed_at") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(other) => {
            return Err(Error::Data(format!(
                "observed_at must be an RFC 3339 string, got {other}"
            )))
        }
    };
    let source = line
        .get_str(&["observed_by"])
        .unwrap_or(DEFAULT_SOURCE)
        .to_string();
    // An error set by tao-record itself is about an earlier mark, not the job.
    let error = line
        .fields
        .get("error")
        .filter(|e| e.is_object() && e.get("tool").and_then(Value::as_str) != Some(TOOL))
        .cloned();
    let mut fields = Map::new();
    for (k, v) in &line.fields {
        if !PROTECTED.contains(&k.as_str()) {
            fields.insert(k.clone(), v.clone());
        }
    }
    let (record, outcome) = store.update(&id, |rec| {
        let obs = Observation {
            state,
            message,
            // A line without a time is the latest word: now, but never
            // before the last recorded observation (clock skew between
            // tools must not make it stale).
            at: given_at.unwrap_or_else(|| {
                let now = tao_core::time::now_rfc3339();
                match rec.fields.get("observed_at").and_then(Value::as_str) {
                    Some(last)
                        if tao_core::time::parse_rfc3339(last)
                            > tao_core::time::parse_rfc3339(&now) =>
                    {
                        last.to_string()
                    }
                    _ => now,
                }
            }),
            source,
            error,
            fields,
        };
        let outcome = machine::apply(rec, &obs)?;
        Ok((rec.clone(), outcome))
    })?;
    let mut out = record.into_job_line();
    for (k, v) in &line.fields {
        if !out.fields.contains_key(k) && !PROTECTED.contains(&k.as_str()) {
            out.fields.insert(k.clone(), v.clone());
        }
    }
    Ok((out, outcome))
}

/// Counts of one `mark` run.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Summary {
    /// Lines applied (recorded, duplicate, stale or merged).
    pub ok: u64,
    /// Lines that went on with an `error` (exit 1).
    pub failed: u64,
    /// Malformed lines reported on stderr (exit 65).
    pub malformed: u64,
}

impl Summary {
    /// The run's result: 65 if any line was malformed, 1 if any failed, else 0.
    ///
    /// Errors: [`Error::Data`] / [`Error::SomeFailed`] with the counts.
    pub fn into_result(self) -> Result<i32> {
        if self.malformed > 0 {
            return Err(Error::Data(format!(
                "{} malformed input line(s) skipped (see above); {} applied, {} failed",
                self.malformed, self.ok, self.failed
            )));
        }
        if self.failed > 0 {
            return Err(Error::SomeFailed(format!(
                "{} of {} line(s) failed; each carries an `error` object",
                self.failed,
                self.ok + self.failed
            )));
        }
        Ok(0)
    }
}

/// Mark every job line read from `input`, echoing each to `out` (one
/// flushed write per line). `warn` receives one-line diagnostics for
/// malformed lines.
///
/// Errors: [`Error::Io`] when `out` fails (a broken pipe included: a
/// record changed and its report was lost).
pub fn mark_stream<R: BufRead, W: Write>(
    store: &Store,
    input: R,
    out: &mut LineWriter<W>,
    warn: &mut dyn FnMut(&str),
) -> Result<Summary> {
    let mut reader = LineReader::new(input);
    let mut sum = Summary::default();
    loop {
        let line = match reader.next_line() {
            Ok(Some(l)) => l,
            Ok(None) => break,
            Err(e @ (Error::BadLine { .. } | Error::BadJson { .. })) => {
                warn(&e.to_string());
                sum.malformed += 1;
                continue;
            }
            Err(e) => return Err(e),
        };
        match mark_line(store, &line) {
            Ok((echo, _)) => {
                sum.ok += 1;
                out.write(&echo)?;
            }
            Err(e @ Error::BadLine { .. }) => {
                warn(&e.to_string());
                sum.malformed += 1;
                let mut l = line;
                l.set_error(TOOL, &e);
                out.write(&l)?;
            }
            Err(e @ Error::Io { .. }) if tao_core::cli::is_broken_pipe(&e) => return Err(e),
            Err(e) => {
                sum.failed += 1;
                let mut l = line;
                let msg = match l.id() {
                    Some(id) => format!("{id}: {e}"),
                    None => e.to_string(),
                };
                warn(&msg);
                l.set_error(TOOL, &e);
                out.write(&l)?;
            }
        }
    }
    Ok(sum)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn store_with(id: &str) -> (tempfile::TempDir, Store) {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::open(tmp.path().to_path_buf()).unwrap();
        let mut r = crate::store::Record::default();
        r.fields.insert("id".into(), json!(id));
        r.fields.insert("state".into(), json!("PENDING"));
        r.fields
            .insert("observed_at".into(), json!("2026-11-29T10:00:00Z"));
        machine::push_history(
            &mut r,
            "2026-11-29T10:00:00Z",
            State::Pending,
            TOOL,
            Some("opened"),
        );
        store.create(&r).unwrap();
        (tmp, store)
    }

    #[test]
    fn stream_marks_echoes_and_reports_failures() {
        let (_t, store) = store_with("j1");
        let input = concat!(
            r#"{"id":"j1","state":"RUNNING","message":"RUNNING","extra":1}"#,
            "\n",
            r#"{"id":"nope","state":"RUNNING"}"#,
            "\n",
            "not json\n",
            r#"{"id":"j1","state":"COMPLETE"}"#,
            "\n",
            r#"{"id":"j1","state":"RUNNING"}"#,
            "\n",
        );
        let mut out = LineWriter::new(Vec::new());
        let mut warnings = Vec::new();
        let sum = mark_stream(&store, input.as_bytes(), &mut out, &mut |w| {
            warnings.push(w.to_string())
        })
        .unwrap();
        assert_eq!(
            sum,
            Summary {
                ok: 2,
                failed: 2,
                malformed: 1
            }
        );
        let text = String::from_utf8(out.into_inner()).unwrap();
        let lines: Vec<JobLine> = text
            .lines()
            .map(|l| JobLine::parse(l, 0).unwrap())
            .collect();
        assert_eq!(lines.len(), 4);
        assert_eq!(lines[0].get_str(&["state"]), Some("RUNNING"));
        assert_eq!(lines[0].fields["extra"], 1);
        assert_eq!(lines[1].get_str(&["error", "code"]), Some("data"));
        assert!(lines[3]
            .get_str(&["error", "message"])
            .unwrap()
            .contains("from COMPLETE to RUNNING"));
        assert!(warnings.iter().any(|w| w.starts_with("line 3")));
        let rec = store.load("j1").unwrap();
        assert_eq!(rec.state(), Some(State::Complete));
        assert_eq!(rec.history().len(), 3);
        assert!(sum.into_result().unwrap_err().code() == 65);
    }
}
