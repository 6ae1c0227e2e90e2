//! Shared helpers of tao-submit's integration tests: the local cluster's
//! exports, a fresh record store per test, job lines built by hand (a real
//! record in the store, a small sbatch script, `lint.sha256` = its sha256),
//! the `tao-submit` binary run with a cleared environment, and scheduler
//! look-ups over tao-ssh for assertions.
//!
//! When the cluster is not up the tests fail under CI=true and are skipped
//! with a printed reason otherwise.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tao_ssh::{Remote, SshOptions};
use tao_store::{Record, Store};

/// A fresh ed25519 key in `dir` that the cluster user has never
/// authorised (a login with it is refused).
pub fn uninstalled_key(dir: &std::path::Path) -> PathBuf {
    let key = dir.join("not_installed");
    assert!(std::process::Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", ""])
        .arg("-f")
        .arg(&key)
        .status()
        .unwrap()
        .success());
    key
}

/// Shell function `kill_session` for TEST DOUBLES of sbatch (fault
/// injection only): kills this SSH session (the nearest sshd ancestor of
/// the calling shell), so the client loses the connection before the reply
/// travels back, then exits 1. The session process is `sshd` up to OpenSSH
/// 9 (bookworm, the 22.05 cluster) and `sshd-session` from OpenSSH 9.8 on
/// (trixie, the 24.11 cluster), whose `sshd` is the listener: killing that
/// would cut no session and stop the login node.
pub const KILL_SESSION_FN: &str = r#"kill_session() {
  pid=$$
  while [ "$pid" -gt 1 ]; do
    case "$(cat /proc/$pid/comm 2>/dev/null)" in sshd|sshd-session) kill -9 "$pid"; sleep 10; exit 1;; esac
    pid=$(awk '{print $4}' "/proc/$pid/stat")
  done
  exit 1
}
"#;

/// The local cluster's exports.
#[derive(Clone)]
pub struct Cluster {
    pub vars: BTreeMap<String, String>,
}

/// The cluster, or `None` (skip) when it is not up; panics under CI=true
/// ([`tao_testkit::cluster::cluster_exports`]).
pub fn cluster() -> Option<Cluster> {
    Some(Cluster {
        vars: tao_testkit::cluster::cluster_exports()?,
    })
}

impl Cluster {
    pub fn var(&self, k: &str) -> &str {
        self.vars
            .get(k)
            .map(String::as_str)
            .unwrap_or_else(|| panic!("{k} missing from {}", tao_testkit::cluster::env_file()))
    }

    /// (host, port) of the one login host.
    pub fn host_port(&self) -> (String, u16) {
        let (h, p) = self.var("SLURM_HOSTNAME").split_once(':').unwrap();
        (h.to_string(), p.parse().unwrap())
    }

    pub fn opts(&self) -> SshOptions {
        SshOptions {
            user: self.var("SLURM_USER").into(),
            hosts: vec![self.var("SLURM_HOSTNAME").into()],
            key_path: Some(PathBuf::from(self.var("SSH_KEY_PATH"))),
            known_hosts: PathBuf::from(self.var("SSH_KNOWN_HOSTS")),
            ssh_config: None,
            accept_new_host_key: false,
            connect_timeout: Duration::from_secs(15),
            ..SshOptions::default()
        }
    }

    /// Run `cmd` on the login node as the cluster user; stdout as text.
    /// (A test helper, not the product: it retries a connection that fails
    /// on a loaded machine, up to 3 times, so an assertion never rests on it.)
    pub fn ssh(&self, cmd: &str) -> (i32, String, String) {
        let mut last = String::new();
        for _ in 0..3 {
            match Remote::connect(&self.opts()).and_then(|r| r.exec(cmd, None)) {
                Ok(o) => {
                    return (
                        o.status,
                        o.stdout_text(),
                        String::from_utf8_lossy(&o.stderr).into_owned(),
                    );
                }
                Err(e) => last = e.to_string(),
            }
        }
        panic!("test helper: ssh to the local cluster failed 3 times: {last}");
    }

