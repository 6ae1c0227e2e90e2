//! Usage errors from clap in the house style: one line,
//! `tool: error: <what>; see tool --help`, exit 2 (tao-core's
//! `Error::Usage`). clap's own rendering is a multi-line block (error,
//! context lines, `Usage:`, `For more information`); this keeps the whole
//! first error sentence, with the argument names clap lists under it
//! ("the following required arguments were not provided: <ID>"), and
//! drops the rest. `--help` and `--version` still print normally, exit 0.
//!
//! Kept here, not in tao-core, so tao-core does not depend on clap; any
//! tool using clap can call [`usage_line`] (or [`parse_or_exit`]).

use clap::error::ErrorKind;
use tao_core::Error;

/// The one-line text of a clap error: the content lines after `error:` up
/// to `Usage:` (or `For more information`), trimmed and joined with
/// spaces (`tip:` lines with `; `), then `; see <tool> --help`. Does not start with `error:`
/// (`tao_core::cli::report` adds `tool: error: `).
///
/// Input: the tool name (`"tao-poll"`) and clap's error. Output: one line
/// without control characters (clap's rendering is plain text here).
pub fn usage_line(tool: &str, e: &clap::Error) -> String {
    usage_line_from_text(tool, &e.render().to_string())
}

/// [`usage_line`] on clap's rendered text (for tests).
pub fn usage_line_from_text(tool: &str, text: &str) -> String {
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
    // Content lines join with spaces; clap's `tip:` lines with "; ".
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
    tao_core::cli::one_line(&format!("{what}; see {tool} --help"))
}

/// Parse the command line with clap, or exit: help and version print on
/// stdout with exit 0; a missing-subcommand help goes to stderr with exit
/// 2; any other clap error prints one line `tool: error: <what>; see tool
/// --help` on stderr and exits 2 (`tao_core::exit::USAGE`).
///
/// Input: the tool name. Output: the parsed arguments (never returns on an
/// error).
pub fn parse_or_exit<P: clap::Parser>(tool: &str) -> P {
    match P::try_parse() {
        Ok(p) => p,
        Err(e) => match e.kind() {
            ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => e.exit(),
            ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
                eprint!("{}", e.render());
                std::process::exit(tao_core::exit::USAGE)
            }
            _ => {
                let err = Error::Usage(usage_line(tool, &e));
                tao_core::cli::report(tool, &err);
                std::process::exit(err.code())
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    #[command(name = "t")]
    struct T {
        #[arg(value_name = "ID")]
        id: String,
        #[arg(short = 'n', long = "lines", value_name = "N", default_value_t = 1)]
        lines: u64,
    }

    fn line(args: &[&str]) -> String {
        let e = T::try_parse_from(std::iter::once("t").chain(args.iter().copied())).unwrap_err();
        usage_line("t", &e)
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
    fn text_without_an_error_line_still_says_something() {
        assert_eq!(
            usage_line_from_text("t", ""),
            "invalid arguments; see t --help"
        );
    }
}
