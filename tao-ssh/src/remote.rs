//! One authenticated SSH session to one login host, and remote commands on
//! it: one channel per command, never a pty, stdout and stderr kept apart,
//! optional stdin written over the channel (the only way secrets travel).
//!
//! Connecting: TCP with a timeout, `TCP_NODELAY` set *before* the
//! handshake (Nagle's algorithm against delayed ACKs costs about 40 ms per
//! round trip on an open session; see docs/design.md), TCP and SSH
//! keepalives, host key checked, then authentication. [`Remote::connect`]
//! walks the login hosts in order and moves on from one that refuses, times
//! out or fails the handshake, saying why on stderr.
//!
//! Running: the channel is pumped in non-blocking mode (write stdin, read
//! stdout, read stderr, `poll(2)` on the socket when nothing moves), so a
//! command that writes much to stderr while we read stdout, or that answers
//! before it has read all of its stdin, cannot deadlock the two windows.

use std::io::{ErrorKind, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use ssh2::{BlockDirections, Channel, ErrorCode, MethodType, Session};
use tao_core::{Error, Result};

use crate::options::{SshOptions, Target};
use crate::output::{begin_exec, ran_too_long, Output, DEFAULT_COMMAND_TIMEOUT, HANDSHAKES};
use crate::{auth, hostkey};

impl crate::transport::Transport for Remote {
    fn login_host(&self) -> &str {
        &self.target.spec
    }

    fn user(&self) -> &str {
        &self.target.user
    }

    fn kind(&self) -> crate::transport::TransportKind {
        crate::transport::TransportKind::Libssh2
    }

    fn exec(&self, script: &str, stdin: Option<&[u8]>) -> Result<Output> {
        Remote::exec(self, script, stdin)
    }

    fn exec_watched(
        &self,
        script: &str,
        stdin: Option<&[u8]>,
        idle: &mut dyn FnMut(&[u8]),
    ) -> Result<Output> {
        Remote::exec_watched(self, script, stdin, idle)
    }

    fn set_command_timeout(&mut self, limit: Duration) {
        Remote::set_command_timeout(self, limit);
    }
}

/// A session as the jump host of a ProxyJump hop (its pump thread owns it).
impl crate::link::Hop for Remote {
    fn session(&self) -> &Session {
        &self.sess
    }

    fn link_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.link.fd()
    }
}

/// Interval of SSH keepalive messages while a command runs, in seconds.
/// They ask for a reply (`want_reply`), so a peer that died without closing
/// the connection leaves data unacknowledged, and [`TCP_USER_TIMEOUT`] then
/// fails the socket: a dead peer is noticed within
/// [`DEAD_PEER_BOUND`] while a command runs.
const KEEPALIVE_SECS: u32 = 15;

/// `TCP_USER_TIMEOUT` (tcp(7)) on the login-host socket: how long sent data
/// may stay unacknowledged before the connection is dropped.
const TCP_USER_TIMEOUT: Duration = Duration::from_secs(30);

/// Upper bound on noticing a dead peer while a command runs: one keepalive
/// interval plus [`TCP_USER_TIMEOUT`] (45 s).
pub const DEAD_PEER_BOUND: Duration = Duration::from_secs(KEEPALIVE_SECS as u64 + 30);

/// libssh2's "would block" return code (`LIBSSH2_ERROR_EAGAIN`).
const EAGAIN: i32 = -37;

/// An authenticated session to one login host.
pub struct Remote {
    sess: Session,
    link: crate::link::Link,
    target: Target,
    prefix: String,
    command_timeout: Duration,
}

impl std::fmt::Debug for Remote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Remote")
            .field("target", &self.target)
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

fn signal_status(name: &str) -> i32 {
    let n = match name.trim_start_matches("SIG") {
        "HUP" => 1,
        "INT" => 2,
        "QUIT" => 3,
        "ILL" => 4,
        "ABRT" => 6,
        "FPE" => 8,
        "KILL" => 9,
        "USR1" => 10,
        "SEGV" => 11,
        "USR2" => 12,
        "PIPE" => 13,
        "ALRM" => 14,
        "TERM" => 15,
        _ => return 255,
    };
    128 + n
}

