//! Rendered scripts run for real with bash (not sbatch) against a faked
//! Slurm: stub `srun` (runs the step once per fake node with SLURM_NODEID
//! and SLURM_PROCID set), stub `scontrol` and fake SLURM_* variables. These
//! show the lifecycle order, success-only post-commands, leader scope, the
//! child timeout (seconds), completion.json on every exit path, the
//! sidecar removed on success, failure and SIGTERM, the rendezvous
//! exports per node, the conversion's magic check and the probe verdicts.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::*;
use serde_json::{json, Value};
use tao_script::{
    render_convert, render_line, render_probe, ConvertRequest, ProbeLauncher, ProbeRequest,
};

struct Job {
    fake: FakeSlurm,
    job_dir: PathBuf,
    results: PathBuf,
    script: PathBuf,
}

impl Job {
    /// Render `edit(line)` under a fresh fake base and write the script
    /// and a sidecar with a fake secret.
    fn new(edit: impl FnOnce(&mut Value)) -> Job {
        let fake = FakeSlurm::running();
        let base = fake.base();
        let mut l = line_under(base.to_str().unwrap(), ID);
        l["resources"]["time"] = json!("00:10:00");
        l["resources"]["child_timeout"] = json!("00:05:00");
        edit(&mut l);
        let s = render_line(&jobline(&l), &profile("local")).unwrap();
        let job_dir = base.join("jobs").join(ID);
        std::fs::create_dir_all(job_dir.join("env")).unwrap();
        std::fs::create_dir_all(job_dir.join("slurm-logs").join(format!("{ID}-4242"))).unwrap();
        std::fs::write(
            job_dir.join("env/secrets.env"),
            "FAKE_TOKEN='fake-not-a-secret-0000'\n",
        )
        .unwrap();
        let script = job_dir.join("job.sbatch");
        std::fs::write(&script, &s.text).unwrap();
        let results = base.join("results").join(ID);
        Job {
            fake,
            job_dir,
            results,
            script,
        }
    }

    fn run(&self, nodes: u32) -> std::process::Output {
        self.fake
            .bash(&self.script)
            .env("TAO_FAKE_NODES", nodes.to_string())
            .output()
            .unwrap()
    }

    fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.results.join(rel)).unwrap_or_default()
    }

    fn completion(&self) -> Value {
        let p = self
            .job_dir
            .join(format!("slurm-logs/{ID}-4242/completion.json"));
        let text = std::fs::read_to_string(&p).expect("completion.json written");
        serde_json::from_str(&text).expect("completion.json is JSON")
    }

    fn sidecar_gone(&self) -> bool {
        !self.job_dir.join("env/secrets.env").exists()
    }
}

fn lifecycle<'a>(command: &'a str, post_extra: &[Value]) -> impl FnOnce(&mut Value) + 'a {
    let post_extra = post_extra.to_vec();
    move |l: &mut Value| {
        let mut post = vec![
            json!({"command": "echo \"post-leader rank=$SLURM_PROCID\" >> {results_dir}/order", "scope": "leader"}),
            json!({"command": "echo \"post-all rank=$SLURM_PROCID\" >> {results_dir}/order", "scope": "all"}),
        ];
        post.extend(post_extra);
        l["execution"] = json!({
            "pre_commands": [
                "echo pre1 >> {results_dir}/order",
                "echo \"pre2 secret=${FAKE_TOKEN:+present} job={job_id}\" >> {results_dir}/order"
            ],
            "command": command,
            "post_commands": post,
            "launcher": null,
            "supporting_files": []
        });
    }
}

