//! The command line of `tao-record` (clap derive): subcommands `open`,
//! `mark`, `retry`, `show`, `history`, `list` and `gc`, and what each prints.
//!
//! Output follows the house rules: job lines (JSON) on a pipe, readable
//! text on a terminal for `show`, `history` and `mark` (`--json` /
//! `--text` force either) and a table for `list` (`--json` / `--table`),
//! diagnostics on stderr as one line each. Exit statuses are
//! tao-jobline(7)'s: 0 ok, 1 some lines failed, 2 usage, 65 bad data,
//! 74 local I/O, 78 configuration.

use std::ffi::OsString;
use std::io::{BufWriter, Write};

use clap::{Parser, Subcommand};
use serde_json::{json, Value};
use tao_core::{Error, JobLine, LineWriter, Result, State};

use crate::machine::TOOL;
use crate::open::OpenArgs;
use crate::query::Filter;
use crate::store::{Record, Store};
use crate::{mark, query, validate};

/// `tao-record`: the local job record store.
#[derive(Debug, Parser)]
#[command(
    name = "tao-record",
    version,
    about = "Mint job ids, apply state transitions and keep the history of tao-slurm jobs",
    long_about = "Mint job ids, apply state transitions and keep the history of tao-slurm jobs.\n\n\
Records live in $TAO_STATE_DIR/records/<id>.json (default $XDG_STATE_HOME/tao-slurm, \
else ~/.local/state/tao-slurm), one file per job, written atomically under a lock.",
    // The codes of man/extras.toml [tao-record] exit_status (tao-man's
    // drift test help_exit_statuses_match_the_pages holds them equal).
    after_help = "Exit status: 0 ok, 1 some lines failed (they carry `error`), 2 usage, \
3 open refused a literal secret (nothing recorded), 65 bad input data, 74 local I/O error, \
78 configuration error."
)]
pub struct Cli {
    /// Print no warnings (errors are always printed).
    #[arg(short, long, global = true)]
    pub quiet: bool,
    /// Print what the tool does (records written, transitions applied); repeatable.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// The subcommand.
    #[command(subcommand)]
    pub command: Command,
}

/// The long help of `list` (also its man page text).
const LIST_ABOUT: &str = "Print records as job lines (without history): a table on a terminal, JSON lines in a pipe.

Order: the table is oldest first by creation time (the first history entry), as squeue lists the oldest job first; job lines on a pipe come in id order (UTC day, then id; each record read once); --sort created|id picks either. --id lists in the order given, --retry-of first attempt first.

The table's PROGRESS and KPI columns draw a bar and a sparkline in block glyphs under a UTF-8 locale (the first of LC_ALL, LC_CTYPE, LANG that is set names UTF-8), in ASCII (`#`, `.`, `_.-~=+*#`) otherwise (LANG=C, or none set as in cron).

The table's CLASS column is tao-classify's verdict on a failed job: CLASS/SUBCLASS and `retry` (tao-record retry opens a retry while the budget lasts) or `no-retry`; `-` when the job was not classified.

A record opened but never submitted (PENDING, no Slurm job id) shows `not submitted` in the table's MESSAGE column. A record that carries an error (a submit that failed: its state stays PENDING with no Slurm job id; a refresh that failed) shows it there instead, on one line, as `submit failed: MESSAGE` (from tao-submit), `poll failed: MESSAGE` (from tao-poll) or `error from TOOL: MESSAGE`, until it is cleared: fix the cause, then `tao-record mark ID --clear-error` and submit the record again, or open a new record when the request itself was wrong. mark warns once, on standard error, the first time it records such an error. A configuration error (code config: a secret not exported, no SLURM_HOSTNAME, an unknown TAO_TRANSPORT) is not recorded: the tool that hit it said it with the fix, and the record stays as it was (`not submitted`).";

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Mint an id, bind the job's directories and write a new record (state PENDING).
    Open(Box<OpenArgs>),
    /// Apply observations (job lines on stdin, or flags) to records and echo the updated lines.
    Mark(MarkArgs),
    /// Open the retry records of the retryable failures among the job lines on stdin, within
    /// the budget, and print them (the cron pipeline's retry stage).
    #[command(long_about = RETRY_ABOUT)]
    Retry(RetryArgs),
    /// Show one record (text on a terminal, JSON when piped).
    Show(ShowArgs),
    /// Show a record's transitions: at, state, source, message.
    History(ShowArgs),
    /// Print records: a table on a terminal (oldest first), job lines on a pipe (by id; --sort created: oldest first).
    #[command(long_about = LIST_ABOUT)]
    List(ListArgs),
    /// Archive terminal records older than an age into $TAO_STATE_DIR/archive/.
    Gc(GcArgs),
}

