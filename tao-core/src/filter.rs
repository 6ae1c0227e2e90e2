//! The filter driver: the one loop over job lines on standard input that
//! every line-reading tool runs (tao-render, `tao-redact lint`,
//! tao-classify, `tao-record mark`/`retry`, tao-poll, tao-submit and its
//! `cancel` and `preflight --lines`), so that a bad line is treated the
//! same way everywhere and the exit status is computed in one place.
//!
//! # The bad-line policy (documented once: here, in tao-jobline(7) and in
//! docs/CONTRACT.md; each tool's page says whether it goes on or stops)
//!
//! A *bad line* is an input line that is not UTF-8, not JSON, not a JSON
//! object, longer than [`MAX_LINE_BYTES`](crate::jobline::MAX_LINE_BYTES),
//! or a JSON object that lacks (or has an invalid) field the tool needs.
//!
//! 1. It is reported at once as one line on standard error, naming the
//!    input and its line number and saying what to fix:
//!    `TOOL: error: line N[, column C]: WHAT; FIX` (errors are printed
//!    with `-q` too).
//! 2. Nothing half-written goes out: every output line is written whole
//!    ([`LineWriter`](crate::LineWriter)); a line that cannot be parsed is
//!    not printed at all; a JSON object the tool cannot act on goes on
//!    with an `error` object where the tool's page says so.
//! 3. Then the tool goes on with the next line ([`OnBadLine::GoOn`]: the
//!    streaming filters tao-render, `tao-redact lint`, tao-classify,
//!    `tao-record mark` and `retry`) or stops reading
//!    ([`OnBadLine::Stop`]: tao-poll and tao-submit, which read every line
//!    before acting on the cluster: the lines before the bad one are acted
//!    on and printed, the ones after it are not read, so a truncated or
//!    corrupt input is never half acted on by guesswork).
//! 4. The exit status ([`Counts::status`]) is 65 when any line was bad,
//!    else 1 when any line went on carrying an `error` (some failed),
//!    else 0. A tool's own stronger statuses (a fatal connection error,
//!    `tao-redact lint`'s 3) come after 65 ([`Counts::finish`]).
//!
//! 5. Input that is not job lines at all (a script or a text file piped
//!    in: its first line is not JSON and does not open an object) gets one
//!    error, `line N, column C: invalid JSON (...); standard input is not
//!    job lines ...; FIX`, with the tool's fix ([`Filter::with_not_lines_fix`]),
//!    instead of one error per line: the lines after it that are not JSON
//!    either are counted (exit 65) but not reported, until a job line
//!    comes; from there on every bad line is reported again.
//!
//! Read errors of the stream itself (an I/O error on standard input) are
//! not bad lines: they end the run with [`Error::Io`] (74).

use std::io::{BufRead, Write};

use crate::error::{Error, Result};
use crate::jobline::{JobLine, LineReader};

/// What a tool does after a bad line (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnBadLine {
    /// Report it, count it, read the next line.
    GoOn,
    /// Report it, count it, read no further line.
    Stop,
}

/// The counts of one run over job lines, from which the exit status is
/// computed ([`Counts::status`], [`Counts::finish`]).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    /// Job lines read and parsed (bad lines excluded).
    pub read: u64,
    /// Bad lines: reported on stderr with their line number (exit 65).
    pub malformed: u64,
    /// Lines that went on carrying this tool's `error` object (exit 1).
    pub failed: u64,
    /// The exit status every failed line's error shares when it is one of
    /// the statuses of the environment rather than of a line (69 no login
    /// host, 77 login refused, 78 configuration: a secret not exported),
    /// `Some(1)` once failures differ or any other failure was counted,
    /// `None` before the first failure. Set by [`Counts::fail_with`].
    pub failure: Option<i32>,
}

