//! `tao-submit preflight`: check, before a first job, what the seed's
//! setup guide asks a user to set up, and say what to fix.
//!
//! Checks: the variables are set; a non-interactive login works (no TTY,
//! no prompt); sbatch, srun, squeue, sacct and scancel exist on the login
//! node (after the site's remote prefix); with runtime `pyxis`, srun accepts
//! `--container-image` (Pyxis adds that option to srun, see the Pyxis
//! README) and enroot exists; when NGC_KEY is set, the Enroot credentials
//! file exists on the cluster (`$ENROOT_CONFIG_PATH/.credentials`, default
//! `~/.config/enroot/.credentials`, netrc format, see Enroot's
//! import docs), and `--install-enroot-credentials` writes it over the
//! channel's stdin under `umask 077`; each `--path` (and each mount source
//! of the job lines given with `--lines`) exists (`test -e`); the results
//! root is writable.
//!
//! Output: a readable summary on stderr; unless standard output is a
//! terminal, one JSON report on stdout (`{"preflight": {"ok", "login_host",
//! "checks": [{"name", "ok", "detail"}]}}`), or with `--lines` each job
//! line with a `preflight` object added.

use std::io::{BufRead, Write};

use clap::Args;
use serde_json::{json, Value};
use tao_core::{shell, Error, Filter, JobLine, LineWriter, OnBadLine, Result};

use crate::conn::ConnArgs;
use crate::sessions::Sessions;

/// Options of `tao-submit preflight`.
#[derive(Debug, Args)]
pub struct PreflightArgs {
    /// A path on the cluster that must exist (dataset, mount source); repeatable.
    #[arg(long = "path", value_name = "PATH")]
    pub paths: Vec<String>,
    /// Read job lines on stdin, check their mount sources and results root, and print each with a `preflight` object.
    #[arg(long)]
    pub lines: bool,
    /// Runtime to check: `pyxis` or `none` [default: TAO_RUNTIME, else the site profile's].
    #[arg(long, env = "TAO_RUNTIME")]
    pub runtime: Option<String>,
    /// Results root on shared storage [default: SLURM_BASE_RESULTS_DIR].
    #[arg(long, env = "SLURM_BASE_RESULTS_DIR", value_name = "DIR")]
    pub base_dir: Option<String>,
    /// Write the Enroot credentials for nvcr.io from NGC_KEY on the cluster (mode 600, over SSH stdin).
    #[arg(long)]
    pub install_enroot_credentials: bool,
    /// Print the readable summary only, no JSON (set by `crate::cli::run`
    /// when standard output is a terminal: `tao_core::cli::stdout_is_terminal`).
    #[arg(skip)]
    pub human_only: bool,
}

/// One check's result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    /// Short name, e.g. `login`, `command:sbatch`.
    pub name: String,
    /// Whether it passed.
    pub ok: bool,
    /// What was found, or the fix.
    pub detail: String,
}

impl Check {
    fn new(name: impl Into<String>, ok: bool, detail: impl Into<String>) -> Self {
        Check {
            name: name.into(),
            ok,
            detail: detail.into(),
        }
    }

    fn to_json(&self) -> Value {
        json!({"name": self.name, "ok": self.ok, "detail": self.detail})
    }
}

/// The netrc lines Enroot reads for nvcr.io (Enroot docs, "import":
/// `machine nvcr.io login $oauthtoken password <KEY>`).
pub fn enroot_netrc(key: &str) -> String {
    format!(
        "machine nvcr.io login $oauthtoken password {key}\nmachine authn.nvidia.com login $oauthtoken password {key}\n"
    )
}

const CREDS: &str = "\"${ENROOT_CONFIG_PATH:-$HOME/.config/enroot}/.credentials\"";

