//! `tao-poll report` offline (`--replay-root`, a record store with a retry
//! chain): the HTML opens in headless Chromium (Debian's `chromium`,
//! installed by tests/cluster/up), a screenshot is written to
//! `target/report-screenshots/replay-chain.png`, every inline SVG parses as
//! XML (python3's xml.etree), and the KPI curves' points are exactly the
//! status.json values. Without chromium the test is skipped, or fails
//! under CI=true.

use std::path::Path;
use std::process::Command;

use serde_json::{json, Value};

mod report_support;
use report_support::*;

fn tao_record(state: &Path, fields: Value) {
    let id = fields["id"].as_str().unwrap();
    std::fs::create_dir_all(state.join("records")).unwrap();
    std::fs::write(
        state.join("records").join(format!("{id}.json")),
        serde_json::to_vec(&fields).unwrap(),
    )
    .unwrap();
}

fn status_json(epochs: u64, max: u64, fail: bool) -> String {
    let mut s = String::from("{\"date\": \"12/1/2026\", \"time\": \"10:0:0\", \"status\": \"STARTED\", \"verbosity\": \"INFO\", \"message\": \"Starting\"}\n");
    for e in 1..=epochs {
        s.push_str(&format!(
            "{{\"epoch\": {e}, \"max_epoch\": {max}, \"time_per_epoch\": \"0:00:30\", \"eta\": \"0:01:00\", \"status\": \"RUNNING\", \"verbosity\": \"INFO\", \"message\": \"Training loop in progress\", \"kpi\": {{\"loss\": {}, \"mae\": {}}}}}\n",
            1.0 / (e as f64 + 1.0),
            0.5 / e as f64
        ));
    }
    s.push_str(if fail {
        "{\"status\": \"FAILURE\", \"message\": \"NCCL error\"}\n"
    } else {
        "{\"status\": \"SUCCESS\", \"message\": \"done\"}\n"
    });
    s
}

#[test]
fn report_of_a_retry_chain_opens_in_chromium() {
    let Some(chromium) = chromium() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    let state = tmp.path().join("state");
    let files = [("tao-rep-a", 3, true), ("tao-rep-b", 5, false)];
    for (id, n, fail) in files {
        let d = root.join(format!("shared/results/{id}"));
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("status.json"), status_json(n, 5, fail)).unwrap();
    }
    tao_record(
        &state,
        json!({
            "id": "tao-rep-a", "attempt": 1, "state": "ERROR", "retried_by": "tao-rep-b",
            "storage": {"results_dir": "/shared/results/tao-rep-a"},
            "slurm": {"job_id": "501"}, "classification": {"class": "infra", "retry": true},
            "history": [
                {"at": "2026-12-01T10:00:00Z", "state": "PENDING", "source": "tao-submit", "message": "submitted"},
                {"at": "2026-12-01T10:02:00Z", "state": "RUNNING", "source": "tao-poll", "message": "RUNNING"},
                {"at": "2026-12-01T10:03:30Z", "state": "PENDING", "source": "tao-poll", "message": "PENDING (BeginTime), restart 1"},
                {"at": "2026-12-01T10:04:00Z", "state": "RUNNING", "source": "tao-poll", "message": "RUNNING, restart 1"},
                {"at": "2026-12-01T10:06:00Z", "state": "ERROR", "source": "tao-poll", "message": "FAILED exit 1:0"}
            ]
        }),
    );
    tao_record(
        &state,
        json!({
            "id": "tao-rep-b", "attempt": 2, "state": "COMPLETE", "retry_of": "tao-rep-a",
            "storage": {"results_dir": "/shared/results/tao-rep-b"},
            "slurm": {"job_id": "502"},
            "history": [
                {"at": "2026-12-01T10:07:00Z", "state": "PENDING", "source": "tao-submit", "message": "submitted"},
                {"at": "2026-12-01T10:07:30Z", "state": "RUNNING", "source": "tao-poll", "message": "RUNNING"},
                {"at": "2026-12-01T10:10:00Z", "state": "COMPLETE", "source": "tao-poll", "message": "COMPLETED; status.json SUCCESS"}
            ]
        }),
    );
    let dir = screenshot_dir();
    let html_path = dir.join("replay-chain.html");
    let out = Command::new(assert_cmd::cargo::cargo_bin("tao-poll"))
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .args(["report", "tao-rep-b", "-o"])
        .arg(&html_path)
        .arg("--state-dir")
        .arg(&state)
        .arg("--replay-root")
        .arg(&root)
        .output()
        .unwrap();
    tao_testkit::tool::assert_exit(&out, 0);
    let html = std::fs::read_to_string(&html_path).unwrap();
    // Self-contained: no script, no external resource.
    assert!(!html.contains("<script"), "a script in the report");
    for bad in ["src=", "href=", "url(", "@import"] {
        assert!(!html.contains(bad), "{bad} in the report");
    }
    // The whole chain from its last attempt, with end states and classes.
    assert!(
        html.contains("ERROR (infra)") && html.contains(">COMPLETE<"),
        "{html}"
    );
    assert!(html.contains("class=\"restart\""));
    let mut got: Vec<(String, u64, u64, f64)> = svg_points(&html);
    let mut want: Vec<(String, u64, u64, f64)> = Vec::new();
    for (k, (id, _, _)) in files.iter().enumerate() {
        let text =
            std::fs::read_to_string(root.join(format!("shared/results/{id}/status.json"))).unwrap();
        for (n, e, v) in file_points(&text) {
            want.push((n, k as u64 + 1, e, v));
        }
    }
    let key = |p: &(String, u64, u64, f64)| (p.0.clone(), p.1, p.2);
    got.sort_by_key(key);
    want.sort_by_key(key);
    assert_eq!(got, want);
    screenshot(chromium, &html_path, &dir.join("replay-chain.png"));
}

