//! Connection options: where to log in, as whom, with which key, checked
//! against which known_hosts file. Read from the seed's environment
//! variables ([`SshOptions::from_env`]); a login host may be an
//! `~/.ssh/config` alias, resolved as ssh resolves it ([`SshOptions::resolve`]).

use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::time::Duration;

use ssh2_config::{ParseRule, SshConfig};
use tao_core::{Error, Result};

/// Default TCP connect and handshake timeout.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// How to reach the cluster's login nodes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SshOptions {
    /// Remote user name (`SLURM_USER`). Empty means "the `User` of the
    /// host's `~/.ssh/config` entry"; a non-empty value wins over the config,
    /// as `ssh -l USER` does.
    pub user: String,
    /// Login hosts in failover order (`SLURM_HOSTNAME`, comma-separated):
    /// `host`, `host:port`, `[v6addr]:port` or an `~/.ssh/config` alias.
    pub hosts: Vec<String>,
    /// Private key tried first (`SSH_KEY_PATH`); must not be readable by
    /// group or others.
    pub key_path: Option<PathBuf>,
    /// The known_hosts file host keys are checked against
    /// (`SSH_KNOWN_HOSTS`, default `~/.ssh/known_hosts`).
    pub known_hosts: PathBuf,
    /// OpenSSH client config read for host aliases (`SSH_CONFIG`, default
    /// `~/.ssh/config` when it exists); `None` reads none.
    pub ssh_config: Option<PathBuf>,
    /// Add an unknown host key to `known_hosts` instead of refusing it
    /// (`--accept-new-host-key`). A *changed* key is always refused.
    pub accept_new_host_key: bool,
    /// TCP connect and SSH handshake timeout, per host.
    pub connect_timeout: Duration,
    /// POSIX sh text run at the start of every remote script (the site
    /// profile's `remote_prefix`, e.g. `module load slurm;`); empty for none.
    pub remote_prefix: String,
    /// How the login node is reached (`TAO_TRANSPORT`, or a tool's
    /// `--transport`): libssh2 (default), openssh or local.
    pub transport: crate::transport::TransportKind,
    /// Whether `ssh_config` was named by `SSH_CONFIG` (the openssh transport
    /// then passes it with `-F`; otherwise ssh reads its own defaults).
    pub ssh_config_explicit: bool,
    /// Whether `known_hosts` was named by `SSH_KNOWN_HOSTS` (the openssh
    /// transport then passes it as `UserKnownHostsFile`).
    pub known_hosts_explicit: bool,
    /// The system-wide known_hosts files read after `known_hosts`
    /// (default `/etc/ssh/ssh_known_hosts`, `/etc/ssh/ssh_known_hosts2`).
    pub system_known_hosts: Vec<PathBuf>,
}

impl Default for SshOptions {
    /// No host, no user, no key, `/dev/null` as known_hosts, no ssh config,
    /// the default timeout, no prefix, libssh2: a base for tests and for
    /// callers that fill the fields themselves.
    fn default() -> Self {
        SshOptions {
            user: String::new(),
            hosts: Vec::new(),
            key_path: None,
            known_hosts: PathBuf::from("/dev/null"),
            ssh_config: None,
            accept_new_host_key: false,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            remote_prefix: String::new(),
            transport: crate::transport::TransportKind::Libssh2,
            ssh_config_explicit: false,
            known_hosts_explicit: false,
            system_known_hosts: crate::hostkey::SYSTEM_KNOWN_HOSTS
                .iter()
                .map(PathBuf::from)
                .collect(),
        }
    }
}

