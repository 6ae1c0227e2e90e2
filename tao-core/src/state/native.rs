//! Slurm's native job states and their place in the tools' vocabulary.
//!
//! Slurm keeps a *base state* (PENDING, RUNNING, ...) plus *state flags*
//! (COMPLETING, REQUEUED, ...); squeue and sacct print one word, the first
//! set flag in a fixed order or else the base state (`job_state_string()`
//! and `job_state_string_compact()` in Slurm's `slurm_protocol_defs.c`).
//! squeue prints the long form (`%T`) or a compact code (`%t`: PD, R, CG,
//! ...); sacct prints the long form, annotated (`CANCELLED by 12345`) and,
//! in a fixed-width column, truncated with a `+` (`CANCELLED+`,
//! `OUT_OF_ME+`). Both print `?` for a state their own build does not know.
//!
//! [`map_state`] accepts all of those spellings and returns the canonical
//! long name, the vocabulary state (the table in docs/design.md and
//! tao-jobline(7)), the annotation, and whether the state is *provisional*
//! (NODE_FAIL and the launch failures may be followed by a requeue when
//! requeue is on). A spelling it has never seen maps to
//! UNKNOWN with the raw text kept, never to a panic.
//!
//! One table for every tool: tao-poll maps what squeue, sacct and scontrol
//! print with it, tao-submit decides with [`is_end_state`] whether a job it
//! finds (cancel, image conversion, the probe) has ended. A native state
//! gets one answer whichever command printed it, long name or compact code.
//!
//! Sources: squeue(1) and sacct(1) "JOB STATE CODES" (Slurm 22.05), Slurm's
//! job_state_codes.html (base states and flags, 23.x/24.x).

use crate::State;

/// One native state Slurm can print: long name, compact code (as squeue's
/// `%t` prints it; empty when Slurm has none), vocabulary state, and whether
/// a requeue may follow it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NativeState {
    /// Long name, e.g. `"NODE_FAIL"`.
    pub name: &'static str,
    /// Compact code, e.g. `"NF"` (`""` for flags with no compact form).
    pub code: &'static str,
    /// Where it lands in the vocabulary (see the table of docs/design.md).
    pub state: State,
    /// True when, with requeue on, Slurm may requeue the job after this
    /// state: the state is then not final until the controller forgets it.
    pub requeueable: bool,
}

const fn ns(
    name: &'static str,
    code: &'static str,
    state: State,
    requeueable: bool,
) -> NativeState {
    NativeState {
        name,
        code,
        state,
        requeueable,
    }
}

/// Every job state and state flag Slurm names (22.05 man pages plus the
/// flags of later releases), with its vocabulary state.
///
/// Not requeueable, though they end a job early: BOOT_FAIL (squeue(1):
/// "the job can not be requeued") and PREEMPTED (a preemption that
/// requeues shows the job as REQUEUED/PENDING, never as PREEMPTED; a job
/// shown PREEMPTED was cancelled by the preemption, PreemptMode=CANCEL),
/// so both are final from squeue, sacct and scontrol alike.
///
/// Rows not in the table of docs/design.md and why they map as they do:
/// EXPEDITING (a requeued job made immediately eligible) is PENDING;
/// LAUNCH_FAILED and RECONFIG_FAIL (the job could not start on its nodes)
/// are ERROR but requeueable, like NODE_FAIL; UPDATE_DB (a bookkeeping flag
/// while the controller writes to the database) says nothing about the job,
/// so it is UNKNOWN (live: the next poll sees the real state).
pub const TABLE: &[NativeState] = &[
    // PENDING
    ns("PENDING", "PD", State::Pending, false),
    ns("REQUEUED", "RQ", State::Pending, false),
    ns("REQUEUE_HOLD", "RH", State::Pending, false),
    ns("REQUEUE_FED", "RF", State::Pending, false),
    ns("RESV_DEL_HOLD", "RD", State::Pending, false),
    ns("CONFIGURING", "CF", State::Pending, false),
    ns("POWER_UP_NODE", "PU", State::Pending, false),
    ns("EXPEDITING", "", State::Pending, false),
    // RUNNING
    ns("RUNNING", "R", State::Running, false),
    ns("COMPLETING", "CG", State::Running, false),
    ns("SUSPENDED", "S", State::Running, false),
    ns("STOPPED", "ST", State::Running, false),
    ns("SIGNALING", "SI", State::Running, false),
    ns("STAGE_OUT", "SO", State::Running, false),
    ns("RESIZING", "RS", State::Running, false),
    // COMPLETED: COMPLETE only with the job's own verdict (see crate::status)
    ns("COMPLETED", "CD", State::Complete, false),
    // ERROR
    ns("FAILED", "F", State::Error, false),
    ns("TIMEOUT", "TO", State::Error, false),
    ns("OUT_OF_MEMORY", "OOM", State::Error, false),
    ns("DEADLINE", "DL", State::Error, false),
    ns("BOOT_FAIL", "BF", State::Error, false),
    ns("NODE_FAIL", "NF", State::Error, true),
    ns("SPECIAL_EXIT", "SE", State::Error, false),
    ns("LAUNCH_FAILED", "LF", State::Error, true),
    ns("RECONFIG_FAIL", "", State::Error, true),
    // CANCELED
    ns("CANCELLED", "CA", State::Canceled, false),
    ns("PREEMPTED", "PR", State::Canceled, false),
    ns("REVOKED", "RV", State::Canceled, false),
    // no verdict
    ns("UPDATE_DB", "", State::Unknown, false),
];

