//! `tao-poll logs ID`: the last lines of a job's current attempt's
//! `main.out` (or `main.err`), read over SSH, through tao-secrets' filter.
//!
//! The job is a record id looked up read-only in the local store
//! (`tao_store::Store::open_default()?.get(id)`), or a job line on stdin
//! (`-` or no id). The file is
//! `<storage.job_dir>/slurm-logs/<id>-<slurm.job_id>/main.out`
//! (tao-jobline(7)); requeued attempts keep their Slurm id and append.
//!
//! `--follow` asks, every two seconds on the same session, for the bytes
//! written since the last read (`tail -c +OFFSET`, at most 1 MiB a round)
//! together with the job's live state (`squeue -h -j ID -o %T` lists only
//! pending, running and completing jobs), and stops after the round that
//! finds the job gone. Every byte goes through one push filter
//! (`tao_secrets::Filter`) built for the job's line: the values of HF_TOKEN,
//! NGC_KEY and of the line's own `secrets` are masked, a partial line waits
//! for its newline (up to 4 MiB; a longer line is printed in windows that
//! keep the last 64 KiB back), so a secret split across two reads is never
//! printed in part and memory stays bounded whatever the log holds.
//!
//! No log file yet: the job's state is asked in the same command. While
//! the job is queued (PENDING) or running, `--follow` waits for the file
//! on the same session (every two seconds, bounded only by the job's end;
//! on a terminal one stderr line says so) and plain `logs` exits 75
//! (try again later). A job that is no longer queued or running and has no
//! file is an error (65): it ended without starting, or the record's
//! paths are wrong. A log file that exists and is empty prints nothing on
//! stdout (exit 0); when stderr is a terminal one line there says so
//! ([`empty_log_note`]).

use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use tao_core::shell::quote;
use tao_core::{Error, JobLine, LineReader, Result};

use crate::poll::log_dir;

/// Options of `tao-poll logs`.
#[derive(Debug, Args)]
pub struct LogsArgs {
    /// Record id (`tao-record` id); `-` or none reads a job line on stdin.
    #[arg(value_name = "ID")]
    pub id: Option<String>,
    /// Number of lines; 0-1000000.
    #[arg(short = 'n', long = "lines", value_name = "N", default_value_t = 200,
          value_parser = clap::value_parser!(u64).range(0..=1_000_000))]
    pub lines: u64,
    /// main.err instead of main.out. An empty file prints nothing on stdout (exit 0); on a
    /// terminal one stderr line says it is empty.
    #[arg(long)]
    pub err: bool,
    /// Keep printing new lines until the job ends.
    #[arg(long, short = 'f')]
    pub follow: bool,
    /// Print secrets as they are (no masking).
    #[arg(long)]
    pub no_redact: bool,
    /// Read the record from this store directory instead of TAO_STATE_DIR.
    #[arg(long, value_name = "DIR", hide = true)]
    pub state_dir: Option<PathBuf>,
}

/// Where a job's log is: login host (None: default), remote path, Slurm id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogTarget {
    /// `slurm.login_host`, if recorded.
    pub host: Option<String>,
    /// Remote path of main.out / main.err.
    pub path: String,
    /// Slurm job id (for `--follow`).
    pub slurm_job_id: String,
    /// `slurm.cluster`, if any.
    pub cluster: Option<String>,
}

/// Find the log of a job line.
///
/// Errors: [`Error::Data`] naming the missing field and the fix.
pub fn target(line: &JobLine, err: bool) -> Result<LogTarget> {
    let id = line.id().ok_or_else(|| {
        Error::Data("the job line has no `id`: pass a record id from `tao-record list`".into())
    })?;
    let job_dir = line.get_str(&["storage", "job_dir"]).ok_or_else(|| {
        Error::Data(format!(
            "record {id:?} has no storage.job_dir: it was not opened by `tao-record open`"
        ))
    })?;
    let sid = line.slurm_job_id().ok_or_else(|| {
        Error::Data(format!(
            "record {id:?} has no slurm.job_id: it has not been submitted yet"
        ))
    })?;
    let jref = crate::observe::JobRef::parse(&sid, line.get_str(&["slurm", "cluster"]))
        .ok_or_else(|| {
            Error::Data(format!(
                "record {id:?}: slurm.job_id {sid:?} is not a Slurm job id"
            ))
        })?;
    let file = if err { "main.err" } else { "main.out" };
    Ok(LogTarget {
        host: line.get_str(&["slurm", "login_host"]).map(str::to_string),
        path: format!("{}/{file}", log_dir(job_dir, id, &jref.job_id)),
        slurm_job_id: jref.job_id,
        cluster: jref.cluster,
    })
}

