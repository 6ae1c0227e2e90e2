//! The single poll's fast path ([`tao_poll::deferred`]: a line kept as
//! its input text, written back as it came with only `observed_at`
//! replaced when the poll changes nothing else on it) against the full
//! path (every line parsed whole, written from its parsed fields): for
//! generated job lines (as tao-poll writes them: compact JSON), and for
//! the lines a first poll of those wrote (the steady state: a second poll
//! after some status.json files grew and some squeue states moved), with
//! generated scheduler replies and status.json files, the two outputs are
//! equal byte for byte, the poll's own time stamp (`observed_at`, the
//! clock) aside.
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

/// One poll of `texts` (the fast path or the full one): its output, and
/// how many lines it wrote as their input text.
fn run_raw(root: &std::path::Path, squeue: &str, texts: &[String], fast: bool) -> (String, usize) {
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
    let mut kept = 0;
    if fast {
        let (lines, texts): (Vec<_>, Vec<_>) = texts
            .iter()
            .enumerate()
            .map(|(i, t)| deferred::parse(t, i as u64 + 1).unwrap())
            .unzip();
        let res = poll::poll_deferred(lines, texts, &mut conn, &opts);
        kept = res.deferred.iter().filter(|d| d.is_some()).count();
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
    (String::from_utf8(buf).unwrap(), kept)
}

fn run(root: &std::path::Path, squeue: &str, texts: &[String], fast: bool) -> String {
    without_clock(&run_raw(root, squeue, texts, fast).0)
}

/// Fields of a polled line another writer may have changed since (a
/// record store, another tool), each set to a value no poll writes.
const EDITS: [&[&str]; 9] = [
    &["message"],
    &["observed_by"],
    &["state"],
    &["observed_at"],
    &["slurm", "reason"],
    &["slurm", "restart_count"],
    &["slurm", "end_time"],
    &["pending"],
    &["error"],
];

/// `line` (compact JSON) with the field at `path` set to another value,
/// written back compact (the key where it stood, or appended).
fn edited(line: &str, path: &[&str]) -> String {
    let mut m: Map<String, Value> = serde_json::from_str(line).unwrap();
    let v = match path.last().copied() {
        Some("restart_count") => json!(3),
        Some("pending") => json!({"reason": "Priority"}),
        Some("error") => json!({"tool": "tao-poll", "code": "unavailable", "message": "was down"}),
        Some("observed_at") => Value::Null,
        _ => json!("set by another tool"),
    };
    match path {
        [k] => {
            m.insert(k.to_string(), v);
        }
        [a, k] => {
            if let Some(Value::Object(o)) = m.get_mut(*a) {
                o.insert(k.to_string(), v);
            }
        }
        _ => unreachable!(),
    }
    serde_json::to_string(&m).unwrap()
}

/// One more epoch record at the end of job `i`'s status.json (a new size:
/// its stamp changes whatever the clock's second).
fn grow(root: &std::path::Path, i: usize) {
    use std::io::Write;
    let path = root.join(format!("r/j{i}/status.json"));
    let mut f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    f.write_all(
        b"{\"epoch\": 7, \"max_epoch\": 9, \"status\": \"RUNNING\", \"kpi\": {\"loss\": 0.0625}}\n",
    )
    .unwrap();
}

proptest! {
    #![proptest_config(tao_core::testing::config(96))]

    /// The fast path's output is the full path's, byte for byte.
    #[test]
    fn deferred_progress_polls_like_the_full_parse(jobs in prop::collection::vec(job(), 1..7)) {
        let root = tempfile::tempdir().unwrap();
        let (squeue, texts) = setup(root.path(), &jobs);
        let full = run(root.path(), &squeue, &texts, false);
        let fast = run(root.path(), &squeue, &texts, true);
        prop_assert_eq!(fast, full);
    }

    /// The steady state: the lines a first poll wrote, polled again after
    /// some jobs' status.json grew and some jobs' squeue state moved (or
    /// did not): the fast path's output is the full path's, byte for byte.
    #[test]
    fn a_second_poll_of_polled_lines_is_the_full_parse(
        mut jobs in prop::collection::vec(job(), 1..7),
        later in prop::collection::vec(
            (
                prop::bool::weighted(0.3),
                prop::option::weighted(0.2, prop::option::of(prop::sample::select(vec![
                    "RUNNING", "PENDING", "COMPLETED", "FAILED",
                ]))),
                prop::option::weighted(0.3, 0usize..EDITS.len()),
                prop::bool::weighted(0.6),
            ),
            7,
        ),
    ) {
        // Most jobs running with a status.json (the steady poll's case).
        for (j, l) in jobs.iter_mut().zip(&later) {
            if l.3 {
                j.squeue = Some("RUNNING");
                j.file_epochs.get_or_insert(2);
            }
        }
        let root = tempfile::tempdir().unwrap();
        let (squeue, texts) = setup(root.path(), &jobs);
        let (first, _) = run_raw(root.path(), &squeue, &texts, false);
        let mut polled: Vec<String> = first.lines().map(str::to_string).collect();
        let mut squeue2 = String::new();
        for (i, j) in jobs.iter().enumerate() {
            let (grown, moved, edit, _) = later[i];
            if let Some(e) = edit {
                polled[i] = edited(&polled[i], EDITS[e]);
            }
            if grown && j.file_epochs.is_some() {
                grow(root.path(), i);
            }
            // `None`: as before; `Some(None)`: gone from squeue.
            if let Some(st) = moved.unwrap_or(j.squeue) {
                squeue2.push_str(&squeue_row(i, st));
            }
        }
        let full = run(root.path(), &squeue2, &polled, false);
        let fast = run(root.path(), &squeue2, &polled, true);
        prop_assert_eq!(fast, full);
    }
}

/// The case the fast path is for: a running job polled again, its
/// status.json still with the stamp its line's progress was read at and
/// squeue saying the same, is written as its input text with only
/// `observed_at` replaced (and the properties above are not vacuous: the
/// text is what was kept); after its file grew, it is parsed and written
/// whole, as the full path writes it.
#[test]
fn an_unchanged_running_job_keeps_its_text() {
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
    // The first poll writes what squeue says (the line's slurm section
    // held only part of it): parsed whole.
    let (first, kept) = run_raw(root.path(), &squeue, &texts, true);
    assert_eq!(kept, 0, "{first}");
    assert_eq!(
        without_clock(&first),
        run(root.path(), &squeue, &texts, false)
    );
    // The second changes nothing but observed_at: kept as text.
    let polled = vec![first.trim_end().to_string()];
    let (second, kept) = run_raw(root.path(), &squeue, &polled, true);
    assert_eq!(kept, 1, "{second}");
    assert_eq!(without_clock(&second), without_clock(&first));
    assert_ne!(second, first, "observed_at is the poll's own clock");
    assert!(
        second.contains("\"note\":\"a field\u{e9} \\\"quoted\\\""),
        "{second}"
    );
    // The file grew: the progress changes, the line is written whole.
    grow(root.path(), 0);
    let (third, kept) = run_raw(root.path(), &squeue, &polled, true);
    assert_eq!(kept, 0, "{third}");
    assert!(third.contains("\"epoch\":7"), "{third}");
    assert_eq!(
        without_clock(&third),
        run(root.path(), &squeue, &polled, false)
    );
}

/// Keys of job lines' objects, and keys serde_json writes with an escape
/// (`\"`, `\\`, `\n`; `/` is written plain and read in either spelling).
const KEYS: [&str; 12] = [
    "job_id",
    "job_dir",
    "requeue",
    "code",
    "file_size",
    "file_mtime_s",
    "observed_at",
    "a\"b",
    "c\\d",
    "e/f",
    "g\nh",
    "slurm",
];

/// A JSON value as a job line holds them: objects with [`KEYS`], strings
/// with escapes, integers and finite floats of any size.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_filter_map("finite", |f| serde_json::Number::from_f64(f)
            .map(Value::Number)),
        prop::sample::select(vec![
            "",
            "x",
            "q\"t",
            "b\\s",
            "n\nl",
            "/j/a",
            "2026-12-01T00:00:00Z"
        ])
        .prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            prop::collection::vec((prop::sample::select(KEYS.to_vec()), inner), 0..5).prop_map(
                |kv| Value::Object(kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
            ),
        ]
    })
}

