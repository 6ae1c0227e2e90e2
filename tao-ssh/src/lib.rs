//! The SSH transport of tao-slurm: one libssh2 session per login host per
//! run, one channel per remote command on it, host keys checked against
//! `known_hosts`, never a prompt and never a TTY.
//!
//! Why one session: a fresh `ssh host cmd` process costs about 200 ms on
//! loopback (process start, TCP, key exchange, authentication); a command on
//! an open session costs about 2.5 ms once `TCP_NODELAY` is set (see
//! docs/design.md, "One SSH session per run"). Every tool that talks to the
//! cluster (tao-submit, tao-poll) opens one [`Remote`] per login host and
//! runs all of its commands on it.
//!
//! The model followed is wezterm's SSH layer: handshake, host-key check and
//! authentication in blocking mode with a context on each step; known_hosts
//! through libssh2's `check_port` (`[host]:port` for ports other than 22); an
//! unknown key is a hard failure unless the user opted in; identity files
//! then the agent; never a password prompt. ProxyJump and ProxyCommand of
//! the ssh config are followed (the `link` module).
//!
//! ```no_run
//! let opts = tao_ssh::SshOptions::from_env()?;
//! let remote = tao_ssh::Remote::connect(&opts)?;
//! let out = remote.exec("squeue --me -h", None)?;
//! assert_eq!(out.status, 0);
//! # Ok::<(), tao_core::Error>(())
//! ```

mod auth;
mod connect;
mod hostkey;
mod link;
pub mod local;
mod mux;
pub mod openssh;
mod options;
mod output;
mod process;
mod remote;
pub mod script;
pub mod transport;

pub use auth::{check_key_permissions, login_remediation, login_setup_steps};
pub use connect::{connect, connect_host};
pub use hostkey::{keyscan_fix, known_hosts_name};
pub use options::{parse_host_spec, Proxy, SshOptions, Target};
pub use output::{exec_count, handshake_count, Output, DEFAULT_COMMAND_TIMEOUT};
pub use remote::{Remote, DEAD_PEER_BOUND};
pub use transport::{Transport, TransportKind};

/// The name of the running program (the file name of `argv[0]`), used as
/// the prefix of warnings this library prints on stderr (`tao-submit:
/// warning: ...`). Falls back to `tao-ssh`.
pub fn program_name() -> String {
    std::env::args_os()
        .next()
        .and_then(|a| {
            std::path::Path::new(&a)
                .file_name()
                .map(|f| f.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| "tao-ssh".to_string())
}