#[test]
fn success_runs_every_step_in_order_and_removes_the_sidecar() {
    let job = Job::new(lifecycle(
        "echo \"main args=$#\" >> {results_dir}/order",
        &[],
    ));
    let out = job.run(1);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        job.read("order"),
        format!("pre1\npre2 secret=present job={ID}\nmain args=0\npost-leader rank=0\npost-all rank=0\n")
    );
    let c = job.completion();
    assert_eq!(c["exit_code"], 0);
    assert_eq!(c["slurm_job_id"], "4242");
    assert_eq!(c["restart_count"], 0);
    assert_eq!(c["failures"], json!([]));
    assert!(tao_core::time::parse_rfc3339(c["end"].as_str().unwrap()).is_some());
    assert!(job.sidecar_gone(), "sidecar must be removed on success");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("restart 0 (SLURM_RESTART_COUNT=0) slurm job 4242"),
        "{stdout}"
    );
    assert!(
        stdout.contains("restart 0 (SLURM_RESTART_COUNT=0): exit 0"),
        "{stdout}"
    );
    // "attempt" is the record's count (1 = first try), never Slurm's.
    assert!(!stdout.contains("attempt"), "{stdout}");
    assert!(!stdout.contains("child timeout reached"), "{stdout}");
    assert!(!stdout.contains("fake-not-a-secret"));
}

#[test]
fn failure_skips_post_commands_and_keeps_the_exit_code() {
    let job = Job::new(lifecycle("echo main >> {results_dir}/order; exit 3", &[]));
    let out = job.run(1);
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(
        job.read("order"),
        format!("pre1\npre2 secret=present job={ID}\nmain\n")
    );
    let c = job.completion();
    assert_eq!(c["exit_code"], 3);
    assert_eq!(c["failures"], json!([{"step": "main", "exit_code": 3}]));
    assert!(job.sidecar_gone(), "sidecar must be removed on failure");
}

#[test]
fn a_failed_pre_command_stops_the_job() {
    let job = Job::new(|l: &mut Value| {
        l["execution"] = json!({
            "pre_commands": ["exit 7"],
            "command": "echo main >> {results_dir}/order",
            "post_commands": [], "launcher": null, "supporting_files": []
        });
    });
    let out = job.run(1);
    assert_eq!(out.status.code(), Some(7));
    assert_eq!(job.read("order"), "");
    assert_eq!(
        job.completion()["failures"],
        json!([{"step": "pre_1", "exit_code": 7}])
    );
}

#[test]
fn a_failed_post_command_is_recorded() {
    let job = Job::new(lifecycle(
        "echo main >> {results_dir}/order",
        &[json!({"command": "exit 5", "scope": "all"})],
    ));
    let out = job.run(1);
    assert_eq!(out.status.code(), Some(5));
    assert_eq!(
        job.completion()["failures"],
        json!([{"step": "post_3", "exit_code": 5}])
    );
}

#[test]
fn the_child_timeout_stops_the_command_in_seconds() {
    let job = Job::new(|l: &mut Value| {
        lifecycle("sleep 120; echo late >> {results_dir}/order", &[])(l);
        l["resources"]["child_timeout"] = json!("00:00:02");
    });
    let start = Instant::now();
    let out = job.run(1);
    let took = start.elapsed();
    assert_eq!(out.status.code(), Some(124), "timeout(1) exit status");
    // Far below the command's 120 s, with room for a loaded machine.
    assert!(took < Duration::from_secs(60), "took {took:?}");
    // The deadline is counted in bash's whole SECONDS (the clock's
    // second ticks, not from the step's start), so a 2 s child timeout
    // stops the step after between 1 and 2 s.
    assert!(took >= Duration::from_secs(1), "took {took:?}");
    assert!(!job.read("order").contains("late"));
    assert!(!job.read("order").contains("post"));
    // One line says why (Slurm's own log would only show a STEP CANCELLED).
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(
            "tao: step main: child timeout reached after 2 s (the job's child timeout, \
             a share of its --time); stopped, returned error code 124\n\
             tao: step main: exit 124\n"
        ),
        "{stdout}"
    );
    let c = job.completion();
    assert_eq!(c["exit_code"], 124);
    assert_eq!(c["failures"], json!([{"step": "main", "exit_code": 124}]));
    assert!(job.sidecar_gone());
}

