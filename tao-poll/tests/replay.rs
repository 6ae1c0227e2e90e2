//! Offline replay: saved squeue/sacct/scontrol outputs (and status files
//! under a replay root) through the real binary, as a user would run it.
//! Every state name and annotation Slurm prints, from both commands, is
//! checked against the vocabulary (squeue(1)/sacct(1) JOB STATE CODES,
//! Slurm's job_state_codes.html for the newer flags).

use std::path::Path;

use assert_cmd::Command;
use serde_json::Value;

/// The binary with a cleared environment.
fn cmd() -> Command {
    let mut c = Command::cargo_bin("tao-poll").unwrap();
    c.env_clear();
    c
}

struct Run {
    lines: Vec<Value>,
    stderr: String,
    code: i32,
}

fn run(c: &mut Command) -> Run {
    let out = c.output().unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    Run {
        lines: stdout
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect(),
        stderr: String::from_utf8(out.stderr).unwrap(),
        code: out.status.code().unwrap_or(-1),
    }
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    if let Some(parent) = p.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_string()
}

/// sacct's reply on a cluster without accounting (tao-poll then asks
/// scontrol).
const NO_ACCOUNTING: &str = "sacct: error: Slurm accounting storage is disabled\n";

/// A replay: squeue's and sacct's replies saved as `squeue.txt` and
/// `sacct.txt` in a test's directory (and scontrol's as `scontrol.txt`,
/// when given), and tao-poll reading them.
struct Replay {
    /// Path of the saved squeue reply.
    squeue: String,
    /// Path of the saved sacct reply.
    sacct: String,
    /// Path of the saved scontrol reply, if any.
    scontrol: Option<String>,
}

impl Replay {
    /// Save the two replies in `dir`.
    fn write(dir: &Path, squeue: &str, sacct: &str) -> Self {
        Replay {
            squeue: write(dir, "squeue.txt", squeue),
            sacct: write(dir, "sacct.txt", sacct),
            scontrol: None,
        }
    }

    /// A cluster without accounting: squeue knows none of the jobs, sacct
    /// says accounting is disabled ([`NO_ACCOUNTING`]), and scontrol
    /// answers `scontrol` (saved in `dir`).
    fn no_accounting(dir: &Path, scontrol: &str) -> Self {
        Replay {
            scontrol: Some(write(dir, "scontrol.txt", scontrol)),
            ..Replay::write(dir, "", NO_ACCOUNTING)
        }
    }

    /// [`cmd`] with `--replay-squeue` and `--replay-sacct` of these replies
    /// (and `--replay-scontrol`, when saved).
    fn cmd(&self) -> Command {
        let mut c = cmd();
        c.args([
            "--replay-squeue",
            &self.squeue,
            "--replay-sacct",
            &self.sacct,
        ]);
        if let Some(sc) = &self.scontrol {
            c.args(["--replay-scontrol", sc]);
        }
        c
    }
}

fn s<'a>(v: &'a Value, path: &[&str]) -> Option<&'a str> {
    let mut cur = v;
    for k in path {
        cur = cur.get(*k)?;
    }
    cur.as_str()
}

/// squeue as it prints each state (long and compact), one job per state.
const SQUEUE_CASES: &[(&str, &str, &str)] = &[
    // (printed, vocabulary, canonical native)
    ("PENDING", "PENDING", "PENDING"),
    ("PD", "PENDING", "PENDING"),
    ("REQUEUED", "PENDING", "REQUEUED"),
    ("RQ", "PENDING", "REQUEUED"),
    ("REQUEUE_HOLD", "PENDING", "REQUEUE_HOLD"),
    ("RH", "PENDING", "REQUEUE_HOLD"),
    ("REQUEUE_FED", "PENDING", "REQUEUE_FED"),
    ("RF", "PENDING", "REQUEUE_FED"),
    ("RESV_DEL_HOLD", "PENDING", "RESV_DEL_HOLD"),
    ("RD", "PENDING", "RESV_DEL_HOLD"),
    ("CONFIGURING", "PENDING", "CONFIGURING"),
    ("CF", "PENDING", "CONFIGURING"),
    ("POWER_UP_NODE", "PENDING", "POWER_UP_NODE"),
    ("PU", "PENDING", "POWER_UP_NODE"),
    ("RUNNING", "RUNNING", "RUNNING"),
    ("R", "RUNNING", "RUNNING"),
    ("COMPLETING", "RUNNING", "COMPLETING"),
    ("CG", "RUNNING", "COMPLETING"),
    ("SUSPENDED", "RUNNING", "SUSPENDED"),
    ("S", "RUNNING", "SUSPENDED"),
    ("STOPPED", "RUNNING", "STOPPED"),
    ("ST", "RUNNING", "STOPPED"),
    ("SIGNALING", "RUNNING", "SIGNALING"),
    ("SI", "RUNNING", "SIGNALING"),
    ("STAGE_OUT", "RUNNING", "STAGE_OUT"),
    ("SO", "RUNNING", "STAGE_OUT"),
    ("RESIZING", "RUNNING", "RESIZING"),
    ("RS", "RUNNING", "RESIZING"),
    ("COMPLETED", "COMPLETE", "COMPLETED"),
    ("CD", "COMPLETE", "COMPLETED"),
    ("FAILED", "ERROR", "FAILED"),
    ("F", "ERROR", "FAILED"),
    ("TIMEOUT", "ERROR", "TIMEOUT"),
    ("TO", "ERROR", "TIMEOUT"),
    ("OUT_OF_MEMORY", "ERROR", "OUT_OF_MEMORY"),
    ("OOM", "ERROR", "OUT_OF_MEMORY"),
    ("DEADLINE", "ERROR", "DEADLINE"),
    ("DL", "ERROR", "DEADLINE"),
    ("BOOT_FAIL", "ERROR", "BOOT_FAIL"),
    ("BF", "ERROR", "BOOT_FAIL"),
    ("NODE_FAIL", "ERROR", "NODE_FAIL"),
    ("NF", "ERROR", "NODE_FAIL"),
    ("SPECIAL_EXIT", "ERROR", "SPECIAL_EXIT"),
    ("SE", "ERROR", "SPECIAL_EXIT"),
    ("CANCELLED", "CANCELED", "CANCELLED"),
    ("CA", "CANCELED", "CANCELLED"),
    ("PREEMPTED", "CANCELED", "PREEMPTED"),
    ("PR", "CANCELED", "PREEMPTED"),
    ("REVOKED", "CANCELED", "REVOKED"),
    ("RV", "CANCELED", "REVOKED"),
    ("EXPEDITING", "PENDING", "EXPEDITING"),
    ("LAUNCH_FAILED", "ERROR", "LAUNCH_FAILED"),
    ("RECONFIG_FAIL", "ERROR", "RECONFIG_FAIL"),
    ("UPDATE_DB", "UNKNOWN", "UPDATE_DB"),
    ("?", "UNKNOWN", "?"),
    ("FROBNICATED", "UNKNOWN", "FROBNICATED"),
];

