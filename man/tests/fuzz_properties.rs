//! The fuzz targets' properties (`fuzz/properties.rs`: never a panic,
//! nothing lost, pass-through lossless, no secret survives, output
//! independent of read sizes; see its module doc for each target's list)
//! on *generated* inputs under plain `cargo test`, so they hold in CI and
//! not only on the saved seeds (`fuzz_regressions.rs`) or when someone
//! runs `make fuzz`.
//!
//! Source of the promise: the charter ("treat every promise (no secret
//! leaks, byte for byte, never twice, never a panic) as a property over
//! generated inputs") and tao-jobline(7) (a bad line is one error line
//! with a documented exit status, never a crash).
//!
//! Inputs: a seed of the target (`fuzz/seeds/<target>/`) mutated by up to
//! eight edits (insert random bytes, including invalid UTF-8 and `\n`;
//! delete a range; duplicate a range; overwrite a byte), or plain random
//! bytes; 384 cases per target. A failure is shrunk by proptest and saved
//! in `fuzz_properties.proptest-regressions`; copy the minimal input to
//! `fuzz/regressions/<target>/` so the regression test keeps it.

#[path = "../../fuzz/properties.rs"]
mod properties;

use std::path::Path;

use proptest::prelude::*;

fn seeds(target: &str) -> Vec<Vec<u8>> {
    let dir = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../fuzz/seeds")).join(target);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let out: Vec<Vec<u8>> = files.iter().map(|p| std::fs::read(p).unwrap()).collect();
    assert!(!out.is_empty(), "no seeds in {}", dir.display());
    out
}

/// One edit of a byte string; positions are fractions of its length.
#[derive(Debug, Clone)]
enum Edit {
    Insert(f64, Vec<u8>),
    Delete(f64, usize),
    Duplicate(f64, usize),
    Overwrite(f64, u8),
}

fn edit() -> impl Strategy<Value = Edit> {
    // Bytes the parsers care about, plus any byte at all (invalid UTF-8).
    let byte = prop_oneof![
        prop::sample::select(b"\n\t |:=,\"\\{}[]()-0123456789".to_vec()),
        any::<u8>(),
    ];
    prop_oneof![
        (0.0..1.0f64, prop::collection::vec(byte, 1..24)).prop_map(|(p, b)| Edit::Insert(p, b)),
        (0.0..1.0f64, 1usize..32).prop_map(|(p, n)| Edit::Delete(p, n)),
        (0.0..1.0f64, 1usize..64).prop_map(|(p, n)| Edit::Duplicate(p, n)),
        (0.0..1.0f64, any::<u8>()).prop_map(|(p, b)| Edit::Overwrite(p, b)),
    ]
}

fn apply(mut data: Vec<u8>, edits: &[Edit]) -> Vec<u8> {
    for e in edits {
        let at = |p: f64, len: usize| ((p * len as f64) as usize).min(len);
        match e {
            Edit::Insert(p, b) => {
                let i = at(*p, data.len());
                data.splice(i..i, b.iter().copied());
            }
            Edit::Delete(p, n) => {
                let i = at(*p, data.len());
                let j = (i + n).min(data.len());
                data.drain(i..j);
            }
            Edit::Duplicate(p, n) => {
                let i = at(*p, data.len());
                let j = (i + n).min(data.len());
                let copy = data[i..j].to_vec();
                data.splice(j..j, copy);
            }
            Edit::Overwrite(p, b) => {
                if !data.is_empty() {
                    let i = at(*p, data.len() - 1);
                    data[i] = *b;
                }
            }
        }
    }
    data
}

/// A mutated seed of `target` (3 in 4) or random bytes (1 in 4).
fn input(target: &'static str) -> impl Strategy<Value = Vec<u8>> {
    let seeds = seeds(target);
    prop_oneof![
        3 => (prop::sample::select(seeds), prop::collection::vec(edit(), 0..8))
            .prop_map(|(s, e)| apply(s, &e)),
        1 => prop::collection::vec(any::<u8>(), 0..512),
    ]
}

proptest! {
    #![proptest_config(tao_core::testing::config(384))]

    /// `properties::jobline` (tao-core's LineReader and JobLine round trip).
    #[test]
    fn jobline_property_on_generated_input(data in input("jobline")) {
        properties::jobline(&data);
    }

    /// `properties::squeue_sacct` (tao-poll's squeue/sacct/scontrol parsers).
    #[test]
    fn squeue_sacct_property_on_generated_input(data in input("squeue_sacct")) {
        properties::squeue_sacct(&data);
    }

    /// `properties::redact` (tao-secrets: no secret survives, read sizes
    /// do not change the output).
    #[test]
    fn redact_property_on_generated_input(data in input("redact")) {
        properties::redact(&data);
    }

    /// `properties::classify` (tao-classify always classifies; only infra
    /// is retried).
    #[test]
    fn classify_property_on_generated_input(data in input("classify")) {
        properties::classify(&data);
    }

    /// `properties::line_reader` (a bounded LineReader agrees with an
    /// unbounded one on every line within the bound).
    #[test]
    fn line_reader_property_on_generated_input(data in input("line_reader")) {
        properties::line_reader(&data);
    }

    /// `properties::hostlist` (expand never panics; the limit only turns
    /// TooManyNames into names).
    #[test]
    fn hostlist_property_on_generated_input(data in input("hostlist")) {
        properties::hostlist(&data);
    }
}
