//! `TAO_TRANSPORT` is read and checked by tao-ssh (one rule for tao-poll
//! and tao-submit): an unknown value is a configuration error (exit 78)
//! naming the variable and its values, never a usage error about a
//! `--transport` flag the user did not pass. No cluster needed: the value
//! is refused before any connection.

#[test]
fn an_unknown_tao_transport_is_exit_78_naming_the_variable() {
    let out = assert_cmd::Command::cargo_bin("tao-poll")
        .unwrap()
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", std::env::temp_dir())
        .env("SLURM_HOSTNAME", "127.0.0.1:1")
        .env("SSH_KNOWN_HOSTS", "/dev/null")
        .env("TAO_SITE_PROFILE", "local")
        .env("TAO_TRANSPORT", "bogus")
        .args(["123"])
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(78), "{stderr}");
    assert!(
        stderr.contains("TAO_TRANSPORT")
            && stderr.contains("libssh2, openssh, local")
            && !stderr.contains("--transport <NAME>"),
        "{stderr}"
    );
}
