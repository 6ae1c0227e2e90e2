//! The `local` transport: the tool runs on the login node itself (an
//! interactive shell there, a cron line there), so scheduler commands and
//! file operations run right here through `sh -s`, with no SSH at all:
//! nothing to authenticate, no second factor, no host key.
//!
//! The scripts are the same as on the other transports
//! ([`crate::script::compose`]), so a job staged locally is byte for byte
//! the job staged over SSH.

use std::process::Command;
use std::time::Duration;

use tao_core::{Error, Result};

use crate::options::SshOptions;
use crate::output::{begin_exec, ran_too_long, Output, DEFAULT_COMMAND_TIMEOUT};
use crate::process::{run, RunError};
use crate::script::compose;
use crate::transport::{Transport, TransportKind};

/// The login node itself as a [`Transport`].
#[derive(Debug)]
pub struct LocalRemote {
    spec: String,
    user: String,
    prefix: String,
    command_timeout: Duration,
}

/// The user this process runs as (`getpwuid(geteuid())`), else `$USER`.
fn current_user() -> String {
    nix::unistd::User::from_uid(nix::unistd::geteuid())
        .ok()
        .flatten()
        .map(|u| u.name)
        .or_else(|| std::env::var("USER").ok())
        .unwrap_or_default()
}

impl LocalRemote {
    /// The login node this process runs on, labelled `spec` (the login host
    /// the job lines record; default: this machine's host name).
    ///
    /// Errors: [`Error::Config`] (78) when `SLURM_USER` names another user
    /// than the one running the tool (the local transport cannot switch
    /// users: run the tool as that user, or use ssh).
    pub fn new(opts: &SshOptions, spec: Option<&str>) -> Result<LocalRemote> {
        let user = current_user();
        if !opts.user.is_empty() && opts.user != user {
            return Err(Error::Config(format!(
                "TAO_TRANSPORT=local runs as {user:?} on this host but SLURM_USER is {:?}: run the tool as {:?} or unset SLURM_USER",
                opts.user, opts.user
            )));
        }
        let spec = spec.map(str::to_string).unwrap_or_else(|| {
            nix::unistd::gethostname()
                .ok()
                .and_then(|h| h.into_string().ok())
                .unwrap_or_else(|| "localhost".into())
        });
        Ok(LocalRemote {
            spec,
            user,
            prefix: opts.remote_prefix.clone(),
            command_timeout: DEFAULT_COMMAND_TIMEOUT,
        })
    }
}

impl Transport for LocalRemote {
    fn login_host(&self) -> &str {
        &self.spec
    }

    fn user(&self) -> &str {
        &self.user
    }

    fn kind(&self) -> TransportKind {
        TransportKind::Local
    }

    fn exec(&self, script: &str, stdin: Option<&[u8]>) -> Result<Output> {
        begin_exec(&self.spec, script);
        let mut cmd = Command::new("sh");
        cmd.arg("-s");
        match run(
            cmd,
            &compose(&self.prefix, script, stdin),
            self.command_timeout,
        ) {
            Ok(o) => crate::script::finish(&self.spec, &self.user, o),
            Err(RunError::Timeout) => Err(ran_too_long(
                &format!("this login node ({:?})", self.spec),
                self.command_timeout,
            )),
            Err(RunError::Spawn(e)) => Err(Error::Unavailable(format!(
                "cannot start sh on this host for TAO_TRANSPORT=local: {e}; check PATH"
            ))),
        }
    }

    fn set_command_timeout(&mut self, limit: Duration) {
        self.command_timeout = limit;
    }
}
