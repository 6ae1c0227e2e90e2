//! The filter: arguments (lexopt, as for the project's other small
//! filters), then one job line in, one line out, with `script` added.
//!
//! Exit statuses: 0 all lines rendered (or passed through with an earlier
//! tool's `error`); 1 some lines were refused and carry
//! `error = {tool: "tao-render", code: "refused", message}`; 2 usage;
//! 65 malformed input (a line that is not a JSON object, or lacks a required
//! field: reported on stderr with its line number; a JSON object goes on with
//! `error.code = "data"`, or `"missing_stage"` for a field tao-record open
//! writes, a non-JSON line cannot be printed and is dropped
//! after the report; every other line is still rendered); 74 output failed;
//! 78 site profile unusable.
//!
//! `--print` prints the bare script instead, for people who want to read
//! it. It takes exactly one job line: several scripts concatenated would not
//! be a script, and `jq -r .script.text` already prints many.

use std::ffi::OsString;
use std::io::{BufRead, Write};

use tao_core::site::SiteProfile;
use tao_core::{Error, Filter, JobLine, LineWriter, OnBadLine, Result};

use crate::spec::SPEC;
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

/// Parse the arguments (without the program name), looking each flag up in
/// [`SPEC`].
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
        let flag = match &arg {
            Short(c) => SPEC.lookup_short(*c),
            Long(l) => SPEC.lookup_long(l),
            Value(_) => None,
        };
        match (flag.map(|f| f.long), &arg) {
            (Some("quiet"), _) => quiet = true,
            (Some("verbose"), _) => verbose = verbose.saturating_add(1),
            (Some("help"), Short(_)) => return Ok(Command::Help { long: false }),
            (Some("help"), _) => return Ok(Command::Help { long: true }),
            (Some("version"), _) => return Ok(Command::Version),
            (Some("print"), _) => opts.print = true,
            (Some("allow-unlimited"), _) => opts.allow_unlimited = true,
            (Some("site-profile"), _) => {
                let v = parser.value().map_err(usage)?;
                let v = v
                    .into_string()
                    .map_err(|_| Error::Usage("--site-profile: the value is not UTF-8".into()))?;
                opts.site_profile = Some(v);
            }
            _ => return Err(usage(arg.unexpected())),
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
            let text = if long {
                SPEC.long_help()
            } else {
                SPEC.short_help()
            };
            tao_core::cli::write_stdout(text.as_bytes())?;
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

/// Outcome of one line.
enum Outcome {
    Rendered(JobLine, String),
    PassedOn(JobLine),
    Refused(JobLine),
    Malformed(JobLine),
}

fn render_one<R: BufRead>(
    mut line: JobLine,
    opts: &Options,
    profile: &SiteProfile,
    filter: &mut Filter<'_, R>,
) -> Result<Outcome> {
    if line.has_error() {
        return Ok(Outcome::PassedOn(line));
    }
    let ropts = RenderOptions {
        allow_unlimited: opts.allow_unlimited,
    };
    match render_line_with(&line, profile, ropts) {
        Ok(script) => {
            let asked = |k: &str| {
                line.get_path(&["resources", k])
                    .and_then(|v| v.as_u64())
                    .and_then(|v| u32::try_from(v).ok())
            };
            // The shape the rules derived (tao_core::request::gpu_shape) is
            // said once when it is not the one the line asks for.
            let notice = script.resources.as_ref().and_then(|r| {
                let (nodes, gpus_per_node) = (r.nodes?, r.gpus_per_node?);
                tao_core::request::shape_notice(
                    asked("nodes").unwrap_or(nodes),
                    asked("gpus_per_node").unwrap_or(gpus_per_node),
                    (nodes, gpus_per_node),
                    profile.max_gpus_per_node,
                    &profile.name,
                )
            });
            if let Some(n) = notice {
                tao_core::cli::warn(
                    TOOL,
                    &format!("line {} ({}): {n}", line.line_no, line.id().unwrap_or("?")),
                );
            }
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
        Err(e) if tao_core::filter::is_bad_line(&e) => {
            filter.bad_line(&e);
            line.set_error(TOOL, &e);
            Ok(Outcome::Malformed(line))
        }
        Err(e @ Error::Config(_)) => Err(e),
        Err(e) => {
            filter.failed();
            let id = line.id().unwrap_or("?").to_string();
            filter.report(&format!("line {} ({id}): {e}", line.line_no));
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
/// script) to `output` and messages to `stderr`. Returns the exit status
/// (`tao_core::filter`: bad lines are reported and the filter goes on).
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
    let mut filter = Filter::new(TOOL, input, OnBadLine::GoOn).with_errors(stderr);
    if opts.print {
        let mut outcomes = Vec::new();
        while let Some(line) = filter.next_line()? {
            outcomes.push(render_one(line, opts, profile, &mut filter)?);
        }
        let seen = outcomes.len() as u64 + filter.counts().malformed - malformed_objects(&outcomes);
        if seen != 1 {
            return Err(Error::Usage(format!(
                "--print takes exactly one job line, got {seen}; for many, use `tao-render | jq -r .script.text`"
            )));
        }
        return match outcomes.pop() {
            Some(Outcome::Rendered(_, text)) => {
                let mut out = output;
                out.write_all(text.as_bytes())
                    .and_then(|_| out.flush())
                    .map_err(|e| Error::io("writing standard output", e))?;
                Ok(0)
            }
            Some(Outcome::PassedOn(line)) => {
                let msg = line
                    .get_str(&["error", "message"])
                    .unwrap_or("the line carries an error")
                    .to_string();
                filter.report(&format!(
                    "line {}: no script: earlier error: {msg}",
                    line.line_no
                ));
                Ok(1)
            }
            Some(Outcome::Refused(_)) | Some(Outcome::Malformed(_)) | None => Ok(filter.status()),
        };
    }
    let mut writer = LineWriter::new(output);
    while let Some(line) = filter.next_line()? {
        match render_one(line, opts, profile, &mut filter)? {
            Outcome::Rendered(line, _)
            | Outcome::PassedOn(line)
            | Outcome::Refused(line)
            | Outcome::Malformed(line) => writer.write(&line)?,
        }
    }
    Ok(filter.status())
}

/// Lines that were parsed but lacked a field: counted as malformed by the
/// driver and present among the outcomes (so not counted twice by --print).
fn malformed_objects(outcomes: &[Outcome]) -> u64 {
    outcomes
        .iter()
        .filter(|o| matches!(o, Outcome::Malformed(_)))
        .count() as u64
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
    fn every_flag_of_the_table_parses() {
        for f in SPEC.flags {
            let mut a = vec![format!("--{}", f.long)];
            if let tao_core::flags::Takes::Value(_) = f.takes {
                a.push("x".into());
            }
            let got = parse_args(a.iter().map(OsString::from));
            assert!(got.is_ok(), "--{}: {got:?}", f.long);
            if let Some(c) = f.short {
                let got = parse_args([OsString::from(format!("-{c}"))]);
                assert!(got.is_ok(), "-{c}: {got:?}");
            }
        }
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
