//! Fuzz target `hostlist`: see `properties::hostlist` for what it checks.
#![no_main]

#[path = "../properties.rs"]
#[allow(dead_code)]
mod properties;

libfuzzer_sys::fuzz_target!(|data: &[u8]| properties::hostlist(data));
