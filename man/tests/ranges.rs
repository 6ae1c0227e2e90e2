//! Every numeric option of every tool has a documented range, and a value
//! outside it is a usage error (exit 2, one line naming the option), never
//! a panic or an overflow (issue 16: `tao-poll --watch --interval
//! 18446744073709551615` panicked, and so did `--reconcile-wait`, `cancel
//! --wait` and `--probe-queue-wait`).
//!
//! The options are enumerated from the tools' own command lines
//! (`tao_man::commands::all()`, the source of the man pages): an option
//! whose value is `N` or `SECS` is numeric. Its help text must name its
//! range as `A-B`; clap's parser (the tool's own, or the mirror of a lexopt
//! tool) must accept A and B and refuse B+1 (and A-1); the built binary
//! must exit 2 without a panic on B+1, u64::MAX, 2^64, -1 and 1e3.
//!
//! Durations and times given as text (`--older-than`, `--since`, `--time`,
//! `--child-timeout`, `--at`) are checked the same way with huge values.

mod util;

use std::process::{Command, Stdio};

use util::tool_binary;

/// Value names of numeric options.
const NUMERIC: &[&str] = &["N", "SECS"];

struct Numeric {
    tool: &'static str,
    /// Subcommand path (empty for the top level).
    sub: Vec<String>,
    long: String,
    min: u64,
    max: u64,
}

/// The documented range `A-B` in a help text.
fn range_in(help: &str) -> Option<(u64, u64)> {
    let bytes: Vec<char> = help.chars().collect();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i].is_ascii_digit() && (i == 0 || !bytes[i - 1].is_ascii_alphanumeric()) {
            let a_start = i;
            while i < bytes.len() && (bytes[i].is_ascii_digit() || bytes[i] == '_') {
                i += 1;
            }
            if i < bytes.len() && bytes[i] == '-' {
                let b_start = i + 1;
                let mut j = b_start;
                while j < bytes.len() && (bytes[j].is_ascii_digit() || bytes[j] == '_') {
                    j += 1;
                }
                if j > b_start {
                    let a: String = bytes[a_start..i].iter().filter(|c| **c != '_').collect();
                    let b: String = bytes[b_start..j].iter().filter(|c| **c != '_').collect();
                    return Some((a.parse().ok()?, b.parse().ok()?));
                }
            }
        }
        i += 1;
    }
    None
}

fn numeric_options() -> Vec<(Numeric, clap::Command)> {
    fn walk(
        tool: &'static str,
        root: &clap::Command,
        path: Vec<String>,
        cmd: &clap::Command,
        out: &mut Vec<(Numeric, clap::Command)>,
    ) {
        for a in cmd.get_arguments() {
            let Some(names) = a.get_value_names() else {
                continue;
            };
            if !names.iter().any(|n| NUMERIC.contains(&n.as_str())) {
                continue;
            }
            let long = a.get_long().expect("numeric options are long options");
            let help = a.get_help().map(|h| h.to_string()).unwrap_or_default();
            let (min, max) = range_in(&help).unwrap_or_else(|| {
                panic!(
                    "{tool} {} --{long}: its help names no range A-B: {help:?}",
                    path.join(" ")
                )
            });
            out.push((
                Numeric {
                    tool,
                    sub: path.clone(),
                    long: long.to_string(),
                    min,
                    max,
                },
                root.clone(),
            ));
        }
        for s in cmd.get_subcommands() {
            let mut p = path.clone();
            p.push(s.get_name().to_string());
            walk(tool, root, p, s, out);
        }
    }
    let mut out = Vec::new();
    for (tool, cmd) in tao_man::commands::all() {
        walk(tool, &cmd, Vec::new(), &cmd, &mut out);
    }
    out
}

