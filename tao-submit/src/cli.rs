//! Command-line interface (clap derive): the default action submits the
//! job lines on stdin; `cancel` cancels them; `preflight` checks the
//! cluster before a first job. Connection flags override the seed's
//! environment variables (SLURM_HOSTNAME, SLURM_USER, SSH_KEY_PATH,
//! SSH_KNOWN_HOSTS, SSH_CONFIG, TAO_SITE_PROFILE, TAO_STATE_DIR).

use std::ffi::OsString;
use std::io::BufRead;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Parser, Subcommand};
use tao_core::{LineWriter, Result};

pub use crate::conn::ConnArgs;
use crate::sessions::Sessions;

const AFTER_HELP: &str = "\
Exit status: 0 every line done; 1 some lines carry an `error` object (a
gate refused them or they failed; each also as `tao-submit: error: <id>:
<why>` on stderr; the others went through); 2 usage; 65 malformed input
line (lines before it are printed); 69 no login host answered; 74 output
lost; 77 host key, key permissions or login refused; 78 configuration
(also an unknown TAO_TRANSPORT, and every line refused for a secret that
is not exported here).

Secrets named in a line's `secrets` are read from this environment and
written over SSH stdin into a mode-600 sidecar; they never appear in
arguments, scripts, records, logs or output.";

/// The DESCRIPTION of `--help` and tao-submit(1).
const LONG_ABOUT: &str = "\
Stage and submit job lines to Slurm over SSH, never a job twice; cancel them; check a \
cluster before a first job. Every scheduler mutation of the tools happens here, over one \
SSH session per login host.

Input: job lines on standard input, as tao-record open made them and tao-render and \
tao-redact lint passed them on. Gates: a line whose record does not exist is refused (no \
id, no launch), and so is a script whose sha256 differs from the one tao-redact lint \
approved (no lint, no launch). For each line: the spec, the supporting files (checked \
against their sha256), meta/job.json and the script are written under the job's directory \
on shared storage, and secrets named by the line go over the SSH channel's standard input \
into a mode-600 sidecar; a pyxis job's image is converted to .sqsh first on a CPU \
partition if the cache lacks it; a multi-node job (or one with 2+ GPUs per node) first \
passes a communication probe; then sbatch --hold, the log directory, scontrol release. \
Output: each line with slurm.job_id, slurm.login_host and state set, or with an `error`. A \
submit whose reply was lost (a cut connection, or an sbatch error after which the job may \
exist: `Socket timed out on send/recv operation`, `Zero Bytes were transmitted or \
received`, `Connection reset by peer`) is reconciled by the job name over the whole \
--reconcile-wait window: adopted if it appears, submitted again only if it never does; \
when several Slurm jobs carry one name, the oldest live one is kept and the extras are \
cancelled, with a warning naming them. When sbatch refuses a job (an unknown partition, \
say) and no job of its name exists, what this run staged for it (specs, env, meta, \
sbatch, inputs under jobs/<id>/) is removed, unless a log folder shows that a job of \
this id ran before; the error says removed, or where the files were left (a retry \
of the record reuses them); after an unknown outcome nothing is removed. A refused \
or failed line goes on with an `error` object and is also said on stderr as one line, \
`tao-submit: error: <id>: <why>` (a gate's refusal, such as a supporting file changed \
since the record was opened, is exit 1 and the other lines go on). Archived records (tao-record gc) are refused; a \
resources.exclude host list may expand to at most 65536 node names.

cancel cancels the jobs of the lines on standard input and prints each with state \
CANCELED; it takes no Slurm job ids (`tao-record list --id ID | tao-submit cancel`). preflight checks the variables, the site profile, the runtime (the rule tao-record \
open applies), the login, the Slurm commands and the storage, says what to fix, and \
ends a failing run with `error: preflight: N of M checks failed (names)`. On a terminal it prints \
that readable summary only; on a pipe or a file also one JSON line (with --lines, each job line with a \
`preflight` object).";

