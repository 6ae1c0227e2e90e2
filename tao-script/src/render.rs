//! The askama templates compiled into the binary and the functions that
//! fill them: job lines (single and multi), image conversion and the
//! communication probe.
//!
//! Templates live in `templates/` (`base.sbatch` is the skeleton every
//! script shares; `single.sbatch` extends it; `multi.sbatch` extends
//! `single.sbatch` and overrides only the node shape, the rendezvous and the
//! per-node rank; `convert.sbatch` and `probe.sbatch` extend the base;
//! `rendezvous.sbatch` is included by multi and probe). See `askama.toml`
//! and [`crate::escape`] for how values are escaped.

use std::collections::BTreeMap;
use tao_core::model::Layout;

use askama::Template;
use serde::{Deserialize, Serialize};
use tao_core::site::SiteProfile;
use tao_core::{Error, JobLine, Result};

use crate::escape::{is_plain_abs_path, is_word, SbatchValue};
use crate::job::{self, Bindings, Plan, RenderOptions};
use tao_core::image::{is_sqsh, normalise_image, sqsh_name};
use tao_core::model::{Container, Effective, ImageRef};
use tao_core::slurm_time::SlurmTime;

/// A rendered sbatch script; serialised as the line's `script` field.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Script {
    /// `single`, `multi`, `convert` or `probe`.
    pub template: &'static str,
    /// Lowercase hex SHA-256 of `text` (what tao-redact lint approves).
    pub sha256: String,
    /// The script, `\n`-terminated lines, starting with `#!/bin/bash`.
    pub text: String,
    /// Bound values and checksums (job scripts only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bindings: Option<Bindings>,
    /// How the image resolved (runtime pyxis only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image: Option<ImageRef>,
    /// Resources after the rules were applied (job scripts only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resources: Option<Effective>,
    /// The container the steps run in (runtime pyxis job scripts only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub container: Option<Container>,
}

impl Script {
    fn new(template: &'static str, text: String) -> Self {
        Script {
            template,
            sha256: tao_core::sha256_hex(text.as_bytes()),
            text,
            bindings: None,
            image: None,
            resources: None,
            container: None,
        }
    }
}

/// The values base.sbatch needs.
pub(crate) struct Common {
    job_name: SbatchValue,
    partition: SbatchValue,
    account: Option<SbatchValue>,
    time: SbatchValue,
    requeue: bool,
    exclude: Option<SbatchValue>,
    output: SbatchValue,
    error: SbatchValue,
    id: String,
    log_dir_prefix: String,
    secrets_file: String,
    /// The line names secrets: a missing sidecar is an error (exit 75 on a
    /// requeued attempt, whose sidecar the previous attempt removed).
    needs_secrets: bool,
    /// Space-separated secret names for the output masker.
    secret_names: String,
    child_timeout: u64,
    kill_after: u64,
}

impl Common {
    /// The base values of a helper job (the image conversion, the
    /// communication probe): named `id`, logs and secrets sidecar under
    /// `job_dir` as for a job ([`Layout`]), never requeued, no secrets,
    /// no excluded nodes (set `exclude` after), the child under a timeout
    /// of `child_timeout` seconds, killed `kill_after` seconds later.
    ///
    /// Errors: [`Error::Data`] for an id, account or path that cannot go
    /// on an `#SBATCH` line.
    fn helper(
        id: &str,
        job_dir: &str,
        partition: SbatchValue,
        account: Option<&str>,
        time: &SlurmTime,
        child_timeout: u64,
        kill_after: u64,
    ) -> Result<Self> {
        let layout = Layout::new(id, job_dir);
        Ok(Common {
            job_name: SbatchValue::job_name(id)?,
            partition,
            account: account.map(SbatchValue::account).transpose()?,
            time: SbatchValue::time(time),
            requeue: false,
            exclude: None,
            output: SbatchValue::log_path(job_dir, id, "main.out")?,
            error: SbatchValue::log_path(job_dir, id, "main.err")?,
            id: id.to_string(),
            log_dir_prefix: layout.log_dir_prefix(),
            secrets_file: layout.secrets_file(),
            needs_secrets: false,
            secret_names: String::new(),
            child_timeout,
            kill_after,
        })
    }
}

pub(crate) struct Rendezvous {
    nodes: u32,
    gpus: u32,
}

