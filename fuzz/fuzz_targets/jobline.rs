//! The job-line reader: any bytes into `tao_core::LineReader`.
//!
//! Properties: no panic; every line it returns re-serialises
//! (`JobLine::to_json`) to text that parses back to the same fields
//! (pass-through of unknown fields is lossless); line numbers increase.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tao_core::{JobLine, LineReader};

fuzz_target!(|data: &[u8]| {
    let mut reader = LineReader::new(data);
    let mut last = 0u64;
    // Every line of the input is read at most once; the bound only guards
    // against a reader that would stop advancing.
    for _ in 0..=data.len() {
        match reader.next_line() {
            Ok(Some(line)) => {
                assert!(line.line_no > last, "line numbers go backwards");
                last = line.line_no;
                let text = line.to_json();
                assert!(!text.contains('\n'), "a job line spans lines: {text:?}");
                let again = JobLine::parse(&text, line.line_no).expect("re-parse own output");
                assert_eq!(again.fields, line.fields, "round trip changed the line");
            }
            Ok(None) => break,
            Err(e) => {
                // A malformed line: one-line message, and the reader goes on.
                assert!(!e.to_string().contains('\n'), "multi-line error: {e}");
                assert!(e.code() == 65 || e.code() == 74, "unexpected exit {}", e.code());
            }
        }
    }
    // Any UTF-8 text as one line.
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = JobLine::parse(text, 1);
    }
});
