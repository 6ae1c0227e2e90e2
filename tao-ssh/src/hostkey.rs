//! Host-key verification against an OpenSSH `known_hosts` file, through
//! libssh2's `knownhost_checkp` (which matches hashed `|1|...` entries and
//! the `[host]:port` form sshd uses for ports other than 22; see sshd(8),
//! "SSH_KNOWN_HOSTS FILE FORMAT").
//!
//! A non-interactive tool cannot ask "are you sure you want to continue
//! connecting": an unknown key is refused with the exact command that adds
//! it, unless the caller opted in (`--accept-new-host-key`, like OpenSSH's
//! `StrictHostKeyChecking=accept-new`). A key that differs from the
//! recorded one is always refused.

use std::io::Write;
use std::path::Path;

use ssh2::{CheckResult, HostKeyType, KnownHostFileKind, Session};
use tao_core::{shell, Error, Result};

/// The known_hosts name of a host: `host` on port 22, `[host]:port`
/// otherwise (sshd(8), SSH_KNOWN_HOSTS FILE FORMAT).
pub fn known_hosts_name(host: &str, port: u16) -> String {
    if port == 22 {
        host.to_string()
    } else {
        format!("[{host}]:{port}")
    }
}

/// The shell command that appends the host's keys to `known_hosts`,
/// every value quoted: `ssh-keyscan -p PORT -H HOST >> KNOWN_HOSTS`.
/// Users should compare the fingerprint with one their admins published.
pub fn keyscan_fix(host: &str, port: u16, known_hosts: &Path) -> String {
    format!(
        "ssh-keyscan -p {port} -H {} >> {}",
        shell::quote(host),
        shell::quote(&known_hosts.display().to_string())
    )
}

fn key_type_name(t: HostKeyType) -> &'static str {
    match t {
        HostKeyType::Rsa => "ssh-rsa",
        HostKeyType::Dss => "ssh-dss",
        HostKeyType::Ecdsa256 => "ecdsa-sha2-nistp256",
        HostKeyType::Ecdsa384 => "ecdsa-sha2-nistp384",
        HostKeyType::Ecdsa521 => "ecdsa-sha2-nistp521",
        HostKeyType::Ed25519 => "ssh-ed25519",
        HostKeyType::Unknown => "unknown",
    }
}

/// Host-key algorithms in OpenSSH's order of preference (ssh_config(5),
/// `HostKeyAlgorithms`), so libssh2 negotiates the same key type OpenSSH
/// would have recorded in known_hosts (libssh2's own order puts ECDSA
/// first, which would miss an ed25519-only entry).
pub(crate) const HOSTKEY_PREFS: &[&str] = &[
    "ssh-ed25519",
    "ecdsa-sha2-nistp256",
    "ecdsa-sha2-nistp384",
    "ecdsa-sha2-nistp521",
    "rsa-sha2-512",
    "rsa-sha2-256",
    "ssh-rsa",
];

/// Verify the session's host key for `host:port` against `known_hosts`;
/// with `accept_new`, append an unknown key to the file.
///
/// Errors: [`Error::NoPerm`] (exit 77) for an unknown key (without
/// `accept_new`) or a changed key, with the fix; [`Error::Io`] when the
/// file cannot be read or appended to.
pub(crate) fn verify(
    sess: &Session,
    host: &str,
    port: u16,
    known_hosts: &Path,
    accept_new: bool,
) -> Result<()> {
    let (key, ktype) = sess.host_key().ok_or_else(|| {
        Error::NoPerm(format!(
            "login host {}: the server sent no host key",
            known_hosts_name(host, port)
        ))
    })?;
    let mut kh = sess
        .known_hosts()
        .map_err(|e| Error::Internal(format!("libssh2 known hosts: {e}")))?;
    if known_hosts.exists() {
        load_known_hosts(&mut kh, known_hosts)?;
    }
    let name = known_hosts_name(host, port);
    match kh.check_port(host, port, key) {
        CheckResult::Match => Ok(()),
        CheckResult::Mismatch => Err(Error::NoPerm(format!(
            "host key of {name} ({}) differs from the one in {:?}: this may be an attack or a reinstalled login node; if your admins confirm the new key, remove the old one with `ssh-keygen -R {} -f {}` and add the new one with `{}`",
            key_type_name(ktype),
            known_hosts.display().to_string(),
            shell::quote(&name),
            shell::quote(&known_hosts.display().to_string()),
            keyscan_fix(host, port, known_hosts)
        ))),
        CheckResult::NotFound if accept_new => {
            kh.add(&name, key, "added by tao-slurm", ktype.into())
                .map_err(|e| Error::Internal(format!("libssh2 known hosts add: {e}")))?;
            let entry = kh
                .hosts()
                .ok()
                .and_then(|hs| hs.into_iter().find(|h| h.name() == Some(name.as_str())))
                .ok_or_else(|| Error::Internal("added host key not found".into()))?;
            let line = kh
                .write_string(&entry, KnownHostFileKind::OpenSSH)
                .map_err(|e| Error::Internal(format!("libssh2 known hosts line: {e}")))?;
            append_line(known_hosts, line.trim_end())?;
            crate::remote::note(&format!(
                "added the {} host key of {name} to {:?}",
                key_type_name(ktype),
                known_hosts.display().to_string()
            ));
            Ok(())
        }
        CheckResult::NotFound => Err(Error::NoPerm(format!(
            "host key of {name} ({}) is not in {:?}: check its fingerprint with your admins, then run `{}` (or accept it once with `tao-submit preflight --accept-new-host-key`)",
            key_type_name(ktype),
            known_hosts.display().to_string(),
            keyscan_fix(host, port, known_hosts)
        ))),
        CheckResult::Failure => Err(Error::NoPerm(format!(
            "host key of {name} could not be checked against {:?}; fix the file, then run `{}`",
            known_hosts.display().to_string(),
            keyscan_fix(host, port, known_hosts)
        ))),
    }
}