/// Run `logs`; returns the exit status (0).
///
/// Errors: [`Error::TempFail`] (75) when the log file does not exist yet
/// and the job is still queued or running (without `--follow`);
/// [`Error::Data`] for a missing record/field, or a missing log file of a
/// job that is not queued or running; connection errors from tao-ssh (69/77/78); [`Error::Io`] on stdout.
pub fn run(args: &LogsArgs, transport: Option<&str>) -> Result<i32> {
    let line = match args.id.as_deref() {
        None | Some("-") => first_line(tao_core::cli::piped_stdin(
            "tao-record show ID | tao-poll logs",
            Some("give a record id (tao-poll logs ID)"),
        )?)?,
        Some(id) => {
            let store = match &args.state_dir {
                Some(d) => tao_store::Store::open(d.clone())?,
                None => tao_store::Store::open_default()?,
            };
            store.get(id)?
        }
    };
    let t = target(&line, args.err)?;
    let opts = tao_ssh::SshOptions::from_env_with_transport(transport)?;
    let remote = match &t.host {
        Some(h) => tao_ssh::connect_host(&opts, h)?,
        None => tao_ssh::connect(&opts)?,
    };
    // The values of HF_TOKEN, NGC_KEY and of the line's own `secrets`, by
    // name from this environment (tao_secrets::LineRedactors).
    let redactor = if args.no_redact {
        None
    } else {
        Some(tao_secrets::LineRedactors::new("tao-poll").for_line(&line)?)
    };
    let stdout = std::io::stdout();
    let mut out = Output {
        w: stdout.lock(),
        filter: redactor.as_deref().map(tao_secrets::Filter::new),
    };
    let q = quote(&t.path);
    let cluster = t
        .cluster
        .as_deref()
        .map(|c| format!(" -M {}", quote(c)))
        .unwrap_or_default();
    let state_cmd = format!(
        "squeue -h{cluster} -j {} -o %T 2>/dev/null | head -n 1",
        quote(&t.slurm_job_id)
    );
    let nonce = crate::backend::nonce();
    // Printed instead of the tail when there is no log file yet, followed
    // by the job's live state (one command, one round trip).
    let missing = format!("@@tao-poll-missing-{nonce} ");
    // One byte range [0, size) for the tail and for the follow offset, so
    // bytes written meanwhile are read once, by the next round; the tail
    // reads at most FIRST_READ_CAP bytes before that size.
    let first_cmd = format!(
        "if [ -f {q} ]; then n=$(wc -c < {q}) && s=$((n > {cap} ? n - {cap} + 1 : 1)) && printf '%s\\n' \"$n\" && tail -c +\"$s\" {q} | head -c $((n - s + 1)) | tail -n {}; else printf '%s' {}; {state_cmd}; fi",
        args.lines,
        quote(&missing),
        cap = FIRST_READ_CAP,
    );
    let mut announced = false;
    let mut saw_end = false;
    let first = loop {
        let o = remote.exec(&first_cmd, None)?;
        let Some(rest) = o.stdout.strip_prefix(missing.as_bytes()) else {
            break o;
        };
        let state = String::from_utf8_lossy(rest).trim().to_string();
        let shown = if state.is_empty() {
            "not in the queue".to_string()
        } else {
            state.clone()
        };
        if job_is_live(&state) {
            if !args.follow {
                return Err(Error::TempFail(format!(
                    "no log file {:?} on the cluster yet: {}; try again later, or wait for it with --follow",
                    t.path,
                    not_yet_why(&state, &shown)
                )));
            }
            if !announced && std::io::stderr().is_terminal() {
                if tao_core::cli::verbosity() >= 0 {
                    tao_core::cli::write_stderr(&format!(
                        "tao-poll: waiting for job {} to start ({})\n",
                        t.slurm_job_id,
                        tao_core::cli::one_line(&shown)
                    ));
                }
                announced = true;
            }
        } else if !args.follow || saw_end {
            return Err(Error::Data(format!(
                "no log file {:?} on the cluster and job {} is not queued or running ({shown}): it ended without starting, or the record's storage.job_dir is wrong (check `tao-poll` for its state)",
                t.path, t.slurm_job_id
            )));
        } else {
            // The file may have appeared between the test and squeue: one
            // more round decides.
            saw_end = true;
        }
        std::thread::sleep(Duration::from_secs(2));
    };
    if first.status != 0 {
        return Err(Error::Data(format!(
            "cannot read log file {:?} on the cluster{}",
            t.path,
            if first.stderr.is_empty() {
                String::new()
            } else {
                format!(" ({})", first.stderr_line())
            }
        )));
    }
    let text = first.stdout;
    let nl = text.iter().position(|b| *b == b'\n').unwrap_or(text.len());
    let mut offset: u64 = String::from_utf8_lossy(&text[..nl])
        .trim()
        .parse()
        .unwrap_or(0);
    let body = &text[(nl + 1).min(text.len())..];
    out.push(body)?;
    if !args.follow {
        if offset == 0 && std::io::stderr().is_terminal() && tao_core::cli::verbosity() >= 0 {
            let id = line.id().unwrap_or("?");
            tao_core::cli::write_stderr(&format!("tao-poll: {}\n", empty_log_note(&t, id)));
        }
        return out.finish();
    }
    let marker = format!("\n@@tao-poll-{nonce} ");
    let mut last_round = false;
    loop {
        std::thread::sleep(Duration::from_secs(2));
        let cmd = format!(
            "tail -c +{} {q} 2>/dev/null | head -c 1048576; printf '%s' {}; squeue -h{cluster} -j {} -o %T 2>/dev/null | head -n 1",
            offset + 1,
            quote(&marker),
            quote(&t.slurm_job_id)
        );
        let o = remote.exec(&cmd, None)?;
        let Some(pos) = find_last(&o.stdout, marker.as_bytes()) else {
            continue;
        };
        let data = &o.stdout[..pos];
        let live = job_is_live(&String::from_utf8_lossy(&o.stdout[pos + marker.len()..]));
        offset += data.len() as u64;
        out.push(data)?;
        if last_round && data.is_empty() {
            break;
        }
        if !live {
            // One more round picks up what the job wrote as it ended.
            last_round = true;
        }
    }
    out.finish()
}