fn wait_for(path: &Path, bound: Duration) {
    let start = Instant::now();
    while !path.exists() {
        assert!(
            start.elapsed() < bound,
            "{} did not appear within {bound:?}",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn sigterm_runs_the_traps_at_once() {
    let job = Job::new(lifecycle(
        "touch {results_dir}/started; sleep 120; echo late >> {results_dir}/order",
        &[],
    ));
    let mut child = job
        .fake
        .bash(&job.script)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    wait_for(&job.results.join("started"), Duration::from_secs(60));
    let start = Instant::now();
    let kill = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let status = child.wait().unwrap();
    // Far below the command's 120 s, with room for a loaded machine.
    assert!(
        start.elapsed() < Duration::from_secs(60),
        "trap ran late: {:?}",
        start.elapsed()
    );
    assert_eq!(status.code(), Some(143));
    let c = job.completion();
    assert_eq!(c["exit_code"], 143);
    assert_eq!(
        c["failures"][0],
        json!({"step": "signal_TERM", "exit_code": 143})
    );
    assert!(job.sidecar_gone(), "sidecar must be removed on SIGTERM");
    assert!(!job.read("order").contains("post"));
}

#[test]
fn multi_node_exports_are_per_node() {
    let job = Job::new(|l: &mut Value| {
        l["resources"]["nodes"] = json!(2);
        l["resources"]["gpus_per_node"] = json!(2);
        l["execution"] = json!({
            "pre_commands": [],
            "command": "echo \"NODE_RANK=$NODE_RANK TAO_NODE_RANK=$TAO_NODE_RANK MASTER_ADDR=$MASTER_ADDR MASTER_PORT=$MASTER_PORT WORLD_SIZE=$WORLD_SIZE NUM_GPU_PER_NODE=$NUM_GPU_PER_NODE TAO_NODE_COUNT=$TAO_NODE_COUNT TAO_GPUS_PER_NODE=$TAO_GPUS_PER_NODE\" > {results_dir}/node.$SLURM_NODEID",
            "post_commands": [{"command": "echo leader >> {results_dir}/leader.$SLURM_PROCID", "scope": "leader"}],
            "launcher": null, "supporting_files": []
        });
    });
    let out = job.run(2);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for rank in 0..2 {
        assert_eq!(
            job.read(&format!("node.{rank}")),
            format!("NODE_RANK={rank} TAO_NODE_RANK={rank} MASTER_ADDR=n1 MASTER_PORT=29500 WORLD_SIZE=2 NUM_GPU_PER_NODE=2 TAO_NODE_COUNT=2 TAO_GPUS_PER_NODE=2\n")
        );
    }
    assert_eq!(job.read("leader.0"), "leader\n");
    assert!(
        !job.results.join("leader.1").exists(),
        "leader scope ran on task 1"
    );
}

#[test]
fn a_loopback_master_addr_is_a_hard_error() {
    let job = Job::new(|l: &mut Value| {
        l["resources"]["nodes"] = json!(2);
        l["command"] = json!("touch {results_dir}/ran");
    });
    let out = job
        .fake
        .bash(&job.script)
        .env("TAO_FAKE_HOSTS", "localhost n2")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("loopback"));
    assert!(!job.results.join("ran").exists());
    assert_eq!(
        job.completion()["failures"],
        json!([{"step": "rendezvous", "exit_code": 1}])
    );
    assert!(job.sidecar_gone());
}

#[test]
fn a_requeued_attempt_without_its_secrets_fails_at_once_for_a_retry() {
    let job = Job::new(|l: &mut Value| {
        l["secrets"] = json!(["FAKE_TOKEN"]);
        l["command"] = json!("touch {results_dir}/ran");
    });
    // The previous attempt removed the sidecar on its way out (SIGTERM
    // before a requeue); Slurm restarts the script with SLURM_RESTART_COUNT=1.
    std::fs::remove_file(job.job_dir.join("env/secrets.env")).unwrap();
    for (restart, code, says) in [
        (
            "1",
            75,
            "tao: error: requeued by Slurm (restart 1): the secrets sidecar",
        ),
        ("0", 78, "sidecar"),
    ] {
        let out = job
            .fake
            .bash(&job.script)
            .env("TAO_FAKE_NODES", "1")
            .env("SLURM_RESTART_COUNT", restart)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{stderr}");
        assert!(stderr.contains(says), "{stderr}");
        assert!(!job.results.join("ran").exists(), "the command ran");
        assert_eq!(
            job.completion()["failures"],
            json!([{"step": "secrets", "exit_code": code}])
        );
    }
    // A line without secrets needs no sidecar.
    let job = Job::new(|l: &mut Value| {
        l["secrets"] = json!([]);
        l["command"] = json!("touch {results_dir}/ran");
    });
    std::fs::remove_file(job.job_dir.join("env/secrets.env")).unwrap();
    let out = job.run(1);
    assert_eq!(out.status.code(), Some(0));
    assert!(job.results.join("ran").exists());
}

#[test]
fn a_changed_supporting_file_stops_the_job() {
    let job = Job::new(|l: &mut Value| {
        l["command"] = json!("touch {results_dir}/ran");
        l["execution"] = json!({"pre_commands": [], "command": "touch {results_dir}/ran",
            "post_commands": [], "launcher": null,
            "supporting_files": [{"source": "helper.py", "sha256": tao_core::sha256_hex(b"print(1)\n"), "size": 9}]});
    });
    let helpers = job.job_dir.join("inputs/action-helpers");
    std::fs::create_dir_all(&helpers).unwrap();
    std::fs::write(helpers.join("helper.py"), "print(2)\n").unwrap();
    let out = job.run(1);
    assert_eq!(out.status.code(), Some(66));
    assert!(!job.results.join("ran").exists());
    std::fs::write(helpers.join("helper.py"), "print(1)\n").unwrap();
    std::fs::write(job.job_dir.join("env/secrets.env"), "X=1\n").unwrap();
    let out = job.run(1);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(job.results.join("ran").exists());
}

const FAKE_ENROOT: &str = r#"#!/bin/bash
# fake enroot: `enroot import -o OUT URI`
[ "$1" = import ] && [ "$2" = -o ] || exit 2
printf '%s\n' "$TMPDIR" "$ENROOT_TEMP_PATH" "$SLURM_ENROOT_TEMP_PATH" "$4" > "$TAO_FAKE_DUMP/enroot.env"
[ -d "$ENROOT_TEMP_PATH" ] || exit 3
case "$TAO_FAKE_ENROOT" in
  good) printf 'hsqs\0\0\0\0squashfs' > "$3" ;;
  truncated) printf 'hs' > "$3" ;;
  fail) printf 'hsqs' > "$3"; exit 1 ;;