#[derive(Template)]
#[template(path = "single.sbatch")]
struct SingleScript<'a> {
    c: &'a Common,
    j: &'a Plan,
    ct: Option<Srun<'a>>,
    #[allow(dead_code)]
    r: &'a Rendezvous,
}

#[derive(Template)]
#[template(path = "multi.sbatch")]
struct MultiScript<'a> {
    c: &'a Common,
    j: &'a Plan,
    ct: Option<Srun<'a>>,
    r: &'a Rendezvous,
}

pub(crate) struct ConvertView {
    cpus: SbatchValue,
    mem: SbatchValue,
    uri: String,
    sqsh: String,
    images_dir: String,
    tmp_prefix: String,
    force: bool,
}

#[derive(Template)]
#[template(path = "convert.sbatch")]
struct ConvertScript<'a> {
    c: &'a Common,
    v: &'a ConvertView,
}

pub(crate) struct ProbeView {
    nodes: SbatchValue,
    gres: Option<SbatchValue>,
    cpus: SbatchValue,
    env: Vec<(String, String)>,
    nproc: u32,
    container: Option<Container>,
    mode: &'static str,
    argv: Vec<String>,
}

#[derive(Template)]
#[template(path = "probe.sbatch")]
struct ProbeScript<'a> {
    c: &'a Common,
    p: &'a ProbeView,
    ct: Option<Srun<'a>>,
    r: &'a Rendezvous,
}

/// `(image, mounts)` of a container, for `srun --container-image
/// --container-mounts`.
type Srun<'a> = (&'a str, &'a str);

/// The srun arguments of `container`, which its maker sets both fields of.
///
/// Errors: [`Error::Internal`] for a container without one.
fn srun(container: Option<&Container>) -> Result<Option<Srun<'_>>> {
    container
        .map(|c| match (c.image.as_deref(), c.mounts.as_deref()) {
            (Some(image), Some(mounts)) => Ok((image, mounts)),
            _ => Err(Error::Internal(
                "a container without image or mounts reached the template, please report this"
                    .into(),
            )),
        })
        .transpose()
}

/// An effective plan without every field set.
fn unplanned() -> Error {
    Error::Internal(
        "an effective plan without every field reached the template, please report this".into(),
    )
}

fn internal(e: askama::Error) -> Error {
    Error::Internal(format!(
        "template render failed ({e}); a value escaped its validation, please report this"
    ))
}

/// Whether a job script was rendered for the record `id` whose job
/// directory is `job_dir`: the lines base.sbatch writes for them, each
/// exactly once: `#SBATCH --job-name=<id>`, `tao_job_id=<id, quoted>` and
/// `tao_secrets=<job_dir>/env/secrets.env, quoted` (where the job reads its
/// secrets sidecar). tao-submit checks this before it stages anything, so
/// a script copied from another record (or edited to read another job's
/// secrets) is refused.
///
/// Errors: a message naming the line that is missing, repeated or names
/// another record.
pub fn check_binding(text: &str, id: &str, job_dir: &str) -> std::result::Result<(), String> {
    let want = [
        ("#SBATCH --job-name=", id.to_string()),
        ("tao_job_id=", tao_core::shell::quote(id)),
        (
            "tao_secrets=",
            tao_core::shell::quote(&Layout::new(id, job_dir).secrets_file()),
        ),
    ];
    for (prefix, value) in want {
        let found: Vec<&str> = text
            .lines()
            .filter_map(|l| l.strip_prefix(prefix))
            .collect();
        match found.as_slice() {
            [v] if *v == value => {}
            [] => return Err(format!("the script has no `{prefix}` line")),
            [v] => {
                return Err(format!(
                    "the script's `{prefix}{v}` is not `{prefix}{value}`: it was rendered for another record"
                ))
            }
            _ => return Err(format!("the script has {} `{prefix}` lines", found.len())),
        }
    }
    Ok(())
}

/// Render one job line with default options (see [`render_line_with`]).
pub fn render_line(line: &JobLine, profile: &SiteProfile) -> Result<Script> {
    render_line_with(line, profile, RenderOptions::default())
}

