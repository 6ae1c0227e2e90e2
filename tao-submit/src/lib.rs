//! tao-submit: every scheduler *mutation* of tao-slurm, over one SSH
//! session per login host: staging, sbatch (held until the log directory
//! exists), reconciliation of an ambiguous submit, cancel, and preflight.
//!
//! The binary is a thin wrapper over [`run`]; the actions live in
//! [`submit`], [`cancel`] and [`preflight`]; [`stage`] writes a job's files
//! on shared storage; [`sched`] reads what the mutations depend on
//! (jobs by name, node names, sbatch's reply); [`sessions`] keeps the SSH
//! sessions of one run; [`image`] makes sure a pyxis job's `.sqsh` exists
//! or is being converted on a CPU partition first.

pub mod cancel;
pub mod cli;
pub mod conn;
pub mod image;
pub mod preflight;
pub mod probe;
pub mod sched;
pub mod sessions;
pub mod stage;
pub mod submit;

pub use cli::{run, Cli};

/// Tool name in `observed_by` and `error.tool`.
pub const TOOL: &str = "tao-submit";

/// Whether `e` says a line is malformed (not JSON, or a required field
/// missing or invalid): bad input data, exit 65 (docs/CONTRACT.md), not a
/// per-job failure (exit 1).
pub(crate) fn is_malformed(e: &tao_core::Error) -> bool {
    matches!(
        e,
        tao_core::Error::BadLine { .. } | tao_core::Error::BadJson { .. }
    )
}

/// Report a malformed line on stderr (`tao-submit: error: line N: ...`,
/// once); the line itself goes on carrying `error`.
pub(crate) fn report_malformed(e: &tao_core::Error) {
    tao_core::cli::report("tao-submit", e);
}

/// The end of a run over job lines: an unreadable input line (`read_err`)
/// wins; then any `malformed` line (each already reported on stderr by
/// [`report_malformed`] and printed with `error`) makes the status 65, as
/// for tao-render and tao-record mark, and a fatal error is still reported
/// on stderr; then a fatal error (connection, configuration); otherwise 1
/// when `failed` lines carry an `error`, else 0.
///
/// Errors: `read_err`, then `fatal` (when no line was malformed).
pub(crate) fn finish_lines(
    read_err: Option<tao_core::Error>,
    fatal: Option<tao_core::Error>,
    failed: usize,
    malformed: usize,
) -> tao_core::Result<i32> {
    if let Some(e) = read_err {
        return Err(e);
    }
    if malformed > 0 {
        if let Some(e) = &fatal {
            tao_core::cli::report("tao-submit", e);
        }
        return Ok(tao_core::exit::DATAERR);
    }
    if let Some(e) = fatal {
        return Err(e);
    }
    Ok(if failed > 0 {
        tao_core::exit::SOME_FAILED
    } else {
        tao_core::exit::OK
    })
}