esac
"#;

fn convert(mode: &str) -> (FakeSlurm, PathBuf, std::process::Output) {
    convert_with(mode, false, None)
}

/// Run the convert script; `cached`: bytes already in the cache file.
fn convert_with(
    mode: &str,
    force: bool,
    cached: Option<&[u8]>,
) -> (FakeSlurm, PathBuf, std::process::Output) {
    let fake = FakeSlurm::running();
    fake.add_stub("enroot", FAKE_ENROOT);
    let base = fake.base();
    // A job name of its own per call: the Enroot temp dir is
    // /tmp/tao-enroot-<name>-<job id>, and tests run concurrently.
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let id = &format!("tao-convert-{:06x}{n:06x}", std::process::id() & 0xff_ffff);
    let req = ConvertRequest {
        id: id.into(),
        image: "nvcr.io/nvidia/tao/tao-toolkit:5.5.0-pyt".into(),
        base_dir: base.to_str().unwrap().into(),
        job_dir: base.join("jobs").join(id).to_str().unwrap().into(),
        account: None,
        force,
    };
    if let Some(bytes) = cached {
        let name = tao_script::sqsh_name(&req.image).unwrap();
        std::fs::create_dir_all(base.join("images")).unwrap();
        std::fs::write(base.join("images").join(name), bytes).unwrap();
    }
    let s = render_convert(&req, &profile("local")).unwrap();
    let script = fake.dir.path().join("convert.sbatch");
    std::fs::write(&script, s.text).unwrap();
    let out = fake
        .bash(&script)
        .env("TAO_FAKE_ENROOT", mode)
        .output()
        .unwrap();
    (fake, base, out)
}

