//! The common `main` wrapper: run the tool, print `tao-x: error: ...` as
//! one line on stderr, and exit with the error's status.
//!
//! Broken pipes: a pure filter (render, redact, classify, poll reads) whose
//! reader went away exits 0 quietly, as ripgrep and bat do; a tool with side
//! effects (submit, record) must not report success when its output was
//! lost, so it exits 74.

use crate::error::Error;

/// How a tool treats a broken pipe on stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PipePolicy {
    /// Exit 0 quietly: nothing was changed anywhere.
    Quiet,
    /// Exit 74 with a message: a change was made whose report was lost.
    Fail,
}

/// Whether `err` is a broken pipe on output.
pub fn is_broken_pipe(err: &Error) -> bool {
    matches!(err, Error::Io { source, .. } if source.kind() == std::io::ErrorKind::BrokenPipe)
}

/// Make a message safe for one terminal line: control characters (newlines
/// included) are written as escapes, so an error is always one line.
pub fn one_line(msg: &str) -> String {
    let mut out = String::with_capacity(msg.len());
    for ch in msg.chars() {
        if ch.is_control() {
            out.extend(ch.escape_default());
        } else {
            out.push(ch);
        }
    }
    out
}

/// Print `tool: warning: msg` on stderr (one line).
pub fn warn(tool: &str, msg: &str) {
    eprintln!("{tool}: warning: {}", one_line(msg));
}

/// Print `tool: error: msg` on stderr (one line).
pub fn report(tool: &str, err: &Error) {
    eprintln!("{tool}: error: {}", one_line(&err.to_string()));
}

/// Run `body` and exit the process with its status: `Ok(code)` exits with
/// `code`; `Err(e)` prints `tool: error: ...` and exits with `e.code()`.
pub fn main_with(tool: &str, policy: PipePolicy, body: impl FnOnce() -> Result<i32, Error>) -> ! {
    let code = match body() {
        Ok(code) => code,
        Err(e) if is_broken_pipe(&e) && policy == PipePolicy::Quiet => 0,
        Err(e) => {
            report(tool, &e);
            e.code()
        }
    };
    std::process::exit(code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_escapes_controls() {
        assert_eq!(one_line("a\nb\tc"), "a\\nb\\tc");
    }

    #[test]
    fn broken_pipe_is_recognised() {
        let e = Error::io("x", std::io::Error::from(std::io::ErrorKind::BrokenPipe));
        assert!(is_broken_pipe(&e));
        assert!(!is_broken_pipe(&Error::Usage("x".into())));
    }
}
