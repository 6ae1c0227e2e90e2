//! Container images for runtime `pyxis`: a GPU job's `--container-image`
//! is always a `.sqsh` file on shared storage, never a registry URI (a
//! registry pull would run on idle, billed GPUs).
//!
//! tao-render resolved the image into `script.image = {given, normalised,
//! sqsh, needs_conversion}` and wrote `sqsh` into the approved script. Here:
//!
//! - a given `.sqsh` must exist and start with the squashfs magic `hsqs`
//!   (squashfs superblock, little-endian magic 0x73717368); a truncated or
//!   foreign file is an error, never a fallback to a registry;
//! - a registry image is looked up in the conversion cache
//!   (`<base>/images/<name>.sqsh`, same magic check). On a miss, a conversion
//!   job (tao-script's `convert` template, linted like any script) goes to
//!   the site profile's CPU partition, and the GPU job is submitted with
//!   `--dependency=afterok:<conversion>` and `--kill-on-invalid-dep=yes`
//!   (sbatch(1)): no GPU is held while the image converts, and a failed
//!   conversion kills the GPU job instead of leaving it pending forever.
//!   A live conversion of the same image (same job name) is shared, within
//!   a run and across runs.
//! - Slurm treats a dependency on an unknown or purged job as satisfied, so
//!   after submission the GPU job's `Dependency` is read back and must name
//!   the conversion job (or the cache must now be valid).
//! - `--reconvert-latest`: an image whose tag is `latest` (a moving tag) is
//!   converted again even when the cache is valid, by a conversion job of
//!   its own name ([`tao_script::render::reconvert_job_name`]) whose script
//!   does not stop early on a valid cache; the new file replaces the old by
//!   an atomic rename.
//! - A conversion job left PENDING on a memory-quota reason
//!   ([`is_memory_quota_reason`], e.g. `QOSGrpMemLimit`) asked for more
//!   memory than its QOS or association allows: it is cancelled and
//!   resubmitted once, with the site profile's explicit CPUs and memory on
//!   the profile's CPU partition (never a GPU partition), marked with
//!   `--comment=`[`RESUBMITTED_COMMENT`] so that it is never resubmitted
//!   again; jobs already chained on it are moved to the new one
//!   (`scontrol update Dependency=`) before it is cancelled.

use std::collections::HashMap;

use serde_json::{json, Value};
use tao_core::{shell, Error, JobLine, Result};

use crate::sessions::Sessions;
use crate::stage::Plan;

/// What a line's image needs before its job can be submitted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Need {
    /// Runtime `none` (or no image): nothing.
    Nothing,
    /// A given `.sqsh` path that must be a squashfs.
    Sqsh(String),
    /// A registry image whose cache file is `sqsh`.
    Convert {
        /// The image as given.
        given: String,
        /// The cache path (`<base>/images/<name>.sqsh`).
        sqsh: String,
    },
}

/// Read the image need of a line from `runtime` and `script.image`.
///
/// Errors: [`Error::BadLine`] when runtime is `pyxis` and `script.image`
/// is missing or malformed (render the line with tao-render).
pub fn need_of(line: &JobLine) -> Result<Need> {
    if line.get_str(&["runtime"]) != Some("pyxis") {
        return Ok(Need::Nothing);
    }
    let bad = |what: &str| {
        Error::BadLine {
        line: line.line_no,
        message: format!("runtime \"pyxis\" but `script.image.{what}` is missing; render the line with tao-render"),
    }
    };
    let sqsh = line
        .get_str(&["script", "image", "sqsh"])
        .ok_or_else(|| bad("sqsh"))?;
    let given = line
        .get_str(&["script", "image", "given"])
        .ok_or_else(|| bad("given"))?;
    let conv = line
        .get_path(&["script", "image", "needs_conversion"])
        .and_then(Value::as_bool)
        .ok_or_else(|| bad("needs_conversion"))?;
    if !sqsh.starts_with('/') || !sqsh.ends_with(".sqsh") {
        return Err(bad("sqsh (an absolute .sqsh path)"));
    }
    Ok(if conv {
        Need::Convert {
            given: given.to_string(),
            sqsh: sqsh.to_string(),
        }
    } else {
        Need::Sqsh(sqsh.to_string())
    })
}