/// Arguments of `mark`.
#[derive(Debug, clap::Args)]
pub struct MarkArgs {
    /// Record to mark; without it, job lines are read from stdin.
    #[arg(value_name = "ID")]
    pub id: Option<String>,
    /// New state: PENDING RUNNING COMPLETE ERROR CANCELED UNKNOWN (Slurm's CANCELLED is taken for CANCELED).
    #[arg(long, value_name = "STATE", requires = "id")]
    pub state: Option<String>,
    /// Slurm job id (sets slurm.job_id).
    #[arg(long, value_name = "SLURM_ID", requires = "id")]
    pub backend_ref: Option<String>,
    /// Who observed it (recorded as the history entry's source).
    #[arg(long, value_name = "NAME", default_value = "user", requires = "id")]
    pub source: String,
    /// Native sub-state and why.
    #[arg(long, value_name = "TEXT", requires = "id")]
    pub message: Option<String>,
    /// When it was observed (RFC 3339) [default: now].
    #[arg(long, value_name = "TIME", requires = "id")]
    pub at: Option<String>,
    /// Remove the record's stored `error` (e.g. after a failed submit, before submitting again:
    /// tools pass lines that carry an `error` through untouched). On a terminal (or with
    /// --text) it prints one line: what was cleared and what to do next (a refused request
    /// needs a new record); on a pipe the job line.
    #[arg(long, requires = "id")]
    pub clear_error: bool,
    /// Print job lines even on a terminal (the default on a pipe).
    #[arg(long, conflicts_with = "text")]
    pub json: bool,
    /// Print one readable line per job even on a pipe (the default on a terminal):
    /// id, state, Slurm job id, message, and the error if any.
    #[arg(long)]
    pub text: bool,
}

/// Long help of `retry`.
const RETRY_ABOUT: &str =
    "Open the retry records of the retryable failures among the job lines on \
stdin, within the budget, and print them (the cron pipeline's retry stage).\n\n\
Reads classified job lines (tao-poll --evidence | tao-classify | tao-record mark). A line is \
retried when its record is ERROR, classification.retry is true (an infra fault), it has no \
retry yet, and its attempt is below --max-attempts: then the next attempt is opened as \
`tao-record open --retry-of ID` does (same request, new id and directories, attempt + 1, \
the node the classification blames excluded; tao-submit drops an exclusion that names no \
node of the cluster). Only the new records' lines are printed, for tao-render | tao-redact \
lint | tao-submit | tao-record mark. Every other line is dropped: a program fault is never \
retried, an ERROR not classified yet is left for tao-classify, a record already retried is \
not retried twice (running the stage again opens nothing); with -v one line on stderr per \
dropped line says why (`ID: skipped: why`); and a spent budget is said on stderr and recorded (classification.retry set to \
false, so list --live lets the record go). Two runs at once (overlapping cron runs) open \
one retry: the other run says on stderr which retry the other opened and exits 0. A failure \
marked retryable whose retry was never opened (the pipeline died between mark and retry) stays in list --live, so the next \
run of the recipe opens it.\n\n\
The cron recipe, one pipeline:\n  tao-record list --live | tao-poll --evidence | \
tao-classify | tao-record mark | tao-record retry | tao-render | tao-redact lint | \
tao-submit | tao-record mark";

