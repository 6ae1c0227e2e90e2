//! The common `main` wrapper: run the tool, print `tao-x: error: ...` as
//! one line on stderr, and exit with the error's status.
//!
//! Broken pipes: a pure filter (render, redact, classify, poll reads) whose
//! reader went away exits 0 quietly, as ripgrep and bat do; a tool with side
//! effects (submit, record) must not report success when its output was
//! lost, so it exits 74.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicI8, Ordering};
use std::sync::Mutex;

use crate::error::Error;

/// Process-wide verbosity: -1 quiet (`-q`), 0 normal, 1+ verbose (`-v`, `-vv`).
static VERBOSITY: AtomicI8 = AtomicI8::new(0);

/// Set the verbosity from a tool's `-q/--quiet` flag and its count of
/// `-v/--verbose` flags. Quiet wins: `-q` silences warnings and notes;
/// errors are always printed (they explain the exit status).
pub fn set_verbosity(quiet: bool, verbose: u8) {
    let level = if quiet {
        -1
    } else {
        i8::try_from(verbose).unwrap_or(i8::MAX)
    };
    VERBOSITY.store(level, Ordering::Relaxed);
}

/// The current verbosity (see [`set_verbosity`]).
pub fn verbosity() -> i8 {
    VERBOSITY.load(Ordering::Relaxed)
}

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

/// `msg` as one line for a message that may span several (a remote
/// command's stderr, such as sbatch's two `sbatch: error:` lines): each
/// line trimmed, empty lines dropped, the rest joined with `"; "`, and any
/// other control character escaped ([`one_line`]), so that no literal
/// `\n` shows in an error.
pub fn join_lines(msg: &str) -> String {
    let joined: Vec<&str> = msg
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    one_line(&joined.join("; "))
}

/// Write `text` to standard output and flush it.
///
/// Errors: [`Error::Io`] (`writing standard output: ...`); a reader that
/// went away is a broken pipe ([`is_broken_pipe`]), which [`main_with`]
/// turns into the tool's [`PipePolicy`].
pub fn write_stdout(text: &[u8]) -> Result<(), Error> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    out.write_all(text)
        .and_then(|()| out.flush())
        .map_err(|e| Error::io("writing standard output", e))
}

/// Write `text` to standard error, ignoring a failure: a diagnostic that
/// cannot be written (stderr closed, `2>&-`, or a pipe whose reader left)
/// must neither panic (as `eprint!` does) nor change the exit status, which
/// already says what happened. Every diagnostic of the tools goes through
/// here.
pub fn write_stderr(text: &str) {
    use std::io::Write;
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(text.as_bytes()).and_then(|()| err.flush());
}

/// Print `tool: warning: msg` on stderr (one line), unless `-q` was given.
pub fn warn(tool: &str, msg: &str) {
    if verbosity() >= 0 {
        write_stderr(&format!("{tool}: warning: {}\n", one_line(msg)));
    }
}

/// Print `tool: msg` on stderr (one line), silenced by `-q`: a normal
/// progress note worth seeing without `-v` (a long wait starting), which
/// is not a warning.
pub fn progress(tool: &str, msg: &str) {
    if verbosity() >= 0 {
        write_stderr(&format!("{tool}: {}\n", one_line(msg)));
    }
}

/// Print `tool: msg` on stderr (one line) only with `-v`: what the tool is
/// doing (connections, remote commands, per-job outcomes).
pub fn note(tool: &str, msg: &str) {
    if verbosity() >= 1 {
        write_stderr(&format!("{tool}: {}\n", one_line(msg)));
    }
}

/// Hint lines attached to error messages by [`attach_hints`]: (the
/// error's one-line text, its hints).
static HINTS: Mutex<Vec<(String, Vec<String>)>> = Mutex::new(Vec::new());

/// Attach `hints` to the error whose text is `message`: when that error is
/// reported on stderr ([`report`], so also by [`main_with`]), each hint
/// follows it on its own line, indented by two spaces. The error itself
/// stays one line (and so does the `error.message` of a job line, which
/// never carries hints). Used for remediation too long for one line, such
/// as the SSH key setup steps after a refused login (tao-ssh).
///
/// Input: the error's `Display` text and short hint lines (control
/// characters are escaped when printed).
pub fn attach_hints(message: &str, hints: Vec<String>) {
    if let Ok(mut h) = HINTS.lock() {
        if !h.iter().any(|(m, _)| m == message) {
            h.push((message.to_string(), hints));
        }
    }
}

/// The hint lines attached to `message` by [`attach_hints`] (empty if none).
pub fn hints_for(message: &str) -> Vec<String> {
    HINTS
        .lock()
        .ok()
        .and_then(|h| h.iter().find(|(m, _)| m == message).map(|(_, v)| v.clone()))
        .unwrap_or_default()
}

/// The hint lines of `message` as printed on stderr: each `  hint\n`.
pub fn hint_text(message: &str) -> String {
    hints_for(message)
        .iter()
        .map(|h| format!("  {}\n", one_line(h)))
        .collect()
}

