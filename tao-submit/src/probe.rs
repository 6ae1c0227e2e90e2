//! The communication probe gate (issue 8; DESIGN, "Multi-node"): a job
//! with more than one node, or with two or more GPUs on a node
//! ([`tao_script::needs_probe`]), is submitted only after a cheap
//! all-reduce across the same shape of allocation has passed, because a
//! multi-node job that hangs in its first collective holds every GPU it
//! asked for until its wall time runs out.
//!
//! Per cluster, once: the probe program (`assets/tao_probe.py`, compiled
//! into the binary) is staged to `<base>/jobs/<probe-id>/inputs/action-helpers/`,
//! tao-script's `probe` template (same partition, account, exclusions, node
//! count and GPUs as the real job) is rendered and linted in-process
//! (no lint, no launch applies to the probe too), submitted over the run's
//! SSH session and waited for with a bounded poll. Its verdict is the
//! `tao: TAO_PROBE_RESULT=...` line of its `main.out`
//! ([`tao_script::probe_result`]). On a hang (or a failure) the site
//! profile's NCCL knob sets ([`SiteProfile::nccl_knobs`]) are tried in
//! order; the first environment that passes is cached in
//! `$TAO_STATE_DIR/clusters/<cluster>/nccl.json` ([`cache_path`]) and later
//! jobs on that cluster skip the probe. If none passes, the real job is not
//! submitted and its `error` lists every environment tried and its outcome.
//!
//! The real job's approved script is never changed (its sha256 is the lint
//! gate): the passing environment goes on the sbatch command line as
//! `--export=ALL,NAME=value,...` ([`export_arg`]; names and values checked
//! against a strict character set) and is recorded in the line's `probe`
//! field: `{env, cached, skipped, probe_job_ids, tried: [{env, outcome,
//! probe_job_id}]}`.
//!
//! The probe job's environment is the knob set, then the line's own `env`
//! (which the real job's script exports after anything `--export` set, so
//! the probe tests exactly the environment the real job will have), then
//! `TAO_PROBE_TIMEOUT` (the program's own socket timeout). For runtime
//! pyxis the probe runs in the job's own image, which must already be a
//! converted `.sqsh` (otherwise a temporary error names the fix).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use tao_core::site::SiteProfile;
use tao_core::{shell, Error, JobLine, Result};
use tao_script::{probe_result, ProbeLauncher};
use tao_store::Store;

use crate::sessions::Sessions;
use crate::stage::{Helper, Plan};
use crate::submit::Submitted;

/// The probe program shipped with the project (torch.distributed
/// all-reduce under torchrun; plain TCP sockets without torch).
pub const PROGRAM: &str = include_str!("../assets/tao_probe.py");

/// The program's name in the probe job's supporting-file bundle.
pub const PROGRAM_NAME: &str = "tao_probe.py";

/// Where the program is staged, relative to the probe's job directory.
pub const PROGRAM_REL: &str = "inputs/action-helpers/tao_probe.py";

/// Seconds Slurm may keep a probe job pending (queued) before the probe is
/// given up (`--probe-queue-wait` default).
pub const DEFAULT_QUEUE_WAIT: u64 = 300;

/// Seconds after the probe's hard timeout (plus its 10 s kill grace) that
/// the poll still waits for the job's verdict (job epilogue, shared
/// filesystem lag).
const VERDICT_SLACK: u64 = 30;

/// How the probe program is started on each node (`--probe-launcher`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LauncherChoice {
    /// `torchrun` with one process per GPU (the container or host must have PyTorch).
    Torchrun,
    /// `python3` once per node (gloo with PyTorch, plain TCP sockets without).
    Python3,
}

/// The probe flags of `tao-submit` (flattened into [`crate::Cli`]).
#[derive(Debug, Clone, clap::Args)]
pub struct ProbeArgs {
    /// Submit multi-node and multi-GPU jobs without the communication probe
    /// (a cached passing environment is still applied). For clusters where
    /// you take the risk of a job hanging in its first collective.
    #[arg(long)]
    pub skip_probe: bool,
    /// Hard timeout of one probe run in seconds (5-3600); a probe still running then counts as a hang.
    #[arg(long, default_value_t = 120, value_name = "SECS",
          value_parser = clap::value_parser!(u64).range(5..=3600))]
    pub probe_timeout: u64,
    /// Seconds a probe job may wait in the queue before the probe is given up (the job is then not submitted); 1-86400.
    #[arg(long, default_value_t = DEFAULT_QUEUE_WAIT, value_name = "SECS",
          value_parser = clap::value_parser!(u64).range(1..=86400))]
    pub probe_queue_wait: u64,
    /// How the probe starts on each node [default: torchrun for runtime pyxis, python3 otherwise].
    #[arg(long, value_enum, value_name = "HOW")]
    pub probe_launcher: Option<LauncherChoice>,
}

impl ProbeArgs {
    /// The settings these flags give.
    pub fn config(&self) -> ProbeConfig {
        ProbeConfig {
            skip: self.skip_probe,
            timeout_s: self.probe_timeout,
            queue_wait: Duration::from_secs(self.probe_queue_wait),
            launcher: self.probe_launcher,
        }
    }
}

/// Settings of the probe gate for one run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProbeConfig {
    /// `--skip-probe`: never run a probe (a cached environment is still applied).
    pub skip: bool,
    /// Hard timeout of one probe run, seconds (the probe template's `timeout_s`).
    pub timeout_s: u64,
    /// How long a probe job may stay pending before the probe is given up.
    pub queue_wait: Duration,
    /// Launcher; `None` picks by runtime ([`launcher_for`]).
    pub launcher: Option<LauncherChoice>,
}