/// Render one job line into the `single` (one node) or `multi` (two or more
/// nodes after the GPU rule) script.
///
/// Input: a job line with `id`, `storage`, `command` or `execution`, and
/// optionally `resources`, `spec`, `mounts`, `env`, `secrets`, `runtime`,
/// `image` (docs/CONTRACT.md); the site profile gives partition limits, the
/// default partition and runtime, and the per-node GPU maximum.
/// Output: the [`Script`] with `bindings`, `resources` and (pyxis) `image`.
///
/// Errors: [`Error::BadLine`] for a missing or mistyped field;
/// [`Error::Data`] for a rule the job breaks (see [`crate::job::plan`]);
/// [`Error::Internal`] if a template fails to render.
pub fn render_line_with(
    line: &JobLine,
    profile: &SiteProfile,
    opts: RenderOptions,
) -> Result<Script> {
    let plan = job::plan(line, profile, opts)?;
    let e = &plan.effective;
    let (Some(nodes), Some(gpus), Some(requeue), Some(child_timeout)) =
        (e.nodes, e.gpus_per_node, e.requeue, e.child_timeout_s)
    else {
        return Err(unplanned());
    };
    let ct = srun(plan.container.as_ref())?;
    let c = Common {
        job_name: plan.job_name.clone(),
        partition: plan.partition.clone(),
        account: plan.account.clone(),
        time: plan.time.clone(),
        requeue,
        exclude: plan.exclude.clone(),
        output: plan.output.clone(),
        error: plan.error.clone(),
        id: plan.id.clone(),
        log_dir_prefix: plan.log_dir_prefix.clone(),
        secrets_file: plan.secrets_file.clone(),
        needs_secrets: plan.needs_secrets,
        secret_names: plan.secret_names.clone(),
        child_timeout,
        kill_after: job::defaults::KILL_AFTER,
    };
    let r = Rendezvous { nodes, gpus };
    let (template, text) = if nodes > 1 {
        (
            "multi",
            MultiScript {
                c: &c,
                j: &plan,
                ct,
                r: &r,
            }
            .render(),
        )
    } else {
        (
            "single",
            SingleScript {
                c: &c,
                j: &plan,
                ct,
                r: &r,
            }
            .render(),
        )
    };
    let mut script = Script::new(template, text.map_err(internal)?);
    script.bindings = Some(plan.bindings);
    script.image = plan.image;
    script.resources = Some(plan.effective);
    script.container = plan.container;
    Ok(script)
}

/// What to convert: a registry image into the `.sqsh` conversion cache.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConvertRequest {
    /// Slurm job name, `[a-z0-9-]` (see [`convert_job_name`]).
    pub id: String,
    /// The image in any accepted registry spelling.
    pub image: String,
    /// `SLURM_BASE_RESULTS_DIR`; the output is `<base_dir>/images/<sqsh_name>`.
    pub base_dir: String,
    /// Directory for logs and the secrets sidecar:
    /// `<job_dir>/slurm-logs/<id>-%j/main.out`, `<job_dir>/env/secrets.env`.
    pub job_dir: String,
    /// Slurm account, if any.
    #[serde(default)]
    pub account: Option<String>,
    /// Convert even when the cache file already holds a squashfs image
    /// (forced reconversion of a moving tag such as `:latest`); the new
    /// image replaces the old one by an atomic rename, so jobs already
    /// running keep the file they opened. Default false: a valid cache file
    /// ends the job at once ("nothing to do").
    #[serde(default)]
    pub force: bool,
}

/// The Slurm job name of a forced reconversion of `image`:
/// [`convert_job_name`] followed by `-reconvert`, so that a forced
/// reconversion is never mistaken for (or shared with) an ordinary
/// conversion that would stop early on a valid cache file.
///
/// Errors: as [`normalise_image`].
pub fn reconvert_job_name(image: &str) -> Result<String> {
    Ok(format!("{}-reconvert", convert_job_name(image)?))
}

/// A stable Slurm job name for converting `image`: `tao-convert-` and the
/// first 12 hex digits of the SHA-256 of its normalised form.
///
/// Errors: as [`normalise_image`].
pub fn convert_job_name(image: &str) -> Result<String> {
    let norm = normalise_image(image)?;
    Ok(format!(
        "tao-convert-{}",
        &tao_core::sha256_hex(norm.as_bytes())[..12]
    ))
}

