//! Host-key verification as OpenSSH does it, against the user's
//! `known_hosts` and the system's (`/etc/ssh/ssh_known_hosts`): plain and
//! wildcard host patterns with `!` negation, hashed `|1|...` entries
//! (matched by libssh2), the `[host]:port` form for ports other than 22,
//! `@revoked` and `@cert-authority` markers, and key types compared type by
//! type (sshd(8), "SSH_KNOWN_HOSTS FILE FORMAT"; ssh(1) "VERIFYING HOST
//! KEYS").
//!
//! A non-interactive tool cannot ask "are you sure you want to continue
//! connecting": an unknown key is refused with the exact command that adds
//! it, unless the caller opted in (`--accept-new-host-key`, like OpenSSH's
//! `StrictHostKeyChecking=accept-new`). A key that differs from the
//! recorded one is always refused.

use std::io::Write;
use std::path::Path;

use base64::Engine as _;
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

/// The system-wide known_hosts files OpenSSH reads after the user's
/// (ssh_config(5), `GlobalKnownHostsFile`).
pub const SYSTEM_KNOWN_HOSTS: [&str; 2] = ["/etc/ssh/ssh_known_hosts", "/etc/ssh/ssh_known_hosts2"];

/// A marker at the start of a known_hosts line (sshd(8)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Marker {
    /// `@cert-authority`: the key signs host certificates.
    CertAuthority,
    /// `@revoked`: the key must never be accepted.
    Revoked,
}

/// One known_hosts line that names the host being checked.
#[derive(Debug, Clone)]
struct Entry {
    marker: Option<Marker>,
    /// Key type as written (`ssh-ed25519`, `ecdsa-sha2-nistp256`, ...).
    key_type: String,
    /// The key blob, base64 as written.
    key_b64: String,
    /// Where it is, for messages: `file:line`.
    place: String,
}

/// Whether `name` matches one OpenSSH host pattern (`*`, `?` wildcards).
fn glob(pattern: &str, name: &str) -> bool {
    let (p, n): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
    let (mut pi, mut ni, mut star, mut mark) = (0, 0, None, 0);
    while ni < n.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi].eq_ignore_ascii_case(&n[ni])) {
            pi += 1;
            ni += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ni;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ni = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

/// Whether a comma-separated pattern list matches `name` (a `!pattern`
/// that matches excludes the host whatever else matches; sshd(8)).
fn patterns_match(list: &str, name: &str) -> bool {
    let mut hit = false;
    for p in list.split(',') {
        if let Some(neg) = p.strip_prefix('!') {
            if glob(neg, name) {
                return false;
            }
        } else if glob(p, name) {
            hit = true;
        }
    }
    hit
}

/// Whether a hashed host field (`|1|salt|hash`) names `host:port`, asked
/// of libssh2 (HMAC-SHA1 of the name): a probe with a key that cannot be
/// the recorded one answers Mismatch exactly when the name matches.
fn hashed_match(sess: &Session, line: &str, host: &str, port: u16) -> bool {
    let Ok(mut kh) = sess.known_hosts() else {
        return false;
    };
    if kh.read_str(line, KnownHostFileKind::OpenSSH).is_err() {
        return false;
    }
    // The exact known_hosts name with port 22: libssh2 falls back from
    // `[host]:port` to `host` for other ports, which OpenSSH does not.
    matches!(
        kh.check_port(&known_hosts_name(host, port), 22, b"tao-ssh: not a key"),
        CheckResult::Mismatch | CheckResult::Match
    )
}

/// The lines of `files` (missing files skipped) that name `host:port`,
/// with their markers, in file order.
///
/// Errors: [`Error::Config`] when an existing file cannot be read.
fn entries_for(sess: &Session, files: &[&Path], host: &str, port: u16) -> Result<Vec<Entry>> {
    let name = known_hosts_name(host, port);
    let mut out = Vec::new();
    for file in files {
        let text = match std::fs::read_to_string(file) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => {
                return Err(Error::Config(format!(
                    "known_hosts file {:?} cannot be read: {e}; fix it or point SSH_KNOWN_HOSTS elsewhere",
                    file.display().to_string()
                )))
            }
        };
        for (i, raw) in text.lines().enumerate() {
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (marker, rest) = match line.split_once(char::is_whitespace) {
                Some(("@cert-authority", r)) => (Some(Marker::CertAuthority), r.trim_start()),
                Some(("@revoked", r)) => (Some(Marker::Revoked), r.trim_start()),
                Some((m, _)) if m.starts_with('@') => continue,
                _ => (None, line),
            };
            let mut f = rest.split_whitespace();
            let (Some(hosts), Some(key_type), Some(key_b64)) = (f.next(), f.next(), f.next())
            else {
                continue;
            };
            let named = if hosts.starts_with("|1|") {
                hashed_match(sess, &format!("{hosts} {key_type} {key_b64}"), host, port)
            } else {
                patterns_match(hosts, &name)
            };
            if named {
                out.push(Entry {
                    marker,
                    key_type: key_type.to_string(),
                    key_b64: key_b64.to_string(),
                    place: format!("{}:{}", file.display(), i + 1),
                });
            }
        }
    }
    Ok(out)
}