/// Stage and submit job lines to Slurm over SSH (one session per login
/// host), never a job twice; cancel them; check a cluster.
#[derive(Debug, Parser)]
#[command(
    name = "tao-submit",
    version,
    long_about = LONG_ABOUT,
    after_long_help = AFTER_HELP
)]
pub struct Cli {
    /// Print no warnings (errors are always printed).
    #[arg(short, long, global = true)]
    pub quiet: bool,

    /// Print what the tool does (connections, submissions); -vv also the remote commands.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,

    /// Connection settings (flags override the environment).
    #[command(flatten)]
    pub conn: ConnArgs,

    /// Record store directory, to check each line's record exists.
    #[arg(long, env = "TAO_STATE_DIR", global = true, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,

    /// Seconds to look for a job by name after an ambiguous submit
    /// (connection lost after sending, empty reply, sbatch's "Socket timed
    /// out") before submitting again; 0-3600.
    #[arg(long, default_value_t = 20, global = true, value_name = "SECS",
          value_parser = clap::value_parser!(u64).range(0..=3600))]
    pub reconcile_wait: u64,

    /// Convert images tagged `latest` (or untagged) again on the CPU partition even when the .sqsh cache holds them: `latest` moves. The new image replaces the cached one by an atomic rename once it is a valid squashfs.
    #[arg(long, global = true)]
    pub reconvert_latest: bool,

    /// Print `tao-submit: stats: handshakes=N commands=M seconds=S` on stderr at the end (SSH handshakes and remote commands of this run).
    #[arg(long, global = true)]
    pub stats: bool,

    /// The communication probe of multi-node and multi-GPU jobs.
    #[command(flatten)]
    pub probe: crate::probe::ProbeArgs,

    /// The action; without one, submit the job lines read on stdin.
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// The actions besides the default submit.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Cancel the Slurm jobs of the job lines on stdin; emit each with state CANCELED.
    Cancel {
        /// Seconds to wait for cancelled jobs to end before reporting them as still running; 0-3600.
        #[arg(long, default_value_t = 60, value_name = "SECS",
              value_parser = clap::value_parser!(u64).range(0..=3600))]
        wait: u64,
        /// Not accepted: cancel reads job lines on stdin (tao-record list --id ID | tao-submit cancel); caught only to say so.
        #[arg(hide = true, value_name = "JOB_ID")]
        job_ids: Vec<String>,
    },
    /// Check the variables, the login, the Slurm commands, the runtime and the storage.
    Preflight(crate::preflight::PreflightArgs),
}

/// Parse arguments (`tao_cli::parse`): the parsed command line, or
/// `Done(status)` after `--help`/`--version` printed (0) or a missing
/// subcommand's help (2), for `main.rs` to exit with; a usage error
/// becomes [`tao_core::Error::Usage`] (exit 2, one line naming
/// `tao-submit [COMMAND] --help`).
///
/// Errors: [`tao_core::Error::Usage`]; [`tao_core::Error::Io`] when help
/// cannot be written (a closed pipe is `Done(0)`).
pub fn parse_args<I: IntoIterator<Item = OsString>>(args: I) -> Result<tao_cli::Parsed<Cli>> {
    tao_cli::parse::<Cli, _, _>("tao-submit", args)
}

/// Run the parsed command line with stdin and stdout.
///
/// Output: the exit status. Errors: see each action.
pub fn run(mut cli: Cli) -> Result<i32> {
    tao_core::cli::set_verbosity(cli.quiet, cli.verbose);
    // A person at a terminal reads the summary; a pipe gets JSON lines.
    if let Some(Command::Preflight(a)) = &mut cli.command {
        a.human_only = tao_core::cli::stdout_is_terminal();
    }
    if let Some(example) = stdin_example(&cli.command) {
        tao_core::cli::require_piped_stdin(example, None)?;
    }
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    let mut out = LineWriter::new(stdout.lock());
    let stats = cli.stats;
    let start = std::time::Instant::now();
    let res = run_with(cli, stdin.lock(), &mut out);
    if stats {
        tao_core::cli::write_stderr(&format!(
            "tao-submit: stats: handshakes={} commands={} seconds={:.3}\n",
            tao_ssh::handshake_count(),
            tao_ssh::exec_count(),
            start.elapsed().as_secs_f64()
        ));
    }
    res
}