#[test]
fn numeric_options_are_enumerated() {
    let found: Vec<String> = numeric_options()
        .iter()
        .map(|(n, _)| format!("{} {} --{}", n.tool, n.sub.join(" "), n.long))
        .collect();
    // The ones the issue names are among them (the enumeration works).
    for want in [
        "tao-poll  --interval",
        "tao-submit  --reconcile-wait",
        "tao-submit cancel --wait",
        "tao-submit  --probe-queue-wait",
        "tao-submit  --probe-timeout",
        "tao-poll logs --lines",
        "tao-poll  --evidence-lines",
        "tao-record open --nodes",
        "tao-record open --gpus-per-node",
        "tao-record open --cpus-per-task",
        "tao-record open --attempt",
        "tao-classify  --max-attempts",
    ] {
        assert!(found.iter().any(|f| f == want), "{want} not in {found:#?}");
    }
}

#[test]
fn numeric_options_have_a_range_and_refuse_values_outside() {
    let mut checked = 0;
    for (n, cmd) in numeric_options() {
        let what = format!("{} {} --{}", n.tool, n.sub.join(" "), n.long);
        let argv = |v: &str| -> Vec<String> {
            let mut a = vec![n.tool.to_string()];
            a.extend(n.sub.iter().cloned());
            a.push(format!("--{}={v}", n.long));
            a
        };
        // The parser: both ends in, one past either end out.
        for v in [n.min, n.max] {
            let r = cmd.clone().try_get_matches_from(argv(&v.to_string()));
            assert!(
                r.as_ref().is_ok()
                    || r.as_ref().is_err_and(|e| {
                        e.kind() == clap::error::ErrorKind::MissingRequiredArgument
                    }),
                "{what}={v} (documented range {}-{}) refused: {r:?}",
                n.min,
                n.max
            );
        }
        let mut bad = vec![
            (n.max as u128 + 1).to_string(),
            u64::MAX.to_string(),
            "18446744073709551616".to_string(),
            "-1".to_string(),
            "1e3".to_string(),
        ];
        if n.min > 0 {
            bad.push((n.min - 1).to_string());
        }
        for v in &bad {
            assert!(
                cmd.clone().try_get_matches_from(argv(v)).is_err(),
                "{what}={v}: the parser accepts it"
            );
            // The binary: exit 2, one line naming the option, no panic.
            let args = argv(v);
            let out = Command::new(tool_binary(n.tool))
                .args(&args[1..])
                .env_clear()
                .env("HOME", "/nonexistent")
                .stdin(Stdio::null())
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{what}={v}: {err}");
            assert!(!err.contains("panicked"), "{what}={v}: {err}");
            assert_eq!(err.lines().count(), 1, "{what}={v}: {err}");
            assert!(err.contains(&format!("--{}", n.long)), "{what}={v}: {err}");
            checked += 1;
        }
    }
    assert!(checked > 50, "only {checked} values checked");
}

/// Durations and times given as text: huge values are usage errors.
#[test]
fn duration_options_refuse_huge_values_without_a_panic() {
    let state = tempfile::tempdir().unwrap();
    let open = |flag: &str, v: &str| -> Vec<String> {
        [
            "open",
            "--dry-run",
            "--results-root",
            "/tmp/tao-ranges",
            "--image",
            "nvcr.io#nvidia/tao/tao-toolkit:5.5.0-pyt",
            "--action",
            "train",
            "--network-arch",
            "dino",
            "--command",
            "true",
            flag,
            v,
        ]
        .map(String::from)
        .to_vec()
    };
    let huge = [
        "18446744073709551615",
        "18446744073709551615d",
        "99999999999999999999999d",
        "18446744073709551615-00:00:00",
        "1-18446744073709551615:00:00",
        "18446744073709551615:00:00",
        "00:18446744073709551615:00",
    ];
    let mut cases: Vec<(&str, Vec<String>)> = Vec::new();
    for v in huge {
        cases.push((
            "tao-record",
            ["gc", "--older-than", v].map(String::from).to_vec(),
        ));
        cases.push((
            "tao-record",
            ["list", "--since", v].map(String::from).to_vec(),
        ));
        cases.push(("tao-record", open("--time", v)));
        cases.push(("tao-record", open("--child-timeout", v)));
    }
    for (tool, args) in cases {
        let out = Command::new(tool_binary(tool))
            .args(&args)
            .env_clear()
            .env("TAO_STATE_DIR", state.path())
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{tool} {args:?}: {err}");
        assert!(!err.contains("panicked"), "{tool} {args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{tool} {args:?}: {err}");
    }
}
