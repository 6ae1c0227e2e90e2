//! `tao-record open`: mint a record id, bind the job's directories on
//! shared storage, check the request locally and write the record (state
//! PENDING). With `--retry-of ID`, make the next attempt of a failed
//! record instead: same request, new id and directories, both records
//! linked (`retry_of` / `retried_by`), and the node the failure blamed
//! excluded.
//!
//! Precedence of every setting: flag, then environment variable, then site
//! profile, then the defaults of the packaged platform (DESIGN "Defaults":
//! 1 node, 4 GPUs per node, 16 CPUs per task, 4 h wall time, child timeout
//! 95% of it, requeue on). Bad flag values exit 2, bad environment values
//! 78, bad file contents 65; each message names the flag or variable and
//! the fix.

use std::path::PathBuf;
use tao_core::model::Layout;

use serde_json::{json, Map, Value};
use tao_core::request::{self, defaults};
use tao_core::site::SiteProfile;
use tao_core::slurm_time::format_hms;
use tao_core::{Error, JobLine, Result, State};

use crate::machine::{push_history, TOOL};
use crate::store::{Record, Store};
use crate::validate;

/// Default storage tier.
pub const DEFAULT_TIER: &str = "lustre";
/// Largest spec file accepted, in bytes.
pub const MAX_SPEC_BYTES: u64 = 4 << 20;
/// Fields copied from the parent by `--retry-of` (the request).
pub const REQUEST_FIELDS: &[&str] = &[
    "platform",
    "action",
    "network_arch",
    "image",
    "runtime",
    "command",
    "resources",
    "spec",
    "mounts",
    "env",
    "secrets",
    "execution",
];

/// The order of a new record's request fields (tao-jobline(7)).
const CANONICAL_ORDER: &[&str] = &[
    "platform",
    "action",
    "network_arch",
    "image",
    "runtime",
    "command",
    "resources",
    "storage",
    "spec",
    "mounts",
    "env",
    "secrets",
    "execution",
];

/// Arguments of `tao-record open` (see `tao-record open --help`).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct OpenArgs {
    /// Platform; only "slurm" is known.
    #[arg(long, value_name = "NAME", default_value = "slurm")]
    pub platform: String,
    /// TAO action (train, evaluate, inference, ...).
    #[arg(long, value_name = "ACTION")]
    pub action: Option<String>,
    /// TAO network architecture (dino, classification_pyt, ...).
    #[arg(long, value_name = "ARCH")]
    pub network_arch: Option<String>,
    /// Container image (runtime pyxis; refused with runtime none, which runs no container): /abs/x.sqsh, registry#image:tag, docker://registry#image:tag or registry/image:tag.
    #[arg(long, value_name = "IMG")]
    pub image: Option<String>,
    /// Runtime: pyxis or none [env: TAO_RUNTIME; default: the site profile's].
    #[arg(long, value_name = "RUNTIME", value_parser = ["pyxis", "none"])]
    pub runtime: Option<String>,
    /// Command run in the container; may use {config_path}, {job_id}, {results_dir}
    /// [default: "ARCH ACTION -e {config_path}" when --spec, --network-arch and --action are given].
    #[arg(long, value_name = "TEXT")]
    pub command: Option<String>,
    /// Number of nodes, 1-4294967295 (the request rules of tao-core, which tao-render
    /// applies too, decide what a partition allows) [default: 1].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=4294967295))]
    pub nodes: Option<u32>,
    /// GPUs per node, 0-4294967295 [default: 4]. `--gpus` is an alias. At or above the site profile's
    /// max_gpus_per_node the nodes are exclusive and the node count is derived from the
    /// total (16 on 4-GPU nodes: 4 nodes of 4); a total that does not split evenly is refused.
    #[arg(long, visible_alias = "gpus", value_name = "N", value_parser = clap::value_parser!(u32).range(0..=4294967295))]
    pub gpus_per_node: Option<u32>,
    /// CPUs per task, 1-4294967295 [default: 16].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=4294967295))]
    pub cpus_per_task: Option<u32>,
    /// Wall time, a Slurm time string (sbatch --time: MINUTES, MM:SS, HH:MM:SS, D-HH,
    /// D-HH:MM, D-HH:MM:SS; minutes and seconds below 60 and hours below 24 after a day
    /// count), at most the partition's max_time in the site profile; 0, -1, INFINITE or
    /// UNLIMITED only where that max_time is UNLIMITED [default: 04:00:00].
    #[arg(long, value_name = "TIME", allow_hyphen_values = true)]
    pub time: Option<String>,
    /// Time after which the job's command is stopped so the job can finish cleanly;
    /// below --time [default: 95% of --time; none under an unlimited --time].
    #[arg(long, value_name = "TIME", allow_hyphen_values = true)]
    pub child_timeout: Option<String>,
    /// Partition, or a comma-separated list; one the site profile lists, when it lists any
    /// [env: SLURM_PARTITION; default: the site profile's].
    #[arg(long, value_name = "NAME")]
    pub partition: Option<String>,
    /// Account to charge [env: SLURM_ACCOUNT].
    #[arg(long, value_name = "NAME")]
    pub account: Option<String>,
    /// Ask for whole nodes (sbatch --exclusive).
    #[arg(long)]
    pub exclusive: bool,
    /// Do not let Slurm requeue the job [default from SLURM_USE_REQUEUE, else requeue].
    #[arg(long)]
    pub no_requeue: bool,
    /// Node to avoid (sbatch --exclude); repeatable.
    #[arg(long = "exclude", value_name = "NODE")]
    pub exclude: Vec<String>,
    /// Memory per node, sbatch --mem form: digits and an optional K, M, G or T in either
    /// case (64G, 64g, 7200M).
    #[arg(long, value_name = "SIZE", allow_hyphen_values = true)]
    pub mem: Option<String>,
    /// Storage tier name [default: lustre].
    #[arg(long, value_name = "TIER")]
    pub storage_tier: Option<String>,
    /// Results root on the cluster: /abs or lustre:///abs [env: SLURM_BASE_RESULTS_DIR].
    #[arg(long, value_name = "DIR")]
    pub results_root: Option<PathBuf>,
    /// Spec file (YAML) staged as {config_path}.
    #[arg(long, value_name = "FILE")]
    pub spec: Option<PathBuf>,
    /// Container mount SRC:DST[:FLAGS]; repeatable [env: SLURM_CONTAINER_MOUNTS, comma-separated].
    #[arg(long = "mount", value_name = "SRC:DST")]
    pub mounts: Vec<String>,
    /// Non-secret environment variable for the job, K=V; repeatable. Reserved names are
    /// refused (the job script's own, rendezvous, SLURM_*, BASH*, LD_*, tao_*, PATH, IFS, ...:
    /// tao-jobline(7)), and so are names that look like secrets (use --secret). The value
    /// reaches the job byte for byte: newlines, tabs, CR and ESC are kept (only NUL is refused).
    #[arg(long = "env", value_name = "K=V")]
    pub env: Vec<String>,
    /// Name of a secret read from the environment at submit time; repeatable. Names only;
    /// the reserved names of --env are refused here too, and a name may not be both.
    #[arg(long = "secret", value_name = "NAME")]
    pub secrets: Vec<String>,
    /// JSON file with the model lifecycle (pre_commands, command, post_commands, launcher, supporting_files).
    #[arg(long, value_name = "FILE")]
    pub execution: Option<PathBuf>,
    /// A file the job needs (a training script, a helper module), staged
    /// checksum-closed to `$TAO_ACTION_HELPERS/<file name>`; repeatable.
    /// Its sha256 and size are recorded now and verified at submit and in the job.
    #[arg(long = "supporting-file", value_name = "FILE")]
    pub supporting_files: Vec<PathBuf>,
    /// Make the next attempt of this failed (ERROR or CANCELED) record.
    #[arg(long, value_name = "ID")]
    pub retry_of: Option<String>,
    /// Attempt number of a first try opened by hand, 1-1000 [default: 1].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub attempt: Option<u32>,
    /// Print only the id (for JOB_ID=$(tao-record open ... --print-id)).
    #[arg(long)]
    pub print_id: bool,
    /// Print the job line a record would hold, and write no record (to
    /// preview the script: `... --dry-run | tao-render --print`). tao-submit
    /// refuses such a line: it has no record.
    #[arg(long, conflicts_with = "retry_of")]
    pub dry_run: bool,
}

