//! Agent authentication against the local cluster's sshd. Its own test
//! binary because it sets SSH_AUTH_SOCK in the process environment (libssh2
//! reads it there), which would change how parallel tests authenticate.

mod common;

use common::{cluster, opts};
use tao_ssh::Remote;
use tao_testkit::ssh::{copy_key, SshAgent};

/// Agent authentication: an ssh-agent started for this test holds the
/// key; no key file is named. The test talks to the agent through
/// SSH_AUTH_SOCK, which libssh2 reads from the process environment, so the
/// variable is set here (only this test sets it).
#[test]
fn agent_authentication() {
    let Some(env) = cluster() else { return };
    let dir = tempfile::tempdir().unwrap();
    let agent = SshAgent::start(dir.path());
    let key = copy_key(&env["SSH_KEY_PATH"], dir.path(), "id_test", 0o600);
    assert!(agent.add(&key));
    std::fs::remove_file(&key).unwrap();
    std::env::set_var("SSH_AUTH_SOCK", agent.sock());
    let mut o = opts(&env);
    o.key_path = None;
    let res = Remote::connect(&o).and_then(|r| r.exec("echo agent-ok", None));
    std::env::remove_var("SSH_AUTH_SOCK");
    drop(agent);
    assert_eq!(res.unwrap().stdout, b"agent-ok\n");
}