/// The host-key algorithms for a key type named in known_hosts.
fn algorithms_of(key_type: &str) -> Vec<&'static str> {
    match key_type {
        "ssh-rsa" => vec!["rsa-sha2-512", "rsa-sha2-256", "ssh-rsa"],
        t => HOSTKEY_PREFS.iter().copied().filter(|a| *a == t).collect(),
    }
}

/// Host-key algorithm preferences for `host:port`, as OpenSSH orders them
/// (`order_hostkeyalgs` in sshconnect2.c): the types known_hosts already
/// holds for the host first, so an ECDSA-only entry is checked against the
/// server's ECDSA key rather than refused as a changed ed25519 key.
///
/// Output: a comma-separated list for libssh2's `method_pref`, from the
/// algorithms `supported`.
pub(crate) fn preferences(
    sess: &Session,
    files: &[&Path],
    host: &str,
    port: u16,
    supported: &[&str],
) -> String {
    let known = entries_for(sess, files, host, port).unwrap_or_default();
    let mut prefs: Vec<&str> = Vec::new();
    for e in known.iter().filter(|e| e.marker.is_none()) {
        for a in algorithms_of(&e.key_type) {
            if supported.contains(&a) && !prefs.contains(&a) {
                prefs.push(a);
            }
        }
    }
    for a in HOSTKEY_PREFS {
        if supported.contains(a) && !prefs.contains(a) {
            prefs.push(a);
        }
    }
    prefs.join(",")
}