/// Arguments of `retry`.
#[derive(Debug, clap::Args)]
pub struct RetryArgs {
    /// Retry budget: a job is run at most N times in all (attempt 1 is the first try), 1-100
    /// (1 = never retry).
    #[arg(long, value_name = "N", default_value_t = tao_core::DEFAULT_MAX_ATTEMPTS,
          value_parser = clap::value_parser!(u32).range(1..=100))]
    pub max_attempts: u32,
}

/// Arguments of `show` and `history`.
#[derive(Debug, clap::Args)]
pub struct ShowArgs {
    /// Record id.
    #[arg(value_name = "ID")]
    pub id: String,
    /// Print JSON even on a terminal.
    #[arg(long, conflicts_with = "text")]
    pub json: bool,
    /// Print text even on a pipe.
    #[arg(long)]
    pub text: bool,
}

/// Arguments of `list`.
#[derive(Debug, clap::Args)]
pub struct ListArgs {
    /// Only records the cron pipeline has work for: PENDING, RUNNING,
    /// UNKNOWN, ERROR records that ran on Slurm but are not classified
    /// yet (a failure `tao-poll --watch | tao-record mark` recorded), and
    /// ERROR records classified retryable whose retry was never opened.
    #[arg(long)]
    pub live: bool,
    /// Only records in this state (PENDING RUNNING COMPLETE ERROR CANCELED UNKNOWN; Slurm's CANCELLED is taken for CANCELED); repeatable.
    #[arg(long = "state", value_name = "STATE")]
    pub states: Vec<String>,
    /// Only this record; repeatable (an unknown id is an error, exit 65).
    #[arg(long = "id", value_name = "ID")]
    pub ids: Vec<String>,
    /// Only records opened since: a duration back from now (30m, 12h, 7d; at most 100 years) or an RFC 3339 time.
    #[arg(long, value_name = "DURATION|TIME")]
    pub since: Option<String>,
    /// Only the retry chain that contains ID (first attempt first).
    #[arg(long, value_name = "ID")]
    pub retry_of: Option<String>,
    /// Order of a listing of the store: `created` (oldest first by creation time; the default for the table) or `id` (the default for job lines on a pipe: one read per record, the fast path for cron pipelines); --id and --retry-of keep their own order.
    #[arg(long, value_name = "KEY", value_parser = ["created", "id"])]
    pub sort: Option<String>,
    /// Print job lines even on a terminal (the default on a pipe).
    #[arg(long, conflicts_with = "table")]
    pub json: bool,
    /// Print a table even on a pipe (the default on a terminal); `--text`
    /// is the same, as for show, history and mark.
    #[arg(long, visible_alias = "text")]
    pub table: bool,
}

/// Arguments of `gc`.
#[derive(Debug, clap::Args)]
pub struct GcArgs {
    /// Archive COMPLETE, ERROR and CANCELED records whose last transition is older than this (30d, 12h, ...; at most 100 years).
    #[arg(long, value_name = "DURATION")]
    pub older_than: String,
}

/// Parse `args` (argv, program name first) and run the subcommand.
/// Returns the exit status; errors carry their own
/// (`tao_core::cli::main_with` prints them).
///
/// Errors: [`Error::Usage`] for bad arguments (one line from
/// `tao_cli::parse`, naming `tao-record SUB --help` when a subcommand was
/// given); everything the subcommands return.
pub fn run<I, T>(args: I) -> Result<i32>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = match tao_cli::parse::<Cli, _, _>(TOOL, args)? {
        tao_cli::Parsed::Args(c) => c,
        tao_cli::Parsed::Done(code) => return Ok(code),
    };
    tao_core::cli::set_verbosity(cli.quiet, cli.verbose);
    // Readers changed nothing: a reader that went away (`list | head`) is
    // not a failure, as for ripgrep. Writers keep the Fail policy of main.
    let quiet_pipe = |r: Result<i32>| match r {
        Err(e) if tao_core::cli::is_broken_pipe(&e) => Ok(0),
        other => other,
    };
    match cli.command {
        Command::Open(a) => cmd_open(&a),
        Command::Mark(a) => cmd_mark(&a),
        Command::Retry(a) => cmd_retry(&a),
        Command::Show(a) => quiet_pipe(cmd_show(&a)),
        Command::History(a) => quiet_pipe(cmd_history(&a)),
        Command::List(a) => quiet_pipe(cmd_list(&a)),
        Command::Gc(a) => cmd_gc(&a),
    }
}

