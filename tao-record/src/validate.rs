//! Local checks of everything `tao-record open` is given, so that a bad
//! value fails here, on the launch host, with the flag and the fix named,
//! and never on the cluster after a wait in the queue.
//!
//! The rules a request shares with tao-render (Slurm times, partitions and
//! their limits, GPU/CPU/node counts, env and secret names, images) live
//! in tao-core (`tao_core::request`, `slurm_time`, `image`); this module
//! keeps the checks only tao-record makes (paths, mounts, names, sizes).
//!
//! Each check returns the message text only; the caller wraps it in the
//! error kind that fits where the value came from (a flag: usage, exit 2;
//! an environment variable: configuration, exit 78; a file: data, exit 65).

/// Refuse NUL, the one byte an environment, an argv or a shell word cannot
/// carry. Used for text the job must get byte for byte: env values,
/// commands, pre/post steps and spec text, where newlines, tabs, CRs and
/// ESC are legitimate (certificates, JSON, printf formats with escapes);
/// tao-render quotes every such value for the script (CR as `$'\r'`, so
/// sbatch never sees a DOS line break).
pub fn no_nul(value: &str) -> Result<(), String> {
    if value.contains('\0') {
        return Err(
            "contains a NUL byte, which no environment or shell word can carry; remove it".into(),
        );
    }
    Ok(())
}

/// Refuse NUL and other control characters except tab/newline where
/// `multiline` allows them: single-line names and paths (job names,
/// partitions, supporting-file paths), which land on `#SBATCH` lines, in
/// file names or in one-line tables. Text the job runs or reads uses
/// [`no_nul`] instead.
pub fn no_controls(value: &str, multiline: bool) -> Result<(), String> {
    if value.contains('\0') {
        return Err(
            "contains a NUL byte, which no shell or Slurm option can carry; remove it".into(),
        );
    }
    if let Some(c) = value
        .chars()
        .find(|c| c.is_control() && !(multiline && (*c == '\n' || *c == '\t' || *c == '\r')))
    {
        return Err(format!("contains the control character {:?}; remove it", c));
    }
    Ok(())
}

/// Normalise a results root (`SLURM_BASE_RESULTS_DIR`): an absolute path,
/// `lustre:///abs` or `slurm:///abs` (the same path on the cluster). The
/// result has no trailing slash and only characters safe in an `#SBATCH`
/// line, which sbatch reads without a shell.
///
/// Errors: the reason and the fix (stage data on the cluster).
pub fn results_root(s: &str) -> Result<String, String> {
    no_controls(s, false)?;
    let path = if let Some(p) = s
        .strip_prefix("lustre://")
        .or_else(|| s.strip_prefix("slurm://"))
    {
        p
    } else if s.starts_with("file:") {
        return Err(format!(
            "{s:?} is a launch-host path; stage data on the cluster and give a path on its shared filesystem (/abs or lustre:///abs)"
        ));
    } else if s.contains("://") {
        return Err(format!(
            "{s:?} has an unsupported scheme; use /abs/path or lustre:///abs/path on the cluster"
        ));
    } else {
        s
    };
    abs_cluster_path(path).map_err(|e| format!("{s:?} {e}"))
}

/// Check an absolute path on the cluster: starts with `/`, no `.`/`..`
/// components, characters `[A-Za-z0-9._/+@-]` only. Returns it without a
/// trailing slash.
pub fn abs_cluster_path(p: &str) -> Result<String, String> {
    if !p.starts_with('/') {
        return Err(
            "is not an absolute path; stage data on the cluster and give its absolute path on the shared filesystem"
                .into(),
        );
    }
    if let Some(c) = p
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '/' | '+' | '@')))
    {
        return Err(format!(
            "contains {c:?}, which #SBATCH lines cannot carry; use a path of [A-Za-z0-9._/+@-]"
        ));
    }
    if p.split('/').any(|c| c == "." || c == "..") {
        return Err("contains a . or .. component; give the canonical path".into());
    }
    let trimmed = p.trim_end_matches('/');
    if trimmed.is_empty() {
        return Err("is the root directory; give a directory for results".into());
    }
    Ok(trimmed.to_string())
}