impl Remote {
    /// Connect to the first login host of `opts.hosts` that answers. A host
    /// that refuses, times out, cannot be resolved or fails the handshake is
    /// skipped with a warning on stderr naming it and the reason.
    ///
    /// Errors: [`Error::Unavailable`] (exit 69) when no host answered,
    /// listing each host's reason; [`Error::NoPerm`] (exit 77) and
    /// [`Error::Config`] (exit 78) at once, without trying further hosts:
    /// a host-key or login problem is the user's to fix, not a reason to
    /// send the same key to another host. (The failover rule is
    /// `SshOptions::first_host_that_answers`, shared with the openssh
    /// transport.)
    pub fn connect(opts: &SshOptions) -> Result<Remote> {
        opts.first_host_that_answers(|host| Self::connect_host(opts, host))
    }

    /// Connect to one login host spec (`host`, `host:port` or an ssh config
    /// alias), as recorded in `slurm.login_host`.
    ///
    /// Errors: [`Error::Unavailable`] when the host cannot be resolved,
    /// refuses, times out or fails the handshake; [`Error::NoPerm`] for an
    /// unknown or changed host key, an unprotected private key or a failed
    /// login (with the setup steps); [`Error::Config`] for bad options.
    pub fn connect_host(opts: &SshOptions, host: &str) -> Result<Remote> {
        let target = opts.resolve(host)?;
        Self::connect_target(opts, target, 0)
    }

    /// The stream to `target`: TCP, its ProxyCommand, or a direct-tcpip
    /// channel through its last ProxyJump host (reached the same way, with
    /// the hops before it as its own ProxyJump).
    fn open_link(opts: &SshOptions, target: &Target, depth: usize) -> Result<crate::link::Link> {
        use crate::options::Proxy;
        match &target.proxy {
            Proxy::Direct => dial(target).map(crate::link::Link::Tcp),
            Proxy::Command(cmd) => crate::link::Link::command(cmd, target),
            Proxy::Jump(hops) => {
                if depth >= 8 {
                    return Err(Error::Config(format!(
                        "login host {:?}: more than 8 ProxyJump hops (a loop in the ssh config?); fix ProxyJump",
                        target.spec
                    )));
                }
                let (last, before) = hops.split_last().expect("a Jump has hops");
                let mut jt = opts.resolve_hop(last)?;
                if !before.is_empty() {
                    jt.proxy = Proxy::Jump(before.to_vec());
                }
                let via = |e: Error| -> Error {
                    let say = |m: String| {
                        format!(
                            "via ProxyJump host {last:?} of login host {:?}: {m}",
                            target.spec
                        )
                    };
                    match e {
                        Error::Unavailable(m) => Error::Unavailable(say(m)),
                        Error::NoPerm(m) => Error::NoPerm(say(m)),
                        Error::Config(m) => Error::Config(say(m)),
                        other => other,
                    }
                };
                let jump = Self::connect_target(opts, jt, depth + 1).map_err(via)?;
                jump.sess.set_blocking(true);
                jump.sess.set_timeout(duration_ms(target.connect_timeout));
                let ch = jump
                    .sess
                    .channel_direct_tcpip(&target.host, target.port, None)
                    .map_err(|e| {
                        Error::Unavailable(format!(
                            "login host {:?}: the ProxyJump host {last:?} could not connect to {}:{}: {}; check that the login node is up",
                            target.spec, target.host, target.port, e.message()
                        ))
                    })?;
                crate::link::Link::jump(jump, ch)
            }
        }
    }