/// Render the image conversion job for the site's CPU partition: `enroot
/// import -o` into a temporary name, renamed to `<base_dir>/images/<name>`
/// only after the `hsqs` magic checks out; TMPDIR=/tmp and a job-unique
/// ENROOT_TEMP_PATH / SLURM_ENROOT_TEMP_PATH; partition, CPUs, memory and
/// time from `profile.conversion`; never exclusive, never requeued.
///
/// Errors: [`Error::Data`] for an image that is already a `.sqsh` or does
/// not normalise, a bad id or path; [`Error::Config`] for a conversion
/// profile whose values cannot go on `#SBATCH` lines.
pub fn render_convert(req: &ConvertRequest, profile: &SiteProfile) -> Result<Script> {
    tao_core::id::validate(&req.id)?;
    let norm = normalise_image(&req.image)?;
    if is_sqsh(&norm) {
        return Err(Error::Data(format!(
            "image {:?} is already a .sqsh file; it needs no conversion",
            req.image
        )));
    }
    let name = sqsh_name(&req.image)?;
    for (what, p) in [("base_dir", &req.base_dir), ("job_dir", &req.job_dir)] {
        if !is_plain_abs_path(p) {
            return Err(Error::Data(format!(
                "{what} {p:?} must be an absolute path of [A-Za-z0-9_./-] without '..'"
            )));
        }
    }
    let conv = &profile.conversion;
    let cfg = |e: Error| {
        Error::Config(format!(
            "site profile {:?}, [conversion]: {e}",
            profile.name
        ))
    };
    let time = SlurmTime::parse(&conv.time).map_err(|e| {
        Error::Config(format!(
            "site profile {:?}, [conversion]: {e}",
            profile.name
        ))
    })?;
    let Some(wall) = time.seconds() else {
        return Err(Error::Config(format!(
            "site profile {:?}, [conversion]: time must be finite",
            profile.name
        )));
    };
    let job_dir = req.job_dir.trim_end_matches('/');
    let base = req.base_dir.trim_end_matches('/');
    let images_dir = Layout::images_dir(base);
    let c = Common::helper(
        &req.id,
        job_dir,
        SbatchValue::partitions(&conv.partition).map_err(cfg)?,
        req.account.as_deref(),
        &time,
        wall * job::defaults::CHILD_PERMILLE / 1000,
        job::defaults::KILL_AFTER,
    )?;
    let v = ConvertView {
        cpus: SbatchValue::number(conv.cpus.max(1)),
        mem: SbatchValue::mem(&conv.mem).map_err(cfg)?,
        uri: format!("docker://{norm}"),
        sqsh: format!("{images_dir}/{name}"),
        tmp_prefix: format!("{images_dir}/.{name}.partial-"),
        images_dir,
        force: req.force,
    };
    let text = ConvertScript { c: &c, v: &v }.render().map_err(internal)?;
    Ok(Script::new("convert", text))
}

/// How the probe program is started on each node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum ProbeLauncher {
    /// `torchrun --nnodes --nproc-per-node --node-rank --master-addr
    /// --master-port PROGRAM ARGS...` (one torchrun per node).
    #[default]
    Torchrun,
    /// `ARGV... PROGRAM ARGS...` once per node (e.g. `["python3"]`, or a
    /// test stand-in such as `["bash"]`), with the rendezvous variables set.
    Command(Vec<String>),
}

/// Markers the probe script prints on stdout (`main.out`), one line each,
/// after `tao: `.
pub mod probe_result {
    /// The probe program exited 0.
    pub const OK: &str = "TAO_PROBE_RESULT=ok";
    /// The hard timeout fired (timeout(1) exit 124, or 137 after KILL).
    pub const TIMEOUT: &str = "TAO_PROBE_RESULT=timeout";
    /// Any other exit: `TAO_PROBE_RESULT=failed exit=N`.
    pub const FAILED_PREFIX: &str = "TAO_PROBE_RESULT=failed";
}

