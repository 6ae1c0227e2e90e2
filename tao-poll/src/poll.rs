//! One poll of many job lines: group by login host, ask each host once,
//! decide every job, write the fields back.
//!
//! Fields written (tao-jobline(7)): `state`, `message`, `slurm.native_state`,
//! `slurm.reason`, `slurm.exit_code`, `slurm.nodes`, `slurm.submit_time`,
//! `slurm.start_time`, `slurm.end_time`, `slurm.restart_count`,
//! `observed_at`, `observed_by` (`"tao-poll"`), and with `--evidence` on
//! ERROR lines `evidence = {out:{first_line, lines}, err:{...}}`. When no
//! definite answer came, the line keeps its `state` and gets
//! `error = {tool:"tao-poll", code, message}`; a stale tao-poll `error` is
//! removed once a poll succeeds.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde_json::{json, Value};
use tao_core::{JobLine, State};

use crate::backend::Backend;
use crate::deferred::{self, Deferred, Fields, TextLine};
use crate::observe::{resolve, Answer, JobRef, Observation, Outcome, Previous, QueryFailure};
use crate::status::{self, FileRecords, FileRequest, Tail, Verdict};

/// The tool name written in `observed_by` and `error.tool`.
pub const TOOL: &str = "tao-poll";

/// Poll options.
pub struct Options<'a> {
    /// Requeue default for lines without `resources.requeue` (SLURM_USE_REQUEUE).
    pub requeue: bool,
    /// Attach evidence tails of this many lines to ERROR lines (`--evidence`).
    pub evidence: Option<u32>,
    /// Filter for evidence text of a job line (tao-secrets' masking of a
    /// multi-line text, with the values of that line's own `secrets`).
    pub redact: &'a dyn Fn(&JobLine, &str) -> String,
    /// Print on stderr, per job, which reply decided its state (`--explain`).
    pub explain: bool,
}

/// One `--explain` line: which command's row (and line number) decided.
fn explain_outcome(p: &Prepared, o: &Outcome) -> String {
    match o {
        Outcome::Observed(ob) => format!(
            "job {}: {} line {}: state {:?} -> {} ({}){}",
            p.jref.job_id,
            ob.row.source.map(|s| s.as_str()).unwrap_or("?"),
            ob.row.line_no,
            ob.row.state,
            ob.state,
            ob.native_state,
            if ob.needs_verdict {
                "; COMPLETED: the job's own status decides"
            } else {
                ""
            }
        ),
        Outcome::NotFound { message } => format!("job {}: UNKNOWN: {message}", p.jref.job_id),
        Outcome::Failed(f) => format!(
            "job {}: no answer ({}): {}",
            p.jref.job_id, f.code, f.message
        ),
    }
}

/// Opens a backend per login host (`None`: the default host list).
pub trait Connector {
    /// A backend for `host`, or why none could be had.
    ///
    /// Errors: a [`QueryFailure`] (code `unavailable`, `noperm`, `config`).
    fn open(&mut self, host: Option<&str>) -> Result<&mut dyn Backend, QueryFailure>;
}

/// A job line prepared for polling.
#[derive(Debug, Clone)]
struct Prepared {
    jref: JobRef,
    host: Option<String>,
    prev: Previous,
    requeue: bool,
    record_id: Option<String>,
    job_dir: Option<String>,
    results_dir: Option<String>,
    /// The status.json stamp the line's `progress` was read at.
    known: Option<tao_core::progress::FileStamp>,
}

/// What one poll produced.
#[derive(Debug, Default)]
pub struct PollResult {
    /// The lines, in input order.
    pub lines: Vec<JobLine>,
    /// How many lines carry a tao-poll `error`.
    pub failed: usize,
    /// Codes of the failures (for the exit status).
    pub codes: Vec<String>,
    /// How many lines were never submitted (no `slurm.job_id`, no `error`
    /// from another tool): passed through unchanged, not failures.
    pub unsubmitted: usize,
    /// How many lines another tool had failed before any submit (an
    /// `error`, no usable `slurm.job_id`): passed through untouched, not
    /// polled, so neither observations nor failures of this run.
    pub passed_through: usize,
    /// Per line (or empty): the line as its input text when the poll
    /// changed nothing on it but `observed_at` (or nothing at all); the
    /// line in [`PollResult::lines`] is then a stand-in holding only its
    /// number. Write both with [`write_lines_deferred`]
    /// ([`crate::deferred`]).
    pub deferred: Vec<Deferred>,
}

impl PollResult {
    /// Line `i` as the poll reads it: its text when kept as text, else
    /// its parsed fields.
    fn fields(&self, i: usize) -> &dyn Fields {
        match self.deferred.get(i).and_then(Option::as_deref) {
            Some(t) => t,
            None => &self.lines[i],
        }
    }

    /// Line `i` for writing: a line kept as text is parsed whole first
    /// ([`deferred::materialize`]); `None` for a text that does not parse
    /// whole (the poll then leaves the line as it came).
    fn writable(&mut self, i: usize) -> Option<&mut JobLine> {
        if let Some(d) = self.deferred.get_mut(i) {
            if !deferred::materialize(&mut self.lines[i], d) {
                return None;
            }
        }
        Some(&mut self.lines[i])
    }
}

/// Whether a line was never submitted: its `slurm.job_id` is absent, null
/// or empty (tao-record open wrote the record; tao-render refused it or
/// sbatch failed). Lines that carry an `error` from another tool are not
/// counted here: they pass through as that tool's failures.
///
/// Input: one job line. Output: true for a never-submitted line.
pub fn never_submitted<L: Fields + ?Sized>(line: &L) -> bool {
    let no_id = line
        .at(&["slurm", "job_id"])
        .and_then(|v| tao_core::model::job_id_text(&v))
        .is_none_or(|s| s.trim().is_empty());
    no_id && (!has_error(line) || error_is_ours(line))
}

/// Whether the line carries an `error` object (as [`JobLine::has_error`]).
fn has_error<L: Fields + ?Sized>(line: &L) -> bool {
    line.at(&["error"]).is_some_and(|v| !v.is_null())
}

/// Whether polling `line` asks a login host: it has a non-empty
/// `slurm.job_id` ([`never_submitted`] lines, and lines another tool
/// failed before any submit, ask nothing).
///
/// Input: one job line (parsed, or kept as text: [`crate::deferred`]).
/// Output: true when the poll needs a host for it.
pub fn asks_scheduler<L: Fields + ?Sized>(line: &L) -> bool {
    line.at(&["slurm", "job_id"])
        .and_then(|v| tao_core::model::job_id_text(&v))
        .is_some_and(|s| !s.trim().is_empty())
}

