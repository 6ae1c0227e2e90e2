//! A passenger session on an OpenSSH ControlMaster, without starting an
//! `ssh` process: the multiplexing protocol of OpenSSH's PROTOCOL.mux
//! (version 4) spoken on the control socket, our pipes passed to the master
//! as the session's stdin, stdout and stderr (`SCM_RIGHTS`).
//!
//! Why: a mux client process (`ssh -S path host cmd`) costs its process
//! start and config parsing on every command (about 13 ms of a 17 ms
//! command on the test machine, 4x a libssh2 command); a request on the
//! socket costs a connect and three small messages. When the socket does
//! not answer the protocol, the caller falls back to the `ssh` process.
//!
//! Messages: `uint32 length, uint32 type, body` with SSH wire encoding
//! (uint32 big-endian, string = uint32 length + bytes; the flags of
//! MUX_C_NEW_SESSION are uint32, as OpenSSH's mux.c writes them).

use std::io::{IoSlice, Read, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use nix::sys::socket::{sendmsg, ControlMessage, MsgFlags};

use crate::output::Output;

const MUX_MSG_HELLO: u32 = 0x0000_0001;
const MUX_C_NEW_SESSION: u32 = 0x1000_0002;
const MUX_S_OK: u32 = 0x8000_0001;
const MUX_S_PERMISSION_DENIED: u32 = 0x8000_0002;
const MUX_S_FAILURE: u32 = 0x8000_0003;
const MUX_S_EXIT_MESSAGE: u32 = 0x8000_0004;
const MUX_S_SESSION_OPENED: u32 = 0x8000_0006;
const MUX_S_TTY_ALLOC_FAIL: u32 = 0x8000_0008;
const PROTOCOL_VERSION: u32 = 4;

/// Why a mux session gave no exit status.
#[derive(Debug)]
pub(crate) enum MuxError {
    /// Nothing usable listens on the socket (no master, another protocol):
    /// nothing was started; the caller may fall back to the ssh client.
    NoMaster(String),
    /// The master refused the session (permission denied, failure).
    Refused(String),
    /// The session started but ended without an exit status (the master
    /// or the connection died): the command may or may not have run.
    Lost(String),
    /// The time limit passed.
    Timeout,
}

fn put_u32(b: &mut Vec<u8>, v: u32) {
    b.extend_from_slice(&v.to_be_bytes());
}

fn put_str(b: &mut Vec<u8>, s: &[u8]) {
    put_u32(b, u32::try_from(s.len()).unwrap_or(u32::MAX));
    b.extend_from_slice(s);
}

fn send_packet(sock: &mut UnixStream, body: &[u8]) -> std::io::Result<()> {
    let mut p = Vec::with_capacity(body.len() + 4);
    put_u32(&mut p, u32::try_from(body.len()).unwrap_or(u32::MAX));
    p.extend_from_slice(body);
    sock.write_all(&p)
}

fn read_packet(sock: &mut UnixStream) -> std::io::Result<Vec<u8>> {
    let mut len = [0u8; 4];
    sock.read_exact(&mut len)?;
    let len = u32::from_be_bytes(len) as usize;
    if len > 256 * 1024 {
        return Err(std::io::Error::other("mux packet too long"));
    }
    let mut body = vec![0u8; len];
    sock.read_exact(&mut body)?;
    Ok(body)
}

fn get_u32(b: &[u8], at: usize) -> Option<u32> {
    b.get(at..at + 4)
        .map(|s| u32::from_be_bytes([s[0], s[1], s[2], s[3]]))
}

fn get_str(b: &[u8], at: usize) -> String {
    let n = get_u32(b, at).unwrap_or(0) as usize;
    String::from_utf8_lossy(b.get(at + 4..at + 4 + n).unwrap_or_default()).into_owned()
}

/// Pass one descriptor over the control socket (one byte of data, as
/// OpenSSH's `mm_send_fd` does).
fn send_fd(sock: &UnixStream, fd: &OwnedFd) -> std::io::Result<()> {
    let fds = [fd.as_raw_fd()];
    let cmsg = [ControlMessage::ScmRights(&fds)];
    let iov = [IoSlice::new(&[0u8])];
    sendmsg::<()>(sock.as_raw_fd(), &iov, &cmsg, MsgFlags::empty(), None)
        .map(|_| ())
        .map_err(std::io::Error::from)
}

/// Run `command` as a new session of the master listening on `path`, with
/// `stdin` written to it and both outputs captured, within `limit`.
///
/// Output: stdout, stderr, exit status. Errors: [`MuxError`].
pub(crate) fn exec(
    path: &Path,
    command: &str,
    stdin: &[u8],
    limit: Duration,
) -> Result<Output, MuxError> {
    let no_master = |e: &dyn std::fmt::Display| MuxError::NoMaster(e.to_string());
    let mut sock = UnixStream::connect(path).map_err(|e| no_master(&e))?;
    sock.set_read_timeout(Some(limit))
        .map_err(|e| no_master(&e))?;
    let mut hello = Vec::new();
    put_u32(&mut hello, MUX_MSG_HELLO);
    put_u32(&mut hello, PROTOCOL_VERSION);
    send_packet(&mut sock, &hello).map_err(|e| no_master(&e))?;
    let reply = read_packet(&mut sock).map_err(|e| no_master(&e))?;
    if get_u32(&reply, 0) != Some(MUX_MSG_HELLO) || get_u32(&reply, 4) != Some(PROTOCOL_VERSION) {
        return Err(MuxError::NoMaster(
            "the control socket does not speak mux protocol 4".into(),
        ));
    }
    let mut req = Vec::new();
    put_u32(&mut req, MUX_C_NEW_SESSION);
    put_u32(&mut req, 1); // request id
    put_str(&mut req, b""); // reserved
    for flag in [0u32, 0, 0, 0] {
        put_u32(&mut req, flag); // tty, X11, agent, subsystem
    }
    put_u32(&mut req, 0xffff_ffff); // no escape character
    put_str(&mut req, b""); // terminal type
    put_str(&mut req, command.as_bytes());
    send_packet(&mut sock, &req).map_err(|e| no_master(&e))?;
    let pipe = || nix::unistd::pipe().map_err(|e| no_master(&e));
    let (in_r, in_w) = pipe()?;
    let (out_r, out_w) = pipe()?;
    let (err_r, err_w) = pipe()?;
    for fd in [&in_r, &out_w, &err_w] {
        send_fd(&sock, fd).map_err(|e| no_master(&e))?;
    }
    // The master holds its own copies now.
    drop((in_r, out_w, err_w));

    let mut w = std::fs::File::from(in_w);
    let data = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = w.write_all(&data);
    });
    let reader = |fd: OwnedFd| {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            let _ = std::fs::File::from(fd).read_to_end(&mut v);
            v
        })
    };
    let (outs, errs) = (reader(out_r), reader(err_r));
    let (tx, rx) = mpsc::channel();
    let mut control = sock.try_clone().map_err(|e| no_master(&e))?;
    std::thread::spawn(move || {
        let status = loop {
            let p = match read_packet(&mut control) {
                Ok(p) => p,
                Err(e) => {
                    break Err(MuxError::Lost(format!(
                        "the ssh master closed the session: {e}"
                    )))
                }
            };
            match get_u32(&p, 0) {
                Some(MUX_S_EXIT_MESSAGE) => break Ok(get_u32(&p, 8).unwrap_or(255)),
                Some(MUX_S_SESSION_OPENED | MUX_S_OK | MUX_S_TTY_ALLOC_FAIL) => {}
                Some(MUX_S_PERMISSION_DENIED | MUX_S_FAILURE) => {
                    break Err(MuxError::Refused(get_str(&p, 8)))
                }
                other => break Err(MuxError::Lost(format!("unexpected mux message {other:?}"))),
            }
        };
        let _ = tx.send(status);
    });
    let status = match rx.recv_timeout(limit) {
        Ok(s) => s,
        Err(_) => {
            // Closing the control connection makes the master end the session.
            let _ = sock.shutdown(std::net::Shutdown::Both);
            Err(MuxError::Timeout)
        }
    };
    if status.is_err() {
        let _ = sock.shutdown(std::net::Shutdown::Both);
    }
    let stdout = outs.join().unwrap_or_default();
    let stderr = errs.join().unwrap_or_default();
    let _ = writer.join();
    let status = status?;
    Ok(Output {
        stdout,
        stderr,
        status: i32::try_from(status).unwrap_or(255),
    })
}