/// The communication probe job (docs/design.md, "Multi-node").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProbeRequest {
    /// Slurm job name, `[a-z0-9-]`.
    pub id: String,
    /// Partition (the real job's partition).
    pub partition: String,
    /// Slurm account, if any.
    #[serde(default)]
    pub account: Option<String>,
    /// Node count (the real job's).
    pub nodes: u32,
    /// GPUs per node (0: CPU only; torchrun then starts one process per node).
    pub gpus_per_node: u32,
    /// CPUs per task.
    #[serde(default = "default_probe_cpus")]
    pub cpus_per_task: u32,
    /// Wall time (Slurm format); must exceed `timeout_s` plus 10 s.
    #[serde(default = "default_probe_time")]
    pub time: String,
    /// Hard timeout of the probe in seconds (about 120).
    #[serde(default = "default_probe_timeout")]
    pub timeout_s: u64,
    /// Job directory: logs, sidecar and the staged program live under it.
    pub job_dir: String,
    /// The staged probe program, relative to `job_dir` (e.g. `inputs/probe/allreduce.py`).
    pub program: String,
    /// Arguments after the program.
    #[serde(default)]
    pub args: Vec<String>,
    /// How the program is started.
    #[serde(default)]
    pub launcher: ProbeLauncher,
    /// The NCCL environment being tried (`{}` for the first try).
    #[serde(default)]
    pub nccl_env: BTreeMap<String, String>,
    /// Absolute `.sqsh` for runtime pyxis; `None` runs plain srun.
    #[serde(default)]
    pub image: Option<String>,
    /// Pyxis `--container-mounts` entries (the job directory's base must be among them).
    #[serde(default)]
    pub mounts: Vec<String>,
    /// Nodes to avoid.
    #[serde(default)]
    pub exclude: Vec<String>,
}

fn default_probe_cpus() -> u32 {
    2
}
fn default_probe_time() -> String {
    "00:10:00".into()
}
fn default_probe_timeout() -> u64 {
    120
}

/// Render the communication probe job: the rendezvous exports of the multi
/// template, the given NCCL variables, then the staged program under
/// torchrun (or the given launcher) on every node, under a hard timeout of
/// `timeout_s` seconds (plus 10 s before SIGKILL); prints one
/// [`probe_result`] line and exits with the program's status (124 on
/// timeout). Never requeued.
///
/// Errors: [`Error::Data`] for a bad id, partition, path, variable, image
/// or a wall time not above the timeout.
pub fn render_probe(req: &ProbeRequest) -> Result<Script> {
    tao_core::id::validate(&req.id)?;
    if req.nodes == 0 || req.cpus_per_task == 0 || req.timeout_s == 0 {
        return Err(Error::Data(
            "probe: nodes, cpus_per_task and timeout_s must be at least 1".into(),
        ));
    }
    let job_dir = req.job_dir.trim_end_matches('/');
    if !is_plain_abs_path(job_dir) {
        return Err(Error::Data(format!(
            "probe job_dir {:?} must be an absolute path of [A-Za-z0-9_./-] without '..'",
            req.job_dir
        )));
    }
    if req.program.starts_with('/') || !req.program.split('/').all(|p| is_word(p) && p != "..") {
        return Err(Error::Data(format!(
            "probe program {:?} must be a path relative to the job directory, of [A-Za-z0-9_.-] components",
            req.program
        )));
    }
    let time = job::parse_time("probe time", &req.time, false)?;
    if time.seconds().unwrap_or(u64::MAX) <= req.timeout_s + 10 {
        return Err(Error::Data(format!(
            "probe time {} must be longer than the probe timeout of {} s plus 10 s",
            time.canonical(),
            req.timeout_s
        )));
    }
    let env = job::check_env_map(&req.nccl_env)?;
    for a in &req.args {
        if tao_core::shell::has_nul(a) {
            return Err(Error::Data("probe argument contains a NUL byte".into()));
        }
    }
    let container = match &req.image {
        None => None,
        Some(img) => {
            if !(img.starts_with('/') && is_sqsh(img)) {
                return Err(Error::Data(format!(
                    "probe image {img:?} must be an absolute .sqsh path (convert it first)"
                )));
            }
            for m in &req.mounts {
                if m.is_empty() || m.contains(',') || m.chars().any(|c| c.is_control()) {
                    return Err(Error::Data(format!(
                        "probe mount {m:?} must be SRC:DST[:FLAGS] without commas"
                    )));
                }
            }
            Some(Container {
                image: Some(img.clone()),
                mounts: Some(req.mounts.join(",")),
                ..Container::default()
            })
        }
    };
    let (mode, mut argv) = match &req.launcher {
        ProbeLauncher::Torchrun => ("torchrun", Vec::new()),
        ProbeLauncher::Command(prefix) => {
            if prefix.is_empty() || prefix.iter().any(|a| tao_core::shell::has_nul(a)) {
                return Err(Error::Data(
                    "probe launcher command must be a non-empty argv without NUL".into(),
                ));
            }
            ("command", prefix.clone())
        }
    };
    argv.push(format!("{job_dir}/{}", req.program));
    argv.extend(req.args.iter().cloned());
    let exclude = if req.exclude.is_empty() {
        None
    } else {
        Some(SbatchValue::node_list(&req.exclude)?)
    };
    let c = Common {
        exclude,
        ..Common::helper(
            &req.id,
            job_dir,
            SbatchValue::partitions(&req.partition)?,
            req.account.as_deref(),
            &time,
            req.timeout_s,
            10,
        )?
    };
    let p = ProbeView {
        nodes: SbatchValue::number(req.nodes),
        gres: (req.gpus_per_node > 0).then(|| SbatchValue::gres_gpu(req.gpus_per_node)),
        cpus: SbatchValue::number(req.cpus_per_task),
        env,
        nproc: req.gpus_per_node.max(1),
        container,
        mode,
        argv,
    };
    let r = Rendezvous {
        nodes: req.nodes,
        gpus: req.gpus_per_node,
    };
    let text = ProbeScript {
        c: &c,
        p: &p,
        ct: srun(p.container.as_ref())?,
        r: &r,
    }
    .render()
    .map_err(internal)?;
    Ok(Script::new("probe", text))
}

