//! Shared by tao-poll/tests/report.rs (offline, replay) and
//! tests/tests/report.rs (the demo job on the local cluster): headless
//! Chromium screenshots and the SVG checks of `tao-poll report`.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// `target/report-screenshots/` (the workspace target dir), created.
pub fn screenshot_dir() -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .unwrap()
        .join("report-screenshots");
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The chromium binary, or None (skip; a failure under CI=true).
pub fn chromium() -> Option<&'static str> {
    for c in ["chromium", "chromium-browser"] {
        if Command::new(c)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
        {
            return Some(c);
        }
    }
    tao_testkit::ci::skip_or_fail("no chromium (tests/cluster/up installs Debian's chromium)");
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

/// The KPI points of a status.json, read independently of tao-core by the
/// rule the report documents: every record's numeric `kpi` values belong
/// to the epoch of that record, or of the last record before it with an
/// `epoch`; the last value written for an epoch wins.
pub fn file_points(status: &str) -> Vec<(String, u64, f64)> {
    let mut by = std::collections::BTreeMap::new();
    let mut epoch = 0;
    for l in status.lines() {
        let r: Value = serde_json::from_str(l).unwrap();
        if let Some(e) = r["epoch"].as_u64() {
            epoch = e;
        }
        if let Some(k) = r["kpi"].as_object() {
            for (n, x) in k {
                if let Some(x) = x.as_f64() {
                    by.insert((n.clone(), epoch), x);
                }
            }
        }
    }
    by.into_iter().map(|((n, e), x)| (n, e, x)).collect()
}
