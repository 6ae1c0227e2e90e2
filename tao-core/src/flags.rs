//! One definition per flag for the lexopt filters (tao-render, tao-redact,
//! tao-classify): a static table of [`Flag`]s per tool ([`Tool`]) that
//! drives the parser (each tool's `parse_args` looks every argument up
//! here: [`Tool::lookup`]), the `-h` and `--help` texts ([`Tool::short_help`],
//! [`Tool::long_help`]) and, through `tao_cli::table::command`, the
//! `clap::Command` from which man/ generates the man page and the shell
//! completions. No second copy of a flag's name, value, default or help
//! exists anywhere.
//!
//! This module is plain data and text (no clap): the filters keep lexopt's
//! start-up time and the control of their help text (ripgrep's reasons).

/// What a flag takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Takes {
    /// Nothing: a switch (`--print`).
    Nothing,
    /// Nothing, counted (`-vv`).
    Count,
    /// One value, named as in the help (`FILE`, `NAME|FILE`, `N`).
    Value(&'static str),
    /// Prints the help (`-h` short, `--help` long) and exits 0.
    Help,
    /// Prints the version and exits 0.
    Version,
}

/// One flag of a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flag {
    /// The long name without `--` (`site-profile`); also the key the
    /// tool's parser matches on.
    pub long: &'static str,
    /// The short name (`q` for `-q`), if any.
    pub short: Option<char>,
    /// What it takes.
    pub takes: Takes,
    /// One line for `-h` (lowercase first word, no period).
    pub help: &'static str,
    /// The full text for `--help` and the man page; empty: [`Flag::help`].
    pub long_help: &'static str,
    /// Whether it may be given more than once (values are kept in order).
    pub repeatable: bool,
    /// The environment variable used when the flag is not given.
    pub env: Option<&'static str>,
    /// The default value, as text (shown by the man page).
    pub default: Option<&'static str>,
    /// The inclusive range of a whole-number value.
    pub range: Option<(u64, u64)>,
    /// Whether it is accepted after a subcommand too (tao-redact `lint`).
    pub global: bool,
}

impl Flag {
    /// A switch `--long` with its `-h` line.
    pub const fn switch(long: &'static str, help: &'static str) -> Flag {
        Flag {
            long,
            short: None,
            takes: Takes::Nothing,
            help,
            long_help: "",
            repeatable: false,
            env: None,
            default: None,
            range: None,
            global: false,
        }
    }

    /// A flag `--long VALUE` with its `-h` line.
    pub const fn value(long: &'static str, value: &'static str, help: &'static str) -> Flag {
        Flag {
            takes: Takes::Value(value),
            ..Flag::switch(long, help)
        }
    }

    /// With a short name.
    pub const fn short(self, short: char) -> Flag {
        Flag {
            short: Some(short),
            ..self
        }
    }

    /// With a longer text for `--help` and the man page.
    pub const fn long_help(self, long_help: &'static str) -> Flag {
        Flag { long_help, ..self }
    }

    /// Repeatable.
    pub const fn repeatable(self) -> Flag {
        Flag {
            repeatable: true,
            ..self
        }
    }

    /// With an environment variable used when it is not given.
    pub const fn env(self, env: &'static str) -> Flag {
        Flag {
            env: Some(env),
            ..self
        }
    }

    /// With a default value.
    pub const fn default(self, default: &'static str) -> Flag {
        Flag {
            default: Some(default),
            ..self
        }
    }

    /// With an inclusive range for a whole-number value.
    pub const fn range(self, lo: u64, hi: u64) -> Flag {
        Flag {
            range: Some((lo, hi)),
            ..self
        }
    }

    /// Accepted after a subcommand too.
    pub const fn global(self) -> Flag {
        Flag {
            global: true,
            ..self
        }
    }

    /// `-q`/`--quiet`, as every tool has it (`crate::cli::set_verbosity`).
    pub const QUIET: Flag = Flag::switch("quiet", "print no warnings (errors are always printed)")
        .short('q')
        .long_help("Print no warnings on standard error; errors are always printed.");

    /// `-v`/`--verbose` (counted); `help` says what it prints.
    pub const fn verbose(help: &'static str, long_help: &'static str) -> Flag {
        Flag {
            takes: Takes::Count,
            ..Flag::switch("verbose", help)
                .short('v')
                .long_help(long_help)
        }
    }

