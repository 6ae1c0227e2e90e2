//! From a job line to a checked plan: read the fields tao-render needs
//! (docs/CONTRACT.md), fill the documented defaults, and apply the
//! resource rules (docs/design.md, "Resource rules").
//!
//! Two kinds of failure are kept apart. A line that lacks a required field
//! or has one of the wrong JSON type is malformed ([`Error::BadLine`], exit
//! 65). A well-formed line that breaks a rule (a wall time above the
//! partition's limit, a relative `.sqsh`, a value that cannot go on an
//! `#SBATCH` line) is refused for that job only ([`Error::Data`]; the filter
//! sets `error` on the line and exits 1).

use std::collections::BTreeMap;
use tao_core::model::{Container, Effective, ImageRef, Layout};

use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::Value;
use tao_core::request;
use tao_core::site::SiteProfile;
use tao_core::{Error, JobLine, Result};

use crate::escape::{is_plain_abs_path, is_word, SbatchValue};
use tao_core::image::{is_sqsh, normalise_image, sqsh_name};
use tao_core::slurm_time::SlurmTime;

/// Defaults of the packaged platform: the one copy is
/// [`tao_core::request::defaults`].
pub mod defaults {
    pub use tao_core::request::defaults::*;
}

/// Options of a render that do not come from the line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RenderOptions {
    /// `--allow-unlimited`: kept for old command lines and has no effect.
    /// An unlimited wall time (`0`, `UNLIMITED`, ...) is accepted wherever
    /// the partition's limit allows it, as `tao-record open` accepts it
    /// ([`tao_core::request::check_time_limit`]).
    pub allow_unlimited: bool,
}

/// `resources` as the job model types it (one definition for every tool).
type ResourcesIn = tao_core::model::Resources;

#[derive(Debug, Deserialize)]
struct StorageIn {
    base_dir: String,
    job_dir: String,
    results_dir: String,
}

#[derive(Debug, Deserialize)]
struct SpecIn {
    name: String,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    sha256: Option<String>,
}

#[derive(Debug, Deserialize)]
struct PostIn {
    command: String,
    #[serde(default)]
    scope: Option<String>,
}

#[derive(Debug, Deserialize)]
struct FileIn {
    source: String,
    sha256: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ExecutionIn {
    pre_commands: Vec<String>,
    command: Option<String>,
    post_commands: Vec<PostIn>,
    launcher: Option<String>,
    supporting_files: Vec<FileIn>,
}

/// One lifecycle step: a name for logs and completion.json, its scope
/// (`all` or `leader`) and its shell text with the bindings applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// `pre_1`, `main`, `post_2`, ... (`[a-z0-9_]`).
    pub name: String,
    /// `all` or `leader`.
    pub scope: &'static str,
    /// Shell text run with `eval` inside the step.
    pub text: String,
}

/// A supporting file the script checks before the first step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verify {
    /// Absolute path under `<job_dir>/inputs/action-helpers/`.
    pub path: String,
    /// Expected lowercase hex SHA-256.
    pub sha256: String,
}

/// The bound values and checksums that ride in `script.bindings`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Bindings {
    /// `{config_path}`: `<job_dir>/specs/<spec.name>`, or null without a spec.
    pub config_path: Option<String>,
    /// `{job_id}`.
    pub job_id: String,
    /// `{results_dir}`.
    pub results_dir: String,
    /// SHA-256 of the bound config (`spec.text`), or null without one.
    pub config_sha256: Option<String>,
    /// SHA-256 of the supporting-file bundle: of the text
    /// `"<sha256>  <source>\n"` per file, sorted by source (sha256sum(1)
    /// format), or null without supporting files.
    pub bundle_sha256: Option<String>,
}