    /// Slurm jobs named `name` (squeue -t all and sacct, union by id): id -> state.
    pub fn jobs_named(&self, name: &str) -> BTreeMap<String, String> {
        let (_, out, _) = self.ssh(&format!(
            "squeue -h -t all --name={name} -o '%i|%T'; sacct -n -X -P --name={name} -S now-1days -o JobIDRaw,State"
        ));
        let mut m = BTreeMap::new();
        for l in out.lines() {
            if let Some((id, st)) = l.split_once('|') {
                m.entry(id.to_string()).or_insert_with(|| st.to_string());
            }
        }
        m
    }

    /// Poll (bounded) until job `id`'s squeue/sacct state satisfies `pred`.
    pub fn wait_state(&self, job_id: &str, secs: u64, pred: impl Fn(&str) -> bool) -> String {
        self.wait_first_line(
            &format!("job {job_id}"),
            &format!(
                "squeue -h -t all -j {job_id} -o '%T' 2>/dev/null; sacct -n -X -P -j {job_id} -o State"
            ),
            secs,
            pred,
        )
    }

    /// Poll (bounded) until accounting alone (sacct, which lags squeue by
    /// seconds on a loaded machine) shows job `id` in a state satisfying `pred`.
    pub fn wait_sacct(&self, job_id: &str, secs: u64, pred: impl Fn(&str) -> bool) -> String {
        self.wait_first_line(
            &format!("sacct: job {job_id}"),
            &format!("sacct -n -X -P -j {job_id} -o State"),
            secs,
            pred,
        )
    }

    /// Run `cmd` on the login node every 300 ms until the first line of
    /// its stdout (trimmed) satisfies `pred`, and return that line; panics
    /// naming `what` and the last line after `secs` seconds.
    fn wait_first_line(
        &self,
        what: &str,
        cmd: &str,
        secs: u64,
        pred: impl Fn(&str) -> bool,
    ) -> String {
        let deadline = Instant::now() + Duration::from_secs(secs);
        loop {
            let (_, out, _) = self.ssh(cmd);
            let st = out.lines().next().unwrap_or("").trim().to_string();
            if pred(&st) {
                return st;
            }
            assert!(
                Instant::now() < deadline,
                "{what} still {st:?} after {secs} s"
            );
            std::thread::sleep(Duration::from_millis(300));
        }
    }
}

/// Whether a native state (as squeue/sacct print it) is one a job ends in:
/// not empty (not listed yet), not queued, running or still completing.
pub fn ended(state: &str) -> bool {
    !state.is_empty()
        && !matches!(
            state,
            "PENDING"
                | "RUNNING"
                | "COMPLETING"
                | "CONFIGURING"
                | "SUSPENDED"
                | "REQUEUED"
                | "RESIZING"
                | "SIGNALING"
                | "STAGE_OUT"
                | "STOPPED"
        )
}

static COUNTER: AtomicU32 = AtomicU32::new(0);

/// A fresh record id for this test run.
pub fn unique_id(tag: &str) -> String {
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!(
        "tao-t{tag}-{:x}{:x}{n}",
        std::process::id(),
        t % 0xffff_ffff
    )
}

/// A record store in a temp dir and the cluster.
pub struct Fixture {
    pub c: Cluster,
    pub state: tempfile::TempDir,
    pub store: Store,
    /// Record ids made by this fixture: their directories on the shared
    /// storage are removed when it is dropped (set TAO_TEST_KEEP to keep them).
    created: std::cell::RefCell<Vec<String>>,
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let ids = self.created.borrow();
        if ids.is_empty() || std::env::var_os("TAO_TEST_KEEP").is_some() {
            return;
        }
        let base = self.c.var("SLURM_BASE_RESULTS_DIR").to_string();
        let dirs: Vec<String> = ids
            .iter()
            .flat_map(|id| [format!("{base}/jobs/{id}"), format!("{base}/results/{id}")])
            .collect();
        if let Ok(r) = Remote::connect(&self.c.opts()) {
            let _ = r.exec(&format!("rm -rf -- {}", tao_core::shell::join(&dirs)), None);
        }
    }
}

