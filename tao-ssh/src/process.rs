//! Running a local process with bytes on its stdin and both outputs
//! captured, within a time limit: the `ssh` client of the openssh
//! transport and the `sh -s` of the local transport.
//!
//! stdin is written by one thread and stderr read by another while this
//! thread reads stdout, so a child that writes much before reading its
//! input cannot deadlock the pipes.

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use crate::output::Output;

/// Why a run did not give an exit status.
#[derive(Debug)]
pub(crate) enum RunError {
    /// The program could not be started (not installed, not executable).
    Spawn(std::io::Error),
    /// The time limit passed; the child was killed.
    Timeout,
}

/// Run `cmd` with `stdin` written to its standard input, capturing stdout
/// and stderr, killing it after `limit`.
///
/// Output: the [`Output`] (a child killed by a signal reports 128 + the
/// signal number, as a shell does). Errors: [`RunError`].
pub(crate) fn run(mut cmd: Command, stdin: &[u8], limit: Duration) -> Result<Output, RunError> {
    use std::os::unix::process::CommandExt;
    // Its own process group: a timeout kills the child and everything it
    // started (a `sleep` holding the stdout pipe would outlive a lone kill).
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = cmd.spawn().map_err(RunError::Spawn)?;
    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap_or(i32::MAX));
    let mut w = child.stdin.take().expect("piped");
    let data = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        // A child that exits without reading all of it gives EPIPE: fine.
        let _ = w.write_all(&data);
    });
    let mut e = child.stderr.take().expect("piped");
    let errs = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = e.read_to_end(&mut v);
        v
    });
    let mut o = child.stdout.take().expect("piped");
    let (tx, rx) = mpsc::channel();
    let waiter = std::thread::spawn(move || {
        let mut out = Vec::new();
        let _ = o.read_to_end(&mut out);
        let status = child.wait();
        let _ = tx.send(());
        (out, status)
    });
    let timed_out = match rx.recv_timeout(limit) {
        Ok(()) => false,
        Err(_) => {
            let _ = nix::sys::signal::killpg(pid, nix::sys::signal::Signal::SIGKILL);
            true
        }
    };
    let (stdout, status) = waiter.join().expect("waiter thread");
    let stderr = errs.join().expect("stderr thread");
    let _ = writer.join();
    if timed_out {
        return Err(RunError::Timeout);
    }
    let status = status.map_err(RunError::Spawn)?;
    use std::os::unix::process::ExitStatusExt;
    let code = status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(255);
    Ok(Output {
        stdout,
        stderr,
        status: code,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stdin_outputs_status_and_timeout() {
        let mut c = Command::new("sh");
        c.args(["-c", "cat; echo err >&2; exit 4"]);
        let big = vec![b'z'; 1 << 20];
        let o = run(c, &big, Duration::from_secs(20)).unwrap();
        assert_eq!(
            (o.stdout.len(), o.stderr.as_slice(), o.status),
            (1 << 20, &b"err\n"[..], 4)
        );
        let mut c = Command::new("sh");
        c.args(["-c", "sleep 30"]);
        let t = std::time::Instant::now();
        assert!(matches!(
            run(c, b"", Duration::from_millis(300)),
            Err(RunError::Timeout)
        ));
        assert!(t.elapsed() < Duration::from_secs(10));
        assert!(matches!(
            run(Command::new("/nonexistent/x"), b"", Duration::from_secs(1)),
            Err(RunError::Spawn(_))
        ));
    }
}
