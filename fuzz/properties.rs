//! The properties the fuzz targets check, one function per target, shared
//! by the libFuzzer targets (`fuzz_targets/*.rs`) and by the regression
//! test that replays `fuzz/regressions/` and `fuzz/seeds/` under plain
//! `cargo test` (`man/tests/fuzz_regressions.rs`): each function panics
//! when a property fails.
//!
//! - [`jobline`]: any bytes into `tao_core::LineReader`: no panic; every
//!   non-blank input line (a UTF-8 byte-order mark opening the input is
//!   not part of line 1) is reported once, as a job line or an error,
//!   under its own 1-based number (nothing lost); every
//!   line it returns re-serialises (`JobLine::to_json`) to one line that
//!   parses back to the same fields (pass-through is lossless); line
//!   numbers increase; errors are one line with exit status 65 or 74.
//! - [`squeue_sacct`]: tao-poll's squeue (`-O`, legacy `-o`), sacct and
//!   `scontrol show job` parsers and the state mapper on any text: no
//!   panic; every row has a Slurm job id, and a row with an empty state is
//!   UNKNOWN.
//! - [`redact`]: `tao_secrets::Redactor` on any bytes (the first byte is the
//!   read size): no panic; an exact secret value never survives
//!   `redact_text`, `filter` or a lint preview, and lint flags it;
//!   `filter`'s output does not depend on how the input is split into
//!   reads; `redact_line` agrees with `redact_text` on one line without a
//!   PEM block.
//! - [`line_reader`]: `tao_core::LineReader` with a small line bound (the
//!   first byte), read through a small buffer (the second byte), on the
//!   rest of the input repeated (the third byte: up to 64 times, for long
//!   lines): no panic; every non-blank line is reported once under its
//!   number; a line longer than the bound is exactly a `longer than B
//!   bytes` error; a line within it gets the same answer as an unbounded
//!   reader gives it.
//! - [`hostlist`]: `tao_core::hostlist::expand` on any text with a limit
//!   from the first two bytes: no panic; an answer holds at most `limit`
//!   names, none empty; the answer does not depend on the limit except
//!   that a larger limit may turn `TooManyNames` into the names.
//! - [`classify`]: `tao_classify::classify` on an ERROR line built from the
//!   input (first line: the native state; the rest: evidence) always
//!   classifies, and only class infra is ever retried; the input parsed as
//!   a job line never panics.

use std::io::Read;
use std::sync::OnceLock;

use serde_json::json;
use tao_classify::{Catalogue, Options};
use tao_core::hostlist::{self, HostlistError};
use tao_core::{JobLine, LineReader};
use tao_poll::native::map_state;
use tao_poll::parse::{
    looks_like_job_id, parse_sacct, parse_scontrol, parse_squeue, parse_squeue_legacy,
};
use tao_secrets::Redactor;

/// See the module doc.
pub fn jobline(data: &[u8]) {
    // The lines a reader must report, by number: every line that is not
    // blank (a line that is not UTF-8 is not blank). Nothing is lost.
    let mut expected = Vec::new();
    let mut rest = data;
    let mut no = 0u64;
    while !rest.is_empty() {
        let end = rest
            .iter()
            .position(|&b| b == b'\n')
            .map_or(rest.len(), |i| i + 1);
        let (line, tail) = rest.split_at(end);
        rest = tail;
        no += 1;
        // A byte-order mark opening the input is not part of line 1.
        let line = match line.strip_prefix(tao_core::jobline::UTF8_BOM) {
            Some(rest) if no == 1 => rest,
            _ => line,
        };
        match std::str::from_utf8(line) {
            Ok(t) if t.trim().is_empty() => {}
            _ => expected.push(no),
        }
    }
    let mut reported = Vec::new();
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
                reported.push(line.line_no);
            }
            Ok(None) => break,
            Err(e) => {
                assert!(!e.to_string().contains('\n'), "multi-line error: {e}");
                assert!(
                    e.code() == 65 || e.code() == 74,
                    "unexpected exit {}",
                    e.code()
                );
                reported.push(reader.line_no());
            }
        }
    }
    assert_eq!(reported, expected, "lines reported (ok or error) by number");
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = JobLine::parse(text, 1);
    }
}

