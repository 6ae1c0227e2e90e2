//! tao-poll: every scheduler *read*. Job lines (or Slurm job ids) in, the
//! same lines out with `state` in the tools' vocabulary, the native state,
//! reason, exit code, nodes and times, observed in one batched round per
//! login host. `--watch` keeps polling until every job is final; `logs`
//! prints a job's log tail; `--evidence` attaches redacted log tails to
//! failed jobs for tao-classify; `report` writes an HTML picture of jobs
//! and their retry chains (KPI curves, timeline); `--replay-*` runs the same parsing and
//! mapping on saved squeue/sacct/scontrol output.
//!
//! Modules: [`native`] (the state table), [`parse`] (command output to
//! rows), [`observe`] (rows to one observation per job), [`status`] (the
//! job's own verdict and log tails), [`backend`] (SSH or replay), [`poll`]
//! (one batched poll), [`watch`], [`logs`], [`cli`] (clap errors as one line:
//! the tao-cli crate).

pub mod backend;
pub mod cli;
pub mod deferred;
pub mod logs;
pub mod native;
pub mod observe;
pub mod parse;
pub mod poll;
pub mod reasons;
pub mod replay;
pub mod report;
pub mod status;
pub mod watch;

pub use cli::{run, Cli};
