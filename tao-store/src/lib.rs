//! The local job record store of tao-slurm, shared by the tools: the state
//! directory, one record file per job, the read-side queries (list, the
//! retry chain, gc) and the file lock and atomic write every local state
//! file of the project uses.
//!
//! Tools look records up through [`Store`]
//! (`Store::open_default()?.get(id)?`); tao-record is the one tool that
//! opens and marks records.

pub mod file;
pub mod query;
pub mod store;

pub use store::{default_dir, Record, Store};
