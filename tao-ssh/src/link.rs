//! The byte stream under a libssh2 session: a TCP connection of our own,
//! the stdin/stdout of a `ProxyCommand`, or a direct-tcpip channel opened
//! on a `ProxyJump` host's session (ssh_config(5)).
//!
//! libssh2 reads and writes a file descriptor, so a proxied stream is one
//! end of a Unix socket pair: the other end is the ProxyCommand's stdin and
//! stdout, or is pumped to and from the jump host's channel by a thread
//! that owns the jump session (one thread per hop; it ends when either side
//! closes).

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use ssh2::{BlockDirections, Channel};
use tao_core::{Error, Result};

use crate::options::Target;

/// The stream of one session, and what keeps a proxied one alive.
pub(crate) enum Link {
    /// Our own TCP connection.
    Tcp(TcpStream),
    /// A ProxyCommand's end of a socket pair; the child is killed on drop.
    Command(UnixStream, Child),
    /// A ProxyJump channel's end of a socket pair, pumped by a thread.
    Jump(UnixStream),
}

impl std::fmt::Debug for Link {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Link::Tcp(_) => "Link::Tcp",
            Link::Command(..) => "Link::Command",
            Link::Jump(_) => "Link::Jump",
        })
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        if let Link::Command(_, child) = self {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Link {
    /// The descriptor libssh2 reads and writes (for `poll(2)`).
    pub(crate) fn fd(&self) -> BorrowedFd<'_> {
        match self {
            Link::Tcp(s) => s.as_fd(),
            Link::Command(s, _) | Link::Jump(s) => s.as_fd(),
        }
    }

    /// A second descriptor of the same stream, handed to libssh2.
    pub(crate) fn session_fd(&self) -> Result<OwnedFd> {
        self.fd()
            .try_clone_to_owned()
            .map_err(|e| Error::io("duplicating the ssh socket", e))
    }

    /// Start `ProxyCommand` `cmd` for `target` (`%h` host, `%p` port, `%r`
    /// user, `%%` a percent sign; run with `sh -c`, stderr inherited).
    ///
    /// Errors: [`Error::Unavailable`] when it cannot be started.
    pub(crate) fn command(cmd: &str, target: &Target) -> Result<Link> {
        let expanded = expand_tokens(cmd, target);
        let (ours, theirs) =
            UnixStream::pair().map_err(|e| Error::io("creating a socket pair", e))?;
        let theirs2 = theirs
            .try_clone()
            .map_err(|e| Error::io("creating a socket pair", e))?;
        let child = Command::new("sh")
            .arg("-c")
            .arg(&expanded)
            .stdin(Stdio::from(OwnedFd::from(theirs)))
            .stdout(Stdio::from(OwnedFd::from(theirs2)))
            .spawn()
            .map_err(|e| {
                Error::Unavailable(format!(
                    "login host {:?}: ProxyCommand {expanded:?} could not start: {e}",
                    target.spec
                ))
            })?;
        Ok(Link::Command(ours, child))
    }

    /// Pump `ch` (a direct-tcpip channel of the jump session `jump`) to and
    /// from a socket pair in a thread; the returned link is the other end.
    ///
    /// Errors: [`Error::Io`] when the pair cannot be made.
    pub(crate) fn jump(jump: impl Hop, ch: Channel) -> Result<Link> {
        let (ours, theirs) =
            UnixStream::pair().map_err(|e| Error::io("creating a socket pair", e))?;
        std::thread::Builder::new()
            .name("tao-ssh-jump".into())
            .spawn(move || pump(jump, ch, theirs))
            .map_err(|e| Error::io("starting the ProxyJump thread", e))?;
        Ok(Link::Jump(ours))
    }
}

/// The jump host's side of a ProxyJump hop: its session and the descriptor
/// under it, owned by the pump thread for as long as the hop lives
/// (implemented by [`crate::remote::Remote`]; a trait so this file needs
/// nothing of the session code that uses it).
pub(crate) trait Hop: Send + 'static {
    /// The libssh2 session of the jump host.
    fn session(&self) -> &ssh2::Session;
    /// The descriptor under that session (for `poll(2)`).
    fn link_fd(&self) -> BorrowedFd<'_>;
}

/// `%h`, `%p`, `%r`, `%%` of ssh_config(5) TOKENS, for ProxyCommand.
fn expand_tokens(cmd: &str, t: &Target) -> String {
    let mut out = String::new();
    let mut it = cmd.chars();
    while let Some(c) = it.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match it.next() {
            Some('h') => out.push_str(&t.host),
            Some('p') => out.push_str(&t.port.to_string()),
            Some('r') => out.push_str(&t.user),
            Some('n') => out.push_str(&t.spec),
            Some('%') => out.push('%'),
            Some(o) => {
                out.push('%');
                out.push(o);
            }
            None => out.push('%'),
        }
    }
    out
}

