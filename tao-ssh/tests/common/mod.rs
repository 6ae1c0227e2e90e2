//! Helpers shared by tao-ssh's cluster tests: the local cluster's exports
//! (tests/cluster/up writes them), SshOptions for them, and key copies with
//! a chosen mode.
#![allow(dead_code)]

use std::collections::HashMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use tao_ssh::SshOptions;

/// The env file of the cluster under test: `$TAO_CLUSTER_DIR/env`
/// (default `/var/tmp/tao-cluster/env`, the 22.05 cluster; scripts/test
/// sources `env-24.11`, which points TAO_CLUSTER_DIR at the 24.11 cluster).
pub fn env_file() -> String {
    let dir = std::env::var("TAO_CLUSTER_DIR").unwrap_or_else(|_| "/var/tmp/tao-cluster".into());
    format!("{dir}/env")
}

/// The cluster's exports, or `None` (skip) when it is not up.
pub fn cluster() -> Option<HashMap<String, String>> {
    let env_file = env_file();
    let text = match std::fs::read_to_string(&env_file) {
        Ok(t) => t,
        Err(e) => {
            if std::env::var("CI").as_deref() == Ok("true") {
                panic!("local cluster not up ({env_file}: {e}) and CI=true: run tests/cluster/up");
            }
            eprintln!("skipping: local cluster not up ({env_file}: {e})");
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

/// Options for the cluster user, its key and known_hosts.
pub fn opts(env: &HashMap<String, String>) -> SshOptions {
    SshOptions {
        user: env["SLURM_USER"].clone(),
        hosts: SshOptions::parse_hosts(&env["SLURM_HOSTNAME"]).unwrap(),
        key_path: Some(PathBuf::from(&env["SSH_KEY_PATH"])),
        known_hosts: PathBuf::from(&env["SSH_KNOWN_HOSTS"]),
        ssh_config: None,
        accept_new_host_key: false,
        // Generous: a handshake on a loaded 2-core machine can take seconds.
        connect_timeout: Duration::from_secs(30),
        ..SshOptions::default()
    }
}

/// Copy a private key into `dir` with permission bits `mode`.
pub fn copy_key(src: &str, dir: &Path, mode: u32) -> PathBuf {
    let dst = dir.join("id_test");
    std::fs::copy(src, &dst).unwrap();
    std::fs::set_permissions(&dst, std::fs::Permissions::from_mode(mode)).unwrap();
    dst
}