    /// `-h`/`--help`: `-h` the short help, `--help` the long one.
    pub const HELP: Flag = Flag {
        takes: Takes::Help,
        ..Flag::switch("help", "short / long help")
            .short('h')
            .long_help("Print short (-h) or long (--help) help.")
    };

    /// `-V`/`--version`.
    pub const VERSION: Flag = Flag {
        takes: Takes::Version,
        ..Flag::switch("version", "print the version")
            .short('V')
            .long_help("Print the version.")
    };

    /// The text for `--help` and the man page.
    pub fn full_help(&self) -> &'static str {
        if self.long_help.is_empty() {
            self.help
        } else {
            self.long_help
        }
    }

    /// The flag as the help shows it: `-q, --quiet`, `    --log FILE`.
    pub fn display(&self) -> String {
        let mut s = match self.short {
            Some(c) => format!("-{c}, --{}", self.long),
            None => format!("    --{}", self.long),
        };
        if let Takes::Value(v) = self.takes {
            s.push(' ');
            s.push_str(v);
        }
        s
    }
}

/// A subcommand of a lexopt tool (tao-redact `lint`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sub {
    /// Its name.
    pub name: &'static str,
    /// One line: what it does.
    pub about: &'static str,
    /// Its description (paragraphs separated by blank lines, as
    /// [`Tool::description`]): printed by the tool's `--help` after the
    /// tool's description, and the subcommand's DESCRIPTION in the man page.
    pub long_about: &'static str,
    /// Its positional arguments: (value name, help, whether many).
    pub positional: Option<(&'static str, &'static str, bool)>,
}

/// A lexopt tool's command line: the one source of its parser's flags,
/// its help texts and its man page's NAME, SYNOPSIS, DESCRIPTION and
/// OPTIONS.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tool {
    /// The binary's name (`tao-render`).
    pub name: &'static str,
    /// One line, lowercase, no period: what it does (the NAME line).
    pub about: &'static str,
    /// The usage lines after `Usage: ` (the first after the prefix, the
    /// others indented under it).
    pub usage: &'static [&'static str],
    /// The description, paragraphs separated by blank lines, each one
    /// line (wrapped when printed); a paragraph whose lines start with
    /// two spaces is printed as it is.
    pub description: &'static str,
    /// The flags, in help order.
    pub flags: &'static [Flag],
    /// The subcommands.
    pub subs: &'static [Sub],
    /// Sections printed after the options in `--help` (heading, text as
    /// printed), e.g. a policy table.
    pub sections: &'static [(&'static str, &'static str)],
    /// The exit statuses as `--help` prints them (preformatted lines).
    pub exit_status: &'static str,
}

/// The width `--help` wraps paragraphs at.
const WIDTH: usize = 79;

