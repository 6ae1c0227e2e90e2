//! Exit statuses shared by every tool (documented in tao-jobline(7)).
//!
//! The numbers follow sysexits(3) where a script wants to tell kinds apart,
//! as ripgrep and coreutils do for their own codes.

/// Everything worked.
pub const OK: i32 = 0;
/// Some job lines failed; each carries an `error` object and went on.
pub const SOME_FAILED: i32 = 1;
/// Usage error: unknown flag, missing argument (clap's convention).
pub const USAGE: i32 = 2;
/// `tao-redact lint` blocked at least one script (a literal secret).
pub const LINT_BLOCKED: i32 = 3;
/// Malformed input: a line that is not JSON or lacks a required field (EX_DATAERR).
pub const DATAERR: i32 = 65;
/// Cluster unreachable: no login host answered (EX_UNAVAILABLE).
pub const UNAVAILABLE: i32 = 69;
/// Internal error: a bug in tao-slurm (EX_SOFTWARE).
pub const SOFTWARE: i32 = 70;
/// Local I/O error: state directory, output pipe (EX_IOERR).
pub const IOERR: i32 = 74;
/// Temporary failure; the same command may succeed later (EX_TEMPFAIL).
pub const TEMPFAIL: i32 = 75;
/// The scheduler's reply could not be parsed (EX_PROTOCOL).
pub const PROTOCOL: i32 = 76;
/// Authentication, host key or key-permission failure (EX_NOPERM).
pub const NOPERM: i32 = 77;
/// Configuration error: a missing or invalid variable or profile (EX_CONFIG).
pub const CONFIG: i32 = 78;

/// Stopped by a signal: 128 + the signal's number, what shells report for a
/// process a signal ended (`tao-poll --watch` finishes its output first).
pub const SIGNAL_BASE: i32 = 128;
/// Stopped by SIGINT (Ctrl-C): 128 + 2.
pub const INTERRUPTED: i32 = SIGNAL_BASE + 2;
/// Stopped by SIGTERM: 128 + 15.
pub const TERMINATED: i32 = SIGNAL_BASE + 15;
