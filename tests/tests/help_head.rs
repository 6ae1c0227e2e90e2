//! Case `help-head` (issue 13, docs: README "Exit statuses"): no tool
//! panics when the reader of its output goes away early.
//!
//! For each of the six tools, each way it prints (`--help`, `-h`,
//! `--version`, a usage error, and a run that prints many lines: every
//! line-reading mode, render, redact and redact lint, classify, poll,
//! record mark, submit and submit cancel, is fed many input lines), the
//! output is read as `| head -c 1` (one byte, then the pipe is closed) and
//! as `| head -n 1` (one line), 50 times each, and once into a pipe closed
//! before the tool starts (every write fails: the deterministic case).
//! Asserted every time: no panic (no exit 101, no `panicked` on stderr);
//! help, version and usage errors keep their status (0, 0, 2), on any
//! tool; a run of a pure filter (render, redact, poll, classify) ends 0
//! quietly, and so does a reader (`tao-record list`); a run of a tool with
//! side effects (`tao-record open`, tao-submit) either delivered
//! everything (0) or says so and exits 74, never 0 with output lost (into
//! a pipe closed before the start it is always 74).
//!
//! No cluster needed: every run here stays local (tao-submit passes on a
//! line that already carries an error without connecting; tao-poll reads
//! replayed squeue/sacct text).

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use tao_tests::{bin, dino_train, text, TOOLS};

/// Runs per case (the case asks for 50).
const RUNS: usize = 50;

/// How the reader treats the tool's stdout.
#[derive(Clone, Copy, Debug)]
enum Reader {
    /// Read one byte, then close (`| head -c 1`).
    OneByte,
    /// Read up to the first newline, then close (`| head -n 1`).
    OneLine,
    /// The pipe's read end is closed before the tool starts.
    Closed,
}

/// What the test environment holds: a state dir, a job line, replay files.
struct Env {
    dir: tempfile::TempDir,
    job_line: String,
    /// The job line rendered by tao-render, for lint.
    rendered: String,
    /// The ids of the records `tao-record open` made, for mark.
    ids: Vec<String>,
}

/// `tao-record open` arguments of the request every record here is
/// opened with (`--dry-run` first when `dry_run`).
fn open_args(dry_run: bool) -> Vec<String> {
    let mut v = vec!["open"];
    if dry_run {
        v.push("--dry-run");
    }
    v.extend(dino_train("/tmp/tao-help-head"));
    v.extend(["--command", "echo hi"]);
    v.into_iter().map(String::from).collect()
}

/// Run `tao-record` [`open_args`] with the state under `dir`; asserts
/// success and returns the job line it printed.
fn open(dir: &Path, dry_run: bool) -> String {
    let out = base(&bin("tao-record"), dir)
        .args(open_args(dry_run))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    text(&out.stdout).trim().to_string()
}