impl Tool {
    /// The flag an argument names: `Some(flag)` for `-c` ([`Flag::short`])
    /// or `--long` ([`Flag::long`]), else `None` (an unknown option).
    pub fn lookup_short(&self, c: char) -> Option<&'static Flag> {
        self.flags.iter().find(|f| f.short == Some(c))
    }

    /// The flag `--long` names, if any.
    pub fn lookup_long(&self, long: &str) -> Option<&'static Flag> {
        self.flags.iter().find(|f| f.long == long)
    }

    /// The flag named `long` in the table.
    ///
    /// Panics when the table has no such flag: a tool asks only for its own
    /// flags, and its unit test `every_flag_parses` calls each.
    pub fn flag(&self, long: &str) -> &'static Flag {
        self.lookup_long(long)
            .unwrap_or_else(|| panic!("{}: no flag --{long} in the table", self.name))
    }

    fn head(&self, out: &mut String) {
        out.push_str(&format!("{}: {}\n\nUsage: ", self.name, self.about));
        for (i, u) in self.usage.iter().enumerate() {
            if i > 0 {
                out.push_str("       ");
            }
            out.push_str(u);
            out.push('\n');
        }
    }

    /// The short help (`-h`): what it does, the usage, one line per flag.
    pub fn short_help(&self) -> String {
        let mut out = String::new();
        self.head(&mut out);
        out.push_str("\nOptions:\n");
        let width = self
            .flags
            .iter()
            .map(|f| f.display().len())
            .max()
            .unwrap_or(0);
        for f in self.flags {
            out.push_str(&format!("  {:<width$}  {}\n", f.display(), f.help));
        }
        out
    }

    /// The long help (`--help`): what it does, the usage, the description,
    /// each flag with its full text, the extra sections, the exit statuses.
    pub fn long_help(&self) -> String {
        let mut out = String::new();
        self.head(&mut out);
        let subs = self.subs.iter().map(|s| s.long_about);
        for text in std::iter::once(self.description).chain(subs) {
            for para in text.split("\n\n") {
                out.push('\n');
                paragraph(&mut out, para, "");
            }
        }
        out.push_str("\nOptions:\n");
        for f in self.flags {
            out.push_str(&format!("  {}\n", f.display().trim_start()));
            let mut text = f.full_help().to_string();
            if let Some(d) = f.default {
                if !text.contains("default") && !text.contains("Default") {
                    text.push_str(&format!(" [default: {d}]"));
                }
            }
            if let Some(e) = f.env.filter(|e| !text.contains(e)) {
                text.push_str(&format!(" [env: {e}]"));
            }
            paragraph(&mut out, &text, "      ");
        }
        for (heading, text) in self.sections {
            out.push_str(&format!("\n{heading}:\n{text}"));
            if !text.ends_with('\n') {
                out.push('\n');
            }
        }
        out.push_str("\nExit status:\n");
        out.push_str(self.exit_status);
        if !self.exit_status.ends_with('\n') {
            out.push('\n');
        }
        out
    }

    /// The man page's DESCRIPTION: the description, then each extra
    /// section as a paragraph headed by its name.
    pub fn man_description(&self) -> String {
        let mut s = format!("{}.\n\n{}", capitalise(self.about), self.description);
        for (heading, text) in self.sections {
            s.push_str(&format!("\n\n{heading}:\n{text}"));
        }
        s.trim_end().to_string()
    }
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// Write `text` wrapped at [`WIDTH`] with every line indented by `indent`;
/// text whose lines start with two spaces is written as it is (a table).
fn paragraph(out: &mut String, text: &str, indent: &str) {
    if text.lines().any(|l| l.starts_with("  ")) || text.contains('\n') {
        for l in text.lines() {
            out.push_str(indent);
            out.push_str(l);
            out.push('\n');
        }
        return;
    }
    let mut line = String::from(indent);
    for word in text.split_whitespace() {
        if line.len() > indent.len() && line.len() + 1 + word.len() > WIDTH {
            out.push_str(line.trim_end());
            out.push('\n');
            line = String::from(indent);
        }
        if line.len() > indent.len() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if line.len() > indent.len() {
        out.push_str(&line);
        out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: Tool = Tool {
        name: "tao-x",
        about: "do x to job lines",
        usage: &["tao-x [OPTIONS] < lines", "tao-x lint [FILE...]"],
        description: "Reads job lines and does x to each of them, which is a long enough sentence to be wrapped at the width.\n\nTable:\n  a  b\n  c  d",
        flags: &[
            Flag::value("log", "FILE", "use FILE").repeatable(),
            Flag::value("max-attempts", "N", "retry budget")
                .default("10")
                .range(1, 100),
            Flag::QUIET,
            Flag::HELP,
        ],
        subs: &[],
        sections: &[("Policy", "  A  b\n")],
        exit_status: "  0 ok\n",
    };

    #[test]
    fn lookups_find_flags_by_either_name() {
        assert_eq!(T.lookup_short('q').unwrap().long, "quiet");
        assert_eq!(T.lookup_long("log").unwrap().takes, Takes::Value("FILE"));
        assert!(T.lookup_long("nope").is_none());
        assert_eq!(T.flag("max-attempts").range, Some((1, 100)));
    }

    #[test]
    fn helps_hold_every_flag_and_section() {
        let s = T.short_help();
        assert!(s.starts_with("tao-x: do x to job lines\n\nUsage: tao-x [OPTIONS] < lines\n       tao-x lint [FILE...]\n"), "{s}");
        assert!(s.contains("\n      --log FILE        use FILE\n"), "{s}");
        assert!(
            s.contains("\n  -q, --quiet           print no warnings"),
            "{s}"
        );
        let l = T.long_help();
        assert!(
            l.contains("\n  --max-attempts N\n      retry budget [default: 10]\n"),
            "{l}"
        );
        assert!(l.contains("\nTable:\n  a  b\n  c  d\n"), "{l}");
        assert!(
            l.contains("\nPolicy:\n  A  b\n\nExit status:\n  0 ok\n"),
            "{l}"
        );
        assert!(l.lines().all(|x| x.len() <= WIDTH), "{l}");
        let d = T.man_description();
        assert!(
            d.starts_with("Do x to job lines.\n\nReads job lines"),
            "{d}"
        );
        assert!(d.ends_with("Policy:\n  A  b"), "{d}");
    }
}