/// An unknown record id is bad input data: 65, as tao-poll(1) documents,
/// with the fix (check the id) on one line; for logs and report alike.
#[test]
fn an_unknown_record_id_exits_65_naming_the_fix() {
    let state = tempfile::tempdir().unwrap();
    for args in [
        &["logs", "tao-20261201-zzzzzz"][..],
        &["report", "tao-20261201-zzzzzz", "-o", "/dev/null"],
    ] {
        let out = Command::new(assert_cmd::cargo::cargo_bin("tao-poll"))
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("TAO_STATE_DIR", state.path())
            .args(args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(65), "{args:?}: {err}");
        assert!(
            err.starts_with("tao-poll: error: no record \"tao-20261201-zzzzzz\"")
                && err.contains("check the id")
                && err.lines().count() == 1,
            "{args:?}: {err}"
        );
    }
}

/// Without `-o` the report goes to tao-report.html in the current directory,
/// and one `tao-poll: wrote PATH` line on stderr says where (tao-poll(1));
/// with `-o` nothing more is said.
#[test]
fn report_without_output_says_where_it_wrote() {
    let state = tempfile::tempdir().unwrap();
    let cwd = tempfile::tempdir().unwrap();
    let root = tempfile::tempdir().unwrap();
    tao_record(
        state.path(),
        json!({"id": "tao-20261201-wrote1", "state": "COMPLETE", "attempt": 1,
               "history": [{"at": "2026-12-01T10:00:00Z", "state": "PENDING", "source": "tao-record", "message": "opened"}]}),
    );
    let run = |extra: &[&str]| {
        Command::new(assert_cmd::cargo::cargo_bin("tao-poll"))
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .current_dir(cwd.path())
            .args(["report", "tao-20261201-wrote1", "--state-dir"])
            .arg(state.path())
            .arg("--replay-root")
            .arg(root.path())
            .args(extra)
            .output()
            .unwrap()
    };
    let out = run(&[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let want = cwd.path().canonicalize().unwrap().join("tao-report.html");
    assert!(want.exists(), "{err}");
    assert_eq!(err, format!("tao-poll: wrote {}\n", want.display()));
    let out = run(&["-o", "named.html"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(cwd.path().join("named.html").exists());
}

/// A current directory the report cannot be written to (here /proc, where
/// no file can be created, even by root: a chmod'ed directory would not
/// stop root) fails with exit 74 (EX_IOERR) and one line that names the
/// default file and says to name another with -o; nothing is written.
#[test]
fn report_in_an_unwritable_directory_says_to_use_o() {
    let state = tempfile::tempdir().unwrap();
    let root = tempfile::tempdir().unwrap();
    tao_record(
        state.path(),
        json!({"id": "tao-20261205-rdonly", "state": "COMPLETE", "attempt": 1,
               "history": [{"at": "2026-12-05T10:00:00Z", "state": "PENDING", "source": "tao-record", "message": "opened"}]}),
    );
    let out = Command::new(assert_cmd::cargo::cargo_bin("tao-poll"))
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .current_dir("/proc")
        .args(["report", "tao-20261205-rdonly", "--state-dir"])
        .arg(state.path())
        .arg("--replay-root")
        .arg(root.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(74), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("\"/proc/tao-report.html\""), "{err}");
    assert!(err.contains("name another file with -o FILE"), "{err}");
    assert!(out.stdout.is_empty());
}
