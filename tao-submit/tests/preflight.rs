//! `tao-submit preflight` against the local cluster: the report, a missing
//! dataset path, and the Enroot credentials installed over stdin (into a
//! test directory named by ENROOT_CONFIG_PATH through a test site profile,
//! so the cluster user's own files are not touched).

mod common;

use std::os::unix::fs::PermissionsExt;

use common::{lines_of, Fixture};
use serde_json::Value;

fn check<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["preflight"]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no check {name}: {report}"))
}

#[test]
fn reports_every_check_and_a_missing_dataset_path() {
    let Some(f) = Fixture::new() else { return };
    let base = f.c.var("SLURM_BASE_RESULTS_DIR").to_string();
    let missing = format!("{base}/no-such-dataset-{}", std::process::id());
    let out = f
        .cmd()
        .args(["preflight", "--path", &base, "--path", &missing])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let r = &lines_of(&out.stdout)[0];
    assert_eq!(r["preflight"]["ok"], false);
    for name in [
        "login",
        "command:sbatch",
        "command:srun",
        "command:squeue",
        "command:sacct",
        "command:scancel",
        "results-root",
    ] {
        assert_eq!(check(r, name)["ok"], true, "{name}: {r}");
    }
    assert_eq!(check(r, &format!("path:{base}"))["ok"], true);
    let miss = check(r, &format!("path:{missing}"));
    assert_eq!(miss["ok"], false);
    assert!(
        miss["detail"].as_str().unwrap().contains("does not exist"),
        "{miss}"
    );
    assert!(stderr.contains(&format!("FAIL path:{missing}")), "{stderr}");
    // Runtime none: said in its own line (not left out silently), and no Pyxis check.
    let rt = check(r, "runtime");
    assert_eq!(rt["ok"], true);
    assert!(
        rt["detail"]
            .as_str()
            .unwrap()
            .starts_with("none: no container runtime is used"),
        "{rt}"
    );
    assert!(
        stderr.contains("ok   runtime: none: no container runtime is used"),
        "{stderr}"
    );
    assert!(r["preflight"]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .all(|c| c["name"] != "pyxis"));

    // All present: exit 0. With --lines, each line carries the report and its mount sources are checked.
    let mut line = f.line("pf", "true");
    line["mounts"] = serde_json::json!([format!("{base}:/data")]);
    let out = f.run(&["preflight", "--lines"], &[line], 0);
    let got = lines_of(&out.stdout);
    assert_eq!(check(&got[0], &format!("path:{base}"))["ok"], true);
    assert!(got[0]["id"].is_string());

    // Pyxis asked for on a cluster without it: reported, not hidden.
    let out = f
        .cmd()
        .args(["preflight", "--runtime", "pyxis"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let r = &lines_of(&out.stdout)[0];
    assert_eq!(check(r, "pyxis")["ok"], false);
    assert_eq!(check(r, "enroot")["ok"], false);
}

#[test]
fn installs_enroot_credentials_over_stdin_with_mode_600() {
    let Some(f) = Fixture::new() else { return };
    let dir = tempfile::Builder::new()
        .prefix("tao-enroot-")
        .tempdir()
        .unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let cfg = dir.path().join("enroot");
    let profile = dir.path().join("p.toml");
    common::write_profile(
        &profile,
        "local-enroot-test",
        "none",
        &format!("export ENROOT_CONFIG_PATH={};", cfg.display()),
    );
    let key = "nvapi-FAKEtestKEY0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJ";
    // Missing credentials are reported when NGC_KEY is set.
    let out = f
        .cmd()
        .env("TAO_SITE_PROFILE", &profile)
        .env("NGC_KEY", key)
        .arg("preflight")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        check(&lines_of(&out.stdout)[0], "enroot-credentials")["ok"],
        false
    );
    // Installed with the option.
    let out = f
        .cmd()
        .env("TAO_SITE_PROFILE", &profile)
        .env("NGC_KEY", key)
        .args(["preflight", "--install-enroot-credentials"])
        .output()
        .unwrap();
    tao_testkit::tool::assert_exit(&out, 0);
    for s in [&out.stdout, &out.stderr] {
        assert!(
            !String::from_utf8_lossy(s).contains("nvapi-FAKE"),
            "key leaked"
        );
    }
    let (rc, o, e) = f.c.ssh(&format!(
        "stat -c %a {0}/.credentials; cat {0}/.credentials",
        cfg.display()
    ));
    assert_eq!(rc, 0, "{e}");
    assert_eq!(o, format!("600\nmachine nvcr.io login $oauthtoken password {key}\nmachine authn.nvidia.com login $oauthtoken password {key}\n"));
    // Now present.
    let out = f
        .cmd()
        .env("TAO_SITE_PROFILE", &profile)
        .env("NGC_KEY", key)
        .arg("preflight")
        .output()
        .unwrap();
    assert_eq!(
        check(&lines_of(&out.stdout)[0], "enroot-credentials")["ok"],
        true
    );
    let _ = f.c.ssh(&format!("rm -rf {}", cfg.display()));
}

/// Each failure is printed once: on its own FAIL line, not again as the
/// login's failure nor as the closing error (which keeps the exit status).
#[test]
fn each_failure_is_printed_once_when_nothing_is_set() {
    let home = tempfile::tempdir().unwrap();
    let out = assert_cmd::Command::cargo_bin("tao-submit")
        .unwrap()
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", home.path())
        .arg("preflight")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(78), "{stderr}");
    for needle in [
        "SLURM_HOSTNAME",
        "SLURM_USER",
        "SLURM_BASE_RESULTS_DIR",
        "SSH_KEY_PATH",
    ] {
        let fix = format!("export {needle}=");
        assert_eq!(stderr.matches(&fix).count(), 1, "{fix}: {stderr}");
    }
    assert!(stderr.contains("FAIL login: not tried"), "{stderr}");
    let last = stderr.lines().last().unwrap();
    assert!(
        last.starts_with("tao-submit: error: preflight: 5 of 5 checks failed ("),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 6, "{stderr}");
}