impl Fixture {
    pub fn new() -> Option<Fixture> {
        Self::new_with(&[])
    }

    /// A fixture whose cluster exports are overridden by `vars` (another
    /// login host, user or shared directory), plus the exports of
    /// tests/cluster/up-transport (`env-transport`, when `with_transport`
    /// variables are asked for by name: `TAO_T_*`).
    pub fn new_with(vars: &[(&str, &str)]) -> Option<Fixture> {
        let mut c = cluster()?;
        for (k, v) in vars {
            c.vars.insert(k.to_string(), v.to_string());
        }
        let state = tempfile::tempdir().unwrap();
        let store = Store::open(state.path().to_path_buf()).unwrap();
        Some(Fixture {
            c,
            state,
            store,
            created: Default::default(),
        })
    }

    /// A job line whose record exists, with a test script running `body`.
    pub fn line(&self, tag: &str, body: &str) -> Value {
        let id = unique_id(tag);
        self.created.borrow_mut().push(id.clone());
        let base = self.c.var("SLURM_BASE_RESULTS_DIR").to_string();
        let job_dir = format!("{base}/jobs/{id}");
        let script = format!(
            "#!/bin/bash\n#SBATCH --job-name={id}\n#SBATCH --partition=gpu\n#SBATCH --time=00:05:00\n#SBATCH --cpus-per-task=1\n#SBATCH --output={job_dir}/slurm-logs/{id}-%j/main.out\n#SBATCH --error={job_dir}/slurm-logs/{id}-%j/main.err\n# test script (tao-submit integration tests), not rendered by tao-render\ntao_job_id={}\ntao_secrets={}\n{body}\n",
            tao_core::shell::quote(&id),
            tao_core::shell::quote(&format!("{job_dir}/env/secrets.env"))
        );
        let sha = tao_core::sha256_hex(script.as_bytes());
        let spec = "train:\n  num_epochs: 1\n";
        let line = json!({
            "id": id,
            "platform": "slurm",
            "runtime": "none",
            "command": body,
            "resources": {"nodes": 1, "gpus_per_node": 0, "cpus_per_task": 1, "time": "00:05:00",
                          "partition": "gpu", "account": null, "exclusive": false, "requeue": true, "exclude": []},
            "storage": {"tier": "lustre", "base_dir": base, "job_dir": job_dir, "results_dir": format!("{base}/results/{id}")},
            "spec": {"name": "spec.yaml", "text": spec, "sha256": tao_core::sha256_hex(spec.as_bytes())},
            "secrets": [],
            "state": "PENDING",
            "script": {"template": "test", "sha256": sha, "text": script},
            "lint": {"ok": true, "sha256": sha, "findings": []},
        });
        let mut rec = line.as_object().unwrap().clone();
        rec.insert(
            "history".into(),
            json!([{"at": tao_core::time::now_rfc3339(), "state": "PENDING", "source": "test", "message": null}]),
        );
        self.store.create(&Record::from_map(rec)).unwrap();
        line
    }

    /// `tao-submit ARGS` with a cleared environment: PATH, HOME, the
    /// cluster's exports and TAO_STATE_DIR only.
    pub fn cmd(&self) -> assert_cmd::Command {
        let mut cmd = assert_cmd::Command::cargo_bin("tao-submit").unwrap();
        cmd.env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env(
                "HOME",
                std::env::var("HOME").unwrap_or_else(|_| "/root".into()),
            )
            .env("TAO_STATE_DIR", self.state.path());
        for (k, v) in &self.c.vars {
            cmd.env(k, v);
        }
        cmd.timeout(Duration::from_secs(300));
        cmd
    }
}

