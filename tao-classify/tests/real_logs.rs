//! The cases of `tests/cases/classify-real-logs.jsonl` (copied from the
//! project's shared cases): excerpts of real failure logs
//! from public threads, each fed as a FAILED job's evidence (the `err` tail
//! of a job line as `tao-poll --evidence` writes it), asserting the class
//! and the retry decision. One test per case, named after it. They stand for
//! kinds (issue 14); the corpus under `corpus/real/` checks the kinds on
//! many more lines (`make eval`).

use serde_json::{json, Value};
use tao_classify::{classify, Catalogue, Options};
use tao_core::JobLine;

const CASES: &str = include_str!("cases/classify-real-logs.jsonl");

fn check(case: &str) {
    let v: Value = CASES
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|v| v["case"] == case)
        .unwrap_or_else(|| panic!("no case {case}"));
    let text = v["text"].as_str().unwrap();
    let line = json!({
        "id": format!("tao-20261201-{case}"),
        "state": "ERROR",
        "slurm": {"native_state": "FAILED", "exit_code": "1:0", "nodes": "node001"},
        "attempt": 1,
        "evidence": {"out": {"first_line": 1, "lines": []},
                     "err": {"first_line": 1, "lines": text.lines().collect::<Vec<_>>()}},
    });
    let mut line = JobLine::parse(&line.to_string(), 1).unwrap();
    let cat = Catalogue::builtin().unwrap();
    let c = classify(&mut line, &cat, &Options::default())
        .unwrap()
        .unwrap();
    assert_eq!(
        (c.class.as_str(), c.retry),
        (
            v["expect_class"].as_str().unwrap(),
            v["expect_retry"].as_bool().unwrap()
        ),
        "{case}: got {} by {} ({}); expected {} because {}",
        c.subclass,
        c.rule,
        c.reason,
        v["expect_subclass"],
        v["why"]
    );
}

#[test]
fn every_case_of_the_file_has_a_test() {
    let names: Vec<String> = CASES
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["case"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    let tested = [
        "real-log-01",
        "real-log-02",
        "real-log-03",
        "real-log-04",
        "real-log-05",
        "real-log-06",
        "real-log-07",
        "real-log-08",
        "real-log-09",
        "real-log-10",
    ];
    assert_eq!(names, tested);
}

#[test]
fn real_log_01_nccl_connect_refused() {
    check("real-log-01");
}

#[test]
fn real_log_02_xid45_caused_by_nvlink_xid() {
    check("real-log-02");
}

#[test]
fn real_log_03_pcie_aer_fatal() {
    check("real-log-03");
}

#[test]
fn real_log_04_nvlink_error_in_runtime_error() {
    check("real-log-04");
}

#[test]
fn real_log_05_preemption_requeue_after_sigusr2() {
    check("real-log-05");
}

#[test]
fn real_log_06_pyxis_enroot_runtime_on_node() {
    check("real-log-06");
}

#[test]
fn real_log_07_rendezvous_reset() {
    check("real-log-07");
}

#[test]
fn real_log_08_nan_loss_guard() {
    check("real-log-08");
}

#[test]
fn real_log_09_nvml_gpu_lost() {
    check("real-log-09");
}

#[test]
fn real_log_10_argument_validation_assertion() {
    check("real-log-10");
}

/// The corpus of real excerpts (`corpus/real`, `make eval`) is valid: every
/// record parses, ids and texts are unique, and there are at least 400.
/// On the dev split only, every line a rule's regex matches also holds one
/// of the rule's keywords (else the fast path would miss it).
#[test]
fn real_corpus_is_valid_and_dev_lines_never_match_without_a_keyword() {
    use tao_classify::eval::{load_dir, split_of, Split};
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/real");
    let records = load_dir(&dir).unwrap();
    assert!(records.len() >= 400, "only {} records", records.len());
    let cat = Catalogue::builtin().unwrap();
    let mut bad = Vec::new();
    for r in records.iter().filter(|r| split_of(&r.id) == Split::Dev) {
        for line in r.text.lines() {
            for rule in cat.rules() {
                if rule.regex_matches(line.as_bytes()) && !rule.keyword_in(line.as_bytes()) {
                    bad.push(format!("{}: {} matches {line:?}", r.id, rule.spec.id));
                }
            }
        }
    }
    assert!(bad.is_empty(), "{bad:#?}");
}
