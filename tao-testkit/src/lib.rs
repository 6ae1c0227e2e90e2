//! Test support shared by the tao-slurm crates' tests, so that each piece
//! of scaffolding lives in one place (the project's rule: one rule, one
//! place). A dev-dependency only (`tao-testkit = { path = "../tao-testkit" }`
//! under `[dev-dependencies]`), never published, and it depends on no crate
//! of the workspace, so any of them (tao-ssh included) can use it without a
//! dependency cycle.
//!
//! - [`ci`]: a missing prerequisite (cluster, program) is a failure in CI
//!   (`CI=true`) and a printed skip elsewhere.
//! - [`cluster`]: the exports `tests/cluster/up` (and `up-transport`) write.
//! - [`ssh`]: private-key copies with a chosen mode, an `ssh-agent` for a test.
//! - [`tool`]: a tool binary with a cleared environment, fed on stdin from
//!   another thread, its exit status and job lines checked.

pub mod ci;
pub mod cluster;
pub mod ssh;
pub mod tool;
