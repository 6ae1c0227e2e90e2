//! `tao-poll report` offline (`--replay-root`, a record store with a retry
//! chain): the HTML opens in headless Chromium (Debian's `chromium`,
//! installed by tests/cluster/up), a screenshot is written to
//! `target/report-screenshots/replay-chain.png`, every inline SVG parses as
//! XML (python3's xml.etree), and the KPI curves' points are exactly the
//! status.json values. Without chromium the test is skipped, or fails
//! under CI=true.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

/// `target/report-screenshots/`, created.
pub fn screenshot_dir() -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .unwrap()
        .join("report-screenshots");
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The chromium binary, or None (skip; a failure under CI=true).
fn chromium() -> Option<&'static str> {
    for c in ["chromium", "chromium-browser"] {
        if Command::new(c)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
        {
            return Some(c);
        }
    }
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("chromium is needed under CI: tests/cluster/up installs it");
    }
    eprintln!("skipping: no chromium (tests/cluster/up installs Debian's chromium)");
    None
}

/// Screenshot `html` with headless chromium into `png`; returns the PNG size.
pub fn screenshot(chromium: &str, html: &Path, png: &Path) -> u64 {
    let _ = std::fs::remove_file(png);
    let profile = tempfile::tempdir().unwrap();
    let out = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--hide-scrollbars",
            "--no-first-run",
            "--disable-background-networking",
            &format!("--user-data-dir={}", profile.path().display()),
            "--window-size=1000,1600",
            &format!("--screenshot={}", png.display()),
            &format!("file://{}", html.display()),
        ])
        .output()
        .unwrap();
    let len = std::fs::metadata(png).map(|m| m.len()).unwrap_or(0);
    assert!(
        len > 10_000,
        "no screenshot ({len} bytes): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let head = std::fs::read(png).unwrap();
    assert_eq!(&head[..8], b"\x89PNG\r\n\x1a\n");
    len
}

/// Every `<svg>...</svg>` of the HTML parsed as XML by python3's
/// xml.etree; returns the circles' (kpi, attempt, epoch, value).
pub fn svg_points(html: &str) -> Vec<(String, u64, u64, f64)> {
    let mut svgs = Vec::new();
    let mut rest = html;
    while let Some(a) = rest.find("<svg") {
        let b = rest[a..].find("</svg>").expect("unclosed svg") + a + 6;
        svgs.push(rest[a..b].to_string());
        rest = &rest[b..];
    }
    assert!(svgs.len() >= 2, "{} svg elements", svgs.len());
    let py = r#"
import json, sys, xml.etree.ElementTree as ET
out = []
for s in json.load(sys.stdin):
    root = ET.fromstring(s)
    assert root.tag == '{http://www.w3.org/2000/svg}svg', root.tag
    for c in root.iter('{http://www.w3.org/2000/svg}circle'):
        out.append([c.get('data-kpi'), int(c.get('data-attempt')), int(c.get('data-epoch')), float(c.get('data-value'))])
print(json.dumps(out))
"#;
    let mut child = Command::new("python3")
        .arg("-c")
        .arg(py)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(serde_json::to_string(&svgs).unwrap().as_bytes())
            .unwrap();
    }
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "an SVG does not parse: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Vec<(String, u64, u64, f64)> = serde_json::from_slice(&out.stdout).unwrap();
    v
}

/// The KPI points of a status.json, read independently of tao-core: each
/// RUNNING record with an `epoch` gives (kpi name, epoch, value).
pub fn file_points(status: &str) -> Vec<(String, u64, f64)> {
    let mut v = Vec::new();
    for l in status.lines() {
        let r: Value = serde_json::from_str(l).unwrap();
        if r["status"] == "RUNNING" {
            if let Some(e) = r["epoch"].as_u64() {
                for (k, x) in r["kpi"].as_object().unwrap() {
                    v.push((k.clone(), e, x.as_f64().unwrap()));
                }
            }
        }
    }
    v
}

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
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
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