    fn connect_target(opts: &SshOptions, target: Target, depth: usize) -> Result<Remote> {
        let link = Self::open_link(opts, &target, depth)?;
        let mut sess =
            Session::new().map_err(|e| Error::Internal(format!("libssh2 session: {e}")))?;
        sess.set_tcp_stream(link.session_fd()?);
        sess.set_timeout(duration_ms(target.connect_timeout));
        let system: Vec<&std::path::Path> = opts
            .system_known_hosts
            .iter()
            .map(|p| p.as_path())
            .collect();
        let mut files = vec![opts.known_hosts.as_path()];
        files.extend_from_slice(&system);
        if let Ok(supported) = sess.supported_algs(MethodType::HostKey) {
            let prefs = hostkey::preferences(&sess, &files, &target.host, target.port, &supported);
            if !prefs.is_empty() {
                let _ = sess.method_pref(MethodType::HostKey, &prefs);
            }
        }
        HANDSHAKES.fetch_add(1, Ordering::Relaxed);
        sess.handshake().map_err(|e| {
            Error::Unavailable(format!(
                "login host {:?}: ssh handshake with {}:{} failed: {}",
                target.spec,
                target.host,
                target.port,
                e.message()
            ))
        })?;
        hostkey::verify(
            &sess,
            &target.host,
            target.port,
            &opts.known_hosts,
            &system,
            opts.accept_new_host_key,
        )?;
        auth::authenticate(&sess, &target, opts.key_path.as_deref(), &opts.known_hosts)?;
        sess.set_keepalive(true, KEEPALIVE_SECS);
        tao_core::cli::note(
            &crate::program_name(),
            &format!(
                "connected to {}@{}:{} (login host {:?}, host key verified)",
                target.user, target.host, target.port, target.spec
            ),
        );
        Ok(Remote {
            sess,
            link,
            target,
            prefix: opts.remote_prefix.trim().to_string(),
            command_timeout: DEFAULT_COMMAND_TIMEOUT,
        })
    }

    /// The login host spec this session is connected to, exactly as given
    /// in `SLURM_HOSTNAME` (so [`Remote::connect_host`] can reach it again).
    pub fn login_host(&self) -> &str {
        &self.target.spec
    }

    /// The remote user name.
    pub fn user(&self) -> &str {
        &self.target.user
    }

    /// The resolved target (address, port, user).
    pub fn target(&self) -> &Target {
        &self.target
    }

    /// Change the per-command time limit (default [`DEFAULT_COMMAND_TIMEOUT`]).
    pub fn set_command_timeout(&mut self, limit: Duration) {
        self.command_timeout = limit;
    }

    /// Run `script` (POSIX sh) with the constant remote command `sh -s`
    /// ([`crate::script`]): the site's remote prefix, the script and its
    /// stdin all travel on the channel's stdin, so neither their size nor
    /// the remote user's login shell matters. Never a pty. `stdin`, when
    /// given, is the script's standard input; otherwise it reads nothing.
    ///
    /// Callers build `script` with [`tao_core::shell::quote`] for every
    /// value; secrets go through `stdin`, never into `script`.
    ///
    /// Output: the script's stdout, stderr and exit status; a non-zero
    /// status is not an error here.
    ///
    /// Errors: [`Error::Unavailable`] (exit 69) when the connection is lost
    /// (the command may or may not have run); [`Error::TempFail`] (exit 75)
    /// when the command outlives the time limit.
    pub fn exec(&self, script: &str, stdin: Option<&[u8]>) -> Result<Output> {
        self.exec_watched(script, stdin, &mut |_| {})
    }

    /// [`Remote::exec`], showing the script's stdout read so far (without
    /// [`crate::script::STARTED`]) to `idle` each time the command runs
    /// and nothing moves ([`crate::Transport::exec_watched`]).
    ///
    /// Output and errors: as [`Remote::exec`].
    pub fn exec_watched(
        &self,
        script: &str,
        stdin: Option<&[u8]>,
        idle: &mut dyn FnMut(&[u8]),
    ) -> Result<Output> {
        begin_exec(&self.target.spec, script);
        let stream = crate::script::compose(&self.prefix, script, stdin);
        let out = self.exec_command(crate::script::REMOTE_COMMAND, &stream, idle)?;
        crate::script::finish(&self.target.spec, &self.target.user, out)
    }

