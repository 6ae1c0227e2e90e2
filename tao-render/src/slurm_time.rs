//! Slurm time strings: the one parser and printer lives in
//! [`tao_core::slurm_time`] (tao-record checks `--time` with it too); this
//! module re-exports it under its old path.

pub use tao_core::slurm_time::*;
