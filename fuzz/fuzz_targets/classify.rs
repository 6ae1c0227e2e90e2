//! tao-classify's public API: `classify` on job lines built from the input
//! (a native state and evidence lines), and on the input parsed as a job
//! line; the catalogue's line matcher on each input line.
//!
//! Properties: no panic; an ERROR line with a string `slurm.native_state`
//! and well-formed evidence is always classified (Ok(Some)); a retry is
//! only ever decided for class infra.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use serde_json::json;
use tao_classify::{classify, Catalogue, Options};
use tao_core::JobLine;

fn catalogue() -> &'static Catalogue {
    static C: OnceLock<Catalogue> = OnceLock::new();
    C.get_or_init(|| Catalogue::builtin().expect("built-in catalogue"))
}

fuzz_target!(|data: &[u8]| {
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
    let c = classify(&mut line, cat, &opts)
        .expect("a well-formed ERROR line classifies")
        .expect("an ERROR line gets a classification");
    let v = serde_json::to_value(&c).expect("classification serialises");
    if v["retry"] == json!(true) {
        assert_eq!(v["class"], json!("infra"), "retry of a non-infra class: {v}");
    }
    for l in text.lines() {
        let _ = cat.match_line(l.as_bytes());
    }
    if let Ok(s) = std::str::from_utf8(data) {
        if let Ok(mut l) = JobLine::parse(s, 1) {
            let _ = classify(&mut l, cat, &opts);
        }
    }
});
