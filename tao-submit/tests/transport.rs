//! The three transports (libssh2, openssh, local) and the login nodes users
//! really have, against real sshds started by tests/cluster/up-transport:
//! a two-factor (publickey + TOTP) login node, a login node reachable only
//! through a bastion, login shells fish and tcsh; the same pipeline
//! (jobs of 1 KB .. 5 MiB staged, verified by sha256 on the cluster,
//! completed, then polled) on each.

mod common;

use std::time::{Duration, Instant};

use common::{
    lines_of, stdin_of, submit_every_size, submit_every_size_via, transport_env, Fixture,
};
use serde_json::Value;

/// tao-poll over the submitted lines: every job is observed COMPLETED, on
/// the same transport and login host the submit used.
fn poll_all(f: &Fixture, lines: &[Value], env: &[(&str, &str)], wrap: &[&str]) {
    let out = f.run_tool("tao-poll", &["--stats"], env, wrap, &stdin_of(lines));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let got = lines_of(&out.stdout);
    assert_eq!(got.len(), lines.len(), "{stderr}");
    for l in &got {
        assert_eq!(l["slurm"]["native_state"], "COMPLETED", "{l}");
        assert!(l.get("error").is_none_or(Value::is_null), "{l}");
    }
}

fn t(vars: &std::collections::BTreeMap<String, String>, k: &str) -> String {
    vars.get(k)
        .unwrap_or_else(|| panic!("{k} missing from env-transport"))
        .clone()
}

#[test]
fn openssh_opens_a_master_for_the_run_and_closes_it() {
    let Some(f) = Fixture::new() else { return };
    let runtime = tempfile::tempdir().unwrap();
    let rt = runtime.path().display().to_string();
    let no_master = format!("{rt}/no-master-here");
    let env = [
        ("TAO_TRANSPORT", "openssh"),
        ("XDG_RUNTIME_DIR", rt.as_str()),
        ("TAO_SSH_CONTROL_PATH", no_master.as_str()),
    ];
    let lines = submit_every_size(&f, &env);
    poll_all(&f, &lines, &env, &[]);
    // The masters of both runs were closed and their directories removed.
    let left: Vec<_> = std::fs::read_dir(runtime.path()).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn the_transport_flag_wins_over_the_variable() {
    let Some(f) = Fixture::new() else { return };
    let line = f.line("flag", "true");
    let out = f.run_tool(
        "tao-submit",
        &["--transport", "telnet"],
        &[],
        &[],
        &stdin_of(std::slice::from_ref(&line)),
    );
    // The flag is checked as the variable is (tao_ssh::TransportKind::parse):
    // a configuration error, exit 78, naming the names.
    let e = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(78), "{e}");
    assert!(
        e.contains("\"telnet\"") && e.contains("libssh2, openssh, local"),
        "{e}"
    );
    // The flag wins over TAO_TRANSPORT (a bad variable is never read).
    let out = f.run_tool(
        "tao-submit",
        &["--transport", "local"],
        &[("TAO_TRANSPORT", "nonsense")],
        &[],
        "",
    );
    let e = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{e}");
    assert!(!e.contains("nonsense"), "{e}");
}

#[test]
fn local_transport_runs_the_pipeline_on_the_login_node_as_the_cluster_user() {
    let Some(f) = Fixture::new() else { return };
    let user = f.c.var("SLURM_USER").to_string();
    let home = format!("/home/{user}");
    let env = [("TAO_TRANSPORT", "local"), ("HOME", home.as_str())];
    let wrap = ["runuser", "-u", user.as_str(), "--"];
    let lines = submit_every_size_via(&f, &env, &wrap);
    poll_all(&f, &lines, &env, &wrap);
    // Another user than SLURM_USER: refused, one line, exit 78.
    let line = f.line("localwrong", "true");
    let out = f.run_tool(
        "tao-submit",
        &[],
        &[("TAO_TRANSPORT", "local"), ("SLURM_USER", "somebody-else")],
        &wrap,
        &stdin_of(std::slice::from_ref(&line)),
    );
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(
        e.contains("SLURM_USER") && e.contains("TAO_TRANSPORT=local"),
        "{e}"
    );
    assert!(f.c.jobs_named(line["id"].as_str().unwrap()).is_empty());
}

