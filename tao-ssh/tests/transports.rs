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

/// The exports of tests/cluster/up-transport, or `None` (skip; see
/// [`tao_testkit::cluster::transport_exports`] for when it fails instead).
fn transport_env() -> Option<HashMap<String, String>> {
    tao_testkit::cluster::transport_exports()
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
    // Every openssh command was a session asked of the master on its
    // socket, never an ssh client process.
    assert_eq!(tao_ssh::openssh::client_process_count(), 0);
    let mut o = opts(&env);
    o.transport = TransportKind::Local;
    o.user = String::new();
    check_values(&o, "local");
}

/// The public key line (`type base64`) of a fresh key of `kind`.
fn fresh_key(dir: &std::path::Path, kind: &str) -> String {
    let k = dir.join(format!("k-{kind}"));
    let _ = std::fs::remove_file(&k);
    assert!(std::process::Command::new("ssh-keygen")
        .args(["-q", "-t", kind, "-N", "", "-f"])
        .arg(&k)
        .status()
        .unwrap()
        .success());
    let p = std::fs::read_to_string(k.with_extension("pub")).unwrap();
    let mut f = p.split_whitespace();
    format!("{} {}", f.next().unwrap(), f.next().unwrap())
}

#[test]
fn host_keys_are_checked_as_openssh_checks_them() {
    let Some(env) = cluster() else { return };
    let Some(v) = transport_env() else { return };
    let dir = tempfile::tempdir().unwrap();
    let kh = dir.path().join("known_hosts");
    let connect = |o: &SshOptions| tao_ssh::connect(o).map(|r| r.login_host().to_string());
    let base = |known: &str| {
        std::fs::write(&kh, known).unwrap();
        SshOptions {
            known_hosts: kh.clone(),
            known_hosts_explicit: true,
            system_known_hosts: vec![],
            ..opts(&env)
        }
    };
    // The login node behind the bastion offers ed25519 and ECDSA; a
    // known_hosts holding only its ECDSA key is checked as ECDSA (it used to
    // be "a changed key" when ed25519 was negotiated), on both transports.
    let inner = v["TAO_T_INNER"].clone();
    let ecdsa_only =
        std::fs::read_to_string(format!("{}/known_hosts_ecdsa_only", v["TAO_T_DIR"])).unwrap();
    assert!(ecdsa_only.contains("ecdsa-sha2-nistp256"), "{ecdsa_only}");
    for transport in [TransportKind::Libssh2, TransportKind::Openssh] {
        let mut o = base(&ecdsa_only);
        o.hosts = vec![inner.clone()];
        o.transport = transport;
        connect(&o).unwrap_or_else(|e| panic!("{}: {e}", transport.name()));
    }
    // A different ECDSA key for it: a changed key (77), one line with the fix.
    let other_ecdsa = fresh_key(dir.path(), "ecdsa");
    let mut o = base(&format!("[127.0.0.1]:2224 {other_ecdsa}\n"));
    o.hosts = vec![inner.clone()];
    let e = connect(&o).unwrap_err();
    assert_eq!(e.code(), tao_core::exit::NOPERM);
    assert!(
        e.to_string().contains("differs") && e.to_string().contains("ssh-keygen -R"),
        "{e}"
    );

    // 2222 offers ed25519 only: an ECDSA-only entry is an unknown type, not a changed key.
    let good = std::fs::read_to_string(&env["SSH_KNOWN_HOSTS"]).unwrap();
    let e = connect(&base(&format!("[127.0.0.1]:2222 {other_ecdsa}\n"))).unwrap_err();
    assert_eq!(e.code(), tao_core::exit::NOPERM);
    assert!(
        e.to_string().contains("unknown type") && e.to_string().contains("-t ssh-ed25519"),
        "{e}"
    );
    // @revoked wins over a plain entry of the same key.
    let key = good
        .lines()
        .next()
        .unwrap()
        .split_once(' ')
        .unwrap()
        .1
        .to_string();
    let e = connect(&base(&format!("{good}@revoked [127.0.0.1]:2222 {key}\n"))).unwrap_err();
    assert!(e.to_string().contains("@revoked"), "{e}");
    // A host trusted only through a CA: libssh2 says to use openssh.
    let ca = fresh_key(dir.path(), "ed25519");
    let e = connect(&base(&format!("@cert-authority [127.0.0.1]:* {ca}\n"))).unwrap_err();
    assert!(
        e.to_string().contains("@cert-authority")
            && e.to_string().contains("TAO_TRANSPORT=openssh"),
        "{e}"
    );
    // Hashed entries (HashKnownHosts yes) and the system file are read.
    let o = base(&good);
    assert!(std::process::Command::new("ssh-keygen")
        .args(["-q", "-H", "-f"])
        .arg(&kh)
        .status()
        .unwrap()
        .success());
    assert!(std::fs::read_to_string(&kh).unwrap().starts_with("|1|"));
    connect(&o).unwrap();
    let sys = dir.path().join("ssh_known_hosts");
    std::fs::write(&sys, &good).unwrap();
    let mut o = base("");
    o.system_known_hosts = vec![sys];
    connect(&o).unwrap();
}

#[test]
fn a_missing_login_shell_is_one_line_naming_host_user_and_fix() {
    let Some(_) = cluster() else { return };
    let Some(v) = transport_env() else { return };
    for transport in [TransportKind::Libssh2, TransportKind::Openssh] {
        let mut o = shell_user_opts(&v, &v["TAO_T_NOSHELL_USER"]);
        o.transport = transport;
        let r = tao_ssh::connect(&o).unwrap_or_else(|e| panic!("{}: {e}", transport.name()));
        let e = r.exec("echo never", None).unwrap_err();
        assert_eq!(e.code(), tao_core::exit::CONFIG, "{e}");
        let m = e.to_string();
        assert!(
            m.contains("taonoshell")
                && m.contains(&v["TAO_T_SHELLS_HOST"])
                && m.contains("chsh")
                && !m.contains('\n'),
            "{}: {m}",
            transport.name()
        );
    }
}
