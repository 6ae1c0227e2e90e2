//! Shared helpers of the tao-man tests: where the built tools are, and
//! whether an external program (mandoc, man, make) is installed. Each test
//! file uses a part of them.
#![allow(dead_code)]

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
        .filter(|p| matches!(p.extension().and_then(|e| e.to_str()), Some("1" | "7")))
        .collect();
    v.sort();
    v
}
