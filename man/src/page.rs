//! Renders one section-1 page: clap_mangen's NAME, SYNOPSIS, DESCRIPTION
//! and OPTIONS from the tool's `clap::Command`, a COMMANDS section with
//! each subcommand's synopsis and options (clap_mangen's own subcommand
//! section only lists names and points at per-subcommand pages we do not
//! ship), then the hand-written sections of [`Extra`]: ENVIRONMENT, FILES,
//! EXIT STATUS, EXAMPLES, SEE ALSO.
//!
//! The output is deterministic (no date, no environment values), so the
//! checked-in pages can be compared byte for byte with a fresh generation.

use clap::{Arg, ArgAction, Command};
use clap_mangen::Man;
use roff::{bold, italic, roman, Inline, Roff};

/// The hand-written sections appended to a generated page. Every slice is
/// rendered in order; an empty slice omits its section.
#[derive(Debug, Clone, Default)]
pub struct Extra {
    /// ENVIRONMENT: (variable name, what it does for this tool).
    pub environment: Vec<(&'static str, &'static str)>,
    /// FILES: (path, what it is).
    pub files: Vec<(&'static str, &'static str)>,
    /// EXIT STATUS: (status, meaning for this tool); statuses are
    /// `tao_core::exit`'s.
    pub exit_status: Vec<(i32, &'static str)>,
    /// EXAMPLES: (what it does, the shell command). Commands may span
    /// lines; they are printed verbatim in a no-fill block.
    pub examples: Vec<(&'static str, &'static str)>,
    /// SEE ALSO: (page name, section).
    pub see_also: Vec<(&'static str, u8)>,
}

/// The manual name on every page's title line.
pub const MANUAL: &str = "tao-slurm manual";

/// The date on every page's title line. Fixed, so that generation is
/// reproducible (the drift test compares bytes): bump it when the pages'
/// sources change in a release.
pub const DATE: &str = "2026-11-29";

/// The two-line preamble roff output starts with (it defines the `Aq`
/// string used for apostrophes).
const PREAMBLE: &str = ".ie \\n(.g .ds Aq \\(aq\n.el .ds Aq '\n";

/// Put the pieces of a page together: every piece rendered by the roff
/// crate carries the preamble; keep one, after an optional first line
/// that must stay first (a preprocessor hint such as `'\" t`). Also
/// replace clap_mangen's `.br`, blank line, `.br` (before a list of
/// possible values), which `mandoc -T lint` warns about, with `.sp`.
pub fn finish(first_line: &str, body: &str) -> String {
    let body = body
        .replace(PREAMBLE, "")
        .replace("\n.br\n\n.br\n", "\n.sp\n");
    format!("{first_line}{PREAMBLE}{body}")
}

/// Escape plain text for a roff text line (backslashes, hyphens, leading
/// dots and quotes), via the roff crate.
pub fn text(s: &str) -> String {
    Roff::new().text([roman(s)]).to_roff().replace(PREAMBLE, "")
}

/// Render `(term, description)` pairs as a `.TP` list into `out`.
pub fn tagged_list<T: AsRef<str>>(out: &mut String, items: &[(T, &str)]) {
    for (term, desc) in items {
        let mut r = Roff::new();
        r.control("TP", []);
        r.text([bold(term.as_ref())]);
        r.text([roman(*desc)]);
        out.push_str(&r.to_roff());
    }
}

/// Render a verbatim block (examples, layouts) into `out`, indented.
pub fn verbatim(out: &mut String, body: &str) {
    out.push_str(".RS 4\n.nf\n");
    for line in body.lines() {
        let mut r = Roff::new();
        r.text([roman(line)]);
        let s = r.to_roff();
        if s.trim().is_empty() {
            out.push_str("\\&\n");
        } else {
            out.push_str(&s);
        }
    }
    out.push_str(".fi\n.RE\n");
}

/// The `.TH` line of a page that documents no command (tao-jobline(7),
/// tao-site-profile(5)): `title` (upper case), `section`, [`DATE`], the
/// version and [`MANUAL`]. Output: roff source ending in a newline.
pub fn title_line(title: &str, section: &str) -> String {
    let mut r = Roff::new();
    r.control(
        "TH",
        [
            title,
            section,
            DATE,
            &format!("tao-slurm {}", crate::commands::VERSION),
            MANUAL,
        ],
    );
    r.to_roff()
}

/// Render a paragraph (`.PP`, then the text) into `out`.
pub fn para(out: &mut String, s: &str) {
    out.push_str(".PP\n");
    out.push_str(&text(s));
}

/// Render a `.SH` heading into `out`.
pub fn heading(out: &mut String, title: &str) {
    let mut r = Roff::new();
    r.control("SH", [title]);
    out.push_str(&r.to_roff());
}

/// Render the SEE ALSO line into `out`.
pub fn see_also(out: &mut String, pages: &[(&str, u8)]) {
    heading(out, "SEE ALSO");
    let mut inl = Vec::new();
    for (i, (name, section)) in pages.iter().enumerate() {
        if i > 0 {
            inl.push(roman(", "));
        }
        inl.push(bold(*name));
        inl.push(roman(format!("({section})")));
    }
    out.push_str(&Roff::new().text(inl).to_roff());
}

fn render_with(f: impl FnOnce(&mut Vec<u8>) -> std::io::Result<()>) -> String {
    let mut buf = Vec::new();
    f(&mut buf).expect("writing to a Vec cannot fail");
    String::from_utf8(buf).expect("roff output is UTF-8")
}

/// Drop the preamble and the first line (a `.SH` heading) of a rendered
/// section.
fn body(section: String) -> String {
    match section.replace(PREAMBLE, "").split_once('\n') {
        Some((_, rest)) => rest.to_string(),
        None => String::new(),
    }
}

/// One option in a synopsis, with its value as `--help` shows it:
/// `[-t|--time TIME]`; `...` after a repeatable option (`-v...`,
/// `[--mount SRC:DST]...`); `<...>` instead of `[...]` when required.
fn synopsis_option(line: &mut Vec<Inline>, opt: &Arg) {
    let (lhs, rhs) = if opt.is_required_set() {
        ("<", ">")
    } else {
        ("[", "]")
    };
    line.push(roman(lhs));
    match (opt.get_short(), opt.get_long()) {
        (Some(short), Some(long)) => {
            line.push(bold(format!("-{short}")));
            line.push(roman("|"));
            line.push(bold(format!("--{long}")));
        }
        (Some(short), None) => line.push(bold(format!("-{short}"))),
        (None, Some(long)) => line.push(bold(format!("--{long}"))),
        (None, None) => {
            line.pop();
            return;
        }
    }
    if opt.get_num_args().is_some_and(|r| r.takes_values()) {
        let value = opt
            .get_value_names()
            .map(|v| v.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(" "))
            .unwrap_or_else(|| opt.get_id().as_str().to_ascii_uppercase());
        line.push(roman(" "));
        line.push(italic(value));
    }
    line.push(roman(rhs));
    if matches!(opt.get_action(), ArgAction::Count | ArgAction::Append) {
        line.push(roman("..."));
    }
    line.push(roman(" "));
}

/// The SYNOPSIS section of `cmd` (its bin name, else its name): every
/// visible option with its value name (clap_mangen's own synopsis leaves
/// the values out: `[--time]`), then the positionals, then the
/// subcommand placeholder.
pub fn synopsis_section(cmd: &Command) -> String {
    let mut cmd = cmd.clone();
    cmd.build();
    let name = cmd
        .get_bin_name()
        .unwrap_or_else(|| cmd.get_name())
        .to_string();
    let mut line = vec![bold(name), roman(" ")];
    let mut opts: Vec<&Arg> = cmd
        .get_arguments()
        .filter(|a| !a.is_hide_set() && !a.is_positional())
        .collect();
    opts.sort_by_key(|a| {
        let key = match (a.get_short(), a.get_long()) {
            (Some(s), _) => format!(
                "{}{}",
                s.to_ascii_lowercase(),
                if s.is_ascii_lowercase() { '0' } else { '1' }
            ),
            (None, Some(l)) => l.to_string(),
            (None, None) => format!("{{{}", a.get_id()),
        };
        (a.get_display_order(), key)
    });
    for opt in opts.iter().filter(|o| !o.is_required_set()) {
        synopsis_option(&mut line, opt);
    }
    for opt in opts.iter().filter(|o| o.is_required_set()) {
        synopsis_option(&mut line, opt);
    }
    for arg in cmd.get_positionals().filter(|a| !a.is_hide_set()) {
        let (lhs, rhs) = if arg.is_required_set() {
            ("<", ">")
        } else {
            ("[", "]")
        };
        let value = arg
            .get_value_names()
            .map(|v| v.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(" "))
            .unwrap_or_else(|| arg.get_id().as_str().to_string());
        line.push(roman(lhs));
        line.push(italic(value));
        line.push(roman(rhs));
        if matches!(arg.get_action(), ArgAction::Append) {
            line.push(roman("..."));
        }
        line.push(roman(" "));
    }
    if cmd.has_subcommands() {
        let (lhs, rhs) = if cmd.is_subcommand_required_set() {
            ("<", ">")
        } else {
            ("[", "]")
        };
        line.push(roman(lhs));
        line.push(italic(
            cmd.get_subcommand_value_name()
                .unwrap_or("subcommands")
                .to_lowercase(),
        ));
        line.push(roman(rhs));
    }
    let mut r = Roff::new();
    r.control("SH", ["SYNOPSIS"]);
    r.text(line);
    r.to_roff()
        .lines()
        .map(|l| format!("{}\n", l.trim_end()))
        .collect()
}

/// The subcommands worth a subsection: not hidden, not clap's `help`.
fn subcommands(cmd: &Command) -> Vec<&Command> {
    cmd.get_subcommands()
        .filter(|s| !s.is_hide_set() && s.get_name() != "help")
        .collect()
}

/// The COMMANDS section: for each subcommand, a `.SS` with its synopsis,
/// description and options (those declared global on the parent are
/// described once, in OPTIONS).
fn commands_section(out: &mut String, tool: &str, cmd: &Command) {
    let subs = subcommands(cmd);
    if subs.is_empty() {
        return;
    }
    heading(out, "COMMANDS");
    for sub in subs {
        let full = format!("{tool} {}", sub.get_name());
        let mut r = Roff::new();
        r.control("SS", [full.as_str()]);
        out.push_str(&r.to_roff());
        let sub = sub
            .clone()
            .bin_name(full.clone())
            .display_name(full.clone());
        let man = Man::new(sub.clone());
        out.push_str(&body(synopsis_section(&sub)));
        out.push_str(".PP\n");
        out.push_str(&body(render_with(|w| man.render_description_section(w))));
        let options = body(render_with(|w| man.render_options_section(w)));
        if !options.trim().is_empty() {
            out.push_str(&options);
        }
    }
    let globals = cmd.get_arguments().any(|a| a.is_global_set());
    let note = match (globals, cmd.is_subcommand_required_set()) {
        (true, _) => format!(
            "The options under OPTIONS may be given before or after the command name \
({tool} COMMAND --option works as {tool} --option COMMAND does)."
        ),
        (false, false) => format!(
            "Without a command, {tool} does its default action (see DESCRIPTION); the \
options under OPTIONS belong to that action."
        ),
        (false, true) => return,
    };
    let mut r = Roff::new();
    r.control("PP", []);
    r.text([roman(note)]);
    out.push_str(&r.to_roff());
}

/// Render the whole section-1 page of `tool` from its command line and its
/// hand-written sections.
///
/// Input: the binary name, its `clap::Command` (unbuilt), its [`Extra`].
/// Output: the roff source, UTF-8, ending in a newline.
pub fn render(tool: &str, cmd: &Command, extra: &Extra) -> String {
    // A doc comment used as `about` may repeat the name ("tao-x: does y");
    // NAME already says "tao-x - ", so drop the repetition.
    let mut cmd = cmd.clone();
    if let Some(about) = cmd.get_about().map(|a| a.to_string()) {
        if let Some(rest) = about.strip_prefix(&format!("{tool}: ")) {
            let mut chars = rest.chars();
            let fixed: String = match chars.next() {
                Some(c) => c.to_uppercase().chain(chars).collect(),
                None => String::new(),
            };
            cmd = cmd.about(fixed);
        }
    }
    let cmd = &cmd;
    let man = Man::new(cmd.clone())
        .title(tool.to_ascii_uppercase())
        .section("1")
        .date(DATE)
        .source(format!("tao-slurm {}", crate::commands::VERSION))
        .manual(MANUAL);
    let mut out = String::new();
    out.push_str(&render_with(|w| man.render_title(w)));
    out.push_str(&render_with(|w| man.render_name_section(w)));
    out.push_str(&synopsis_section(cmd));
    out.push_str(&render_with(|w| man.render_description_section(w)));
    let options = render_with(|w| man.render_options_section(w));
    out.push_str(&options);
    commands_section(&mut out, tool, cmd);
    if !extra.environment.is_empty() {
        heading(&mut out, "ENVIRONMENT");
        tagged_list(&mut out, &extra.environment);
    }
    if !extra.files.is_empty() {
        heading(&mut out, "FILES");
        tagged_list(&mut out, &extra.files);
    }
    if !extra.exit_status.is_empty() {
        heading(&mut out, "EXIT STATUS");
        let items: Vec<(String, &str)> = extra
            .exit_status
            .iter()
            .map(|(code, desc)| (code.to_string(), *desc))
            .collect();
        tagged_list(&mut out, &items);
    }
    if !extra.examples.is_empty() {
        heading(&mut out, "EXAMPLES");
        for (i, (what, cmdline)) in extra.examples.iter().enumerate() {
            if i > 0 {
                out.push_str(".PP\n");
            }
            out.push_str(&text(what));
            verbatim(&mut out, cmdline);
        }
    }
    if !extra.see_also.is_empty() {
        see_also(&mut out, &extra.see_also);
    }
    finish("", &out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_hyphens_and_leading_dots() {
        assert_eq!(text("a-b"), "a\\-b\n");
        assert!(text(".x").starts_with("\\&."));
    }

    #[test]
    fn synopsis_shows_option_values_and_repeats() {
        let cmd = Command::new("tao-x")
            .arg(clap::Arg::new("time").long("time").value_name("TIME"))
            .arg(
                clap::Arg::new("mount")
                    .long("mount")
                    .value_name("SRC:DST")
                    .action(ArgAction::Append),
            )
            .arg(
                clap::Arg::new("v")
                    .short('v')
                    .long("verbose")
                    .action(ArgAction::Count),
            )
            .arg(clap::Arg::new("id").value_name("ID").required(true));
        let s = synopsis_section(&cmd);
        assert!(s.contains("[\\fB\\-\\-time\\fR \\fITIME\\fR]"), "{s}");
        assert!(
            s.contains("[\\fB\\-\\-mount\\fR \\fISRC:DST\\fR]..."),
            "{s}"
        );
        assert!(s.contains("[\\fB\\-v\\fR|\\fB\\-\\-verbose\\fR]..."), "{s}");
        assert!(s.contains("<\\fIID\\fR>"), "{s}");
        assert!(s.lines().all(|l| l == l.trim_end()), "{s:?}");
    }

    #[test]
    fn page_has_every_section_once() {
        let extra = Extra {
            environment: vec![("X", "x")],
            files: vec![("/f", "f")],
            exit_status: vec![(0, "ok")],
            examples: vec![("do", "tao-x | jq .")],
            see_also: vec![("tao-jobline", 7)],
        };
        let cmd = Command::new("tao-x")
            .version("1")
            .about("x")
            .arg(clap::Arg::new("flag").long("flag").help("a flag"));
        let page = render("tao-x", &cmd, &extra);
        for sh in [
            "NAME",
            "SYNOPSIS",
            "DESCRIPTION",
            "OPTIONS",
            "ENVIRONMENT",
            "FILES",
            "\"EXIT STATUS\"",
            "EXAMPLES",
            "\"SEE ALSO\"",
        ] {
            assert_eq!(
                page.matches(&format!(".SH {sh}\n")).count(),
                1,
                "{sh}:\n{page}"
            );
        }
        assert!(page.contains("\\-\\-flag"));
    }
}
