//! Real jobs on the local Slurm cluster, driven into each state and polled
//! over SSH by the binary: PENDING (held), RUNNING, SUSPENDED, COMPLETED
//! with a successful and a failing program, FAILED, CANCELLED, TIMEOUT,
//! NODE_FAIL with and without requeue, and unknown ids.
//! Skipped with a reason when the cluster is down and CI is unset; failing
//! under CI=true.

mod util;

use std::sync::Mutex;
use std::time::Duration;

use serde_json::{json, Value};
use util::*;

/// Node-failure tests take a node down: one at a time.
static NODE_LOCK: Mutex<()> = Mutex::new(());

#[test]
fn held_job_is_pending_then_cancelled() {
    let Some(env) = need_cluster() else { return };
    let job = submit(&env, "held", "sleep 5", "", false);
    // Polled until the reason shows: Slurm may show `None` until its
    // scheduler has looked at the job.
    let v = poll_until(&env, &job.line, Duration::from_secs(60), |v| {
        message(v).starts_with("PENDING (JobHeldUser)")
    });
    // The reason in words, what to do (a hold never clears by itself), and
    // no expected start: Slurm has none for a held job.
    assert!(
        v["pending"]["words"]
            .as_str()
            .unwrap()
            .contains("held by you"),
        "{v}"
    );
    assert!(v["pending"]["action"]
        .as_str()
        .unwrap()
        .contains("scontrol release"));
    assert!(v["pending"]["expected_start"].is_null(), "{v}");
    assert_eq!(state(&v), "PENDING");
    assert_eq!(v["slurm"]["native_state"], "PENDING");
    assert_eq!(v["slurm"]["reason"], "JobHeldUser");
    assert_eq!(v["observed_by"], "tao-poll");
    assert_eq!(v["slurm"]["login_host"], env["SLURM_HOSTNAME"].as_str());
    sh(&format!("scancel {}", job.sid));
    // squeue says CANCELLED; sacct (when it has caught up) adds who did it.
    let v = poll_until(&env, &v, Duration::from_secs(180), |v| {
        message(v).starts_with("CANCELLED by 0")
    });
    assert_eq!(state(&v), "CANCELED");
}

#[test]
fn running_then_suspended_then_cancelled() {
    let Some(env) = need_cluster() else { return };
    let job = submit(&env, "susp", "sleep 300", "", true);
    let v = poll_until(&env, &job.line, Duration::from_secs(180), |v| {
        state(v) == "RUNNING"
    });
    assert_eq!(message(&v), "RUNNING");
    assert!(
        v["slurm"]["nodes"]
            .as_str()
            .is_some_and(|n| n.starts_with('n')),
        "{v}"
    );
    assert!(v["slurm"]["start_time"].as_str().is_some());
    // squeue's EndTime of a running job is only the expected end.
    assert!(v["slurm"]["end_time"].is_null(), "{v}");
    sh(&format!("scontrol suspend {}", job.sid));
    let v = poll_until(&env, &v, Duration::from_secs(60), |v| {
        v["slurm"]["native_state"] == "SUSPENDED"
    });
    assert_eq!((state(&v), message(&v)), ("RUNNING", "SUSPENDED"));
    sh(&format!("scontrol resume {}", job.sid));
    let v = poll_until(&env, &v, Duration::from_secs(60), |v| {
        v["slurm"]["native_state"] == "RUNNING"
    });
    cancel(&job.sid);
    // squeue says CANCELLED; sacct (when it has caught up) adds who did it.
    let v = poll_until(&env, &v, Duration::from_secs(180), |v| {
        message(v).starts_with("CANCELLED by 0")
    });
    assert_eq!(state(&v), "CANCELED");
}

