//! Shared helpers of the tao-man tests: where the built tools are, and
//! whether an external program (mandoc, man, make) is installed. Each test
//! file uses a part of them.
#![allow(dead_code)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The profile directory the tests were built into (`target/<profile>`):
/// the test executable is `target/<profile>/deps/<name>-<hash>`.
pub fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    let deps = exe.parent().expect("deps directory");
    deps.parent().expect("profile directory").to_path_buf()
}

/// The built binary of `tool`, or a failure naming the fix.
pub fn tool_binary(tool: &str) -> PathBuf {
    let p = profile_dir().join(tool);
    assert!(
        p.is_file(),
        "{} is missing: run cargo build --workspace --bins",
        p.display()
    );
    p
}

/// Whether `program` runs (found on PATH).
pub fn have(program: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {program} >/dev/null 2>&1")])
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

/// Skip (outside CI) or fail (CI=true) when `program` is not installed.
/// Returns true when the caller should go on.
pub fn require(program: &str, package: &str) -> bool {
    if have(program) {
        return true;
    }
    let msg = format!("{program} is not installed: apt-get install -y {package}");
    if std::env::var("CI").as_deref() == Ok("true") {
        panic!("{msg}");
    }
    eprintln!("skipped: {msg}");
    false
}

/// The checked-in `man/` directory.
pub fn man_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The section-1 and section-7 pages under `man/`.
pub fn pages() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(man_dir())
        .expect("read man/")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| {
            matches!(
                p.extension().and_then(|e| e.to_str()),
                Some("1" | "5" | "7")
            )
        })
        .collect();
    v.sort();
    v
}

/// Long options defined in `--help` text: on option lines (indented at
/// most 6 columns and starting with `-`), in the part before the
/// description (the first run of two spaces).
pub fn help_options(help: &str) -> BTreeSet<String> {
    let mut set = BTreeSet::new();
    for line in help.lines() {
        let indent = line.len() - line.trim_start().len();
        let t = line.trim_start();
        if indent > 6 || !t.starts_with('-') {
            continue;
        }
        let head = t.split("  ").next().unwrap_or("");
        set.extend(long_names(head));
    }
    set
}

/// `--name` tokens of a piece of text.
pub fn long_names(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("--") {
        let tail = &rest[i + 2..];
        let end = tail
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
            .unwrap_or(tail.len());
        if end > 0 && tail.as_bytes()[0].is_ascii_alphabetic() {
            out.push(format!("--{}", &tail[..end]));
        }
        rest = &tail[end..];
    }
    out
}

/// Run a built tool with `args` (a help request) in a cleared environment;
/// its standard output, which must come with status 0.
pub fn run_help(tool: &str, args: &[&str]) -> String {
    let out = Command::new(tool_binary(tool))
        .args(args)
        .env_clear()
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{tool} {args:?} exited {:?}: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Short options (`-n`) defined in `--help` text, on the same lines as
/// [`help_options`] reads.
pub fn help_shorts(help: &str) -> BTreeSet<String> {
    let mut set = BTreeSet::new();
    for line in help.lines() {
        let indent = line.len() - line.trim_start().len();
        let t = line.trim_start();
        if indent > 6 || !t.starts_with('-') {
            continue;
        }
        let head = t.split("  ").next().unwrap_or("");
        for word in head.split([',', ' ']) {
            let b = word.as_bytes();
            if b.len() == 2 && b[0] == b'-' && b[1].is_ascii_alphanumeric() {
                set.insert(word.to_string());
            }
        }
    }
    set
}
