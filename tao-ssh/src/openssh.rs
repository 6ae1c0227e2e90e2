//! The `openssh` transport: the system `ssh` client over one multiplexed
//! master connection per login host (ssh_config(5): `ControlMaster`,
//! `ControlPath`), so everything the user's own ssh does works here too:
//! ProxyJump, ProxyCommand, certificates, Kerberos, FIDO keys, and a second
//! factor answered once by the user.
//!
//! Which master ([`OpensshRemote::connect_host`]), in order:
//!
//! 1. the `ControlPath` of the user's ssh config for that host (`ssh -G`),
//!    when a master listens there (`ssh -O check`): reused, left open;
//! 2. tao's own path, `TAO_SSH_CONTROL_PATH` (default `~/.ssh/tao-%C`,
//!    tokens as in ssh_config(5)), where the one-line fix below opens one:
//!    reused, left open;
//! 3. else a master is opened for this run in BatchMode (never a prompt) on
//!    a private socket, and closed when the run ends.
//!
//! When that fails because the host wants keyboard-interactive or a
//! password (a second factor), the error is one line with the exact
//! `ssh -M ...` command that opens the master of step 2, exit 77, at once.
//!
//! Each remote command is then a new session asked of the master on its
//! control socket ([`crate::mux`], no process started; no TCP, no key
//! exchange, no authentication), or, when the socket does not answer, one
//! `ssh ... HOST sh -s` client process that rides the master.
//! A dead peer is noticed by ssh's `ServerAliveInterval` (15 s) times
//! `ServerAliveCountMax` (2): within 45 s.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use tao_core::{shell, Error, Result};

use crate::hostkey::keyscan_fix;
use crate::options::{parse_host_spec, SshOptions};
use crate::output::{begin_exec, ran_too_long, Output, DEFAULT_COMMAND_TIMEOUT, HANDSHAKES};
use crate::process::{run, RunError};
use crate::script::{compose, REMOTE_COMMAND};
use crate::transport::{Transport, TransportKind};

/// Default `ControlPath` of masters the user opens for tao (ssh expands `~`
/// and `%C`, a hash of local host, remote host, port and user).
pub const DEFAULT_CONTROL_PATH: &str = "~/.ssh/tao-%C";

/// Remote commands that needed an `ssh` client process (the master's socket
/// did not answer the mux protocol), for tests and benchmarks.
static CLIENT_RUNS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// How many remote commands of this process went through an `ssh` client
/// process instead of a session asked of the master directly.
pub fn client_process_count() -> u64 {
    CLIENT_RUNS.load(Ordering::Relaxed)
}

/// `ServerAliveInterval` given to ssh, seconds.
const ALIVE_INTERVAL: u32 = 15;
/// `ServerAliveCountMax` given to ssh.
const ALIVE_COUNT: u32 = 2;

/// One login host reached through the system ssh client.
#[derive(Debug)]
pub struct OpensshRemote {
    spec: String,
    user: String,
    /// Options put before the destination on every ssh run.
    args: Vec<String>,
    dest: String,
    control_path: String,
    /// The master this run opened (closed on drop), with its private dir.
    own: Option<(Child, PathBuf)>,
    /// The control socket with ssh's tokens expanded, for sessions asked
    /// of the master directly ([`crate::mux`]).
    mux_path: Option<PathBuf>,
    prefix: String,
    command_timeout: Duration,
}