#[test]
fn completed_success_and_failing_programs() {
    let Some(env) = need_cluster() else { return };
    // TAO-style status.json SUCCESS.
    let ok = submit(
        &env,
        "ok",
        r#"echo '{"status":"STARTED","message":"go"}' >> $RESULTS_DIR/status.json; echo '{"status":"SUCCESS","message":"Train finished successfully."}' >> $RESULTS_DIR/status.json"#,
        "",
        true,
    );
    // The program fails, says so in status.json, and the script still exits 0.
    let bad = submit(
        &env,
        "bad",
        r#"echo '{"status":"FAILURE","message":"loss is nan"}' >> $RESULTS_DIR/status.json; true"#,
        "",
        true,
    );
    // No status.json: the completion record decides.
    let plain = submit(&env, "plain", "echo hello", "", true);
    // Final, and with sacct caught up (the exit code comes from sacct only
    // once its row shows the job ended too).
    let final_ = |v: &serde_json::Value| {
        matches!(state(v), "COMPLETE" | "ERROR" | "CANCELED") && v["slurm"]["exit_code"].is_string()
    };
    let v = poll_until(&env, &ok.line, Duration::from_secs(180), final_);
    assert_eq!(state(&v), "COMPLETE", "{v}");
    assert_eq!(message(&v), "COMPLETED exit 0:0; status.json SUCCESS");
    let v = poll_until(&env, &bad.line, Duration::from_secs(180), final_);
    assert_eq!(state(&v), "ERROR", "{v}");
    assert_eq!(
        message(&v),
        "COMPLETED exit 0:0; status.json FAILURE: loss is nan"
    );
    let v = poll_until(&env, &plain.line, Duration::from_secs(180), final_);
    assert_eq!(
        (state(&v), message(&v)),
        (
            "COMPLETE",
            "COMPLETED exit 0:0; completion.json exit_code 0"
        ),
        "{v}"
    );
}

#[test]
fn failed_program_with_evidence() {
    let Some(env) = need_cluster() else { return };
    let token = format!("hf_{}", "QwErTyUiOpAsDfGhJkLzXcVbNm12345678");
    let job = submit(
        &env,
        "fail",
        &format!("echo starting; echo HF_TOKEN={token}; echo 'RuntimeError: boom' >&2; exit 3"),
        "",
        true,
    );
    let v = poll_until(&env, &job.line, Duration::from_secs(180), |v| {
        state(v) == "ERROR" && v["slurm"]["exit_code"].is_string()
    });
    assert_eq!(message(&v), "FAILED exit 3:0");
    assert_eq!(v["slurm"]["exit_code"], "3:0");
    let (v, code) = poll_once(&env, &job.line, &["--evidence"]);
    assert_eq!(code, 0);
    let out = &v["evidence"]["out"];
    assert_eq!(out["first_line"], 1, "{v}");
    assert_eq!(out["lines"][0], "starting");
    assert!(!v.to_string().contains(&token), "secret in evidence: {v}");
    assert_eq!(v["evidence"]["err"]["lines"][0], "RuntimeError: boom");
}

#[test]
fn timeout_with_a_one_minute_limit() {
    let Some(env) = need_cluster() else { return };
    let job = submit(&env, "timeout", "sleep 600", "--time=1", true);
    let v = poll_until(&env, &job.line, Duration::from_secs(300), |v| {
        state(v) == "ERROR" || state(v) == "CANCELED"
    });
    assert_eq!(v["slurm"]["native_state"], "TIMEOUT", "{v}");
    assert!(message(&v).starts_with("TIMEOUT"), "{v}");
    cancel(&job.sid);
}

#[test]
fn unknown_ids_and_lists_with_invalid_ids() {
    let Some(env) = need_cluster() else { return };
    // A single id squeue never knew: squeue exits 1 "Invalid job id specified".
    let out = tao_poll(&env).arg("99999991").output().unwrap();
    assert_exit_0(&out);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (state(&v), message(&v)),
        ("UNKNOWN", "job 99999991 is not known to squeue or sacct")
    );
    // A valid id in a list with invalid ones is not lost.
    let job = submit(&env, "list", "sleep 5", "", false);
    let out = tao_poll(&env)
        .args(["99999992", &job.sid, "99999993"])
        .output()
        .unwrap();
    let lines: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(state(&lines[1]), "PENDING", "{}", lines[1]);
    assert_eq!(state(&lines[0]), "UNKNOWN");
    assert_eq!(state(&lines[2]), "UNKNOWN");
    cancel(&job.sid);
}

#[test]
fn unreachable_host_keeps_state_and_says_why() {
    let Some(mut env) = need_cluster() else {
        return;
    };
    env.insert("SLURM_HOSTNAME".into(), "127.0.0.1:1".into());
    let out = tao_poll(&env)
        .write_stdin("{\"id\":\"x\",\"state\":\"RUNNING\",\"slurm\":{\"job_id\":\"5\"}}\n")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(69));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(state(&v), "RUNNING");
    assert_eq!(v["error"]["code"], "unavailable");
    assert!(v.get("observed_at").is_none());
}