/// Run the checks.
///
/// Output: exit status 0 when every check passed, 1 otherwise.
///
/// Errors: the login's error (69, 77, 78) after the report is printed;
/// input errors with `--lines` (65); output errors.
pub fn run<R: BufRead, W: Write>(
    conn: &ConnArgs,
    args: &PreflightArgs,
    input: R,
    out: &mut LineWriter<W>,
) -> Result<i32> {
    let mut checks = Vec::new();
    // A bad line stops the reading (tao_core::filter, OnBadLine::Stop): the
    // lines before it are checked, and the status is 65 whatever else failed.
    let mut filter = Filter::new(crate::submit::TOOL, input, OnBadLine::Stop);
    let mut lines = if args.lines {
        filter.read_all()?
    } else {
        Vec::new()
    };
    let env = |n: &str| std::env::var(n).ok().filter(|v| !v.is_empty());
    for (var, fix) in [
        ("SLURM_HOSTNAME", "export SLURM_HOSTNAME=login.example.org"),
        (
            "SLURM_USER",
            "export SLURM_USER=your_cluster_user (or `User` in ~/.ssh/config)",
        ),
    ] {
        let set = match var {
            "SLURM_HOSTNAME" => conn.hosts.is_some(),
            _ => conn.user.is_some(),
        };
        checks.push(Check::new(
            format!("env:{var}"),
            set,
            if set {
                "set".to_string()
            } else {
                fix.to_string()
            },
        ));
    }
    let base = args.base_dir.clone();
    checks.push(Check::new(
        "env:SLURM_BASE_RESULTS_DIR",
        base.is_some(),
        if base.is_some() {
            "set"
        } else {
            "export SLURM_BASE_RESULTS_DIR=/lustre/.../tao (shared storage)"
        },
    ));
    let has_key = conn.key.is_some() || env("SSH_AUTH_SOCK").is_some();
    checks.push(Check::new(
        "env:SSH_KEY_PATH",
        has_key,
        if conn.key.is_some() {
            "set"
        } else if has_key {
            "unset; using the ssh-agent (SSH_AUTH_SOCK)"
        } else {
            "export SSH_KEY_PATH=~/.ssh/id_ed25519 (or start ssh-agent)"
        },
    ));

    // The site profile and the runtime need no login: checked first, each
    // under its own name (a bad TAO_SITE_PROFILE is not a login failure).
    let profile = match tao_core::site::SiteProfile::load(conn.site_profile.as_deref()) {
        Ok(p) => Some(p),
        Err(e) => {
            checks.push(Check::new("site-profile", false, e.to_string()));
            None
        }
    };
    let runtime = match &args.runtime {
        Some(r) => {
            // Clap takes --runtime, else TAO_RUNTIME: name the one given.
            let from = if env("TAO_RUNTIME").as_deref() == Some(r.as_str()) {
                "TAO_RUNTIME"
            } else {
                "--runtime"
            };
            Some((r.clone(), from.to_string()))
        }
        None => profile
            .as_ref()
            .map(|p| (p.runtime.clone(), format!("site profile {:?}", p.name))),
    };
    // The rule tao-record open applies (tao_core::request::runtime).
    let runtime = match runtime {
        Some((r, from)) => match tao_core::request::runtime(&r) {
            Ok(()) => Some(r),
            Err(e) => {
                checks.push(Check::new("runtime", false, format!("{from}: {e}")));
                None
            }
        },
        None => None,
    };

    let login = conn.ssh_options().and_then(|o| {
        let mut s = Sessions::new(o);
        let host = s.primary()?.login_host().to_string();
        Ok((s, host))
    });
    let (mut s, host) = match login {
        Ok(x) => x,
        Err(e) => {
            // A missing variable or a bad site profile was just reported
            // by its own check; say so once, not again as the login's
            // failure and the exit error.
            let env_failed = checks.iter().any(|c| !c.ok);
            let detail = if env_failed && matches!(e, Error::Config(_)) {
                "not tried: fix the checks above first".to_string()
            } else {
                e.to_string()
            };
            checks.push(Check::new("login", false, detail));
            report(out, &checks, None, &mut lines, args.human_only)?;
            // A malformed input line is bad data (65) whatever else failed.
            let mut counts = filter.counts();
            counts.failed += 1;
            return counts.finish(crate::submit::TOOL, Some(summary_error(e, &checks)));
        }
    };
    let user_check = s.run_on(&host, "id -un; test -t 0 && echo tty || echo notty", None)?;
    let text = user_check.stdout_text();
    let notty = text.lines().any(|l| l == "notty");
    checks.push(Check::new(
        "login",
        user_check.status == 0 && notty,
        format!(
            "logged in to {host:?} as {:?}, no TTY",
            text.lines().next().unwrap_or("?")
        ),
    ));

    // Commands, runtime, credentials, paths and storage in one remote script.
    let runtime = runtime.unwrap_or_default();
    let mut script = String::new();
    for cmd in ["sbatch", "srun", "squeue", "sacct", "scancel"] {
        script.push_str(&format!(
            "if p=$(command -v {cmd}); then echo \"@@ command:{cmd} 1 $p\"; else echo '@@ command:{cmd} 0 not on PATH: load the Slurm module in the site profile remote_prefix'; fi; "
        ));
    }
    if runtime == "none" {
        // Said, not skipped silently: a user who expected Pyxis sees why
        // nothing about containers was checked.
        checks.push(Check::new(
            "runtime",
            true,
            format!("{runtime}: no container runtime is used (plain srun, no --image); Pyxis and Enroot are not checked"),
        ));
    }
    if runtime == "pyxis" {
        script.push_str(
            "if srun --help 2>&1 | grep -q -- --container-image; then echo '@@ pyxis 1 srun accepts --container-image'; else echo '@@ pyxis 0 srun has no --container-image: Pyxis is not installed; use TAO_RUNTIME=none'; fi; \
             if p=$(command -v enroot); then echo \"@@ enroot 1 $p\"; else echo '@@ enroot 0 enroot not on PATH'; fi; ",
        );
    }
    let ngc = env("NGC_KEY");
    if ngc.is_some() && !args.install_enroot_credentials {
        script.push_str(&format!(
            "if [ -s {CREDS} ]; then echo '@@ enroot-credentials 1 present'; else echo '@@ enroot-credentials 0 missing: run tao-submit preflight --install-enroot-credentials'; fi; "
        ));
    }
    let mut paths = args.paths.clone();
    for l in &lines {
        if let Some(m) = l.get_path(&["mounts"]).and_then(Value::as_array) {
            for v in m.iter().filter_map(Value::as_str) {
                let src = v.split(':').next().unwrap_or(v);
                if !src.is_empty() && !paths.iter().any(|p| p == src) {
                    paths.push(src.to_string());
                }
            }
        }
    }
    for p in &paths {
        let q = shell::quote(p);
        let name = shell::quote(&format!("path:{p}"));
        script.push_str(&format!(
            "if test -e {q}; then printf '@@ %s 1 exists\\n' {name}; else printf '@@ %s 0 does not exist on the cluster: stage the data there first\\n' {name}; fi; "
        ));
    }
    if let Some(b) = &base {
        // The root and the two folders every job writes in (tao-jobline(7),
        // SHARED STORAGE): a root you own whose jobs/ or results/ another
        // user made is as unusable as a root you cannot write.
        let q = shell::quote(b);
        let dirs = [
            b.clone(),
            tao_core::model::Layout::jobs_root(b),
            tao_core::model::Layout::results_root(b),
        ]
        .iter()
        .map(|d| shell::quote(d))
        .collect::<Vec<_>>()
        .join(" ");
        script.push_str(&format!(
            "bad=; for d in {dirs}; do if mkdir -p -- \"$d\" 2>/dev/null && t=$(mktemp \"$d/.tao-preflight.XXXXXX\" 2>/dev/null) && rm -f -- \"$t\"; then :; else bad=$d; break; fi; done; \
             if [ -z \"$bad\" ]; then printf '@@ results-root 1 %s writable (with jobs/ and results/)\\n' {q}; \
             else printf '@@ results-root 0 %s not writable: choose a SLURM_BASE_RESULTS_DIR you own (or ask the owner of %s to give it back)\\n' \"$bad\" \"$bad\"; fi; "
        ));
    }
    let res = s.run_on(&host, &script, None)?;
    for l in res.stdout_text().lines() {
        let Some(rest) = l.strip_prefix("@@ ") else {
            continue;
        };
        let mut parts = rest.splitn(3, ' ');
        let (Some(name), Some(ok), detail) = (parts.next(), parts.next(), parts.next()) else {
            continue;
        };
        checks.push(Check::new(name, ok == "1", detail.unwrap_or("")));
    }

    if args.install_enroot_credentials {
        let check = match &ngc {
            None => Check::new(
                "enroot-credentials",
                false,
                "NGC_KEY is not set: export NGC_KEY=... first",
            ),
            Some(key) => {
                let script = format!(
                    "set -e; umask 077; f={CREDS}; mkdir -p -- \"$(dirname -- \"$f\")\"; t=\"$f.tao-tmp.$$\"; \
                     {{ if [ -f \"$f\" ]; then grep -v -e '^machine nvcr.io ' -e '^machine authn.nvidia.com ' -- \"$f\" || true; fi; cat; }} > \"$t\"; \
                     mv -f -- \"$t\" \"$f\"; chmod 600 -- \"$f\"; stat -c %a -- \"$f\""
                );
                let o = s.run_on(&host, &script, Some(enroot_netrc(key).as_bytes()))?;
                let mode = o.stdout_text().trim().to_string();
                Check::new(
                    "enroot-credentials",
                    o.status == 0 && mode == "600",
                    if o.status == 0 {
                        format!("installed (mode {mode})")
                    } else {
                        o.stderr_line()
                    },
                )
            }
        };
        checks.push(check);
    }
    let ok = report(out, &checks, Some(&host), &mut lines, args.human_only)?;
    if !ok {
        // The closing line, as when the login failed (exit 1; 65 wins).
        filter.failed();
        let counts = filter.counts();
        return counts.finish(
            crate::submit::TOOL,
            Some(summary_error(Error::SomeFailed(String::new()), &checks)),
        );
    }
    Ok(filter.status())
}

