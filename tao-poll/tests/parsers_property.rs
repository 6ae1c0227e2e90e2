//! tao-poll's readers of remote text as properties over generated replies:
//! never a panic, and the bounds they document.
//!
//! Promise: "never a panic" on remote text (the charter: every promise is
//! a property over generated inputs; docs/CONTRACT.md: a reply that cannot
//! be read is exit 76 or a line error, never a crash). Remote text is what
//! the status script prints (`status::parse_output`: markers, `stat`
//! lines, `tail -v` headers, status.json and completion.json records, log
//! tails), `squeue --start` (`backend::parse_starts`), reason codes and
//! job ids typed by users (`observe::JobRef::parse`). Generated texts mix
//! those pieces with arbitrary Unicode (multi-byte characters, so that
//! sizes and cuts fall inside them); 256 cases each. And the binary on
//! edited replay replies (squeue, sacct, scontrol, `squeue --start`): a
//! documented exit status and only whole JSON lines on stdout; 48 cases.

use proptest::prelude::*;
use tao_poll::observe::{never_starts_hint, JobRef};
use tao_poll::status::{
    cap_tail, completion, parse_output, parse_progress, status_line, status_verdict, ProgressTail,
    Tail,
};

const NONCE: &str = "n0nce";

/// Text with the multi-byte characters a log or a message may hold.
fn text() -> impl Strategy<Value = String> {
    prop_oneof!["\\PC{0,24}", "[a-z \u{e9}\u{20ac}\u{1f600}\n|:]{0,24}",]
}

/// One piece of a status script's output.
fn piece() -> impl Strategy<Value = String> {
    let path = prop::sample::select(vec![
        "/j/status.json",
        "/j/completion.json",
        "/j/log",
        "/j/x y",
    ]);
    let tag = prop::sample::select(vec![
        "P", "PT", "PS", "PR", "PU", "PE", "S", "K", "C", "T", "E", "Z",
    ]);
    prop_oneof![
        (tag, path.clone(), 0u32..40).prop_map(|(t, p, n)| match t {
            "T" => format!("@@tao-poll-{NONCE} T {n} {p}\n"),
            "P" | "PT" | "PS" | "PR" | "PU" | "PE" | "E" | "K" =>
                format!("@@tao-poll-{NONCE} {t}\n"),
            _ => format!("@@tao-poll-{NONCE} {t} {p}\n"),
        }),
        (0usize..80, -5i64..2_000_000_000, path.clone())
            .prop_map(|(s, m, p)| format!("{s} {m} {p}\n")),
        path.prop_map(|p| format!("==> {p} <==\n")),
        (
            prop::sample::select(vec!["RUNNING", "SUCCESS", "FAILURE", "STARTED"]),
            text(),
            0u32..9
        )
            .prop_map(|(s, m, e)| format!(
                "{{\"status\":\"{s}\",\"message\":{},\"epoch\":{e},\"kpi\":{{\"loss\":0.{e}}}}}\n",
                serde_json::Value::String(m)
            )),
        (any::<i64>(), text()).prop_map(|(c, s)| format!(
            "{{\"exit_code\":{c},\"slurm_job_id\":{}}}\n",
            serde_json::Value::String(s)
        )),
        text(),
    ]
}

