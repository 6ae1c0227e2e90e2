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
use tao_core::{Error, Filter, JobLine, LineWriter, OnBadLine, Result, State};

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
    mark_line_new_error(store, line).map(|(l, o, _)| (l, o))
}

/// [`mark_line`], also saying whether the mark stored an `error` the
/// record did not hold before (a failed submit or refresh seen for the
/// first time), so the caller can tell the user once, not on every run.
///
/// Errors: as [`mark_line`].
pub fn mark_line_new_error(store: &Store, line: &JobLine) -> Result<(JobLine, Outcome, bool)> {
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
    // An error set by tao-record itself is about an earlier mark, not the
    // job; a configuration error is the environment's ([`environment_error`]).
    let error = line
        .fields
        .get("error")
        .filter(|e| e.is_object() && e.get("tool").and_then(Value::as_str) != Some(TOOL))
        .filter(|e| !environment_error(e))
        .cloned();
    let mut fields = Map::new();
    for (k, v) in &line.fields {
        if !PROTECTED.contains(&k.as_str()) {
            fields.insert(k.clone(), v.clone());
        }
    }
    let (record, outcome, new_error) = store.update(&id, |rec| {
        let had = rec.fields.get("error").cloned();
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
        // The record takes the line's key order (unknown keys in their
        // places, tao-jobline(7)), top level and `slurm`.
        tao_core::model::order_like(&mut rec.fields, &line.fields);
        // storage is the record's (PROTECTED), but keys the model does not
        // know pass through, in their places.
        if let (Some(Value::Object(s)), Some(st)) = (rec.fields.get_mut("storage"), line.storage())
        {
            for (k, v) in st.extra {
                s.entry(k).or_insert(v);
            }
            if let Some(Value::Object(l)) = line.fields.get("storage") {
                tao_core::model::order_like(s, l);
            }
        }
        if let (Some(Value::Object(s)), Some(Value::Object(l))) =
            (rec.fields.get_mut("slurm"), line.fields.get("slurm"))
        {
            tao_core::model::order_like(s, l);
        }
        let now = rec.fields.get("error");
        let new_error = now.is_some() && now != had.as_ref();
        Ok((rec.clone(), outcome, new_error))
    })?;
    let mut out = record.into_job_line();
    for (k, v) in &line.fields {
        if !out.fields.contains_key(k) && !PROTECTED.contains(&k.as_str()) {
            out.fields.insert(k.clone(), v.clone());
        }
    }
    Ok((out, outcome, new_error))
}

pub use crate::summary::Summary;

/// Mark every job line read from `input`, echoing each to `out` (one
/// flushed write per line). Bad lines are reported on `errors` as
/// `tao-record: error: line N: ...` and the run goes on (`tao_core::filter`);
/// `warn` receives one-line diagnostics for refused lines.
///
/// Errors: [`Error::Io`] when `out` fails (a broken pipe included: a
/// record changed and its report was lost).
pub fn mark_stream<R: BufRead, W: Write>(
    store: &Store,
    input: R,
    out: &mut LineWriter<W>,
    errors: &mut dyn Write,
    warn: &mut dyn FnMut(&str),
) -> Result<Summary> {
    let mut lines = Filter::new(TOOL, input, OnBadLine::GoOn).with_errors(errors);
    let mut sum = Summary::default();
    while let Some(line) = lines.next_line()? {
        match mark_line_new_error(store, &line) {
            Ok((echo, _, new_error)) => {
                sum.done += 1;
                if new_error {
                    warn(&new_error_hint(&echo));
                }
                out.write(&echo)?;
            }
            Err(e) if tao_core::filter::is_bad_line(&e) => {
                lines.bad_line(&e);
                let mut l = line;
                l.set_error(TOOL, &e);
                out.write(&l)?;
            }
            Err(e @ Error::Io { .. }) if tao_core::cli::is_broken_pipe(&e) => return Err(e),
            Err(e) => {
                sum.failed += 1;
                sum.io_failed += u64::from(matches!(e, Error::Io { .. }));
                let mut l = line;
                let msg = match l.id() {
                    Some(id) => format!("{id}: {e}"),
                    None => e.to_string(),
                };
                warn(&msg);
                show_recorded_state(store, &mut l);
                l.set_error(TOOL, &e);
                out.write(&l)?;
            }
        }
    }
    sum.malformed = lines.counts().malformed;
    Ok(sum)
}

