//! SSH material for tests against the local cluster's sshd: copies of the
//! cluster user's private key with a chosen mode, and an `ssh-agent` of
//! the test's own.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Copy the private key `src` to `dir/name` with permission bits `mode`
/// (e.g. `0o600`, or `0o640` for a key ssh must refuse). Returns the copy.
///
/// Panics when the copy or the chmod fails.
pub fn copy_key(src: impl AsRef<Path>, dir: &Path, name: &str, mode: u32) -> PathBuf {
    let dst = dir.join(name);
    std::fs::copy(src.as_ref(), &dst).unwrap();
    std::fs::set_permissions(&dst, std::fs::Permissions::from_mode(mode)).unwrap();
    dst
}

/// An `ssh-agent -D` listening on a socket in a test's directory; killed
/// (and reaped) when dropped.
pub struct SshAgent {
    child: Child,
    sock: PathBuf,
}

impl SshAgent {
    /// How long the agent may take to answer on a loaded machine.
    pub const READY_BOUND: Duration = Duration::from_secs(60);

    /// Start an agent on `dir/agent.sock` and wait (polling, bounded by
    /// [`SshAgent::READY_BOUND`]) until it answers: ready when `ssh-add -l`
    /// reaches it, not when its socket file exists (it binds before it
    /// listens; `ssh-add -l` exits 2 while it cannot reach the agent).
    ///
    /// Panics when `ssh-agent` cannot be started or does not answer in time.
    pub fn start(dir: &Path) -> SshAgent {
        let sock = dir.join("agent.sock");
        let child = Command::new("ssh-agent")
            .arg("-D")
            .arg("-a")
            .arg(&sock)
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        let agent = SshAgent { child, sock };
        let deadline = Instant::now() + Self::READY_BOUND;
        loop {
            let st = agent
                .ssh_add()
                .arg("-l")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .unwrap();
            if st.code() != Some(2) {
                break;
            }
            assert!(Instant::now() < deadline, "ssh-agent did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        agent
    }

    /// The agent's socket (the value for `SSH_AUTH_SOCK`).
    pub fn sock(&self) -> &Path {
        &self.sock
    }

    /// Add the private key `key` to the agent (`ssh-add -q`). Returns
    /// whether `ssh-add` succeeded.
    pub fn add(&self, key: &Path) -> bool {
        self.ssh_add()
            .arg("-q")
            .arg(key)
            .status()
            .unwrap()
            .success()
    }

    /// `ssh-add` with a cleared environment but this agent's socket.
    fn ssh_add(&self) -> Command {
        let mut c = Command::new("ssh-add");
        c.env_clear().env("SSH_AUTH_SOCK", &self.sock);
        c
    }
}

impl Drop for SshAgent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
