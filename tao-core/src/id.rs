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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_and_rejects() {
        assert!(is_valid("tao-20261129-k3f9x2"));
        for bad in ["", "-a", "A", "a b", "a_b", "a;b", &"a".repeat(65)] {
            assert!(!is_valid(bad), "{bad}");
        }
        assert!(validate("x/y").unwrap_err().to_string().contains("\"x/y\""));
    }
}
