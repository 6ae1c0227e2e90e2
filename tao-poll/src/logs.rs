//! `tao-poll logs ID`: the last lines of a job's current attempt's
//! `main.out` (or `main.err`), read over SSH, through tao-redact's filter.
//!
//! The job is a record id looked up read-only in the local store
//! (`tao_record::Store::open_default()?.get(id)`), or a job line on stdin
//! (`-` or no id). The file is
//! `<storage.job_dir>/slurm-logs/<id>-<slurm.job_id>/main.out`
//! (tao-jobline(7)); requeued attempts keep their Slurm id and append.
//!
//! `--follow` asks, every two seconds on the same session, for the bytes
//! written since the last read (`tail -c +OFFSET`, at most 1 MiB a round)
//! together with the job's live state (`squeue -h -j ID -o %T` lists only
//! pending, running and completing jobs), and stops after the round that
//! finds the job gone. Partial lines wait for their newline so redaction
//! always sees whole lines.

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use tao_core::shell::quote;
use tao_core::{Error, JobLine, Result};

use crate::poll::log_dir;

/// Options of `tao-poll logs`.
#[derive(Debug, Args)]
pub struct LogsArgs {
    /// Record id (`tao-record` id); `-` or none reads a job line on stdin.
    #[arg(value_name = "ID")]
    pub id: Option<String>,
    /// Number of lines.
    #[arg(short = 'n', long = "lines", value_name = "N", default_value_t = 200)]
    pub lines: u64,
    /// main.err instead of main.out.
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
    let sid = line
        .get_path(&["slurm", "job_id"])
        .and_then(|v| {
            v.as_str()
                .map(str::to_string)
                .or_else(|| v.as_u64().map(|n| n.to_string()))
        })
        .ok_or_else(|| {
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
/// Errors: [`Error::Data`] for a missing record/field or a missing log
/// file; connection errors from tao-ssh (69/77/78); [`Error::Io`] on stdout.
pub fn run(args: &LogsArgs) -> Result<i32> {
    let line = match args.id.as_deref() {
        None | Some("-") => crate::cli::first_line(std::io::stdin().lock())?,
        Some(id) => {
            let store = match &args.state_dir {
                Some(d) => tao_record::Store::open(d.clone())?,
                None => tao_record::Store::open_default()?,
            };
            store.get(id)?
        }
    };
    let t = target(&line, args.err)?;
    let opts = tao_ssh::SshOptions::from_env()?;
    let remote = match &t.host {
        Some(h) => tao_ssh::Remote::connect_host(&opts, h)?,
        None => tao_ssh::Remote::connect(&opts)?,
    };
    let redactor = if args.no_redact {
        None
    } else {
        Some(tao_redact::Redactor::from_env()?)
    };
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut emit = |bytes: &[u8]| -> Result<()> {
        let data: std::borrow::Cow<[u8]> = match &redactor {
            Some(r) => r.redact_text(bytes),
            None => std::borrow::Cow::Borrowed(bytes),
        };
        out.write_all(&data)
            .and_then(|_| out.flush())
            .map_err(|e| Error::io("writing standard output", e))
    };
    let q = quote(&t.path);
    let first = remote.exec(
        &format!("[ -f {q} ] && wc -c < {q} && tail -n {} {q}", args.lines),
        None,
    )?;
    if first.status != 0 {
        return Err(Error::Data(format!(
            "no log file {:?} on the cluster yet: the job has not started (check `tao-poll` for its state) or the record's paths are wrong{}",
            t.path,
            if first.stderr.is_empty() { String::new() } else { format!(" ({})", first.stderr_line()) }
        )));
    }
    let text = first.stdout;
    let nl = text.iter().position(|b| *b == b'\n').unwrap_or(text.len());
    let mut offset: u64 = String::from_utf8_lossy(&text[..nl])
        .trim()
        .parse()
        .unwrap_or(0);
    let body = &text[(nl + 1).min(text.len())..];
    emit(body)?;
    if !args.follow {
        return Ok(0);
    }
    let nonce = crate::backend::nonce();
    let marker = format!("\n@@tao-poll-{nonce} ");
    let cluster = t
        .cluster
        .as_deref()
        .map(|c| format!(" -M {}", quote(c)))
        .unwrap_or_default();
    let mut pending: Vec<u8> = Vec::new();
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
        let live = !String::from_utf8_lossy(&o.stdout[pos + marker.len()..])
            .trim()
            .is_empty();
        offset += data.len() as u64;
        pending.extend_from_slice(data);
        if let Some(cut) = pending.iter().rposition(|b| *b == b'\n') {
            let whole: Vec<u8> = pending.drain(..=cut).collect();
            emit(&whole)?;
        }
        if last_round && data.is_empty() {
            break;
        }
        if !live {
            // One more round picks up what the job wrote as it ended.
            last_round = true;
        }
    }
    if !pending.is_empty() {
        pending.push(b'\n');
        emit(&pending)?;
    }
    Ok(0)
}

fn find_last(hay: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.len() > hay.len() {
        return None;
    }
    (0..=hay.len() - needle.len())
        .rev()
        .find(|i| &hay[*i..*i + needle.len()] == needle)
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
        let l = JobLine::parse(r#"{"id":"tao-x","storage":{"job_dir":"/b"}}"#, 1).unwrap();
        assert!(target(&l, false)
            .unwrap_err()
            .to_string()
            .contains("not been submitted"));
    }

    #[test]
    fn last_marker() {
        assert_eq!(find_last(b"a@@b@@c", b"@@"), Some(4));
        assert_eq!(find_last(b"abc", b"@@"), None);
    }
}
