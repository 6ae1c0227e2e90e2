//! A `clap::Command` built from a lexopt tool's flag table
//! (`tao_core::flags::Tool`), so that man/ generates the page and the
//! completions of tao-render, tao-redact and tao-classify from the same
//! table their parsers and help texts use: no hand-kept mirror.

use clap::{Arg, ArgAction, Command};
use tao_core::flags::{Flag, Takes, Tool};

/// The `clap::Command` of `tool`: its name, `version`, the NAME line
/// (`about`), the DESCRIPTION (`Tool::man_description`), one `Arg` per
/// flag (value name, default, range, environment variable, repeatable,
/// global as the table says; `-h`/`--help` is clap's own) and one
/// subcommand per `Sub`.
pub fn command(tool: &Tool, version: &'static str) -> Command {
    let about = {
        let mut c = tool.about.chars();
        match c.next() {
            Some(f) => f.to_uppercase().chain(c).collect::<String>(),
            None => String::new(),
        }
    };
    let mut cmd = Command::new(tool.name)
        .version(version)
        .about(about)
        .long_about(tool.man_description())
        .disable_version_flag(true)
        .disable_help_subcommand(true);
    for f in tool.flags {
        if let Some(arg) = arg(f) {
            cmd = cmd.arg(arg);
        }
    }
    for s in tool.subs {
        let mut sub = Command::new(s.name)
            .about(s.about)
            .long_about(format!("{}\n\n{}", s.about, s.long_about));
        if let Some((value, help, many)) = s.positional {
            let mut a = Arg::new(value).value_name(value).help(help);
            if many {
                a = a.num_args(0..).action(ArgAction::Append);
            }
            sub = sub.arg(a);
        }
        cmd = cmd.subcommand(sub);
    }
    cmd
}

/// The clap `Arg` of one flag; `None` for `--help`, which clap adds.
fn arg(f: &Flag) -> Option<Arg> {
    let mut a = Arg::new(f.long).long(f.long).global(f.global);
    if let Some(c) = f.short {
        a = a.short(c);
    }
    a = match f.takes {
        Takes::Help => return None,
        Takes::Version => a.action(ArgAction::Version),
        Takes::Nothing => a.action(ArgAction::SetTrue),
        Takes::Count => a.action(ArgAction::Count),
        Takes::Value(v) => {
            let mut a = a.value_name(v);
            if f.repeatable {
                a = a.action(ArgAction::Append);
            }
            if let Some(d) = f.default {
                a = a.default_value(d);
            }
            if let Some(e) = f.env {
                a = a.env(e);
            }
            if let Some((lo, hi)) = f.range {
                a = a.value_parser(clap::value_parser!(u64).range(lo..=hi));
            }
            a
        }
    };
    let mut help = f.help.to_string();
    if let Some(r) = help.get(..1) {
        help = format!("{}{}", r.to_uppercase(), &help[1..]);
    }
    Some(a.help(help).long_help(f.full_help()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: Tool = Tool {
        name: "tao-x",
        about: "do x",
        usage: &["tao-x < lines"],
        description: "Does x.",
        flags: &[
            Flag::value("log", "FILE", "use FILE").repeatable().global(),
            Flag::value("max-attempts", "N", "budget")
                .default("10")
                .range(1, 100),
            Flag::QUIET,
            Flag::verbose("say", "Say."),
            Flag::HELP,
            Flag::VERSION,
        ],
        subs: &[tao_core::flags::Sub {
            name: "lint",
            about: "Lint",
            long_about: "Lints.",
            positional: Some(("FILE", "files", true)),
        }],
        sections: &[],
        exit_status: "",
    };

    #[test]
    fn the_command_accepts_what_the_table_says() {
        let c = command(&T, "0.1.0");
        c.clone().debug_assert();
        let m = c
            .clone()
            .try_get_matches_from(["tao-x", "--log", "a", "--log", "b", "-vv", "-q"])
            .unwrap();
        assert_eq!(m.get_many::<String>("log").unwrap().count(), 2);
        assert_eq!(m.get_count("verbose"), 2);
        assert_eq!(*m.get_one::<u64>("max-attempts").unwrap(), 10);
        assert!(c
            .clone()
            .try_get_matches_from(["tao-x", "--max-attempts", "0"])
            .is_err());
        let m = c
            .clone()
            .try_get_matches_from(["tao-x", "lint", "--log", "c", "a.sh", "b.sh"])
            .unwrap();
        let (_, sub) = m.subcommand().unwrap();
        assert_eq!(sub.get_many::<String>("FILE").unwrap().count(), 2);
    }
}
