//! Command-line interface (clap derive) and the status action.
//!
//! `tao-poll [JOB_ID...]` reads job lines on stdin (or takes Slurm job ids
//! as arguments), polls them and prints them. Lines never submitted (no
//! `slurm.job_id`) pass through unchanged (one note per run with `-v`) and
//! do not affect the exit status. Exit status: 0 when every submitted
//! line got an observation; 1 when some lines carry a tao-poll `error`
//! (they keep their last state); 69/77/78 when no line could be polled for
//! the same connection reason (unreachable, auth, configuration); 65 for a
//! malformed input line (the lines before it are printed); 2 for usage.

use std::io::Write;

use clap::{Args, Parser, Subcommand};
use serde_json::{json, Value};
use tao_core::filter::Counts;
use tao_core::{Error, Filter, JobLine, LineWriter, OnBadLine, Result};

pub use crate::logs::first_line;
use crate::poll::{self, Options};
pub use crate::replay::{connector, ReplayArgs};

const AFTER_HELP: &str = "\
States: PENDING RUNNING COMPLETE ERROR CANCELED UNKNOWN (Slurm's native state and
reason ride along in `message` and `slurm.native_state`). COMPLETED is COMPLETE only
when the job's status.json (last SUCCESS/FAILURE, or TAO's RUNNING \"Train finished
successfully.\") or completion.json (exit_code 0) says so. A failed query never
changes a state: the line gets `error` instead.
Lines never submitted (no slurm.job_id) pass through unchanged (with -v, one note says how many).

Examples:
  tao-record list --live | tao-poll | tao-classify | tao-record mark
  tao-poll --watch 12345 12346
  tao-poll --explain --replay-squeue squeue.txt --replay-sacct sacct.txt 12345
  tao-poll logs tao-20261129-k3f9x2 -n 50 --follow
  tao-poll report tao-20261129-k3f9x2 -o report.html

Exit status: 0 all lines observed (with --watch: every submitted job COMPLETE; lines
never submitted, with or without a stored submit error, change nothing); 1 some lines
carry a tao-poll `error` (with --watch: a submitted job did not end COMPLETE); 2 usage;
65 malformed input line, or (logs, report) an unknown record id; 69 no login host
answered; 74 local I/O; 75 (logs)
no log file yet (the job has not started or not written it): try again or use --follow; 77 SSH
authentication or host key; 78 configuration; 130 (--watch) stopped by SIGINT (Ctrl-C),
143 by SIGTERM: the line being written is finished, every job's last known line is
printed (on a pipe), nothing is lost.";

/// The DESCRIPTION of `--help` and tao-poll(1).
const LONG_ABOUT: &str = "\
Poll Slurm jobs and print each as a job line whose `state` is a word of the tools' \
vocabulary: PENDING, RUNNING, COMPLETE, ERROR, CANCELED or UNKNOWN (tao-jobline(7)).

Input: job lines on standard input (tao-record list --live | tao-poll), or Slurm job ids \
as arguments. Output: each line again, with `slurm` (native_state, reason, exit_code, \
nodes, times), `state`, `message`, `observed_at` and `observed_by` set.