/// Most bytes before the log's current size that the first read of `logs`
/// looks at for its `-n` lines (16 MiB: a log of megabyte-long progress
/// lines still shows its tail, and the reply stays bounded).
pub const FIRST_READ_CAP: u64 = 16 << 20;

/// Standard output, through tao-secrets' push filter unless `--no-redact`.
/// The filter holds back a partial line (at most
/// `tao_secrets::stream::BUF_SIZE` bytes, 4 MiB) until its newline arrives,
/// so a secret split across two reads is never printed in part, and a log
/// written with `\r` only is printed in windows instead of piling up.
struct Output<'r, W: Write> {
    w: W,
    filter: Option<tao_secrets::Filter<'r>>,
}

impl<W: Write> Output<'_, W> {
    fn push(&mut self, data: &[u8]) -> Result<()> {
        match &mut self.filter {
            Some(f) => f.push(data, &mut self.w),
            None => self
                .w
                .write_all(data)
                .and_then(|_| self.w.flush())
                .map_err(|e| Error::io("writing standard output", e)),
        }
    }

    /// Write what is held back; the exit status (0).
    fn finish(&mut self) -> Result<i32> {
        if let Some(f) = &mut self.filter {
            f.finish(&mut self.w)?;
        }
        Ok(0)
    }
}

