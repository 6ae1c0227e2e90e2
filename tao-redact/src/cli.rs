//! The command line of `tao-redact` (lexopt: a small filter with full
//! control of its help text, as ripgrep does) and the two commands it runs.
//!
//! Exit statuses (tao_core::exit): 0 ok; 2 usage; 3 lint blocked at least
//! one script (a literal secret, xtrace on a job with secrets, a syntax
//! error); 65 a job line without `script.text`, not JSON, or a script
//! file that is not UTF-8 (a bad job line is reported and lint goes on:
//! `tao_core::filter`); 74 local I/O; 78 a bad `--rules` file.

use std::io::Write;
use std::path::PathBuf;

use tao_core::filter::Counts;

use crate::spec::SPEC;
use tao_core::{Error, Filter, JobLine, LineWriter, OnBadLine, Result};

use tao_secrets::{LineRedactors, Lint, Redactor};

const TOOL: &str = "tao-redact";

/// What the command line asks for.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Args {
    /// `lint` given.
    pub lint: bool,
    /// Script files for `lint`.
    pub files: Vec<PathBuf>,
    /// `--rules FILE`, in order.
    pub rules: Vec<PathBuf>,
    /// `--secret-env NAME`, in order.
    pub secret_env: Vec<String>,
    /// `--list-rules`.
    pub list_rules: bool,
    /// `-h` (Some(false)) or `--help` (Some(true)).
    pub help: Option<bool>,
    /// `-V`/`--version`.
    pub version: bool,
    /// `-q`/`--quiet`: no warnings.
    pub quiet: bool,
    /// Number of `-v`/`--verbose`.
    pub verbose: u8,
}

/// Parse the arguments (without the program name).
///
/// Errors: [`Error::Usage`] (exit 2) for an unknown option, a missing
/// value, a bad variable name, or files without `lint`.
pub fn parse_args<I>(args: I) -> Result<Args>
where
    I: IntoIterator,
    I::Item: Into<std::ffi::OsString>,
{
    use lexopt::prelude::*;
    let mut p = lexopt::Parser::from_args(args);
    let mut a = Args::default();
    let usage = |e: lexopt::Error| Error::Usage(format!("{e}; try 'tao-redact --help'"));
    while let Some(arg) = p.next().map_err(usage)? {
        let flag = match &arg {
            Short(c) => SPEC.lookup_short(*c),
            Long(l) => SPEC.lookup_long(l),
            Value(_) => None,
        };
        match (flag.map(|f| f.long), arg) {
            (Some("help"), Short(_)) => a.help = Some(false),
            (Some("help"), _) => a.help = Some(true),
            (Some("version"), _) => a.version = true,
            (Some("quiet"), _) => a.quiet = true,
            (Some("verbose"), _) => a.verbose = a.verbose.saturating_add(1),
            (Some("list-rules"), _) => a.list_rules = true,
            (Some("rules"), _) => a.rules.push(p.value().map_err(usage)?.into()),
            (Some("secret-env"), _) => {
                let name = p.value().map_err(usage)?.string().map_err(usage)?;
                let valid = !name.is_empty()
                    && !name.starts_with(|c: char| c.is_ascii_digit())
                    && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
                if !valid {
                    return Err(Error::Usage(format!(
                        "--secret-env '{name}': not a variable name; give the NAME of the variable, never its value"
                    )));
                }
                a.secret_env.push(name);
            }
            (None, Value(v)) if !a.lint && a.files.is_empty() => {
                if v == "lint" {
                    a.lint = true;
                } else {
                    return Err(Error::Usage(format!(
                        "unexpected argument '{}'; the only command is 'lint' (no command: filter stdin)",
                        v.to_string_lossy()
                    )));
                }
            }
            (None, Value(v)) if a.lint => a.files.push(v.into()),
            (_, other) => return Err(usage(other.unexpected())),
        }
    }
    Ok(a)
}

