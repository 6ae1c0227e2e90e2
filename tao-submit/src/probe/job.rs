//! One probe job: its id, its plan (rendered and linted in-process, the
//! program as its one supporting file), and the bounded poll for its
//! verdict.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::json;
use tao_core::site::SiteProfile;
use tao_core::{shell, Error, JobLine, Result};
use tao_script::{probe_result, ProbeLauncher};

use super::config::{LauncherChoice, ProbeConfig, PROGRAM, PROGRAM_NAME, PROGRAM_REL};
use super::env::line_env;
use crate::sessions::Sessions;
use crate::stage::{Helper, Plan};

/// Seconds after the probe's hard timeout (plus its 10 s kill grace) that
/// the poll still waits for the job's verdict (job epilogue, shared
/// filesystem lag).
pub(super) const VERDICT_SLACK: u64 = 30;

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

/// The probe request of a line: from the plan tao-render wrote into it
/// ([`tao_script::probe_request_from_plan`]); a line rendered before
/// tao-render wrote `script.container` is planned again.
pub(crate) fn probe_request(
    line: &JobLine,
    profile: &SiteProfile,
    id: &str,
) -> Result<tao_script::ProbeRequest> {
    tao_script::probe_request_from_plan(line, id, PROGRAM_REL)
        .or_else(|_| tao_script::probe_request_for_line(line, profile, id, PROGRAM_REL))
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

/// One poll of a probe job.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Poll {
    /// squeue's `STATE|REASON`, `None` once the job left squeue (or squeue failed).
    pub(super) queue: Option<String>,
    /// sacct's `State|ExitCode`, asked only when squeue said nothing.
    pub(super) acct: Option<String>,
    /// The verdict line without `tao: `, once written.
    pub(super) verdict: Option<String>,
}

/// Parse one poll: `@@q STATE|REASON`, `@@a STATE|EXIT` and
/// `@@r tao: TAO_PROBE_RESULT=...` lines (empty values are absent).
pub(super) fn parse_poll(text: &str) -> Poll {
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
pub(super) fn ended(acct: &str) -> bool {
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
pub(super) fn launcher_missing(rest: &str) -> bool {
    matches!(rest.trim(), "exit=126" | "exit=127")
}

/// The outcome text of a verdict line.
pub(super) fn outcome_of(verdict: &str) -> String {
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
pub(super) fn poll_script(job_id: &str, log: &str) -> String {
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
pub(super) fn wait_verdict(
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

pub(super) fn cancel(sessions: &mut Sessions, host: &str, job_id: &str) {
    let _ = sessions.run_on(host, &format!("scancel {}", shell::quote(job_id)), None);
}
