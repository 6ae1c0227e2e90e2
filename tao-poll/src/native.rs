//! Slurm's native job states: the one table lives in tao-core
//! ([`tao_core::state::native`]), so tao-poll and tao-submit give one
//! answer for one native state. Re-exported here for tao-poll's callers.

pub use tao_core::state::native::*;
