//! Counts of a line-reading run (`mark`, `retry`) and its exit status, one
//! type for both so the exit rule (tao_core::filter::Counts) is applied in
//! one place.

use tao_core::filter::Counts;
use tao_core::Result;

/// Counts of one `mark` or `retry` run.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Summary {
    /// Lines done: applied by mark (recorded, duplicate, stale or merged);
    /// retry records opened by retry.
    pub done: u64,
    /// retry: lines that were not retried (any reason); mark: 0.
    pub skipped: u64,
    /// Lines that failed (exit 1): mark's lines that went on with an
    /// `error`, retry's lines whose retry could not be opened.
    pub failed: u64,
    /// Malformed input lines, reported on stderr when read (exit 65).
    pub malformed: u64,
    /// Of `failed`, the lines whose record could not be read or written
    /// (a local I/O error: a read-only or full state directory); exit 74,
    /// not 1, since the store itself needs fixing (tao-record(1), EXIT
    /// STATUS: 74 is the record store).
    pub io_failed: u64,
}

impl Summary {
    /// The run's result: 65 if any line was malformed, 74 if a line
    /// failed on the record store, 1 if any other failed, else 0. `done` names what [`Summary::done`] counts in the messages
    /// ("applied", "retry record(s) opened").
    ///
    /// Errors: [`tao_core::Error::Data`] / [`tao_core::Error::Io`] /
    /// [`tao_core::Error::SomeFailed`] with the counts.
    pub fn into_result(self, done: &str) -> Result<i32> {
        let Summary {
            done: d,
            failed: f,
            malformed: m,
            io_failed: io,
            ..
        } = self;
        if m == 0 && io > 0 {
            return Err(tao_core::Error::io(
                format!("{f} line(s) failed (see above), {io} of them on the record store; {d} {done}"),
                std::io::Error::other(
                    "the state directory (TAO_STATE_DIR) could not be written or read: fix it, then run the same command again",
                ),
            ));
        }
        let counts = Counts {
            malformed: m,
            failed: f,
            ..Counts::default()
        };
        counts.into_result(
            || format!("{m} malformed input line(s) skipped (see above); {d} {done}, {f} failed"),
            || format!("{f} line(s) failed (see above; each carries an `error` object or a warning); {d} {done}"),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malformed_beats_failed_and_clean_is_zero() {
        let s = Summary {
            done: 2,
            skipped: 0,
            failed: 1,
            malformed: 1,
            io_failed: 1,
        };
        assert_eq!(s.into_result("applied").unwrap_err().code(), 65);
        let s = Summary {
            failed: 1,
            ..Summary::default()
        };
        assert_eq!(s.into_result("applied").unwrap_err().code(), 1);
        assert_eq!(Summary::default().into_result("applied").unwrap(), 0);
        let s = Summary {
            failed: 2,
            io_failed: 1,
            ..Summary::default()
        };
        assert_eq!(s.into_result("applied").unwrap_err().code(), 74);
    }
}
