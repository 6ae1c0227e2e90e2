//! Command line and the filter loop of the `tao-classify` binary.
//!
//! lexopt, as for every small filter of the project (ripgrep's choice: full
//! control of the help text and of startup). `-h` prints the short help,
//! `--help` the long one with the rule format and the exit statuses.

use std::ffi::OsString;
use std::io::{BufRead, Write};
use std::path::PathBuf;

use tao_core::flags::{Flag, Tool};
use tao_core::{Error, Filter, JobLine, LineWriter, OnBadLine, Result};

use crate::{classify, Catalogue, Options, Redactor, DEFAULT_MAX_ATTEMPTS};

/// The largest `--max-attempts` accepted (a retry budget of a hundred
/// attempts is already more than any cluster fault deserves).
pub const MAX_ATTEMPTS_LIMIT: u32 = 100;

/// The command line: every flag once (`tao_core::flags`), driving
/// [`parse_args`], `-h` and `--help`, and the man page and completions
/// (man/ builds a `clap::Command` from it).
pub const SPEC: Tool = Tool {
    name: "tao-classify",
    about: "classify failed jobs (infra / program / scheduler) and decide retry",
    usage: &[
        "tao-record list --live | tao-poll --evidence | tao-classify [OPTIONS] | tao-record mark",
    ],
    description: "Reads job lines on stdin and writes them to stdout. Lines whose `state` is \
not ERROR pass through byte for byte. An ERROR line gets

  classification = {class, subclass, rule, evidence: {file, line, text} | null,
                    node, retry, reason}

class is infra (the cluster's fault: retried), program (the user's: never retried), scheduler \
(time limit, cancel, preemption: not retried) or unknown (not retried). The evidence is the \
`evidence` field (`tao-poll --evidence`: {out: {first_line, lines}, err: {...}}) or the files \
given with --log. A log that matches no rule is the program's to look at (class program, not \
retried), unless the evidence fallback overrules it: a text classifier (logistic regression \
over normalised tokens, trained on the dev split of the project's corpus of real failure logs, \
weights compiled in) scores the last 64 KiB of the evidence, and only a score above its \
cross-validated threshold calls the failure infra and retries it (rule fallback). The \
classification then carries fallback = {score, threshold}, also when the score stays below \
the threshold and the default stands.",
    flags: &[
        Flag::value(
            "log",
            "FILE",
            "use FILE (a job's main.out/main.err) as the evidence; repeatable",
        )
        .long_help(
            "Use FILE (a job's main.out/main.err) as the evidence for every ERROR line \
(streamed with bounded memory); repeatable; an empty file means \"no log\".",
        )
        .repeatable(),
        Flag::value(
            "max-attempts",
            "N",
            "retry budget (1-100): retry infra faults while attempt < N (default 10)",
        )
        .long_help("Retry budget, 1-100 (default 10): infra faults are retried while attempt < N.")
        .default("10")
        .range(1, MAX_ATTEMPTS_LIMIT as u64),
        Flag::value(
            "rules",
            "FILE",
            "add or replace rules from a TOML file; repeatable",
        )
        .long_help(
            "A TOML file of [[rule]] tables (id, class, subclass, priority, keywords, \
pattern, reason, source); a rule with a built-in id replaces it. A named group (?P<node>...) \
names the node to avoid. Repeatable.",
        )
        .repeatable(),
        Flag::switch(
            "list-rules",
            "print the rule catalogue as JSON lines and exit",
        )
        .long_help(
            "Print the catalogue as JSON lines (id, class, subclass, priority, keywords, \
pattern, reason, source) and exit.",
        ),
        Flag::QUIET,
        Flag::verbose(
            "print what the tool does (one line per classified job)",
            "Print what the tool does on standard error (one line per classified job).",
        ),
        Flag::HELP,
        Flag::VERSION,
    ],
    subs: &[],
    sections: &[(
        "Policy",
        "  NODE_FAIL, BOOT_FAIL            infra, whatever the log says
  FAILED, OUT_OF_MEMORY, DEADLINE the highest-priority rule matching the log decides
  no log at all (empty evidence)  launch failure: infra, unless slurm.reason blames
                                  the request
  no evidence field, no --log     unknown, not retried
  TIMEOUT                         scheduler, not retried (longer partition/time or resume)
  CANCELLED, PREEMPTED            tao-poll maps them to CANCELED, which passes through;
                                  as ERROR they are classed scheduler, not retried
  ... but the log first           for TIMEOUT, CANCELLED, PREEMPTED, REVOKED a specific
                                  hardware/network/runtime line (rule priority >= 86)
                                  decides: infra, retried; for TIMEOUT also the
                                  program's own specific error (>= 75): program
  ERROR set by an earlier tool    (an `error` object, no slurm.native_state) passes through
  budget                          infra retries only while attempt < --max-attempts
                                  (attempt 1 = first try; default 10); then
                                  reason \"retry budget exhausted (attempt 10 of 10)\"
",
    )],
    exit_status: "  0   every line classified or passed through
  2   usage error
  65  bad input (not JSON, ERROR line without slurm.native_state, bad attempt or
      evidence); the other lines still go through, the bad one is reported on stderr
  74  a --log file or stdout could not be read/written
  78  a --rules file is invalid