/// A checked job, ready for the single or multi template.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Record id (also the job name).
    pub id: String,
    /// `#SBATCH` values.
    pub job_name: SbatchValue,
    /// Partition list.
    pub partition: SbatchValue,
    /// Account, if any.
    pub account: Option<SbatchValue>,
    /// Wall time.
    pub time: SbatchValue,
    /// Node count.
    pub nodes: SbatchValue,
    /// `gpu:N`, absent for a CPU-only job.
    pub gres: Option<SbatchValue>,
    /// CPUs per task.
    pub cpus: SbatchValue,
    /// Memory, if asked.
    pub mem: Option<SbatchValue>,
    /// Excluded nodes, if any.
    pub exclude: Option<SbatchValue>,
    /// Excluded nodes as given (names or ranges).
    pub exclude_list: Vec<String>,
    /// storage.base_dir without a trailing `/`.
    pub base_dir: String,
    /// The line's mounts as given (without the added base-dir mount).
    pub mounts: Vec<String>,
    /// `--output` path.
    pub output: SbatchValue,
    /// `--error` path.
    pub error: SbatchValue,
    /// The effective resources, every field set; written as
    /// `script.resources` (tao_core's [`Effective`], the one definition
    /// of that section).
    pub effective: Effective,
    /// `<job_dir>/slurm-logs/<id>-` (the Slurm job id is appended at run time).
    pub log_dir_prefix: String,
    /// `<job_dir>/env/secrets.env`.
    pub secrets_file: String,
    /// Whether the line names secrets (`secrets` non-empty): the script
    /// then requires the sidecar.
    pub needs_secrets: bool,
    /// The secret names, space-separated (only those that are variable
    /// names): the job's output masker (`tao_mask`) masks their values.
    pub secret_names: String,
    /// results_dir.
    pub results_dir: String,
    /// Parent of results_dir (TAO appends the job id itself).
    pub api_results_dir: String,
    /// `<job_dir>/inputs/action-helpers`: where tao-submit stages the
    /// supporting files; exported as `TAO_ACTION_HELPERS`.
    pub action_helpers_dir: String,
    /// The line's `env`, in order, values as strings.
    pub env: Vec<(String, String)>,
    /// The container for pyxis (both fields set), none for runtime
    /// `none`; written as `script.container`, so tao-submit's probe runs
    /// in it without planning again.
    pub container: Option<Container>,
    /// Image resolution for pyxis (every field set); written as
    /// `script.image`.
    pub image: Option<ImageRef>,
    /// Supporting files to verify.
    pub verify: Vec<Verify>,
    /// Lifecycle steps in order.
    pub steps: Vec<Step>,
    /// Bindings and checksums.
    pub bindings: Bindings,
}

fn field<T: DeserializeOwned>(line: &JobLine, key: &str) -> Result<Option<T>> {
    match line.fields.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => T::deserialize(v).map(Some).map_err(|e| Error::BadLine {
            line: line.line_no,
            message: format!("field `{key}`: {e}; see tao-jobline(7) for its shape"),
        }),
    }
}

fn refuse(msg: String) -> Error {
    Error::Data(msg)
}

fn no_nul(what: &str, s: &str) -> Result<()> {
    if tao_core::shell::has_nul(s) {
        Err(refuse(format!(
            "{what} contains a NUL byte, which no shell word can carry; remove it"
        )))
    } else {
        Ok(())
    }
}

/// Whether the first word of a command is a Python script (`*.py`), which
/// torchrun starts with `python`; any other program needs `--no-python`.
fn first_word_is_py(command: &str) -> bool {
    command
        .split_whitespace()
        .next()
        .map(|w| w.trim_matches(['"', '\'']))
        .is_some_and(|w| w.ends_with(".py"))
}

/// Whether `name` is a shell variable name `[A-Za-z_][A-Za-z0-9_]*`
/// ([`tao_core::request::is_var_name`]).
pub fn is_env_name(name: &str) -> bool {
    request::is_var_name(name)
}

/// Check an `env` entry: a name [`request::env_name`] accepts (not
/// reserved, not secret-looking) and a value without NUL.
///
/// Errors: [`Error::Data`] naming the variable.
pub fn check_env(name: &str, value: &str) -> Result<()> {
    request::env_name(name).map_err(|e| refuse(format!("env name {e}")))?;
    no_nul(&format!("env {name}"), value)
}

/// Replace the three bindings in a command: `{config_path}`, `{job_id}`,
/// `{results_dir}` (nothing else is bound). The bound values hold only
/// `[A-Za-z0-9_./-]`, so the text means the same whether a binding sits
/// unquoted or inside quotes.
pub fn bind(text: &str, b: &Bindings) -> String {
    let mut out = text.replace("{job_id}", &b.job_id);
    out = out.replace("{results_dir}", &b.results_dir);
    if let Some(cp) = &b.config_path {
        out = out.replace("{config_path}", cp);
    }
    out
}

