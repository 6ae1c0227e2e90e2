//! `handshake_count` counts one handshake per session, not per command.
//! Its own test binary: the counter is process-wide, and tests in one
//! binary run in parallel.

use std::path::PathBuf;
use std::time::Duration;

#[test]
fn one_handshake_per_session_many_commands() {
    let dir = std::env::var("TAO_CLUSTER_DIR").unwrap_or_else(|_| "/var/tmp/tao-cluster".into());
    let text = match std::fs::read_to_string(format!("{dir}/env")) {
        Ok(t) => t,
        Err(e) => {
            assert_ne!(
                std::env::var("CI").as_deref(),
                Ok("true"),
                "local cluster not up: {e}"
            );
            eprintln!("skipping: local cluster not up: {e}");
            return;
        }
    };
    let get = |k: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(&format!("export {k}=")))
            .unwrap()
            .to_string()
    };
    let opts = tao_ssh::SshOptions {
        user: get("SLURM_USER"),
        hosts: vec![get("SLURM_HOSTNAME")],
        key_path: Some(PathBuf::from(get("SSH_KEY_PATH"))),
        known_hosts: PathBuf::from(get("SSH_KNOWN_HOSTS")),
        ssh_config: None,
        accept_new_host_key: false,
        // Generous: a handshake on a loaded 2-core machine can take seconds.
        connect_timeout: Duration::from_secs(30),
        ..tao_ssh::SshOptions::default()
    };
    assert_eq!(tao_ssh::handshake_count(), 0);
    let r = tao_ssh::Remote::connect(&opts).unwrap();
    for i in 0..20 {
        let out = r.exec(&format!("echo {i}"), None).unwrap();
        assert_eq!(out.stdout_text().trim(), i.to_string());
    }
    assert_eq!(tao_ssh::handshake_count(), 1);
}
