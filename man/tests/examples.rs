//! Every tool invocation in examples/ (the Makefile, the crontab and the
//! fenced shell blocks of examples/WALKTHROUGH.md) and in the pages' EXAMPLES uses
//! subcommands and options the built tools really have: each `--long` and
//! `-s` option after a tool's name (up to the next `|`, `;`, `&&`, `||` or
//! `)`) must be listed by that tool's `--help` (or its subcommand's).

mod util;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use util::{help_options, help_shorts, run_help};

/// The options each tool (and `tool sub`) accepts, from the real `--help`.
fn accepted() -> BTreeMap<String, BTreeSet<String>> {
    let mut map = BTreeMap::new();
    for (tool, cmd) in tao_man::commands::all() {
        let top = run_help(tool, &["--help"]);
        let mut set = help_options(&top);
        set.extend(help_shorts(&top));
        map.insert(tool.to_string(), set);
        for sub in cmd.get_subcommands() {
            let name = sub.get_name();
            if name == "help" {
                continue;
            }
            let h = run_help(tool, &[name, "--help"]);
            let mut set = help_options(&h);
            set.extend(help_shorts(&h));
            map.insert(format!("{tool} {name}"), set);
        }
    }
    map
}

/// Shell words of one line: (text, quoted). Unquoted `|`, `;`, `&`, `(`
/// and `)` end a word and come out as a word of their own ("|"), which
/// ends a command. Quotes are removed; a word with any quoted part is
/// `quoted` (never an option of ours: `--command 'x -e y'`).
fn words(line: &str) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut quote: Option<char> = None;
    let flush = |cur: &mut String, quoted: &mut bool, out: &mut Vec<(String, bool)>| {
        if !cur.is_empty() || *quoted {
            out.push((std::mem::take(cur), *quoted));
        }
        *quoted = false;
    };
    for c in line.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => cur.push(c),
            None => match c {
                '\'' | '"' => {
                    quote = Some(c);
                    quoted = true;
                }
                '|' | ';' | '&' | '(' | ')' => {
                    flush(&mut cur, &mut quoted, &mut out);
                    out.push(("|".into(), false));
                }
                c if c.is_whitespace() => flush(&mut cur, &mut quoted, &mut out),
                c => cur.push(c),
            },
        }
    }
    flush(&mut cur, &mut quoted, &mut out);
    out
}

/// Make text -> shell text: `$$` is `$`, `$(if $(X),then)` is `then`,
/// other `$(X)` references are a placeholder word.
fn unmake(text: &str) -> String {
    let mut s = text.replace("$$", "\u{1}");
    loop {
        // Innermost references first: `$(` followed by no `(` or `)` until `)`.
        let b = s.as_bytes();
        let found = (0..b.len().saturating_sub(1)).find(|&i| {
            b[i] == b'$'
                && b[i + 1] == b'('
                && s[i + 2..]
                    .find([')', '('])
                    .is_some_and(|j| b[i + 2 + j] == b')')
        });
        let Some(i) = found else { break };
        let j = i + 2 + s[i + 2..].find(')').unwrap();
        let inner = &s[i + 2..j];
        let rep = match inner.strip_prefix("if ") {
            Some(rest) => rest
                .split_once(',')
                .map(|(_, t)| t.to_string())
                .unwrap_or_default(),
            None => "MAKEVAR".to_string(),
        };
        s.replace_range(i..=j, &rep);
    }
    s.replace('\u{1}', "$")
}

/// Shell text -> invocations: (where, tool[ sub], option) for each option.
fn invocations(origin: &str, text: &str) -> Vec<(String, String, String)> {
    let tools: BTreeMap<&str, Vec<String>> = tao_man::commands::all()
        .into_iter()
        .map(|(t, c)| {
            (
                t,
                c.get_subcommands()
                    .map(|s| s.get_name().to_string())
                    .collect(),
            )
        })
        .collect();
    let joined = text.replace("\\\n", " ");
    let mut out = Vec::new();
    for (n, line) in joined.lines().enumerate() {
        let mut current: Option<String> = None;
        let mut first_word = false;
        for (tok, quoted) in words(line) {
            if tok == "|" || tok == "do" || tok == "then" {
                current = None;
                continue;
            }
            if !quoted {
                if let Some((t, subs)) = tools.get_key_value(tok.as_str()) {
                    current = Some(t.to_string());
                    first_word = !subs.is_empty();
                    continue;
                }
            }
            let Some(cur) = current.clone() else { continue };
            if first_word && !tok.starts_with('-') {
                first_word = false;
                let tool = cur.split(' ').next().unwrap();
                if tools[tool].contains(&tok) {
                    current = Some(format!("{tool} {tok}"));
                }
                continue;
            }
            if quoted {
                continue;
            }
            let at = format!("{origin}:{}", n + 1);
            if tok.starts_with("--") && tok.len() > 2 {
                let name = tok.split('=').next().unwrap().to_string();
                out.push((at, cur.clone(), name));
            } else if tok.len() == 2 && tok.starts_with('-') {
                out.push((at, cur.clone(), tok.to_string()));
            }
        }
    }
    out
}

