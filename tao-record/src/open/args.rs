//! The flags of `tao-record open` and the errors that name one: a bad
//! flag value is a usage error (2), a bad environment value a
//! configuration error (78).

use std::path::PathBuf;

use tao_core::Error;

/// Default storage tier.
pub const DEFAULT_TIER: &str = "lustre";

/// Largest spec file accepted, in bytes.
pub const MAX_SPEC_BYTES: u64 = 4 << 20;

/// Arguments of `tao-record open` (see `tao-record open --help`).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct OpenArgs {
    /// Platform; only "slurm" is known.
    #[arg(long, value_name = "NAME", default_value = "slurm")]
    pub platform: String,
    /// TAO action: train, evaluate, inference, export, prune, retrain, distill, quantize,
    /// gen_trt_engine, calibration_tensorfile, dataset_convert, convert, kmeans, augment,
    /// auto_label, generate, analyze, validate, or another name of lowercase letters, digits
    /// and _ (opened with a note on stderr); a near miss of a known one is refused ("did you
    /// mean").
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
    /// total (16 on 4-GPU nodes: 4 nodes of 4): the record holds that shape and a warning
    /// on stderr names it; a total that does not split evenly is refused.
    #[arg(long, visible_alias = "gpus", value_name = "N", value_parser = clap::value_parser!(u32).range(0..=4294967295))]
    pub gpus_per_node: Option<u32>,
    /// CPUs per task, 1-4294967295, at most the partition's cpus_per_node in the site
    /// profile [default: 16, or cpus_per_node when that is smaller].
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
    /// Node to avoid: a name or a Slurm host list, as sbatch --exclude takes it (n1,n2, gpu[01-04]); repeatable.
    #[arg(long = "exclude", value_name = "NODES")]
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
    /// Spec file (YAML) staged as {config_path}, under its own name, byte for byte; one read
    /// from a pipe or /dev/fd (--spec <(envsubst < spec.yaml)) is staged as spec.yaml. A spec
    /// that does not parse as YAML is refused (exit 65, with its line and column).
    #[arg(long, value_name = "FILE")]
    pub spec: Option<PathBuf>,
    /// Container mount SRC:DST[:FLAGS]; repeatable [env: SLURM_CONTAINER_MOUNTS, comma-separated].
    #[arg(long = "mount", value_name = "SRC:DST")]
    pub mounts: Vec<String>,
    /// Non-secret environment variable for the job, K=V; repeatable. Reserved names are
    /// refused (the job script's own, rendezvous, SLURM_*, BASH*, LD_*, tao_*, PATH, IFS, ...:
    /// tao-jobline(7)), and so are names that look like secrets (use --secret). The value
    /// reaches the job byte for byte: newlines, tabs, CR and ESC are kept (only NUL is refused).
    /// A name given twice with different values is refused (exit 2), not last-wins.
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

pub(super) fn usage(flag: &str, msg: impl std::fmt::Display) -> Error {
    Error::Usage(format!("{flag}: {msg}"))
}

pub(super) fn config(var: &str, msg: impl std::fmt::Display) -> Error {
    Error::Config(format!("{var}: {msg}"))
}

pub(super) fn env_var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}