/// The one note per run about never-submitted lines (`n` > 0), on stderr
/// with `-v` only (`tao_core::cli::note`): a record left unsubmitted would
/// otherwise repeat it on every cron run; the tables of `tao-record list`
/// and `tao-poll --watch` show such a record as `not submitted`.
pub fn warn_unsubmitted(n: usize) {
    if n > 0 {
        tao_core::cli::note(
            TOOL,
            &format!("{n} job line(s) were never submitted (no slurm.job_id): submit them with tao-submit, or retire them with tao-record mark ID --state CANCELED"),
        );
    }
}

fn prepare(line: &dyn Fields, requeue_default: bool) -> Result<Prepared, (String, String)> {
    let Some(raw) = line
        .at(&["slurm", "job_id"])
        .and_then(|v| tao_core::model::job_id_text(&v))
    else {
        return Err((
            "data".into(),
            "no slurm.job_id: the job was never submitted; pipe lines from `tao-submit` or `tao-record list`".into(),
        ));
    };
    // The few fields a poll needs, read where they stand (the typed
    // sections copy every field, unknown ones included: a tenth of a
    // 10,000-line poll).
    let text = |path: &[&str]| line.str_at(path).map(Cow::into_owned);
    let cluster = line.str_at(&["slurm", "cluster"]);
    let jref = JobRef::parse(&raw, cluster.as_deref()).ok_or_else(|| {
        (
            "data".to_string(),
            format!("slurm.job_id {raw:?} is not a Slurm job id (digits, optionally _index, +offset or ;cluster)"),
        )
    })?;
    Ok(Prepared {
        jref,
        host: text(&["slurm", "login_host"]).filter(|h| !h.is_empty()),
        prev: Previous {
            state: line.str_at(&["state"]).and_then(|s| State::parse(&s)),
            native: text(&["slurm", "native_state"]),
            restart_count: line
                .at(&["slurm", "restart_count"])
                .and_then(|v| v.as_u64())
                .map(|n| n as u32),
        },
        requeue: line
            .at(&["resources", "requeue"])
            .and_then(|v| v.as_bool())
            .unwrap_or(requeue_default),
        record_id: text(&["id"]).filter(|i| tao_core::id::is_valid(i)),
        job_dir: text(&["storage", "job_dir"]),
        results_dir: text(&["storage", "results_dir"]),
        known: line.progress_stamp(),
    })
}

/// The attempt's log directory: `<job_dir>/slurm-logs/<id>-<slurm_job_id>`.
pub fn log_dir(job_dir: &str, record_id: &str, slurm_job_id: &str) -> String {
    tao_core::model::Layout::new(record_id, job_dir).log_dir(slurm_job_id)
}

fn file_request(p: &Prepared, raw_id: &str, logs: bool) -> Option<FileRequest> {
    let (Some(rid), Some(jd)) = (&p.record_id, &p.job_dir) else {
        return None;
    };
    let dir = log_dir(jd, rid, raw_id);
    Some(FileRequest {
        status: p
            .results_dir
            .as_ref()
            .map(|r| format!("{}/status.json", r.trim_end_matches('/'))),
        completion: Some(format!("{dir}/completion.json")),
        logs: logs.then(|| (format!("{dir}/main.out"), format!("{dir}/main.err"))),
        progress: None,
        job: None,
        state_key: None,
        known: None,
    })
}

/// `<results_dir>/status.json`, when the line names a results dir.
fn status_path(p: &Prepared) -> Option<String> {
    p.results_dir
        .as_ref()
        .map(|r| format!("{}/status.json", r.trim_end_matches('/')))
}

/// What every job gets read in the round trip of its poll, before its
/// state is known: the last bytes of its status.json (`progress`, and the
/// verdict when they hold it) and its completion record under its own job
/// id. `None` when the line names neither directory. The stamp the line's
/// `progress` was read at goes along ([`FileRequest::known`]): a running
/// job's file that still has it is not read again.
fn first_request(p: &Prepared) -> Option<FileRequest> {
    let completion = file_request(p, &raw_id(p, None), false).and_then(|r| r.completion);
    let progress = status_path(p);
    (completion.is_some() || progress.is_some()).then_some(FileRequest {
        status: None,
        completion,
        logs: None,
        progress,
        job: Some(p.jref.clone()),
        state_key: None,
        known: p.known,
    })
}

/// The verdict records of a job as the first read found them, when that
/// read settles them (`full` is what a whole read would ask, `asked` what
/// the first read asked): status.json's last SUCCESS/FAILURE line when its
/// tail holds one (or the whole file is in the tail), and the completion
/// record when it was read under the attempt's raw id. `None`: read the
/// whole files.
fn settle(full: &FileRequest, asked: &FileRequest, got: &FileRecords) -> Option<FileRecords> {
    if full.completion != asked.completion {
        return None;
    }
    if matches!(
        got.class,
        Some(status::ReadClass::LastLines | status::ReadClass::Pending)
    ) {
        // squeue's state in the read said running or pending: the
        // completion record was not read, the status.json tail (if any)
        // is its last lines only.
        return None;
    }
    let status_last = match &full.status {
        None => None,
        Some(s) if asked.progress.as_ref() == Some(s) => match &got.progress {
            None => None,
            Some(t) => t.verdict_line()?,
        },
        Some(_) => return None,
    };
    Some(FileRecords {
        status_last,
        completion: got.completion.clone(),
        ..Default::default()
    })
}

/// Whether a job in this state gets its `progress` read: running, or
/// ended (the last poll of a job shows where training stopped). Pending
/// jobs keep what an earlier attempt showed.
fn wants_progress(state: State) -> bool {
    state == State::Running || state.is_final()
}

