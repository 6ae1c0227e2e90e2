//! Two runs of the cron pipeline's retry stage at once on one store (two
//! cron lines without examples/crontab's `flock -n`, or cron and `make -f
//! examples/Makefile retry` together): the retry is opened once, and the
//! run that lost the race says what happened and exits 0, since nothing
//! failed.
//!
//! The race is made certain, not hoped for: the test holds the parent
//! record's lock (`records/<id>.lock`, the lock `tao-record` itself takes)
//! while both runs start, waits (polled, bounded) until /proc/locks shows
//! both blocked on that lock, after their checks outside it, then lets go.

mod common;

use std::io::{BufRead, BufReader};
use std::os::unix::fs::MetadataExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{lines, Env};
use serde_json::json;

/// How many processes wait (blocked, `->` in /proc/locks) for a lock on
/// the file with inode `ino`.
fn waiters_on(ino: u64) -> usize {
    let locks = std::fs::read_to_string("/proc/locks").unwrap_or_default();
    locks
        .lines()
        .filter(|l| l.contains("->"))
        .filter(|l| {
            l.split_whitespace()
                .any(|f| f.rsplit(':').next() == Some(&ino.to_string()) && f.contains(':'))
        })
        .count()
}

#[test]
fn two_retry_stages_at_once_open_one_retry_and_the_second_says_so() {
    if !std::path::Path::new("/proc/locks").exists() {
        panic!("/proc/locks is needed to see the two runs wait for the lock");
    }
    let env = Env::new();
    let parent = env.open(&[]);
    let failed = json!({"id": parent, "state": "ERROR", "message": "NODE_FAIL",
        "classification": {"class": "infra", "node": "n1", "retry": true}});
    let out = env
        .cmd()
        .arg("mark")
        .write_stdin(format!("{failed}\n"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = String::from_utf8(out.stdout).unwrap();

    // Hold the parent's lock as a third writer would; it says when it has it.
    let lock = env.state().join("records").join(format!("{parent}.lock"));
    let mut holder = Command::new("flock")
        .arg(&lock)
        .args(["-c", "echo locked; cat > /dev/null"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("flock (util-linux)");
    let mut first = String::new();
    BufReader::new(holder.stdout.as_mut().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert_eq!(first, "locked\n");
    let ino = std::fs::metadata(&lock).unwrap().ino();

    let runs: Vec<_> = (0..2)
        .map(|_| {
            tao_testkit::tool::feed(
                Command::new(assert_cmd::cargo::cargo_bin("tao-record"))
                    .env_clear()
                    .envs(env.vars.iter().map(|(k, v)| (k, v)))
                    .arg("retry"),
                line.clone(),
            )
        })
        .collect();
    let deadline = Instant::now() + Duration::from_secs(30);
    while waiters_on(ino) < 2 {
        assert!(
            Instant::now() < deadline,
            "the two retry runs never both waited for the record's lock"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(holder.stdin.take());
    assert!(holder.wait().unwrap().success());

    let outs: Vec<_> = runs.into_iter().map(|r| r.wait()).collect();
    let opened: Vec<_> = outs.iter().flat_map(|o| lines(&o.stdout)).collect();
    assert_eq!(opened.len(), 1, "one retry in all: {opened:?}");
    let child = opened[0]["id"].as_str().unwrap();
    assert_eq!(env.record(&parent)["retried_by"], child);
    let chain = env
        .cmd()
        .args(["list", "--retry-of", &parent])
        .output()
        .unwrap();
    assert_eq!(lines(&chain.stdout).len(), 2, "parent and one retry");
    for o in &outs {
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "nothing failed: {err}");
        if o.stdout.is_empty() {
            // The loser: one line naming the retry the other run opened.
            assert_eq!(err.lines().count(), 1, "{err}");
            assert!(
                err.contains(&parent)
                    && err.contains(child)
                    && err.contains("another run")
                    && !err.contains("failed")
                    && !err.contains("instead"),
                "{err}"
            );
        } else {
            assert!(err.is_empty(), "{err}");
        }
    }
}