impl Fixture {
    /// `tao-submit ARGS` ([`Fixture::cmd`]) with the job lines `input` on
    /// stdin; asserts that it exits `code`, showing its stderr otherwise.
    /// Returns its output (`lines_of(&out.stdout)` for the lines).
    pub fn run(&self, args: &[&str], input: &[Value], code: i32) -> std::process::Output {
        self.run_cmd(self.cmd().args(args), input, code)
    }

    /// [`Fixture::run`] for a command prepared by the caller (from
    /// [`Fixture::cmd`], with its own arguments and environment).
    pub fn run_cmd(
        &self,
        cmd: &mut assert_cmd::Command,
        input: &[Value],
        code: i32,
    ) -> std::process::Output {
        let out = cmd.write_stdin(stdin_of(input)).output().unwrap();
        tao_testkit::tool::assert_exit(&out, code);
        out
    }

    /// Run the tool `bin` (a binary of this workspace) with `args`, the
    /// environment of [`Fixture::cmd`] plus `env`, through the command
    /// prefix `wrap` (may be empty), with `stdin`; bounded by 300 s.
    pub fn run_tool(
        &self,
        bin: &str,
        args: &[&str],
        env: &[(&str, &str)],
        wrap: &[&str],
        stdin: &str,
    ) -> std::process::Output {
        let path = assert_cmd::cargo::cargo_bin(bin);
        if let ["runuser", "-u", user, ..] = wrap {
            // The tool runs as `user`: the record store becomes theirs.
            assert!(std::process::Command::new("chown")
                .args(["-R", user])
                .arg(self.state.path())
                .status()
                .unwrap()
                .success());
        }
        let mut cmd = match wrap.split_first() {
            Some((first, rest)) => {
                let mut c = std::process::Command::new(first);
                c.args(rest).arg(&path);
                c
            }
            None => std::process::Command::new(&path),
        };
        cmd.env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin")
            .env(
                "HOME",
                std::env::var("HOME").unwrap_or_else(|_| "/root".into()),
            )
            .env("TAO_STATE_DIR", self.state.path());
        for (k, v) in &self.c.vars {
            cmd.env(k, v);
        }
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.args(args);
        let mut a = assert_cmd::Command::from_std(cmd);
        a.timeout(Duration::from_secs(300));
        a.write_stdin(stdin.to_string()).output().unwrap()
    }
}

/// The exports of tests/cluster/up-transport (`env-transport`), or `None`
/// (skip) when it has not run; panics under CI=true
/// ([`tao_testkit::cluster::transport_exports`]).
pub fn transport_env() -> Option<BTreeMap<String, String>> {
    tao_testkit::cluster::transport_exports()
}

/// Replace `from` by `to` in a line's script and fix the sha256s (as a
/// re-render and `tao-redact lint` would).
pub fn with_script(mut line: Value, from: &str, to: &str) -> Value {
    let text = line["script"]["text"].as_str().unwrap().replace(from, to);
    let sha = tao_core::sha256_hex(text.as_bytes());
    line["script"] = json!({"template": "test", "sha256": sha, "text": text});
    line["lint"]["sha256"] = json!(sha);
    line
}

/// Job lines as stdin text.
pub fn stdin_of(lines: &[Value]) -> String {
    lines.iter().map(|l| format!("{l}\n")).collect()
}

/// Parse stdout into JSON lines.
pub fn lines_of(stdout: &[u8]) -> Vec<Value> {
    tao_testkit::tool::json_lines(stdout)
}

/// The spec-13k pipeline, with extra environment for tao-submit (another
/// transport, another login host).
pub fn submit_every_size(f: &Fixture, env: &[(&str, &str)]) -> Vec<Value> {
    submit_every_size_via(f, env, &[])
}

