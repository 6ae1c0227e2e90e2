//! What every transport shares: the [`Output`] of a remote command, the
//! default command time limit, the counters of handshakes and commands
//! (`--stats`, benchmarks) and the `-vv` trace of a script about to run.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tao_core::Error;

/// Default limit on one remote command's run time (the whole exchange:
/// stdin written, output read, channel closed): 10 minutes.
pub const DEFAULT_COMMAND_TIMEOUT: Duration = Duration::from_secs(600);

pub(crate) static HANDSHAKES: AtomicU64 = AtomicU64::new(0);
pub(crate) static EXECS: AtomicU64 = AtomicU64::new(0);

/// Number of SSH handshakes this process has started (successful or not),
/// for benchmarks and tests that check "one session per host".
pub fn handshake_count() -> u64 {
    HANDSHAKES.load(Ordering::Relaxed)
}

/// Number of remote commands ([`crate::Transport::exec`] calls) this process has
/// started, for benchmarks and `--stats`.
pub fn exec_count() -> u64 {
    EXECS.load(Ordering::Relaxed)
}

/// With `-vv`, show the start of a script about to run (scripts carry no
/// secrets: those travel on the script's stdin, never shown).
pub(crate) fn log_script(spec: &str, script: &str) {
    if tao_core::cli::verbosity() >= 2 {
        let shown: String = script.chars().take(300).collect();
        tao_core::cli::note(
            &crate::program_name(),
            &format!("remote script on {spec:?}: {shown}"),
        );
    }
}

/// The start of one command on `spec`, on every transport: counted for
/// [`exec_count`] and its script traced with `-vv` ([`log_script`]).
pub(crate) fn begin_exec(spec: &str, script: &str) {
    EXECS.fetch_add(1, Ordering::Relaxed);
    log_script(spec, script);
}

/// The error of a command on `place` (`login host "x"`, or `this login node
/// ("x")`) that ran past `limit`: [`Error::TempFail`] (75), try again.
pub(crate) fn ran_too_long(place: &str, limit: Duration) -> Error {
    Error::TempFail(format!(
        "a command on {place} ran longer than {} s; try again later",
        limit.as_secs()
    ))
}

/// Print a warning on stderr, prefixed with the program name.
pub(crate) fn note(msg: &str) {
    tao_core::cli::warn(&crate::program_name(), msg);
}

/// What a remote command produced.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Output {
    /// Everything the command wrote on stdout (raw bytes).
    pub stdout: Vec<u8>,
    /// Everything the command wrote on stderr (raw bytes).
    pub stderr: Vec<u8>,
    /// Exit status; a command killed by a signal reports 128 + the signal
    /// number, as a shell does (255 for a signal this library cannot name).
    pub status: i32,
}

impl Output {
    /// stdout as text (invalid UTF-8 replaced).
    pub fn stdout_text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }

    /// stderr as text (invalid UTF-8 replaced), trimmed, on one line, for
    /// error messages.
    pub fn stderr_line(&self) -> String {
        tao_core::cli::one_line(String::from_utf8_lossy(&self.stderr).trim())
    }
}