impl Counts {
    /// The exit status: 65 (`exit::DATAERR`) when a line was bad, else,
    /// when a line failed: the status of the one environment reason every
    /// line read failed for ([`Counts::failure`]: 69, 77 or 78; e.g. the one
    /// line piped to tao-submit names a secret that is not exported: 78,
    /// `exit::CONFIG`), or 1 (`exit::SOME_FAILED`) when some line went
    /// through, was passed on or failed otherwise; else 0. The one rule of
    /// the exit status of a run over job lines (tao-jobline(7), EXIT STATUS).
    pub fn status(&self) -> i32 {
        let failure = match self.failure {
            Some(code) if self.failed >= self.read && self.read > 0 => code,
            _ => crate::exit::SOME_FAILED,
        };
        self.status_with_failure(failure)
    }

    /// Count a line that failed for an error whose exit status is `code`
    /// (`Error::code`): an environment status (69, 77, 78) is kept as
    /// [`Counts::failure`] while every failure shares it; any other, or a
    /// second one that differs, makes it 1.
    pub fn fail_with(&mut self, code: i32) {
        use crate::exit::{CONFIG, NOPERM, SOME_FAILED, UNAVAILABLE};
        self.failed += 1;
        let env = matches!(code, UNAVAILABLE | NOPERM | CONFIG);
        self.failure = match self.failure {
            None if env => Some(code),
            Some(c) if c == code && env => Some(code),
            _ => Some(SOME_FAILED),
        };
    }

    /// [`Counts::status`] with `failure` instead of 1 when lines failed
    /// (tao-poll: 69, 77 or 78 when every line failed for the same
    /// connection reason).
    pub fn status_with_failure(&self, failure: i32) -> i32 {
        if self.malformed > 0 {
            crate::exit::DATAERR
        } else if self.failed > 0 {
            failure
        } else {
            crate::exit::OK
        }
    }

    /// The end of a run that may also have hit a `fatal` error (one that
    /// stopped lines: no login host, configuration): a bad line wins (65;
    /// the fatal error is still reported on stderr as `tool: error: ...`),
    /// then the fatal error, then [`Counts::status`].
    ///
    /// Errors: `fatal`, when no line was bad.
    pub fn finish(&self, tool: &str, fatal: Option<Error>) -> Result<i32> {
        match fatal {
            Some(e) if self.malformed > 0 => {
                crate::cli::report(tool, &e);
                Ok(crate::exit::DATAERR)
            }
            Some(e) => Err(e),
            None => Ok(self.status()),
        }
    }

    /// The run's status as a result, for a tool that reports its counts in
    /// the error: 65 becomes [`Error::Data`] with `data()`'s message, 1
    /// becomes [`Error::SomeFailed`] with `failed()`'s, 0 stays `Ok(0)`.
    /// The messages are built only when needed.
    ///
    /// Errors: [`Error::Data`] (a bad line was read), [`Error::SomeFailed`]
    /// (some line failed).
    pub fn into_result(
        self,
        data: impl FnOnce() -> String,
        failed: impl FnOnce() -> String,
    ) -> Result<i32> {
        match self.status() {
            crate::exit::DATAERR => Err(Error::Data(data())),
            crate::exit::SOME_FAILED => Err(Error::SomeFailed(failed())),
            code => Ok(code),
        }
    }
}

/// Whether `err` is a bad line (a line error naming its number, exit 65:
/// malformed, not JSON, or missing a pipeline stage's field) rather than an
/// error of the run.
pub fn is_bad_line(err: &Error) -> bool {
    matches!(
        err,
        Error::BadLine { .. } | Error::BadJson { .. } | Error::MissingStage { .. }
    )
}

/// Reads job lines for a tool under the bad-line policy of the module doc:
/// a [`LineReader`] (bounded lines, reused buffer, 1-based line numbers),
/// the report of bad lines, and the [`Counts`].
pub struct Filter<'e, R> {
    tool: &'static str,
    reader: LineReader<R>,
    on_bad: OnBadLine,
    errors: Option<&'e mut dyn Write>,
    counts: Counts,
    stopped: bool,
    /// The fix said when the input is not job lines at all.
    not_lines_fix: &'static str,
    /// Inside a run of non-JSON lines that began the input (reported once).
    not_lines: bool,
}

