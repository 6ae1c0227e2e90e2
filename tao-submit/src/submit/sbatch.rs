//! One submission: staging and `sbatch --parsable --hold` in one remote
//! command whose reply is framed by markers, the log directory made and the
//! job released, and on an unknown outcome a look-up by name
//! ([`super::reconcile`]) before any second attempt.

use tao_core::{shell, Error, Result};

use super::config::SubmitConfig;
use super::outcome::Submitted;
use super::reconcile::{drop_sidecar, drop_staged, lookup_everywhere, reconcile, settle_found};
use crate::sched;
use crate::sessions::Sessions;
use crate::stage::{self, Plan};
use crate::TOOL;

/// How many times one line may go through sbatch when reconciliation
/// proves the previous attempt never reached the scheduler.
pub(super) const MAX_ATTEMPTS: u32 = 3;

/// What sbatch's remote command told us.
pub(super) enum SbatchReply {
    /// Submitted; `released` when logs dir and release went through too.
    Submitted {
        job_id: String,
        cluster: Option<String>,
        released: bool,
    },
    /// sbatch exited non-zero; its stderr.
    Failed(String),
    /// No reliable answer: look the job up by name.
    Ambiguous(String),
}

/// The remote command: sbatch held, logs dir, release; with markers so
/// a banner or a wrapper's chatter cannot be mistaken for the reply. The
/// shell releases only a reply naming no cluster; `jobid;cluster` is
/// released by [`release`] with `-M cluster`, so a job of the same number
/// on the local cluster is never touched.
pub(super) fn sbatch_script(plan: &Plan) -> String {
    let mut args = vec![
        "sbatch".to_string(),
        "--parsable".into(),
        "--hold".into(),
        format!("--job-name={}", plan.id),
    ];
    if plan.exclude_given {
        // An empty list clears the script's own #SBATCH --exclude (sbatch
        // accepts `--exclude=`; checked on Slurm 22.05).
        args.push(format!("--exclude={}", plan.exclude.join(",")));
    }
    args.extend(plan.extra_args.iter().cloned());
    args.push(plan.script_path());
    format!(
        "d={d}; cd -- \"$d\" || {{ echo '@@tao-nodir'; exit 0; }}; out=$({cmd}); rc=$?; \
         printf '@@tao-sbatch-begin\\n%s\\n@@tao-sbatch-end %s\\n' \"$out\" \"$rc\"; \
         [ \"$rc\" -eq 0 ] || exit 0; \
         case \"$out\" in ''|*[!0-9]*) jid=$(printf '%s\\n' \"$out\" | sed -n -E -e 's/^[[:space:]]*([0-9]+)[[:space:]]*$/\\1/p' \
           -e 's/^[[:space:]]*Submitted batch job ([0-9]+)[[:space:]]*$/\\1/p' | sort -u);; *) jid=$out;; esac; \
         case \"$jid\" in ''|*[!0-9]*) echo '@@tao-noid'; exit 0;; esac; \
         mkdir -p -- \"$d/{logs}/\"{id}\"-$jid\" && scontrol release \"$jid\" && echo \"@@tao-released $jid\"",
        d = shell::quote(&plan.job_dir),
        cmd = shell::join(&args),
        id = shell::quote(&plan.id),
        logs = tao_core::model::Layout::LOGS,
    )
}

/// Whether the inline staging part of the command went through.
///
/// Errors: [`Error::Data`] for a different bundle already staged;
/// [`Error::NoPerm`] for a sidecar whose mode is not 600 (removed);
/// [`Error::TempFail`] when a remote write failed.
pub(super) fn staging_outcome(plan: &Plan, host: &str, out: &tao_ssh::Output) -> Result<()> {
    let text = out.stdout_text();
    if text.lines().any(|l| l == stage::STAGED) {
        return Ok(());
    }
    if text.lines().any(|l| l == stage::BUNDLE_DIFFERS) {
        return Err(Error::Data(format!(
            "job {:?}: a different bundle of supporting files is already staged in {:?}/inputs (its manifest.json differs); it is never overwritten: open a new record",
            plan.id, plan.job_dir
        )));
    }
    if let Some(mode) = text
        .lines()
        .find_map(|l| l.strip_prefix(stage::SIDECAR_MODE))
    {
        return Err(Error::NoPerm(format!(
            "the secrets sidecar of job {:?} had mode {mode:?}, not 600; it was removed: check the shared filesystem's ACLs under {:?}",
            plan.id, plan.job_dir
        )));
    }
    Err(Error::TempFail(format!(
        "staging job {:?} in {:?} on {host:?} failed (exit {}): {}",
        plan.id,
        plan.job_dir,
        out.status,
        out.stderr_line()
    )))
}