/// See the module doc.
pub fn line_reader(data: &[u8]) {
    if data.len() < 3 {
        return;
    }
    let bound = usize::from(data[0]) + 1;
    let cap = usize::from(data[1] % 64) + 1;
    let input = data[3..].repeat(usize::from(data[2] % 64) + 1);
    // Expected answers, line by line, from the unbounded reader.
    let mut expected: Vec<(u64, Option<bool>)> = Vec::new();
    let mut rest = &input[..];
    let mut no = 0u64;
    while !rest.is_empty() {
        let end = rest
            .iter()
            .position(|&b| b == b'\n')
            .map_or(rest.len(), |i| i + 1);
        let (line, tail) = rest.split_at(end);
        rest = tail;
        no += 1;
        let body = line.strip_suffix(b"\n").unwrap_or(line);
        let body = body.strip_suffix(b"\r").unwrap_or(body);
        if body.len() > bound {
            expected.push((no, None));
            continue;
        }
        // Read as line `no` is: only line 1 may open with a byte-order
        // mark to skip, so a later line follows a blank line 1 here.
        let alone = if no == 1 {
            line.to_vec()
        } else {
            [b"\n", line].concat()
        };
        let mut single = LineReader::new(&alone[..]);
        match single.next_line() {
            Ok(Some(_)) => expected.push((no, Some(true))),
            Ok(None) => {}
            Err(_) => expected.push((no, Some(false))),
        }
    }
    let r = std::io::BufReader::with_capacity(cap, &input[..]);
    let mut reader = LineReader::with_max_line(r, bound);
    let mut got: Vec<(u64, Option<bool>)> = Vec::new();
    for _ in 0..=input.len() {
        match reader.next_line() {
            Ok(Some(line)) => got.push((line.line_no, Some(true))),
            Ok(None) => break,
            Err(e) => {
                let msg = e.to_string();
                assert!(!msg.contains('\n'), "multi-line error: {msg}");
                let long = msg.contains(&format!("longer than {bound} bytes"));
                got.push((reader.line_no(), if long { None } else { Some(false) }));
            }
        }
    }
    assert_eq!(got, expected, "answers by line number (None: too long)");
}

/// See the module doc.
pub fn hostlist(data: &[u8]) {
    if data.len() < 2 {
        return;
    }
    let limit = usize::from(u16::from_le_bytes([data[0], data[1]])) + 1;
    let text = String::from_utf8_lossy(&data[2..]);
    let small = hostlist::expand(&text, limit);
    if let Ok(names) = &small {
        assert!(
            names.len() <= limit,
            "{} names over the limit {limit}",
            names.len()
        );
        assert!(names.iter().all(|n| !n.is_empty()), "an empty name");
    }
    let big = hostlist::expand(&text, hostlist::MAX_NAMES);
    match (&small, &big) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "the limit changed the names"),
        (Err(HostlistError::TooManyNames { .. }), _) => {}
        (Err(HostlistError::TooLong { .. }), Err(HostlistError::TooLong { .. })) => {}
        (Ok(a), Err(e)) => panic!(
            "{} names under {limit} but {e} under the larger limit",
            a.len()
        ),
        (Err(e), _) => panic!("unexpected error {e}"),
    }
    let _ = hostlist::summarize(big.as_deref().unwrap_or(&[]), 20);
}

/// See the module doc.
pub fn squeue_sacct(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    for parsed in [
        parse_squeue(&text),
        parse_squeue_legacy(&text),
        parse_sacct(&text),
        parse_scontrol(&text),
    ] {
        for row in &parsed.rows {
            assert!(
                looks_like_job_id(&row.job_id),
                "row with job id {:?}",
                row.job_id
            );
            // An empty State cell is kept: that job is UNKNOWN (case
            // sacct-empty-state), never another state.
            let m = map_state(&row.state);
            if row.state.trim().is_empty() {
                assert!(!m.known && m.state == tao_core::State::Unknown);
            }
        }
    }
    for word in text.split(['\n', '|']) {
        let m = map_state(word);
        if m.known {
            assert!(!m.name.is_empty());
        }
    }
}

/// A fake value of the real HF token format.
pub const SECRET: &[u8] = b"hf_FAKEfuzzFAKEfuzzFAKEfuzzFAKEfuzz12";

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

/// See the module doc.
pub fn redact(data: &[u8]) {
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
            assert!(
                !contains(f.preview.as_bytes(), SECRET),
                "preview shows the secret"
            );
        }
    }
}

fn catalogue() -> &'static Catalogue {
    static C: OnceLock<Catalogue> = OnceLock::new();
    C.get_or_init(|| Catalogue::builtin().expect("built-in catalogue"))
}

/// See the module doc.
pub fn classify(data: &[u8]) {
    let cat = catalogue();
    let opts = Options::default();
    let text = String::from_utf8_lossy(data);
    let mut lines = text.split('\n');
    let native = lines.next().unwrap_or("");
    let evidence: Vec<&str> = lines.collect();
    let (out, err) = evidence.split_at(evidence.len() / 2);
    let mut map = serde_json::Map::new();
    map.insert("id".into(), json!("tao-20261129-fuzz01"));
    map.insert("state".into(), json!("ERROR"));
    map.insert("attempt".into(), json!(1 + data.len() % 4));
    map.insert(
        "slurm".into(),
        json!({"native_state": native, "exit_code": "1:0", "nodes": "n1", "reason": "None"}),
    );
    map.insert(
        "evidence".into(),
        json!({"out": {"first_line": 1, "lines": out}, "err": {"first_line": 1, "lines": err}}),
    );
    let mut line = JobLine::from_map(map);
    let c = tao_classify::classify(&mut line, cat, &opts)
        .expect("a well-formed ERROR line classifies")
        .expect("an ERROR line gets a classification");
    let v = serde_json::to_value(&c).expect("classification serialises");
    if v["retry"] == json!(true) {
        assert_eq!(
            v["class"],
            json!("infra"),
            "retry of a non-infra class: {v}"
        );
    }
    for l in text.lines() {
        let _ = cat.match_line(l.as_bytes());
    }
    if let Ok(s) = std::str::from_utf8(data) {
        if let Ok(mut l) = JobLine::parse(s, 1) {
            let _ = tao_classify::classify(&mut l, cat, &opts);
        }
    }
}
