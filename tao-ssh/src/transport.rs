//! One interface, three ways to reach the login node, chosen by
//! `TAO_TRANSPORT` (or a tool's `--transport` flag):
//!
//! - `libssh2` (the default): [`crate::Remote`], one libssh2 session per
//!   login host per run, host keys checked against known_hosts;
//! - `openssh`: the system `ssh` client over a multiplexed master
//!   connection ([`crate::openssh::OpensshRemote`]): a master the user opened
//!   is reused (the way two-factor clusters are used), else one is opened
//!   for the run and closed after; everything the user's ssh config does
//!   works (ProxyJump, certificates, Kerberos, FIDO keys);
//! - `local`: on the login node itself, `sh -s` runs here
//!   ([`crate::local::LocalRemote`]), no SSH at all.
//!
//! Every transport runs the same thing: a POSIX sh script on the standard
//! input of the constant command `sh -s` ([`crate::script`]).

use std::time::Duration;

use tao_core::{Error, Result};

use crate::output::Output;

/// Which transport a run uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TransportKind {
    /// libssh2 sessions (the default).
    #[default]
    Libssh2,
    /// The system `ssh` client with ControlMaster multiplexing.
    Openssh,
    /// No SSH: the tool runs on the login node.
    Local,
}

impl TransportKind {
    /// The names `TAO_TRANSPORT` and `--transport` accept.
    pub const NAMES: [&'static str; 3] = ["libssh2", "openssh", "local"];

    /// Parse a `TAO_TRANSPORT` / `--transport` value (case-insensitive).
    ///
    /// Errors: [`Error::Config`] (exit 78) naming the value and the choices.
    pub fn parse(s: &str) -> Result<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "libssh2" | "" => Ok(TransportKind::Libssh2),
            "openssh" | "ssh" => Ok(TransportKind::Openssh),
            "local" => Ok(TransportKind::Local),
            other => Err(Error::Config(format!(
                "transport {other:?} (TAO_TRANSPORT or --transport) is not one of {}: set it to one of them, or unset TAO_TRANSPORT for libssh2",
                Self::NAMES.join(", ")
            ))),
        }
    }

    /// The canonical name.
    pub fn name(self) -> &'static str {
        match self {
            TransportKind::Libssh2 => "libssh2",
            TransportKind::Openssh => "openssh",
            TransportKind::Local => "local",
        }
    }
}

/// A connection to one login host (or the login node itself) on which POSIX
/// sh scripts run. Implemented by [`crate::Remote`] (libssh2),
/// [`crate::openssh::OpensshRemote`] and [`crate::local::LocalRemote`].
pub trait Transport: std::fmt::Debug + Send {
    /// The login host spec this connection serves, exactly as given in
    /// `SLURM_HOSTNAME` (what `slurm.login_host` records).
    fn login_host(&self) -> &str;

    /// The remote user name the scripts run as.
    fn user(&self) -> &str;

    /// Which transport this is.
    fn kind(&self) -> TransportKind;

    /// Run `script` (POSIX sh, every value quoted with
    /// [`tao_core::shell::quote`]) with `sh -s` after the site's remote
    /// prefix; `stdin`, when given, is the script's standard input (the
    /// only way secrets travel), else it reads an empty stdin.
    ///
    /// Output: stdout, stderr and exit status; a non-zero status is not an
    /// error. Errors: [`Error::Unavailable`] (69) when the connection is
    /// lost (the script may or may not have run); [`Error::TempFail`] (75)
    /// when it outlives the command time limit.
    fn exec(&self, script: &str, stdin: Option<&[u8]>) -> Result<Output>;

    /// [`Transport::exec`], showing the script's stdout read so far to
    /// `idle` whenever the command is running and no bytes are moving
    /// (waiting for the login host), so a caller can work on the first
    /// part of a long reply while the rest is still produced. `idle` may
    /// be called any number of times, with the same or longer prefixes of
    /// what [`Output::stdout`] will be; it must not use this connection.
    /// This default shows nothing ([`crate::Remote`], the default
    /// transport, streams).
    ///
    /// Output and errors: as [`Transport::exec`].
    fn exec_watched(
        &self,
        script: &str,
        stdin: Option<&[u8]>,
        idle: &mut dyn FnMut(&[u8]),
    ) -> Result<Output> {
        let _ = idle;
        self.exec(script, stdin)
    }

    /// Change the per-command time limit (default
    /// [`crate::output::DEFAULT_COMMAND_TIMEOUT`]).
    fn set_command_timeout(&mut self, limit: Duration);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse() {
        for n in TransportKind::NAMES {
            assert_eq!(TransportKind::parse(n).unwrap().name(), n);
        }
        assert_eq!(
            TransportKind::parse(" OpenSSH ").unwrap(),
            TransportKind::Openssh
        );
        let e = TransportKind::parse("telnet").unwrap_err();
        assert_eq!(e.code(), tao_core::exit::CONFIG);
        assert!(e.to_string().contains("libssh2, openssh, local"), "{e}");
    }
}