/// Interpret the sbatch command's output.
pub(super) fn read_reply(stdout: &str, stderr: &str) -> SbatchReply {
    if stdout.lines().any(|l| l == "@@tao-nodir") {
        return SbatchReply::Failed(format!(
            "the job directory is missing on the cluster, sbatch was not run: {}",
            tao_core::cli::join_lines(stderr)
        ));
    }
    let Some((_, rest)) = stdout.split_once("@@tao-sbatch-begin\n") else {
        return SbatchReply::Ambiguous("no reply from the sbatch command".into());
    };
    let Some((body, tail)) = rest.rsplit_once("\n@@tao-sbatch-end ") else {
        return SbatchReply::Ambiguous("the sbatch reply was cut off".into());
    };
    let rc = tail.lines().next().unwrap_or("").trim();
    if rc != "0" && sched::is_ambiguous_sbatch_error(stderr) {
        // The controller may have created the job (case
        // sbatch-socket-timeout): reconcile like a cut connection.
        return SbatchReply::Ambiguous(format!(
            "sbatch exited {rc}: {}",
            tao_core::cli::join_lines(stderr)
        ));
    }
    if rc != "0" {
        return SbatchReply::Failed(format!(
            "sbatch exited {rc}: {}",
            tao_core::cli::join_lines(stderr)
        ));
    }
    match sched::parse_sbatch(body) {
        Ok(Some((job_id, cluster))) => {
            let released = tail
                .lines()
                .any(|l| l.trim() == format!("@@tao-released {job_id}"));
            SbatchReply::Submitted {
                job_id,
                cluster,
                released,
            }
        }
        Ok(None) => SbatchReply::Ambiguous(format!(
            "sbatch printed no job id ({:?})",
            tao_core::cli::join_lines(body)
        )),
        Err(e) => SbatchReply::Ambiguous(e.to_string()),
    }
}

/// Stage and submit one planned line; reconcile when the outcome is unknown.
pub(super) fn submit_one(
    sessions: &mut Sessions,
    plan: &Plan,
    since: &str,
    cfg: &SubmitConfig,
) -> Result<Submitted> {
    let mut attempt = 0;
    loop {
        attempt += 1;
        let host = sessions.primary()?.login_host().to_string();
        // Staging and sbatch in one remote script, whatever the job's size
        // (the script travels on stdin: tao_ssh::script).
        let script = format!("{}{}", plan.staging_script(), sbatch_script(plan));
        let stdin = plan.secrets_body()?;
        let reply = match sessions.run_on(&host, &script, stdin.as_deref()) {
            Ok(out) => {
                if let Err(e) = staging_outcome(plan, &host, &out) {
                    drop_sidecar(sessions, &host, plan);
                    return Err(e);
                }
                read_reply(&out.stdout_text(), &String::from_utf8_lossy(&out.stderr))
            }
            Err(e @ (Error::Unavailable(_) | Error::TempFail(_))) => {
                SbatchReply::Ambiguous(e.to_string())
            }
            Err(e) => return Err(e),
        };
        let why = match reply {
            SbatchReply::Submitted {
                job_id,
                cluster,
                released,
            } => {
                if !released {
                    release(sessions, &host, plan, &job_id, cluster.as_deref())?;
                }
                return Ok(Submitted {
                    job_id,
                    cluster,
                    login_host: host,
                    adopted: None,
                    waits_for: None,
                });
            }
            SbatchReply::Failed(msg) => {
                // sbatch can fail after the controller accepted the job
                // (a timed-out reply): one look by name before reporting.
                let found = lookup_everywhere(sessions, plan, since)?;
                if found.is_empty() {
                    // sbatch refused the staged job and none of its name
                    // exists: nothing will read what was staged; remove it
                    // (never on an unknown outcome: that path reconciles).
                    let left = drop_staged(sessions, &host, plan);
                    return Err(Error::Data(format!(
                        "job {:?} was not submitted: {msg}; {left}",
                        plan.id
                    )));
                }
                return settle_found(sessions, plan, found).map(fresh);
            }
            SbatchReply::Ambiguous(why) => why,
        };
        tao_core::cli::warn(
            TOOL,
            &format!(
                "job {:?}: submit outcome unknown ({why}); looking it up by name",
                plan.id
            ),
        );
        let found = reconcile(sessions, plan, since, cfg.reconcile_wait)?;
        if !found.is_empty() {
            return settle_found(sessions, plan, found).map(fresh);
        }
        if attempt >= MAX_ATTEMPTS {
            drop_sidecar(sessions, &host, plan);
            return Err(Error::TempFail(format!(
                "job {:?}: {attempt} submit attempts gave no answer and no job by that name exists; run tao-submit again",
                plan.id
            )));
        }
        tao_core::cli::warn(
            TOOL,
            &format!(
                "job {:?}: no job by that name after {} s; submitting again",
                plan.id,
                cfg.reconcile_wait.as_secs()
            ),
        );
    }
}