#[test]
fn a_refused_login_is_printed_once() {
    let Some(f) = Fixture::new() else { return };
    let dir = tempfile::tempdir().unwrap();
    let key = common::uninstalled_key(dir.path());
    let out = f
        .cmd()
        .env("SSH_KEY_PATH", &key)
        .arg("preflight")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(77), "{stderr}");
    assert_eq!(stderr.matches("not accepted").count(), 1, "{stderr}");
    assert!(
        stderr.contains("tao-submit: error: preflight: 1 of 5 checks failed (login)"),
        "{stderr}"
    );
}

/// A fresh user's findings: TAO_RUNTIME=docker fails preflight as open
/// would (the one rule, tao_core::request::runtime); a bad
/// TAO_SITE_PROFILE is its own check, not a login failure; an unwritable
/// results root names its path; and every failing run ends with the
/// closing `preflight: N of M checks failed` line.
#[test]
fn bad_runtime_profile_and_results_root_are_named_and_closed() {
    let Some(f) = Fixture::new() else { return };
    let run = |var: &str, val: &str| {
        let out = f.cmd().env(var, val).arg("preflight").output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).to_string();
        let r = lines_of(&out.stdout)[0].clone();
        (out.status.code(), stderr, r)
    };
    let (code, stderr, r) = run("TAO_RUNTIME", "docker");
    assert_eq!(code, Some(1), "{stderr}");
    assert_eq!(r["preflight"]["ok"], false);
    let rt = check(&r, "runtime");
    assert_eq!(rt["ok"], false, "{r}");
    assert!(
        rt["detail"]
            .as_str()
            .unwrap()
            .contains("TAO_RUNTIME: \"docker\" is not a runtime"),
        "{rt}"
    );
    assert!(
        stderr
            .lines()
            .last()
            .unwrap()
            .starts_with("tao-submit: error: preflight: 1 of ")
            && stderr.contains("checks failed (runtime)"),
        "{stderr}"
    );

    let (code, stderr, r) = run("TAO_SITE_PROFILE", "nosuch");
    assert_eq!(code, Some(78), "{stderr}");
    let sp = check(&r, "site-profile");
    assert_eq!(sp["ok"], false, "{r}");
    assert!(
        sp["detail"].as_str().unwrap().contains("TAO_SITE_PROFILE"),
        "{sp}"
    );
    assert!(stderr.contains("FAIL login: not tried"), "{stderr}");
    assert!(
        stderr
            .lines()
            .last()
            .unwrap()
            .contains("checks failed (site-profile, login)"),
        "{stderr}"
    );

    let (code, stderr, r) = run("SLURM_BASE_RESULTS_DIR", "/proc/tao-no-such-root");
    assert_eq!(code, Some(1), "{stderr}");
    let rr = check(&r, "results-root");
    assert_eq!(rr["ok"], false, "{r}");
    assert!(
        rr["detail"]
            .as_str()
            .unwrap()
            .contains("/proc/tao-no-such-root not writable"),
        "{rr}"
    );
    assert!(
        stderr
            .lines()
            .last()
            .unwrap()
            .contains("checks failed (results-root)"),
        "{stderr}"
    );
}

/// A new user's finding: a results root that is writable while its
/// `results/` is not (another user's test made it) passed preflight as
/// "writable", and the first submit then failed staging with `mkdir:
/// Permission denied`. The check now covers the root, `jobs/` and
/// `results/`, and names the folder that is not writable.
#[test]
fn a_results_folder_that_is_not_writable_fails_preflight() {
    let Some(f) = Fixture::new() else { return };
    let root = format!(
        "{}/pf-ro-{}",
        f.c.var("SLURM_BASE_RESULTS_DIR"),
        common::unique_id("r")
    );
    let q = tao_core::shell::quote(&root);
    let (code, _, err) = f.c.ssh(&format!(
        "mkdir -p -- {q}/results {q}/jobs && chmod 555 -- {q}/results"
    ));
    assert_eq!(code, 0, "{err}");
    let out = f
        .cmd()
        .env("SLURM_BASE_RESULTS_DIR", &root)
        .arg("preflight")
        .output()
        .unwrap();
    f.c.ssh(&format!("chmod 755 -- {q}/results; rm -rf -- {q}"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let r = &lines_of(&out.stdout)[0];
    let rr = check(r, "results-root");
    assert_eq!(rr["ok"], false, "{r}");
    assert!(
        rr["detail"]
            .as_str()
            .unwrap()
            .starts_with(&format!("{root}/results not writable")),
        "{rr}"
    );
    assert!(stderr.contains("checks failed (results-root)"), "{stderr}");
}