/// The fix of [`Filter::with_not_lines_fix`] unless a tool gives its own.
pub const NOT_LINES_FIX: &str =
    "pipe job lines in (one JSON object a line, tao-jobline(7)), e.g. tao-record list | TOOL";

impl<'e, R: BufRead> Filter<'e, R> {
    /// A driver for `tool` (the `tao-x` prefix of its messages) reading
    /// `input`, reporting bad lines on standard error.
    pub fn new(tool: &'static str, input: R, on_bad: OnBadLine) -> Self {
        Self::from_reader(tool, LineReader::new(input), on_bad)
    }

    /// A driver over a given reader (a smaller line bound, for tests).
    pub fn from_reader(tool: &'static str, reader: LineReader<R>, on_bad: OnBadLine) -> Self {
        Self {
            tool,
            reader,
            on_bad,
            errors: None,
            counts: Counts::default(),
            stopped: false,
            not_lines_fix: NOT_LINES_FIX,
            not_lines: false,
        }
    }

    /// The fix to say when the input is not job lines at all (rule 5 of
    /// the module doc), e.g. `pass the file as an argument: tao-redact
    /// lint FILE`.
    pub fn with_not_lines_fix(mut self, fix: &'static str) -> Self {
        self.not_lines_fix = fix;
        self
    }

    /// Whether a JSON syntax error on the line just read means the input is
    /// not job lines at all: it is the first line (nothing read or reported
    /// before it) and its text does not open a JSON object.
    fn starts_not_lines(&self) -> bool {
        self.counts.read == 0
            && self.counts.malformed == 0
            && !self
                .reader
                .last_text()
                .trim_start_matches('\u{feff}')
                .trim_start()
                .starts_with('{')
    }

    /// Report bad lines on `errors` instead of standard error (tests, and
    /// tools handed their stderr).
    pub fn with_errors(mut self, errors: &'e mut dyn Write) -> Self {
        self.errors = Some(errors);
        self
    }

    /// The next job line, or `None` at the end of input (or after a bad
    /// line under [`OnBadLine::Stop`]). A bad line is reported and counted
    /// here ([`Filter::bad_line`]) and never returned.
    ///
    /// Errors: [`Error::Io`] when standard input cannot be read.
    pub fn next_line(&mut self) -> Result<Option<JobLine>> {
        self.next_line_with(JobLine::parse)
    }

    /// [`Filter::next_line`] with another parser of a line's text and
    /// number ([`LineReader::next_line_with`]); its bad-line errors are
    /// reported and counted the same way.
    ///
    /// Errors: as [`Filter::next_line`].
    pub fn next_line_with<T>(
        &mut self,
        mut parse: impl FnMut(&str, u64) -> Result<T>,
    ) -> Result<Option<T>> {
        while !self.stopped {
            match self.reader.next_line_with(&mut parse) {
                Ok(Some(line)) => {
                    self.counts.read += 1;
                    self.not_lines = false;
                    return Ok(Some(line));
                }
                Ok(None) => self.stopped = true,
                Err(e) if self.not_lines && matches!(e, Error::BadJson { .. }) => {
                    // Said once at the first line (rule 5): counted only.
                    self.counts.malformed += 1;
                    if self.on_bad == OnBadLine::Stop {
                        self.stopped = true;
                    }
                }
                Err(Error::BadJson {
                    line,
                    column,
                    message,
                }) if self.starts_not_lines() => {
                    self.not_lines = true;
                    let what = message.split(';').next().unwrap_or("invalid JSON");
                    let start: String = self.reader.last_text().chars().take(40).collect();
                    let fix = self.not_lines_fix.replace("TOOL", self.tool);
                    self.bad_line(&Error::BadJson {
                        line,
                        column,
                        message: format!(
                            "{what}; standard input is not job lines (it starts with {start:?}; the lines after it that are not JSON either are not reported one by one); {fix}"
                        ),
                    });
                    if self.on_bad == OnBadLine::Stop {
                        self.stopped = true;
                    }
                }
                Err(e) if is_bad_line(&e) => {
                    self.bad_line(&e);
                    if self.on_bad == OnBadLine::Stop {
                        self.stopped = true;
                    }
                }
                Err(e) => return Err(e),
            }
        }
        Ok(None)
    }