/// A job adopted right after our own sbatch is this run's submission, not
/// a pre-existing one: it is reported PENDING (submitted) like any other;
/// tao-poll reports its later states.
pub(super) fn fresh(mut s: Submitted) -> Submitted {
    s.adopted = None;
    s
}

/// Logs dir and release when the combined command could not do it
/// (multi-cluster reply, a failed release).
pub(super) fn release(
    sessions: &mut Sessions,
    host: &str,
    plan: &Plan,
    job_id: &str,
    cluster: Option<&str>,
) -> Result<()> {
    let mut script = format!(
        "mkdir -p -- {} && scontrol ",
        shell::quote(&plan.log_dir(job_id))
    );
    if let Some(c) = cluster {
        script.push_str(&format!("-M {} ", shell::quote(c)));
    }
    script.push_str(&format!("release {}", shell::quote(job_id)));
    let out = sessions.run_on(host, &script, None)?;
    if out.status != 0 {
        return Err(Error::TempFail(format!(
            "Slurm job {job_id} of {:?} was submitted held but could not be released ({}); run tao-submit again to adopt and release it",
            plan.id,
            out.stderr_line()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use tao_core::JobLine;

    #[test]
    fn replies() {
        let ok = "banner 7\n@@tao-sbatch-begin\n42\n@@tao-sbatch-end 0\n@@tao-released 42\n";
        assert!(
            matches!(read_reply(ok, ""), SbatchReply::Submitted { ref job_id, released: true, .. } if job_id == "42")
        );
        let held = "@@tao-sbatch-begin\n42;west\n@@tao-sbatch-end 0\n";
        assert!(
            matches!(read_reply(held, ""), SbatchReply::Submitted { released: false, cluster: Some(ref c), .. } if c == "west")
        );
        assert!(matches!(
            read_reply("@@tao-nodir\n", ""),
            SbatchReply::Failed(_)
        ));
        let failed = "@@tao-sbatch-begin\n\n@@tao-sbatch-end 1\n";
        assert!(
            matches!(read_reply(failed, "sbatch: error: Invalid partition"), SbatchReply::Failed(ref m) if m.contains("Invalid partition"))
        );
        for err in crate::sched::AMBIGUOUS_SBATCH_ERRORS {
            let stderr = format!("sbatch: error: Batch job submission failed: {err}");
            assert!(
                matches!(read_reply(failed, &stderr), SbatchReply::Ambiguous(ref m) if m.contains(err)),
                "{err}"
            );
        }
        for amb in [
            "",
            "@@tao-sbatch-begin\n42",
            "@@tao-sbatch-begin\n\n@@tao-sbatch-end 0\n@@tao-noid\n",
            "@@tao-sbatch-begin\nWelcome 3\n@@tao-sbatch-end 0\n",
        ] {
            assert!(
                matches!(read_reply(amb, ""), SbatchReply::Ambiguous(_)),
                "{amb:?}"
            );
        }
    }

    #[test]
    fn sbatch_script_quotes_and_holds() {
        let line = JobLine::parse(
            &serde_json::json!({
                "id": "tao-a1",
                "storage": {"job_dir": "/b/jobs/tao-a1", "results_dir": "/b/results/tao-a1"},
                "script": {"text": crate::stage::bound_script("tao-a1", "/b/jobs/tao-a1", "x")},
                "lint": {"ok": true, "sha256": tao_core::sha256_hex(crate::stage::bound_script("tao-a1", "/b/jobs/tao-a1", "x").as_bytes())},
                "resources": {"exclude": ["n[1-2]"]},
            })
            .to_string(),
            1,
        )
        .unwrap();
        let plan = Plan::from_line(&line).unwrap();
        let s = sbatch_script(&plan);
        assert!(s.contains("'sbatch' '--parsable' '--hold' '--job-name=tao-a1' '--exclude=n1,n2' '/b/jobs/tao-a1/sbatch/job_tao-a1.sbatch'"), "{s}");
        assert!(s.contains("scontrol release"), "{s}");
    }

    /// The remote sbatch command, run by sh against a fake sbatch (printing
    /// each reply form) and a fake scontrol: the shell side releases exactly
    /// the id the Rust side parses, and never a number from a banner.

    #[test]
    fn sbatch_command_releases_the_parsed_id_only() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        let fake = |name: &str, body: &str| {
            let p = bin.join(name);
            std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        };
        fake("sbatch", "printf '%b' \"$FAKE_REPLY\"");
        fake("scontrol", "echo \"$*\" >> \"$FAKE_LOG\"");
        let jd = dir.path().join("jobs/tao-a1");
        std::fs::create_dir_all(&jd).unwrap();
        let line = JobLine::parse(
            &serde_json::json!({
                "id": "tao-a1",
                "storage": {"job_dir": jd, "results_dir": dir.path().join("r")},
                "script": {"text": crate::stage::bound_script("tao-a1", jd.to_str().unwrap(), "x")},
                "lint": {"ok": true, "sha256": tao_core::sha256_hex(crate::stage::bound_script("tao-a1", jd.to_str().unwrap(), "x").as_bytes())},
            })
            .to_string(),
            1,
        )
        .unwrap();
        let plan = Plan::from_line(&line).unwrap();
        let log = dir.path().join("scontrol.log");
        for (reply, want) in [
            ("42\\n", Some("42")),
            ("43;west\\n", Some("43")),
            ("Submitted batch job 44\\n", Some("44")),
            ("Welcome to hpc 7 (quota 95%)\\n45\\n", Some("45")),
            ("Welcome to hpc 7\\n", None),
            ("", None),
        ] {
            let _ = std::fs::remove_file(&log);
            let out = std::process::Command::new("sh")
                .arg("-c")
                .arg(sbatch_script(&plan))
                .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
                .env("FAKE_REPLY", reply)
                .env("FAKE_LOG", &log)
                .output()
                .unwrap();
            let stdout = String::from_utf8(out.stdout).unwrap();
            let released = std::fs::read_to_string(&log).ok();
            match (read_reply(&stdout, ""), want) {
                (
                    SbatchReply::Submitted {
                        job_id,
                        released: true,
                        ..
                    },
                    Some(w),
                ) => {
                    assert_eq!(job_id, w);
                    {
                        assert_eq!(released.as_deref(), Some(format!("release {w}\n").as_str()));
                        assert!(jd.join(format!("slurm-logs/tao-a1-{w}")).is_dir());
                    }
                }
                // `jobid;cluster` is released by the Rust side with -M.
                (
                    SbatchReply::Submitted {
                        released: false,
                        cluster: Some(_),
                        ..
                    },
                    Some("43"),
                ) => {
                    assert_eq!(released, None, "no release without -M");
                }
                (SbatchReply::Ambiguous(_), None) => assert_eq!(released, None, "{reply:?}"),
                (_, w) => panic!("{reply:?}: unexpected reply, wanted {w:?}: {stdout}"),
            }
        }
    }
}