/// A native state as read from squeue, sacct or scontrol, mapped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mapped {
    /// The canonical long name (`"CANCELLED"`), or the raw text upper-cased
    /// when it is not a state this table knows.
    pub name: String,
    /// The vocabulary state; [`State::Unknown`] for a spelling never seen.
    pub state: State,
    /// Text after the first word, e.g. `"by 12345"` of `CANCELLED by 12345`.
    pub annotation: Option<String>,
    /// Whether the printed word was cut short by the column (`CANCELLED+`).
    pub truncated: bool,
    /// Whether the table knows this state.
    pub known: bool,
    /// See [`NativeState::requeueable`].
    pub requeueable: bool,
}

/// Look a long name or compact code up, case-insensitively.
pub fn lookup(word: &str) -> Option<&'static NativeState> {
    TABLE.iter().find(|s| {
        s.name.eq_ignore_ascii_case(word)
            || (!s.code.is_empty() && s.code.eq_ignore_ascii_case(word))
    })
}

/// Map a state as Slurm printed it (`"PD"`, `"RUNNING"`, `"CANCELLED by 0"`,
/// `"CANCELLED+"`, `"OUT_OF_ME+"`, `"?"`, anything) to the vocabulary.
///
/// Only the first whitespace-separated word is the state; the rest is the
/// annotation. A trailing `+` marks a truncated word: it matches the one
/// long name it is a prefix of (`CANCELLED+` is CANCELLED, whose full text
/// was longer than the column). An empty or unknown word maps to
/// [`State::Unknown`] with `known == false`.
pub fn map_state(raw: &str) -> Mapped {
    let raw = raw.trim();
    let (word, rest) = match raw.split_once(char::is_whitespace) {
        Some((w, r)) => (w, Some(r.trim().to_string()).filter(|r| !r.is_empty())),
        None => (raw, None),
    };
    let truncated = word.ends_with('+');
    let stem = word.trim_end_matches('+');
    let found = if truncated {
        // A truncated word matches itself exactly (`CANCELLED+` is the whole
        // name plus an annotation that did not fit) or the one name it starts.
        lookup(stem).or_else(|| {
            let mut hits = TABLE.iter().filter(|s| {
                stem.len() >= 2
                    && s.name.len() > stem.len()
                    && s.name[..stem.len()].eq_ignore_ascii_case(stem)
            });
            match (hits.next(), hits.next()) {
                (Some(one), None) => Some(one),
                _ => None,
            }
        })
    } else {
        lookup(stem)
    };
    match found {
        Some(s) => Mapped {
            name: s.name.to_string(),
            state: s.state,
            annotation: rest,
            truncated,
            known: true,
            requeueable: s.requeueable,
        },
        None => Mapped {
            name: if raw.is_empty() {
                String::from("?")
            } else {
                word.to_ascii_uppercase()
            },
            state: State::Unknown,
            annotation: rest,
            truncated,
            known: false,
            requeueable: false,
        },
    }
}

