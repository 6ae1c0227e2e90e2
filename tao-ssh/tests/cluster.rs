//! tao-ssh against the local cluster's sshd (tests/cluster/up): commands,
//! stdin, large outputs, failover, ssh config aliases, key permissions,
//! unknown host keys and agent authentication.
//!
//! When the cluster is not up these tests fail under CI=true and are
//! skipped with a printed reason otherwise.

mod common;

use common::{cluster, opts};
use tao_ssh::Remote;
use tao_testkit::ssh::copy_key;

/// A port on 127.0.0.1 nobody listens on.
fn dead_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

#[test]
fn exec_runs_commands_with_stdin_and_status() {
    let Some(env) = cluster() else { return };
    let r = Remote::connect(&opts(&env)).unwrap();
    let out = r.exec("echo out; echo err >&2; exit 3", None).unwrap();
    assert_eq!(
        (out.stdout.as_slice(), out.stderr.as_slice(), out.status),
        (&b"out\n"[..], &b"err\n"[..], 3)
    );
    let out = r.exec("cat; printf x", Some(b"from stdin\n")).unwrap();
    assert_eq!(out.stdout, b"from stdin\nx");
    // Large streams on both sides at once do not deadlock the windows.
    let big = vec![b'a'; 3 * 1024 * 1024];
    let out = r
        .exec("head -c 3000000 /dev/zero >&2; wc -c", Some(&big))
        .unwrap();
    assert_eq!(out.stderr.len(), 3_000_000);
    assert_eq!(out.stdout_text().trim(), (3 * 1024 * 1024).to_string());
    // The remote prefix runs before every command.
    let mut o = opts(&env);
    o.remote_prefix = "X_PREFIX=from-prefix;".into();
    let r2 = Remote::connect(&o).unwrap();
    assert_eq!(
        r2.exec("echo $X_PREFIX", None).unwrap().stdout,
        b"from-prefix\n"
    );
    // No pty: stdin is not a terminal.
    assert_eq!(
        r.exec("test -t 0 || echo notty", None).unwrap().stdout,
        b"notty\n"
    );
}

#[test]
fn failover_skips_a_dead_host() {
    let Some(env) = cluster() else { return };
    let mut o = opts(&env);
    let dead = format!("127.0.0.1:{}", dead_port());
    o.hosts.insert(0, dead.clone());
    let r = Remote::connect(&o).unwrap();
    assert_eq!(r.login_host(), env["SLURM_HOSTNAME"]);
    // All hosts dead: unavailable (69), each reason listed.
    o.hosts = vec![dead.clone(), format!("127.0.0.1:{}", dead_port())];
    let e = Remote::connect(&o).unwrap_err();
    assert_eq!(e.code(), 69);
    assert!(e.to_string().contains(&dead), "{e}");
}

#[test]
fn ssh_config_alias_supplies_hostname_port_user_and_key() {
    let Some(env) = cluster() else { return };
    let dir = tempfile::tempdir().unwrap();
    let key = copy_key(&env["SSH_KEY_PATH"], dir.path(), "id_test", 0o600);
    let (host, port) = env["SLURM_HOSTNAME"].split_once(':').unwrap();
    let cfg = dir.path().join("config");
    std::fs::write(
        &cfg,
        format!(
            "Host tao-login\n  HostName {host}\n  Port {port}\n  User {}\n  IdentityFile {}\n",
            env["SLURM_USER"],
            key.display()
        ),
    )
    .unwrap();
    let mut o = opts(&env);
    o.user.clear();
    o.key_path = None;
    o.ssh_config = Some(cfg);
    o.hosts = vec!["tao-login".into()];
    let r = Remote::connect(&o).unwrap();
    assert_eq!(r.login_host(), "tao-login");
    assert_eq!(
        r.exec("id -un", None).unwrap().stdout_text().trim(),
        env["SLURM_USER"]
    );
}

#[test]
fn group_readable_key_is_refused_with_77() {
    let Some(env) = cluster() else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut o = opts(&env);
    o.key_path = Some(copy_key(&env["SSH_KEY_PATH"], dir.path(), "id_test", 0o640));
    let e = Remote::connect(&o).unwrap_err();
    assert_eq!(e.code(), 77, "{e}");
    assert!(e.to_string().contains("chmod 600"), "{e}");
}