fn usage(flag: &str, msg: impl std::fmt::Display) -> Error {
    Error::Usage(format!("{flag}: {msg}"))
}

fn config(var: &str, msg: impl std::fmt::Display) -> Error {
    Error::Config(format!("{var}: {msg}"))
}

fn env_var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// Mint a fresh id `tao-YYYYMMDD-xxxxxx`: the UTC date and 6 characters of
/// `[a-z0-9]` from the operating system's random source (getrandom),
/// drawn without modulo bias.
///
/// Errors: [`Error::Internal`] when the random source fails.
pub fn mint_id() -> Result<String> {
    const ALPHABET: &[u8; 36] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let date = chrono::Utc::now().format("%Y%m%d");
    let mut out = String::with_capacity(6);
    let mut buf = [0u8; 32];
    while out.len() < 6 {
        getrandom::fill(&mut buf).map_err(|e| Error::Internal(format!("random source: {e}")))?;
        for b in buf {
            // 252 = 7 * 36: bytes above it would favour the first letters.
            if b < 252 && out.len() < 6 {
                out.push(ALPHABET[(b % 36) as usize] as char);
            }
        }
    }
    Ok(format!("tao-{date}-{out}"))
}

/// Run `open`: build and write the record, return its job line
/// (without `history`).
///
/// Errors: [`Error::Usage`] for bad flags, [`Error::Config`] for bad
/// environment values or profile, [`Error::Data`] for bad files or a
/// parent that cannot be retried, [`Error::Io`] for disk failures.
pub fn open(store: &Store, args: &OpenArgs) -> Result<JobLine> {
    match &args.retry_of {
        Some(parent) => open_retry(store, args, parent),
        None => {
            let fields = build_request(args)?;
            if args.dry_run {
                refuse_literal_secrets(&fields)?;
                let now = tao_core::time::now_rfc3339();
                return Ok(assemble(&mint_id()?, &fields, None, &now).into_job_line());
            }
            create_with_fresh_id(store, fields, None)
        }
    }
}

