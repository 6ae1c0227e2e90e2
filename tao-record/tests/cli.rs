//! The `tao-record` binary as a user runs it: open, mark, show, history,
//! list, gc and retries, each with a cleared environment.

mod common;

use common::{lines, Env};
use predicates::prelude::*;
use serde::Deserialize;
use serde_json::{json, Value};

/// The job line `open` prints; unknown fields fail the test (format drift).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Opened {
    id: String,
    platform: String,
    action: Option<String>,
    network_arch: Option<String>,
    image: Option<String>,
    runtime: String,
    command: String,
    resources: Resources,
    storage: Storage,
    spec: Option<Spec>,
    mounts: Vec<String>,
    env: serde_json::Map<String, Value>,
    secrets: Vec<String>,
    execution: Option<Value>,
    retry_of: Option<String>,
    attempt: u32,
    state: String,
    observed_at: String,
    observed_by: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Resources {
    nodes: u32,
    gpus_per_node: u32,
    cpus_per_task: u32,
    time: String,
    child_timeout: String,
    partition: String,
    account: Option<String>,
    exclusive: bool,
    requeue: bool,
    exclude: Vec<String>,
    mem: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Storage {
    tier: String,
    base_dir: String,
    job_dir: String,
    results_dir: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Spec {
    name: String,
    text: String,
    sha256: String,
}

fn open_line(env: &Env, args: &[&str]) -> Opened {
    let out = env.cmd().arg("open").args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = lines(&out.stdout);
    assert_eq!(v.len(), 1);
    serde_json::from_value(v[0].clone()).unwrap()
}

#[test]
fn open_with_the_recipe_flags_prints_the_documented_line() {
    let env = Env::new();
    let spec = env.file("spec.yaml", "train:\n  epochs: 2\n");
    let o = open_line(
        &env,
        &[
            "--platform",
            "slurm",
            "--image",
            "nvcr.io#nvidia/tao/tao-toolkit:5.5.0-pyt",
            "--network-arch",
            "dino",
            "--action",
            "train",
            "--storage-tier",
            "lustre",
            "--results-root",
            "lustre:///lustre/tao/",
            "--spec",
            spec.to_str().unwrap(),
            "--runtime",
            "pyxis",
            "--gpus-per-node",
            "2",
        ],
    );
    assert!(
        o.id.starts_with("tao-") && o.id.len() == "tao-20261129-k3f9x2".len(),
        "{}",
        o.id
    );
    assert_eq!(o.command, "dino train -e {config_path}");
    assert_eq!(o.runtime, "pyxis");
    assert_eq!(o.storage.base_dir, "/lustre/tao");
    assert_eq!(o.storage.job_dir, format!("/lustre/tao/jobs/{}", o.id));
    assert_eq!(
        o.storage.results_dir,
        format!("/lustre/tao/results/{}", o.id)
    );
    let r = &o.resources;
    // TAO's default of 16 CPUs, capped at the local nodes' 8 (cpus_per_node).
    assert_eq!((r.nodes, r.gpus_per_node, r.cpus_per_task), (1, 2, 8));
    assert_eq!(
        (r.time.as_str(), r.child_timeout.as_str()),
        ("04:00:00", "03:48:00")
    );
    assert_eq!(r.partition, "gpu");
    assert!(r.requeue && !r.exclusive);
    let s = o.spec.unwrap();
    assert_eq!(s.name, "spec.yaml");
    assert_eq!(s.text, "train:\n  epochs: 2\n");
    assert_eq!(o.storage.tier, "lustre");
    assert_eq!(s.sha256, tao_core::sha256_hex(b"train:\n  epochs: 2\n"));
    assert_eq!(o.state, "PENDING");
    assert_eq!(o.attempt, 1);
    // The record on disk is the line plus its history.
    let rec = env.record(&o.id);
    assert_eq!(rec["history"][0]["state"], "PENDING");
    assert_eq!(rec["history"][0]["source"], "tao-record");
}

/// `open` into a pipe nobody reads (the reader gone: EPIPE): exit 74, and the
/// one error line says the record was created and gives its id, so the job
/// is not lost; the record is there.
#[test]
fn open_into_a_broken_pipe_names_the_created_record() {
    let env = Env::new();
    for extra in [&[][..], &["--print-id"][..]] {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let mut c = std::process::Command::new(assert_cmd::cargo::cargo_bin("tao-record"));
        c.env_clear();
        for (k, v) in &env.vars {
            c.env(k, v);
        }
        let out = c
            .args(["open", "--runtime", "none", "--command", "true"])
            .args(extra)
            .stdout(writer)
            .output()
            .unwrap();
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(74), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        let id = err
            .split_whitespace()
            .find(|w| w.starts_with("tao-2"))
            .unwrap_or_else(|| panic!("no record id in {err:?}"));
        assert!(
            err.starts_with(&format!("tao-record: error: record {id} was created in ")),
            "{err}"
        );
        assert!(err.contains(&format!("tao-record list --id {id}")), "{err}");
        assert!(err.contains("Broken pipe"), "{err}");
        assert!(env.record_path(id).exists(), "{err}");
    }
}

#[test]
fn print_id_prints_only_the_id() {
    let env = Env::new();
    let out = env
        .cmd()
        .args([
            "open",
            "--runtime",
            "none",
            "--command",
            "true",
            "--print-id",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let id = String::from_utf8(out.stdout).unwrap();
    assert!(id.ends_with('\n') && id.trim().starts_with("tao-") && !id.contains('{'));
    assert!(env.record_path(id.trim()).exists());
}

#[test]
fn defaults_and_precedence_flag_env_profile() {
    let mut env = Env::new();
    // Profile: local -> runtime none, partition gpu.
    let o = open_line(&env, &["--command", "x"]);
    assert_eq!(
        (o.runtime.as_str(), o.resources.partition.as_str()),
        ("none", "gpu")
    );
    assert!(o.image.is_none());
    env.set("SLURM_PARTITION", "cpu_long")
        .set("SLURM_ACCOUNT", "proj1")
        .set("SLURM_USE_REQUEUE", "false")
        .set(
            "SLURM_CONTAINER_MOUNTS",
            "/lustre/data:/data:ro,/lustre/cache:/cache",
        )
        .set("TAO_RUNTIME", "pyxis");
    let o = open_line(&env, &["--command", "x", "--image", "/lustre/img/tao.sqsh"]);
    assert_eq!(o.runtime, "pyxis");
    assert_eq!(o.resources.partition, "cpu_long");
    assert_eq!(o.resources.account.as_deref(), Some("proj1"));
    assert!(!o.resources.requeue);
    assert_eq!(
        o.mounts,
        vec!["/lustre/data:/data:ro", "/lustre/cache:/cache"]
    );
    // Flags win.
    let o = open_line(
        &env,
        &[
            "--command",
            "x",
            "--runtime",
            "none",
            "--partition",
            "gpu",
            "--account",
            "p2",
            "--mount",
            "/a:/b",
            "--time",
            "01:00:00",
            "--exclude",
            "n1",
            "--exclude",
            "n2",
            "--mem",
            "2G",
            "--exclusive",
            "--nodes",
            "2",
        ],
    );
    assert_eq!(o.runtime, "none");
    assert_eq!(o.resources.partition, "gpu");
    assert_eq!(o.resources.account.as_deref(), Some("p2"));
    assert_eq!(o.mounts, vec!["/a:/b"]);
    assert_eq!(o.resources.child_timeout, "00:57:00");
    assert_eq!(o.resources.exclude, vec!["n1", "n2"]);
    assert_eq!(o.resources.mem.as_deref(), Some("2G"));
    assert!(o.resources.exclusive);
    assert_eq!(o.resources.nodes, 2);
    env.set("SLURM_USE_REQUEUE", "true");
    let o = open_line(
        &env,
        &["--command", "x", "--runtime", "none", "--no-requeue"],
    );
    assert!(!o.resources.requeue);
}

#[test]
fn env_secrets_and_execution_are_stored() {
    let env = Env::new();
    let exec = env.file(
        "exec.json",
        r#"{"pre_commands":["nvidia-smi"],"command":"python main.py","launcher":"torchrun","post_commands":[{"command":"ls","scope":"leader"}]}"#,
    );
    let o = open_line(
        &env,
        &[
            "--runtime",
            "none",
            "--env",
            "OMP_NUM_THREADS=8",
            "--secret",
            "HF_TOKEN",
            "--secret",
            "NGC_KEY",
            "--execution",
            exec.to_str().unwrap(),
        ],
    );
    assert_eq!(o.command, "python main.py");
    assert_eq!(o.env["OMP_NUM_THREADS"], "8");
    assert_eq!(o.secrets, vec!["HF_TOKEN", "NGC_KEY"]);
    assert_eq!(o.execution.unwrap()["launcher"], "torchrun");
}

#[test]
fn secret_values_are_refused_and_never_echoed() {
    let env = Env::new();
    let fake = "hf_FAKEabcdefghijklmnopqrstuvwxyz012345";
    for args in [
        vec!["--secret".to_string(), format!("HF_TOKEN={fake}")],
        vec!["--env".to_string(), format!("HF_TOKEN={fake}")],
    ] {
        let out = env
            .cmd()
            .args(["open", "--runtime", "none", "--command", "x"])
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.contains("--secret HF_TOKEN"), "{err}");
        assert!(!err.contains(fake) && out.stdout.is_empty());
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    assert!(
        !env.state().join("records").exists()
            || std::fs::read_dir(env.state().join("records"))
                .unwrap()
                .next()
                .is_none()
    );
}

#[test]
fn a_literal_secret_in_the_command_or_env_is_refused_and_nothing_is_recorded() {
    let env = Env::new();
    // A fake of the real format (hf_ and 34 letters and digits).
    let fake = "hf_FAKEtaoRedactTestTokenQwErTyUiOpAs";
    for args in [
        vec![
            "--command".to_string(),
            format!("huggingface-cli login --token {fake}"),
        ],
        vec![
            "--command".to_string(),
            "true".to_string(),
            "--env".to_string(),
            format!("WANDB_NOTE=token {fake}"),
        ],
    ] {
        let out = env
            .cmd()
            .args(["open", "--runtime", "none"])
            .args(&args)
            .output()
            .unwrap();
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(3), "{err}");
        assert!(
            err.contains("looks like a secret") && err.contains("--secret NAME"),
            "{err}"
        );
        // The advice is true: env values are never expanded, the job reads
        // the variable at run time (not "use $NAME" inside --env).
        assert!(
            err.contains("never expanded")
                && err.contains("environment variable NAME")
                && !err.contains("use $NAME instead"),
            "{err}"
        );
        assert!(!err.contains(fake) && out.stdout.is_empty(), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    assert!(
        !env.state().join("records").exists()
            || std::fs::read_dir(env.state().join("records"))
                .unwrap()
                .next()
                .is_none(),
        "nothing recorded"
    );
}

/// Issue 16: a spec file holding a literal token was accepted by `open`,
/// stored in the record and passed lint; the same token in `--command` was
/// refused. Spec files and supporting files are scanned like commands.
#[test]
fn a_literal_secret_in_the_spec_or_a_supporting_file_is_refused_and_nothing_is_recorded() {
    let env = Env::new();
    let fake = "hf_FAKEtaoRedactTestTokenQwErTyUiOpAs";
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("spec.yaml");
    std::fs::write(&spec, format!("train:\n  epochs: 1\n  hub_token: {fake}\n")).unwrap();
    let helper = dir.path().join("helper.py");
    std::fs::write(&helper, format!("import os\nTOKEN = \"{fake}\"\n")).unwrap();
    let clean = dir.path().join("clean.yaml");
    std::fs::write(&clean, "train:\n  epochs: 1\n").unwrap();
    // The value of a secret the request names, in a spec: refused too.
    let pw_spec = dir.path().join("pw.yaml");
    std::fs::write(&pw_spec, "db: plain words are my db password\n").unwrap();
    for (args, vars, what) in [
        (
            vec!["--spec", spec.to_str().unwrap()],
            vec![],
            "--spec file \"spec.yaml\" (line 3)",
        ),
        (
            vec![
                "--spec",
                clean.to_str().unwrap(),
                "--supporting-file",
                helper.to_str().unwrap(),
            ],
            vec![],
            "supporting file",
        ),
        (
            vec![
                "--spec",
                pw_spec.to_str().unwrap(),
                "--secret",
                "MY_DB_PASSWORD",
            ],
            vec![("MY_DB_PASSWORD", "plain words are my db password")],
            "env:MY_DB_PASSWORD",
        ),
    ] {
        let mut c = env.cmd();
        for (k, v) in &vars {
            c.env(k, v);
        }
        let out = c
            .args([
                "open",
                "--runtime",
                "none",
                "--command",
                "train -e {config_path}",
            ])
            .args(&args)
            .output()
            .unwrap();
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(3), "{args:?}: {err}");
        assert!(
            err.contains(what) && err.contains("looks like a secret"),
            "{err}"
        );
        assert!(!err.contains(fake) && !err.contains("plain words"), "{err}");
        assert!(out.stdout.is_empty());
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    assert!(
        !env.state().join("records").exists()
            || std::fs::read_dir(env.state().join("records"))
                .unwrap()
                .next()
                .is_none(),
        "nothing recorded"
    );
}

#[test]
fn dry_run_prints_the_line_and_writes_no_record() {
    let env = Env::new();
    let out = env
        .cmd()
        .args([
            "open",
            "--runtime",
            "none",
            "--command",
            "echo hi",
            "--dry-run",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = lines(&out.stdout);
    assert_eq!(v.len(), 1);
    let id = v[0]["id"].as_str().unwrap();
    assert!(v[0]["storage"]["job_dir"]
        .as_str()
        .unwrap()
        .ends_with(&format!("/jobs/{id}")));
    assert!(
        !env.state()
            .join("records")
            .join(format!("{id}.json"))
            .exists(),
        "no record written"
    );
}

#[test]
fn bad_values_name_the_flag_and_the_fix_with_the_right_status() {
    let mut env = Env::new();
    let cases: Vec<(Vec<&str>, i32, &str)> = vec![
        (
            vec!["--results-root", "file:///home/me/out"],
            2,
            "stage data on the cluster",
        ),
        (
            vec!["--results-root", "out/dir"],
            2,
            "stage data on the cluster",
        ),
        (vec!["--time", "4h"], 2, "--time"),
        (vec!["--time", "05:00:00"], 2, "above the limit of partition \"gpu\""),
        (vec!["--time", "1:75:00"], 2, "minutes must be below 60"),
        (vec!["--secret", "tao_secrets"], 2, "--secret: \"tao_secrets\" is reserved"),
        (vec!["--secret", "BASH_ENV"], 2, "--secret: \"BASH_ENV\" is reserved"),
        (vec!["--env", "MASTER_PORT=29501"], 2, "--env: \"MASTER_PORT\" is reserved"),
        (
            vec!["--env", "MY_VAR=1", "--secret", "MY_VAR"],
            2,
            "MY_VAR is both an env variable and a secret",
        ),
        (vec!["--child-timeout", "05:00:00"], 2, "--child-timeout"),
        (
            vec!["--runtime", "pyxis", "--image", "/x/image.tar"],
            2,
            ".sqsh",
        ),
        // Runtime none runs no container: an image would be ignored.
        (
            vec!["--image", "/lustre/img/tao.sqsh"],
            2,
            "--image: \"/lustre/img/tao.sqsh\" would be ignored: runtime none (from site profile \"local\") runs no container; drop --image, or use --runtime pyxis",
        ),
        (
            vec!["--runtime", "none", "--image", "/lustre/img/tao.sqsh"],
            2,
            "(from --runtime)",
        ),
        // Partitions and their limits from the site profile, at open time.
        (
            vec!["--partition", "nope"],
            2,
            "--partition: \"nope\" is not a partition of site profile \"local\" (gpu, cpu_long)",
        ),
        (
            vec!["--partition", "cpu_long", "--time", "3-00:00:00"],
            2,
            "above the limit of partition \"cpu_long\" (2-00:00:00",
        ),
        (vec!["--time", "1-2-3"], 2, "is not a Slurm time"),
        (vec!["--time", "0"], 2, "--time: \"0\": UNLIMITED is above the limit"),
        (vec!["--mount", "data:/data"], 2, "--mount"),
        (vec!["--env", "NOEQUALS"], 2, "K=V"),
        (vec!["--exclude", "n1;reboot"], 2, "--exclude"),
        (vec!["--mem", "lots"], 2, "--mem"),
        (vec!["--gpus-per-node", "5"], 2, "--gpus-per-node: 5 GPUs"),
        // The local profile's nodes have 8 CPUs (cpus_per_node): refused at
        // open, not at sbatch.
        (
            vec!["--cpus-per-task", "9"],
            2,
            "--cpus-per-task: 9 CPUs per task is more than a node of partition \"gpu\" has (8, site profile \"local\")",
        ),
        (vec!["--partition", "gpu;x"], 2, "--partition"),
        (
            vec!["--network-arch", "dino", "--action", "train"],
            2,
            "--command",
        ),
        (vec!["--platform", "k8s"], 2, "--platform"),
        (
            vec!["--action", "trian"],
            2,
            "--action: \"trian\" is not a TAO action: did you mean \"train\"? (known: train, evaluate, inference,",
        ),
    ];
    for (args, code, needle) in cases {
        let mut c = env.cmd();
        c.arg("open");
        if !args.contains(&"--network-arch") {
            c.args(["--command", "x"]);
        }
        let out = c.args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(
            err.starts_with("tao-record: error: ") && err.lines().count() == 1,
            "{err}"
        );
        assert!(out.stdout.is_empty());
    }
    env.cmd()
        .args(["open", "--runtime", "pyxis", "--command", "x"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--image"));
    env.cmd()
        .args([
            "open",
            "--runtime",
            "none",
            "--command",
            "run {config_path}",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--spec"));
    // The runtime and partition from the environment are named as such.
    env.set("TAO_RUNTIME", "none")
        .set("SLURM_PARTITION", "gpu,nope");
    let out = env
        .cmd()
        .args(["open", "--command", "x", "--image", "/lustre/img/tao.sqsh"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("(from TAO_RUNTIME)"));
    env.cmd()
        .args(["open", "--command", "x"])
        .assert()
        .code(78)
        .stderr(predicate::str::contains(
            "SLURM_PARTITION: \"nope\" is not a partition",
        ));
    env.unset("TAO_RUNTIME").unset("SLURM_PARTITION");
    env.set("SLURM_USE_REQUEUE", "perhaps");
    env.cmd()
        .args(["open", "--runtime", "none", "--command", "x"])
        .assert()
        .code(78)
        .stderr(predicate::str::contains("SLURM_USE_REQUEUE"));
    env.unset("SLURM_USE_REQUEUE")
        .set("SLURM_BASE_RESULTS_DIR", "file:///tmp/x");
    env.cmd()
        .args(["open", "--runtime", "none", "--command", "x"])
        .assert()
        .code(78)
        .stderr(predicate::str::contains("SLURM_BASE_RESULTS_DIR"));
    env.unset("SLURM_BASE_RESULTS_DIR");
    env.cmd()
        .args(["open", "--runtime", "none", "--command", "x"])
        .assert()
        .code(78)
        .stderr(predicate::str::contains(
            "set SLURM_BASE_RESULTS_DIR or pass --results-root",
        ));
    let bad = env.file("bad.json", "[1,2]");
    env.set("SLURM_BASE_RESULTS_DIR", "/shared/tao");
    env.cmd()
        .args([
            "open",
            "--runtime",
            "none",
            "--command",
            "x",
            "--execution",
            bad.to_str().unwrap(),
        ])
        .assert()
        .code(65)
        .stderr(predicate::str::contains("--execution"));
}

#[test]
fn mark_walks_the_state_machine_and_keeps_history() {
    let env = Env::new();
    let id = env.open(&[]);
    let out = env
        .cmd()
        .args([
            "mark",
            &id,
            "--state",
            "RUNNING",
            "--backend-ref",
            "4242",
            "--source",
            "agent",
            "--message",
            "RUNNING",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let echo = &lines(&out.stdout)[0];
    assert_eq!(echo["state"], "RUNNING");
    assert_eq!(echo["slurm"]["job_id"], "4242");
    assert!(echo.get("history").is_none());
    env.mark(&id, "PENDING", "REQUEUED"); // requeue is legal
    env.mark(&id, "RUNNING", "RUNNING");
    env.mark(&id, "RUNNING", "RUNNING"); // duplicate: one entry
    env.mark(&id, "COMPLETE", "COMPLETED");
    let out = env
        .cmd()
        .args(["mark", &id, "--state", "RUNNING"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let echo = &lines(&out.stdout)[0];
    let msg = echo["error"]["message"].as_str().unwrap();
    assert!(msg.contains("COMPLETE") && msg.contains("RUNNING"), "{msg}");
    // COMPLETE cannot be retried: the advice is a new record, not --retry-of.
    assert!(
        !msg.contains("--retry-of") && msg.contains("tao-record open"),
        "{msg}"
    );
    assert_eq!(
        echo["state"], "COMPLETE",
        "the record's state, not the refused one"
    );
    assert_eq!(echo["message"], "COMPLETED");
    let rec = env.record(&id);
    assert_eq!(rec["state"], "COMPLETE");
    let states: Vec<&str> = rec["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["state"].as_str().unwrap())
        .collect();
    assert_eq!(
        states,
        ["PENDING", "RUNNING", "PENDING", "RUNNING", "COMPLETE"]
    );
    assert_eq!(rec["history"][1]["source"], "agent");
    // history: JSON lines when piped, text with --text.
    let out = env.cmd().args(["history", &id]).output().unwrap();
    assert_eq!(lines(&out.stdout).len(), 5);
    env.cmd()
        .args(["history", &id, "--text"])
        .assert()
        .success()
        .stdout(predicate::str::contains("COMPLETE").and(predicate::str::contains("agent")));
}

#[test]
fn mark_from_stdin_handles_every_kind_of_line() {
    let env = Env::new();
    let a = env.open(&[]);
    let b = env.open(&[]);
    // Observed now, on this clock (a time in the clock's future would not
    // make older lines stale: machine::is_stale).
    let seen = tao_core::time::now_rfc3339();
    let input = format!(
        "{}\n{}\nnot json\n{}\n{}\n{}\n{}\n",
        json!({"id": a, "state": "RUNNING", "message": "RUNNING", "observed_at": seen, "observed_by": "tao-poll", "slurm": {"job_id": "7", "native_state": "RUNNING"}, "extra": {"kept": true}}),
        json!({"id": "tao-20990101-zzzzzz", "state": "RUNNING"}),
        // stale: older than the last observation of a
        json!({"id": a, "state": "ERROR", "message": "FAILED", "observed_at": "2000-01-01T00:00:05Z", "observed_by": "tao-poll"}),
        // no state: merge only; an error from an earlier tool is stored
        json!({"id": b, "error": {"tool": "tao-submit", "code": "unavailable", "message": "no login host answered"}}),
        json!({"id": b, "state": "RUNNING", "observed_by": "tao-poll"}),
        json!({"id": a, "state": "BOGUS"}),
    );
    let out = env.cmd().arg("mark").write_stdin(input).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(65),
        "malformed line wins over failed lines"
    );
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("line 3"), "{err}");
    let echoed = lines(&out.stdout);
    assert_eq!(echoed.len(), 6, "every JSON line is echoed");
    assert!(echoed[5]["error"]["message"]
        .as_str()
        .unwrap()
        .contains("BOGUS"));
    assert_eq!(echoed[0]["extra"]["kept"], true);
    assert_eq!(echoed[1]["error"]["tool"], "tao-record");
    assert_eq!(
        echoed[2]["state"], "RUNNING",
        "the refused line shows the record's actual state"
    );
    assert_eq!(echoed[2]["message"], "RUNNING");
    assert!(echoed[2]["error"]["message"]
        .as_str()
        .unwrap()
        .starts_with("stale observation"));
    assert_eq!(echoed[3]["error"]["tool"], "tao-submit");
    assert!(
        echoed[4].get("error").is_none(),
        "a later move clears the stored error"
    );
    let rec_a = env.record(&a);
    assert_eq!(rec_a["state"], "RUNNING");
    assert_eq!(rec_a["history"].as_array().unwrap().len(), 2);
    assert_eq!(rec_a["slurm"]["native_state"], "RUNNING");
    // A mark without a time after one from a clock ahead of ours is not stale.
    let ahead = json!({"id": a, "state": "RUNNING", "message": "RUNNING (ahead)", "observed_at": "2099-01-01T00:00:10Z", "observed_by": "tao-poll"});
    let out = env
        .cmd()
        .arg("mark")
        .write_stdin(format!("{ahead}\n"))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    env.mark(&a, "PENDING", "REQUEUED");
    let rec_a = env.record(&a);
    assert_eq!(rec_a["state"], "PENDING");
    assert_eq!(rec_a["history"][3]["at"], "2099-01-01T00:00:10Z");
    let rec_b = env.record(&b);
    assert!(rec_b.get("error").is_none());
    assert_eq!(rec_b["state"], "RUNNING");
}

/// The launch host's clock was set back: the record's last observation
/// lies in this clock's future, and `mark` refused every new observation
/// as stale until the clock caught up (a finished job stayed RUNNING). The
/// polls made now are applied in order; a final state stays final.
#[test]
fn a_clock_set_back_does_not_make_new_observations_stale() {
    let env = Env::new();
    let id = env.open(&[]);
    // Observed while the clock ran a year ahead.
    let ahead = json!({"id": id, "state": "RUNNING", "message": "RUNNING", "observed_at": "2126-01-01T00:00:00Z", "observed_by": "tao-poll", "slurm": {"job_id": "7"}});
    let out = env
        .cmd()
        .arg("mark")
        .write_stdin(format!("{ahead}\n"))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The clock is back: the job's end, observed now.
    let now = tao_core::time::now_rfc3339();
    let end = json!({"id": id, "state": "COMPLETE", "message": "COMPLETED", "observed_at": now, "observed_by": "tao-poll"});
    let out = env
        .cmd()
        .arg("mark")
        .write_stdin(format!("{end}\n"))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rec = env.record(&id);
    assert_eq!(rec["state"], "COMPLETE", "{rec}");
    assert_eq!(rec["observed_at"], now.as_str());
    // Back on this clock: an older observation is stale again.
    let late = json!({"id": id, "state": "RUNNING", "observed_at": "2000-01-01T00:00:00Z", "observed_by": "tao-poll"});
    let out = env
        .cmd()
        .arg("mark")
        .write_stdin(format!("{late}\n"))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(env.record(&id)["state"], "COMPLETE");
}

/// The one-line summary of `list` in `tao-record --help` says the order that
/// is true on a pipe (by id, tao-record(1)) and the option for oldest first.
#[test]
fn help_states_the_list_order_of_a_pipe() {
    let env = Env::new();
    let out = env.cmd().arg("--help").output().unwrap();
    let help = String::from_utf8(out.stdout).unwrap();
    // Help wraps lines: compare with the whitespace collapsed.
    let flat = help.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("list Print records: a table on a terminal (oldest first), job lines on a pipe (by id; --sort created: oldest first)"),
        "{help}"
    );
}

/// `--state` takes Slurm's spelling CANCELLED for CANCELED (the tools print
/// Slurm's native state, so users type it), for mark and for list.
#[test]
fn state_flags_take_slurms_cancelled() {
    let env = Env::new();
    let id = env.open(&[]);
    let out = env
        .cmd()
        .args(["mark", &id, "--state", "CANCELLED", "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(lines(&out.stdout)[0]["state"], "CANCELED");
    let out = env
        .cmd()
        .args(["list", "--state", "cancelled", "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = lines(&out.stdout);
    assert_eq!(v.len(), 1);
    assert_eq!(v[0]["id"], id.as_str());
    // Slurm's COMPLETED is no alias (COMPLETE needs the job's verdict).
    let out = env
        .cmd()
        .args(["list", "--state", "COMPLETED"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn show_and_list_filters() {
    let env = Env::new();
    let a = env.open(&[]);
    let b = env.open(&[]);
    let c = env.open(&[]);
    env.mark(&a, "RUNNING", "RUNNING");
    env.mark(&b, "ERROR", "FAILED");
    env.mark(&c, "COMPLETE", "COMPLETED");
    let ids = |args: &[&str]| -> Vec<String> {
        let out = env.cmd().arg("list").args(args).output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut v: Vec<String> = lines(&out.stdout)
            .iter()
            .map(|l| {
                assert!(l.get("history").is_none());
                l["id"].as_str().unwrap().to_string()
            })
            .collect();
        v.sort();
        v
    };
    let mut all = vec![a.clone(), b.clone(), c.clone()];
    all.sort();
    assert_eq!(ids(&[]), all);
    assert_eq!(ids(&["--live"]), vec![a.clone()]);
    let mut bc = vec![b.clone(), c.clone()];
    bc.sort();
    assert_eq!(ids(&["--state", "ERROR", "--state", "complete"]), bc);
    assert_eq!(ids(&["--id", &b]), vec![b.clone()]);
    assert_eq!(ids(&["--since", "1h"]), all);
    assert!(ids(&["--since", "2099-01-01T00:00:00Z"]).is_empty());
    env.cmd()
        .args(["list", "--id", &a, "--id", "tao-20990101-zzzzzz"])
        .assert()
        .code(65)
        .stdout(predicate::str::contains(&a))
        .stderr(predicate::str::contains("no record"));
    env.cmd().args(["list", "--state", "DONE"]).assert().code(2);
    env.cmd()
        .args(["list", "--table", "--state", "ERROR"])
        .assert()
        .success()
        .stdout(
            predicate::str::starts_with("ID ").and(predicate::str::contains(format!("{b}  ERROR"))),
        );
    env.cmd().args(["list", "--since", "soon"]).assert().code(2);
    // show: JSON with history when piped; text when forced.
    let out = env.cmd().args(["show", &b]).output().unwrap();
    let v = lines(&out.stdout);
    assert_eq!(v[0]["history"].as_array().unwrap().len(), 2);
    env.cmd()
        .args(["show", &b, "--text"])
        .assert()
        .success()
        .stdout(
            predicate::str::contains("storage.results_dir")
                .and(predicate::str::contains("history:")),
        );
    env.cmd()
        .args(["show", "tao-20990101-zzzzzz"])
        .assert()
        .code(65);
}

#[test]
fn retry_links_both_ways_and_rebases_storage() {
    let env = Env::new();
    let spec = env.file("s.yaml", "a: 1\n");
    let parent = env.open(&[
        "--spec",
        spec.to_str().unwrap(),
        "--exclude",
        "n9",
        "--env",
        "A=1",
        "--secret",
        "HF_TOKEN",
    ]);
    // Not final yet: refused.
    env.cmd()
        .args(["open", "--retry-of", &parent])
        .assert()
        .code(65)
        .stderr(predicate::str::contains("only ERROR or CANCELED"));
    let line = json!({"id": parent, "state": "ERROR", "message": "NODE_FAIL",
        "classification": {"class": "infra", "node": "n1", "retry": true}});
    env.cmd()
        .arg("mark")
        .write_stdin(format!("{line}\n"))
        .assert()
        .success();
    // Request flags cannot ride along.
    env.cmd()
        .args(["open", "--retry-of", &parent, "--time", "01:00:00"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--time"));
    let out = env
        .cmd()
        .args(["open", "--retry-of", &parent])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let child = &lines(&out.stdout)[0];
    let cid = child["id"].as_str().unwrap();
    let p = env.record(&parent);
    assert_ne!(cid, parent);
    assert_eq!(child["retry_of"], parent.as_str());
    assert_eq!(child["attempt"], 2);
    assert_eq!(p["retried_by"], cid);
    assert_eq!(child["resources"]["exclude"], json!(["n9", "n1"]));
    assert_eq!(
        child["storage"]["results_dir"],
        format!("/shared/tao/results/{cid}")
    );
    assert_eq!(
        child["storage"]["job_dir"],
        format!("/shared/tao/jobs/{cid}")
    );
    for k in ["command", "spec", "env", "secrets", "runtime", "mounts"] {
        assert_eq!(child[k], p[k], "{k} carried");
    }
    assert!(child.get("classification").is_none() && child.get("slurm").is_none());
    assert_eq!(child["state"], "PENDING");
    // A second retry of the same parent is refused (overlapping cron runs).
    env.cmd()
        .args(["open", "--retry-of", &parent])
        .assert()
        .code(65)
        .stderr(predicate::str::contains("already retried"));
    // The chain lists in attempt order from either end.
    env.mark(cid, "CANCELED", "CANCELLED by 0");
    let out = env
        .cmd()
        .args(["open", "--retry-of", cid, "--print-id"])
        .output()
        .unwrap();
    let gid = String::from_utf8(out.stdout).unwrap().trim().to_string();
    for from in [parent.as_str(), cid, gid.as_str()] {
        let out = env
            .cmd()
            .args(["list", "--retry-of", from])
            .output()
            .unwrap();
        let chain: Vec<Value> = lines(&out.stdout).iter().map(|l| l["id"].clone()).collect();
        assert_eq!(
            chain,
            vec![json!(parent), json!(cid), json!(gid)],
            "from {from}"
        );
    }
    assert_eq!(env.record(&gid)["attempt"], 3);
}

#[test]
fn gc_archives_only_old_terminal_records() {
    let env = Env::new();
    let done = env.open(&[]);
    let live = env.open(&[]);
    env.mark(&done, "COMPLETE", "COMPLETED");
    env.mark(&live, "RUNNING", "RUNNING");
    env.cmd()
        .args(["gc", "--older-than", "1d"])
        .assert()
        .success()
        .stdout("");
    let out = env
        .cmd()
        .args(["gc", "--older-than", "0s"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(String::from_utf8(out.stdout).unwrap().trim(), done);
    assert!(env
        .state()
        .join("archive")
        .join(format!("{done}.json"))
        .exists());
    assert!(!env.record_path(&done).exists());
    assert!(env.record_path(&live).exists());
    // Archived records are still shown, but cannot change.
    env.cmd().args(["show", &done, "--json"]).assert().success();
    env.cmd()
        .args(["mark", &done, "--state", "COMPLETE"])
        .assert()
        .code(65);
    env.cmd()
        .args(["gc", "--older-than", "later"])
        .assert()
        .code(2);
}

#[test]
fn help_version_and_usage_errors() {
    let env = Env::new();
    env.cmd()
        .arg("--version")
        .assert()
        .success()
        .stdout(predicate::str::starts_with("tao-record "));
    env.cmd()
        .arg("--help")
        .assert()
        .success()
        .stdout(predicate::str::contains("Exit status"));
    env.cmd()
        .args(["open", "--help"])
        .assert()
        .success()
        .stdout(predicate::str::contains("--retry-of"));
    let out = env.cmd().args(["list", "--bogus"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.starts_with("tao-record: error: ") && err.lines().count() == 1,
        "{err}"
    );
    // Each usage error is one line that names the argument and the command's help.
    let cases: [(&[&str], &[&str]); 6] = [
        (
            &["history"],
            &["not provided: <ID>", "see tao-record history --help"],
        ),
        (&["show"], &["<ID>", "see tao-record show --help"]),
        (
            &["gc"],
            &["--older-than <DURATION>", "see tao-record gc --help"],
        ),
        (
            &["list", "--bogus"],
            &["'--bogus'", "see tao-record list --help"],
        ),
        (
            &["open", "--nodes", "many"],
            &["'many'", "--nodes <N>", "see tao-record open --help"],
        ),
        (&["frobnicate"], &["'frobnicate'", "see tao-record --help"]),
    ];
    for (args, wants) in cases {
        let out = env.cmd().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(
            err.starts_with("tao-record: error: ") && err.lines().count() == 1,
            "{args:?}: {err}"
        );
        assert!(!err.contains(":;"), "{args:?}: {err}");
        for w in wants {
            assert!(err.contains(w), "{args:?}: {err:?} lacks {w:?}");
        }
    }
    env.cmd()
        .args(["history", "--help"])
        .assert()
        .success()
        .stdout(predicate::str::contains("Usage:"));
}

#[test]
fn mark_prints_text_lines_on_request_and_json_on_a_pipe() {
    let env = Env::new();
    let id = env.open(&[]);
    let args = [
        "mark",
        id.as_str(),
        "--state",
        "RUNNING",
        "--backend-ref",
        "4242",
        "--message",
        "RUNNING",
    ];
    // Forced text: one readable line, no JSON (no script text).
    let out = env.cmd().args(args).arg("--text").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text, format!("{id}  RUNNING   slurm 4242  RUNNING\n"));
    // Piped (the default off a terminal) and --json: job lines.
    for extra in [&[][..], &["--json"][..]] {
        let out = env.cmd().args(args).args(extra).output().unwrap();
        assert!(out.status.success());
        let l = lines(&out.stdout);
        assert_eq!(l.len(), 1);
        assert_eq!(l[0]["slurm"]["job_id"], "4242");
    }
    env.cmd()
        .args(["mark", &id, "--json", "--text"])
        .assert()
        .code(2);
    // A refused line in text: the record's state and the error message.
    env.mark(&id, "COMPLETE", "COMPLETED");
    let out = env
        .cmd()
        .args(["mark", &id, "--state", "RUNNING", "--text"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(
        text.starts_with(&format!(
            "{id}  COMPLETE  slurm 4242  COMPLETED  error: illegal transition"
        )),
        "{text}"
    );
    // Lines from stdin: one text line each, the unknown id with its error.
    let input = format!(
        "{}\n{}\n",
        json!({"id": id, "message": "seen"}),
        json!({"id": "tao-20990101-zzzzzz", "state": "RUNNING"})
    );
    let out = env
        .cmd()
        .args(["mark", "--text"])
        .write_stdin(input)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    let got: Vec<&str> = text.lines().collect();
    assert_eq!(got.len(), 2, "{text}");
    assert!(got[0].starts_with(&format!("{id}  COMPLETE")), "{text}");
    assert!(
        got[1].starts_with("tao-20990101-zzzzzz  RUNNING   slurm -  -  error: "),
        "{text}"
    );
}

#[test]
fn store_location_follows_xdg_when_tao_state_dir_is_unset() {
    let mut env = Env::new();
    let xdg = env.dir.path().join("xdg");
    env.unset("TAO_STATE_DIR")
        .set("XDG_STATE_HOME", xdg.to_str().unwrap());
    let id = env.open(&[]);
    assert!(xdg
        .join("tao-slurm/records")
        .join(format!("{id}.json"))
        .exists());
    let home = env.dir.path().to_str().unwrap().to_string();
    env.unset("XDG_STATE_HOME").set("HOME", &home);
    let id = env.open(&[]);
    assert!(env
        .dir
        .path()
        .join(".local/state/tao-slurm/records")
        .join(format!("{id}.json"))
        .exists());
    env.unset("HOME");
    env.cmd()
        .args(["list"])
        .assert()
        .code(78)
        .stderr(predicate::str::contains("TAO_STATE_DIR"));
}

#[test]
fn a_closed_pipe_is_quiet_for_readers_and_fails_writers() {
    let env = Env::new();
    let id = env.open(&[]);
    let bin = assert_cmd::cargo::cargo_bin("tao-record");
    let run = |args: &[&str], stdin: &str| {
        let mut c = std::process::Command::new(&bin);
        c.env_clear();
        for (k, v) in &env.vars {
            c.env(k, v);
        }
        let mut child = c
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // Close the reading end before the child writes anything.
        drop(child.stdout.take());
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(stdin.as_bytes())
            .unwrap();
        child.wait_with_output().unwrap()
    };
    let out = run(&["list"], "");
    tao_testkit::tool::assert_exit(&out, 0);
    assert!(out.stderr.is_empty());
    let line = json!({"id": id, "state": "RUNNING"});
    let out = run(&["mark"], &format!("{line}\n"));
    assert_eq!(
        out.status.code(),
        Some(74),
        "the change was made, its report lost"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("writing standard output"));
    assert_eq!(env.record(&id)["state"], "RUNNING");
}

#[test]
fn a_derived_gpu_shape_is_recorded_and_said_on_stderr() {
    let env = Env::new();
    let out = env
        .cmd()
        .args([
            "open",
            "--command",
            "x",
            "--gpus-per-node",
            "8",
            "--cpus-per-task",
            "1",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("tao-record: warning: --gpus-per-node: 1 node(s) x 8 GPUs runs as 2 node(s) x 4 GPUs (8 GPUs, exclusive nodes)"),
        "{err}"
    );
    let l = &lines(&out.stdout)[0];
    let r = &l["resources"];
    assert_eq!(
        (r["nodes"].as_u64(), r["gpus_per_node"].as_u64()),
        (Some(2), Some(4))
    );
    assert_eq!(r["exclusive"], true);
    // The shape asked for as it runs: no notice.
    let out = env
        .cmd()
        .args([
            "open",
            "--command",
            "x",
            "--nodes",
            "2",
            "--gpus-per-node",
            "4",
            "--cpus-per-task",
            "1",
        ])
        .output()
        .unwrap();
    assert!(out.status.success() && out.stderr.is_empty());
    // A refused open says only its error, not the shape of a job it did not record.
    let out = env
        .cmd()
        .args([
            "open",
            "--command",
            "x",
            "--gpus-per-node",
            "8",
            "--secret",
            "TAO_JOB_ID",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.starts_with("tao-record: error: --secret") && err.lines().count() == 1,
        "{err}"
    );
}

#[test]
fn a_directory_or_an_unknown_id_exits_with_the_documented_status_and_the_fix() {
    let env = Env::new();
    let dir = env.dir.path().join("specs");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("spec.yaml"), "a: 1\n").unwrap();
    let d = dir.to_str().unwrap();
    for flag in ["--spec", "--supporting-file", "--execution"] {
        let out = env
            .cmd()
            .args(["open", "--command", "x {config_path}", flag, d])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{flag}: {err}");
        assert!(
            err.starts_with(&format!("tao-record: error: {flag}: {d:?} is a directory; give a file (such as {d}/spec.yaml)"))
                && err.lines().count() == 1,
            "{flag}: {err}"
        );
    }
    assert!(
        !env.state().join("records").exists()
            || std::fs::read_dir(env.state().join("records"))
                .unwrap()
                .next()
                .is_none()
    );
    // An unknown record id: 65 (tao-record(1), EXIT STATUS), naming the fix.
    for args in [
        &["show", "tao-20261201-zzzzzz"][..],
        &["history", "tao-20261201-zzzzzz"],
        &["mark", "tao-20261201-zzzzzz", "--state", "RUNNING"],
        &["list", "--id", "tao-20261201-zzzzzz"],
    ] {
        let out = env.cmd().args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(65), "{args:?}: {err}");
        assert!(
            err.contains("check the id (`tao-record list`)"),
            "{args:?}: {err}"
        );
    }
    // A literal secret in --env: 3, as documented for open.
    let out = env
        .cmd()
        .args([
            "open",
            "--command",
            "x",
            "--env",
            "FOO=hf_abcdefghijklmnopqrstuvwxyzABCDEFGH",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let man = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../man/tao-record.1"))
        .unwrap();
    let exit = man.split(".SH \"EXIT STATUS\"").nth(1).unwrap();
    for (code, words) in [
        ("2", "a directory"),
        ("3", "an \\-\\-env value"),
        ("65", "an unknown record id"),
    ] {
        let item = exit.split(&format!("\\fB{code}\\fR\n")).nth(1).unwrap();
        let item = item.lines().next().unwrap();
        assert!(item.contains(words), "{code}: {item}");
    }
}

#[test]
fn the_default_cpu_count_fits_the_profiles_nodes() {
    let env = Env::new();
    let l = open_line(&env, &["--command", "x"]);
    assert_eq!(l.resources.cpus_per_task, 8, "local nodes have 8 CPUs");
    let l = open_line(&env, &["--command", "x", "--cpus-per-task", "2"]);
    assert_eq!(l.resources.cpus_per_task, 2);
}

#[test]
fn a_stored_error_can_be_cleared_to_submit_again() {
    let env = Env::new();
    let id = env.open(&[]);
    let failed = json!({"id": id, "state": "PENDING", "observed_by": "tao-submit",
        "error": {"tool": "tao-submit", "code": "unavailable", "message": "no login host answered"}});
    env.cmd()
        .arg("mark")
        .write_stdin(format!("{failed}\n"))
        .assert()
        .success();
    let out = env.cmd().args(["list", "--id", &id]).output().unwrap();
    assert_eq!(lines(&out.stdout)[0]["error"]["tool"], "tao-submit");
    let out = env
        .cmd()
        .args(["mark", &id, "--clear-error"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(lines(&out.stdout)[0].get("error").is_none());
    assert!(env.record(&id).get("error").is_none());
    assert_eq!(env.record(&id)["history"].as_array().unwrap().len(), 1);
}

#[test]
fn clear_error_says_what_it_cleared_in_one_line_and_the_table_says_not_submitted() {
    let env = Env::new();
    let id = env.open(&[]);
    let table = |env: &Env| {
        let out = env
            .cmd()
            .args(["list", "--table", "--id", &id])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .nth(1)
            .unwrap()
            .to_string()
    };
    assert!(table(&env).ends_with("not submitted"), "{}", table(&env));
    for (code, next) in [
        (
            "tempfail",
            format!(
                "not submitted yet: submit it again with `tao-record list --id {id} | tao-render"
            ),
        ),
        ("data", "the request itself was refused".to_string()),
    ] {
        let failed = json!({"id": id, "state": "PENDING", "observed_by": "tao-submit",
            "error": {"tool": "tao-submit", "code": code, "message": "it failed"}});
        let out = env
            .cmd()
            .arg("mark")
            .write_stdin(format!("{failed}\n"))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        // A refused request is not advised to be cleared and submitted again.
        assert_eq!(err.contains("--clear-error"), code == "tempfail", "{err}");
        assert!(
            table(&env).ends_with("submit failed: it failed"),
            "{}",
            table(&env)
        );
        let out = env
            .cmd()
            .args(["mark", &id, "--clear-error", "--text"])
            .output()
            .unwrap();
        assert!(out.status.success());
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(text.lines().count(), 1, "{text}");
        assert!(
            text.starts_with(&format!(
                "{id}: cleared the error (it failed); state PENDING, "
            )) && text.contains(&next),
            "{text}"
        );
        assert!(env.record(&id).get("error").is_none());
    }
}

#[test]
fn a_program_fault_does_not_exclude_its_node() {
    let env = Env::new();
    let id = env.open(&[]);
    let line = json!({"id": id, "state": "ERROR", "message": "FAILED exit 3:0",
        "classification": {"class": "program", "node": "n1", "retry": false}});
    env.cmd()
        .arg("mark")
        .write_stdin(format!("{line}\n"))
        .assert()
        .success();
    let out = env
        .cmd()
        .args(["open", "--retry-of", &id, "--exclude", "n7"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(lines(&out.stdout)[0]["resources"]["exclude"], json!(["n7"]));
}

#[test]
fn supporting_files_are_recorded_with_checksum_and_size() {
    let env = Env::new();
    let script = env.file("train.py", "print('hi')\n");
    let exec = env.file("exec.json", r#"{"pre_commands":["true"]}"#);
    let o = open_line(
        &env,
        &[
            "--runtime",
            "none",
            "--command",
            "python3 \"$TAO_ACTION_HELPERS/train.py\"",
            "--execution",
            exec.to_str().unwrap(),
            "--supporting-file",
            script.to_str().unwrap(),
            "--gpus",
            "2",
        ],
    );
    assert_eq!(o.resources.gpus_per_node, 2, "--gpus is an alias");
    let exec = o.execution.unwrap();
    assert_eq!(
        exec["pre_commands"],
        json!(["true"]),
        "merged into --execution"
    );
    let files = exec["supporting_files"].as_array().unwrap();
    assert_eq!(files.len(), 1);
    assert_eq!(files[0]["source"], "train.py");
    assert_eq!(files[0]["size"], 12);
    assert_eq!(
        files[0]["sha256"],
        tao_core::sha256_hex(b"print('hi')\n").as_str()
    );
    assert!(files[0]["local_path"].as_str().unwrap().starts_with('/'));

    // Two files of one name would overwrite each other on the cluster.
    let other = env.dir.path().join("sub");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("train.py"), "x").unwrap();
    env.cmd()
        .args(["open", "--runtime", "none", "--command", "true"])
        .arg("--supporting-file")
        .arg(&script)
        .arg("--supporting-file")
        .arg(other.join("train.py"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "two supporting files are named \"train.py\"",
        ));
    env.cmd()
        .args([
            "open",
            "--runtime",
            "none",
            "--command",
            "true",
            "--supporting-file",
            "/nonexistent/x.py",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--supporting-file"));
}

#[test]
fn a_misspelt_placeholder_is_warned_about() {
    let env = Env::new();
    env.cmd()
        .args([
            "open",
            "--runtime",
            "none",
            "--command",
            "train -r {result_dir}",
        ])
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "tao-record: warning: --command has {result_dir}, which is not bound",
        ));
    env.cmd()
        .args([
            "open",
            "--runtime",
            "none",
            "--command",
            "train -r {results_dir} ${HOME}",
        ])
        .assert()
        .success()
        .stderr(predicate::str::is_empty());
}

/// `tao-record retry` (issue 14): the retry loop as a pipeline stage. It
/// opens the next attempt of an infra failure (blamed node excluded), never
/// of a program fault or a running job, never twice, and stops at the budget.
#[test]
fn retry_stage_opens_due_retries_once_within_the_budget() {
    let env = Env::new();
    let spec = env.file("s.yaml", "a: 1\n");
    let open = || env.open(&["--spec", spec.to_str().unwrap()]);
    let (infra, program, running) = (open(), open(), open());
    let mark = |id: &str, class: &str, retry: bool| {
        let line = json!({"id": id, "state": "ERROR", "message": "FAILED",
            "classification": {"class": class, "node": "n1", "retry": retry}});
        let out = env
            .cmd()
            .arg("mark")
            .write_stdin(format!("{line}\n"))
            .output()
            .unwrap();
        assert!(out.status.success());
        String::from_utf8(out.stdout).unwrap()
    };
    let mut input = mark(&infra, "infra", true);
    input.push_str(&mark(&program, "program", false));
    input.push_str(&format!("{}\n", json!({"id": running, "state": "RUNNING"})));
    let run = |input: &str, extra: &[&str]| {
        env.cmd()
            .arg("retry")
            .args(extra)
            .write_stdin(input.to_string())
            .output()
            .unwrap()
    };
    let out = run(&input, &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let opened = lines(&out.stdout);
    assert_eq!(opened.len(), 1, "only the infra failure: {opened:?}");
    let child = &opened[0];
    assert_eq!(child["retry_of"], infra.as_str());
    assert_eq!(child["attempt"], 2);
    assert_eq!(child["state"], "PENDING");
    assert_eq!(child["resources"]["exclude"], json!(["n1"]));
    assert!(env.record(&program).get("retried_by").is_none());
    // The same lines again (the next cron run): nothing opened twice.
    let out = run(&input, &[]);
    assert!(out.status.success());
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    // The child fails on infrastructure too; a budget of 2 attempts is spent.
    let cid = child["id"].as_str().unwrap().to_string();
    let again = mark(&cid, "infra", true);
    let out = run(&again, &["--max-attempts", "2"]);
    assert!(out.status.success());
    assert!(out.stdout.is_empty());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("retry budget spent (attempt 2 of 2)"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The spent budget is recorded, so `list --live` lets the record go.
    let rec = env.record(&cid);
    assert_eq!(rec["classification"]["retry"], false, "{rec}");
    let live = env.cmd().args(["list", "--live"]).output().unwrap();
    assert!(
        !String::from_utf8_lossy(&live.stdout).contains(&cid),
        "a spent budget stayed in --live"
    );
    // Bad budget: usage error; malformed line: 65, nothing opened.
    assert_eq!(run("", &["--max-attempts", "0"]).status.code(), Some(2));
    let out = run("{not json\n", &[]);
    assert_eq!(out.status.code(), Some(65));
    assert!(out.stdout.is_empty());
}

/// `tao-record retry -v`: every line it drops gets one `ID: skipped: why`
/// line on stderr (a program fault, an ERROR not classified yet, a running
/// job, one already retried); without -v it stays quiet (exit 0 both ways).
#[test]
fn retry_verbose_says_why_each_line_was_skipped() {
    let env = Env::new();
    let open = || env.open(&[]);
    let (program, unclassified, running) = (open(), open(), open());
    let mark = |line: Value| {
        let out = env
            .cmd()
            .arg("mark")
            .write_stdin(format!("{line}\n"))
            .output()
            .unwrap();
        assert!(out.status.success());
        String::from_utf8(out.stdout).unwrap()
    };
    let mut input = mark(json!({"id": program, "state": "ERROR", "message": "FAILED",
        "classification": {"class": "program", "reason": "Traceback in main.err", "retry": false}}));
    input.push_str(&mark(
        json!({"id": unclassified, "state": "ERROR", "message": "FAILED"}),
    ));
    input.push_str(&format!("{}\n", json!({"id": running, "state": "RUNNING"})));
    input.push_str(&format!("{}\n", json!({"id": running, "state": "RUNNING"})));
    let quiet = env
        .cmd()
        .arg("retry")
        .write_stdin(input.clone())
        .output()
        .unwrap();
    assert!(quiet.status.success() && quiet.stdout.is_empty());
    assert!(
        quiet.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&quiet.stderr)
    );
    for v in ["-v", "-vv"] {
        let out = env
            .cmd()
            .args(["retry", v])
            .write_stdin(input.clone())
            .output()
            .unwrap();
        assert!(out.status.success() && out.stdout.is_empty());
        let err = String::from_utf8(out.stderr).unwrap();
        let skipped: Vec<&str> = err.lines().filter(|l| l.contains(": skipped: ")).collect();
        assert_eq!(skipped.len(), 4, "{err}");
        assert!(
            skipped[0].starts_with(&format!(
                "tao-record: {program}: skipped: classified program: Traceback in main.err"
            )) && skipped[0].contains("fix the spec"),
            "{err}"
        );
        assert!(
            skipped[1].starts_with(&format!(
                "tao-record: {unclassified}: skipped: ERROR but not classified yet"
            )) && skipped[1].contains("tao-classify"),
            "{err}"
        );
        // The store is the truth: the record was never marked RUNNING.
        assert!(skipped[2].contains("state PENDING, not ERROR"), "{err}");
        assert!(
            skipped[3].contains("already read earlier in the input"),
            "{err}"
        );
    }
}

/// `--action`: a TAO action missing from tao-record's list opens, with a
/// one-line note on stderr; a near miss of a known action is refused with
/// the action meant, and nothing is written.
#[test]
fn an_unlisted_action_opens_with_a_note_and_a_typo_is_refused() {
    let env = Env::new();
    let out = env
        .cmd()
        .args(["open", "--command", "x", "--action", "finetune"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert_eq!(lines(&out.stdout)[0]["action"], "finetune");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("tao-record: warning: --action \"finetune\" is not one of the TAO actions tao-record knows"),
        "{err}"
    );
    // Known: no note.
    let out = env
        .cmd()
        .args(["open", "--command", "x", "--action", "evaluate"])
        .output()
        .unwrap();
    assert!(out.status.success() && out.stderr.is_empty());
    let before = std::fs::read_dir(env.state().join("records"))
        .unwrap()
        .count();
    let out = env
        .cmd()
        .args(["open", "--command", "x", "--action", "evalute"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("did you mean \"evaluate\"?"), "{err}");
    assert!(out.stdout.is_empty());
    let after = std::fs::read_dir(env.state().join("records"))
        .unwrap()
        .count();
    assert_eq!(before, after, "a refused open wrote a record");
}

/// A crash between `tao-record mark` and `tao-record retry` (and one
/// inside `open --retry-of`, after the parent names its retry and before
/// the retry is created) leaves a failure marked retryable without a
/// retry: `list --live` still holds it, so the next cron run's `retry`
/// opens it, exactly once however often it runs.
#[test]
fn retry_never_opened_comes_back_in_live_and_is_opened_once() {
    let env = Env::new();
    let spec = env.file("s.yaml", "a: 1\n");
    let (a, b) = (
        env.open(&["--spec", spec.to_str().unwrap()]),
        env.open(&["--spec", spec.to_str().unwrap()]),
    );
    for id in [&a, &b] {
        let line = json!({"id": id, "state": "ERROR", "message": "FAILED",
            "classification": {"class": "infra", "node": "n1", "retry": true}});
        let out = env
            .cmd()
            .arg("mark")
            .write_stdin(format!("{line}\n"))
            .output()
            .unwrap();
        assert!(out.status.success());
    }
    // `b` crashed inside open --retry-of: it names a retry never created.
    let path = env.record_path(&b);
    let mut rec: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    rec["retried_by"] = json!("tao-20261201-never0");
    std::fs::write(&path, rec.to_string()).unwrap();
    let live_ids = || {
        let out = env.cmd().args(["list", "--live"]).output().unwrap();
        assert!(out.status.success());
        lines(&out.stdout)
            .iter()
            .map(|l| l["id"].as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    let live = live_ids();
    assert!(live.contains(&a) && live.contains(&b), "{live:?}");
    // The next cron runs: `list --live | ... | retry`, twice.
    let cron = || {
        let listed = env.cmd().args(["list", "--live"]).output().unwrap();
        let out = env
            .cmd()
            .arg("retry")
            .write_stdin(listed.stdout)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        lines(&out.stdout)
    };
    let opened = cron();
    let mut parents: Vec<&str> = opened
        .iter()
        .map(|l| l["retry_of"].as_str().unwrap())
        .collect();
    parents.sort();
    let mut want = [a.as_str(), b.as_str()];
    want.sort();
    assert_eq!(parents, want, "{opened:?}");
    for id in [&a, &b] {
        let by = env.record(id)["retried_by"].as_str().unwrap().to_string();
        assert!(opened.iter().any(|l| l["id"] == by.as_str()), "{id}: {by}");
        assert!(!live_ids().contains(id), "{id} stayed in --live");
    }
    // The second run opens nothing: both retries are PENDING in --live,
    // and no parent is retried twice.
    let again = cron();
    assert!(again.is_empty(), "opened twice: {again:?}");
}

/// A corrupt record makes `list` exit non-zero (65) with its path named,
/// on stderr even with `-q`, after printing every other record: a cron
/// pipeline (`list --live | tao-poll | ...`) must not silently stop
/// polling that job (issue 16). Also in `--table` form and with `--live`.
#[test]
fn list_names_a_corrupt_record_and_fails() {
    let env = Env::new();
    let a = env.open(&[]);
    let b = env.open(&[]);
    let c = env.open(&[]);
    let path = env.record_path(&b);
    std::fs::write(&path, "{\"id\": \"trunc").unwrap();
    for args in [
        &["list"][..],
        &["list", "--live"][..],
        &["-q", "list"][..],
        &["list", "--table"][..],
    ] {
        let out = env.cmd().args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(65), "{args:?}: {err}");
        assert!(
            stdout.contains(&a) && stdout.contains(&c),
            "{args:?}: {stdout}"
        );
        assert!(!stdout.contains(&b), "{args:?}: {stdout}");
        let last = err.lines().last().unwrap_or("");
        assert!(
            last.starts_with("tao-record: error: 1 record file(s) could not be used")
                && last.contains(&path.display().to_string()),
            "{args:?}: {err}"
        );
    }
}

/// `list` on a pipe prints job lines in id order (each record read once,
/// the cron fast path); `--sort created` gives the order they were opened
/// in (microsecond creation times). With eight records a random id order
/// equals the opening order once in 40,320 runs.
#[test]
fn list_on_a_pipe_is_in_id_order_and_sort_created_in_opening_order() {
    let env = Env::new();
    let opened: Vec<String> = (0..8).map(|_| env.open(&[])).collect();
    let listed = |args: &[&str]| -> Vec<String> {
        let out = env.cmd().arg("list").args(args).output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        lines(&out.stdout)
            .iter()
            .map(|l| l["id"].as_str().unwrap().to_string())
            .collect()
    };
    let mut by_id = opened.clone();
    by_id.sort();
    assert_eq!(listed(&[]), by_id);
    assert_eq!(listed(&["--sort", "id"]), by_id);
    assert_eq!(listed(&["--sort", "created"]), opened);
}

/// The cron pipeline's incremental progress reads (`tao-record list --live
/// | tao-poll | tao-record mark`): the `progress` object tao-poll writes,
/// with the status.json stamp it was read at (`file_size`,
/// `file_mtime_s`), is stored and listed back whole, so the next poll
/// sends the stamp and skips an unchanged file.
#[test]
fn progress_with_its_file_stamp_round_trips_through_the_store() {
    let env = Env::new();
    let a = env.open(&[]);
    let progress = json!({"epoch": 20, "max_epoch": 40, "percent": 50.0, "eta_s": 1210.0, "time_per_epoch_s": 60.5, "kpi": {"loss": 0.05, "accuracy": 0.952}, "history": {"loss": [0.1, 0.05]}, "updated_at": "2026-12-01T10:01:00Z", "file_size": 6186, "file_mtime_s": 1_796_126_460});
    let input = format!(
        "{}\n",
        json!({"id": a, "state": "RUNNING", "message": "RUNNING", "observed_at": "2099-01-01T00:00:10Z", "observed_by": "tao-poll", "slurm": {"job_id": "7", "native_state": "RUNNING"}, "progress": progress})
    );
    env.cmd().arg("mark").write_stdin(input).assert().success();
    let out = env.cmd().args(["list", "--live"]).output().unwrap();
    assert!(out.status.success());
    let listed = lines(&out.stdout);
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0]["progress"], progress);
    assert_eq!(
        tao_core::progress::FileStamp::of_progress(listed[0].get("progress")),
        Some(tao_core::progress::FileStamp {
            size: 6186,
            mtime_s: 1_796_126_460
        })
    );
}

/// A new user's finding: with a state directory that cannot be written (a
/// read-only mount, a full disk; here a lock path that is a directory, which
/// fails the same way for root), `mark` after a real submit printed "1
/// line(s) failed" and exited 1, the status of a refused observation, so a
/// cron line could not tell that the store itself is broken and the Slurm
/// job id was not recorded. It exits 74 (tao-record(1): the record store),
/// and the line still goes on with its `error`.
#[test]
fn mark_on_a_store_it_cannot_write_exits_74() {
    let env = Env::new();
    let a = env.open(&[]);
    let b = env.open(&[]);
    let lock = env.record_path(&a).with_extension("lock");
    std::fs::create_dir(&lock).unwrap();
    let input = format!(
        "{}\n{}\n",
        json!({"id": a, "state": "PENDING", "observed_by": "tao-submit", "slurm": {"job_id": "7"}}),
        json!({"id": b, "state": "BOGUS"}),
    );
    let out = env.cmd().arg("mark").write_stdin(input).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(74), "{err}");
    assert!(err.contains(&lock.display().to_string()), "{err}");
    assert!(
        err.lines()
            .last()
            .unwrap()
            .contains("2 line(s) failed (see above), 1 of them on the record store"),
        "{err}"
    );
    let echoed = lines(&out.stdout);
    assert_eq!(echoed.len(), 2);
    assert_eq!(echoed[0]["error"]["code"], "io");
}

/// A new user's finding: a record edited by hand (jq, a copy of a record
/// file to make a new one) with no `id`, another record's `id`, or a
/// `state` that is no state was listed as it was: a line without an id
/// (every later tool refuses it), two lines with one id, or a state in
/// the table that no tool knows, all with exit 0. Each is now named as a
/// record file that cannot be used (exit 65, the fix on stderr), and the
/// other records are still listed.
#[test]
fn a_record_edited_by_hand_into_an_unusable_one_is_named() {
    let env = Env::new();
    let good = env.open(&[]);
    for (what, edit) in [
        ("no id", json!({"drop": "id"})),
        ("another id", json!({"id": good})),
        ("no state word", json!({"state": "WEIRD"})),
    ] {
        let id = env.open(&[]);
        let path = env.record_path(&id);
        let mut rec: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        if edit.get("drop").is_some() {
            rec.as_object_mut().unwrap().remove("id");
        } else {
            for (k, v) in edit.as_object().unwrap() {
                rec[k] = v.clone();
            }
        }
        // As `jq` writes it: pretty-printed, and as a compact line.
        for text in [serde_json::to_string_pretty(&rec).unwrap(), rec.to_string()] {
            std::fs::write(&path, &text).unwrap();
            let out = env.cmd().arg("list").output().unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(65), "{what}: {err}");
            assert!(err.contains(&format!("{id}.json")), "{what}: {err}");
            assert!(err.contains("by hand"), "{what}: {err}");
            let listed = lines(&out.stdout);
            assert_eq!(listed.len(), 1, "{what}: only the good record");
            assert_eq!(listed[0]["id"], good.as_str());
            let out = env.cmd().args(["show", &id]).output().unwrap();
            assert_eq!(out.status.code(), Some(65), "{what}");
        }
        std::fs::remove_file(&path).unwrap();
    }
}

/// A new user's finding: `--exclude` says "sbatch --exclude", but refused
/// the forms sbatch takes (`n1,n2`, `n[1-2]`) as "not a valid node name".
/// It now takes a Slurm host list, expanded into the record's node names
/// (tao_core::hostlist, the rule tao-submit uses), and still refuses what
/// is no node name, naming the form to use.
#[test]
fn exclude_takes_a_slurm_host_list() {
    let env = Env::new();
    let out = env
        .cmd()
        .args([
            "open",
            "--dry-run",
            "--command",
            "true",
            "--exclude",
            "gpu[01-03,7],n1",
            "--exclude",
            "n1",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = lines(&out.stdout);
    assert_eq!(
        v[0]["resources"]["exclude"],
        json!(["gpu01", "gpu02", "gpu03", "gpu7", "n1"])
    );
    for bad in ["n[1-2", "n 1", "n[1-99999999]"] {
        let out = env
            .cmd()
            .args(["open", "--dry-run", "--command", "true", "--exclude", bad])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{bad}: {err}");
        assert!(err.starts_with("tao-record: error: --exclude: "), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}

/// A new user's finding: `--spec /dev/null` (or a file of blanks, or an
/// `<(envsubst ...)` of an empty template) was recorded and submitted; the
/// job then started and TAO stopped on no settings. An empty spec is
/// refused (exit 65, a spec file that cannot be used), nothing recorded.
#[test]
fn an_empty_spec_is_refused_and_nothing_is_recorded() {
    let env = Env::new();
    for text in ["", " \n\r\n\t\n"] {
        let spec = env.file("empty.yaml", text);
        let out = env
            .cmd()
            .args(["open", "--command", "x -e {config_path}", "--spec"])
            .arg(&spec)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(65), "{err:?}");
        assert!(err.contains("is empty"), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    let out = env.cmd().arg("list").output().unwrap();
    assert!(out.stdout.is_empty(), "nothing recorded");
}

/// A spec with a YAML syntax error was recorded, staged and submitted, and
/// the job failed after its queue wait. It is refused at open (exit 65, one
/// line naming the file, the line and column, and the fix), nothing
/// recorded; a spec that is YAML (anchors, several documents) still opens,
/// its text kept byte for byte.
#[test]
fn a_spec_that_is_not_yaml_is_refused_at_open_with_its_line_and_column() {
    let env = Env::new();
    let spec = env.file(
        "dino_train.yaml",
        "train:\n  num_epochs: 1\n  lr: [0.1, 0.2\n",
    );
    let out = env
        .cmd()
        .args(["open", "--command", "x -e {config_path}", "--spec"])
        .arg(&spec)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(65), "{err:?}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("tao-record: error: --spec ")
            && err.contains("dino_train.yaml\" is not YAML: line 4, column 1: ")
            && err.contains("fix the spec at that place"),
        "{err}"
    );
    let out = env.cmd().arg("list").output().unwrap();
    assert!(out.stdout.is_empty(), "nothing recorded");
    let text = "base: &b\n  lr: 0.1\ntrain:\n  <<: *b\n  note: \"a\tb\"\n---\nextra: 1\n";
    let ok = env.file("ok.yaml", text);
    let out = env
        .cmd()
        .args(["open", "--command", "x -e {config_path}", "--spec"])
        .arg(&ok)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(line["spec"]["text"], text);
}

/// A new user's finding: `--env A=1 --env A=2` kept the last value without
/// a word. Two values for one name are refused (exit 2, one line naming
/// the name and the fix, no value echoed); the same K=V twice is one.
#[test]
fn an_env_name_given_twice_with_different_values_is_refused() {
    let env = Env::new();
    let out = env
        .cmd()
        .args([
            "open",
            "--command",
            "x",
            "--env",
            "MODE=fast_7q",
            "--env",
            "MODE=slow_9z",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err:?}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("--env: MODE is given twice with different values; give --env MODE=... once"),
        "{err}"
    );
    assert!(
        !err.contains("fast_7q") && !err.contains("slow_9z"),
        "values echoed: {err}"
    );
    let out = env.cmd().arg("list").output().unwrap();
    assert!(out.stdout.is_empty(), "nothing recorded");
    let out = env
        .cmd()
        .args([
            "open",
            "--dry-run",
            "--command",
            "x",
            "--env",
            "MODE=fast",
            "--env",
            "MODE=fast",
        ])
        .output()
        .unwrap();
    tao_testkit::tool::assert_exit(&out, 0);
    assert!(String::from_utf8_lossy(&out.stdout).contains(r#""env":{"MODE":"fast"}"#));
}

/// A new user's finding: `--spec <(envsubst < spec.yaml)` staged the spec
/// as `specs/63` (the /dev/fd name, no `.yaml`), which TAO and Hydra do
/// not take for a YAML file. A spec read from a pipe or a /dev/fd path is
/// staged as `spec.yaml` (`Layout::DEFAULT_SPEC`); a file keeps its name.
#[test]
fn a_spec_from_a_pipe_is_staged_as_spec_yaml() {
    let env = Env::new();
    let spec = env.file("dino_train.yaml", "train:\n  num_epochs: 1\n");
    let bin = assert_cmd::cargo::cargo_bin("tao-record");
    let cases = [
        ("<(cat \"$1\")", "spec.yaml"),
        ("/dev/stdin < \"$1\"", "spec.yaml"),
        ("\"$1\"", "dino_train.yaml"),
    ];
    for (arg, staged) in cases {
        let script = format!(
            "\"$0\" open --dry-run --runtime none --command 'x -e {{config_path}}' --spec {arg}"
        );
        let mut cmd = std::process::Command::new("bash");
        cmd.env_clear().args(["-c", &script]).arg(&bin).arg(&spec);
        for (k, v) in &env.vars {
            cmd.env(k, v);
        }
        let out = cmd.output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{arg}: {err}");
        let line: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(line["spec"]["name"], staged, "{arg}");
        assert_eq!(line["spec"]["text"], "train:\n  num_epochs: 1\n", "{arg}");
    }
}

#[test]
fn a_configuration_error_is_recorded_on_no_record() {
    let env = Env::new();
    let id = env.open(&[]);
    let failed = json!({"id": id, "state": "PENDING", "observed_by": "tao-submit",
        "error": {"tool": "tao-submit", "code": "config", "message": "line 1: secret WANDB_API_KEY (named by the record) is not set in this environment: export WANDB_API_KEY=..."}});
    let out = env
        .cmd()
        .arg("mark")
        .write_stdin(format!("{failed}\n"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    // tao-submit said it, with the fix: nothing more here, nothing stored.
    assert_eq!(err, "");
    assert!(
        env.record(&id).get("error").is_none(),
        "{}",
        env.record(&id)
    );
}

#[test]
fn the_table_shows_each_jobs_class_and_retry_decision() {
    let env = Env::new();
    let failed = env.open(&[]);
    let running = env.open(&[]);
    for (id, extra) in [
        (
            &failed,
            json!({"state": "ERROR", "slurm": {"job_id": "71"},
                "classification": {"class": "infra", "subclass": "node_failure", "retry": true, "rule": "r"}}),
        ),
        (
            &running,
            json!({"state": "RUNNING", "slurm": {"job_id": "72"}}),
        ),
    ] {
        let mut line = extra;
        line["id"] = json!(id);
        line["observed_by"] = json!("tao-classify");
        env.cmd()
            .arg("mark")
            .write_stdin(format!("{line}\n"))
            .assert()
            .success();
    }
    let out = env.cmd().args(["list", "--table"]).output().unwrap();
    let t = String::from_utf8_lossy(&out.stdout);
    let rows: Vec<&str> = t.lines().collect();
    assert!(rows[0].contains("  CLASS  "), "{t}");
    let row = |id: &str| *rows.iter().find(|r| r.starts_with(id)).unwrap();
    assert!(row(&failed).contains("infra/node_failure retry"), "{t}");
    let col = rows[0].find("CLASS").unwrap();
    assert!(row(&running)[col..].starts_with("- "), "{t}");
}