/// Run `tao-redact` with `args`; returns the exit status.
///
/// Errors: see the module docs for the statuses.
pub fn run<I>(args: I) -> Result<i32>
where
    I: IntoIterator,
    I::Item: Into<std::ffi::OsString>,
{
    let a = parse_args(args)?;
    tao_core::cli::set_verbosity(a.quiet, a.verbose);
    let stdout = std::io::stdout();
    if let Some(long) = a.help {
        let mut out = stdout.lock();
        let text = if long {
            SPEC.long_help()
        } else {
            SPEC.short_help()
        };
        out.write_all(text.as_bytes())
            .and_then(|_| out.flush())
            .map_err(|e| Error::io("writing standard output", e))?;
        return Ok(0);
    }
    if a.version {
        let mut out = stdout.lock();
        writeln!(out, "{TOOL} {}", env!("CARGO_PKG_VERSION"))
            .and_then(|_| out.flush())
            .map_err(|e| Error::io("writing standard output", e))?;
        return Ok(0);
    }
    let mut extra = Vec::new();
    for path in &a.rules {
        extra.extend(tao_secrets::rules::read_rules_file(path)?);
    }
    // An unset --secret-env name is warned about once, by LineRedactors.
    // A job's unset secret is tao-submit's one error, not a warning here.
    let reds = LineRedactors::with(TOOL, extra, a.secret_env.clone()).without_job_unset_warnings();
    let red = reds.for_names(&[])?;
    for name in red.skipped_secrets() {
        tao_core::cli::warn(
            TOOL,
            &format!(
                "{name} is shorter than {} bytes; its value is not masked by value (patterns still apply)",
                tao_secrets::MIN_EXACT_LEN
            ),
        );
    }
    if a.list_rules {
        let mut out = stdout.lock();
        for r in red.rules() {
            writeln!(out, "{}\t{}\t{}", r.id, r.description, r.source)
                .map_err(|e| Error::io("writing standard output", e))?;
        }
        out.flush()
            .map_err(|e| Error::io("writing standard output", e))?;
        return Ok(0);
    }
    if !a.lint {
        // Straight to fd 1 (a dup of it): Rust's stdout is line-buffered,
        // and its newline search over every write costs a pass over the
        // output of a long line. Our filter writes whole batches anyway.
        use std::os::fd::AsFd;
        let out = stdout
            .as_fd()
            .try_clone_to_owned()
            .map_err(|e| Error::io("duplicating standard output", e))?;
        red.filter(std::io::stdin().lock(), std::fs::File::from(out))?;
        return Ok(0);
    }
    let (blocked, counts) = if a.files.is_empty() {
        lint_stdin(&reds)?
    } else {
        (lint_files(&red, &a.files)?, Counts::default())
    };
    let fatal = (blocked > 0).then(|| {
        Error::LintBlocked(format!(
            "{blocked} script(s) blocked: literal secrets found; pass secrets by name (`secrets` field, \"$NAME\" in the script), never by value"
        ))
    });
    // A bad line (65) wins over a blocked script (3); both are reported.
    counts.finish(TOOL, fatal)
}

fn report(source: &str, lint: &Lint) {
    for f in &lint.findings {
        let msg = match &f.step {
            None => format!(
                "{source}: script line {}, column {}: {}: {}",
                f.line, f.column, f.rule, f.preview
            ),
            Some(_) => format!("{source}: {}: {}", f.rule, f.preview),
        };
        tao_core::cli::warn(TOOL, &msg);
    }
}

