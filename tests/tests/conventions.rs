//! Conventions every line-reading tool shares, checked on the built
//! binaries side by side (no cluster needed):
//!
//! - stdin a terminal: a one-line usage error naming stdin and the fix
//!   (`tao_core::cli::require_piped_stdin`), exit 2, nothing on stdout,
//!   instead of waiting silently for lines nobody types;
//! - a line that is not JSON, or lacks a field the tool requires, is bad
//!   input data: exit 65 and a `line 1` report on stderr (docs/CONTRACT.md);
//! - library code never calls `process::exit` (only a `main.rs` does).
//!
//! And conventions of the source tree itself (issue 13): no two files of a
//! crate import each other.

use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use tao_tests::{bin, dino_train, text, READERS};

/// A command for `tool args` with a cleared environment: only PATH, HOME
/// and TAO_STATE_DIR (an empty store in `home`).
fn tool(name: &str, args: &[&str], home: &std::path::Path) -> Command {
    let mut cmd = Command::new(bin(name));
    cmd.args(args)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", home)
        .env("TAO_STATE_DIR", home.join("state"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// Wait for `child` at most `limit`, polling; kill it and fail when it is
/// still running (the bug this file guards against is a silent wait).
fn wait_bounded(mut child: Child, limit: Duration, what: &str) -> Output {
    let start = Instant::now();
    loop {
        if child.try_wait().expect("try_wait").is_some() {
            return child.wait_with_output().expect("collecting output");
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().expect("collecting output");
            panic!(
                "{what} was still waiting after {limit:?} (stderr: {})",
                text(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn every_reader_refuses_a_terminal_on_stdin() {
    let home = tempfile::tempdir().unwrap();
    for (name, args) in READERS {
        let what = format!("{name} {}", args.join(" "));
        let pty = nix::pty::openpty(None, None).expect("openpty");
        let child = tool(name, args, home.path())
            .stdin(Stdio::from(pty.slave))
            .spawn()
            .unwrap_or_else(|e| panic!("spawning {what}: {e}"));
        let out = wait_bounded(child, Duration::from_secs(30), &what);
        drop(pty.master);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{what}: {err}");
        assert!(
            out.stdout.is_empty(),
            "{what}: stdout {:?}",
            text(&out.stdout)
        );
        assert_eq!(err.lines().count(), 1, "{what}: {err}");
        let prefix = format!("{name}: error: stdin is a terminal");
        assert!(err.starts_with(&prefix), "{what}: {err}");
        assert!(err.contains("pipe them in, e.g. `"), "{what}: {err}");
        assert!(err.contains(&format!("| {name}")), "{what}: {err}");
    }
}

/// Feed `input` to `name args`; the whole output.
fn feed(name: &str, args: &[&str], input: &str, home: &std::path::Path) -> Output {
    let what = format!("{name} {}", args.join(" "));
    let mut child = tool(name, args, home)
        .stdin(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("spawning {what}: {e}"));
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(input.as_bytes()).unwrap();
    }
    wait_bounded(child, Duration::from_secs(60), &what)
}

#[test]
fn a_line_that_is_not_json_is_bad_data_everywhere() {
    let home = tempfile::tempdir().unwrap();
    for (name, args) in READERS {
        if *args == ["logs"] {
            continue; // reads one line, checked below
        }
        let what = format!("{name} {}", args.join(" "));
        let out = feed(name, args, "not json\n", home.path());
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(65), "{what}: {err}");
        // Nothing to print for a line that is not JSON (preflight still
        // prints its report of the checks, without the line).
        let stdout = text(&out.stdout);
        if *args == ["preflight", "--lines"] {
            assert!(stdout.starts_with("{\"preflight\":"), "{what}: {stdout}");
        } else {
            assert!(stdout.is_empty(), "{what}: {stdout}");
        }
        assert!(
            err.contains("line 1, column 2: invalid JSON"),
            "{what}: {err}"
        );
    }
    let out = feed("tao-poll", &["logs"], "not json\n", home.path());
    assert_eq!(out.status.code(), Some(65), "{}", text(&out.stderr));
}

/// A new user's finding: a job-line file saved by Notepad or PowerShell
/// starts with a UTF-8 byte-order mark, and every tool said only "invalid
/// JSON". The one reader (`tao_core::LineReader`) skips a mark opening the
/// input: each tool answers exactly as it does without one.
#[test]
fn a_byte_order_mark_opening_the_input_is_skipped_everywhere() {
    let home = tempfile::tempdir().unwrap();
    for (name, args) in READERS {
        let what = format!("{name} {}", args.join(" "));
        let plain = feed(name, args, "{}\n", home.path());
        let marked = feed(name, args, "\u{FEFF}{}\n", home.path());
        let err = text(&marked.stderr);
        assert!(!err.contains("invalid JSON"), "{what}: {err}");
        assert_eq!(marked.status.code(), plain.status.code(), "{what}: {err}");
        assert_eq!(err, text(&plain.stderr), "{what}");
        assert_eq!(text(&marked.stdout), text(&plain.stdout), "{what}");
    }
}

#[test]
fn a_line_missing_a_required_field_is_bad_data_everywhere() {
    let home = tempfile::tempdir().unwrap();
    // Tools that need the line's `id` (or, for lint, `script.text`).
    let needs_fields: &[(&str, &[&str], &str)] = &[
        ("tao-render", &[], "missing string field `id`"),
        (
            "tao-redact",
            &["lint"],
            "missing string field `script.text`",
        ),
        ("tao-submit", &[], "missing string field `id`"),
        ("tao-submit", &["cancel"], "missing string field `id`"),
        ("tao-record", &["mark"], "missing string field `id`"),
        ("tao-poll", &["logs"], "`id`"),
    ];
    for (name, args, says) in needs_fields {
        let what = format!("{name} {}", args.join(" "));
        let out = feed(name, args, "{}\n", home.path());
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(65), "{what}: {err}");
        // (`tao-poll logs` reads one line only and names no line number.)
        assert!(*args == ["logs"] || err.contains("line 1"), "{what}: {err}");
        assert!(err.contains(says), "{what}: {err}");
        // Loses nothing: a JSON object goes on, carrying `error.code =
        // "missing_stage"` (the field is an earlier stage's).
        let stdout = text(&out.stdout);
        if !stdout.is_empty() {
            let v: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
            assert_eq!(v["error"]["code"], "missing_stage", "{what}: {stdout}");
        }
    }
    // Filters that act only on some lines pass any other line on untouched
    // (tao-jobline(7)): a line that is not ERROR (classify), a line never
    // submitted (poll, with one warning). Nothing they need is missing.
    for (name, args) in [("tao-classify", &[][..]), ("tao-poll", &[])] {
        let out = feed(name, args, "{}\n", home.path());
        assert_eq!(out.status.code(), Some(0), "{name}: {}", text(&out.stderr));
        assert_eq!(text(&out.stdout), "{}\n", "{name}");
    }
}

/// Run `name args` with stdout and stderr on a terminal (a pty, TERM set,
/// NO_COLOR unset: where a colouring tool would colour); all it wrote.
fn on_a_terminal(name: &str, args: &[&str], home: &std::path::Path) -> (Option<i32>, Vec<u8>) {
    use std::io::Read;
    let what = format!("{name} {}", args.join(" "));
    let pty = nix::pty::openpty(None, None).expect("openpty");
    let err_side = pty.slave.try_clone().expect("dup pty");
    let mut cmd = tool(name, args, home);
    cmd.env("TERM", "xterm-256color")
        .stdin(Stdio::null())
        .stdout(Stdio::from(pty.slave))
        .stderr(Stdio::from(err_side));
    let child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("spawning {what}: {e}"));
    // The Command holds the slave ends until dropped: the reader sees the
    // end of output (EIO) only once every slave end is closed.
    drop(cmd);
    let mut master = std::fs::File::from(pty.master);
    let reader = std::thread::spawn(move || {
        let mut all = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            match master.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => all.extend_from_slice(&buf[..n]),
            }
        }
        all
    });
    let out = wait_bounded(child, Duration::from_secs(30), &what);
    (out.status.code(), reader.join().unwrap())
}

/// NO_COLOR is honoured by never printing colour: help, usage errors and
/// the terminal tables carry no escape sequence, even on a terminal.
#[test]
fn no_tool_prints_colour_on_a_terminal() {
    let home = tempfile::tempdir().unwrap();
    let cases: &[(&str, &[&str], i32)] = &[
        ("tao-record", &["--help"], 0),
        ("tao-record", &["open", "--time"], 2),
        ("tao-record", &["list"], 0),
        ("tao-render", &["--help"], 0),
        ("tao-render", &["--bogus"], 2),
        ("tao-redact", &["--help"], 0),
        ("tao-redact", &["lint", "--bogus"], 2),
        ("tao-submit", &["--help"], 0),
        ("tao-submit", &["cancel", "--wait", "x"], 2),
        ("tao-poll", &["--help"], 0),
        ("tao-poll", &["--intervl", "3"], 2),
        ("tao-poll", &["logs", "--help"], 0),
        ("tao-classify", &["--help"], 0),
        ("tao-classify", &["--max-attempts", "0"], 2),
    ];
    for (name, args, code) in cases {
        let (got, bytes) = on_a_terminal(name, args, home.path());
        let shown = text(&bytes);
        assert_eq!(got, Some(*code), "{name} {args:?}: {shown}");
        assert!(!bytes.is_empty(), "{name} {args:?} printed nothing");
        assert!(
            !bytes.contains(&0x1b),
            "{name} {args:?} printed an escape sequence: {shown:?}"
        );
    }
}

/// The shared line reader's bound (tao_core::jobline::MAX_LINE_BYTES, 64
/// MiB): a longer line is a line error naming its number and the bound,
/// read past in bounded memory, and the lines after it are still read
/// (tao-record mark goes on to line 3; tao-render, which stops at its
/// first bad line, has printed line 1).
#[test]
fn a_line_past_the_bound_is_a_line_error() {
    let home = tempfile::tempdir().unwrap();
    let args = [
        &["open", "--dry-run"][..],
        &dino_train("/tmp/tao-long-line"),
        &["--command", "true"],
    ]
    .concat();
    let out = tool("tao-record", &args, home.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let line = text(&out.stdout).trim().to_string();
    let long = format!("{{\"id\":\"{}\"}}", "x".repeat((64 << 20) + 1));
    let input = format!("{line}\n{long}\n{line}\n");
    for (name, args, printed_line_1) in [
        ("tao-render", &[][..], true),
        ("tao-record", &["mark"][..], true),
    ] {
        let mut child = tool(name, args, home.path())
            .stdin(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let input = input.clone();
        let feeder = std::thread::spawn(move || {
            use std::io::Write;
            let _ = stdin.write_all(input.as_bytes());
        });
        let out = wait_bounded(child, Duration::from_secs(60), name);
        feeder.join().unwrap();
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(65), "{name}: {err}");
        assert!(
            err.contains("line 2: longer than 67108864 bytes, the bound on one job line"),
            "{name}: {err}"
        );
        assert_eq!(!out.stdout.is_empty(), printed_line_1, "{name}: {err}");
        if name == "tao-record" {
            // Lines 1 and 3 were read (their records do not exist).
            assert_eq!(err.matches("no record").count(), 2, "{err}");
        }
    }
}

// ---------------------------------------------------------------------------
// Layout: no two files of a crate import each other (issue 13).
//
// Each crate's `src/` is a graph: a node per module file (`src/a.rs` and
// `src/a/mod.rs` are `a`, `src/a/b.rs` is `a::b`; `lib.rs` and `main.rs`,
// the crate root, are no node), an edge from a file to every module file
// it names: `crate::a::…` (also inside `use crate::{…}` groups),
// `super::…`, `self::b::…` and `b::…` for a child `b` it declares (`mod
// b;`), and a name the crate root re-exports (`pub use a::{X, Y}` in
// lib.rs: `crate::X` is `a`). Declaring a child is no import: a child may
// use its parent's items as long as the parent uses none of the child's.
// Comments do not count. A cycle is a failure naming every file on it.

/// The workspace root.
const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

/// Module graph of one crate: module path -> the module paths it refers to.
type Graph = std::collections::BTreeMap<String, std::collections::BTreeSet<String>>;

/// Every crate of the workspace with a `src/` folder: (name, src dir).
fn crate_srcs() -> Vec<(String, std::path::PathBuf)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(ROOT).unwrap() {
        let dir = entry.unwrap().path();
        if dir.join("Cargo.toml").is_file() && dir.join("src").is_dir() {
            let name = dir.file_name().unwrap().to_string_lossy().into_owned();
            out.push((name, dir.join("src")));
        }
    }
    out.sort();
    assert!(out.len() >= 9, "found only {out:?} under {ROOT}");
    out
}

/// Every `.rs` file under `dir`, recursively.
fn rs_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() {
            rs_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// The module path of `file` under `src` (`a::b`), or `None` for the crate
/// root (`lib.rs`, `main.rs`) and binaries under `src/bin/`.
fn module_of(src: &std::path::Path, file: &std::path::Path) -> Option<String> {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.first().is_some_and(|p| p == "bin") {
        return None;
    }
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    if parts.len() == 1 && (parts[0] == "lib" || parts[0] == "main") {
        return None;
    }
    Some(parts.join("::"))
}

/// `text` without `//` comments (doc comments included) and `/* */` blocks.
/// A `//` inside a string literal cuts the rest of that line too: at worst
/// a reference on that line is missed.
fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while !rest.is_empty() {
        let line_c = rest.find("//");
        let block_c = rest.find("/*");
        match (line_c, block_c) {
            (Some(l), b) if b.is_none_or(|b| l < b) => {
                out.push_str(&rest[..l]);
                rest = &rest[l..];
                rest = rest.find('\n').map_or("", |n| &rest[n..]);
            }
            (_, Some(b)) => {
                out.push_str(&rest[..b]);
                rest = rest[b + 2..]
                    .find("*/")
                    .map_or("", |e| &rest[b + 2 + e + 2..]);
            }
            _ => {
                out.push_str(rest);
                rest = "";
            }
        }
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The paths written after `prefix` (`crate::`, `super::`, `name::`) in
/// `text`, each as its segments (`crate::a::b::C` gives `[a, b, C]`); a
/// group `crate::{a::X, b, c::{D, E}}` gives `[a, X]`, `[b]`, `[c, D]`,
/// `[c, E]`.
fn paths_after(text: &str, prefix: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(i) = text[from..].find(prefix) {
        let at = from + i;
        from = at + prefix.len();
        // `crate::` but not `tao_crate::`, `cache::` but not `fs::cache::`,
        // `super::` but not `super::super::` (counted once, from the outer).
        if text[..at].chars().next_back().is_some_and(is_ident) || text[..at].ends_with("::") {
            continue;
        }
        let (paths, _) = parse_tree(&text[from..]);
        out.extend(paths);
    }
    out
}

/// Parse one use-tree at the start of `s` (`a::b::C`, `a::{X, y::Z}`,
/// `{…}`); the paths it names and the bytes it took.
fn parse_tree(s: &str) -> (Vec<Vec<String>>, usize) {
    let b = s.as_bytes();
    let skip_space = |mut i: usize| {
        while i < b.len() && (b[i].is_ascii_whitespace() || b[i] == b',') {
            i += 1;
        }
        i
    };
    let mut segs: Vec<String> = Vec::new();
    let mut i = 0;
    loop {
        i = skip_space(i);
        if i < b.len() && b[i] == b'{' {
            i += 1;
            let mut all = Vec::new();
            loop {
                i = skip_space(i);
                if i >= b.len() || b[i] == b'}' {
                    return (all, i + 1);
                }
                let (inner, used) = parse_tree(&s[i..]);
                // `*` (or anything else that is no path): step over it.
                i += used.max(1);
                for p in inner {
                    let mut full = segs.clone();
                    full.extend(p);
                    all.push(full);
                }
            }
        }
        let start = i;
        while i < b.len() && is_ident(b[i] as char) {
            i += 1;
        }
        if i == start {
            return (if segs.is_empty() { vec![] } else { vec![segs] }, i);
        }
        segs.push(s[start..i].to_string());
        if s[i..].starts_with("::") {
            i += 2;
        } else {
            return (vec![segs], i);
        }
    }
}

/// The longest prefix of `base` + `segs` that names a module of `mods`;
/// for a path from the crate root, else the module the root re-exports
/// its first segment from (`roots`).
fn resolve(
    base: &[String],
    segs: &[String],
    mods: &std::collections::BTreeSet<String>,
    roots: &std::collections::BTreeMap<String, String>,
) -> Option<String> {
    let mut full: Vec<String> = base.to_vec();
    full.extend(segs.iter().cloned());
    for n in (1..=full.len()).rev() {
        let cand = full[..n].join("::");
        if mods.contains(&cand) {
            return Some(cand);
        }
    }
    if base.is_empty() {
        return segs.first().and_then(|s| roots.get(s)).cloned();
    }
    None
}

/// The module graph of the crate whose `src/` folder is `src`.
fn module_graph(src: &std::path::Path) -> Graph {
    let mut files = Vec::new();
    rs_files(src, &mut files);
    let mut texts = std::collections::BTreeMap::new();
    let mut root_text = String::new();
    for f in &files {
        let text = strip_comments(&std::fs::read_to_string(f).unwrap());
        match module_of(src, f) {
            Some(m) => {
                texts.insert(m, text);
            }
            None if f.ends_with("lib.rs") => root_text = text,
            None => {}
        }
    }
    graph_of(&texts, &root_text)
}

/// The graph of module texts (module path -> its text, comments stripped)
/// and the crate root's text (for its `pub use` re-exports).
fn graph_of(texts: &std::collections::BTreeMap<String, String>, root_text: &str) -> Graph {
    let mods: std::collections::BTreeSet<String> = texts.keys().cloned().collect();
    // `pub use a::{X, Y};` in the root: X and Y are a's.
    let mut roots = std::collections::BTreeMap::new();
    for stmt in root_text.split(';') {
        let Some(at) = stmt.find("pub use ") else {
            continue;
        };
        let (paths, _) = parse_tree(&stmt[at + "pub use ".len()..]);
        for p in paths {
            let p = match p.first().map(String::as_str) {
                Some("crate" | "self") => p[1..].to_vec(),
                _ => p,
            };
            let m = resolve(&[], &p, &mods, &Default::default());
            if let (Some(m), Some(name)) = (m, p.last()) {
                roots.insert(name.clone(), m);
            }
        }
    }
    let mut g = Graph::new();
    for (m, text) in texts {
        let here: Vec<String> = m.split("::").map(str::to_string).collect();
        let parent = &here[..here.len() - 1];
        let mut to = std::collections::BTreeSet::new();
        // In the file's own test module, `super::` is the file itself.
        let (body, tests) = match text.find("#[cfg(test)]\nmod tests {") {
            Some(i) => text.split_at(i),
            None => (text.as_str(), ""),
        };
        for segs in paths_after(text, "crate::") {
            to.extend(resolve(&[], &segs, &mods, &roots));
        }
        for segs in paths_after(body, "super::") {
            to.extend(resolve(parent, &segs, &mods, &roots));
        }
        for segs in paths_after(tests, "super::super::") {
            to.extend(resolve(parent, &segs, &mods, &roots));
        }
        // A child declared with `mod child;` (not an inline `mod tests {`)
        // and named as `child::…` or `self::child::…`.
        for line in body.lines() {
            let l = line.trim();
            let l = l
                .split_once(' ')
                .filter(|(v, _)| v.starts_with("pub"))
                .map_or(l, |(_, r)| r);
            let Some(child) = l.strip_prefix("mod ").and_then(|r| r.strip_suffix(';')) else {
                continue;
            };
            let child = child.trim();
            for segs in paths_after(text, &format!("{child}::")) {
                let mut path = vec![child.to_string()];
                path.extend(segs);
                to.extend(resolve(&here, &path, &mods, &roots));
            }
        }
        for segs in paths_after(text, "self::") {
            to.extend(resolve(&here, &segs, &mods, &roots));
        }
        to.remove(m);
        to.retain(|t| mods.contains(t));
        g.insert(m.clone(), to);
    }
    g
}

/// A cycle of `g`, as the path around it (`[a, b, a]`), or `None`.
fn find_cycle(g: &Graph) -> Option<Vec<String>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        Open,
        Done,
    }
    fn visit(
        g: &Graph,
        n: &str,
        marks: &mut std::collections::BTreeMap<String, Mark>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        marks.insert(n.to_string(), Mark::Open);
        stack.push(n.to_string());
        for next in g.get(n).into_iter().flatten() {
            match marks.get(next) {
                Some(Mark::Open) => {
                    let from = stack.iter().position(|s| s == next).unwrap();
                    let mut cycle = stack[from..].to_vec();
                    cycle.push(next.clone());
                    return Some(cycle);
                }
                Some(Mark::Done) => {}
                None => {
                    if let Some(c) = visit(g, next, marks, stack) {
                        return Some(c);
                    }
                }
            }
        }
        stack.pop();
        marks.insert(n.to_string(), Mark::Done);
        None
    }
    let mut marks = std::collections::BTreeMap::new();
    for n in g.keys() {
        if !marks.contains_key(n) {
            if let Some(c) = visit(g, n, &mut marks, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}

#[test]
fn no_two_files_of_a_crate_import_each_other() {
    let mut cycles = Vec::new();
    for (name, src) in crate_srcs() {
        let g = module_graph(&src);
        if let Some(c) = find_cycle(&g) {
            let files: Vec<String> = c
                .iter()
                .map(|m| format!("{}.rs", m.replace("::", "/")))
                .collect();
            cycles.push(format!("{name}/src: {}", files.join(" -> ")));
        }
    }
    assert!(
        cycles.is_empty(),
        "files that import each other (move what both need into a third file):\n{}",
        cycles.join("\n")
    );
}

/// The cycle finder on graphs made here: it must be able to fail.
#[test]
fn the_cycle_finder_finds_a_planted_cycle() {
    let texts = |files: &[(&str, &str)]| -> std::collections::BTreeMap<String, String> {
        files
            .iter()
            .map(|(m, t)| (m.to_string(), strip_comments(t)))
            .collect()
    };
    // Through a use group, a root re-export and a path in code.
    let g = graph_of(
        &texts(&[
            ("cli", "use crate::{poll::Options, logs::{self, run}};\n"),
            ("logs", "fn f() { crate::Reader::new(); }\n"),
            ("poll", "// crate::cli::x is a comment\nuse std::io;\n"),
            ("read", "use crate::cli::Args;\nuse tao_core::logs::X;\n"),
        ]),
        "mod cli;\npub use read::{Reader, Writer};\n",
    );
    assert_eq!(g["cli"].iter().collect::<Vec<_>>(), ["logs", "poll"]);
    assert_eq!(g["logs"].iter().collect::<Vec<_>>(), ["read"]);
    assert!(g["poll"].is_empty(), "a comment is no import: {g:?}");
    assert_eq!(g["read"].iter().collect::<Vec<_>>(), ["cli"]);
    assert_eq!(find_cycle(&g).unwrap(), ["cli", "logs", "read", "cli"]);
    // A child may name its parent (`super::`) while the parent only
    // declares it; once the parent uses the child, that is a cycle. A
    // child's own test module's `super::` is the child itself.
    let child = "use super::Submitted;\n#[cfg(test)]\nmod tests {\n    use super::*;\n}\n";
    let parent = "pub mod sbatch;\npub struct Submitted;\n";
    let g = graph_of(&texts(&[("submit", parent), ("submit::sbatch", child)]), "");
    assert_eq!(find_cycle(&g), None, "{g:?}");
    for parent in [
        "mod sbatch;\nuse sbatch::submit_one;\n",
        "mod sbatch;\nfn f() { self::sbatch::go() }\n",
    ] {
        let g = graph_of(&texts(&[("submit", parent), ("submit::sbatch", child)]), "");
        assert_eq!(
            find_cycle(&g).unwrap(),
            ["submit", "submit::sbatch", "submit"],
            "{parent}"
        );
    }
    // No cycle: a chain and a diamond; then one edge back.
    let mut g = Graph::new();
    for (a, b) in [("a", "b"), ("b", "c"), ("a", "c"), ("c", "d")] {
        g.entry(a.into()).or_default().insert(b.into());
        g.entry(b.into()).or_default();
    }
    assert_eq!(find_cycle(&g), None);
    g.get_mut("d").unwrap().insert("b".into());
    assert_eq!(find_cycle(&g).unwrap(), ["b", "c", "d", "b"]);
}

// ---------------------------------------------------------------------------
// Doc comments point only at files in the repository (issue 13).

/// Every `.rs` file of the workspace (not under `target/` or a hidden
/// folder).
fn workspace_rs_files() -> Vec<std::path::PathBuf> {
    fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let p = entry.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy();
            if name.starts_with('.') || name == "target" {
                continue;
            }
            if p.is_dir() {
                walk(&p, out);
            } else if name.ends_with(".rs") {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    walk(std::path::Path::new(ROOT), &mut out);
    out
}

/// The repository paths a doc comment (`///`, `//!`) of `text` names: a
/// word ending in `.md`, or starting with a slash after `docs`, `tests`,
/// `man`, `notes` or `..`; with the line number.
fn doc_paths(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let t = line.trim_start();
        let Some(doc) = t.strip_prefix("///").or_else(|| t.strip_prefix("//!")) else {
            continue;
        };
        let words = doc.split(|c: char| c.is_whitespace() || "`'\"(),;[]{}*".contains(c));
        for w in words {
            let w = w.trim_end_matches(['.', ':']);
            let pathy = w.ends_with(".md")
                || ["docs/", "tests/", "man/", "notes/", "../"]
                    .iter()
                    .any(|p| w.starts_with(p));
            let clean = w
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_./<>-".contains(c));
            if pathy && clean && w.len() > 3 {
                out.push((n + 1, w.to_string()));
            }
        }
    }
    out
}

/// Whether `cited` (from a doc comment of `file`) names something in the
/// repository: relative to the root, to the file's crate or to the file's
/// folder. A `<placeholder>` part stands for any name: the folder above it
/// must exist. Nothing outside the repository counts.
fn cited_exists(file: &std::path::Path, cited: &str) -> bool {
    let root = std::path::Path::new(ROOT);
    let rel = file.strip_prefix(root).unwrap();
    let krate = root.join(rel.components().next().unwrap());
    let dir = file.parent().unwrap();
    let cited = match cited.find('<') {
        Some(i) => &cited[..cited[..i].rfind('/').map_or(0, |s| s + 1)],
        None => cited,
    };
    // Inside the repository only: `../shared/x` from the root is outside.
    let inside = |p: std::path::PathBuf| {
        p.canonicalize()
            .is_ok_and(|p| p.starts_with(root.canonicalize().unwrap()))
    };
    !cited.is_empty()
        && [root, krate.as_path(), dir]
            .iter()
            .any(|base| inside(base.join(cited)))
}

#[test]
fn doc_comments_cite_only_files_in_the_repository() {
    let mut missing = Vec::new();
    let files = workspace_rs_files();
    assert!(files.len() > 50, "{} files under {ROOT}", files.len());
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        for (line, cited) in doc_paths(&text) {
            if !cited_exists(&f, &cited) {
                let rel = f.strip_prefix(ROOT).unwrap().display().to_string();
                missing.push(format!("{rel}:{line}: {cited}"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "doc comments cite files that are not in the repository (move what they cite into docs/):\n{}",
        missing.join("\n")
    );
}

/// The citation finder on text made here: it must be able to fail.
#[test]
fn the_citation_finder_sees_what_a_doc_comment_names() {
    let text = [
        "//! See DESIGN.md and (docs/design.md, \"Defaults\").",
        "/// Layout: tests/replays/slurm-<version>/ and `man/tao-jobline.7`.",
        "// A plain comment naming GONE.md is no doc comment.",
        "/// notes/local-cluster.md; ../shared/cases/x.jsonl; a/b.rs; x.md.",
    ]
    .join("\n");
    let found: Vec<String> = doc_paths(&text)
        .into_iter()
        .map(|(n, p)| format!("{n}:{p}"))
        .collect();
    assert_eq!(
        found,
        [
            "1:DESIGN.md",
            "1:docs/design.md",
            "2:tests/replays/slurm-<version>/",
            "2:man/tao-jobline.7",
            "4:notes/local-cluster.md",
            "4:../shared/cases/x.jsonl",
            "4:x.md",
        ]
    );
    let here = std::path::Path::new(ROOT).join("tests/tests/conventions.rs");
    let exists = |c: &str| cited_exists(&here, c);
    assert!(exists("docs/design.md") && exists("docs/CONTRACT.md"));
    assert!(exists("man/tao-jobline.7") && exists("tests/cluster/up"));
    assert!(exists("tao-poll/tests/replays/slurm-<version>/"));
    assert!(!exists("DESIGN.md") && !exists("notes/local-cluster.md"));
    // The repository's parent holds the project's shared folder on the
    // integrator's machine: still not the repository.
    assert!(!exists("../../shared") && !exists("../shared"));
    assert!(!exists("../shared/cases/x.jsonl") && !exists("tests/nothing-here/<x>/y"));
}

/// Library code never ends the process (issue 13): only a binary's
/// `main.rs` calls `std::process::exit`, with the status the library
/// returned (`tao_core::cli::main_with`). Checked over every `src/` file
/// of the workspace's crates, comments excluded.
#[test]
fn library_code_never_calls_process_exit() {
    fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for e in std::fs::read_dir(&root).unwrap().flatten() {
        let src = e.path().join("src");
        if e.path().join("Cargo.toml").is_file() && src.is_dir() {
            walk(&src, &mut files);
        }
    }
    assert!(files.len() > 50, "found only {} source files", files.len());
    let mut found = Vec::new();
    for f in &files {
        if f.file_name().is_some_and(|n| n == "main.rs")
            || f.components().any(|c| c.as_os_str() == "bin")
        {
            continue;
        }
        let text = std::fs::read_to_string(f).unwrap();
        for (i, line) in text.lines().enumerate() {
            let code = line.trim_start();
            if !code.starts_with("//") && code.contains("process::exit(") {
                found.push(format!("{}:{}", f.display(), i + 1));
            }
        }
    }
    assert!(
        found.is_empty(),
        "process::exit in library code: {found:?}; return the status to main.rs instead"
    );
}
