//! The binary as a user runs it: cleared environment, stdin in, stdout,
//! stderr and the exit status checked.

mod common;

use common::*;
use serde_json::{json, Value};

fn lines(stdout: &[u8]) -> Vec<Value> {
    String::from_utf8(stdout.to_vec())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn help_and_version() {
    let out = run_bin(&["-h"], "");
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("Usage: tao-render"));
    let long = run_bin(&["--help"], "");
    assert!(long.stdout.len() > out.stdout.len());
    assert!(String::from_utf8_lossy(&long.stdout).contains("Exit status"));
    let v = run_bin(&["--version"], "");
    assert_eq!(
        String::from_utf8_lossy(&v.stdout).trim(),
        format!("tao-render {}", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn usage_error_exits_2() {
    let out = run_bin(&["--bogus"], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).starts_with("tao-render: error: "),
        "{}",
        stderr(&out)
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn renders_and_passes_every_other_field_through() {
    let mut l = line();
    l["unknown_field"] = json!({"kept": [1, "two"]});
    let out = run_bin(&["--site-profile", "local"], &format!("{l}\n"));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let got = lines(&out.stdout);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0]["unknown_field"], l["unknown_field"]);
    let text = got[0]["script"]["text"].as_str().unwrap();
    assert_eq!(
        got[0]["script"]["sha256"],
        tao_core::sha256_hex(text.as_bytes())
    );
    assert_eq!(got[0]["script"]["template"], "single");
    // Keys in input order, script appended.
    let keys: Vec<&String> = got[0].as_object().unwrap().keys().collect();
    assert_eq!(keys.first().map(|k| k.as_str()), Some("id"));
    assert_eq!(keys.last().map(|k| k.as_str()), Some("script"));
}

#[test]
fn site_profile_from_the_environment() {
    let l = line(); // partition "gpu": unknown to cs-oci-ord, known to local
    let mut long = l.clone();
    long["resources"]["time"] = json!("05:00:00");
    let out = bin_with_env(&[("TAO_SITE_PROFILE", "local")], &format!("{long}\n"));
    assert_eq!(out.status.code(), Some(1));
    let bad = bin_with_env(
        &[("TAO_SITE_PROFILE", "/nonexistent/profile.toml")],
        &format!("{l}\n"),
    );
    assert_eq!(bad.status.code(), Some(78));
    assert!(bad.stdout.is_empty());
}

fn bin_with_env(env: &[(&str, &str)], stdin: &str) -> std::process::Output {
    let mut cmd = bin();
    for (k, v) in env {
        cmd.env(k, v);
    }
    // The tool may exit before reading (bad profile): a broken pipe is no error.
    tao_testkit::tool::feed(&mut cmd, stdin).wait_unread_ok()
}

#[test]
fn a_refused_line_carries_error_and_the_others_go_on() {
    let good = line();
    let mut long = line();
    long["id"] = json!("tao-20261129-aaaaaa");
    long["resources"]["time"] = json!("05:00:00");
    let input = format!("{good}\n{long}\n{good}\n");
    let out = run_bin(&["--site-profile", "local"], &input);
    assert_eq!(out.status.code(), Some(1));
    let got = lines(&out.stdout);
    assert_eq!(got.len(), 3);
    assert!(got[0].get("script").is_some() && got[2].get("script").is_some());
    assert!(got[1].get("script").is_none());
    assert_eq!(got[1]["error"]["tool"], "tao-render");
    assert_eq!(got[1]["error"]["code"], "refused");
    let msg = got[1]["error"]["message"].as_str().unwrap();
    assert!(
        msg.contains("\"gpu\"") && msg.contains("0-04:00:00"),
        "{msg}"
    );
    let err = stderr(&out);
    assert!(err.contains("line 2 (tao-20261129-aaaaaa)"), "{err}");
    assert_eq!(err.lines().count(), 1);
}

#[test]
fn refusals_for_each_rule() {
    type Edit = Box<dyn Fn(&mut Value)>;
    let cases: Vec<(&str, Edit, &str)> = vec![
        (
            "unlimited",
            Box::new(|l| l["resources"]["time"] = json!("0")),
            "above the limit of partition \"gpu\"",
        ),
        (
            "bad time",
            Box::new(|l| l["resources"]["time"] = json!("4h")),
            "not a Slurm time",
        ),
        (
            "account",
            Box::new(|l| l["resources"]["account"] = json!("a b")),
            "#SBATCH",
        ),
        (
            "partition",
            Box::new(|l| l["resources"]["partition"] = json!("gpu;x")),
            "#SBATCH",
        ),
        (
            "exclude",
            Box::new(|l| l["resources"]["exclude"] = json!(["n1 n2"])),
            "#SBATCH",
        ),
        (
            "mem",
            Box::new(|l| l["resources"]["mem"] = json!("lots")),
            "resources.mem \"lots\" is not a memory size",
        ),
        (
            "id",
            Box::new(|l| l["id"] = json!("Bad Id")),
            "invalid record id",
        ),
        (
            "path",
            Box::new(|l| l["storage"]["job_dir"] = json!("/a b/jobs/x")),
            "storage.job_dir",
        ),
        (
            "relative sqsh",
            Box::new(|l| {
                l["runtime"] = json!("pyxis");
                l["image"] = json!("images/x.sqsh");
            }),
            "absolute path",
        ),
        (
            "tar image",
            Box::new(|l| {
                l["runtime"] = json!("pyxis");
                l["image"] = json!("/images/x.tar");
            }),
            ".sqsh",
        ),
        (
            "no image",
            Box::new(|l| {
                l["runtime"] = json!("pyxis");
            }),
            "needs an `image`",
        ),
        (
            "mount with an empty part",
            Box::new(|l| {
                l["runtime"] = json!("pyxis");
                l["image"] = json!("/images/x.sqsh");
                l["mounts"] = json!(["/src::/dst"]);
            }),
            "no empty part",
        ),
        (
            "child timeout",
            Box::new(|l| l["resources"]["child_timeout"] = json!("02:00:00")),
            "not below the wall time",
        ),
        (
            "env name",
            Box::new(|l| l["env"] = json!({"A B": "x"})),
            "not a variable name",
        ),
        (
            "reserved env",
            Box::new(|l| l["env"] = json!({"RESULTS_DIR": "/x"})),
            "\"RESULTS_DIR\" is reserved",
        ),
        (
            "reserved secret",
            Box::new(|l| l["secrets"] = json!(["tao_secrets"])),
            "\"tao_secrets\" is reserved",
        ),
        (
            "secret-looking env",
            Box::new(|l| l["env"] = json!({"HF_TOKEN": "x"})),
            "looks like a secret",
        ),
        (
            "partition the profile does not list",
            Box::new(|l| l["resources"]["partition"] = json!("debug")),
            "not a partition of site profile",
        ),
        (
            "secret in env",
            Box::new(|l| {
                l["env"] = json!({"MY_VAR": "x"});
                l["secrets"] = json!(["MY_VAR"]);
            }),
            "both an env variable and a secret",
        ),
        (
            "config without spec",
            Box::new(|l| l["command"] = json!("t -e {config_path}")),
            "no `spec`",
        ),
        (
            "uneven gpus",
            Box::new(|l| l["resources"]["gpus_per_node"] = json!(5)),
            "evenly",
        ),
        ("nul", Box::new(|l| l["command"] = json!("a\u{0}b")), "NUL"),
        (
            "runtime",
            Box::new(|l| l["runtime"] = json!("docker")),
            "runtime",
        ),
        (
            "empty command",
            Box::new(|l| l["command"] = json!("  ")),
            "empty",
        ),
        (
            "scope",
            Box::new(|l| {
                l["execution"] =
                    json!({"command": "x", "post_commands": [{"command": "y", "scope": "some"}]})
            }),
            "scope",
        ),
    ];
    for (name, edit, want) in cases {
        let mut l = line();
        edit(&mut l);
        let out = run_bin(&["--site-profile", "local"], &format!("{l}\n"));
        assert_eq!(out.status.code(), Some(1), "{name}: {}", stderr(&out));
        let got = lines(&out.stdout);
        let msg = got[0]["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        assert!(msg.contains(want), "{name}: {msg}");
        assert!(got[0].get("script").is_none(), "{name}");
    }
}

/// An unlimited wall time is accepted where the partition's limit is
/// unlimited too, with or without `--allow-unlimited` (kept, no effect),
/// and refused where the profile knows a finite limit.
#[test]
fn unlimited_where_the_partition_allows_it() {
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("site.toml");
    let text = tao_core::site::SiteProfile::builtin_text("local")
        .unwrap()
        .to_string()
        + "\n[[partitions]]\nname = \"debug\"\nmax_time = \"UNLIMITED\"\n";
    std::fs::write(&profile, text).unwrap();
    let profile = profile.to_str().unwrap();
    let mut l = line();
    l["resources"]["time"] = json!("UNLIMITED");
    l["resources"]["child_timeout"] = json!("01:00:00");
    l["resources"]["partition"] = json!("debug");
    for flags in [&["--print"][..], &["--allow-unlimited", "--print"][..]] {
        let mut args = vec!["--site-profile", profile];
        args.extend_from_slice(flags);
        let out = run_bin(&args, &format!("{l}\n"));
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert!(String::from_utf8_lossy(&out.stdout).contains("#SBATCH --time=UNLIMITED\n"));
    }
    // Still refused where the profile knows a finite limit.
    l["resources"]["partition"] = json!("gpu");
    let out = run_bin(
        &["--site-profile", profile, "--allow-unlimited"],
        &format!("{l}\n"),
    );
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn malformed_lines_exit_65_and_lose_nothing_else() {
    let good = line();
    let mut no_id = line();
    no_id.as_object_mut().unwrap().remove("id");
    let mut typed = line();
    typed["resources"]["nodes"] = json!("two");
    let input = format!("{good}\nnot json\n{no_id}\n{typed}\n{good}\n");
    let out = run_bin(&["--site-profile", "local"], &input);
    assert_eq!(out.status.code(), Some(65));
    let got = lines(&out.stdout);
    assert_eq!(
        got.len(),
        4,
        "the non-JSON line is reported, every other line printed"
    );
    assert!(got[0].get("script").is_some() && got[3].get("script").is_some());
    // No `id`: tao-record open was skipped.
    assert_eq!(got[1]["error"]["code"], "missing_stage");
    assert!(got[1]["error"]["message"]
        .as_str()
        .unwrap()
        .contains("`id`"));
    assert!(got[2]["error"]["message"]
        .as_str()
        .unwrap()
        .contains("`resources`"));
    let err = stderr(&out);
    assert!(err.contains("line 2, column"), "{err}");
    assert!(err.contains("line 3:") && err.contains("line 4:"), "{err}");
}

#[test]
fn lines_with_an_earlier_error_pass_untouched() {
    let mut l = line();
    l["error"] = json!({"tool": "tao-record", "code": "data", "message": "x"});
    let input = format!("{l}\n");
    let out = run_bin(&["--site-profile", "local"], &input);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stdout), input);
}

#[test]
fn print_takes_exactly_one_line() {
    let l = line();
    let out = run_bin(&["--site-profile", "local", "--print"], &format!("{l}\n"));
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout)
        .starts_with("#!/bin/bash\n#SBATCH --job-name=tao-20261129-k3f9x2\n"));

    let two = run_bin(
        &["--site-profile", "local", "--print"],
        &format!("{l}\n{l}\n"),
    );
    assert_eq!(two.status.code(), Some(2));
    assert!(two.stdout.is_empty());
    assert!(stderr(&two).contains("exactly one job line, got 2"));

    let mut bad = line();
    bad["resources"]["time"] = json!("9:00:00");
    let refused = run_bin(&["--site-profile", "local", "--print"], &format!("{bad}\n"));
    assert_eq!(refused.status.code(), Some(1));
    assert!(refused.stdout.is_empty());
}

