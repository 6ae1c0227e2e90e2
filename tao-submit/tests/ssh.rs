//! The SSH side as a cluster user meets it, through the tao-submit binary:
//! failover from a dead login host, ~/.ssh/config aliases, a group-readable
//! key refused, an unknown host key refused with the fix (and accepted on
//! request), authentication through ssh-agent, and the login remediation.

mod common;

use std::path::{Path, PathBuf};

use common::{lines_of, stdin_of, Fixture};

fn dead_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

fn copy_key(f: &Fixture, dir: &Path, mode: u32) -> PathBuf {
    tao_testkit::ssh::copy_key(f.c.var("SSH_KEY_PATH"), dir, "id_copy", mode)
}

fn job_id(out: &std::process::Output) -> String {
    let got = lines_of(&out.stdout);
    got[0]["slurm"]["job_id"]
        .as_str()
        .unwrap_or_else(|| {
            panic!(
                "no job id: {} / {}",
                got[0],
                String::from_utf8_lossy(&out.stderr)
            )
        })
        .to_string()
}

#[test]
fn failover_moves_past_a_dead_login_host_and_says_why() {
    let Some(f) = Fixture::new() else { return };
    let dead = format!("127.0.0.1:{}", dead_port());
    let hosts = format!("{dead},{}", f.c.var("SLURM_HOSTNAME"));
    let out = f
        .cmd()
        .env("SLURM_HOSTNAME", &hosts)
        .write_stdin(stdin_of(&[f.line("f", "true")]))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains(&dead) && stderr.contains("connection refused"),
        "{stderr}"
    );
    let got = lines_of(&out.stdout);
    assert_eq!(got[0]["slurm"]["login_host"], f.c.var("SLURM_HOSTNAME"));
    // Every host dead: exit 69, the line printed with the error.
    let out = f
        .cmd()
        .env(
            "SLURM_HOSTNAME",
            format!("{dead},127.0.0.1:{}", dead_port()),
        )
        .write_stdin(stdin_of(&[f.line("f", "true")]))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(69));
    let got = lines_of(&out.stdout);
    assert_eq!(got[0]["error"]["code"], "unavailable");
}

#[test]
fn ssh_config_alias_gives_hostname_port_user_and_identity() {
    let Some(f) = Fixture::new() else { return };
    let dir = tempfile::tempdir().unwrap();
    let key = copy_key(&f, dir.path(), 0o600);
    let (host, port) = f.c.host_port();
    let cfg = dir.path().join("config");
    std::fs::write(
        &cfg,
        format!(
            "# test ssh config\nHost tao-login-alias\n    HostName {host}\n    Port {port}\n    User {}\n    IdentityFile {}\n    ServerAliveInterval 30\n",
            f.c.var("SLURM_USER"),
            key.display()
        ),
    )
    .unwrap();
    let out = f.run_cmd(
        f.cmd()
            .env("SLURM_HOSTNAME", "tao-login-alias")
            .env("SSH_CONFIG", &cfg)
            .env_remove("SLURM_USER")
            .env_remove("SSH_KEY_PATH"),
        &[f.line("c", "true")],
        0,
    );
    job_id(&out);
    assert_eq!(
        lines_of(&out.stdout)[0]["slurm"]["login_host"],
        "tao-login-alias"
    );
}

#[test]
fn a_group_readable_key_is_refused_with_77_and_nothing_is_submitted() {
    let Some(f) = Fixture::new() else { return };
    let dir = tempfile::tempdir().unwrap();
    let key = copy_key(&f, dir.path(), 0o640);
    let line = f.line("k", "true");
    let id = line["id"].as_str().unwrap().to_string();
    let out = f.run_cmd(f.cmd().env("SSH_KEY_PATH", &key), &[line], 77);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("chmod 600"), "{stderr}");
    assert_eq!(lines_of(&out.stdout)[0]["error"]["code"], "noperm");
    assert!(f.c.jobs_named(&id).is_empty());
}

#[test]
fn an_unknown_host_key_is_refused_with_the_fix_and_accepted_on_request() {
    let Some(f) = Fixture::new() else { return };
    let dir = tempfile::tempdir().unwrap();
    let kh = dir.path().join("known_hosts");
    let out = f.run_cmd(
        f.cmd().env("SSH_KNOWN_HOSTS", &kh),
        &[f.line("h", "true")],
        77,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    let (host, port) = f.c.host_port();
    let fix = format!("ssh-keyscan -p {port} -H '{host}' >> '{}'", kh.display());
    assert!(stderr.contains(&fix), "{stderr}");
    // The printed fix works as printed.
    let st = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("{fix} 2>/dev/null"))
        .status()
        .unwrap();
    assert!(st.success());
    let out = f
        .cmd()
        .env("SSH_KNOWN_HOSTS", &kh)
        .write_stdin(stdin_of(&[f.line("h", "true")]))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "after the fix: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    // With --accept-new-host-key on a fresh file.
    let kh2 = dir.path().join("known_hosts2");
    f.run_cmd(
        f.cmd()
            .arg("--accept-new-host-key")
            .env("SSH_KNOWN_HOSTS", &kh2),
        &[f.line("h", "true")],
        0,
    );
    assert!(std::fs::read_to_string(&kh2)
        .unwrap()
        .starts_with(&format!("[{host}]:{port} ")));
}

#[test]
fn login_failure_prints_the_setup_steps() {
    let Some(f) = Fixture::new() else { return };
    let dir = tempfile::tempdir().unwrap();
    let key = common::uninstalled_key(dir.path());
    let out = f.run_cmd(
        f.cmd().env("SSH_KEY_PATH", &key),
        &[f.line("n", "true")],
        77,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    // The error is one line naming SSH_KEY_PATH; the five setup steps
    // follow it as short indented hint lines.
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 6, "error + 5 steps: {stderr}");
    assert!(
        lines[0].starts_with("tao-submit: error: ssh login as ")
            && lines[0].contains("SSH_KEY_PATH"),
        "{stderr}"
    );
    assert!(lines[0].len() < 300, "short: {}", lines[0]);
    for (line, s) in lines[1..].iter().zip([
        "  1) generate a key",
        "  2) install the public key",
        "  3) restrict the key: chmod 600",
        "  4) add the login node's host key: ssh-keyscan",
        "  5) export SSH_KEY_PATH=",
    ]) {
        assert!(line.starts_with(s), "{s:?} missing: {stderr}");
    }
    // The job line's error stays one short line, without the steps.
    let v: serde_json::Value =
        serde_json::from_str(String::from_utf8_lossy(&out.stdout).lines().next().unwrap()).unwrap();
    let msg = v["error"]["message"].as_str().unwrap();
    assert!(msg.contains("SSH_KEY_PATH") && !msg.contains("1)"), "{msg}");
}

#[test]
fn ssh_agent_authenticates_when_no_key_file_is_given() {
    let Some(f) = Fixture::new() else { return };
    let dir = tempfile::tempdir().unwrap();
    let agent = tao_testkit::ssh::SshAgent::start(dir.path());
    let key = copy_key(&f, dir.path(), 0o600);
    let added = agent.add(&key);
    std::fs::remove_file(&key).unwrap();
    let out = f
        .cmd()
        .env_remove("SSH_KEY_PATH")
        .env("SSH_AUTH_SOCK", agent.sock())
        .write_stdin(stdin_of(&[f.line("ag", "true")]))
        .output()
        .unwrap();
    drop(agent);
    assert!(added);
    tao_testkit::tool::assert_exit(&out, 0);
    job_id(&out);
}
