//! One-line errors and advice for mistakes a user makes at the shell, run
//! as the user runs them (a bash pipeline of the built tools, no cluster:
//! each mistake is refused before any connection).

use tao_tests::{bash, text, Cluster};

/// A cluster environment that answers nobody (no connection is made) with
/// a fresh store in `state`.
fn offline(state: &std::path::Path) -> Cluster {
    let vars = [
        ("TAO_STATE_DIR", state.to_str().unwrap()),
        ("SLURM_BASE_RESULTS_DIR", "/var/tmp/tao-user-errors"),
        ("SLURM_HOSTNAME", "127.0.0.1:1"),
        ("SLURM_USER", "nobody"),
        ("TAO_SITE_PROFILE", "local"),
        ("TAO_RUNTIME", "none"),
    ];
    Cluster {
        vars: vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    }
}

const OPEN: &str = "tao-record open --action train --network-arch demo --gpus 1 \
                    --cpus-per-task 1 --time 00:10:00 --command 'echo hi'";

#[test]
fn a_skipped_stage_is_advised_to_go_through_the_pipeline_not_a_new_record() {
    let dir = tempfile::tempdir().unwrap();
    let c = offline(dir.path());
    // tao-render and tao-redact lint left out.
    let out = bash(
        &c,
        &[],
        &format!("{OPEN} | tao-submit | tao-record mark >/dev/null || true"),
    );
    let err = text(&out.stderr);
    let hint = err
        .lines()
        .find(|l| l.starts_with("tao-record: warning:"))
        .unwrap_or_else(|| panic!("no warning from mark: {err}"));
    assert!(
        hint.contains("missing string field `script.text`"),
        "{hint}"
    );
    assert!(!hint.contains("open a new record"), "{hint}");
    assert!(
        hint.contains("--clear-error")
            && hint.contains("| tao-render | tao-redact lint | tao-submit | tao-record mark`"),
        "{hint}"
    );
    let out = bash(&c, &[], "tao-record list");
    let rec: serde_json::Value = serde_json::from_str(text(&out.stdout).trim()).unwrap();
    assert_eq!(rec["error"]["code"], "missing_stage", "{rec}");
}