impl Default for ProbeConfig {
    fn default() -> Self {
        ProbeConfig {
            skip: false,
            timeout_s: 120,
            queue_wait: Duration::from_secs(DEFAULT_QUEUE_WAIT),
            launcher: None,
        }
    }
}

/// One environment tried and what the probe said.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tried {
    /// The knob set (`{}` for the cluster's own environment).
    pub env: BTreeMap<String, String>,
    /// `ok`, `timeout`, `failed exit=N`, or why there was no verdict.
    pub outcome: String,
    /// The probe's Slurm job id, when it was submitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe_job_id: Option<String>,
}

/// The cache file `clusters/<cluster>/nccl.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheEntry {
    /// The environment that passed (`{}`: none needed).
    pub env: BTreeMap<String, String>,
    /// RFC 3339 UTC time of the passing probe.
    pub passed_at: String,
    /// Slurm job id of the passing probe.
    pub probe_job_id: String,
    /// Every environment tried before it passed, in order.
    #[serde(default)]
    pub tried: Vec<Tried>,
}

/// The line's `probe` field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProbeRecord {
    /// The environment the real job carries (`null` when none passed).
    pub env: Option<BTreeMap<String, String>>,
    /// Whether it came from the cluster's cache (no probe ran now).
    pub cached: bool,
    /// Whether `--skip-probe` was given.
    pub skipped: bool,
    /// Slurm job ids of the probes behind this environment.
    pub probe_job_ids: Vec<String>,
    /// What was tried in this run (empty when cached or skipped).
    pub tried: Vec<Tried>,
}

/// What one run has learned, so that N lines cost one probe.
#[derive(Debug, Default)]
pub struct ProbeState {
    /// Login host -> cluster key.
    clusters: HashMap<String, String>,
    /// Cluster key -> the error of a probe that found no environment in this run.
    failed: HashMap<String, (String, Vec<Tried>)>,
}

/// The probe request of a line: from the plan tao-render wrote into it
/// ([`tao_script::probe_request_from_plan`]); a line rendered before
/// tao-render wrote `script.container` is planned again.
fn probe_request(
    line: &JobLine,
    profile: &SiteProfile,
    id: &str,
) -> Result<tao_script::ProbeRequest> {
    tao_script::probe_request_from_plan(line, id, PROGRAM_REL)
        .or_else(|_| tao_script::probe_request_for_line(line, profile, id, PROGRAM_REL))
}

/// The cache file of `cluster` under the record store's directory:
/// `<state_dir>/clusters/<cluster>/nccl.json`.
pub fn cache_path(state_dir: &Path, cluster: &str) -> PathBuf {
    state_dir.join("clusters").join(cluster).join("nccl.json")
}

/// Read a cache file. `Ok(None)` when it does not exist.
///
/// Errors: [`Error::Io`] when it cannot be read; [`Error::Data`] when it
/// is not a cache entry (naming the file: delete it to probe again).
pub fn read_cache(path: &Path) -> Result<Option<CacheEntry>> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io(format!("reading {path:?}"), e)),
    };
    let entry: CacheEntry = serde_json::from_slice(&bytes).map_err(|e| {
        Error::Data(format!(
            "{path:?} is not an NCCL cache entry ({e}); delete it and the probe runs again"
        ))
    })?;
    check_env(&entry.env)
        .map_err(|m| Error::Data(format!("{path:?}: {m}; delete it and the probe runs again")))?;
    Ok(Some(entry))
}

/// Write a cache file atomically ([`tao_store::file::write_atomic`]: a
/// temporary file in the same directory, fsync, rename, directory fsync;
/// mode 600), creating its directory.
///
/// Errors: [`Error::Io`] naming the directory or the file.
pub fn write_cache(path: &Path, entry: &CacheEntry) -> Result<()> {
    let dir = path
        .parent()
        .ok_or_else(|| Error::Internal(format!("cache path {path:?} has no directory")))?;
    std::fs::create_dir_all(dir).map_err(|e| Error::io(format!("creating {dir:?}"), e))?;
    let text = serde_json::to_string_pretty(entry).expect("a cache entry serialises") + "\n";
    tao_store::file::write_atomic(
        path,
        text.as_bytes(),
        tao_store::file::Atomic::default(),
        &format!("writing {path:?}"),
    )
}

/// Whether `c` may appear in a knob value on the sbatch command line:
/// `[A-Za-z0-9_.:/@+^=-]` (interface lists such as `^docker0` or `=eth0`,
/// numbers, paths). No comma: `--export` separates variables with commas.
fn is_value_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "_.:/@+^=-".contains(c)
}

/// Check knob names (`[A-Z_][A-Z0-9_]*`) and values (see `--export`).
///
/// Errors: a message naming the variable and the rule.
pub fn check_env(env: &BTreeMap<String, String>) -> std::result::Result<(), String> {
    for (k, v) in env {
        let mut b = k.bytes();
        let name_ok = matches!(b.next(), Some(c) if c.is_ascii_uppercase() || c == b'_')
            && b.all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == b'_');
        if !name_ok {
            return Err(format!("NCCL knob name {k:?} must be [A-Z_][A-Z0-9_]*"));
        }
        if v.is_empty() || !v.chars().all(is_value_char) {
            return Err(format!(
                "NCCL knob {k}={v:?}: the value must be non-empty [A-Za-z0-9_.:/@+^=-] (no commas or spaces: it travels in sbatch --export)"
            ));
        }
    }
    Ok(())
}