/// sacct as it prints states: long, annotated, truncated by a narrow column.
const SACCT_CASES: &[(&str, &str, &str, &str)] = &[
    // (printed, vocabulary, native, message starts with)
    ("PENDING", "PENDING", "PENDING", "PENDING"),
    ("RUNNING", "RUNNING", "RUNNING", "RUNNING"),
    ("SUSPENDED", "RUNNING", "SUSPENDED", "SUSPENDED"),
    ("REQUEUED", "PENDING", "REQUEUED", "REQUEUED"),
    ("RESIZING", "RUNNING", "RESIZING", "RESIZING"),
    ("COMPLETED", "COMPLETE", "COMPLETED", "COMPLETED exit 0:0"),
    ("FAILED", "ERROR", "FAILED", "FAILED exit 1:0"),
    ("TIMEOUT", "ERROR", "TIMEOUT", "TIMEOUT"),
    ("OUT_OF_MEMORY", "ERROR", "OUT_OF_MEMORY", "OUT_OF_MEMORY"),
    ("OUT_OF_ME+", "ERROR", "OUT_OF_MEMORY", "OUT_OF_MEMORY"),
    ("DEADLINE", "ERROR", "DEADLINE", "DEADLINE"),
    ("BOOT_FAIL", "ERROR", "BOOT_FAIL", "BOOT_FAIL"),
    ("NODE_FAIL", "ERROR", "NODE_FAIL", "NODE_FAIL"),
    ("CANCELLED", "CANCELED", "CANCELLED", "CANCELLED"),
    (
        "CANCELLED by 12345",
        "CANCELED",
        "CANCELLED",
        "CANCELLED by 12345",
    ),
    ("CANCELLED by 0", "CANCELED", "CANCELLED", "CANCELLED by 0"),
    ("CANCELLED+", "CANCELED", "CANCELLED", "CANCELLED"),
    ("PREEMPTED", "CANCELED", "PREEMPTED", "PREEMPTED"),
    ("REVOKED", "CANCELED", "REVOKED", "REVOKED"),
    ("RESV_DEL_+", "PENDING", "RESV_DEL_HOLD", "RESV_DEL_HOLD"),
    ("REQUEUE_H+", "PENDING", "REQUEUE_HOLD", "REQUEUE_HOLD"),
    ("SPECIAL_E+", "ERROR", "SPECIAL_EXIT", "SPECIAL_EXIT"),
    ("?", "UNKNOWN", "?", "unrecognised Slurm state"),
    (
        "NEW_STATE_2030",
        "UNKNOWN",
        "NEW_STATE_2030",
        "unrecognised Slurm state \"NEW_STATE_2030\"",
    ),
];

#[test]
fn every_squeue_state_long_and_compact() {
    let dir = tempfile::tempdir().unwrap();
    let mut sq = String::new();
    let mut ids = Vec::new();
    for (i, (printed, _, _)) in SQUEUE_CASES.iter().enumerate() {
        let id = 1000 + i;
        sq.push_str(&format!(
            "{id}|{id}|{printed}|n1|1795979121|1795979122|N/A|0:01|0|None|\n"
        ));
        ids.push(id.to_string());
    }
    let rp = Replay::write(dir.path(), &sq, "");
    let r = run(rp.cmd().args(["--requeue", "false"]).args(&ids));
    assert_eq!(r.lines.len(), SQUEUE_CASES.len(), "{}", r.stderr);
    for ((printed, vocab, native), line) in SQUEUE_CASES.iter().zip(&r.lines) {
        assert_eq!(
            s(line, &["state"]),
            Some(*vocab),
            "squeue {printed}: {line}"
        );
        assert_eq!(
            s(line, &["slurm", "native_state"]),
            Some(*native),
            "squeue {printed}: {line}"
        );
        assert_eq!(s(line, &["observed_by"]), Some("tao-poll"));
        assert!(line.get("error").is_none(), "{line}");
    }
    assert_eq!(r.code, 0, "{}", r.stderr);
}

#[test]
fn every_sacct_state_annotated_and_truncated() {
    let dir = tempfile::tempdir().unwrap();
    let mut sa = String::new();
    let mut ids = Vec::new();
    for (i, (printed, vocab, _, _)) in SACCT_CASES.iter().enumerate() {
        let id = 2000 + i;
        let exit = if *vocab == "ERROR" && printed.starts_with("FAILED") {
            "1:0"
        } else {
            "0:0"
        };
        sa.push_str(&format!(
            "{id}|{id}|{printed}|{exit}|n1|1795979121|1795979122|1795979130|00:00:08|None\n"
        ));
        ids.push(id.to_string());
    }
    let rp = Replay::write(dir.path(), "", &sa);
    let r = run(rp.cmd().args(&ids));
    assert_eq!(r.lines.len(), SACCT_CASES.len());
    for ((printed, vocab, native, msg), line) in SACCT_CASES.iter().zip(&r.lines) {
        assert_eq!(s(line, &["state"]), Some(*vocab), "sacct {printed}: {line}");
        assert_eq!(
            s(line, &["slurm", "native_state"]),
            Some(*native),
            "sacct {printed}: {line}"
        );
        let m = s(line, &["message"]).unwrap();
        assert!(
            m.starts_with(msg),
            "sacct {printed}: message {m:?} should start with {msg:?}"
        );
    }
    assert_eq!(r.code, 0);
}

