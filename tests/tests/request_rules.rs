//! Property test: `tao-record open --dry-run` accepts exactly the requests
//! that `tao-render` then renders (issue 13, "every rule in one place").
//!
//! Requests are generated over the inputs both tools judge: wall and child
//! times in every Slurm form (valid, out of range, unlimited, junk), env and
//! secret names (every name of `tao_core::request::RESERVED_NAMES`, a member
//! of each reserved family, secret-looking, malformed and ordinary ones),
//! images (every accepted spelling and near misses), partitions (listed,
//! unlisted, lists, one with an UNLIMITED limit), GPU/CPU/node counts
//! (zero, the node maximum and above it, more nodes or GPUs than a
//! partition of the profile holds, uneven totals, 2^32-1) and memory sizes
//! (either case of unit, above a partition's node memory, too long,
//! malformed).
//!
//! For each request both binaries run, in a cleared environment, with one
//! site profile file:
//!
//! - accepted by tao-record (exit 0, one job line): tao-render renders that
//!   line (exit 0, `script`, no `error`);
//! - refused by tao-record: exit 2 (a flag) or 65, one stderr line
//!   `tao-record: error: --FLAG: ...` naming a flag the request used, and
//!   the same request written as a job line (the line tao-record writes for
//!   a default request, with the generated fields put in) is refused by
//!   tao-render (exit 1, `error` naming the field). The patched line of an
//!   accepted request must render too, so the patching is checked as well.
//!
//! No cluster is needed. The binaries come from `cargo build --workspace
//! --bins`. The seed is fixed unless PROPTEST_RNG_SEED is set.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use proptest::prelude::*;
use serde_json::{json, Map, Value};
use tao_tests::{bin, text};

/// The site profile both tools read: the local profile's shape, 4 GPUs per
/// node, node counts and node memory for gpu and cpu_long (cpu_long has no
/// GPUs), and a partition whose limit is UNLIMITED (and no other limit).
const PROFILE: &str = r#"
name = "rules"
runtime = "pyxis"
default_partition = "gpu"
max_gpus_per_node = 4

[[partitions]]
name = "gpu"
max_time = "04:00:00"
max_nodes = 4
gpus_per_node = 4
mem_per_node = "64G"

[[partitions]]
name = "cpu_long"
max_time = "2-00:00:00"
max_nodes = 2
gpus_per_node = 0
mem_per_node = "7200M"

[[partitions]]
name = "forever"
max_time = "UNLIMITED"

[conversion]
partition = "cpu_long"
cpus = 1
mem = "512M"
time = "00:10:00"
"#;

#[derive(Debug, Clone)]
struct Request {
    time: Option<String>,
    child_timeout: Option<String>,
    partition: Option<String>,
    nodes: Option<u32>,
    gpus: Option<u32>,
    cpus: Option<u32>,
    exclusive: bool,
    mem: Option<String>,
    image: String,
    env: Vec<String>,
    secrets: Vec<String>,
}

impl Request {
    /// The `tao-record open` arguments of this request.
    fn args(&self) -> Vec<String> {
        let mut a: Vec<String> = vec![
            "open".into(),
            "--dry-run".into(),
            "--command".into(),
            "echo hi".into(),
            "--results-root".into(),
            "/shared/tao".into(),
            "--runtime".into(),
            "pyxis".into(),
            "--image".into(),
            self.image.clone(),
        ];
        let mut opt = |flag: &str, v: Option<String>| {
            if let Some(v) = v {
                a.push(flag.into());
                a.push(v);
            }
        };
        opt("--time", self.time.clone());
        opt("--child-timeout", self.child_timeout.clone());
        opt("--partition", self.partition.clone());
        opt("--nodes", self.nodes.map(|n| n.to_string()));
        opt("--gpus-per-node", self.gpus.map(|n| n.to_string()));
        opt("--cpus-per-task", self.cpus.map(|n| n.to_string()));
        opt("--mem", self.mem.clone());
        if self.exclusive {
            a.push("--exclusive".into());
        }
        for e in &self.env {
            a.push("--env".into());
            a.push(format!("{e}=v1"));
        }
        for s in &self.secrets {
            a.push("--secret".into());
            a.push(s.clone());
        }
        a
    }