/// Whether `error` is a configuration error (`code` `config`): the
/// environment of the tool that set it was wrong (an unknown TAO_TRANSPORT,
/// no SLURM_HOSTNAME, a secret the record names not exported), which says
/// nothing of the job, so it is not recorded as the job's failure: a
/// submitted job keeps what Slurm says, a record never submitted stays
/// `not submitted` and goes through once the environment is fixed (no
/// `--clear-error` first). The tool that set it said it on stderr, once,
/// with the fix; mark adds nothing.
pub fn environment_error(error: &Value) -> bool {
    error.get("code").and_then(Value::as_str) == Some("config")
}

/// The warning `mark` gives the first time a record stores an error from
/// another tool: the error on one line and how to run the record again.
/// `echo` is the marked line (it carries the `error` object).
pub fn new_error_hint(echo: &JobLine) -> String {
    let id = echo.id().unwrap_or("?");
    let tool = echo.get_str(&["error", "tool"]).unwrap_or("a tool");
    let msg = echo.get_str(&["error", "message"]).unwrap_or("");
    let msg = tao_core::cli::one_line(msg);
    if let Some(job) = echo.slurm_job_id().filter(|j| !j.trim().is_empty()) {
        // Submitted: the error is about watching the job, not the job.
        return format!(
            "{id}: recorded the error from {tool}: {msg}; Slurm job {job} was submitted and is not resubmitted: once the cause is fixed, the next {tool} run that succeeds clears it (`tao-record list` shows it until then)"
        );
    }
    if echo.fields.get("error").is_some_and(stage_skipped) {
        return format!(
            "{id}: recorded the error from {tool}: {msg}; the record itself is fine, its line skipped a stage of the pipeline: run `tao-record mark {id} --clear-error`, then submit it through every stage: `{}`",
            tao_core::jobline::resubmit_pipeline(id)
        );
    }
    if echo.fields.get("error").is_some_and(request_refused) {
        return format!(
            "{id}: recorded the error from {tool}: {msg}; the request itself was refused, so submitting this record again fails the same way: open a new record with the change the message names (`tao-record list` shows this one until it is cleared or retired: `tao-record mark {id} --state CANCELED`)"
        );
    }
    format!(
        "{id}: recorded the error from {tool}: {msg}; `tao-record list` shows it until it is cleared: once the cause is fixed, run `tao-record mark {id} --clear-error` and submit the record again, or open a new record if the request itself was wrong"
    )
}

/// Whether an `error` object says the request itself was refused (its
/// `code` is `data`, `refused` or `lint_blocked`: the line's content broke
/// a rule or held a secret), so the same record submitted again fails the
/// same way and only a new record can fix it. Other codes (config,
/// unavailable, tempfail, noperm, ...) are the environment's: fixed there,
/// the same record can be submitted again.
pub fn request_refused(error: &Value) -> bool {
    matches!(
        error.get("code").and_then(Value::as_str),
        Some("data" | "refused" | "lint_blocked")
    )
}

/// Whether an `error` object says the line skipped a stage of the pipeline
/// (its `code` is `missing_stage`, `tao_core::Error::MissingStage`: a field
/// an earlier stage writes was missing): the request is fine, and the same
/// record goes through once its line passes every stage.
pub fn stage_skipped(error: &Value) -> bool {
    error.get("code").and_then(Value::as_str) == Some("missing_stage")
}

/// The one line `mark ID --clear-error` prints on a terminal (on a pipe it
/// prints the job line): what was cleared and what to do next. `old` is
/// the error the record held (if any), `state` and `job_id` the record's.
pub fn clear_confirmation(
    id: &str,
    old: Option<&Value>,
    state: &str,
    job_id: Option<&str>,
) -> String {
    let Some(e) = old.filter(|e| e.is_object()) else {
        return format!("{id}: no error to clear (state {state})");
    };
    let msg = e.get("message").and_then(Value::as_str).unwrap_or("");
    let was = tao_core::cli::one_line(msg);
    let next = if request_refused(e) {
        "the request itself was refused, so submitting it again fails the same way: open a new record with the change the message named".to_string()
    } else if job_id.is_none_or(|j| j.trim().is_empty()) {
        format!(
            "not submitted yet: submit it again with `{}`",
            tao_core::jobline::resubmit_pipeline(id)
        )
    } else {
        format!("Slurm job {}", job_id.unwrap_or_default())
    };
    format!("{id}: cleared the error ({was}); state {state}, {next}")
}