/// One login host, resolved: the address to dial, the port, the user and
/// the identity files from `~/.ssh/config`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The host as the user wrote it in `SLURM_HOSTNAME` (alias included);
    /// this is what `slurm.login_host` records.
    pub spec: String,
    /// The host name or address dialled (`HostName` of an alias) and used
    /// for the known_hosts lookup.
    pub host: String,
    /// TCP port (explicit `:port`, else the config's `Port`, else 22).
    pub port: u16,
    /// Remote user name.
    pub user: String,
    /// Private keys to try, in order: `SSH_KEY_PATH`, then the config's
    /// `IdentityFile` entries.
    pub identity_files: Vec<PathBuf>,
    /// Connect timeout (the config's `ConnectTimeout` wins over the option).
    pub connect_timeout: Duration,
    /// How the TCP stream to the host is made (ssh config `ProxyJump`,
    /// `ProxyCommand`), or directly.
    pub proxy: Proxy,
}

/// How a [`Target`] is reached (ssh_config(5)).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Proxy {
    /// A TCP connection of our own.
    #[default]
    Direct,
    /// `ProxyJump`: through these hosts in order (`[user@]host[:port]` or
    /// aliases), the last one opening a direct-tcpip channel to the target.
    Jump(Vec<String>),
    /// `ProxyCommand`: this command's stdin and stdout are the stream
    /// (`%h`, `%p`, `%r`, `%%` expanded), run with `sh -c`.
    Command(String),
}

/// Split a login host spec into name and optional port: `host`,
/// `host:port`, `[addr]:port`, `[addr]`.
///
/// Errors: [`Error::Config`] naming the spec when the port is not a number
/// in 1..=65535 or the spec is empty.
pub fn parse_host_spec(spec: &str) -> Result<(String, Option<u16>)> {
    let bad = |why: &str| {
        Error::Config(format!(
            "login host {spec:?} in SLURM_HOSTNAME: {why}; write host, host:port or [address]:port, comma-separated"
        ))
    };
    let spec = spec.trim();
    if spec.is_empty() {
        return Err(bad("empty host"));
    }
    let port_of = |p: &str| -> Result<u16> {
        match p.parse::<u16>() {
            Ok(n) if n > 0 => Ok(n),
            _ => Err(bad(&format!("port {p:?} is not a number in 1-65535"))),
        }
    };
    if let Some(rest) = spec.strip_prefix('[') {
        let (host, after) = rest.split_once(']').ok_or_else(|| bad("missing ']'"))?;
        if host.is_empty() {
            return Err(bad("empty host"));
        }
        return match after {
            "" => Ok((host.to_string(), None)),
            p => match p.strip_prefix(':') {
                Some(p) => Ok((host.to_string(), Some(port_of(p)?))),
                None => Err(bad("expected ':port' after ']'")),
            },
        };
    }
    match spec.rsplit_once(':') {
        // A bare IPv6 address has several colons and no port.
        Some((h, _)) if h.contains(':') => Ok((spec.to_string(), None)),
        Some((h, p)) if !h.is_empty() => Ok((h.to_string(), Some(port_of(p)?))),
        Some(_) => Err(bad("empty host")),
        None => Ok((spec.to_string(), None)),
    }
}

/// Expand a leading `~/` against `$HOME`.
fn expand_home(p: &str) -> PathBuf {
    match (p.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => PathBuf::from(home).join(rest),
        _ => PathBuf::from(p),
    }
}