/// The code of a Markdown file: fenced blocks and 4-space indented lines
/// (other lines become empty, so line numbers stay right).
fn fenced(md: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for line in md.lines() {
        if line.trim_start().starts_with("```") {
            inside = !inside;
            out.push('\n');
            continue;
        }
        out.push_str(if inside || line.starts_with("    ") {
            line
        } else {
            ""
        });
        out.push('\n');
    }
    out
}

fn check(origin: &str, text: &str, accepted: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    let mut bad = Vec::new();
    for (at, tool, opt) in invocations(origin, text) {
        let ok = accepted.get(&tool).is_some_and(|s| s.contains(&opt));
        if !ok {
            bad.push(format!(
                "{at}: `{tool}` has no option {opt} (see {tool} --help)"
            ));
        }
    }
    bad
}

#[test]
fn examples_use_only_real_options() {
    let acc = accepted();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut bad = Vec::new();
    let mut seen = 0;
    for (name, text) in [
        (
            "examples/Makefile",
            unmake(&std::fs::read_to_string(root.join("examples/Makefile")).unwrap()),
        ),
        (
            "examples/crontab",
            std::fs::read_to_string(root.join("examples/crontab")).unwrap(),
        ),
        (
            "examples/WALKTHROUGH.md",
            fenced(&std::fs::read_to_string(root.join("examples/WALKTHROUGH.md")).unwrap()),
        ),
        (
            "README.md",
            fenced(&std::fs::read_to_string(root.join("README.md")).unwrap()),
        ),
    ] {
        seen += invocations(name, &text).len();
        bad.extend(check(name, &text, &acc));
    }
    for (tool, _) in tao_man::commands::all() {
        for (_, cmdline) in tao_man::extras::for_tool(tool).examples {
            let origin = format!("{tool}.1 EXAMPLES");
            seen += invocations(&origin, cmdline).len();
            bad.extend(check(&origin, cmdline, &acc));
        }
    }
    assert!(
        seen > 40,
        "only {seen} options found: the scanner is broken"
    );
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn make_references_are_expanded() {
    assert_eq!(
        unmake("a $(if $(IMAGE),--image '$(IMAGE)') --gpus '$(GPUS)' \"$$id\""),
        "a --image 'MAKEVAR' --gpus 'MAKEVAR' \"$id\""
    );
}

#[test]
fn the_scanner_finds_options_and_subcommands() {
    let got = invocations(
        "x",
        "a=$(tao-record open --spec s.yaml \\\n  --print-id) | tao-poll logs \"$id\" -n 5; tao-submit cancel --wait=3 | jq -r .id --arg",
    );
    let got: Vec<(String, String)> = got.into_iter().map(|(_, t, o)| (t, o)).collect();
    let want: Vec<(String, String)> = [
        ("tao-record open", "--spec"),
        ("tao-record open", "--print-id"),
        ("tao-poll logs", "-n"),
        ("tao-submit cancel", "--wait"),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    assert_eq!(got, want);
}

/// examples/crontab as cron runs it: the PATH it sets and the command of
/// its one job line (after the five time fields).
fn crontab_parts() -> (String, String) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let text = std::fs::read_to_string(root.join("examples/crontab")).unwrap();
    let path = text
        .lines()
        .find_map(|l| l.strip_prefix("PATH="))
        .expect("examples/crontab sets PATH")
        .to_string();
    let jobs: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.contains('=') || l.starts_with("*/"))
        .filter(|l| !l.trim().is_empty())
        .collect();
    assert_eq!(jobs.len(), 1, "one job line: {jobs:?}");
    let command = jobs[0].splitn(6, ' ').nth(5).unwrap().to_string();
    assert!(!command.contains('%'), "cron turns % into a newline");
    (path, command)
}