fn script_output() -> impl Strategy<Value = String> {
    prop::collection::vec(piece(), 0..24).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(tao_core::testing::config(256))]

    /// The status script's output, any mix of its pieces: `parse_output`
    /// returns; every log tail keeps at most `TAIL_BYTES` and at most
    /// `tail_lines` lines; the end marker is reported only when present.
    #[test]
    fn parse_output_never_panics(out in script_output(), tail_lines in 0u32..8) {
        let (map, ended) = parse_output(&out, NONCE, tail_lines);
        if ended {
            let end = format!("@@tao-poll-{NONCE} E");
            prop_assert!(out.contains(&end));
        }
        for r in map.values() {
            if let tao_poll::status::PathRecord::Tail(t) = r {
                prop_assert!(t.lines.len() <= tail_lines as usize);
                let bytes: usize = t.lines.iter().map(|l| l.len() + 1).sum();
                prop_assert!(bytes <= tao_poll::status::TAIL_BYTES);
            }
        }
    }

    /// `parse_progress` (the `stat` lines and `tail -c` text of the
    /// progress section) on any pair of texts; each tail's progress and
    /// verdict are computed without a panic.
    #[test]
    fn parse_progress_never_panics(stat in script_output(), tail in script_output()) {
        for t in parse_progress(&stat, &tail).values() {
            let _ = t.progress();
            let _ = t.verdict_line();
        }
    }

    /// status.json and completion.json readers on any text: no panic;
    /// `completion`'s error is one line; a tail read in any mode gives a
    /// progress and a verdict without a panic.
    #[test]
    fn status_records_never_panic(
        t in script_output(),
        cut in any::<bool>(),
        lines_only in any::<bool>(),
        mtime in prop::option::of(any::<i64>()),
    ) {
        for l in t.lines() {
            let _ = status_line(l);
        }
        let _ = status_verdict(&t);
        if let Err(e) = completion(&t) {
            prop_assert!(!e.contains('\n'), "{}", e);
        }
        let size = Some(t.len() as u64);
        let tail = ProgressTail { text: t.clone(), cut, lines_only, mtime, size };
        let _ = tail.progress();
        let _ = tail.verdict_line();
    }

    /// `cap_tail` (status.rs: "the last lines that fit, or the end of the
    /// last line when even it does not fit"): at most `max` bytes (each
    /// line with its newline) for `max >= 1`; what stays is the original's
    /// last lines, or the end of its last line; `first_line` moves by the
    /// lines dropped.
    #[test]
    fn cap_tail_keeps_the_end(
        lines in prop::collection::vec(text(), 0..12),
        first in 0u64..1000,
        max in 1usize..64,
    ) {
        let lines: Vec<String> = lines.into_iter().map(|l| l.replace('\n', "")).collect();
        let mut t = Tail { first_line: first, lines: lines.clone(), present: true };
        cap_tail(&mut t, max);
        let bytes: usize = t.lines.iter().map(|l| l.len() + 1).sum();
        prop_assert!(bytes <= max, "{:?}", t);
        if lines.is_empty() {
            prop_assert!(t.lines.is_empty());
        } else if t.lines.len() == 1 && !lines.ends_with(&t.lines) {
            prop_assert!(lines.last().unwrap().ends_with(t.lines[0].as_str()));
        } else {
            prop_assert!(lines.ends_with(&t.lines), "{:?} {:?}", lines, t.lines);
            let dropped = (lines.len() - t.lines.len()) as u64;
            prop_assert_eq!(t.first_line, if first > 0 { first + dropped } else { 0 });
        }
    }

    /// `squeue --start` replies (`backend::parse_starts`): no panic, and
    /// every start is a normalised time (no `N/A`/`Unknown`).
    #[test]
    fn parse_starts_never_panics(t in script_output()) {
        for (_, start) in tao_poll::backend::parse_starts(&t) {
            prop_assert!(!start.is_empty() && start != "N/A" && start != "Unknown");
        }
    }

    /// `JobRef::parse` (observe.rs: an id not of the shape `123`,
    /// `123_4`, `123+0`, `123;cluster` is refused, "it would otherwise
    /// reach a remote command line"): whatever the text, an accepted id
    /// holds only digits, `_` and `+`, and a cluster only
    /// `[A-Za-z0-9_-]`; reason hints never panic.
    #[test]
    fn job_ref_accepts_only_shell_safe_ids(
        t in prop_oneof!["\\PC{0,30}", "[0-9_+;a-z$ `'-]{0,16}"],
        cluster in prop::option::of("[a-z-]{1,8}"),
    ) {
        if let Some(r) = JobRef::parse(&t, cluster.as_deref()) {
            prop_assert!(r.job_id.bytes().all(|b| b.is_ascii_digit() || b == b'_' || b == b'+'), "{:?}", r);
            if let Some(c) = &r.cluster {
                prop_assert!(c.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'), "{:?}", r);
            }
        }
        let _ = never_starts_hint(&t);
        let _ = tao_poll::reasons::explain(&t);
    }
}

/// `stat` lines (`size mtime path`) and `tail -v` text for up to three
/// files, the sizes unrelated to the text (a file that grew or shrank
/// between `stat` and `tail`).
fn stat_and_tail() -> impl Strategy<Value = (String, String)> {
    let path = prop::sample::select(vec!["/j/status.json", "/k/status.json", "/j/x y"]);
    prop::collection::vec(
        (path, 0usize..40, prop::collection::vec(piece(), 0..4)),
        0..4,
    )
    .prop_map(|files| {
        let mut stat = String::new();
        let mut tail = String::new();
        for (i, (p, size, body)) in files.iter().enumerate() {
            stat.push_str(&format!("{size} 1700000000 {p}\n"));
            if i > 0 {
                tail.push('\n');
            }
            tail.push_str(&format!("==> {p} <==\n{}", body.concat()));
        }
        (stat, tail)
    })
}

proptest! {
    #![proptest_config(tao_core::testing::config(256))]

    /// The progress section of the status script's output in its order
    /// (`P`, stat, `PT`, `tail -c` text, `PS`, stat, `PR`, `tail -n`
    /// text, `PU`, one letter per running file, `PE`), with sizes that do
    /// not match the text: `parse_output` returns, and each progress tail
    /// gives a progress and a verdict.
    #[test]
    fn progress_section_never_panics(
        (stat, tail) in stat_and_tail(),
        (run_stat, run_tail) in stat_and_tail(),
        letters in "[UCM]{0,4}",
        rest in script_output(),
    ) {
        let m = format!("@@tao-poll-{NONCE}");
        let out = format!("{m} P\n{stat}{m} PT\n{tail}\n{m} PS\n{run_stat}{m} PR\n{run_tail}\n{m} PU\n{letters}\n{m} PE\n{rest}\n{m} E\n");
        let (map, ended) = parse_output(&out, NONCE, 4);
        prop_assert!(ended);
        for r in map.values() {
            if let tao_poll::status::PathRecord::Progress(t) = r {
                let _ = t.progress();
                let _ = t.verdict_line();
            }
        }
    }
}

