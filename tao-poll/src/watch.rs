//! `--watch`: poll until every job is final, one batched poll per interval.
//!
//! There is no elapsed-time stop: long queue waits are normal. On a pipe,
//! a job line is printed for each job's first observation and on every
//! change of `state`, `message` or error; on a terminal, a live table
//! (state, time in queue, elapsed, nodes) is redrawn instead (on a dumb
//! terminal, TERM=dumb or no TERM, printed again below the last one when
//! it changed: no control sequences; bar and sparkline in ASCII outside a
//! UTF-8 locale, tao_core::progress::glyphs_for_locale). SIGINT and
//! SIGTERM set a flag that is checked between polls and during the wait:
//! the line being written is finished, the last known line of every job
//! not printed yet is printed (pipe mode), and the tool exits 128 + the
//! signal's number (130 for SIGINT, 143 for SIGTERM, what shells expect)
//! — nothing is lost. Lines never submitted (no `slurm.job_id`, whether or
//! not another tool's `error` says why, e.g. a stored submit error) are
//! printed once as they are and left out of the wait and the exit status
//! (with `-v`, one note counts those without an error). Exit status: 0 when every
//! submitted job ended COMPLETE, 1 otherwise; 77 or 78 at once when no line
//! could be polled for an SSH authentication, host-key or configuration
//! reason (waiting fixes none); 130/143 when interrupted.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tao_core::{Error, JobLine, LineWriter, Result, State};

use crate::poll::{self, Connector, Options};

/// The state of a line (`None` when it has none).
fn state_of(l: &JobLine) -> Option<State> {
    l.get_str(&["state"]).and_then(State::parse)
}

/// What a transition is judged by: state, message, error, progress
/// (a new epoch or KPI is a change worth a line) and the expected start.
type Signature = (
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
);

fn signature(l: &JobLine) -> Signature {
    (
        l.get_str(&["state"]).map(str::to_string),
        l.get_str(&["message"]).map(str::to_string),
        l.fields.get("error").map(|e| e.to_string()),
        l.fields.get("progress").map(|e| e.to_string()),
        l.get_str(&["pending", "expected_start"])
            .map(str::to_string),
    )
}

/// Seconds between two RFC 3339 times (or `to` = now).
fn span(from: Option<&str>, to: Option<&str>) -> Option<i64> {
    let a = tao_core::time::parse_rfc3339(from?)?;
    let b = match to {
        Some(t) => tao_core::time::parse_rfc3339(t)?,
        None => chrono::Utc::now(),
    };
    Some((b - a).num_seconds().max(0))
}

/// `1d02:03:04` / `02:03:04` / `-`.
pub fn fmt_secs(s: Option<i64>) -> String {
    match s {
        None => "-".into(),
        Some(s) => {
            let (d, h, m, sec) = (s / 86400, s % 86400 / 3600, s % 3600 / 60, s % 60);
            if d > 0 {
                format!("{d}d{h:02}:{m:02}:{sec:02}")
            } else {
                format!("{h:02}:{m:02}:{sec:02}")
            }
        }
    }
}

/// Columns of the live table.
pub const COLUMNS: [&str; 9] = [
    "ID", "SLURM", "STATE", "IN QUEUE", "ELAPSED", "NODES", "PROGRESS", "KPI", "MESSAGE",
];

/// One table row: id, slurm id, state, time in queue, elapsed, nodes,
/// progress (bar, epoch/max, percent, ETA; for a pending job its expected
/// start, or what to do when it waits until someone acts), latest KPI with
/// a sparkline, message (for a pending job the reason in words); see
/// `tao_core::progress::pending_cells`.
pub fn table_row(l: &JobLine) -> [String; 9] {
    let s = |p: &[&str]| l.get_str(p).map(str::to_string);
    let submit = s(&["slurm", "submit_time"]);
    let start = s(&["slurm", "start_time"]);
    let end = s(&["slurm", "end_time"]);
    let queued = span(submit.as_deref(), start.as_deref());
    let elapsed = start
        .as_deref()
        .and_then(|st| span(Some(st), end.as_deref()));
    let pending = l
        .fields
        .get("pending")
        .filter(|_| state_of(l) == Some(State::Pending));
    let (progress, msg) = match pending {
        Some(p) => tao_core::progress::pending_cells(p),
        None => (
            tao_core::progress::progress_cell(l.fields.get("progress"), 12),
            s(&["message"]).unwrap_or_default(),
        ),
    };
    // A submit that failed, or a line never submitted, says so
    // (tao_core::progress::message_cell, as tao-record list does).
    let job_id = l.slurm_job_id();
    let msg = tao_core::progress::message_cell(
        l.fields.get("error"),
        l.get_str(&["state"]),
        job_id.as_deref(),
        msg,
    );
    [
        l.id().unwrap_or("-").to_string(),
        l.slurm_job_id().unwrap_or_default(),
        s(&["state"]).unwrap_or_else(|| "?".into()),
        fmt_secs(queued),
        fmt_secs(elapsed),
        s(&["slurm", "nodes"]).unwrap_or_else(|| "-".into()),
        progress,
        tao_core::progress::kpi_cell(l.fields.get("progress")),
        tao_core::cli::one_line(&msg),
    ]
}

