//! The fuzz targets' properties (`fuzz/properties.rs`, shared with the
//! libFuzzer targets) on every saved input, under plain `cargo test`: the
//! seeds (`fuzz/seeds/<target>/`) and the crashes kept as regressions
//! (`fuzz/regressions/<target>/`). A regression listed in
//! `fuzz/regressions/OPEN` (its fix is pending in another crate) must
//! still fail; once it passes, this test fails until the line is removed.
//!
//! It lives here because `fuzz/` is not a member of the workspace (its
//! instrumented builds need their own), and this crate already depends on
//! the tools' libraries.

#[path = "../../fuzz/properties.rs"]
mod properties;

use std::collections::BTreeMap;
use std::panic::catch_unwind;
use std::path::Path;

type Property = fn(&[u8]);

const TARGETS: [(&str, Property); 6] = [
    ("jobline", properties::jobline),
    ("squeue_sacct", properties::squeue_sacct),
    ("redact", properties::redact),
    ("classify", properties::classify),
    ("line_reader", properties::line_reader),
    ("hostlist", properties::hostlist),
];

fn fuzz_dir() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../fuzz"))
}

fn open_list() -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(fuzz_dir().join("regressions/OPEN")).unwrap_or_default();
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (k, v) = l.split_once(char::is_whitespace).unwrap_or((l, ""));
            (k.to_string(), v.trim().to_string())
        })
        .collect()
}

#[test]
fn saved_inputs_keep_their_properties() {
    let open = open_list();
    let mut problems = Vec::new();
    let mut ran = 0;
    let mut still_open = Vec::new();
    for (target, property) in TARGETS {
        for kind in ["seeds", "regressions"] {
            let dir = fuzz_dir().join(kind).join(target);
            let mut files: Vec<_> = std::fs::read_dir(&dir)
                .into_iter()
                .flatten()
                .map(|e| e.unwrap().path())
                .collect();
            files.sort();
            for path in files {
                let data = std::fs::read(&path).unwrap();
                let key = format!("{target}/{}", path.file_name().unwrap().to_string_lossy());
                let passed = catch_unwind(|| property(&data)).is_ok();
                ran += 1;
                match (passed, kind == "regressions" && open.contains_key(&key)) {
                    (true, false) => {}
                    (false, true) => still_open.push(key),
                    (false, false) => problems.push(format!("{kind}/{key} fails its property")),
                    (true, true) => problems.push(format!(
                        "regressions/{key} passes now: delete its line from fuzz/regressions/OPEN"
                    )),
                }
            }
        }
    }
    for key in &still_open {
        eprintln!("still open (fix pending elsewhere): {key}: {}", open[key]);
    }
    assert!(
        ran >= 16,
        "only {ran} saved inputs found under {}",
        fuzz_dir().display()
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
