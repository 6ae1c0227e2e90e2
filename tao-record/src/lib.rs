//! The local job record store of tao-slurm: mint ids, bind each job's
//! directories on shared storage, apply state transitions and keep a
//! timestamped history, list and filter records.
//!
//! Other tools look records up read-only through [`Store`]
//! (`Store::open_default()?.get(id)?`). The `tao-record` binary is a thin
//! wrapper over [`cli::run`].

pub mod cli;
pub mod machine;
pub mod mark;
pub mod open;
pub mod retry;
pub mod validate;

pub use tao_store::{default_dir, query, store, Record, Store};