#[test]
fn pasted_sacct_p_with_header_and_steps() {
    let dir = tempfile::tempdir().unwrap();
    let rp = Replay::write(dir.path(), "", "JobID|JobName|State|ExitCode|\n31|train|CANCELLED by 0|0:0|\n31.batch|batch|CANCELLED|0:15|\n31.extern|extern|COMPLETED|0:0|\n32_4|arr|TIMEOUT|0:0|\n33+1|het|OUT_OF_MEMORY|0:125|\n");
    let r = run(rp.cmd().args(["31", "32_4", "33+1"]));
    let states: Vec<_> = r
        .lines
        .iter()
        .map(|l| s(l, &["state"]).unwrap().to_string())
        .collect();
    assert_eq!(states, ["CANCELED", "ERROR", "ERROR"], "{}", r.stderr);
    assert_eq!(s(&r.lines[2], &["slurm", "exit_code"]), Some("0:125"));
}

#[test]
fn pasted_default_sacct_table() {
    let dir = tempfile::tempdir().unwrap();
    let rp = Replay::write(
        dir.path(),
        "",
        "JobID           JobName  Partition    Account  AllocCPUS      State ExitCode \n\
         ------------ ---------- ---------- ---------- ---------- ---------- -------- \n\
         3                  wrap        gpu                     1 CANCELLED+      0:0 \n\
         3.batch           batch                                1  CANCELLED     0:15 \n\
         4                  wrap        gpu                     1     FAILED      3:0 \n",
    );
    let r = run(rp.cmd().args(["3", "4"]));
    assert_eq!(s(&r.lines[0], &["state"]), Some("CANCELED"), "{}", r.stderr);
    assert_eq!(s(&r.lines[1], &["message"]), Some("FAILED exit 3:0"));
    assert!(r.stderr.is_empty(), "{}", r.stderr);
}

#[test]
fn pasted_default_squeue_table() {
    let dir = tempfile::tempdir().unwrap();
    let rp = Replay::write(
        dir.path(),
        "             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)\n\
                        12       gpu     wrap  taouser PD       0:00      1 (Priority)\n\
                        13       gpu     wrap  taouser  S       0:05      1 n2\n",
        "",
    );
    let r = run(rp.cmd().args(["12", "13"]));
    assert_eq!(
        s(&r.lines[0], &["message"]),
        Some("PENDING (Priority)"),
        "{}",
        r.stderr
    );
    assert_eq!(s(&r.lines[1], &["message"]), Some("SUSPENDED"));
    assert_eq!(s(&r.lines[1], &["slurm", "nodes"]), Some("n2"));
}

#[test]
fn squeue_lists_before_sacct_knows_and_sacct_after_squeue_forgets() {
    let dir = tempfile::tempdir().unwrap();
    let rp = Replay::write(
        dir.path(),
        "50|50|PENDING||1795979121|N/A|N/A|0:00|0|Priority|\n",
        "51|51|COMPLETED|0:0|n1|1795979121|1795979122|1795979130|00:00:08|None\n",
    );
    let r = run(rp.cmd().args(["50", "51", "52"]));
    assert_eq!(s(&r.lines[0], &["state"]), Some("PENDING"));
    assert_eq!(s(&r.lines[1], &["state"]), Some("COMPLETE"));
    assert_eq!(s(&r.lines[2], &["state"]), Some("UNKNOWN"));
    assert_eq!(
        s(&r.lines[2], &["message"]),
        Some("job 52 is not known to squeue or sacct")
    );
    assert_eq!(r.code, 0);
}

#[test]
fn requeue_makes_node_fail_provisional_and_follows_the_new_attempt() {
    let dir = tempfile::tempdir().unwrap();
    let rp = Replay::write(dir.path(), "60|60|NODE_FAIL|n1|1795979121|1795979122|1795979130|0:08|0|None|\n61|61|PENDING||1795979300|N/A|N/A|0:00|1|BeginTime|\n", "61|61|NODE_FAIL|0:0|n1|1795979121|1795979122|1795979130|00:00:08|None\n61|61|PENDING|0:0|None assigned|1795979300|Unknown|Unknown|00:00:00|BeginTime\n");
    let input = "{\"id\":\"a\",\"slurm\":{\"job_id\":\"60\"},\"resources\":{\"requeue\":true}}\n\
                 {\"id\":\"b\",\"state\":\"RUNNING\",\"slurm\":{\"job_id\":\"61\",\"native_state\":\"RUNNING\",\"restart_count\":0}}\n\
                 {\"id\":\"c\",\"slurm\":{\"job_id\":\"60\"},\"resources\":{\"requeue\":false}}\n";
    let r = run(rp.cmd().write_stdin(input));
    assert_eq!(
        s(&r.lines[0], &["state"]),
        Some("PENDING"),
        "{}",
        r.lines[0]
    );
    assert!(s(&r.lines[0], &["message"])
        .unwrap()
        .contains("provisional"));
    assert_eq!(s(&r.lines[1], &["state"]), Some("PENDING"));
    assert_eq!(
        s(&r.lines[1], &["message"]),
        Some("PENDING (BeginTime), restart 1 (requeued)")
    );
    assert_eq!(r.lines[1]["slurm"]["restart_count"], 1);
    assert_eq!(s(&r.lines[2], &["state"]), Some("ERROR"));
}

