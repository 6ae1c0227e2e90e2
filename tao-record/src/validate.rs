//! Local checks of everything `tao-record open` is given, so that a bad
//! value fails here, on the launch host, with the flag and the fix named,
//! and never on the cluster after a wait in the queue.
//!
//! Each check returns the message text only; the caller wraps it in the
//! error kind that fits where the value came from (a flag: usage, exit 2;
//! an environment variable: configuration, exit 78; a file: data, exit 65).

/// Parse a Slurm time string into seconds.
///
/// Accepted forms (sbatch(1), `--time`): `minutes`, `minutes:seconds`,
/// `hours:minutes:seconds`, `days-hours`, `days-hours:minutes`,
/// `days-hours:minutes:seconds`. `INFINITE`/`UNLIMITED` are refused: a
/// job needs a finite limit for the child timeout.
///
/// Errors: the reason, e.g. `"expected HH:MM:SS or D-HH:MM:SS"`.
pub fn slurm_time_secs(s: &str) -> Result<u64, String> {
    const FORMS: &str = "use a Slurm time such as \"04:00:00\", \"90\" (minutes) or \"1-12:00:00\"";
    let bad = || format!("{s:?} is not a Slurm time; {FORMS}");
    let num = |p: &str| -> Result<u64, String> {
        if p.is_empty() || p.len() > 9 || !p.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        p.parse::<u64>().map_err(|_| bad())
    };
    let (days, rest) = match s.split_once('-') {
        Some((d, r)) => (Some(num(d)?), r),
        None => (None, s),
    };
    let parts: Vec<&str> = rest.split(':').collect();
    let nums = parts
        .iter()
        .map(|p| num(p))
        .collect::<Result<Vec<u64>, String>>()?;
    let secs = match (days, nums.as_slice()) {
        (None, [m]) => m * 60,
        (None, [m, s]) => m * 60 + s,
        (None, [h, m, s]) => h * 3600 + m * 60 + s,
        (Some(d), [h]) => d * 86400 + h * 3600,
        (Some(d), [h, m]) => d * 86400 + h * 3600 + m * 60,
        (Some(d), [h, m, s]) => d * 86400 + h * 3600 + m * 60 + s,
        _ => return Err(bad()),
    };
    if secs == 0 {
        return Err(format!("{s:?} is zero; {FORMS}"));
    }
    Ok(secs)
}

/// Format seconds as `HH:MM:SS` (hours may exceed 24), the form used for
/// `resources.time` and `resources.child_timeout`.
pub fn format_hms(secs: u64) -> String {
    format!(
        "{:02}:{:02}:{:02}",
        secs / 3600,
        (secs / 60) % 60,
        secs % 60
    )
}

/// Refuse NUL and other control characters except tab/newline where
/// `multiline` allows them (commands and spec text).
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

/// Check an image reference: `/abs/path.sqsh`, `registry#image:tag`
/// (enroot form), `docker://registry#image:tag`, or `registry/image:tag`
/// (Pyxis `--container-image`, enroot import URI syntax).
///
/// Errors: the reason and the accepted forms.
pub fn image(s: &str) -> Result<(), String> {
    const FORMS: &str =
        "use /abs/path.sqsh, registry#image:tag, docker://registry#image:tag or registry/image:tag";
    if s.is_empty() {
        return Err(format!("is empty; {FORMS}"));
    }
    no_controls(s, false)?;
    if let Some(c) = s.chars().find(|c| {
        !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '/' | ':' | '@' | '#' | '+'))
    }) {
        return Err(format!("{s:?} contains {c:?}; {FORMS}"));
    }
    if s.starts_with('/') {
        if !s.ends_with(".sqsh") {
            return Err(format!(
                "{s:?} is a path but not a .sqsh file; convert it with enroot or give a registry image ({FORMS})"
            ));
        }
        return Ok(());
    }
    if s.starts_with("file:") || s.starts_with("./") || s.starts_with("../") || s.ends_with(".sqsh")
    {
        return Err(format!(
            "{s:?} is not on the cluster's shared filesystem; stage the .sqsh on the cluster and give its absolute path"
        ));
    }
    let body = s.strip_prefix("docker://").unwrap_or(s);
    if body.contains("://") {
        return Err(format!("{s:?} has an unsupported scheme; {FORMS}"));
    }
    let name = body.rsplit_once('#').map_or(body, |(_, n)| n);
    if name.is_empty() || name.starts_with(['/', ':', '@']) || body.matches('#').count() > 1 {
        return Err(format!("{s:?} has no image name; {FORMS}"));
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

/// Check an environment variable name (POSIX: `[A-Za-z_][A-Za-z0-9_]*`).
pub fn env_name(name: &str) -> Result<(), String> {
    let mut chars = name.chars();
    let ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "{name:?} is not a variable name; use letters, digits and _ (not starting with a digit)"
        ))
    }
}

