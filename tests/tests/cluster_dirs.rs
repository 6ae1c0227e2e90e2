//! tests/cluster/up and its siblings refuse a directory another local
//! cluster owns (tests/cluster/owner: the marker file `.tao-cluster`, or
//! for a directory made before markers, what its script leaves there), with
//! one line naming the variable and the fix, and write nothing into it. CI
//! once ran `up` with the 24.11 pass's TAO_CLUSTER_DIR, which overwrote
//! the 24.11 cluster's env, known_hosts and authorized_keys.
//!
//! The scripts run as root (they start daemons); the refusal comes before
//! anything is written or started, so these cases start nothing.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output};

use tao_tests::text;

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

fn is_root() -> bool {
    let uid = Command::new("id").arg("-u").output().unwrap();
    text(&uid.stdout).trim() == "0"
}

/// Run `tests/cluster/<script>` in a clean environment plus `vars`.
fn run(script: &str, vars: &[(&str, &Path)]) -> Output {
    let mut c = Command::new("bash");
    c.arg(format!("{ROOT}/tests/cluster/{script}"))
        .env_clear()
        .env(
            "PATH",
            "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        )
        .env("HOME", "/root")
        .env("TAO_UP_TRANSPORT", "0");
    for (k, v) in vars {
        c.env(k, v);
    }
    c.output().unwrap()
}

/// Every file under `dir` with its bytes.
fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p.clone());
            }
            let bytes = if p.is_file() {
                std::fs::read(&p).unwrap()
            } else {
                Vec::new()
            };
            out.insert(p.strip_prefix(dir).unwrap().display().to_string(), bytes);
        }
    }
    out
}

/// A directory laid out as another cluster's, by `files` (path, text).
fn other_cluster(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (p, t) in files {
        let path = dir.path().join(p);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, t).unwrap();
    }
    dir
}

fn assert_refused(out: &Output, var: &str, dir: &Path, owner: &str) {
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    let want = format!(
        "cluster: error: {var}={} is the directory of cluster {owner},",
        dir.display()
    );
    let want_other = want.replacen("cluster: ", "cluster-24.11: ", 1);
    assert!(
        err.starts_with(&want) || err.starts_with(&want_other),
        "{err}"
    );
    assert!(err.contains(&format!("unset {var}")), "{err}");
}

#[test]
fn up_refuses_another_clusters_directory_and_writes_nothing() {
    if !is_root() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI runs the cluster scripts as root"
        );
        return;
    }
    let env = "export TAO_CLUSTER_DIR=/elsewhere\n";
    let cases = [
        // Marked by up-24.11.
        (
            other_cluster(&[
                (".tao-cluster", "24.11\n"),
                ("env", env),
                ("ssh/known_hosts", "[127.0.0.1]:2232 ssh-ed25519 AAAA\n"),
            ]),
            "24.11",
        ),
        // The 24.11 cluster's directory from before markers.
        (
            other_cluster(&[("debootstrap.log", "I: Retrieving\n"), ("env", env)]),
            "24.11",
        ),
        // Cluster b's, from before markers.
        (other_cluster(&[("dev/b1/nvidia0", "")]), "b"),
    ];
    for (dir, owner) in &cases {
        let before = snapshot(dir.path());
        let out = run("up", &[("TAO_CLUSTER_DIR", dir.path())]);
        assert_refused(&out, "TAO_CLUSTER_DIR", dir.path(), owner);
        assert_eq!(
            snapshot(dir.path()),
            before,
            "up wrote into {owner}'s directory"
        );
    }
    // up-24.11 pointed at the 22.05 cluster's directory.
    let main = other_cluster(&[(".tao-cluster", "22.05\n"), ("env", env)]);
    let before = snapshot(main.path());
    let out = run("up-24.11", &[("TAO_CLUSTER_2411_DIR", main.path())]);
    assert_refused(&out, "TAO_CLUSTER_2411_DIR", main.path(), "22.05");
    assert_eq!(snapshot(main.path()), before);
}