/// The ssh options tao passes for `spec`, the destination, and the subset a
/// user types to open a master by hand (no BatchMode, no timeouts).
fn ssh_args(opts: &SshOptions, spec: &str) -> Result<(Vec<String>, Vec<String>, String)> {
    let (name, port) = parse_host_spec(spec)?;
    let mut user_args = Vec::new();
    if let Some(cfg) = opts
        .ssh_config
        .as_ref()
        .filter(|_| opts.ssh_config_explicit)
    {
        user_args.extend(["-F".into(), cfg.display().to_string()]);
    }
    if let Some(k) = &opts.key_path {
        user_args.extend(["-i".into(), k.display().to_string()]);
    }
    if opts.known_hosts_explicit {
        user_args.extend([
            "-o".into(),
            format!("UserKnownHostsFile={}", opts.known_hosts.display()),
        ]);
    }
    if !opts.user.is_empty() {
        user_args.extend(["-l".into(), opts.user.clone()]);
    }
    if let Some(p) = port {
        user_args.extend(["-p".into(), p.to_string()]);
    }
    let mut args = vec![
        "-T".to_string(),
        "-o".into(),
        "BatchMode=yes".into(),
        "-o".into(),
        format!(
            "StrictHostKeyChecking={}",
            if opts.accept_new_host_key {
                "accept-new"
            } else {
                "yes"
            }
        ),
        "-o".into(),
        format!("ConnectTimeout={}", opts.connect_timeout.as_secs().max(1)),
        "-o".into(),
        format!("ServerAliveInterval={ALIVE_INTERVAL}"),
        "-o".into(),
        format!("ServerAliveCountMax={ALIVE_COUNT}"),
    ];
    args.extend(user_args.iter().cloned());
    Ok((args, user_args, name))
}

/// `ssh -G` for the destination: (user, control path or "none").
fn effective_config(args: &[String], dest: &str) -> Result<(String, String)> {
    let out = Command::new("ssh")
        .arg("-G")
        .args(args)
        .arg("--")
        .arg(dest)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| {
            Error::Config(format!(
                "TAO_TRANSPORT=openssh needs the ssh client: {e}; install openssh-client or use TAO_TRANSPORT=libssh2"
            ))
        })?;
    if !out.status.success() {
        return Err(Error::Config(format!(
            "ssh -G {dest:?} failed: {}; fix the ssh config or the options",
            tao_core::cli::one_line(String::from_utf8_lossy(&out.stderr).trim())
        )));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let get = |k: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(k).and_then(|r| r.strip_prefix(' ')))
            .map(str::to_string)
    };
    Ok((
        get("user").unwrap_or_default(),
        get("controlpath").unwrap_or_else(|| "none".into()),
    ))
}

/// The control socket path with ssh's tokens (`~`, `%C`, ...) expanded,
/// as `ssh -G` prints it.
fn expanded_control_path(args: &[String], path: &str, dest: &str) -> Option<PathBuf> {
    let out = Command::new("ssh")
        .arg("-G")
        .args(args)
        .arg("-o")
        .arg(format!("ControlPath={path}"))
        .arg("--")
        .arg(dest)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("controlpath "))
        .map(PathBuf::from)
}