fn parent_dir(path: &str) -> Option<&str> {
    let trimmed = path.trim_end_matches('/');
    let (parent, _) = trimmed.rsplit_once('/')?;
    Some(if parent.is_empty() { "/" } else { parent })
}

/// Check a wall time against the partitions of a comma list
/// ([`request::check_time_limit`]).
///
/// Errors: [`Error::Data`] naming the partition and its limit.
pub fn check_time_limit(time: SlurmTime, partitions: &str, profile: &SiteProfile) -> Result<()> {
    request::check_time_limit(time, partitions, profile)
        .map_err(|e| refuse(format!("resources.time {e}")))
}

/// Parse and check a wall time (`what` names it in errors).
///
/// Errors: [`Error::Data`] for a malformed time or an unlimited one without
/// `allow_unlimited`.
pub fn parse_time(what: &str, s: &str, allow_unlimited: bool) -> Result<SlurmTime> {
    let t = request::wall_time(s).map_err(|e| refuse(format!("{what}: {e}")))?;
    if t == SlurmTime::Unlimited && !allow_unlimited {
        return Err(refuse(format!(
            "{what} {s:?} means no limit to Slurm; give a finite time such as 04:00:00"
        )));
    }
    Ok(t)
}

/// The child timeout in seconds ([`request::child_timeout_secs`]).
///
/// Errors: [`Error::Data`] for a malformed child timeout or one not below the wall time.
pub fn child_timeout_secs(given: Option<&str>, wall: SlurmTime) -> Result<u64> {
    request::child_timeout_secs(given, wall)
        .map_err(|e| refuse(format!("resources.child_timeout {e}")))
}

/// GPU shape ([`request::gpu_shape`]): `(nodes, gpus_per_node, exclusive)`.
///
/// Errors: [`Error::Data`] when the total cannot be split evenly.
pub fn gpu_shape(nodes: u32, gpus: u32, exclusive: bool, max: u32) -> Result<(u32, u32, bool)> {
    request::gpu_shape(nodes, gpus, exclusive, max)
        .map_err(|e| refuse(format!("resources.gpus_per_node: {e}")))
}