/// Run the crontab's command as cron would (bash -c, a bare environment)
/// with the crontab's PATH, its /usr/local/bin replaced by `bin`.
fn run_cron(bin: &Path, home: &Path) -> std::process::Output {
    let (path, command) = crontab_parts();
    assert!(path.starts_with("/usr/local/bin:"), "{path}");
    std::process::Command::new("/bin/bash")
        .arg("-c")
        .arg(&command)
        .env_clear()
        .env("HOME", home)
        .env(
            "PATH",
            path.replacen("/usr/local/bin", &bin.display().to_string(), 1),
        )
        .env("SHELL", "/bin/bash")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

/// The crontab works from wherever `make install` put the tools (PATH), not
/// from a checkout: with the built tools in a stand-in PREFIX/bin and an
/// empty record store, a run succeeds and logs nothing but the tools' own
/// messages.
#[test]
fn crontab_runs_the_installed_tools_from_path() {
    let (_, command) = crontab_parts();
    assert!(
        !command.contains("examples/")
            && !command.contains("~/tao-slurm")
            && !command.contains("$HOME/tao-slurm"),
        "the crontab must not assume a checkout: {command}"
    );
    // One pipeline (issue 14): no jq, no shell loop.
    assert!(
        !command.contains("jq")
            && !command.contains("while ")
            && command.contains("tao-record retry"),
        "{command}"
    );
    if !util::require("flock", "util-linux") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let bin = tmp.path().join("prefix/bin");
    std::fs::create_dir_all(&bin).unwrap();
    for (tool, _) in tao_man::commands::all() {
        std::fs::copy(util::tool_binary(tool), bin.join(tool)).unwrap();
    }
    let home = tmp.path().join("home");
    std::fs::create_dir_all(home.join(".config/tao-slurm")).unwrap();
    std::fs::write(
        home.join(".config/tao-slurm/env"),
        format!(
            "export TAO_STATE_DIR={}\nexport TAO_SITE_PROFILE=local\n",
            tmp.path().join("state").display()
        ),
    )
    .unwrap();
    let out = run_cron(&bin, &home);
    let log = std::fs::read_to_string(home.join(".cache/tao-slurm.cron.log")).unwrap();
    assert!(
        out.status.success(),
        "{}{log}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!log.contains("command not found"), "{log}");
    assert!(home.join(".cache/tao-slurm.cron.lock").exists());
}

/// A run that finds the lock held (the previous run still going) exits 0
/// at once without running any tool, and says so in the log (one line:
/// skipped, and why), so a user reading the log after a slow night sees
/// why a run did nothing.
#[test]
fn crontab_skips_a_run_while_the_previous_one_holds_the_lock() {
    if !util::require("flock", "util-linux") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let bin = tmp.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let ran = tmp.path().join("ran");
    // Stand-ins that only say they ran.
    for (tool, _) in tao_man::commands::all() {
        let p = bin.join(tool);
        std::fs::write(
            &p,
            format!("#!/bin/sh\necho {tool} >> '{}'\n", ran.display()),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let home = tmp.path().join("home");
    std::fs::create_dir_all(home.join(".config/tao-slurm")).unwrap();
    std::fs::create_dir_all(home.join(".cache")).unwrap();
    std::fs::write(home.join(".config/tao-slurm/env"), "").unwrap();
    let lock = home.join(".cache/tao-slurm.cron.lock");
    // Hold the lock as a previous run would; it says when it has it.
    let mut holder = std::process::Command::new("flock")
        .arg(&lock)
        .args(["-c", "echo locked; cat > /dev/null"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    {
        use std::io::BufRead;
        let mut r = std::io::BufReader::new(holder.stdout.as_mut().unwrap());
        r.read_line(&mut first).unwrap();
    }
    assert_eq!(first, "locked\n");
    let out = run_cron(&bin, &home);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!ran.exists(), "a tool ran while the lock was held");
    let log = std::fs::read_to_string(home.join(".cache/tao-slurm.cron.log")).unwrap();
    assert_eq!(log.lines().count(), 1, "{log}");
    assert!(
        log.contains("skipped")
            && log.contains("previous run still holds")
            && log.contains("tao-slurm.cron.lock"),
        "{log}"
    );
    drop(holder.stdin.take());
    assert!(holder.wait().unwrap().success());
    // Lock free: the same line runs the tools.
    let out = run_cron(&bin, &home);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The tools of a pipeline start together: any order.
    let ran = std::fs::read_to_string(&ran).unwrap();
    assert!(
        ran.lines().any(|l| l == "tao-record")
            && ran.contains("tao-poll")
            && ran.contains("tao-classify"),
        "{ran}"
    );
}
