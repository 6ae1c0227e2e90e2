//! Conventions every line-reading tool shares, checked on the built
//! binaries side by side (no cluster needed):
//!
//! - stdin a terminal: a one-line usage error naming stdin and the fix
//!   (`tao_core::cli::require_piped_stdin`), exit 2, nothing on stdout,
//!   instead of waiting silently for lines nobody types;
//! - a line that is not JSON, or lacks a field the tool requires, is bad
//!   input data: exit 65 and a `line 1` report on stderr (docs/CONTRACT.md);
//! - library code never calls `process::exit` (only a `main.rs` does).

use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use tao_tests::{bin, text};

/// Every way a tool reads job lines on stdin: (binary, arguments).
const READERS: &[(&str, &[&str])] = &[
    ("tao-render", &[]),
    ("tao-redact", &["lint"]),
    ("tao-submit", &[]),
    ("tao-submit", &["cancel"]),
    ("tao-submit", &["preflight", "--lines"]),
    ("tao-poll", &[]),
    ("tao-poll", &["logs"]),
    ("tao-classify", &[]),
    ("tao-record", &["mark"]),
];

/// A command for `tool args` with a cleared environment: only PATH, HOME
/// and TAO_STATE_DIR (an empty store in `home`).
fn tool(name: &str, args: &[&str], home: &std::path::Path) -> Command {
    let mut cmd = Command::new(bin(name));
    cmd.args(args)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", home)
        .env("TAO_STATE_DIR", home.join("state"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// Wait for `child` at most `limit`, polling; kill it and fail when it is
/// still running (the bug this file guards against is a silent wait).
fn wait_bounded(mut child: Child, limit: Duration, what: &str) -> Output {
    let start = Instant::now();
    loop {
        if child.try_wait().expect("try_wait").is_some() {
            return child.wait_with_output().expect("collecting output");
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().expect("collecting output");
            panic!(
                "{what} was still waiting after {limit:?} (stderr: {})",
                text(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn every_reader_refuses_a_terminal_on_stdin() {
    let home = tempfile::tempdir().unwrap();
    for (name, args) in READERS {
        let what = format!("{name} {}", args.join(" "));
        let pty = nix::pty::openpty(None, None).expect("openpty");
        let child = tool(name, args, home.path())
            .stdin(Stdio::from(pty.slave))
            .spawn()
            .unwrap_or_else(|e| panic!("spawning {what}: {e}"));
        let out = wait_bounded(child, Duration::from_secs(30), &what);
        drop(pty.master);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{what}: {err}");
        assert!(
            out.stdout.is_empty(),
            "{what}: stdout {:?}",
            text(&out.stdout)
        );
        assert_eq!(err.lines().count(), 1, "{what}: {err}");
        let prefix = format!("{name}: error: stdin is a terminal");
        assert!(err.starts_with(&prefix), "{what}: {err}");
        assert!(err.contains("pipe them in, e.g. `"), "{what}: {err}");
        assert!(err.contains(&format!("| {name}")), "{what}: {err}");
    }
}

/// Feed `input` to `name args`; the whole output.
fn feed(name: &str, args: &[&str], input: &str, home: &std::path::Path) -> Output {
    let what = format!("{name} {}", args.join(" "));
    let mut child = tool(name, args, home)
        .stdin(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("spawning {what}: {e}"));
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(input.as_bytes()).unwrap();
    }
    wait_bounded(child, Duration::from_secs(60), &what)
}

#[test]
fn a_line_that_is_not_json_is_bad_data_everywhere() {
    let home = tempfile::tempdir().unwrap();
    for (name, args) in READERS {
        if *args == ["logs"] {
            continue; // reads one line, checked below
        }
        let what = format!("{name} {}", args.join(" "));
        let out = feed(name, args, "not json\n", home.path());
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(65), "{what}: {err}");
        // Nothing to print for a line that is not JSON (preflight still
        // prints its report of the checks, without the line).
        let stdout = text(&out.stdout);
        if *args == ["preflight", "--lines"] {
            assert!(stdout.starts_with("{\"preflight\":"), "{what}: {stdout}");
        } else {
            assert!(stdout.is_empty(), "{what}: {stdout}");
        }
        assert!(
            err.contains("line 1, column 2: invalid JSON"),
            "{what}: {err}"
        );
    }
    let out = feed("tao-poll", &["logs"], "not json\n", home.path());
    assert_eq!(out.status.code(), Some(65), "{}", text(&out.stderr));
}

#[test]
fn a_line_missing_a_required_field_is_bad_data_everywhere() {
    let home = tempfile::tempdir().unwrap();
    // Tools that need the line's `id` (or, for lint, `script.text`).
    let needs_fields: &[(&str, &[&str], &str)] = &[
        ("tao-render", &[], "missing string field `id`"),
        (
            "tao-redact",
            &["lint"],
            "missing string field `script.text`",
        ),
        ("tao-submit", &[], "missing string field `id`"),
        ("tao-submit", &["cancel"], "missing string field `id`"),
        ("tao-record", &["mark"], "missing string field `id`"),
        ("tao-poll", &["logs"], "`id`"),
    ];
    for (name, args, says) in needs_fields {
        let what = format!("{name} {}", args.join(" "));
        let out = feed(name, args, "{}\n", home.path());
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(65), "{what}: {err}");
        // (`tao-poll logs` reads one line only and names no line number.)
        assert!(*args == ["logs"] || err.contains("line 1"), "{what}: {err}");
        assert!(err.contains(says), "{what}: {err}");
        // Loses nothing: a JSON object goes on, carrying `error.code = "data"`.
        let stdout = text(&out.stdout);
        if !stdout.is_empty() {
            let v: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
            assert_eq!(v["error"]["code"], "data", "{what}: {stdout}");
        }
    }
    // Filters that act only on some lines pass any other line on untouched
    // (tao-jobline(7)): a line that is not ERROR (classify), a line never
    // submitted (poll, with one warning). Nothing they need is missing.
    for (name, args) in [("tao-classify", &[][..]), ("tao-poll", &[])] {
        let out = feed(name, args, "{}\n", home.path());
        assert_eq!(out.status.code(), Some(0), "{name}: {}", text(&out.stderr));
        assert_eq!(text(&out.stdout), "{}\n", "{name}");
    }
}

/// Run `name args` with stdout and stderr on a terminal (a pty, TERM set,
/// NO_COLOR unset: where a colouring tool would colour); all it wrote.
fn on_a_terminal(name: &str, args: &[&str], home: &std::path::Path) -> (Option<i32>, Vec<u8>) {
    use std::io::Read;
    let what = format!("{name} {}", args.join(" "));
    let pty = nix::pty::openpty(None, None).expect("openpty");
    let err_side = pty.slave.try_clone().expect("dup pty");
    let mut cmd = tool(name, args, home);
    cmd.env("TERM", "xterm-256color")
        .stdin(Stdio::null())
        .stdout(Stdio::from(pty.slave))
        .stderr(Stdio::from(err_side));
    let child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("spawning {what}: {e}"));
    // The Command holds the slave ends until dropped: the reader sees the
    // end of output (EIO) only once every slave end is closed.
    drop(cmd);
    let mut master = std::fs::File::from(pty.master);
    let reader = std::thread::spawn(move || {
        let mut all = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            match master.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => all.extend_from_slice(&buf[..n]),
            }
        }
        all
    });
    let out = wait_bounded(child, Duration::from_secs(30), &what);
    (out.status.code(), reader.join().unwrap())
}

/// NO_COLOR is honoured by never printing colour: help, usage errors and
/// the terminal tables carry no escape sequence, even on a terminal.
#[test]
fn no_tool_prints_colour_on_a_terminal() {
    let home = tempfile::tempdir().unwrap();
    let cases: &[(&str, &[&str], i32)] = &[
        ("tao-record", &["--help"], 0),
        ("tao-record", &["open", "--time"], 2),
        ("tao-record", &["list"], 0),
        ("tao-render", &["--help"], 0),
        ("tao-render", &["--bogus"], 2),
        ("tao-redact", &["--help"], 0),
        ("tao-redact", &["lint", "--bogus"], 2),
        ("tao-submit", &["--help"], 0),
        ("tao-submit", &["cancel", "--wait", "x"], 2),
        ("tao-poll", &["--help"], 0),
        ("tao-poll", &["--intervl", "3"], 2),
        ("tao-poll", &["logs", "--help"], 0),
        ("tao-classify", &["--help"], 0),
        ("tao-classify", &["--max-attempts", "0"], 2),
    ];
    for (name, args, code) in cases {
        let (got, bytes) = on_a_terminal(name, args, home.path());
        let shown = text(&bytes);
        assert_eq!(got, Some(*code), "{name} {args:?}: {shown}");
        assert!(!bytes.is_empty(), "{name} {args:?} printed nothing");
        assert!(
            !bytes.contains(&0x1b),
            "{name} {args:?} printed an escape sequence: {shown:?}"
        );
    }
}

/// The shared line reader's bound (tao_core::jobline::MAX_LINE_BYTES, 64
/// MiB): a longer line is a line error naming its number and the bound,
/// read past in bounded memory, and the lines after it are still read
/// (tao-record mark goes on to line 3; tao-render, which stops at its
/// first bad line, has printed line 1).
#[test]
fn a_line_past_the_bound_is_a_line_error() {
    let home = tempfile::tempdir().unwrap();
    let out = tool(
        "tao-record",
        &[
            "open",
            "--dry-run",
            "--results-root",
            "/tmp/tao-long-line",
            "--image",
            "nvcr.io#nvidia/tao/tao-toolkit:5.5.0-pyt",
            "--action",
            "train",
            "--network-arch",
            "dino",
            "--command",
            "true",
        ],
        home.path(),
    )
    .stdin(Stdio::null())
    .output()
    .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let line = text(&out.stdout).trim().to_string();
    let long = format!("{{\"id\":\"{}\"}}", "x".repeat((64 << 20) + 1));
    let input = format!("{line}\n{long}\n{line}\n");
    for (name, args, printed_line_1) in [
        ("tao-render", &[][..], true),
        ("tao-record", &["mark"][..], true),
    ] {
        let mut child = tool(name, args, home.path())
            .stdin(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let input = input.clone();
        let feeder = std::thread::spawn(move || {
            use std::io::Write;
            let _ = stdin.write_all(input.as_bytes());
        });
        let out = wait_bounded(child, Duration::from_secs(60), name);
        feeder.join().unwrap();
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(65), "{name}: {err}");
        assert!(
            err.contains("line 2: longer than 67108864 bytes, the bound on one job line"),
            "{name}: {err}"
        );
        assert_eq!(!out.stdout.is_empty(), printed_line_1, "{name}: {err}");
        if name == "tao-record" {
            // Lines 1 and 3 were read (their records do not exist).
            assert_eq!(err.matches("no record").count(), 2, "{err}");
        }
    }
}

/// Library code never ends the process (issue 13): only a binary's
/// `main.rs` calls `std::process::exit`, with the status the library
/// returned (`tao_core::cli::main_with`). Checked over every `src/` file
/// of the workspace's crates, comments excluded.
#[test]
fn library_code_never_calls_process_exit() {
    fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for e in std::fs::read_dir(&root).unwrap().flatten() {
        let src = e.path().join("src");
        if e.path().join("Cargo.toml").is_file() && src.is_dir() {
            walk(&src, &mut files);
        }
    }
    assert!(files.len() > 50, "found only {} source files", files.len());
    let mut found = Vec::new();
    for f in &files {
        if f.file_name().is_some_and(|n| n == "main.rs")
            || f.components().any(|c| c.as_os_str() == "bin")
        {
            continue;
        }
        let text = std::fs::read_to_string(f).unwrap();
        for (i, line) in text.lines().enumerate() {
            let code = line.trim_start();
            if !code.starts_with("//") && code.contains("process::exit(") {
                found.push(format!("{}:{}", f.display(), i + 1));
            }
        }
    }
    assert!(
        found.is_empty(),
        "process::exit in library code: {found:?}; return the status to main.rs instead"
    );
}
