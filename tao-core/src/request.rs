//! The rules of a job request, in one place: defaults, wall time and child
//! timeout, partitions and their limits from the site profile, GPU/CPU/node
//! counts, and the names `env` and `secrets` may use.
//!
//! tao-record checks a request with these functions when it opens a record
//! and tao-render applies the same functions when it plans the script, so
//! `tao-record open` accepts exactly the requests `tao-render` renders
//! (a property test in `tests/tests/request_rules.rs` runs both binaries
//! over generated requests). Each check returns only the message, which
//! names the value and the fix; the caller puts the flag or field name in
//! front and chooses the error kind (tao-record: a flag is a usage error,
//! exit 2; tao-render: a refused line, exit 1).

pub use crate::mem::{mem, mem_megabytes};
use crate::site::SiteProfile;
use crate::slurm_time::SlurmTime;

/// Defaults of the packaged platform (docs/design.md, "Defaults").
pub mod defaults {
    /// Nodes when none are asked for.
    pub const NODES: u32 = 1;
    /// GPUs per node when none are asked for.
    pub const GPUS_PER_NODE: u32 = 4;
    /// CPUs per task when none are asked for.
    pub const CPUS_PER_TASK: u32 = 16;
    /// Wall time when none is asked for (a Slurm time string).
    pub const TIME: &str = "04:00:00";
    /// The child timeout as a share of the wall time, in thousandths
    /// (3.8 h of 4 h).
    pub const CHILD_PERMILLE: u64 = 950;
    /// Seconds `timeout` waits after SIGTERM before SIGKILL.
    pub const KILL_AFTER: u64 = 30;
}

/// The TAO actions (sub-tasks) `--action` knows: those of the TAO 5.x
/// launcher's model, dataset and deploy task groups (`tao model dino train`,
/// `tao dataset auto_label generate`, `tao deploy dino gen_trt_engine`;
/// NVIDIA's TAO Toolkit documentation, "TAO Launcher"). It is not every
/// action of every network: [`action`] accepts another well-formed name
/// with a note and refuses only a near miss of one of these (a misspelt
/// action would reach the job as written and fail only there).
pub const ACTIONS: &[&str] = &[
    "train",
    "evaluate",
    "inference",
    "export",
    "prune",
    "retrain",
    "distill",
    "quantize",
    "gen_trt_engine",
    "calibration_tensorfile",
    "dataset_convert",
    "convert",
    "kmeans",
    "augment",
    "auto_label",
    "generate",
    "analyze",
    "validate",
];

/// The runtimes a job can use (tao-jobline(7) `runtime`): `pyxis` (srun
/// `--container-image`, Pyxis + Enroot) or `none` (plain srun).
pub const RUNTIMES: &[&str] = &["pyxis", "none"];

/// Check a runtime name (`--runtime`, `TAO_RUNTIME`, a site profile's
/// `runtime`) against [`RUNTIMES`]: the one rule tao-record open and
/// tao-submit preflight apply.
///
/// Errors: the message naming the value and the fix.
pub fn runtime(name: &str) -> Result<(), String> {
    if RUNTIMES.contains(&name) {
        Ok(())
    } else {
        Err(format!(
            "{name:?} is not a runtime; set it to pyxis or none"
        ))
    }
}

/// The known action `name` is a near miss of, if any: the nearest of
/// [`ACTIONS`] (ties: the first listed), compared in lowercase, within an
/// optimal-string-alignment edit distance (one letter added, dropped,
/// changed, or two neighbours swapped: `trian`) of 1, or 2 for a name of
/// 10 characters or more. Tighter than cargo's "did you mean" rule (a
/// third of the length) because a near miss is refused, not only
/// suggested: `tune` (2 from `prune`), `infer` and `export_v2` are other
/// names; `evalute`, `trian`, `Train` and `gen_trt_engin` are near misses.
pub fn near_action(name: &str) -> Option<&'static str> {
    let lower = name.to_ascii_lowercase();
    let max = if lower.chars().count() >= 10 { 2 } else { 1 };
    ACTIONS
        .iter()
        .map(|a| (strsim::osa_distance(&lower, a), *a))
        .filter(|(d, a)| *d <= max && *a != name)
        .min_by_key(|(d, _)| *d)
        .map(|(_, a)| a)
}