",
};

/// Parsed arguments.
#[derive(Debug, Default, PartialEq)]
pub struct Args {
    /// `--log FILE` (repeatable).
    pub logs: Vec<PathBuf>,
    /// `--rules FILE` (repeatable).
    pub rules: Vec<PathBuf>,
    /// `--max-attempts N`.
    pub max_attempts: u32,
    /// `--list-rules`.
    pub list_rules: bool,
    /// `-h` / `--help` / `--version`: text to print and exit 0.
    pub print: Option<String>,
    /// `-q`/`--quiet`: no warnings.
    pub quiet: bool,
    /// Number of `-v`/`--verbose`.
    pub verbose: u8,
}

/// Parse arguments (without the program name).
///
/// Errors: [`Error::Usage`] (exit 2) for an unknown flag, a missing or bad value.
pub fn parse_args(args: impl IntoIterator<Item = OsString>) -> Result<Args> {
    use lexopt::prelude::*;
    let usage = |e: lexopt::Error| Error::Usage(format!("{e}; see tao-classify --help"));
    let mut parser = lexopt::Parser::from_args(args);
    let mut out = Args {
        max_attempts: DEFAULT_MAX_ATTEMPTS,
        ..Args::default()
    };
    while let Some(arg) = parser.next().map_err(usage)? {
        let flag = match &arg {
            Short(c) => SPEC.lookup_short(*c),
            Long(l) => SPEC.lookup_long(l),
            Value(_) => None,
        };
        match (flag.map(|f| f.long), arg) {
            (Some("quiet"), _) => out.quiet = true,
            (Some("verbose"), _) => out.verbose = out.verbose.saturating_add(1),
            (Some("help"), Short(_)) => out.print = Some(SPEC.short_help()),
            (Some("help"), _) => out.print = Some(SPEC.long_help()),
            (Some("version"), _) => {
                out.print = Some(format!("tao-classify {}\n", env!("CARGO_PKG_VERSION")))
            }
            (Some("log"), _) => out.logs.push(parser.value().map_err(usage)?.into()),
            (Some("rules"), _) => out.rules.push(parser.value().map_err(usage)?.into()),
            (Some("list-rules"), _) => out.list_rules = true,
            (Some("max-attempts"), _) => {
                let v = parser.value().map_err(usage)?;
                let text = v.to_string_lossy();
                let (lo, hi) = SPEC.flag("max-attempts").range.unwrap_or((1, 100));
                out.max_attempts = match text.parse::<u32>() {
                    Ok(n) if (lo..=hi).contains(&u64::from(n)) => n,
                    _ => {
                        return Err(Error::Usage(format!(
                        "--max-attempts {text:?}: expected a whole number from {lo} to {hi} (1 = never retry)"
                    )))
                    }
                };
            }
            (_, other) => return Err(usage(other.unexpected())),
        }
    }
    Ok(out)
}