/// Build the fields of a new record (everything but `id`, `storage`'s
/// per-id paths, `state` and `history`) from flags, environment and profile.
///
/// Errors: as for [`open`].
pub fn build_request(args: &OpenArgs) -> Result<Map<String, Value>> {
    let profile = SiteProfile::load(None)?;
    if args.platform != "slurm" {
        return Err(usage(
            "--platform",
            format!("{:?} is not supported; use slurm", args.platform),
        ));
    }
    let (runtime, runtime_from) = match (&args.runtime, env_var("TAO_RUNTIME")) {
        (Some(r), _) => (r.clone(), "--runtime".to_string()),
        (None, Some(r)) => {
            if r != "pyxis" && r != "none" {
                return Err(config(
                    "TAO_RUNTIME",
                    format!("{r:?} is not a runtime; set it to pyxis or none"),
                ));
            }
            (r, "TAO_RUNTIME".to_string())
        }
        (None, None) => (
            profile.runtime.clone(),
            format!("site profile {:?}", profile.name),
        ),
    };
    let word = |flag: &str, v: &Option<String>| -> Result<Option<String>> {
        if let Some(v) = v {
            validate::slurm_names(v, false, "name")
                .map_err(|e| usage(flag, format!("{e} (letters, digits, _ . -)")))?;
        }
        Ok(v.clone())
    };
    let action = word("--action", &args.action)?;
    let network_arch = word("--network-arch", &args.network_arch)?;
    if let Some(img) = &args.image {
        if runtime == "none" {
            // Plain srun runs no container: the image would be ignored.
            return Err(usage(
                "--image",
                format!(
                    "{img:?} would be ignored: runtime none (from {runtime_from}) runs no container; drop --image, or use --runtime pyxis to run in the image"
                ),
            ));
        }
        tao_core::image::normalise_image(img).map_err(|e| usage("--image", e))?;
    } else if runtime == "pyxis" {
        return Err(usage(
            "--image",
            "is required with runtime pyxis; give --image IMG or use --runtime none",
        ));
    }

    let spec = args.spec.as_ref().map(read_spec).transpose()?;
    let mut execution = args.execution.as_ref().map(read_execution).transpose()?;
    if !args.supporting_files.is_empty() {
        add_supporting_files(
            execution.get_or_insert_with(Map::new),
            &args.supporting_files,
        )?;
    }

    let command = match (&args.command, execution.as_ref().and_then(|e| e.get("command"))) {
        (Some(c), _) => c.clone(),
        (None, Some(Value::String(c))) => c.clone(),
        (None, _) => match (&network_arch, &action, &spec) {
            (Some(arch), Some(act), Some(_)) => format!("{arch} {act} -e {{config_path}}"),
            _ => {
                return Err(usage(
                    "--command",
                    "is required; give --command TEXT, or --network-arch, --action and --spec for the TAO default",
                ))
            }
        },
    };
    if command.trim().is_empty() {
        return Err(usage(
            "--command",
            "is empty; give the command the job runs",
        ));
    }
    validate::no_nul(&command).map_err(|e| usage("--command", e))?;
    if command.contains("{config_path}") && spec.is_none() {
        return Err(usage(
            "--command",
            "uses {config_path} but no --spec FILE was given; add --spec",
        ));
    }
    for name in unbound_placeholders(&command) {
        tao_core::cli::warn(
            "tao-record",
            &format!(
                "--command has {{{name}}}, which is not bound (only {{config_path}}, {{job_id}} and {{results_dir}} are); it reaches the job as written: check the spelling"
            ),
        );
    }

    let resources = build_resources(args, &profile)?;
    let (tier, base_dir) = storage_root(args)?;
    let mounts = build_mounts(&args.mounts)?;
    let env = build_env(&args.env)?;
    let secrets = build_secrets(&args.secrets)?;
    request::env_not_secret(env.keys().map(String::as_str), &secrets)
        .map_err(|e| usage("--env", e))?;

    let mut f = Map::new();
    f.insert("platform".into(), json!("slurm"));
    f.insert("action".into(), json!(action));
    f.insert("network_arch".into(), json!(network_arch));
    f.insert("image".into(), json!(args.image));
    f.insert("runtime".into(), json!(runtime));
    f.insert("command".into(), json!(command));
    f.insert("resources".into(), resources);
    f.insert(
        "storage".into(),
        json!({"tier": tier, "base_dir": base_dir}),
    );
    if let Some(s) = spec {
        f.insert("spec".into(), s);
    }
    f.insert("mounts".into(), json!(mounts));
    f.insert("env".into(), Value::Object(env));
    f.insert("secrets".into(), json!(secrets));
    if let Some(e) = execution {
        f.insert("execution".into(), Value::Object(e));
    }
    f.insert("attempt".into(), json!(args.attempt.unwrap_or(1)));
    Ok(f)
}

/// The flag of a request input a partition cannot hold.
fn unfit_flag(what: request::Unfit) -> &'static str {
    match what {
        request::Unfit::Nodes => "--nodes",
        request::Unfit::Gpus => "--gpus-per-node",
        request::Unfit::Mem => "--mem",
    }
}

