//! Reconciliation: the jobs that already carry a line's name (the Slurm
//! job name is the record id). One is adopted (its log directory made,
//! released if held); of several, the oldest live one is kept and the
//! extras cancelled, with a warning; after an ambiguous sbatch the name is
//! looked up on every login host until it shows or `--reconcile-wait`
//! passes.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use tao_core::{shell, Error, Result};

use super::outcome::Submitted;
use crate::sched::{self, Found};
use crate::sessions::Sessions;
use crate::stage::Plan;
use crate::TOOL;

/// squeue + sacct by exact job name on one host (with `-M cluster` for
/// jobs whose script sends them to another cluster).
pub(super) fn query_by_name(
    sessions: &mut Sessions,
    host: &str,
    names: &[&str],
    since: &str,
    cluster: Option<&str>,
) -> Result<BTreeMap<String, Found>> {
    let user = sessions.host(host)?.user().to_string();
    let out = sessions.run_on(
        host,
        &sched::by_name_script(&user, names, since, cluster),
        None,
    )?;
    let mut found = sched::parse_by_name(&out.stdout_text(), names, host)?;
    for f in found.values_mut() {
        f.cluster = cluster.map(str::to_string);
    }
    Ok(found)
}

/// The cluster the plan's script sends its job to (`#SBATCH --clusters`).
pub(super) fn plan_cluster(plan: &Plan) -> Option<String> {
    sched::script_cluster(&plan.script)
}

/// ` -M cluster` for a job found on another cluster, else nothing.
pub(super) fn m_flag(cluster: Option<&str>) -> String {
    cluster
        .map(|c| format!("-M {} ", shell::quote(c)))
        .unwrap_or_default()
}

/// One job already carries this name: adopt it (logs dir, release if held).
/// Several (a lost sbatch reply that did reach the scheduler, then a second
/// submission): keep one, cancel the extras and say so; see [`keep_one`].
pub(super) fn settle_found(
    sessions: &mut Sessions,
    plan: &Plan,
    mut found: Vec<Found>,
) -> Result<Submitted> {
    found.sort_by(|a, b| a.job_id.cmp(&b.job_id));
    found.dedup_by(|a, b| a.job_id == b.job_id);
    if found.len() > 1 {
        let (kept, extras) = keep_one(std::mem::take(&mut found));
        let live: Vec<String> = extras
            .iter()
            .filter(|f| !sched::is_end_state(&f.state))
            .map(|f| f.job_id.clone())
            .collect();
        let all: Vec<String> = extras.iter().map(|f| f.job_id.clone()).collect();
        let how = if live.is_empty() {
            "the others had already ended".to_string()
        } else {
            let cmd = format!(
                "scancel {}{}",
                m_flag(kept.cluster.as_deref()),
                shell::join(&live)
            );
            match sessions.run_on(&kept.login_host, &cmd, None) {
                Ok(o) if o.status == 0 => format!("cancelled the extra {}", live.join(", ")),
                Ok(o) => {
                    return Err(Error::Unavailable(format!(
                        "several Slurm jobs are named {:?} ({}, {}); cancelling the extra {} failed ({}): cancel them by hand (scancel {}) and run tao-submit again",
                        plan.id, kept.job_id, all.join(", "), live.join(", "), o.stderr_line(), live.join(" ")
                    )))
                }
                Err(e) => {
                    return Err(Error::Unavailable(format!(
                        "several Slurm jobs are named {:?} ({}, {}); cancelling the extra {} failed ({e}): cancel them by hand (scancel {}) and run tao-submit again",
                        plan.id, kept.job_id, all.join(", "), live.join(", "), live.join(" ")
                    )))
                }
            }
        };
        tao_core::cli::warn(
            TOOL,
            &format!(
                "job {:?}: several Slurm jobs carry its name ({}, {}); kept {} and {how}",
                plan.id,
                kept.job_id,
                all.join(", "),
                kept.job_id
            ),
        );
        // The kept job sources the sidecar when it runs; when even the kept
        // one has ended, no job of the name will, and it goes.
        if sched::is_end_state(&kept.state) {
            drop_sidecar(sessions, &kept.login_host, plan);
        }
        found.push(kept);
    }
    let f = found
        .pop()
        .ok_or_else(|| Error::Internal("settle_found with no job".into()))?;
    adopt(sessions, plan, &f)?;
    Ok(Submitted {
        job_id: f.job_id.clone(),
        cluster: f.cluster.clone(),
        login_host: f.login_host.clone(),
        adopted: Some(f.state.clone()),
        waits_for: None,
    })
}

