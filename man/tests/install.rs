//! `make install` and `make uninstall` into a temporary PREFIX (and a
//! DESTDIR staging root): every binary, page and completion appears where
//! it should, the installed tools run, and uninstall removes exactly those
//! files (a foreign file beside them stays).
//!
//! Fast by design: it installs the binaries this test run has already
//! built (`PROFILE=dev NO_BUILD=1 TARGET_DIR=<this run's target>`) instead
//! of `make install`'s default `cargo build --release`, so it takes well
//! under a second. A missing binary fails with the fix
//! (`cargo build --workspace --bins`).

mod util;

use std::path::{Path, PathBuf};
use std::process::Command;

use util::{profile_dir, require, tool_binary};

use tao_man::commands::TOOLS;

/// Every file `make install` writes under `root` (= DESTDIR + PREFIX).
fn expected(root: &Path) -> Vec<PathBuf> {
    let mut v = Vec::new();
    for t in TOOLS {
        v.push(root.join("bin").join(t));
        v.push(root.join("share/man/man1").join(format!("{t}.1")));
        v.push(root.join("share/bash-completion/completions").join(t));
        v.push(root.join("share/zsh/site-functions").join(format!("_{t}")));
        v.push(
            root.join("share/fish/vendor_completions.d")
                .join(format!("{t}.fish")),
        );
    }
    v.push(root.join("share/man/man7/tao-jobline.7"));
    v.push(root.join("share/man/man5/tao-site-profile.5"));
    v
}

/// Every regular file under `dir`.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

fn make(args: &[String]) {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let profile = profile_dir();
    let name = profile.file_name().unwrap().to_string_lossy().into_owned();
    let profile_arg = if name == "debug" { "dev".into() } else { name };
    let out = Command::new("make")
        .arg("-s")
        .arg("-C")
        .arg(workspace)
        .args(args)
        .arg("NO_BUILD=1")
        .arg(format!("PROFILE={profile_arg}"))
        .arg(format!(
            "TARGET_DIR={}",
            profile.parent().unwrap().display()
        ))
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "make {args:?} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn install_then_uninstall(vars: &[String], root: &Path, top: &Path) {
    make(&[&["install".to_string()], vars].concat());
    let want = expected(root);
    for p in &want {
        assert!(p.is_file(), "make install did not write {}", p.display());
    }
    let mut got = files_under(top);
    got.retain(|p| !p.ends_with("foreign"));
    let mut want_sorted = want.clone();
    want_sorted.sort();
    assert_eq!(got, want_sorted, "make install wrote other files");
    // The installed tools run.
    let out = Command::new(root.join("bin/tao-classify"))
        .arg("--version")
        .env_clear()
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("tao-classify "));
    // The installed page is the checked-in one.
    assert_eq!(
        std::fs::read(root.join("share/man/man1/tao-poll.1")).unwrap(),
        std::fs::read(util::man_dir().join("tao-poll.1")).unwrap()
    );
    make(&[&["uninstall".to_string()], vars].concat());
    let left: Vec<PathBuf> = files_under(top);
    assert_eq!(
        left.iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect::<Vec<_>>(),
        ["foreign"],
        "make uninstall left or removed the wrong files: {left:?}"
    );
    // The directories install made are gone once empty; the prefix stays.
    let mut empty = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        let entries: Vec<PathBuf> = std::fs::read_dir(&d)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        if entries.is_empty() && d != root {
            empty.push(d.clone());
        }
        stack.extend(entries.into_iter().filter(|p| p.is_dir()));
    }
    assert!(root.is_dir(), "make uninstall removed the prefix itself");
    assert!(
        empty.is_empty(),
        "make uninstall left empty directories: {empty:?}"
    );
}

#[test]
fn install_and_uninstall_into_a_temporary_prefix() {
    if !require("make", "make") {
        return;
    }
    for t in TOOLS {
        tool_binary(t);
    }
    let tmp = tempfile::tempdir().unwrap();
    let prefix = tmp.path().join("prefix");
    std::fs::create_dir_all(prefix.join("bin")).unwrap();
    std::fs::write(prefix.join("bin/foreign"), "not ours\n").unwrap();
    install_then_uninstall(&[format!("PREFIX={}", prefix.display())], &prefix, &prefix);
}

#[test]
fn install_into_a_destdir_staging_root() {
    if !require("make", "make") {
        return;
    }
    for t in TOOLS {
        tool_binary(t);
    }
    let tmp = tempfile::tempdir().unwrap();
    let stage = tmp.path().join("stage");
    std::fs::create_dir_all(&stage).unwrap();
    std::fs::write(stage.join("foreign"), "not ours\n").unwrap();
    install_then_uninstall(
        &[
            "PREFIX=/usr/local".to_string(),
            format!("DESTDIR={}", stage.display()),
        ],
        &stage.join("usr/local"),
        &stage,
    );
}
