//! `tao-poll report` of the demo training job and its retry chain on the
//! local cluster: the first attempt fails at epoch 3 (the program's own
//! failure, recorded in status.json), its retry trains all 4 epochs. The
//! report opens in headless Chromium; the screenshot is written to
//! `target/report-screenshots/demo.png` (and the HTML beside it, demo.html);
//! every SVG parses as XML and the KPI curves' points are the status.json
//! values of both attempts.

#[path = "../../tao-poll/tests/report_support/mod.rs"]
mod report_support;

use report_support::*;
use tao_tests::cluster;
use tao_tests::fixture::Fixture;

#[test]
fn demo_job_and_its_retry_chain_report_opens_in_chromium() {
    let Some(c) = cluster() else { return };
    let Some(chromium) = chromium() else { return };
    let base = c.var("SLURM_BASE_RESULTS_DIR").to_string();
    let marker = format!(
        "{base}/results/.report-test-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    );
    let f = Fixture::new(c.clone(), 5, 0.0);
    // The first run fails at epoch 3 and leaves a marker; the retry (the
    // same command) finds it and trains to the end.
    let line = f.submit(
        "",
        &format!(" $(if [ -e {marker} ]; then :; else touch {marker}; echo --fail-at-epoch 3; fi)"),
    );
    let first = line["id"].as_str().unwrap().to_string();
    assert_eq!(f.final_state(&first)["state"], "ERROR");
    f.classify(&first, 3);
    let second = f.retry(&first)["id"].as_str().unwrap().to_string();
    assert_eq!(f.final_state(&second)["state"], "COMPLETE");
    let dir = screenshot_dir();
    let html_path = dir.join("demo.html");
    f.sh(&format!(
        "tao-poll report {first} -o {}",
        html_path.display()
    ));
    let html = std::fs::read_to_string(&html_path).unwrap();
    assert!(!html.contains("<script"));
    assert!(
        html.contains(&first) && html.contains(&second),
        "both attempts"
    );
    assert!(
        html.contains("ERROR (program)"),
        "the first attempt's end and class"
    );
    let mut got = svg_points(&html);
    let mut want = Vec::new();
    for (k, id) in [&first, &second].iter().enumerate() {
        let rec: serde_json::Value =
            serde_json::from_str(f.sh(&format!("tao-record list --id {id}")).trim()).unwrap();
        let status = c.ssh(&format!(
            "cat {}/status.json",
            rec["storage"]["results_dir"].as_str().unwrap()
        ));
        assert!(status.status.success());
        for (n, e, v) in file_points(&String::from_utf8_lossy(&status.stdout)) {
            want.push((n, k as u64 + 1, e, v));
        }
    }
    // The failed attempt wrote epochs 1-2, the retry 1-4.
    assert_eq!(want.iter().filter(|p| p.0 == "loss").count(), 6, "{want:?}");
    let key = |p: &(String, u64, u64, f64)| (p.0.clone(), p.1, p.2);
    got.sort_by_key(key);
    want.sort_by_key(key);
    assert_eq!(got, want);
    screenshot(chromium, &html_path, &dir.join("demo.png"));
    let _ = std::fs::remove_file(&marker);
}
