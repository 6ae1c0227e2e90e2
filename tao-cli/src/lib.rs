//! Command-line parsing shared by the tools that use clap (tao-record,
//! tao-poll, tao-submit): clap's errors in the house style, one line
//! `tool: error: <what>; see tool [COMMAND] --help` with exit 2
//! (`tao_core::Error::Usage`), instead of clap's multi-line block (error,
//! context lines, `Usage:`, `For more information`). `--help` and
//! `--version` still print on stdout with exit 0.
//!
//! A crate of its own so that tao-core, which every tool (the lexopt
//! filters included) links, stays free of clap. [`table`] turns a lexopt
//! tool's flag table (`tao_core::flags`) into a `clap::Command` for the
//! man pages and completions.

pub mod table;

use std::ffi::OsString;

use clap::error::ErrorKind;
use tao_core::Error;

/// The outcome of parsing a command line that is not a usage error.
#[derive(Debug)]
pub enum Parsed<P> {
    /// The parsed arguments: run the tool.
    Args(P),
    /// Help or version was printed (exit 0), or a command's help went to
    /// stderr because no subcommand was named (exit 2): exit with this.
    Done(i32),
}

/// The one-line text of a clap error: the content lines after `error:` up
/// to `Usage:` (or `For more information`), trimmed and joined with spaces
/// (clap's `tip:` lines with `; `), so the argument names clap lists under
/// the first line ("the following required arguments were not provided:
/// <ID>") are kept; then `; see <command> --help`. It does not start with
/// `error:` (`tao_core::cli::report` adds `tool: error: `).
///
/// Input: the command to name for help (`"tao-poll"`, `"tao-record
/// open"`) and clap's error. Output: one line without control characters.
pub fn usage_line(command: &str, e: &clap::Error) -> String {
    usage_line_from_text(command, &e.render().to_string())
}

/// [`usage_line`] on clap's rendered text (for tests).
pub fn usage_line_from_text(command: &str, text: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    let mut started = false;
    for raw in text.lines() {
        let l = raw.trim();
        if !started {
            if let Some(rest) = l.strip_prefix("error:") {
                started = true;
                parts.push(rest.trim());
            }
            continue;
        }
        if l.starts_with("Usage:") || l.starts_with("For more information") {
            break;
        }
        if !l.is_empty() {
            parts.push(l);
        }
    }
    let mut what = String::new();
    for p in parts.into_iter().filter(|p| !p.is_empty()) {
        if !what.is_empty() {
            what.push_str(if p.starts_with("tip:") { "; " } else { " " });
        }
        what.push_str(p);
    }
    if what.is_empty() {
        what = text
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .unwrap_or("invalid arguments")
            .to_string();
    }
    tao_core::cli::one_line(&format!("{what}; see {command} --help"))
}

/// A value parser for a flag that stands for an environment variable whose
/// value a library checks (`--transport` for `TAO_TRANSPORT`, checked by
/// `tao_ssh::TransportKind::parse`): it takes any UTF-8 text as it is, so
/// the flag and the variable go through the one check, with the same
/// error text and exit status; `names` are listed as the possible values
/// in `--help`, the man page and the shell completions.
///
/// Input: the names the checking function accepts (its own list, e.g.
/// `tao_ssh::TransportKind::NAMES`). Output: the value as a `String`.
/// Errors: clap's invalid-UTF-8 error (exit 2) only.
#[derive(Debug, Clone, Copy)]
pub struct CheckedLater(pub &'static [&'static str]);

impl clap::builder::TypedValueParser for CheckedLater {
    type Value = String;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        _arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<String, clap::Error> {
        value
            .to_str()
            .map(str::to_string)
            .ok_or_else(|| clap::Error::new(ErrorKind::InvalidUtf8).with_cmd(cmd))
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(
            self.0.iter().map(|n| clap::builder::PossibleValue::new(*n)),
        ))
    }
}

/// The subcommand of `P` that `args` (program name first) name: the first
/// argument that is not an option, if it is one of `P`'s subcommands (the
/// global options of the tools take no value before it).
pub fn subcommand_of<P: clap::CommandFactory>(args: &[OsString]) -> Option<String> {
    let first = args
        .iter()
        .skip(1)
        .filter_map(|a| a.to_str())
        .find(|a| !a.starts_with('-'))?;
    P::command()
        .find_subcommand(first)
        .map(|c| c.get_name().to_string())
}