/// Check a container mount `SRC:DST[:FLAGS]` (Pyxis `--container-mounts`
/// entry): both paths absolute (a `lustre://` source is normalised), no
/// comma (Pyxis separates entries with commas).
pub fn mount(s: &str) -> Result<String, String> {
    no_controls(s, false)?;
    if s.contains(',') {
        return Err(format!(
            "{s:?} contains a comma; give one --mount per entry"
        ));
    }
    let rest = s.strip_prefix("lustre://").unwrap_or(s);
    let parts: Vec<&str> = rest.split(':').collect();
    let (src, dst, flags) = match parts.as_slice() {
        [src, dst] => (*src, *dst, None),
        [src, dst, flags] => (*src, *dst, Some(*flags)),
        _ => {
            return Err(format!(
                "{s:?} is not SRC:DST[:FLAGS]; use e.g. /lustre/data:/data:ro"
            ))
        }
    };
    let src = abs_cluster_path(src).map_err(|e| format!("{s:?}: source {e}"))?;
    let dst = abs_cluster_path(dst).map_err(|e| format!("{s:?}: destination {e}"))?;
    match flags {
        None => Ok(format!("{src}:{dst}")),
        Some(f)
            if !f.is_empty()
                && f.split('+')
                    .all(|x| x.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')) =>
        {
            Ok(format!("{src}:{dst}:{f}"))
        }
        Some(f) => Err(format!(
            "{s:?}: mount flags {f:?} are not valid; use e.g. ro or rw"
        )),
    }
}

/// Check a Slurm name list (partitions, node names, account): characters
/// `[A-Za-z0-9_.-]`, with commas between entries where `list` allows them.
pub fn slurm_names(s: &str, list: bool, what: &str) -> Result<(), String> {
    if s.is_empty() {
        return Err(format!("is empty; give a {what}"));
    }
    let ok = s.split(',').all(|p| {
        !p.is_empty()
            && p.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
    });
    if !ok || (!list && s.contains(',')) {
        return Err(format!(
            "{s:?} is not a valid {what}; use [A-Za-z0-9_.-]{}",
            if list { " separated by commas" } else { "" }
        ));
    }
    Ok(())
}

/// The node names of `--exclude` values, each a node name or a Slurm host
/// list as sbatch `--exclude` takes it (`n1,n2`, `gpu[01-04,07]`),
/// expanded by [`tao_core::hostlist::expand`] (at most
/// [`tao_core::hostlist::MAX_NAMES`] names in all), in order, without
/// repeats.
///
/// Errors: a one-line reason (for `--exclude`) when a value is empty, a
/// name is not `[A-Za-z0-9_.-]` after expansion, or the lists pass the bound.
pub fn exclude_nodes(values: &[String]) -> Result<Vec<String>, String> {
    let mut out: Vec<String> = Vec::new();
    for v in values {
        let names = tao_core::hostlist::expand(v, tao_core::hostlist::MAX_NAMES)
            .map_err(|e| format!("{v:?}: {e}"))?;
        if names.is_empty() {
            return Err(format!(
                "{v:?} names no node; give a node name or a host list such as n[1-4]"
            ));
        }
        for n in names {
            slurm_names(&n, false, "node name").map_err(|_| {
                format!(
                    "{v:?} is not a node name or a Slurm host list ({n:?} is no node name); use [A-Za-z0-9_.-], several as n1,n2 or n[1-4]"
                )
            })?;
            if !out.contains(&n) {
                if out.len() >= tao_core::hostlist::MAX_NAMES {
                    return Err(format!(
                        "more than {} node names in all; name fewer nodes",
                        tao_core::hostlist::MAX_NAMES
                    ));
                }
                out.push(n);
            }
        }
    }
    Ok(out)
}

/// Parse a boolean setting (`SLURM_USE_REQUEUE`): true/false, 1/0, yes/no,
/// on/off, case-insensitive.
pub fn parse_bool(s: &str) -> Option<bool> {
    match s.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Some(true),
        "0" | "false" | "no" | "off" => Some(false),
        _ => None,
    }
}

/// The longest duration accepted by [`duration_secs`] (`gc --older-than`,
/// `list --since`): 100 years of 365 days, in seconds. Longer is a usage
/// error, so no date arithmetic can overflow.
pub const MAX_DURATION_SECS: u64 = 100 * 365 * 86400;

/// Parse a duration such as `30s`, `15m`, `12h`, `7d`, `2w` (a bare number
/// is seconds) into seconds, at most [`MAX_DURATION_SECS`] (100 years).
///
/// Errors: a message naming the value and the accepted forms or the bound.
pub fn duration_secs(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (num, unit) = t.split_at(t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len()));
    let n: u64 = num
        .parse()
        .map_err(|_| format!("{s:?} is not a duration; use e.g. 30m, 12h, 7d or 2w"))?;
    let mult = match unit {
        "" | "s" => 1,
        "m" | "min" => 60,
        "h" => 3600,
        "d" => 86400,
        "w" => 7 * 86400,
        _ => return Err(format!("{s:?} has an unknown unit; use s, m, h, d or w")),
    };
    n.checked_mul(mult)
        .filter(|secs| *secs <= MAX_DURATION_SECS)
        .ok_or_else(|| format!("{s:?} is longer than 100 years ({MAX_DURATION_SECS} s)"))
}

