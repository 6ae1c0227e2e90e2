//! "Never a job twice" as properties of the two readers tao-submit's guard
//! rests on (src/submit.rs module doc: the Slurm job name is the record
//! id; before sbatch, and after an sbatch whose outcome is unknown, jobs
//! of that name are looked up and one is adopted instead of submitting
//! again): a job that exists must never be missed, and a lookup that did
//! not fully answer must never read as "no job".
//!
//! - `sched::parse_by_name` on generated replies of the by-name script
//!   (squeue rows, the sacct marker, sacct rows, the two exit-status
//!   markers) with login banners and other noise between the lines, CRLF
//!   line ends and jobs of other names: it finds exactly the jobs of the
//!   asked names, squeue's view winning; with an exit status that is not 0
//!   or a marker missing it is a TempFail (exit 75, "nothing was
//!   submitted"), never an empty answer.
//! - `sched::parse_sbatch` on sbatch's reply, one id (in any of its three
//!   forms) among noise lines: that id, never `None` (which would mean "no
//!   job", and a second submission); two different ids: an error; any text:
//!   no panic, and an id it returns is digits.
//!
//! 512 cases each.

use proptest::prelude::*;
use tao_core::Error;
use tao_submit::sched::{by_name_script, parse_by_name, parse_sbatch};

/// The by-name script's markers (private in sched.rs; checked below to be
/// what the script prints).
const RC: &str = "@@tao-rc ";
const SACCT: &str = "@@tao-sacct";

#[test]
fn the_markers_are_the_scripts() {
    let s = by_name_script("u", &["tao-a"], "2026-01-01", None);
    assert!(s.contains(&format!("echo \"{RC}$?\"")), "{s}");
    assert!(s.contains(&format!("echo '{SACCT}'")), "{s}");
}

/// A line of noise: a banner, a warning, a blank line (never a row: no `|`).
fn noise() -> impl Strategy<Value = String> {
    prop_oneof![
        "[^|\n\r]{0,30}".prop_filter("not a marker", |s| !s.trim().starts_with("@@tao")),
        Just(String::new()),
        Just("Last login: Tue Dec  1 10:00:00 2026 from 10.0.0.1".to_string()),
        Just("sacct: error: Slurm accounting storage is busy 12345".to_string()),
    ]
}

#[derive(Debug, Clone)]
struct Job {
    id: u32,
    name: usize,
    state: &'static str,
    in_squeue: bool,
    in_sacct: bool,
}

fn job() -> impl Strategy<Value = Job> {
    (
        1u32..100_000,
        0usize..4,
        prop::sample::select(vec![
            "PENDING",
            "RUNNING",
            "COMPLETED",
            "CANCELLED by 0",
            "FAILED",
        ]),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(id, name, state, in_squeue, in_sacct)| Job {
            id,
            name,
            state,
            in_squeue,
            in_sacct,
        })
}

/// Names 0 and 1 are asked about; 2 and 3 are other jobs of the user
/// (one a prefix of an asked name: `--name` is exact).
const NAMES: [&str; 4] = ["tao-ab12", "tao-cd34", "tao-ab1", "other"];

/// Lines of the by-name script's reply, each with noise before it.
fn reply(jobs: &[Job], noise: &[String], rc: (&str, &str)) -> Vec<String> {
    let mut n = noise.iter().cycle();
    let mut lines = Vec::new();
    let mut push = |l: String, lines: &mut Vec<String>| {
        lines.push(n.next().cloned().unwrap_or_default());
        lines.push(l);
    };
    for j in jobs.iter().filter(|j| j.in_squeue) {
        let reason = if j.state == "PENDING" {
            "JobHeldUser"
        } else {
            "None"
        };
        push(
            format!("{}|{}|{}|{reason}", j.id, NAMES[j.name], j.state),
            &mut lines,
        );
    }
    push(format!("{RC}{}", rc.0), &mut lines);
    push(SACCT.to_string(), &mut lines);
    for j in jobs.iter().filter(|j| j.in_sacct) {
        // sacct may lag: it may print an older state than squeue.
        push(format!("{}|{}|COMPLETED", j.id, NAMES[j.name]), &mut lines);
    }
    push(format!("{RC}{}", rc.1), &mut lines);
    lines
}

/// Whether a noise line has the shape of one of sbatch's three id replies
/// (sbatch(1), `--parsable` prints `jobid[;cluster]`).
fn id_shaped(line: &str) -> bool {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let l = line.trim();
    digits(l)
        || l.split_once(';').is_some_and(|(id, _)| digits(id))
        || l.starts_with("Submitted batch job ")
}

fn join(lines: &[String], crlf: bool) -> String {
    let end = if crlf { "\r\n" } else { "\n" };
    lines.iter().map(|l| format!("{l}{end}")).collect()
}