/// The sbatch option carrying `env` to the real job:
/// `--export=ALL,NAME=value,...` (sbatch(1): `ALL` keeps the submitting
/// environment, the listed variables are added), or `None` for `{}`.
///
/// Errors: as [`check_env`], as [`Error::Config`].
pub fn export_arg(env: &BTreeMap<String, String>) -> Result<Option<String>> {
    check_env(env).map_err(Error::Config)?;
    if env.is_empty() {
        return Ok(None);
    }
    let parts: Vec<String> = env.iter().map(|(k, v)| format!("{k}={v}")).collect();
    Ok(Some(format!("--export=ALL,{}", parts.join(","))))
}

/// Text of one NCCL environment for messages: `no NCCL settings` (the
/// cluster's defaults: the first try) or `NCCL settings A=1 B=2`.
pub fn env_text(env: &BTreeMap<String, String>) -> String {
    if env.is_empty() {
        return "no NCCL settings".into();
    }
    let parts: Vec<String> = env.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!("NCCL settings {}", parts.join(" "))
}

/// The progress line of probe try `n` (1-based) of at most `of`: which
/// environment it runs with, named so a reader can find it (try 1: no NCCL
/// settings; try k > 1: the site profile's `[[nccl_knobs]]` set k-1).
pub fn probe_progress(
    line_id: &str,
    n: usize,
    of: usize,
    slurm_job_id: &str,
    env: &BTreeMap<String, String>,
    cluster: &str,
) -> String {
    let with = if n <= 1 {
        format!("{} (the cluster's defaults)", env_text(env))
    } else {
        format!(
            "{} (site profile [[nccl_knobs]] set {} of {})",
            env_text(env),
            n - 1,
            of - 1
        )
    };
    format!(
        "job {line_id:?}: communication probe try {n} of at most {of} (Slurm job {slurm_job_id}) with {with} on cluster {cluster:?}"
    )
}

/// The launcher for a line: the flag, else `torchrun` for runtime `pyxis`
/// (GPU containers ship PyTorch) and `python3` otherwise (the host's
/// Python; the program falls back to TCP sockets without PyTorch).
pub fn launcher_for(line: &JobLine, choice: Option<LauncherChoice>) -> ProbeLauncher {
    let choice = choice.unwrap_or(if line.get_str(&["runtime"]) == Some("pyxis") {
        LauncherChoice::Torchrun
    } else {
        LauncherChoice::Python3
    });
    match choice {
        LauncherChoice::Torchrun => ProbeLauncher::Torchrun,
        LauncherChoice::Python3 => ProbeLauncher::Command(vec!["python3".into(), "-u".into()]),
    }
}

/// A probe job id unique to this attempt: `<line id>-probe<N>-<hex>`,
/// shortened to a valid record id (64 characters at most). Never reused,
/// so a look-up by name after an ambiguous sbatch cannot adopt an older probe.
pub fn probe_id(line_id: &str, attempt: usize) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let tail = format!(
        "-probe{attempt}-{:06x}",
        (nanos ^ u128::from(std::process::id())) & 0xff_ffff
    );
    let keep = 64usize.saturating_sub(tail.len());
    let head: String = line_id.chars().take(keep).collect();
    format!("{}{tail}", head.trim_end_matches('-'))
}

/// The line's non-secret `env` as strings (numbers and booleans as JSON text).
fn line_env(line: &JobLine) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    if let Some(Value::Object(m)) = line.get_path(&["env"]) {
        for (k, v) in m {
            let s = match v {
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                Value::Bool(b) => b.to_string(),
                _ => continue,
            };
            out.insert(k.clone(), s);
        }
    }
    out
}

/// The probe job's plan for one environment: rendered with
/// [`tao_script::render_probe`], linted with [`tao_secrets::lint_script`],
/// the program as its one supporting file.
///
/// Errors: from rendering ([`Error::Data`]); [`Error::LintBlocked`] when
/// the rendered probe does not pass lint.
pub fn probe_plan(
    line: &JobLine,
    profile: &SiteProfile,
    id: &str,
    knobs: &BTreeMap<String, String>,
    cfg: &ProbeConfig,
) -> Result<Plan> {
    let mut req = probe_request(line, profile, id)?;
    req.timeout_s = cfg.timeout_s;
    // Wall time: the timeout, the kill grace and a minute for set-up.
    let wall = cfg.timeout_s + 10 + 60;
    req.time = format!("{:02}:{:02}:{:02}", wall / 3600, wall / 60 % 60, wall % 60);
    req.launcher = launcher_for(line, cfg.launcher);
    let mut env = knobs.clone();
    env.extend(line_env(line));
    env.insert("TAO_PROBE_TIMEOUT".into(), cfg.timeout_s.to_string());
    req.nccl_env = env;
    let script = tao_script::render_probe(&req)?;
    let lint = tao_secrets::lint_script(&script.text);
    if !lint.ok || lint.sha256 != tao_core::sha256_hex(script.text.as_bytes()) {
        let rules: Vec<&str> = lint.findings.iter().map(|f| f.rule.as_str()).collect();
        return Err(Error::LintBlocked(format!(
            "the probe script for job {:?} did not pass tao-redact lint (rules {rules:?}); check the line's `env` for secret-looking values",
            line.id().unwrap_or("")
        )));
    }
    let meta = serde_json::to_string_pretty(&json!({
        "id": id,
        "probe_for": line.id(),
        "nccl_env": knobs,
        "script": {"template": "probe", "sha256": lint.sha256},
        "lint": lint.to_value(),
    }))
    .expect("json")
        + "\n";
    let job_dir = req.job_dir.clone();
    Ok(Plan {
        id: id.to_string(),
        // Nothing is written there: the job directory itself, so staging
        // creates no results/<probe-id>.
        results_dir: job_dir.clone(),
        job_dir,
        spec: None,
        meta,
        script: script.text,
        helpers: vec![Helper {
            source: PROGRAM_NAME.into(),
            bytes: PROGRAM.as_bytes().to_vec(),
            sha256: tao_core::sha256_hex(PROGRAM.as_bytes()),
        }],
        secrets: Vec::new(),
        exclude: Vec::new(),
        exclude_given: false,
        extra_args: Vec::new(),
        known_ids: Vec::new(),
    })
}