/// Parse `--since`: a duration back from `now` (`30m`, `12h`, `7d`) or an
/// RFC 3339 time.
///
/// Errors: the reason, for the caller to wrap.
pub fn parse_since(
    s: &str,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<chrono::DateTime<chrono::Utc>, String> {
    if let Some(t) = tao_core::time::parse_rfc3339(s) {
        return Ok(t);
    }
    let secs = duration_secs(s)
        .map_err(|_| format!("{s:?} is neither a duration (30m, 12h, 7d) nor an RFC 3339 time"))?;
    let secs = i64::try_from(secs).map_err(|_| format!("{s:?} is too long"))?;
    Ok(now - chrono::Duration::seconds(secs))
}

/// Check that a local input path (`--spec`, `--execution`,
/// `--supporting-file`) is not a directory. Reading a directory fails with
/// the OS's "Is a directory", which names no fix; this names the files in
/// it (up to three, sorted) that could be meant.
///
/// Errors: the message naming the path and the fix (the caller names the flag).
pub fn not_a_directory(path: &std::path::Path) -> Result<(), String> {
    if !path.is_dir() {
        return Ok(());
    }
    let mut files: Vec<String> = std::fs::read_dir(path)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter(|e| e.path().is_file())
                .map(|e| e.path().display().to_string())
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files.truncate(3);
    let hint = if files.is_empty() {
        String::new()
    } else {
        format!(" (such as {})", files.join(", "))
    };
    Err(format!(
        "{:?} is a directory; give a file{hint}",
        path.display().to_string()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_roots() {
        assert_eq!(results_root("/lustre/tao/").unwrap(), "/lustre/tao");
        assert_eq!(results_root("lustre:///lustre/tao").unwrap(), "/lustre/tao");
        assert_eq!(results_root("slurm:///x").unwrap(), "/x");
        for bad in [
            "file:///home/me/x",
            "relative/dir",
            "/a/../b",
            "/a b",
            "/a%j",
            "/",
            "s3://b/x",
            "lustre://host/x",
        ] {
            let e = results_root(bad).unwrap_err();
            assert!(
                e.contains(&format!("{bad:?}")) || e.contains("NUL"),
                "{bad}: {e}"
            );
        }
        assert!(results_root("file:///x")
            .unwrap_err()
            .contains("stage data on the cluster"));
        assert!(results_root("rel")
            .unwrap_err()
            .contains("stage data on the cluster"));
    }

    #[test]
    fn mounts() {
        assert_eq!(mount("/a/:/b").unwrap(), "/a:/b");
        assert_eq!(mount("/a:/b:ro").unwrap(), "/a:/b:ro");
        assert_eq!(mount("lustre:///a:/b").unwrap(), "/a:/b");
        for bad in [
            "/a",
            "/a:/b,/c:/d",
            "a:/b",
            "/a:b",
            "/a:/b:r o",
            "/a:/b:c:d",
        ] {
            assert!(mount(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn names_and_values() {
        assert!(slurm_names("polar,polar3", true, "partition").is_ok());
        assert!(slurm_names("a;b", true, "partition").is_err());
        assert!(slurm_names("a,b", false, "node").is_err());
        assert_eq!(parse_bool("Yes"), Some(true));
        assert_eq!(parse_bool("maybe"), None);
        assert!(no_controls("a\nb", true).is_ok());
        assert!(no_controls("a\nb", false).is_err());
        assert!(no_controls("a\0b", true).is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(duration_secs("30"), Ok(30));
        assert_eq!(duration_secs("15m"), Ok(900));
        assert_eq!(duration_secs("7d"), Ok(604800));
        assert!(duration_secs("7 days").is_err());
        assert!(duration_secs("x").is_err());
    }

    #[test]
    fn since_forms() {
        let now = tao_core::time::parse_rfc3339("2026-11-29T12:00:00Z").unwrap();
        assert_eq!(
            parse_since("2h", now).unwrap(),
            tao_core::time::parse_rfc3339("2026-11-29T10:00:00Z").unwrap()
        );
        assert_eq!(
            parse_since("2026-11-28T00:00:00Z", now).unwrap(),
            tao_core::time::parse_rfc3339("2026-11-28T00:00:00Z").unwrap()
        );
        assert!(parse_since("yesterday", now).is_err());
    }
}
