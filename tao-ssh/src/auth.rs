//! Public-key authentication, never interactive: the private key named by
//! `SSH_KEY_PATH` first, then `IdentityFile`s of the host's ssh config
//! entry, then the ssh-agent behind `SSH_AUTH_SOCK`. No password and no
//! keyboard-interactive method is ever tried, so nothing can prompt.
//!
//! A private key readable by group or others is refused before it is used,
//! as OpenSSH refuses it ("UNPROTECTED PRIVATE KEY FILE", `sshkey_perm_ok`
//! in OpenSSH's authfile.c: `(st_mode & 077) != 0`).

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use ssh2::Session;
use tao_core::{shell, Error, Result};

use crate::hostkey::keyscan_fix;
use crate::options::Target;

/// Refuse a private key file that group or others may read or write.
///
/// Input: the key path. Errors: [`Error::NoPerm`] (exit 77) with the
/// `chmod 600` fix when `mode & 0o077 != 0`; [`Error::Config`] when the
/// file does not exist or cannot be inspected.
pub fn check_key_permissions(path: &Path) -> Result<()> {
    let shown = path.display().to_string();
    let meta = std::fs::metadata(path).map_err(|e| {
        Error::Config(format!(
            "private key {shown:?}: {e}; set SSH_KEY_PATH to your private key file"
        ))
    })?;
    let mode = meta.mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(Error::NoPerm(format!(
            "private key {shown:?} is accessible by group or others (mode {mode:04o}); ssh refuses such keys: run `chmod 600 {}`",
            shell::quote(&shown)
        )));
    }
    Ok(())
}

/// The seed's remediation when login fails, as one short line: which
/// login failed and why, and that SSH_KEY_PATH must name a key the login
/// node accepts, and that sshd refuses an account whose login shell does
/// not exist (the same refusal). The five setup steps ([`login_setup_steps`]) are too long
/// for that line: they are printed after it on stderr only
/// (`tao_core::cli::attach_hints`), never in a job line's `error.message`.
///
/// Input: the target and why each method failed. Output: one line.
pub fn login_remediation(target: &Target, why: &str) -> String {
    format!(
        "ssh login as {:?} to {}:{} failed ({why}); set SSH_KEY_PATH to a private key the login node accepts (setup steps on stderr; a missing login shell is refused too)",
        target.user, target.host, target.port,
    )
}

/// The five key-setup steps of the seed's remediation, one short line
/// each, with this target's user, host, port and known_hosts path filled
/// in (values shell-quoted): generate a key, install it, restrict it, add
/// the host key, export the variables.
pub fn login_setup_steps(target: &Target, known_hosts: &Path) -> Vec<String> {
    let user_at = format!("{}@{}", target.user, target.host);
    vec![
        "1) generate a key: ssh-keygen -t ed25519 -N '' -f ~/.ssh/tao_slurm_ed25519".into(),
        format!(
            "2) install the public key on the login node: ssh-copy-id -p {} -i ~/.ssh/tao_slurm_ed25519.pub {}",
            target.port,
            shell::quote(&user_at)
        ),
        "3) restrict the key: chmod 600 ~/.ssh/tao_slurm_ed25519".into(),
        format!(
            "4) add the login node's host key: {}",
            keyscan_fix(&target.host, target.port, known_hosts)
        ),
        format!(
            "5) export SSH_KEY_PATH=~/.ssh/tao_slurm_ed25519 SLURM_USER={} SLURM_HOSTNAME={}",
            shell::quote(&target.user),
            shell::quote(&target.spec)
        ),
    ]
}

/// Authenticate `sess` for `target`: each identity file (permissions
/// checked first; config `IdentityFile`s that do not exist are skipped as
/// ssh skips them, a missing `SSH_KEY_PATH` is an error), then the agent.
///
/// Errors: [`Error::NoPerm`] for an unprotected key or when every method
/// failed (with [`login_remediation`], and the [`login_setup_steps`]
/// attached as stderr hints); [`Error::Config`] when
/// `explicit_key` does not exist.
pub(crate) fn authenticate(
    sess: &Session,
    target: &Target,
    explicit_key: Option<&Path>,
    known_hosts: &Path,
) -> Result<()> {
    let mut tried: Vec<String> = Vec::new();
    for key in &target.identity_files {
        let is_explicit = Some(key.as_path()) == explicit_key;
        if !is_explicit && !key.exists() {
            continue;
        }
        check_key_permissions(key)?;
        match sess.userauth_pubkey_file(&target.user, None, key, None) {
            Ok(()) if sess.authenticated() => return Ok(()),
            Ok(()) => tried.push(format!("key {:?} not accepted", key.display().to_string())),
            Err(e) => tried.push(format!(
                "key {:?} not accepted: {}",
                key.display().to_string(),
                e.message()
            )),
        }
    }
    if std::env::var_os("SSH_AUTH_SOCK").is_some_and(|s| !s.is_empty()) {
        match sess.userauth_agent(&target.user) {
            Ok(()) if sess.authenticated() => return Ok(()),
            Ok(()) => tried.push("ssh-agent: no key accepted".into()),
            Err(e) => tried.push(format!("ssh-agent: {}", e.message())),
        }
    } else if tried.is_empty() {
        tried.push("no SSH_KEY_PATH, no IdentityFile and no SSH_AUTH_SOCK".into());
    }
    let msg = login_remediation(target, &tried.join("; "));
    tao_core::cli::attach_hints(&msg, login_setup_steps(target, known_hosts));
    Err(Error::NoPerm(msg))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn group_readable_key_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let key = dir.path().join("id");
        std::fs::write(&key, "not a real key").unwrap();
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o640)).unwrap();
        let e = check_key_permissions(&key).unwrap_err();
        assert_eq!(e.code(), tao_core::exit::NOPERM);
        assert!(e.to_string().contains("chmod 600"), "{e}");
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
        check_key_permissions(&key).unwrap();
        let e = check_key_permissions(&dir.path().join("missing")).unwrap_err();
        assert_eq!(e.code(), tao_core::exit::CONFIG);
    }

    #[test]
    fn remediation_lists_five_steps() {
        let t = Target {
            spec: "login1:2222".into(),
            host: "login1".into(),
            port: 2222,
            user: "alice".into(),
            identity_files: vec![],
            connect_timeout: std::time::Duration::from_secs(1),
            proxy: Default::default(),
        };
        let m = login_remediation(&t, "denied");
        assert!(
            m.contains("SSH_KEY_PATH") && m.contains("login1:2222"),
            "{m}"
        );
        assert!(!m.contains('\n') && !m.contains("1)"), "{m}");
        assert!(m.len() < 250, "short: {m}");
        let steps = login_setup_steps(&t, Path::new("/h/.ssh/known_hosts"));
        assert_eq!(steps.len(), 5);
        for (i, (s, want)) in steps
            .iter()
            .zip([
                "ssh-keygen",
                "ssh-copy-id -p 2222",
                "chmod 600",
                "ssh-keyscan -p 2222 -H 'login1'",
                "export SSH_KEY_PATH=",
            ])
            .enumerate()
        {
            assert!(s.starts_with(&format!("{})", i + 1)), "{s}");
            assert!(s.contains(want), "{want} in {s}");
            assert!(!s.contains('\n') && s.len() < 120, "{s}");
        }
    }
}