/// Whether a variable name looks like it holds a secret (a token, key or
/// password). Such variables must travel by name (`--secret`), never as a
/// value in `env`.
pub fn looks_secret(name: &str) -> bool {
    let n = name.to_ascii_uppercase();
    [
        "TOKEN",
        "SECRET",
        "PASSWORD",
        "PASSWD",
        "API_KEY",
        "APIKEY",
        "PRIVATE_KEY",
        "CREDENTIAL",
    ]
    .iter()
    .any(|w| n.contains(w))
        || n == "NGC_KEY"
        || n.ends_with("_KEY")
}

/// Variables the job script sets itself; `--env` may not override them.
pub const RESERVED_ENV: &[&str] = &["TAO_JOB_ID", "RESULTS_DIR", "TAO_API_RESULTS_DIR"];

/// Check a Slurm memory size (sbatch `--mem`): digits with an optional
/// K, M, G or T suffix.
pub fn mem(s: &str) -> Result<(), String> {
    let digits = s.trim_end_matches(['K', 'M', 'G', 'T', 'k', 'm', 'g', 't']);
    let suffix_len = s.len() - digits.len();
    if digits.is_empty() || suffix_len > 1 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("{s:?} is not a memory size; use e.g. 64G or 7200M"));
    }
    Ok(())
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

/// Parse a boolean setting (`SLURM_USE_REQUEUE`): true/false, 1/0, yes/no,
/// on/off, case-insensitive.
pub fn parse_bool(s: &str) -> Option<bool> {
    match s.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Some(true),
        "0" | "false" | "no" | "off" => Some(false),
        _ => None,
    }
}

/// Parse a duration such as `30s`, `15m`, `12h`, `7d`, `2w` (a bare number
/// is seconds) into seconds.
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
        .ok_or_else(|| format!("{s:?} is too long"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slurm_times() {
        for (s, secs) in [
            ("04:00:00", 14400),
            ("90", 5400),
            ("10:30", 630),
            ("1-12", 129600),
            ("1-00:30", 88200),
            ("2-00:00:00", 172800),
            ("100:00:00", 360000),
        ] {
            assert_eq!(slurm_time_secs(s), Ok(secs), "{s}");
        }
        for s in [
            "",
            "4h",
            "1:2:3:4",
            "-1",
            "1-",
            "a:00",
            "00:00:00",
            "1-1:1:1:1",
            "INFINITE",
            " 10",
        ] {
            assert!(slurm_time_secs(s).is_err(), "{s:?}");
        }
        assert_eq!(format_hms(13680), "03:48:00");
        assert_eq!(format_hms(360000), "100:00:00");
    }

    #[test]
    fn images() {
        for ok in [
            "/lustre/images/tao.sqsh",
            "nvcr.io#nvidia/tao/tao-toolkit:5.5.0-pyt",
            "docker://nvcr.io#nvidia/tao/tao-toolkit:5.5.0-pyt",
            "nvcr.io/nvidia/tao/tao-toolkit:5.5.0-pyt",
            "ubuntu:22.04",
            "ubuntu@sha256:abc",
        ] {
            assert!(image(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "/lustre/images/tao.tar",
            "file:///x.sqsh",
            "x.sqsh",
            "ubuntu 22.04",
            "a\0b",
            "http://x/y",
            "nvcr.io#",
            "a#b#c",
            "$(rm -rf /)",
        ] {
            assert!(image(bad).is_err(), "{bad:?}");
        }
    }

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
        assert!(env_name("A_1").is_ok());
        assert!(env_name("1A").is_err());
        assert!(env_name("A-B").is_err());
        assert!(
            looks_secret("HF_TOKEN") && looks_secret("NGC_KEY") && looks_secret("WANDB_API_KEY")
        );
        assert!(!looks_secret("OMP_NUM_THREADS"));
        assert!(mem("64G").is_ok() && mem("7200").is_ok());
        assert!(mem("64GB").is_err() && mem("G").is_err());
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
}
