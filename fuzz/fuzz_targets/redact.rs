//! tao-redact's filter: `Redactor::redact_line`, `redact_text`, `filter`
//! and `lint` on any bytes.
//!
//! Properties: no panic; an exact secret value never survives
//! (`redact_text`, `filter`); `filter`'s output does not depend on how the
//! input is split into reads (the streaming window must not miss or
//! double-mask what a whole read would); `redact_line` on a single line
//! without a PEM block agrees with `redact_text`.
#![no_main]

use std::io::Read;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use tao_redact::Redactor;

/// A fake value of the real HF token format.
const SECRET: &[u8] = b"hf_FAKEfuzzFAKEfuzzFAKEfuzzFAKEfuzz12";

fn redactor() -> &'static Redactor {
    static R: OnceLock<Redactor> = OnceLock::new();
    R.get_or_init(|| {
        Redactor::builder()
            .secret_value("HF_TOKEN", SECRET)
            .build()
            .expect("built-in rules compile")
    })
}

/// A reader that hands out the input in chunks of `step` bytes.
struct Chunked<'a> {
    data: &'a [u8],
    step: usize,
}

impl Read for Chunked<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.step.min(buf.len()).min(self.data.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

fuzz_target!(|data: &[u8]| {
    let (step, input) = match data.split_first() {
        Some((s, rest)) => (usize::from(*s).max(1), rest),
        None => (1, data),
    };
    let r = redactor();
    let text = r.redact_text(input);
    let mut whole = Vec::new();
    r.filter(input, &mut whole).expect("filter to a Vec");
    let mut chunked = Vec::new();
    r.filter(Chunked { data: input, step }, &mut chunked)
        .expect("filter to a Vec");
    assert_eq!(whole, chunked, "filter output depends on read size {step}");
    if contains(input, SECRET) {
        assert!(!contains(&text, SECRET), "redact_text left the secret");
        assert!(!contains(&whole, SECRET), "filter left the secret");
    }
    if !input.contains(&b'\n') && !contains(input, b"-----BEGIN") {
        let line = r.redact_line(input);
        assert_eq!(&line[..], &text[..], "redact_line and redact_text disagree");
    }
    if let Ok(s) = std::str::from_utf8(input) {
        let lint = r.lint(s);
        if contains(input, SECRET) {
            assert!(!lint.ok, "lint passed a script with the secret");
        }
        for f in &lint.findings {
            assert!(!contains(f.preview.as_bytes(), SECRET), "preview shows the secret");
        }
    }
});
