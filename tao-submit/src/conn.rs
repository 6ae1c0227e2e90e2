//! The connection flags every action of tao-submit shares (`--hosts`,
//! `--user`, `--key`, ...), and the SSH options they give. Their own file so
//! that the actions ([`crate::preflight`]) and the command line
//! ([`crate::cli`]) both read them without importing each other.

use std::path::PathBuf;

use clap::Args;
use tao_core::Result;
use tao_ssh::SshOptions;

/// How to reach the login nodes.
#[derive(Debug, Args)]
pub struct ConnArgs {
    /// Login hosts, comma-separated `host[:port]` or ~/.ssh/config aliases; the first that answers is used.
    #[arg(
        long = "hosts",
        env = "SLURM_HOSTNAME",
        global = true,
        value_name = "LIST"
    )]
    pub hosts: Option<String>,
    /// Remote user name.
    #[arg(long, env = "SLURM_USER", global = true)]
    pub user: Option<String>,
    /// Private key (mode 600); without it the ssh-agent (SSH_AUTH_SOCK) is used.
    #[arg(long = "key", env = "SSH_KEY_PATH", global = true, value_name = "FILE")]
    pub key: Option<PathBuf>,
    /// known_hosts file [default: ~/.ssh/known_hosts].
    #[arg(long, env = "SSH_KNOWN_HOSTS", global = true, value_name = "FILE")]
    pub known_hosts: Option<PathBuf>,
    /// OpenSSH client config for host aliases [default: ~/.ssh/config].
    #[arg(long, env = "SSH_CONFIG", global = true, value_name = "FILE")]
    pub ssh_config: Option<PathBuf>,
    /// Site profile: built-in name (`local`, `cs-oci-ord`) or a TOML file.
    #[arg(
        long,
        env = "TAO_SITE_PROFILE",
        global = true,
        value_name = "NAME|FILE"
    )]
    pub site_profile: Option<String>,
    /// Add an unknown login-node host key to known_hosts instead of refusing it (a changed key is always refused).
    #[arg(long, global = true)]
    pub accept_new_host_key: bool,
    /// How to reach the login node: libssh2 (default), openssh (the system ssh over a ControlMaster connection; reuses a master you opened) or local (run on the login node itself, no SSH). Wins over TAO_TRANSPORT.
    // No clap `env = "TAO_TRANSPORT"`: the variable is read and checked by
    // tao-ssh (`SshOptions::from_lookup`, exit 78 naming TAO_TRANSPORT and
    // its values), never reported as a flag the user did not pass.
    // The names and the check are tao_ssh::TransportKind's (NAMES, parse).
    #[arg(long, global = true, value_name = "NAME", value_parser = tao_cli::CheckedLater(&tao_ssh::TransportKind::NAMES))]
    pub transport: Option<String>,
}

impl ConnArgs {
    /// SSH options: these flags, then the environment ([`SshOptions::from_lookup`]).
    ///
    /// Errors: as [`SshOptions::from_lookup`].
    pub fn ssh_options(&self) -> Result<SshOptions> {
        let path = |p: &Option<PathBuf>| p.as_ref().map(|p| p.display().to_string());
        let flag = |name: &str| -> Option<String> {
            match name {
                "SLURM_HOSTNAME" => self.hosts.clone(),
                "SLURM_USER" => self.user.clone(),
                "SSH_KEY_PATH" => path(&self.key),
                "SSH_KNOWN_HOSTS" => path(&self.known_hosts),
                "SSH_CONFIG" => path(&self.ssh_config),
                "TAO_SITE_PROFILE" => self.site_profile.clone(),
                "TAO_TRANSPORT" => self.transport.clone(),
                _ => None,
            }
        };
        let mut opts =
            SshOptions::from_lookup(|name| flag(name).or_else(|| std::env::var(name).ok()))?;
        opts.accept_new_host_key = self.accept_new_host_key;
        Ok(opts)
    }
}
