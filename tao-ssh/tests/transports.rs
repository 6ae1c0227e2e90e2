//! The three transports against real sshds (tests/cluster/up and
//! up-transport): hostile values quoted only for POSIX sh arrive byte for
//! byte whatever the cluster user's login shell (bash, fish, tcsh), on
//! libssh2, openssh and local; host-key cases as OpenSSH decides them.

mod common;

use std::collections::HashMap;
use std::path::PathBuf;

use common::{cluster, opts};
use tao_core::shell;
use tao_ssh::{SshOptions, TransportKind};

/// The exports of tests/cluster/up-transport, or `None` (skip).
fn transport_env() -> Option<HashMap<String, String>> {
    let path = "/var/tmp/tao-cluster/env-transport";
    match std::fs::read_to_string(path) {
        Ok(t) => Some(
            t.lines()
                .filter_map(|l| l.trim().strip_prefix("export ")?.split_once('='))
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        ),
        Err(e) => {
            if std::env::var("CI").as_deref() == Ok("true") {
                panic!("{path}: {e} and CI=true: run tests/cluster/up");
            }
            eprintln!("skipping: {path}: {e}");
            None
        }
    }
}

/// Values each shell reads differently: quotes, backslashes before quotes
/// (fish), newlines inside quotes (tcsh), history `!`, `$`, backquotes,
/// globs, braces, `%` (fish job expansion of old), control bytes, UTF-8,
/// a long value.
fn hostile() -> Vec<String> {
    let mut v: Vec<String> = [
        "plain",
        "it's",
        "'",
        "''",
        "\\'",
        "a\\'b\\\\'c",
        "back\\slash\\",
        "line1\nline2\n",
        "\n",
        "!event !! !$",
        "$HOME ${HOME} $(id) `id`",
        "* ? [a] ~ ~root",
        "{a,b} %self %1",
        "; | & && || > < >> 2>&1",
        "\t tab \r cr \u{1b}[31m esc",
        "ünïcødé ✓ 😀",
        "# not a comment",
        "-n",
        "--",
        "\"double\" \"\"",
        "end\\",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    v.push("x'y\\z\n".repeat(3000));
    v
}

/// Each value printed by the remote sh from its quoted form, NUL-separated,
/// must come back unchanged; a stdin with every byte value too.
fn check_values(o: &SshOptions, what: &str) {
    let r = tao_ssh::connect(o).unwrap_or_else(|e| panic!("{what}: {e}"));
    let values = hostile();
    let script: String = values
        .iter()
        .map(|v| format!("printf '%s\\0' {}\n", shell::quote(v)))
        .collect();
    let out = r.exec(&script, None).unwrap();
    assert_eq!(out.status, 0, "{what}: {}", out.stderr_line());
    let got: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .split_terminator('\0')
        .map(str::to_string)
        .collect();
    assert_eq!(got.len(), values.len(), "{what}");
    for (g, v) in got.iter().zip(&values) {
        assert_eq!(g, v, "{what}");
    }
    let all: Vec<u8> = (0..=255u8).collect();
    let out = r.exec("cat; echo end", Some(&all)).unwrap();
    assert_eq!(&out.stdout[..256], &all[..], "{what}");
}

fn shell_user_opts(v: &HashMap<String, String>, user: &str) -> SshOptions {
    let env = cluster().unwrap();
    SshOptions {
        user: user.to_string(),
        hosts: vec![v["TAO_T_SHELLS_HOST"].clone()],
        known_hosts: PathBuf::from(&v["TAO_T_KNOWN_HOSTS"]),
        known_hosts_explicit: true,
        ..opts(&env)
    }
}

#[test]
fn hostile_values_arrive_byte_for_byte_under_bash_fish_and_tcsh() {
    let Some(env) = cluster() else { return };
    let Some(v) = transport_env() else { return };
    for transport in [TransportKind::Libssh2, TransportKind::Openssh] {
        let mut o = opts(&env);
        o.transport = transport;
        o.known_hosts_explicit = true;
        check_values(&o, &format!("bash {}", transport.name()));
        for user in [&v["TAO_T_FISH_USER"], &v["TAO_T_TCSH_USER"]] {
            let mut o = shell_user_opts(&v, user);
            o.transport = transport;
            check_values(&o, &format!("{user} {}", transport.name()));
        }
    }
    let mut o = opts(&env);
    o.transport = TransportKind::Local;
    o.user = String::new();
    check_values(&o, "local");
}
