//! The man pages and completions cannot drift from the tools:
//!
//! 1. the checked-in files are byte for byte what `cargo run -p tao-man`
//!    writes now (and no stale file is left beside them);
//! 2. each built binary's `--help` (and each subcommand's) lists exactly
//!    the long options its page describes: this catches the hand-described
//!    lexopt tools (tao-render, tao-redact, tao-classify) falling behind;
//! 3. `mandoc -T lint -W warning` is silent on every page, and
//!    `man -l` renders each one without a warning.

mod util;

use std::collections::BTreeSet;
use std::process::Command;

use util::{help_options, long_names, man_dir, pages, require, run_help};

const FIX: &str = "run cargo run -p tao-man (and commit man/)";

#[test]
fn checked_in_files_match_a_fresh_generation() {
    let tmp = tempfile::tempdir().unwrap();
    let written = tao_man::write_all(tmp.path()).unwrap();
    assert_eq!(written.len(), tao_man::generate().len());
    let mut stale = Vec::new();
    for f in tao_man::generate() {
        let fresh = std::fs::read(tmp.path().join(&f.path)).unwrap();
        assert_eq!(fresh, f.bytes, "write_all wrote what generate made");
        match std::fs::read(man_dir().join(&f.path)) {
            Ok(old) if old == fresh => {}
            Ok(_) => stale.push(format!("{} differs", f.path)),
            Err(_) => stale.push(format!("{} is missing", f.path)),
        }
    }
    // No leftover page or completion the generator no longer makes.
    let generated: BTreeSet<String> = tao_man::generate().into_iter().map(|f| f.path).collect();
    for p in pages() {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if !generated.contains(&name) {
            stale.push(format!("{name} is not generated any more"));
        }
    }
    for (_, dir) in tao_man::SHELLS {
        let d = man_dir().join("completions").join(dir);
        for e in std::fs::read_dir(&d).into_iter().flatten() {
            let name = format!(
                "completions/{dir}/{}",
                e.unwrap().file_name().to_string_lossy()
            );
            if !generated.contains(&name) {
                stale.push(format!("{name} is not generated any more"));
            }
        }
    }
    assert!(stale.is_empty(), "{}: {FIX}", stale.join("; "));
}

/// Long options a page describes: the `.TP` item heads that start in bold
/// (`\fB\-\-name\fR`).
fn page_options(roff: &str) -> BTreeSet<String> {
    let mut set = BTreeSet::new();
    let mut after_tp = false;
    for line in roff.lines() {
        if after_tp && line.starts_with("\\fB") {
            let plain = line.replace("\\-", "-");
            let head = plain.split("\\fI").next().unwrap_or("");
            set.extend(long_names(head));
        }
        after_tp = line == ".TP";
    }
    set
}

#[test]
fn every_option_of_help_is_in_the_page_and_back() {
    let mut problems = Vec::new();
    for (tool, cmd) in tao_man::commands::all() {
        let mut help = run_help(tool, &["--help"]);
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
            if sub.get_name() == "help" {
                continue;
            }
            help.push_str(&run_help(tool, &[sub.get_name(), "--help"]));
        }
        let in_help = help_options(&help);
        let page = std::fs::read_to_string(man_dir().join(format!("{tool}.1")))
            .unwrap_or_else(|_| panic!("man/{tool}.1 is missing: {FIX}"));
        let in_page = page_options(&page);
        for o in in_help.difference(&in_page) {
            problems.push(format!("{tool}: {o} is in --help but not in {tool}.1"));
        }
        for o in in_page.difference(&in_help) {
            problems.push(format!("{tool}: {o} is in {tool}.1 but not in --help"));
        }
        assert!(in_help.contains("--help"), "{tool}: no --help parsed");
    }
    assert!(
        problems.is_empty(),
        "{}\n(a clap tool: {FIX}; a lexopt tool: update its mirror in man/src/commands.rs, then {FIX})",
        problems.join("\n")
    );
}

#[test]
fn option_parsers_of_this_test_work() {
    let help = "  -h, --help   Print help\n      --rules FILE   add --not-this\n                 --nor-this\n  --print\n";
    let got: Vec<String> = help_options(help).into_iter().collect();
    assert_eq!(got, ["--help", "--print", "--rules"]);
    let roff =
        ".TP\n\\fB\\-\\-site\\-profile\\fR \\fI<NAME|FILE>\\fR\nSee \\-\\-other\n.TP\n\\fB0\\fR\n";
    let got: Vec<String> = page_options(roff).into_iter().collect();
    assert_eq!(got, ["--site-profile"]);
}

