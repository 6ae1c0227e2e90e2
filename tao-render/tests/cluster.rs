//! Rendered scripts submitted for real to the local Slurm cluster
//! (`tests/cluster/up`; Slurm 22.05, nodes n1 and n2 with 4 fake GPUs each),
//! straight through the local `sbatch` (tao-submit is not involved): a
//! 2-node job checked from each node's own output, the lifecycle order and
//! success-only post-commands, a child timeout of seconds, and the sidecar
//! gone after success, failure and cancel.
//!
//! If the cluster is not up: with CI=true these tests fail; otherwise they
//! skip with a printed reason. Submissions use `--hold`, create the log
//! directory, then release (Slurm 22.05 does not create `--output` dirs).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::*;
use serde_json::{json, Value};
use tao_script::render_line;

/// The cluster under test: `$TAO_CLUSTER_DIR` (default the 22.05 cluster's
/// /var/tmp/tao-cluster; env-24.11 points it at the 24.11 cluster, whose
/// Slurm commands are root wrappers first in PATH).
fn cluster_dir() -> PathBuf {
    PathBuf::from(
        std::env::var("TAO_CLUSTER_DIR").unwrap_or_else(|_| "/var/tmp/tao-cluster".into()),
    )
}

fn cluster_up() -> bool {
    let env_file = cluster_dir().join("env");
    let reason = if !env_file.exists() {
        format!(
            "{} is missing (run `bash tests/cluster/up`)",
            env_file.display()
        )
    } else {
        match Command::new("timeout")
            .args(["10", "sinfo", "-h", "-p", "gpu", "-o", "%a"])
            .output()
        {
            Ok(o) if o.status.success() && String::from_utf8_lossy(&o.stdout).contains("up") => {
                return true
            }
            Ok(o) => format!(
                "sinfo failed: {}",
                String::from_utf8_lossy(&o.stderr).trim()
            ),
            Err(e) => format!("sinfo not runnable: {e}"),
        }
    };
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "the local Slurm cluster is needed in CI: {reason}"
    );
    eprintln!("skipping: local Slurm cluster not up: {reason}");
    false
}

fn shared_base() -> tempfile::TempDir {
    let shared = cluster_dir().join("shared");
    let parent = if shared.is_dir() {
        shared.to_path_buf()
    } else {
        std::env::temp_dir()
    };
    tempfile::Builder::new()
        .prefix("render-test-")
        .tempdir_in(parent)
        .unwrap()
}

struct Submitted {
    id: String,
    job_dir: PathBuf,
    results: PathBuf,
    slurm_id: String,
}

impl Submitted {
    fn log_dir(&self) -> PathBuf {
        self.job_dir
            .join("slurm-logs")
            .join(format!("{}-{}", self.id, self.slurm_id))
    }
    fn completion(&self) -> Value {
        let p = self.log_dir().join("completion.json");
        serde_json::from_str(
            &std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display())),
        )
        .unwrap()
    }
    fn results_file(&self, name: &str) -> String {
        std::fs::read_to_string(self.results.join(name)).unwrap_or_default()
    }
    fn sidecar_gone(&self) -> bool {
        !self.job_dir.join("env/secrets.env").exists()
    }
}

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Render `l`, write a fake sidecar, submit held, create the log dir, release.
fn submit(base: &Path, id: &str, edit: impl FnOnce(&mut Value)) -> Submitted {
    let mut l = line_under(base.to_str().unwrap(), id);
    l["resources"]["time"] = json!("00:05:00");
    l["resources"]["child_timeout"] = json!("00:04:00");
    l["resources"]["cpus_per_task"] = json!(1);
    edit(&mut l);
    let s = render_line(&jobline(&l), &profile("local")).unwrap();
    let job_dir = base.join("jobs").join(id);
    std::fs::create_dir_all(job_dir.join("env")).unwrap();
    std::fs::create_dir_all(job_dir.join("sbatch")).unwrap();
    std::fs::write(
        job_dir.join("env/secrets.env"),
        "FAKE_TOKEN='fake-not-a-secret-0000'\n",
    )
    .unwrap();
    let script = job_dir.join(format!("sbatch/job_{id}.sbatch"));
    std::fs::write(&script, &s.text).unwrap();
    let out = run(Command::new("sbatch")
        .args(["--parsable", "--hold"])
        .arg(&script)
        .current_dir(base));
    let slurm_id = out.trim().split(';').next().unwrap().to_string();
    let sub = Submitted {
        id: id.into(),
        job_dir,
        results: base.join("results").join(id),
        slurm_id,
    };
    std::fs::create_dir_all(sub.log_dir()).unwrap();
    run(Command::new("scontrol").args(["release", &sub.slurm_id]));
    sub
}