/// What the magic check found for one path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    /// A file starting with `hsqs`.
    Squashfs,
    /// No such file.
    Missing,
    /// A file that is not a squashfs (truncated, HTML error page, ...).
    NotSquashfs,
}

/// The script printing `@@img <ok|missing|bad> <path>` for each path.
pub fn check_script(paths: &[&str]) -> String {
    let mut s = String::new();
    for p in paths {
        let q = shell::quote(p);
        s.push_str(&format!(
            "if [ ! -f {q} ]; then printf '@@img missing %s\\n' {q}; \
             elif [ \"$(head -c 4 -- {q} 2>/dev/null)\" = hsqs ]; then printf '@@img ok %s\\n' {q}; \
             else printf '@@img bad %s\\n' {q}; fi; "
        ));
    }
    s
}

/// Parse [`check_script`] output.
pub fn parse_check(out: &str) -> HashMap<String, Found> {
    out.lines()
        .filter_map(|l| {
            let rest = l.strip_prefix("@@img ")?;
            let (what, path) = rest.split_once(' ')?;
            let f = match what {
                "ok" => Found::Squashfs,
                "missing" => Found::Missing,
                "bad" => Found::NotSquashfs,
                _ => return None,
            };
            Some((path.to_string(), f))
        })
        .collect()
}

/// Check `paths` on `host` in one remote command.
///
/// Errors: [`Error::Unavailable`] and friends from the session.
pub fn check(
    sessions: &mut Sessions,
    host: &str,
    paths: &[&str],
) -> Result<HashMap<String, Found>> {
    if paths.is_empty() {
        return Ok(HashMap::new());
    }
    let out = sessions.run_on(host, &check_script(paths), None)?;
    Ok(parse_check(&out.stdout_text()))
}

/// The error for a given `.sqsh` that is not usable.
pub fn sqsh_error(path: &str, found: Found) -> Error {
    match found {
        Found::Missing => Error::Data(format!(
            "image {path:?} does not exist on the cluster; copy the .sqsh there or give a registry image to convert"
        )),
        _ => Error::Data(format!(
            "image {path:?} is not a squashfs (no hsqs magic: truncated or not an image); it is never replaced by a registry pull: convert the image again"
        )),
    }
}

/// The conversion job's plan: tao-script's `convert` script (linted with
/// tao-secrets' built-in rules) staged under `<base>/jobs/<name>`.
///
/// Errors: [`Error::Data`]/[`Error::Config`] from rendering;
/// [`Error::LintBlocked`] when the rendered script does not pass lint.
///
/// `force`: a forced reconversion (`--reconvert-latest`): the job name is
/// [`tao_script::render::reconvert_job_name`] and the script converts even
/// over a valid cache file.
pub fn conversion_plan(
    line: &JobLine,
    given: &str,
    profile: &tao_core::site::SiteProfile,
    force: bool,
) -> Result<Plan> {
    let base = line
        .require_str(&["storage", "base_dir"])?
        .trim_end_matches('/')
        .to_string();
    let name = if force {
        tao_script::render::reconvert_job_name(given)?
    } else {
        tao_script::render::convert_job_name(given)?
    };
    let job_dir = tao_core::model::Layout::job_dir(&base, &name);
    let req = tao_script::render::ConvertRequest {
        id: name.clone(),
        image: given.to_string(),
        base_dir: base.clone(),
        job_dir: job_dir.clone(),
        account: line.get_str(&["resources", "account"]).map(str::to_string),
        force,
    };
    let script = tao_script::render::render_convert(&req, profile)?;
    let lint = tao_secrets::lint_script(&script.text);
    if !lint.ok || lint.sha256 != tao_core::sha256_hex(script.text.as_bytes()) {
        return Err(Error::LintBlocked(format!(
            "the conversion script for image {given:?} did not pass tao-redact lint; report this"
        )));
    }
    let meta = serde_json::to_string_pretty(&json!({
        "id": name,
        "image": given,
        "script": {"template": "convert", "sha256": lint.sha256},
        "lint": lint.to_value(),
    }))
    .expect("json")
        + "\n";
    Ok(Plan {
        id: name,
        job_dir,
        results_dir: format!("{base}/images"),
        spec: None,
        meta,
        script: script.text,
        helpers: Vec::new(),
        secrets: Vec::new(),
        exclude: Vec::new(),
        exclude_given: false,
        extra_args: Vec::new(),
        known_ids: Vec::new(),
    })
}

