//! One-line errors and advice for mistakes a user makes at the shell, run
//! as the user runs them (a bash pipeline of the built tools, no cluster:
//! each mistake is refused before any connection).

use tao_tests::{bash, text, Cluster};

/// A cluster environment that answers nobody (no connection is made) with
/// a fresh store in `state`.
fn offline(state: &std::path::Path) -> Cluster {
    let vars = [
        ("TAO_STATE_DIR", state.to_str().unwrap()),
        ("SLURM_BASE_RESULTS_DIR", "/var/tmp/tao-user-errors"),
        ("SLURM_HOSTNAME", "127.0.0.1:1"),
        ("SLURM_USER", "nobody"),
        ("TAO_SITE_PROFILE", "local"),
        ("TAO_RUNTIME", "none"),
    ];
    Cluster {
        vars: vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    }
}

const OPEN: &str = "tao-record open --action train --network-arch demo --gpus 1 \
                    --cpus-per-task 1 --time 00:10:00 --command 'echo hi'";

#[test]
fn a_skipped_stage_is_advised_to_go_through_the_pipeline_not_a_new_record() {
    let dir = tempfile::tempdir().unwrap();
    let c = offline(dir.path());
    // tao-render and tao-redact lint left out.
    let out = bash(
        &c,
        &[],
        &format!("{OPEN} | tao-submit | tao-record mark >/dev/null || true"),
    );
    let err = text(&out.stderr);
    let hint = err
        .lines()
        .find(|l| l.starts_with("tao-record: warning:"))
        .unwrap_or_else(|| panic!("no warning from mark: {err}"));
    assert!(
        hint.contains("missing string field `script.text`"),
        "{hint}"
    );
    assert!(!hint.contains("open a new record"), "{hint}");
    assert!(
        hint.contains("--clear-error")
            && hint.contains("| tao-render | tao-redact lint | tao-submit | tao-record mark`"),
        "{hint}"
    );
    let out = bash(&c, &[], "tao-record list");
    let rec: serde_json::Value = serde_json::from_str(text(&out.stdout).trim()).unwrap();
    assert_eq!(rec["error"]["code"], "missing_stage", "{rec}");
}

#[test]
fn a_skipped_lint_stage_is_advised_to_run_tao_redact_lint_not_a_new_record() {
    let dir = tempfile::tempdir().unwrap();
    let c = offline(dir.path());
    // tao-redact lint left out: the line has no lint stamp.
    let out = bash(
        &c,
        &[],
        &format!("{OPEN} | tao-render | tao-submit | tao-record mark >/dev/null || true"),
    );
    let err = text(&out.stderr);
    let submit = err
        .lines()
        .find(|l| l.starts_with("tao-submit: error:"))
        .unwrap_or_else(|| panic!("no error from tao-submit: {err}"));
    assert!(
        submit.contains("has no lint stamp (`lint`); it is written by tao-redact lint: pipe the lines through `tao-redact lint` first"),
        "{submit}"
    );
    let hint = err
        .lines()
        .find(|l| l.starts_with("tao-record: warning:"))
        .unwrap_or_else(|| panic!("no warning from mark: {err}"));
    assert!(!hint.contains("open a new record"), "{hint}");
    assert!(
        hint.contains("--clear-error")
            && hint.contains("| tao-render | tao-redact lint | tao-submit | tao-record mark`"),
        "{hint}"
    );
    let out = bash(&c, &[], "tao-record list");
    let rec: serde_json::Value = serde_json::from_str(text(&out.stdout).trim()).unwrap();
    assert_eq!(rec["error"]["code"], "missing_stage", "{rec}");
}

/// A job line as tao-poll reads it for a job Slurm knows (no connection is
/// made before the transport is checked).
fn live_line(id: &str) -> String {
    serde_json::json!({"id": id, "state": "RUNNING", "attempt": 1,
        "slurm": {"job_id": "4242", "login_host": "127.0.0.1:1"}})
    .to_string()
}