/// Write (or clear) `progress` from what the file read found: a tail
/// with records sets it (its KPI history carried on from the line's
/// previous `progress`, [`tao_core::progress::Progress::carry_history`]);
/// no file, or a file without epoch or KPI records, clears it (never a
/// made-up one; see [`clear_field`]). A failed read leaves it untouched,
/// and so does a read that skipped the file (the job was pending in the
/// read's squeue) or read a running job's last lines without an epoch
/// record in them (the previous poll's progress stays, its `updated_at`
/// saying when it was read), and a read that found the file's size and
/// mtime unchanged since that progress was read
/// ([`FileRecords::progress_unchanged`]: nothing to parse or write;
/// [`progress_left`]).
fn write_progress(line: &mut JobLine, files: &FileRecords) {
    if progress_left(files) {
        return;
    }
    let prev = line.fields.get("progress").filter(|p| p.is_object());
    match files
        .progress
        .as_ref()
        .and_then(status::ProgressTail::progress)
    {
        Some(p)
            if p.epoch.is_none()
                && prev.is_some()
                && files.class == Some(status::ReadClass::LastLines) => {}
        Some(mut p) => {
            p.carry_history(prev);
            line.fields.insert("progress".into(), p.to_json());
        }
        None if prev.is_some()
            && files.class == Some(status::ReadClass::LastLines)
            && files.progress.is_some() => {}
        None => clear_field(line, "progress"),
    }
}

/// Whether a read leaves `progress` as it is whatever the line holds: the
/// file was skipped (the job was pending in the read's squeue) or found
/// with the stamp the line's progress was read at.
fn progress_left(files: &FileRecords) -> bool {
    files.class == Some(status::ReadClass::Pending) || files.progress_unchanged
}

/// Take a field away: `null` when the line had it (so that tao-record
/// mark, which merges fields, overwrites the recorded one), absent when it
/// had none.
fn clear_field(line: &mut JobLine, key: &str) {
    if let Some(v) = line.fields.get_mut(key) {
        *v = Value::Null;
    }
}

/// Write (or clear) the `pending` object: for a PENDING job, its reason in
/// words ([`crate::reasons`]), what to do when it never clears, and the
/// expected start `squeue --start` gave; cleared for any other state.
fn write_pending(
    line: &mut JobLine,
    state: State,
    job_id: &str,
    reason: Option<&str>,
    start: Option<&String>,
) {
    if state != State::Pending {
        clear_field(line, "pending");
        return;
    }
    let mut o = serde_json::Map::new();
    if let Some(r) = reason {
        o.insert("reason".into(), json!(r));
        match crate::reasons::explain(r) {
            Some(e) => {
                o.insert("words".into(), json!(e.words));
                o.insert("clears".into(), json!(e.action.is_none()));
                if let Some(a) = e.action {
                    o.insert("action".into(), json!(a.replace("JOBID", job_id)));
                }
            }
            None => {
                o.insert(
                    "words".into(),
                    json!(format!(
                        "Slurm's reason {r:?} (not in Slurm's documented list)"
                    )),
                );
            }
        }
    }
    o.insert(
        "expected_start".into(),
        start.map(|s| json!(s)).unwrap_or(Value::Null),
    );
    line.fields.insert("pending".into(), Value::Object(o));
}

/// Whether the line names secrets (its job has a sidecar to sweep).
fn has_secrets<L: Fields + ?Sized>(line: &L) -> bool {
    line.at(&["secrets"])
        .is_some_and(|v| matches!(&*v, Value::Array(a) if !a.is_empty()))
}

/// The raw numeric id of the attempt (the `%j` of log paths).
fn raw_id(p: &Prepared, obs: Option<&Observation>) -> String {
    obs.and_then(|o| o.row.raw_id.clone())
        .filter(|r| r.bytes().all(|b| b.is_ascii_digit()))
        .unwrap_or_else(|| p.jref.job_id.clone())
}

fn error_is_ours<L: Fields + ?Sized>(line: &L) -> bool {
    line.str_at(&["error", "tool"]).as_deref() == Some(TOOL)
}

fn clear_own_error(line: &mut JobLine) {
    if error_is_ours(line) {
        line.fields.remove("error");
    }
}

/// One field of `slurm` an observation writes (the rule of
/// [`slurm_writes`]).
#[derive(Debug, Clone, Copy)]
enum SlurmWrite<'a> {
    /// Set to this string (`None`: null).
    Str(&'static str, Option<&'a str>),
    /// `restart_count`: set to this number.
    Count(u32),
    /// `login_host`: set to this host when it holds no string.
    Host(&'a str),
}

impl SlurmWrite<'_> {
    /// Whether the field's value `cur` already is what this write sets
    /// (then the write leaves it as it is).
    fn holds(&self, cur: Option<&Value>) -> bool {
        match *self {
            SlurmWrite::Str(_, v) => str_holds(cur, v),
            SlurmWrite::Count(n) => cur.and_then(Value::as_u64) == Some(u64::from(n)),
            SlurmWrite::Host(_) => cur.and_then(Value::as_str).is_some(),
        }
    }

    fn key(&self) -> &'static str {
        match self {
            SlurmWrite::Str(k, _) => k,
            SlurmWrite::Count(_) => "restart_count",
            SlurmWrite::Host(_) => "login_host",
        }
    }
}

/// What an observation (`obs`, from the login host `host`) writes in the
/// line's `slurm` section, in order: squeue's or sacct's fields, the
/// restart count, the login host when the line names none.
fn slurm_writes<'a>(obs: Option<&'a Observation>, host: Option<&'a str>) -> Vec<SlurmWrite<'a>> {
    let mut w = Vec::with_capacity(9);
    if let Some(o) = obs {
        let r = &o.row;
        w.push(SlurmWrite::Str("native_state", Some(&o.native_state)));
        w.push(SlurmWrite::Str("reason", r.reason.as_deref()));
        w.push(SlurmWrite::Str("exit_code", r.exit_code.as_deref()));
        w.push(SlurmWrite::Str("nodes", r.nodes.as_deref()));
        w.push(SlurmWrite::Str("submit_time", r.submit_time.as_deref()));
        let state = crate::native::map_state(&o.native_state).state;
        // ...and for a pending job its StartTime is only the expected start.
        let started = state != State::Pending;
        w.push(SlurmWrite::Str(
            "start_time",
            r.start_time.as_deref().filter(|_| started),
        ));
        // For a live job squeue prints the *expected* end (start + time
        // limit): not an end time yet.
        let ended = state.is_final();
        w.push(SlurmWrite::Str(
            "end_time",
            r.end_time.as_deref().filter(|_| ended),
        ));
        if let Some(n) = r.restart_count {
            w.push(SlurmWrite::Count(n));
        }
    } else {
        w.push(SlurmWrite::Str("native_state", None));
    }
    if let Some(h) = host {
        w.push(SlurmWrite::Host(h));
    }
    w
}

/// Whether a string field's value `cur` already is `v` (`None`: null).
fn str_holds(cur: Option<&Value>, v: Option<&str>) -> bool {
    match (cur, v) {
        (Some(Value::String(s)), Some(v)) => s == v,
        (Some(Value::Null), None) => true,
        _ => false,
    }
}