/// The fields of a refused line that describe the record's state; they are
/// replaced by the record's own values so a reader downstream sees the state
/// the record is really in, not the one that was refused.
const STATE_FIELDS: [&str; 4] = ["state", "message", "observed_at", "observed_by"];

/// On a line whose observation was refused, put the record's actual
/// `state`, `message`, `observed_at` and `observed_by` (each removed when
/// the record has none), and add the record's other fields the line lacks
/// (not `history`), as a successful echo has them. A line whose record
/// cannot be read (unknown id, no id) is left as it came.
fn show_recorded_state(store: &Store, line: &mut JobLine) {
    let Some(id) = line.id().map(str::to_string) else {
        return;
    };
    if tao_core::id::validate(&id).is_err() {
        return;
    }
    let Ok(rec) = store.load(&id) else {
        return;
    };
    for k in STATE_FIELDS {
        match rec.fields.get(k) {
            Some(v) => {
                line.fields.insert(k.into(), v.clone());
            }
            None => {
                line.fields.shift_remove(k);
            }
        }
    }
    for (k, v) in &rec.fields {
        if k != "history" && !line.fields.contains_key(k) {
            line.fields.insert(k.clone(), v.clone());
        }
    }
}

/// One readable line for a job line `v` (as `mark` echoes it), for a
/// terminal: `ID  STATE  slurm SLURM_ID  MESSAGE`, then `  error: MESSAGE`
/// when the line carries an `error` object. Missing values print as `-`;
/// control characters are escaped (`tao_core::cli::one_line`). No newline.
pub fn render_text_line(v: &Value) -> String {
    let get = |p: &[&str]| {
        let mut cur = v;
        for k in p {
            match cur.get(k) {
                Some(x) => cur = x,
                None => return "-".to_string(),
            }
        }
        match cur {
            Value::String(s) if !s.is_empty() => s.clone(),
            Value::String(_) | Value::Null => "-".into(),
            other => other.to_string(),
        }
    };
    let mut s = format!(
        "{}  {:<8}  slurm {}  {}",
        get(&["id"]),
        get(&["state"]),
        get(&["slurm", "job_id"]),
        get(&["message"])
    );
    if v.get("error").is_some_and(Value::is_object) {
        s.push_str("  error: ");
        s.push_str(&get(&["error", "message"]));
    }
    tao_core::cli::one_line(&s)
}

/// A writer for `mark` on a terminal: takes the job lines `mark_stream`
/// writes (JSON, one per `\n`) and writes each to `inner` as the readable
/// line of [`render_text_line`]. A line that is not JSON is passed as it
/// is. Bytes after the last `\n` are held until the next write.
#[derive(Debug)]
pub struct TextLines<W: Write> {
    inner: W,
    buf: Vec<u8>,
}

impl<W: Write> TextLines<W> {
    /// Wrap `inner` (usually standard output).
    pub fn new(inner: W) -> Self {
        TextLines {
            inner,
            buf: Vec::new(),
        }
    }

    /// The wrapped writer.
    pub fn into_inner(self) -> W {
        self.inner
    }
}