/// Parse `args` (program name first) as `P`.
///
/// Output: [`Parsed::Args`]; or, after printing, [`Parsed::Done`] with 0
/// (`--help`, `--version`: on stdout, plain text) or 2 (no subcommand
/// where one is required: the command's help on stderr).
///
/// Errors: [`Error::Usage`] (exit 2) with [`usage_line`], naming `tool
/// SUBCOMMAND --help` when the arguments named a subcommand;
/// [`Error::Io`] (exit 74) when the help could not be written for another
/// reason than a closed pipe (a closed pipe is `Done(0)`: help changes
/// nothing, so a reader that stopped early, `--help | head -c 1`, is no
/// failure of any tool).
pub fn parse<P, I, T>(tool: &str, args: I) -> Result<Parsed<P>, Error>
where
    P: clap::Parser,
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    match P::try_parse_from(&args) {
        Ok(p) => Ok(Parsed::Args(p)),
        Err(e) => match e.kind() {
            ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
                // Help changes nothing: a reader that went away early
                // (`--help | head -c 1`) is no failure (exit 0 quietly);
                // any other write error is exit 74.
                match tao_core::cli::write_stdout(e.to_string().as_bytes()) {
                    Err(err) if !tao_core::cli::is_broken_pipe(&err) => Err(err),
                    _ => Ok(Parsed::Done(tao_core::exit::OK)),
                }
            }
            ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
                tao_core::cli::write_stderr(&e.to_string());
                Ok(Parsed::Done(tao_core::exit::USAGE))
            }
            _ => {
                let command = match subcommand_of::<P>(&args) {
                    Some(sub) => format!("{tool} {sub}"),
                    None => tool.to_string(),
                };
                Err(Error::Usage(usage_line(&command, &e)))
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{Parser, Subcommand};

    #[derive(Debug, Parser)]
    #[command(name = "t")]
    struct T {
        #[arg(value_name = "ID")]
        id: String,
        #[arg(short = 'n', long = "lines", value_name = "N", default_value_t = 1)]
        lines: u64,
    }

    #[derive(Debug, Parser)]
    #[command(name = "s")]
    struct S {
        #[arg(short, long, global = true)]
        quiet: bool,
        #[command(subcommand)]
        cmd: Sub,
    }

    #[derive(Debug, Subcommand)]
    enum Sub {
        Open {
            #[arg(long, value_name = "TIME")]
            time: String,
        },
    }

    fn line(args: &[&str]) -> String {
        match parse::<T, _, _>("t", std::iter::once("t").chain(args.iter().copied())) {
            Err(e) => {
                assert_eq!(e.code(), 2);
                e.to_string()
            }
            Ok(p) => panic!("parsed: {p:?}"),
        }
    }

    #[test]
    fn required_arguments_keep_their_names() {
        let l = line(&[]);
        assert!(
            l.starts_with("the following required arguments were not provided: <ID>"),
            "{l}"
        );
        assert!(l.ends_with("; see t --help"), "{l}");
        assert!(!l.contains('\n'));
    }

    #[test]
    fn invalid_values_and_unknown_flags_are_one_line() {
        let l = line(&["x", "-n", "abc"]);
        assert!(
            l.starts_with("invalid value 'abc' for '--lines <N>'"),
            "{l}"
        );
        assert!(!l.contains("Usage") && !l.contains("For more"), "{l}");
        let l = line(&["x", "--linez", "3"]);
        assert!(
            l.starts_with(
                "unexpected argument '--linez' found; tip: a similar argument exists: '--lines'"
            ),
            "{l}"
        );
        assert!(!l.contains('\n'));
    }

    #[test]
    fn a_named_subcommand_is_named_in_the_help_hint() {
        let e = parse::<S, _, _>("s", ["s", "-q", "open"]).unwrap_err();
        let l = e.to_string();
        assert!(l.contains("--time <TIME>"), "{l}");
        assert!(l.ends_with("; see s open --help"), "{l}");
        let e = parse::<S, _, _>("s", ["s", "--bogus", "open", "--time", "1"]).unwrap_err();
        assert!(e.to_string().ends_with("; see s open --help"), "{e}");
    }

    #[test]
    fn help_version_and_a_missing_subcommand_are_done() {
        assert!(matches!(
            parse::<T, _, _>("t", ["t", "--help"]),
            Ok(Parsed::Done(0))
        ));
        assert!(matches!(parse::<S, _, _>("s", ["s"]), Ok(Parsed::Done(2))));
        assert!(matches!(
            parse::<T, _, _>("t", ["t", "x"]),
            Ok(Parsed::Args(T { lines: 1, .. }))
        ));
    }

    #[test]
    fn text_without_an_error_line_still_says_something() {
        assert_eq!(
            usage_line_from_text("t", ""),
            "invalid arguments; see t --help"
        );
    }
}