#[test]
fn broken_pipe_is_quiet() {
    use std::io::Write;
    use std::process::Stdio;
    let l = line();
    let input: String = std::iter::repeat_n(format!("{l}\n"), 2000).collect();
    let mut child = bin()
        .args(["--site-profile", "local"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take()); // the reader goes away
    let _ = child.stdin.take().unwrap().write_all(input.as_bytes());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(out.stderr.is_empty(), "{}", stderr(&out));
}

#[test]
fn a_derived_gpu_shape_is_said_once_on_stderr() {
    // 8 GPUs on one node of the local profile's 4-GPU nodes: 2 nodes x 4.
    let mut l = line();
    l["resources"]["nodes"] = json!(1);
    l["resources"]["gpus_per_node"] = json!(8);
    let out = run_bin(&["--site-profile", "local"], &format!("{l}\n"));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let got = lines(&out.stdout);
    let r = &got[0]["script"]["resources"];
    assert_eq!(
        (r["nodes"].as_u64(), r["gpus_per_node"].as_u64()),
        (Some(2), Some(4))
    );
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("tao-render: warning: line 1 (")
            && err.contains("1 node(s) x 8 GPUs runs as 2 node(s) x 4 GPUs"),
        "{err}"
    );
    // -q silences it; the shape it was given is said nothing about.
    let out = run_bin(&["--site-profile", "local", "-q"], &format!("{l}\n"));
    assert!(out.stderr.is_empty(), "{}", stderr(&out));
    l["resources"]["nodes"] = json!(2);
    l["resources"]["gpus_per_node"] = json!(4);
    let out = run_bin(&["--site-profile", "local"], &format!("{l}\n"));
    assert!(out.stderr.is_empty(), "{}", stderr(&out));
}