/// Check an action name (`--action`): a name of [`ACTIONS`] is accepted
/// as is (`Ok(None)`); another well-formed name (a lowercase letter, then
/// lowercase letters, digits and `_`, at most 64 bytes: the shape of TAO's
/// sub-task names) that is no near miss of a known one ([`near_action`])
/// is accepted with a note for the user (`Ok(Some(note))`): TAO has more
/// actions than the list (per network and release), and the job runs the
/// command it is given.
///
/// Errors: the message naming the value and the fix, for a near miss of
/// a known action ("did you mean ...?") or a name of another shape.
pub fn action(name: &str) -> Result<Option<String>, String> {
    if ACTIONS.contains(&name) {
        return Ok(None);
    }
    if let Some(meant) = near_action(name) {
        return Err(format!(
            "{name:?} is not a TAO action: did you mean {meant:?}? (known: {})",
            ACTIONS.join(", ")
        ));
    }
    let well_formed = name.len() <= 64
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    if !well_formed {
        return Err(format!(
            "{name:?} is not a TAO action name; use lowercase letters, digits and _ (train, gen_trt_engine, ...)"
        ));
    }
    Ok(Some(format!(
        "--action {name:?} is not one of the TAO actions tao-record knows ({}); opened as given: check the spelling against your network's `tao model <arch> --help`",
        ACTIONS.join(", ")
    )))
}

/// Variable names a request's `env` and `secrets` may not use: the job
/// script sets them itself (tao-render's templates), Slurm or the
/// rendezvous sets them, or they change how bash runs the script (the
/// secrets sidecar is sourced with `set -a` before the steps, so a secret
/// named `PATH`, `IFS` or `tao_secrets` could redirect the script's own
/// commands, including the clean-up that shreds the sidecar).
/// [`RESERVED_PREFIXES`] adds whole families.
pub const RESERVED_NAMES: &[&str] = &[
    // Set by the job script (single/multi/probe/rendezvous templates).
    "TAO_JOB_ID",
    "RESULTS_DIR",
    "TAO_API_RESULTS_DIR",
    "TAO_ACTION_HELPERS",
    "TAO_NODE_COUNT",
    "TAO_GPUS_PER_NODE",
    "TAO_NODE_RANK",
    "TAO_PROBE_NPROC",
    "TAO_PROBE_RESULT",
    "MASTER_ADDR",
    "MASTER_PORT",
    "WORLD_SIZE",
    "NUM_GPU_PER_NODE",
    "NODE_RANK",
    "TMPDIR",
    "ENROOT_TEMP_PATH",
    // Read by bash itself: they change what the script runs or how.
    "PATH",
    "ENV",
    "IFS",
    "SHELLOPTS",
    "PS4",
    "PROMPT_COMMAND",
    "CDPATH",
    "GLOBIGNORE",
    "POSIXLY_CORRECT",
    "FUNCNEST",
    "SECONDS",
    "RANDOM",
    "LINENO",
    "OPTIND",
    "OPTARG",
    "HOSTNAME",
];

/// Name prefixes reserved as a family: `SLURM_` (Slurm's own variables),
/// `BASH` (`BASH_ENV`, `BASHOPTS`, `BASH_FUNC_*`, ...), `LD_` (the dynamic
/// loader: `LD_PRELOAD`, `LD_LIBRARY_PATH`, ...) and `tao_` (the script's
/// internal variables, such as `tao_secrets`).
pub const RESERVED_PREFIXES: &[&str] = &["SLURM_", "BASH", "LD_", "tao_"];

