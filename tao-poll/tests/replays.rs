//! Regression cases from real (or pasted) scheduler output, one directory
//! each under `tests/replays/`:
//!
//! * `squeue.txt`, `sacct.txt`, `scontrol.txt`: saved outputs (any may be
//!   missing; a missing one is a command that gave no answer);
//! * `ids`: the Slurm job ids to poll, one per line;
//! * `expect.tsv`: one line per job: job id, state, native state (`-` for
//!   none), message, tab-separated;
//! * `README`: where the output came from.
//!
//! To turn a user's paste into a test: make a directory with their output
//! and the ids, run `tao-poll --explain --replay-sacct sacct.txt ... IDS`,
//! check the result by hand, and write it to `expect.tsv`.

use std::path::Path;

use assert_cmd::Command;
use serde_json::Value;

fn run_case(dir: &Path) -> Result<(), String> {
    let mut cmd = Command::cargo_bin("tao-poll").unwrap();
    cmd.env_clear();
    for (file, flag) in [
        ("squeue.txt", "--replay-squeue"),
        ("sacct.txt", "--replay-sacct"),
        ("scontrol.txt", "--replay-scontrol"),
    ] {
        if dir.join(file).exists() {
            cmd.arg(flag).arg(dir.join(file));
        }
    }
    let ids = std::fs::read_to_string(dir.join("ids")).map_err(|e| format!("ids: {e}"))?;
    cmd.args(ids.split_whitespace());
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let got: Vec<String> = stdout
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            let s = |p: &[&str]| {
                let mut cur = &v;
                for k in p {
                    cur = &cur[*k];
                }
                cur.as_str().unwrap_or("-").to_string()
            };
            [
                s(&["slurm", "job_id"]),
                s(&["state"]),
                s(&["slurm", "native_state"]),
                s(&["message"]),
            ]
            .join("\t")
        })
        .collect();
    let want: Vec<String> = std::fs::read_to_string(dir.join("expect.tsv"))
        .map_err(|e| format!("expect.tsv: {e}"))?
        .lines()
        .map(str::to_string)
        .collect();
    if got != want {
        return Err(format!(
            "got:\n{}\nwant:\n{}\nstderr: {}",
            got.join("\n"),
            want.join("\n"),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(())
}

#[test]
fn every_saved_case_replays_as_expected() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/replays");
    let mut cases: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    cases.sort();
    assert!(cases.len() >= 4, "cases: {cases:?}");
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|c| {
            run_case(c)
                .err()
                .map(|e| format!("case {}: {e}", c.display()))
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