fn warn(msg: &str) {
    tao_core::cli::warn(TOOL, msg);
}

fn cmd_open(a: &OpenArgs) -> Result<i32> {
    let store = Store::open_default()?;
    let line = crate::open::open(&store, a)?;
    tao_core::cli::note(
        TOOL,
        &format!(
            "opened record {} in {}",
            line.id().unwrap_or_default(),
            store.dir().display()
        ),
    );
    let mut out = LineWriter::new(std::io::stdout().lock());
    let id = line.id().unwrap_or_default();
    let written = if a.print_id {
        out.write_raw(format!("{id}\n").as_bytes())
    } else {
        out.write(&line)
    };
    // The record exists by now: a failed write (stdout closed, a broken
    // pipe) must say so and give its id, or the job is lost to the user.
    written.map_err(|e| created_but_not_printed(e, id, &store.dir().display().to_string()))?;
    Ok(0)
}

/// The error of `tao-record open` when the record was written but its line
/// could not be printed: the I/O error (still exit 74) with a context that
/// names the created record and how to get its line, e.g. `record tao-… was
/// created in DIR (print it with: tao-record list --id tao-…), but writing
/// standard output failed: Broken pipe (os error 32)`. Other errors pass
/// through unchanged.
pub fn created_but_not_printed(e: Error, id: &str, dir: &str) -> Error {
    match e {
        Error::Io { source, .. } => Error::io(
            format!(
                "record {id} was created in {dir} (print it with: tao-record list --id {id}), but writing standard output failed"
            ),
            source,
        ),
        other => other,
    }
}

fn cmd_mark(a: &MarkArgs) -> Result<i32> {
    let text = a.text || (!a.json && tao_core::cli::stdout_is_terminal());
    if let (true, true, None, None, Some(id)) = (text, a.clear_error, &a.state, &a.message, &a.id) {
        // On a terminal a bare --clear-error says what it cleared in one
        // line; on a pipe it prints the job line, as every mark does.
        let old = Store::open_default()?
            .load(id)?
            .fields
            .get("error")
            .cloned();
        let mut out = LineWriter::new(Vec::new());
        let status = mark_to(a, &mut out)?;
        let line: Value = serde_json::from_slice(&out.into_inner())
            .map_err(|e| Error::Internal(format!("reading the marked line: {e}")))?;
        let state = line.get("state").and_then(Value::as_str).unwrap_or("?");
        let job_id = match line.pointer("/slurm/job_id") {
            Some(Value::String(j)) => Some(j.clone()),
            Some(Value::Number(n)) => Some(n.to_string()),
            _ => None,
        };
        let msg = mark::clear_confirmation(id, old.as_ref(), state, job_id.as_deref());
        tao_core::cli::write_stdout(format!("{msg}\n").as_bytes())?;
        return Ok(status);
    }
    if text {
        let mut out = LineWriter::new(mark::TextLines::new(std::io::stdout().lock()));
        mark_to(a, &mut out)
    } else {
        let mut out = LineWriter::new(std::io::stdout().lock());
        mark_to(a, &mut out)
    }
}