/// Whether `name` is a shell variable name `[A-Za-z_][A-Za-z0-9_]*`.
pub fn is_var_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Whether `name` is reserved ([`RESERVED_NAMES`] or a
/// [`RESERVED_PREFIXES`] family).
pub fn is_reserved(name: &str) -> bool {
    RESERVED_NAMES.contains(&name) || RESERVED_PREFIXES.iter().any(|p| name.starts_with(p))
}

/// Whether a variable name looks like it holds a secret (a token, key or
/// password). Such a variable travels by name (`secrets`), never as a
/// value in `env`.
pub fn looks_secret(name: &str) -> bool {
    let n = name.to_ascii_uppercase();
    [
        "TOKEN",
        "SECRET",
        "PASSWORD",
        "PASSWD",
        "API_KEY",
        "APIKEY",
        "PRIVATE_KEY",
        "CREDENTIAL",
    ]
    .iter()
    .any(|w| n.contains(w))
        || n.ends_with("_KEY")
}

fn var_name(name: &str) -> Result<(), String> {
    if !is_var_name(name) {
        return Err(format!(
            "{name:?} is not a variable name; use letters, digits and _ (not starting with a digit)"
        ));
    }
    if is_reserved(name) {
        return Err(format!(
            "{name:?} is reserved: the job script, Slurm or bash sets or reads it (PATH, IFS, BASH*, LD_*, SLURM_*, tao_*, the rendezvous and TAO_* names of tao-jobline(7)); choose another name"
        ));
    }
    Ok(())
}

/// Check an `env` name: a variable name, not reserved, not one that looks
/// like a secret.
///
/// Errors: the message naming the variable and the fix (never a value).
pub fn env_name(name: &str) -> Result<(), String> {
    var_name(name)?;
    if looks_secret(name) {
        return Err(format!(
            "{name} looks like a secret; pass it by name as a secret (--secret {name}) and export it when running tao-submit"
        ));
    }
    Ok(())
}

/// Check a `secrets` name: a variable name, not reserved.
///
/// Errors: the message naming the variable and the fix.
pub fn secret_name(name: &str) -> Result<(), String> {
    var_name(name)
}

/// Check that no `env` name is also a secret: a secret travels only by
/// name through the sidecar.
///
/// Errors: the message naming the first such variable.
pub fn env_not_secret<'a>(
    env: impl IntoIterator<Item = &'a str>,
    secrets: &[String],
) -> Result<(), String> {
    for name in env {
        if secrets.iter().any(|s| s == name) {
            return Err(format!(
                "{name} is both an env variable and a secret; a secret travels only by name through the sidecar: drop it from env"
            ));
        }
    }
    Ok(())
}

/// Parse a wall time (any form of [`SlurmTime::parse`]; an unlimited one
/// too: whether it is allowed is [`check_time_limit`]'s to say).
///
/// Errors: the parse message, naming the input and the forms.
pub fn wall_time(s: &str) -> Result<SlurmTime, String> {
    SlurmTime::parse(s).map_err(|e| e.to_string())
}

/// The default child timeout under `wall`, in seconds:
/// [`defaults::CHILD_PERMILLE`] of it (at least 1 s), or 0 (none) under an
/// unlimited wall time.
pub fn default_child_timeout(wall: SlurmTime) -> u64 {
    wall.seconds()
        .map_or(0, |w| (w * defaults::CHILD_PERMILLE / 1000).max(1))
}

/// The child timeout in seconds (0: none): the given one, else
/// [`default_child_timeout`]. It must be finite and below a finite wall
/// time, so the job can record its own end before Slurm kills it.
///
/// Errors: the message naming the value and the fix.
pub fn child_timeout_secs(given: Option<&str>, wall: SlurmTime) -> Result<u64, String> {
    let secs = match given {
        Some(s) => {
            let t = SlurmTime::parse(s).map_err(|e| e.to_string())?;
            t.seconds().ok_or_else(|| {
                format!("{s:?} is unlimited; give a finite time below the wall time")
            })?
        }
        None => default_child_timeout(wall),
    };
    if let Some(w) = wall.seconds() {
        if secs >= w {
            return Err(format!(
                "{} is not below the wall time {}: the job could not record its own end before Slurm kills it; use e.g. {} (or a longer wall time)",
                SlurmTime::Seconds(secs).canonical(),
                wall.canonical(),
                SlurmTime::Seconds((w * defaults::CHILD_PERMILLE / 1000).max(1)).canonical()
            ));
        }
    }
    Ok(secs)
}