    /// `base` (the line of a default request) with this request's fields.
    fn patch(&self, base: &Value) -> Value {
        let mut l = base.clone();
        l["image"] = json!(self.image);
        let r = &mut l["resources"];
        if let Some(t) = &self.time {
            r["time"] = json!(t);
        }
        r["child_timeout"] = json!(self.child_timeout);
        if let Some(p) = &self.partition {
            r["partition"] = json!(p);
        }
        for (k, v) in [
            ("nodes", self.nodes),
            ("gpus_per_node", self.gpus),
            ("cpus_per_task", self.cpus),
        ] {
            if let Some(v) = v {
                r[k] = json!(v);
            }
        }
        r["exclusive"] = json!(self.exclusive);
        r["mem"] = json!(self.mem);
        let mut env = Map::new();
        for e in &self.env {
            env.insert(e.clone(), json!("v1"));
        }
        l["env"] = Value::Object(env);
        let mut secrets: Vec<&String> = Vec::new();
        for s in &self.secrets {
            if !secrets.contains(&s) {
                secrets.push(s);
            }
        }
        l["secrets"] = json!(secrets);
        l
    }
}

/// Any Slurm time form, in range or not, and unlimited and junk spellings.
fn any_time() -> impl Strategy<Value = String> {
    let n = || 0u64..130;
    prop_oneof![
        n().prop_map(|m| format!("{m}")),
        (n(), n()).prop_map(|(m, s)| format!("{m}:{s:02}")),
        (0u64..6, n(), n()).prop_map(|(h, m, s)| format!("{h:02}:{m:02}:{s:02}")),
        (0u64..3, 0u64..30).prop_map(|(d, h)| format!("{d}-{h}")),
        (0u64..3, 0u64..30, n()).prop_map(|(d, h, m)| format!("{d}-{h:02}:{m:02}")),
        (0u64..3, 0u64..30, n(), n()).prop_map(|(d, h, m, s)| format!("{d}-{h:02}:{m:02}:{s:02}")),
        prop::sample::select(vec![
            "04:00:00",
            "240",
            "1:75:00",
            "10:75",
            "1-24",
            "1-2:60",
            "0",
            "-1",
            "UNLIMITED",
            "unlimited",
            "INFINITE",
            "00:00:00",
            "0:01",
            "4h",
            "1-2-3",
            "",
            " 10",
            "1:2:3:4",
            "a:00",
            "9999999999",
            "2-00:00:00",
            "2-00:00:01",
        ])
        .prop_map(str::to_string),
    ]
}

/// Mostly times in range (every form), sometimes [`any_time`].
fn time() -> impl Strategy<Value = String> {
    prop_oneof![
        2 => (1u64..240).prop_map(|m| format!("{m}")),
        1 => (0u64..240, 0u64..60).prop_map(|(m, s)| format!("{m}:{s:02}")),
        2 => (0u64..4, 0u64..60, 0u64..60).prop_map(|(h, m, s)| format!("{h:02}:{m:02}:{s:02}")),
        1 => (0u64..3, 0u64..24).prop_map(|(d, h)| format!("{d}-{h}")),
        1 => (0u64..3, 0u64..24, 0u64..60).prop_map(|(d, h, m)| format!("{d}-{h:02}:{m:02}")),
        1 => (0u64..3, 0u64..24, 0u64..60, 0u64..60)
            .prop_map(|(d, h, m, s)| format!("{d}-{h:02}:{m:02}:{s:02}")),
        3 => any_time(),
    ]
}

/// Env and secret names: every reserved name, a member of each reserved
/// family, secret-looking, malformed and ordinary names.
fn name() -> impl Strategy<Value = String> {
    let mut pool: Vec<String> = tao_core::request::RESERVED_NAMES
        .iter()
        .map(|s| s.to_string())
        .collect();
    for extra in [
        "SLURM_JOB_ID",
        "BASH_ENV",
        "BASHOPTS",
        "LD_PRELOAD",
        "tao_secrets",
        "tao_child",
        "HF_TOKEN",
        "WANDB_API_KEY",
        "NGC_KEY",
        "1A",
        "A-B",
        "",
    ] {
        pool.push(extra.into());
    }
    let ordinary = prop::sample::select(vec![
        "HF_HOME",
        "OMP_NUM_THREADS",
        "MY_VAR",
        "TAO_X",
        "NCCL_DEBUG",
        "_x",
    ])
    .prop_map(str::to_string);
    prop_oneof![1 => prop::sample::select(pool), 5 => ordinary]
}

