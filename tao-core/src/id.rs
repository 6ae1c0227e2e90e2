//! Record ids. An id is also the Slurm job name, so it must survive an
//! `#SBATCH --job-name=` line (read by sbatch, not a shell): `[a-z0-9-]`,
//! starting with a letter or digit, at most 64 characters.

use crate::error::{Error, Result};

/// Maximum id length in bytes.
pub const MAX_LEN: usize = 64;

/// Whether `id` is a well-formed record id.
pub fn is_valid(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= MAX_LEN
        && id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !id.starts_with('-')
}

/// Check an id, naming it in the error.
///
/// Errors: [`Error::Data`] with the rule and the fix.
pub fn validate(id: &str) -> Result<()> {
    if is_valid(id) {
        Ok(())
    } else {
        Err(Error::Data(format!(
            "invalid record id {:?}: ids are 1-{MAX_LEN} characters of [a-z0-9-] not starting with '-'; use the id printed by `tao-record open`",
            id
        )))
    }
}

/// Whether `s` looks like a Slurm job id (digits, optionally `_N` for an
/// array element) rather than a record id (`tao-YYYYMMDD-xxxxxx`): what a
/// user gives from `squeue` where a record id or a job line is expected.
pub fn looks_like_slurm_job_id(s: &str) -> bool {
    let digits = |p: &str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
    match s.trim().split_once('_') {
        Some((job, index)) => digits(job) && digits(index),
        None => digits(s.trim()),
    }
}

/// The one-line answer when the Slurm job id `given` stands where a record
/// id is expected (`tao-poll logs 12345`, `echo 12345 | tao-submit
/// cancel`): what was given and what to give. `holder`: the record whose
/// `slurm.job_id` is `given`, when the caller found one (named as the id
/// to give); else how to find it (the SLURM column of `tao-record list`,
/// or a jq filter on its job lines). Output: one line, no trailing period.
pub fn slurm_id_given(given: &str, holder: Option<&str>) -> String {
    let shown = crate::cli::one_line(given.trim());
    match holder {
        Some(id) => format!(
            "{shown:?} is a Slurm job id, not a record id: give the record id {id} (its record)"
        ),
        None => format!(
            "{shown:?} is a Slurm job id, not a record id: give its record's id; {}",
            finding_the_record_of(&shown)
        ),
    }
}

/// The one-line answer when a line of job-line input is the Slurm job id
/// `given` (`echo 12345 | tao-submit cancel`): what was given, what to pipe
/// instead, and how to find the record. Output: one line.
pub fn slurm_id_as_line(given: &str) -> String {
    let shown = crate::cli::one_line(given.trim());
    format!(
        "{shown:?} is a Slurm job id, not a job line: pipe its record's job line in (`tao-record list --id RECORD_ID | ...`); {}",
        finding_the_record_of(&shown)
    )
}

/// How to find the record id of Slurm job `shown`: one clause.
fn finding_the_record_of(shown: &str) -> String {
    format!(
        "`tao-record list` shows the record id beside SLURM {shown} (or: tao-record list --json | jq -r 'select(.slurm.job_id == \"{shown}\") | .id')"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slurm_job_id_is_told_apart_and_answered_in_one_line() {
        for s in ["12345", "12345_7", " 42 "] {
            assert!(looks_like_slurm_job_id(s), "{s}");
        }
        for s in ["tao-20261129-k3f9x2", "", "_1", "1_", "12a", "1;c"] {
            assert!(!looks_like_slurm_job_id(s), "{s}");
        }
        let m = slurm_id_given("12345", None);
        assert!(
            m.starts_with("\"12345\" is a Slurm job id, not a record id"),
            "{m}"
        );
        assert!(m.contains("tao-record list") && !m.contains('\n'), "{m}");
        assert!(slurm_id_given("12345", Some("tao-a")).contains("give the record id tao-a"));
        let m = slurm_id_as_line("12345");
        assert!(
            m.starts_with("\"12345\" is a Slurm job id, not a job line"),
            "{m}"
        );
        assert!(m.contains("tao-record list --id RECORD_ID |"), "{m}");
    }

    #[test]
    fn accepts_and_rejects() {
        assert!(is_valid("tao-20261129-k3f9x2"));
        for bad in ["", "-a", "A", "a b", "a_b", "a;b", &"a".repeat(65)] {
            assert!(!is_valid(bad), "{bad}");
        }
        assert!(validate("x/y").unwrap_err().to_string().contains("\"x/y\""));
    }
}