#[test]
fn mandoc_lint_is_clean() {
    if !require("mandoc", "mandoc") {
        return;
    }
    let pages = pages();
    assert_eq!(
        pages.len(),
        8,
        "six section-1 pages, tao-site-profile.5 and tao-jobline.7: {FIX}"
    );
    for p in pages {
        let out = Command::new("mandoc")
            .args(["-T", "lint", "-W", "warning"])
            .arg(&p)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            out.status.success() && text.trim().is_empty(),
            "mandoc -T lint -W warning {}:\n{text}",
            p.display()
        );
    }
}

#[test]
fn man_renders_every_page() {
    if !require("man", "man-db") {
        return;
    }
    for p in pages() {
        let out = Command::new("man")
            .arg("-l")
            .arg(&p)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("MANPAGER", "cat")
            .env("MANWIDTH", "80")
            .env("LANG", "C.UTF-8")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "man -l {}: {stderr}", p.display());
        assert!(
            stderr.trim().is_empty(),
            "man -l {} warned: {stderr}",
            p.display()
        );
        let sections: &[&str] = if p.extension().is_some_and(|e| e == "1") {
            &[
                "NAME",
                "SYNOPSIS",
                "DESCRIPTION",
                "OPTIONS",
                "ENVIRONMENT",
                "FILES",
                "EXIT STATUS",
                "EXAMPLES",
                "SEE ALSO",
            ]
        } else if p.extension().is_some_and(|e| e == "5") {
            &[
                "NAME",
                "SYNOPSIS",
                "DESCRIPTION",
                "KEYS",
                "BUILT-IN PROFILES",
                "EXAMPLES",
                "ENVIRONMENT",
                "SEE ALSO",
            ]
        } else {
            &[
                "NAME",
                "DESCRIPTION",
                "STATE VOCABULARY",
                "SLURM STATES",
                "EXIT STATUS",
                "SHARED STORAGE",
                "ENVIRONMENT",
                "EXAMPLES",
                "SEE ALSO",
            ]
        };
        for section in sections {
            assert!(
                stdout.lines().any(|l| l == *section),
                "man -l {}: no {section} section",
                p.display()
            );
        }
    }
}

/// Each tool's DESCRIPTION says what it reads, does and prints: more than
/// the one-line summary of NAME (at least two paragraphs).
#[test]
fn every_description_is_more_than_one_line() {
    if !require("man", "man-db") {
        return;
    }
    for p in pages()
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "1"))
    {
        let out = Command::new("man")
            .arg("-l")
            .arg(&p)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("MANPAGER", "cat")
            .env("MANWIDTH", "80")
            .env("LANG", "C.UTF-8")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let desc: Vec<&str> = text
            .lines()
            .skip_while(|l| *l != "DESCRIPTION")
            .skip(1)
            .take_while(|l| l.starts_with(' ') || l.is_empty())
            .collect();
        let paragraphs = desc
            .split(|l| l.trim().is_empty())
            .filter(|p| !p.is_empty())
            .count();
        let words: usize = desc.iter().map(|l| l.split_whitespace().count()).sum();
        assert!(
            paragraphs >= 2 && words >= 30,
            "{}: DESCRIPTION has {paragraphs} paragraph(s), {words} words: give the tool a long_about",
            p.display()
        );
    }
}

/// Every option that takes a value shows it in the SYNOPSIS (`--time TIME`),
/// as `--help` does.
#[test]
fn synopsis_shows_every_option_value() {
    for p in pages()
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "1"))
    {
        let roff = std::fs::read_to_string(&p).unwrap();
        // The synopsis lines: the page's own and each command's (COMMANDS).
        let synopsis: String = roff
            .lines()
            .filter(|l| l.starts_with("\\fBtao\\-"))
            .collect::<Vec<_>>()
            .join("\n");
        // Option heads under OPTIONS: `\fB\-\-name\fR \fI<VALUE>\fR`.
        for l in roff
            .lines()
            .filter(|l| l.starts_with("\\fB\\-\\-") && l.contains(" \\fI<"))
        {
            let long = l.split("\\fR").next().unwrap().trim_start_matches("\\fB");
            let value = l
                .split("\\fI<")
                .nth(1)
                .and_then(|v| v.split(">\\fR").next())
                .unwrap();
            let want = format!("\\fB{long}\\fR \\fI{value}\\fR");
            assert!(
                synopsis.contains(&want),
                "{}: SYNOPSIS lacks {want}: {FIX}\n{synopsis}",
                p.display()
            );
        }
    }
}