/// The `--comment` of a conversion job that tao-submit resubmitted after
/// a memory-quota pending reason: such a job is never resubmitted again.
pub const RESUBMITTED_COMMENT: &str = "tao-slurm:resubmitted-after-memory-quota";

/// Whether a pending `reason` is a memory quota of the job's QOS or
/// association, which a smaller explicit request can satisfy: the
/// `QOS*`/`Assoc*` reason codes that name memory (`QOSGrpMemLimit`,
/// `QOSMaxMemoryPerJob`, `AssocGrpMemLimit`, `AssocMaxMemPerJob`, ...).
/// Source: Slurm "Job Reason Codes" (slurm.schedmd.com/job_reason_codes.html).
pub fn is_memory_quota_reason(reason: &str) -> bool {
    (reason.starts_with("QOS") || reason.starts_with("Assoc")) && reason.contains("Mem")
}

/// Of the jobs found by name (squeue `-t all` and sacct), those squeue
/// shows and that have not ended, newest (highest id) first.
pub fn live_of(found: &[crate::sched::Found]) -> Vec<String> {
    let mut ids: Vec<&crate::sched::Found> = found
        .iter()
        .filter(|f| f.reason.is_some() && !crate::sched::is_end_state(&f.state))
        .collect();
    ids.sort_by_key(|f| std::cmp::Reverse(f.job_id.parse::<u64>().unwrap_or(0)));
    ids.into_iter().map(|f| f.job_id.clone()).collect()
}

/// A job as squeue shows it: state, pending reason and comment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueView {
    /// Native state (`PENDING`, `RUNNING`, ...).
    pub state: String,
    /// squeue's reason (`None`, `Priority`, `QOSGrpMemLimit`, ...).
    pub reason: String,
    /// The job's `--comment` (`(null)` when none).
    pub comment: String,
}

/// Parse `squeue -h -j ID -o '%T|%r|%k'` output (the first well-formed line).
pub fn parse_queue_view(out: &str) -> Option<QueueView> {
    out.lines().find_map(|l| {
        let mut it = l.trim().splitn(3, '|');
        let (state, reason, comment) = (it.next()?, it.next()?, it.next()?);
        if state.is_empty() || !state.bytes().all(|b| b.is_ascii_uppercase() || b == b'_') {
            return None;
        }
        Some(QueueView {
            state: state.to_string(),
            reason: reason.to_string(),
            comment: comment.to_string(),
        })
    })
}

/// squeue's view of job `id`, waiting up to `wait` (polled every 0.5 s)
/// while it is PENDING with reason `None` (the scheduler has not looked at
/// it yet). `None` when squeue no longer shows the job.
///
/// Errors: from the session.
pub fn queue_view(
    sessions: &mut Sessions,
    host: &str,
    id: &str,
    wait: std::time::Duration,
) -> Result<Option<QueueView>> {
    let deadline = std::time::Instant::now() + wait;
    loop {
        let out = sessions.run_on(
            host,
            &format!("squeue -h -j {} -o '%T|%r|%k'", shell::quote(id)),
            None,
        )?;
        let view = parse_queue_view(&out.stdout_text());
        let unsettled = matches!(&view, Some(v) if v.state == "PENDING" && v.reason == "None");
        let now = std::time::Instant::now();
        if !unsettled || now >= deadline {
            return Ok(view);
        }
        std::thread::sleep((deadline - now).min(std::time::Duration::from_millis(500)));
    }
}