/// Check that `name` is one of the partitions `profile` lists. A profile
/// that lists none knows nothing about partitions, and every name passes
/// (sbatch has the last word).
///
/// Errors: the message naming the listed partitions and the fix.
pub fn known_partition(profile: &SiteProfile, name: &str) -> Result<(), String> {
    if profile.partitions.is_empty() || profile.partition(name).is_some() {
        return Ok(());
    }
    let known: Vec<&str> = profile.partitions.iter().map(|p| p.name.as_str()).collect();
    Err(format!(
        "{name:?} is not a partition of site profile {:?} ({}); use one of those, or a site profile that lists it (TAO_SITE_PROFILE, tao-site-profile(5))",
        profile.name,
        known.join(", ")
    ))
}

/// Check a wall time against every partition of a comma list that the
/// profile lists (sbatch(1): a job above its partition's limit is "left in
/// a PENDING state (possibly indefinitely)"). An unlimited time passes
/// only where the profile's `max_time` is unlimited too, or where the
/// profile does not list the partition.
///
/// Errors: the message naming the partition, its limit and the fix.
pub fn check_time_limit(
    time: SlurmTime,
    partitions: &str,
    profile: &SiteProfile,
) -> Result<(), String> {
    for name in partitions.split(',') {
        let Some(p) = profile.partition(name) else {
            continue;
        };
        // SiteProfile::parse checked every max_time.
        let Ok(max) = SlurmTime::parse(&p.max_time) else {
            continue;
        };
        if time > max {
            return Err(format!(
                "{} is above the limit of partition {name:?} ({}, site profile {:?}); Slurm would leave the job pending forever: ask for at most {} or choose another partition",
                time.canonical(),
                max.canonical(),
                profile.name,
                max.canonical()
            ));
        }
    }
    Ok(())
}

/// Check a node count: at least one.
///
/// Errors: the message and the fix.
pub fn nodes(n: u32) -> Result<u32, String> {
    if n == 0 {
        return Err("0 is not a node count; ask for at least one node".into());
    }
    Ok(n)
}

/// Check a CPU count per task: at least one.
///
/// Errors: the message and the fix.
pub fn cpus_per_task(n: u32) -> Result<u32, String> {
    if n == 0 {
        return Err("0 is not a CPU count; ask for at least one CPU per task".into());
    }
    Ok(n)
}

/// The CPUs per task of a request that names none: TAO's default
/// ([`defaults::CPUS_PER_TASK`]), but no more than the largest
/// `cpus_per_node` among the partitions of the comma list `partitions`
/// (so the default always fits a site whose nodes are smaller). A
/// partition the profile does not list, or lists without `cpus_per_node`,
/// keeps the default.
pub fn default_cpus_per_task(profile: &SiteProfile, partitions: &str) -> u32 {
    let mut most = 0;
    for name in partitions.split(',') {
        match profile.partition(name).and_then(|p| p.cpus_per_node) {
            Some(c) => most = most.max(c),
            None => return defaults::CPUS_PER_TASK,
        }
    }
    defaults::CPUS_PER_TASK.min(most.max(1))
}

/// Which request input a partition cannot hold (the caller names its
/// flag or field).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unfit {
    /// The node count asked for.
    Nodes,
    /// The GPUs (per node, or the total once spread over nodes).
    Gpus,
    /// The CPUs per task (one task per node: more than a node has).
    Cpus,
    /// The memory per node.
    Mem,
}