#[test]
fn failed_queries_keep_the_state_and_say_why() {
    let dir = tempfile::tempdir().unwrap();
    let rp = Replay::write(dir.path(), "70|70|RUNNING|n1|1795979121|1795979122|N/A|0:08|0|None|\n", "sacct: error: slurm_persist_conn_open_without_init: failed to open persistent connection to host:localhost:6819: Socket timed out on send/recv operation\n");
    let input = "{\"id\":\"a\",\"state\":\"RUNNING\",\"slurm\":{\"job_id\":\"70\"}}\n{\"id\":\"b\",\"state\":\"RUNNING\",\"slurm\":{\"job_id\":\"71\"}}\n";
    let r = run(rp.cmd().write_stdin(input));
    // squeue answered for 70: fine. 71 is not in squeue and sacct failed: no verdict.
    assert_eq!(s(&r.lines[0], &["state"]), Some("RUNNING"));
    assert!(r.lines[0].get("error").is_none());
    assert_eq!(s(&r.lines[1], &["state"]), Some("RUNNING"));
    assert_eq!(s(&r.lines[1], &["error", "tool"]), Some("tao-poll"));
    assert_eq!(s(&r.lines[1], &["error", "code"]), Some("tempfail"));
    assert!(s(&r.lines[1], &["error", "message"])
        .unwrap()
        .contains("Socket timed out"));
    assert!(r.lines[1].get("observed_at").is_none());
    assert_eq!(r.code, 1);
    // Said on stderr too, once, for a cron job that drops stdout.
    assert_eq!(
        r.stderr.matches("tao-poll: error: ").count(),
        1,
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("Socket timed out") && r.stderr.contains("(1 job line carries it)"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_connection_error_for_every_line_is_said_once_on_stderr() {
    // No SLURM_USER (cleared environment): every line fails the same way.
    let input = "{\"id\":\"a\",\"state\":\"RUNNING\",\"slurm\":{\"job_id\":\"70\"}}\n{\"id\":\"b\",\"state\":\"RUNNING\",\"slurm\":{\"job_id\":\"71\"}}\n";
    let r = run(cmd()
        .env("SLURM_HOSTNAME", "127.0.0.1:1")
        .env("HOME", "/nonexistent")
        .write_stdin(input));
    assert_eq!(r.lines.len(), 2);
    assert!(r.lines.iter().all(|l| l.get("error").is_some()));
    assert_ne!(r.code, 0);
    assert_eq!(
        r.stderr.matches("tao-poll: error: ").count(),
        1,
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("(2 job lines carry it)"), "{}", r.stderr);
}

#[test]
fn no_accounting_falls_back_to_scontrol() {
    let dir = tempfile::tempdir().unwrap();
    let rp = Replay::no_accounting(
        dir.path(),
        "JobId=80 JobName=wrap UserId=taouser(1000) JobState=FAILED Reason=NonZeroExitCode Dependency=(null) Requeue=1 Restarts=2 BatchFlag=1 ExitCode=2:0 RunTime=00:00:01 SubmitTime=2026-11-29T19:07:04 StartTime=2026-11-29T19:07:04 EndTime=2026-11-29T19:07:05 NodeList=n1\n",
    );
    let r = run(rp.cmd().args(["80", "81"]));
    assert_eq!(s(&r.lines[0], &["state"]), Some("ERROR"), "{}", r.lines[0]);
    assert_eq!(
        s(&r.lines[0], &["message"]),
        Some("FAILED exit 2:0, restart 2")
    );
    assert_eq!(s(&r.lines[1], &["state"]), Some("UNKNOWN"));
    assert!(s(&r.lines[1], &["message"])
        .unwrap()
        .contains("no accounting"));
}

#[test]
fn completed_needs_the_jobs_own_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    let base = "/shared/tao";
    let mk = |id: &str, sid: u32| {
        format!(
            "{{\"id\":\"{id}\",\"storage\":{{\"job_dir\":\"{base}/jobs/{id}\",\"results_dir\":\"{base}/results/{id}\"}},\"slurm\":{{\"job_id\":\"{sid}\"}}}}\n"
        )
    };
    let rel = |p: String| p.trim_start_matches('/').to_string();
    // ok: status.json SUCCESS (even with a non-zero completion record).
    write(
        &root,
        &rel(format!("{base}/results/ok/status.json")),
        "{\"status\":\"STARTED\"}\n{\"status\":\"SUCCESS\",\"message\":\"done\"}\n",
    );
    write(
        &root,
        &rel(format!("{base}/jobs/ok/slurm-logs/ok-90/completion.json")),
        "{\"exit_code\":1,\"slurm_job_id\":\"90\"}",
    );
    // bad: status.json FAILURE last.
    write(
        &root,
        &rel(format!("{base}/results/bad/status.json")),
        "{\"status\":\"SUCCESS\"}\n{\"status\":\"FAILURE\",\"message\":\"nan loss\"}\n",
    );
    // cmd0 / cmd3: no status.json, completion record decides.
    write(
        &root,
        &rel(format!(
            "{base}/jobs/cmd0/slurm-logs/cmd0-92/completion.json"
        )),
        "{\"exit_code\":0,\"slurm_job_id\":\"92\",\"restart_count\":0}",
    );
    write(
        &root,
        &rel(format!(
            "{base}/jobs/cmd3/slurm-logs/cmd3-93/completion.json"
        )),
        "{\"exit_code\":3,\"slurm_job_id\":\"93\",\"restart_count\":0}",
    );
    // none: nothing at all.
    let mut sa = String::new();
    for sid in 90..=94 {
        sa.push_str(&format!(
            "{sid}|{sid}|COMPLETED|0:0|n1|1795979121|1795979122|1795979130|00:00:08|None\n"
        ));
    }
    let rp = Replay::write(dir.path(), "", &sa);
    let input = [
        mk("ok", 90),
        mk("bad", 91),
        mk("cmd0", 92),
        mk("cmd3", 93),
        mk("none", 94),
    ]
    .concat();
    let r = run(rp
        .cmd()
        .args(["--replay-root", root.to_str().unwrap()])
        .write_stdin(input.clone()));
    let got: Vec<(String, String)> = r
        .lines
        .iter()
        .map(|l| {
            (
                s(l, &["state"]).unwrap().to_string(),
                s(l, &["message"]).unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        got[0],
        (
            "COMPLETE".into(),
            "COMPLETED exit 0:0; status.json SUCCESS".into()
        )
    );
    assert_eq!(
        got[1],
        (
            "ERROR".into(),
            "COMPLETED exit 0:0; status.json FAILURE: nan loss".into()
        )
    );
    assert_eq!(
        got[2],
        (
            "COMPLETE".into(),
            "COMPLETED exit 0:0; completion.json exit_code 0".into()
        )
    );
    assert_eq!(
        got[3],
        (
            "ERROR".into(),
            "COMPLETED exit 0:0; completion.json exit_code 3".into()
        )
    );
    assert_eq!(
        got[4],
        (
            "ERROR".into(),
            "COMPLETED exit 0:0; no status.json or completion.json".into()
        )
    );
    // Without the files the verdict cannot be read: no state change, an error.
    let r = run(rp.cmd().write_stdin(input));
    assert!(r
        .lines
        .iter()
        .all(|l| l.get("state").is_none() && s(l, &["error", "code"]) == Some("replay")));
    assert_eq!(r.code, 1);
}

#[test]
fn evidence_tails_are_bounded_and_redacted() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    let token = format!("hf_{}", "aBcDeFgHiJkLmNoPqRsTuVwXyZ01234567");
    let mut out = String::new();
    for i in 1..=30 {
        out.push_str(&format!("step {i}\n"));
    }
    out.push_str(&format!("export HF_TOKEN={token}\nTraceback: boom\n"));
    write(&root, "b/jobs/e/slurm-logs/e-95/main.out", &out);
    write(
        &root,
        "b/jobs/e/slurm-logs/e-95/main.err",
        "CUDA error: out of memory\n",
    );
    let rp = Replay::write(
        dir.path(),
        "",
        "95|95|FAILED|1:0|n1|1795979121|1795979122|1795979130|00:00:08|NonZeroExitCode\n",
    );
    let input = "{\"id\":\"e\",\"storage\":{\"job_dir\":\"/b/jobs/e\",\"results_dir\":\"/b/results/e\"},\"slurm\":{\"job_id\":\"95\"}}\n";
    let r = run(rp
        .cmd()
        .args(["--evidence", "--evidence-lines", "5"])
        .args(["--replay-root", root.to_str().unwrap()])
        .write_stdin(input));
    let ev = &r.lines[0]["evidence"];
    assert_eq!(ev["out"]["first_line"], 28, "{ev}");
    let lines: Vec<&str> = ev["out"]["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(lines.len(), 5);
    assert_eq!(lines[4], "Traceback: boom");
    assert!(!lines[3].contains(&token), "secret leaked: {}", lines[3]);
    assert!(!r.lines[0].to_string().contains(&token));
    assert_eq!(ev["err"]["lines"][0], "CUDA error: out of memory");
}

/// Issue 16: the evidence redactor was built from the environment only
/// (HF_TOKEN, NGC_KEY): a job opened with `--secret WANDB_API_KEY` whose log
/// prints the value got it into the evidence, then the record. Fake values
/// of the real formats (a 40-hex W&B key; a custom password of no format).
#[test]
fn evidence_masks_the_values_of_the_lines_own_secrets() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    let wandb = "0123456789abcdef0123456789abcdeffedcba98";
    let pw = "plain words are my db password";
    write(
        &root,
        "b/jobs/w/slurm-logs/w-97/main.out",
        &format!("wandb: login {wandb}\nconnecting as {pw}!\nTraceback: boom\n"),
    );
    write(
        &root,
        "b/jobs/w/slurm-logs/w-97/main.err",
        &format!("key={wandb}\n"),
    );
    let rp = Replay::write(
        dir.path(),
        "",
        "97|97|FAILED|1:0|n1|1795979121|1795979122|1795979130|00:00:08|NonZeroExitCode\n",
    );
    let input = "{\"id\":\"w\",\"secrets\":[\"WANDB_API_KEY\",\"MY_DB_PASSWORD\"],\"storage\":{\"job_dir\":\"/b/jobs/w\",\"results_dir\":\"/b/results/w\"},\"slurm\":{\"job_id\":\"97\"}}\n";
    let out = rp
        .cmd()
        .env("WANDB_API_KEY", wandb)
        .env("MY_DB_PASSWORD", pw)
        .args(["--evidence"])
        .args(["--replay-root", root.to_str().unwrap()])
        .write_stdin(input)
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.contains("Traceback: boom"), "{stdout}");
    assert!(!stdout.contains(wandb), "W&B key leaked: {stdout}");
    assert!(!stdout.contains(pw), "password leaked: {stdout}");
    assert!(stdout.contains("[REDACTED:env:MY_DB_PASSWORD]"), "{stdout}");
}

#[test]
fn unreadable_rows_are_reported_never_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let rp = Replay::write(dir.path(), "", "96|96|RUNNING\ncompletely wrong\n");
    let r = run(rp.cmd().args(["96"]));
    assert_eq!(s(&r.lines[0], &["error", "code"]), Some("protocol"));
    assert!(r.stderr.contains("sacct output line 1"), "{}", r.stderr);
    assert!(r.stderr.contains("sacct output line 2"), "{}", r.stderr);
    assert_eq!(r.code, 1);
}

#[test]
fn malformed_input_line_keeps_earlier_lines() {
    let dir = tempfile::tempdir().unwrap();
    let rp = Replay::write(dir.path(), "", "");
    let out = rp
        .cmd()
        .write_stdin("{\"id\":\"a\",\"slurm\":{\"job_id\":\"1\"}}\nnot json\n")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(65));
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(stdout.lines().count(), 1);
    assert!(String::from_utf8(out.stderr)
        .unwrap()
        .starts_with("tao-poll: error: line 2"));
}