/// Take the cluster's probe lock, `nccl.lock` beside the cache file
/// ([`tao_store::file::lock`]: `flock(2)`, blocking; released when the
/// file is dropped), creating its directory.
///
/// Errors: [`Error::Io`].
pub fn lock_cluster(cache: &Path) -> Result<std::fs::File> {
    let dir = cache
        .parent()
        .ok_or_else(|| Error::Internal(format!("cache path {cache:?} has no directory")))?;
    std::fs::create_dir_all(dir).map_err(|e| Error::io(format!("creating {dir:?}"), e))?;
    let path = dir.join("nccl.lock");
    tao_store::file::lock(&path, &format!("{path:?}"))
}

/// The cluster key of a login host: Slurm's `ClusterName`
/// (`scontrol show config`), else the login host with every character
/// outside `[A-Za-z0-9._-]` replaced by `_`. One remote command per host per run.
///
/// Errors: from the session.
pub fn cluster_key(sessions: &mut Sessions, host: &str, state: &mut ProbeState) -> Result<String> {
    if let Some(k) = state.clusters.get(host) {
        return Ok(k.clone());
    }
    let out = sessions.run_on(
        host,
        "scontrol show config 2>/dev/null | grep -i '^ClusterName'",
        None,
    )?;
    let name = out
        .stdout_text()
        .lines()
        .find_map(|l| l.split_once('=').map(|(_, v)| v.trim().to_string()))
        .filter(|n| {
            !n.is_empty()
                && n.len() <= 64
                && n.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
                && !n.starts_with('.')
        });
    let key = name.unwrap_or_else(|| {
        host.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || "._-".contains(c) {
                    c
                } else {
                    '_'
                }
            })
            .collect::<String>()
            .trim_start_matches('.')
            .to_string()
    });
    state.clusters.insert(host.to_string(), key.clone());
    Ok(key)
}

/// One poll of a probe job.
#[derive(Debug, Default, PartialEq, Eq)]
struct Poll {
    /// squeue's `STATE|REASON`, `None` once the job left squeue (or squeue failed).
    queue: Option<String>,
    /// sacct's `State|ExitCode`, asked only when squeue said nothing.
    acct: Option<String>,
    /// The verdict line without `tao: `, once written.
    verdict: Option<String>,
}

/// Parse one poll: `@@q STATE|REASON`, `@@a STATE|EXIT` and
/// `@@r tao: TAO_PROBE_RESULT=...` lines (empty values are absent).
fn parse_poll(text: &str) -> Poll {
    let mut p = Poll::default();
    for l in text.lines() {
        let (slot, rest) = if let Some(r) = l.strip_prefix("@@q ") {
            (&mut p.queue, r)
        } else if let Some(r) = l.strip_prefix("@@a ") {
            (&mut p.acct, r)
        } else if let Some(r) = l.strip_prefix("@@r ") {
            (&mut p.verdict, r.trim().trim_start_matches("tao: "))
        } else {
            continue;
        };
        let v = rest.trim();
        if !v.is_empty() && slot.is_none() {
            *slot = Some(v.to_string());
        }
    }
    p
}

/// Whether sacct's state is one a job does not leave (the job has ended).
fn ended(acct: &str) -> bool {
    let st = acct.split('|').next().unwrap_or("");
    !st.is_empty()
        && ![
            "PENDING",
            "RUNNING",
            "REQUEUED",
            "RESIZING",
            "SUSPENDED",
            "CONFIGURING",
            "COMPLETING",
        ]
        .iter()
        .any(|live| st.starts_with(live))
}

/// Whether a failure's ` exit=N` is the shell's "cannot execute" (126) or
/// "not found" (127): no NCCL knob changes that, so no knob is tried after it.
fn launcher_missing(rest: &str) -> bool {
    matches!(rest.trim(), "exit=126" | "exit=127")
}

/// The outcome text of a verdict line.
fn outcome_of(verdict: &str) -> String {
    if verdict == probe_result::OK {
        "ok".into()
    } else if verdict == probe_result::TIMEOUT {
        "timeout".into()
    } else if let Some(rest) = verdict.strip_prefix(probe_result::FAILED_PREFIX) {
        if launcher_missing(rest) {
            format!("failed{rest} (the launcher could not be run: is it on the nodes' PATH? see --probe-launcher)")
        } else {
            format!("failed{rest}")
        }
    } else {
        format!("unreadable verdict {verdict:?}")
    }
}