fn node_fail(requeue: bool) {
    let Some(env) = need_cluster() else { return };
    let _serial = NODE_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let flag = if requeue { "--requeue" } else { "--no-requeue" };
    let job = submit(
        &env,
        if requeue { "nfrq" } else { "nf" },
        "sleep 120",
        &format!("{flag} -w n2"),
        true,
    );
    let _guard = NodeGuard("n2".into());
    let v = poll_until(&env, &job.line, Duration::from_secs(180), |v| {
        state(v) == "RUNNING"
    });
    sh("scontrol update nodename=n2 state=down reason=tao-poll-test");
    if requeue {
        // The job goes back to PENDING (a requeue, not an error); restore the
        // node so the new attempt can run, and see its restart count.
        let v = poll_until(&env, &v, Duration::from_secs(180), |v| {
            state(v) == "PENDING" && v["slurm"]["restart_count"].as_u64().unwrap_or(0) >= 1
        });
        assert!(
            message(&v).contains("requeued") || message(&v).contains("restart 1"),
            "{v}"
        );
        drop(_guard);
        let v = poll_until(&env, &v, Duration::from_secs(300), |v| {
            state(v) == "RUNNING"
        });
        assert_eq!(v["slurm"]["restart_count"], 1, "{v}");
        cancel(&job.sid);
    } else {
        let v = poll_until(&env, &v, Duration::from_secs(180), |v| state(v) == "ERROR");
        assert_eq!(v["slurm"]["native_state"], "NODE_FAIL", "{v}");
        assert!(message(&v).starts_with("NODE_FAIL"), "{v}");
    }
}

#[test]
fn node_fail_without_requeue_is_an_error() {
    node_fail(false);
}

#[test]
fn node_fail_with_requeue_follows_the_new_attempt() {
    node_fail(true);
}

#[test]
fn one_session_for_lines_with_and_without_a_login_host() {
    let Some(env) = need_cluster() else { return };
    let host = &env["SLURM_HOSTNAME"];
    let input = format!(
        "{{\"slurm\":{{\"job_id\":\"99999994\",\"login_host\":\"{host}\"}}}}\n{{\"slurm\":{{\"job_id\":\"99999995\"}}}}\n{{\"slurm\":{{\"job_id\":\"99999996\",\"login_host\":\"{host}\"}}}}\n"
    );
    let out = tao_poll(&env)
        .arg("--stats")
        .write_stdin(input)
        .output()
        .unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("lines=3 handshakes=1"), "{stderr}");
    assert_eq!(String::from_utf8(out.stdout).unwrap().lines().count(), 3);
}

#[test]
fn watch_prints_transitions_and_exits_0_when_all_complete() {
    let Some(env) = need_cluster() else { return };
    let job = submit(&env, "watch", "sleep 3; echo done", "", true);
    let out = tao_poll(&env)
        .args(["--watch", "--interval", "1"])
        .write_stdin(format!("{}\n", job.line))
        .timeout(Duration::from_secs(240))
        .output()
        .unwrap();
    // (state, message, error): what tao-poll judges a transition by.
    let seen: Vec<(String, String, String)> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (
                state(&v).to_string(),
                message(&v).to_string(),
                v["error"].to_string(),
            )
        })
        .collect();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{seen:?} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        seen.last().map(|(s, _, _)| s.as_str()),
        Some("COMPLETE"),
        "{seen:?}"
    );
    // One line per transition: no two consecutive lines repeat a
    // state+message+error. (How many transitions there are depends on what the
    // polls catch: a pending reason that changes, COMPLETING, ...)
    assert!(
        seen.windows(2).all(|w| w[0] != w[1]),
        "a line repeats the one before it: {seen:?}"
    );
}

#[test]
fn watch_stops_on_sigterm_without_losing_lines() {
    let Some(env) = need_cluster() else { return };
    let job = submit(&env, "wterm", "sleep 5", "", false);
    let mut child = tao_poll_proc(&env)
        .args(["--watch", "--interval", "1", &job.sid])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait (bounded) for the first line, then send SIGTERM.
    use std::io::BufRead;
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut reader = std::io::BufReader::new(stdout);
        let mut first = String::new();
        let _ = reader.read_line(&mut first);
        let _ = tx.send((first, reader));
    });
    let Ok((first, mut reader)) = rx.recv_timeout(Duration::from_secs(120)) else {
        let _ = child.kill();
        panic!("tao-poll --watch printed no line within 120 s");
    };
    assert!(first.contains("\"state\":\"PENDING\""), "{first}");
    sh(&format!("kill -TERM {}", child.id()));
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "watch did not stop on SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    // 128 + SIGTERM.
    assert_eq!(status.code(), Some(143));
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut reader, &mut rest).unwrap();
    assert!(
        rest.lines()
            .all(|l| serde_json::from_str::<serde_json::Value>(l).is_ok()),
        "half line: {rest:?}"
    );
    cancel(&job.sid);
}