fn build_resources(args: &OpenArgs, profile: &SiteProfile) -> Result<Value> {
    // The rules tao-render plans with (tao_core::request), checked once here.
    let nodes =
        request::nodes(args.nodes.unwrap_or(defaults::NODES)).map_err(|e| usage("--nodes", e))?;
    let gpus = args.gpus_per_node.unwrap_or(defaults::GPUS_PER_NODE);
    let cpus = request::cpus_per_task(args.cpus_per_task.unwrap_or(defaults::CPUS_PER_TASK))
        .map_err(|e| usage("--cpus-per-task", e))?;
    let shape = request::gpu_shape(nodes, gpus, args.exclusive, profile.max_gpus_per_node)
        .map_err(|e| usage("--gpus-per-node", e))?;
    let time = args
        .time
        .clone()
        .unwrap_or_else(|| defaults::TIME.to_string());
    let wall = request::wall_time(&time).map_err(|e| usage("--time", e))?;
    let child_secs = request::child_timeout_secs(args.child_timeout.as_deref(), wall).map_err(
        |e| match &args.child_timeout {
            Some(_) => usage("--child-timeout", e),
            None => usage(
                "--time",
                format!("{time:?} leaves no room for the child timeout: {e}"),
            ),
        },
    )?;
    // Unlimited (child timeout 0): null, as tao-render reads it.
    let child_timeout = match (&args.child_timeout, child_secs) {
        (Some(c), _) => Some(c.clone()),
        (None, 0) => None,
        (None, secs) => Some(format_hms(secs)),
    };
    let (partition, partition_err): (String, fn(&str, String) -> Error) =
        match (&args.partition, env_var("SLURM_PARTITION")) {
            (Some(p), _) => {
                validate::slurm_names(p, true, "partition").map_err(|e| usage("--partition", e))?;
                (p.clone(), |f, m| usage(f, m))
            }
            (None, Some(p)) => {
                validate::slurm_names(&p, true, "partition")
                    .map_err(|e| config("SLURM_PARTITION", e))?;
                (p, |_, m| config("SLURM_PARTITION", m))
            }
            (None, None) => (profile.default_partition.clone(), |_, m| {
                config("TAO_SITE_PROFILE", format!("default_partition: {m}"))
            }),
        };
    for name in partition.split(',') {
        if let Err(msg) = request::known_partition(profile, name) {
            return Err(partition_err("--partition", msg));
        }
    }
    request::check_time_limit(wall, &partition, profile)
        .map_err(|e| usage("--time", format!("{time:?}: {e} (--partition)")))?;
    let account = match (&args.account, env_var("SLURM_ACCOUNT")) {
        (Some(a), _) => {
            validate::slurm_names(a, false, "account").map_err(|e| usage("--account", e))?;
            Some(a.clone())
        }
        (None, Some(a)) => {
            validate::slurm_names(&a, false, "account").map_err(|e| config("SLURM_ACCOUNT", e))?;
            Some(a)
        }
        (None, None) => None,
    };
    let requeue = if args.no_requeue {
        false
    } else {
        match env_var("SLURM_USE_REQUEUE") {
            None => true,
            Some(v) => validate::parse_bool(&v).ok_or_else(|| {
                config(
                    "SLURM_USE_REQUEUE",
                    format!("{v:?} is not a boolean; set it to true or false"),
                )
            })?,
        }
    };
    let mut exclude: Vec<String> = Vec::new();
    for n in &args.exclude {
        validate::slurm_names(n, false, "node name").map_err(|e| usage("--exclude", e))?;
        if !exclude.contains(n) {
            exclude.push(n.clone());
        }
    }
    if let Some(m) = &args.mem {
        request::mem(m).map_err(|e| usage("--mem", e))?;
    }
    // A job no listed partition can hold would wait for ever: refused now.
    request::fits_partitions(
        profile,
        &partition,
        nodes,
        (shape.0, shape.1),
        args.mem.as_deref(),
    )
    .map_err(|(what, e)| {
        // A count left at its default is not the user's to fix: name the
        // partition they chose instead.
        let given = match what {
            request::Unfit::Nodes => args.nodes.is_some(),
            request::Unfit::Gpus => args.gpus_per_node.is_some(),
            request::Unfit::Mem => true,
        };
        match (given, &args.partition) {
            (false, Some(_)) => usage("--partition", e),
            _ => usage(unfit_flag(what), e),
        }
    })?;
    // At the per-node GPU maximum a node is the job's alone (DESIGN "Defaults").
    let exclusive = args.exclusive || gpus >= profile.max_gpus_per_node;
    Ok(json!({
        "nodes": nodes,
        "gpus_per_node": gpus,
        "cpus_per_task": cpus,
        "time": time,
        "child_timeout": child_timeout,
        "partition": partition,
        "account": account,
        "exclusive": exclusive,
        "requeue": requeue,
        "exclude": exclude,
        "mem": args.mem,
    }))
}

fn storage_root(args: &OpenArgs) -> Result<(String, String)> {
    let tier = args
        .storage_tier
        .clone()
        .unwrap_or_else(|| DEFAULT_TIER.into());
    validate::slurm_names(&tier, false, "storage tier").map_err(|e| usage("--storage-tier", e))?;
    let base = match (&args.results_root, env_var("SLURM_BASE_RESULTS_DIR")) {
        (Some(p), _) => {
            let s = p.to_str().ok_or_else(|| usage("--results-root", "is not UTF-8; use an ASCII path"))?;
            validate::results_root(s).map_err(|e| usage("--results-root", e))?
        }
        (None, Some(s)) => validate::results_root(&s).map_err(|e| config("SLURM_BASE_RESULTS_DIR", e))?,
        (None, None) => {
            return Err(Error::Config(
                "no results root: set SLURM_BASE_RESULTS_DIR or pass --results-root /abs/dir on the cluster's shared filesystem".into(),
            ))
        }
    };
    Ok((tier, base))
}

fn build_mounts(flags: &[String]) -> Result<Vec<String>> {
    if !flags.is_empty() {
        return flags
            .iter()
            .map(|m| validate::mount(m).map_err(|e| usage("--mount", e)))
            .collect();
    }
    match env_var("SLURM_CONTAINER_MOUNTS") {
        None => Ok(Vec::new()),
        Some(v) => v
            .split(',')
            .filter(|m| !m.trim().is_empty())
            .map(|m| validate::mount(m.trim()).map_err(|e| config("SLURM_CONTAINER_MOUNTS", e)))
            .collect(),
    }
}

fn build_env(flags: &[String]) -> Result<Map<String, Value>> {
    let mut env = Map::new();
    for kv in flags {
        let Some((k, v)) = kv.split_once('=') else {
            return Err(usage(
                "--env",
                format!("{kv:?} is not K=V; use e.g. --env OMP_NUM_THREADS=8"),
            ));
        };
        // Never echo the value: it may be a real secret.
        request::env_name(k).map_err(|e| usage("--env", e))?;
        validate::no_nul(v).map_err(|e| usage("--env", format!("value of {k} {e}")))?;
        env.insert(k.into(), Value::String(v.into()));
    }
    Ok(env)
}

fn build_secrets(flags: &[String]) -> Result<Vec<String>> {
    let mut out: Vec<String> = Vec::new();
    for s in flags {
        if let Some((name, _)) = s.split_once('=') {
            // Never echo what follows '=': it is a secret value.
            return Err(usage(
                "--secret",
                format!(
                    "takes a NAME, not NAME=value (got {name}=...); give --secret {name} and export {name} in the environment of tao-submit"
                ),
            ));
        }
        request::secret_name(s).map_err(|e| usage("--secret", e))?;
        if !out.contains(s) {
            out.push(s.clone());
        }
    }
    Ok(out)
}