fn mark_to<W: Write>(a: &MarkArgs, out: &mut LineWriter<W>) -> Result<i32> {
    let store = Store::open_default()?;
    let sum = match &a.id {
        Some(id) => {
            let mut line = JobLine::new();
            line.fields.insert("id".into(), json!(id));
            if let Some(s) = &a.state {
                let st = State::parse_arg(s).ok_or_else(|| {
                    Error::Usage(format!(
                        "--state: {s:?} is not a state; use PENDING RUNNING COMPLETE ERROR CANCELED (or Slurm's CANCELLED) or UNKNOWN"
                    ))
                })?;
                line.fields.insert("state".into(), json!(st.as_str()));
            }
            if let Some(m) = &a.message {
                validate::no_controls(m, false)
                    .map_err(|e| Error::Usage(format!("--message: {e}")))?;
                line.fields.insert("message".into(), json!(m));
            }
            if let Some(j) = &a.backend_ref {
                if j.is_empty()
                    || !j
                        .bytes()
                        .all(|b| b.is_ascii_digit() || b == b'_' || b == b'+')
                {
                    return Err(Error::Usage(format!(
                        "--backend-ref: {j:?} is not a Slurm job id; give the digits sbatch printed"
                    )));
                }
                line.set_path(&["slurm", "job_id"], json!(j));
            }
            if let Some(t) = &a.at {
                if tao_core::time::parse_rfc3339(t).is_none() {
                    return Err(Error::Usage(format!(
                        "--at: {t:?} is not an RFC 3339 time; use e.g. 2026-11-29T18:58:47Z"
                    )));
                }
                line.fields.insert("observed_at".into(), json!(t));
            }
            line.fields.insert("observed_by".into(), json!(a.source));
            store.require_live(id)?;
            if a.clear_error {
                store.update(id, |r| {
                    r.fields.shift_remove("error");
                    Ok(())
                })?;
            }
            let text = format!("{}\n", line.to_json());
            mark::mark_stream(
                &store,
                text.as_bytes(),
                out,
                &mut std::io::stderr(),
                &mut |m| warn(m),
            )?
        }
        None => {
            let stdin = tao_core::cli::piped_stdin(
                "tao-record list --live | tao-poll | tao-record mark",
                Some("give a record id (tao-record mark ID --state STATE)"),
            )?;
            mark::mark_stream(&store, stdin, out, &mut std::io::stderr(), &mut |m| warn(m))?
        }
    };
    sum.into_result("applied")
}

fn cmd_retry(a: &RetryArgs) -> Result<i32> {
    let store = Store::open_default()?;
    let stdin = tao_core::cli::piped_stdin(
        "tao-record list --live | tao-poll --evidence | tao-classify | tao-record mark | tao-record retry",
        None,
    )?;
    let mut out = LineWriter::new(std::io::stdout().lock());
    let sum = crate::retry::retry_stream(
        &store,
        stdin,
        &mut out,
        a.max_attempts,
        &mut std::io::stderr(),
        &mut |m| warn(m),
        &mut |m| tao_core::cli::note(TOOL, m),
    )?;
    sum.into_result("retry record(s) opened")
}

fn cmd_show(a: &ShowArgs) -> Result<i32> {
    let store = Store::open_default()?;
    let rec = store.load(&a.id)?;
    let text = a.text || (!a.json && tao_core::cli::stdout_is_terminal());
    let mut out = std::io::stdout().lock();
    let s = if text {
        render_text(&rec)
    } else {
        let mut s =
            serde_json::to_string(&rec.fields).map_err(|e| Error::Internal(e.to_string()))?;
        s.push('\n');
        s
    };
    out.write_all(s.as_bytes())
        .and_then(|_| out.flush())
        .map_err(|e| Error::io("writing standard output", e))?;
    Ok(0)
}

fn cmd_history(a: &ShowArgs) -> Result<i32> {
    let store = Store::open_default()?;
    let rec = store.load(&a.id)?;
    let text = a.text || (!a.json && tao_core::cli::stdout_is_terminal());
    let mut s = String::new();
    for h in rec.history() {
        let get = |k: &str| h.get(k).and_then(Value::as_str).unwrap_or("");
        if text {
            s.push_str(&tao_core::cli::one_line(&format!(
                "{}  {:<8}  {:<12}  {}",
                get("at"),
                get("state"),
                get("source"),
                get("message")
            )));
            s.push('\n');
        } else {
            s.push_str(&serde_json::to_string(h).map_err(|e| Error::Internal(e.to_string()))?);
            s.push('\n');
        }
    }
    let mut out = std::io::stdout().lock();
    out.write_all(s.as_bytes())
        .and_then(|_| out.flush())
        .map_err(|e| Error::io("writing standard output", e))?;
    Ok(0)
}