#[test]
fn watch_with_a_malformed_line_loses_nothing() {
    let out = cmd()
        .args([
            "--watch",
            "--replay-squeue",
            "/dev/null",
            "--replay-sacct",
            "/dev/null",
        ])
        .write_stdin("{\"id\":\"a\",\"slurm\":{\"job_id\":\"1\"}}\n[\n")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(65));
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "{\"id\":\"a\",\"slurm\":{\"job_id\":\"1\"}}\n"
    );
}

#[test]
fn lines_without_a_job_id_and_unknown_fields() {
    let dir = tempfile::tempdir().unwrap();
    let rp = Replay::write(dir.path(), "7|7|RUNNING|n1|1|2|N/A|0:01|0|None|\n", "");
    let r = run(rp.cmd().write_stdin(
        "{\"id\":\"x\",\"z\":[1],\"slurm\":{\"job_id\":\"7\",\"extra\":true}}\n{\"id\":\"y\"}\n",
    ));
    assert_eq!(r.lines[0]["z"], serde_json::json!([1]));
    assert_eq!(r.lines[0]["slurm"]["extra"], true);
    // Never submitted: passed through unchanged, exit 0.
    assert_eq!(r.lines[1], serde_json::json!({"id": "y"}));
    assert_eq!(r.code, 0, "{}", r.stderr);
}