/// Move bytes between the jump channel and our socket end until both
/// directions are closed or either side fails; then close both.
fn pump(jump: impl Hop, mut ch: Channel, mut sock: UnixStream) {
    let sess = jump.session();
    sess.set_blocking(false);
    let _ = sock.set_nonblocking(true);
    let mut up: Vec<u8> = Vec::new(); // from our socket, to the channel
    let mut down: Vec<u8> = Vec::new(); // from the channel, to our socket
    let mut buf = vec![0u8; 32 * 1024];
    let (mut sock_eof, mut ch_eof, mut eof_sent) = (false, false, false);
    loop {
        let mut progress = false;
        if up.is_empty() && !sock_eof {
            match read_some(&mut sock, &mut buf, &mut up) {
                Some(Read0::Data) => progress = true,
                Some(Read0::End) => {
                    sock_eof = true;
                    progress = true;
                }
                Some(Read0::Blocked) => {}
                None => break,
            }
        }
        match write_some(&mut ch, &mut up) {
            Some(moved) => progress |= moved,
            None => break,
        }
        if sock_eof && up.is_empty() && !eof_sent {
            match ch.send_eof() {
                Ok(()) => eof_sent = true,
                Err(e) if e.code() == ssh2::ErrorCode::Session(-37) => {}
                Err(_) => break,
            }
        }
        if down.is_empty() && !ch_eof {
            match read_some(&mut ch, &mut buf, &mut down) {
                Some(Read0::Data) => progress = true,
                // A channel reads 0 bytes also when nothing has come yet.
                Some(Read0::End) if ch.eof() => {
                    ch_eof = true;
                    let _ = sock.shutdown(std::net::Shutdown::Write);
                    progress = true;
                }
                Some(Read0::End | Read0::Blocked) => {}
                None => break,
            }
        }
        match write_some(&mut sock, &mut down) {
            Some(moved) => progress |= moved,
            None => break,
        }
        // Our end closed (the session over it is gone) and everything it
        // sent has been passed on: nothing more can be asked for.
        if sock_eof && up.is_empty() && eof_sent {
            break;
        }
        if progress {
            continue;
        }
        if sess.keepalive_send().is_err() {
            break;
        }
        let mut jf = PollFlags::POLLIN;
        if sess.block_directions() == BlockDirections::Outbound
            || sess.block_directions() == BlockDirections::Both
        {
            jf |= PollFlags::POLLOUT;
        }
        let mut sf = PollFlags::empty();
        if !sock_eof && up.is_empty() {
            sf |= PollFlags::POLLIN;
        }
        if !down.is_empty() {
            sf |= PollFlags::POLLOUT;
        }
        let mut fds = [
            PollFd::new(jump.link_fd(), jf),
            PollFd::new(sock.as_fd(), sf),
        ];
        // Capped: data may already sit in libssh2's buffers.
        let _ = poll(
            &mut fds,
            PollTimeout::try_from(Duration::from_millis(20)).unwrap_or(PollTimeout::MAX),
        );
    }
    let _ = sock.shutdown(std::net::Shutdown::Both);
    sess.set_blocking(true);
    let _ = ch.close();
}

/// What one non-blocking read of the pump did.
enum Read0 {
    /// Bytes were appended to the pending buffer.
    Data,
    /// The read returned 0 bytes (end of stream, or for a channel maybe
    /// nothing yet).
    End,
    /// Nothing to read now.
    Blocked,
}

/// Read once from `from` into `buf`, appending what came to `pending`.
/// `None` when the read failed (the pump ends).
fn read_some(from: &mut impl Read, buf: &mut [u8], pending: &mut Vec<u8>) -> Option<Read0> {
    match from.read(buf) {
        Ok(0) => Some(Read0::End),
        Ok(n) => {
            pending.extend_from_slice(&buf[..n]);
            Some(Read0::Data)
        }
        Err(e) if e.kind() == ErrorKind::WouldBlock => Some(Read0::Blocked),
        Err(_) => None,
    }
}

/// Write once what `pending` holds to `to`, dropping what was written.
/// `Some(true)` when bytes moved, `Some(false)` when there was nothing to
/// write or the write would block, `None` when it failed (the pump ends).
fn write_some(to: &mut impl Write, pending: &mut Vec<u8>) -> Option<bool> {
    if pending.is_empty() {
        return Some(false);
    }
    match to.write(pending) {
        Ok(n) => {
            pending.drain(..n);
            Some(n > 0)
        }
        Err(e) if e.kind() == ErrorKind::WouldBlock => Some(false),
        Err(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proxy_command_tokens() {
        let t = Target {
            spec: "alias".into(),
            host: "10.0.0.2".into(),
            port: 2224,
            user: "u".into(),
            identity_files: vec![],
            connect_timeout: Duration::from_secs(1),
            proxy: Default::default(),
        };
        assert_eq!(
            expand_tokens("ssh -W %h:%p -l %r %n 100%% %x", &t),
            "ssh -W 10.0.0.2:2224 -l u alias 100% %x"
        );
    }
}