fn image() -> impl Strategy<Value = String> {
    let good = prop::sample::select(vec![
        "/images/tao.sqsh",
        "nvcr.io#nvidia/tao/tao-toolkit:5.5.0-pyt",
        "docker://nvcr.io#nvidia/tao/tao-toolkit:5.5.0-pyt",
        "nvcr.io/nvidia/tao/tao-toolkit:5.5.0-pyt",
        "docker://nvcr.io/nvidia/tao/tao-toolkit:5.5.0-pyt",
        "ubuntu",
        "ubuntu:22.04",
        "ubuntu@sha256:abc",
        "localhost:5000/x",
    ]);
    let bad = prop::sample::select(vec![
        "x.sqsh",
        "/a b.sqsh",
        "/a,b.sqsh",
        "/images/x.tar",
        "a#b#c",
        "nvcr.io#",
        "file:///x.sqsh",
        "a/b/",
        "reg.io//x",
        "a+b:1",
        "http://x/y",
        "$(id)",
    ]);
    prop_oneof![6 => good, 1 => bad].prop_map(str::to_string)
}

fn count() -> impl Strategy<Value = Option<u32>> {
    prop_oneof![
        6 => Just(None),
        6 => (1u32..5).prop_map(Some),
        3 => (0u32..20).prop_map(Some),
        1 => Just(Some(u32::MAX)),
        1 => Just(Some(1 << 30)),
    ]
}

fn request() -> impl Strategy<Value = Request> {
    (
        prop::option::of(time()),
        prop::option::weighted(0.2, time()),
        prop::option::of(prop::sample::select(vec![
            "gpu",
            "gpu",
            "cpu_long",
            "forever",
            "forever",
            "debug",
            "gpu,cpu_long",
            "forever,gpu",
            "gpu,",
        ])),
        (count(), count(), count(), any::<bool>()),
        prop::option::weighted(
            0.3,
            prop::sample::select(vec![
                "64G",
                "64g",
                "65G",
                "65537M",
                "8000",
                "7200M",
                "7200",
                "512k",
                "1T",
                "64GB",
                "G",
                "1234567890123M",
                "-1G",
            ]),
        ),
        image(),
        prop::collection::vec(name(), 0..3),
        prop::collection::vec(name(), 0..3),
    )
        .prop_map(
            |(
                time,
                child_timeout,
                partition,
                (nodes, gpus, cpus, exclusive),
                mem,
                image,
                env,
                secrets,
            )| {
                Request {
                    time,
                    child_timeout,
                    partition: partition.map(str::to_string),
                    nodes,
                    gpus,
                    cpus,
                    exclusive,
                    mem: mem.map(str::to_string),
                    image,
                    env,
                    secrets,
                }
            },
        )
}

