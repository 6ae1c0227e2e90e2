//! Fuzz target `squeue_sacct`: see `properties::squeue_sacct` for what it checks.
#![no_main]

#[path = "../properties.rs"]
#[allow(dead_code)]
mod properties;

libfuzzer_sys::fuzz_target!(|data: &[u8]| properties::squeue_sacct(data));
