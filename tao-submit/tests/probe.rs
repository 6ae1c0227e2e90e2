//! The communication probe gate (issue 8) as real Slurm jobs on the local
//! 2-node cluster, through the binary with a cleared environment and a
//! fresh TAO_STATE_DIR per test.
//!
//! There is no GPU or NCCL here, so a hang is made with the probe
//! program's labelled test double: `TAO_PROBE_TEST_HANG_UNLESS=VAR` in the
//! line's `env` (the probe job inherits the line's env) makes the probe
//! sleep past its timeout unless VAR is set, as an NCCL transport hang
//! would. Short probe timeouts (`--probe-timeout`) keep the tests short.
//! Without the cluster: fail under CI=true, skip with a reason otherwise.

mod common;
mod probe_support;

use common::{lines_of, Fixture};
use probe_support::{job_line, main_out, multi_line, probe_jobs_of, submit_clean, Cleanup};
use serde_json::{json, Value};

/// Prints, on every node, the knob the job sees and the TAO rendezvous values.
const REPORT: &str = "echo \"tao-test node=$TAO_NODE_RANK knob=${NCCL_P2P_DISABLE:-unset} nodes=$TAO_NODE_COUNT gpus=$TAO_GPUS_PER_NODE world=$WORLD_SIZE\"";

/// The probe cache of the cluster under test: keyed by its ClusterName
/// (`tao-local` for 22.05, `tao-2411` for the 24.11 cluster), read the way
/// tao-submit reads it.
fn cache_file(f: &Fixture) -> std::path::PathBuf {
    let (_, out, _) =
        f.c.ssh("scontrol show config | awk '$1 == \"ClusterName\" {print $3}'");
    let name = out.trim();
    assert!(!name.is_empty(), "no ClusterName in scontrol show config");
    f.state.path().join("clusters").join(name).join("nccl.json")
}

/// Wait for the job to end and return its main.out.
fn finished_output(f: &Fixture, line: &Value, job_id: &str) -> String {
    let st = f.c.wait_state(job_id, 180, |s| {
        !s.is_empty() && !matches!(s, "PENDING" | "RUNNING" | "CONFIGURING" | "COMPLETING")
    });
    let out = main_out(
        f,
        line["storage"]["job_dir"].as_str().unwrap(),
        line["id"].as_str().unwrap(),
        job_id,
    );
    assert_eq!(st, "COMPLETED", "job {job_id}: {out}");
    out
}

