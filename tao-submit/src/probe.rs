//! The communication probe gate (docs/design.md, "Multi-node"): a job
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

use serde::Serialize;
use serde_json::Value;
use tao_core::site::SiteProfile;
use tao_core::{Error, JobLine, Result};
use tao_store::Store;

use crate::sessions::Sessions;
use crate::stage::Plan;
use crate::submit::outcome::Submitted;

mod cache;
mod config;
mod env;
mod job;

pub use cache::{cache_path, lock_cluster, read_cache, write_cache, CacheEntry, Tried};
pub use config::{
    LauncherChoice, ProbeArgs, ProbeConfig, DEFAULT_QUEUE_WAIT, PROGRAM, PROGRAM_NAME, PROGRAM_REL,
};
pub use env::{check_env, env_text, export_arg, probe_progress};
use job::wait_verdict;
pub use job::{launcher_for, probe_id, probe_plan};

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

impl ProbeRecord {
    /// The record of a cached environment (no probe ran now).
    fn cached(entry: CacheEntry, skipped: bool) -> Self {
        ProbeRecord {
            env: Some(entry.env),
            cached: true,
            skipped,
            probe_job_ids: vec![entry.probe_job_id],
            tried: Vec::new(),
        }
    }

    /// The record of probes run in this run: `env` is the one that passed
    /// (`None`: none did); the probe job ids are those of `tried`.
    fn probed(env: Option<BTreeMap<String, String>>, tried: Vec<Tried>) -> Self {
        ProbeRecord {
            env,
            cached: false,
            skipped: false,
            probe_job_ids: tried
                .iter()
                .filter_map(|t| t.probe_job_id.clone())
                .collect(),
            tried,
        }
    }
}

/// What one run has learned, so that N lines cost one probe.
#[derive(Debug, Default)]
pub struct ProbeState {
    /// Login host -> cluster key.
    clusters: HashMap<String, String>,
    /// Cluster key -> the error of a probe that found no environment in this run.
    failed: HashMap<String, (String, Vec<Tried>)>,
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
        return finish(line, plan, &ProbeRecord::cached(entry, cfg.skip));
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
        let rec = ProbeRecord::probed(None, tried.clone());
        line.set_path(&["probe"], serde_json::to_value(&rec).expect("json"));
        return Err(Error::Data(format!("{msg} (probed earlier in this run)")));
    }
    let line_id = line.require_str(&["id"])?.to_string();
    // One probe per cluster at a time across concurrent runs (cron and a
    // user): the later run waits, then finds the earlier one's result.
    let _lock = lock_cluster(&path)?;
    if let Some(entry) = read_cache(&path)? {
        return finish(line, plan, &ProbeRecord::cached(entry, false));
    }
    // Runtime pyxis: the probe runs in the job's own image, which must be
    // a squashfs already (a conversion still to come cannot be probed).
    if let Some(img) = job::probe_request(line, profile, &line_id)?.image {
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
        // The first try is the normal path: a progress note. A later try
        // means the one before failed: a warning.
        let said = probe_progress(&line_id, i + 1, envs.len(), &s.job_id, env, &cluster);
        if i == 0 {
            tao_core::cli::progress(crate::TOOL, &said);
        } else {
            tao_core::cli::warn(crate::TOOL, &said);
        }
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
            return finish(line, plan, &ProbeRecord::probed(Some(env.clone()), tried));
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
    let rec = ProbeRecord::probed(None, tried.clone());
    line.set_path(&["probe"], serde_json::to_value(&rec).expect("json"));
    state.failed.insert(cluster, (msg.clone(), tried));
    Err(Error::Data(msg))
}

#[cfg(test)]
mod tests {
    use super::job::{ended, launcher_missing, outcome_of, parse_poll, poll_script, Poll};
    use super::*;
    use serde_json::json;
    use tao_script::{probe_result, ProbeLauncher};

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