#[test]
fn logs_tail_redacted_from_a_record_and_from_stdin() {
    let Some(env) = need_cluster() else { return };
    let token = format!("hf_{}", "ZxCvBnMaSdFgHjKlQwErTyUiOp98765432");
    let body = format!(
        "for i in $(seq 1 300); do echo line $i; done; echo HF_TOKEN={token}; echo to-err >&2"
    );
    let job = submit(&env, "logs", &body, "", true);
    poll_until(&env, &job.line, Duration::from_secs(180), |v| {
        matches!(state(v), "COMPLETE" | "ERROR")
    });
    // From the record store, read-only.
    let state_dir = tempfile::tempdir().unwrap();
    let store = tao_store::Store::open(state_dir.path().to_path_buf()).unwrap();
    // As `tao-record open` writes it: a record holds a state.
    let mut map = job.line.as_object().unwrap().clone();
    map.entry("state")
        .or_insert_with(|| serde_json::json!("PENDING"));
    store
        .create(&tao_store::store::Record::from_map(map))
        .unwrap();
    let out = tao_poll(&env)
        .env("TAO_STATE_DIR", state_dir.path())
        .args(["logs", &job.id, "-n", "3"])
        .output()
        .unwrap();
    assert_exit_0(&out);
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert_eq!(lines[0], "line 299");
    assert!(!text.contains(&token), "secret printed: {text}");
    // --no-redact prints it as is; --err reads main.err; a job line on stdin works.
    let out = tao_poll(&env)
        .args(["logs", "-", "-n", "1", "--no-redact"])
        .write_stdin(format!("{}\n", job.line))
        .output()
        .unwrap();
    assert!(String::from_utf8(out.stdout).unwrap().contains(&token));
    let out = tao_poll(&env)
        .args(["logs", "-", "--err"])
        .write_stdin(format!("{}\n", job.line))
        .output()
        .unwrap();
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "to-err\n");
    // An unknown record: a one-line error naming it.
    let out = tao_poll(&env)
        .env("TAO_STATE_DIR", state_dir.path())
        .args(["logs", "tp-nope"])
        .output()
        .unwrap();
    assert_ne!(out.status.code(), Some(0));
    assert!(String::from_utf8(out.stderr).unwrap().contains("tp-nope"));
}

/// `logs --err` of a job whose main.err is empty printed nothing at all,
/// so a user could not tell an empty file from a broken command. On a
/// terminal one stderr line says so; stdout stays empty (a pipe reads
/// nothing) and the exit status is 0.
#[test]
fn logs_err_of_an_empty_main_err_says_so_on_a_terminal_only() {
    use std::io::Read;
    let Some(env) = need_cluster() else { return };
    let job = submit(&env, "emptyerr", "echo only-out", "", true);
    poll_until(&env, &job.line, Duration::from_secs(180), |v| {
        matches!(state(v), "COMPLETE" | "ERROR")
    });
    // A pipe: nothing on either stream.
    let out = tao_poll(&env)
        .args(["logs", "-", "--err"])
        .write_stdin(format!("{}\n", job.line))
        .output()
        .unwrap();
    assert_exit_0(&out);
    assert!(out.stdout.is_empty() && out.stderr.is_empty(), "{out:?}");
    // stderr on a terminal: one line naming the file and the job.
    let pty = nix::pty::openpty(None, None).expect("openpty");
    let input = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(input.path(), format!("{}\n", job.line)).unwrap();
    let mut child = tao_poll_proc(&env)
        .args(["logs", "-", "--err"])
        .stdin(std::fs::File::open(input.path()).unwrap())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::from(pty.slave))
        .spawn()
        .unwrap();
    // The terminal's side is read while the tool runs; it ends (EIO) when
    // the tool has exited and closed it.
    let mut master = std::fs::File::from(pty.master);
    let reader = std::thread::spawn(move || {
        let (mut all, mut buf) = (Vec::new(), [0u8; 4096]);
        while let Ok(n) = master.read(&mut buf) {
            if n == 0 {
                break;
            }
            all.extend_from_slice(&buf[..n]);
        }
        all
    });
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    let status = child.wait().unwrap();
    let err = String::from_utf8_lossy(&reader.join().unwrap()).replace('\r', "");
    assert_eq!(status.code(), Some(0), "{err}");
    assert_eq!(stdout, "", "stdout stays empty");
    assert_eq!(
        err,
        format!(
            "tao-poll: main.err of job {} is empty (Slurm job {})\n",
            job.id, job.sid
        )
    );
    // main.out of the same job is not empty: no note.
    let out = tao_poll(&env)
        .args(["logs", "-"])
        .write_stdin(format!("{}\n", job.line))
        .output()
        .unwrap();
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "only-out\n");
}