/// Pending jobs of the session's user whose dependency names `afterok:<conv>`.
///
/// Errors: from the session; [`Error::TempFail`] when squeue fails.
pub fn dependents_of(sessions: &mut Sessions, host: &str, conv: &str) -> Result<Vec<String>> {
    let user = sessions.host(host)?.user().to_string();
    let out = sessions.run_on(
        host,
        &format!("squeue -h -u {} -t PD -o '%i|%E'", shell::quote(&user)),
        None,
    )?;
    if out.status != 0 {
        return Err(Error::TempFail(format!(
            "squeue failed on {host:?} ({}); try again",
            out.stderr_line()
        )));
    }
    Ok(parse_dependents(&out.stdout_text(), conv))
}

/// The job ids of `%i|%E` lines whose dependency names `afterok:<conv>`
/// exactly (`afterok:12(unfulfilled)` names 12, not 123).
pub fn parse_dependents(out: &str, conv: &str) -> Vec<String> {
    let want = format!("afterok:{conv}");
    out.lines()
        .filter_map(|l| l.trim().split_once('|'))
        .filter(|(id, dep)| {
            !id.is_empty()
                && id.bytes().all(|b| b.is_ascii_digit())
                && dep.split([',', '?']).any(|d| {
                    d == want
                        || d.strip_prefix(&want)
                            .is_some_and(|rest| rest.starts_with('(') || rest.starts_with(':'))
                })
        })
        .map(|(id, _)| id.to_string())
        .collect()
}

/// The sbatch options that chain a job after conversion job `conv`.
pub fn dependency_args(conv: &str) -> Vec<String> {
    vec![
        format!("--dependency=afterok:{conv}"),
        "--kill-on-invalid-dep=yes".to_string(),
    ]
}

