//! tao-submit's parsers on the replies of both Slurm versions the project
//! is tested on, without a cluster: `tests/replays/slurm-<version>/` holds
//! what `tests/cluster/capture-replays` saved on the local 22.05 cluster
//! and on the 24.11 one (see each directory's README). Where the versions
//! differ, the test says so.

use std::path::PathBuf;

use tao_submit::{image, sched};

const VERSIONS: &[&str] = &["22.05", "24.11"];

fn dir(v: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/replays")
        .join(format!("slurm-{v}"))
}

fn read(v: &str, f: &str) -> String {
    let p = dir(v).join(f);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// (held job id, job id that depends on it), as the capture saved them.
fn held_and_dependent(v: &str) -> (String, String) {
    let ids = read(v, "dependents.ids");
    let mut it = ids.split_whitespace().map(str::to_string);
    (it.next().unwrap(), it.next().unwrap())
}

#[test]
fn every_version_was_captured_from_its_own_slurm() {
    for v in VERSIONS {
        let version = read(v, "version");
        assert!(
            version.trim().ends_with(&format!(" {v}.8")) || version.contains(&format!(" {v}.")),
            "{v}: {version}"
        );
    }
}

#[test]
fn sbatch_replies_parse_alike() {
    for v in VERSIONS {
        for f in [
            "sbatch-hold-parsable.txt",
            "sbatch-parsable.txt",
            "sbatch-plain.txt",
        ] {
            let text = read(v, f);
            let got = sched::parse_sbatch(&text).unwrap();
            let (id, cluster) = got.unwrap_or_else(|| panic!("{v} {f}: no id in {text:?}"));
            assert!(id.bytes().all(|b| b.is_ascii_digit()), "{v} {f}: {id}");
            assert!(text.contains(&id), "{v} {f}");
            assert_eq!(cluster, None, "{v} {f}: a single cluster names none");
        }
    }
}

#[test]
fn nodes_parse_alike_though_24_11_prints_other_fields() {
    for v in VERSIONS {
        let text = read(v, "nodes.txt");
        let nodes = sched::parse_nodes(&text);
        let names: Vec<&str> = nodes.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(names, ["n1", "n2"], "{v}");
        for n in &nodes {
            assert_eq!((n.cpus, n.gpus), (8, 4), "{v} {}", n.name);
            assert_eq!(n.partitions, ["gpu", "cpu_long"], "{v} {}", n.name);
        }
        // The difference: 24.11 dropped the power fields and added
        // ResumeAfterTime; the parser reads neither.
        match *v {
            "22.05" => assert!(text.contains("CapWatts=") && !text.contains("ResumeAfterTime=")),
            _ => assert!(!text.contains("CapWatts=") && text.contains("ResumeAfterTime=")),
        }
    }
}

#[test]
fn jobs_by_name_parse_alike() {
    for v in VERSIONS {
        let (held, _) = held_and_dependent(v);
        let found = sched::parse_by_name(&read(v, "by-name.txt"), &["wrap"], "login").unwrap();
        let h = found
            .get(&held)
            .unwrap_or_else(|| panic!("{v}: held job {held} missing"));
        assert_eq!(h.state, "PENDING", "{v}");
        assert_eq!(h.reason.as_deref(), Some("JobHeldUser"), "{v}");
        assert!(
            found.values().any(|f| f.state == "COMPLETED"),
            "{v}: {found:?}"
        );
        // sacct adds who cancelled; squeue does not (both versions).
        assert!(read(v, "by-name.txt").contains("|CANCELLED by 0"), "{v}");
    }
}

#[test]
fn queue_view_and_dependents_parse_alike() {
    for v in VERSIONS {
        let (held, dep) = held_and_dependent(v);
        let q = image::parse_queue_view(&read(v, "queue-view.txt")).unwrap();
        assert_eq!(
            (q.state.as_str(), q.reason.as_str()),
            ("PENDING", "JobHeldUser"),
            "{v}"
        );
        assert_eq!(q.comment, "(null)", "{v}");
        assert_eq!(
            image::parse_dependents(&read(v, "dependents.txt"), &held),
            vec![dep.clone()],
            "{v}"
        );
        let show = read(v, "show-job-dependent.txt");
        let d = show
            .split_whitespace()
            .find_map(|w| w.strip_prefix("Dependency="))
            .unwrap();
        assert!(d.starts_with(&format!("afterok:{held}")), "{v}: {d}");
    }
}

#[test]
fn show_job_names_tres_differently() {
    // The difference: 22.05 prints `TRES=`, 24.11 `ReqTRES=` and
    // `AllocTRES=` (and `NumNodes=1-1` for a pending job). The tools read
    // only JobState, Reason, Dependency, ExitCode and the times.
    for v in VERSIONS {
        let show = read(v, "show-job.txt");
        for k in [
            "JobState=PENDING",
            "Reason=JobHeldUser",
            "Dependency=",
            "ExitCode=0:0",
        ] {
            assert!(show.contains(k), "{v}: {k}");
        }
        match *v {
            "22.05" => assert!(show.contains(" TRES=") && !show.contains("ReqTRES=")),
            _ => assert!(show.contains(" ReqTRES=") && show.contains(" AllocTRES=")),
        }
    }
}
