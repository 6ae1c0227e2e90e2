//! Two clusters under one accounting (issue 18): a job submitted to the
//! second cluster `b` (tests/cluster/up-b: a 22.05 slurmctld sharing the
//! first cluster's slurmdbd) is polled, its log read and it is cancelled
//! through the FIRST cluster's login host, all with `-M b`; and jobs on both
//! clusters are polled in one round trip to that login host.
//!
//! The renderer has no cluster option: the test adds `#SBATCH --clusters=b`
//! to the rendered script before `tao-redact lint` approves it, as a site
//! template would carry it.

use std::os::unix::fs::PermissionsExt;

use serde_json::Value;
use tao_tests::{bash, parse_env_file, text, Cluster};

/// Cluster b's exports (`$TAO_CLUSTER_DIR/env-b`), or `None` (skip; a
/// failure under CI=true) when up-b has not run.
fn cluster_b() -> Option<Cluster> {
    let dir = std::env::var("TAO_CLUSTER_DIR").unwrap_or_else(|_| "/var/tmp/tao-cluster".into());
    let path = format!("{dir}/env-b");
    let problem = match std::fs::read_to_string(&path) {
        Ok(t) => {
            let c = Cluster {
                vars: parse_env_file(&t),
            };
            let out = c.ssh("squeue -M b -h -o %i");
            if out.status.success() {
                return Some(c);
            }
            format!("squeue -M b fails on the login host: {}", text(&out.stderr))
        }
        Err(e) => format!("{path}: {e}; run `TAO_CLUSTERS=b bash tests/cluster/up`"),
    };
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "CI=true and {problem}"
    );
    eprintln!("skipping: {problem}");
    None
}

/// The job line pipeline, with an extra `#SBATCH` line when `directive` is
/// not empty; keeps the approved line in `$TAO_STATE_DIR/<tag>.line` and
/// prints the submitted record line.
fn submit_script(tag: &str, directive: &str, command: &str) -> String {
    let edit = if directive.is_empty() {
        "cat".to_string()
    } else {
        format!("jq -c '.script.text |= sub(\"\\n\"; \"\\n{directive}\\n\") | del(.script.sha256)'")
    };
    format!(
        "tao-record open --platform slurm --action train --network-arch demo --gpus 1 --cpus-per-task 1 \
         --time 00:10:00 --command '{command}' | tao-render | {edit} | tao-redact lint > \"$TAO_STATE_DIR/{tag}.line\"\n\
         tao-submit < \"$TAO_STATE_DIR/{tag}.line\" | tao-record mark"
    )
}

