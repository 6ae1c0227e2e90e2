//! `tao-submit cancel` on the local cluster: a running, a finished and an
//! unknown job in one run (one scancel); the running and unknown ones are
//! emitted CANCELED, the finished one keeps its state for tao-poll; the running
//! one really cancelled according to sacct.

mod common;

use common::{lines_of, Fixture};
use serde_json::json;

#[test]
fn cancels_running_finished_and_unknown_jobs() {
    let Some(f) = Fixture::new() else { return };
    let running = f.line("cr", "sleep 300");
    let finished = f.line("cf", "true");
    let recorded = f.line("cc", "true");
    let out = f.run(&[], &[running, finished, recorded], 0);
    let submitted = lines_of(&out.stdout);
    let run_id = submitted[0]["slurm"]["job_id"]
        .as_str()
        .unwrap()
        .to_string();
    let fin_id = submitted[1]["slurm"]["job_id"]
        .as_str()
        .unwrap()
        .to_string();
    f.c.wait_state(&run_id, 180, |s| s == "RUNNING");
    // Ended for accounting too: cancel reads the end state from sacct, which
    // lags squeue by seconds on a loaded machine.
    f.c.wait_sacct(&fin_id, 180, |s| s == "COMPLETED");
    // A job whose record already says COMPLETE (tao-poll saw it end).
    let mut done = submitted[2].clone();
    let done_id = done["slurm"]["job_id"].as_str().unwrap().to_string();
    f.c.wait_sacct(&done_id, 180, |s| s == "COMPLETED");
    done["state"] = json!("COMPLETE");

    // A job Slurm never knew: a record whose slurm.job_id is not a job.
    let mut unknown = f.line("cu", "true");
    unknown["slurm"] =
        json!({"job_id": "987654321", "cluster": null, "login_host": f.c.var("SLURM_HOSTNAME")});
    // A line never submitted (no slurm.job_id): nothing to cancel.
    let never = f.line("cn", "true");

    let input = [
        submitted[0].clone(),
        submitted[1].clone(),
        unknown,
        never,
        done,
    ];
    let out = f.run(&["cancel", "--wait", "60"], &input, 0);
    let got = lines_of(&out.stdout);
    assert_eq!(got.len(), 5);
    // Already COMPLETE: said so, with Slurm's state, not "run tao-poll".
    assert_eq!(got[4]["state"], "COMPLETE", "{}", got[4]);
    assert_eq!(
        got[4]["message"],
        "already ended COMPLETE (Slurm: COMPLETED); nothing was cancelled"
    );
    for (i, l) in got.iter().take(4).enumerate() {
        assert!(l.get("error").is_none(), "{l}");
        if i == 1 {
            // Ended on its own before scancel: its outcome is not erased.
            assert_ne!(l["state"], "CANCELED", "{l}");
            continue;
        }
        assert_eq!(l["state"], "CANCELED", "{l}");
        assert_eq!(l["observed_by"], "tao-submit");
    }
    assert!(
        got[0]["message"].as_str().unwrap().starts_with("CANCELLED"),
        "{}",
        got[0]
    );
    assert!(
        got[1]["message"]
            .as_str()
            .unwrap()
            .contains("COMPLETED (ended before scancel)"),
        "{}",
        got[1]
    );
    assert!(
        got[2]["message"]
            .as_str()
            .unwrap()
            .contains("unknown to Slurm"),
        "{}",
        got[2]
    );
    assert!(
        got[3]["message"]
            .as_str()
            .unwrap()
            .contains("nothing to cancel"),
        "{}",
        got[3]
    );
    // sacct agrees: the running job was cancelled, the finished one stays COMPLETED.
    let st = f.c.wait_sacct(&run_id, 180, |s| s.starts_with("CANCELLED"));
    assert!(st.starts_with("CANCELLED"));
    assert_eq!(f.c.wait_sacct(&fin_id, 5, |_| true), "COMPLETED");
}

#[test]
fn cancel_finds_a_job_by_name_when_the_line_has_no_job_id() {
    let Some(f) = Fixture::new() else { return };
    let line = f.line("cb", "sleep 300");
    let out = f.run(&[], std::slice::from_ref(&line), 0);
    let job_id = lines_of(&out.stdout)[0]["slurm"]["job_id"]
        .as_str()
        .unwrap()
        .to_string();
    // The line as it was before submit (no slurm object).
    let out = f.run_cmd(f.cmd().arg("cancel"), &[line], 0);
    let got = lines_of(&out.stdout);
    assert_eq!(got[0]["slurm"]["job_id"], job_id.as_str());
    assert_eq!(got[0]["state"], "CANCELED");
    f.c.wait_state(&job_id, 180, |s| s.starts_with("CANCELLED"));
}