/// Lint job lines from stdin (`tao_core::filter`, going on after a bad
/// line: a line that is not JSON is reported and dropped, a line without
/// `script.text` is reported and goes on with `error.code =
/// "missing_stage"`);
/// returns the number of blocked scripts and the counts.
fn lint_stdin(reds: &LineRedactors) -> Result<(usize, Counts)> {
    let stdin = tao_core::cli::piped_stdin(
        "tao-record show ID | tao-render | tao-redact lint",
        Some("name script files (tao-redact lint job.sbatch)"),
    )?;
    let mut lines = Filter::new(TOOL, stdin, OnBadLine::GoOn)
        .with_not_lines_fix("pass the file as an argument: tao-redact lint FILE");
    let mut writer = LineWriter::new(std::io::stdout().lock());
    let mut blocked = 0;
    while let Some(mut line) = lines.next_line()? {
        if line.has_error() && line.get_str(&["script", "text"]).is_none() {
            writer.write(&line)?;
            continue;
        }
        if line.get_str(&["script", "text"]).is_none() {
            let e = Error::MissingStage {
                line: line.line_no,
                message: "missing string field `script.text`; pipe the job line through `tao-render` first"
                    .into(),
            };
            lines.bad_line(&e);
            line.set_error(TOOL, &e);
            writer.write(&line)?;
            continue;
        }
        let lint = match tao_secrets::lint_job(&line, reds) {
            Ok(lint) => lint,
            Err(e) if tao_core::filter::is_bad_line(&e) => {
                lines.bad_line(&e);
                line.set_error(TOOL, &e);
                writer.write(&line)?;
                continue;
            }
            Err(e) => return Err(e),
        };
        tao_core::cli::note(
            TOOL,
            &format!(
                "line {} ({}): {} ({} findings)",
                line.line_no,
                line.id().unwrap_or("no id"),
                if lint.ok { "approved" } else { "blocked" },
                lint.findings.len()
            ),
        );
        if !lint.ok {
            blocked += 1;
            let who = match line.id() {
                Some(id) => format!("line {} (job {id})", line.line_no),
                None => format!("line {}", line.line_no),
            };
            report(&who, &lint);
        }
        line.set_path(&["lint"], lint.to_value());
        writer.write(&line)?;
    }
    Ok((blocked, lines.counts()))
}

/// Lint script files; one `{"file", "lint"}` line per file.
fn lint_files(red: &Redactor, files: &[PathBuf]) -> Result<usize> {
    let mut writer = LineWriter::new(std::io::stdout().lock());
    let mut blocked = 0;
    for path in files {
        let shown = path.display().to_string();
        let bytes =
            std::fs::read(path).map_err(|e| Error::io(format!("reading script '{shown}'"), e))?;
        let text = String::from_utf8(bytes).map_err(|e| {
            Error::Data(format!(
                "'{shown}': not UTF-8 at byte {}; scripts must be UTF-8 text",
                e.utf8_error().valid_up_to()
            ))
        })?;
        let lint = red.lint(&text);
        if !lint.ok {
            blocked += 1;
            report(&shown, &lint);
        }
        let mut out = JobLine::new();
        out.set_path(&["file"], serde_json::Value::String(shown));
        out.set_path(&["lint"], lint.to_value());
        writer.write(&out)?;
    }
    Ok(blocked)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_commands_and_options() {
        let a = parse_args(["lint", "--secret-env", "WANDB_API_KEY", "a.sh", "b.sh"]).unwrap();
        assert!(a.lint);
        assert_eq!(a.files.len(), 2);
        assert_eq!(a.secret_env, ["WANDB_API_KEY"]);
        let a = parse_args(["--rules", "r.toml"]).unwrap();
        assert!(!a.lint && a.rules.len() == 1);
        assert_eq!(parse_args(["-h"]).unwrap().help, Some(false));
        assert_eq!(parse_args(["--help"]).unwrap().help, Some(true));
    }

    #[test]
    fn every_flag_of_the_table_parses() {
        for f in SPEC.flags {
            let mut a = vec![format!("--{}", f.long)];
            if let tao_core::flags::Takes::Value(_) = f.takes {
                a.push("X".into());
            }
            assert!(parse_args(a.clone()).is_ok(), "{a:?}");
            a.insert(0, "lint".into());
            assert!(parse_args(a.clone()).is_ok(), "{a:?}");
            if let Some(c) = f.short {
                assert!(parse_args([format!("-{c}")]).is_ok(), "-{c}");
            }
        }
    }

    #[test]
    fn usage_errors_exit_2() {
        for bad in [
            vec!["--nope"],
            vec!["scan"],
            vec!["--rules"],
            vec!["--secret-env", "hf_FAKE=x"],
        ] {
            let e = parse_args(bad.clone()).unwrap_err();
            assert_eq!(e.code(), 2, "{bad:?}: {e}");
        }
    }
}