fn write_observation(
    line: &mut JobLine,
    state: State,
    message: &str,
    obs: Option<&Observation>,
    host: Option<&str>,
) {
    clear_own_error(line);
    line.stamp_now(state, Some(message), TOOL);
    // The slurm section is looked up once for all its fields.
    if !line.fields.get("slurm").is_some_and(Value::is_object) {
        line.fields
            .insert("slurm".into(), Value::Object(serde_json::Map::new()));
    }
    let slurm = line
        .fields
        .get_mut("slurm")
        .and_then(Value::as_object_mut)
        .expect("just made an object");
    for w in slurm_writes(obs, host) {
        if w.holds(slurm.get(w.key())) {
            continue;
        }
        let v = match w {
            SlurmWrite::Str(_, v) => v.map_or(Value::Null, |s| Value::String(s.into())),
            SlurmWrite::Count(n) => json!(n),
            SlurmWrite::Host(h) => Value::String(h.into()),
        };
        // In place when the key is there, appended when not.
        match slurm.get_mut(w.key()) {
            Some(slot) => *slot = v,
            None => {
                slurm.insert(w.key().into(), v);
            }
        }
    }
}

/// Whether [`write_observation`] (and [`write_pending`] for a job in
/// `state`) would change nothing on `line` but its `observed_at`, which
/// the line has (a string, replaced in place): the poll then keeps the
/// line as its text ([`crate::deferred`]). The same writes decide as
/// write them, read through [`Fields`].
fn observation_holds(
    line: &TextLine,
    state: State,
    message: &str,
    obs: Option<&Observation>,
    host: Option<&str>,
) -> bool {
    let top = |k: &str, v: &str| str_holds(line.at(&[k]).as_deref(), Some(v));
    !error_is_ours(line)
        && top("state", state.as_str())
        && top("message", message)
        && top("observed_by", TOOL)
        && line.str_at(&["observed_at"]).is_some()
        && line.has_slurm_object()
        && state != State::Pending
        && line.at(&["pending"]).is_none_or(|v| v.is_null())
        && slurm_writes(obs, host)
            .iter()
            .all(|w| w.holds(line.at(&["slurm", w.key()]).as_deref()))
}

/// A tail as evidence JSON; the text is redacted as a whole so multi-line
/// secrets (PEM blocks) are followed across lines.
fn tail_json(t: &Tail, redact: &dyn Fn(&str) -> String) -> Value {
    let lines: Vec<String> = if t.lines.is_empty() {
        Vec::new()
    } else {
        redact(&t.lines.join("\n"))
            .split('\n')
            .map(bound_line)
            .collect()
    };
    json!({"first_line": t.first_line, "lines": lines})
}

/// Longest evidence line kept, in characters (progress bars redrawn with
/// `\r` make single lines of megabytes).
pub const MAX_EVIDENCE_LINE: usize = 4096;

/// Cut a line to [`MAX_EVIDENCE_LINE`] characters, saying so.
fn bound_line(l: &str) -> String {
    match l.char_indices().nth(MAX_EVIDENCE_LINE) {
        None => l.to_string(),
        Some((cut, _)) => format!("{} [... {} more bytes]", &l[..cut], l.len() - cut),
    }
}

/// The final decision for a COMPLETED job from its own status files.
fn completed_verdict(files: &FileRecords, raw: &str) -> (State, String) {
    match status::decide(files, raw) {
        Ok(v @ (Verdict::StatusSuccess | Verdict::Completion(0))) => {
            (State::Complete, v.describe())
        }
        Ok(v) => (State::Error, v.describe()),
        Err(e) => (State::Error, e),
    }
}

/// Poll every line: returns them (in order) with observations or errors.
/// Lines whose `slurm.job_id` is malformed get a `data` error; lines never
/// submitted (see [`never_submitted`]) pass through unchanged and are
/// counted in [`PollResult::unsubmitted`] (the caller warns once); lines
/// failed by another tool pass through untouched.
pub fn poll(lines: Vec<JobLine>, conn: &mut dyn Connector, opts: &Options) -> PollResult {
    poll_deferred(lines, Vec::new(), conn, opts)
}

