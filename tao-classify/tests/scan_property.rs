//! tao-classify's streaming scanner (`scan::scan_reader`) as a property
//! over generated logs: any bytes (invalid UTF-8, CR, NUL, blank lines),
//! read in any sizes, never panic and find the same deciding line.
//!
//! Promise and source: src/scan.rs module doc (a log of "any bytes, any
//! size" is streamed "with bounded memory"; line numbers come from
//! counting newlines) and the charter ("never a panic", every promise a
//! property over generated inputs). Logs mix the lines of the evidence
//! corpus (tests/corpus/*.log, lines the catalogue's rules match) with
//! generated noise; the scanner's answer must not depend on how the
//! reader splits the input, and on UTF-8 logs without CR it must agree
//! with `scan::scan_lines` (the in-memory scan of `--evidence` tails) on
//! the rule, the line number and the line. 64 cases (a debug build runs
//! the catalogue at about 70 ms a case); a line longer than
//! the 1 MiB block: 6 cases.

use std::io::Read;
use std::sync::OnceLock;

use proptest::prelude::*;
use tao_classify::catalogue::Catalogue;
use tao_classify::scan::{scan_lines, scan_reader, Best, BLOCK};

fn cat() -> &'static Catalogue {
    static C: OnceLock<Catalogue> = OnceLock::new();
    C.get_or_init(|| Catalogue::builtin().unwrap())
}

/// The lines of the evidence corpus.
fn corpus_lines() -> Vec<String> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/corpus");
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "log") {
            let text = std::fs::read(&p).unwrap();
            out.extend(
                String::from_utf8_lossy(&text)
                    .lines()
                    .filter(|l| !l.trim().is_empty())
                    .map(str::to_string),
            );
        }
    }
    assert!(out.len() > 20, "corpus lines: {}", out.len());
    out
}

/// A reader that hands out the sizes of `steps` in turn (at least 1 byte).
struct Steps<'a> {
    data: &'a [u8],
    steps: Vec<usize>,
    i: usize,
}

impl Read for Steps<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let step = self.steps[self.i % self.steps.len()].max(1);
        self.i += 1;
        let n = step.min(buf.len()).min(self.data.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

fn summary(b: &Best) -> Option<(usize, u64, Vec<u8>, Option<String>)> {
    b.0.as_ref()
        .map(|h| (h.rule, h.line, h.raw.clone(), h.node.clone()))
}

/// One log line (no `\n`): a corpus line, noise, or raw bytes.
fn line(corpus: Vec<String>) -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        3 => prop::sample::select(corpus).prop_map(String::into_bytes),
        2 => "[a-zA-Z0-9 :=/._\u{e9}\u{1f600}-]{0,60}".prop_map(String::into_bytes),
        1 => prop::collection::vec(any::<u8>().prop_filter("no newline", |b| *b != b'\n'), 0..40),
        1 => Just(Vec::new()),
    ]
}

fn log() -> impl Strategy<Value = Vec<u8>> {
    (
        prop::collection::vec(line(corpus_lines()), 0..40),
        any::<bool>(),
    )
        .prop_map(|(lines, last_nl)| {
            let mut out = lines.join(&b'\n');
            if last_nl {
                out.push(b'\n');
            }
            out
        })
}

proptest! {
    #![proptest_config(tao_core::testing::config(64))]

    /// See the module doc.
    #[test]
    fn scan_does_not_depend_on_read_sizes(
        data in log(),
        steps in prop::collection::vec(1usize..64, 1..6),
    ) {
        let whole = scan_reader(cat(), "log", &data[..]).unwrap();
        let split = scan_reader(cat(), "log", Steps { data: &data, steps, i: 0 }).unwrap();
        prop_assert_eq!(summary(&split), summary(&whole));
        if let Some(h) = &whole.0 {
            prop_assert!(h.line >= 1);
            prop_assert!(!h.raw.contains(&b'\n'));
        }
        if let Ok(text) = std::str::from_utf8(&data) {
            if !text.contains('\r') {
                let mem = scan_lines(cat(), "log", 1, text.split('\n'));
                prop_assert_eq!(summary(&mem), summary(&whole), "{:?}", text);
            }
        }
    }
}

proptest! {
    #![proptest_config(tao_core::testing::config(6))]

    /// A line longer than the block, with a corpus line after it: no
    /// panic, and the deciding line keeps its number (the over-long line
    /// counts as one).
    #[test]
    fn a_line_longer_than_the_block_keeps_the_numbers(
        fill in any::<u8>().prop_filter("no newline", |b| *b != b'\n'),
        extra in 0usize..3000,
        after in prop::sample::select(corpus_lines()),
    ) {
        let mut data = vec![fill; BLOCK + extra];
        data.push(b'\n');
        data.extend_from_slice(after.as_bytes());
        data.push(b'\n');
        let best = scan_reader(cat(), "log", &data[..]).unwrap();
        let alone = scan_lines(cat(), "log", 2, [after.as_str()]);
        if let Some(h) = &alone.0 {
            let b = best.0.as_ref().expect("the corpus line is found after the long line");
            if b.line == 2 {
                prop_assert_eq!(b.rule, h.rule);
                prop_assert_eq!(&b.raw, &h.raw);
            } else {
                // The long line itself won (a rule that matches the fill
                // byte, e.g. no keyword): it is line 1.
                prop_assert_eq!(b.line, 1);
            }
        }
    }
}
