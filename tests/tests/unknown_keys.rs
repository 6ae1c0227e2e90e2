//! Unknown keys through the whole pipeline (issue 13): a job line with
//! extra top-level keys and extra keys inside its sections goes through
//! tao-render, tao-redact lint, tao-submit, tao-poll (until the job ends,
//! bounded), tao-classify and tao-record mark on the local cluster, one
//! tool at a time. After every tool:
//!
//! - each extra key is still there with its value, and every object keeps
//!   the order its keys had when the extra keys went in (tools append the
//!   keys they add; they never move or drop one they do not know);
//! - the output line reads into the typed model (`tao_core::model::Job`),
//!   and the model writes it back byte for byte, so the model types every
//!   field the tools write.
//!
//! Needs the local cluster (`bash tests/cluster/up`) and the built tools
//! (`cargo build --workspace --bins`).

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};
use tao_core::model::Job;
use tao_core::JobLine;
use tao_tests::{bash, cluster, text, Cluster};

/// Where extra keys went in: the object's path (empty: the top level) and
/// its keys right after, in order.
struct Injected {
    path: Vec<&'static str>,
    keys: Vec<String>,
    extras: Vec<(String, Value)>,
}

fn object_at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a Map<String, Value>> {
    let mut cur = v;
    for k in path {
        cur = cur.get(*k)?;
    }
    cur.as_object()
}

/// Put `extras` into the object at `path` of `line`, each at its index.
fn inject(
    line: &mut Value,
    path: &[&'static str],
    extras: &[(usize, &str, Value)],
    log: &mut Vec<Injected>,
) {
    let mut cur = &mut *line;
    for k in path {
        cur = cur
            .get_mut(*k)
            .unwrap_or_else(|| panic!("no {k} in {path:?}"));
    }
    let obj = cur.as_object_mut().expect("an object");
    let mut items: Vec<(String, Value)> = std::mem::take(obj).into_iter().collect();
    for (at, k, v) in extras {
        items.insert((*at).min(items.len()), (k.to_string(), v.clone()));
    }
    *obj = items.into_iter().collect();
    log.push(Injected {
        path: path.to_vec(),
        keys: obj.keys().cloned().collect(),
        extras: extras
            .iter()
            .map(|(_, k, v)| (k.to_string(), v.clone()))
            .collect(),
    });
}

/// Check one tool's output line: the extra keys and the key order, and the
/// typed model's round trip.
fn check(tool: &str, out: &str, log: &[Injected]) -> Value {
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines.len(),
        1,
        "{tool} printed {} lines: {out}",
        lines.len()
    );
    let v: Value = serde_json::from_str(lines[0]).unwrap();
    for inj in log {
        let obj = object_at(&v, &inj.path)
            .unwrap_or_else(|| panic!("{tool} dropped the object {:?}: {out}", inj.path));
        for (k, want) in &inj.extras {
            assert_eq!(obj.get(k), Some(want), "{tool}: {:?}.{k}", inj.path);
        }
        // The keys that were there when the extra keys went in keep their
        // order (a tool may drop a field it owns, such as `error`).
        let now: Vec<&String> = obj.keys().filter(|k| inj.keys.contains(k)).collect();
        let then: Vec<&String> = inj.keys.iter().filter(|k| obj.contains_key(*k)).collect();
        assert_eq!(now, then, "{tool}: key order of {:?}", inj.path);
    }
    let line = JobLine::parse(lines[0], 1).unwrap();
    let job = Job::from_line(&line).unwrap_or_else(|e| panic!("{tool}: {e}: {out}"));
    assert_eq!(
        job.to_line().to_json(),
        lines[0],
        "{tool}: the model does not write the line back as read"
    );
    v
}