/// Whether a native state as Slurm printed it (`CANCELLED by 0`,
/// `CANCELLED+`, `PR`, `LAUNCH_FAILED`) is one a job ends in: a state of
/// [`TABLE`] whose vocabulary state is final (COMPLETE, ERROR, CANCELED).
/// Unknown spellings and the empty string are not.
pub fn is_end_state(raw: &str) -> bool {
    let m = map_state(raw);
    m.known && m.state.is_final()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn end_states_are_the_final_rows_by_name_and_code() {
        for row in TABLE {
            assert_eq!(is_end_state(row.name), row.state.is_final(), "{}", row.name);
            if !row.code.is_empty() {
                assert_eq!(is_end_state(row.code), row.state.is_final(), "{}", row.code);
            }
        }
        // Spellings as squeue and sacct print them (sacct cuts at 10
        // characters with a `+`).
        for s in [
            "LAUNCH_FAILED",
            "RECONFIG_FAIL",
            "PREEMPTED",
            "CANCELLED by 0",
            "CANCELLED+",
            "OUT_OF_ME+",
            "PR",
            "BF",
        ] {
            assert!(is_end_state(s), "{s}");
        }
        for s in [
            "",
            "?",
            "PENDING",
            "RUNNING",
            "COMPLETING",
            "REQUEUED",
            "FROBNICATED",
        ] {
            assert!(!is_end_state(s), "{s}");
        }
    }

    #[test]
    fn boot_fail_and_preempted_are_not_requeueable() {
        // squeue(1): BOOT_FAIL jobs cannot be requeued; a requeueing
        // preemption shows REQUEUED, so PREEMPTED is final.
        for s in ["BF", "BOOT_FAIL", "PR", "PREEMPTED"] {
            assert!(!map_state(s).requeueable, "{s}");
        }
    }

    #[test]
    fn every_row_maps_by_name_and_code() {
        for row in TABLE {
            let m = map_state(row.name);
            assert_eq!(
                (m.name.as_str(), m.state, m.known),
                (row.name, row.state, true)
            );
            if !row.code.is_empty() {
                assert_eq!(map_state(row.code).name, row.name, "{}", row.code);
                assert_eq!(map_state(&row.code.to_lowercase()).name, row.name);
            }
        }
    }

    #[test]
    fn names_and_codes_are_unique() {
        for (i, a) in TABLE.iter().enumerate() {
            for b in &TABLE[i + 1..] {
                assert_ne!(a.name, b.name);
                assert!(a.code.is_empty() || a.code != b.code, "{}", a.code);
            }
        }
    }

    #[test]
    fn annotations_and_truncations() {
        let m = map_state("CANCELLED by 12345");
        assert_eq!(
            (m.state, m.annotation.as_deref()),
            (State::Canceled, Some("by 12345"))
        );
        let m = map_state("CANCELLED+");
        assert_eq!((m.name.as_str(), m.truncated), ("CANCELLED", true));
        assert_eq!(map_state("OUT_OF_ME+").name, "OUT_OF_MEMORY");
        assert_eq!(map_state("RESV_DEL_+").name, "RESV_DEL_HOLD");
        // Ambiguous prefix: REQUEUE+ could be REQUEUED, REQUEUE_HOLD, REQUEUE_FED.
        assert!(!map_state("REQUEU+").known);
    }

    #[test]
    fn unknown_keeps_raw_text() {
        let m = map_state("FROBNICATED");
        assert_eq!(
            (m.state, m.name.as_str(), m.known),
            (State::Unknown, "FROBNICATED", false)
        );
        assert_eq!(map_state("?").state, State::Unknown);
        assert_eq!(map_state("").name, "?");
    }
}
