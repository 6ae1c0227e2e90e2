//! The single poll's fast path ([`tao_poll::deferred`]: a line's
//! `progress` kept as its input text, written back as it came when the
//! poll leaves it as it is) against the full path (every line parsed
//! whole, written from its parsed fields): for generated job lines (as
//! tao-poll writes them: compact JSON) and generated scheduler replies
//! and status.json files, the two outputs are equal byte for byte, the
//! poll's own time stamp (`observed_at`, the clock) aside.
//!
//! The scheduler replies are replay texts (`ReplayBackend`, the same
//! parsing as over SSH) and the status.json files real files under a
//! temporary directory standing for the cluster's `/`.

use proptest::prelude::*;
use serde_json::{json, Map, Value};
use tao_core::JobLine;
use tao_poll::backend::ReplayBackend;
use tao_poll::deferred;
use tao_poll::poll::{self, Options, Single};

/// One generated job: its line's parts and what the cluster says of it.
#[derive(Debug, Clone)]
struct Job {
    /// squeue's state for it (`None`: not in squeue).
    squeue: Option<&'static str>,
    /// The line's `state`.
    state: &'static str,
    /// Epoch records in its status.json (`None`: no file).
    file_epochs: Option<u8>,
    /// The line's progress: none, or one with the file's stamp (0), a
    /// stale stamp (1), no stamp (2).
    progress: Option<(u8, Vec<f64>, bool)>,
    /// The line carries tao-poll's stale `error`, another tool's, or none.
    error: u8,
    /// The slurm section already says what squeue says (a steady line).
    steady: bool,
    /// No slurm.job_id (never submitted).
    unsubmitted: bool,
    /// Reverse the top-level key order.
    reversed: bool,
}

fn job() -> impl Strategy<Value = Job> {
    (
        prop::option::of(prop::sample::select(vec![
            "RUNNING",
            "PENDING",
            "COMPLETED",
            "FAILED",
            "CANCELLED",
        ])),
        prop::sample::select(vec!["RUNNING", "PENDING", "SUBMITTED", "COMPLETE"]),
        prop::option::of(0u8..4),
        prop::option::of((
            0u8..3,
            prop::collection::vec(-1e3f64..1e3, 0..6),
            any::<bool>(),
        )),
        0u8..3,
        any::<bool>(),
        prop::bool::weighted(0.1),
        any::<bool>(),
    )
        .prop_map(
            |(squeue, state, file_epochs, progress, error, steady, unsubmitted, reversed)| Job {
                squeue,
                state,
                file_epochs,
                progress,
                error,
                steady,
                unsubmitted,
                reversed,
            },
        )
}

/// squeue's row for job `i` in the state `st` (the `-O` columns).
fn squeue_row(i: usize, st: &str) -> String {
    let id = 1000 + i;
    let reason = if st == "PENDING" { "Priority" } else { "None" };
    format!("{id}|{id}|{st}|n1|1800000000|1800000010|1800014410|1:00|0|{reason}|\n")
}

/// Write the cluster side of `jobs` under `root`; the job lines.
fn setup(root: &std::path::Path, jobs: &[Job]) -> (String, Vec<String>) {
    let mut squeue = String::new();
    let mut lines = Vec::new();
    for (i, j) in jobs.iter().enumerate() {
        let results = format!("/r/j{i}");
        let dir = root.join(results.trim_start_matches('/'));
        std::fs::create_dir_all(&dir).unwrap();
        let status = dir.join("status.json");
        if let Some(n) = j.file_epochs {
            let mut t = String::from("{\"date\": \"12/1/2026\", \"time\": \"10:0:0\", \"status\": \"STARTED\", \"message\": \"Starting Training Loop.\"}\n");
            for e in 1..=n {
                t.push_str(&format!("{{\"epoch\": {e}, \"max_epoch\": 9, \"eta\": \"0:10:00\", \"time_per_epoch\": \"0:01:00\", \"status\": \"RUNNING\", \"kpi\": {{\"loss\": {}}}}}\n", 1.0 / f64::from(e)));
            }
            if j.squeue == Some("COMPLETED") {
                t.push_str("{\"status\": \"SUCCESS\", \"message\": \"Training finished.\"}\n");
            }
            std::fs::write(&status, t).unwrap();
        }
        if let Some(st) = j.squeue {
            squeue.push_str(&squeue_row(i, st));
        }
        let stamp = tao_poll::status::local_stamp(&status);
        let mut m = Map::new();
        m.insert("id".into(), json!(format!("prop-j{i}")));
        m.insert("state".into(), json!(j.state));
        m.insert(
            "storage".into(),
            json!({"job_dir": format!("/jobs/j{i}"), "results_dir": results}),
        );
        let mut slurm = Map::new();
        if !j.unsubmitted {
            slurm.insert("job_id".into(), json!((1000 + i).to_string()));
        }
        if j.steady {
            if let Some(st) = j.squeue {
                slurm.insert("native_state".into(), json!(st));
                slurm.insert("nodes".into(), json!("n1"));
            }
        }
        m.insert("slurm".into(), Value::Object(slurm));
        if let Some((kind, hist, extra)) = &j.progress {
            let mut p = json!({
                "epoch": hist.len(),
                "max_epoch": 9,
                "percent": 12.5,
                "kpi": {"loss": hist.last().copied().unwrap_or(0.5)},
                "history": {"loss": hist},
                "updated_at": "2026-12-01T10:00:00Z",
            });
            if *extra {
                p["note"] = json!("a field\u{e9} \"quoted\" this tool does not know");
            }
            match (kind, stamp) {
                (0, Some(s)) => {
                    p["file_size"] = json!(s.size);
                    p["file_mtime_s"] = json!(s.mtime_s);
                }
                (0 | 1, _) => {
                    p["file_size"] = json!(7);
                    p["file_mtime_s"] = json!(1_700_000_000);
                }
                _ => {}
            }
            m.insert("progress".into(), p);
        }
        match j.error {
            1 => {
                m.insert(
                    "error".into(),
                    json!({"tool": "tao-poll", "code": "unavailable", "message": "was down"}),
                );
            }
            2 => {
                m.insert(
                    "error".into(),
                    json!({"tool": "tao-submit", "code": "data", "message": "refused"}),
                );
            }
            _ => {}
        }
        m.insert("observed_at".into(), json!("2026-12-01T09:00:00.000000Z"));
        if j.reversed {
            m = m.into_iter().rev().collect();
        }
        lines.push(serde_json::to_string(&m).unwrap());
    }
    (squeue, lines)
}

