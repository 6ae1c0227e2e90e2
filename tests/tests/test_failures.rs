//! `make test` ends with the list of failed test targets and tests
//! (scripts/test-failures over each `cargo test` pass of scripts/test), so a
//! failure among 600+ tests need not be looked for 1250 lines up.

use std::path::Path;
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap()
}

/// A throw-away two-crate workspace with failing unit and integration tests
/// (the same integration test name in both crates) and one test binary that
/// aborts: the real `cargo test --no-fail-fast` output is summarised into one
/// `FAILED:` line per failed target, naming the crate, the target and the tests.
#[test]
fn summary_names_each_failed_target_and_test() {
    let dir = tempfile::tempdir().unwrap();
    let w = dir.path();
    std::fs::write(
        w.join("Cargo.toml"),
        "[workspace]\nmembers = [\"a\", \"b\"]\nresolver = \"2\"\n",
    )
    .unwrap();
    for c in ["a", "b"] {
        std::fs::create_dir_all(w.join(c).join("src")).unwrap();
        std::fs::create_dir_all(w.join(c).join("tests")).unwrap();
        std::fs::write(
            w.join(c).join("Cargo.toml"),
            format!("[package]\nname = \"{c}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n"),
        )
        .unwrap();
        std::fs::write(w.join(c).join("src/lib.rs"), "#[test] fn unit_ok() {}\n").unwrap();
        std::fs::write(
            w.join(c).join("tests/cluster.rs"),
            format!("#[test] fn ok() {{}}\n#[test] fn bad_{c}() {{ panic!(\"    indented\\nfailures:\\n    not_a_test\") }}\n"),
        )
        .unwrap();
    }
    std::fs::write(
        w.join("b/tests/crash.rs"),
        "#[test] fn aborts() { std::process::abort() }\n",
    )
    .unwrap();
    // Run as scripts/test does: stdout and stderr into one pipe, so cargo's
    // "to rerun pass" line follows each failed target's own output.
    let combined = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "cd '{}' && CARGO_TARGET_DIR=target '{}' test --workspace --no-fail-fast --offline 2>&1",
            w.display(),
            env!("CARGO")
        ))
        .env_remove("RUSTFLAGS")
        .output()
        .unwrap();
    assert!(!combined.status.success());
    let text = combined.stdout.clone();
    let log = w.join("log");
    std::fs::write(&log, &combined.stdout).unwrap();
    let sum = Command::new("bash")
        .arg(root().join("scripts/test-failures"))
        .arg(&log)
        .output()
        .unwrap();
    assert!(sum.status.success());
    let sum = String::from_utf8(sum.stdout).unwrap();
    assert_eq!(
        sum,
        "FAILED: -p a --test cluster: bad_a\n\
         FAILED: -p b --test cluster: bad_b\n\
         FAILED: -p b --test crash: (no test result: the binary crashed or was killed; see its output above)\n",
        "from:\n{}",
        String::from_utf8_lossy(&text)
    );
}

/// scripts/test runs every `cargo test` through `ctest` (which collects the
/// failures) and prints the collected `FAILED:` lines at its end.
#[test]
fn every_test_pass_of_make_test_is_summarised() {
    let script = std::fs::read_to_string(root().join("scripts/test")).unwrap();
    let runs: Vec<&str> = script
        .lines()
        .filter(|l| l.contains("cargo test --") && !l.trim_start().starts_with('#'))
        .collect();
    assert!(runs.len() >= 2, "{runs:?}");
    for l in runs {
        assert!(l.trim_start().starts_with("ctest '"), "not summarised: {l}");
    }
    assert!(script.contains("scripts/test-failures"));
    assert!(script.contains("cat \"$failed\""));
}