/// Print `tool: error: msg` on stderr (one line), then the hints attached
/// to it ([`attach_hints`]), each on its own indented line.
pub fn report(tool: &str, err: &Error) {
    let msg = err.to_string();
    write_stderr(&format!(
        "{tool}: error: {}\n{}",
        one_line(&msg),
        hint_text(&msg)
    ));
}

/// The one-line usage error of a tool that reads job lines on standard
/// input when standard input is a terminal (it would wait silently for
/// lines nobody types).
///
/// Input: `example`, a pipeline that feeds the tool (`tao-record show ID |
/// tao-render`); `alternative`, another way to run it without stdin, if the
/// tool has one (`give Slurm job ids (tao-poll 123 124)`). Output:
/// [`Error::Usage`] (exit 2): `stdin is a terminal, and job lines are read
/// from it: pipe them in, e.g. `EXAMPLE``, then `; or ALTERNATIVE`.
pub fn terminal_stdin_error(example: &str, alternative: Option<&str>) -> Error {
    let mut msg = format!(
        "stdin is a terminal, and job lines are read from it: pipe them in, e.g. `{example}`"
    );
    if let Some(alt) = alternative {
        msg.push_str("; or ");
        msg.push_str(alt);
    }
    Error::Usage(msg)
}

/// Refuse to read job lines from a terminal: the check every line-reading
/// tool makes right before it reads standard input (after `--help` and the
/// like, which need no input).
///
/// Input: as [`terminal_stdin_error`]. Output: `Ok(())` when standard input
/// is a pipe, a file or `/dev/null`.
///
/// Errors: [`terminal_stdin_error`] (exit 2) when standard input is a
/// terminal (`isatty(0)`).
pub fn require_piped_stdin(example: &str, alternative: Option<&str>) -> Result<(), Error> {
    if std::io::stdin().is_terminal() {
        return Err(terminal_stdin_error(example, alternative));
    }
    Ok(())
}

/// Whether standard output is a terminal (`isatty(1)`): the one test by
/// which the tools print their readable form (a table, a summary) for a
/// person and JSON lines for a pipe or a file.
pub fn stdout_is_terminal() -> bool {
    std::io::stdout().is_terminal()
}

/// Whether the locale's character set is UTF-8, the one test by which the
/// tables draw block glyphs or ASCII ([`crate::progress::glyphs_for_locale`]).
///
/// Input: the environment. The first of `LC_ALL`, `LC_CTYPE` and `LANG`
/// that is set and not empty decides (the order in which setlocale(3)
/// resolves the character-type category, POSIX XBD 8.2): UTF-8 when it
/// names the `UTF-8` or `utf8` codeset (any case). None set is the C
/// locale: not UTF-8, as cron and bare containers run.
pub fn locale_is_utf8() -> bool {
    let name = ["LC_ALL", "LC_CTYPE", "LANG"]
        .iter()
        .find_map(|k| std::env::var(k).ok().filter(|v| !v.is_empty()))
        .unwrap_or_default()
        .to_ascii_lowercase();
    name.contains("utf-8") || name.contains("utf8")
}

/// Whether the terminal on standard output takes no cursor or screen
/// control sequences: `TERM` is `dumb` (terminfo(5)'s terminal with no
/// capabilities: an editor's shell buffer, a serial console) or not set.
/// The watch table is then printed again below the last one instead of
/// redrawn (tao-poll --watch).
pub fn terminal_is_dumb() -> bool {
    std::env::var("TERM").map_or(true, |t| t.is_empty() || t == "dumb")
}

/// [`require_piped_stdin`], then the locked standard input to read from.
///
/// Errors: as [`require_piped_stdin`].
pub fn piped_stdin(
    example: &str,
    alternative: Option<&str>,
) -> Result<std::io::StdinLock<'static>, Error> {
    require_piped_stdin(example, alternative)?;
    Ok(std::io::stdin().lock())
}

/// Run `body` and return the process's exit status, for `main.rs` to
/// exit with (`std::process::exit(tao_core::cli::main_with(...))`: library
/// code never calls `process::exit`). `Ok(code)` is `code`; `Err(e)`
/// prints `tool: error: ...` and is `e.code()`.
///
/// Broken pipes: `Err` of a broken pipe is 0, quietly, under
/// [`PipePolicy::Quiet`] and 74 with the message under
/// [`PipePolicy::Fail`]. As a backstop, a panic of the standard library's
/// `print!`/`eprint!` macros on a closed stream (`failed printing to
/// stdout: Broken pipe`) on the main thread is caught and handled the same
/// way instead of printing a panic message and exiting 101 (ripgrep and
/// bat treat a closed pipe as the normal end of a filter); every other
/// panic keeps the default hook and unwinds on.
pub fn main_with(tool: &str, policy: PipePolicy, body: impl FnOnce() -> Result<i32, Error>) -> i32 {
    install_pipe_panic_guard();
    survive_file_size_limit();
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(body));
    match outcome {
        Ok(Ok(code)) => code,
        Ok(Err(e)) if is_broken_pipe(&e) && policy == PipePolicy::Quiet => crate::exit::OK,
        Ok(Err(e)) => {
            report(tool, &e);
            e.code()
        }
        Err(payload) => {
            let msg = panic_message(payload.as_ref());
            if !is_print_pipe_panic(msg) {
                std::panic::resume_unwind(payload);
            }
            match policy {
                PipePolicy::Quiet => crate::exit::OK,
                PipePolicy::Fail => {
                    write_stderr(&format!("{tool}: error: {}\n", one_line(msg)));
                    crate::exit::IOERR
                }
            }
        }
    }
}