#[test]
fn a_hanging_probe_is_retried_with_the_knob_cached_and_later_jobs_carry_it() {
    let Some(f) = Fixture::new() else { return };
    let mut ids = Vec::new();
    let (a, out) = submit_clean(
        &f,
        || {
            multi_line(
                &f,
                "pa",
                REPORT,
                json!({"TAO_PROBE_TEST_HANG_UNLESS": "NCCL_P2P_DISABLE"}),
            )
        },
        // 30 s: time enough for the probe that passes to start both nodes
        // and rendezvous on a loaded machine (the hanging one is cut anyway).
        &["--probe-timeout", "30", "--stats"],
        &mut ids,
    );
    let b = multi_line(&f, "pb", REPORT, json!({}));
    let (ida, idb) = (
        a["id"].as_str().unwrap().to_string(),
        b["id"].as_str().unwrap().to_string(),
    );
    ids.push(idb.clone());
    let _clean = Cleanup { f: &f, ids };

    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stderr: {stderr}");
    // Probes, their polls and the real job: all over one SSH session.
    assert!(stderr.contains("stats: handshakes=1 "), "{stderr}");
    let got = lines_of(&out.stdout);
    let l = &got[0];
    assert!(l.get("error").is_none(), "{l}");
    let p = &l["probe"];
    assert_eq!(p["env"], json!({"NCCL_P2P_DISABLE": "1"}), "{p}");
    assert_eq!(p["cached"], false);
    let tried = p["tried"].as_array().unwrap();
    assert_eq!(tried.len(), 2, "{p}");
    assert_eq!(tried[0]["env"], json!({}));
    assert_eq!(tried[0]["outcome"], "timeout", "{p}");
    assert_eq!(tried[1]["env"], json!({"NCCL_P2P_DISABLE": "1"}));
    assert_eq!(tried[1]["outcome"], "ok");
    let probe_ids: Vec<String> = p["probe_job_ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    assert_eq!(probe_ids.len(), 2);

    // Both probes were real Slurm jobs named after the line; the first
    // hung (the labelled stand-in) and was stopped by the probe's timeout.
    let jobs = probe_jobs_of(&f, &ida);
    let ids: Vec<&str> = jobs.iter().map(|(i, _)| i.as_str()).collect();
    assert_eq!(
        ids,
        probe_ids.iter().map(String::as_str).collect::<Vec<_>>()
    );
    let base = f.c.var("SLURM_BASE_RESULTS_DIR");
    let first = main_out(
        &f,
        &format!("{base}/jobs/{}", jobs[0].1),
        &jobs[0].1,
        &jobs[0].0,
    );
    assert!(first.contains("simulating a transport hang"), "{first}");
    assert!(first.contains("tao: TAO_PROBE_RESULT=timeout"), "{first}");
    let second = main_out(
        &f,
        &format!("{base}/jobs/{}", jobs[1].1),
        &jobs[1].1,
        &jobs[1].0,
    );
    assert!(second.contains("TAO_PROBE_OK world=2 sum=3"), "{second}");
    assert!(second.contains("tao: TAO_PROBE_RESULT=ok"), "{second}");

    // Cached per cluster (Slurm's ClusterName), written whole.
    let cache: Value = serde_json::from_slice(&std::fs::read(cache_file(&f)).unwrap()).unwrap();
    assert_eq!(cache["env"], json!({"NCCL_P2P_DISABLE": "1"}));
    assert_eq!(cache["probe_job_id"], probe_ids[1].as_str());
    assert!(tao_core::time::parse_rfc3339(cache["passed_at"].as_str().unwrap()).is_some());
    assert_eq!(cache["tried"].as_array().unwrap().len(), 2);

    // The real job carries the knob on both nodes (sbatch --export), and its
    // approved script was not changed.
    let ja = l["slurm"]["job_id"].as_str().unwrap().to_string();
    assert_eq!(l["script"], a["script"]);
    let text = finished_output(&f, &a, &ja);
    for node in 0..2 {
        assert!(
            text.contains(&format!(
                "tao-test node={node} knob=1 nodes=2 gpus=1 world=2"
            )),
            "node {node}: {text}"
        );
    }

    // The next multi-node job skips the probe and carries the cached knob.
    let out = f.run(&["--probe-timeout", "30"], std::slice::from_ref(&b), 0);
    let lb = &lines_of(&out.stdout)[0];
    assert_eq!(lb["probe"]["cached"], true, "{lb}");
    assert_eq!(lb["probe"]["env"], json!({"NCCL_P2P_DISABLE": "1"}));
    assert_eq!(lb["probe"]["probe_job_ids"], json!([probe_ids[1]]));
    assert!(probe_jobs_of(&f, &idb).is_empty(), "no probe ran for {idb}");
    let jb = lb["slurm"]["job_id"].as_str().unwrap().to_string();
    let text = finished_output(&f, &b, &jb);
    for node in 0..2 {
        assert!(
            text.contains(&format!("tao-test node={node} knob=1")),
            "node {node}: {text}"
        );
    }
}

#[test]
fn a_probe_that_never_passes_blocks_the_job_and_says_what_was_tried() {
    let Some(f) = Fixture::new() else { return };
    let mut ids = Vec::new();
    let (c, out) = submit_clean(
        &f,
        || {
            multi_line(
                &f,
                "pc",
                REPORT,
                json!({"TAO_PROBE_TEST_HANG_UNLESS": "TAO_TEST_NO_KNOB_SETS_THIS"}),
            )
        },
        &["--probe-timeout", "8"],
        &mut ids,
    );
    let id = c["id"].as_str().unwrap().to_string();
    let _clean = Cleanup { f: &f, ids };
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stderr: {stderr}");
    let got = lines_of(&out.stdout);
    assert_eq!(got.len(), 1, "the line is printed once, with its error");
    let l = &got[0];
    assert!(l.get("slurm").is_none(), "nothing submitted: {l}");
    assert_eq!(l["error"]["tool"], "tao-submit");
    let msg = l["error"]["message"].as_str().unwrap();
    assert!(!msg.contains('\n'));
    for env in [
        "no NCCL settings -> timeout",
        "NCCL settings NCCL_P2P_DISABLE=1 -> timeout",
        "NCCL settings NCCL_IB_DISABLE=1 NCCL_P2P_DISABLE=1 NCCL_SOCKET_IFNAME=lo -> timeout",
    ] {
        assert!(msg.contains(env), "{env:?} missing from: {msg}");
    }
    assert!(msg.contains("was not submitted"), "{msg}");
    assert!(
        stderr.contains("communication probe try 1 of at most 3 (Slurm job ")
            && stderr.contains(") with no NCCL settings (the cluster's defaults) on cluster"),
        "{stderr}"
    );
    // Try 1 is the normal path (a progress note); a later try follows a
    // failed one (a warning).
    for l in stderr
        .lines()
        .filter(|l| l.contains("communication probe try"))
    {
        let first = l.contains("try 1 of");
        assert_eq!(l.contains(": warning: "), !first, "{l}");
    }
    assert!(msg.contains("--skip-probe"), "{msg}");
    assert_eq!(l["probe"]["env"], Value::Null);
    assert_eq!(l["probe"]["tried"].as_array().unwrap().len(), 3);
    assert_eq!(probe_jobs_of(&f, &id).len(), 3);
    // The real job was never submitted, and nothing was cached.
    assert!(f.c.jobs_named(&id).is_empty(), "{:?}", f.c.jobs_named(&id));
    assert!(!cache_file(&f).exists());
}

#[test]
fn skip_probe_submits_without_a_probe_and_says_so() {
    let Some(f) = Fixture::new() else { return };
    let d = multi_line(&f, "pd", REPORT, json!({}));
    let id = d["id"].as_str().unwrap().to_string();
    let _clean = Cleanup {
        f: &f,
        ids: vec![id.clone()],
    };
    let out = f.run_cmd(f.cmd().arg("--skip-probe"), std::slice::from_ref(&d), 0);
    let l = &lines_of(&out.stdout)[0];
    assert_eq!(
        l["probe"],
        json!({"env": {}, "cached": false, "skipped": true, "probe_job_ids": [], "tried": []})
    );
    assert!(probe_jobs_of(&f, &id).is_empty());
    let j = l["slurm"]["job_id"].as_str().unwrap().to_string();
    let text = finished_output(&f, &d, &j);
    assert!(text.contains("tao-test node=1 knob=unset"), "{text}");

    // A cached environment is still applied under --skip-probe.
    std::fs::create_dir_all(cache_file(&f).parent().unwrap()).unwrap();
    std::fs::write(
        cache_file(&f),
        json!({"env": {"NCCL_P2P_DISABLE": "1"}, "passed_at": "2026-11-29T20:00:00.000000Z",
               "probe_job_id": "1", "tried": []})
        .to_string(),
    )
    .unwrap();
    let e = multi_line(&f, "pg", REPORT, json!({}));
    let ide = e["id"].as_str().unwrap().to_string();
    let _clean_e = Cleanup {
        f: &f,
        ids: vec![ide.clone()],
    };
    let out = f.run_cmd(f.cmd().arg("--skip-probe"), std::slice::from_ref(&e), 0);
    let l = &lines_of(&out.stdout)[0];
    assert_eq!(l["probe"]["cached"], true, "{l}");
    assert_eq!(l["probe"]["skipped"], true);
    assert!(probe_jobs_of(&f, &ide).is_empty());
    let j = l["slurm"]["job_id"].as_str().unwrap().to_string();
    let text = finished_output(&f, &e, &j);
    assert!(text.contains("tao-test node=1 knob=1"), "{text}");
}

#[test]
fn one_node_with_two_gpus_is_probed_once_and_needs_no_knob() {
    let Some(f) = Fixture::new() else { return };
    let one = job_line(
        &f,
        "pe",
        1,
        2,
        "echo \"tao-test knob=${NCCL_P2P_DISABLE:-unset}\"",
        json!({}),
    );
    let small = job_line(&f, "pf", 1, 1, "true", json!({}));
    let (ide, idf) = (
        one["id"].as_str().unwrap().to_string(),
        small["id"].as_str().unwrap().to_string(),
    );
    let _clean = Cleanup {
        f: &f,
        ids: vec![ide.clone(), idf.clone()],
    };
    let out = f.run(&["--probe-timeout", "30"], &[one.clone(), small.clone()], 0);
    let got = lines_of(&out.stdout);
    assert_eq!(got.len(), 2);
    let p = &got[0]["probe"];
    assert_eq!(p["env"], json!({}), "{p}");
    assert_eq!(p["cached"], false);
    assert_eq!(p["tried"][0]["outcome"], "ok", "{p}");
    assert_eq!(p["tried"].as_array().unwrap().len(), 1);
    assert_eq!(probe_jobs_of(&f, &ide).len(), 1);
    // One node with one GPU: no probe, no `probe` field.
    assert!(got[1].get("probe").is_none(), "{}", got[1]);
    assert!(probe_jobs_of(&f, &idf).is_empty());
    let cache: Value = serde_json::from_slice(&std::fs::read(cache_file(&f)).unwrap()).unwrap();
    assert_eq!(cache["env"], json!({}));
    let j = got[0]["slurm"]["job_id"].as_str().unwrap().to_string();
    let text = finished_output(&f, &one, &j);
    assert!(
        text.contains("tao-test knob=unset"),
        "no --export without a knob: {text}"
    );
}