impl SshOptions {
    /// Options from the environment:
    ///
    /// - `SLURM_HOSTNAME` (required): comma-separated login hosts;
    /// - `SLURM_USER`: remote user (may be left to an ssh config `User`);
    /// - `SSH_KEY_PATH`: private key, tried before the agent (`SSH_AUTH_SOCK`,
    ///   which libssh2 reads itself);
    /// - `SSH_KNOWN_HOSTS` (default `$HOME/.ssh/known_hosts`);
    /// - `SSH_CONFIG` (default `$HOME/.ssh/config` when that file exists);
    /// - `TAO_SSH_CONNECT_TIMEOUT` seconds (default 10);
    /// - `TAO_TRANSPORT`: libssh2 (default), openssh or local;
    /// - the remote prefix from the site profile (`TAO_SITE_PROFILE`,
    ///   [`tao_core::site::SiteProfile::load`]).
    ///
    /// A leading `~/` in paths is expanded against `$HOME`.
    ///
    /// Errors: [`Error::Config`] (exit 78) naming the variable and the fix
    /// when SLURM_HOSTNAME is missing or malformed, when neither
    /// SSH_KNOWN_HOSTS nor HOME is set, when SSH_CONFIG names a missing
    /// file, or when the site profile does not load.
    pub fn from_env() -> Result<Self> {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// Like [`SshOptions::from_env`], with a tool's `--transport` value (when
    /// given) winning over `TAO_TRANSPORT`.
    ///
    /// Errors: as [`SshOptions::from_env`]; [`Error::Config`] for an unknown
    /// transport name.
    pub fn from_env_with_transport(transport: Option<&str>) -> Result<Self> {
        Self::from_lookup(|name| match (name, transport) {
            ("TAO_TRANSPORT", Some(t)) => Some(t.to_string()),
            _ => std::env::var(name).ok(),
        })
    }

    /// Like [`SshOptions::from_env`], reading each variable through
    /// `lookup` instead of the process environment, so a tool can let its
    /// flags override the variables (`lookup("SLURM_HOSTNAME")` returns the
    /// `--hosts` value when given). Empty values count as unset.
    ///
    /// Errors: as for [`SshOptions::from_env`].
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self> {
        let env_nonempty = |name: &str| lookup(name).filter(|v| !v.trim().is_empty());
        let hosts_var = env_nonempty("SLURM_HOSTNAME").ok_or_else(|| {
            Error::Config(
                "SLURM_HOSTNAME is not set: export SLURM_HOSTNAME=login1.example.org (comma-separated host[:port] list for failover)"
                    .into(),
            )
        })?;
        let hosts = Self::parse_hosts(&hosts_var)?;
        let user = env_nonempty("SLURM_USER").unwrap_or_default();
        let key_path = env_nonempty("SSH_KEY_PATH").map(|p| expand_home(&p));
        let home = env_nonempty("HOME").map(PathBuf::from);
        let known_hosts = match env_nonempty("SSH_KNOWN_HOSTS") {
            Some(p) => expand_home(&p),
            None => home
                .as_ref()
                .map(|h| h.join(".ssh/known_hosts"))
                .ok_or_else(|| {
                    Error::Config(
                        "neither SSH_KNOWN_HOSTS nor HOME is set: export SSH_KNOWN_HOSTS=/path/to/known_hosts"
                            .into(),
                    )
                })?,
        };
        let ssh_config = match env_nonempty("SSH_CONFIG") {
            Some(p) => {
                let p = expand_home(&p);
                if !p.is_file() {
                    return Err(Error::Config(format!(
                        "SSH_CONFIG={:?} is not a readable file: point it at an OpenSSH client config or unset it",
                        p.display().to_string()
                    )));
                }
                Some(p)
            }
            None => home
                .as_ref()
                .map(|h| h.join(".ssh/config"))
                .filter(|p| p.is_file()),
        };
        let connect_timeout = match env_nonempty("TAO_SSH_CONNECT_TIMEOUT") {
            None => DEFAULT_CONNECT_TIMEOUT,
            Some(s) => match s.trim().parse::<u64>() {
                Ok(n) if n > 0 => Duration::from_secs(n),
                _ => {
                    return Err(Error::Config(format!(
                        "TAO_SSH_CONNECT_TIMEOUT={s:?} is not a positive number of seconds"
                    )))
                }
            },
        };
        let transport = match env_nonempty("TAO_TRANSPORT") {
            Some(t) => crate::transport::TransportKind::parse(&t)?,
            None => crate::transport::TransportKind::Libssh2,
        };
        let profile =
            tao_core::site::SiteProfile::load(env_nonempty("TAO_SITE_PROFILE").as_deref())?;
        Ok(SshOptions {
            user,
            hosts,
            key_path,
            known_hosts,
            ssh_config,
            accept_new_host_key: false,
            connect_timeout,
            remote_prefix: profile.remote_prefix,
            transport,
            ssh_config_explicit: env_nonempty("SSH_CONFIG").is_some(),
            known_hosts_explicit: env_nonempty("SSH_KNOWN_HOSTS").is_some(),
            ..SshOptions::default()
        })
    }

    /// Failover over the login hosts: `connect_one` is tried on each of
    /// `self.hosts` in order (the failover order of `SLURM_HOSTNAME`) and
    /// the first success is returned. A host that fails with
    /// [`Error::Unavailable`] (cannot be resolved, refuses, times out,
    /// fails the handshake) is skipped with a note on stderr naming it and
    /// the reason, unless it is the last one.
    ///
    /// Output: what `connect_one` returned for the first host that answered.
    ///
    /// Errors: any error other than [`Error::Unavailable`] at once, without
    /// trying further hosts ([`Error::NoPerm`] (77) for a host-key or login
    /// problem is the user's to fix, not a reason to send the same key to
    /// another host; [`Error::Config`] (78)); [`Error::Unavailable`] (69)
    /// when no host answered, listing each host's reason, or when there is
    /// no host at all. The rule is the transports' shared one (libssh2
    /// [`crate::Remote::connect`] and openssh
    /// [`crate::openssh::OpensshRemote::connect`]).
    pub(crate) fn first_host_that_answers<T>(
        &self,
        mut connect_one: impl FnMut(&str) -> Result<T>,
    ) -> Result<T> {
        let mut reasons = Vec::new();
        for (i, host) in self.hosts.iter().enumerate() {
            match connect_one(host) {
                Ok(r) => return Ok(r),
                Err(Error::Unavailable(why)) => {
                    if i + 1 < self.hosts.len() {
                        crate::output::note(&format!("{why}; trying the next login host"));
                    }
                    reasons.push(why);
                }
                Err(e) => return Err(e),
            }
        }
        Err(Error::Unavailable(format!(
            "no login host answered ({}); check SLURM_HOSTNAME and that the cluster is reachable from here (VPN)",
            reasons.join("; ")
        )))
    }

    /// Split a comma-separated host list, checking each spec.
    ///
    /// Errors: [`Error::Config`] for an empty list or a malformed spec.
    pub fn parse_hosts(list: &str) -> Result<Vec<String>> {
        let hosts: Vec<String> = list
            .split(',')
            .map(str::trim)
            .filter(|h| !h.is_empty())
            .map(str::to_string)
            .collect();
        if hosts.is_empty() {
            return Err(Error::Config(
                "SLURM_HOSTNAME lists no host: export SLURM_HOSTNAME=login1.example.org".into(),
            ));
        }
        for h in &hosts {
            parse_host_spec(h)?;
        }
        Ok(hosts)
    }

    /// Resolve one login host spec as ssh would: an explicit `:port` wins,
    /// then the matching `~/.ssh/config` entry (`HostName`, `User`, `Port`,
    /// `IdentityFile`, `ConnectTimeout`), then the defaults (port 22).
    /// A non-empty [`SshOptions::user`] wins over the config's `User`.
    ///
    /// Errors: [`Error::Config`] when the spec is malformed, the config
    /// does not parse, the entry needs `ProxyJump` (not supported), or no
    /// user name is known (neither SLURM_USER nor a config `User`).
    pub fn resolve(&self, spec: &str) -> Result<Target> {
        let (name, explicit_port) = parse_host_spec(spec)?;
        let params = match &self.ssh_config {
            Some(path) => Some(load_config(path)?.query(&name)),
            None => None,
        };
        let mut host = name.clone();
        let mut port = explicit_port.unwrap_or(22);
        let mut user = self.user.clone();
        let mut identity_files: Vec<PathBuf> = self.key_path.iter().cloned().collect();
        let mut connect_timeout = self.connect_timeout;
        let mut proxy = Proxy::Direct;
        if let Some(p) = params {
            let jumps: Vec<String> = p
                .proxy_jump
                .clone()
                .unwrap_or_default()
                .into_iter()
                .flat_map(|j| {
                    j.split(',')
                        .map(str::trim)
                        .map(str::to_string)
                        .collect::<Vec<_>>()
                })
                .filter(|j| !j.is_empty())
                .collect();
            let no_jump =
                jumps.is_empty() || (jumps.len() == 1 && jumps[0].eq_ignore_ascii_case("none"));
            if !no_jump {
                proxy = Proxy::Jump(jumps);
            } else if let Some(cmd) = p
                .unsupported_fields
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case("proxycommand"))
                .map(|(_, v)| v.join(" "))
                .filter(|c| !c.trim().is_empty() && !c.trim().eq_ignore_ascii_case("none"))
            {
                proxy = Proxy::Command(cmd);
            }
            if let Some(h) = p.host_name.filter(|h| !h.is_empty()) {
                host = h;
            }
            if explicit_port.is_none() {
                if let Some(cp) = p.port {
                    port = cp;
                }
            }
            if user.is_empty() {
                if let Some(u) = p.user.filter(|u| !u.is_empty()) {
                    user = u;
                }
            }
            for f in p.identity_file.unwrap_or_default() {
                if !identity_files.contains(&f) {
                    identity_files.push(f);
                }
            }
            if let Some(t) = p.connect_timeout.filter(|t| !t.is_zero()) {
                connect_timeout = t;
            }
        }
        if user.is_empty() {
            return Err(Error::Config(format!(
                "no user name for login host {spec:?}: export SLURM_USER=your_cluster_user (or add `User` to its ~/.ssh/config entry)"
            )));
        }
        Ok(Target {
            spec: spec.to_string(),
            host,
            port,
            user,
            identity_files,
            connect_timeout,
            proxy,
        })
    }