/// The remote command of one poll: squeue first, sacct only when squeue
/// says nothing (it failed, or the job left it), the verdict line of `log`
/// last (a job seen ended has written it). Parsed by [`parse_poll`].
fn poll_script(job_id: &str, log: &str) -> String {
    format!(
        "q=$(squeue -h -j {j} -o '%T|%r' 2>/dev/null); printf '@@q %s\\n' \"$q\"; \
         if [ -z \"$q\" ]; then a=$(sacct -n -X -P -j {j} -o State,ExitCode 2>/dev/null | head -n 1); printf '@@a %s\\n' \"$a\"; fi; \
         r=$(grep -a '^tao: TAO_PROBE_RESULT=' {f} 2>/dev/null | tail -n 1); printf '@@r %s\\n' \"$r\"",
        j = shell::quote(job_id),
        f = shell::quote(log)
    )
}

/// Wait (bounded) for a submitted probe's verdict. Pending longer than
/// `queue_wait`: cancelled, [`Error::TempFail`]. Running longer than the
/// timeout plus grace: cancelled, outcome `timeout`.
///
/// Errors: [`Error::TempFail`] for a probe that never started; from the session.
fn wait_verdict(
    sessions: &mut Sessions,
    host: &str,
    plan: &Plan,
    job_id: &str,
    cfg: &ProbeConfig,
) -> Result<String> {
    let log = format!("{}/main.out", plan.log_dir(job_id));
    let script = poll_script(job_id, &log);
    let submitted = Instant::now();
    let mut started: Option<Instant> = None;
    let run_limit = Duration::from_secs(cfg.timeout_s + 10 + VERDICT_SLACK);
    // Whatever squeue and sacct say (a busy controller, accounting lag),
    // the poll ends by then.
    let hard_limit = cfg.queue_wait + run_limit;
    let mut ended_polls = 0;
    loop {
        let out = sessions.run_on(host, &script, None)?;
        let poll = parse_poll(&out.stdout_text());
        if let Some(v) = &poll.verdict {
            return Ok(outcome_of(v));
        }
        if submitted.elapsed() > hard_limit {
            cancel(sessions, host, job_id);
            return Ok(format!(
                "no verdict within {} s (squeue {:?}, sacct {:?}; cancelled; see {log})",
                hard_limit.as_secs(),
                poll.queue.as_deref().unwrap_or(""),
                poll.acct.as_deref().unwrap_or("")
            ));
        }
        match (poll.queue.as_deref(), poll.acct.as_deref()) {
            (Some(s), _) if s.starts_with("PENDING") || s.starts_with("CONFIGURING") => {
                if submitted.elapsed() > cfg.queue_wait {
                    cancel(sessions, host, job_id);
                    return Err(Error::TempFail(format!(
                        "probe job {job_id} was still queued after {} s ({s}); it was cancelled and the job was not submitted: submit again later, raise --probe-queue-wait, or use --skip-probe",
                        cfg.queue_wait.as_secs()
                    )));
                }
            }
            (Some(s), _) => {
                let t = *started.get_or_insert_with(Instant::now);
                if t.elapsed() > run_limit {
                    cancel(sessions, host, job_id);
                    return Ok(format!(
                        "timeout (no verdict after {} s, state {s}; cancelled)",
                        run_limit.as_secs()
                    ));
                }
            }
            (None, Some(a)) if ended(a) => {
                // Ended without a verdict line: give the shared filesystem
                // a few polls before concluding.
                ended_polls += 1;
                if ended_polls >= 5 {
                    return Ok(format!("no verdict (Slurm state {a}; see {log})"));
                }
            }
            // squeue failed or sacct lags: poll again (bounded above).
            (None, _) => {}
        }
        std::thread::sleep(Duration::from_millis(if started.is_some() {
            1000
        } else {
            500
        }));
    }
}

fn cancel(sessions: &mut Sessions, host: &str, job_id: &str) {
    let _ = sessions.run_on(host, &format!("scancel {}", shell::quote(job_id)), None);
}