/// Build the plan for one job line.
///
/// Errors: [`Error::MissingStage`] for a missing `id` or `storage` (written
/// by tao-record open), [`Error::BadLine`] for another missing or mistyped
/// field (both malformed input, exit 65); [`Error::Data`] for a rule the job breaks (exit 1 from
/// the filter); [`Error::Config`] for a broken site profile.
pub fn plan(line: &JobLine, profile: &SiteProfile, opts: RenderOptions) -> Result<Plan> {
    let id = line.require_str(&["id"])?.to_string();
    let storage: StorageIn = field(line, "storage")?.ok_or_else(|| Error::MissingStage {
        line: line.line_no,
        message: "missing field `storage` ({base_dir, job_dir, results_dir}); pipe lines from `tao-record open`".into(),
    })?;
    let res: ResourcesIn = field(line, "resources")?.unwrap_or_default();
    let execution: Option<ExecutionIn> = field(line, "execution")?;
    let command: Option<String> = field(line, "command")?;
    let spec: Option<SpecIn> = field(line, "spec")?;
    let mounts: Vec<String> = field(line, "mounts")?.unwrap_or_default();
    let secrets: Vec<String> = field(line, "secrets")?.unwrap_or_default();
    let runtime: Option<String> = field(line, "runtime")?;
    let image: Option<String> = field(line, "image")?;
    let env_in: Option<serde_json::Map<String, Value>> = field(line, "env")?;

    let main_text = execution
        .as_ref()
        .and_then(|e| e.command.clone())
        .or(command)
        .ok_or_else(|| Error::BadLine {
            line: line.line_no,
            message:
                "missing field `command` (or `execution.command`); give the shell command to run"
                    .into(),
        })?;

    // Identity and storage.
    tao_core::id::validate(&id)?;
    let job_name = SbatchValue::job_name(&id)?;
    for (what, p) in [
        ("storage.base_dir", &storage.base_dir),
        ("storage.job_dir", &storage.job_dir),
        ("storage.results_dir", &storage.results_dir),
    ] {
        if !is_plain_abs_path(p) {
            return Err(refuse(format!(
                "{what} {p:?} must be an absolute path of [A-Za-z0-9_./-] without '..' (it goes on #SBATCH lines and into commands); choose another SLURM_BASE_RESULTS_DIR"
            )));
        }
    }
    let job_dir = storage.job_dir.trim_end_matches('/').to_string();
    let results_dir = storage.results_dir.trim_end_matches('/').to_string();
    let base_dir = storage.base_dir.trim_end_matches('/').to_string();
    let api_results_dir = parent_dir(&results_dir)
        .ok_or_else(|| {
            refuse(format!(
                "storage.results_dir {results_dir:?} has no parent directory"
            ))
        })?
        .to_string();

    // Resources.
    let partition_s = res
        .partition
        .clone()
        .unwrap_or_else(|| profile.default_partition.clone());
    let partition = SbatchValue::partitions(&partition_s)?;
    let account = res
        .account
        .as_deref()
        .map(SbatchValue::account)
        .transpose()?;
    for name in partition_s.split(',') {
        request::known_partition(profile, name)
            .map_err(|e| refuse(format!("resources.partition {e}")))?;
    }
    let _ = opts.allow_unlimited; // no effect: the partition's limit decides
    let wall = parse_time(
        "resources.time",
        res.time.as_deref().unwrap_or(defaults::TIME),
        true,
    )?;
    check_time_limit(wall, &partition_s, profile)?;
    let child_s = child_timeout_secs(res.child_timeout.as_deref(), wall)?;
    let nodes_in = request::nodes(res.nodes.unwrap_or(defaults::NODES))
        .map_err(|e| refuse(format!("resources.nodes: {e}")))?;
    let cpus = request::cpus_per_task(
        res.cpus_per_task
            .unwrap_or_else(|| request::default_cpus_per_task(profile, &partition_s)),
    )
    .map_err(|e| refuse(format!("resources.cpus_per_task: {e}")))?;
    let (nodes, gpus, exclusive) = gpu_shape(
        nodes_in,
        res.gpus_per_node.unwrap_or(defaults::GPUS_PER_NODE),
        res.exclusive.unwrap_or(false),
        profile.max_gpus_per_node,
    )?;
    let requeue = res.requeue.unwrap_or(true);
    let exclude = match res.exclude.as_deref() {
        Some(list) if !list.is_empty() => Some(SbatchValue::node_list(list)?),
        _ => None,
    };
    let mem = match res.mem.as_deref() {
        Some(m) => Some(SbatchValue::mem(
            &request::mem(m).map_err(|e| refuse(format!("resources.mem {e}")))?,
        )?),
        None => None,
    };
    request::fits_partitions(
        profile,
        &partition_s,
        nodes_in,
        (nodes, gpus),
        cpus,
        res.mem.as_deref(),
    )
    .map_err(|(what, e)| {
        let field = match what {
            request::Unfit::Nodes => "nodes",
            request::Unfit::Gpus => "gpus_per_node",
            request::Unfit::Cpus => "cpus_per_task",
            request::Unfit::Mem => "mem",
        };
        refuse(format!("resources.{field}: {e}"))
    })?;

    // Bindings.
    let (config_path, config_sha256) = match &spec {
        Some(s) => {
            if !is_word(&s.name) || s.name.starts_with('.') {
                return Err(refuse(format!(
                    "spec.name {:?} must be a file name of [A-Za-z0-9_.-] not starting with '.'",
                    s.name
                )));
            }
            let sha = match (&s.text, &s.sha256) {
                (Some(text), Some(given)) => {
                    let got = tao_core::sha256_hex(text.as_bytes());
                    if &got != given {
                        return Err(refuse(format!(
                            "spec.sha256 {given:?} does not match spec.text (sha256 {got}); open the record again"
                        )));
                    }
                    Some(got)
                }
                (Some(text), None) => Some(tao_core::sha256_hex(text.as_bytes())),
                (None, given) => given.clone(),
            };
            (Some(Layout::new(&id, &job_dir).spec_path(&s.name)), sha)
        }
        None => (None, None),
    };
    let files = execution
        .as_ref()
        .map(|e| e.supporting_files.as_slice())
        .unwrap_or(&[]);
    let mut verify = Vec::new();
    let bundle_sha256 = if files.is_empty() {
        None
    } else {
        let mut sorted: Vec<&FileIn> = files.iter().collect();
        sorted.sort_by(|a, b| a.source.cmp(&b.source));
        let mut bundle = String::new();
        for f in sorted {
            let ok_path = !f.source.starts_with('/')
                && f.source
                    .split('/')
                    .all(|part| is_word(part) && part != "..");
            if !ok_path {
                return Err(refuse(format!(
                    "supporting file {:?} must be a relative path of [A-Za-z0-9_.-] components without '..'",
                    f.source
                )));
            }
            if f.sha256.len() != 64
                || !f
                    .sha256
                    .bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
            {
                return Err(refuse(format!(
                    "supporting file {:?}: sha256 {:?} is not 64 lowercase hex digits",
                    f.source, f.sha256
                )));
            }
            bundle.push_str(&format!("{}  {}\n", f.sha256, f.source));
            verify.push(Verify {
                path: format!(
                    "{}/{}",
                    Layout::new(&id, &job_dir).action_helpers_dir(),
                    f.source
                ),
                sha256: f.sha256.clone(),
            });
        }
        Some(tao_core::sha256_hex(bundle.as_bytes()))
    };
    let bindings = Bindings {
        config_path,
        job_id: id.clone(),
        results_dir: results_dir.clone(),
        config_sha256,
        bundle_sha256,
    };

    // Steps.
    let launcher_prefix = match execution.as_ref().and_then(|e| e.launcher.as_deref()) {
        None => String::new(),
        Some("torchrun") if nodes > 1 => "torchrun --nnodes=\"$TAO_NODE_COUNT\" --nproc-per-node=\"$TAO_GPUS_PER_NODE\" --node-rank=\"$NODE_RANK\" --master-addr=\"$MASTER_ADDR\" --master-port=\"$MASTER_PORT\" ".to_string(),
        Some("torchrun") => format!("torchrun --standalone --nproc-per-node={} ", gpus.max(1)),
        Some(other) => {
            return Err(refuse(format!(
                "execution.launcher {other:?} is not known; use \"torchrun\" or null"
            )))
        }
    };
    let mut steps = Vec::new();
    if let Some(e) = &execution {
        for (i, c) in e.pre_commands.iter().enumerate() {
            no_nul("execution.pre_commands", c)?;
            steps.push(Step {
                name: format!("pre_{}", i + 1),
                scope: "all",
                text: bind(c, &bindings),
            });
        }
    }
    no_nul("command", &main_text)?;
    if main_text.trim().is_empty() {
        return Err(refuse(
            "the command is empty; give the shell command to run".into(),
        ));
    }
    let main_bound = bind(&main_text, &bindings);
    // torchrun runs `python <first word>` unless told --no-python (torchrun
    // --help): a `.py` script is passed as is; anything else (`python x.py`,
    // a TAO entrypoint such as `dino train ...`) runs directly.
    let no_python = if !launcher_prefix.is_empty() && !first_word_is_py(&main_bound) {
        "--no-python "
    } else {
        ""
    };
    steps.push(Step {
        name: "main".into(),
        scope: "all",
        text: format!("{launcher_prefix}{no_python}{main_bound}"),
    });
    if let Some(e) = &execution {
        for (i, p) in e.post_commands.iter().enumerate() {
            no_nul("execution.post_commands", &p.command)?;
            let scope = match p.scope.as_deref() {
                None | Some("all") => "all",
                Some("leader") => "leader",
                Some(other) => {
                    return Err(refuse(format!(
                        "execution.post_commands[{i}].scope {other:?} is not known; use \"all\" or \"leader\""
                    )))
                }
            };
            steps.push(Step {
                name: format!("post_{}", i + 1),
                scope,
                text: bind(&p.command, &bindings),
            });
        }
    }

    if bindings.config_path.is_none() && steps.iter().any(|s| s.text.contains("{config_path}")) {
        return Err(refuse(
            "a command uses {config_path} but the line has no `spec`; open the record with --spec FILE".into(),
        ));
    }

    // Environment.
    let mut env = Vec::new();
    for (name, value) in env_in.unwrap_or_default() {
        let value = match value {
            Value::String(s) => s,
            Value::Number(n) => n.to_string(),
            Value::Bool(b) => b.to_string(),
            other => {
                return Err(Error::BadLine {
                    line: line.line_no,
                    message: format!("field `env.{name}`: expected a string, got {other}"),
                })
            }
        };
        check_env(&name, &value)?;
        env.push((name, value));
    }
    for name in &secrets {
        request::secret_name(name).map_err(|e| refuse(format!("secrets: {e}")))?;
    }
    request::env_not_secret(env.iter().map(|(k, _)| k.as_str()), &secrets)
        .map_err(|e| refuse(format!("env: {e}")))?;

    // Runtime and image.
    let runtime = runtime.unwrap_or_else(|| profile.runtime.clone());
    let (container, image_ref) = match runtime.as_str() {
        "none" => (None, None),
        "pyxis" => {
            let given = image.ok_or_else(|| {
                refuse(
                    "runtime \"pyxis\" needs an `image` (/abs/path.sqsh or registry#image:tag)"
                        .into(),
                )
            })?;
            let normalised = normalise_image(&given)?;
            let (sqsh, needs_conversion) = if is_sqsh(&normalised) {
                (normalised.clone(), false)
            } else {
                (
                    format!("{}/{}", Layout::images_dir(&base_dir), sqsh_name(&given)?),
                    true,
                )
            };
            if gpus > 0 && !(sqsh.starts_with('/') && is_sqsh(&sqsh)) {
                return Err(refuse(format!(
                    "image {given:?}: a GPU job's --container-image must be an absolute .sqsh path; a registry pull would run on idle, billed GPUs"
                )));
            }
            let mut all_mounts = Vec::new();
            for m in &mounts {
                // Pyxis --container-mounts: SRC[:DST[:FLAGS]], comma-separated
                // (Pyxis README); an empty part would be read as another mount.
                let parts: Vec<&str> = m.split(':').collect();
                if m.is_empty()
                    || m.contains(',')
                    || m.chars().any(|c| c.is_control())
                    || parts.len() > 3
                    || parts.iter().any(|p| p.is_empty())
                {
                    return Err(refuse(format!(
                        "mount {m:?} must be SRC:DST[:FLAGS] (no empty part, no commas, no control characters)"
                    )));
                }
                all_mounts.push(m.clone());
            }
            let covered = mounts.iter().any(|m| {
                let dst = m.split(':').nth(1).unwrap_or(m).trim_end_matches('/');
                // "/" (trimmed to "") covers everything.
                dst.is_empty() || base_dir == dst || base_dir.starts_with(&format!("{dst}/"))
            });
            if !covered {
                all_mounts.push(format!("{base_dir}:{base_dir}"));
            }
            (
                Some(Container {
                    image: Some(sqsh.clone()),
                    mounts: Some(all_mounts.join(",")),
                    ..Container::default()
                }),
                Some(ImageRef {
                    given: Some(given),
                    normalised: Some(normalised),
                    sqsh: Some(sqsh),
                    needs_conversion: Some(needs_conversion),
                    ..ImageRef::default()
                }),
            )
        }
        other => {
            return Err(refuse(format!(
                "runtime {other:?} is not known; use \"pyxis\" or \"none\""
            )))
        }
    };

    let layout = Layout::new(&id, &job_dir);
    Ok(Plan {
        output: SbatchValue::log_path(&job_dir, &id, "main.out")?,
        error: SbatchValue::log_path(&job_dir, &id, "main.err")?,
        log_dir_prefix: layout.log_dir_prefix(),
        secrets_file: layout.secrets_file(),
        needs_secrets: !secrets.is_empty(),
        secret_names: secrets
            .iter()
            .filter(|n| is_env_name(n))
            .cloned()
            .collect::<Vec<_>>()
            .join(" "),
        id,
        job_name,
        partition,
        account,
        time: SbatchValue::time(&wall),
        nodes: SbatchValue::number(nodes),
        gres: (gpus > 0).then(|| SbatchValue::gres_gpu(gpus)),
        cpus: SbatchValue::number(cpus),
        mem,
        exclude,
        exclude_list: res.exclude.clone().unwrap_or_default(),
        base_dir: base_dir.clone(),
        mounts: mounts.clone(),
        effective: Effective {
            nodes: Some(nodes),
            gpus_per_node: Some(gpus),
            cpus_per_task: Some(cpus),
            time: Some(wall.canonical()),
            child_timeout_s: Some(child_s),
            partition: Some(partition_s),
            exclusive: Some(exclusive),
            requeue: Some(requeue),
            ..Effective::default()
        },
        results_dir,
        api_results_dir,
        action_helpers_dir: layout.action_helpers_dir(),
        env,
        container,
        image: image_ref,
        verify,
        steps,
        bindings,
    })
}

