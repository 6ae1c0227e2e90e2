//! Fuzz target `line_reader`: see `properties::line_reader` for what it checks.
#![no_main]

#[path = "../properties.rs"]
#[allow(dead_code)]
mod properties;

libfuzzer_sys::fuzz_target!(|data: &[u8]| properties::line_reader(data));
