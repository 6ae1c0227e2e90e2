//! Images for runtime pyxis on the local cluster: a given `.sqsh` checked
//! for the squashfs magic, a registry image converted on the CPU partition
//! with the GPU job chained after it (`afterok`), the conversion shared and
//! then served from the cache, and a failed or truncated conversion failing
//! the GPU job without any fallback.
//!
//! Enroot cannot exist here: a TEST STAND-IN `enroot` (defined below and
//! labelled in its own text) builds a real squashfs with mksquashfs. It is
//! put on the PATH of this test's remote commands only, through a test
//! site profile whose `remote_prefix` prepends its directory; sbatch
//! exports that PATH to the conversion job.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

use common::{lines_of, stdin_of, unique_id, Fixture};
use serde_json::{json, Value};

const STAND_IN: &str = r#"#!/bin/sh
# TEST STAND-IN for enroot (tao-submit tests/image.rs). Enroot cannot exist on
# the local test cluster. `enroot import -o OUT URI` builds a real squashfs
# with mksquashfs. A URI containing "held" first waits (bounded, 300 s)
# until the test creates the file "release" next to this script, so that
# the conversion is still queued or running while the test submits (a
# conversion that ends first makes Slurm drop the GPU job's afterok). Then a
# URI containing "fail" fails, one containing "truncate" leaves a file that
# is not a squashfs, and any other is converted.
[ "$1" = import ] || { echo "stand-in enroot: only import is implemented" >&2; exit 2; }
shift
out=; uri=
while [ $# -gt 0 ]; do case "$1" in -o) out=$2; shift 2;; *) uri=$1; shift;; esac; done
case "$uri" in *held*)
  n=0; while [ ! -e "$(dirname "$0")/release" ]; do
    n=$((n+1)); [ $n -le 3000 ] || { echo "stand-in enroot: never released" >&2; exit 1; }
    sleep 0.1
  done;;
esac
case "$uri" in *fail*) echo "stand-in enroot: simulated import failure for $uri" >&2; exit 1;; esac
case "$uri" in *truncate*) printf 'partial' > "$out"; exit 0;; esac
src=$(mktemp -d)
echo "$uri" > "$src/image-name"
mksquashfs "$src" "$out" -noappend -quiet >/dev/null
rc=$?
rm -rf "$src"
exit $rc
"#;

struct Images {
    f: Fixture,
    _dir: tempfile::TempDir,
    profile: PathBuf,
    /// Created to let a "held" stand-in import finish.
    release: PathBuf,
}

fn setup() -> Option<Images> {
    let f = Fixture::new()?;
    let dir = tempfile::Builder::new()
        .prefix("tao-enroot-standin-")
        .tempdir()
        .unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let enroot = dir.path().join("enroot");
    std::fs::write(&enroot, STAND_IN).unwrap();
    std::fs::set_permissions(&enroot, std::fs::Permissions::from_mode(0o755)).unwrap();
    let profile = dir.path().join("p.toml");
    common::write_profile(
        &profile,
        "local-enroot-stand-in",
        "pyxis",
        &format!("PATH={}:$PATH;", dir.path().display()),
    );
    let release = dir.path().join("release");
    Some(Images {
        f,
        _dir: dir,
        profile,
        release,
    })
}

impl Images {
    /// A pyxis line whose script.image is `image` (what tao-render writes).
    fn line(&self, tag: &str, image: &str) -> Value {
        let mut l = self.f.line(tag, "true");
        let base = self.f.c.var("SLURM_BASE_RESULTS_DIR");
        let (sqsh, conv) = if image.ends_with(".sqsh") {
            (image.to_string(), false)
        } else {
            (
                format!(
                    "{base}/images/{}",
                    tao_core::image::sqsh_name(image).unwrap()
                ),
                true,
            )
        };
        l["runtime"] = json!("pyxis");
        l["image"] = json!(image);
        l["script"]["image"] =
            json!({"given": image, "normalised": image, "sqsh": sqsh, "needs_conversion": conv});
        // Keep the record in step with the line (the gate compares storage only).
        l
    }

    fn submit(&self, lines: &[Value]) -> (i32, Vec<Value>, String) {
        self.submit_with(&[], lines)
    }