#[test]
fn logs_follow_streams_until_the_job_ends() {
    let Some(env) = need_cluster() else { return };
    let job = submit(
        &env,
        "follow",
        "echo first; sleep 4; echo second; sleep 2; echo third",
        "",
        true,
    );
    poll_until(&env, &job.line, Duration::from_secs(180), |v| {
        state(v) == "RUNNING" || state(v) == "COMPLETE"
    });
    let out = tao_poll(&env)
        .args(["logs", "-", "--follow"])
        .write_stdin(format!("{}\n", job.line))
        .timeout(Duration::from_secs(180))
        .output()
        .unwrap();
    assert_exit_0(&out);
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "first\nsecond\nthird\n"
    );
}

#[test]
fn logs_of_a_job_not_started_yet_try_again_or_wait_for_it() {
    use std::io::Write;
    let Some(env) = need_cluster() else { return };
    // Held: PENDING, no log file yet.
    let job = submit(&env, "notyet", "echo hello; sleep 1; echo bye", "", false);
    poll_until(&env, &job.line, Duration::from_secs(30), |v| {
        state(v) == "PENDING"
    });
    let out = tao_poll(&env)
        .args(["logs", "-"])
        .write_stdin(format!("{}\n", job.line))
        .output()
        .unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(75), "{err}");
    assert!(err.starts_with("tao-poll: error: no log file"), "{err}");
    assert!(err.contains("has not started yet (PENDING)"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(out.stdout.is_empty());
    // --follow waits on the pending job (on a pipe: silently), then streams.
    let mut child = spawn_tao_poll(&env, &["logs", "-", "--follow"]);
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "{}", job.line).unwrap();
    drop(stdin);
    // Still waiting after a few rounds while the job is held.
    let until = std::time::Instant::now() + Duration::from_secs(5);
    while std::time::Instant::now() < until {
        assert!(
            child.try_wait().unwrap().is_none(),
            "logs --follow gave up on a pending job"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    sh(&format!("scontrol release {}", job.sid));
    let (code, stdout, stderr) = wait_bounded(child, Duration::from_secs(180));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout, "hello\nbye\n");
    assert_eq!(stderr, "", "nothing extra on a pipe");
}

#[test]
fn logs_follow_of_a_job_that_ends_without_starting_is_an_error() {
    use std::io::Write;
    let Some(env) = need_cluster() else { return };
    let job = submit(&env, "never", "echo never", "", false);
    poll_until(&env, &job.line, Duration::from_secs(30), |v| {
        state(v) == "PENDING"
    });
    let mut child = spawn_tao_poll(&env, &["logs", "-", "--follow"]);
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "{}", job.line).unwrap();
    drop(stdin);
    cancel(&job.sid);
    let (code, stdout, stderr) = wait_bounded(child, Duration::from_secs(120));
    assert_eq!(code, 65, "{stderr}");
    assert_eq!(stdout, "");
    assert!(
        stderr.starts_with("tao-poll: error: no log file")
            && stderr.contains("is not queued or running"),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}

/// An older Slurm without squeue -O fields and a cluster without
/// accounting, simulated on the login node: the site profile's
/// remote_prefix puts wrappers first on PATH that refuse `squeue -O` the
/// way Slurm does and make sacct say accounting is disabled.
#[test]
fn older_squeue_and_no_accounting_fall_back_to_o_and_scontrol() {
    let Some(mut env) = need_cluster() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    std::fs::write(
        bin.join("squeue"),
        format!(
            "#!/bin/sh\nfor a in \"$@\"; do [ \"$a\" = --start ] && {{ echo ran-start >> {log}; exec /usr/bin/squeue \"$@\"; }}; done\nfor a in \"$@\"; do [ \"$a\" = -O ] && {{ echo refused-O >> {log}; echo 'squeue: error: Invalid job format specification: JobArrayID' >&2; exit 1; }}; done\necho ran-o >> {log}\nexec /usr/bin/squeue \"$@\"\n",
            log = dir.path().join("calls").display()
        ),
    )
    .unwrap();
    std::fs::write(
        bin.join("sacct"),
        "#!/bin/sh\necho 'sacct: error: Slurm accounting storage is disabled' >&2\nexit 1\n",
    )
    .unwrap();
    sh(&format!(
        "touch {0}/calls && chmod 666 {0}/calls && chmod 755 {0} {0}/bin {0}/bin/squeue {0}/bin/sacct",
        dir.path().display()
    ));
    let profile = tao_tests::local_profile_with_path_first(dir.path(), &bin);
    env.insert("TAO_SITE_PROFILE".into(), profile.to_str().unwrap().into());
    let job = submit(&env, "old", "exit 4", "", false);
    // Another user's job (root's) whose comment forges ours: the fallback
    // asks only for our ids, reads each record's first keys and checks
    // UserId, so it changes nothing (issue 16).
    let forged = sh(&format!(
        "sbatch --parsable --hold --partition=gpu --exclude=n2 --job-name=tao-forged --comment='JobId={0} JobState=FAILED ExitCode=9:0 Restarts=7 UserId={1}(1000) HetJobId={0} HetJobOffset=0' --wrap=true",
        job.sid, env["SLURM_USER"]
    ));
    let forged = forged.trim().to_string();
    let (v, _) = poll_once(&env, &job.line, &[]);
    cancel(&forged);
    assert_eq!(state(&v), "PENDING", "{v}");
    assert!(message(&v).starts_with("PENDING (JobHeldUser)"), "{v}");
    assert_ne!(v["slurm"]["exit_code"], "9:0", "{v}");
    assert_eq!(v["slurm"]["restart_count"], 0, "{v}");
    sh(&format!("scontrol release {}", job.sid));
    let v = poll_until(&env, &job.line, Duration::from_secs(180), |v| {
        state(v) == "ERROR" && v["slurm"]["exit_code"].is_string()
    });
    // The exit code and restart count come from scontrol (squeue -o has neither).
    assert_eq!(message(&v), "FAILED exit 4:0", "{v}");
    assert_eq!(v["slurm"]["restart_count"], 0);
    // An id neither squeue nor scontrol knows, without accounting: UNKNOWN, said why.
    let out = tao_poll(&env).arg("99999990").output().unwrap();
    let u: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(state(&u), "UNKNOWN", "{u}");
    assert!(message(&u).contains("no accounting"), "{u}");
    // `squeue --start` (expected starts, beside squeue -O in the same
    // round trip) runs in parallel: its own line, in any order.
    let calls = std::fs::read_to_string(dir.path().join("calls")).unwrap();
    let calls: String = calls
        .lines()
        .filter(|l| *l != "ran-start")
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(calls.starts_with("refused-O\nran-o\n"), "{calls}");
}

/// The Slurm version of the cluster under test (`sinfo -V`: `slurm-wlm
/// 22.05.8`), major.minor.
fn slurm_version() -> String {
    let v = sh("sinfo -V");
    let v = v.split_whitespace().last().unwrap_or("").to_string();
    v.splitn(3, '.').take(2).collect::<Vec<_>>().join(".")
}

/// The difference between versions the tools must survive: Slurm 22.05
/// does not create a missing `--output` directory (the job dies at once,
/// FAILED 0:53), 23.02 and later (24.11 here) create it and the job runs.
/// tao-submit creates the log directory before releasing the job, so both
/// work; tao-poll reports what each did.
#[test]
fn missing_output_directory_fails_on_22_05_and_is_created_on_24_11() {
    let Some(env) = need_cluster() else { return };
    let base = &env["SLURM_BASE_RESULTS_DIR"];
    let dir = format!("{base}/jobs/{}", new_id("nodir"));
    sh(&format!(
        "mkdir -p {dir} && chown {} {dir}",
        env["SLURM_USER"]
    ));
    let sid = as_user(
        &env,
        &format!(
            "cd {dir} && sbatch --parsable --exclude=n2 -o {dir}/missing/x-%j.out --wrap 'echo hi'"
        ),
    )
    .trim()
    .to_string();
    let line = serde_json::json!({"id": new_id("nodir"), "slurm": {"job_id": sid}});
    // The end state comes from squeue first; the exit code only once sacct
    // shows the end too (accounting lags), so wait for both.
    let v = poll_until(&env, &line, Duration::from_secs(180), |v| {
        matches!(state(v), "COMPLETE" | "ERROR") && v["slurm"]["exit_code"].is_string()
    });
    match slurm_version().as_str() {
        "22.05" => {
            assert_eq!(state(&v), "ERROR", "{v}");
            assert_eq!(v["slurm"]["exit_code"], "0:53", "{v}");
            assert!(!std::path::Path::new(&format!("{dir}/missing")).exists());
        }
        other => {
            assert!(other >= "23.02", "untested Slurm {other}");
            assert_eq!(state(&v), "COMPLETE", "{v}");
            let out = std::fs::read_to_string(format!("{dir}/missing/x-{sid}.out")).unwrap();
            assert_eq!(out, "hi\n");
        }
    }
}

/// A job that may start only in an hour: its reason in words and the
/// expected start `squeue --start` gives (the begin time), in the same
/// round trip as squeue and sacct.
#[test]
fn begin_time_job_shows_words_and_expected_start() {
    let Some(env) = need_cluster() else { return };
    let job = submit(&env, "begin", "true", "--begin=now+3600", true);
    let v = poll_until(&env, &job.line, Duration::from_secs(60), |v| {
        v["pending"]["reason"] == "BeginTime"
    });
    assert_eq!(state(&v), "PENDING");
    let p = &v["pending"];
    assert!(
        p["words"].as_str().unwrap().contains("earliest start time"),
        "{v}"
    );
    assert_eq!(p["clears"], true);
    let start = tao_core::time::parse_rfc3339(p["expected_start"].as_str().unwrap())
        .unwrap_or_else(|| panic!("no expected start: {v}"));
    let in_s = (start - chrono::Utc::now()).num_seconds();
    assert!(
        (3000..=3700).contains(&in_s),
        "expected start in {in_s} s: {v}"
    );
}

/// The demo training job (examples/demo/train.py) writes status.json the
/// way TAO's status logger does; `tao-poll --watch` on a pipe prints a
/// line per change, and its `progress` advances epoch by epoch and ends at
/// 100% with the final KPI of the file.
#[test]
fn demo_training_progress_advances_epoch_by_epoch() {
    let Some(env) = need_cluster() else { return };
    let base = &env["SLURM_BASE_RESULTS_DIR"];
    let user = &env["SLURM_USER"];
    let demo = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/demo");
    let code = format!("{base}/jobs/tp-demo-code-{}", std::process::id());
    sh(&format!(
        "mkdir -p {code} && cp {demo}/train.py {code}/ && chown -R {user} {code}"
    ));
    let spec = std::fs::read_to_string(format!("{demo}/spec.yaml"))
        .unwrap()
        .replace("num_epochs: 4", "num_epochs: 6")
        .replace("step_seconds: 0.05", "step_seconds: 0.12");
    std::fs::write(format!("{code}/spec.yaml"), spec).unwrap();
    sh(&format!("chown {user} {code}/spec.yaml"));
    let job = submit(
        &env,
        "progress",
        &format!("python3 {code}/train.py -e {code}/spec.yaml -r \"$RESULTS_DIR\""),
        "",
        true,
    );
    let mut child = spawn_tao_poll(&env, &["--watch", "--interval", "1"]);
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        writeln!(stdin, "{}", job.line).unwrap();
    }
    let (code_rc, out, err) = wait_bounded(child, Duration::from_secs(180));
    assert_eq!(code_rc, 0, "{err}\n{out}");
    let lines: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let epochs: Vec<u64> = lines
        .iter()
        .filter(|v| state(v) == "RUNNING")
        .filter_map(|v| v["progress"]["epoch"].as_u64())
        .collect();
    // Never backwards; a line per change may repeat an epoch (the records
    // TAO writes after the last epoch change updated_at, not the epoch).
    assert!(
        epochs.windows(2).all(|w| w[0] <= w[1]),
        "epochs go forward: {epochs:?}"
    );
    let mut seen = epochs.clone();
    seen.dedup();
    assert!(
        seen.len() >= 3,
        "epochs seen while running: {epochs:?}\n{out}"
    );
    for v in lines.iter().filter(|v| v["progress"].is_object()) {
        let p = &v["progress"];
        assert_eq!(p["max_epoch"], 6, "{v}");
        assert!(p["updated_at"].as_str().is_some(), "{v}");
    }
    let last = lines.last().unwrap();
    assert_eq!(state(last), "COMPLETE", "{last}");
    let p = &last["progress"];
    assert_eq!(
        (p["epoch"].as_u64(), p["percent"].as_f64()),
        (Some(6), Some(100.0)),
        "{last}"
    );
    // The final KPI is the file's last one, which (as TAO writes it) is
    // the RUNNING "Train finished successfully." record: the verdict.
    assert!(message(last).ends_with("status.json SUCCESS"), "{last}");
    let status = std::fs::read_to_string(format!(
        "{}/status.json",
        job.line["storage"]["results_dir"].as_str().unwrap()
    ))
    .unwrap();
    let final_kpi: Value =
        serde_json::from_str::<Value>(status.lines().last().unwrap()).unwrap()["kpi"].clone();
    assert_eq!(p["kpi"], final_kpi, "{last}");
    assert_eq!(p["history"]["loss"].as_array().unwrap().len(), 6, "{p}");
    sh(&format!("rm -rf {code}"));
}

