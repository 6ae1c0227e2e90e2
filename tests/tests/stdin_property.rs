//! Every line-reading tool on generated stdin: never a panic, a documented
//! exit status, and stdout holding only whole JSON lines.
//!
//! Promise and source: "never a panic" (the charter: every promise is a
//! property over generated inputs) and docs/CONTRACT.md: a bad line is a
//! line error with a documented status (0, 1, 2, 3, 65, 69, 74-78; 70 is a
//! bug, a panic is 101) and the tools pass JSON lines, one per line, on
//! stdout. The built binaries run in a cleared environment (no cluster:
//! nothing here reaches Slurm), on inputs of 0 to 8 lines mixing random
//! bytes (invalid UTF-8 too), random JSON values, `{}` and lines cut or
//! edited from a real job line (`tao-record open --dry-run`), and very
//! long lines (64 KiB to 1 MiB: one byte repeated, or a job line with a
//! long field); lines end in `\n` or, one input in four, CRLF; the last
//! line may lack its end. Edited job lines never go to tao-submit (a valid one
//! would try to submit). 32 cases, each run through every reader but
//! tao-classify, which takes one case in three (its debug build compiles
//! the catalogue for 0.3 s per start): about 340 processes, 7 s.

use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

use proptest::prelude::*;
use tao_tests::{bin, dino_train, text, READERS};

/// Readers besides [`READERS`] that take job lines (or any text) on stdin.
const MORE_READERS: &[(&str, &[&str])] = &[("tao-redact", &[]), ("tao-record", &["retry"])];

/// The exit statuses a tool may end with on any input (`tao_core::exit`,
/// docs/CONTRACT.md), all but 70 (internal error, a bug).
const DOCUMENTED: &[i32] = &[0, 1, 2, 3, 65, 69, 74, 75, 76, 77, 78];

fn home() -> &'static tempfile::TempDir {
    static H: OnceLock<tempfile::TempDir> = OnceLock::new();
    H.get_or_init(|| tempfile::tempdir().unwrap())
}