/// The poll's own clock stamp made equal in both outputs.
fn without_clock(out: &str) -> String {
    let key = "\"observed_at\":\"";
    let mut s = String::new();
    let mut rest = out;
    while let Some(i) = rest.find(key) {
        s.push_str(&rest[..i + key.len()]);
        rest = &rest[i + key.len()..];
        let end = rest.find('"').unwrap();
        s.push('T');
        rest = &rest[end..];
    }
    s.push_str(rest);
    s
}

fn run(root: &std::path::Path, squeue: &str, texts: &[String], fast: bool) -> String {
    let mut conn = Single(ReplayBackend {
        squeue: Some(squeue.to_string()),
        sacct: Some(String::new()),
        scontrol: None,
        squeue_start: Some(String::new()),
        user: None,
        root: Some(root.to_path_buf()),
    });
    let redact = |_: &JobLine, t: &str| t.to_string();
    let opts = Options {
        requeue: false,
        evidence: None,
        redact: &redact,
        explain: false,
    };
    let mut buf = Vec::new();
    if fast {
        let (lines, texts): (Vec<_>, Vec<_>) = texts
            .iter()
            .enumerate()
            .map(|(i, t)| deferred::parse(t, i as u64 + 1).unwrap())
            .unzip();
        let res = poll::poll_deferred(lines, texts, &mut conn, &opts);
        for (i, l) in res.lines.iter().enumerate() {
            poll::write_line_to(&mut buf, l, res.deferred[i].as_deref());
        }
    } else {
        let lines = texts
            .iter()
            .enumerate()
            .map(|(i, t)| JobLine::parse(t, i as u64 + 1).unwrap())
            .collect();
        let res = poll::poll(lines, &mut conn, &opts);
        for l in &res.lines {
            poll::write_line_to(&mut buf, l, None);
        }
    }
    without_clock(&String::from_utf8(buf).unwrap())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// The fast path's output is the full path's, byte for byte.
    #[test]
    fn deferred_progress_polls_like_the_full_parse(jobs in prop::collection::vec(job(), 1..7)) {
        let root = tempfile::tempdir().unwrap();
        let (squeue, texts) = setup(root.path(), &jobs);
        let full = run(root.path(), &squeue, &texts, false);
        let fast = run(root.path(), &squeue, &texts, true);
        prop_assert_eq!(fast, full);
    }
}

/// The case the fast path is for: a running job whose status.json still
/// has the stamp its line's progress was read at passes that progress
/// through as its input bytes (and the test above is not vacuous: the
/// stand-in is what was polled).
#[test]
fn an_unchanged_running_job_keeps_its_progress_text() {
    let root = tempfile::tempdir().unwrap();
    let j = Job {
        squeue: Some("RUNNING"),
        state: "RUNNING",
        file_epochs: Some(2),
        progress: Some((0, vec![0.25, 0.125], true)),
        error: 0,
        steady: true,
        unsubmitted: false,
        reversed: false,
    };
    let (squeue, texts) = setup(root.path(), &[j]);
    let (line, text) = deferred::parse(&texts[0], 1).unwrap();
    let raw = text.as_ref().unwrap().get().to_string();
    let mut conn = Single(ReplayBackend {
        squeue: Some(squeue.clone()),
        sacct: Some(String::new()),
        scontrol: None,
        squeue_start: Some(String::new()),
        user: None,
        root: Some(root.path().to_path_buf()),
    });
    let redact = |_: &JobLine, t: &str| t.to_string();
    let opts = Options {
        requeue: false,
        evidence: None,
        redact: &redact,
        explain: false,
    };
    let res = poll::poll_deferred(vec![line], vec![text], &mut conn, &opts);
    assert_eq!(res.deferred[0].as_deref().map(|r| r.get()), Some(&*raw));
    let mut buf = Vec::new();
    poll::write_line_to(&mut buf, &res.lines[0], res.deferred[0].as_deref());
    let out = String::from_utf8(buf).unwrap();
    assert!(out.contains(&format!("\"progress\":{raw}")), "{out}");
    assert_eq!(
        without_clock(&out),
        run(root.path(), &squeue, &texts, false)
    );
}