/// A tool run in a cleared environment with the test's profile and state.
fn run(tool: &str, args: &[String], stdin: &str, dir: &Path) -> Output {
    use std::io::Write;
    let mut child = Command::new(bin(tool))
        .args(args)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", dir)
        .env("TAO_STATE_DIR", dir.join("state"))
        .env("TAO_SITE_PROFILE", dir.join("site.toml"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

/// Render one line: `Ok(())` when rendered, `Err(message)` when refused.
/// Panics on any other outcome (a lost line, an undocumented status).
fn render(line: &Value, dir: &Path) -> Result<(), String> {
    let out = run("tao-render", &[], &format!("{line}\n"), dir);
    let stdout = text(&out.stdout);
    let lines: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("tao-render prints JSON lines"))
        .collect();
    match out.status.code() {
        Some(0) => {
            assert_eq!(lines.len(), 1, "{stdout}");
            assert!(lines[0].get("error").is_none() && lines[0]["script"]["text"].is_string());
            Ok(())
        }
        Some(1) | Some(65) => {
            assert!(lines.len() <= 1, "{stdout}");
            let msg = lines
                .first()
                .and_then(|l| l["error"]["message"].as_str())
                .map(str::to_string)
                .unwrap_or_else(|| text(&out.stderr));
            assert!(!msg.is_empty() && !msg.contains('\n'), "{msg:?}");
            Err(msg)
        }
        other => panic!("tao-render exit {other:?}: {}", text(&out.stderr)),
    }
}

fn setup() -> (tempfile::TempDir, Value) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("site.toml"), PROFILE).unwrap();
    let base = Request {
        time: None,
        child_timeout: None,
        partition: None,
        nodes: None,
        gpus: None,
        cpus: None,
        exclusive: false,
        mem: None,
        image: "/images/tao.sqsh".into(),
        env: vec![],
        secrets: vec![],
    };
    let out = run("tao-record", &base.args(), "", dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let line: Value = serde_json::from_slice(&out.stdout).unwrap();
    (dir, line)
}

proptest! {
    #![proptest_config(tao_core::testing::config_fixed_seed(192, 0x0007_a053))]

    #[test]
    fn record_accepts_exactly_what_render_renders(req in request()) {
        let (dir, base) = setup();
        let dir = dir.path();
        let args = req.args();
        let out = run("tao-record", &args, "", dir);
        let err = text(&out.stderr);
        let patched = req.patch(&base);
        if std::env::var_os("TAO_RULES_TRACE").is_some() {
            eprintln!("outcome {:?}: {}", out.status.code(), err.trim());
        }
        match out.status.code() {
            Some(0) => {
                let line: Value = serde_json::from_slice(&out.stdout).unwrap();
                prop_assert_eq!(render(&line, dir), Ok(()), "{:?}: record accepted, render refused", args);
                prop_assert_eq!(render(&patched, dir), Ok(()), "{:?}: the patched line must render too", args);
            }
            Some(code @ (2 | 65)) => {
                prop_assert!(out.stdout.is_empty());
                prop_assert_eq!(err.lines().count(), 1, "{}", err);
                prop_assert!(err.starts_with("tao-record: error: "), "{}", err);
                let names_a_flag = args
                    .iter()
                    .filter(|a| a.starts_with("--"))
                    .any(|f| err.contains(&format!("{f}:")) || err.contains(&format!("'{f} ")) || err.contains(&format!("'{f}'")));
                prop_assert!(names_a_flag, "exit {}: {} names no flag of {:?}", code, err, args);
                let refused = render(&patched, dir);
                prop_assert!(refused.is_err(), "{:?}: record refused ({}) but render rendered", args, err.trim());
            }
            other => prop_assert!(false, "tao-record exit {:?}: {}", other, err),
        }
    }
}

/// Fixed cases from the issue, so a reader sees each disagreement that was
/// fixed (each was accepted by tao-record and refused by tao-render, or the
/// reverse, before the rules moved to tao-core).
#[test]
fn the_disagreements_of_issue_13_are_gone() {
    let (dir, _) = setup();
    let dir = dir.path();
    let open = |extra: &[&str]| {
        let mut a: Vec<String> = [
            "open",
            "--dry-run",
            "--command",
            "x",
            "--results-root",
            "/s",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        a.extend(["--runtime", "pyxis", "--image", "/i/x.sqsh"].map(String::from));
        a.extend(extra.iter().map(|s| s.to_string()));
        run("tao-record", &a, "", dir)
    };
    for (extra, needle) in [
        (
            &["--time", "1:75:00"][..],
            "--time: time \"1:75:00\": minutes must be below 60",
        ),
        (
            &["--env", "MASTER_PORT=29501"][..],
            "--env: \"MASTER_PORT\" is reserved",
        ),
        (
            &["--secret", "tao_secrets"][..],
            "--secret: \"tao_secrets\" is reserved",
        ),
        (&["--secret", "PATH"][..], "--secret: \"PATH\" is reserved"),
        (
            &["--secret", "BASH_ENV"][..],
            "--secret: \"BASH_ENV\" is reserved",
        ),
    ] {
        let out = open(extra);
        assert_eq!(out.status.code(), Some(2), "{extra:?}");
        assert!(
            text(&out.stderr).contains(needle),
            "{extra:?}: {}",
            text(&out.stderr)
        );
    }
    // UNLIMITED where the partition allows it: opened, and rendered.
    let out = open(&["--time", "UNLIMITED", "--partition", "forever"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let line: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(line["resources"]["child_timeout"], Value::Null);
    assert_eq!(render(&line, dir), Ok(()));
    // --mem in lower case (sbatch reads it): opened, and rendered upper case.
    let out = open(&["--mem", "64g"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let line: Value = serde_json::from_slice(&out.stdout).unwrap();
    let rendered = run("tao-render", &[], &format!("{line}\n"), dir);
    assert_eq!(
        rendered.status.code(),
        Some(0),
        "{}",
        text(&rendered.stderr)
    );
    assert!(text(&rendered.stdout).contains("#SBATCH --mem=64G\\n"));
    // 16 GPUs on 4-GPU nodes: 4 exclusive nodes of 4, in both tools.
    let out = open(&["--gpus-per-node", "16"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let line: Value = serde_json::from_slice(&out.stdout).unwrap();
    let rendered = run("tao-render", &[], &format!("{line}\n"), dir);
    let l: Value = serde_json::from_slice(&rendered.stdout).unwrap();
    assert_eq!(l["script"]["resources"]["nodes"], 4);
    assert_eq!(l["script"]["resources"]["gpus_per_node"], 4);
}

/// A request no partition can hold (issue 13: a fresh user waited 300 s on
/// the probe, then read "try later"): refused at once by tao-record (exit
/// 2, naming the flag, the partition and its limit) and by tao-render.
#[test]
fn requests_no_partition_holds_are_refused_by_both_tools() {
    let (dir, base) = setup();
    let dir = dir.path();
    let open = |extra: &[&str]| {
        let mut a = vec![
            "open",
            "--dry-run",
            "--command",
            "echo hi",
            "--results-root",
            "/shared/tao",
            "--runtime",
            "pyxis",
            "--image",
            "/images/tao.sqsh",
        ];
        a.extend_from_slice(extra);
        let a: Vec<String> = a.into_iter().map(String::from).collect();
        run("tao-record", &a, "", dir)
    };
    for (args, flag, field, patch) in [
        (
            &["--nodes", "5"][..],
            "--nodes",
            "resources.nodes",
            json!({"nodes": 5}),
        ),
        (
            &["--gpus-per-node", "20"][..],
            "--gpus-per-node",
            "resources.gpus_per_node",
            json!({"gpus_per_node": 20}),
        ),
        (
            &["--nodes", "2", "--gpus-per-node", "12"][..],
            "--gpus-per-node",
            "resources.gpus_per_node",
            json!({"nodes": 2, "gpus_per_node": 12}),
        ),
        (
            &["--partition", "cpu_long", "--gpus-per-node", "1"][..],
            "--gpus-per-node",
            "resources.gpus_per_node",
            json!({"partition": "cpu_long", "gpus_per_node": 1}),
        ),
        (
            &["--mem", "65G"][..],
            "--mem",
            "resources.mem",
            json!({"mem": "65G"}),
        ),
    ] {
        let out = open(args);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(out.stdout.is_empty());
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.starts_with(&format!("tao-record: error: {flag}: ")),
            "{err}"
        );
        assert!(
            err.contains("partition \"") && err.contains("choose another partition"),
            "{err}"
        );
        let mut line = base.clone();
        for (k, v) in patch.as_object().unwrap() {
            line["resources"][k] = v.clone();
        }
        let msg = render(&line, dir).unwrap_err();
        assert!(msg.contains(field), "{args:?}: {msg}");
    }
    // At the limits: opened and rendered.
    let out = open(&["--nodes", "4", "--gpus-per-node", "4", "--mem", "64G"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let line: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(render(&line, dir), Ok(()));
}

/// Every reserved name, as an env variable and as a secret: refused by
/// tao-record (exit 2, naming the flag) and by tao-render alike.
#[test]
fn every_reserved_name_is_refused_by_both_tools() {
    let (dir, base) = setup();
    let dir = dir.path();
    let mut names: Vec<&str> = tao_core::request::RESERVED_NAMES.to_vec();
    names.extend([
        "SLURM_JOB_ID",
        "BASH_ENV",
        "BASHOPTS",
        "LD_PRELOAD",
        "tao_secrets",
    ]);
    for name in names {
        for as_secret in [false, true] {
            let req = Request {
                time: None,
                child_timeout: None,
                partition: None,
                nodes: None,
                gpus: None,
                cpus: None,
                exclusive: false,
                mem: None,
                image: "/images/tao.sqsh".into(),
                env: if as_secret { vec![] } else { vec![name.into()] },
                secrets: if as_secret { vec![name.into()] } else { vec![] },
            };
            let out = run("tao-record", &req.args(), "", dir);
            let err = text(&out.stderr);
            let flag = if as_secret { "--secret" } else { "--env" };
            assert_eq!(out.status.code(), Some(2), "{flag} {name}: {err}");
            assert!(
                err.contains(&format!("{flag}: \"{name}\" is reserved")),
                "{flag} {name}: {err}"
            );
            let refused = render(&req.patch(&base), dir).unwrap_err();
            assert!(
                refused.contains(&format!("\"{name}\" is reserved")),
                "{refused}"
            );
        }
    }
}
