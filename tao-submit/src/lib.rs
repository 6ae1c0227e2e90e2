//! tao-submit: every scheduler *mutation* of tao-slurm, over one SSH
//! session per login host: staging, sbatch (held until the log directory
//! exists), reconciliation of an ambiguous submit, cancel, and preflight.
//!
//! The binary is a thin wrapper over [`run`]; the actions live in
//! [`submit`], [`cancel`] and [`preflight`]; [`stage`] writes a job's files
//! on shared storage; [`sched`] reads what the mutations depend on
//! (jobs by name, node names, sbatch's reply); [`sessions`] keeps the SSH
//! sessions of one run; [`image`] makes sure a pyxis job's `.sqsh` exists
//! or is being converted on a CPU partition first.

pub mod cancel;
pub mod cli;
pub mod conn;
pub mod image;
pub mod preflight;
pub mod probe;
pub mod sched;
pub mod sessions;
pub mod stage;
pub mod submit;

pub use cli::{run, Cli};

/// Tool name in `observed_by` and `error.tool`.
pub const TOOL: &str = "tao-submit";
