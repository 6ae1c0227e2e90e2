//! Image chaining: before a pyxis job is submitted its `.sqsh` must
//! exist or be on its way. A missing image gets one conversion job on the
//! site profile's CPU partition (shared by every line of the run that names
//! the image, and with a conversion already queued), the job is chained on
//! it with `afterok`, and the chain is verified after sbatch; a conversion
//! left pending on a memory quota is replaced once ([`crate::image`] holds
//! the scripts and readers).

use std::collections::HashMap;
use std::time::Duration;

use tao_core::{shell, Error, JobLine, Result};

use super::config::SubmitConfig;
use super::outcome::Submitted;
use super::reconcile::query_by_name;
use super::sbatch::submit_one;
use crate::image;
use crate::sched::Found;
use crate::sessions::Sessions;
use crate::stage::Plan;
use crate::TOOL;

/// How long a freshly submitted conversion job may show reason `None`
/// (the scheduler has not looked at it yet) before its pending reason is
/// read for a memory quota: 10 s, polled every 0.5 s.
pub(super) const REASON_WAIT: Duration = Duration::from_secs(10);

/// Make sure the line's image exists or is being converted, submit the job
/// (chained after the conversion when there is one), and verify the chain.
pub(super) fn submit_with_image(
    sessions: &mut Sessions,
    line: &JobLine,
    plan: &mut Plan,
    need: &image::Need,
    since: &str,
    cfg: &SubmitConfig,
    conversions: &mut HashMap<String, std::result::Result<String, String>>,
) -> Result<Submitted> {
    let conv = match need {
        image::Need::Nothing => None,
        image::Need::Sqsh(path) => {
            let host = sessions.primary()?.login_host().to_string();
            let found = image::check(sessions, &host, &[path])?;
            match found
                .get(path.as_str())
                .copied()
                .unwrap_or(image::Found::Missing)
            {
                image::Found::Squashfs => None,
                f => return Err(image::sqsh_error(path, f)),
            }
        }
        image::Need::Convert { given, sqsh } => {
            let force = cfg.reconvert_latest && tao_script::is_latest(given)?;
            // A conversion this run already submitted or found is shared
            // without looking at the cache again: every line of one batch
            // that names the image chains on the same conversion job. A
            // forced reconversion does not look at the cache at all.
            let found = if conversions.contains_key(given) || force {
                HashMap::new()
            } else {
                let host = sessions.primary()?.login_host().to_string();
                image::check(sessions, &host, &[sqsh])?
            };
            if found.get(sqsh.as_str()) == Some(&image::Found::Squashfs) {
                None
            } else {
                if !conversions.contains_key(given) {
                    let r = ensure_conversion(sessions, line, given, cfg, force)
                        .map_err(|e| e.to_string());
                    conversions.insert(given.clone(), r);
                }
                match &conversions[given] {
                    Ok(id) => Some((id.clone(), sqsh.clone())),
                    Err(m) => {
                        return Err(Error::TempFail(format!(
                            "image {given:?} is not converted and its conversion job could not be submitted: {m}"
                        )))
                    }
                }
            }
        }
    };
    if let Some((conv_id, _)) = &conv {
        plan.extra_args.extend(image::dependency_args(conv_id));
    }
    let mut s = submit_one(sessions, plan, since, cfg)?;
    if let Some((conv_id, sqsh)) = conv {
        let host = s.login_host.clone();
        let dep = image::dependency_of(sessions, &host, &s.job_id)?;
        let chained = dep.contains(&format!("afterok:{conv_id}"));
        if !chained {
            // Slurm drops a dependency on a job that already succeeded (or
            // that it no longer knows): fine only if the image is there now.
            let found = image::check(sessions, &host, &[&sqsh])?;
            if found.get(sqsh.as_str()) != Some(&image::Found::Squashfs) {
                let _ =
                    sessions.run_on(&host, &format!("scancel {}", shell::quote(&s.job_id)), None);
                return Err(Error::Data(format!(
                    "job {:?}: Slurm job {} does not depend on conversion job {conv_id} (Dependency={dep:?}) and {sqsh:?} is not an image; the job was cancelled rather than run without its image: submit again",
                    plan.id, s.job_id
                )));
            }
        } else {
            s.waits_for = Some(conv_id);
        }
    }
    Ok(s)
}