/// Render the live table (header + rows), column-aligned.
pub fn render_table(lines: &[JobLine]) -> String {
    let head = COLUMNS.map(String::from);
    let rows: Vec<[String; 9]> = std::iter::once(head)
        .chain(lines.iter().map(table_row))
        .collect();
    let last = COLUMNS.len() - 1;
    let mut widths = [0usize; 9];
    for r in &rows {
        for (i, c) in r.iter().enumerate().take(last) {
            widths[i] = widths[i].max(c.chars().count());
        }
    }
    let mut out = String::new();
    for r in &rows {
        let mut line = String::new();
        for (i, c) in r.iter().enumerate() {
            if i < last {
                let pad = widths[i] - c.chars().count();
                line.push_str(c);
                line.push_str(&" ".repeat(pad + 2));
            } else {
                line.push_str(c);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// Whether a line is left out of the watch's wait and exit status: it has
/// no `slurm.job_id` (absent, null or empty), so there is no job to wait
/// for — a record never submitted, with or without a stored `error` of
/// another tool (tao-submit's failed submit).
pub fn not_watched(line: &JobLine) -> bool {
    line.slurm_job_id().is_none_or(|s| s.trim().is_empty())
}

/// Run the watch loop; returns the exit status (0: every submitted job
/// COMPLETE; 1 not all; 128 + signal number when SIGINT or SIGTERM stopped
/// it).
///
/// Errors: [`Error::Io`] writing stdout; [`Error::Internal`] if the signal
/// handlers cannot be installed.
pub fn run(
    mut lines: Vec<JobLine>,
    conn: &mut dyn Connector,
    opts: &Options,
    interval: u64,
) -> Result<i32> {
    // The number of the signal that stopped the watch (0: none yet).
    let stop = Arc::new(AtomicUsize::new(0));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register_usize(sig, Arc::clone(&stop), sig as usize)
            .map_err(|e| Error::Internal(format!("installing a signal handler: {e}")))?;
    }
    let stopped = || stop.load(Ordering::Relaxed) != 0;
    let tty = tao_core::cli::stdout_is_terminal();
    let dumb = tao_core::cli::terminal_is_dumb();
    let mut last_table: Option<String> = None;
    let stdout = std::io::stdout();
    let mut w = LineWriter::new(stdout.lock());
    let mut printed: Vec<Option<Signature>> = vec![None; lines.len()];
    // Never-submitted lines are not watchable: printed once as they are,
    // left out of the wait and of the exit status; with -v one note counts
    // those without another tool's error (as a plain poll does).
    let unsubmitted: Vec<bool> = lines.iter().map(not_watched).collect();
    poll::warn_unsubmitted(lines.iter().filter(|l| poll::never_submitted(*l)).count());
    loop {
        // Poll the live lines only; final ones are done.
        let live: Vec<usize> = (0..lines.len())
            .filter(|i| {
                !unsubmitted[*i]
                    && (!state_of(&lines[*i]).is_some_and(State::is_final)
                        || lines[*i].slurm_job_id().is_none())
            })
            .collect();
        let batch: Vec<JobLine> = live.iter().map(|i| lines[*i].clone()).collect();
        let res = poll::poll(batch, conn, opts);
        // No line could be polled for a reason waiting will not fix (SSH
        // authentication or host key, configuration): stop with its exit
        // status instead of repeating the error every interval.
        let fatal = match crate::poll::exit_status(&res, tao_core::filter::Counts::default()) {
            c @ (tao_core::exit::NOPERM | tao_core::exit::CONFIG) => Some(c),
            _ => None,
        };
        for (k, l) in live.iter().zip(res.lines) {
            lines[*k] = l;
        }
        if tty {
            let table = tao_core::progress::glyphs_for_locale(render_table(&lines));
            if !dumb {
                w.write_raw(format!("\x1b[H\x1b[2J{table}").as_bytes())?;
            } else if last_table.as_deref() != Some(table.as_str()) {
                // No redraw on a dumb terminal: the table again, below the
                // last one, when it changed.
                let gap = if last_table.is_some() { "\n" } else { "" };
                w.write_raw(format!("{gap}{table}").as_bytes())?;
                last_table = Some(table);
            }
        } else {
            for (i, l) in lines.iter().enumerate() {
                let sig = signature(l);
                if printed[i].as_ref() != Some(&sig) {
                    w.write(l)?;
                    printed[i] = Some(sig);
                }
            }
        }
        // Done when every line is final or cannot be polled at all (no job id).
        let done = lines
            .iter()
            .all(|l| state_of(l).is_some_and(State::is_final) || l.slurm_job_id().is_none());
        if let Some(code) = fatal {
            return Ok(code);
        }
        if done || stopped() {
            break;
        }
        let until = Instant::now() + Duration::from_secs(interval);
        while Instant::now() < until && !stopped() {
            std::thread::sleep(
                Duration::from_millis(100).min(until.saturating_duration_since(Instant::now())),
            );
        }
        if stopped() {
            break;
        }
    }
    let sig = stop.load(Ordering::Relaxed);
    if sig != 0 {
        return Ok(tao_core::exit::SIGNAL_BASE + sig as i32);
    }
    let all_complete = lines
        .iter()
        .zip(&unsubmitted)
        .all(|(l, u)| *u || state_of(l) == Some(State::Complete));
    Ok(if all_complete { 0 } else { 1 })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_table() {
        assert_eq!(fmt_secs(Some(3661)), "01:01:01");
        assert_eq!(fmt_secs(Some(90061)), "1d01:01:01");
        assert_eq!(fmt_secs(None), "-");
        let l = JobLine::parse(
            r#"{"id":"tao-a","state":"RUNNING","message":"RUNNING","slurm":{"job_id":"7","nodes":"n1","submit_time":"2026-11-29T19:00:00Z","start_time":"2026-11-29T19:01:30Z","end_time":"2026-11-29T19:02:00Z"}}"#,
            1,
        )
        .unwrap();
        let r = table_row(&l);
        assert_eq!(r[3], "00:01:30");
        assert_eq!(r[4], "00:00:30");
        let t = render_table(&[l]);
        assert!(t.starts_with("ID     SLURM  STATE"), "{t}");
        let run = JobLine::parse(
            r#"{"id":"tao-b","state":"RUNNING","slurm":{"job_id":"8"},"progress":{"epoch":3,"max_epoch":10,"percent":30.0,"eta_s":420,"kpi":{"loss":0.5},"history":{"loss":[0.9,0.7,0.5]}}}"#,
            1,
        )
        .unwrap();
        let r = table_row(&run);
        assert_eq!(r[6], "[████░░░░░░░░] 3/10 30% ETA 00:07:00");
        assert_eq!(r[7], "loss 0.5 █▄▁");
        let held = JobLine::parse(
            r#"{"id":"tao-c","state":"PENDING","slurm":{"job_id":"9","reason":"JobHeldUser"},"pending":{"reason":"JobHeldUser","words":"it is held","action":"release it","expected_start":"2026-12-01T15:00:00Z"}}"#,
            1,
        )
        .unwrap();
        let r = table_row(&held);
        // Held: the advice, not Slurm's meaningless estimate.
        assert_eq!(r[6], "will not start until you act: release it");
        assert_eq!(r[8], "JobHeldUser: it is held");
        let begin = JobLine::parse(
            r#"{"id":"tao-d","state":"PENDING","slurm":{"job_id":"10"},"pending":{"reason":"BeginTime","words":"not yet","clears":true,"expected_start":"2026-12-01T15:00:00Z"}}"#,
            1,
        )
        .unwrap();
        assert_eq!(table_row(&begin)[6], "starts ~2026-12-01 15:00 UTC");
        assert!(!render_table(&[run, held]).contains('\x1b'));
    }

    #[test]
    fn a_failed_submit_and_a_never_submitted_line_say_so() {
        let row = |s: &str| table_row(&JobLine::parse(s, 1).unwrap())[8].clone();
        assert_eq!(
            row(
                r#"{"id":"tao-a","state":"PENDING","error":{"tool":"tao-submit","code":"config","message":"export HF_TOKEN"}}"#
            ),
            "submit failed: export HF_TOKEN"
        );
        assert_eq!(
            row(
                r#"{"id":"tao-a","state":"RUNNING","slurm":{"job_id":"7"},"error":{"tool":"tao-poll","code":"unavailable","message":"no host"}}"#
            ),
            "poll failed: no host"
        );
        assert_eq!(row(r#"{"id":"tao-a","state":"PENDING"}"#), "not submitted");
    }
}