/// Whether a panic message is the standard library's report of a print
/// macro writing into a closed stream.
pub fn is_print_pipe_panic(msg: &str) -> bool {
    (msg.starts_with("failed printing to stdout") || msg.starts_with("failed printing to stderr"))
        && msg.contains("Broken pipe")
}

/// The text of a panic's payload (empty when it is not a string).
fn panic_message(payload: &(dyn std::any::Any + Send)) -> &str {
    payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied())
        .unwrap_or("")
}

/// See [`main_with`]: a write past the file-size limit (RLIMIT_FSIZE,
/// `ulimit -f`) raises SIGXFSZ, whose default action ends the process with
/// no message (exit 153) and leaves the temporary file of an atomic write
/// behind. With a handler installed (it only sets a flag: signal-hook, no
/// unsafe code) the write fails with EFBIG instead (POSIX write(2)), which
/// is reported as an [`Error::Io`] naming the fix (exit 74) and the
/// temporary file is removed.
fn survive_file_size_limit() {
    let flag = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    // A failure leaves the default action: nothing better to do.
    let _ = signal_hook::flag::register(signal_hook::consts::SIGXFSZ, flag);
}

/// See [`main_with`]: the panic hook says nothing for a print macro's
/// broken-pipe panic ([`main_with`] decides the status); every other panic
/// goes to the default hook.
fn install_pipe_panic_guard() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !is_print_pipe_panic(panic_message(info.payload())) {
            default(info);
        }
    }));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_escapes_controls() {
        assert_eq!(one_line("a\nb\tc"), "a\\nb\\tc");
    }

    #[test]
    fn quiet_wins_over_verbose() {
        set_verbosity(true, 3);
        assert_eq!(verbosity(), -1);
        set_verbosity(false, 2);
        assert_eq!(verbosity(), 2);
        set_verbosity(false, 0);
        assert_eq!(verbosity(), 0);
    }

    #[test]
    fn terminal_stdin_error_names_stdin_and_the_fix() {
        let e = terminal_stdin_error("tao-record show ID | tao-render", None);
        assert_eq!(e.code(), crate::exit::USAGE);
        let msg = e.to_string();
        assert!(msg.starts_with("stdin is a terminal"), "{msg}");
        assert!(msg.contains("`tao-record show ID | tao-render`"), "{msg}");
        assert!(!msg.contains('\n'));
        let e = terminal_stdin_error("x | tao-poll", Some("give Slurm job ids (tao-poll 123)"));
        assert!(
            e.to_string()
                .ends_with("; or give Slurm job ids (tao-poll 123)"),
            "{e}"
        );
    }

    #[test]
    fn hints_follow_only_their_own_error() {
        attach_hints("login failed", vec!["1) a".into(), "2) b\nc".into()]);
        assert_eq!(hint_text("login failed"), "  1) a\n  2) b\\nc\n");
        assert_eq!(hint_text("something else"), "");
        assert!(hints_for("other").is_empty());
    }

    #[test]
    fn print_pipe_panics_are_recognised() {
        assert!(is_print_pipe_panic(
            "failed printing to stdout: Broken pipe (os error 32)"
        ));
        assert!(is_print_pipe_panic(
            "failed printing to stderr: Broken pipe (os error 32)"
        ));
        assert!(!is_print_pipe_panic("index out of bounds"));
        assert!(!is_print_pipe_panic(
            "failed printing to stdout: No space left"
        ));
    }

    #[test]
    fn broken_pipe_is_recognised() {
        let e = Error::io("x", std::io::Error::from(std::io::ErrorKind::BrokenPipe));
        assert!(is_broken_pipe(&e));
        assert!(!is_broken_pipe(&Error::Usage("x".into())));
    }

    #[test]
    fn main_with_returns_the_status_and_never_exits() {
        assert_eq!(main_with("t", PipePolicy::Fail, || Ok(3)), 3);
        let pipe = || Err(Error::io("w", std::io::ErrorKind::BrokenPipe.into()));
        assert_eq!(main_with("t", PipePolicy::Quiet, pipe), 0);
        assert_eq!(main_with("t", PipePolicy::Fail, pipe), 74);
        assert_eq!(
            main_with("t", PipePolicy::Quiet, || Err(Error::Usage("u".into()))),
            2
        );
        let print_panic = || -> Result<i32, Error> {
            std::panic::panic_any("failed printing to stdout: Broken pipe (os error 32)")
        };
        assert_eq!(main_with("t", PipePolicy::Quiet, print_panic), 0);
        assert_eq!(main_with("t", PipePolicy::Fail, print_panic), 74);
    }
}
