//! Running a tool as a user does: its binary with a cleared environment,
//! input on stdin, job lines on stdout, a documented exit status.

use std::io::Write;
use std::process::{Child, ChildStdin, Command, Output, Stdio};
use std::thread::JoinHandle;

use serde_json::Value;

/// The workspace binary `bin` (e.g. `tao-classify`) as an
/// [`assert_cmd::Command`] with a cleared environment (each test sets what
/// it needs).
///
/// Panics when the binary was not built.
pub fn cmd(bin: &str) -> assert_cmd::Command {
    let mut c = assert_cmd::Command::cargo_bin(bin).unwrap();
    c.env_clear();
    c
}

/// Spawn `cmd` with stdin, stdout and stderr piped. Output: the child and
/// its stdin (taken, so the caller writes and closes it).
pub fn spawn_piped(cmd: &mut Command) -> (Child, ChildStdin) {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdin = child.stdin.take().unwrap();
    (child, stdin)
}

/// A child being fed its input from another thread ([`feed`]).
pub struct Fed {
    child: Child,
    writer: JoinHandle<std::io::Result<()>>,
}

/// Spawn `cmd` ([`spawn_piped`]) and write `input` to its stdin from
/// another thread, then close it: a child that writes before it has read
/// all its input cannot deadlock against the test. Several may run at
/// once; [`Fed::wait`] collects each.
pub fn feed(cmd: &mut Command, input: impl Into<Vec<u8>>) -> Fed {
    let (child, mut stdin) = spawn_piped(cmd);
    let input = input.into();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    Fed { child, writer }
}

impl Fed {
    /// Wait for the child; its whole output.
    ///
    /// Panics when the input could not all be written (the child stopped
    /// reading early): use [`Fed::wait_unread_ok`] where that is allowed.
    pub fn wait(self) -> Output {
        let out = self.child.wait_with_output().unwrap();
        self.writer
            .join()
            .unwrap()
            .expect("writing the child's stdin");
        out
    }

    /// [`Fed::wait`] for a child that may exit before reading all its
    /// input (a refused first line): a failed write is not an error.
    pub fn wait_unread_ok(self) -> Output {
        let out = self.child.wait_with_output().unwrap();
        let _ = self.writer.join().unwrap();
        out
    }
}

/// Assert that `out` exited with `code`, showing its stderr otherwise.
pub fn assert_exit(out: &Output, code: i32) {
    assert_eq!(
        out.status.code(),
        Some(code),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The JSON lines of a tool's stdout, one value per line.
///
/// Panics naming the line when stdout is not UTF-8 or a line is not JSON.
pub fn json_lines(stdout: &[u8]) -> Vec<Value> {
    std::str::from_utf8(stdout)
        .expect("stdout is UTF-8")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// The flags every tool answers alike (README.md, "Exit statuses (all
/// tools)"): `-h` prints a usage containing `usage` (e.g. `Usage:
/// tao-redact`; a filter's usage may start with the pipeline around it)
/// and `--help` an `Exit status:` section, both exit 0; `--version` prints
/// `<tool> ...` and exits 0; an unknown option is a usage error, exit 2,
/// stderr starting `<tool>: error: `.
pub fn assert_standard_flags(tool: &str, usage: &str) {
    let out = cmd(tool).arg("-h").output().unwrap();
    assert_exit(&out, 0);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(usage), "{text}");
    let out = cmd(tool).arg("--help").output().unwrap();
    assert_exit(&out, 0);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Exit status:"), "{text}");
    let out = cmd(tool).arg("--version").output().unwrap();
    assert_exit(&out, 0);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with(&format!("{tool} ")), "{text}");
    let out = cmd(tool).arg("--bogus").output().unwrap();
    assert_exit(&out, 2);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.starts_with(&format!("{tool}: error: ")), "{err}");
}
