//! `handshake_count` counts one handshake per session, not per command.
//! Its own test binary: the counter is process-wide, and tests in one
//! binary run in parallel.

mod common;

#[test]
fn one_handshake_per_session_many_commands() {
    let Some(env) = common::cluster() else { return };
    let opts = common::opts(&env);
    assert_eq!(tao_ssh::handshake_count(), 0);
    let r = tao_ssh::Remote::connect(&opts).unwrap();
    for i in 0..20 {
        let out = r.exec(&format!("echo {i}"), None).unwrap();
        assert_eq!(out.stdout_text().trim(), i.to_string());
    }
    assert_eq!(tao_ssh::handshake_count(), 1);
}
