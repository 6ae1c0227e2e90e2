//! The filter: arguments (lexopt, as for the project's other small
//! filters), then one job line in, one line out, with `script` added.
//!
//! Exit statuses: 0 all lines rendered (or passed through with an earlier
//! tool's `error`); 1 some lines were refused and carry
//! `error = {tool: "tao-render", code: "refused", message}`; 2 usage;
//! 65 malformed input (a line that is not a JSON object, or lacks a required
//! field: reported on stderr with its line number; a JSON object goes on with
//! `error.code = "data"`, a non-JSON line cannot be printed and is dropped
//! after the report; every other line is still rendered); 74 output failed;
//! 78 site profile unusable.
//!
//! `--print` prints the bare script instead, for people who want to read
//! it. It takes exactly one job line: several scripts concatenated would not
//! be a script, and `jq -r .script.text` already prints many.

use std::ffi::OsString;
use std::io::{BufRead, Write};

use tao_core::site::SiteProfile;
use tao_core::{Error, JobLine, LineReader, LineWriter, Result};

use crate::TOOL;
use tao_script::job::RenderOptions;
use tao_script::render_line_with;

/// Parsed command line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Options {
    /// `--print`: print the bare script of the one input line.
    pub print: bool,
    /// `--allow-unlimited`: kept for old command lines, no effect (an
    /// unlimited wall time is accepted where the partition allows it).
    pub allow_unlimited: bool,
    /// `--site-profile NAME|FILE` (else TAO_SITE_PROFILE, else `cs-oci-ord`).
    pub site_profile: Option<String>,
}

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// Render.
    Run(Options),
    /// `-h` (short) or `--help` (long).
    Help {
        /// Whether the long help was asked for.
        long: bool,
    },
    /// `--version`.
    Version,
}

/// Short help (`-h`).
pub const SHORT_HELP: &str = "\
tao-render: render job lines into sbatch scripts

Usage: tao-render [--print] [--allow-unlimited] [--site-profile NAME|FILE] < lines

  --print                 print the bare script of one job line
  --allow-unlimited       no effect (kept for old command lines)
  --site-profile NAME     site profile (built-in name or TOML file)
  -q, --quiet             print no warnings (errors are always printed)
  -v, --verbose           print what the tool does
  -h, --help              short / long help
  -V, --version           print the version
";

/// Long help (`--help`).
pub const LONG_HELP: &str = "\
tao-render: render job lines into sbatch scripts

Usage: tao-render [--print] [--allow-unlimited] [--site-profile NAME|FILE] < lines

Reads job lines (tao-jobline(7)) on standard input and writes each one back
with `script = {template, sha256, text, bindings, resources, image}` added.
The template is `single` (one node) or `multi` (two or more nodes). Lines
that arrive with an `error` from an earlier tool pass through untouched.

