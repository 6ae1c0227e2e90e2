//! The probe's settings: its flags, the program it runs and where that is
//! staged.

use std::time::Duration;

/// The probe program shipped with the project (torch.distributed
/// all-reduce under torchrun; plain TCP sockets without torch).
pub const PROGRAM: &str = include_str!("../../assets/tao_probe.py");

/// The program's name in the probe job's supporting-file bundle.
pub const PROGRAM_NAME: &str = "tao_probe.py";

/// Where the program is staged, relative to the probe's job directory.
pub const PROGRAM_REL: &str = "inputs/action-helpers/tao_probe.py";

/// Seconds Slurm may keep a probe job pending (queued) before the probe is
/// given up (`--probe-queue-wait` default).
pub const DEFAULT_QUEUE_WAIT: u64 = 300;

/// How the probe program is started on each node (`--probe-launcher`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LauncherChoice {
    /// `torchrun` with one process per GPU (the container or host must have PyTorch).
    Torchrun,
    /// `python3` once per node (gloo with PyTorch, plain TCP sockets without).
    Python3,
}

/// The probe flags of `tao-submit` (flattened into [`crate::Cli`]).
#[derive(Debug, Clone, clap::Args)]
pub struct ProbeArgs {
    /// Submit multi-node and multi-GPU jobs without the communication probe
    /// (a cached passing environment is still applied). For clusters where
    /// you take the risk of a job hanging in its first collective.
    #[arg(long)]
    pub skip_probe: bool,
    /// Hard timeout of one probe run in seconds (5-3600); a probe still running then counts as a hang.
    #[arg(long, default_value_t = 120, value_name = "SECS",
          value_parser = clap::value_parser!(u64).range(5..=3600))]
    pub probe_timeout: u64,
    /// Seconds a probe job may wait in the queue before the probe is given up (the job is then not submitted); 1-86400.
    #[arg(long, default_value_t = DEFAULT_QUEUE_WAIT, value_name = "SECS",
          value_parser = clap::value_parser!(u64).range(1..=86400))]
    pub probe_queue_wait: u64,
    /// How the probe starts on each node [default: torchrun for runtime pyxis, python3 otherwise].
    #[arg(long, value_enum, value_name = "HOW")]
    pub probe_launcher: Option<LauncherChoice>,
}

impl ProbeArgs {
    /// The settings these flags give.
    pub fn config(&self) -> ProbeConfig {
        ProbeConfig {
            skip: self.skip_probe,
            timeout_s: self.probe_timeout,
            queue_wait: Duration::from_secs(self.probe_queue_wait),
            launcher: self.probe_launcher,
        }
    }
}

/// Settings of the probe gate for one run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProbeConfig {
    /// `--skip-probe`: never run a probe (a cached environment is still applied).
    pub skip: bool,
    /// Hard timeout of one probe run, seconds (the probe template's `timeout_s`).
    pub timeout_s: u64,
    /// How long a probe job may stay pending before the probe is given up.
    pub queue_wait: Duration,
    /// Launcher; `None` picks by runtime ([`crate::probe::launcher_for`]).
    pub launcher: Option<LauncherChoice>,
}

impl Default for ProbeConfig {
    fn default() -> Self {
        ProbeConfig {
            skip: false,
            timeout_s: 120,
            queue_wait: Duration::from_secs(DEFAULT_QUEUE_WAIT),
            launcher: None,
        }
    }
}
