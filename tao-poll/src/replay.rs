//! Offline replay (`--replay-*`): saved command outputs stand in for the
//! cluster; and the connector of a run (replay files, else SSH). Shared by
//! the status action ([`crate::cli`]) and `report` ([`crate::report`]).

use std::path::PathBuf;

use clap::Args;
use tao_core::{Error, Result};

use crate::backend::ReplayBackend;
use crate::poll::{Connector, EarlySession, Single, SshConnector};

/// Offline replay: saved command outputs stand in for the cluster.
#[derive(Debug, Args, Clone, Default)]
pub struct ReplayArgs {
    /// Saved `squeue` output (ours: `-h -t all -O ...`; or any with its header line); `-` reads stdin.
    #[arg(long, value_name = "FILE")]
    pub replay_squeue: Option<PathBuf>,
    /// Saved `sacct` output (`-P` with or without header, or a default table); `-` reads stdin.
    #[arg(long, value_name = "FILE")]
    pub replay_sacct: Option<PathBuf>,
    /// Saved `scontrol show job` output (used when sacct says accounting is disabled); `-` reads stdin.
    #[arg(long, value_name = "FILE")]
    pub replay_scontrol: Option<PathBuf>,
    /// Saved `squeue --start -h -o '%i|%S'` output (expected starts of pending jobs).
    #[arg(long, value_name = "FILE")]
    pub replay_squeue_start: Option<PathBuf>,
    /// Local directory standing for the cluster's `/` (status.json, completion.json, logs).
    #[arg(long, value_name = "DIR")]
    pub replay_root: Option<PathBuf>,
}

impl ReplayArgs {
    /// Whether any replay option was given.
    pub fn active(&self) -> bool {
        self.replay_squeue.is_some()
            || self.replay_sacct.is_some()
            || self.replay_scontrol.is_some()
            || self.replay_squeue_start.is_some()
            || self.replay_root.is_some()
    }

    /// Build the replay backend.
    ///
    /// Errors: [`Error::Io`] naming a file that cannot be read.
    pub fn backend(&self) -> Result<ReplayBackend> {
        let read = |p: &Option<PathBuf>| -> Result<Option<String>> {
            p.as_ref()
                .map(|p| {
                    if p.as_os_str() == "-" {
                        let mut buf = Vec::new();
                        std::io::Read::read_to_end(&mut std::io::stdin(), &mut buf)
                            .map_err(|e| Error::io("reading replay text from standard input", e))?;
                        return Ok(String::from_utf8_lossy(&buf).into_owned());
                    }
                    std::fs::read(p)
                        .map(|b| String::from_utf8_lossy(&b).into_owned())
                        .map_err(|e| {
                            Error::io(
                                format!("reading replay file {:?}", p.display().to_string()),
                                e,
                            )
                        })
                })
                .transpose()
        };
        Ok(ReplayBackend {
            squeue: read(&self.replay_squeue)?,
            sacct: read(&self.replay_sacct)?,
            scontrol: read(&self.replay_scontrol)?,
            squeue_start: read(&self.replay_squeue_start)?,
            user: std::env::var("SLURM_USER").ok().filter(|u| !u.is_empty()),
            root: self.replay_root.clone(),
        })
    }
}

/// The connector for this run: replay files, else SSH from the environment
/// (`transport`: the `--transport` value, winning over `TAO_TRANSPORT`).
/// `needed`: whether the run will ask a login host (some line has a Slurm
/// job id, [`crate::poll::asks_scheduler`]); then the SSH configuration is
/// read here, and an error in it stops the run before any output, as one
/// line naming the variable and the fix with its own exit status (78 for
/// an unknown TAO_TRANSPORT): it is the run's error, not the jobs', so no
/// job line carries it for `tao-record mark` to record. A run that asks no
/// host reads no configuration. `early`: a session already being opened
/// ([`EarlySession`], started while the input was read), which the SSH
/// connector takes for its host.
///
/// Errors: [`Error::Io`] for an unreadable replay file; with `needed`, the
/// errors of `tao_ssh::SshOptions::from_lookup` ([`Error::Config`], ...).
pub fn connector(
    replay: &ReplayArgs,
    transport: Option<&str>,
    needed: bool,
    early: Option<EarlySession>,
) -> Result<Box<dyn Connector>> {
    if replay.active() {
        Ok(Box::new(Single(replay.backend()?)))
    } else if needed {
        let opts = tao_ssh::SshOptions::from_env_with_transport(transport)?;
        Ok(Box::new(SshConnector::new(opts).with_early(early)))
    } else {
        Ok(Box::new(SshConnector::from_env(transport)))
    }
}