One batch per login host, over one SSH session: a single squeue for every job of that \
host (squeue knows a job first) and a single sacct (sacct still knows it after squeue \
has forgotten it), never one command per job. Each native state maps to exactly one \
word; the native state and reason ride along. A job that ended COMPLETED is COMPLETE \
only if its own verdict says so: the last SUCCESS or FAILURE in <results_dir>/status.json \
(written by TAO; current TAO ends a good run with RUNNING \"Train finished successfully.\", \
which counts as SUCCESS), else the exit_code of the job script's completion.json. A query that \
fails never changes a state: the line gets an `error` instead. Lines never submitted (no \
slurm.job_id) pass through unchanged; with -v one note on stderr says how many (not a warning: \
a record left unsubmitted would repeat it on every cron run).

--evidence attaches the redacted tails of main.out and main.err to ERROR lines, for \
tao-classify. --watch polls every --interval seconds until every job has ended: a live \
table on a terminal (progress bar, epoch/max, ETA, latest KPI with a sparkline; for a \
pending job its reason in words and expected start; redrawn in place, or on TERM=dumb or \
no TERM printed again below the last one when it changed; the bar and sparkline in ASCII \
unless LC_ALL, LC_CTYPE or LANG names a UTF-8 locale), a job line per change (of state, \
message, error, progress or expected start) on a pipe. Running and ended jobs get \
`progress` from the end of their status.json (epoch, max_epoch, percent, eta_s, \
kpi, history, updated_at, file_size, file_mtime_s): the last 2 lines for a job squeue \
calls RUNNING (or ended, not COMPLETED), the last 4 KiB (which hold the verdict) for a \
COMPLETED one; history carries on from the line's previous progress. Reads are \
incremental: a line's progress records the size and mtime (file_size, file_mtime_s) its \
status.json had when it was read, the next poll sends them, and a running job's file \
whose size and mtime are both unchanged is stat'ed but not read again: its progress \
stays as it is (feed the previous poll's lines, as --watch and `tao-record list --live \
| tao-poll | tao-record mark` do; the record store keeps progress). updated_at is the \
file's mtime from that same stat: TAO's records carry the node's local date and time \
with no zone, so the mtime is the one zoned time there is. Pending jobs get `pending` (reason, \
words, clears, action, expected_start from squeue --start); their files are not read. squeue, sacct, squeue --start and every job's \
status.json tail and completion record travel in one remote command per login host; \
only a verdict older than the tail, --evidence tails and scontrol take a second one. The report command writes one self-contained \
HTML file of jobs and their retry chains (KPI curves over epochs, a timeline). The logs command prints the tail \
of a job's main.out or main.err, redacted (-n, --err, --follow). The replay options \
read saved squeue, sacct and scontrol output (and a directory standing for the \
cluster's files) instead of asking a cluster, to reproduce a report offline; --explain \
says which row decided each state.";

/// tao-poll: Slurm job states (squeue + sacct, batched per login host) in
/// the tools' vocabulary.
#[derive(Debug, Parser)]
#[command(
    name = "tao-poll",
    version,
    about = "Poll Slurm jobs (squeue + sacct, batched per login host) into the tools' state vocabulary",
    long_about = LONG_ABOUT,
    args_conflicts_with_subcommands = true,
    after_long_help = AFTER_HELP
)]
pub struct Cli {
    /// Print no warnings (errors are always printed).
    #[arg(short, long, global = true)]
    pub quiet: bool,
    /// Print what the tool does (connections, remote commands); repeatable.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// How to reach the login node: libssh2 (default), openssh (the system
    /// ssh over a ControlMaster connection; reuses a master you opened) or
    /// local (run on the login node itself, no SSH). Wins over TAO_TRANSPORT.
    // No clap `env = "TAO_TRANSPORT"`: the variable is read and checked by
    // tao-ssh (`SshOptions::from_lookup`, exit 78 naming TAO_TRANSPORT and
    // its values), never reported as a flag the user did not pass.
    // The names and the check are tao_ssh::TransportKind's (NAMES, parse).
    #[arg(long, global = true, value_name = "NAME", value_parser = tao_cli::CheckedLater(&tao_ssh::TransportKind::NAMES))]
    pub transport: Option<String>,
    #[command(subcommand)]
    /// `logs`: print a job's log tail; `report`: an HTML picture of jobs.
    pub command: Option<Command>,
    #[command(flatten)]
    /// Options of the default (status) action.
    pub status: StatusArgs,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print the last lines of a job's main.out (or main.err), redacted.
    Logs(crate::logs::LogsArgs),
    /// Write one self-contained HTML file: per job and its retry chain, KPI
    /// curves over epochs (from status.json) and a timeline of the attempts.
    Report(crate::report::ReportArgs),
}

/// Options of the status action.
#[derive(Debug, Args)]
pub struct StatusArgs {
    /// Slurm job ids (`123`, `123_4`, `123+0`, `123;cluster`); without any,
    /// job lines are read from stdin.
    #[arg(value_name = "JOB_ID")]
    pub ids: Vec<String>,
    /// Keep polling until every job is final; print a line per transition
    /// (a live table on a terminal). Exit 0 when all jobs are COMPLETE.
    #[arg(long)]
    pub watch: bool,
    /// Seconds between polls with --watch; 1-86400.
    #[arg(long, value_name = "SECS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=86400))]
    pub interval: u64,
    /// Attach redacted tails of main.out/main.err to ERROR lines (`evidence`).
    #[arg(long)]
    pub evidence: bool,
    /// Lines per evidence tail; 1-10000.
    #[arg(long, value_name = "N", default_value_t = 200, value_parser = clap::value_parser!(u32).range(1..=10000))]
    pub evidence_lines: u32,
    /// Whether Slurm requeues jobs (lines without resources.requeue); NODE_FAIL
    /// and the launch failures are provisional while it may (BOOT_FAIL and
    /// PREEMPTED are final either way).
    #[arg(long, env = "SLURM_USE_REQUEUE", value_name = "BOOL", default_value = "true", value_parser = parse_bool, action = clap::ArgAction::Set)]
    pub requeue: bool,
    #[command(flatten)]
    /// Saved outputs to replay instead of asking the cluster.
    pub replay: ReplayArgs,
    /// Say on stderr, for each job, which squeue/sacct/scontrol row (and
    /// line number) decided its state: for reading a replayed paste.
    #[arg(long)]
    pub explain: bool,
    /// Print `tao-poll: stats: lines=N handshakes=N execs=N remote_s=S` on
    /// stderr (benchmarks; remote_s: seconds spent waiting for remote commands).
    #[arg(long, hide = true)]
    pub stats: bool,
}

/// Parse a boolean the way SLURM_USE_REQUEUE is written.
///
/// Errors: a message naming the accepted spellings.
pub fn parse_bool(s: &str) -> std::result::Result<bool, String> {
    match s.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" => Ok(false),
        _ => Err(format!("{s:?} is not a boolean: use true or false")),
    }
}