/// [`submit_every_size`] with tao-submit started through `wrap` (a command
/// prefix: `ip netns exec tao-client`, `runuser -u USER --`).
pub fn submit_every_size_via(f: &Fixture, env: &[(&str, &str)], wrap: &[&str]) -> Vec<Value> {
    let dir = tempfile::tempdir().unwrap();
    let sizes = [1_000usize, 13_000, 40_000, 1 << 20, 5 << 20];
    let mut lines = Vec::new();
    let mut shas = Vec::new();
    for (i, &n) in sizes.iter().enumerate() {
        // A spec of text (quotes, $(...), backslashes: nothing a shell may
        // read) and a supporting file of every byte value.
        let unit = "x: 'it''s' $(not run) `nor this` \\ \"q\" # pad\n";
        let spec: String = unit.repeat(n / unit.len() + 1)[..n].to_string();
        let bytes: Vec<u8> = (0..n).map(|k| (k * 7 + i) as u8).collect();
        let helper = dir.path().join(format!("blob{i}.bin"));
        std::fs::write(&helper, &bytes).unwrap();
        let (spec_sha, blob_sha) = (
            tao_core::sha256_hex(spec.as_bytes()),
            tao_core::sha256_hex(&bytes),
        );
        // sbatch runs in the job directory: the job's working directory.
        let body = format!(
            "printf '%s  %s\\n' {spec_sha} specs/spec.yaml {blob_sha} inputs/action-helpers/data/blob.bin | sha256sum -c - && echo sizes-verified"
        );
        let mut line = f.line(&format!("sz{i}"), &body);
        line["spec"] = json!({"name": "spec.yaml", "text": spec, "sha256": spec_sha});
        line["execution"] = json!({"supporting_files": [{"source": "data/blob.bin", "local_path": helper,
            "sha256": blob_sha, "size": bytes.len()}]});
        shas.push((spec_sha, blob_sha));
        lines.push(line);
    }
    let out = f.run_tool("tao-submit", &["--stats"], env, wrap, &stdin_of(&lines));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stderr}\nerrors: {:?}",
        lines_of(&out.stdout)
            .iter()
            .map(|l| l["error"].to_string())
            .collect::<Vec<_>>()
    );
    // One session per run (0 when an open master is reused); through a
    // ProxyJump bastion (libssh2) the bastion's own session is one more.
    let hops = usize::from(env.contains(&("SLURM_HOSTNAME", "tao-inner")));
    let handshakes: usize = stderr
        .split("handshakes=")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no stats in {stderr}"));
    assert!(handshakes <= 1 + hops, "one session per run: {stderr}");
    let got = lines_of(&out.stdout);
    assert_eq!(got.len(), sizes.len(), "{stderr}");
    for ((l, line), (spec_sha, blob_sha)) in got.iter().zip(&lines).zip(&shas) {
        assert_eq!(l["id"], line["id"]);
        let job_id = l["slurm"]["job_id"]
            .as_str()
            .unwrap_or_else(|| panic!("{l}"))
            .to_string();
        // The staged bytes, as the login node sees them.
        let jd = line["storage"]["job_dir"].as_str().unwrap();
        let (rc, o, e) = f.c.ssh(&format!(
            "cd {jd} && sha256sum specs/spec.yaml inputs/action-helpers/data/blob.bin"
        ));
        assert_eq!(rc, 0, "{e}");
        assert!(
            o.contains(spec_sha.as_str()) && o.contains(blob_sha.as_str()),
            "{o}"
        );
        // The job checked them itself and completed.
        let st = f.c.wait_state(&job_id, 240, ended);
        let id = line["id"].as_str().unwrap();
        let (_, log, _) = f.c.ssh(&format!(
            "cat {jd}/slurm-logs/{id}-{job_id}/main.out {jd}/slurm-logs/{id}-{job_id}/main.err"
        ));
        assert_eq!(st, "COMPLETED", "job {id}: {log}");
        assert!(log.contains("sizes-verified"), "{log}");
    }
    got
}