/// Verify the session's host key for `host:port` as OpenSSH does, against
/// `known_hosts` then the system files `system` ([`SYSTEM_KNOWN_HOSTS`]):
/// plain, wildcard and hashed host fields, `[host]:port` entries; a key
/// listed `@revoked` is refused; only entries of the negotiated key type
/// are compared (an ECDSA-only entry is not a changed ed25519 key). With
/// `accept_new`, an unknown key is appended to `known_hosts`.
///
/// Errors: [`Error::NoPerm`] (exit 77), each one line with the fix: an
/// unknown key (without `accept_new`), a changed key, a revoked key, a host
/// known only by other key types than the server offers, a host trusted
/// only through `@cert-authority` (libssh2 cannot check host certificates:
/// use TAO_TRANSPORT=openssh); [`Error::Io`] when the file cannot be
/// appended to; [`Error::Config`] when a file cannot be read.
pub(crate) fn verify(
    sess: &Session,
    host: &str,
    port: u16,
    known_hosts: &Path,
    system: &[&Path],
    accept_new: bool,
) -> Result<()> {
    let name = known_hosts_name(host, port);
    let (key, ktype) = sess
        .host_key()
        .ok_or_else(|| Error::NoPerm(format!("login host {name}: the server sent no host key")))?;
    let tname = key_type_name(ktype);
    let b64 = base64::engine::general_purpose::STANDARD.encode(key);
    let mut files: Vec<&Path> = vec![known_hosts];
    files.extend_from_slice(system);
    let entries = entries_for(sess, &files, host, port)?;
    let kh_shown = known_hosts.display().to_string();
    if let Some(e) = entries
        .iter()
        .find(|e| e.marker == Some(Marker::Revoked) && e.key_b64 == b64)
    {
        return Err(Error::NoPerm(format!(
            "host key of {name} ({tname}) is marked @revoked in {}: it must never be trusted; ask your admins which key the login node has now",
            e.place
        )));
    }
    let plain: Vec<&Entry> = entries.iter().filter(|e| e.marker.is_none()).collect();
    if plain
        .iter()
        .any(|e| e.key_type == tname && e.key_b64 == b64)
    {
        return Ok(());
    }
    if let Some(e) = plain.iter().find(|e| e.key_type == tname) {
        return Err(Error::NoPerm(format!(
            "host key of {name} ({tname}) differs from the one in {}: this may be an attack or a reinstalled login node; if your admins confirm the new key, remove the old one with `ssh-keygen -R {} -f {}` and add the new one with `{}`",
            e.place,
            shell::quote(&name),
            shell::quote(&kh_shown),
            keyscan_fix(host, port, known_hosts)
        )));
    }
    if let Some(e) = entries
        .iter()
        .find(|e| e.marker == Some(Marker::CertAuthority))
    {
        return Err(Error::NoPerm(format!(
            "login host {name} is trusted through a host certificate authority (@cert-authority, {}), which libssh2 cannot check: use TAO_TRANSPORT=openssh, or add the host's own key with `{}`",
            e.place,
            keyscan_fix(host, port, known_hosts)
        )));
    }
    if !plain.is_empty() {
        let types: Vec<&str> = plain.iter().map(|e| e.key_type.as_str()).collect();
        return Err(Error::NoPerm(format!(
            "login host {name} offered only a {tname} host key, and {kh_shown:?} holds only {} for it (not a changed key: an unknown type); check the {tname} fingerprint with your admins, then add it with `{}`",
            types.join(", "),
            keyscan_fix(host, port, known_hosts).replacen("ssh-keyscan ", &format!("ssh-keyscan -t {tname} "), 1)
        )));
    }
    if accept_new {
        append_line(known_hosts, &format!("{name} {tname} {b64}"))?;
        crate::output::note(&format!(
            "added the {tname} host key of {name} to {kh_shown:?}"
        ));
        return Ok(());
    }
    Err(Error::NoPerm(format!(
        "host key of {name} ({tname}) is not in {kh_shown:?}: check its fingerprint with your admins, then run `{}` (or accept it once with `tao-submit preflight --accept-new-host-key`)",
        keyscan_fix(host, port, known_hosts)
    )))
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

    const KEY: &str = "AAAAC3NzaC1lZDI1NTE5AAAAIHnLhhtKkLvG1ahT9ngfQCd8XfpYcOjVTwqpxZtTVTrA";

    #[test]
    fn patterns_as_sshd_reads_them() {
        assert!(glob("*.example.org", "login1.example.org"));
        assert!(glob("login?.example.org", "LOGIN2.example.org"));
        assert!(!glob("*.example.org", "example.org"));
        assert!(glob("[10.0.0.*]:2222", "[10.0.0.7]:2222"));
        assert!(patterns_match("a,b,[c]:2200", "[c]:2200"));
        assert!(!patterns_match(
            "*.example.org,!bad.example.org",
            "bad.example.org"
        ));
        assert!(
            !patterns_match("c", "[c]:2200"),
            "a port entry only matches its port"
        );
    }

    #[test]
    fn entries_markers_hashed_and_system_files() {
        let dir = tempfile::tempdir().unwrap();
        let user = dir.path().join("known_hosts");
        let system = dir.path().join("ssh_known_hosts");
        std::fs::write(
            &user,
            format!(
                "# comment\nthis is not a key line\n@cert-authority *.example.org,[*.example.org]:2222 ssh-ed25519 {KEY}\n[login.example.org]:2222 ecdsa-sha2-nistp256 {KEY}\nother.example.org ssh-ed25519 {KEY}\n@revoked login.example.org:2222,[login.example.org]:2222 ssh-ed25519 {KEY}\n"
            ),
        )
        .unwrap();
        std::fs::write(&system, format!("hashme.example.org ssh-ed25519 {KEY}\n")).unwrap();
        // Hash the system file as `HashKnownHosts yes` would.
        let st = std::process::Command::new("ssh-keygen")
            .args(["-q", "-H", "-f"])
            .arg(&system)
            .status()
            .unwrap();
        assert!(st.success());
        assert!(std::fs::read_to_string(&system).unwrap().starts_with("|1|"));
        let sess = Session::new().unwrap();
        let files = [user.as_path(), system.as_path()];
        let e = entries_for(&sess, &files, "login.example.org", 2222).unwrap();
        let kinds: Vec<_> = e.iter().map(|e| (e.marker, e.key_type.as_str())).collect();
        assert_eq!(
            kinds,
            [
                (Some(Marker::CertAuthority), "ssh-ed25519"),
                (None, "ecdsa-sha2-nistp256"),
                (Some(Marker::Revoked), "ssh-ed25519")
            ]
        );
        assert!(e[1].place.ends_with("known_hosts:4"), "{}", e[1].place);
        let hashed = |port| {
            entries_for(&sess, &files, "hashme.example.org", port)
                .unwrap()
                .into_iter()
                .filter(|e| e.marker.is_none())
                .count()
        };
        assert_eq!(hashed(22), 1, "the hashed system entry");
        assert_eq!(hashed(2200), 0);
        // The known ECDSA type is negotiated first.
        let p = preferences(&sess, &files, "login.example.org", 2222, HOSTKEY_PREFS);
        assert!(p.starts_with("ecdsa-sha2-nistp256,ssh-ed25519"), "{p}");
        let p = preferences(&sess, &files, "nowhere.example.org", 22, HOSTKEY_PREFS);
        assert_eq!(p, HOSTKEY_PREFS.join(","));
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