Every value reaching the shell is single-quoted by the template escaper;
values on #SBATCH lines must match a strict character set. A line breaking
a rule (wall time above its partition's limit, a partition the site profile
does not list, a reserved env or secret name, a relative or non-.sqsh image,
a bad #SBATCH value, ...) gets `error` and goes on. The rules are the ones
`tao-record open` applies (tao-core's request module): a line it opened
renders.

Options:
  --print
      Print the bare script instead of the job line. Takes exactly one job
      line (for many, use: tao-render | jq -r .script.text).
  --allow-unlimited
      No effect; kept so old command lines still work. `0`, `-1`, `INFINITE`
      and `UNLIMITED` are accepted as resources.time wherever the partition's
      limit in the site profile is unlimited (or the profile does not list
      the partition), and refused where it is finite, as tao-record open does.
  --site-profile NAME|FILE
      Site profile: `local`, `cs-oci-ord`, or a TOML file. Default: the
      TAO_SITE_PROFILE environment variable, else `cs-oci-ord`.
  -q, --quiet
      Print no warnings on standard error; errors are always printed.
  -v, --verbose
      Print what the tool does on standard error (one line per line rendered).
  -h, --help
      Print short (-h) or long (--help) help.
  -V, --version
      Print the version.

Exit status:
  0 all rendered; 1 some lines refused (they carry `error`); 2 usage;
  65 malformed input line; 74 output failed; 78 bad site profile.
";

/// Parse the arguments (without the program name).
///
/// Errors: [`Error::Usage`] for an unknown option, a missing value or a
/// positional argument.
pub fn parse_args<I>(args: I) -> Result<Command>
where
    I: IntoIterator<Item = OsString>,
{
    use lexopt::prelude::*;
    let usage = |e: lexopt::Error| Error::Usage(format!("{e}; see `tao-render --help`"));
    let mut opts = Options::default();
    let (mut quiet, mut verbose) = (false, 0u8);
    let mut parser = lexopt::Parser::from_args(args);
    while let Some(arg) = parser.next().map_err(usage)? {
        match arg {
            Short('q') | Long("quiet") => quiet = true,
            Short('v') | Long("verbose") => verbose = verbose.saturating_add(1),
            Short('h') => return Ok(Command::Help { long: false }),
            Long("help") => return Ok(Command::Help { long: true }),
            Short('V') | Long("version") => return Ok(Command::Version),
            Long("print") => opts.print = true,
            Long("allow-unlimited") => opts.allow_unlimited = true,
            Long("site-profile") => {
                let v = parser.value().map_err(usage)?;
                let v = v
                    .into_string()
                    .map_err(|_| Error::Usage("--site-profile: the value is not UTF-8".into()))?;
                opts.site_profile = Some(v);
            }
            other => return Err(usage(other.unexpected())),
        }
    }
    tao_core::cli::set_verbosity(quiet, verbose);
    Ok(Command::Run(opts))
}

/// The whole tool: parse `args`, read standard input, write standard output.
/// Returns the exit status (see the module doc).
///
/// Errors: [`Error::Usage`], [`Error::Config`] (site profile),
/// [`Error::Io`] (output).
pub fn main<I>(args: I) -> Result<i32>
where
    I: IntoIterator<Item = OsString>,
{
    match parse_args(args)? {
        Command::Help { long } => {
            tao_core::cli::write_stdout(if long { LONG_HELP } else { SHORT_HELP }.as_bytes())?;
            Ok(0)
        }
        Command::Version => {
            tao_core::cli::write_stdout(
                format!("{TOOL} {}\n", env!("CARGO_PKG_VERSION")).as_bytes(),
            )?;
            Ok(0)
        }
        Command::Run(opts) => {
            let profile = SiteProfile::load(opts.site_profile.as_deref())?;
            let stdin = tao_core::cli::piped_stdin("tao-record show ID | tao-render", None)?;
            let stdout = std::io::stdout().lock();
            let mut stderr = std::io::stderr().lock();
            run(&opts, &profile, stdin, stdout, &mut stderr)
        }
    }
}

fn report(stderr: &mut dyn Write, msg: &str) {
    let _ = writeln!(stderr, "{TOOL}: error: {}", tao_core::cli::one_line(msg));
}

/// Outcome of one line.
enum Outcome {
    Rendered(JobLine, String),
    PassedOn(JobLine),
    Refused(JobLine),
    Malformed(Option<JobLine>),
}

fn render_one(
    next: Result<JobLine>,
    opts: &Options,
    profile: &SiteProfile,
    stderr: &mut dyn Write,
) -> Result<Outcome> {
    let mut line = match next {
        Ok(line) => line,
        Err(e @ (Error::BadLine { .. } | Error::BadJson { .. })) => {
            report(stderr, &e.to_string());
            return Ok(Outcome::Malformed(None));
        }
        Err(e) => return Err(e),
    };
    if line.has_error() {
        return Ok(Outcome::PassedOn(line));
    }
    let ropts = RenderOptions {
        allow_unlimited: opts.allow_unlimited,
    };
    match render_line_with(&line, profile, ropts) {
        Ok(script) => {
            tao_core::cli::note(
                TOOL,
                &format!(
                    "rendered {} with template {} (sha256 {})",
                    line.id().unwrap_or("?"),
                    script.template,
                    script.sha256
                ),
            );
            let text = script.text.clone();
            let value = serde_json::to_value(&script)
                .map_err(|e| Error::Internal(format!("serialising script: {e}")))?;
            line.fields.insert("script".into(), value);
            Ok(Outcome::Rendered(line, text))
        }
        Err(e @ Error::BadLine { .. }) => {
            report(stderr, &e.to_string());
            line.set_error(TOOL, &e);
            Ok(Outcome::Malformed(Some(line)))
        }
        Err(e @ Error::Config(_)) => Err(e),
        Err(e) => {
            let id = line.id().unwrap_or("?").to_string();
            report(stderr, &format!("line {} ({id}): {e}", line.line_no));
            let code = if matches!(e, Error::Internal(_)) {
                "internal"
            } else {
                "refused"
            };
            line.set_error_parts(TOOL, code, &e.to_string());
            Ok(Outcome::Refused(line))
        }
    }
}

/// Run the filter over `input`, writing lines (or, with `--print`, the one
/// script) to `output` and messages to `stderr`. Returns the exit status.
///
/// Errors: [`Error::Io`] when reading or writing fails; [`Error::Usage`]
/// for `--print` with other than one line; [`Error::Config`] for a profile
/// that breaks a render.
pub fn run<R: BufRead, W: Write>(
    opts: &Options,
    profile: &SiteProfile,
    input: R,
    output: W,
    stderr: &mut dyn Write,
) -> Result<i32> {
    let mut reader = LineReader::new(input);
    let mut malformed = false;
    let mut refused = false;
    if opts.print {
        let mut outcomes = Vec::new();
        for next in reader.by_ref() {
            outcomes.push(render_one(next, opts, profile, stderr)?);
        }
        if outcomes.len() != 1 {
            return Err(Error::Usage(format!(
                "--print takes exactly one job line, got {}; for many, use `tao-render | jq -r .script.text`",
                outcomes.len()
            )));
        }
        return match outcomes.pop().expect("one outcome") {
            Outcome::Rendered(_, text) => {
                let mut out = output;
                out.write_all(text.as_bytes())
                    .and_then(|_| out.flush())
                    .map_err(|e| Error::io("writing standard output", e))?;
                Ok(0)
            }
            Outcome::PassedOn(line) => {
                let msg = line
                    .get_str(&["error", "message"])
                    .unwrap_or("the line carries an error")
                    .to_string();
                report(
                    stderr,
                    &format!("line {}: no script: earlier error: {msg}", line.line_no),
                );
                Ok(1)
            }
            Outcome::Refused(_) => Ok(1),
            Outcome::Malformed(_) => Ok(tao_core::exit::DATAERR),
        };
    }
    let mut writer = LineWriter::new(output);
    for next in reader {
        match render_one(next, opts, profile, stderr)? {
            Outcome::Rendered(line, _) | Outcome::PassedOn(line) => writer.write(&line)?,
            Outcome::Refused(line) => {
                refused = true;
                writer.write(&line)?;
            }
            Outcome::Malformed(line) => {
                malformed = true;
                if let Some(line) = line {
                    writer.write(&line)?;
                }
            }
        }
    }
    Ok(if malformed {
        tao_core::exit::DATAERR
    } else if refused {
        tao_core::exit::SOME_FAILED
    } else {
        0
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<OsString> {
        a.iter().map(OsString::from).collect()
    }

    #[test]
    fn parses_options() {
        assert_eq!(
            parse_args(args(&["-h"])).unwrap(),
            Command::Help { long: false }
        );
        assert_eq!(
            parse_args(args(&["--help"])).unwrap(),
            Command::Help { long: true }
        );
        assert_eq!(parse_args(args(&["--version"])).unwrap(), Command::Version);
        let Command::Run(o) = parse_args(args(&[
            "--print",
            "--allow-unlimited",
            "--site-profile",
            "local",
        ]))
        .unwrap() else {
            panic!()
        };
        assert!(o.print && o.allow_unlimited);
        assert_eq!(o.site_profile.as_deref(), Some("local"));
        let Command::Run(o) = parse_args(args(&["--site-profile=x.toml"])).unwrap() else {
            panic!()
        };
        assert_eq!(o.site_profile.as_deref(), Some("x.toml"));
    }

    #[test]
    fn usage_errors_exit_2() {
        for bad in [&["--nope"][..], &["file"], &["--site-profile"]] {
            let e = parse_args(args(bad)).unwrap_err();
            assert_eq!(e.code(), 2, "{bad:?}");
            assert!(e.to_string().contains("--help"));
        }
    }
}
