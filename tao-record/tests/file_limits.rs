//! The record store over a file-size limit (`ulimit -f`, RLIMIT_FSIZE, as
//! a batch system or a shared login host may set it): a write past the
//! limit is refused with the documented one-line I/O error (exit 74) that
//! names the fix, never a kill by SIGXFSZ ("File size limit exceeded",
//! exit 153); the record is unchanged and no temporary file is left.

mod common;

use std::process::Command;

use common::Env;

/// `tao-record ARGS` under `ulimit -f 1` (1024 bytes), through sh.
fn under_limit(env: &Env, args: &str) -> std::process::Output {
    let bin = assert_cmd::cargo::cargo_bin("tao-record");
    Command::new("/bin/sh")
        .arg("-c")
        .arg(format!("ulimit -f 1 && exec '{}' {args}", bin.display()))
        .env_clear()
        .envs(env.vars.iter().map(|(k, v)| (k, v)))
        .output()
        .unwrap()
}

fn temp_files(env: &Env) -> Vec<String> {
    std::fs::read_dir(env.state().join("records"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".part"))
        .collect()
}

#[test]
fn a_write_over_the_file_size_limit_is_an_io_error_not_a_signal() {
    let env = Env::new();
    let id = env.open(&[]);
    let before = std::fs::read(env.record_path(&id)).unwrap();
    assert!(before.len() < 1024, "the record fits under the limit");
    let long = "x".repeat(2000);
    for args in [
        format!("mark {id} --state RUNNING --message {long}"),
        format!("open --runtime none --command 'python {long}.py'"),
    ] {
        let out = under_limit(&env, &args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(74), "{args:.40}: {err}");
        // open: one error line; mark: the line's warning, then the run's
        // error line (tao-record(1): mark reports each line, then counts).
        assert!(err.lines().count() <= 2, "{err}");
        assert!(err.lines().all(|l| l.starts_with("tao-record: ")), "{err}");
        assert!(
            err.lines()
                .last()
                .unwrap()
                .starts_with("tao-record: error: "),
            "{err}"
        );
        assert!(err.contains("File too large"), "{err}");
        assert!(err.contains("ulimit -f"), "names the limit to raise: {err}");
        if args.starts_with("open") {
            assert!(out.stdout.is_empty(), "no id of a record not written");
        }
        assert_eq!(std::fs::read(env.record_path(&id)).unwrap(), before);
        assert_eq!(temp_files(&env), Vec::<String>::new());
    }
}