/// A site profile for the local cluster (runtime `runtime`, partition gpu,
/// conversions on cpu_long) whose remote commands start with
/// `remote_prefix`: how a test puts its doubles first on the login node's
/// PATH, or points a tool at its own directory, without changing the
/// shared cluster user's environment. Written to `path`.
pub fn write_profile(path: &std::path::Path, name: &str, runtime: &str, remote_prefix: &str) {
    std::fs::write(
        path,
        format!(
            "name = \"{name}\"\nruntime = \"{runtime}\"\nremote_prefix = \"{remote_prefix}\"\ndefault_partition = \"gpu\"\nmax_gpus_per_node = 4\n[conversion]\npartition = \"cpu_long\"\ncpus = 1\nmem = \"512M\"\ntime = \"00:10:00\"\n"
        ),
    )
    .unwrap();
}

/// A temporary directory for TEST DOUBLES of scheduler commands (fault
/// injection only: what cannot be made to fail for real on demand): `bin/`
/// (mode 755) for the doubles, `marks/` (mode 777: the doubles run as the
/// cluster user) for what they record, and a site profile putting `bin/`
/// first on PATH.
pub struct Doubles {
    /// The directory; removed when dropped.
    pub dir: tempfile::TempDir,
    /// Where the doubles are.
    pub bin: PathBuf,
    /// Where the doubles write their marks.
    pub marks: PathBuf,
}

impl Doubles {
    /// A fresh directory named `prefix...`.
    pub fn new(prefix: &str) -> Self {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::Builder::new().prefix(prefix).tempdir().unwrap();
        let mode = |p: &std::path::Path, m: u32| {
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap()
        };
        mode(dir.path(), 0o755);
        let marks = dir.path().join("marks");
        std::fs::create_dir(&marks).unwrap();
        mode(&marks, 0o777);
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        mode(&bin, 0o755);
        Doubles { dir, bin, marks }
    }

    /// Write the double `name` (mode 755) from `script`, with `@MARKS@`
    /// replaced by the marks directory and `@REAL@` by the real command's
    /// path on the login node.
    pub fn add(&self, f: &Fixture, name: &str, script: &str) {
        use std::os::unix::fs::PermissionsExt;
        let (_, real, _) = f.c.ssh(&format!("command -v {name}"));
        let real = real.trim();
        assert!(real.starts_with('/'), "real {name}: {real:?}");
        let path = self.bin.join(name);
        std::fs::write(
            &path,
            script
                .replace("@MARKS@", &self.marks.display().to_string())
                .replace("@REAL@", real),
        )
        .unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    /// A site profile (runtime none) putting the doubles first on PATH.
    pub fn profile(&self, name: &str) -> PathBuf {
        let path = self.dir.path().join(format!("{name}.toml"));
        write_profile(
            &path,
            name,
            "none",
            &format!("PATH={}:$PATH;", self.bin.display()),
        );
        path
    }
}

/// Assert that each job line of `got` names a Slurm job, that it is the
/// only job carrying the record's name, and that it ran to COMPLETED
/// (all within 180 s). `label` says which case a failure belongs to.
pub fn assert_one_completed_job_per_name(f: &Fixture, got: &[Value], label: &str) {
    let deadline = Instant::now() + Duration::from_secs(180);
    for l in got {
        let id = l["id"].as_str().unwrap();
        let job_id = l["slurm"]["job_id"]
            .as_str()
            .unwrap_or_else(|| panic!("{label}: not submitted: {l}"));
        let jobs = f.c.jobs_named(id);
        assert_eq!(
            jobs.keys().collect::<Vec<_>>(),
            [job_id],
            "{label}: jobs named {id}: {jobs:?}"
        );
        let left = deadline
            .saturating_duration_since(Instant::now())
            .as_secs()
            .max(1);
        assert_eq!(
            f.c.wait_state(job_id, left, |s| s == "COMPLETED" || s == "FAILED"),
            "COMPLETED",
            "{label}: {id}"
        );
    }
}