/// Whether a job needs the communication probe first (docs/design.md): more than
/// one node, or two or more GPUs on a node, after the GPU rule.
///
/// Errors: as [`render_line`] (the line is planned to know its shape).
pub fn needs_probe(line: &JobLine, profile: &SiteProfile) -> Result<bool> {
    let plan = job::plan(line, profile, RenderOptions::default())?;
    Ok(plan.effective.needs_probe())
}

/// The probe request for a rendered job line, from the plan tao-render
/// wrote into it: `script.resources` (partition, node count, GPUs per
/// node), `script.container` (image and mounts, runtime pyxis),
/// `storage.base_dir`, `resources.account` and `resources.exclude`.
/// Nothing is planned again; otherwise as [`probe_request_for_line`].
///
/// Errors: [`Error::MissingStage`] when the line carries no plan (render it
/// with tao-render) or, for runtime pyxis, no `script.container` (a line
/// rendered before tao-render wrote it: render it again);
/// [`Error::Data`] for a `probe_id` that is not a record id.
pub fn probe_request_from_plan(
    line: &JobLine,
    probe_id: &str,
    program: &str,
) -> Result<ProbeRequest> {
    tao_core::id::validate(probe_id)?;
    let missing = |what: &str| Error::MissingStage {
        line: line.line_no,
        message: format!("no `{what}` in the line; render it with tao-render"),
    };
    let plan = line.plan().ok_or_else(|| missing("script.resources"))?;
    let (Some(partition), Some(nodes), Some(gpus_per_node)) =
        (plan.partition, plan.nodes, plan.gpus_per_node)
    else {
        return Err(missing("script.resources"));
    };
    let base_dir = line
        .storage()
        .and_then(|s| s.base_dir)
        .ok_or_else(|| missing("storage.base_dir"))?;
    let res = line.resources().unwrap_or_default();
    let pyxis = line.get_str(&["runtime"]) == Some("pyxis");
    let container = line.get_path(&["script", "container"]);
    let (image, mounts) = match container {
        Some(c) if !c.is_null() => (
            c.get("image")
                .and_then(serde_json::Value::as_str)
                .map(str::to_string),
            c.get("mounts")
                .and_then(serde_json::Value::as_str)
                .map(|m| m.split(',').map(str::to_string).collect())
                .unwrap_or_default(),
        ),
        _ if pyxis => return Err(missing("script.container")),
        _ => (None, Vec::new()),
    };
    Ok(ProbeRequest {
        account: res.account,
        image,
        mounts,
        exclude: res.exclude.unwrap_or_default(),
        ..probe_request(
            probe_id,
            program,
            &base_dir,
            partition,
            nodes,
            gpus_per_node,
        )
    })
}

/// The probe request `probe_id` for a job of `nodes` x `gpus_per_node` on
/// `partition`, its job directory `<base_dir>/jobs/<probe_id>`, running
/// `program`; every other field takes [`ProbeRequest`]'s defaults (no
/// account, image, mounts or excluded nodes: the callers set those).
fn probe_request(
    probe_id: &str,
    program: &str,
    base_dir: &str,
    partition: String,
    nodes: u32,
    gpus_per_node: u32,
) -> ProbeRequest {
    ProbeRequest {
        id: probe_id.to_string(),
        partition,
        account: None,
        nodes,
        gpus_per_node,
        cpus_per_task: default_probe_cpus(),
        time: default_probe_time(),
        timeout_s: default_probe_timeout(),
        job_dir: Layout::job_dir(base_dir, probe_id),
        program: program.to_string(),
        args: Vec::new(),
        launcher: ProbeLauncher::Torchrun,
        nccl_env: BTreeMap::new(),
        image: None,
        mounts: Vec::new(),
        exclude: Vec::new(),
    }
}