fn images(base: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(base.join("images"))
        .map(|d| {
            d.map(|e| e.unwrap().file_name().into_string().unwrap())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

#[test]
fn conversion_renames_only_a_real_squashfs() {
    let (fake, base, out) = convert("good");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let name = tao_script::sqsh_name("nvcr.io/nvidia/tao/tao-toolkit:5.5.0-pyt").unwrap();
    assert_eq!(images(&base), vec![name]);
    let env = std::fs::read_to_string(fake.dir.path().join("dump/enroot.env")).unwrap();
    let env: Vec<&str> = env.lines().collect();
    assert_eq!(env[0], "/tmp");
    assert!(
        env[1].starts_with("/tmp/tao-enroot-tao-convert-") && env[1].ends_with("-4242"),
        "{}",
        env[1]
    );
    assert_eq!(env[2], env[1]);
    assert_eq!(env[3], "docker://nvcr.io#nvidia/tao/tao-toolkit:5.5.0-pyt");
    assert!(
        !Path::new(env[1]).exists(),
        "job-unique enroot temp dir removed"
    );

    for bad in ["truncated", "fail"] {
        let (_fake, base, out) = convert(bad);
        assert_ne!(out.status.code(), Some(0), "{bad}");
        assert_eq!(
            images(&base),
            Vec::<String>::new(),
            "{bad}: nothing left behind"
        );
    }
}

#[test]
fn a_valid_cache_ends_the_conversion_unless_it_is_forced() {
    let name = tao_script::sqsh_name("nvcr.io/nvidia/tao/tao-toolkit:5.5.0-pyt").unwrap();
    let old: &[u8] = b"hsqs old image";
    // Not forced: nothing to do, enroot never runs, the old image stays.
    let (fake, base, out) = convert_with("good", false, Some(old));
    assert_eq!(out.status.code(), Some(0));
    assert!(!fake.dir.path().join("dump/enroot.env").exists());
    assert_eq!(std::fs::read(base.join("images").join(&name)).unwrap(), old);
    // Forced: enroot imports again and the new image replaces the old one.
    let (fake, base, out) = convert_with("good", true, Some(old));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(fake.dir.path().join("dump/enroot.env").exists());
    assert_eq!(
        std::fs::read(base.join("images").join(&name)).unwrap(),
        b"hsqs\0\0\0\0squashfs"
    );
    assert_eq!(images(&base), vec![name.clone()]);
    // Forced but the import fails: the old image is kept, nothing partial.
    let (_fake, base, out) = convert_with("truncated", true, Some(old));
    assert_ne!(out.status.code(), Some(0));
    assert_eq!(std::fs::read(base.join("images").join(&name)).unwrap(), old);
    assert_eq!(images(&base), vec![name]);
}

fn probe(program: &str, timeout_s: u64) -> (std::process::Output, Duration) {
    let fake = FakeSlurm::running();
    let base = fake.base();
    let id = "tao-probe-20261129-ab12cd";
    let job_dir = base.join("jobs").join(id);
    std::fs::create_dir_all(job_dir.join("inputs/probe")).unwrap();
    std::fs::write(job_dir.join("inputs/probe/standin.sh"), program).unwrap();
    let req = ProbeRequest {
        id: id.into(),
        partition: "gpu".into(),
        account: None,
        nodes: 2,
        gpus_per_node: 0,
        cpus_per_task: 1,
        time: "00:10:00".into(),
        timeout_s,
        job_dir: job_dir.to_str().unwrap().into(),
        program: "inputs/probe/standin.sh".into(),
        args: vec![],
        launcher: ProbeLauncher::Command(vec!["bash".into()]),
        nccl_env: BTreeMap::from([("NCCL_P2P_DISABLE".to_string(), "1".to_string())]),
        image: None,
        mounts: vec![],
        exclude: vec![],
    };
    let s = render_probe(&req).unwrap();
    let script = fake.dir.path().join("probe.sbatch");
    std::fs::write(&script, s.text).unwrap();
    let start = Instant::now();
    let out = fake
        .bash(&script)
        .env("TAO_FAKE_NODES", "2")
        .output()
        .unwrap();
    (out, start.elapsed())
}

#[test]
fn probe_verdicts() {
    // A test stand-in for the all-reduce (no GPU here): passes when the
    // knob is set, hangs otherwise.
    let standin = "echo \"probe rank=$NODE_RANK knob=${NCCL_P2P_DISABLE:-unset}\"\n[ \"${NCCL_P2P_DISABLE:-}\" = 1 ] || sleep 60\n";
    let (out, _) = probe(standin, 120);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains("probe rank=0 knob=1") && stdout.contains("probe rank=1 knob=1"),
        "{stdout}"
    );
    assert!(stdout.contains(tao_script::probe_result::OK), "{stdout}");

    let (out, took) = probe("sleep 120\n", 2);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(124), "{stdout}");
    assert!(
        stdout.contains(tao_script::probe_result::TIMEOUT),
        "{stdout}"
    );
    // The 2 s timeout and its kill grace, far below the program's 120 s.
    assert!(took < Duration::from_secs(60), "{took:?}");

    let (out, _) = probe("exit 9\n", 120);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("TAO_PROBE_RESULT=failed exit=9"),
        "{stdout}"
    );
}

