//! The labelled corpus (issue 6, "Done when"): log excerpts in the real
//! formats under `tests/corpus/`, each headed by
//! `#! state=<native> class=<expected> retry=<bool> rule=<expected rule>`.
//! Every excerpt is classified as the evidence tail of an ERROR job line.
//! Asserted: at least 60 excerpts; no program fault is ever marked for
//! retry; at least 95% of the rest have the expected class and retry.
//! (The expected rule is reported when it differs, but does not count.)

use std::collections::BTreeMap;

use serde_json::json;
use tao_classify::{classify, Catalogue, Options};
use tao_core::JobLine;

struct Case {
    name: String,
    state: String,
    class: String,
    retry: bool,
    rule: String,
    lines: Vec<String>,
}

fn load() -> Vec<Case> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).unwrap();
            let mut lines = text.lines();
            let header = lines.next().unwrap();
            let labels: BTreeMap<&str, &str> = header
                .strip_prefix("#! ")
                .unwrap_or_else(|| panic!("{}: no #! header", path.display()))
                .split_whitespace()
                .map(|kv| kv.split_once('=').unwrap())
                .collect();
            Case {
                name: path.file_name().unwrap().to_string_lossy().into_owned(),
                state: labels["state"].to_string(),
                class: labels["class"].to_string(),
                retry: labels["retry"] == "true",
                rule: labels["rule"].to_string(),
                lines: lines.map(str::to_string).collect(),
            }
        })
        .collect()
}

#[test]
fn labelled_corpus_is_classified_safely_and_well() {
    let cases = load();
    assert!(cases.len() >= 60, "only {} excerpts", cases.len());
    let cat = Catalogue::builtin().unwrap();
    let opts = Options::default();
    let (mut right, mut program_retried) = (0usize, Vec::new());
    let mut wrong = Vec::new();
    let mut rule_diffs = Vec::new();
    for case in &cases {
        let value = json!({
            "id": "tao-20261129-corpus",
            "state": "ERROR",
            "slurm": {"native_state": case.state, "exit_code": "1:0", "nodes": "n1"},
            "attempt": 1,
            "evidence": {"out": {"first_line": 1, "lines": []}, "err": {"first_line": 1, "lines": case.lines}},
        });
        let mut line = JobLine::parse(&value.to_string(), 1).unwrap();
        let c = classify(&mut line, &cat, &opts).unwrap().unwrap();
        let class = c.class.as_str();
        if case.class == "program" && c.retry {
            program_retried.push(case.name.clone());
        }
        if class == case.class && c.retry == case.retry {
            right += 1;
        } else {
            wrong.push(format!(
                "{}: got {class}/{} by {} ({})",
                case.name, c.retry, c.rule, c.reason
            ));
        }
        if c.rule != case.rule {
            rule_diffs.push(format!(
                "{}: expected rule {}, got {}",
                case.name, case.rule, c.rule
            ));
        }
    }
    for w in &wrong {
        eprintln!("WRONG {w}");
    }
    for d in &rule_diffs {
        eprintln!("RULE  {d}");
    }
    assert!(
        program_retried.is_empty(),
        "program faults marked for retry: {program_retried:?}"
    );
    let share = right as f64 / cases.len() as f64;
    eprintln!(
        "corpus: {right}/{} right ({:.1}%), {} rule differences",
        cases.len(),
        share * 100.0,
        rule_diffs.len()
    );
    assert!(share >= 0.95, "only {right}/{} right", cases.len());
}

#[test]
fn corpus_has_every_family_the_issue_names() {
    let names: Vec<String> = load().into_iter().map(|c| c.name).collect();
    for family in [
        "xid",
        "nccl",
        "cuda",
        "slurm",
        "srun",
        "enroot",
        "pyxis",
        "rdzv",
        "lustre",
        "oom",
        "hydra",
        "keyerror",
        "dataset",
        "permission",
        "timeout",
        "ib",
    ] {
        assert!(
            names.iter().any(|n| n.contains(family)),
            "no corpus excerpt for {family}"
        );
    }
}

/// The fast path only tries a rule on lines holding one of its keywords, so
/// a regex match without a keyword would be silently lost: no corpus line
/// may do that.
#[test]
fn every_regex_match_in_the_corpus_contains_a_keyword() {
    let cat = Catalogue::builtin().unwrap();
    let mut missing = Vec::new();
    for case in load() {
        for line in &case.lines {
            for rule in cat.rules() {
                if rule.regex_matches(line.as_bytes()) && !rule.keyword_in(line.as_bytes()) {
                    missing.push(format!(
                        "{}: {} matches {line:?} without a keyword",
                        case.name, rule.spec.id
                    ));
                }
            }
        }
    }
    assert!(missing.is_empty(), "{missing:#?}");
}