/// Why partition `p` cannot hold `nodes_in` nodes asked for, shaped as
/// `nodes` x `gpus` per node, with `cpus` per task and `mem` per node;
/// `None` when it can (a limit the profile does not give is not checked).
fn unfit(
    p: &crate::site::Partition,
    profile: &str,
    nodes_in: u32,
    (nodes, gpus): (u32, u32),
    cpus: u32,
    mem_in: Option<&str>,
) -> Option<(Unfit, String)> {
    let name = &p.name;
    if let Some(max) = p.max_nodes {
        if nodes_in > max {
            return Some((Unfit::Nodes, format!(
                "{nodes_in} nodes is more than partition {name:?} holds ({max}, site profile {profile:?}); ask for at most {max} nodes or choose another partition"
            )));
        }
    }
    if let Some(g) = p.gpus_per_node {
        if gpus > g || p.max_nodes.is_some_and(|max| nodes > max) {
            let most = u64::from(g) * u64::from(p.max_nodes.unwrap_or(1));
            return Some((Unfit::Gpus, format!(
                "{} GPUs ({nodes} node(s) x {gpus}) do not fit partition {name:?} ({} node(s) of {g} GPUs, site profile {profile:?}); Slurm could never start the job: ask for at most {most} GPUs in all or choose another partition",
                u64::from(nodes) * u64::from(gpus),
                p.max_nodes.map_or("its".to_string(), |m| m.to_string()),
            )));
        }
    }
    if let Some(have) = p.cpus_per_node {
        if cpus > have {
            return Some((Unfit::Cpus, format!(
                "{cpus} CPUs per task is more than a node of partition {name:?} has ({have}, site profile {profile:?}); Slurm could never start the job: ask for at most {have} or choose another partition"
            )));
        }
    }
    if let (Some(have), Some(want)) = (&p.mem_per_node, mem_in) {
        let (Ok(h), Ok(w)) = (mem_megabytes(have), mem_megabytes(want)) else {
            return None;
        };
        if w > h {
            return Some((Unfit::Mem, format!(
                "{want} is more than the memory of a node of partition {name:?} ({have}, site profile {profile:?}); Slurm could never start the job: ask for at most {have} or choose another partition"
            )));
        }
    }
    None
}

/// Check that at least one partition of the comma list `partitions` can
/// hold the job: `nodes_in` nodes asked for, `shape` = (nodes, GPUs per
/// node) after [`gpu_shape`], `cpus` per task, `mem` per node (sbatch
/// `--mem` form). Limits come from the site profile's `[[partitions]]`
/// (`max_nodes`, `gpus_per_node`, `cpus_per_node`, `mem_per_node`); a partition the profile does not list
/// or a limit it does not give passes (sbatch has the last word). Such a
/// job would otherwise wait for ever (or until the probe gives up).
///
/// Errors: which input does not fit, and the message naming the partition,
/// its limit and the fix (for a list: the first partition's reason).
pub fn fits_partitions(
    profile: &SiteProfile,
    partitions: &str,
    nodes_in: u32,
    shape: (u32, u32),
    cpus: u32,
    mem: Option<&str>,
) -> Result<(), (Unfit, String)> {
    let mut first = None;
    for name in partitions.split(',') {
        let Some(p) = profile.partition(name) else {
            return Ok(());
        };
        match unfit(p, &profile.name, nodes_in, shape, cpus, mem) {
            None => return Ok(()),
            Some(why) => {
                first.get_or_insert(why);
            }
        }
    }
    match first {
        Some((what, msg)) if partitions.contains(',') => Err((
            what,
            format!("no partition of {partitions:?} can hold the job: {msg}"),
        )),
        Some(why) => Err(why),
        None => Ok(()),
    }
}

/// GPU shape after the rule "at or above the per-node GPU maximum, nodes
/// are exclusive and the node count is derived from the total"
/// (docs/design.md, "Defaults"): returns `(nodes, gpus_per_node, exclusive)`. `max` is the
/// site profile's `max_gpus_per_node` (0: no maximum).
///
/// Errors: the message when the total cannot be split evenly or needs more
/// than 2^32-1 nodes.
pub fn gpu_shape(
    nodes: u32,
    gpus: u32,
    exclusive: bool,
    max: u32,
) -> Result<(u32, u32, bool), String> {
    if max == 0 || gpus < max {
        return Ok((nodes, gpus, exclusive));
    }
    let total = u64::from(nodes) * u64::from(gpus);
    let n = total.div_ceil(u64::from(max));
    if total % n != 0 {
        return Err(format!(
            "{total} GPUs ({nodes} node(s) x {gpus}) cannot be split evenly over {n} nodes of at most {max}; ask for a total that {n} nodes share evenly (such as {even}), or at most {max} on one node", even = n * u64::from(max)
        ));
    }
    let n32 = u32::try_from(n).map_err(|_| format!("{total} GPUs need {n} nodes: too many"))?;
    Ok((n32, (total / n) as u32, true))
}

