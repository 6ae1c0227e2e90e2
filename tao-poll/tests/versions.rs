//! The parsers on what Slurm 22.05 and 24.11 print for the same jobs
//! (`tests/replays/slurm-<version>-capture/`, saved by
//! tests/cluster/capture-replays; replays.rs checks the states tao-poll
//! decides from them). Here: every line of every command reads, the `-o`
//! fallback agrees with `-O`, and the differences between the versions are
//! named.

use std::path::PathBuf;

use tao_poll::parse::{self, Row};

const VERSIONS: &[&str] = &["22.05", "24.11"];

fn read(v: &str, case: &str, f: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/replays")
        .join(format!("slurm-{v}-{case}"))
        .join(f);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn key(r: &Row) -> (String, String, Option<String>) {
    (r.job_id.clone(), r.state.clone(), r.nodes.clone())
}

#[test]
fn every_line_of_every_command_reads_on_both_versions() {
    for v in VERSIONS {
        for (f, p) in [
            (
                "squeue.txt",
                parse::parse_squeue as fn(&str) -> parse::Parsed,
            ),
            ("squeue-legacy.txt", parse::parse_squeue_legacy),
            ("sacct.txt", parse::parse_sacct),
        ] {
            let text = read(v, "capture", f);
            let got = p(&text);
            assert!(got.issues.is_empty(), "{v} {f}: {:?}", got.issues);
            assert_eq!(got.rows.len(), text.lines().count(), "{v} {f}");
        }
        let sc = read(v, "no-accounting", "scontrol.txt");
        let got = parse::parse_scontrol(&sc);
        assert!(got.issues.is_empty(), "{v} scontrol: {:?}", got.issues);
        assert_eq!(got.rows.len(), sc.lines().count(), "{v} scontrol");
    }
}

#[test]
fn squeue_o_fallback_agrees_with_capital_o_on_both_versions() {
    for v in VERSIONS {
        let new = parse::parse_squeue(&read(v, "capture", "squeue.txt"));
        let old = parse::parse_squeue_legacy(&read(v, "capture", "squeue-legacy.txt"));
        let a: Vec<_> = new.rows.iter().map(key).collect();
        let b: Vec<_> = old.rows.iter().map(key).collect();
        assert_eq!(a, b, "{v}");
        // -O has the restart count, -o does not.
        assert!(new.rows.iter().all(|r| r.restart_count.is_some()), "{v}");
    }
}

/// The sacct row of `job_id` (as shown).
fn sacct_row(v: &str, job_id: &str) -> Option<Row> {
    parse::parse_sacct(&read(v, "capture", "sacct.txt"))
        .rows
        .into_iter()
        .find(|r| r.job_id == job_id)
}

#[test]
fn sacct_prints_a_het_job_per_component_on_22_05_and_as_one_row_on_24_11() {
    let ids = |v: &str| read(v, "capture", "ids");
    let het_22 = ids("22.05").lines().nth(2).unwrap().to_string();
    let het_24 = ids("24.11").lines().nth(2).unwrap().to_string();
    assert!(sacct_row("22.05", &format!("{het_22}+0")).is_some());
    assert!(sacct_row("22.05", &format!("{het_22}+1")).is_some());
    assert!(sacct_row("22.05", &het_22).is_none());
    assert!(sacct_row("24.11", &format!("{het_24}+0")).is_none());
    assert_eq!(sacct_row("24.11", &het_24).unwrap().state, "CANCELLED by 0");
    // squeue lists the components on both.
    for (v, id) in [("22.05", &het_22), ("24.11", &het_24)] {
        let q = parse::parse_squeue(&read(v, "capture", "squeue.txt"));
        assert!(q.rows.iter().any(|r| r.job_id == format!("{id}+1")), "{v}");
    }
}

#[test]
fn sacct_reason_of_a_held_job_is_none_on_24_11() {
    // The held job is the 8th id on 22.05 (no node failure there), the
    // 9th on 24.11. squeue says JobHeldUser on both.
    let held = |v: &str, n: usize| {
        read(v, "capture", "ids")
            .lines()
            .nth(n)
            .unwrap()
            .to_string()
    };
    let (h22, h24) = (held("22.05", 6), held("24.11", 7));
    assert_eq!(
        sacct_row("22.05", &h22).unwrap().reason.as_deref(),
        Some("JobHeldUser")
    );
    let r24 = sacct_row("24.11", &h24).unwrap();
    assert_eq!(r24.state, "PENDING");
    assert!(
        matches!(r24.reason.as_deref(), None | Some("None")),
        "{r24:?}"
    );
}

#[test]
fn sacct_node_fail_exit_code_is_1_on_24_11() {
    let nf = read("24.11", "capture", "ids")
        .lines()
        .nth(4)
        .unwrap()
        .to_string();
    let r = sacct_row("24.11", &nf).unwrap();
    assert_eq!(
        (r.state.as_str(), r.exit_code.as_deref()),
        ("NODE_FAIL", Some("1:0"))
    );
    // 22.05 (replays/local-22.05-mixed, job 37): NODE_FAIL exit 0:0.
    let old = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/replays/local-22.05-mixed/sacct.txt"),
    )
    .unwrap();
    assert!(old.contains("|37|NODE_FAIL|0:0|"));
}
