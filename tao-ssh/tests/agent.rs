//! Agent authentication against the local cluster's sshd. Its own test
//! binary because it sets SSH_AUTH_SOCK in the process environment (libssh2
//! reads it there), which would change how parallel tests authenticate.

use std::time::Duration;

mod common;

use common::{cluster, copy_key, opts};
use tao_ssh::Remote;

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
    // Ready when it answers, not when its socket file exists (bound before
    // it listens): `ssh-add -l` exits 2 while it cannot reach the agent.
    let start = std::time::Instant::now();
    loop {
        let st = std::process::Command::new("ssh-add")
            .arg("-l")
            .env("SSH_AUTH_SOCK", &sock)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .unwrap();
        if st.code() != Some(2) {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "ssh-agent did not start"
        );
        std::thread::sleep(Duration::from_millis(50));
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
