//! `tao-submit cancel`: cancel the Slurm jobs of the job lines on stdin and
//! read the outcome back from the scheduler.
//!
//! scancel prints nothing and exits 0 for an unknown or finished job id
//! (scancel(1); seen on Slurm 22.05), so its exit status confirms nothing:
//! after one scancel per login host and cluster (ids chunked below the
//! argument limit, `-M cluster` where the job went to another cluster), the
//! jobs are looked up in squeue's default view (jobs not yet ended) until
//! none is left or `--wait` passes. A job that Slurm no longer knows, or
//! that was cancelled, is emitted with state CANCELED and sacct's native
//! state in `message`. A job that had already ended on its own (COMPLETED,
//! FAILED, ...) before scancel is not a failure of the cancel, but its
//! outcome is not erased either: its line keeps its state, the message says
//! how it ended, and tao-poll maps that to COMPLETE or ERROR.
//!
//! Once a line's jobs have all ended, its secrets sidecar
//! (`<job_dir>/env/secrets.env`) is removed: a job cancelled while pending
//! never ran the trap that removes it.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::{BufRead, Write};
use std::time::{Duration, Instant};

use serde_json::Value;
use tao_core::{shell, Error, Filter, JobLine, LineWriter, OnBadLine, Result};

use crate::sched;
use crate::sessions::Sessions;
use crate::TOOL;

/// Settings of a cancel run.
#[derive(Debug, Clone)]
pub struct CancelConfig {
    /// How long to wait for cancelled jobs to leave squeue's live view.
    pub wait: Duration,
}

/// One line to cancel.
struct Target {
    line: JobLine,
    /// Slurm job ids to cancel (from `slurm.job_id`, else found by name).
    ids: Vec<String>,
    /// Whether the line had no `slurm.job_id` (its jobs are found by name).
    by_name: bool,
}

/// The scheduler's native state per job id from sacct (`-X -P`, `JobIDRaw|State`).
fn parse_sacct_states(text: &str) -> HashMap<String, String> {
    text.lines()
        .filter_map(|l| {
            let (id, st) = l.trim().split_once('|')?;
            (!id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()))
                .then(|| (id.to_string(), st.trim().to_string()))
        })
        .collect()
}

/// Separates squeue's answer from sacct's in the end-state command.
const SACCT_MARK: &str = "@@tao-sacct";

/// Each job's end state from squeue (`-t all`) and sacct: sacct's when it
/// shows an end state (it adds `by <uid>` to CANCELLED), else squeue's
/// (sacct still lagging at RUNNING, or not listing the job yet), else
/// whatever sacct says.
fn merge_end_states(
    squeue: HashMap<String, String>,
    mut sacct: HashMap<String, String>,
) -> HashMap<String, String> {
    for (id, st) in squeue {
        let sacct_ended = sacct.get(&id).is_some_and(|s| sched::is_end_state(s));
        if !sacct_ended && sched::is_end_state(&st) {
            sacct.insert(id, st);
        }
    }
    sacct
}

/// Job ids in squeue's default view (`%i|%T`): jobs that have not ended.
fn parse_live(text: &str) -> HashMap<String, String> {
    parse_sacct_states(text)
}

fn cluster_flag(cluster: Option<&str>) -> String {
    cluster
        .map(|c| format!("-M {} ", shell::quote(c)))
        .unwrap_or_default()
}

