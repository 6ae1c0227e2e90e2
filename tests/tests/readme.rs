//! The README's runnable blocks, run as written against the local cluster
//! (issue: a fresh user's first pipeline failed as the README showed it).
//!
//! Convention (stated in the README): a fenced block whose info string is
//! `sh local` runs as written on the local cluster. All such blocks run in
//! README order in one bash (`set -euo pipefail`), as a user pasting them
//! into one terminal would, from a directory that has the checkout's
//! `examples/` (so `examples/demo/spec.yaml` resolves) and its own record
//! store. A line `# => TEXT` in a block says what the block prints: the
//! block's standard output must contain TEXT. The one rewrite: the README's
//! `/var/tmp/tao-cluster/env` becomes the env file of the cluster under test
//! (`$TAO_CLUSTER_DIR/env`).

use std::path::Path;

use tao_tests::{bash_in, cluster, env_file, text};

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

/// A runnable block: the README line of its opening fence, its text.
#[derive(Debug, PartialEq)]
struct Block {
    line: usize,
    text: String,
}

/// The fenced blocks of `md` whose info string is exactly `sh local`.
fn runnable_blocks(md: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut open: Option<(bool, Block)> = None;
    for (i, line) in md.lines().enumerate() {
        let fence = line.trim_start().strip_prefix("```");
        match (&mut open, fence) {
            (None, Some(info)) => {
                let block = Block {
                    line: i + 1,
                    text: String::new(),
                };
                open = Some((info.trim() == "sh local", block));
            }
            (Some(_), Some(_)) => {
                let (keep, block) = open.take().unwrap();
                if keep {
                    blocks.push(block);
                }
            }
            (Some((_, block)), None) => {
                block.text.push_str(line);
                block.text.push('\n');
            }
            (None, None) => {}
        }
    }
    assert!(open.is_none(), "README: a fenced block is never closed");
    blocks
}

/// The `# => TEXT` expectations of a block.
fn expectations(block: &str) -> Vec<&str> {
    block
        .lines()
        .filter_map(|l| l.trim().strip_prefix("# =>"))
        .map(str::trim)
        .collect()
}

fn marker(line: usize) -> String {
    format!("@@ README block at line {line}")
}

#[test]
fn finds_only_blocks_marked_sh_local() {
    let md =
        "a\n```sh\nsite\n```\n```sh local\nx\n# => ok\n```\n    indented\n```sh local\ny\n```\n";
    let blocks = runnable_blocks(md);
    assert_eq!(
        blocks,
        vec![
            Block {
                line: 5,
                text: "x\n# => ok\n".into()
            },
            Block {
                line: 10,
                text: "y\n".into()
            },
        ]
    );
    assert_eq!(expectations(&blocks[0].text), vec!["ok"]);
}

#[test]
fn readme_has_runnable_blocks_with_outcomes() {
    let md = std::fs::read_to_string(format!("{ROOT}/README.md")).unwrap();
    let blocks = runnable_blocks(&md);
    assert!(
        blocks.len() >= 3,
        "README: only {} `sh local` blocks",
        blocks.len()
    );
    let all: String = blocks.iter().map(|b| b.text.as_str()).collect();
    for needed in [
        "tao-submit preflight",
        "tao-submit |",
        "tao-poll --watch",
        "COMPLETE",
    ] {
        assert!(
            all.contains(needed),
            "README's `sh local` blocks lack {needed:?}"
        );
    }
    assert!(
        !all.contains("--image"),
        "a `sh local` block passes --image, which runtime none refuses"
    );
}

#[test]
fn readme_runnable_blocks_run_on_the_local_cluster() {
    let Some(c) = cluster() else { return };
    let md = std::fs::read_to_string(format!("{ROOT}/README.md")).unwrap();
    let blocks = runnable_blocks(&md);
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(
        Path::new(ROOT).join("examples"),
        dir.path().join("examples"),
    )
    .unwrap();
    let env = env_file();
    let mut script = String::new();
    for b in &blocks {
        let m = marker(b.line);
        script.push_str(&format!("echo '{m}'; echo '{m}' >&2\n"));
        script.push_str(
            &b.text
                .replace("/var/tmp/tao-cluster/env", env.to_str().unwrap()),
        );
    }
    let state = dir.path().join("state");
    let out = bash_in(
        &c,
        // TMPDIR: the report block writes under it, outside the checkout.
        &[
            ("TAO_STATE_DIR", state.to_str().unwrap()),
            ("TMPDIR", dir.path().to_str().unwrap()),
        ],
        Some(dir.path()),
        &script,
    );
    let stdout = text(&out.stdout);
    let stderr = text(&out.stderr);
    let failed_at = stderr
        .lines()
        .rfind(|l| l.starts_with("@@ README block"))
        .unwrap_or("before the first block")
        .to_string();
    assert!(
        out.status.success(),
        "{failed_at} failed ({}):\nstderr:\n{stderr}\nstdout:\n{stdout}",
        out.status
    );
    for b in &blocks {
        let m = marker(b.line);
        let start = stdout.find(&m).expect("block marker in stdout") + m.len();
        let end = stdout[start..]
            .find("@@ README block")
            .map_or(stdout.len(), |e| start + e);
        let printed = &stdout[start..end];
        for want in expectations(&b.text) {
            assert!(
                printed.contains(want),
                "README block at line {}: its output lacks {want:?} (its `# =>` line):\n{printed}",
                b.line
            );
        }
    }
    let reports: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            n.starts_with("tao-report-") && n.ends_with(".html")
        })
        .collect();
    assert_eq!(
        reports.len(),
        1,
        "the README's report block wrote no $TMPDIR/tao-report-ID.html"
    );
}

