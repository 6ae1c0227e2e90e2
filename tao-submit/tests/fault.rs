//! Fault injection: the SSH connection is cut right after sbatch accepted
//! the job, before its reply can travel back. Over more than 20 cuts in one
//! run, every job must end up submitted exactly once (checked by job name
//! with squeue and sacct), released, and run.
//!
//! The cut is made by a TEST DOUBLE of sbatch, put first on the PATH of
//! this test's remote commands only (through a site profile whose
//! `remote_prefix` prepends its directory; nothing of the shared cluster
//! user's environment changes). It runs the real sbatch, then kills its
//! own sshd session process. For a few jobs it first cuts *before* running
//! sbatch, so the job does not exist and must be submitted again after the
//! bounded wait.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::Value;

use common::{assert_one_completed_job_per_name, lines_of, Doubles, Fixture};

/// Submit `lines` with the site profile `profile` (the doubles first on
/// PATH) and `--reconcile-wait SECS`; asserts exit 0 and one output line
/// per input line. Returns the output lines and stderr.
fn submit_through(
    f: &Fixture,
    profile: &Path,
    reconcile_wait: &str,
    lines: &[Value],
) -> (Vec<Value>, String) {
    let out = f.run_cmd(
        f.cmd()
            .env("TAO_SITE_PROFILE", profile)
            .args(["--reconcile-wait", reconcile_wait]),
        lines,
        0,
    );
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let got = lines_of(&out.stdout);
    assert_eq!(got.len(), lines.len(), "{stderr}");
    (got, stderr)
}

/// Leave the mark `<kind>-<id of line>` (with `text`) for the double.
fn mark(doubles: &Doubles, kind: &str, line: &Value, text: &str) {
    let id = line["id"].as_str().unwrap();
    std::fs::write(doubles.marks.join(format!("{kind}-{id}")), text).unwrap();
}

const WRAPPER: &str = r#"#!/bin/sh
# TEST DOUBLE of sbatch (tao-submit tests/fault.rs): fault injection only.
# Runs the real sbatch, then kills this SSH session (the nearest sshd
# ancestor) before the reply can travel back to the client.
marks=@MARKS@
name=
for a in "$@"; do case "$a" in --job-name=*) name=${a#--job-name=};; esac; done
@KILL_SESSION_FN@
cut() {
  echo "$1 $name" >> "$marks/cut.log"
  kill_session
}
if [ -n "$name" ] && [ -e "$marks/before-$name" ]; then rm -f "$marks/before-$name"; cut before; fi
out=$(@REAL@ "$@")
cut after
"#;

#[test]
fn every_job_is_submitted_exactly_once_across_cuts() {
    let Some(f) = Fixture::new() else { return };
    let doubles = Doubles::new("tao-fault-");
    doubles.add(
        &f,
        "sbatch",
        &WRAPPER.replace("@KILL_SESSION_FN@", common::KILL_SESSION_FN),
    );
    let profile = doubles.profile("local-fault-injection");
    let marks = &doubles.marks;

    let lines: Vec<_> = (0..21)
        .map(|i| f.line(&format!("cut{i}"), "true"))
        .collect();
    // Three jobs are first cut before sbatch runs: they must be resubmitted.
    for l in &lines[..3] {
        mark(&doubles, "before", l, "");
    }
    let (got, stderr) = submit_through(&f, &profile, "3", &lines);

    let cuts = std::fs::read_to_string(marks.join("cut.log")).unwrap();
    let n_after = cuts.lines().filter(|l| l.starts_with("after ")).count();
    let n_before = cuts.lines().filter(|l| l.starts_with("before ")).count();
    assert_eq!(n_before, 3, "{cuts}");
    assert!(n_after >= 20, "only {n_after} cuts after sbatch: {cuts}");
    assert!(stderr.contains("submit outcome unknown"), "{stderr}");

    // Exactly one job per name, the one reported, and each ran to the end
    // (released, with its log directory there before it started).
    for l in &got {
        assert_eq!(l["state"], "PENDING", "{l}");
    }
    assert_one_completed_job_per_name(&f, &got, "cut");
    // sacct (accounting) agrees once it has caught up: one row per name.
    let names: Vec<&str> = got.iter().map(|l| l["id"].as_str().unwrap()).collect();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (_, out, _) = f.c.ssh(&format!(
            "sacct -n -X -P -S now-1days --name={} -o JobName",
            names.join(",")
        ));
        let mut seen: Vec<&str> = out.lines().collect();
        seen.sort();
        let mut want = names.clone();
        want.sort();
        if seen == want {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "sacct rows by name {seen:?} != {want:?}"
        );
        std::thread::sleep(Duration::from_millis(500));
    }
}