/// [`poll`] of lines read by [`crate::deferred::parse`]: `deferred` holds
/// each line's text where the line is a stand-in (or is empty). A line
/// the poll writes more than `observed_at` to is parsed whole first; the
/// result's [`PollResult::deferred`] says which lines are still their
/// text; write them with [`write_lines_deferred`].
pub fn poll_deferred(
    lines: Vec<JobLine>,
    deferred: Vec<Deferred>,
    conn: &mut dyn Connector,
    opts: &Options,
) -> PollResult {
    let mut deferred = deferred;
    if !deferred.is_empty() {
        deferred.resize_with(lines.len(), || None);
    }
    let mut out = PollResult {
        lines,
        deferred,
        ..Default::default()
    };
    let mut errors: Vec<Option<(String, String)>> = vec![None; out.lines.len()];
    let mut groups: BTreeMap<Option<String>, Vec<(usize, Prepared)>> = BTreeMap::new();
    for (i, error) in errors.iter_mut().enumerate() {
        let line = out.fields(i);
        if never_submitted(line) {
            // Not an observation failure: nothing was asked of Slurm. A
            // `data` error an older tao-poll wrote for it is dropped.
            if error_is_ours(line) {
                if let Some(l) = out.writable(i) {
                    clear_own_error(l);
                }
            }
            out.unsubmitted += 1;
            continue;
        }
        match prepare(line, opts.requeue) {
            Ok(p) => groups.entry(p.host.clone()).or_default().push((i, p)),
            // A line another tool already failed (e.g. a submit that never
            // reached Slurm) passes through untouched (tao-jobline(7)).
            Err(_) if has_error(line) && !error_is_ours(line) => out.passed_through += 1,
            Err(e) => *error = Some(e),
        }
    }
    for (host, jobs) in groups {
        let backend = match conn.open(host.as_deref()) {
            Ok(b) => b,
            Err(f) => {
                for (i, _) in &jobs {
                    errors[*i] = Some((f.code.clone(), f.message.clone()));
                }
                continue;
            }
        };
        let refs: Vec<JobRef> = jobs.iter().map(|(_, p)| p.jref.clone()).collect();
        // One round trip for all of this host's jobs: squeue, sacct and
        // `squeue --start` side by side, then every job's status.json tail
        // (progress, and the verdict when the tail settles it) and
        // completion record, read after the scheduler answered.
        let mut first: Vec<FileRequest> = Vec::new();
        let mut first_of: Vec<Option<usize>> = vec![None; jobs.len()];
        for (k, (_, p)) in jobs.iter().enumerate() {
            if let Some(r) = first_request(p) {
                first_of[k] = Some(first.len());
                first.push(r);
            }
        }
        let tail = opts.evidence.unwrap_or(0);
        let (sq, sa, first_files) = backend.observe(&refs, &first, tail);
        let starts = backend.expected_starts();
        let sc: Option<Answer> = sa.no_accounting().then(|| backend.scontrol(&refs));
        for issue in sq
            .parsed
            .issues
            .iter()
            .chain(&sa.parsed.issues)
            .chain(sc.iter().flat_map(|a| &a.parsed.issues))
        {
            tao_core::cli::warn(
                TOOL,
                &format!("unreadable scheduler reply: {}", issue.describe()),
            );
        }
        let login = backend.login_host();
        let outcomes: Vec<Outcome> = jobs
            .iter()
            .map(|(_, p)| resolve(&p.jref, &p.prev, p.requeue, &sq, &sa, sc.as_ref()))
            .collect();
        if opts.explain {
            for ((_, p), o) in jobs.iter().zip(&outcomes) {
                tao_core::cli::write_stderr(&format!(
                    "{TOOL}: explain: {}\n",
                    tao_core::cli::one_line(&explain_outcome(p, o))
                ));
            }
        }
        // What the first read found for job k.
        let first_for = |k: usize| -> Option<&FileRecords> {
            let r = first_of[k]?;
            first_files.as_ref().ok().map(|v| &v[r])
        };
        // A second command only for what the first read could not settle:
        // a verdict older than the status.json tail, a completion record
        // under another raw id (array elements), evidence log tails.
        let mut reqs: Vec<FileRequest> = Vec::new();
        let mut req_of: Vec<Option<usize>> = vec![None; jobs.len()];
        let mut settled: Vec<Option<FileRecords>> = vec![None; jobs.len()];
        for (k, ((_, p), o)) in jobs.iter().zip(&outcomes).enumerate() {
            let (verdict, logs, raw) = match o {
                Outcome::Observed(ob) => {
                    let errorish =
                        ob.needs_verdict || (ob.state == State::Error && !ob.provisional);
                    (
                        ob.needs_verdict,
                        errorish && opts.evidence.is_some(),
                        raw_id(p, Some(ob)),
                    )
                }
                Outcome::NotFound { .. } if sa.no_accounting() => {
                    (true, opts.evidence.is_some(), raw_id(p, None))
                }
                _ => continue,
            };
            let Some(full) = file_request(p, &raw, logs) else {
                // No job dir known: nothing to read (Slurm's exit code decides).
                continue;
            };
            if verdict {
                settled[k] = first_for(k).and_then(|f| settle(&full, &first[first_of[k]?], f));
            }
            let want = if verdict && settled[k].is_none() {
                Some(full)
            } else if logs {
                Some(FileRequest {
                    status: None,
                    completion: None,
                    logs: full.logs,
                    progress: None,
                    job: None,
                    state_key: None,
                    known: None,
                })
            } else {
                None
            };
            if let Some(r) = want {
                req_of[k] = Some(reqs.len());
                reqs.push(r);
            }
        }
        let files: Result<Vec<FileRecords>, QueryFailure> = if reqs.is_empty() {
            Ok(Vec::new())
        } else {
            backend.read_files(&reqs, tail)
        };
        // Job dirs of jobs that ended for good: their sidecars go (below).
        let mut sweep: Vec<String> = Vec::new();
        for (k, ((i, p), o)) in jobs.iter().zip(outcomes).enumerate() {
            let fr = req_of[k].map(|r| files.as_ref().map(|v| &v[r]));
            // The verdict's records: settled by the first read, else read
            // whole by the second (when it asked for them).
            let asked_verdict =
                req_of[k].is_some_and(|r| reqs[r].status.is_some() || reqs[r].completion.is_some());
            let vfr: Option<Result<&FileRecords, &QueryFailure>> = match &settled[k] {
                Some(f) => Some(Ok(f)),
                None => fr.filter(|_| asked_verdict),
            };
            match o {
                Outcome::Failed(f) => errors[*i] = Some((f.code, f.message)),
                Outcome::NotFound { message } => match vfr {
                    Some(Ok(f)) if f.completion.is_some() || f.status_last.is_some() => {
                        let Some(line) = out.writable(*i) else {
                            continue;
                        };
                        let (st, why) = completed_verdict(f, &raw_id(p, None));
                        let msg = format!("finished ({message}); {why}");
                        write_observation(line, st, &msg, None, login.as_deref());
                        if has_secrets(line) {
                            if let Some(jd) = &p.job_dir {
                                sweep.push(jd.clone());
                            }
                        }
                    }
                    Some(Err(f)) => errors[*i] = Some((f.code.clone(), f.message.clone())),
                    _ => {
                        if let Some(line) = out.writable(*i) {
                            write_observation(
                                line,
                                State::Unknown,
                                &message,
                                None,
                                login.as_deref(),
                            );
                        }
                    }
                },
                Outcome::Observed(ob) => {
                    let (state, message) = if ob.needs_verdict {
                        match vfr {
                            Some(Ok(f)) => {
                                let (st, why) = completed_verdict(f, &raw_id(p, Some(&ob)));
                                (st, format!("{}; {why}", ob.message))
                            }
                            Some(Err(f)) => {
                                errors[*i] = Some((f.code.clone(), format!("job {} is COMPLETED but its status files could not be read: {}", p.jref.job_id, f.message)));
                                continue;
                            }
                            None => {
                                // No job dir known (a bare Slurm id): Slurm's exit code decides.
                                let ok = ob.row.exit_code.as_deref().is_none_or(|e| e == "0:0");
                                let st = if ok { State::Complete } else { State::Error };
                                (
                                    st,
                                    format!(
                                        "{} (no job dir known: Slurm's exit code decides)",
                                        ob.message
                                    ),
                                )
                            }
                        }
                    } else {
                        (ob.state, ob.message.clone())
                    };
                    // Progress from the first read (a failed read leaves it).
                    let progress_read = (wants_progress(state)
                        && first_of[k].is_some_and(|r| first[r].progress.is_some()))
                    .then(|| first_for(k))
                    .flatten();
                    let ended = state.is_final() && !ob.provisional;
                    // A line kept as text whose writes change nothing but
                    // `observed_at` stays text (evidence: parsed whole).
                    if let Some(Some(t)) = out.deferred.get_mut(*i) {
                        if progress_read.is_none_or(progress_left)
                            && !(state == State::Error && opts.evidence.is_some())
                            && observation_holds(t, state, &message, Some(&ob), login.as_deref())
                        {
                            t.set_observed_at(&tao_core::time::now_rfc3339());
                            if ended && has_secrets(&**t) {
                                if let Some(jd) = &p.job_dir {
                                    sweep.push(jd.clone());
                                }
                            }
                            continue;
                        }
                    }
                    let Some(line) = out.writable(*i) else {
                        continue;
                    };
                    write_observation(line, state, &message, Some(&ob), login.as_deref());
                    write_pending(
                        line,
                        state,
                        &p.jref.job_id,
                        ob.row.reason.as_deref(),
                        starts.get(&p.jref.job_id),
                    );
                    if let Some(f) = progress_read {
                        write_progress(line, f);
                    }
                    if ended && has_secrets(line) {
                        if let Some(jd) = &p.job_dir {
                            sweep.push(jd.clone());
                        }
                    }
                    if state == State::Error && opts.evidence.is_some() {
                        if let Some(Ok(f)) = fr {
                            if let (Some(o), Some(e)) = (&f.out, &f.err) {
                                let redact = |t: &str| (opts.redact)(line, t);
                                let ev = json!({"out": tail_json(o, &redact), "err": tail_json(e, &redact)});
                                line.fields.insert("evidence".into(), ev);
                            }
                        }
                    }
                }
            }
        }
        // The sweep: a job in an end state will never source its secrets
        // sidecar; one killed before its trap ran (or cancelled while
        // pending) left it on shared storage. Best effort, one command.
        if !sweep.is_empty() {
            for f in backend.sweep_sidecars(&sweep) {
                tao_core::cli::warn(
                    TOOL,
                    &format!("the secrets sidecar {f:?} of an ended job could not be removed; remove it by hand"),
                );
            }
        }
    }
    // Each distinct error also goes to stderr once (with how many lines it
    // stopped): a cron job that throws stdout away still logs why.
    let mut seen: Vec<(String, String, usize)> = Vec::new();
    for (i, e) in errors.into_iter().enumerate() {
        if let Some((code, message)) = e {
            if let Some(l) = out.writable(i) {
                l.set_error_parts(TOOL, &code, &message);
            }
            out.failed += 1;
            match seen
                .iter_mut()
                .find(|(c, m, _)| *c == code && *m == message)
            {
                Some(s) => s.2 += 1,
                None => seen.push((code.clone(), message, 1)),
            }
            out.codes.push(code);
        }
    }
    for (_, message, n) in seen {
        let carry = if n == 1 {
            "1 job line carries it".to_string()
        } else {
            format!("{n} job lines carry it")
        };
        // The steps a message promises (the SSH key set-up after a refused
        // login) follow it, indented (tao_core::cli::attach_hints).
        tao_core::cli::write_stderr(&format!(
            "{TOOL}: error: {} ({carry})\n{}",
            tao_core::cli::one_line(&message),
            tao_core::cli::hint_text(&message)
        ));
    }
    out
}

