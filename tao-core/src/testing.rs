//! The one proptest configuration of the workspace's property tests
//! (compiled for tao-core's own tests and, with the `proptest` feature, for
//! the other crates' tests: `tao-core = { workspace = true, features =
//! ["proptest"] }` under `[dev-dependencies]`).
//!
//! - Case count: each property names its CI count (`default_cases`), and
//!   the environment variable `PROPTEST_CASES` (a positive integer)
//!   replaces it, so a long local run is `PROPTEST_CASES=20000 cargo test
//!   -p CRATE --test NAME` while CI keeps today's speed.
//! - Seed: [`config`] draws a new seed on every run (proptest's default);
//!   [`config_fixed_seed`] runs the same cases on every run unless
//!   `PROPTEST_RNG_SEED` (a u64) asks for others.
//! - Reject budgets grow with the case count: proptest's defaults (1,024
//!   `prop_assume!` rejects, 65,536 `prop_filter` rejects in a run) are
//!   sized for hundreds of cases, and a property that rejects one case in
//!   ten aborts ("Too many global rejects") at 20,000 cases. The budget is
//!   the default or 2 (global) and 16 (local) rejects per case, whichever
//!   is larger, so CI's counts keep proptest's defaults.
//! - Failures are persisted next to the test's source file: a failure in
//!   `tao-poll/tests/deferred.rs` appends its seed to
//!   `tao-poll/tests/deferred.proptest-regressions`, which is committed
//!   and replayed first on every later run. This is set explicitly:
//!   proptest's default (`SourceParallel`) looks for a `lib.rs`/`main.rs`
//!   above the source file, finds none for a file under `tests/`, warns
//!   ("failed to find lib.rs or main.rs") and only then falls back to the
//!   same file.

use proptest::test_runner::{Config, FileFailurePersistence, RngSeed};

/// The environment variable that replaces every property's case count.
pub const CASES_VAR: &str = "PROPTEST_CASES";

/// The environment variable that replaces a fixed seed (a u64).
pub const SEED_VAR: &str = "PROPTEST_RNG_SEED";

/// The case count of a property: `PROPTEST_CASES` when it is set to a
/// positive integer, else `default_cases` (the count CI runs).
///
/// A set but unusable value (`0`, `abc`) panics with a one-line message
/// naming the variable, rather than silently running the CI count.
pub fn cases(default_cases: u32) -> u32 {
    match std::env::var(CASES_VAR) {
        Err(_) => default_cases,
        Ok(v) => match v.trim().parse::<u32>() {
            Ok(n) if n > 0 => n,
            _ => panic!("{CASES_VAR}={v:?}: expected a positive integer (the number of cases of each property), or unset it for the CI count"),
        },
    }
}

/// A proptest configuration of [`cases`]`(default_cases)` cases, a fresh
/// random seed on every run (or `PROPTEST_RNG_SEED`), reject budgets that
/// grow with the cases, and failures persisted in `<test file stem>.proptest-regressions` beside the test's
/// source (see the module docs).
pub fn config(default_cases: u32) -> Config {
    let base = Config::default();
    let cases = cases(default_cases);
    Config {
        cases,
        max_global_rejects: base.max_global_rejects.max(cases.saturating_mul(2)),
        max_local_rejects: base.max_local_rejects.max(cases.saturating_mul(16)),
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource(
            "proptest-regressions",
        ))),
        ..base
    }
}

/// [`config`] with the same cases on every run: the seed is `seed` unless
/// `PROPTEST_RNG_SEED` is set (then that seed; set it to explore other
/// cases). For properties whose CI run must be repeatable (slow ones that
/// run few cases).
pub fn config_fixed_seed(default_cases: u32, seed: u64) -> Config {
    let mut c = config(default_cases);
    if std::env::var_os(SEED_VAR).is_none() {
        c.rng_seed = RngSeed::Fixed(seed);
    }
    c
}

#[cfg(test)]
mod tests {
    #[test]
    fn failures_persist_beside_the_source_file() {
        let c = super::config_fixed_seed(7, 1);
        let p = format!("{:?}", c.failure_persistence);
        assert!(p.contains("WithSource(\"proptest-regressions\")"), "{p}");
    }
}