#[test]
fn unknown_host_key_is_refused_with_the_fix_then_accepted_on_request() {
    let Some(env) = cluster() else { return };
    let dir = tempfile::tempdir().unwrap();
    let kh = dir.path().join("ssh/known_hosts");
    let mut o = opts(&env);
    o.known_hosts = kh.clone();
    let e = Remote::connect(&o).unwrap_err();
    assert_eq!(e.code(), 77, "{e}");
    let (host, port) = env["SLURM_HOSTNAME"].split_once(':').unwrap();
    let fix = format!("ssh-keyscan -p {port} -H '{host}' >> '{}'", kh.display());
    assert!(e.to_string().contains(&fix), "{e}");
    assert!(!kh.exists(), "refusing must not write known_hosts");
    o.accept_new_host_key = true;
    Remote::connect(&o).unwrap();
    let written = std::fs::read_to_string(&kh).unwrap();
    assert!(
        written.starts_with(&format!("[{host}]:{port} ssh-")),
        "{written}"
    );
    // Now known: accepted without the option.
    o.accept_new_host_key = false;
    Remote::connect(&o).unwrap();
    // A changed key is refused even with the option.
    let other = dir.path().join("other_key");
    let st = std::process::Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(&other)
        .status()
        .unwrap();
    assert!(st.success());
    let pubkey = std::fs::read_to_string(other.with_extension("pub")).unwrap();
    let mut parts = pubkey.split_whitespace();
    let line = format!(
        "[{host}]:{port} {} {}\n",
        parts.next().unwrap(),
        parts.next().unwrap()
    );
    std::fs::write(&kh, line).unwrap();
    o.accept_new_host_key = true;
    let e = Remote::connect(&o).unwrap_err();
    assert_eq!(e.code(), 77);
    assert!(e.to_string().contains("differs"), "{e}");
}

#[test]
fn login_failure_gives_the_setup_steps() {
    let Some(env) = cluster() else { return };
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("wrong");
    let st = std::process::Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(&key)
        .status()
        .unwrap();
    assert!(st.success());
    let mut o = opts(&env);
    o.key_path = Some(key);
    let e = Remote::connect(&o).unwrap_err();
    assert_eq!(e.code(), 77);
    let m = e.to_string();
    // One short line naming SSH_KEY_PATH; the steps ride along as hints
    // printed after it on stderr (tao_core::cli::report).
    assert!(m.contains("SSH_KEY_PATH") && !m.contains('\n'), "{m}");
    let hints = tao_core::cli::hints_for(&m);
    assert_eq!(hints.len(), 5, "{hints:?}");
    for (h, s) in hints.iter().zip([
        "1) generate",
        "2) install",
        "3) restrict",
        "4) add",
        "5) export",
    ]) {
        assert!(h.starts_with(s), "{s} missing from {h}");
    }
}

#[test]
fn exec_watched_shows_the_reply_so_far_while_the_command_runs() {
    use std::os::unix::fs::PermissionsExt;
    let Some(env) = cluster() else { return };
    let r = Remote::connect(&opts(&env)).unwrap();
    // The command prints its first line, then waits (at most 60 s) for a
    // file that only `idle` creates, once it has seen that line: the
    // rest of the reply exists only if `idle` ran while the command did.
    let dir = tempfile::tempdir_in(&env["SLURM_BASE_RESULTS_DIR"]).unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let go = dir.path().join("go");
    let script = format!(
        "printf 'first\\n'; n=0; while [ ! -e {go} ] && [ $n -lt 1200 ]; do sleep 0.05; n=$((n+1)); done; [ -e {go} ] && printf 'second\\n'",
        go = tao_core::shell::quote(go.to_str().unwrap())
    );
    let mut seen: Vec<Vec<u8>> = Vec::new();
    let out = r
        .exec_watched(&script, None, &mut |so_far| {
            if so_far == b"first\n" && !go.exists() {
                std::fs::write(&go, b"").unwrap();
            }
            seen.push(so_far.to_vec());
        })
        .unwrap();
    assert_eq!(
        (out.stdout.as_slice(), out.status),
        (&b"first\nsecond\n"[..], 0)
    );
    assert!(seen.iter().any(|s| s == b"first\n"), "{seen:?}");
    assert!(seen.iter().all(|s| out.stdout.starts_with(s)), "{seen:?}");
}