/// The gate, for one line about to be submitted. Sets the line's `probe`
/// field (also when no environment passed) and, when the environment is
/// not empty, appends [`export_arg`] to `plan.extra_args`.
///
/// `submit` stages and submits a plan (tao-submit's own never-twice path).
///
/// Errors: [`Error::Data`] when no environment passed (the message lists
/// each environment and its outcome; the real job is not submitted);
/// [`Error::TempFail`] for a probe that did not start in time or a pyxis
/// image that is not converted yet;
/// [`Error::Config`] for a bad profile or knob; session errors.
#[allow(clippy::too_many_arguments)]
pub fn gate(
    sessions: &mut Sessions,
    line: &mut JobLine,
    plan: &mut Plan,
    store: std::result::Result<&Store, &Error>,
    profile: std::result::Result<&SiteProfile, &String>,
    cfg: &ProbeConfig,
    state: &mut ProbeState,
    mut submit: impl FnMut(&mut Sessions, &Plan) -> Result<Submitted>,
) -> Result<()> {
    // The shape as given, for lines the profile cannot plan (they are
    // submitted as before when they need no probe).
    let num = |k: &str| {
        line.get_path(&["resources", k])
            .and_then(Value::as_u64)
            .unwrap_or(0)
    };
    let raw = num("nodes") > 1 || num("gpus_per_node") >= 2;
    // The plan tao-render wrote (script.resources) decides; a line
    // without one is planned here as before.
    let needs = match (line.plan(), profile) {
        (Some(plan), _) => plan.needs_probe(),
        (None, Ok(p)) => tao_script::needs_probe(line, p).unwrap_or(raw),
        (None, Err(_)) => raw,
    };
    if !needs {
        return Ok(());
    }
    let profile = profile.map_err(|m| Error::Config(m.clone()))?;
    let store =
        store.map_err(|e| Error::Config(format!("cannot open the state directory: {e}")))?;
    let host = sessions.primary()?.login_host().to_string();
    let cluster = cluster_key(sessions, &host, state)?;
    let path = cache_path(store.dir(), &cluster);
    let finish = |line: &mut JobLine, plan: &mut Plan, rec: &ProbeRecord| -> Result<()> {
        if let Some(env) = &rec.env {
            if let Some(arg) = export_arg(env)? {
                plan.extra_args.push(arg);
            }
        }
        line.set_path(&["probe"], serde_json::to_value(rec).expect("json"));
        Ok(())
    };
    if let Some(entry) = read_cache(&path)? {
        let rec = ProbeRecord {
            env: Some(entry.env),
            cached: true,
            skipped: cfg.skip,
            probe_job_ids: vec![entry.probe_job_id],
            tried: Vec::new(),
        };
        return finish(line, plan, &rec);
    }
    if cfg.skip {
        let rec = ProbeRecord {
            env: Some(BTreeMap::new()),
            cached: false,
            skipped: true,
            probe_job_ids: Vec::new(),
            tried: Vec::new(),
        };
        return finish(line, plan, &rec);
    }
    if let Some((msg, tried)) = state.failed.get(&cluster) {
        let rec = ProbeRecord {
            env: None,
            cached: false,
            skipped: false,
            probe_job_ids: tried
                .iter()
                .filter_map(|t| t.probe_job_id.clone())
                .collect(),
            tried: tried.clone(),
        };
        line.set_path(&["probe"], serde_json::to_value(&rec).expect("json"));
        return Err(Error::Data(format!("{msg} (probed earlier in this run)")));
    }
    let line_id = line.require_str(&["id"])?.to_string();
    // One probe per cluster at a time across concurrent runs (cron and a
    // user): the later run waits, then finds the earlier one's result.
    let _lock = lock_cluster(&path)?;
    if let Some(entry) = read_cache(&path)? {
        let rec = ProbeRecord {
            env: Some(entry.env),
            cached: true,
            skipped: false,
            probe_job_ids: vec![entry.probe_job_id],
            tried: Vec::new(),
        };
        return finish(line, plan, &rec);
    }
    // Runtime pyxis: the probe runs in the job's own image, which must be
    // a squashfs already (a conversion still to come cannot be probed).
    if let Some(img) = probe_request(line, profile, &line_id)?.image {
        let found = crate::image::check(sessions, &host, &[&img])?;
        if found.get(img.as_str()) != Some(&crate::image::Found::Squashfs) {
            return Err(Error::TempFail(format!(
                "job {line_id:?} must pass the communication probe first, which runs in its image, but {img:?} is not a converted .sqsh yet; convert the image first (any single-node job with it starts the conversion), then submit again, or use --skip-probe"
            )));
        }
    }
    let mut envs: Vec<BTreeMap<String, String>> = vec![BTreeMap::new()];
    for k in &profile.nccl_knobs {
        check_env(&k.env)
            .map_err(|m| Error::Config(format!("site profile {:?}: {m}", profile.name)))?;
        envs.push(k.env.clone());
    }
    let mut tried: Vec<Tried> = Vec::new();
    let mut logs: Vec<String> = Vec::new();
    for (i, env) in envs.iter().enumerate() {
        let id = probe_id(&line_id, i + 1);
        let pplan = probe_plan(line, profile, &id, env, cfg)?;
        let s = submit(sessions, &pplan)?;
        logs.push(pplan.log_dir(&s.job_id));
        tao_core::cli::warn(
            crate::submit::TOOL,
            &probe_progress(&line_id, i + 1, envs.len(), &s.job_id, env, &cluster),
        );
        let outcome = wait_verdict(sessions, &s.login_host, &pplan, &s.job_id, cfg)?;
        tried.push(Tried {
            env: env.clone(),
            outcome: outcome.clone(),
            probe_job_id: Some(s.job_id.clone()),
        });
        if outcome == "ok" {
            let entry = CacheEntry {
                env: env.clone(),
                passed_at: tao_core::time::now_rfc3339(),
                probe_job_id: s.job_id.clone(),
                tried: tried.clone(),
            };
            write_cache(&path, &entry)?;
            let rec = ProbeRecord {
                env: Some(env.clone()),
                cached: false,
                skipped: false,
                probe_job_ids: tried
                    .iter()
                    .filter_map(|t| t.probe_job_id.clone())
                    .collect(),
                tried,
            };
            return finish(line, plan, &rec);
        }
        if outcome.contains("the launcher could not be run") {
            break;
        }
    }
    let list: Vec<String> = tried
        .iter()
        .zip(&logs)
        .map(|(t, log)| {
            format!(
                "{} -> {} (probe job {}, logs {log}/)",
                env_text(&t.env),
                t.outcome,
                t.probe_job_id.as_deref().unwrap_or("-")
            )
        })
        .collect();
    let msg = format!(
        "the communication probe found no working environment on cluster {cluster:?}, so job {line_id:?} was not submitted; tried: {}; check the nodes' network (the probes' main.out and main.err), add knob sets to the site profile's [[nccl_knobs]], or submit with --skip-probe at your own risk",
        list.join("; ")
    );
    let rec = ProbeRecord {
        env: None,
        cached: false,
        skipped: false,
        probe_job_ids: tried
            .iter()
            .filter_map(|t| t.probe_job_id.clone())
            .collect(),
        tried: tried.clone(),
    };
    line.set_path(&["probe"], serde_json::to_value(&rec).expect("json"));
    state.failed.insert(cluster, (msg.clone(), tried));
    Err(Error::Data(msg))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn progress_names_the_nccl_settings_never_an_empty_map() {
        let first = probe_progress("tao-1", 1, 3, "101", &env(&[]), "c1");
        assert_eq!(
            first,
            "job \"tao-1\": communication probe try 1 of at most 3 (Slurm job 101) with no NCCL settings (the cluster's defaults) on cluster \"c1\""
        );
        assert!(!first.contains("{}"));
        let second = probe_progress(
            "tao-1",
            2,
            3,
            "102",
            &env(&[("NCCL_P2P_DISABLE", "1")]),
            "c1",
        );
        assert!(
            second.contains(
                "with NCCL settings NCCL_P2P_DISABLE=1 (site profile [[nccl_knobs]] set 1 of 2)"
            ),
            "{second}"
        );
    }

    #[test]
    fn export_arg_lists_knobs_and_refuses_unsafe_values() {
        assert_eq!(export_arg(&env(&[])).unwrap(), None);
        assert_eq!(
            export_arg(&env(&[
                ("NCCL_P2P_DISABLE", "1"),
                ("NCCL_SOCKET_IFNAME", "^docker0")
            ]))
            .unwrap()
            .as_deref(),
            Some("--export=ALL,NCCL_P2P_DISABLE=1,NCCL_SOCKET_IFNAME=^docker0")
        );
        for (k, v) in [
            ("NCCL_SOCKET_IFNAME", "eth0,lo"),
            ("NCCL_X", "a b"),
            ("NCCL_X", "$(id)"),
            ("NCCL_X", ""),
            ("nccl_x", "1"),
            ("1X", "1"),
            ("NCCL_X", "a'b"),
        ] {
            let e = export_arg(&env(&[(k, v)])).unwrap_err();
            assert_eq!(e.code(), 78, "{k}={v}: {e}");
        }
    }

    #[test]
    fn probe_ids_are_valid_unique_and_bounded() {
        let long = "a".repeat(64);
        let a = probe_id(&long, 1);
        assert!(tao_core::id::is_valid(&a), "{a}");
        assert!(a.len() <= 64);
        let b = probe_id("tao-20261129-k3f9x2", 2);
        assert!(b.starts_with("tao-20261129-k3f9x2-probe2-"), "{b}");
        assert!(tao_core::id::is_valid(&b));
    }

    #[test]
    fn cache_round_trip_is_atomic_and_checked() {
        let dir = tempfile::tempdir().unwrap();
        let p = cache_path(dir.path(), "tao-local");
        assert_eq!(read_cache(&p).unwrap(), None);
        let e = CacheEntry {
            env: env(&[("NCCL_P2P_DISABLE", "1")]),
            passed_at: "2026-11-29T20:00:00.000000Z".into(),
            probe_job_id: "17".into(),
            tried: vec![Tried {
                env: env(&[]),
                outcome: "timeout".into(),
                probe_job_id: Some("16".into()),
            }],
        };
        write_cache(&p, &e).unwrap();
        assert_eq!(read_cache(&p).unwrap(), Some(e));
        let left: Vec<_> = std::fs::read_dir(p.parent().unwrap()).unwrap().collect();
        assert_eq!(left.len(), 1, "no temporary file left behind");
        let held = lock_cluster(&p).unwrap();
        let again = std::fs::File::open(p.parent().unwrap().join("nccl.lock")).unwrap();
        assert!(
            fs4::FileExt::try_lock(&again).is_err(),
            "the lock is exclusive while held"
        );
        drop(held);
        fs4::FileExt::try_lock(&again).unwrap();
        std::fs::write(
            &p,
            r#"{"env":{"NCCL_X":"a b"},"passed_at":"x","probe_job_id":"1"}"#,
        )
        .unwrap();
        let err = read_cache(&p).unwrap_err();
        assert!(err.to_string().contains("delete it"), "{err}");
        std::fs::write(&p, "{").unwrap();
        assert!(read_cache(&p).is_err());
    }

    /// The poll command run by sh against fake squeue and sacct.
    #[test]
    fn poll_script_runs_in_sh() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        for (name, var) in [("squeue", "FAKE_Q"), ("sacct", "FAKE_A")] {
            let p = bin.join(name);
            std::fs::write(
                &p,
                format!("#!/bin/sh\n[ -n \"${var}\" ] && echo \"${var}\"\nexit 0\n"),
            )
            .unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let log = dir.path().join("it's main.out");
        let run = |q: &str, a: &str| {
            let out = std::process::Command::new("sh")
                .arg("-c")
                .arg(poll_script("42", log.to_str().unwrap()))
                .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
                .env("FAKE_Q", q)
                .env("FAKE_A", a)
                .output()
                .unwrap();
            parse_poll(&String::from_utf8(out.stdout).unwrap())
        };
        let p = run("RUNNING|None", "COMPLETED|0:0");
        assert_eq!(p.queue.as_deref(), Some("RUNNING|None"));
        assert_eq!(p.acct, None, "sacct only when squeue is silent");
        std::fs::write(
            &log,
            "tao: step probe: exit 124\ntao: TAO_PROBE_RESULT=timeout\n",
        )
        .unwrap();
        let p = run("", "FAILED|124:0");
        assert_eq!(p.acct.as_deref(), Some("FAILED|124:0"));
        assert_eq!(p.verdict.as_deref(), Some(probe_result::TIMEOUT));
    }

    #[test]
    fn polls_and_verdicts() {
        assert_eq!(
            parse_poll("@@q RUNNING|None\n@@r \n"),
            Poll {
                queue: Some("RUNNING|None".into()),
                ..Poll::default()
            }
        );
        assert_eq!(
            parse_poll("@@q \n@@a COMPLETED|0:0\n@@r tao: TAO_PROBE_RESULT=ok\n"),
            Poll {
                queue: None,
                acct: Some("COMPLETED|0:0".into()),
                verdict: Some("TAO_PROBE_RESULT=ok".into()),
            }
        );
        assert!(ended("FAILED|124:0"));
        assert!(ended("CANCELLED by 1001|0:15"));
        assert!(!ended("RUNNING|0:0"));
        assert!(!ended(""));
        assert_eq!(outcome_of(probe_result::OK), "ok");
        assert_eq!(outcome_of(probe_result::TIMEOUT), "timeout");
        assert_eq!(
            outcome_of("TAO_PROBE_RESULT=failed exit=3"),
            "failed exit=3"
        );
        assert!(outcome_of("TAO_PROBE_RESULT=failed exit=127").contains("--probe-launcher"));
        assert!(!launcher_missing(" exit=1"));
    }

    fn line(v: Value) -> JobLine {
        JobLine::parse(&v.to_string(), 1).unwrap()
    }

    fn multi_line() -> JobLine {
        line(json!({
            "id": "tao-20261129-abcdef", "runtime": "none", "command": "dino train -e {config_path}",
            "resources": {"nodes": 2, "gpus_per_node": 2, "cpus_per_task": 2, "time": "01:00:00",
                          "partition": "gpu", "account": null, "exclusive": false, "requeue": true, "exclude": []},
            "storage": {"tier": "lustre", "base_dir": "/b", "job_dir": "/b/jobs/tao-20261129-abcdef",
                        "results_dir": "/b/results/tao-20261129-abcdef"},
            "env": {"TAO_PROBE_TEST_HANG_UNLESS": "NCCL_P2P_DISABLE", "NCCL_DEBUG": "INFO"},
            "spec": {"name": "spec.yaml", "text": "train: {}\n"},
        }))
    }

    #[test]
    fn probe_plan_is_rendered_linted_and_carries_the_program() {
        let profile = SiteProfile::load(Some("local")).unwrap();
        let l = multi_line();
        assert!(tao_script::needs_probe(&l, &profile).unwrap());
        let id = probe_id(l.id().unwrap(), 1);
        let cfg = ProbeConfig {
            timeout_s: 15,
            ..Default::default()
        };
        let p = probe_plan(&l, &profile, &id, &env(&[("NCCL_P2P_DISABLE", "1")]), &cfg).unwrap();
        assert_eq!(p.job_dir, format!("/b/jobs/{id}"));
        assert!(p.script.contains("#SBATCH --nodes=2"), "{}", p.script);
        assert!(p.script.contains("#SBATCH --partition=gpu"));
        assert!(p.script.contains("#SBATCH --no-requeue"));
        assert!(
            p.script.contains("export 'NCCL_P2P_DISABLE'='1'"),
            "{}",
            p.script
        );
        assert!(p
            .script
            .contains("export 'TAO_PROBE_TEST_HANG_UNLESS'='NCCL_P2P_DISABLE'"));
        assert!(p.script.contains("export 'TAO_PROBE_TIMEOUT'='15'"));
        assert!(p.script.contains(&format!("/b/jobs/{id}/{PROGRAM_REL}")));
        assert!(
            p.script.contains("'python3' '-u'"),
            "runtime none starts python3: {}",
            p.script
        );
        assert_eq!(p.helpers.len(), 1);
        assert_eq!(p.helpers[0].bytes, PROGRAM.as_bytes());
        assert!(tao_secrets::lint_script(&p.script).ok);
        let one = line(json!({
            "id": "tao-x", "runtime": "none", "command": "true",
            "resources": {"nodes": 1, "gpus_per_node": 1, "cpus_per_task": 1, "time": "01:00:00",
                          "partition": "gpu", "account": null, "exclusive": false, "requeue": true, "exclude": []},
            "storage": {"tier": "lustre", "base_dir": "/b", "job_dir": "/b/jobs/tao-x", "results_dir": "/b/results/tao-x"},
        }));
        assert!(
            !tao_script::needs_probe(&one, &profile).unwrap(),
            "one node, one GPU: no probe"
        );
        let mut pyxis = multi_line();
        pyxis.set_path(&["runtime"], json!("pyxis"));
        assert_eq!(launcher_for(&pyxis, None), ProbeLauncher::Torchrun);
        assert_eq!(
            launcher_for(&pyxis, Some(LauncherChoice::Python3)),
            ProbeLauncher::Command(vec!["python3".into(), "-u".into()])
        );
    }

    #[test]
    fn profiles_knobs_pass_the_export_charset() {
        for name in SiteProfile::builtin_names() {
            let p = SiteProfile::load(Some(name)).unwrap();
            assert!(!p.nccl_knobs.is_empty(), "{name}");
            for k in &p.nccl_knobs {
                check_env(&k.env).unwrap();
            }
        }
    }
}