fn tool(name: &str, args: &[&str]) -> Command {
    let home = home().path();
    let mut cmd = Command::new(bin(name));
    cmd.args(args)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", home)
        .env("TAO_STATE_DIR", home.join("state"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// A real job line, from `tao-record open --dry-run`.
fn job_line() -> &'static str {
    static L: OnceLock<String> = OnceLock::new();
    L.get_or_init(|| {
        let args = [
            &["open", "--dry-run"][..],
            &dino_train("/tmp/tao-stdin-property"),
            &["--command", "true"],
        ]
        .concat();
        let out = tool("tao-record", &args)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stdout).trim().to_string()
    })
}

fn feed(name: &str, args: &[&str], input: &[u8]) -> Output {
    let mut child = tool(name, args).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    // A tool may stop reading early (a bad line): the writer must not block it.
    let writer = std::thread::spawn(move || {
        use std::io::Write;
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

fn json_value() -> impl Strategy<Value = serde_json::Value> {
    use serde_json::Value;
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        "\\PC{0,12}".prop_map(Value::String),
        prop::sample::select(vec!["id", "ERROR", "SUBMITTED", "12345", "slurm", "error"])
            .prop_map(|s| Value::String(s.to_string())),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        let key = prop::sample::select(vec![
            "id", "state", "slurm", "job_id", "error", "script", "text", "request", "attempt",
            "image", "x",
        ]);
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(serde_json::Value::Array),
            prop::collection::vec((key, inner), 0..5).prop_map(|kv| {
                serde_json::Value::Object(kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
            }),
        ]
    })
}

/// One input line (no `\n`): (bytes, derived from a real job line).
fn line() -> impl Strategy<Value = (Vec<u8>, bool)> {
    prop_oneof![
        8 => prop::collection::vec(
            any::<u8>().prop_filter("no newline", |b| *b != b'\n'),
            0..80
        )
        .prop_map(|b| (b, false)),
        8 => json_value().prop_map(|v| (v.to_string().into_bytes(), false)),
        8 => Just((b"{}".to_vec(), false)),
        8 => (
            0.0..1.0f64,
            0.0..1.0f64,
            prop::collection::vec(any::<u8>(), 0..4)
        )
            .prop_map(|(a, b, ins)| {
                let mut l = job_line().as_bytes().to_vec();
                let (a, b) = (a.min(b), a.max(b));
                let (i, j) = ((a * l.len() as f64) as usize, (b * l.len() as f64) as usize);
                // Cut out a range and put a few random bytes there.
                let ins: Vec<u8> = ins.into_iter().filter(|b| *b != b'\n').collect();
                l.splice(i..j.min(i + 16), ins);
                (l, true)
            }),
        8 => Just((job_line().as_bytes().to_vec(), true)),
        // Very long lines (past every read buffer; below LineReader's
        // 64 MiB bound): one byte repeated, and a real job line with a
        // long unknown field in front. Rare: a debug build takes a while
        // to scan a megabyte.
        1 => (any::<u8>().prop_filter("no newline", |b| *b != b'\n'), 1usize << 16..1 << 20)
            .prop_map(|(b, n)| (vec![b; n], false)),
        1 => (1usize << 16..1 << 20).prop_map(|n| {
            let l = job_line();
            (format!("{{\"x_pad\":\"{}\",{}", "a".repeat(n), &l[1..]).into_bytes(), true)
        }),
    ]
}

/// Lines joined by `\n` or by CRLF (a file edited on Windows).
fn input() -> impl Strategy<Value = (Vec<u8>, bool)> {
    (
        prop::collection::vec(line(), 0..8),
        any::<bool>(),
        prop::bool::weighted(0.25),
    )
        .prop_map(|(lines, last_nl, crlf)| {
            let derived = lines.iter().any(|(_, d)| *d);
            let end: &[u8] = if crlf { b"\r\n" } else { b"\n" };
            let mut out = Vec::new();
            for (i, (l, _)) in lines.iter().enumerate() {
                if i > 0 {
                    out.extend_from_slice(end);
                }
                out.extend_from_slice(l);
            }
            if last_nl && !lines.is_empty() {
                out.extend_from_slice(end);
            }
            (out, derived)
        })
}

proptest! {
    #![proptest_config(tao_core::testing::config(32))]

    /// See the module doc.
    #[test]
    fn every_reader_on_any_stdin_exits_documented_with_whole_json_lines(
        (input, derived) in input(),
        classify in prop::bool::weighted(1.0 / 3.0),
    ) {
        for (name, args) in READERS.iter().chain(MORE_READERS) {
            if (derived && *name == "tao-submit") || (!classify && *name == "tao-classify") {
                continue;
            }
            let what = format!("{name} {}", args.join(" "));
            let out = feed(name, args, &input);
            let err = text(&out.stderr);
            let code = out.status.code();
            prop_assert!(
                code.is_some_and(|c| DOCUMENTED.contains(&c)),
                "{}: status {:?} on {:?}: {}", what, out.status, String::from_utf8_lossy(&input), err
            );
            prop_assert!(!err.contains("panicked"), "{}: {}", what, err);
            if code != Some(0) {
                prop_assert!(!err.is_empty(), "{}: exit {:?} with nothing on stderr", what, code);
            }
            // `tao-poll logs` prints a log, `tao-redact` the filtered text:
            // not job lines.
            if *args == ["logs"] || (*name == "tao-redact" && args.is_empty()) {
                continue;
            }
            let stdout = &out.stdout;
            prop_assert!(
                stdout.is_empty() || stdout.ends_with(b"\n"),
                "{}: a half line on stdout: {}", what, text(stdout)
            );
            for l in text(stdout).lines() {
                prop_assert!(
                    serde_json::from_str::<serde_json::Value>(l).is_ok(),
                    "{}: stdout line is not JSON: {}", what, l
                );
            }
        }
    }
}
