//! The one error type of the tools. Each variant maps to one exit status
//! (see [`crate::exit`]) and renders as a single lowercase line that names
//! the input and the fix.

use crate::exit;

/// Result alias used across the tools.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Every failure a tool reports. The `Display` text is one line, lowercase,
/// no trailing period; values are quoted so they can be pasted into a shell.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Bad command-line usage; exit 2.
    #[error("{0}")]
    Usage(String),
    /// A malformed input line (not JSON, missing or invalid field); exit 65.
    #[error("line {line}: {message}")]
    BadLine {
        /// 1-based line number in the input stream.
        line: u64,
        /// What is wrong and how to fix it.
        message: String,
    },
    /// A line that is not valid JSON; exit 65.
    #[error("line {line}, column {column}: {message}")]
    BadJson {
        /// 1-based line number in the input stream.
        line: u64,
        /// 1-based column of the syntax error.
        column: usize,
        /// What is wrong and how to fix it.
        message: String,
    },
    /// A job line without a field an earlier stage of the pipeline writes
    /// (`script.text` when tao-render was skipped, ...); exit 65 like
    /// [`Error::BadLine`], but its `error.code` is `missing_stage`, not
    /// `data`: the request itself is fine, so the same record goes through
    /// again once the line passes every stage (the message names the stage,
    /// [`crate::jobline::stage_writing`]).
    #[error("line {line}: {message}")]
    MissingStage {
        /// 1-based line number in the input stream.
        line: u64,
        /// The missing field and the stage that writes it.
        message: String,
    },
    /// A malformed input that is not a numbered line (a file, an argument value); exit 65.
    #[error("{0}")]
    Data(String),
    /// Configuration missing or invalid (environment variable, profile); exit 78.
    #[error("{0}")]
    Config(String),
    /// No login host answered; exit 69.
    #[error("{0}")]
    Unavailable(String),
    /// Authentication, host key or key permissions; exit 77.
    #[error("{0}")]
    NoPerm(String),
    /// Temporary failure (lock busy, transient scheduler error); exit 75.
    #[error("{0}")]
    TempFail(String),
    /// The scheduler's reply could not be parsed; exit 76.
    #[error("{0}")]
    Protocol(String),
    /// A lint gate blocked input; exit 3.
    #[error("{0}")]
    LintBlocked(String),
    /// Local I/O failure, with what was being done; exit 74. A full file
    /// system, a spent quota, the file-size limit or a read-only file
    /// system also names its fix ([`io_fix`]).
    #[error("{context}: {source}{}", io_fix(source))]
    Io {
        /// What the tool was doing, e.g. `writing record "tao-..."`.
        context: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// Some job lines failed and carry an `error` object; exit 1.
    #[error("{0}")]
    SomeFailed(String),
    /// A bug; exit 70.
    #[error("internal error: {0}")]
    Internal(String),
}

impl Error {
    /// The exit status for this error (see [`crate::exit`]).
    pub fn code(&self) -> i32 {
        match self {
            Error::Usage(_) => exit::USAGE,
            Error::BadLine { .. }
            | Error::BadJson { .. }
            | Error::MissingStage { .. }
            | Error::Data(_) => exit::DATAERR,
            Error::Config(_) => exit::CONFIG,
            Error::Unavailable(_) => exit::UNAVAILABLE,
            Error::NoPerm(_) => exit::NOPERM,
            Error::TempFail(_) => exit::TEMPFAIL,
            Error::Protocol(_) => exit::PROTOCOL,
            Error::LintBlocked(_) => exit::LINT_BLOCKED,
            Error::Io { .. } => exit::IOERR,
            Error::SomeFailed(_) => exit::SOME_FAILED,
            Error::Internal(_) => exit::SOFTWARE,
        }
    }

    /// A short stable code for the `error.code` field of a job line,
    /// e.g. `"unavailable"`, `"noperm"`, `"missing_stage"`.
    pub fn kind(&self) -> &'static str {
        match self {
            Error::Usage(_) => "usage",
            Error::BadLine { .. } | Error::BadJson { .. } | Error::Data(_) => "data",
            Error::MissingStage { .. } => "missing_stage",
            Error::Config(_) => "config",
            Error::Unavailable(_) => "unavailable",
            Error::NoPerm(_) => "noperm",
            Error::TempFail(_) => "tempfail",
            Error::Protocol(_) => "protocol",
            Error::LintBlocked(_) => "lint_blocked",
            Error::Io { .. } => "io",
            Error::SomeFailed(_) => "some_failed",
            Error::Internal(_) => "internal",
        }
    }

    /// The exit status of an `error.code` kind read back from a job line
    /// (the inverse of [`Error::kind`] and [`Error::code`], from the same
    /// two matches): `"unavailable"` gives `Some(69)`, `"config"`
    /// `Some(78)`. `None` for a kind no error with a message of its own
    /// has (`"missing_stage"`, `"io"`) or an unknown one (another tool's
    /// newer code).
    pub fn code_of_kind(kind: &str) -> Option<i32> {
        let e = String::new;
        [
            Error::Usage(e()),
            Error::Data(e()),
            Error::Config(e()),
            Error::Unavailable(e()),
            Error::NoPerm(e()),
            Error::TempFail(e()),
            Error::Protocol(e()),
            Error::LintBlocked(e()),
            Error::SomeFailed(e()),
            Error::Internal(e()),
        ]
        .iter()
        .find(|err| err.kind() == kind)
        .map(Error::code)
    }

    /// Wrap an I/O error with what was being done.
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        Error::Io {
            context: context.into(),
            source,
        }
    }
}

/// The fix of a local write that the file system refused, as the end of
/// [`Error::Io`]'s one line (empty for other errors): ENOSPC, EDQUOT,
/// EFBIG (over RLIMIT_FSIZE, `ulimit -f`; tao_core::cli::main_with makes it
/// an error instead of a SIGXFSZ kill) and EROFS, by their
/// `std::io::ErrorKind`. Nothing was replaced: every write of the tools'
/// files is atomic (tao-store), so the same command succeeds once fixed.
pub fn io_fix(source: &std::io::Error) -> &'static str {
    use std::io::ErrorKind as K;
    match source.kind() {
        K::StorageFull => "; the file system is full: free space on it (df -h), or write elsewhere (the record store: TAO_STATE_DIR), then run the same command again",
        K::QuotaExceeded => "; the disk quota is spent: free space (quota -s), or write elsewhere (the record store: TAO_STATE_DIR), then run the same command again",
        K::FileTooLarge => "; the file-size limit of this shell was reached: raise it (ulimit -f unlimited), then run the same command again",
        K::ReadOnlyFilesystem => "; the file system is read-only: write elsewhere (the record store: TAO_STATE_DIR)",
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_of_kind_inverts_kind_and_code() {
        assert_eq!(Error::code_of_kind("unavailable"), Some(exit::UNAVAILABLE));
        assert_eq!(Error::code_of_kind("noperm"), Some(exit::NOPERM));
        assert_eq!(Error::code_of_kind("config"), Some(exit::CONFIG));
        assert_eq!(Error::code_of_kind("tempfail"), Some(exit::TEMPFAIL));
        assert_eq!(Error::code_of_kind("missing_stage"), None);
        assert_eq!(Error::code_of_kind("from-a-newer-tool"), None);
        let e = Error::Protocol("x".into());
        assert_eq!(Error::code_of_kind(e.kind()), Some(e.code()));
    }
}