fn cmd_list(a: &ListArgs) -> Result<i32> {
    let mut filter = Filter {
        live: a.live,
        // The table is for people: oldest first, as squeue lists the
        // oldest job first. Job lines on a pipe come in id order (day,
        // then id): each record is read once, which is what a cron
        // pipeline over a big store needs; --sort picks either anywhere.
        order: match a.sort.as_deref() {
            Some("id") => query::Order::Id,
            Some(_) => query::Order::Created,
            None if a.table || (!a.json && tao_core::cli::stdout_is_terminal()) => {
                query::Order::Created
            }
            None => query::Order::Id,
        },
        ..Default::default()
    };
    for s in &a.states {
        filter.states.push(State::parse_arg(s).ok_or_else(|| {
            Error::Usage(format!(
                "--state: {s:?} is not a state; use PENDING RUNNING COMPLETE ERROR CANCELED (or Slurm's CANCELLED) or UNKNOWN"
            ))
        })?);
    }
    for id in &a.ids {
        tao_core::id::validate(id).map_err(|e| Error::Usage(format!("--id: {e}")))?;
        filter.ids.push(id.clone());
    }
    if let Some(s) = &a.since {
        filter.since = Some(
            validate::parse_since(s, chrono::Utc::now())
                .map_err(|e| Error::Usage(format!("--since: {e}")))?,
        );
    }
    if let Some(r) = &a.retry_of {
        tao_core::id::validate(r).map_err(|e| Error::Usage(format!("--retry-of: {e}")))?;
        filter.chain_of = Some(r.clone());
    }
    let store = Store::open_default()?;
    let table = a.table || (!a.json && tao_core::cli::stdout_is_terminal());
    let stdout = std::io::stdout().lock();
    let mut out = BufWriter::with_capacity(1 << 16, stdout);
    let listed = if table {
        let mut lines = Vec::new();
        let listed = query::list(&store, &filter, &mut lines, &mut |m| warn(m))?;
        let text = tao_core::progress::glyphs_for_locale(render_table(&lines));
        out.write_all(text.as_bytes())
            .map_err(|e| Error::io("writing standard output", e))?;
        listed
    } else {
        query::list(&store, &filter, &mut out, &mut |m| warn(m))?
    };
    out.flush()
        .map_err(|e| Error::io("writing standard output", e))?;
    if !listed.corrupt.is_empty() {
        // A cron pipeline (`list --live | tao-poll | ...`) must not go on
        // silently without a job: the listing fails, naming the files.
        let names: Vec<String> = listed
            .corrupt
            .iter()
            .map(|p| format!("{:?}", p.display().to_string()))
            .collect();
        return Err(Error::Data(format!(
            "{} record file(s) could not be used and were skipped: {}; fix each as its warning above says, or move it aside and restore it from a backup",
            names.len(),
            tao_core::hostlist::summarize(&names, 5)
        )));
    }
    if listed.missing > 0 {
        return Err(Error::Data(format!(
            "{} requested record(s) not found (see above)",
            listed.missing
        )));
    }
    Ok(0)
}

fn cmd_gc(a: &GcArgs) -> Result<i32> {
    let secs = validate::duration_secs(&a.older_than)
        .map_err(|e| Error::Usage(format!("--older-than: {e}")))?;
    let store = Store::open_default()?;
    let ids = query::gc(&store, secs, chrono::Utc::now())?;
    let mut out = std::io::stdout().lock();
    for id in &ids {
        writeln!(out, "{id}").map_err(|e| Error::io("writing standard output", e))?;
    }
    out.flush()
        .map_err(|e| Error::io("writing standard output", e))?;
    Ok(0)
}