    /// One exec request of `full` (a constant command) with `input` written
    /// to its stdin, then closed; `idle` as in [`Remote::exec_watched`].
    fn exec_command(
        &self,
        full: &str,
        input: &[u8],
        idle: &mut dyn FnMut(&[u8]),
    ) -> Result<Output> {
        let lost = |what: &str, e: &dyn std::fmt::Display| {
            Error::Unavailable(format!(
                "connection to login host {:?} lost while {what}: {e}; the command may or may not have run",
                self.target.spec
            ))
        };
        self.sess.set_blocking(true);
        self.sess.set_timeout(duration_ms(
            self.target.connect_timeout.max(Duration::from_secs(30)),
        ));
        let mut ch = self
            .sess
            .channel_session()
            .map_err(|e| lost("opening a channel", &e))?;
        ch.exec(full).map_err(|e| lost("starting a command", &e))?;
        self.sess.set_blocking(false);
        let pumped = self.pump(&mut ch, input, false, idle);
        self.sess.set_blocking(true);
        let (stdout, stderr) = pumped?;
        ch.close().map_err(|e| lost("closing the channel", &e))?;
        ch.wait_close()
            .map_err(|e| lost("closing the channel", &e))?;
        let mut status = ch
            .exit_status()
            .map_err(|e| lost("reading the exit status", &e))?;
        if let Ok(sig) = ch.exit_signal() {
            if let Some(name) = sig.exit_signal {
                status = signal_status(&name);
            }
        }
        Ok(Output {
            stdout,
            stderr,
            status,
        })
    }

    /// Drive one channel to EOF in non-blocking mode.
    fn pump(
        &self,
        ch: &mut Channel,
        input: &[u8],
        eof_sent: bool,
        idle: &mut dyn FnMut(&[u8]),
    ) -> Result<(Vec<u8>, Vec<u8>)> {
        let lost = |e: &dyn std::fmt::Display| {
            Error::Unavailable(format!(
                "connection to login host {:?} lost while a command ran: {e}; the command may or may not have run",
                self.target.spec
            ))
        };
        let deadline = Instant::now() + self.command_timeout;
        let mut eof_sent = eof_sent;
        let mut written = 0usize;
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let mut buf = vec![0u8; 32 * 1024];
        let (mut out_done, mut err_done) = (false, false);
        // How long to wait on the socket while nothing moves: from 1 ms,
        // doubling to IDLE_WAIT_MAX. Reading one stream can pull the other
        // stream's data or the channel's EOF into libssh2's buffers, after
        // which the socket stays quiet: a wait on it alone would last until
        // the next keepalive (seen: 29 s). The cap bounds that to ms.
        let mut idle_wait = Duration::from_millis(1);
        loop {
            let mut progress = false;
            if !eof_sent {
                if written < input.len() {
                    let end = input.len().min(written + 32 * 1024);
                    match ch.write(&input[written..end]) {
                        Ok(n) => {
                            written += n;
                            progress |= n > 0;
                        }
                        Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                        Err(e) => return Err(lost(&e)),
                    }
                }
                if written == input.len() {
                    match ch.send_eof() {
                        Ok(()) => {
                            eof_sent = true;
                            progress = true;
                        }
                        Err(e) if e.code() == ErrorCode::Session(EAGAIN) => {}
                        Err(e) => return Err(lost(&e)),
                    }
                }
            }
            for (stream_id, sink, done) in
                [(0, &mut out, &mut out_done), (1, &mut err, &mut err_done)]
            {
                if *done {
                    continue;
                }
                match ch.stream(stream_id).read(&mut buf) {
                    Ok(0) => *done = ch.eof(),
                    Ok(n) => {
                        sink.extend_from_slice(&buf[..n]);
                        progress = true;
                    }
                    Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                    Err(e) => return Err(lost(&e)),
                }
            }
            if out_done && err_done {
                return Ok((out, err));
            }
            if progress {
                idle_wait = Duration::from_millis(1);
                continue;
            }
            if let Some(so_far) = out.strip_prefix(crate::script::STARTED) {
                idle(so_far);
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(ran_too_long(
                    &format!("login host {:?}", self.target.spec),
                    self.command_timeout,
                ));
            }
            let next_keepalive = match self.sess.keepalive_send() {
                Ok(secs) => Duration::from_secs(u64::from(secs.max(1))),
                Err(e) if e.code() == ErrorCode::Session(EAGAIN) => Duration::from_millis(50),
                Err(e) => return Err(lost(&e)),
            };
            let wait = (deadline - now).min(next_keepalive).min(idle_wait);
            idle_wait = (idle_wait * 2).min(IDLE_WAIT_MAX);
            self.wait_socket(wait).map_err(|e| lost(&e))?;
        }
    }