/// Read the `Dependency=` of `job_id` (`scontrol show job -o`).
///
/// Errors: from the session.
pub fn dependency_of(sessions: &mut Sessions, host: &str, job_id: &str) -> Result<String> {
    let out = sessions.run_on(
        host,
        &format!("scontrol show job -o {}", shell::quote(job_id)),
        None,
    )?;
    Ok(out
        .stdout_text()
        .split_whitespace()
        .find_map(|w| w.strip_prefix("Dependency="))
        .unwrap_or("")
        .to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(v: Value) -> JobLine {
        JobLine::parse(&v.to_string(), 3).unwrap()
    }

    #[test]
    fn memory_quota_reasons() {
        for r in [
            "QOSGrpMemLimit",
            "QOSMaxMemoryPerJob",
            "AssocGrpMemLimit",
            "AssocMaxMemPerNode",
        ] {
            assert!(is_memory_quota_reason(r), "{r}");
        }
        for r in [
            "None",
            "Priority",
            "Resources",
            "QOSGrpCpuLimit",
            "Dependency",
            "BadConstraints",
        ] {
            assert!(!is_memory_quota_reason(r), "{r}");
        }
    }

    #[test]
    fn queue_views_and_dependents() {
        assert_eq!(
            parse_queue_view("Welcome to the cluster\nPENDING|QOSGrpMemLimit|(null)\n"),
            Some(QueueView {
                state: "PENDING".into(),
                reason: "QOSGrpMemLimit".into(),
                comment: "(null)".into()
            })
        );
        assert_eq!(parse_queue_view(""), None);
        let out = "7|afterok:12(unfulfilled)\n8|afterok:123(unfulfilled)\n9|(null)\n10|afterany:5,afterok:12\nbanner|afterok:12\n";
        assert_eq!(parse_dependents(out, "12"), ["7", "10"]);
    }

    #[test]
    fn live_jobs_are_the_unended_ones_squeue_shows_newest_first() {
        let f = |id: &str, state: &str, reason: Option<&str>| crate::sched::Found {
            job_id: id.into(),
            name: "tao-convert-x".into(),
            state: state.into(),
            reason: reason.map(str::to_string),
            login_host: "h".into(),
            cluster: None,
        };
        let found = [
            f("9", "PENDING", Some("QOSGrpMemLimit")),
            f("10", "RUNNING", Some("None")),
            f("8", "COMPLETED", Some("None")),
            f("7", "RUNNING", None),
            f("6", "CANCELLED by 0", Some("None")),
        ];
        assert_eq!(live_of(&found), ["10", "9"]);
    }

    #[test]
    fn needs() {
        assert_eq!(
            need_of(&line(json!({"runtime": "none"}))).unwrap(),
            Need::Nothing
        );
        let l = line(
            json!({"runtime": "pyxis", "script": {"image": {"given": "/a/b.sqsh", "sqsh": "/a/b.sqsh", "needs_conversion": false}}}),
        );
        assert_eq!(need_of(&l).unwrap(), Need::Sqsh("/a/b.sqsh".into()));
        let l = line(
            json!({"runtime": "pyxis", "script": {"image": {"given": "nvcr.io#x:1", "sqsh": "/b/images/x.sqsh", "needs_conversion": true}}}),
        );
        assert!(matches!(need_of(&l).unwrap(), Need::Convert { .. }));
        let e = need_of(&line(json!({"runtime": "pyxis"}))).unwrap_err();
        assert!(e.to_string().contains("tao-render"), "{e}");
        let l = line(
            json!({"runtime": "pyxis", "script": {"image": {"given": "x", "sqsh": "docker://x", "needs_conversion": false}}}),
        );
        assert!(
            need_of(&l).is_err(),
            "a registry URI is never a container image"
        );
    }

    #[test]
    fn magic_check_runs_in_sh() {
        let dir = tempfile::tempdir().unwrap();
        let good = dir.path().join("good.sqsh");
        let bad = dir.path().join("bad it's.sqsh");
        std::fs::write(&good, b"hsqs\x00\x01rest").unwrap();
        std::fs::write(&bad, b"<html>").unwrap();
        let missing = dir.path().join("missing.sqsh");
        let paths: Vec<String> = [&good, &bad, &missing]
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        let refs: Vec<&str> = paths.iter().map(String::as_str).collect();
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(check_script(&refs))
            .output()
            .unwrap();
        let m = parse_check(&String::from_utf8(out.stdout).unwrap());
        assert_eq!(m[&paths[0]], Found::Squashfs);
        assert_eq!(m[&paths[1]], Found::NotSquashfs);
        assert_eq!(m[&paths[2]], Found::Missing);
        assert!(sqsh_error(&paths[1], Found::NotSquashfs)
            .to_string()
            .contains("never replaced by a registry pull"));
    }

    #[test]
    fn conversion_plan_is_rendered_and_linted() {
        let l = line(
            json!({"id": "tao-x", "storage": {"base_dir": "/b"}, "resources": {"account": null}}),
        );
        let profile = tao_core::site::SiteProfile::load(Some("local")).unwrap();
        let p = conversion_plan(
            &l,
            "nvcr.io#nvidia/tao/tao-toolkit:5.5.0-pyt",
            &profile,
            false,
        )
        .unwrap();
        assert!(p.id.starts_with("tao-convert-"));
        assert_eq!(p.job_dir, format!("/b/jobs/{}", p.id));
        assert!(
            p.script.contains("#SBATCH --partition=cpu_long"),
            "{}",
            p.script
        );
        assert_eq!(
            dependency_args("12"),
            ["--dependency=afterok:12", "--kill-on-invalid-dep=yes"]
        );
    }
}