/// Write job lines to standard output in writes of about 64 KiB (one
/// write per line costs a system call each: a tenth of a 10,000-job poll).
///
/// Errors: [`tao_core::Error::Io`] writing standard output (a closed pipe
/// has kind `BrokenPipe`, which the tools end quietly on).
pub fn write_lines(lines: &[JobLine]) -> tao_core::Result<()> {
    write_lines_deferred(lines, &[])
}

/// [`write_lines`] of a [`poll_deferred`] result: line `i` with
/// `deferred[i]` is written as that text, with the `observed_at` the poll
/// gave it ([`crate::deferred::write_line`]).
///
/// Errors: as [`write_lines`].
pub fn write_lines_deferred(lines: &[JobLine], deferred: &[Deferred]) -> tao_core::Result<()> {
    const CHUNK: usize = 64 * 1024;
    let stdout = std::io::stdout();
    let mut w = tao_core::LineWriter::new(stdout.lock());
    let mut buf = Vec::with_capacity(CHUNK * 2);
    for (i, l) in lines.iter().enumerate() {
        write_line_to(&mut buf, l, deferred.get(i).and_then(|d| d.as_deref()));
        if buf.len() >= CHUNK {
            w.write_raw(&buf)?;
            buf.clear();
        }
    }
    if !buf.is_empty() {
        w.write_raw(&buf)?;
    }
    Ok(())
}

/// One output line (with its newline) appended to `buf`: the line's JSON,
/// or the text it is kept as ([`crate::deferred::write_line`]).
pub fn write_line_to(buf: &mut Vec<u8>, line: &JobLine, deferred: Option<&TextLine>) {
    deferred::write_line(buf, line, deferred);
    buf.push(b'\n');
}

/// A connector over one backend for every host (replay, tests).
pub struct Single<B: Backend>(pub B);

impl<B: Backend> Connector for Single<B> {
    fn open(&mut self, _host: Option<&str>) -> Result<&mut dyn Backend, QueryFailure> {
        Ok(&mut self.0)
    }
}

/// The login host a poll of `line` opens (`Some(None)`: the default host
/// list, `Some(Some(spec))`: its recorded `slurm.login_host`), or `None`
/// when polling it opens no host (never submitted, a malformed job id, a
/// line another tool failed): [`poll_deferred`]'s grouping rule, for
/// [`EarlySession::start`].
pub fn host_to_open(line: &dyn Fields) -> Option<Option<String>> {
    if never_submitted(line) {
        return None;
    }
    prepare(line, false).ok().map(|p| p.host)
}

/// An SSH session being opened in a thread while the input is still read
/// (issue 17: the handshake's round trips and the reading of 10,000 job
/// lines overlap instead of running one after the other). Started only
/// for a host the poll will open ([`host_to_open`] of a line read), so a
/// run opens no session it would not have opened; the first
/// [`SshConnector::open`] keeps it as that host's session, with the same
/// result (and the same errors) as opening it then, and serves it to
/// every ask for that host (as to one for the default list when the
/// host is the list's first).
pub struct EarlySession {
    host: Option<String>,
    handle: std::thread::JoinHandle<tao_core::Result<Box<dyn tao_ssh::Transport>>>,
}