/// Which of several jobs of one name to keep: the oldest (lowest job id)
/// that has not ended, else the oldest. Returns it and the others (the
/// extras), in job id order. `found` must not be empty.
pub(super) fn keep_one(mut found: Vec<Found>) -> (Found, Vec<Found>) {
    found.sort_by(|a, b| {
        let num = |f: &Found| f.job_id.parse::<u64>().unwrap_or(u64::MAX);
        num(a).cmp(&num(b)).then_with(|| a.job_id.cmp(&b.job_id))
    });
    let i = found
        .iter()
        .position(|f| !sched::is_end_state(&f.state))
        .unwrap_or(0);
    let kept = found.remove(i);
    (kept, found)
}

/// Remove the secrets sidecar of a job that will not run it (sbatch
/// refused, no job after every attempt, every job of the name ended or
/// cancelled):
/// best effort, a warning naming the file when it stays.
pub(super) fn drop_sidecar(sessions: &mut Sessions, host: &str, plan: &Plan) {
    if plan.secrets.is_empty() {
        return;
    }
    let cmd = shell::remove_sidecars_command(&[&plan.job_dir]);
    match sessions.run_on(host, &cmd, None) {
        Ok(o) if !o.stdout_text().contains("@@tao-sidecar-left") => {}
        Ok(_) | Err(_) => tao_core::cli::warn(
            TOOL,
            &format!(
                "job {:?} will not run but its secrets sidecar {:?} could not be removed; remove it by hand",
                plan.id,
                shell::sidecar_path(&plan.job_dir)
            ),
        ),
    }
}

/// Marker printed by [`unstage_command`] when it removed the staging.
const UNSTAGED: &str = "@@tao-unstaged";

/// The remote command that removes what staging wrote for `plan` (the
/// `specs`, `env`, `meta`, `sbatch` and `inputs` folders, then the empty
/// `slurm-logs`, job and results folders), but only when `slurm-logs/`
/// holds nothing: a log folder means some job of this id was submitted
/// once, and its files are never touched. Prints [`UNSTAGED`] when done.
pub(super) fn unstage_command(plan: &Plan) -> String {
    let l = tao_core::model::Layout::LOGS;
    format!(
        "d={d}; if [ -z \"$(ls -A -- \"$d/{l}\" 2>/dev/null)\" ]; then \
         rm -rf -- \"$d/specs\" \"$d/env\" \"$d/meta\" \"$d/sbatch\" \"$d/inputs\" && \
         {{ rmdir -- \"$d/{l}\" 2>/dev/null; rmdir -- \"$d\" {r} 2>/dev/null; echo '{UNSTAGED}'; }}; fi",
        d = shell::quote(&plan.job_dir),
        r = shell::quote(&plan.results_dir),
    )
}