/// The probe request for a job line: the line's partition, account,
/// excluded nodes, node count and GPUs per node (after the GPU rule), and
/// for runtime pyxis its `.sqsh` image and mounts (plus the base-dir mount);
/// the probe's own job directory is `<base_dir>/jobs/<probe_id>` and
/// `program` is relative to it. Other fields take [`ProbeRequest`]'s
/// defaults (10 minutes wall time, 120 s timeout, torchrun, no NCCL
/// variables); set `nccl_env` for each knob set tried.
///
/// Errors: as [`render_line`]; [`Error::Data`] for a `probe_id` that is not a record id.
pub fn probe_request_for_line(
    line: &JobLine,
    profile: &SiteProfile,
    probe_id: &str,
    program: &str,
) -> Result<ProbeRequest> {
    tao_core::id::validate(probe_id)?;
    let plan = job::plan(line, profile, RenderOptions::default())?;
    let (image, mounts) = match srun(plan.container.as_ref())? {
        Some((image, mounts)) => (
            Some(image.to_string()),
            mounts.split(',').map(str::to_string).collect(),
        ),
        None => (None, Vec::new()),
    };
    let e = &plan.effective;
    let (Some(partition), Some(nodes), Some(gpus_per_node)) =
        (e.partition.clone(), e.nodes, e.gpus_per_node)
    else {
        return Err(unplanned());
    };
    Ok(ProbeRequest {
        account: plan.account.as_ref().map(|a| a.as_str().to_string()),
        image,
        mounts,
        exclude: plan.exclude_list.clone(),
        ..probe_request(
            probe_id,
            program,
            &plan.base_dir,
            partition,
            nodes,
            gpus_per_node,
        )
    })
}

#[cfg(test)]
mod tests {
    //! Review rules enforced by grep: no escaper bypass, no shell tracing,
    //! the directive escaper only on `#SBATCH` lines.

    use std::path::Path;

    fn files(dir: &str) -> Vec<(String, String)> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
        let mut out = Vec::new();
        for entry in std::fs::read_dir(&root).unwrap() {
            let p = entry.unwrap().path();
            out.push((
                p.display().to_string(),
                std::fs::read_to_string(&p).unwrap(),
            ));
        }
        assert!(!out.is_empty(), "{dir} is empty");
        out
    }

    #[test]
    fn no_safe_filter_safe_type_or_set_x_anywhere() {
        // Built from pieces so this file does not match itself.
        let banned = [
            format!("|{}", "safe"),
            format!("| {}", "safe"),
            format!("{}<", "Safe"),
            format!("{}::", "MaybeSafe"),
            format!("set -{}", "x"),
            format!("set -o {}", "xtrace"),
        ];
        let mut all = files("templates");
        all.extend(files("src"));
        all.push(("askama.toml".into(), include_str!("../askama.toml").into()));
        for (path, text) in &all {
            for b in &banned {
                assert!(!text.contains(b.as_str()), "{path} contains {b:?}");
            }
        }
    }

    #[test]
    fn directive_escaper_only_on_sbatch_lines_and_sbatch_values_always_through_it() {
        for (path, text) in files("templates") {
            for line in text.lines() {
                let directive = line.contains("escape(\"sbatch-directive\")");
                if directive {
                    assert!(line.starts_with("#SBATCH --"), "{path}: {line}");
                }
                if line.starts_with("#SBATCH") && line.contains("{{") {
                    assert!(
                        line.matches("{{").count()
                            == line.matches("|escape(\"sbatch-directive\") }}").count(),
                        "{path}: an #SBATCH value without the directive escaper: {line}"
                    );
                }
            }
        }
    }

    #[test]
    fn comments_do_not_use_the_default_opener() {
        // `{#` is bash's `${#var}`; our syntax uses `<# #>` for comments.
        let cfg = include_str!("../askama.toml");
        assert!(cfg.contains("comment_start = \"<#\""));
    }
}