impl EarlySession {
    /// Start opening `host` (`None`: the first answering host of the list)
    /// with the SSH options of the environment (`transport`: a
    /// `--transport` value). `None` when those options do not read (the
    /// poll reports that itself) or the thread cannot be started.
    pub fn start(transport: Option<&str>, host: Option<String>) -> Option<Self> {
        let opts = tao_ssh::SshOptions::from_env_with_transport(transport).ok()?;
        let h = host.clone();
        let handle = std::thread::Builder::new()
            .name("ssh-connect".into())
            .spawn(move || match &h {
                Some(h) => tao_ssh::connect_host(&opts, h),
                None => tao_ssh::connect(&opts),
            })
            .ok()?;
        Some(EarlySession { host, handle })
    }

    /// The session's result; a panic in the thread goes on here.
    fn join(self) -> tao_core::Result<Box<dyn tao_ssh::Transport>> {
        self.handle
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p))
    }
}

/// SSH sessions, one per login host, opened on first use and kept.
pub struct SshConnector {
    opts: Option<tao_ssh::SshOptions>,
    config_error: Option<QueryFailure>,
    sessions: BTreeMap<Option<String>, Result<crate::backend::SshBackend, QueryFailure>>,
    early: Option<EarlySession>,
}

impl SshConnector {
    /// A connector with these SSH options (read and checked by the caller).
    pub fn new(opts: tao_ssh::SshOptions) -> Self {
        SshConnector {
            opts: Some(opts),
            config_error: None,
            sessions: BTreeMap::new(),
            early: None,
        }
    }

    /// This connector, with a session already being opened
    /// ([`EarlySession`]): kept by the first [`Connector::open`] as its
    /// host's session.
    pub fn with_early(mut self, early: Option<EarlySession>) -> Self {
        self.early = early;
        self
    }

    /// Read the SSH options from the environment, `transport` (a
    /// `--transport` value) winning over `TAO_TRANSPORT`. An error is kept
    /// and returned for each host asked for; a run that will ask a host
    /// checks the configuration first and stops on it
    /// (`crate::replay::connector`), so this is for runs that ask none.
    pub fn from_env(transport: Option<&str>) -> Self {
        match tao_ssh::SshOptions::from_env_with_transport(transport) {
            Ok(o) => SshConnector::new(o),
            Err(e) => SshConnector {
                opts: None,
                config_error: Some(QueryFailure {
                    code: e.kind().into(),
                    message: e.to_string(),
                }),
                sessions: BTreeMap::new(),
                early: None,
            },
        }
    }
}

impl Connector for SshConnector {
    fn open(&mut self, host: Option<&str>) -> Result<&mut dyn Backend, QueryFailure> {
        let Some(opts) = &self.opts else {
            return Err(self.config_error.clone().expect("set when opts is None"));
        };
        // The session opened early is this run's first, whichever host is
        // asked for first: a later ask for the same host (the default
        // list's first host and its spec alike) finds it below.
        if let Some(e) = self.early.take() {
            let host = e.host.clone();
            self.sessions.insert(
                host,
                e.join()
                    .map(crate::backend::SshBackend::new)
                    .map_err(|e| QueryFailure {
                        code: e.kind().into(),
                        message: e.to_string(),
                    }),
            );
        }
        // A line's recorded login host and the default host list may name
        // the same host: one session serves both.
        let same = |k: &Option<String>, v: &Result<crate::backend::SshBackend, QueryFailure>| match (
            k, v, host,
        ) {
            (None, Ok(b), Some(h)) => b.remote().login_host() == h,
            (Some(k), Ok(_), None) => opts.hosts.first() == Some(k),
            _ => false,
        };
        let key = self
            .sessions
            .iter()
            .find(|(k, v)| same(k, v))
            .map(|(k, _)| k.clone())
            .unwrap_or_else(|| host.map(str::to_string));
        let entry = self.sessions.entry(key).or_insert_with(|| {
            let r = match host {
                Some(h) => tao_ssh::connect_host(opts, h),
                None => tao_ssh::connect(opts),
            };
            r.map(crate::backend::SshBackend::new)
                .map_err(|e| QueryFailure {
                    code: e.kind().into(),
                    message: e.to_string(),
                })
        });
        match entry {
            Ok(b) => Ok(b),
            Err(f) => Err(f.clone()),
        }
    }
}

