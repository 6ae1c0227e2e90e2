//! The CI rule of the project's tests: when a prerequisite of a test (the
//! local cluster, a program) is missing, the test fails under CI
//! (`CI=true`, as README.md says under "Development") and is skipped elsewhere, with the reason
//! printed either way. A CI run therefore never passes by skipping.

/// The environment variable that marks a CI run.
pub const CI_VAR: &str = "CI";

/// Whether this is a CI run: `CI` is exactly `true` (what CI services set
/// and README.md documents).
pub fn in_ci() -> bool {
    std::env::var(CI_VAR).as_deref() == Ok("true")
}

/// A prerequisite is missing: `reason` (one line naming what is missing
/// and the fix, e.g. `local cluster not up (/var/tmp/tao-cluster/env: No
/// such file or directory): run tests/cluster/up`).
///
/// Panics under CI (`CI=true`) with `CI=true and <reason>`; otherwise
/// prints `skipping: <reason>` on stderr and returns, and the caller
/// returns from its test (or returns `None` to it).
pub fn skip_or_fail(reason: &str) {
    if in_ci() {
        panic!("CI=true and {reason}");
    }
    eprintln!("skipping: {reason}");
}