/// The one line `logs` says on standard error, when that is a terminal,
/// for a log file that exists and is empty (0 bytes: a job that wrote
/// nothing to its stderr, or nothing to its stdout yet): standard output
/// stays empty (a pipe reads nothing), the exit status stays 0. Input: the
/// log's target and the record id; output: `main.err of job ID is empty
/// (Slurm job N)`.
pub fn empty_log_note(t: &LogTarget, id: &str) -> String {
    let file = t.path.rsplit('/').next().unwrap_or("log");
    format!("{file} of job {id} is empty (Slurm job {})", t.slurm_job_id)
}

/// Why a live job has no log file yet, in words: a job Slurm has not
/// started (`PENDING (Priority)`), or one that runs but has not written
/// its log yet (the batch script creates it when it starts writing).
fn not_yet_why(state: &str, shown: &str) -> String {
    let word = state.split_whitespace().next().unwrap_or("");
    if matches!(
        word,
        "PENDING" | "CONFIGURING" | "REQUEUED" | "REQUEUE_HOLD" | "REQUEUE_FED" | "RESV_DEL_HOLD"
    ) {
        format!("the job has not started yet ({shown})")
    } else {
        format!("the job is {shown} but has not written its log yet")
    }
}

/// Whether squeue's `%T` for a job says it is still queued or running
/// (PENDING, RUNNING, SUSPENDED, COMPLETING, ...: not final in the tools'
/// state table, [`crate::native::map_state`]). Empty (squeue no longer
/// lists the job) and final states (COMPLETED, FAILED, CANCELLED, ... which
/// squeue shows for MinJobAge after the end) are not live.
///
/// Input: squeue's state word (surrounding whitespace ignored).
pub fn job_is_live(squeue_state: &str) -> bool {
    let s = squeue_state.trim();
    !s.is_empty() && !crate::native::map_state(s).state.is_final()
}

fn find_last(hay: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.len() > hay.len() {
        return None;
    }
    (0..=hay.len() - needle.len())
        .rev()
        .find(|i| &hay[*i..*i + needle.len()] == needle)
}

/// Read one job line from a reader (for `logs` with a line on stdin).
///
/// Errors: [`Error::BadLine`]/[`Error::BadJson`] for a malformed line,
/// [`Error::Usage`] when there is none.
pub fn first_line<R: BufRead>(r: R) -> Result<JobLine> {
    LineReader::new(r).next_line()?.ok_or_else(|| {
        Error::Usage("no job line on stdin: give a record id (tao-poll logs ID)".into())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_target_from_a_job_line() {
        let l = JobLine::parse(
            r#"{"id":"tao-x","storage":{"job_dir":"/b/jobs/tao-x/"},"slurm":{"job_id":"42","login_host":"h:2222"}}"#,
            1,
        )
        .unwrap();
        let t = target(&l, true).unwrap();
        assert_eq!(t.path, "/b/jobs/tao-x/slurm-logs/tao-x-42/main.err");
        assert_eq!(t.host.as_deref(), Some("h:2222"));
        assert_eq!(
            empty_log_note(&t, "tao-x"),
            "main.err of job tao-x is empty (Slurm job 42)"
        );
        let l = JobLine::parse(r#"{"id":"tao-x","storage":{"job_dir":"/b"}}"#, 1).unwrap();
        assert!(target(&l, false)
            .unwrap_err()
            .to_string()
            .contains("not been submitted"));
    }

    #[test]
    fn live_states_from_squeue() {
        for s in [
            "PENDING",
            "RUNNING\n",
            "SUSPENDED",
            "COMPLETING",
            " CONFIGURING ",
        ] {
            assert!(job_is_live(s), "{s}");
        }
        for s in [
            "",
            "\n",
            "COMPLETED",
            "FAILED",
            "CANCELLED",
            "TIMEOUT",
            "OUT_OF_MEMORY",
        ] {
            assert!(!job_is_live(s), "{s:?}");
        }
    }

    #[test]
    fn last_marker() {
        assert_eq!(find_last(b"a@@b@@c", b"@@"), Some(4));
        assert_eq!(find_last(b"abc", b"@@"), None);
    }
}