/// The redaction used for the evidence of a job line: tao-secrets'
/// catalogue plus the values of HF_TOKEN, NGC_KEY and of every secret the
/// line itself names (`secrets`), read from this environment by name
/// (`tao_secrets::LineRedactors`, the one construction rule). A redactor
/// that cannot be built (a broken built-in catalogue) masks the whole text.
pub fn redactor() -> impl Fn(&JobLine, &str) -> String {
    let reds = tao_secrets::LineRedactors::new("tao-poll");
    move |line: &JobLine, text: &str| match reds.for_line(line) {
        Ok(r) => String::from_utf8_lossy(&r.redact_text(text.as_bytes())).into_owned(),
        Err(_) => "[REDACTED:unavailable]".to_string(),
    }
}

/// Read the input lines: job ids from arguments, else job lines from stdin
/// (`tao_core::filter`, stopping at a bad line: it is reported on stderr
/// with its line number, the lines before it are returned, and the counts
/// say so).
///
/// Errors: [`Error::Usage`] when stdin is a terminal; [`Error::Io`] when
/// it cannot be read.
pub fn read_input(ids: &[String]) -> Result<(Vec<JobLine>, Counts)> {
    read_input_deferred(ids, false).map(|(l, _, c)| (l, c))
}

/// [`read_input`], with `defer`: each line's `progress` object kept as its
/// text ([`crate::deferred::parse`]; a single poll writes an unchanged one
/// back as it came). The texts, one per line, are empty without `defer`.
///
/// Errors: as [`read_input`].
pub fn read_input_deferred(
    ids: &[String],
    defer: bool,
) -> Result<(Vec<JobLine>, Vec<crate::deferred::Deferred>, Counts)> {
    read_input_seen(ids, defer, &mut |_| true)
}

/// [`read_input_deferred`], showing each line read from stdin to `seen`
/// as it is read (the text of a line kept as text, else the line) until
/// `seen` returns false: a single poll starts its SSH session from the
/// first line that needs one ([`crate::poll::EarlySession`]).
///
/// Errors: as [`read_input`].
pub fn read_input_seen(
    ids: &[String],
    defer: bool,
    seen: &mut dyn FnMut(&dyn crate::deferred::Fields) -> bool,
) -> Result<(Vec<JobLine>, Vec<crate::deferred::Deferred>, Counts)> {
    if !ids.is_empty() {
        let lines = ids
            .iter()
            .map(|id| {
                let mut m = serde_json::Map::new();
                m.insert("slurm".into(), json!({"job_id": id}));
                JobLine::from_map(m)
            })
            .collect();
        return Ok((lines, Vec::new(), Counts::default()));
    }
    let stdin = tao_core::cli::piped_stdin(
        "tao-record list --live | tao-poll",
        Some("give Slurm job ids (tao-poll 123 124)"),
    )?;
    let mut filter = Filter::new("tao-poll", stdin, OnBadLine::Stop);
    if !defer {
        let lines = filter.read_all()?;
        return Ok((lines, Vec::new(), filter.counts()));
    }
    let (mut lines, mut texts) = (Vec::new(), Vec::new());
    let mut watching = true;
    while let Some((l, t)) = filter.next_line_with(crate::deferred::parse)? {
        if watching {
            watching = match t.as_deref() {
                Some(t) => seen(t),
                None => seen(&l),
            };
        }
        lines.push(l);
        texts.push(t);
    }
    Ok((lines, texts, filter.counts()))
}

/// Run the tool with parsed arguments; returns the exit status.
///
/// Errors: usage, configuration, I/O and malformed-input errors as
/// [`Error`] (mapped to exit codes by `tao_core::cli::main_with`).
pub fn run(cli: Cli) -> Result<i32> {
    tao_core::cli::set_verbosity(cli.quiet, cli.verbose);
    match cli.command {
        Some(Command::Logs(args)) => crate::logs::run(&args, cli.transport.as_deref()),
        Some(Command::Report(args)) => crate::report::run(&args, cli.transport.as_deref()),
        None => run_status(&cli.status, cli.transport.as_deref()),
    }
}