fn read_spec(path: &PathBuf) -> Result<Value> {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| {
            usage(
                "--spec",
                format!("{path:?} has no file name; give a spec file"),
            )
        })?
        .to_string();
    validate::slurm_names(&name, false, "file name")
        .map_err(|e| usage("--spec", format!("{e}; rename the spec file")))?;
    let meta = std::fs::metadata(path)
        .map_err(|e| usage("--spec", format!("{path:?}: {e}; give a readable file")))?;
    if meta.len() > MAX_SPEC_BYTES {
        return Err(Error::Data(format!(
            "--spec {path:?} is {} bytes, more than {MAX_SPEC_BYTES}; a spec is a small YAML file",
            meta.len()
        )));
    }
    let bytes =
        std::fs::read(path).map_err(|e| Error::io(format!("reading --spec {path:?}"), e))?;
    let text = String::from_utf8(bytes).map_err(|_| {
        Error::Data(format!(
            "--spec {path:?} is not UTF-8; save the spec as UTF-8"
        ))
    })?;
    validate::no_nul(&text).map_err(|e| Error::Data(format!("--spec {path:?} {e}")))?;
    let sha = tao_core::sha256_hex(text.as_bytes());
    Ok(json!({"name": name, "text": text, "sha256": sha}))
}

/// Names in `{name}` placeholders of a command that tao-render will not
/// bind: anything but `config_path`, `job_id` and `results_dir`. Shell
/// expansions (`${VAR}`) and brace lists (`{a,b}`) are not placeholders.
/// Output: the names, in order of appearance, each once.
pub fn unbound_placeholders(command: &str) -> Vec<String> {
    const BOUND: [&str; 3] = ["config_path", "job_id", "results_dir"];
    let bytes = command.as_bytes();
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while let Some(off) = command[i..].find('{') {
        let start = i + off;
        i = start + 1;
        if start > 0 && bytes[start - 1] == b'$' {
            continue;
        }
        let Some(len) = command[start + 1..].find('}') else {
            break;
        };
        let name = &command[start + 1..start + 1 + len];
        let ident = name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if ident && !BOUND.contains(&name) && !out.iter().any(|n| n == name) {
            out.push(name.to_string());
        }
    }
    out
}

/// Append `--supporting-file` paths to `execution.supporting_files` as
/// `{source: <file name>, local_path: <absolute path>, sha256, size}`.
///
/// Errors: a usage error naming the file when it cannot be read or its
/// name collides with another supporting file.
fn add_supporting_files(execution: &mut Map<String, Value>, paths: &[PathBuf]) -> Result<()> {
    let list = execution
        .entry("supporting_files")
        .or_insert_with(|| Value::Array(Vec::new()));
    let Value::Array(list) = list else {
        return Err(usage("--execution", "`supporting_files` must be an array"));
    };
    for path in paths {
        let flag = "--supporting-file";
        let abs = std::fs::canonicalize(path)
            .map_err(|e| usage(flag, format!("{path:?}: {e}; give a readable file")))?;
        let bytes = std::fs::read(&abs)
            .map_err(|e| usage(flag, format!("{path:?}: {e}; give a readable file")))?;
        let source = abs
            .file_name()
            .and_then(|n| n.to_str())
            .ok_or_else(|| usage(flag, format!("{path:?} has no UTF-8 file name")))?
            .to_string();
        if list
            .iter()
            .any(|f| f.get("source").and_then(Value::as_str) == Some(&source))
        {
            return Err(usage(
                flag,
                format!("two supporting files are named {source:?}; rename one"),
            ));
        }
        list.push(json!({
            "source": source,
            "local_path": abs.to_string_lossy(),
            "sha256": tao_core::sha256_hex(&bytes),
            "size": bytes.len(),
        }));
    }
    Ok(())
}

fn read_execution(path: &PathBuf) -> Result<Map<String, Value>> {
    let bytes = std::fs::read(path).map_err(|e| {
        usage(
            "--execution",
            format!("{path:?}: {e}; give a readable JSON file"),
        )
    })?;
    let data = |msg: String| Error::Data(format!("--execution {path:?}: {msg}"));
    let v: Value = serde_json::from_slice(&bytes)
        .map_err(|e| data(format!("invalid JSON ({e}); fix the file")))?;
    let Value::Object(m) = v else {
        return Err(data("expected a JSON object with pre_commands, command, post_commands, launcher, supporting_files".into()));
    };
    check_execution(&m).map_err(data)?;
    Ok(m)
}

