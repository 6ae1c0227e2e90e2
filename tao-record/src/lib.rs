//! tao-record: open job records (mint ids, bind each job's directories on
//! shared storage), apply state transitions and keep a timestamped
//! history, list and filter records.
//!
//! The store itself (files, locks, queries) is the shared `tao_store`
//! crate, re-exported here under its old paths (`store`, `query`,
//! [`Store`], [`Record`], [`default_dir`]) for this crate's modules; other
//! tools link `tao_store`, never this crate. The `tao-record` binary is a
//! thin wrapper over [`cli::run`].

pub mod cli;
pub mod machine;
pub mod mark;
pub mod open;
pub mod retry;
pub mod summary;
pub mod validate;

pub use tao_store::{default_dir, query, store, Record, Store};