fn state(slurm_id: &str) -> String {
    let out = Command::new("sacct")
        .args(["-j", slurm_id, "-X", "-n", "-P", "-o", "State"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn wait_done(jobs: &[&Submitted], bound: Duration) {
    let start = Instant::now();
    loop {
        let pending: Vec<_> = jobs
            .iter()
            .filter(|j| {
                let s = state(&j.slurm_id);
                s.is_empty()
                    || ["PENDING", "RUNNING", "COMPLETING", "REQUEUED"]
                        .iter()
                        .any(|p| s.starts_with(p))
                    || !j.log_dir().join("completion.json").exists()
            })
            .collect();
        if pending.is_empty() {
            return;
        }
        assert!(
            start.elapsed() < bound,
            "jobs not done within {bound:?}: {:?}",
            pending
                .iter()
                .map(|j| (&j.slurm_id, state(&j.slurm_id)))
                .collect::<Vec<_>>()
        );
        std::thread::sleep(Duration::from_millis(300));
    }
}

#[test]
fn two_node_job_sees_its_rank_and_the_rendezvous() {
    if !cluster_up() {
        return;
    }
    let base = shared_base();
    let job = submit(base.path(), "tao-rt-multi", |l| {
        l["resources"]["nodes"] = json!(2);
        l["resources"]["gpus_per_node"] = json!(2);
        l["command"] = json!("echo \"node=$SLURMD_NODENAME NODE_RANK=$NODE_RANK MASTER_ADDR=$MASTER_ADDR MASTER_PORT=$MASTER_PORT WORLD_SIZE=$WORLD_SIZE NUM_GPU_PER_NODE=$NUM_GPU_PER_NODE CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES TAO_NODE_RANK=$TAO_NODE_RANK\" > {results_dir}/rank.$NODE_RANK");
    });
    wait_done(&[&job], Duration::from_secs(180));
    assert_eq!(state(&job.slurm_id), "COMPLETED");
    for (rank, node) in [(0, "n1"), (1, "n2")] {
        let got = job.results_file(&format!("rank.{rank}"));
        // Which two of a node's four GPUs depends on other jobs running there.
        let (head, cuda) = got
            .trim_end()
            .split_once(" CUDA_VISIBLE_DEVICES=")
            .unwrap_or_else(|| panic!("rank {rank}: {got:?}"));
        assert_eq!(
            head,
            format!("node={node} NODE_RANK={rank} MASTER_ADDR=n1 MASTER_PORT=29500 WORLD_SIZE=2 NUM_GPU_PER_NODE=2")
        );
        let (devices, tao_rank) = cuda.split_once(' ').unwrap();
        let devices: Vec<u32> = devices.split(',').map(|d| d.parse().unwrap()).collect();
        assert_eq!(devices.len(), 2, "{got}");
        assert!(
            devices.iter().all(|d| *d < 4) && devices[0] != devices[1],
            "{got}"
        );
        assert_eq!(tao_rank, format!("TAO_NODE_RANK={rank}"));
    }
    assert_eq!(job.completion()["exit_code"], 0);
    assert!(job.sidecar_gone());
}

#[test]
fn lifecycle_child_timeout_and_sidecar_on_real_jobs() {
    if !cluster_up() {
        return;
    }
    let base = shared_base();
    let lifecycle = |command: &str| {
        let command = command.to_string();
        move |l: &mut Value| {
            l["execution"] = json!({
                "pre_commands": ["echo \"pre secret=${FAKE_TOKEN:+present}\" >> {results_dir}/order"],
                "command": command,
                "post_commands": [
                    {"command": "echo \"post-leader $SLURM_PROCID\" >> {results_dir}/order", "scope": "leader"},
                    {"command": "echo post-all >> {results_dir}/order", "scope": "all"}
                ],
                "launcher": null, "supporting_files": []
            });
        }
    };
    let ok = submit(
        base.path(),
        "tao-rt-ok",
        lifecycle("echo main >> {results_dir}/order"),
    );
    let failed = submit(
        base.path(),
        "tao-rt-fail",
        lifecycle("echo main >> {results_dir}/order; exit 4"),
    );
    let timed_out = submit(base.path(), "tao-rt-timeout", |l| {
        lifecycle("echo main >> {results_dir}/order; sleep 120")(l);
        l["resources"]["child_timeout"] = json!("00:00:03");
    });
    let cancelled = submit(
        base.path(),
        "tao-rt-cancel",
        lifecycle("touch {results_dir}/started; sleep 120"),
    );
    // Cancel once the command runs (bounded poll).
    let start = Instant::now();
    while !cancelled.results.join("started").exists() {
        assert!(
            start.elapsed() < Duration::from_secs(180),
            "cancel job never started: {}",
            state(&cancelled.slurm_id)
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    run(Command::new("scancel").arg(&cancelled.slurm_id));
    wait_done(
        &[&ok, &failed, &timed_out, &cancelled],
        Duration::from_secs(240),
    );

    assert_eq!(state(&ok.slurm_id), "COMPLETED");
    assert_eq!(
        ok.results_file("order"),
        "pre secret=present\nmain\npost-leader 0\npost-all\n"
    );
    assert_eq!(ok.completion()["exit_code"], 0);

    assert_eq!(state(&failed.slurm_id), "FAILED");
    assert_eq!(failed.results_file("order"), "pre secret=present\nmain\n");
    assert_eq!(
        failed.completion()["failures"],
        json!([{"step": "main", "exit_code": 4}])
    );

    assert_eq!(
        timed_out.results_file("order"),
        "pre secret=present\nmain\n"
    );
    assert_eq!(timed_out.completion()["exit_code"], 124);
    // The script exits 124: Slurm says FAILED (not TIMEOUT, not CANCELLED),
    // and main.out says the child timeout stopped the step, since Slurm's
    // own "*** STEP <id>.0 ... CANCELLED AT ... ***" reads like an scancel.
    assert_eq!(state(&timed_out.slurm_id), "FAILED");
    let out = std::fs::read_to_string(timed_out.log_dir().join("main.out")).unwrap();
    let err = std::fs::read_to_string(timed_out.log_dir().join("main.err")).unwrap();
    assert!(err.contains(" CANCELLED AT "), "{err}");
    assert!(
        out.contains(
            "tao: step main: child timeout reached after 3 s (the job's child timeout, \
             a share of its --time); stopped, returned error code 124\n\
             tao: step main: exit 124\n"
        ),
        "{out}"
    );

    assert!(state(&cancelled.slurm_id).starts_with("CANCELLED"));
    assert_eq!(cancelled.completion()["exit_code"], 143);

    for j in [&ok, &failed, &timed_out, &cancelled] {
        assert!(j.sidecar_gone(), "{}: sidecar left behind", j.id);
        let out = std::fs::read_to_string(j.log_dir().join("main.out")).unwrap();
        assert!(
            out.contains("restart 0 (SLURM_RESTART_COUNT=0) slurm job "),
            "{}: {out}",
            j.id
        );
        assert!(!out.contains("fake-not-a-secret"), "{}", j.id);
    }
}
