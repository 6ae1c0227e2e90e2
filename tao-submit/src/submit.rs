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

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::{BufRead, Write};
use std::time::{Duration, Instant};

use serde_json::Value;
use tao_core::{shell, Error, Filter, JobLine, LineWriter, OnBadLine, Result};
use tao_store::Store;

use crate::image;
use crate::sched::{self, Found};
use crate::sessions::Sessions;
use crate::stage::{self, Plan};

/// Tool name in `observed_by` and `error.tool`.
pub const TOOL: &str = "tao-submit";

/// How many times one line may go through sbatch when reconciliation
/// proves the previous attempt never reached the scheduler.
const MAX_ATTEMPTS: u32 = 3;

/// Settings of a submit run.
#[derive(Debug, Clone)]
pub struct SubmitConfig {
    /// How long to look for a job by name after an ambiguous submit before
    /// concluding it does not exist (accounting lags sbatch by a few seconds).
    pub reconcile_wait: Duration,
    /// The site profile (conversion partition and resources), or why it
    /// did not load (an error only for lines that need a conversion).
    pub profile: std::result::Result<tao_core::site::SiteProfile, String>,
    /// The communication probe gate of multi-node jobs ([`crate::probe`]).
    pub probe: crate::probe::ProbeConfig,
    /// `--reconvert-latest`: convert images tagged `latest` again even when
    /// the `.sqsh` cache holds them ([`crate::image`]).
    pub reconvert_latest: bool,
}

/// How long a freshly submitted conversion job may show reason `None`
/// (the scheduler has not looked at it yet) before its pending reason is
/// read for a memory quota: 10 s, polled every 0.5 s.
const REASON_WAIT: Duration = Duration::from_secs(10);

/// The outcome of one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Submitted {
    /// Slurm job id (digits).
    pub job_id: String,
    /// Cluster from `jobid;cluster`, if any.
    pub cluster: Option<String>,
    /// Login host spec the job was submitted or found through.
    pub login_host: String,
    /// `Some(native state)` when an existing job was adopted.
    pub adopted: Option<String>,
    /// The image conversion job this job waits for (`afterok`), if any.
    pub waits_for: Option<String>,
}

/// What sbatch's remote command told us.
enum SbatchReply {
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
/// "data"`).
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
                    lines.line_failed(&e);
                    line.set_error(TOOL, &e);
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
                        Err(e) => {
                            lines.line_failed(&e);
                            line.set_error(TOOL, &e);
                        }
                    }
                    line
                }
            }
        };
        out.write(&line)?;
    }
    lines.counts().finish(TOOL, fatal)
}