/// The pipeline that feeds `command` its job lines on stdin (for the
/// error when stdin is a terminal), or `None` when it reads no stdin
/// (`preflight` without `--lines`).
pub fn stdin_example(command: &Option<Command>) -> Option<&'static str> {
    match command {
        None => Some("tao-record show ID | tao-render | tao-redact lint | tao-submit"),
        Some(Command::Cancel { job_ids, .. }) if !job_ids.is_empty() => None,
        Some(Command::Cancel { .. }) => Some("tao-record show ID | tao-submit cancel"),
        Some(Command::Preflight(a)) if a.lines => {
            Some("tao-record show ID | tao-submit preflight --lines")
        }
        Some(Command::Preflight(_)) => None,
    }
}

/// The usage error of `tao-submit cancel 17550`: cancel reads job lines on
/// stdin (so `tao-record mark` can record the cancel), never bare Slurm job
/// ids; the message gives the pipeline to use.
fn cancel_ids_error(job_ids: &[String]) -> tao_core::Error {
    tao_core::Error::Usage(format!(
        "cancel reads job lines on standard input, not Slurm job ids ({}): run `tao-record list --id RECORD_ID | tao-submit cancel | tao-record mark` (tao-record list shows each record's slurm.job_id)",
        tao_core::cli::one_line(&job_ids.join(" "))
    ))
}

/// [`run`] with explicit input and output (for tests).
///
/// Errors: see each action.
pub fn run_with<R: BufRead, W: std::io::Write>(
    cli: Cli,
    input: R,
    out: &mut LineWriter<W>,
) -> Result<i32> {
    match &cli.command {
        None => {
            let store = match &cli.state_dir {
                Some(d) => tao_store::Store::open(d.clone()),
                None => tao_store::Store::open_default(),
            };
            let mut sessions = Sessions::from_result(cli.conn.ssh_options());
            let cfg = crate::submit::SubmitConfig {
                reconcile_wait: Duration::from_secs(cli.reconcile_wait),
                profile: tao_core::site::SiteProfile::load(cli.conn.site_profile.as_deref())
                    .map_err(|e| e.to_string()),
                probe: cli.probe.config(),
                reconvert_latest: cli.reconvert_latest,
            };
            crate::submit::run(input, out, &mut sessions, store.as_ref(), &cfg)
        }
        Some(Command::Cancel { job_ids, .. }) if !job_ids.is_empty() => {
            Err(cancel_ids_error(job_ids))
        }
        Some(Command::Cancel { wait, .. }) => {
            let mut sessions = Sessions::from_result(cli.conn.ssh_options());
            let cfg = crate::cancel::CancelConfig {
                wait: Duration::from_secs(*wait),
            };
            crate::cancel::run(input, out, &mut sessions, &cfg)
        }
        Some(Command::Preflight(args)) => crate::preflight::run(&cli.conn, args, input, out),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_errors_are_one_line_exit_2() {
        let e = parse_args(["tao-submit", "--bogus"].map(OsString::from)).unwrap_err();
        assert_eq!(e.code(), 2);
        assert!(!e.to_string().contains('\n'));
        let tao_cli::Parsed::Args(c) = parse_args(
            ["tao-submit", "cancel", "--wait", "5", "--hosts", "h:1"].map(OsString::from),
        )
        .unwrap() else {
            panic!("not parsed")
        };
        assert!(matches!(c.command, Some(Command::Cancel { wait: 5, .. })));
        assert_eq!(c.conn.hosts.as_deref(), Some("h:1"));
    }

    #[test]
    fn cancel_with_a_job_id_says_to_pipe_job_lines() {
        let tao_cli::Parsed::Args(c) =
            parse_args(["tao-submit", "cancel", "17550"].map(OsString::from)).unwrap()
        else {
            panic!("not parsed")
        };
        let mut out = LineWriter::new(Vec::new());
        let e = run_with(c, &b""[..], &mut out).unwrap_err();
        let msg = e.to_string();
        assert_eq!(e.code(), 2);
        assert!(!msg.contains('\n'), "{msg}");
        assert!(
            msg.contains("17550") && msg.contains("| tao-submit cancel"),
            "{msg}"
        );
    }
}