impl Env {
    fn new() -> Env {
        let dir = tempfile::tempdir().unwrap();
        let job_line = open(dir.path(), true);
        // Three records for `tao-record list` and `mark`.
        let mut ids = Vec::new();
        for _ in 0..3 {
            let line: serde_json::Value = serde_json::from_str(&open(dir.path(), false)).unwrap();
            ids.push(line["id"].as_str().unwrap().to_string());
        }
        let mut render = base(&bin("tao-render"), dir.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        render
            .stdin
            .take()
            .unwrap()
            .write_all(format!("{job_line}\n").as_bytes())
            .unwrap();
        let out = render.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
        let rendered = text(&out.stdout).trim().to_string();
        let mut sq = String::new();
        for id in 1000..1300 {
            sq.push_str(&format!(
                "{id}|{id}|RUNNING|n1|1795979121|1795979122|N/A|0:01|0|None|\n"
            ));
        }
        std::fs::write(dir.path().join("squeue.txt"), sq).unwrap();
        std::fs::write(dir.path().join("sacct.txt"), "").unwrap();
        Env {
            dir,
            job_line,
            rendered,
            ids,
        }
    }

    fn path(&self, name: &str) -> String {
        self.dir.path().join(name).to_str().unwrap().to_string()
    }

    /// tao-poll's arguments reading the replayed squeue and sacct text.
    fn replay_args(&self) -> Vec<String> {
        vec![
            "--replay-squeue".to_string(),
            self.path("squeue.txt"),
            "--replay-sacct".to_string(),
            self.path("sacct.txt"),
        ]
    }
}

/// `bin` with a cleared environment and a state dir under `dir`.
fn base(bin: &Path, dir: &Path) -> Command {
    let mut c = Command::new(bin);
    c.env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", dir)
        .env("TAO_STATE_DIR", dir.join("state"));
    c
}

/// One way to make a tool print: arguments, stdin, and whether the run
/// has side effects (its lost output is then exit 74, not 0).
struct Case {
    tool: &'static str,
    args: Vec<String>,
    stdin: Vec<u8>,
    /// The exit status when all output is delivered.
    code: i32,
    /// The exit status when output was lost.
    lost: i32,
}

impl Case {
    /// A run that ends 0 when its output is delivered, `lost` when not
    /// (0 for one without side effects).
    fn run(tool: &'static str, args: Vec<String>, stdin: Vec<u8>, lost: i32) -> Case {
        Case {
            tool,
            args,
            stdin,
            code: 0,
            lost,
        }
    }
}

/// `args` as owned strings.
fn owned(args: &[&str]) -> Vec<String> {
    args.iter().map(|a| a.to_string()).collect()
}

fn cases(env: &Env) -> Vec<Case> {
    let mut v = Vec::new();
    for tool in TOOLS {
        for (args, code) in [
            (vec!["--help"], 0),
            (vec!["-h"], 0),
            (vec!["--version"], 0),
            (vec!["--no-such-flag"], 2),
        ] {
            v.push(Case {
                tool,
                args: owned(&args),
                stdin: Vec::new(),
                code,
                // Help and usage change nothing: the same status either way.
                lost: code,
            });
        }
    }
    // Subcommand help of the clap tools.
    for (tool, sub) in [
        ("tao-record", "open"),
        ("tao-submit", "cancel"),
        ("tao-poll", "logs"),
    ] {
        v.push(Case::run(tool, owned(&[sub, "--help"]), Vec::new(), 0));
    }
    // Runs that print many lines.
    let many_lines = format!("{}\n", env.job_line).repeat(40).into_bytes();
    v.push(Case::run("tao-render", vec![], many_lines, 0));
    v.push(Case::run(
        "tao-redact",
        vec![],
        "a line of log text\n".repeat(20_000).into_bytes(),
        0,
    ));
    v.push(Case::run(
        "tao-classify",
        owned(&["--list-rules"]),
        Vec::new(),
        0,
    ));
    let mut poll_args = env.replay_args();
    poll_args.extend((1000..1300).map(|i| i.to_string()));
    v.push(Case::run("tao-poll", poll_args, Vec::new(), 0));
    // Every line-reading mode fed many lines (tao_core::filter): the
    // pipe is closed after one output line.
    v.push(Case::run(
        "tao-redact",
        owned(&["lint"]),
        format!("{}\n", env.rendered).repeat(40).into_bytes(),
        0,
    ));
    v.push(Case::run(
        "tao-classify",
        vec![],
        format!("{}\n", env.job_line).repeat(400).into_bytes(),
        0,
    ));
    let polled: String = (1000..1300)
        .map(|id| format!("{{\"id\":\"j{id}\",\"slurm\":{{\"job_id\":\"{id}\"}}}}\n"))
        .collect();
    v.push(Case::run(
        "tao-poll",
        env.replay_args(),
        polled.into_bytes(),
        0,
    ));
    // A writer fed many lines: each mark applies (the first) or is a
    // duplicate (the others); its lost echo is exit 74.
    let marks: String = env
        .ids
        .iter()
        .map(|id| {
            format!(
                "{{\"id\":\"{id}\",\"state\":\"RUNNING\",\"observed_at\":\"2030-01-01T00:00:00Z\",\"observed_by\":\"tao-poll\"}}\n"
            )
        })
        .collect::<String>()
        .repeat(20);
    v.push(Case::run(
        "tao-record",
        owned(&["mark", "--json"]),
        marks.into_bytes(),
        74,
    ));
    // A reader: `list | head` changed nothing (exit 0 either way).
    v.push(Case::run(
        "tao-record",
        owned(&["list", "--json"]),
        Vec::new(),
        0,
    ));
    // A writer: the record is made, its line lost: exit 74.
    v.push(Case::run("tao-record", open_args(false), Vec::new(), 74));
    // A line that already carries an error is passed on unsubmitted.
    let mut failed: serde_json::Value = serde_json::from_str(&env.job_line).unwrap();
    failed["error"] = serde_json::json!({"tool": "x", "code": "data", "message": "m"});
    for sub in ["-q", "cancel"] {
        v.push(Case::run(
            "tao-submit",
            owned(&[sub]),
            format!("{failed}\n").repeat(40).into_bytes(),
            74,
        ));
    }
    v
}

/// Run `case` once with `reader`; return (exit status, stderr).
fn run_once(env: &Env, case: &Case, reader: Reader) -> (Option<i32>, String) {
    let mut cmd = base(&bin(case.tool), env.dir.path());
    cmd.args(&case.args)
        .stdin(Stdio::piped())
        .stderr(Stdio::piped());
    let (mut child, stdout) = match reader {
        Reader::Closed => {
            let (r, w) = std::io::pipe().unwrap();
            drop(r);
            let child = cmd.stdout(w).spawn().unwrap();
            (child, None)
        }
        _ => {
            let mut child = cmd.stdout(Stdio::piped()).spawn().unwrap();
            let out = child.stdout.take();
            (child, out)
        }
    };
    let input = case.stdin.clone();
    let mut stdin = child.stdin.take().unwrap();
    let feeder = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    if let Some(mut out) = stdout {
        let mut byte = [0u8; 1];
        match reader {
            Reader::OneByte => {
                let _ = out.read(&mut byte);
            }
            Reader::OneLine => while out.read(&mut byte).unwrap_or(0) == 1 && byte[0] != b'\n' {},
            Reader::Closed => unreachable!(),
        }
        drop(out);
    }
    let mut err = Vec::new();
    child.stderr.take().unwrap().read_to_end(&mut err).unwrap();
    let status = child.wait().unwrap();
    feeder.join().unwrap();
    (status.code(), text(&err))
}

fn check(env: &Env, case: &Case, reader: Reader, runs: usize) {
    for run in 0..runs {
        let (code, err) = run_once(env, case, reader);
        let what = format!(
            "{} {} ({reader:?}, run {run})",
            case.tool,
            case.args
                .iter()
                .take(3)
                .cloned()
                .collect::<Vec<_>>()
                .join(" ")
        );
        assert!(!err.contains("panicked"), "{what}: panicked: {err}");
        assert_ne!(code, Some(101), "{what}: {err}");
        let code = code.unwrap_or_else(|| panic!("{what}: killed by a signal: {err}"));
        match reader {
            Reader::Closed if case.lost != case.code => {
                assert_eq!(code, case.lost, "{what}: {err}");
            }
            _ => assert!(
                code == case.code || code == case.lost,
                "{what}: exit {code}, expected {} or {}: {err}",
                case.code,
                case.lost
            ),
        }
        if code == case.lost && case.lost != case.code {
            // Lost output of a tool with side effects is said, in one line.
            assert!(
                err.contains(&format!("{}: error: ", case.tool)) && err.contains("Broken pipe"),
                "{what}: {err}"
            );
        }
        if code == 0 {
            assert!(
                !err.contains("error"),
                "{what}: quiet exit 0 with an error on stderr: {err}"
            );
        }
    }
}

#[test]
fn help_head() {
    let env = Env::new();
    let cases = cases(&env);
    // Four cases at a time (each run is a process; the runs of one case
    // stay in order).
    let per = cases.len().div_ceil(4);
    std::thread::scope(|sc| {
        for chunk in cases.chunks(per) {
            let env = &env;
            sc.spawn(move || {
                for case in chunk {
                    check(env, case, Reader::Closed, 1);
                    check(env, case, Reader::OneByte, RUNS);
                    check(env, case, Reader::OneLine, RUNS);
                }
            });
        }
    });
}

#[test]
fn help_head_stderr_closed() {
    // A usage error whose stderr reader went away (`2>&1 | head -c 1`)
    // still exits 2, without a panic.
    let env = Env::new();
    for tool in TOOLS {
        for _ in 0..RUNS {
            let (r, w) = std::io::pipe().unwrap();
            drop(r);
            let status = base(&bin(tool), env.dir.path())
                .arg("--no-such-flag")
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(w)
                .status()
                .unwrap();
            assert_eq!(status.code(), Some(2), "{tool}");
        }
    }
}