/// The one-line notice that [`gpu_shape`] changed the shape asked for:
/// `nodes_in` x `gpus_in` became `shape` = (nodes, GPUs per node) on nodes
/// of at most `max` GPUs (the profile `profile`). `None` when the shape is
/// the one asked for. tao-record open and tao-render print it on stderr.
pub fn shape_notice(
    nodes_in: u32,
    gpus_in: u32,
    shape: (u32, u32),
    max: u32,
    profile: &str,
) -> Option<String> {
    if (nodes_in, gpus_in) == shape {
        return None;
    }
    let total = u64::from(shape.0) * u64::from(shape.1);
    Some(format!(
        "{nodes_in} node(s) x {gpus_in} GPUs runs as {} node(s) x {} GPUs ({total} GPUs, exclusive nodes): nodes have at most {max} GPUs (max_gpus_per_node, site profile {profile:?}); --nodes {} --gpus-per-node {} asks for the same without this notice",
        shape.0, shape.1, shape.0, shape.1
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile() -> SiteProfile {
        SiteProfile::load(Some("cs-oci-ord")).unwrap()
    }

    #[test]
    fn actions_known_unlisted_and_near_misses() {
        for a in ACTIONS {
            assert_eq!(action(a), Ok(None), "{a}");
        }
        // Real TAO actions missing from the list: accepted with a note.
        for a in [
            "infer",
            "finetune",
            "tune",
            "confusion_matrix",
            "nas",
            "export_v2",
        ] {
            let note = action(a).unwrap().unwrap_or_else(|| panic!("{a}: no note"));
            assert!(
                note.contains(&format!("--action {a:?}")) && !note.contains('\n'),
                "{note}"
            );
        }
        // Typos of known actions: refused with the action meant.
        for (typo, meant) in [
            ("trian", "train"),
            ("evalute", "evaluate"),
            ("inferance", "inference"),
            ("Train", "train"),
            ("gen_trt_engin", "gen_trt_engine"),
            ("exprot", "export"),
            ("dataset_convrt", "dataset_convert"),
            ("calibration_tensrfle", "calibration_tensorfile"),
        ] {
            let e = action(typo).unwrap_err();
            assert!(
                e.contains(&format!("did you mean {meant:?}?")),
                "{typo}: {e}"
            );
        }
        // Not the shape of a TAO action name.
        for bad in ["TRAIN_ALL", "9lives", "dino-train", "", &"a".repeat(65)] {
            let e = action(bad).unwrap_err();
            assert!(e.contains("lowercase letters"), "{bad}: {e}");
        }
    }

    #[test]
    fn reserved_names_cover_the_script_bash_and_slurm() {
        for n in [
            "PATH",
            "BASH_ENV",
            "BASHOPTS",
            "ENV",
            "IFS",
            "LD_PRELOAD",
            "SHELLOPTS",
            "PS4",
            "PROMPT_COMMAND",
            "tao_secrets",
            "tao_child",
            "SLURM_JOB_ID",
            "MASTER_ADDR",
            "MASTER_PORT",
            "WORLD_SIZE",
            "NODE_RANK",
            "NUM_GPU_PER_NODE",
            "TAO_JOB_ID",
            "SECONDS",
        ] {
            assert!(is_reserved(n), "{n}");
            assert!(env_name(n).is_err() && secret_name(n).is_err(), "{n}");
        }
        for n in ["HF_HOME", "OMP_NUM_THREADS", "NCCL_P2P_DISABLE", "TAO_X"] {
            assert!(env_name(n).is_ok(), "{n}");
        }
        assert!(secret_name("HF_TOKEN").is_ok());
        assert!(env_name("HF_TOKEN").is_err());
        for bad in ["", "1A", "A-B", "A B"] {
            assert!(env_name(bad).is_err() && secret_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn every_name_the_templates_assign_is_reserved() {
        // Names the templates export or assign at the top level (not `local`).
        let templates = [
            include_str!("../../tao-script/templates/base.sbatch"),
            include_str!("../../tao-script/templates/single.sbatch"),
            include_str!("../../tao-script/templates/multi.sbatch"),
            include_str!("../../tao-script/templates/rendezvous.sbatch"),
            include_str!("../../tao-script/templates/probe.sbatch"),
        ];
        for t in templates {
            for line in t.lines() {
                let l = line.trim_start().trim_start_matches("export ");
                if line.trim_start().starts_with("local ") {
                    continue;
                }
                for word in l.split_whitespace() {
                    if let Some((name, _)) = word.split_once('=') {
                        if is_var_name(name) && name.to_ascii_uppercase() == name
                            || name.starts_with("tao_")
                        {
                            assert!(is_reserved(name), "{name} (from {line:?})");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn env_and_secret_overlap() {
        assert!(env_not_secret(["A"], &["B".into()]).is_ok());
        assert!(env_not_secret(["A"], &["A".into()]).is_err());
    }

    #[test]
    fn time_limits_name_partition_and_limit() {
        let p = profile();
        let t = SlurmTime::parse("05:00:00").unwrap();
        let err = check_time_limit(t, "polar,polar3", &p).unwrap_err();
        assert!(
            err.contains("\"polar\"") && err.contains("0-04:00:00"),
            "{err}"
        );
        assert!(
            check_time_limit(SlurmTime::parse("04:00:00").unwrap(), "polar,grizzly", &p).is_ok()
        );
        assert!(
            check_time_limit(SlurmTime::parse("05:00:00").unwrap(), "cpu_long,polar", &p).is_err()
        );
        assert!(check_time_limit(SlurmTime::parse("9-00:00:00").unwrap(), "other", &p).is_ok());
        assert!(check_time_limit(SlurmTime::Unlimited, "polar", &p).is_err());
        assert!(check_time_limit(SlurmTime::Unlimited, "other", &p).is_ok());
    }

    #[test]
    fn partitions_are_checked_only_against_a_profile_that_lists_them() {
        let mut p = SiteProfile::load(Some("local")).unwrap();
        assert!(known_partition(&p, "gpu").is_ok());
        let e = known_partition(&p, "gpu2").unwrap_err();
        assert!(
            e.contains("(gpu, cpu_long)") && e.contains("TAO_SITE_PROFILE"),
            "{e}"
        );
        p.partitions.clear();
        assert!(known_partition(&p, "gpu2").is_ok());
    }

    #[test]
    fn child_timeout_rules() {
        let wall = SlurmTime::parse("04:00:00").unwrap();
        assert_eq!(child_timeout_secs(None, wall).unwrap(), 13680); // 3.8 h
        assert_eq!(child_timeout_secs(Some("00:00:05"), wall).unwrap(), 5);
        assert!(child_timeout_secs(Some("04:00:00"), wall).is_err());
        assert!(child_timeout_secs(Some("0"), wall).is_err());
        assert_eq!(child_timeout_secs(None, SlurmTime::Unlimited).unwrap(), 0);
        assert_eq!(
            child_timeout_secs(Some("10"), SlurmTime::Unlimited).unwrap(),
            600
        );
        // One second leaves no room for a child timeout.
        assert!(child_timeout_secs(None, SlurmTime::Seconds(1)).is_err());
        assert_eq!(
            child_timeout_secs(None, SlurmTime::Seconds(20)).unwrap(),
            19
        );
    }

    #[test]
    fn gpu_shape_rule() {
        assert_eq!(gpu_shape(1, 4, false, 8).unwrap(), (1, 4, false));
        assert_eq!(gpu_shape(1, 8, false, 8).unwrap(), (1, 8, true));
        assert_eq!(gpu_shape(1, 16, false, 8).unwrap(), (2, 8, true));
        assert_eq!(gpu_shape(2, 8, false, 8).unwrap(), (2, 8, true));
        assert_eq!(gpu_shape(1, 12, false, 8).unwrap(), (2, 6, true));
        assert!(gpu_shape(1, 9, false, 8).is_err());
        assert_eq!(gpu_shape(3, 0, false, 8).unwrap(), (3, 0, false));
        assert!(gpu_shape(u32::MAX, 16, false, 8).is_err());
        assert!(nodes(0).is_err() && cpus_per_task(0).is_err());
        assert_eq!(shape_notice(2, 4, (2, 4), 4, "local"), None);
        let n = shape_notice(1, 8, (2, 4), 4, "local").unwrap();
        assert!(
            n.starts_with("1 node(s) x 8 GPUs runs as 2 node(s) x 4 GPUs (8 GPUs"),
            "{n}"
        );
    }

    #[test]
    fn partition_limits_name_the_input() {
        let p = SiteProfile::load(Some("local")).unwrap();
        assert!(fits_partitions(&p, "gpu", 2, (2, 4), 8, Some("4000M")).is_ok());
        assert!(fits_partitions(&p, "gpu", 1, (1, 0), 1, Some("3G")).is_ok());
        let (w, m) = fits_partitions(&p, "gpu", 1, (1, 1), 9, None).unwrap_err();
        assert_eq!(w, Unfit::Cpus);
        assert!(
            m.contains("9 CPUs per task") && m.contains("(8, site profile \"local\")"),
            "{m}"
        );
        let (w, m) = fits_partitions(&p, "gpu", 3, (3, 0), 1, None).unwrap_err();
        assert_eq!(w, Unfit::Nodes);
        assert!(
            m.contains("\"gpu\"") && m.contains("at most 2 nodes"),
            "{m}"
        );
        let (w, m) = fits_partitions(&p, "gpu", 1, (3, 4), 1, None).unwrap_err();
        assert_eq!(w, Unfit::Gpus);
        assert!(m.contains("12 GPUs") && m.contains("at most 8 GPUs"), "{m}");
        let (w, m) = fits_partitions(&p, "gpu,cpu_long", 1, (1, 1), 1, Some("5G")).unwrap_err();
        assert_eq!(w, Unfit::Mem);
        assert!(
            m.starts_with("no partition of \"gpu,cpu_long\"") && m.contains("4000M"),
            "{m}"
        );
        // A profile without limits, or a partition it does not list, passes.
        let ord = profile();
        assert!(fits_partitions(&ord, "polar", 64, (64, 8), 999, Some("9T")).is_ok());
        assert!(fits_partitions(&p, "other", 64, (64, 8), 999, None).is_ok());
        // The default CPU count shrinks to the nodes of a small site.
        assert_eq!(default_cpus_per_task(&p, "gpu"), 8);
        assert_eq!(
            default_cpus_per_task(&p, "gpu,other"),
            defaults::CPUS_PER_TASK
        );
        assert_eq!(
            default_cpus_per_task(&ord, "polar"),
            defaults::CPUS_PER_TASK
        );
        assert_eq!(mem_megabytes("4000").unwrap(), 4000);
        assert_eq!(mem_megabytes("2g").unwrap(), 2048);
        assert_eq!(mem_megabytes("1025K").unwrap(), 2);
    }

    #[test]
    fn memory_sizes() {
        assert_eq!(mem("64g").unwrap(), "64G");
        assert_eq!(mem("7200").unwrap(), "7200");
        for bad in ["64GB", "G", "", "1234567890123M", "-1G", "6 4G"] {
            assert!(mem(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn runtime_names() {
        assert!(runtime("pyxis").is_ok() && runtime("none").is_ok());
        let e = runtime("docker").unwrap_err();
        assert!(
            e.contains("\"docker\"") && e.contains("pyxis or none"),
            "{e}"
        );
    }
}