#[test]
fn a_bad_transport_flag_is_the_same_error_as_a_bad_tao_transport() {
    let dir = tempfile::tempdir().unwrap();
    let c = offline(dir.path());
    let submit = format!("{OPEN} | tao-render | tao-redact lint > line.json; ");
    let run = |how: &str| {
        let out = bash(
            &c,
            &[],
            &format!(
                "cd {}; {submit} {how} < line.json > /dev/null",
                dir.path().display()
            ),
        );
        (out.status.code(), text(&out.stderr))
    };
    let by_flag = run("tao-submit --transport bogus");
    let by_var = run("TAO_TRANSPORT=bogus tao-submit");
    assert_eq!(by_flag.0, Some(78), "{}", by_flag.1);
    assert_eq!(by_flag, by_var);
    assert!(
        by_flag.1.contains("TAO_TRANSPORT") && by_flag.1.contains("libssh2, openssh, local"),
        "{}",
        by_flag.1
    );
    // One list: `ssh` is openssh for the flag as for the variable (no
    // usage error; the unreachable host is what fails).
    for tool in ["tao-poll --transport ssh", "TAO_TRANSPORT=ssh tao-poll"] {
        let out = bash(
            &c,
            &[("SSH_CONFIG", "/dev/null")],
            &format!(
                "echo '{}' | {tool} > /dev/null",
                live_line("tao-20260101-aaaaaa")
            ),
        );
        let err = text(&out.stderr);
        assert_ne!(out.status.code(), Some(2), "{tool}: {err}");
        assert!(!err.contains("invalid value"), "{tool}: {err}");
    }
}

#[test]
fn a_configuration_error_stops_tao_poll_and_is_recorded_on_no_job() {
    let dir = tempfile::tempdir().unwrap();
    let c = offline(dir.path());
    // A live job (Slurm job 4242) and a never-submitted record whose submit failed.
    let setup = format!(
        r#"live=$({OPEN} | jq -r .id)
echo "{{\"id\":\"$live\",\"state\":\"PENDING\",\"observed_by\":\"tao-submit\",\"slurm\":{{\"job_id\":\"4242\",\"login_host\":\"127.0.0.1:1\"}}}}" | tao-record mark >/dev/null
{OPEN} | tao-submit 2>/dev/null | tao-record mark >/dev/null 2>&1 || true
echo "$live""#
    );
    let out = bash(&c, &[], &setup);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let live = text(&out.stdout).trim().to_string();
    let out = bash(
        &c,
        &[("TAO_TRANSPORT", "bogus")],
        &format!(
            "cd {}; set +e; tao-record list | tao-poll > polled.jsonl; echo \"poll=${{PIPESTATUS[1]}}\"; tao-record mark < polled.jsonl > /dev/null; echo \"mark=$?\"",
            dir.path().display()
        ),
    );
    let err = text(&out.stderr);
    let rcs = text(&out.stdout);
    assert!(rcs.contains("poll=78"), "{rcs} {err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("tao-poll: error: ") && err.contains("TAO_TRANSPORT"),
        "{err}"
    );
    // Nothing went to mark; the live job carries no error.
    let rec = |id: &str| {
        let out = bash(&c, &[], &format!("tao-record list --id {id}"));
        serde_json::from_str::<serde_json::Value>(text(&out.stdout).trim()).unwrap()
    };
    assert!(rec(&live).get("error").is_none(), "{}", rec(&live));
    // A line that still carries such an error (an older tao-poll, a hand-made
    // line) is not recorded on the live job either, nor advised a resubmit.
    let line = serde_json::json!({"id": live, "state": "PENDING", "observed_by": "tao-poll",
        "slurm": {"job_id": "4242"},
        "error": {"tool": "tao-poll", "code": "config", "message": "transport \"bogus\" (TAO_TRANSPORT or --transport) is not one of libssh2, openssh, local"}});
    let out = bash(
        &c,
        &[],
        &format!("echo '{line}' | tao-record mark > /dev/null"),
    );
    let err = text(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(!err.contains("submit"), "{err}");
    assert!(rec(&live).get("error").is_none(), "{}", rec(&live));
}

#[test]
fn a_slurm_job_id_where_a_record_id_belongs_is_answered_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let c = offline(dir.path());
    let setup = format!(
        r#"id=$({OPEN} | jq -r .id)
echo "{{\"id\":\"$id\",\"state\":\"PENDING\",\"observed_by\":\"tao-submit\",\"slurm\":{{\"job_id\":\"4242\"}}}}" | tao-record mark >/dev/null
echo "$id""#
    );
    let out = bash(&c, &[], &setup);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let id = text(&out.stdout).trim().to_string();
    for (cmd, says) in [
        // The store knows Slurm job 4242: its record is named.
        ("tao-poll logs 4242", format!("give the record id {id}")),
        // 999 is no job of the store: how to find the record.
        (
            "tao-poll logs 999",
            "`tao-record list` shows the record id beside SLURM 999".to_string(),
        ),
        (
            "echo 4242 | tao-submit cancel",
            "not a job line: pipe its record's job line in (`tao-record list --id RECORD_ID |"
                .to_string(),
        ),
    ] {
        let out = bash(&c, &[], &format!("{cmd} > /dev/null"));
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(65), "{cmd}: {err}");
        assert_eq!(err.lines().count(), 1, "{cmd}: {err}");
        assert!(err.contains("is a Slurm job id, not a"), "{cmd}: {err}");
        assert!(err.contains(&says), "{cmd}: {err}");
    }
}