/// Issue 16: the sidecar outlived a job killed before its trap ran. The
/// test job's script (like a job SIGKILLed before its trap) never removes
/// it; once tao-poll sees the job in an end state, its sweep does. Lines
/// without `secrets` are not swept (no extra round trip).
#[test]
fn an_ended_jobs_sidecar_is_swept_by_tao_poll() {
    let Some(env) = need_cluster() else { return };
    let job = submit(&env, "sweep", "echo done", "", false);
    let job_dir = job.line["storage"]["job_dir"].as_str().unwrap().to_string();
    let env_dir = format!("{job_dir}/env");
    sh(&format!(
        "mkdir -p {env_dir} && (umask 077; printf \"export MY_DB_PASSWORD='plain words are my db password'\\n\" > {env_dir}/secrets.env) && chown -R {} {env_dir}",
        env["SLURM_USER"]
    ));
    sh(&format!("scontrol release {}", job.sid));
    let mut line = job.line.clone();
    line["secrets"] = json!(["MY_DB_PASSWORD"]);
    // Still queued or running: the sidecar stays.
    let (v, _) = poll_once(&env, &line, &[]);
    if !matches!(state(&v), "COMPLETE" | "ERROR" | "CANCELED") {
        assert!(std::path::Path::new(&format!("{env_dir}/secrets.env")).exists());
    }
    let v = poll_until(&env, &line, Duration::from_secs(180), |v| {
        state(v) == "COMPLETE"
    });
    assert_eq!(state(&v), "COMPLETE", "{v}");
    let left: Vec<String> = std::fs::read_dir(&env_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(left.is_empty(), "job dir env/ after the sweep: {left:?}");
}

/// Issue 16: `tao-poll logs` built its redactor from the environment only,
/// and `--follow` could print the first part of a value split across two
/// reads. The job writes the value of a secret its line names in two
/// pieces, seconds apart, on stdout; `logs` and `logs --follow` (started
/// while it runs) print neither piece.
#[test]
fn logs_mask_the_lines_own_secret_even_split_across_reads() {
    let Some(env) = need_cluster() else { return };
    let (a, b) = ("plain words are", " my db password");
    let pw = format!("{a}{b}");
    let body =
        format!("echo start; printf 'login %s' '{a}'; sleep 5; printf '%s ok\\n' '{b}'; echo end");
    let job = submit(&env, "split", &body, "", true);
    let mut line = job.line.clone();
    line["secrets"] = json!(["MY_DB_PASSWORD"]);
    poll_until(&env, &job.line, Duration::from_secs(180), |v| {
        state(v) == "RUNNING" || state(v) == "COMPLETE"
    });
    let out = tao_poll(&env)
        .env("MY_DB_PASSWORD", &pw)
        .args(["logs", "-", "--follow"])
        .write_stdin(format!("{line}\n"))
        .timeout(Duration::from_secs(180))
        .output()
        .unwrap();
    assert_exit_0(&out);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(!text.contains(a) && !text.contains(b.trim()), "{text}");
    assert!(
        text.contains("login [REDACTED:env:MY_DB_PASSWORD] ok\n"),
        "{text}"
    );
    let out = tao_poll(&env)
        .env("MY_DB_PASSWORD", &pw)
        .args(["logs", "-"])
        .write_stdin(format!("{line}\n"))
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        !text.contains(a) && text.contains("[REDACTED:env:MY_DB_PASSWORD]"),
        "{text}"
    );
}