#[test]
fn two_factor_login_needs_a_master_then_runs_through_it_without_a_prompt() {
    let Some(f) = Fixture::new() else { return };
    let Some(v) = transport_env() else { return };
    let dir = tempfile::tempdir().unwrap();
    let cp = format!("{}/cm-%C", dir.path().display());
    let host = t(&v, "TAO_T_TOTP_HOST");
    let kh = t(&v, "TAO_T_KNOWN_HOSTS");
    let env = [
        ("TAO_TRANSPORT", "openssh"),
        ("SLURM_HOSTNAME", host.as_str()),
        ("SSH_KNOWN_HOSTS", kh.as_str()),
        ("TAO_SSH_CONTROL_PATH", cp.as_str()),
    ];
    // No master: exit 77 at once, one line naming the host and the exact
    // ssh -M command; the line is passed on with its error, nothing submitted.
    let line = f.line("totp0", "true");
    let t0 = Instant::now();
    let out = f.run_tool(
        "tao-submit",
        &[],
        &env,
        &[],
        &stdin_of(std::slice::from_ref(&line)),
    );
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        t0.elapsed() < Duration::from_secs(20),
        "fail fast: {:?}",
        t0.elapsed()
    );
    assert_eq!(out.status.code(), Some(77), "{stderr}");
    let fix_line = stderr
        .lines()
        .find(|l| l.contains("ssh -M"))
        .unwrap_or_else(|| panic!("no ssh -M fix in {stderr}"));
    assert!(fix_line.contains(&host), "{fix_line}");
    assert!(f.c.jobs_named(line["id"].as_str().unwrap()).is_empty());
    let got = lines_of(&out.stdout);
    assert_eq!(got.len(), 1, "the line is not lost: {stderr}");
    // The same on libssh2, which cannot answer a second factor: 77.
    let out = f.run_tool(
        "tao-submit",
        &[],
        &[
            ("SLURM_HOSTNAME", host.as_str()),
            ("SSH_KNOWN_HOSTS", kh.as_str()),
        ],
        &[],
        &stdin_of(std::slice::from_ref(&line)),
    );
    tao_testkit::tool::assert_exit(&out, 77);

    // The user opens the master once with exactly that command, answering
    // the prompt (here: SSH_ASKPASS computes the TOTP code).
    let cmd = fix_line
        .split('`')
        .nth(1)
        .expect("the command in backquotes");
    let st = std::process::Command::new("sh")
        .arg("-c")
        .arg(cmd)
        .env("SSH_ASKPASS", t(&v, "TAO_T_TOTP_ASKPASS"))
        .env("SSH_ASKPASS_REQUIRE", "force")
        .stdin(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(st.success(), "opening the master with {cmd:?}");
    // Then the whole pipeline runs through it, no prompt, no new login.
    let lines = submit_every_size(&f, &env);
    poll_all(&f, &lines, &env, &[]);
    let close = cmd
        .replace(" -M ", " ")
        .replace(" -fN ", " -O exit ")
        .replace(" -o ControlPersist=yes", "");
    let _ = std::process::Command::new("sh")
        .arg("-c")
        .arg(&close)
        .status();
}