/// Whether a master listens on `path` for `dest` (`ssh -O check`).
fn master_alive(args: &[String], path: &str, dest: &str) -> bool {
    Command::new("ssh")
        .args(args)
        .arg("-o")
        .arg(format!("ControlPath={path}"))
        .args(["-O", "check", "--", dest])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// The one-line fix for a host that needs a second factor.
pub fn master_command(user_args: &[String], dest: &str, control_path: &str) -> String {
    let mut words = vec![
        "ssh".to_string(),
        "-M".into(),
        "-o".into(),
        format!("ControlPath={control_path}"),
        "-o".into(),
        "ControlPersist=yes".into(),
        "-fN".into(),
    ];
    words.extend(user_args.iter().cloned());
    words.push(dest.to_string());
    words
        .iter()
        .map(|w| {
            if w.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_.=/:@,".contains(&b))
            {
                w.clone()
            } else {
                shell::quote(w)
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Turn what ssh said on a failed login into one error line.
fn classify_failure(
    spec: &str,
    stderr: &str,
    fix_master: &str,
    known_hosts: &Path,
    host_port: (&str, u16),
) -> Error {
    let line = tao_core::cli::one_line(stderr.trim());
    let has = |s: &str| stderr.contains(s);
    if has("REMOTE HOST IDENTIFICATION HAS CHANGED") {
        return Error::NoPerm(format!(
            "login host {spec:?}: its host key differs from the one in known_hosts (ssh refused it): this may be an attack or a reinstalled login node; if your admins confirm the new key, run `ssh-keygen -R {}` and `{}`",
            shell::quote(&crate::hostkey::known_hosts_name(host_port.0, host_port.1)),
            keyscan_fix(host_port.0, host_port.1, known_hosts)
        ));
    }
    if has("Host key verification failed") || has("host key is known") {
        return Error::NoPerm(format!(
            "login host {spec:?}: its host key is not in known_hosts (ssh refused it): check its fingerprint with your admins, then run `{}`",
            keyscan_fix(host_port.0, host_port.1, known_hosts)
        ));
    }
    if has("Permission denied") {
        let methods = stderr
            .split("Permission denied")
            .nth(1)
            .unwrap_or_default()
            .lines()
            .next()
            .unwrap_or_default();
        if methods.contains("keyboard-interactive") || methods.contains("password") {
            return Error::NoPerm(format!(
                "login host {spec:?} asks for a second factor or a password and no ssh master is open: run `{fix_master}` once (it prompts), then run this again"
            ));
        }
        return Error::NoPerm(format!(
            "ssh login to {spec:?} failed ({line}); set SSH_KEY_PATH to a private key the login node accepts, or load it into ssh-agent"
        ));
    }
    Error::Unavailable(format!("login host {spec:?}: ssh failed: {line}"))
}

/// Whether a 255 exit with this stderr came from the ssh client (not the
/// remote script).
fn is_client_failure(stderr: &str) -> bool {
    [
        "ssh: ",
        "Connection closed",
        "Connection reset",
        "Connection timed out",
        "Control socket",
        "mux_client",
        "Broken pipe",
        "Permission denied",
        "Host key verification failed",
        "kex_exchange_identification",
        "Timeout, server",
        "closed by remote host",
    ]
    .iter()
    .any(|p| stderr.contains(p))
}

impl OpensshRemote {
    /// Connect to the first login host of `opts.hosts` whose master can be
    /// reached or opened; unreachable hosts are skipped with a warning
    /// (the failover rule of [`crate::Remote::connect`], in one place:
    /// `SshOptions::first_host_that_answers`).
    ///
    /// Errors: as [`OpensshRemote::connect_host`]; [`Error::Unavailable`]
    /// (69) when no host answered.
    pub fn connect(opts: &SshOptions) -> Result<OpensshRemote> {
        opts.first_host_that_answers(|host| Self::connect_host(opts, host))
    }

    /// Reach `spec` through a master connection: the user's, tao's, or one
    /// opened now for this run (see the module docs).
    ///
    /// Errors: [`Error::NoPerm`] (77) for a refused host key, a refused key,
    /// or a second factor with no master open (with the `ssh -M` command);
    /// [`Error::Unavailable`] (69) when the host cannot be reached;
    /// [`Error::Config`] (78) when `ssh` is missing or its config is bad.
    pub fn connect_host(opts: &SshOptions, spec: &str) -> Result<OpensshRemote> {
        let (args, user_args, dest) = ssh_args(opts, spec)?;
        let (user, user_cp) = effective_config(&args, &dest)?;
        let tao_cp = std::env::var("TAO_SSH_CONTROL_PATH")
            .ok()
            .filter(|s| !s.trim().is_empty())
            .unwrap_or_else(|| DEFAULT_CONTROL_PATH.to_string());
        let mut r = OpensshRemote {
            spec: spec.to_string(),
            user,
            args: args.clone(),
            dest: dest.clone(),
            control_path: String::new(),
            own: None,
            mux_path: None,
            prefix: opts.remote_prefix.clone(),
            command_timeout: DEFAULT_COMMAND_TIMEOUT,
        };
        for cp in [user_cp.as_str(), tao_cp.as_str()] {
            if cp != "none" && !cp.is_empty() && master_alive(&args, cp, &dest) {
                r.control_path = cp.to_string();
                r.mux_path = expanded_control_path(&args, cp, &dest);
                tao_core::cli::note(
                    &crate::program_name(),
                    &format!("using the open ssh master {cp:?} for login host {spec:?}"),
                );
                return Ok(r);
            }
        }
        // No master: open one for this run, never prompting.
        let dir = private_dir()?;
        let cp = dir.join("cm").display().to_string();
        let err_path = dir.join("master.err");
        let err_file = std::fs::File::create(&err_path)
            .map_err(|e| Error::io("creating the ssh master's log", e))?;
        HANDSHAKES.fetch_add(1, Ordering::Relaxed);
        let mut child = Command::new("ssh")
            .args(&args)
            .args(["-o", &format!("ControlPath={cp}"), "-o", "ControlMaster=yes", "-o", "ControlPersist=no", "-N", "--", &dest])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(err_file)
            .spawn()
            .map_err(|e| {
                let _ = std::fs::remove_dir_all(&dir);
                Error::Config(format!(
                    "TAO_TRANSPORT=openssh needs the ssh client: {e}; install openssh-client or use TAO_TRANSPORT=libssh2"
                ))
            })?;
        // The socket appears once the master has authenticated.
        let deadline = Instant::now() + opts.connect_timeout * 3 + Duration::from_secs(5);
        let mut wait = Duration::from_millis(1);
        loop {
            if Path::new(&cp).exists() {
                break;
            }
            if let Ok(Some(_)) = child.try_wait() {
                let said = std::fs::read_to_string(&err_path).unwrap_or_default();
                let _ = std::fs::remove_dir_all(&dir);
                let (host, port) = (
                    dest.as_str(),
                    parse_host_spec(spec).ok().and_then(|p| p.1).unwrap_or(22),
                );
                return Err(classify_failure(
                    spec,
                    &said,
                    &master_command(&user_args, &dest, &tao_cp),
                    &opts.known_hosts,
                    (host, port),
                ));
            }
            if Instant::now() >= deadline {
                let _ = child.kill();
                let _ = child.wait();
                let _ = std::fs::remove_dir_all(&dir);
                return Err(Error::Unavailable(format!(
                    "login host {spec:?}: no ssh master after {} s; check that the host is reachable (and the ssh config)",
                    (opts.connect_timeout * 3).as_secs() + 5
                )));
            }
            std::thread::sleep(wait);
            wait = (wait * 2).min(Duration::from_millis(50));
        }
        tao_core::cli::note(
            &crate::program_name(),
            &format!("opened an ssh master to login host {spec:?} for this run"),
        );
        r.mux_path = Some(PathBuf::from(&cp));
        r.control_path = cp;
        r.own = Some((child, dir));
        Ok(r)
    }

    /// The control socket in use.
    pub fn control_path(&self) -> &str {
        &self.control_path
    }

    /// Whether this run opened the master (it is closed on drop).
    pub fn owns_master(&self) -> bool {
        self.own.is_some()
    }
}

/// A new directory only this user can enter, for the master's socket
/// (`$XDG_RUNTIME_DIR` or /tmp; socket paths must stay under 108 bytes).
fn private_dir() -> Result<PathBuf> {
    let base = std::env::var_os("XDG_RUNTIME_DIR")
        .map(PathBuf::from)
        .filter(|p| p.is_dir())
        .unwrap_or_else(|| PathBuf::from("/tmp"));
    nix::unistd::mkdtemp(&base.join("tao-ssh-XXXXXX")).map_err(|e| {
        Error::io(
            "creating a directory for the ssh master",
            std::io::Error::from(e),
        )
    })
}

impl Drop for OpensshRemote {
    fn drop(&mut self) {
        if let Some((mut child, dir)) = self.own.take() {
            let _ = Command::new("ssh")
                .args(&self.args)
                .args([
                    "-o",
                    &format!("ControlPath={}", self.control_path),
                    "-O",
                    "exit",
                    "--",
                    &self.dest,
                ])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
            let deadline = Instant::now() + Duration::from_secs(5);
            while !matches!(child.try_wait(), Ok(Some(_))) {
                if Instant::now() >= deadline {
                    let _ = child.kill();
                    let _ = child.wait();
                    break;
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

impl Transport for OpensshRemote {
    fn login_host(&self) -> &str {
        &self.spec
    }

    fn user(&self) -> &str {
        &self.user
    }

    fn kind(&self) -> TransportKind {
        TransportKind::Openssh
    }

    fn exec(&self, script: &str, stdin: Option<&[u8]>) -> Result<Output> {
        begin_exec(&self.spec, script);
        let stream = compose(&self.prefix, script, stdin);
        let lost = |why: &str| {
            Error::Unavailable(format!(
                "connection to login host {:?} lost while a command ran: {why}; the command may or may not have run",
                self.spec
            ))
        };
        let timeout = || ran_too_long(&format!("login host {:?}", self.spec), self.command_timeout);
        // The fast path: a session asked of the master on its socket.
        if let Some(path) = &self.mux_path {
            match crate::mux::exec(path, REMOTE_COMMAND, &stream, self.command_timeout) {
                Ok(o) => return crate::script::finish(&self.spec, &self.user, o),
                Err(crate::mux::MuxError::Timeout) => return Err(timeout()),
                Err(crate::mux::MuxError::Lost(why)) => return Err(lost(&why)),
                Err(crate::mux::MuxError::Refused(why)) => {
                    return Err(lost(&format!("the ssh master refused a session: {why}")))
                }
                // Nothing was started: the ssh client below says why.
                Err(crate::mux::MuxError::NoMaster(why)) => tao_core::cli::note(
                    &crate::program_name(),
                    &format!(
                        "ssh master of {:?} not usable directly ({why}); using the ssh client",
                        self.spec
                    ),
                ),
            }
        }
        CLIENT_RUNS.fetch_add(1, Ordering::Relaxed);
        let mut cmd = Command::new("ssh");
        cmd.args(&self.args).args([
            "-o",
            &format!("ControlPath={}", self.control_path),
            "-o",
            "ControlMaster=no",
            "--",
            &self.dest,
            REMOTE_COMMAND,
        ]);
        match run(cmd, &stream, self.command_timeout) {
            Ok(o) if o.status == 255 && is_client_failure(&String::from_utf8_lossy(&o.stderr)) => {
                Err(lost(&o.stderr_line()))
            }
            Ok(o) => crate::script::finish(&self.spec, &self.user, o),
            Err(RunError::Timeout) => Err(timeout()),
            Err(RunError::Spawn(e)) => Err(lost(&format!("cannot start ssh: {e}"))),
        }
    }

    fn set_command_timeout(&mut self, limit: Duration) {
        self.command_timeout = limit;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_factor_gives_the_master_command() {
        let fix = master_command(
            &[
                "-i".into(),
                "/k/id".into(),
                "-l".into(),
                "alice".into(),
                "-p".into(),
                "2225".into(),
            ],
            "127.0.0.1",
            DEFAULT_CONTROL_PATH,
        );
        assert_eq!(
            fix,
            "ssh -M -o 'ControlPath=~/.ssh/tao-%C' -o ControlPersist=yes -fN -i /k/id -l alice -p 2225 127.0.0.1"
        );
        let e = classify_failure(
            "h:2225",
            "alice@127.0.0.1: Permission denied (keyboard-interactive).\r\n",
            &fix,
            Path::new("/kh"),
            ("127.0.0.1", 2225),
        );
        assert_eq!(e.code(), tao_core::exit::NOPERM);
        let m = e.to_string();
        assert!(m.contains(&fix) && !m.contains('\n'), "{m}");
        let e = classify_failure(
            "h",
            "u@h: Permission denied (publickey).",
            &fix,
            Path::new("/kh"),
            ("h", 22),
        );
        assert!(e.to_string().contains("SSH_KEY_PATH"), "{e}");
        let e = classify_failure(
            "h",
            "Host key verification failed.",
            &fix,
            Path::new("/kh"),
            ("h", 22),
        );
        assert!(e.to_string().contains("ssh-keyscan"), "{e}");
        let e = classify_failure(
            "h",
            "ssh: connect to host h port 22: Connection refused",
            &fix,
            Path::new("/kh"),
            ("h", 22),
        );
        assert_eq!(e.code(), tao_core::exit::UNAVAILABLE);
    }
}