/// Found by `parse_progress_never_panics`: a header found mid-line (a file
/// that grew after `stat`, no newline before the next header) right after
/// a 4-byte character; the text before it was cut one byte short, inside
/// the character (a panic).
#[test]
fn a_header_after_a_multibyte_character_is_no_panic() {
    let map = parse_progress(
        "0 0 /j/status.json\n0 0 /j/x y\n",
        "==> /j/status.json <==\n\u{1190c}==> /j/x y <==\n",
    );
    assert_eq!(map["/j/status.json"].text, "\u{1190c}");
}

/// Found by `progress_section_never_panics`: a running job's status.json
/// whose size from `stat` ends inside a character of the `tail -n` text
/// (written in between): the bound was used as a byte index (a panic).
#[test]
fn a_size_inside_a_character_is_no_panic() {
    let m = format!("@@tao-poll-{NONCE}");
    let out = format!(
        "{m} P\n{m} PT\n\n{m} PS\n6 1700000000 /j/status.json\n{m} PR\n==> /j/status.json <==\n\u{10a60}\u{1d4a2}\n{m} PU\nU\n{m} PE\n{m} E\n"
    );
    let (map, ended) = parse_output(&out, NONCE, 4);
    assert!(ended);
    let key = tao_poll::status::progress_key("/j/status.json");
    assert!(map.contains_key(&key), "{map:?}");
}

/// A saved reply of the replay captures (tests/replays/), by file name.
fn capture(dir: &str, name: &str) -> String {
    let p = format!("{}/tests/replays/{dir}/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
}

/// A capture's reply with up to four pieces of generated text spliced in
/// at any byte (inside a row, a cell, a character), or cut short.
fn edited(text: String) -> impl Strategy<Value = String> {
    (
        prop::collection::vec((0.0..1.0f64, piece()), 0..4),
        prop::option::of(0.0..1.0f64),
    )
        .prop_map(move |(edits, cut)| {
            let mut t = text.clone();
            for (at, p) in edits {
                let mut i = ((at * t.len() as f64) as usize).min(t.len());
                while !t.is_char_boundary(i) {
                    i -= 1;
                }
                t.insert_str(i, &p);
            }
            if let Some(c) = cut {
                let mut i = ((c * t.len() as f64) as usize).min(t.len());
                while !t.is_char_boundary(i) {
                    i -= 1;
                }
                t.truncate(i);
            }
            t
        })
}

proptest! {
    #![proptest_config(tao_core::testing::config(48))]

    /// The binary on edited replay replies (`--replay-squeue`,
    /// `--replay-sacct`, `--replay-scontrol`, `--replay-squeue-start`,
    /// from the 22.05 captures) for the capture's job ids: a documented
    /// exit status (docs/CONTRACT.md; 70 is a bug, a panic 101), nothing
    /// that reads as a panic on stderr, and stdout only whole JSON lines.
    #[test]
    fn the_binary_on_edited_replies_exits_documented(
        squeue in edited(capture("slurm-22.05-capture", "squeue.txt")),
        sacct in edited(capture("slurm-22.05-capture", "sacct.txt")),
        scontrol in edited(capture("slurm-22.05-no-accounting", "scontrol.txt")),
        starts in edited("21|2026-12-02T10:00:00\n22|N/A\n23|1796135435\n".to_string()),
        no_accounting in any::<bool>(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let file = |name: &str, text: &str| {
            let p = dir.path().join(name);
            std::fs::write(&p, text).unwrap();
            p.to_str().unwrap().to_string()
        };
        let sacct = if no_accounting {
            format!("sacct: error: Slurm accounting storage is disabled\n{sacct}")
        } else {
            sacct
        };
        let ids = capture("slurm-22.05-capture", "ids");
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_tao-poll"))
            .env_clear()
            .args(["--replay-squeue", &file("squeue", &squeue)])
            .args(["--replay-sacct", &file("sacct", &sacct)])
            .args(["--replay-scontrol", &file("scontrol", &scontrol)])
            .args(["--replay-squeue-start", &file("starts", &starts)])
            .args(["--requeue", "false"])
            .args(ids.split_whitespace())
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        let code = out.status.code();
        prop_assert!(
            code.is_some_and(|c| [0, 1, 65, 75, 76].contains(&c)),
            "status {:?}: {}", out.status, err
        );
        prop_assert!(!err.contains("panicked"), "{}", err);
        prop_assert!(out.stdout.is_empty() || out.stdout.ends_with(b"\n"));
        let stdout = String::from_utf8_lossy(&out.stdout);
        for l in stdout.lines() {
            prop_assert!(serde_json::from_str::<serde_json::Value>(l).is_ok(), "{}", l);
        }
    }
}