fn json_lines(s: &str) -> Vec<Value> {
    s.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

#[test]
fn a_job_on_cluster_b_is_polled_logged_and_cancelled_through_the_first_login_host() {
    let Some(c) = cluster_b() else { return };
    let state = tempfile::tempdir().unwrap();
    let sd = state.path().to_str().unwrap();
    // squeue on the login host logs its parent shell and arguments: every
    // squeue of one remote command has the same parent.
    let dir = tempfile::Builder::new()
        .prefix("tao-multi-cluster-")
        .tempdir()
        .unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let log = dir.path().join("squeue.log");
    std::fs::write(&log, "").unwrap();
    std::fs::set_permissions(&log, std::fs::Permissions::from_mode(0o666)).unwrap();
    let wrap = dir.path().join("squeue");
    std::fs::write(
        &wrap,
        format!(
            "#!/bin/sh\n# Logs each call (test instrumentation), then the real squeue.\necho \"$PPID $*\" >> {}\nexec /usr/bin/squeue \"$@\"\n",
            log.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&wrap, std::fs::Permissions::from_mode(0o755)).unwrap();
    let profile = tao_tests::local_profile_with_path_first(dir.path(), dir.path());
    let prof = profile.to_str().unwrap();
    let env = [("TAO_STATE_DIR", sd), ("TAO_SITE_PROFILE", prof)];

    // One job on b, one on the first cluster; both wait (bounded).
    let wait = "echo hello-from-$SLURM_CLUSTER_NAME; for i in $(seq 300); do sleep 1; done";
    let out = bash(
        &c,
        &env,
        &format!(
            "{}\n{}\n",
            submit_script("b", "#SBATCH --clusters=b", wait),
            submit_script("a", "", wait)
        ),
    );
    assert!(out.status.success(), "submit: {}", text(&out.stderr));
    let lines = json_lines(&text(&out.stdout));
    assert_eq!(lines.len(), 2, "{lines:?}");
    let (on_b, on_a) = (&lines[0], &lines[1]);
    assert_eq!(on_b["slurm"]["cluster"], "b", "{on_b}");
    assert!(on_a["slurm"]["cluster"].is_null(), "{on_a}");
    assert_eq!(on_b["slurm"]["login_host"], on_a["slurm"]["login_host"]);
    let (id_b, id_a) = (
        on_b["id"].as_str().unwrap().to_string(),
        on_a["id"].as_str().unwrap().to_string(),
    );
    let sid_b = on_b["slurm"]["job_id"].as_str().unwrap().to_string();
    // The job is b's: b's controller knows it by its name.
    let q = c.ssh(&format!("squeue -M b -h -j {sid_b} -o %j"));
    assert_eq!(text(&q.stdout).trim(), id_b, "{}", text(&q.stderr));
    // The same line again: tao-submit looks the name up on b (-M b, from
    // the script's directive) and adopts the job instead of a second one.
    let out = bash(&c, &env, "tao-submit < \"$TAO_STATE_DIR/b.line\"");
    assert!(out.status.success(), "resubmit: {}", text(&out.stderr));
    let again = &json_lines(&text(&out.stdout))[0];
    assert_eq!(again["slurm"]["job_id"], sid_b.as_str(), "{again}");
    assert_eq!(again["slurm"]["cluster"], "b", "{again}");
    let q = c.ssh(&format!("squeue -M b -h -t all --name={id_b} -o %i"));
    assert_eq!(
        text(&q.stdout).trim(),
        sid_b,
        "one job on b: {}",
        text(&q.stderr)
    );

    // Both polled in one tao-poll run until both run (bounded).
    let poll = format!(
        "for i in $(seq 120); do\n  out=$(tao-record list --id {id_b} --id {id_a} | tao-poll | tao-record mark)\n  \
         [ \"$(jq -r .state <<<\"$out\" | sort -u)\" = RUNNING ] && {{ echo \"$out\"; exit 0; }}\n  sleep 1\ndone\necho \"$out\"; exit 1\n"
    );
    let out = bash(&c, &env, &poll);
    assert!(
        out.status.success(),
        "not both RUNNING: {}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    let polled = json_lines(&text(&out.stdout));
    let b_line = polled.iter().find(|l| l["id"] == id_b.as_str()).unwrap();
    assert_eq!(b_line["slurm"]["cluster"], "b");
    assert!(
        b_line["slurm"]["nodes"].as_str().unwrap().starts_with('b'),
        "b's nodes are b1, b2: {b_line}"
    );
    // The last poll asked both clusters in one remote command: its squeue
    // calls (one with -M b, one without) share a parent shell.
    let calls = std::fs::read_to_string(&log).unwrap();
    let last: Vec<&str> = calls
        .lines()
        .filter(|l| l.contains("-t all"))
        .rev()
        .take(2)
        .collect();
    assert_eq!(last.len(), 2, "{calls}");
    let parent = |l: &str| l.split(' ').next().unwrap().to_string();
    assert_eq!(parent(last[0]), parent(last[1]), "two round trips: {calls}");
    assert_eq!(
        last.iter().filter(|l| l.contains("-M b")).count(),
        1,
        "{calls}"
    );

    // Its log, read through the first login host.
    let out = bash(
        &c,
        &env,
        &format!(
            "for i in $(seq 60); do o=$(tao-poll logs {id_b}); grep -q hello-from-b <<<\"$o\" && {{ echo \"$o\"; exit 0; }}; sleep 1; done; echo \"$o\"; exit 1"
        ),
    );
    assert!(
        out.status.success(),
        "log of the job on b: {}{}",
        text(&out.stdout),
        text(&out.stderr)
    );

    // Cancelled with -M b; the job of the same number on the first cluster
    // (if any) is untouched; then polled CANCELED.
    let out = bash(
        &c,
        &env,
        &format!(
            "tao-record list --id {id_b} --id {id_a} | tao-submit cancel | tao-record mark >/dev/null\n\
             for i in $(seq 60); do out=$(tao-record list --id {id_b} | tao-poll | tao-record mark); \
             [ \"$(jq -r .state <<<\"$out\")\" = CANCELED ] && {{ echo \"$out\"; exit 0; }}; sleep 1; done; echo \"$out\"; exit 1"
        ),
    );
    assert!(
        out.status.success(),
        "cancel on b: {}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    let last = json_lines(&text(&out.stdout));
    assert!(
        last[0]["message"]
            .as_str()
            .unwrap()
            .starts_with("CANCELLED by"),
        "{}",
        last[0]
    );
    let q = c.ssh(&format!("squeue -M b -h -t all -j {sid_b} -o %T"));
    assert_eq!(text(&q.stdout).trim(), "CANCELLED", "{}", text(&q.stderr));
}
