//! Helpers shared by tao-ssh's cluster tests: the local cluster's exports
//! (tests/cluster/up writes them; read, and the CI rule applied, by
//! tao_testkit::cluster) and SshOptions for them.
#![allow(dead_code)]

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use tao_ssh::SshOptions;

/// The cluster's exports (name -> value).
pub type Env = HashMap<String, String>;

/// The cluster's exports, or `None` (skip; a failure under CI=true) when
/// it is not up ([`tao_testkit::cluster::cluster_exports`]).
pub fn cluster() -> Option<Env> {
    tao_testkit::cluster::cluster_exports()
}

/// Options for the cluster user, its key and known_hosts.
pub fn opts(env: &Env) -> SshOptions {
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