    /// Resolve one `ProxyJump` hop, `[user@]host[:port]` or an alias: as
    /// [`SshOptions::resolve`], except that the user is the hop's `user@`,
    /// else its config `User`, else `SLURM_USER` (a bastion account is
    /// often not the cluster account).
    ///
    /// Errors: as [`SshOptions::resolve`].
    pub fn resolve_hop(&self, hop: &str) -> Result<Target> {
        let (user, rest) = match hop.rsplit_once('@') {
            Some((u, r)) if !u.is_empty() => (Some(u.to_string()), r),
            _ => (None, hop),
        };
        let mut o = self.clone();
        o.user = String::new();
        let mut t = match o.resolve(rest) {
            Ok(t) => t,
            Err(_) if user.is_some() || !self.user.is_empty() => {
                o.user = user.clone().unwrap_or_else(|| self.user.clone());
                o.resolve(rest)?
            }
            Err(e) => return Err(e),
        };
        if let Some(u) = user {
            t.user = u;
        }
        t.spec = hop.to_string();
        Ok(t)
    }
}

/// Parse an OpenSSH client config, tolerating options this library does
/// not use (as ssh tolerates options it knows).
fn load_config(path: &Path) -> Result<SshConfig> {
    let file = std::fs::File::open(path).map_err(|e| {
        Error::Config(format!(
            "ssh config {:?}: {e}; fix SSH_CONFIG or unset it",
            path.display().to_string()
        ))
    })?;
    let mut cfg = SshConfig::default();
    if let Some(home) = std::env::var_os("HOME") {
        cfg = cfg.home_dir(PathBuf::from(home));
    }
    cfg.parse(
        &mut BufReader::new(file),
        ParseRule::ALLOW_UNKNOWN_FIELDS | ParseRule::ALLOW_UNSUPPORTED_FIELDS,
    )
    .map_err(|e| {
        Error::Config(format!(
            "ssh config {:?} does not parse: {e}; fix the file or point SSH_CONFIG elsewhere",
            path.display().to_string()
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failover_skips_unavailable_hosts_and_stops_at_any_other_error() {
        let opts = SshOptions {
            hosts: vec!["a".into(), "b".into(), "c".into()],
            ..SshOptions::default()
        };
        let mut tried = Vec::new();
        let got = opts.first_host_that_answers(|h| {
            tried.push(h.to_string());
            match h {
                "a" => Err(Error::Unavailable(format!("{h} refused"))),
                _ => Ok(h.to_string()),
            }
        });
        assert_eq!(got.unwrap(), "b");
        assert_eq!(tried, ["a", "b"]);
        // A login problem is not a reason to try the next host.
        let mut tried = Vec::new();
        let got = opts.first_host_that_answers(|h| -> Result<()> {
            tried.push(h.to_string());
            Err(Error::NoPerm(format!("{h} key refused")))
        });
        assert!(matches!(got, Err(Error::NoPerm(m)) if m == "a key refused"));
        assert_eq!(tried, ["a"]);
        // None answered: every reason, in order.
        let got = opts.first_host_that_answers(|h| -> Result<()> {
            Err(Error::Unavailable(format!("{h} down")))
        });
        match got {
            Err(Error::Unavailable(m)) => assert!(
                m.starts_with(
                    "no login host answered (a down; b down; c down); check SLURM_HOSTNAME"
                ),
                "{m}"
            ),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn host_specs() {
        assert_eq!(parse_host_spec("a").unwrap(), ("a".into(), None));
        assert_eq!(parse_host_spec("a:2222").unwrap(), ("a".into(), Some(2222)));
        assert_eq!(
            parse_host_spec("[::1]:22").unwrap(),
            ("::1".into(), Some(22))
        );
        assert_eq!(parse_host_spec("::1").unwrap(), ("::1".into(), None));
        for bad in ["", "a:", "a:x", "a:0", "a:70000", ":22", "[::1", "[::1]x"] {
            let e = parse_host_spec(bad).unwrap_err();
            assert_eq!(e.code(), tao_core::exit::CONFIG, "{bad}");
        }
    }

    #[test]
    fn host_list() {
        assert_eq!(
            SshOptions::parse_hosts(" a:1, b ,").unwrap(),
            vec!["a:1".to_string(), "b".to_string()]
        );
        assert!(SshOptions::parse_hosts(" , ").is_err());
    }

    fn opts(config: Option<PathBuf>) -> SshOptions {
        SshOptions {
            user: String::new(),
            hosts: vec!["x".into()],
            key_path: Some("/k/explicit".into()),
            known_hosts: "/dev/null".into(),
            ssh_config: config,
            accept_new_host_key: false,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            ..SshOptions::default()
        }
    }

    #[test]
    fn alias_resolves_like_ssh() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = dir.path().join("config");
        std::fs::write(
            &cfg,
            "Host login\n  HostName 127.0.0.1\n  Port 2200\n  User alice\n  IdentityFile /k/id_ed25519\n  ConnectTimeout 3\n  ForwardX11 no\n\nHost *\n  ServerAliveInterval 30\n",
        )
        .unwrap();
        let o = opts(Some(cfg));
        let t = o.resolve("login").unwrap();
        assert_eq!(
            (t.host.as_str(), t.port, t.user.as_str()),
            ("127.0.0.1", 2200, "alice")
        );
        assert_eq!(
            t.identity_files,
            vec![PathBuf::from("/k/explicit"), PathBuf::from("/k/id_ed25519")]
        );
        assert_eq!(t.connect_timeout, Duration::from_secs(3));
        assert_eq!(t.spec, "login");
        // An explicit port and an explicit user win over the config.
        let mut o2 = o.clone();
        o2.user = "bob".into();
        let t = o2.resolve("login:2300").unwrap();
        assert_eq!((t.port, t.user.as_str()), (2300, "bob"));
        // A host with no entry: no user anywhere is a config error.
        let e = o.resolve("other").unwrap_err();
        assert!(e.to_string().contains("SLURM_USER"), "{e}");
    }

    #[test]
    fn from_lookup_reads_the_seed_variables() {
        let vars = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        let o = SshOptions::from_lookup(vars(&[
            ("SLURM_HOSTNAME", "a:2222,b"),
            ("SLURM_USER", "alice"),
            ("SSH_KEY_PATH", "/k/id"),
            ("SSH_KNOWN_HOSTS", "/k/known"),
            ("HOME", "/nonexistent-home"),
            ("TAO_SITE_PROFILE", "local"),
        ]))
        .unwrap();
        assert_eq!(o.hosts, vec!["a:2222".to_string(), "b".to_string()]);
        assert_eq!(o.user, "alice");
        assert_eq!(o.key_path, Some(PathBuf::from("/k/id")));
        assert_eq!(o.known_hosts, PathBuf::from("/k/known"));
        assert_eq!(
            o.ssh_config, None,
            "a default config that does not exist is not read"
        );
        assert!(!o.accept_new_host_key);
        // Defaults and errors.
        let o = SshOptions::from_lookup(vars(&[
            ("SLURM_HOSTNAME", "a"),
            ("HOME", "/h"),
            ("TAO_SITE_PROFILE", "local"),
        ]))
        .unwrap();
        assert_eq!(o.known_hosts, PathBuf::from("/h/.ssh/known_hosts"));
        assert_eq!(o.user, "");
        let e = SshOptions::from_lookup(vars(&[("HOME", "/h")])).unwrap_err();
        assert!(e.to_string().contains("SLURM_HOSTNAME"), "{e}");
        assert_eq!(e.code(), tao_core::exit::CONFIG);
        let e = SshOptions::from_lookup(vars(&[
            ("SLURM_HOSTNAME", "a"),
            ("TAO_SITE_PROFILE", "local"),
        ]))
        .unwrap_err();
        assert!(e.to_string().contains("SSH_KNOWN_HOSTS"), "{e}");
        let e = SshOptions::from_lookup(vars(&[
            ("SLURM_HOSTNAME", "a"),
            ("HOME", "/h"),
            ("SSH_CONFIG", "/nonexistent/config"),
        ]))
        .unwrap_err();
        assert!(e.to_string().contains("SSH_CONFIG"), "{e}");
    }

    #[test]
    fn proxy_jump_and_proxy_command_are_recorded() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = dir.path().join("config");
        std::fs::write(
            &cfg,
            "Host j\n  ProxyJump b1,jumper@b2:2200\n  User u\nHost c\n  ProxyCommand ssh -W %h:%p bastion\n  User u\nHost b1\n  HostName 10.0.0.1\n  User hopper\n",
        )
        .unwrap();
        let o = opts(Some(cfg));
        let t = o.resolve("j").unwrap();
        assert_eq!(
            t.proxy,
            Proxy::Jump(vec!["b1".into(), "jumper@b2:2200".into()])
        );
        let t = o.resolve("c").unwrap();
        assert_eq!(t.proxy, Proxy::Command("ssh -W %h:%p bastion".into()));
        let h = o.resolve_hop("b1").unwrap();
        assert_eq!((h.host.as_str(), h.user.as_str()), ("10.0.0.1", "hopper"));
        let mut o2 = o.clone();
        o2.user = "cluster".into();
        let h = o2.resolve_hop("jumper@b2:2200").unwrap();
        assert_eq!(
            (h.host.as_str(), h.port, h.user.as_str()),
            ("b2", 2200, "jumper")
        );
        assert_eq!(
            o2.resolve_hop("b1").unwrap().user,
            "hopper",
            "config User wins over SLURM_USER"
        );
    }
}