/// Load an OpenSSH known_hosts file into `kh`. libssh2 rejects a whole
/// file over one line it cannot parse (`@cert-authority`, `@revoked`,
/// security-key types), so on failure the file is read line by line and
/// such lines are skipped (they can only match hosts this library cannot
/// verify anyway; OpenSSH's ssh still honours them).
///
/// Output: the number of lines skipped. Errors: [`Error::Config`] when the
/// file cannot be read at all.
pub(crate) fn load_known_hosts(kh: &mut ssh2::KnownHosts, path: &Path) -> Result<usize> {
    if kh.read_file(path, KnownHostFileKind::OpenSSH).is_ok() {
        return Ok(0);
    }
    let text = std::fs::read_to_string(path).map_err(|e| {
        Error::Config(format!(
            "known_hosts file {:?} cannot be read: {e}; fix it or point SSH_KNOWN_HOSTS elsewhere",
            path.display().to_string()
        ))
    })?;
    let mut skipped = 0;
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if line.starts_with('@') || kh.read_str(line, KnownHostFileKind::OpenSSH).is_err() {
            skipped += 1;
        }
    }
    Ok(skipped)
}

/// Append one line to the known_hosts file (created with mode 600, its
/// directory with 700, as ssh does), never rewriting existing entries.
fn append_line(path: &Path, line: &str) -> Result<()> {
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    let ctx = || format!("appending to known_hosts {:?}", path.display().to_string());
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        if !dir.exists() {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)
                .map_err(|e| Error::io(ctx(), e))?;
        }
    }
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| Error::io(ctx(), e))?;
    // One write: a concurrent appender never interleaves inside our line.
    f.write_all(format!("{line}\n").as_bytes())
        .and_then(|_| f.sync_all())
        .map_err(|e| Error::io(ctx(), e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unparseable_known_hosts_lines_are_skipped_not_fatal() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("known_hosts");
        // A well-formed ssh-ed25519 public key blob (arbitrary key bytes).
        let key = "AAAAC3NzaC1lZDI1NTE5AAAAIHnLhhtKkLvG1ahT9ngfQCd8XfpYcOjVTwqpxZtTVTrA";
        std::fs::write(
            &path,
            format!(
                "# comment\n@cert-authority *.example.org ssh-ed25519 {key}\nthis is not a key line\n[login.example.org]:2222 ssh-ed25519 {key}\n"
            ),
        )
        .unwrap();
        let sess = Session::new().unwrap();
        let mut kh = sess.known_hosts().unwrap();
        let skipped = load_known_hosts(&mut kh, &path).unwrap();
        assert_eq!(skipped, 2);
        let raw = {
            // Decode the base64 key blob for check_port (it takes raw bytes).
            let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
            let mut bits = 0u32;
            let mut n = 0;
            let mut out = Vec::new();
            for c in key.bytes().filter(|&c| c != b'=') {
                bits = (bits << 6) | alphabet.iter().position(|&a| a == c).unwrap() as u32;
                n += 6;
                if n >= 8 {
                    n -= 8;
                    out.push((bits >> n) as u8);
                }
            }
            out
        };
        assert!(matches!(
            kh.check_port("login.example.org", 2222, &raw),
            CheckResult::Match
        ));
        assert!(matches!(
            kh.check_port("other.example.org", 2222, &raw),
            CheckResult::NotFound
        ));
    }

    #[test]
    fn names_and_fix() {
        assert_eq!(known_hosts_name("h", 22), "h");
        assert_eq!(known_hosts_name("h", 2222), "[h]:2222");
        assert_eq!(
            keyscan_fix("127.0.0.1", 2222, Path::new("/x y/kh")),
            "ssh-keyscan -p 2222 -H '127.0.0.1' >> '/x y/kh'"
        );
    }
}