/// The id of a live conversion job for `given`: an existing one of the
/// same name (shared; the newest when there are several), else a new one
/// submitted to the CPU partition. `force`: a forced reconversion (its own
/// job name, no early stop on a valid cache). Either way, one left pending
/// on a memory quota is replaced once ([`settle_conversion`]).
///
/// Errors: [`Error::Config`] without a site profile; rendering, lint and
/// submit errors of the conversion job.
pub(super) fn ensure_conversion(
    sessions: &mut Sessions,
    line: &JobLine,
    given: &str,
    cfg: &SubmitConfig,
    force: bool,
) -> Result<String> {
    let profile = cfg.profile.as_ref().map_err(|m| Error::Config(m.clone()))?;
    let mut plan = image::conversion_plan(line, given, profile, force)?;
    let host = sessions.primary()?.login_host().to_string();
    let since = (chrono::Utc::now() - chrono::Duration::days(1))
        .format("%Y-%m-%d")
        .to_string();
    // Every job of this name squeue or sacct knows (one call): the live
    // ones are shared; all of them are older than anything this run
    // submits, so reconciling an ambiguous submit never adopts them.
    let known: Vec<Found> = query_by_name(sessions, &host, &[plan.id.as_str()], &since, None)?
        .into_values()
        .collect();
    plan.known_ids = known.iter().map(|f| f.job_id.clone()).collect();
    let (id, fresh) = match image::live_of(&known).into_iter().next() {
        Some(id) => {
            tao_core::cli::warn(
                TOOL,
                &format!("image {given:?}: sharing the conversion job {id} already queued"),
            );
            (id, false)
        }
        None => {
            let s = submit_one(sessions, &plan, &since, cfg)?;
            tao_core::cli::warn(
                TOOL,
                &format!(
                    "image {given:?} {}: conversion job {} submitted to partition {:?}",
                    if force {
                        "is reconverted (--reconvert-latest)"
                    } else {
                        "is not in the cache"
                    },
                    s.job_id,
                    profile.conversion.partition
                ),
            );
            (s.job_id, true)
        }
    };
    settle_conversion(sessions, &host, &plan, given, id, fresh, &since, cfg)
}

/// Read the conversion job's pending reason (after up to [`REASON_WAIT`]
/// for a fresh one) and, when it is a memory quota
/// ([`image::is_memory_quota_reason`]), cancel it and resubmit it once
/// with the site profile's explicit CPUs and memory on the profile's CPU
/// partition, moving the jobs chained on it to the new one first. A job
/// already resubmitted ([`image::RESUBMITTED_COMMENT`]) is kept, with a
/// warning. Output: the conversion job id to chain on.
///
/// Errors: from the session and from submitting the replacement.
#[allow(clippy::too_many_arguments)]
pub(super) fn settle_conversion(
    sessions: &mut Sessions,
    host: &str,
    plan: &Plan,
    given: &str,
    id: String,
    fresh: bool,
    since: &str,
    cfg: &SubmitConfig,
) -> Result<String> {
    let wait = if fresh { REASON_WAIT } else { Duration::ZERO };
    let Some(view) = image::queue_view(sessions, host, &id, wait)? else {
        return Ok(id);
    };
    if view.state != "PENDING" || !image::is_memory_quota_reason(&view.reason) {
        return Ok(id);
    }
    let profile = cfg.profile.as_ref().map_err(|m| Error::Config(m.clone()))?;
    let conv = &profile.conversion;
    if view.comment.contains(image::RESUBMITTED_COMMENT) {
        tao_core::cli::warn(
            TOOL,
            &format!(
                "image {given:?}: conversion job {id} is still pending on {} after its one resubmission with {} CPUs and {} of memory; ask the cluster admins about the quota or lower [conversion] cpus/mem in site profile {:?}",
                view.reason, conv.cpus, conv.mem, profile.name
            ),
        );
        return Ok(id);
    }
    tao_core::cli::warn(
        TOOL,
        &format!(
            "image {given:?}: conversion job {id} is pending on {} (it asked for more memory than the quota allows); resubmitting it once with {} CPUs and {} of memory on partition {:?}, then cancelling it",
            view.reason, conv.cpus, conv.mem, conv.partition
        ),
    );
    let mut again = plan.clone();
    again.known_ids.push(id.clone());
    again
        .extra_args
        .push(format!("--comment={}", image::RESUBMITTED_COMMENT));
    let new = submit_one(sessions, &again, since, cfg)?.job_id;
    for dep in image::dependents_of(sessions, host, &id)? {
        let cmd = format!(
            "scontrol update JobId={} Dependency=afterok:{}",
            shell::quote(&dep),
            shell::quote(&new)
        );
        match sessions.run_on(host, &cmd, None) {
            Ok(o) if o.status == 0 => {}
            Ok(o) => tao_core::cli::warn(
                TOOL,
                &format!(
                    "job {dep} waits for conversion job {id}, which is being replaced by {new}, and could not be moved ({}); it will be killed with it: submit it again",
                    o.stderr_line()
                ),
            ),
            Err(e) => return Err(e),
        }
    }
    let out = sessions.run_on(host, &format!("scancel {}", shell::quote(&id)), None)?;
    if out.status != 0 {
        tao_core::cli::warn(
            TOOL,
            &format!(
                "conversion job {id} could not be cancelled ({}); cancel it by hand: scancel {id}",
                out.stderr_line()
            ),
        );
    }
    Ok(new)
}