/// A login node that only the bastion can reach (tools run in a network
/// namespace of their own, whose loopback is not the login node's): the
/// whole pipeline through an ssh config alias with ProxyJump on libssh2
/// (direct-tcpip through the bastion's session) and on openssh, and with
/// ProxyCommand on libssh2. The direct address is unreachable (69) and a
/// bastion that is down is one line naming it (69); nothing is submitted.
#[test]
fn a_login_node_behind_a_bastion() {
    let Some(f) = Fixture::new() else { return };
    let Some(v) = transport_env() else { return };
    let cfg = t(&v, "TAO_T_SSH_CONFIG");
    let kh = t(&v, "TAO_T_KNOWN_HOSTS");
    let netns = t(&v, "TAO_T_NETNS");
    let wrap = ["ip", "netns", "exec", netns.as_str()];
    for (transport, alias) in [
        ("libssh2", "tao-inner"),
        ("openssh", "tao-inner"),
        ("libssh2", "tao-inner-cmd"),
    ] {
        let runtime = tempfile::tempdir().unwrap();
        let rt = runtime.path().display().to_string();
        let env = [
            ("TAO_TRANSPORT", transport),
            ("SLURM_HOSTNAME", alias),
            ("SSH_CONFIG", cfg.as_str()),
            ("SSH_KNOWN_HOSTS", kh.as_str()),
            ("XDG_RUNTIME_DIR", rt.as_str()),
        ];
        let lines = submit_every_size_via(&f, &env, &wrap);
        for l in &lines {
            assert_eq!(l["slurm"]["login_host"], alias);
        }
        poll_all(&f, &lines, &env, &wrap);
    }
    // The login node's own address, not through the bastion: unreachable (69).
    let inner = t(&v, "TAO_T_INNER");
    for transport in ["libssh2", "openssh"] {
        let line = f.line("direct", "true");
        let out = f.run_tool(
            "tao-submit",
            &[],
            &[
                ("TAO_TRANSPORT", transport),
                ("SLURM_HOSTNAME", inner.as_str()),
                ("SSH_KNOWN_HOSTS", kh.as_str()),
            ],
            &wrap,
            &stdin_of(std::slice::from_ref(&line)),
        );
        tao_testkit::tool::assert_exit(&out, 69);
        assert_eq!(lines_of(&out.stdout).len(), 1, "the line is not lost");
        assert!(f.c.jobs_named(line["id"].as_str().unwrap()).is_empty());
    }
    // The bastion down (a port nobody listens on): one line naming it, 69.
    let dir = tempfile::tempdir().unwrap();
    let down_cfg = dir.path().join("config");
    std::fs::write(
        &down_cfg,
        std::fs::read_to_string(&cfg)
            .unwrap()
            .replace("Port 2223", "Port 2299"),
    )
    .unwrap();
    let down = down_cfg.display().to_string();
    for transport in ["libssh2", "openssh"] {
        let line = f.line("bastiondown", "true");
        let out = f.run_tool(
            "tao-submit",
            &[],
            &[
                ("TAO_TRANSPORT", transport),
                ("SLURM_HOSTNAME", "tao-inner"),
                ("SSH_CONFIG", down.as_str()),
                ("SSH_KNOWN_HOSTS", kh.as_str()),
            ],
            &wrap,
            &stdin_of(std::slice::from_ref(&line)),
        );
        let e = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(69), "{transport}: {e}");
        let err_line = e
            .lines()
            .find(|l| l.contains("error"))
            .unwrap_or_else(|| panic!("{e}"));
        assert!(
            err_line.contains("2299") || err_line.contains("tao-bastion"),
            "{transport}: {err_line}"
        );
        assert!(f.c.jobs_named(line["id"].as_str().unwrap()).is_empty());
    }
}

/// The cluster user's login shell is fish, or tcsh: the same pipeline.
fn pipeline_with_login_shell(user_var: &str) {
    let Some(v) = transport_env() else { return };
    let user = t(&v, user_var);
    let base = format!("/var/tmp/tao-cluster/shared/tao-{user}");
    let host = t(&v, "TAO_T_SHELLS_HOST");
    let kh = t(&v, "TAO_T_KNOWN_HOSTS");
    let Some(f) = Fixture::new_with(&[
        ("SLURM_USER", user.as_str()),
        ("SLURM_HOSTNAME", host.as_str()),
        ("SSH_KNOWN_HOSTS", kh.as_str()),
        ("SLURM_BASE_RESULTS_DIR", base.as_str()),
    ]) else {
        return;
    };
    for transport in ["libssh2", "openssh"] {
        let runtime = tempfile::tempdir().unwrap();
        let rt = runtime.path().display().to_string();
        let env = [
            ("TAO_TRANSPORT", transport),
            ("XDG_RUNTIME_DIR", rt.as_str()),
        ];
        let lines = submit_every_size(&f, &env);
        poll_all(&f, &lines, &env, &[]);
    }
}

#[test]
fn login_shell_fish() {
    pipeline_with_login_shell("TAO_T_FISH_USER");
}

#[test]
fn login_shell_tcsh() {
    pipeline_with_login_shell("TAO_T_TCSH_USER");
}
