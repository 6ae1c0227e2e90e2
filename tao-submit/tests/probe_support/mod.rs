//! Helpers of the probe tests (tests/probe.rs): real multi-node job lines
//! as the pipeline makes them (a record in the test's own store, the script
//! rendered by tao-script's library with the `local` site profile, the lint
//! of tao-secrets' library), and removal of the probe jobs' directories.

#![allow(dead_code)]

use serde_json::{json, Value};
use tao_core::JobLine;
use tao_store::Record;

use crate::common::{unique_id, Fixture};

/// A rendered, linted 2-node job line (record created in `f.store`)
/// running `command` on every node, with the line's non-secret `env`.
pub fn multi_line(f: &Fixture, tag: &str, command: &str, env: Value) -> Value {
    job_line(f, tag, 2, 1, command, env)
}

/// A rendered, linted job line of `nodes` nodes and `gpus` GPUs per node.
pub fn job_line(f: &Fixture, tag: &str, nodes: u32, gpus: u32, command: &str, env: Value) -> Value {
    let id = unique_id(tag);
    let base = f.c.var("SLURM_BASE_RESULTS_DIR").to_string();
    let mut line = json!({
        "id": id,
        "platform": "slurm",
        "action": "train",
        "network_arch": "probe-test",
        "image": null,
        "runtime": "none",
        "command": command,
        "resources": {"nodes": nodes, "gpus_per_node": gpus, "cpus_per_task": 1, "time": "00:05:00",
                      "child_timeout": null, "partition": "gpu", "account": null,
                      "exclusive": false, "requeue": false, "exclude": [], "mem": null},
        "storage": {"tier": "lustre", "base_dir": base, "job_dir": format!("{base}/jobs/{id}"),
                    "results_dir": format!("{base}/results/{id}")},
        "mounts": [],
        "env": env,
        "secrets": [],
        "state": "PENDING",
    });
    let profile = tao_core::site::SiteProfile::load(Some("local")).unwrap();
    let jl = JobLine::parse(&line.to_string(), 1).unwrap();
    let script = tao_script::render_line(&jl, &profile).unwrap();
    assert_eq!(script.template, if nodes > 1 { "multi" } else { "single" });
    let lint = tao_secrets::lint_script(&script.text);
    assert!(lint.ok, "{:?}", lint.findings);
    line["script"] = serde_json::to_value(&script).unwrap();
    line["lint"] = lint.to_value();
    let mut rec = line.as_object().unwrap().clone();
    rec.insert(
        "history".into(),
        json!([{"at": tao_core::time::now_rfc3339(), "state": "PENDING", "source": "test", "message": null}]),
    );
    f.store.create(&Record::from_map(rec)).unwrap();
    line
}

/// Removes `<base>/jobs/<id>*` and `<base>/results/<id>` of the given
/// line ids (the job and its probes) when dropped; TAO_TEST_KEEP keeps them.
pub struct Cleanup<'a> {
    pub f: &'a Fixture,
    pub ids: Vec<String>,
}

impl Drop for Cleanup<'_> {
    fn drop(&mut self) {
        if self.ids.is_empty() || std::env::var_os("TAO_TEST_KEEP").is_some() {
            return;
        }
        let base = self.f.c.var("SLURM_BASE_RESULTS_DIR").to_string();
        let mut cmd = String::from("rm -rf --");
        for id in &self.ids {
            // ids are [a-z0-9-]: safe in a glob.
            cmd.push_str(&format!(
                " {base}/jobs/{id} {base}/jobs/{id}-probe* {base}/results/{id}"
            ));
        }
        if let Ok(r) = tao_ssh::Remote::connect(&self.f.c.opts()) {
            let _ = r.exec(&cmd, None);
        }
    }
}

/// The Slurm job ids of every job named `<id>-probe*` (squeue -t all and
/// sacct), in submission order: by numeric job id (as text, "1000" would
/// sort before "999" when the ids cross a power of ten mid-test).
pub fn probe_jobs_of(f: &Fixture, id: &str) -> Vec<(String, String)> {
    let (_, out, _) = f.c.ssh(&format!(
        "sacct -n -X -P -S now-1days -o JobIDRaw,JobName%80,State | grep -F '|{id}-probe'; squeue -h -t all -o '%i|%j|%T' | grep -F '|{id}-probe'"
    ));
    let mut v: Vec<(String, String)> = out
        .lines()
        .filter_map(|l| {
            let mut p = l.split('|');
            Some((p.next()?.to_string(), p.next()?.to_string()))
        })
        .collect();
    v.sort_by_key(|(job, name)| (job.parse::<u64>().unwrap_or(u64::MAX), name.clone()));
    v.dedup();
    v
}

/// `cat` of a job's `main.out` (both nodes write into it).
pub fn main_out(f: &Fixture, job_dir: &str, name: &str, job_id: &str) -> String {
    let (_, out, _) = f.c.ssh(&format!(
        "cat {job_dir}/slurm-logs/{name}-{job_id}/main.out 2>/dev/null"
    ));
    out
}

/// Submit a fresh line from `make` with `args` until none of its probes met
/// a node failure, at most 3 times: other tests on the shared local cluster
/// take nodes down on purpose, and a probe job killed by NODE_FAIL is not
/// the hang this test drives. Every id tried is pushed to `ids` (cleanup);
/// the cluster cache of `f` is cleared before a new try.
pub fn submit_clean(
    f: &Fixture,
    make: impl Fn() -> Value,
    args: &[&str],
    ids: &mut Vec<String>,
) -> (Value, std::process::Output) {
    for attempt in 1..=3 {
        let line = make();
        ids.push(line["id"].as_str().unwrap().to_string());
        let out = f
            .cmd()
            .args(args)
            .write_stdin(format!("{line}\n"))
            .output()
            .unwrap();
        if attempt < 3 && String::from_utf8_lossy(&out.stdout).contains("NODE_FAIL") {
            eprintln!(
                "probe test: a node failed under a probe job (another test took it down); trying again: {}",
                String::from_utf8_lossy(&out.stdout)
            );
            let _ = std::fs::remove_dir_all(f.state.path().join("clusters"));
            continue;
        }
        return (line, out);
    }
    unreachable!("the third attempt returns")
}