#[test]
fn never_submitted_lines_pass_through_with_one_note_under_v() {
    let dir = tempfile::tempdir().unwrap();
    let rp = Replay::write(dir.path(), "7|7|RUNNING|n1|1|2|N/A|0:01|0|None|\n", "");
    let orphan1 =
        r#"{"id":"tao-20261129-aaaaaa","state":"OPEN","storage":{"job_dir":"/b/jobs/a"}}"#;
    let orphan2 =
        r#"{"id":"tao-20261129-bbbbbb","state":"OPEN","slurm":{"job_id":null,"login_host":"h"}}"#;
    let failed = r#"{"id":"c","error":{"tool":"tao-render","code":"data","message":"bad spec"}}"#;
    let input = format!(
        "{orphan1}\n{{\"id\":\"x\",\"slurm\":{{\"job_id\":\"7\"}}}}\n{orphan2}\n{failed}\n"
    );
    let out = rp.cmd().write_stdin(input.clone()).output().unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let got: Vec<&str> = stdout.lines().collect();
    assert_eq!(got.len(), 4, "{stdout}");
    assert_eq!(got[0], orphan1, "byte for byte");
    assert_eq!(got[2], orphan2);
    assert_eq!(got[3], failed);
    let v: Value = serde_json::from_str(got[1]).unwrap();
    assert_eq!(s(&v, &["state"]), Some("RUNNING"));
    // Not said without -v: a cron run would repeat it every time.
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(0));
    let out = rp
        .cmd()
        .arg("-v")
        .write_stdin(input.clone())
        .output()
        .unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(
        stderr
            .lines()
            .filter(|l| l.contains("never submitted"))
            .collect::<Vec<_>>(),
        ["tao-poll: 2 job line(s) were never submitted (no slurm.job_id): submit them with tao-submit, or retire them with tao-record mark ID --state CANCELED"],
        "{stderr}"
    );
    assert_eq!(out.status.code(), Some(0));
    // -q silences the warning; the lines are the same.
    let out = rp.cmd().args(["-q"]).write_stdin(input).output().unwrap();
    let quiet = String::from_utf8(out.stdout).unwrap();
    let quiet: Vec<&str> = quiet.lines().collect();
    assert_eq!((quiet[0], quiet[2], quiet[3]), (orphan1, orphan2, failed));
    assert!(out.stderr.is_empty());
    // A malformed job id is still a data error.
    let r = run(rp
        .cmd()
        .write_stdin("{\"id\":\"z\",\"slurm\":{\"job_id\":\"abc\"}}\n"));
    assert_eq!(s(&r.lines[0], &["error", "code"]), Some("data"));
    assert_eq!(r.code, 1);
}

#[test]
fn watch_leaves_never_submitted_lines_out_of_the_wait() {
    let dir = tempfile::tempdir().unwrap();
    let rp = Replay::write(dir.path(), "", "6|6|COMPLETED|0:0|n1|1|2|3|00:00:01|None\n");
    let orphan = r#"{"id":"o","state":"OPEN"}"#;
    let out = rp
        .cmd()
        .args(["--watch", "--interval", "1"])
        .write_stdin(format!(
            "{orphan}\n{{\"id\":\"s\",\"slurm\":{{\"job_id\":\"6\"}}}}\n"
        ))
        .timeout(std::time::Duration::from_secs(30))
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let got: Vec<&str> = stdout.lines().collect();
    assert_eq!(got.len(), 2, "{stdout}");
    assert_eq!(got[0], orphan);
    assert!(got[1].contains("\"COMPLETE\""), "{}", got[1]);
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(stderr.matches("never submitted").count(), 0, "{stderr}");
    assert_eq!(out.status.code(), Some(0), "{stderr}");
}

/// A record whose submit failed (a stored tao-submit `error`, no
/// `slurm.job_id`) was never submitted: as for a plain poll (exit 0), it
/// changes nothing in --watch's exit status (tao-poll(1)).
#[test]
fn watch_exit_ignores_a_stored_submit_error() {
    let dir = tempfile::tempdir().unwrap();
    let rp = Replay::write(dir.path(), "", "6|6|COMPLETED|0:0|n1|1|2|3|00:00:01|None\n");
    let failed = r#"{"id":"f","state":"PENDING","error":{"tool":"tao-submit","code":"config","message":"export HF_TOKEN"}}"#;
    let input = format!("{failed}\n{{\"id\":\"s\",\"slurm\":{{\"job_id\":\"6\"}}}}\n");
    let plain = rp.cmd().write_stdin(input.clone()).output().unwrap();
    assert_eq!(plain.status.code(), Some(0));
    let out = rp
        .cmd()
        .args(["--watch", "--interval", "1"])
        .write_stdin(input)
        .timeout(std::time::Duration::from_secs(30))
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout.clone()).unwrap();
    let got: Vec<&str> = stdout.lines().collect();
    assert_eq!(got.len(), 2, "{stdout}");
    assert_eq!(got[0], failed);
    assert!(got[1].contains("\"COMPLETE\""), "{}", got[1]);
    tao_testkit::tool::assert_exit(&out, 0);
}