/// A new user's finding: a secret whose value holds newlines (a PEM key, a
/// service-account JSON, a CRLF value pasted from Windows), printed by the
/// job, reached main.out and main.err unmasked: the job's masker looked
/// for the whole value in each output line, which never holds a newline.
/// It now masks it line by line as tao-redact does (each line of 8 bytes
/// or more, a trailing CR dropped), so no such line is printed.
#[test]
fn a_multi_line_secret_is_masked_line_by_line_in_the_jobs_output() {
    let value = "-----BEGIN FAKE KEY-----\r\nMIIEfakeNotAKey0123456789abcd\r\nshort\r\nzzFakeTailLine9876543210\n";
    let job = Job::new(|l| {
        l["secrets"] = json!(["FAKE_TOKEN"]);
        l["command"] =
            json!("printf '%s\\n' \"$FAKE_TOKEN\"; printf 'err:%s\\n' \"$FAKE_TOKEN\" >&2");
    });
    std::fs::write(
        job.job_dir.join("env/secrets.env"),
        format!("FAKE_TOKEN={}\n", tao_core::shell::quote(value)),
    )
    .unwrap();
    let out = job.run(1);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    for part in [
        "-----BEGIN FAKE KEY-----",
        "MIIEfakeNotAKey0123456789abcd",
        "zzFakeTailLine9876543210",
    ] {
        assert!(!stdout.contains(part), "{part} in stdout: {stdout}");
        assert!(!stderr.contains(part), "{part} in stderr: {stderr}");
    }
    assert_eq!(
        stdout.matches("[REDACTED:env:FAKE_TOKEN]").count(),
        3,
        "{stdout}"
    );
    assert!(
        stdout.contains("short"),
        "lines under 8 bytes stay: {stdout}"
    );
}