/// The error that ends a preflight whose login failed: the same kind (so
/// the same exit status: 69, 77, 78) as the login's error `e`, whose text
/// the report has already printed, with a summary instead of that text
/// again: `preflight: N of M checks failed (a, b): fix them as shown above`.
pub fn summary_error(e: Error, checks: &[Check]) -> Error {
    let failed: Vec<&str> = checks
        .iter()
        .filter(|c| !c.ok)
        .map(|c| c.name.as_str())
        .collect();
    let msg = format!(
        "preflight: {} of {} checks failed ({}): fix them as shown above",
        failed.len(),
        checks.len(),
        failed.join(", ")
    );
    match e {
        Error::Config(_) => Error::Config(msg),
        Error::Unavailable(_) => Error::Unavailable(msg),
        Error::NoPerm(_) => Error::NoPerm(msg),
        Error::TempFail(_) => Error::TempFail(msg),
        Error::Protocol(_) => Error::Protocol(msg),
        Error::SomeFailed(_) => Error::SomeFailed(msg),
        other => other,
    }
}

/// Print the summary on stderr and, unless `human_only` (standard output
/// is a terminal), the JSON report (or the lines with it) on `out`;
/// whether all passed.
fn report<W: Write>(
    out: &mut LineWriter<W>,
    checks: &[Check],
    host: Option<&str>,
    lines: &mut [JobLine],
    human_only: bool,
) -> Result<bool> {
    let ok = checks.iter().all(|c| c.ok);
    for c in checks {
        // A failure's hint lines (the SSH key setup steps) follow it.
        tao_core::cli::write_stderr(&format!(
            "tao-submit preflight: {} {}: {}\n{}",
            if c.ok { "ok  " } else { "FAIL" },
            c.name,
            tao_core::cli::one_line(&c.detail),
            tao_core::cli::hint_text(&c.detail)
        ));
    }
    if human_only {
        return Ok(ok);
    }
    let obj = json!({
        "ok": ok,
        "login_host": host,
        "checks": checks.iter().map(Check::to_json).collect::<Vec<_>>(),
    });
    if lines.is_empty() {
        let mut l = JobLine::new();
        l.fields.insert("preflight".into(), obj);
        out.write(&l)?;
    } else {
        for l in lines.iter_mut() {
            l.fields.insert("preflight".into(), obj.clone());
            out.write(l)?;
        }
    }
    Ok(ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_closing_error_keeps_the_kind_and_does_not_repeat_the_text() {
        let checks = vec![
            Check::new("env:SLURM_HOSTNAME", false, "export SLURM_HOSTNAME=x"),
            Check::new("env:SLURM_USER", true, "set"),
            Check::new("login", false, "not tried"),
        ];
        let e = summary_error(
            Error::Config("SLURM_HOSTNAME is not set: export SLURM_HOSTNAME=x".into()),
            &checks,
        );
        assert_eq!(e.code(), tao_core::exit::CONFIG);
        assert_eq!(
            e.to_string(),
            "preflight: 2 of 3 checks failed (env:SLURM_HOSTNAME, login): fix them as shown above"
        );
        let e = summary_error(Error::NoPerm("ssh login failed".into()), &checks);
        assert_eq!(e.code(), tao_core::exit::NOPERM);
        assert!(!e.to_string().contains("ssh login failed"));
    }

    #[test]
    fn netrc_names_both_machines() {
        let n = enroot_netrc("nvapi-FAKEFAKEFAKE");
        assert_eq!(n.lines().count(), 2);
        assert!(n.starts_with("machine nvcr.io login $oauthtoken password nvapi-FAKEFAKEFAKE\n"));
    }
}
