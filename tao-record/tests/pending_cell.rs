//! The table's MESSAGE cell of a job Slurm has not looked at yet: squeue
//! says PENDING with reason `None` right after sbatch (seen when `make -j4`
//! submits and polls at once), so tao-poll records a `pending` object
//! with no reason. The cell says that in words, not `-:`.

mod common;

use common::Env;
use serde_json::json;

#[test]
fn a_pending_job_with_no_reason_yet_says_so() {
    let env = Env::new();
    let id = env.open(&[]);
    let line = json!({"id": id, "state": "PENDING", "slurm": {"job_id": "1328"},
        "message": "PENDING", "pending": {"expected_start": null}});
    env.cmd()
        .arg("mark")
        .write_stdin(format!("{line}\n"))
        .assert()
        .success();
    let out = env.cmd().args(["list", "--table"]).output().unwrap();
    assert!(out.status.success());
    let t = String::from_utf8(out.stdout).unwrap();
    let row = t.lines().nth(1).unwrap();
    assert!(!row.contains("-:"), "{t}");
    assert!(row.ends_with("no reason from Slurm yet"), "{t}");
}