/// The redactor used for evidence text: tao-secrets' catalogue (the one
/// place secret patterns live) plus the exact values of HF_TOKEN, NGC_KEY
/// and of every secret the job line names (`secrets`), read from the
/// environment by name (`tao_secrets::LineRedactors`), so neither a `--log`
/// file's nor the evidence's secrets reach a record.
///
/// Errors: [`Error::Internal`] if tao-secrets' built-in catalogue is broken.
pub fn default_redactor() -> Result<Redactor> {
    let reds = tao_secrets::LineRedactors::new("tao-classify");
    // Fail now (exit 70) rather than on the first line if the catalogue is broken.
    reds.for_names(&[])?;
    Ok(Box::new(move |job: &JobLine, text: &[u8]| {
        match reds.for_line(job) {
            Ok(red) => red.redact_line(text).into_owned(),
            Err(_) => b"[REDACTED:unavailable]".to_vec(),
        }
    }))
}

/// The pipeline that feeds tao-classify (for the error when stdin is a
/// terminal).
pub const STDIN_EXAMPLE: &str = "tao-record list --live | tao-poll | tao-classify";

/// Run the tool: parse `args`, read job lines from the reader `input`
/// returns (called only when lines are to be read, after `--help`,
/// `--list-rules` and the `--log` checks; the binary passes
/// `tao_core::cli::piped_stdin`, which refuses a terminal), write them to
/// `output`, report bad lines on `errors`. Returns the exit status.
///
/// Errors: usage (2; also what `input` returns, e.g. stdin is a terminal),
/// rules file (74/78), `--log` file (74), output (74).
/// Bad input lines are not errors of the run: they are reported on
/// `errors` as `tao-classify: error: line N: ...`, the remaining lines still
/// go through, and the status is 65.
pub fn run<R: BufRead>(
    args: impl IntoIterator<Item = OsString>,
    input: impl FnOnce() -> Result<R>,
    output: impl Write,
    mut errors: impl Write,
) -> Result<i32> {
    let args = parse_args(args)?;
    tao_core::cli::set_verbosity(args.quiet, args.verbose);
    let mut out = LineWriter::new(output);
    if let Some(text) = &args.print {
        out.write_raw(text.as_bytes())?;
        return Ok(tao_core::exit::OK);
    }
    let cat = Catalogue::with_site_files(&args.rules)?;
    if args.list_rules {
        for r in cat.rules() {
            let mut text = serde_json::to_string(&serde_json::json!({
                "id": r.spec.id, "class": r.spec.class, "subclass": r.spec.subclass,
                "priority": r.spec.priority, "keywords": r.spec.keywords,
                "pattern": r.spec.pattern, "reason": r.spec.reason, "source": r.spec.source,
            }))
            .map_err(|e| Error::Internal(e.to_string()))?;
            text.push('\n');
            out.write_raw(text.as_bytes())?;
        }
        return Ok(tao_core::exit::OK);
    }
    // Open every --log file now, so a typo fails before any line is read.
    for path in &args.logs {
        std::fs::File::open(path).map_err(|e| {
            Error::io(
                format!("opening log file {:?} (--log)", path.display().to_string()),
                e,
            )
        })?;
    }
    let opts = Options::new(args.max_attempts, args.logs, Some(default_redactor()?));
    filter(input()?, &mut out, &mut errors, &cat, &opts)
}