/// A table of job lines (as `list` prints them): id, state, attempt,
/// Slurm job id, partition, progress (bar, epoch/max, ETA from the
/// `progress` tao-poll recorded; for a pending job its expected start),
/// latest KPI with a sparkline, class (tao-classify's verdict:
/// [`class_cell`]), message (for a pending job its reason in
/// words; for a line carrying an `error` object or never submitted,
/// `tao_core::progress::message_cell`). Control characters are escaped;
/// no colour.
pub fn render_table(job_lines: &[u8]) -> String {
    let mut rows: Vec<[String; 9]> = vec![[
        "ID".into(),
        "STATE".into(),
        "ATTEMPT".into(),
        "SLURM".into(),
        "PARTITION".into(),
        "PROGRESS".into(),
        "KPI".into(),
        "CLASS".into(),
        "MESSAGE".into(),
    ]];
    for l in job_lines.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
        let Ok(v) = serde_json::from_slice::<Value>(l) else {
            continue;
        };
        let s = |p: &[&str]| {
            let mut cur = &v;
            for k in p {
                match cur.get(k) {
                    Some(x) => cur = x,
                    None => return "-".to_string(),
                }
            }
            match cur {
                Value::String(s) => tao_core::cli::one_line(s),
                Value::Null => "-".into(),
                other => other.to_string(),
            }
        };
        let pending = v
            .get("pending")
            .filter(|_| v.get("state").and_then(Value::as_str) == Some("PENDING"));
        let (progress, message) = match pending {
            Some(p) => tao_core::progress::pending_cells(p),
            None => (
                tao_core::progress::progress_cell(v.get("progress"), 12),
                s(&["message"]),
            ),
        };
        // A job line that carries an `error` (a failed submit, a failed
        // refresh), or that was never submitted, says so instead: the
        // state alone (PENDING, no Slurm id) would hide that nothing runs.
        let job_id = match v.pointer("/slurm/job_id") {
            Some(Value::String(j)) => Some(j.clone()),
            Some(Value::Number(n)) => Some(n.to_string()),
            _ => None,
        };
        let message = tao_core::progress::message_cell(
            v.get("error"),
            v.get("state").and_then(Value::as_str),
            job_id.as_deref(),
            message,
        );
        rows.push([
            s(&["id"]),
            s(&["state"]),
            s(&["attempt"]),
            s(&["slurm", "job_id"]),
            s(&["resources", "partition"]),
            progress,
            tao_core::progress::kpi_cell(v.get("progress")),
            class_cell(v.get("classification")),
            message,
        ]);
    }
    let last = rows[0].len() - 1;
    let mut w = [0usize; 9];
    for r in &rows {
        for (i, c) in r.iter().enumerate() {
            w[i] = w[i].max(c.chars().count());
        }
    }
    let mut out = String::new();
    for r in &rows {
        let mut line = String::new();
        for (i, c) in r.iter().enumerate() {
            if i == last {
                line.push_str(c);
            } else {
                line.push_str(&format!("{c:<width$}  ", width = w[i]));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// The CLASS cell of [`render_table`] for a record's `classification`
/// (tao-classify's verdict, or `None`): `CLASS/SUBCLASS retry` when a retry
/// may help (`classification.retry` true: `tao-record retry` opens one
/// while the budget lasts), `CLASS/SUBCLASS no-retry` otherwise (the
/// subclass left out when there is none), `-` when the job was not
/// classified. Control characters are escaped.
pub fn class_cell(c: Option<&Value>) -> String {
    let Some(c) = c.filter(|c| c.is_object()) else {
        return "-".into();
    };
    let text = |k: &str| c.get(k).and_then(Value::as_str).filter(|s| !s.is_empty());
    let mut class = text("class").unwrap_or("unknown").to_string();
    if let Some(sub) = text("subclass") {
        class = format!("{class}/{sub}");
    }
    let retry = if c.get("retry").and_then(Value::as_bool) == Some(true) {
        "retry"
    } else {
        "no-retry"
    };
    tao_core::cli::one_line(&format!("{class} {retry}"))
}

/// Readable text for a record: one `key: value` line per scalar (nested
/// objects as dotted keys, multi-line text summarised), then the history.
/// Control characters are escaped so a record cannot drive the terminal.
pub fn render_text(rec: &Record) -> String {
    let mut rows: Vec<(String, String)> = Vec::new();
    for (k, v) in &rec.fields {
        if k != "history" {
            flatten(k, v, &mut rows);
        }
    }
    let width = rows.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    let mut s = String::new();
    for (k, v) in rows {
        s.push_str(&tao_core::cli::one_line(&format!("{k:<width$}  {v}")));
        s.push('\n');
    }
    s.push_str("history:\n");
    for h in rec.history() {
        let get = |k: &str| h.get(k).and_then(Value::as_str).unwrap_or("");
        s.push_str(&tao_core::cli::one_line(&format!(
            "  {}  {:<8}  {:<12}  {}",
            get("at"),
            get("state"),
            get("source"),
            get("message")
        )));
        s.push('\n');
    }
    s
}

fn flatten(key: &str, v: &Value, rows: &mut Vec<(String, String)>) {
    match v {
        Value::Object(m) if !m.is_empty() => {
            for (k, v) in m {
                flatten(&format!("{key}.{k}"), v, rows);
            }
        }
        Value::String(s) if s.contains('\n') => {
            rows.push((key.into(), format!("({} lines)", s.lines().count())));
        }
        Value::String(s) => rows.push((key.into(), s.clone())),
        Value::Array(a) if a.is_empty() => rows.push((key.into(), "-".into())),
        Value::Array(a) if a.iter().all(|x| !x.is_object() && !x.is_array()) => {
            let parts: Vec<String> = a
                .iter()
                .map(|x| x.as_str().map_or_else(|| x.to_string(), str::to_string))
                .collect();
            rows.push((key.into(), parts.join(", ")));
        }
        other => rows.push((key.into(), other.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::render_table;

    #[test]
    fn table_shows_progress_kpi_and_pending_words() {
        let lines = br#"{"id":"tao-a","state":"RUNNING","attempt":1,"slurm":{"job_id":"7"},"resources":{"partition":"gpu"},"message":"RUNNING","progress":{"epoch":3,"max_epoch":10,"percent":30.0,"eta_s":420,"kpi":{"loss":0.5},"history":{"loss":[0.9,0.7,0.5]}}}
{"id":"tao-b","state":"PENDING","attempt":1,"slurm":{"job_id":"8"},"message":"PENDING (BeginTime)","pending":{"reason":"BeginTime","words":"its earliest start time (--begin) has not come yet","clears":true,"expected_start":"2026-12-01T15:00:00Z"}}
{"id":"tao-c","state":"RUNNING","attempt":1,"slurm":{"job_id":"9"},"message":"RUNNING","pending":{"reason":"Priority","words":"stale"},"progress":null}
"#;
        let t = render_table(lines);
        let rows: Vec<&str> = t.lines().collect();
        assert!(
            rows[0].contains("PROGRESS") && rows[0].contains("KPI"),
            "{t}"
        );
        assert!(
            rows[1].contains("[████░░░░░░░░] 3/10 30% ETA 00:07:00"),
            "{t}"
        );
        assert!(rows[1].contains("loss 0.5 █▄▁"), "{t}");
        assert!(rows[2].contains("starts ~2026-12-01 15:00 UTC"), "{t}");
        assert!(
            rows[2].ends_with("BeginTime: its earliest start time (--begin) has not come yet"),
            "{t}"
        );
        // A stale pending object of a running job is not shown.
        assert!(
            !rows[3].contains("stale") && rows[3].ends_with("RUNNING"),
            "{t}"
        );
        assert!(!t.contains('\x1b'));
    }

    #[test]
    fn table_shows_the_error_of_a_failed_submit_on_one_line() {
        let lines = br#"{"id":"tao-e","state":"PENDING","attempt":1,"slurm":null,"resources":{"partition":"gpu"},"error":{"tool":"tao-submit","code":"data","message":"asks for 16 CPUs\nbut nodes have 8"}}
"#;
        let t = render_table(lines);
        let row = t.lines().nth(1).unwrap();
        assert!(
            row.ends_with("submit failed: asks for 16 CPUs\\nbut nodes have 8"),
            "{t}"
        );
        assert_eq!(t.lines().count(), 2, "{t}");
        // Opened, never submitted: said so, not a plain PENDING.
        let t = render_table(
            br#"{"id":"tao-n","state":"PENDING","attempt":1,"resources":{"partition":"gpu"}}
"#,
        );
        assert!(t.lines().nth(1).unwrap().ends_with("not submitted"), "{t}");
    }
}