fn run_status(args: &StatusArgs, transport: Option<&str>) -> Result<i32> {
    let r = &args.replay;
    let dashes = [&r.replay_squeue, &r.replay_sacct, &r.replay_scontrol]
        .iter()
        .filter(|p| p.as_ref().is_some_and(|p| p.as_os_str() == "-"))
        .count();
    if dashes > 1 || (dashes == 1 && args.ids.is_empty()) {
        return Err(Error::Usage(
            "only one --replay-* FILE can be `-` (stdin), and then the job ids must be arguments: tao-poll --replay-sacct - 123 124 < sacct.txt".into(),
        ));
    }
    if let Some(first) = args.ids.first() {
        if let Some(e) = not_a_job_id(first) {
            return Err(e);
        }
    }
    // A single poll keeps an unchanged `progress` as its input text;
    // --watch renders it, so reads it whole. A single poll over SSH opens
    // the session of the first line that needs one while the rest are
    // read (issue 17); it looks at the first 64 lines at most.
    let mut early = None;
    let mut looked = 0;
    let (lines, texts, input) = if args.watch || args.replay.active() {
        read_input_deferred(&args.ids, !args.watch)?
    } else {
        read_input_seen(&args.ids, true, &mut |l| {
            looked += 1;
            if let Some(host) = poll::host_to_open(l) {
                early = poll::EarlySession::start(transport, host);
                return false;
            }
            looked < 64
        })?
    };
    let redact = redactor();
    let opts = Options {
        requeue: args.requeue,
        evidence: args.evidence.then_some(args.evidence_lines),
        redact: &redact,
        explain: args.explain,
    };
    let mut conn = connector(
        &args.replay,
        transport,
        // A line kept as text is read there (its JobLine is a stand-in).
        lines
            .iter()
            .enumerate()
            .any(|(i, l)| match texts.get(i).and_then(|t| t.as_deref()) {
                Some(t) => poll::asks_scheduler(t),
                None => poll::asks_scheduler(l),
            }),
        early,
    )?;
    if args.watch {
        if input.malformed > 0 {
            // Nothing is watched on malformed input; the lines read before
            // it go out untouched so none is lost.
            let stdout = std::io::stdout();
            let mut w = LineWriter::new(stdout.lock());
            for l in &lines {
                w.write(l)?;
            }
            return Ok(input.status());
        }
        return crate::watch::run(lines, conn.as_mut(), &opts, args.interval);
    }
    let res = poll::poll_deferred(lines, texts, conn.as_mut(), &opts);
    poll::warn_unsubmitted(res.unsubmitted);
    if args.stats {
        tao_core::cli::write_stderr(&format!(
            "tao-poll: stats: lines={} handshakes={} execs={} remote_s={:.3}\n",
            res.lines.len(),
            tao_ssh::handshake_count(),
            tao_ssh::exec_count(),
            crate::backend::remote_seconds()
        ));
    }
    poll::write_lines_deferred(&res.lines, &res.deferred)?;
    let status = poll::exit_status(&res, input);
    // The process ends here: freeing 10,000 job lines one allocation at a
    // time was a tenth of a large poll's local time (perf, issue 17).
    std::mem::forget(res);
    Ok(status)
}

/// A usage error for a first argument that is a word, not a job id: a
/// mistyped command (`tao-poll log ID`) gets the command it resembles.
/// `None` for anything that starts like a job id (digits).
pub fn not_a_job_id(word: &str) -> Option<Error> {
    let w = word.trim().to_ascii_lowercase();
    if w.is_empty() || w.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    let guess = if w.starts_with("log") || w == "tail" || w == "out" {
        Some("logs JOB_ID")
    } else if w.starts_with("rep") || w == "html" {
        Some("report JOB_ID")
    } else {
        None
    };
    let shown = tao_core::cli::one_line(word);
    Some(Error::Usage(match guess {
        Some(g) => format!("{shown:?} is not a command or a Slurm job id: did you mean `tao-poll {g}`?"),
        None => format!("{shown:?} is not a command or a Slurm job id: the commands are `logs` and `report`, job ids are digits (`tao-poll 12345`; see tao-poll --help)"),
    }))
}

/// Write a value as one line (used by tests and the table code).
pub fn write_json_line<W: Write>(w: &mut W, v: &Value) -> std::io::Result<()> {
    writeln!(w, "{v}")
}