/// Every path of object keys in `v` up to 3 deep, and one missing key
/// under each.
fn paths(v: &Map<String, Value>) -> Vec<Vec<String>> {
    let mut out = vec![vec!["nope".to_string()]];
    for (k, v1) in v {
        out.push(vec![k.clone()]);
        out.push(vec![k.clone(), "nope".into()]);
        if let Value::Object(m1) = v1 {
            for (k2, v2) in m1 {
                out.push(vec![k.clone(), k2.clone()]);
                if let Value::Object(m2) = v2 {
                    for k3 in m2.keys() {
                        out.push(vec![k.clone(), k2.clone(), k3.clone()]);
                    }
                }
            }
        }
    }
    out
}

/// Numbers as text, in and beyond f64's range (serde_json refuses the
/// latter: the line is a bad line on both paths).
const NUMBER_TEXTS: [&str; 8] = [
    "1e400",
    "-2.5E+309",
    "1e308",
    "1.7976931348623157e308",
    "1.7976931348623159e308",
    "0.5e-400",
    "-0",
    "12345678901234567890123",
];

proptest! {
    #![proptest_config(tao_core::testing::config(256))]

    /// A line read by [`deferred::parse`] is the line [`JobLine::parse`]
    /// reads, for any JSON object: the same error, or a text line whose
    /// every read ([`deferred::Fields`]: the values at each path, the
    /// progress stamp) is the parsed line's.
    #[test]
    fn a_text_line_reads_as_the_parsed_line(
        fields in prop::collection::vec((prop::sample::select(KEYS.to_vec()), json_value()), 0..6),
        progress in prop::option::of((any::<u64>(), any::<i64>(), prop::sample::select(KEYS.to_vec()))),
        number in prop::option::of(prop::sample::select(NUMBER_TEXTS.to_vec())),
    ) {
        use deferred::Fields;
        let mut m: Map<String, Value> = fields.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
        if let Some((size, mtime, other)) = progress {
            m.insert("progress".into(), json!({other: 1, "file_size": size, "file_mtime_s": mtime}));
        }
        if number.is_some() {
            m.insert("n".into(), json!({"storage": "@NUM@"}));
        }
        let mut text = serde_json::to_string(&m).unwrap();
        if let Some(n) = number {
            text = text.replace("\"@NUM@\"", n);
        }
        match (deferred::parse(&text, 3), JobLine::parse(&text, 3)) {
            (Err(a), Err(b)) => prop_assert_eq!(a.to_string(), b.to_string()),
            (Ok((_, None)), Ok(_)) => {}
            (Ok((_, Some(t))), Ok(full)) => {
                for p in paths(&full.fields) {
                    let p: Vec<&str> = p.iter().map(String::as_str).collect();
                    prop_assert_eq!(
                        t.at(&p).map(|v| v.into_owned()),
                        full.at(&p).map(|v| v.into_owned()),
                        "{:?} in {}", p, text
                    );
                }
                prop_assert_eq!(t.progress_stamp(), full.progress_stamp(), "{}", text);
            }
            (a, b) => prop_assert!(false, "{}: {:?} vs {:?}", text, a.map(|_| ()).err(), b.err()),
        }
    }
}