proptest! {
    #![proptest_config(tao_core::testing::config(512))]

    /// See the module doc: every job of an asked name is found.
    #[test]
    fn the_lookup_never_misses_a_job_of_the_name(
        jobs in prop::collection::vec(job(), 0..8),
        noise in prop::collection::vec(noise(), 1..6),
        crlf in any::<bool>(),
    ) {
        // One id is one job: keep the first of each id.
        let mut seen = std::collections::HashSet::new();
        let jobs: Vec<Job> = jobs.into_iter().filter(|j| seen.insert(j.id)).collect();
        let text = join(&reply(&jobs, &noise, ("0", "0")), crlf);
        let found = parse_by_name(&text, &NAMES[..2], "login1");
        prop_assert!(found.is_ok(), "{:?}\n{}", found, text);
        let found = found.unwrap();
        let want: std::collections::BTreeSet<String> = jobs
            .iter()
            .filter(|j| j.name < 2 && (j.in_squeue || j.in_sacct))
            .map(|j| j.id.to_string())
            .collect();
        let got: std::collections::BTreeSet<String> = found.keys().cloned().collect();
        prop_assert_eq!(&got, &want, "{}", text);
        for j in jobs.iter().filter(|j| j.name < 2 && j.in_squeue) {
            let f = &found[&j.id.to_string()];
            prop_assert_eq!(f.state.as_str(), j.state, "squeue's view wins");
            prop_assert_eq!(f.name.as_str(), NAMES[j.name]);
        }
    }

    /// See the module doc: a lookup that did not fully answer is never
    /// "no job": one exit status not 0, or one marker line missing, is a
    /// TempFail.
    #[test]
    fn an_incomplete_lookup_is_never_an_answer(
        jobs in prop::collection::vec(job(), 0..6),
        noise in prop::collection::vec(noise(), 1..6),
        // Something is missing: an exit status not 0 (a marker may be
        // missing too), or both 0 and a marker missing. Generated, not
        // filtered: a rejected tenth of the cases would exceed proptest's
        // 1,024 global rejects at 20,000 cases.
        (rc, drop_marker) in prop_oneof![
            4 => (
                prop::sample::select(vec![("1", "0"), ("0", "1"), ("0", ""), ("130", "0")]),
                prop::option::of(0usize..3),
            ),
            1 => (Just(("0", "0")), (0usize..3).prop_map(Some)),
        ],
        crlf in any::<bool>(),
    ) {
        let mut lines = reply(&jobs, &noise, rc);
        if let Some(k) = drop_marker {
            let markers: Vec<usize> = lines
                .iter()
                .enumerate()
                .filter(|(_, l)| l.starts_with("@@tao"))
                .map(|(i, _)| i)
                .collect();
            // markers: squeue's exit status, the sacct marker, sacct's
            // exit status.
            lines.remove(markers[k]);
        }
        let text = join(&lines, crlf);
        match parse_by_name(&text, &NAMES[..2], "login1") {
            Err(Error::TempFail(m)) => prop_assert!(m.contains("nothing was submitted"), "{}", m),
            other => prop_assert!(false, "{:?} on\n{}", other, text),
        }
    }

    /// See the module doc: sbatch's one id is never lost in noise.
    #[test]
    fn sbatch_reply_id_is_never_lost(
        id in 1u64..10_000_000,
        form in 0usize..3,
        before in prop::collection::vec(noise(), 0..4),
        after in prop::collection::vec(noise(), 0..4),
        other in prop::option::of(1u64..10_000_000),
        crlf in any::<bool>(),
    ) {
        // Noise shaped like one of sbatch's id lines (digits alone,
        // `digits;cluster`, `Submitted batch job digits`) would itself be a
        // second id, which the reader rightly refuses: such noise is not
        // noise. (CI found `0` before `1;clusterb`.)
        prop_assume!(!before.iter().chain(&after).any(|l| id_shaped(l)));
        let line = |id: u64| match form {
            0 => id.to_string(),
            1 => format!("{id};clusterb"),
            _ => format!("Submitted batch job {id}"),
        };
        let mut lines = before.clone();
        lines.push(line(id));
        if let Some(o) = other {
            lines.push(line(o));
        }
        lines.extend(after);
        let text = join(&lines, crlf);
        match (parse_sbatch(&text), other) {
            (Ok(Some((got, _))), None) => prop_assert_eq!(got, id.to_string()),
            (Ok(Some((got, _))), Some(o)) if o == id => prop_assert_eq!(got, id.to_string()),
            (Err(Error::Protocol(_)), Some(o)) if o != id => {}
            (r, _) => prop_assert!(false, "{:?} on\n{}", r, text),
        }
    }

    /// Any text as sbatch's reply: no panic; an id is digits.
    #[test]
    fn any_sbatch_reply_is_no_panic(text in "\\PC{0,80}|[0-9;a-z \n]{0,40}") {
        if let Ok(Some((id, _))) = parse_sbatch(&text) {
            prop_assert!(!id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()));
        }
    }
}