/// Run the cancel action.
///
/// Output: exit status 0 when every line was cancelled (or had nothing
/// left to cancel), 1 when some lines carry `error`, 65 when a line lacks
/// `id` or has a `slurm.job_id` that is not digits (reported on stderr
/// with its line number; the line goes on with `error.code` `data`, or
/// `missing_stage` for a missing `id`).
///
/// Errors (after every line read has been printed): the reader's errors
/// (65); a connection error that stopped lines (69, 77, 78); output errors.
pub fn run<R: BufRead, W: Write>(
    input: R,
    out: &mut LineWriter<W>,
    sessions: &mut Sessions,
    cfg: &CancelConfig,
) -> Result<i32> {
    // Every line before acting; a bad line stops the reading
    // (tao_core::filter, OnBadLine::Stop): the lines after it are not read.
    let mut filter = Filter::new(TOOL, input, OnBadLine::Stop);
    let mut lines = filter.read_all()?;
    let mut results: Vec<Option<JobLine>> = vec![None; lines.len()];
    let mut fatal = None;
    // (login host, cluster) -> indices of lines.
    let mut groups: BTreeMap<(Option<String>, Option<String>), Vec<usize>> = BTreeMap::new();
    for (i, line) in lines.iter_mut().enumerate() {
        if line.has_error() {
            results[i] = Some(line.clone());
            continue;
        }
        let id_ok = line
            .require_str(&["id"])
            .map(str::to_string)
            .and_then(|id| {
                tao_core::id::validate(&id)?;
                Ok(id)
            });
        let bad_job_id = line
            .get_path(&["slurm", "job_id"])
            .filter(|v| !v.is_null())
            .is_some_and(|v| {
                !v.as_str()
                    .is_some_and(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
            });
        if let Err(e) = id_ok {
            filter.line_refused(line.id().unwrap_or("?"), &e);
            line.set_error(TOOL, &e);
            results[i] = Some(line.clone());
            continue;
        }
        if bad_job_id {
            let e = Error::BadLine {
                line: line.line_no,
                message:
                    "`slurm.job_id` must be a string of digits; pipe lines from `tao-record list`"
                        .into(),
            };
            filter.line_refused(line.id().unwrap_or("?"), &e);
            line.set_error(TOOL, &e);
            results[i] = Some(line.clone());
            continue;
        }
        let host = line.get_str(&["slurm", "login_host"]).map(str::to_string);
        let cluster = line.get_str(&["slurm", "cluster"]).map(str::to_string);
        groups.entry((host, cluster)).or_default().push(i);
    }

    for ((host, cluster), idx) in groups {
        let targets: Vec<Target> = idx
            .iter()
            .map(|&i| {
                let ids: Vec<String> = lines[i].slurm_job_id().into_iter().collect();
                Target {
                    line: lines[i].clone(),
                    by_name: ids.is_empty(),
                    ids,
                }
            })
            .collect();
        match cancel_group(sessions, host.as_deref(), cluster.as_deref(), targets, cfg) {
            Ok(done) => {
                for (&i, (line, ok)) in idx.iter().zip(done) {
                    if !ok {
                        let msg = line
                            .get_str(&["error", "message"])
                            .unwrap_or("not cancelled");
                        filter.line_refused(
                            line.id().unwrap_or("?"),
                            &Error::TempFail(msg.to_string()),
                        );
                    }
                    results[i] = Some(line);
                }
            }
            Err(e) => {
                for &i in &idx {
                    let mut line = lines[i].clone();
                    line.set_error(TOOL, &e);
                    filter.line_refused(line.id().unwrap_or("?"), &e);
                    results[i] = Some(line);
                }
                if matches!(
                    e,
                    Error::Unavailable(_) | Error::NoPerm(_) | Error::Config(_)
                ) {
                    fatal = Some(e);
                }
            }
        }
    }
    for line in results.into_iter().flatten() {
        out.write(&line)?;
    }
    filter.counts().finish(TOOL, fatal)
}

/// Cancel one group's jobs on one login host; returns each line with its
/// outcome and whether it succeeded.
fn cancel_group(
    sessions: &mut Sessions,
    host: Option<&str>,
    cluster: Option<&str>,
    mut targets: Vec<Target>,
    cfg: &CancelConfig,
) -> Result<Vec<(JobLine, bool)>> {
    let remote = sessions.host_or_primary(host)?;
    let host = remote.login_host().to_string();
    let user = remote.user().to_string();
    let m = cluster_flag(cluster);

    // Lines never given a job id: their jobs are found by name.
    let unnamed: Vec<String> = targets
        .iter()
        .filter(|t| t.by_name)
        .filter_map(|t| t.line.id().map(str::to_string))
        .collect();
    if !unnamed.is_empty() {
        for chunk in unnamed.chunks(sched::CHUNK) {
            let names: Vec<&str> = chunk.iter().map(String::as_str).collect();
            let script = sched::by_name_script(&user, &names, "now-30days", cluster);
            let out = sessions.run_on(&host, &script, None)?;
            for f in sched::parse_by_name(&out.stdout_text(), &names, &host)?.into_values() {
                for t in targets.iter_mut() {
                    if t.by_name && t.line.id() == Some(f.name.as_str()) {
                        t.ids.push(f.job_id.clone());
                    }
                }
            }
        }
    }

    let all: Vec<String> = {
        let mut seen = HashSet::new();
        targets
            .iter()
            .flat_map(|t| t.ids.iter().cloned())
            .filter(|id| seen.insert(id.clone()))
            .collect()
    };
    let mut scancel_err = String::new();
    for chunk in all.chunks(sched::CHUNK) {
        let out = sessions.run_on(&host, &format!("scancel {m}{}", shell::join(chunk)), None)?;
        if out.status != 0 {
            scancel_err = out.stderr_line();
        }
    }

    // Read back: wait until none of the ids is in squeue's live view.
    let deadline = Instant::now() + cfg.wait;
    let live = loop {
        if all.is_empty() {
            break HashMap::new();
        }
        let out = sessions.run_on(
            &host,
            &format!("squeue -h {m}-u {} -o '%i|%T'", shell::quote(&user)),
            None,
        )?;
        if out.status != 0 {
            return Err(Error::TempFail(format!(
                "squeue failed on {host:?} after scancel ({}); the jobs may still run: run tao-submit cancel again",
                out.stderr_line()
            )));
        }
        let mut live = parse_live(&out.stdout_text());
        live.retain(|id, _| all.contains(id));
        let now = Instant::now();
        if live.is_empty() || now >= deadline {
            break live;
        }
        std::thread::sleep((deadline - now).min(Duration::from_millis(500)));
    };
    // End states: squeue keeps an ended job's state for MinJobAge
    // (slurm.conf(5)) and knows it at once; sacct keeps it for good but
    // lags by seconds. One command reads both ([`merge_end_states`]).
    let mut native = HashMap::new();
    for chunk in all.chunks(sched::CHUNK) {
        let ids = shell::quote(&chunk.join(","));
        let out = sessions.run_on(
            &host,
            &format!(
                "squeue -h -t all {m}-j {ids} -o '%i|%T' 2>/dev/null; echo '{SACCT_MARK}'; sacct -n -X -P {m}-j {ids} -o JobIDRaw,State"
            ),
            None,
        )?;
        let text = out.stdout_text();
        let (sq, sa) = text.split_once(SACCT_MARK).unwrap_or(("", text.as_str()));
        native.extend(merge_end_states(
            parse_sacct_states(sq),
            parse_sacct_states(sa),
        ));
    }

    let mut done = Vec::new();
    for mut t in targets {
        let still: Vec<String> = t
            .ids
            .iter()
            .filter_map(|id| live.get(id).map(|st| format!("{id} ({st})")))
            .collect();
        if !still.is_empty() {
            let why = if scancel_err.is_empty() {
                String::new()
            } else {
                format!("; scancel said: {scancel_err}")
            };
            let e = Error::TempFail(format!(
                "Slurm job {} still not ended {} s after scancel{why}; run tao-submit cancel again",
                still.join(", "),
                cfg.wait.as_secs()
            ));
            t.line.set_error(TOOL, &e);
            done.push((t.line, false));
            continue;
        }
        let message = if t.ids.is_empty() {
            format!(
                "CANCELLED (no Slurm job named {}; nothing to cancel)",
                t.line.id().unwrap_or("")
            )
        } else {
            t.ids
                .iter()
                .map(|id| match native.get(id) {
                    Some(st) if st.starts_with("CANCELLED") => st.clone(),
                    Some(st) => format!("{st} (ended before scancel)"),
                    None => format!("job {id} unknown to Slurm (counts as cancelled)"),
                })
                .collect::<Vec<_>>()
                .join("; ")
        };
        if t.line.slurm_job_id().is_none() {
            if let Some(id) = t.ids.first() {
                t.line
                    .set_path(&["slurm", "job_id"], Value::String(id.clone()));
                t.line
                    .set_path(&["slurm", "login_host"], Value::String(host.clone()));
            }
        }
        if let Some(st) = t.ids.first().and_then(|id| native.get(id)) {
            t.line
                .set_path(&["slurm", "native_state"], Value::String(st.clone()));
        }
        // Every job of the line ended on its own before scancel: keep its
        // state for tao-poll to map (COMPLETED must not become CANCELED).
        let ended_on_its_own = !t.ids.is_empty()
            && t.ids.iter().all(|id| {
                native
                    .get(id)
                    .is_some_and(|st| !st.starts_with("CANCELLED"))
            });
        if ended_on_its_own {
            // A line whose record already holds a final state says so (a
            // COMPLETE job is not sent to tao-poll for a state it has).
            let recorded = t
                .line
                .get_str(&["state"])
                .and_then(tao_core::State::parse)
                .filter(|s| s.is_final());
            let text = match recorded {
                Some(st) => format!(
                    "already ended {} (Slurm: {}); nothing was cancelled",
                    st.as_str(),
                    t.ids
                        .iter()
                        .filter_map(|id| native.get(id).cloned())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                None => {
                    format!("{message}; nothing was cancelled: run tao-poll for its final state")
                }
            };
            t.line.fields.insert("message".into(), Value::String(text));
            done.push((t.line, true));
            continue;
        }
        t.line
            .stamp_now(tao_core::State::Canceled, Some(&message), TOOL);
        done.push((t.line, true));
    }
    // Every job of these lines has ended (cancelled, or on its own): none
    // will source its secrets sidecar, which a job cancelled while pending
    // (or killed before its trap ran) leaves behind. One command for all.
    let dirs: Vec<String> = done
        .iter()
        .filter(|(l, ok)| {
            *ok && matches!(l.get_path(&["secrets"]), Some(Value::Array(a)) if !a.is_empty())
        })
        .filter_map(|(l, _)| l.get_str(&["storage", "job_dir"]).map(str::to_string))
        .filter(|d| d.starts_with('/'))
        .collect();
    if !dirs.is_empty() {
        let cmd = shell::remove_sidecars_command(&dirs);
        let left = match sessions.run_on(&host, &cmd, None) {
            Ok(o) => o
                .stdout_text()
                .lines()
                .filter_map(|l| l.strip_prefix("@@tao-sidecar-left "))
                .map(str::to_string)
                .collect(),
            Err(e) => vec![format!("({e})")],
        };
        for f in left {
            tao_core::cli::warn(
                TOOL,
                &format!("the secrets sidecar {f:?} of a cancelled job could not be removed; remove it by hand"),
            );
        }
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn end_states_prefer_an_ended_sacct_row_then_squeue() {
        let m = |pairs: &[(&str, &str)]| -> HashMap<String, String> {
            pairs
                .iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect()
        };
        let got = merge_end_states(
            m(&[
                ("1", "CANCELLED"),
                ("2", "COMPLETED"),
                ("3", "CANCELLED"),
                ("5", "COMPLETING"),
            ]),
            m(&[
                ("1", "RUNNING"),
                ("2", "COMPLETED"),
                ("3", "CANCELLED by 1001"),
                ("4", "FAILED"),
            ]),
        );
        assert_eq!(
            got,
            m(&[
                ("1", "CANCELLED"),
                ("2", "COMPLETED"),
                ("3", "CANCELLED by 1001"),
                ("4", "FAILED")
            ])
        );
    }

    #[test]
    fn parses_states_ignoring_other_lines() {
        let m = parse_sacct_states(
            "CLUSTER: west\n12|CANCELLED by 1000\n12.batch|CANCELLED\nbanner|x\n13|COMPLETED\n",
        );
        assert_eq!(m.len(), 2);
        assert_eq!(m["12"], "CANCELLED by 1000");
        assert_eq!(cluster_flag(Some("w")), "-M 'w' ");
        assert_eq!(cluster_flag(None), "");
    }
}