/// Make sure the line's image exists or is being converted, submit the job
/// (chained after the conversion when there is one), and verify the chain.
fn submit_with_image(
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
fn ensure_conversion(
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
fn settle_conversion(
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

/// Connect, look up existing jobs by name (batched) and, when needed, the
/// node names; all on the primary session.
type Prefetched = (BTreeMap<String, Vec<Found>>, Option<Vec<sched::NodeInfo>>);

fn prefetch(sessions: &mut Sessions, plans: &[&Plan], since: &str) -> Result<Prefetched> {
    let host = sessions.primary()?.login_host().to_string();
    let mut found: BTreeMap<String, Vec<Found>> = BTreeMap::new();
    // Names by the cluster their script sends them to (`-M`).
    let mut by_cluster: BTreeMap<Option<String>, Vec<&str>> = BTreeMap::new();
    for p in plans {
        by_cluster
            .entry(plan_cluster(p))
            .or_default()
            .push(p.id.as_str());
    }
    for (cluster, names) in &by_cluster {
        for chunk in names.chunks(sched::CHUNK) {
            for f in query_by_name(sessions, &host, chunk, since, cluster.as_deref())?.into_values()
            {
                found.entry(f.name.clone()).or_default().push(f);
            }
        }
    }
    let out = sessions.run_on(&host, "scontrol show nodes -o", None)?;
    let nodes = if out.status == 0 {
        Some(sched::parse_nodes(&out.stdout_text())).filter(|n| !n.is_empty())
    } else {
        None
    };
    if nodes.is_none() {
        tao_core::cli::warn(
            TOOL,
            &format!(
                "cannot list the cluster's nodes ({}); exclusions and per-node CPUs/GPUs go to sbatch unchecked",
                out.stderr_line()
            ),
        );
    }
    Ok((found, nodes))
}

/// Drop excluded node names Slurm does not know, with a warning.
/// Check a line against the nodes of its partition(s) (`scontrol show
/// nodes -o`) before anything is staged: more CPUs per task or GPUs per
/// node than the largest node has would leave the job PENDING forever
/// (BadConstraints), so that is a line error naming the limit; an
/// exclusion list that covers every node of the partition (a retry that
/// avoided each node in turn) is dropped with a warning, since the job
/// could never start either.
///
/// Errors: [`Error::Data`] naming the partition, the largest node and the
/// option to change.
fn check_fit(line: &JobLine, plan: &mut Plan, nodes: &[sched::NodeInfo]) -> Result<()> {
    let res = |k: &str| {
        line.get_path(&["script", "resources", k])
            .or_else(|| line.get_path(&["resources", k]))
            .cloned()
    };
    let Some(partition) = res("partition").and_then(|v| v.as_str().map(str::to_string)) else {
        return Ok(());
    };
    let parts: Vec<&str> = partition.split(',').filter(|p| !p.is_empty()).collect();
    let in_part: Vec<&sched::NodeInfo> = nodes
        .iter()
        .filter(|n| n.partitions.iter().any(|p| parts.contains(&p.as_str())))
        .collect();
    if in_part.is_empty() {
        return Ok(()); // An unknown partition: sbatch says so itself.
    }
    let want = |k: &str| res(k).and_then(|v| v.as_u64()).unwrap_or(0);
    let (cpus, gpus) = (want("cpus_per_task"), want("gpus_per_node"));
    let max_cpus = in_part.iter().map(|n| n.cpus).max().unwrap_or(0);
    let max_gpus = in_part.iter().map(|n| n.gpus).max().unwrap_or(0);
    if max_cpus > 0 && cpus > u64::from(max_cpus) {
        return Err(Error::Data(format!(
            "job {:?} asks for {cpus} CPUs per task but the largest node of partition {partition:?} has {max_cpus} (scontrol show nodes); it would stay PENDING (BadConstraints): open a new record with --cpus-per-task {max_cpus} or less",
            plan.id
        )));
    }
    // A cluster whose nodes list no GPU gres is not judged (GPUs may be
    // configured another way there).
    if max_gpus > 0 && gpus > u64::from(max_gpus) {
        return Err(Error::Data(format!(
            "job {:?} asks for {gpus} GPUs per node but the nodes of partition {partition:?} have at most {max_gpus} (scontrol show nodes); it would stay PENDING (BadConstraints): open a new record with --gpus-per-node {max_gpus} or less, or another partition",
            plan.id
        )));
    }
    if !plan.exclude.is_empty() && in_part.iter().all(|n| plan.exclude.contains(&n.name)) {
        tao_core::cli::warn(
            TOOL,
            &format!(
                "job {:?}: excluding {} leaves no node of partition {partition:?}; submitting without the exclusion (the nodes the retries avoided are all the partition has)",
                plan.id,
                plan.exclude.join(",")
            ),
        );
        plan.exclude.clear();
    }
    Ok(())
}

fn validate_exclude(plan: &mut Plan, known: &HashSet<String>) {
    let (keep, drop): (Vec<String>, Vec<String>) =
        plan.exclude.drain(..).partition(|n| known.contains(n));
    if !drop.is_empty() {
        tao_core::cli::warn(
            TOOL,
            &format!(
                "job {:?}: excluded node(s) {} do not exist on this cluster (`scontrol show nodes`); dropped",
                plan.id,
                tao_core::hostlist::summarize(&drop, 20)
            ),
        );
    }
    plan.exclude = keep;
}

/// squeue + sacct by exact job name on one host (with `-M cluster` for
/// jobs whose script sends them to another cluster).
fn query_by_name(
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
fn plan_cluster(plan: &Plan) -> Option<String> {
    sched::script_cluster(&plan.script)
}

/// ` -M cluster` for a job found on another cluster, else nothing.
fn m_flag(cluster: Option<&str>) -> String {
    cluster
        .map(|c| format!("-M {} ", shell::quote(c)))
        .unwrap_or_default()
}

/// One job already carries this name: adopt it (logs dir, release if held).
/// Several (a lost sbatch reply that did reach the scheduler, then a second
/// submission): keep one, cancel the extras and say so; see [`keep_one`].
fn settle_found(sessions: &mut Sessions, plan: &Plan, mut found: Vec<Found>) -> Result<Submitted> {
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
pub(crate) fn keep_one(mut found: Vec<Found>) -> (Found, Vec<Found>) {
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
fn drop_sidecar(sessions: &mut Sessions, host: &str, plan: &Plan) {
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

/// Make the log directory of an adopted job exist, then release it if it
/// is still held by us.
fn adopt(sessions: &mut Sessions, plan: &Plan, f: &Found) -> Result<()> {
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

/// The remote command: sbatch held, logs dir, release; with markers so
/// a banner or a wrapper's chatter cannot be mistaken for the reply. The
/// shell releases only a reply naming no cluster; `jobid;cluster` is
/// released by [`release`] with `-M cluster`, so a job of the same number
/// on the local cluster is never touched.
fn sbatch_script(plan: &Plan) -> String {
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
fn staging_outcome(plan: &Plan, host: &str, out: &tao_ssh::Output) -> Result<()> {
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
fn read_reply(stdout: &str, stderr: &str) -> SbatchReply {
    if stdout.lines().any(|l| l == "@@tao-nodir") {
        return SbatchReply::Failed(format!(
            "the job directory is missing on the cluster, sbatch was not run: {}",
            tao_core::cli::one_line(stderr.trim())
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
            tao_core::cli::one_line(stderr.trim())
        ));
    }
    if rc != "0" {
        return SbatchReply::Failed(format!(
            "sbatch exited {rc}: {}",
            tao_core::cli::one_line(stderr.trim())
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
            tao_core::cli::one_line(body.trim())
        )),
        Err(e) => SbatchReply::Ambiguous(e.to_string()),
    }
}

/// Stage and submit one planned line; reconcile when the outcome is unknown.
fn submit_one(
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
                    // sbatch refused the staged job: nothing will source it.
                    drop_sidecar(sessions, &host, plan);
                    return Err(Error::Data(format!(
                        "job {:?} was not submitted: {msg}",
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
fn fresh(mut s: Submitted) -> Submitted {
    s.adopted = None;
    s
}

/// Logs dir and release when the combined command could not do it
/// (multi-cluster reply, a failed release).
fn release(
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

/// Jobs named `plan.id` on every login host that answers (union by id).
fn lookup_everywhere(sessions: &mut Sessions, plan: &Plan, since: &str) -> Result<Vec<Found>> {
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
fn reconcile(
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

    #[test]
    fn since_is_a_day_before_creation() {
        assert_eq!(since_of(Some("2026-11-29T18:58:47.123456Z")), "2026-11-28");
        assert_eq!(since_of(None), "now-30days");
    }
}