#[test]
fn lines_failed_by_another_tool_pass_through_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let rp = Replay::write(dir.path(), "", "");
    let line = r#"{"id":"a","error":{"tool":"tao-submit","code":"unavailable","message":"no login host answered"}}"#;
    let out = rp.cmd().write_stdin(format!("{line}\n")).output().unwrap();
    assert_eq!(String::from_utf8(out.stdout).unwrap(), format!("{line}\n"));
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn replay_text_from_stdin() {
    let out = cmd()
        .args(["--replay-squeue", "/dev/null", "--replay-sacct", "-", "4"])
        .write_stdin("4|4|FAILED|3:0|n1|1|2|3|00:00:01|None\n")
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(s(&v, &["message"]), Some("FAILED exit 3:0"));
    // `-` needs the ids as arguments (stdin holds the replay text).
    let out = cmd()
        .args(["--replay-sacct", "-"])
        .write_stdin("")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn usage_errors() {
    let out = cmd().args(["--interval", "0", "1"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    // clap's errors as one house-style line, argument names kept, naming
    // the help of the command given (tao-cli).
    for (args, starts, help) in [
        (
            &["--interval", "0", "--watch", "1"][..],
            "tao-poll: error: invalid value '0' for '--interval <SECS>'",
            "tao-poll",
        ),
        (
            &["logs", "ID", "-n", "abc"][..],
            "tao-poll: error: invalid value 'abc' for '--lines <N>'",
            "tao-poll logs",
        ),
        (
            &["--no-such-flag"][..],
            "tao-poll: error: unexpected argument '--no-such-flag' found",
            "tao-poll",
        ),
    ] {
        let out = cmd().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty());
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with(starts), "{args:?}: {err}");
        assert!(
            err.ends_with(&format!("; see {help} --help\n")),
            "{args:?}: {err}"
        );
    }
    // Help and version still print normally, exit 0.
    for a in ["--help", "-h", "-V", "--version"] {
        let out = cmd().arg(a).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{a}");
        assert!(!out.stdout.is_empty(), "{a}");
        assert!(out.stderr.is_empty(), "{a}");
    }
    let out = cmd().args(["logs", "--help"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8(out.stdout).unwrap().contains("--follow"));
    let out = cmd()
        .args(["--replay-sacct", "/nonexistent/x", "1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(74));
    assert!(String::from_utf8(out.stderr)
        .unwrap()
        .contains("/nonexistent/x"));
}

#[test]
fn watch_replay_ends_when_all_final() {
    let dir = tempfile::tempdir().unwrap();
    let rp = Replay::write(
        dir.path(),
        "",
        "5|5|FAILED|1:0|n1|1|2|3|00:00:01|None\n6|6|COMPLETED|0:0|n1|1|2|3|00:00:01|None\n",
    );
    let r = run(rp.cmd().args(["--watch", "--interval", "1", "5", "6"]));
    assert_eq!(r.lines.len(), 2);
    assert_eq!(r.code, 1, "not all COMPLETE");
    let r = run(rp.cmd().args(["--watch", "6"]));
    assert_eq!(r.code, 0);
}

/// Case `squeue-bf-requeue`: one native state, one answer, whichever
/// command printed it (squeue's long name or compact code, sacct, or
/// scontrol without accounting), with requeue on and off. squeue's `BF`
/// with requeue on is ERROR (squeue(1): BOOT_FAIL jobs cannot be
/// requeued); PREEMPTED is CANCELED from sacct's `PREEMPTED` and squeue's
/// `PR` alike. Every row of the state table is checked, not only those two.
///
/// The one documented difference: a requeueable failure (NODE_FAIL, the
/// launch failures) is provisional PENDING while the controller (squeue,
/// scontrol) still holds the job, and final when only sacct remembers it
/// (the controller forgot it, so it can no longer be requeued).
#[test]
fn squeue_bf_requeue() {
    use tao_poll::native::TABLE;
    let dir = tempfile::tempdir().unwrap();
    let ids: Vec<String> = (0..TABLE.len()).map(|i| (3000 + i).to_string()).collect();
    let mut sq_long = String::new();
    let mut sq_code = String::new();
    let mut sa = String::new();
    let mut sc = String::new();
    for (row, id) in TABLE.iter().zip(&ids) {
        sq_long.push_str(&format!(
            "{id}|{id}|{}|n1|1795979121|1795979122|N/A|0:01|0|None|\n",
            row.name
        ));
        let code = if row.code.is_empty() {
            row.name
        } else {
            row.code
        };
        sq_code.push_str(&format!(
            "{id}|{id}|{code}|n1|1795979121|1795979122|N/A|0:01|0|None|\n"
        ));
        sa.push_str(&format!(
            "{id}|{id}|{}|0:0|n1|1795979121|1795979122|1795979130|00:00:08|None\n",
            row.name
        ));
        sc.push_str(&format!(
            "JobId={id} JobName=wrap UserId=taouser(1000) JobState={} Reason=None Restarts=0 ExitCode=0:0 RunTime=00:00:01 SubmitTime=2026-11-29T19:07:04 NodeList=n1\n",
            row.name
        ));
    }
    let empty = write(dir.path(), "empty.txt", "");
    let no_acct = write(dir.path(), "noacct.txt", NO_ACCOUNTING);
    let sq_long = write(dir.path(), "sq_long.txt", &sq_long);
    let sq_code = write(dir.path(), "sq_code.txt", &sq_code);
    let sa = write(dir.path(), "sa.txt", &sa);
    let sc = write(dir.path(), "sc.txt", &sc);
    for requeue in ["true", "false"] {
        let answers = |args: &[&str]| -> Vec<String> {
            let r = run(cmd()
                .env("SLURM_USER", "taouser")
                .args(["--requeue", requeue])
                .args(args)
                .args(&ids));
            assert_eq!(r.lines.len(), ids.len(), "{}", r.stderr);
            r.lines
                .iter()
                .map(|l| s(l, &["state"]).unwrap_or("-").to_string())
                .collect()
        };
        let long = answers(&["--replay-squeue", &sq_long, "--replay-sacct", &empty]);
        let code = answers(&["--replay-squeue", &sq_code, "--replay-sacct", &empty]);
        let sacct = answers(&["--replay-squeue", &empty, "--replay-sacct", &sa]);
        let scontrol = answers(&[
            "--replay-squeue",
            &empty,
            "--replay-sacct",
            &no_acct,
            "--replay-scontrol",
            &sc,
        ]);
        for (i, row) in TABLE.iter().enumerate() {
            let what = format!("{} ({}) requeue={requeue}", row.name, row.code);
            assert_eq!(long[i], code[i], "{what}: squeue long vs code");
            assert_eq!(long[i], scontrol[i], "{what}: squeue vs scontrol");
            if !(row.requeueable && requeue == "true") {
                assert_eq!(long[i], sacct[i], "{what}: squeue vs sacct");
            } else {
                assert_eq!(long[i], "PENDING", "{what}: provisional");
                assert_eq!(sacct[i], "ERROR", "{what}: forgotten by the controller");
            }
        }
        let at = |name: &str| TABLE.iter().position(|r| r.name == name).unwrap();
        assert_eq!(code[at("BOOT_FAIL")], "ERROR", "BF requeue={requeue}");
        assert_eq!(code[at("PREEMPTED")], "CANCELED", "PR requeue={requeue}");
        assert_eq!(sacct[at("PREEMPTED")], "CANCELED", "requeue={requeue}");
    }
}

/// Case `sacct-empty-state`: a row whose State cell is empty makes that one
/// job UNKNOWN (with a message saying so); the rest of the reply is still
/// read. The same for squeue's and scontrol's replies (`JobState=`).
#[test]
fn sacct_empty_state() {
    let dir = tempfile::tempdir().unwrap();
    let empty = write(dir.path(), "empty.txt", "");
    let rp = Replay::write(
        dir.path(),
        "20035|20035|RUNNING|n1|1795979121|1795979122|N/A|0:01|0|None|\n\
         20036|20036||n1|1795979121|1795979122|N/A|0:01|0|None|\n\
         20037|20037|PENDING||1795979121|N/A|N/A|0:00|0|Priority|\n",
        "20035|20035|FAILED|1:0|n1|1795979121|1795979122|1795979130|00:00:08|None\n\
         20036|20036||0:0|n1|1795979121|1795979122|1795979130|00:00:08|None\n\
         20037|20037|TIMEOUT|0:0|n1|1795979121|1795979122|1795979130|00:00:08|None\n",
    );
    let no_acct = write(dir.path(), "noacct.txt", NO_ACCOUNTING);
    let scf = write(
        dir.path(),
        "scontrol.txt",
        "JobId=20035 UserId=taouser(1000) JobState=FAILED ExitCode=1:0\n\
         JobId=20036 UserId=taouser(1000) JobState= ExitCode=0:0\n\
         JobId=20037 UserId=taouser(1000) JobState=TIMEOUT ExitCode=0:0\n",
    );
    let cases: [(&str, Vec<&str>, [&str; 3]); 3] = [
        (
            "sacct",
            vec!["--replay-squeue", &empty, "--replay-sacct", &rp.sacct],
            ["ERROR", "UNKNOWN", "ERROR"],
        ),
        (
            "squeue",
            vec!["--replay-squeue", &rp.squeue, "--replay-sacct", &empty],
            ["RUNNING", "UNKNOWN", "PENDING"],
        ),
        (
            "scontrol",
            vec![
                "--replay-squeue",
                &empty,
                "--replay-sacct",
                &no_acct,
                "--replay-scontrol",
                &scf,
            ],
            ["ERROR", "UNKNOWN", "ERROR"],
        ),
    ];
    for (source, args, want) in cases {
        let r = run(cmd()
            .env("SLURM_USER", "taouser")
            .args(&args)
            .args(["20035", "20036", "20037"]));
        assert_eq!(r.lines.len(), 3, "{source}: {}", r.stderr);
        for (line, want) in r.lines.iter().zip(want) {
            assert_eq!(s(line, &["state"]), Some(want), "{source}: {line}");
            assert!(line.get("error").is_none(), "{source}: {line}");
        }
        assert_eq!(
            s(&r.lines[1], &["message"]),
            Some(format!("{source} printed an empty state for this job").as_str()),
            "{source}"
        );
        assert_eq!(r.code, 0, "{source}: {}", r.stderr);
    }
}

/// The scontrol fallback (no accounting) believes only this user's
/// records (`SLURM_USER` against `UserId=`) and each record's own keys
/// (first occurrence): another user's job whose `--comment` holds
/// `JobId=100 JobState=FAILED` does not change job 100 (issue 16).
#[test]
fn scontrol_fallback_reads_only_this_users_own_keys() {
    let dir = tempfile::tempdir().unwrap();
    let rp = Replay::no_accounting(
        dir.path(),
        "JobId=100 JobName=mine UserId=taouser(1000) JobState=RUNNING Reason=None Restarts=0 ExitCode=0:0 NodeList=n1 Comment=JobId=100 JobState=FAILED ExitCode=9:0\n\
         JobId=101 JobName=theirs UserId=mallory(1001) JobState=RUNNING Reason=None Comment=JobId=100 JobState=FAILED ExitCode=9:0\n\
         JobId=102 JobName=theirs UserId=mallory(1001) JobState=FAILED Reason=None Comment=HetJobId=100 HetJobOffset=1 JobState=FAILED\n\
         JobId=103 JobName=theirs UserId=mallory(1001) JobState=FAILED ExitCode=1:0\n",
    );
    let r = run(rp.cmd().env("SLURM_USER", "taouser").args(["100", "103"]));
    assert_eq!(
        s(&r.lines[0], &["state"]),
        Some("RUNNING"),
        "{}",
        r.lines[0]
    );
    assert_eq!(s(&r.lines[0], &["message"]), Some("RUNNING"));
    // Job 103 is another user's: not an answer about ours.
    assert_eq!(
        s(&r.lines[1], &["state"]),
        Some("UNKNOWN"),
        "{}",
        r.lines[1]
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
}

/// Evidence tails have a byte cap (tao_poll::status::TAIL_BYTES, 64 KiB
/// per file) besides their line count: a log of one 4 MiB line, and one of
/// 200 lines of 8 KiB, give tails under the cap (issue 16).
#[test]
fn evidence_tails_have_a_byte_cap() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("root");
    write(
        &root,
        "b/jobs/e/slurm-logs/e-97/main.out",
        &format!("{}\n", "y".repeat(4 << 20)),
    );
    write(
        &root,
        "b/jobs/e/slurm-logs/e-97/main.err",
        &(0..200)
            .map(|i| format!("{i:03}{}\n", "z".repeat(8 << 10)))
            .collect::<String>(),
    );
    let rp = Replay::write(
        dir.path(),
        "",
        "97|97|FAILED|1:0|n1|1795979121|1795979122|1795979130|00:00:08|NonZeroExitCode\n",
    );
    let input = "{\"id\":\"e\",\"storage\":{\"job_dir\":\"/b/jobs/e\",\"results_dir\":\"/b/results/e\"},\"slurm\":{\"job_id\":\"97\"}}\n";
    let r = run(rp
        .cmd()
        .args(["--evidence"])
        .args(["--replay-root", root.to_str().unwrap()])
        .write_stdin(input));
    let ev = &r.lines[0]["evidence"];
    for (which, first) in [("out", 1), ("err", 194)] {
        let lines = ev[which]["lines"].as_array().unwrap();
        let bytes: usize = lines.iter().map(|l| l.as_str().unwrap().len() + 1).sum();
        assert!(bytes <= 64 << 10, "{which}: {bytes} bytes");
        assert!(bytes > 4000, "{which}: {bytes} bytes");
        assert_eq!(ev[which]["first_line"], first, "{which}: {}", ev[which]);
    }
    assert!(r.lines[0].to_string().len() < 200 << 10);
}