impl<W: Write> Write for TextLines<W> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.buf.extend_from_slice(bytes);
        while let Some(n) = self.buf.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = self.buf.drain(..=n).collect();
            let body = &line[..n];
            match serde_json::from_slice::<Value>(body) {
                Ok(v) => {
                    let mut t = render_text_line(&v);
                    t.push('\n');
                    self.inner.write_all(t.as_bytes())?;
                }
                Err(_) => self.inner.write_all(&line)?,
            }
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_refused_request_is_not_advised_to_be_submitted_again() {
        let mut l = JobLine::new();
        l.fields.insert("id".into(), json!("tao-a"));
        l.fields.insert(
            "error".into(),
            json!({"tool": "tao-submit", "code": "data", "message": "16 CPUs"}),
        );
        let h = new_error_hint(&l);
        assert!(
            h.contains("open a new record") && !h.contains("--clear-error"),
            "{h}"
        );
        l.fields.insert(
            "error".into(),
            json!({"tool": "tao-submit", "code": "config", "message": "export X"}),
        );
        let h = new_error_hint(&l);
        assert!(h.contains("tao-record mark tao-a --clear-error"), "{h}");
        // A submitted job: the error is about watching it; no resubmit.
        let mut live = l.clone();
        live.set_path(&["slurm", "job_id"], json!("77"));
        live.fields.insert(
            "error".into(),
            json!({"tool": "tao-poll", "code": "unavailable", "message": "no host"}),
        );
        let h = new_error_hint(&live);
        assert!(
            h.contains("Slurm job 77 was submitted") && !h.contains("--clear-error"),
            "{h}"
        );
        assert!(environment_error(
            &json!({"tool": "tao-poll", "code": "config", "message": "m"})
        ));
        assert!(!environment_error(
            &json!({"tool": "tao-submit", "code": "tempfail", "message": "m"})
        ));
        // A skipped stage: the request is fine, the advice is the whole pipeline.
        l.fields.insert(
            "error".into(),
            json!({"tool": "tao-submit", "code": "missing_stage", "message": "no `script.text`"}),
        );
        let h = new_error_hint(&l);
        assert!(
            !h.contains("open a new record")
                && h.contains("tao-record mark tao-a --clear-error")
                && h.contains(
                    "tao-record list --id tao-a | tao-render | tao-redact lint | tao-submit"
                ),
            "{h}"
        );
        let e = json!({"tool": "tao-submit", "code": "config", "message": "export X"});
        let c = clear_confirmation("tao-a", Some(&e), "PENDING", None);
        assert!(
            c.starts_with("tao-a: cleared the error (export X); state PENDING, not submitted yet")
                && c.contains("tao-record list --id tao-a | tao-render"),
            "{c}"
        );
        let e = json!({"tool": "tao-render", "code": "refused", "message": "m"});
        let c = clear_confirmation("tao-a", Some(&e), "PENDING", None);
        assert!(c.contains("open a new record"), "{c}");
        assert_eq!(
            clear_confirmation("tao-a", None, "RUNNING", Some("7")),
            "tao-a: no error to clear (state RUNNING)"
        );
    }

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
        let mut errors = Vec::new();
        let sum = mark_stream(&store, input.as_bytes(), &mut out, &mut errors, &mut |w| {
            warnings.push(w.to_string())
        })
        .unwrap();
        assert_eq!(
            sum,
            Summary {
                done: 2,
                skipped: 0,
                failed: 2,
                malformed: 1,
                io_failed: 0,
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
        // The refused line shows the state the record is in, not the one refused.
        assert_eq!(lines[3].get_str(&["state"]), Some("COMPLETE"));
        assert!(!lines[3]
            .get_str(&["error", "message"])
            .unwrap()
            .contains("--retry-of"));
        // An unknown id has no record: its line goes on as it came.
        assert_eq!(lines[1].get_str(&["state"]), Some("RUNNING"));
        let errors = String::from_utf8(errors).unwrap();
        assert_eq!(errors.lines().count(), 1, "{errors}");
        assert!(
            errors.starts_with("tao-record: error: line 3, column 2: invalid JSON"),
            "{errors}"
        );
        assert!(
            warnings.iter().any(|w| w.starts_with("nope: ")),
            "{warnings:?}"
        );
        let rec = store.load("j1").unwrap();
        assert_eq!(rec.state(), Some(State::Complete));
        assert_eq!(rec.history().len(), 3);
        assert!(sum.into_result("applied").unwrap_err().code() == 65);
    }

    #[test]
    fn text_lines_render_one_readable_line_per_job() {
        let mut w = TextLines::new(Vec::new());
        let a = json!({"id": "tao-1", "state": "RUNNING", "message": "RUNNING",
            "slurm": {"job_id": "4242"}, "command": "x".repeat(10_000)});
        let b = json!({"id": "tao-2", "state": "COMPLETE",
            "error": {"tool": "tao-record", "code": "data", "message": "illegal\ntransition"}});
        let text = format!("{a}\n{b}\n");
        // Split mid-line: a line is rendered only once it is whole.
        let (x, y) = text.as_bytes().split_at(10);
        w.write_all(x).unwrap();
        assert!(w.inner.is_empty());
        w.write_all(y).unwrap();
        let out = String::from_utf8(w.into_inner()).unwrap();
        let got: Vec<&str> = out.lines().collect();
        assert_eq!(
            got,
            [
                "tao-1  RUNNING   slurm 4242  RUNNING",
                "tao-2  COMPLETE  slurm -  -  error: illegal\\ntransition",
            ]
        );
    }
}
