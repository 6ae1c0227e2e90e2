//! The `tao-classify` binary as a user runs it: a cleared environment,
//! job lines on stdin, job lines on stdout, one-line errors on stderr.

use std::io::Write;

use assert_cmd::Command;
use predicates::prelude::*;
use tao_testkit::tool::json_lines as lines;

/// The binary with a cleared environment.
fn cmd() -> Command {
    tao_testkit::tool::cmd("tao-classify")
}

const RUNNING: &str = r#"{"id":"tao-20261129-aaaaaa","state":"RUNNING","zeta":{"b":1,"a":[1.50,"x"]},"slurm":{"native_state":"RUNNING"}}"#;

fn error_line(native: &str, attempt: u32, extra: &str) -> String {
    format!(
        r#"{{"id":"tao-20261129-bbbbbb","state":"ERROR","unknown_field":{{"keep":true}},"slurm":{{"job_id":"42","native_state":"{native}","exit_code":"1:0","nodes":"n1"}},"attempt":{attempt}{extra}}}"#
    )
}

#[test]
fn non_error_lines_pass_through_byte_for_byte() {
    let input = format!(
        "{RUNNING}\n{}\n",
        r#"{"id":"c","state":"CANCELED","slurm":{"native_state":"CANCELLED by 0"}}"#
    );
    cmd()
        .write_stdin(input.clone())
        .assert()
        .success()
        .stdout(input);
}

#[test]
fn error_line_keeps_unknown_fields_in_order_and_gains_classification() {
    let input = error_line("NODE_FAIL", 1, "");
    let out = cmd()
        .write_stdin(format!("{input}\n"))
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out.clone()).unwrap();
    assert!(text.starts_with(&input[..input.len() - 1]), "{text}");
    let v = &lines(&out)[0];
    assert_eq!(v["unknown_field"]["keep"], true);
    let c = &v["classification"];
    assert_eq!(c["class"], "infra");
    assert_eq!(c["retry"], true);
    assert_eq!(c["rule"], "state.node_fail");
    assert_eq!(c["node"], "n1");
    let keys: Vec<&str> = c.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        ["class", "subclass", "rule", "evidence", "node", "retry", "reason"]
    );
}

#[test]
fn log_file_is_the_evidence_with_line_numbers_and_redaction() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("main.err");
    let mut f = std::fs::File::create(&log).unwrap();
    for i in 0..5000 {
        writeln!(f, "Epoch 1: step {i} loss 0.5").unwrap();
    }
    writeln!(
        f,
        "PermissionError: [Errno 13] Permission denied: '/lustre/results/hf_FAKEfakeFAKEfakeFAKEfake00/ghp_FAKEtaoRedactTest0123456789abcdefABCD'"
    )
    .unwrap();
    drop(f);
    let out = cmd()
        .env("HF_TOKEN", "hf_FAKEfakeFAKEfakeFAKEfake00")
        .arg("--log")
        .arg(&log)
        .write_stdin(format!("{}\n{RUNNING}\n", error_line("FAILED", 1, "")))
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v = lines(&out);
    assert_eq!(v.len(), 2);
    let c = &v[0]["classification"];
    assert_eq!(
        (c["class"].as_str(), c["retry"].as_bool()),
        (Some("program"), Some(false))
    );
    assert_eq!(c["evidence"]["file"], log.display().to_string());
    assert_eq!(c["evidence"]["line"], 5001);
    let text = c["evidence"]["text"].as_str().unwrap();
    assert!(
        text.contains("[REDACTED:") && !text.contains("hf_FAKE") && !text.contains("ghp_FAKE"),
        "{text}"
    );
    assert!(v[1].get("classification").is_none());
}

#[test]
fn empty_log_file_is_a_launch_failure() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("main.out");
    std::fs::write(&log, "").unwrap();
    let out = cmd()
        .arg("--log")
        .arg(&log)
        .write_stdin(error_line("FAILED", 1, ""))
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let c = &lines(&out)[0]["classification"];
    assert_eq!(
        (c["rule"].as_str(), c["retry"].as_bool()),
        (Some("launch.no_log"), Some(true))
    );
}

#[test]
fn missing_log_file_fails_before_reading_any_line() {
    cmd()
        .args(["--log", "/nonexistent/main.err"])
        .write_stdin(format!("{RUNNING}\n"))
        .assert()
        .code(74)
        .stdout("")
        .stderr(predicate::str::starts_with(
            "tao-classify: error: opening log file \"/nonexistent/main.err\"",
        ));
}

#[test]
fn bad_input_exits_65_and_loses_no_good_line() {
    let input = format!(
        "{RUNNING}\nnot json at all\n{}\n{}\n",
        r#"{"id":"x","state":"ERROR"}"#,
        error_line("TIMEOUT", 1, "")
    );
    let assert = cmd().write_stdin(input).assert().code(65);
    let out = assert.get_output();
    let v = lines(&out.stdout);
    assert_eq!(
        v.len(),
        3,
        "the RUNNING, the unclassifiable and the TIMEOUT line"
    );
    assert_eq!(v[1]["id"], "x");
    assert!(v[1].get("classification").is_none());
    assert_eq!(v[2]["classification"]["class"], "scheduler");
    let err = String::from_utf8(out.stderr.clone()).unwrap();
    let err_lines: Vec<&str> = err.lines().collect();
    assert_eq!(err_lines.len(), 2, "{err}");
    assert!(
        err_lines[0].starts_with("tao-classify: error: line 2, column"),
        "{err}"
    );
    assert!(
        err_lines[1].starts_with(
            "tao-classify: error: line 3: state is ERROR but `slurm.native_state` is missing"
        ),
        "{err}"
    );
}