    /// Every job line up to the end of input (or the first bad line under
    /// [`OnBadLine::Stop`]), for the tools that read all lines before acting.
    ///
    /// Errors: as [`Filter::next_line`].
    pub fn read_all(&mut self) -> Result<Vec<JobLine>> {
        let mut lines = Vec::new();
        while let Some(line) = self.next_line()? {
            lines.push(line);
        }
        Ok(lines)
    }

    /// The text of the line [`Filter::next_line`] returned last, as read
    /// (UTF-8, without its `\n` or `\r\n`), for tools that pass a line on
    /// byte for byte (tao-classify).
    pub fn raw_text(&self) -> &str {
        self.reader.last_text()
    }

    /// Report a bad line found by the tool (a missing or invalid field:
    /// `err` names the line number) and count it: `tool: error: MESSAGE`
    /// as one line. The line itself goes on or not as the tool says.
    pub fn bad_line(&mut self, err: &Error) {
        self.counts.malformed += 1;
        self.report(&err.to_string());
    }

    /// Print `tool: error: MESSAGE` (one line, then any hints attached to
    /// it: [`crate::cli::attach_hints`]) where this driver reports, without
    /// counting anything: for a line that goes on with an `error` (count it
    /// with [`Filter::failed`]).
    pub fn report(&mut self, msg: &str) {
        let text = format!(
            "{}: error: {}\n{}",
            self.tool,
            crate::cli::one_line(msg),
            crate::cli::hint_text(msg)
        );
        self.emit(&text);
    }

    /// Report and count a line that goes on carrying this tool's `error`
    /// for `err`, whatever the error (a gate refusal, a failed action, a
    /// bad line): one line `TOOL: error: ID: MESSAGE` on standard error
    /// (multi-line text joined with `"; "`: [`crate::cli::join_lines`]),
    /// then any hints attached to it, and counted as
    /// [`Filter::line_failed`] counts it (a bad line 65, else 1). The one
    /// rule of tao-submit: every refused or failed line says why on stderr,
    /// not only in its `error` object.
    pub fn line_refused(&mut self, id: &str, err: &Error) {
        if is_bad_line(err) {
            self.counts.malformed += 1;
        }
        self.counts.fail_with(err.code());
        let msg = err.to_string();
        let text = format!(
            "{}: error: {id}: {}\n{}",
            self.tool,
            crate::cli::join_lines(&msg),
            crate::cli::hint_text(&msg)
        );
        self.emit(&text);
    }

    fn emit(&mut self, text: &str) {
        match self.errors.as_mut() {
            Some(w) => {
                let _ = w.write_all(text.as_bytes()).and_then(|()| w.flush());
            }
            None => crate::cli::write_stderr(text),
        }
    }

    /// Count a line that goes on carrying this tool's `error` (exit 1).
    pub fn failed(&mut self) {
        self.counts.fail_with(crate::exit::SOME_FAILED);
    }

    /// Count a line that goes on carrying this tool's `error` for `err`:
    /// a bad line ([`is_bad_line`]: a missing or invalid field, reported
    /// here as [`Filter::bad_line`] does, exit 65) or another failure
    /// (counted with [`Filter::failed`], exit 1; the tool reports it as
    /// its page says).
    pub fn line_failed(&mut self, err: &Error) {
        if is_bad_line(err) {
            self.bad_line(err);
        }
        self.failed();
    }

    /// The counts so far.
    pub fn counts(&self) -> Counts {
        self.counts
    }