/// Check the shape of an `execution` object (tao-jobline(7)).
pub fn check_execution(m: &Map<String, Value>) -> std::result::Result<(), String> {
    let strs = |key: &str, v: &Value| -> std::result::Result<(), String> {
        let arr = v
            .as_array()
            .ok_or(format!("`{key}` must be an array of strings"))?;
        for s in arr {
            let s = s
                .as_str()
                .ok_or(format!("`{key}` must be an array of strings"))?;
            validate::no_nul(s).map_err(|e| format!("`{key}` entry {e}"))?;
        }
        Ok(())
    };
    for (k, v) in m {
        match k.as_str() {
            "pre_commands" => strs(k, v)?,
            "command" => {
                let s = v.as_str().ok_or("`command` must be a string")?;
                validate::no_nul(s).map_err(|e| format!("`command` {e}"))?;
            }
            "post_commands" => {
                for p in v.as_array().ok_or("`post_commands` must be an array")? {
                    let c = p
                        .get("command")
                        .and_then(Value::as_str)
                        .ok_or("each post_commands entry needs a string `command`")?;
                    validate::no_nul(c).map_err(|e| format!("`post_commands` entry {e}"))?;
                    match p.get("scope").and_then(Value::as_str) {
                        None | Some("all") | Some("leader") => {}
                        Some(s) => {
                            return Err(format!(
                                "post_commands scope {s:?} must be \"all\" or \"leader\""
                            ))
                        }
                    }
                }
            }
            "launcher" => match v {
                Value::Null => {}
                Value::String(s) if s == "torchrun" => {}
                _ => return Err("`launcher` must be \"torchrun\" or null".into()),
            },
            "supporting_files" => {
                for f in v.as_array().ok_or("`supporting_files` must be an array")? {
                    let src = f
                        .get("source")
                        .and_then(Value::as_str)
                        .ok_or("each supporting_files entry needs a string `source`")?;
                    if src.starts_with('/') || src.split('/').any(|c| c == ".." || c.is_empty()) {
                        return Err(format!(
                            "supporting file {src:?} must be a relative path without .."
                        ));
                    }
                    validate::no_controls(src, false)
                        .map_err(|e| format!("supporting file {e}"))?;
                    let sha = f.get("sha256").and_then(Value::as_str).unwrap_or("");
                    if sha.len() != 64 || !sha.bytes().all(|b| b.is_ascii_hexdigit()) {
                        return Err(format!(
                            "supporting file {src:?} needs a 64-hex-digit `sha256`"
                        ));
                    }
                    if !f.get("size").is_some_and(Value::is_u64) {
                        return Err(format!("supporting file {src:?} needs a byte `size`"));
                    }
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// Bind `storage.job_dir`/`results_dir` under `base` for `id`.
fn bind_storage(fields: &mut Map<String, Value>, id: &str) {
    if let Some(Value::Object(st)) = fields.get_mut("storage") {
        let base = st
            .get("base_dir")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        st.insert("job_dir".into(), json!(Layout::job_dir(&base, id)));
        st.insert("results_dir".into(), json!(Layout::results_dir(&base, id)));
    }
}

/// Refuse a request whose command, execution steps, env values, mounts,
/// spec text or supporting files (read from their `local_path`) hold what
/// tao-redact's rules call a secret (a literal token in `--command` or in
/// the `--spec` file), or the value of HF_TOKEN, NGC_KEY or a secret the
/// request names: the record would keep it in plain text (and the job
/// directory a copy), before any lint runs. Secrets travel by name only (`--secret NAME`, then `$NAME`).
///
/// Errors: [`Error::LintBlocked`] (exit 3) naming the field, the rule and
/// the masked line; nothing is written.
pub fn refuse_literal_secrets(request: &Map<String, Value>) -> Result<()> {
    fn walk(path: &str, v: &Value, out: &mut Vec<(String, String)>) {
        match v {
            Value::String(s) => out.push((path.to_string(), s.clone())),
            Value::Array(a) => {
                for (i, x) in a.iter().enumerate() {
                    walk(&format!("{path}[{i}]"), x, out);
                }
            }
            Value::Object(m) => {
                for (k, x) in m {
                    walk(&format!("{path}.{k}"), x, out);
                }
            }
            _ => {}
        }
    }
    let mut texts = Vec::new();
    for key in ["command", "execution", "env", "mounts"] {
        if let Some(v) = request.get(key) {
            walk(key, v, &mut texts);
        }
    }
    // The spec is staged and bound like a command: scanned like one.
    if let Some(t) = request
        .get("spec")
        .and_then(|s| s.get("text"))
        .and_then(Value::as_str)
    {
        let name = request
            .get("spec")
            .and_then(|s| s.get("name"))
            .and_then(Value::as_str)
            .unwrap_or("spec");
        texts.push((format!("--spec file {name:?}"), t.to_string()));
    }
    // Supporting files are staged next to the job: their bytes too.
    if let Some(Value::Array(files)) = request
        .get("execution")
        .and_then(|e| e.get("supporting_files"))
    {
        for f in files {
            if let Some(local) = f.get("local_path").and_then(Value::as_str) {
                let bytes = std::fs::read(local)
                    .map_err(|e| Error::io(format!("reading supporting file {local:?}"), e))?;
                texts.push((
                    format!("supporting file {local:?}"),
                    String::from_utf8_lossy(&bytes).into_owned(),
                ));
            }
        }
    }
    // The catalogue plus the values of HF_TOKEN, NGC_KEY and of the
    // request's own `secrets` (tao_secrets::LineRedactors, the one rule).
    let red = tao_secrets::LineRedactors::new("tao-record")
        .without_unset_warnings()
        .for_line(&tao_core::JobLine::from_map(request.clone()))?;
    for (path, text) in texts {
        let lint = red.lint(&text);
        if let Some(f) = lint.findings.first() {
            let what = if path.starts_with("--spec") || path.starts_with("supporting") {
                format!("{path} (line {})", f.line)
            } else {
                format!("`{path}`")
            };
            return Err(Error::LintBlocked(format!(
                "{what} holds what looks like a secret ({}: {}); nothing was recorded: pass it by name with --secret NAME and use $NAME instead",
                f.rule, f.preview
            )));
        }
    }
    Ok(())
}

/// Mint an id, bind storage and create the record, minting again if the
/// id is taken (a no-clobber create: two processes never share an id).
fn create_with_fresh_id(
    store: &Store,
    request: Map<String, Value>,
    parent: Option<(&str, u64)>,
) -> Result<JobLine> {
    refuse_literal_secrets(&request)?;
    let now = tao_core::time::now_rfc3339();
    for _ in 0..16 {
        let id = mint_id()?;
        if store.exists(&id) {
            continue;
        }
        let record = assemble(&id, &request, parent, &now);
        match store.create(&record) {
            Ok(()) => return Ok(record.into_job_line()),
            Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::AlreadyExists => {
                continue
            }
            Err(e) => return Err(e),
        }
    }
    Err(Error::TempFail(
        "could not mint an unused record id after 16 tries; try again".into(),
    ))
}

fn assemble(
    id: &str,
    request: &Map<String, Value>,
    parent: Option<(&str, u64)>,
    now: &str,
) -> Record {
    let mut f = Map::new();
    f.insert("id".into(), json!(id));
    // Canonical order first (a retry's request arrives in another order),
    // then anything else the parent carried.
    for k in CANONICAL_ORDER {
        if let Some(v) = request.get(*k) {
            f.insert((*k).to_string(), v.clone());
        }
    }
    for (k, v) in request {
        if k != "attempt" && !f.contains_key(k) {
            f.insert(k.clone(), v.clone());
        }
    }
    bind_storage(&mut f, id);
    let attempt = match parent {
        Some((p, a)) => {
            f.insert("retry_of".into(), json!(p));
            a
        }
        None => request.get("attempt").and_then(Value::as_u64).unwrap_or(1),
    };
    f.insert("attempt".into(), json!(attempt));
    f.insert("state".into(), json!(State::Pending.as_str()));
    f.insert("observed_at".into(), json!(now));
    f.insert("observed_by".into(), json!(TOOL));
    let mut r = Record::from_map(f);
    let msg = match parent {
        Some((p, a)) => format!("opened as attempt {a}, retry of {p}"),
        None => "opened".to_string(),
    };
    push_history(&mut r, now, State::Pending, TOOL, Some(&msg));
    r
}

/// Replace the directory `old` by `new` in every string inside `v` where it
/// appears as a whole path prefix (followed by `/`, `:`, a quote, space or
/// the end), so `/base/results/tao-x` never matches `/base/results/tao-xy`.
pub fn rebase(v: &mut Value, old: &str, new: &str) {
    match v {
        Value::String(s) => {
            let mut out = String::with_capacity(s.len());
            let mut rest = s.as_str();
            while let Some(i) = rest.find(old) {
                let after = &rest[i + old.len()..];
                let whole = after.chars().next().is_none_or(|c| {
                    matches!(
                        c,
                        '/' | ':' | '\'' | '"' | ' ' | ',' | ';' | '\n' | '\t' | '}'
                    )
                });
                out.push_str(&rest[..i]);
                out.push_str(if whole { new } else { old });
                rest = after;
            }
            out.push_str(rest);
            *s = out;
        }
        Value::Array(a) => a.iter_mut().for_each(|x| rebase(x, old, new)),
        Value::Object(m) => m.values_mut().for_each(|x| rebase(x, old, new)),
        _ => {}
    }
}

/// Flags that describe a request; `--retry-of` carries the parent's and
/// refuses them (only `--exclude` adds to it).
fn request_flags_given(a: &OpenArgs) -> Vec<&'static str> {
    let mut v = Vec::new();
    let mut chk = |given: bool, name: &'static str| {
        if given {
            v.push(name)
        }
    };
    chk(a.platform != "slurm", "--platform");
    chk(a.action.is_some(), "--action");
    chk(a.network_arch.is_some(), "--network-arch");
    chk(a.image.is_some(), "--image");
    chk(a.runtime.is_some(), "--runtime");
    chk(a.command.is_some(), "--command");
    chk(a.nodes.is_some(), "--nodes");
    chk(a.gpus_per_node.is_some(), "--gpus-per-node");
    chk(a.cpus_per_task.is_some(), "--cpus-per-task");
    chk(a.time.is_some(), "--time");
    chk(a.child_timeout.is_some(), "--child-timeout");
    chk(a.partition.is_some(), "--partition");
    chk(a.account.is_some(), "--account");
    chk(a.exclusive, "--exclusive");
    chk(a.no_requeue, "--no-requeue");
    chk(a.mem.is_some(), "--mem");
    chk(a.storage_tier.is_some(), "--storage-tier");
    chk(a.results_root.is_some(), "--results-root");
    chk(a.spec.is_some(), "--spec");
    chk(!a.mounts.is_empty(), "--mount");
    chk(!a.env.is_empty(), "--env");
    chk(!a.secrets.is_empty(), "--secret");
    chk(a.execution.is_some(), "--execution");
    chk(!a.supporting_files.is_empty(), "--supporting-file");
    chk(a.attempt.is_some(), "--attempt");
    v
}

/// `open --retry-of PARENT`: see the module docs. Under the parent's lock:
/// check it is ERROR or CANCELED and not already retried, name the new id
/// in the parent (`retried_by`), write it, then create the new record. A
/// crash between the two leaves a parent naming a record that does not
/// exist; the next retry sees that and proceeds.
fn open_retry(store: &Store, args: &OpenArgs, parent_id: &str) -> Result<JobLine> {
    let given = request_flags_given(args);
    if !given.is_empty() {
        return Err(usage(
            given[0],
            "cannot be combined with --retry-of: a retry carries its parent's request (only --exclude may be added); open a fresh record to change it",
        ));
    }
    tao_core::id::validate(parent_id).map_err(|e| usage("--retry-of", e))?;
    let mut extra_exclude = Vec::new();
    for n in &args.exclude {
        validate::slurm_names(n, false, "node name").map_err(|e| usage("--exclude", e))?;
        extra_exclude.push(n.clone());
    }
    let now = tao_core::time::now_rfc3339();
    let child = store.update_then(
        parent_id,
        |p| {
            let state = p.state().unwrap_or(State::Unknown);
            if !matches!(state, State::Error | State::Canceled) {
                return Err(Error::Data(format!(
                    "record {parent_id:?} is {state}; only ERROR or CANCELED records can be retried{}",
                    if state.is_live() { " (wait for it to end, or cancel it)" } else { "" }
                )));
            }
            if let Some(by) = p.fields.get("retried_by").and_then(Value::as_str) {
                if store.exists(by) {
                    return Err(Error::Data(format!(
                        "record {parent_id:?} was already retried by {by:?}; retry {by:?} instead if it failed too"
                    )));
                }
            }
            let mut request = Map::new();
            for k in REQUEST_FIELDS {
                if let Some(v) = p.fields.get(*k) {
                    request.insert((*k).to_string(), v.clone());
                }
            }
            let st = p.fields.get("storage").cloned().unwrap_or(Value::Null);
            request.insert(
                "storage".into(),
                json!({"tier": st.get("tier").cloned().unwrap_or(json!(DEFAULT_TIER)),
                       "base_dir": st.get("base_dir").cloned().unwrap_or(Value::Null)}),
            );
            // Only a node the classification blames: an infra fault (or a
            // classification without a class). A program fault that names
            // the node it ran on does not make the node bad.
            let blamed = p
                .fields
                .get("classification")
                .filter(|c| matches!(c.get("class").and_then(Value::as_str), None | Some("infra")))
                .and_then(|c| c.get("node"))
                .and_then(Value::as_str)
                .map(str::to_string);
            let res = request.entry("resources").or_insert_with(|| json!({}));
            if let Value::Object(res) = res {
                let ex = res.entry("exclude").or_insert_with(|| json!([]));
                if !ex.is_array() {
                    *ex = json!([]);
                }
                let arr = ex.as_array_mut().expect("array");
                for n in blamed.iter().chain(extra_exclude.iter()) {
                    if validate::slurm_names(n, false, "node name").is_ok() && !arr.iter().any(|x| x == n) {
                        arr.push(json!(n));
                    }
                }
            }
            let attempt = p.fields.get("attempt").and_then(Value::as_u64).unwrap_or(1) + 1;
            let mut id = mint_id()?;
            let mut tries = 0;
            while store.exists(&id) {
                tries += 1;
                if tries > 16 {
                    return Err(Error::TempFail("could not mint an unused record id; try again".into()));
                }
                id = mint_id()?;
            }
            // Rebase writable paths that name the parent's directories
            // (command, env, mounts, execution; never the spec, whose text
            // is checksummed input and may point at a checkpoint to resume).
            for key in ["job_dir", "results_dir"] {
                let old = st.get(key).and_then(Value::as_str).filter(|s| !s.is_empty());
                let base = st.get("base_dir").and_then(Value::as_str).unwrap_or("");
                if let Some(old) = old {
                    let sub = if key == "job_dir" { "jobs" } else { "results" };
                    let new = format!("{base}/{sub}/{id}");
                    for k in ["command", "env", "mounts", "execution"] {
                        if let Some(v) = request.get_mut(k) {
                            rebase(v, old, &new);
                        }
                    }
                }
            }
            let record = assemble(&id, &request, Some((parent_id, attempt)), &now);
            p.fields.insert("retried_by".into(), json!(id));
            Ok(record)
        },
        |record| store.create(record),
    )?;
    Ok(child.into_job_line())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unbound_placeholders_are_found_but_shell_braces_are_not() {
        assert_eq!(
            unbound_placeholders("dino train -e {config_pth} -r {results_dir} {job_id} {x} {x}"),
            vec!["config_pth".to_string(), "x".to_string()]
        );
        assert!(unbound_placeholders("echo ${HOME} {a,b} {} ${#X} {1}").is_empty());
        assert!(unbound_placeholders("train -e {config_path").is_empty());
    }

    #[test]
    fn ids_have_the_documented_shape() {
        let mut seen = std::collections::HashSet::new();
        for _ in 0..200 {
            let id = mint_id().unwrap();
            assert!(tao_core::id::is_valid(&id));
            let parts: Vec<&str> = id.split('-').collect();
            assert_eq!(parts.len(), 3, "{id}");
            assert_eq!(parts[0], "tao");
            assert_eq!(parts[1].len(), 8);
            assert!(parts[1].bytes().all(|b| b.is_ascii_digit()));
            assert_eq!(parts[2].len(), 6);
            assert!(parts[2]
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()));
            seen.insert(id);
        }
        assert!(seen.len() > 190, "ids repeat too often");
    }

    #[test]
    fn rebase_replaces_whole_path_prefixes_only() {
        let mut v = json!({"a": "cp /b/results/tao-x/ckpt /b/results/tao-xy/z", "m": ["/b/results/tao-x:/out"], "n": 3});
        rebase(&mut v, "/b/results/tao-x", "/b/results/tao-y");
        assert_eq!(
            v,
            json!({"a": "cp /b/results/tao-y/ckpt /b/results/tao-xy/z", "m": ["/b/results/tao-y:/out"], "n": 3})
        );
    }

    #[test]
    fn secrets_never_echo_values() {
        let err = build_secrets(&["HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz0123456789".into()])
            .unwrap_err();
        let m = err.to_string();
        assert!(m.contains("HF_TOKEN") && !m.contains("hf_abc"), "{m}");
        assert_eq!(err.code(), 2);
        let err =
            build_env(&["HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz0123456789".into()]).unwrap_err();
        assert!(!err.to_string().contains("hf_abc"));
        assert_eq!(build_secrets(&["A".into(), "A".into()]).unwrap(), vec!["A"]);
    }

    #[test]
    fn execution_shapes() {
        let ok = json!({"pre_commands": ["pip list"], "command": "python x.py", "launcher": "torchrun",
            "post_commands": [{"command": "ls", "scope": "leader"}],
            "supporting_files": [{"source": "a/b.py", "sha256": "0".repeat(64), "size": 3}]});
        assert!(check_execution(ok.as_object().unwrap()).is_ok());
        for bad in [
            json!({"launcher": "mpirun"}),
            json!({"pre_commands": "x"}),
            json!({"post_commands": [{"command": "ls", "scope": "some"}]}),
            json!({"supporting_files": [{"source": "../x", "sha256": "0".repeat(64), "size": 1}]}),
            json!({"supporting_files": [{"source": "x", "sha256": "abc", "size": 1}]}),
        ] {
            assert!(check_execution(bad.as_object().unwrap()).is_err(), "{bad}");
        }
    }
}
