//! Shared pieces of the tao-slurm tools: the job-line envelope and its
//! reader/writer, the state vocabulary, the error type with its exit codes,
//! POSIX shell quoting and the common `main` wrapper.
//!
//! Only what every tool needs lives here; tool-specific logic stays in the
//! tool's own crate. This crate never links ssh2/OpenSSL, so the pure
//! filters (tao-render, tao-redact, tao-classify) stay small.

pub mod cli;
pub mod error;
pub mod exit;
pub mod filter;
pub mod flags;
pub mod hostlist;
pub mod id;
pub mod image;
pub mod jobline;
pub mod mem;
pub mod model;
pub mod prefilter;
pub mod progress;
pub mod request;
pub mod shell;
pub mod site;
pub mod slurm_time;
pub mod state;
#[cfg(any(test, feature = "proptest"))]
pub mod testing;
pub mod time;

pub use error::{Error, Result};
pub use filter::{Filter, OnBadLine};
pub use jobline::{JobLine, LineReader, LineWriter};
pub use state::State;

/// The six tools' binary names, in pipeline order: the one list the man
/// page generator (tao_man::commands), the end-to-end tests (tao_tests)
/// and the crate-graph test share. The Makefile's `TOOLS` is its shell
/// twin.
pub const TOOLS: [&str; 6] = [
    "tao-record",
    "tao-render",
    "tao-redact",
    "tao-submit",
    "tao-poll",
    "tao-classify",
];

/// The retry budget: how many times in all (the first try included) a job
/// that keeps failing on infrastructure is run before it is left for a
/// person to look at. The default of `tao-record retry --max-attempts` and
/// `tao-classify --max-attempts` (10 attempts; docs/design.md, "Retry
/// policy").
pub const DEFAULT_MAX_ATTEMPTS: u32 = 10;

/// Hex-encoded SHA-256 of `bytes` (64 lowercase hex characters).
///
/// Used for `script.sha256`, `lint.sha256` and supporting-file checksums.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(bytes);
    let mut out = String::with_capacity(64);
    for b in digest {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn sha256_of_empty_is_the_known_value() {
        assert_eq!(
            super::sha256_hex(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }
}