    /// The exit status so far ([`Counts::status`]).
    pub fn status(&self) -> i32 {
        self.counts.status()
    }

    /// The number of the last line read (1-based; 0 before the first).
    pub fn line_no(&self) -> u64 {
        self.reader.line_no()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const INPUT: &[u8] = b"{\"id\":\"a\"}\nnot json\n\n[1]\n{\"id\":\"b\"}\r\n\xff\n{\"id\":\"c\"}";

    fn run(on_bad: OnBadLine) -> (Vec<String>, Counts, String) {
        let mut err = Vec::new();
        let mut f = Filter::new("tao-x", INPUT, on_bad).with_errors(&mut err);
        let mut ids = Vec::new();
        while let Some(l) = f.next_line().unwrap() {
            assert_eq!(f.raw_text(), l.to_json());
            ids.push(l.id().unwrap().to_string());
        }
        let c = f.counts();
        drop(f);
        (ids, c, String::from_utf8(err).unwrap())
    }

    /// A script piped in where job lines belong: one error, at line 1, with
    /// the tool's fix; the other non-JSON lines are counted, not reported;
    /// a job line after them ends the run, and a bad line after that is
    /// reported again. serde's own position never appears.
    #[test]
    fn input_that_is_not_job_lines_gets_one_error_with_the_fix() {
        let input: &[u8] = b"#!/bin/bash\n#SBATCH -N 1\nsrun hostname\n{\"id\":\"a\"}\nnot json\n";
        let mut err = Vec::new();
        let mut f = Filter::new("tao-x", input, OnBadLine::GoOn)
            .with_not_lines_fix("pass the file as an argument: tao-x FILE")
            .with_errors(&mut err);
        let got = f.read_all().unwrap();
        let c = f.counts();
        drop(f);
        let err = String::from_utf8(err).unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!(c.malformed, 4);
        let lines: Vec<&str> = err.lines().collect();
        assert_eq!(lines.len(), 2, "{err}");
        assert!(
            lines[0].starts_with("tao-x: error: line 1, column 1: invalid JSON (expected value); standard input is not job lines (it starts with \"#!/bin/bash\""),
            "{err}"
        );
        assert!(
            lines[0].ends_with("pass the file as an argument: tao-x FILE"),
            "{err}"
        );
        assert!(
            lines[1].starts_with("tao-x: error: line 5, column ")
                && lines[1].contains(": invalid JSON ("),
            "{err}"
        );
        assert!(!err.contains("at line 1 column"), "{err}");
        // A first line that opens an object is a broken job line, not a file.
        let mut err = Vec::new();
        let mut f = Filter::new("tao-x", &b"{not json\nnot json\n"[..], OnBadLine::GoOn)
            .with_errors(&mut err);
        f.read_all().unwrap();
        drop(f);
        let err = String::from_utf8(err).unwrap();
        assert_eq!(err.lines().count(), 2, "{err}");
        assert!(!err.contains("not job lines"), "{err}");
    }

    #[test]
    fn go_on_reports_every_bad_line_and_reads_the_rest() {
        let (ids, c, err) = run(OnBadLine::GoOn);
        assert_eq!(ids, ["a", "b", "c"]);
        assert_eq!((c.read, c.malformed, c.failed), (3, 3, 0));
        let lines: Vec<&str> = err.lines().collect();
        assert_eq!(lines.len(), 3, "{err}");
        assert!(
            lines[0].starts_with("tao-x: error: line 2, column"),
            "{err}"
        );
        assert!(lines[1].starts_with("tao-x: error: line 4: expected a JSON object"));
        assert!(lines[2].starts_with("tao-x: error: line 6: not UTF-8"));
        assert_eq!(c.status(), crate::exit::DATAERR);
    }

    #[test]
    fn stop_reads_nothing_after_the_first_bad_line() {
        let (ids, c, err) = run(OnBadLine::Stop);
        assert_eq!(ids, ["a"]);
        assert_eq!((c.read, c.malformed), (1, 1));
        assert_eq!(err.lines().count(), 1);
    }

    #[test]
    fn status_and_finish_order_bad_lines_fatal_and_failures() {
        let mut c = Counts::default();
        assert_eq!(c.status(), 0);
        c.failed = 2;
        assert_eq!(c.status(), 1);
        assert_eq!(c.status_with_failure(69), 69);
        let fatal = || Some(Error::Unavailable("no host".into()));
        assert_eq!(c.finish("t", fatal()).unwrap_err().code(), 69);
        c.malformed = 1;
        assert_eq!(c.status_with_failure(69), 65);
        assert_eq!(c.finish("t", fatal()).unwrap(), 65);
        assert_eq!(c.finish("t", None).unwrap(), 65);
    }

    #[test]
    fn a_refused_line_says_why_on_stderr_in_one_line() {
        let mut err = Vec::new();
        let mut f = Filter::new("tao-x", &b""[..], OnBadLine::Stop).with_errors(&mut err);
        f.line_refused(
            "job-1",
            &Error::Data(
                "sbatch exited 1: sbatch: error: invalid partition specified: ghost\nsbatch: error: Batch job submission failed\n".into(),
            ),
        );
        f.line_refused(
            "job-2",
            &Error::Config("secret \"HF_TOKEN\" is not set".into()),
        );
        let c = f.counts();
        drop(f);
        let text = String::from_utf8(err).unwrap();
        assert_eq!(
            text,
            "tao-x: error: job-1: sbatch exited 1: sbatch: error: invalid partition specified: ghost; sbatch: error: Batch job submission failed\n\
             tao-x: error: job-2: secret \"HF_TOKEN\" is not set\n"
        );
        assert_eq!((c.failed, c.malformed, c.status()), (2, 0, 1));
    }

    #[test]
    fn every_line_failing_for_one_configuration_reason_is_exit_78() {
        let secret = || {
            Error::Config("line 1: secret HF_TOKEN (named by the record) is not set in this environment: export HF_TOKEN=...".into())
        };
        let mut err = Vec::new();
        let mut f = Filter::new(
            "tao-x",
            &b"{\"id\":\"a\"}\n{\"id\":\"b\"}\n"[..],
            OnBadLine::Stop,
        )
        .with_errors(&mut err);
        f.read_all().unwrap();
        f.line_refused("a", &secret());
        assert_eq!(f.status(), 1, "b has not failed (yet)");
        f.line_refused("b", &secret());
        assert_eq!(f.status(), crate::exit::CONFIG);
        // A second reason, or a line-specific one, is "some failed".
        let mut c = f.counts();
        c.fail_with(crate::exit::UNAVAILABLE);
        assert_eq!(c.status(), 1);
        let mut c = f.counts();
        c.fail_with(crate::exit::SOME_FAILED);
        assert_eq!(c.status(), 1);
        // A line that went through (read, not failed) keeps it 1.
        let mut c = f.counts();
        c.read += 1;
        assert_eq!(c.status(), 1);
        // A bad line still wins.
        let mut c = f.counts();
        c.malformed = 1;
        assert_eq!(c.status(), 65);
    }

    #[test]
    fn a_tool_found_bad_line_is_counted_and_reported() {
        let mut err = Vec::new();
        let mut f = Filter::new("tao-x", &b"{}\n"[..], OnBadLine::GoOn).with_errors(&mut err);
        let l = f.next_line().unwrap().unwrap();
        // A skipped stage's field is a bad line too (exit 65).
        let e = l.require_str(&["id"]).unwrap_err();
        assert!(is_bad_line(&e), "{e:?}");
        f.bad_line(&e);
        f.failed();
        assert_eq!(f.status(), 65);
        drop(f);
        assert_eq!(
            String::from_utf8(err).unwrap(),
            "tao-x: error: line 1: missing string field `id`; it is written by tao-record open: pipe lines from `tao-record open` (or `tao-record list`)\n"
        );
    }
}
