//! The default action: submit every job line read on stdin, over one SSH
//! session, and never a job twice.
//!
//! Per line: the gates (a record tao-record opened; the script tao-redact
//! approved), staging ([`crate::stage`]), then one remote command that runs
//! `sbatch --parsable --hold`, creates `slurm-logs/<id>-<jobid>/` and runs
//! `scontrol release` (Slurm 22.05 does not create `--output` directories,
//! so the job is held until they exist).
//!
//! Never twice: the Slurm job name is the record id. Before sbatch, jobs
//! with that name are looked up (squeue and sacct, one batched call for all
//! lines); one is adopted instead of submitting again. When the outcome of
//! sbatch is unknown (connection lost after sending, empty reply, or an
//! sbatch error after which the job may exist, such as `Socket timed out
//! on send/recv operation`: [`sched::AMBIGUOUS_SBATCH_ERRORS`]), the same
//! lookup runs on every login host, polled up to `--reconcile-wait`
//! seconds: one match is adopted (released if still held); of several, the
//! oldest live one is adopted and the extras are cancelled, with a warning
//! naming them; none means sbatch never ran, and the job is submitted again.
//!
//! This file reads the lines, gates them and writes them out; the parts
//! live beside it: `submit/fit.rs` (node fit), `submit/chain.rs` (image
//! chaining), `submit/sbatch.rs` (one submission and sbatch's reply),
//! `submit/reconcile.rs` (jobs found by name), `submit/config.rs` and
//! `submit/outcome.rs` (the settings and the result).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::{BufRead, Write};

use serde_json::Value;
use tao_core::{Error, Filter, JobLine, LineWriter, OnBadLine, Result};
use tao_store::Store;

use crate::image;
use crate::sched::{self, Found};
use crate::sessions::Sessions;
use crate::stage::Plan;
use chain::submit_with_image;
use fit::{check_fit, prefetch, validate_exclude};
use reconcile::settle_found;
use sbatch::submit_one;

mod chain;
mod config;
mod fit;
pub(crate) mod outcome;
mod reconcile;
mod sbatch;

pub use crate::TOOL;
pub use config::SubmitConfig;
pub use outcome::Submitted;

enum Item {
    Done(JobLine),
    Ready(JobLine, Box<Plan>, String, image::Need),
}

/// `sacct -S` for a record: the day before it was opened (clock skew
/// between launch host and cluster), else 30 days back.
fn since_of(created_at: Option<&str>) -> String {
    created_at
        .and_then(tao_core::time::parse_rfc3339)
        .map(|t| {
            (t - chrono::Duration::days(1))
                .format("%Y-%m-%d")
                .to_string()
        })
        .unwrap_or_else(|| "now-30days".to_string())
}

/// Gate one line: a live (not archived) record exists for its id and
/// agrees on storage; the plan checks the rest ([`Plan::from_line`]).
fn gate(
    line: &JobLine,
    store: std::result::Result<&Store, &Error>,
) -> Result<(Plan, String, image::Need)> {
    let id = line.require_str(&["id"])?;
    let store = store.map_err(|e| {
        Error::Config(format!(
            "cannot open the record store to check job {id:?}: {e}"
        ))
    })?;
    let record = store.load(id).map_err(|e| {
        Error::Data(format!(
            "line {}: job {id:?} has no record ({e}); only lines from `tao-record open` are submitted",
            line.line_no
        ))
    })?;
    // An archived record (`tao-record gc`) can never be marked again: a
    // job submitted for it would run with no record to follow it.
    if store.load_live(id)?.is_none() {
        return Err(Error::Data(format!(
            "line {}: the record of job {id:?} is archived (`tao-record gc`), and `tao-record mark` cannot update it; open a new record to run it again",
            line.line_no
        )));
    }
    for field in ["job_dir", "results_dir"] {
        let want = record
            .fields
            .get("storage")
            .and_then(|s| s.get(field))
            .and_then(Value::as_str);
        if want.is_some() && line.get_str(&["storage", field]) != want {
            return Err(Error::Data(format!(
                "line {}: `storage.{field}` of job {id:?} differs from its record; pipe lines from `tao-record open`",
                line.line_no
            )));
        }
    }
    let plan = Plan::from_line(line)?;
    let need = image::need_of(line)?;
    Ok((plan, since_of(record.created_at()), need))
}