/// Exit status for a finished poll (tao-poll(1), EXIT STATUS), computed by
/// `tao_core::filter::Counts` from the bad input lines (`input`) and the
/// lines that failed. Never-submitted lines ([`PollResult::unsubmitted`],
/// [`PollResult::passed_through`]) count neither way: when every polled
/// line failed for one reason, that reason's status (69, 77, 78) is the
/// run's, whatever else the input held.
pub fn exit_status(res: &PollResult, input: tao_core::filter::Counts) -> i32 {
    let mut counts = tao_core::filter::Counts {
        read: (res.lines.len() - res.unsubmitted - res.passed_through) as u64,
        failed: 0,
        failure: None,
        ..input
    };
    for code in &res.codes {
        let status = tao_core::Error::code_of_kind(code).unwrap_or(tao_core::exit::SOME_FAILED);
        counts.fail_with(status);
    }
    // A failed line whose code was not kept counts as a plain failure.
    for _ in res.codes.len()..res.failed {
        counts.fail_with(tao_core::exit::SOME_FAILED);
    }
    counts.failed = res.failed as u64;
    counts.status()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A connector whose every host is unreachable.
    struct Unreachable;
    impl Connector for Unreachable {
        fn open(&mut self, _: Option<&str>) -> Result<&mut dyn Backend, QueryFailure> {
            Err(QueryFailure {
                code: "unavailable".into(),
                message: "no login host answered".into(),
            })
        }
    }

    #[test]
    fn a_line_failed_before_submit_does_not_hide_the_runs_status() {
        let lines = [
            r#"{"id":"tao-a","state":"RUNNING","slurm":{"job_id":"12"}}"#,
            r#"{"id":"tao-b","state":"PENDING","error":{"tool":"tao-submit","code":"tempfail","message":"x"}}"#,
        ]
        .iter()
        .enumerate()
        .map(|(i, t)| JobLine::parse(t, i as u64 + 1).unwrap())
        .collect();
        let redact = |_: &JobLine, t: &str| t.to_string();
        let opts = Options {
            requeue: false,
            evidence: None,
            redact: &redact,
            explain: false,
        };
        let res = poll(lines, &mut Unreachable, &opts);
        assert_eq!((res.failed, res.passed_through), (1, 1));
        assert_eq!(res.lines[1].get_str(&["error", "tool"]), Some("tao-submit"));
        assert_eq!(
            exit_status(&res, Default::default()),
            tao_core::exit::UNAVAILABLE
        );
    }

    fn wp(line: &mut JobLine, files: &FileRecords) {
        write_progress(line, files);
    }

    #[test]
    fn evidence_lines_are_bounded() {
        let long = "x".repeat(MAX_EVIDENCE_LINE + 10);
        let cut = bound_line(&long);
        assert!(cut.starts_with(&"x".repeat(MAX_EVIDENCE_LINE)));
        assert!(
            cut.ends_with("[... 10 more bytes]"),
            "{}",
            &cut[cut.len() - 30..]
        );
        assert_eq!(bound_line("short"), "short");
    }

    /// The first read settles a verdict only when it read the same files
    /// the whole read would, and the tail holds the deciding line (or the
    /// whole file).
    #[test]
    fn the_first_read_settles_what_it_can() {
        let full = FileRequest {
            status: Some("/r/status.json".into()),
            completion: Some("/j/slurm-logs/x-7/completion.json".into()),
            logs: None,
            progress: None,
            job: None,
            state_key: None,
            known: None,
        };
        let asked = FileRequest {
            status: None,
            completion: full.completion.clone(),
            logs: None,
            progress: Some("/r/status.json".into()),
            job: None,
            state_key: None,
            known: None,
        };
        let tail = |text: &str, cut: bool| FileRecords {
            progress: Some(status::ProgressTail {
                text: text.into(),
                cut,
                lines_only: false,
                mtime: None,
                size: None,
            }),
            completion: Some("{\"exit_code\": 0}".into()),
            ..Default::default()
        };
        let ok = settle(&full, &asked, &tail("x\n{\"status\":\"FAILURE\"}\n", true)).unwrap();
        assert_eq!(ok.status_last.as_deref(), Some("{\"status\":\"FAILURE\"}"));
        assert!(ok.completion.is_some());
        // Cut, and no deciding line in the tail: read the whole file.
        assert_eq!(
            settle(&full, &asked, &tail("x\n{\"status\":\"RUNNING\"}\n", true)),
            None
        );
        // The whole file, no deciding line: settled, completion decides.
        let none = settle(&full, &asked, &tail("{\"status\":\"RUNNING\"}\n", false)).unwrap();
        assert_eq!(none.status_last, None);
        // No status.json at all: settled.
        let absent = FileRecords::default();
        assert_eq!(settle(&full, &asked, &absent).unwrap().status_last, None);
        // Another attempt's completion record: read again under its id.
        let other = FileRequest {
            completion: Some("/j/slurm-logs/x-9/completion.json".into()),
            ..full.clone()
        };
        assert_eq!(settle(&other, &asked, &absent), None);
    }

    /// What each read does to a line's `progress`: a short tail without
    /// an epoch record keeps the previous poll's (never a made-up one), a
    /// skipped read (pending) leaves it, a new record replaces it with the
    /// history carried on, a missing file clears it.
    #[test]
    fn progress_is_kept_replaced_or_cleared_by_what_was_read() {
        let prev = r#"{"id":"a","progress":{"epoch":3,"max_epoch":9,"kpi":{"loss":0.7},"history":{"loss":[0.9,0.8,0.7]},"updated_at":"2026-12-01T10:00:00Z"}}"#;
        let line = || JobLine::parse(prev, 1).unwrap();
        let read = |text: &str, class| FileRecords {
            progress: Some(status::ProgressTail {
                text: text.into(),
                cut: false,
                lines_only: true,
                mtime: Some(1_800_000_000),
                size: Some(600),
            }),
            class: Some(class),
            ..Default::default()
        };
        let last = status::ReadClass::LastLines;
        // The last lines hold only a message record: the previous stays.
        let mut l = line();
        wp(
            &mut l,
            &read(
                "{\"status\": \"RUNNING\", \"message\": \"Validating\"}\n",
                last,
            ),
        );
        assert_eq!(l.fields["progress"], line().fields["progress"]);
        // A KPI record without epoch: the previous stays too.
        let mut l = line();
        wp(
            &mut l,
            &read(
                "{\"status\": \"RUNNING\", \"kpi\": {\"loss\": 0.1}}\n",
                last,
            ),
        );
        assert_eq!(l.fields["progress"], line().fields["progress"]);
        // Pending: nothing was read, nothing changes.
        let mut l = line();
        wp(
            &mut l,
            &FileRecords {
                class: Some(status::ReadClass::Pending),
                ..Default::default()
            },
        );
        assert_eq!(l.fields["progress"], line().fields["progress"]);
        // A new epoch: replaced, history carried on, updated_at from mtime.
        let mut l = line();
        wp(&mut l, &read("{\"epoch\": 4, \"max_epoch\": 9, \"status\": \"RUNNING\", \"kpi\": {\"loss\": 0.6}}\n", last));
        let p = &l.fields["progress"];
        assert_eq!(p["epoch"], 4);
        assert_eq!(p["history"]["loss"], json!([0.9, 0.8, 0.7, 0.6]));
        assert_eq!(p["updated_at"], "2027-01-15T08:00:00Z");
        // The stamp it was read at is recorded, for the next poll.
        assert_eq!(
            (p["file_size"].clone(), p["file_mtime_s"].clone()),
            (json!(600), json!(1_800_000_000))
        );
        assert_eq!(
            tao_core::progress::FileStamp::of_progress(Some(p)),
            Some(tao_core::progress::FileStamp {
                size: 600,
                mtime_s: 1_800_000_000
            })
        );
        // The file's stamp unchanged: not read, the progress stays as it
        // is, byte for byte.
        let mut u = l.clone();
        wp(
            &mut u,
            &FileRecords {
                class: Some(last),
                progress_unchanged: true,
                ..Default::default()
            },
        );
        assert_eq!(u.to_json(), l.to_json());
        // No status.json (any class): cleared, never made up.
        let mut l = line();
        wp(
            &mut l,
            &FileRecords {
                class: Some(last),
                ..Default::default()
            },
        );
        assert_eq!(l.fields["progress"], Value::Null);
    }

    #[test]
    fn log_dir_layout() {
        assert_eq!(
            log_dir("/b/jobs/x/", "x", "42"),
            "/b/jobs/x/slurm-logs/x-42"
        );
    }
}