/// After sbatch refused a job (and no job of its name exists): remove what
/// staging wrote ([`unstage_command`]), secrets sidecar included, so
/// nothing is left on shared storage for a job that never ran. Returns the
/// sentence for the error: removed, or where it was left and that a retry
/// of the same record reuses it (staging overwrites the same files; a
/// different bundle is refused).
pub(super) fn drop_staged(sessions: &mut Sessions, host: &str, plan: &Plan) -> String {
    match sessions.run_on(host, &unstage_command(plan), None) {
        Ok(o) if o.stdout_text().contains(UNSTAGED) => {
            format!("the files it staged in {:?} were removed", plan.job_dir)
        }
        _ => {
            drop_sidecar(sessions, host, plan);
            format!(
                "its staged files were left in {:?} (a retry of this record reuses them)",
                plan.job_dir
            )
        }
    }
}

/// Make the log directory of an adopted job exist, then release it if it
/// is still held by us.
pub(super) fn adopt(sessions: &mut Sessions, plan: &Plan, f: &Found) -> Result<()> {
    let mut script = format!("mkdir -p -- {}", shell::quote(&plan.log_dir(&f.job_id)));
    if f.is_held() {
        script.push_str(&format!(
            " && scontrol {}release {}",
            m_flag(f.cluster.as_deref()),
            shell::quote(&f.job_id)
        ));
    }
    let out = sessions.run_on(&f.login_host, &script, None)?;
    if out.status != 0 {
        return Err(Error::TempFail(format!(
            "adopting Slurm job {} of {:?}: {}; run tao-submit again",
            f.job_id,
            plan.id,
            out.stderr_line()
        )));
    }
    Ok(())
}

/// Jobs named `plan.id` on every login host that answers (union by id).
pub(super) fn lookup_everywhere(
    sessions: &mut Sessions,
    plan: &Plan,
    since: &str,
) -> Result<Vec<Found>> {
    let mut all: BTreeMap<String, Found> = BTreeMap::new();
    let mut answered = 0;
    let mut last_err = None;
    for host in sessions.hosts() {
        match query_by_name(
            sessions,
            &host,
            &[plan.id.as_str()],
            since,
            plan_cluster(plan).as_deref(),
        ) {
            Ok(m) => {
                answered += 1;
                for (k, v) in m {
                    if !plan.known_ids.contains(&k) {
                        all.entry(k).or_insert(v);
                    }
                }
            }
            Err(e) => last_err = Some(e),
        }
    }
    if answered == 0 {
        let e = last_err.unwrap_or_else(|| Error::Unavailable("no login host".into()));
        return Err(Error::Unavailable(format!(
            "job {:?}: cannot look it up by name on any login host ({e}); nothing was resubmitted: run tao-submit again when the cluster answers",
            plan.id
        )));
    }
    Ok(all.into_values().collect())
}

/// Look the job up by name until it shows or `wait` passes (polled: squeue
/// knows a job as soon as sbatch returns; sacct may lag).
pub(super) fn reconcile(
    sessions: &mut Sessions,
    plan: &Plan,
    since: &str,
    wait: Duration,
) -> Result<Vec<Found>> {
    let deadline = Instant::now() + wait;
    loop {
        let found = lookup_everywhere(sessions, plan, since)?;
        let now = Instant::now();
        if !found.is_empty() || now >= deadline {
            return Ok(found);
        }
        std::thread::sleep((deadline - now).min(Duration::from_millis(500)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keep_one_keeps_the_oldest_live_job_and_returns_the_extras() {
        let f = |id: &str, st: &str| Found {
            job_id: id.into(),
            name: "tao-a1".into(),
            state: st.into(),
            reason: None,
            login_host: "h".into(),
            cluster: None,
        };
        let (kept, extras) = keep_one(vec![
            f("120", "PENDING"),
            f("99", "FAILED"),
            f("101", "RUNNING"),
        ]);
        assert_eq!(kept.job_id, "101");
        assert_eq!(
            extras.iter().map(|e| e.job_id.as_str()).collect::<Vec<_>>(),
            ["99", "120"]
        );
        let (kept, extras) = keep_one(vec![f("7", "COMPLETED"), f("5", "FAILED")]);
        assert_eq!((kept.job_id.as_str(), extras.len()), ("5", 1));
    }
}