/// Run `tool args` in the offline environment with standard output on a
/// pseudo-terminal; returns (exit status, what the terminal showed, stderr).
fn on_a_terminal(c: &Cluster, tool: &str, args: &[&str]) -> (Option<i32>, String, String) {
    use std::io::Read;
    use std::process::{Command, Stdio};
    let pty = nix::pty::openpty(None, None).expect("openpty");
    let mut cmd = Command::new(tao_tests::bin(tool));
    cmd.args(args)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env(
            "HOME",
            std::env::var("HOME").unwrap_or_else(|_| "/root".into()),
        )
        .stdin(Stdio::null())
        .stdout(Stdio::from(pty.slave))
        .stderr(Stdio::piped());
    for (k, v) in &c.vars {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("running the tool");
    // The command holds the parent's copy of the terminal's tool end.
    drop(cmd);
    // The child has exited and its end of the terminal is closed: read all
    // it showed (EIO ends the read on Linux).
    let mut shown = Vec::new();
    let mut master = std::fs::File::from(pty.master);
    let mut buf = [0u8; 4096];
    while let Ok(n) = master.read(&mut buf) {
        if n == 0 {
            break;
        }
        shown.extend_from_slice(&buf[..n]);
    }
    (out.status.code(), text(&shown), text(&out.stderr))
}

#[test]
fn preflight_on_a_terminal_prints_the_readable_form_only() {
    let dir = tempfile::tempdir().unwrap();
    let c = offline(dir.path());
    let (code, shown, err) = on_a_terminal(&c, "tao-submit", &["preflight"]);
    // The login fails (nobody answers at 127.0.0.1:1): exit 69, after the report.
    assert_eq!(code, Some(69), "{err}");
    assert!(err.contains("tao-submit preflight: FAIL login"), "{err}");
    assert!(
        !shown.contains('{') && !err.contains('{'),
        "terminal: {shown:?} stderr: {err}"
    );
    // A pipe still gets the JSON report.
    let out = bash(&c, &[], "tao-submit preflight || true");
    let stdout = text(&out.stdout);
    assert!(
        stdout.starts_with("{\"preflight\":{\"ok\":false"),
        "{stdout}"
    );
}

#[test]
fn an_unexported_secret_is_one_line_naming_the_variable_and_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let c = offline(dir.path());
    let out = bash(
        &c,
        &[],
        &format!(
            "{OPEN} --secret TAO_TEST_NOT_EXPORTED | tao-render | tao-redact lint | tao-submit | tao-record mark > /dev/null || true"
        ),
    );
    let err = text(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("tao-submit: error: ")
            && err.contains("export TAO_TEST_NOT_EXPORTED=")
            && err.contains("~/.config/tao-slurm/env"),
        "{err}"
    );
    // The documented configuration exit (tao-submit(1): 78), not "some
    // lines failed" (1): the one line failed for the environment.
    let out = bash(
        &c,
        &[],
        &format!(
            "{OPEN} --secret TAO_TEST_NOT_EXPORTED | tao-render | tao-redact lint | tao-submit > /dev/null 2>&1 && echo 0 || echo $?"
        ),
    );
    assert_eq!(text(&out.stdout).trim(), "78", "{}", text(&out.stderr));
}
