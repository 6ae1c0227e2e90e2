//! Concurrency and crash safety of the record store, through the binary:
//!
//! - 8 `tao-record mark` processes make 1,000 marks each on 16 shared
//!   records (every process touches every record): no update is lost,
//!   every file parses, every history is in time order and in each
//!   process's own order. Every mark is two fsyncs (file and directory),
//!   so on this project's machines the full 8 x 1,000 takes about two and
//!   a half minutes in a debug build: `cargo test` runs 8 x 250 by
//!   default, and `bench/run.sh` (and `TAO_STRESS_MARKS=1000 cargo test`)
//!   run the full size.
//! - A writer killed with SIGKILL at random points (120 times) never
//!   leaves a record that does not parse, and every mark it acknowledged
//!   (echoed) is in the record.

mod common;

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;

use common::{read_json, Env, Rng};
use serde_json::{json, Value};

const PROCS: usize = 8;
const RECORDS: usize = 16;

fn marks_per_process() -> usize {
    std::env::var("TAO_STRESS_MARKS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(250)
}

/// Check one record file: parses, history ordered by `at`; returns it.
fn check_record(env: &Env, id: &str) -> Value {
    let rec = read_json(&env.record_path(id));
    let hist = rec["history"].as_array().expect("history array");
    let ats: Vec<&str> = hist.iter().map(|h| h["at"].as_str().unwrap()).collect();
    assert!(
        ats.windows(2).all(|w| w[0] <= w[1]),
        "history of {id} out of order"
    );
    rec
}

#[test]
fn eight_processes_lose_no_mark() {
    let env = Env::new();
    let n = marks_per_process();
    let ids: Vec<String> = (0..RECORDS).map(|_| env.open(&[])).collect();
    let bin = assert_cmd::cargo::cargo_bin("tao-record");
    let mut children = Vec::new();
    for p in 0..PROCS {
        let mut input = String::new();
        for i in 0..n {
            let id = &ids[(p * 5 + i) % RECORDS];
            // RUNNING <-> PENDING are both legal from either (requeue), and
            // the unique message makes every mark its own history entry.
            let state = if (i / RECORDS).is_multiple_of(2) {
                "RUNNING"
            } else {
                "PENDING"
            };
            input.push_str(
                &json!({"id": id, "state": state, "message": format!("p{p} i{i}")}).to_string(),
            );
            input.push('\n');
        }
        let mut cmd = std::process::Command::new(&bin);
        cmd.env_clear();
        for (k, v) in &env.vars {
            cmd.env(k, v);
        }
        children.push(tao_testkit::tool::feed(cmd.arg("mark"), input));
    }
    for fed in children {
        let out = fed.wait();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(String::from_utf8(out.stdout).unwrap().lines().count(), n);
    }
    let mut total = 0;
    for id in &ids {
        let rec = check_record(&env, id);
        let hist = rec["history"].as_array().unwrap();
        total += hist.len() - 1;
        // Each process's marks appear in the order it made them.
        let mut last: HashMap<usize, usize> = HashMap::new();
        for h in &hist[1..] {
            let msg = h["message"].as_str().unwrap();
            let (p, i) = msg.split_once(' ').unwrap();
            let p: usize = p[1..].parse().unwrap();
            let i: usize = i[1..].parse().unwrap();
            if let Some(prev) = last.insert(p, i) {
                assert!(prev < i, "{id}: p{p} i{prev} recorded after i{i}");
            }
        }
        let last_msg = hist.last().unwrap()["message"].as_str().unwrap();
        assert_eq!(
            rec["message"], last_msg,
            "{id}: record fields match its last entry"
        );
    }
    assert_eq!(total, PROCS * n, "marks lost");
    // No temporary file was left behind.
    for e in std::fs::read_dir(env.state().join("records")).unwrap() {
        let name = e.unwrap().file_name().into_string().unwrap();
        assert!(
            name.ends_with(".json") || name.ends_with(".lock"),
            "left over: {name}"
        );
    }
}

#[test]
fn sigkill_never_leaves_a_half_written_record() {
    let env = Env::new();
    let ids: Vec<String> = (0..3).map(|_| env.open(&[])).collect();
    let bin = assert_cmd::cargo::cargo_bin("tao-record");
    let mut rng = Rng::from_env_or_time();
    let mut acknowledged: HashMap<String, Vec<String>> = HashMap::new();
    let kills = 120;
    for round in 0..kills {
        let mut cmd = std::process::Command::new(&bin);
        cmd.env_clear();
        for (k, v) in &env.vars {
            cmd.env(k, v);
        }
        let mut child = cmd
            .arg("mark")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let ids_w = ids.clone();
        // The feeder writes until the pipe breaks (the child was killed).
        let feeder = std::thread::spawn(move || {
            for i in 0.. {
                let id = &ids_w[i % ids_w.len()];
                let state = if (i / 3).is_multiple_of(2) {
                    "RUNNING"
                } else {
                    "PENDING"
                };
                let line = json!({"id": id, "state": state, "message": format!("r{round} i{i}")});
                if writeln!(stdin, "{line}").is_err() {
                    break;
                }
            }
        });
        // Kill after a random number of acknowledged marks, plus a random
        // delay of up to 3 ms, so the kill lands anywhere in a write
        // (between fsyncs, before or after the rename). The delay picks
        // the kill point; it does not wait for anything.
        let want = rng.below(12) as usize;
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        for _ in 0..want {
            line.clear();
            if out.read_line(&mut line).unwrap() == 0 {
                break;
            }
            let v: Value = serde_json::from_str(&line).unwrap();
            acknowledged
                .entry(v["id"].as_str().unwrap().to_string())
                .or_default()
                .push(v["message"].as_str().unwrap().to_string());
        }
        std::thread::sleep(std::time::Duration::from_micros(rng.below(3000)));
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        drop(out);
        feeder.join().unwrap();
        for id in &ids {
            check_record(&env, id);
        }
    }
    for id in &ids {
        let rec = check_record(&env, id);
        let msgs: Vec<&str> = rec["history"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["message"].as_str().unwrap())
            .collect();
        for m in acknowledged.get(id).into_iter().flatten() {
            assert!(
                msgs.contains(&m.as_str()),
                "{id}: acknowledged mark {m} lost"
            );
        }
    }
    // Evidence that kills landed inside writes: temporary files left behind
    // (gc sweeps them once they are an hour old).
    let leftovers = std::fs::read_dir(env.state().join("records"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with(".tmp-")
        })
        .count();
    eprintln!("{kills} kills; {leftovers} left a temporary file behind (killed mid-write)");
    // The store still works.
    env.mark(&ids[0], "COMPLETE", "COMPLETED");
    env.cmd().args(["list"]).assert().success();
}
