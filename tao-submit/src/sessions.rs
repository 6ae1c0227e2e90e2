//! The SSH sessions of one tao-submit run: at most one per login host,
//! opened on first use and reused for every line and every command (see
//! tao-ssh for why). A session whose connection was lost is dropped and
//! reopened on next use, possibly on another login host.
//!
//! Every remote command is a POSIX sh script that tao-ssh sends on the
//! stdin of the constant remote command `sh -s` (whatever the transport:
//! libssh2, openssh or local; `tao_ssh::script`): the login shell of the
//! cluster user may be fish or tcsh, and a script may be megabytes long.

use std::collections::HashMap;

use tao_core::{Error, Result};
use tao_ssh::{Output, SshOptions, Transport};

/// An open connection to one login host, on any transport.
pub type Remote = Box<dyn Transport>;

/// The sessions of this run, keyed by login host spec.
pub struct Sessions {
    /// The options, or why there are none (a configuration error reported
    /// on each line that needs a session, so no line is lost).
    opts: std::result::Result<SshOptions, String>,
    open: HashMap<String, Remote>,
    primary: Option<String>,
    /// Hosts that did not answer in this run, with why (not dialled again:
    /// a timed-out host would cost the connect timeout on every look-up).
    dead: HashMap<String, String>,
}

impl Sessions {
    /// No session yet; connections are opened on first use.
    pub fn new(opts: SshOptions) -> Self {
        Self::from_result(Ok(opts))
    }

    /// Sessions from options that may have failed to load: every attempt to
    /// connect then returns that configuration error (exit 78).
    pub fn from_result(opts: Result<SshOptions>) -> Self {
        Sessions {
            opts: opts.map_err(|e| e.to_string()),
            open: HashMap::new(),
            primary: None,
            dead: HashMap::new(),
        }
    }

    /// The connection options.
    ///
    /// Errors: [`Error::Config`] when they could not be loaded.
    pub fn opts(&self) -> Result<&SshOptions> {
        self.opts.as_ref().map_err(|m| Error::Config(m.clone()))
    }

    /// The session to the first login host that answers (failover order
    /// of `SLURM_HOSTNAME`), opened once and reused.
    ///
    /// Errors: as [`tao_ssh::connect`] (69 no host, 77 host key/login, 78 config).
    pub fn primary(&mut self) -> Result<&Remote> {
        if let Some(h) = &self.primary {
            if self.open.contains_key(h) {
                return Ok(&self.open[h]);
            }
        }
        let r = tao_ssh::connect(self.opts()?)?;
        let h = r.login_host().to_string();
        self.open.insert(h.clone(), r);
        self.primary = Some(h.clone());
        Ok(&self.open[&h])
    }

    /// The session to one given login host (as recorded in
    /// `slurm.login_host`), opened once and reused.
    ///
    /// Errors: as [`tao_ssh::connect_host`].
    pub fn host(&mut self, spec: &str) -> Result<&Remote> {
        if !self.open.contains_key(spec) {
            if let Some(why) = self.dead.get(spec) {
                return Err(Error::Unavailable(why.clone()));
            }
            match tao_ssh::connect_host(self.opts()?, spec) {
                Ok(r) => {
                    self.open.insert(spec.to_string(), r);
                }
                Err(Error::Unavailable(why)) => {
                    self.dead.insert(spec.to_string(), why.clone());
                    return Err(Error::Unavailable(why));
                }
                Err(e) => return Err(e),
            }
        }
        Ok(&self.open[spec])
    }

    /// The session to `spec`, or the primary session when `spec` does not
    /// answer (login nodes of one cluster share the scheduler).
    ///
    /// Errors: as [`Sessions::primary`].
    pub fn host_or_primary(&mut self, spec: Option<&str>) -> Result<&Remote> {
        if let Some(spec) = spec {
            if self.open.contains_key(spec) {
                return Ok(&self.open[spec]);
            }
            match tao_ssh::connect_host(self.opts()?, spec) {
                Ok(r) => {
                    self.open.insert(spec.to_string(), r);
                    return Ok(&self.open[spec]);
                }
                Err(Error::Unavailable(why)) => {
                    tao_core::cli::warn("tao-submit", &format!("{why}; using another login host"));
                }
                Err(e) => return Err(e),
            }
        }
        self.primary()
    }

    /// Forget the session to `spec` (its connection was lost).
    pub fn drop_host(&mut self, spec: &str) {
        self.open.remove(spec);
        if self.primary.as_deref() == Some(spec) {
            self.primary = None;
        }
    }

    /// Run `script` with `sh -s` on login host `spec` (opening the session
    /// if needed). A lost connection drops the session before returning
    /// the error, so the next call reconnects.
    ///
    /// Errors: as [`Transport::exec`] and [`Sessions::host`].
    pub fn run_on(&mut self, spec: &str, script: &str, stdin: Option<&[u8]>) -> Result<Output> {
        let res = self.host(spec)?.exec(script, stdin);
        if matches!(res, Err(Error::Unavailable(_))) {
            self.drop_host(spec);
        }
        res
    }

    /// The login hosts of the options, in order.
    pub fn hosts(&self) -> Vec<String> {
        self.opts
            .as_ref()
            .map(|o| o.hosts.clone())
            .unwrap_or_default()
    }
}
