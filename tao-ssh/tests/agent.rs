//! Agent authentication against the local cluster's sshd. Its own test
//! binary because it sets SSH_AUTH_SOCK in the process environment (libssh2
//! reads it there), which would change how parallel tests authenticate.

use std::collections::HashMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use tao_ssh::{Remote, SshOptions};

const ENV_FILE: &str = "/var/tmp/tao-cluster/env";

/// The cluster's exports, or `None` (skip) when it is not up.
fn cluster() -> Option<HashMap<String, String>> {
    let text = match std::fs::read_to_string(ENV_FILE) {
        Ok(t) => t,
        Err(e) => {
            if std::env::var("CI").as_deref() == Ok("true") {
                panic!("local cluster not up ({ENV_FILE}: {e}) and CI=true: run tests/cluster/up");
            }
            eprintln!("skipping: local cluster not up ({ENV_FILE}: {e})");
            return None;
        }
    };
    let mut m = HashMap::new();
    for line in text.lines() {
        if let Some(rest) = line.trim().strip_prefix("export ") {
            if let Some((k, v)) = rest.split_once('=') {
                m.insert(
                    k.to_string(),
                    v.trim_matches('"').trim_matches('\'').to_string(),
                );
            }
        }
    }
    Some(m)
}

fn opts(env: &HashMap<String, String>) -> SshOptions {
    SshOptions {
        user: env["SLURM_USER"].clone(),
        hosts: SshOptions::parse_hosts(&env["SLURM_HOSTNAME"]).unwrap(),
        key_path: Some(PathBuf::from(&env["SSH_KEY_PATH"])),
        known_hosts: PathBuf::from(&env["SSH_KNOWN_HOSTS"]),
        ssh_config: None,
        accept_new_host_key: false,
        connect_timeout: Duration::from_secs(5),
        remote_prefix: String::new(),
    }
}

fn copy_key(src: &str, dir: &Path, mode: u32) -> PathBuf {
    let dst = dir.join("id_test");
    std::fs::copy(src, &dst).unwrap();
    std::fs::set_permissions(&dst, std::fs::Permissions::from_mode(mode)).unwrap();
    dst
}

/// Agent authentication: an ssh-agent started for this test holds the
/// key; no key file is named. The test talks to the agent through
/// SSH_AUTH_SOCK, which libssh2 reads from the process environment, so the
/// variable is set here (only this test sets it).
#[test]
fn agent_authentication() {
    let Some(env) = cluster() else { return };
    let dir = tempfile::tempdir().unwrap();
    let sock = dir.path().join("agent.sock");
    let mut agent = std::process::Command::new("ssh-agent")
        .arg("-D")
        .arg("-a")
        .arg(&sock)
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while !sock.exists() {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "ssh-agent did not start"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let key = copy_key(&env["SSH_KEY_PATH"], dir.path(), 0o600);
    let st = std::process::Command::new("ssh-add")
        .arg("-q")
        .arg(&key)
        .env("SSH_AUTH_SOCK", &sock)
        .status()
        .unwrap();
    assert!(st.success());
    std::fs::remove_file(&key).unwrap();
    std::env::set_var("SSH_AUTH_SOCK", &sock);
    let mut o = opts(&env);
    o.key_path = None;
    let res = Remote::connect(&o).and_then(|r| r.exec("echo agent-ok", None));
    std::env::remove_var("SSH_AUTH_SOCK");
    let _ = agent.kill();
    let _ = agent.wait();
    assert_eq!(res.unwrap().stdout, b"agent-ok\n");
}