const TIMEOUT_DOUBLE: &str = r#"#!/bin/sh
# TEST DOUBLE of sbatch (tao-submit tests/fault.rs, case
# sbatch-socket-timeout): Slurm's "Socket timed out on send/recv operation"
# cannot be provoked on demand, so this double prints it, exits 1 as sbatch
# does, and by a mark per job name decides what the controller did:
#   created  the real sbatch ran first (the job exists at once)
#   late     the real sbatch runs 2 s after the reply (the job shows up
#            during the reconcile window)
#   lost     nothing was created (the job must be submitted again)
# Without a mark it is the real sbatch.
marks=@MARKS@
name=
for a in "$@"; do case "$a" in --job-name=*) name=${a#--job-name=};; esac; done
mode=
if [ -n "$name" ] && [ -e "$marks/mode-$name" ]; then
  mode=$(cat "$marks/mode-$name"); rm -f "$marks/mode-$name"
fi
timed_out() {
  echo "$mode $name" >> "$marks/timeout.log"
  echo "sbatch: error: Batch job submission failed: Socket timed out on send/recv operation" >&2
  exit 1
}
case "$mode" in
  created) @REAL@ "$@" >/dev/null 2>&1; timed_out;;
  late) (sleep 2; @REAL@ "$@") </dev/null >/dev/null 2>&1 & timed_out;;
  lost) timed_out;;
  *) exec @REAL@ "$@";;
esac
"#;

/// Case `sbatch-socket-timeout`: sbatch's `Socket timed out on send/recv
/// operation` (exit 1) is ambiguous like a cut connection. The job is
/// looked up by name over the whole reconcile window: adopted when it
/// exists at once (`created`) or appears during the window (`late`: on
/// main, one look right after the error missed it and the line failed
/// "was not submitted"), submitted again only when it never appears
/// (`lost`). Each name ends with exactly one Slurm job, which runs.
#[test]
fn sbatch_socket_timeout() {
    let Some(f) = Fixture::new() else { return };
    let doubles = Doubles::new("tao-timeout-");
    doubles.add(&f, "sbatch", TIMEOUT_DOUBLE);
    let profile = doubles.profile("local-sbatch-timeout");
    let marks = &doubles.marks;
    let modes = ["created", "late", "lost"];
    let lines: Vec<_> = modes
        .iter()
        .map(|m| f.line(&format!("sto-{m}"), "true"))
        .collect();
    for (m, l) in modes.iter().zip(&lines) {
        mark(&doubles, "mode", l, m);
    }
    let (got, stderr) = submit_through(&f, &profile, "8", &lines);
    let log = std::fs::read_to_string(marks.join("timeout.log")).unwrap();
    assert_eq!(log.lines().count(), 3, "{log}");
    assert!(
        stderr
            .matches("Socket timed out on send/recv operation")
            .count()
            >= 3,
        "{stderr}"
    );
    // Only `lost` is submitted again.
    assert_eq!(
        stderr.matches("no job by that name after").count(),
        1,
        "{stderr}"
    );
    for (m, l) in modes.iter().zip(&got) {
        assert!(l.get("error").is_none(), "{m}: {l}");
        assert_one_completed_job_per_name(&f, std::slice::from_ref(l), m);
    }
}