#[test]
fn budget_stops_retries_and_is_configurable() {
    // The default budget is the project's 10 attempts (tao_core::DEFAULT_MAX_ATTEMPTS).
    let input = error_line("NODE_FAIL", 10, "");
    let out = cmd()
        .write_stdin(input.clone())
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let c = &lines(&out)[0]["classification"];
    assert_eq!(c["retry"], false);
    assert_eq!(c["reason"], "retry budget exhausted (attempt 10 of 10)");
    let out = cmd()
        .args(["--max-attempts", "11"])
        .write_stdin(input)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    assert_eq!(lines(&out)[0]["classification"]["retry"], true);
}

#[test]
fn evidence_tails_decide_failed_jobs() {
    let ev = r#","evidence":{"out":{"first_line":1,"lines":["epoch 1"]},"err":{"first_line":88,"lines":["x","Nov 29 10:14:02 gpu-a17 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=python, GPU has fallen off the bus."]}}"#;
    let out = cmd()
        .write_stdin(error_line("FAILED", 1, ev))
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let c = &lines(&out)[0]["classification"];
    assert_eq!(c["class"], "infra");
    assert_eq!(c["rule"], "xid.hardware");
    assert_eq!(c["node"], "gpu-a17");
    assert_eq!(c["evidence"]["file"], "err");
    assert_eq!(c["evidence"]["line"], 89);
    let ev = r#","evidence":{"err":{"first_line":1,"lines":["Traceback (most recent call last):","ValueError: boom"]}}"#;
    let out = cmd()
        .write_stdin(error_line("FAILED", 1, ev))
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let c = &lines(&out)[0]["classification"];
    assert_eq!(
        (c["class"].as_str(), c["retry"].as_bool()),
        (Some("program"), Some(false))
    );
}

#[test]
fn help_version_and_usage_errors() {
    tao_testkit::tool::assert_standard_flags("tao-classify", "Usage:");
    cmd()
        .arg("--bogus")
        .assert()
        .code(2)
        .stderr(predicate::str::starts_with(
            "tao-classify: error: invalid option '--bogus'",
        ));
    cmd().args(["--max-attempts", "0"]).assert().code(2);
}

#[test]
fn site_rules_and_list_rules() {
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("site.toml");
    std::fs::write(
        &rules,
        "[[rule]]\nid = \"site.gpfs\"\nclass = \"infra\"\nsubclass = \"shared_fs\"\npriority = 90\nkeywords = [\"mmfs\"]\npattern = 'mmfs: unmounted on (?P<node>n[0-9]+)'\nreason = \"GPFS went away\"\n",
    )
    .unwrap();
    let ev =
        r#","evidence":{"err":{"first_line":1,"lines":["mmfs: unmounted on n2","ValueError: x"]}}"#;
    let out = cmd()
        .arg("--rules")
        .arg(&rules)
        .write_stdin(error_line("FAILED", 1, ev))
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let c = &lines(&out)[0]["classification"];
    assert_eq!(
        (c["rule"].as_str(), c["node"].as_str()),
        (Some("site.gpfs"), Some("n2"))
    );
    let listed = cmd()
        .arg("--rules")
        .arg(&rules)
        .arg("--list-rules")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let listed = lines(&listed);
    assert!(listed.len() > 30);
    assert!(listed.iter().any(|r| r["id"] == "site.gpfs"));
    std::fs::write(&rules, "[[rule]]\nid = 1\n").unwrap();
    cmd()
        .arg("--rules")
        .arg(&rules)
        .write_stdin("")
        .assert()
        .code(78)
        .stderr(predicate::str::contains("site.toml"));
}

/// Issue 16: tao-classify built its redactor from the environment only
/// (HF_TOKEN, NGC_KEY), so the value of a secret the line itself names
/// (`--secret MY_DB_PASSWORD`) went into `classification.evidence.text`
/// and from there into the record. Both the deciding text and the tails
/// the line carries are masked now.
#[test]
fn evidence_of_a_line_masks_its_own_secrets() {
    let pw = "plain words are my db password";
    let input = error_line(
        "FAILED",
        1,
        &format!(
            r#","secrets":["MY_DB_PASSWORD"],"evidence":{{"out":{{"first_line":1,"lines":["ok"]}},"err":{{"first_line":1,"lines":["PermissionError: [Errno 13] Permission denied: login {pw}"]}}}}"#
        ),
    );
    let out = cmd()
        .env("MY_DB_PASSWORD", pw)
        .write_stdin(format!("{input}\n"))
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out.clone()).unwrap();
    assert!(!text.contains(pw), "{text}");
    let v = &lines(&out)[0];
    let ev = v["classification"]["evidence"]["text"].as_str().unwrap();
    assert!(ev.contains("[REDACTED:env:MY_DB_PASSWORD]"), "{ev}");
}