    fn submit_with(&self, args: &[&str], lines: &[Value]) -> (i32, Vec<Value>, String) {
        let out = self
            .f
            .cmd()
            .args(args)
            .env("TAO_SITE_PROFILE", &self.profile)
            .write_stdin(stdin_of(lines))
            .output()
            .unwrap();
        (
            out.status.code().unwrap(),
            lines_of(&out.stdout),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }
}

fn conv_name(image: &str) -> String {
    tao_script::render::convert_job_name(image).unwrap()
}

/// `scontrol show job -o` of `id`, as the cluster user.
fn show(t: &Images, id: &str) -> String {
    t.f.c.ssh(&format!("scontrol show job -o {id}")).1
}

/// Submit by hand (as the cluster user, not through tao-submit) a job that
/// carries the conversion job name of `image` and pends on QOSGrpMemLimit:
/// it asks for 1000M under QOS tao-memcap (GrpTRES=mem=600, made by
/// tests/cluster/up). `comment`: an extra `--comment`.
fn over_quota_conversion(t: &Images, image: &str, comment: Option<&str>) -> String {
    let comment = comment
        .map(|c| format!("--comment={c}"))
        .unwrap_or_default();
    let (rc, id, e) = t.f.c.ssh(&format!(
        "cd /tmp && sbatch --parsable -J {} -p cpu_long --qos=tao-memcap --mem=1000M {comment} -o /dev/null --wrap true",
        conv_name(image)
    ));
    assert_eq!(rc, 0, "{e}");
    let id = id.trim().to_string();
    // The reason stays `None` until the scheduler has looked at the job:
    // on a loaded machine that can take a scheduling cycle or more.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(180);
    loop {
        let (_, r, _) = t.f.c.ssh(&format!("squeue -h -j {id} -o %r"));
        if r.trim() == "QOSGrpMemLimit" {
            return id;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "job {id}: reason {r:?}, not QOSGrpMemLimit, after 180 s"
        );
        std::thread::sleep(std::time::Duration::from_millis(300));
    }
}

#[test]
fn a_conversion_pending_on_a_memory_quota_is_resubmitted_once_on_the_cpu_partition() {
    let Some(t) = setup() else { return };
    let image = format!("registry.invalid#tao/held-{}:1", unique_id("mq"));
    let old = over_quota_conversion(&t, &image, None);
    // A job someone chained on the stuck conversion earlier.
    let (rc, earlier, e) = t.f.c.ssh(&format!(
        "cd /tmp && sbatch --parsable -J {} -p gpu --dependency=afterok:{old} --kill-on-invalid-dep=yes -o /dev/null --wrap true",
        unique_id("dep")
    ));
    assert_eq!(rc, 0, "{e}");
    let earlier = earlier.trim().to_string();

    let (code, got, stderr) = t.submit(&[t.line("mq", &image)]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("QOSGrpMemLimit") && stderr.contains("resubmitting it once"),
        "{stderr}"
    );
    // The stuck one is cancelled; one replacement, on the CPU partition,
    // with the profile's explicit CPUs and memory, marked as resubmitted.
    assert!(
        t.f.c
            .wait_state(&old, 180, common::ended)
            .starts_with("CANCELLED"),
        "{}",
        show(&t, &old)
    );
    let jobs = t.f.c.jobs_named(&conv_name(&image));
    let new: Vec<&String> = jobs.keys().filter(|k| **k != old).collect();
    assert_eq!(new.len(), 1, "{jobs:?}");
    let new = new[0].clone();
    let s = show(&t, &new);
    for want in [
        "Partition=cpu_long",
        "NumCPUs=1",
        "MinMemoryNode=512M",
        "Comment=tao-slurm:resubmitted-after-memory-quota",
    ] {
        assert!(s.contains(want), "{want}: {s}");
    }
    assert!(
        !s.contains("gres/gpu") && !s.contains("QOS=tao-memcap"),
        "{s}"
    );
    // The new line and the earlier job both wait for the replacement.
    assert_eq!(got[0]["slurm"]["dependency"], format!("afterok:{new}"));
    assert!(
        show(&t, &earlier).contains(&format!("Dependency=afterok:{new}")),
        "{}",
        show(&t, &earlier)
    );
    std::fs::write(&t.release, "").unwrap();
    assert_eq!(t.f.c.wait_state(&new, 180, common::ended), "COMPLETED");
    for job in [got[0]["slurm"]["job_id"].as_str().unwrap(), &earlier] {
        assert_eq!(t.f.c.wait_state(job, 180, common::ended), "COMPLETED");
    }

    // Once: a conversion that was already resubmitted is kept, with a warning.
    let image2 = format!("registry.invalid#tao/held-{}:1", unique_id("mq"));
    let stuck = over_quota_conversion(
        &t,
        &image2,
        Some("tao-slurm:resubmitted-after-memory-quota"),
    );
    let (code, got, stderr) = t.submit(&[t.line("mq2", &image2)]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("still pending on QOSGrpMemLimit after its one resubmission"),
        "{stderr}"
    );
    assert_eq!(
        t.f.c.jobs_named(&conv_name(&image2)).len(),
        1,
        "no second resubmission"
    );
    assert_eq!(got[0]["slurm"]["dependency"], format!("afterok:{stuck}"));
    let _ = t.f.c.ssh(&format!("scancel {stuck}"));
    let base = t.f.c.var("SLURM_BASE_RESULTS_DIR");
    let sqsh = got[0]["script"]["image"]["sqsh"].as_str().unwrap();
    let _ = t.f.c.ssh(&format!(
        "rm -rf -- {sqsh} {base}/jobs/{} {base}/jobs/{}",
        conv_name(&image),
        conv_name(&image2)
    ));
}

#[test]
fn reconvert_latest_converts_a_cached_latest_image_again_and_only_latest() {
    let Some(t) = setup() else { return };
    // "held": both conversions wait for the release, so both GPU jobs are
    // chained on them (a conversion that ended first would be no dependency).
    let latest = format!("registry.invalid#tao/held-{}:latest", unique_id("rl"));
    let pinned = format!("registry.invalid#tao/held-{}:1", unique_id("rp"));
    // Fill the cache for both.
    let (code, got, stderr) = t.submit(&[t.line("r1", &latest), t.line("r2", &pinned)]);
    assert_eq!(code, 0, "{stderr}");
    let convs: Vec<String> = got
        .iter()
        .map(|l| {
            l["slurm"]["dependency"]
                .as_str()
                .unwrap_or_else(|| panic!("no dependency: {l}"))
                .trim_start_matches("afterok:")
                .to_string()
        })
        .collect();
    std::fs::write(&t.release, "").unwrap();
    for conv in &convs {
        assert_eq!(t.f.c.wait_state(conv, 180, common::ended), "COMPLETED");
    }
    let sqsh = |l: &Value| l["script"]["image"]["sqsh"].as_str().unwrap().to_string();
    let (sq_latest, sq_pinned) = (sqsh(&got[0]), sqsh(&got[1]));
    let inode = |p: &str| t.f.c.ssh(&format!("stat -c %i {p}")).1.trim().to_string();
    let (ino_latest, ino_pinned) = (inode(&sq_latest), inode(&sq_pinned));

    // Without the option: both are cache hits.
    let (code, got, stderr) = t.submit(&[t.line("r3", &latest)]);
    assert_eq!(code, 0, "{stderr}");
    assert!(got[0]["slurm"].get("dependency").is_none(), "{}", got[0]);

    // With it: the latest image is converted again by its own job; the pinned one is not.
    let (code, got, stderr) = t.submit_with(
        &["--reconvert-latest"],
        &[t.line("r4", &latest), t.line("r5", &pinned)],
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("reconverted (--reconvert-latest)"),
        "{stderr}"
    );
    let re = tao_script::render::reconvert_job_name(&latest).unwrap();
    let jobs = t.f.c.jobs_named(&re);
    assert_eq!(jobs.len(), 1, "{jobs:?}");
    let conv = jobs.keys().next().unwrap().clone();
    assert!(show(&t, &conv).contains("Partition=cpu_long"));
    assert_eq!(t.f.c.wait_state(&conv, 180, common::ended), "COMPLETED");
    assert!(got[1]["slurm"].get("dependency").is_none(), "{}", got[1]);
    for l in &got {
        let job = l["slurm"]["job_id"].as_str().unwrap();
        assert_eq!(t.f.c.wait_state(job, 180, common::ended), "COMPLETED");
    }
    assert_ne!(
        inode(&sq_latest),
        ino_latest,
        "the latest image was replaced"
    );
    assert_eq!(inode(&sq_pinned), ino_pinned, "the pinned image was kept");
    let (_, magic, _) = t.f.c.ssh(&format!("head -c 4 {sq_latest}"));
    assert_eq!(magic, "hsqs");
    let base = t.f.c.var("SLURM_BASE_RESULTS_DIR");
    let _ = t.f.c.ssh(&format!(
        "rm -rf -- {sq_latest} {sq_pinned} {base}/jobs/{} {base}/jobs/{} {base}/jobs/{re}",
        conv_name(&latest),
        conv_name(&pinned)
    ));
}

#[test]
fn registry_image_converts_on_cpu_chains_the_gpu_job_shares_and_then_hits_the_cache() {
    let Some(t) = setup() else { return };
    // "held": the conversion cannot finish before the test releases it, so
    // both lines of the batch must chain on the one conversion job.
    let image = format!("registry.invalid#tao/held-{}:1", unique_id("img"));
    let (a, b) = (t.line("ia", &image), t.line("ib", &image));
    let (code, got, stderr) = t.submit(&[a, b]);
    assert_eq!(code, 0, "{stderr}");
    let conv_jobs = t.f.c.jobs_named(&conv_name(&image));
    assert_eq!(
        conv_jobs.len(),
        1,
        "one conversion shared by both: {conv_jobs:?}"
    );
    let conv = conv_jobs.keys().next().unwrap().clone();
    for l in &got {
        assert_eq!(l["slurm"]["dependency"], format!("afterok:{conv}"), "{l}");
        let job = l["slurm"]["job_id"].as_str().unwrap();
        let (_, show, _) = t.f.c.ssh(&format!("scontrol show job -o {job}"));
        assert!(
            show.contains(&format!("Dependency=afterok:{conv}")),
            "{show}"
        );
    }
    let (_, show, _) = t.f.c.ssh(&format!("scontrol show job -o {conv}"));
    assert!(
        show.contains("Partition=cpu_long"),
        "conversion on the CPU partition: {show}"
    );
    assert!(
        !show.contains("gres/gpu"),
        "no GPU for the conversion: {show}"
    );
    // The conversion builds the cache; then the GPU jobs run.
    std::fs::write(&t.release, "").unwrap();
    assert_eq!(t.f.c.wait_state(&conv, 180, common::ended), "COMPLETED");
    let sqsh = got[0]["script"]["image"]["sqsh"].as_str().unwrap();
    let (_, magic, _) = t.f.c.ssh(&format!("head -c 4 {sqsh}"));
    assert_eq!(magic, "hsqs");
    for l in &got {
        let job = l["slurm"]["job_id"].as_str().unwrap();
        assert_eq!(
            t.f.c.wait_state(job, 180, |s| s == "COMPLETED"
                || s == "FAILED"
                || s.starts_with("CANCELLED")),
            "COMPLETED"
        );
    }
    // Cache hit: no new conversion, no dependency.
    let (code, got, stderr) = t.submit(&[t.line("ic", &image)]);
    assert_eq!(code, 0, "{stderr}");
    assert!(got[0]["slurm"].get("dependency").is_none(), "{}", got[0]);
    assert_eq!(t.f.c.jobs_named(&conv_name(&image)).len(), 1);
    let base = t.f.c.var("SLURM_BASE_RESULTS_DIR");
    let _ = t.f.c.ssh(&format!(
        "rm -rf -- {sqsh} {base}/jobs/{}",
        conv_name(&image)
    ));
}

#[test]
fn a_failed_or_truncated_conversion_fails_the_gpu_job_without_fallback() {
    let Some(t) = setup() else { return };
    for kind in ["fail", "truncate"] {
        // "held": the conversion fails only after the test released it, so
        // the GPU job is chained on it before Slurm can judge the dependency.
        let _ = std::fs::remove_file(&t.release);
        let image = format!("registry.invalid#tao/held-{kind}-{}:1", unique_id("bad"));
        let (code, got, stderr) = t.submit(&[t.line("if", &image)]);
        assert_eq!(code, 0, "{stderr}");
        let conv = got[0]["slurm"]["dependency"]
            .as_str()
            .unwrap_or_else(|| panic!("no dependency: {}", got[0]))
            .trim_start_matches("afterok:")
            .to_string();
        std::fs::write(&t.release, "").unwrap();
        let job = got[0]["slurm"]["job_id"].as_str().unwrap();
        assert_eq!(
            t.f.c.wait_state(&conv, 180, common::ended),
            "FAILED",
            "{kind}"
        );
        // The GPU job never runs: Slurm kills it for a dependency that can
        // never be met (when its scheduler next looks: bounded, generously).
        let st = t.f.c.wait_state(job, 180, common::ended);
        assert!(
            st.starts_with("CANCELLED") || st == "FAILED",
            "{kind}: GPU job ended {st}"
        );
        let jd = got[0]["storage"]["job_dir"].as_str().unwrap();
        let (_, logs, _) =
            t.f.c
                .ssh(&format!("cat {jd}/slurm-logs/*/main.out 2>/dev/null; true"));
        assert!(
            !logs.contains("step main: start"),
            "the GPU job ran: {logs}"
        );
        // No image in the cache, so no later job can pick up a bad file.
        let sqsh = got[0]["script"]["image"]["sqsh"].as_str().unwrap();
        let (_, ls, _) =
            t.f.c
                .ssh(&format!("test -e {sqsh} && echo present || echo absent"));
        assert_eq!(ls.trim(), "absent", "{kind}");
        let base = t.f.c.var("SLURM_BASE_RESULTS_DIR");
        let _ =
            t.f.c
                .ssh(&format!("rm -rf -- {base}/jobs/{}", conv_name(&image)));
    }
}

#[test]
fn a_given_sqsh_must_be_a_squashfs() {
    let Some(t) = setup() else { return };
    let base = t.f.c.var("SLURM_BASE_RESULTS_DIR").to_string();
    let tag = unique_id("sq");
    let (good, truncated, missing) = (
        format!("{base}/images/{tag}-good.sqsh"),
        format!("{base}/images/{tag}-truncated.sqsh"),
        format!("{base}/images/{tag}-missing.sqsh"),
    );
    let (rc, _, e) = t.f.c.ssh(&format!(
        "mkdir -p {base}/images && d=$(mktemp -d) && echo x > $d/f && mksquashfs $d {good} -noappend -quiet >/dev/null && head -c 3 {good} > {truncated} && rm -rf $d"
    ));
    assert_eq!(rc, 0, "{e}");
    let lines = [
        t.line("sg", &good),
        t.line("st", &truncated),
        t.line("sm", &missing),
    ];
    let ids: Vec<String> = lines
        .iter()
        .map(|l| l["id"].as_str().unwrap().to_string())
        .collect();
    let (code, got, stderr) = t.submit(&lines);
    assert_eq!(code, 1, "{stderr}");
    assert!(got[0]["slurm"]["job_id"].is_string(), "{}", got[0]);
    let m1 = got[1]["error"]["message"].as_str().unwrap();
    assert!(
        m1.contains("no hsqs magic") && m1.contains("never replaced by a registry pull"),
        "{m1}"
    );
    assert!(
        got[2]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("does not exist"),
        "{}",
        got[2]
    );
    assert!(t.f.c.jobs_named(&ids[1]).is_empty() && t.f.c.jobs_named(&ids[2]).is_empty());
    let _ = t.f.c.ssh(&format!("rm -f {good} {truncated}"));
}

/// TEST DOUBLE of sbatch (fault injection only): runs the real sbatch and,
/// for a job name with a mark file `cut-<name>` in @MARKS@, then kills this
/// SSH session (the nearest sshd ancestor) before the reply travels back.
const CUT_SBATCH: &str = r#"#!/bin/sh
# TEST DOUBLE of sbatch (tao-submit tests/image.rs): fault injection only.
name=
for a in "$@"; do case "$a" in --job-name=*) name=${a#--job-name=};; esac; done
if [ -z "$name" ] || [ ! -e "@MARKS@/cut-$name" ]; then exec @REAL@ "$@"; fi
rm -f "@MARKS@/cut-$name"
out=$(@REAL@ "$@")
echo "$out" > "@MARKS@/submitted-$name"
@KILL_SESSION_FN@
kill_session
"#;

#[test]
fn an_ambiguous_conversion_submit_adopts_the_new_job_never_an_older_conversion() {
    let Some(t) = setup() else { return };
    // "held": each conversion waits for the release, so the GPU job is
    // chained on it (one that ended first would be no dependency).
    let image = format!("registry.invalid#tao/held-{}:1", unique_id("ac"));
    let name = conv_name(&image);
    // An earlier conversion of the image, finished; then the cache file is
    // lost, so the next submit converts again under the same job name.
    let (code, got, stderr) = t.submit(&[t.line("a1", &image)]);
    assert_eq!(code, 0, "{stderr}");
    let old = got[0]["slurm"]["dependency"]
        .as_str()
        .unwrap_or_else(|| panic!("no dependency: {}", got[0]))
        .trim_start_matches("afterok:")
        .to_string();
    std::fs::write(&t.release, "").unwrap();
    assert_eq!(t.f.c.wait_state(&old, 180, common::ended), "COMPLETED");
    std::fs::remove_file(&t.release).unwrap();
    let sqsh = got[0]["script"]["image"]["sqsh"]
        .as_str()
        .unwrap()
        .to_string();
    let _ = t.f.c.ssh(&format!("rm -f -- {sqsh}"));

    // The conversion's sbatch reply is cut: the outcome is unknown.
    let (_, real, _) = t.f.c.ssh("command -v sbatch");
    let dir = tempfile::Builder::new()
        .prefix("tao-cut-")
        .tempdir()
        .unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let marks = dir.path().display().to_string();
    let wrapper = dir.path().join("sbatch");
    std::fs::write(
        &wrapper,
        CUT_SBATCH
            .replace("@MARKS@", &marks)
            .replace("@REAL@", real.trim())
            .replace("@KILL_SESSION_FN@", common::KILL_SESSION_FN),
    )
    .unwrap();
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(dir.path().join(format!("cut-{name}")), "").unwrap();
    let profile = std::fs::read_to_string(&t.profile).unwrap().replace(
        "remote_prefix = \"PATH=",
        &format!("remote_prefix = \"PATH={marks}:"),
    );
    let profile_path = dir.path().join("p.toml");
    std::fs::write(&profile_path, profile).unwrap();
    let out =
        t.f.cmd()
            .args(["--reconcile-wait", "5"])
            .env("TAO_SITE_PROFILE", &profile_path)
            .write_stdin(stdin_of(&[t.line("a2", &image)]))
            .output()
            .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("submit outcome unknown"), "{stderr}");
    let submitted = std::fs::read_to_string(dir.path().join(format!("submitted-{name}")))
        .expect("the cut sbatch ran");
    let new = submitted.trim().to_string();
    assert_ne!(new, old);
    let got = lines_of(&out.stdout);
    assert_eq!(
        got[0]["slurm"]["dependency"],
        format!("afterok:{new}"),
        "{}",
        got[0]
    );
    let jobs = t.f.c.jobs_named(&name);
    assert_eq!(
        jobs.len(),
        2,
        "the old and the new conversion, nothing cancelled: {jobs:?}"
    );
    assert_eq!(jobs[&old], "COMPLETED");
    std::fs::write(&t.release, "").unwrap();
    assert_eq!(t.f.c.wait_state(&new, 180, common::ended), "COMPLETED");
    let job = got[0]["slurm"]["job_id"].as_str().unwrap();
    assert_eq!(t.f.c.wait_state(job, 180, common::ended), "COMPLETED");
    let base = t.f.c.var("SLURM_BASE_RESULTS_DIR");
    let _ = t.f.c.ssh(&format!("rm -rf -- {sqsh} {base}/jobs/{name}"));
}