/// An ordered map of NCCL variables, checked like `env` entries.
///
/// Errors: [`Error::Data`] naming a bad variable.
pub fn check_env_map(env: &BTreeMap<String, String>) -> Result<Vec<(String, String)>> {
    env.iter()
        .map(|(k, v)| check_env(k, v).map(|_| (k.clone(), v.clone())))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn torchrun_gets_no_python_unless_the_command_is_a_script() {
        assert!(first_word_is_py("train.py -e spec.yaml"));
        assert!(first_word_is_py("\"$TAO_ACTION_HELPERS/train.py\" -e x"));
        assert!(!first_word_is_py("python train.py"));
        assert!(!first_word_is_py("dino train -e /x/spec.yaml"));
        assert!(!first_word_is_py(""));
    }

    fn profile() -> SiteProfile {
        SiteProfile::load(Some("cs-oci-ord")).unwrap()
    }

    // The GPU shape rule itself is tested where it lives
    // (tao_core::request::tests::gpu_shape_rule).

    // The time-limit and child-timeout rules themselves are tested where
    // they live (tao_core::request::tests::time_limits_name_partition_and_limit
    // and ::child_timeout_rules); here, only what the wrappers add: the
    // field named in front of the rule's message, as Error::Data.
    #[test]
    fn time_wrappers_name_the_field_and_keep_the_rule_s_message() {
        let p = profile();
        let t = SlurmTime::parse("05:00:00").unwrap();
        let rule = request::check_time_limit(t, "polar,polar3", &p).unwrap_err();
        match check_time_limit(t, "polar,polar3", &p) {
            Err(Error::Data(m)) => assert_eq!(m, format!("resources.time {rule}")),
            other => panic!("{other:?}"),
        }
        assert!(check_time_limit(SlurmTime::parse("04:00:00").unwrap(), "polar", &p).is_ok());
        let wall = SlurmTime::parse("04:00:00").unwrap();
        let rule = request::child_timeout_secs(Some("04:00:00"), wall).unwrap_err();
        match child_timeout_secs(Some("04:00:00"), wall) {
            Err(Error::Data(m)) => assert_eq!(m, format!("resources.child_timeout {rule}")),
            other => panic!("{other:?}"),
        }
        assert_eq!(child_timeout_secs(Some("00:00:05"), wall).unwrap(), 5);
    }

    #[test]
    fn unlimited_needs_the_flag() {
        assert!(parse_time("t", "0", false).is_err());
        assert!(parse_time("t", "UNLIMITED", false).is_err());
        assert_eq!(parse_time("t", "0", true).unwrap(), SlurmTime::Unlimited);
    }

    #[test]
    fn env_names() {
        assert!(check_env("HF_HOME", "/x").is_ok());
        for bad in [
            "1A",
            "A-B",
            "A B",
            "",
            "TAO_JOB_ID",
            "SLURM_JOB_ID",
            "tao_child",
            "BASH_ENV",
        ] {
            assert!(check_env(bad, "v").is_err(), "{bad}");
        }
        assert!(check_env("A", "a\0b").is_err());
    }

    #[test]
    fn bindings_are_exact_tokens() {
        let b = Bindings {
            config_path: Some("/b/jobs/x/specs/s.yaml".into()),
            job_id: "x".into(),
            results_dir: "/b/results/x".into(),
            config_sha256: None,
            bundle_sha256: None,
        };
        assert_eq!(
            bind(
                "t -e {config_path} -r {results_dir} -k {job_id} {other} {}",
                &b
            ),
            "t -e /b/jobs/x/specs/s.yaml -r /b/results/x -k x {other} {}"
        );
    }
}