/// Run `tool_cmd` (a shell command reading the line on stdin) in `dir`.
fn step(c: &Cluster, state: &Path, dir: &Path, tool_cmd: &str, input: &Value) -> (i32, String) {
    let inp = dir.join("in.json");
    std::fs::write(&inp, format!("{input}\n")).unwrap();
    let out = bash(
        c,
        &[("TAO_STATE_DIR", state.to_str().unwrap())],
        &format!("{tool_cmd} < {}", inp.display()),
    );
    let code = out.status.code().unwrap_or(-1);
    let stdout = text(&out.stdout);
    assert!(
        code == 0 || code == 1,
        "{tool_cmd}: exit {code}: {}\n{stdout}",
        text(&out.stderr)
    );
    (code, stdout)
}

#[test]
fn unknown_keys_pass_through_every_tool_in_order() {
    let Some(c) = cluster() else { return };
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let out = bash(
        &c,
        &[("TAO_STATE_DIR", state.to_str().unwrap())],
        "tao-record open --platform slurm --action train --network-arch keys \
           --gpus 1 --cpus-per-task 1 --time 00:05:00 \
           --command 'echo unknown-keys test; exit 3'",
    );
    assert!(out.status.success(), "open: {}", text(&out.stderr));
    let mut line: Value = serde_json::from_slice(&out.stdout).unwrap();

    let mut log = Vec::new();
    inject(
        &mut line,
        &[],
        &[
            (0, "x_first", json!({"z": 1, "a": [1, "two", null]})),
            (4, "x_middle", json!("mid")),
            (usize::MAX, "x_last", json!(2.5)),
        ],
        &mut log,
    );
    inject(
        &mut line,
        &["resources"],
        &[(1, "x_res", json!({"b": true, "a": false}))],
        &mut log,
    );
    inject(
        &mut line,
        &["storage"],
        &[
            (0, "x_store", json!(null)),
            (usize::MAX, "x_store_end", json!(7)),
        ],
        &mut log,
    );

    let (code, out) = step(&c, &state, dir.path(), "tao-render", &line);
    assert_eq!(code, 0, "{out}");
    let mut line = check("tao-render", &out, &log);
    inject(
        &mut line,
        &["script"],
        &[(1, "x_script", json!("s"))],
        &mut log,
    );
    inject(
        &mut line,
        &["script", "resources"],
        &[(0, "x_plan", json!(1))],
        &mut log,
    );

    let (code, out) = step(&c, &state, dir.path(), "tao-redact lint", &line);
    assert_eq!(code, 0, "{out}");
    let line = check("tao-redact lint", &out, &log);
    assert_eq!(line["lint"]["ok"], true);

    let (code, out) = step(&c, &state, dir.path(), "tao-submit", &line);
    assert_eq!(code, 0, "{out}");
    let mut line = check("tao-submit", &out, &log);
    assert!(line["slurm"]["job_id"].is_string(), "{line}");
    inject(
        &mut line,
        &["slurm"],
        &[(1, "x_slurm", json!(["k"]))],
        &mut log,
    );

    // Poll until the job ends (bounded; other tests may share the cluster).
    let deadline = Instant::now() + Duration::from_secs(240);
    loop {
        let (code, out) = step(&c, &state, dir.path(), "tao-poll --evidence", &line);
        assert!(code == 0 || code == 1, "{out}");
        line = check("tao-poll", &out, &log);
        let st = line["state"].as_str().unwrap_or("").to_string();
        if ["COMPLETE", "ERROR", "CANCELED"].contains(&st.as_str()) {
            assert_eq!(st, "ERROR", "the job exits 3: {line}");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the job did not end in 240 s: {line}"
        );
        std::thread::sleep(Duration::from_secs(2));
    }

    let (code, out) = step(&c, &state, dir.path(), "tao-classify", &line);
    assert!(code == 0 || code == 1, "{out}");
    let line = check("tao-classify", &out, &log);
    assert!(line["classification"]["class"].is_string(), "{line}");

    let (code, out) = step(&c, &state, dir.path(), "tao-record mark", &line);
    assert_eq!(code, 0, "{out}");
    check("tao-record mark", &out, &log);
}