/// The one rule for every line this tool refuses or fails to submit
/// (a gate, a missing secret, sbatch's refusal; an error that stopped
/// every line is said once at the end instead): the line goes on with `error` set, and one line
/// `tao-submit: error: <id>: <why>` goes to stderr ([`Filter::line_refused`]),
/// counted for the exit status (1; 65 for a bad line).
fn refuse<R: BufRead>(lines: &mut Filter<'_, R>, line: &mut JobLine, e: &Error) {
    let id = line.id().unwrap_or("?").to_string();
    lines.line_refused(&id, e);
    line.set_error(TOOL, e);
}

/// Mark a line submitted: `slurm.{job_id, cluster, login_host}`, `state`,
/// `observed_at`, `observed_by`, `message`.
fn annotate(line: &mut JobLine, s: &Submitted) {
    line.set_path(&["slurm", "job_id"], Value::String(s.job_id.clone()));
    line.set_path(
        &["slurm", "cluster"],
        s.cluster.clone().map(Value::String).unwrap_or(Value::Null),
    );
    line.set_path(
        &["slurm", "login_host"],
        Value::String(s.login_host.clone()),
    );
    if let Some(c) = &s.waits_for {
        line.set_path(
            &["slurm", "dependency"],
            Value::String(format!("afterok:{c}")),
        );
    }
    let (state, message) = match &s.adopted {
        None => match &s.waits_for {
            Some(c) => (
                Some(tao_core::State::Pending),
                format!("PENDING (submitted; waits for image conversion job {c})"),
            ),
            None => (
                Some(tao_core::State::Pending),
                "PENDING (submitted)".to_string(),
            ),
        },
        Some(native) if native == "PENDING" => (
            Some(tao_core::State::Pending),
            format!(
                "PENDING (adopted existing Slurm job {} named {})",
                s.job_id,
                line.id().unwrap_or("")
            ),
        ),
        // A job already past PENDING: its state is tao-poll's to map.
        Some(native) => (
            None,
            format!(
                "adopted existing Slurm job {} ({native}); run tao-poll for its state",
                s.job_id
            ),
        ),
    };
    if let Some(state) = state {
        line.stamp_now(state, None, TOOL);
    }
    tao_core::cli::note(
        TOOL,
        &format!(
            "{}: Slurm job {} on {}: {message}",
            line.id().unwrap_or("?"),
            s.job_id,
            s.login_host
        ),
    );
    line.fields.insert("message".into(), Value::String(message));
}