/// The local usage line of examples/Makefile's header, as written.
fn makefile_local_line() -> String {
    let mk = std::fs::read_to_string(format!("{ROOT}/examples/Makefile")).unwrap();
    let lines: Vec<&str> = mk.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.contains("# the local cluster"))
        .expect("examples/Makefile names its local usage line");
    lines[at - 1].trim_start_matches('#').trim().to_string()
}

#[test]
fn examples_makefile_local_submit_runs_on_the_local_cluster() {
    let line = makefile_local_line();
    assert!(
        line.starts_with("make -f examples/Makefile submit "),
        "{line}"
    );
    let Some(c) = cluster() else { return };
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(
        Path::new(ROOT).join("examples"),
        dir.path().join("examples"),
    )
    .unwrap();
    let state = dir.path().join("state");
    let out = bash_in(
        &c,
        &[("TAO_STATE_DIR", state.to_str().unwrap())],
        Some(dir.path()),
        &format!("{line}\ntao-record list --json"),
    );
    let stdout = text(&out.stdout);
    assert!(
        out.status.success(),
        "{line} failed ({}):\n{}\n{stdout}",
        out.status,
        text(&out.stderr)
    );
    let rec: serde_json::Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    assert!(rec["slurm"]["job_id"].is_string(), "not submitted: {rec}");
    assert!(rec.get("error").is_none(), "submitted with an error: {rec}");
}

/// examples/Makefile's usage errors name the command as it must be typed
/// (`make -f examples/Makefile TARGET ...`, as its header does): a plain
/// `make submit` would run the project's own Makefile instead.
#[test]
fn examples_makefile_usage_errors_name_the_makefile() {
    for (target, var) in [("submit", "SPEC="), ("logs", "ID="), ("cancel", "ID=")] {
        let out = std::process::Command::new("make")
            .args(["-s", "-f", "examples/Makefile", target])
            .current_dir(ROOT)
            .env_remove("SPEC")
            .env_remove("ID")
            .output()
            .unwrap();
        let err = text(&out.stderr);
        assert!(!out.status.success(), "{target}: {err}");
        let usage = err.lines().next().unwrap_or("");
        assert!(
            usage.starts_with(&format!("usage: make -f examples/Makefile {target} {var}")),
            "{target}: {err}"
        );
    }
}

/// The tool and subcommand of each stage of a pipeline (`tao-record list`,
/// `tao-poll`, ...), flags and variables left out.
fn stages(pipeline: &str) -> Vec<String> {
    pipeline
        .replace("\\\n", " ")
        .split('|')
        .map(|s| {
            let w: Vec<&str> = s.split_whitespace().collect();
            match (w.first(), w.get(1)) {
                (Some(t), Some(sub)) if !sub.starts_with('-') => format!("{t} {sub}"),
                (Some(t), _) => t.to_string(),
                _ => String::new(),
            }
        })
        .collect()
}

/// `make -f examples/Makefile retry` ("classify failed jobs not classified
/// yet, resubmit the retryable ones") runs the README's cron pipeline: the
/// failures not classified yet are classified before `tao-record retry`
/// reads them (a retry stage fed unclassified lines skips them all).
#[test]
fn examples_makefile_retry_classifies_before_it_retries() {
    let out = std::process::Command::new("make")
        .args(["-s", "-n", "-f", "examples/Makefile", "retry"])
        .current_dir(ROOT)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let make = stages(&text(&out.stdout));
    let readme = std::fs::read_to_string(format!("{ROOT}/README.md")).unwrap();
    let at = readme
        .find("tao-record list --live | tao-poll --evidence")
        .expect("the README's cron pipeline");
    let end = readme[at..].find("tao-record mark\n\n").unwrap() + "tao-record mark".len();
    let cron = stages(&readme[at..at + end]);
    assert_eq!(make, cron);
    let classify = make.iter().position(|s| s == "tao-classify").unwrap();
    let retry = make.iter().position(|s| s == "tao-record retry").unwrap();
    assert!(classify < retry, "{make:?}");
}