    /// Wait until the socket can move in the direction libssh2 is blocked
    /// on, or `wait` passes.
    fn wait_socket(&self, wait: Duration) -> std::io::Result<()> {
        let flags = match self.sess.block_directions() {
            BlockDirections::Inbound => PollFlags::POLLIN,
            BlockDirections::Outbound => PollFlags::POLLOUT,
            BlockDirections::Both => PollFlags::POLLIN | PollFlags::POLLOUT,
            // Nothing reported: data may already sit in libssh2's buffers
            // (another stream's packets); look again soon.
            BlockDirections::None => {
                return poll_once(
                    self.link.fd(),
                    PollFlags::POLLIN,
                    wait.min(Duration::from_millis(5)),
                )
            }
        };
        poll_once(self.link.fd(), flags, wait)
    }
}

/// The longest single wait on the socket while a command's channel is idle
/// (see `pump`): a missed wake-up costs at most this long.
const IDLE_WAIT_MAX: Duration = Duration::from_millis(100);

fn poll_once(
    fd: std::os::fd::BorrowedFd<'_>,
    flags: PollFlags,
    wait: Duration,
) -> std::io::Result<()> {
    let mut fds = [PollFd::new(fd, flags)];
    let timeout = PollTimeout::try_from(wait).unwrap_or(PollTimeout::MAX);
    match poll(&mut fds, timeout) {
        Ok(_) | Err(nix::errno::Errno::EINTR) => Ok(()),
        Err(e) => Err(std::io::Error::from(e)),
    }
}

fn duration_ms(d: Duration) -> u32 {
    u32::try_from(d.as_millis()).unwrap_or(u32::MAX).max(1)
}

/// Open the TCP connection: each resolved address in turn, with the
/// target's timeout; `TCP_NODELAY` and `SO_KEEPALIVE` set before any byte
/// of the handshake.
fn dial(target: &Target) -> Result<TcpStream> {
    let unavailable = |why: String| {
        Error::Unavailable(format!(
            "login host {:?} ({}:{}): {why}",
            target.spec, target.host, target.port
        ))
    };
    let addrs: Vec<_> = (target.host.as_str(), target.port)
        .to_socket_addrs()
        .map_err(|e| unavailable(format!("cannot resolve the name: {e}")))?
        .collect();
    let mut last = String::from("no address");
    for addr in addrs {
        match TcpStream::connect_timeout(&addr, target.connect_timeout) {
            Ok(sock) => {
                sock.set_nodelay(true)
                    .map_err(|e| Error::io("setting TCP_NODELAY", e))?;
                let _ = nix::sys::socket::setsockopt(
                    &sock,
                    nix::sys::socket::sockopt::KeepAlive,
                    &true,
                );
                let _ = nix::sys::socket::setsockopt(
                    &sock,
                    nix::sys::socket::sockopt::TcpUserTimeout,
                    &u32::try_from(TCP_USER_TIMEOUT.as_millis()).unwrap_or(u32::MAX),
                );
                return Ok(sock);
            }
            Err(e) if e.kind() == ErrorKind::TimedOut || e.kind() == ErrorKind::WouldBlock => {
                last = format!(
                    "connection timed out after {} s",
                    target.connect_timeout.as_secs_f32()
                );
            }
            Err(e) if e.kind() == ErrorKind::ConnectionRefused => {
                last = "connection refused".to_string();
            }
            Err(e) => last = e.to_string(),
        }
    }
    Err(unavailable(last))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signals_map_like_a_shell() {
        assert_eq!(signal_status("KILL"), 137);
        assert_eq!(signal_status("SIGTERM"), 143);
        assert_eq!(signal_status("WEIRD"), 255);
    }

    #[test]
    fn refused_port_is_unavailable() {
        // Bind then drop a listener: its port is (very likely) closed now.
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let opts = SshOptions {
            user: "u".into(),
            hosts: vec![format!("127.0.0.1:{port}"), format!("127.0.0.1:{port}")],
            key_path: None,
            known_hosts: "/dev/null".into(),
            ssh_config: None,
            accept_new_host_key: false,
            connect_timeout: Duration::from_secs(2),
            ..SshOptions::default()
        };
        let e = Remote::connect(&opts).unwrap_err();
        assert_eq!(e.code(), tao_core::exit::UNAVAILABLE);
        assert!(e.to_string().contains("connection refused"), "{e}");
    }
}