/// Run the submit action: read lines from `input`, write each result line
/// to `out`.
///
/// Output: the exit status: 0 all submitted, 1 some lines carry `error`,
/// 65 some line lacks a required field or has an invalid one (reported on
/// stderr with its line number; the line goes on with `error.code =
/// "data"`, or `"missing_stage"` for a field an earlier stage writes).
///
/// Errors (after every line read has been printed): the reader's
/// [`Error::BadLine`]/[`Error::BadJson`] (65); a connection error that
/// stopped every line ([`Error::Unavailable`] 69, [`Error::NoPerm`] 77,
/// [`Error::Config`] 78); [`Error::Io`] when output fails.
pub fn run<R: BufRead, W: Write>(
    input: R,
    out: &mut LineWriter<W>,
    sessions: &mut Sessions,
    store: std::result::Result<&Store, &Error>,
    cfg: &SubmitConfig,
) -> Result<i32> {
    // Every line before acting; a bad line stops the reading
    // (tao_core::filter, OnBadLine::Stop): the lines after it are not read.
    let mut lines = Filter::new(TOOL, input, OnBadLine::Stop);
    let items = lines.read_all()?;
    let mut fatal = store
        .err()
        .map(|e| Error::Config(format!("cannot open the record store: {e}")));
    let mut items: Vec<Item> = items
        .into_iter()
        .map(|mut line| {
            if line.has_error() {
                // Passed on untouched (tao-jobline(7)), but never silently:
                // a record keeps an earlier error until it is cleared.
                let id = line.id().unwrap_or("?").to_string();
                let tool = line.get_str(&["error", "tool"]).unwrap_or("a tool").to_string();
                let msg = line.get_str(&["error", "message"]).unwrap_or("").to_string();
                tao_core::cli::warn(
                    TOOL,
                    &format!(
                        "line {} (job {id:?}) carries an error from {tool} and is passed on, not submitted: {}; once fixed, clear it with `tao-record mark {id} --clear-error` and submit again",
                        line.line_no,
                        tao_core::cli::one_line(&msg)
                    ),
                );
                return Item::Done(line);
            }
            match gate(&line, store) {
                Ok((plan, since, need)) => Item::Ready(line, Box::new(plan), since, need),
                Err(e) => {
                    refuse(&mut lines, &mut line, &e);
                    Item::Done(line)
                }
            }
        })
        .collect();

    let ready: Vec<&Plan> = items
        .iter()
        .filter_map(|i| match i {
            Item::Ready(_, p, _, _) => Some(&**p),
            _ => None,
        })
        .collect();
    let mut existing: BTreeMap<String, Vec<Found>> = BTreeMap::new();
    let mut nodes: Option<Vec<sched::NodeInfo>> = None;
    if !ready.is_empty() && fatal.is_none() {
        let since = items
            .iter()
            .filter_map(|i| match i {
                Item::Ready(_, _, s, _) => Some(s.clone()),
                _ => None,
            })
            .min()
            .unwrap_or_default();
        match prefetch(sessions, &ready, &since) {
            Ok((found, n)) => {
                existing = found;
                nodes = n;
            }
            Err(e) => fatal = Some(e),
        }
    }

    let node_names: Option<HashSet<String>> = nodes
        .as_ref()
        .map(|n| n.iter().map(|x| x.name.clone()).collect());
    let mut conversions: HashMap<String, std::result::Result<String, String>> = HashMap::new();
    let mut this_run: HashMap<String, Submitted> = HashMap::new();
    let mut probes = crate::probe::ProbeState::default();
    for item in items.drain(..) {
        let line = match item {
            Item::Done(line) => line,
            Item::Ready(mut line, mut plan, since, need) => {
                if let Some(e) = &fatal {
                    // An error that stopped every line (no login host,
                    // login refused, configuration) is said once, with its
                    // hints, at the end of the run (Counts::finish).
                    lines.failed();
                    line.set_error(TOOL, e);
                    line
                } else {
                    // Checked against the cluster's nodes (when they could be
                    // listed) before anything is staged or submitted.
                    let fit = match (&nodes, &node_names) {
                        (Some(n), Some(known)) => {
                            validate_exclude(&mut plan, known);
                            check_fit(&line, &mut plan, n)
                        }
                        _ => Ok(()),
                    };
                    let res = match (this_run.get(&plan.id), existing.get(&plan.id)) {
                        // The same id twice in one input: one job.
                        (Some(prev), _) => Ok(Submitted {
                            adopted: Some("PENDING".into()),
                            ..prev.clone()
                        }),
                        (None, Some(found)) => settle_found(sessions, &plan, found.clone()),
                        (None, None) => fit.and_then(|()| {
                            crate::probe::gate(
                                sessions,
                                &mut line,
                                &mut plan,
                                store,
                                cfg.profile.as_ref(),
                                &cfg.probe,
                                &mut probes,
                                |s, p| submit_one(s, p, &since, cfg),
                            )
                            .and_then(|()| {
                                submit_with_image(
                                    sessions,
                                    &line,
                                    &mut plan,
                                    &need,
                                    &since,
                                    cfg,
                                    &mut conversions,
                                )
                            })
                        }),
                    };
                    if let Ok(s) = &res {
                        this_run.entry(plan.id.clone()).or_insert_with(|| s.clone());
                    }
                    match res {
                        Ok(s) => annotate(&mut line, &s),
                        Err(e) => refuse(&mut lines, &mut line, &e),
                    }
                    line
                }
            }
        };
        out.write(&line)?;
    }
    lines.counts().finish(TOOL, fatal)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn since_is_a_day_before_creation() {
        assert_eq!(since_of(Some("2026-11-29T18:58:47.123456Z")), "2026-11-28");
        assert_eq!(since_of(None), "now-30days");
    }
}
