//! The state vocabulary: PENDING, RUNNING, COMPLETE, ERROR, CANCELED,
//! UNKNOWN, and ([`native`]) the one table that maps Slurm's native states
//! onto it (rendered into tao-jobline(7)), used by tao-poll and tao-submit.

pub mod native;

use serde::{Deserialize, Serialize};

/// A job's state in the tools' vocabulary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum State {
    /// Queued, requeued or held; not yet running.
    Pending,
    /// Running, completing, suspended or otherwise holding resources.
    Running,
    /// Finished and the job's own status says success. Final.
    Complete,
    /// Finished without success (failed program, timeout, node failure). Final.
    Error,
    /// Cancelled, preempted or revoked. Final.
    Canceled,
    /// Not known to squeue or sacct (yet, or any more).
    Unknown,
}

impl State {
    /// All states, in lifecycle order.
    pub const ALL: [State; 6] = [
        State::Pending,
        State::Running,
        State::Complete,
        State::Error,
        State::Canceled,
        State::Unknown,
    ];

    /// The upper-case name, e.g. `"PENDING"`.
    pub fn as_str(self) -> &'static str {
        match self {
            State::Pending => "PENDING",
            State::Running => "RUNNING",
            State::Complete => "COMPLETE",
            State::Error => "ERROR",
            State::Canceled => "CANCELED",
            State::Unknown => "UNKNOWN",
        }
    }

    /// Parse an upper- or lower-case name. `None` for anything else.
    pub fn parse(s: &str) -> Option<State> {
        State::ALL
            .into_iter()
            .find(|st| st.as_str().eq_ignore_ascii_case(s.trim()))
    }

    /// Parse a state given on a command line (`--state`): what [`State::parse`]
    /// takes, plus Slurm's spelling `CANCELLED` for CANCELED (the tools print
    /// Slurm's native state in `message`, so users type it). Job lines keep
    /// the one spelling: this alias is for flags only. Slurm's `COMPLETED`
    /// is no alias: it is COMPLETE only when the job's verdict says so.
    pub fn parse_arg(s: &str) -> Option<State> {
        if s.trim().eq_ignore_ascii_case("CANCELLED") {
            return Some(State::Canceled);
        }
        State::parse(s)
    }

    /// COMPLETE, ERROR and CANCELED are final: no later observation moves
    /// a record out of them.
    pub fn is_final(self) -> bool {
        matches!(self, State::Complete | State::Error | State::Canceled)
    }

    /// PENDING, RUNNING and UNKNOWN are live: `tao-record list --live`
    /// returns them (and unclassified ERROR records,
    /// tao_store::query::awaits_classification, and retryable ones whose
    /// retry was never opened, tao_store::query::awaits_retry) and cron
    /// keeps polling them.
    pub fn is_live(self) -> bool {
        !self.is_final()
    }
}

impl std::fmt::Display for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for st in State::ALL {
            assert_eq!(State::parse(st.as_str()), Some(st));
            assert_eq!(State::parse(&st.as_str().to_lowercase()), Some(st));
            let json = serde_json::to_string(&st).unwrap();
            assert_eq!(json, format!("\"{}\"", st.as_str()));
        }
        assert_eq!(State::parse("CANCELLED"), None);
        assert_eq!(State::parse_arg("CANCELLED"), Some(State::Canceled));
        assert_eq!(State::parse_arg("cancelled"), Some(State::Canceled));
        assert_eq!(State::parse_arg("ERROR"), Some(State::Error));
        assert_eq!(State::parse_arg("COMPLETED"), None);
    }

    #[test]
    fn final_states() {
        let finals: Vec<_> = State::ALL.into_iter().filter(|s| s.is_final()).collect();
        assert_eq!(finals, vec![State::Complete, State::Error, State::Canceled]);
    }
}