#[test]
fn bash_completions_load_and_complete_options() {
    for (tool, _) in tao_man::commands::all() {
        let script = man_dir().join("completions/bash").join(tool);
        // Load the completion, then ask it for the words after `tool --`
        // the way bash would on TAB.
        let probe = format!(
            "source {} && complete -p {tool} >/dev/null && \
             COMP_WORDS=({tool} --) COMP_CWORD=1 COMP_LINE='{tool} --' COMP_POINT=${{#COMP_LINE}} && \
             $(complete -p {tool} | sed -E 's/.*-F ([^ ]+).*/\\1/') {tool} -- {tool} && \
             printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            script.display()
        );
        let out = Command::new("bash")
            .args(["--norc", "--noprofile", "-c", &probe])
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.lines().any(|l| l == "--help"),
            "bash completion of {tool}: {stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// Variables named by `[env: NAME...]` in a tool's help text.
fn help_env_vars(help: &str) -> BTreeSet<String> {
    let mut set = BTreeSet::new();
    let mut rest = help;
    while let Some(i) = rest.find("[env: ") {
        let tail = &rest[i + 6..];
        let end = tail
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(tail.len());
        set.insert(tail[..end].to_string());
        rest = &tail[end..];
    }
    set
}

#[test]
fn every_variable_of_help_is_in_environment() {
    let mut problems = Vec::new();
    for (tool, cmd) in tao_man::commands::all() {
        let mut help = run_help(tool, &["--help"]);
        for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
            help.push_str(&run_help(tool, &[sub.get_name(), "--help"]));
        }
        let page = std::fs::read_to_string(man_dir().join(format!("{tool}.1"))).unwrap();
        let env = page
            .split(".SH ENVIRONMENT\n")
            .nth(1)
            .and_then(|s| s.split("\n.SH ").next())
            .unwrap_or("");
        for var in help_env_vars(&help) {
            let documented = env.lines().any(|l| {
                l.starts_with("\\fB")
                    && l.replace("\\fB", "")
                        .replace("\\fR", "")
                        .split(", ")
                        .any(|n| n == var)
            });
            if !documented {
                problems.push(format!(
                    "{tool}: --help names {var} but ENVIRONMENT of {tool}.1 does not (man/src/extras.rs)"
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn env_parser_of_this_test_works() {
    let got: Vec<String> =
        help_env_vars("x [env: SLURM_HOSTNAME=] y [env: TAO_RUNTIME; default: z]")
            .into_iter()
            .collect();
    assert_eq!(got, ["SLURM_HOSTNAME", "TAO_RUNTIME"]);
    let help = run_help("tao-submit", &["--help"]);
    assert!(help_env_vars(&help).len() >= 5, "{help}");
}

/// Each tool's `--help` "Exit status" summary names exactly the statuses
/// its page lists (man/extras.toml `exit_status`, the one source of the
/// EXIT STATUS section): tao-record's help once left out open's 3.
#[test]
fn help_exit_statuses_match_the_pages() {
    const KNOWN: [i64; 12] = [0, 1, 2, 3, 65, 69, 74, 75, 77, 78, 130, 143];
    let data: toml::Table =
        toml::from_str(&std::fs::read_to_string(man_dir().join("extras.toml")).unwrap()).unwrap();
    for tool in tao_man::commands::TOOLS {
        let page: BTreeSet<i64> = data[tool]["exit_status"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e[0].as_integer().unwrap())
            .collect();
        let help = run_help(tool, &["--help"]);
        let at = help
            .find("Exit status")
            .unwrap_or_else(|| panic!("{tool} --help has no Exit status summary"));
        let said: BTreeSet<i64> = help[at..]
            .split_whitespace()
            .filter_map(|w| {
                w.trim_matches(|c: char| ";,.():".contains(c))
                    .parse::<i64>()
                    .ok()
            })
            .filter(|c| KNOWN.contains(c))
            .collect();
        assert_eq!(said, page, "{tool}: --help's exit statuses vs its man page");
    }
}