/// The filter loop (`tao_core::filter`, going on after a bad line): every
/// input line comes out (untouched or classified), except lines that are
/// not JSON objects, which are reported on `errors`. Returns 0, or 65 if
/// any line was bad.
///
/// Errors: [`Error::Io`] reading input, writing output or a `--log` file.
pub fn filter<W: Write>(
    input: impl BufRead,
    out: &mut LineWriter<W>,
    errors: &mut impl Write,
    cat: &Catalogue,
    opts: &Options,
) -> Result<i32> {
    let mut lines = Filter::new("tao-classify", input, OnBadLine::GoOn).with_errors(errors);
    while let Some(mut line) = lines.next_line()? {
        match classify(&mut line, cat, opts) {
            Ok(None) => {
                // Not ERROR: byte for byte.
                let text = lines.raw_text();
                let mut bytes = Vec::with_capacity(text.len() + 1);
                bytes.extend_from_slice(text.as_bytes());
                bytes.push(b'\n');
                out.write_raw(&bytes)?;
            }
            Ok(Some(c)) => {
                tao_core::cli::note(
                    "tao-classify",
                    &format!(
                        "{}: {} ({}), rule {}, retry {}",
                        line.id().unwrap_or("?"),
                        serde_json::to_value(c.class)
                            .ok()
                            .and_then(|v| v.as_str().map(str::to_string))
                            .unwrap_or_default(),
                        c.subclass,
                        c.rule,
                        c.retry
                    ),
                );
                out.write(&line)?
            }
            Err(e) if tao_core::filter::is_bad_line(&e) => {
                // Loses nothing: the line goes on unclassified, the status says so.
                lines.bad_line(&e);
                let mut bytes = lines.raw_text().as_bytes().to_vec();
                bytes.push(b'\n');
                out.write_raw(&bytes)?;
            }
            Err(e) => return Err(e),
        }
    }
    Ok(lines.status())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Result<Args> {
        parse_args(list.iter().map(OsString::from))
    }

    #[test]
    fn parses_repeatable_options_and_defaults() {
        let a = args(&[
            "--log",
            "a.out",
            "--log=b.err",
            "--rules",
            "r.toml",
            "--max-attempts",
            "5",
        ])
        .unwrap();
        assert_eq!(a.logs, vec![PathBuf::from("a.out"), PathBuf::from("b.err")]);
        assert_eq!((a.rules.len(), a.max_attempts), (1, 5));
        assert_eq!(args(&[]).unwrap().max_attempts, DEFAULT_MAX_ATTEMPTS);
    }

    #[test]
    fn every_flag_of_the_table_parses() {
        for f in SPEC.flags {
            let mut a = vec![format!("--{}", f.long)];
            if let tao_core::flags::Takes::Value(_) = f.takes {
                a.push(f.default.unwrap_or("x").into());
            }
            let got = parse_args(a.iter().map(OsString::from));
            assert!(got.is_ok(), "{a:?}: {got:?}");
            if let Some(c) = f.short {
                assert!(args(&[&format!("-{c}")]).is_ok(), "-{c}");
            }
        }
    }

    #[test]
    fn usage_errors_exit_2() {
        for bad in [
            &["--max-attempts", "0"][..],
            &["--max-attempts", "x"],
            &["--bogus"],
            &["--log"],
            &["stray"],
        ] {
            let e = args(bad).unwrap_err();
            assert_eq!(e.code(), tao_core::exit::USAGE, "{bad:?}");
        }
    }

    #[test]
    fn help_and_version() {
        assert_eq!(args(&["-h"]).unwrap().print, Some(SPEC.short_help()));
        assert!(args(&["--help"])
            .unwrap()
            .print
            .unwrap()
            .contains("Exit status:\n  0   every line classified"));
        assert!(args(&["--version"])
            .unwrap()
            .print
            .unwrap()
            .starts_with("tao-classify 0."));
    }

    #[test]
    fn filter_passes_bad_lines_on_and_reports_them() {
        let cat = Catalogue::builtin().unwrap();
        let input = b"{\"state\":\"RUNNING\",\"x\":1.50}\nnot json\n{\"state\":\"ERROR\"}\n\n{\"state\":\"ERROR\",\"slurm\":{\"native_state\":\"TIMEOUT\"}}\n";
        let mut out = LineWriter::new(Vec::new());
        let mut err = Vec::new();
        let code = filter(&input[..], &mut out, &mut err, &cat, &Options::default()).unwrap();
        assert_eq!(code, 65);
        let out = String::from_utf8(out.into_inner()).unwrap();
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[0], "{\"state\":\"RUNNING\",\"x\":1.50}");
        assert_eq!(lines[1], "{\"state\":\"ERROR\"}");
        assert!(lines[2].contains("\"class\":\"scheduler\""));
        let err = String::from_utf8(err).unwrap();
        assert!(
            err.contains("line 2, column") && err.contains("line 3: state is ERROR"),
            "{err}"
        );
    }
}
