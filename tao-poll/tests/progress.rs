//! Progress, pending reasons and the terminal table, from replayed inputs
//! (no cluster): status.json files of 1 MiB and 1 GiB give the same
//! progress, the second in bounded time and memory; a held job's reason in
//! words with its expected start; the watch table on a pseudo-terminal.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

fn bin() -> std::path::PathBuf {
    assert_cmd::cargo::cargo_bin("tao-poll")
}

/// One TAO epoch record, as TAOStatusLogger.on_train_epoch_end writes it
/// (with the model's sticky `kpi`).
fn record(epoch: u64, max: u64) -> String {
    format!(
        "{{\"epoch\": {epoch}, \"max_epoch\": {max}, \"time_per_epoch\": \"0:00:02.500000\", \"eta\": \"{}\", \"date\": \"12/1/2026\", \"time\": \"14:2:5\", \"status\": \"RUNNING\", \"verbosity\": \"INFO\", \"message\": \"Training loop in progress\", \"kpi\": {{\"loss\": {:.6}, \"accuracy\": {:.6}}}}}\n",
        format_eta((max - epoch) as f64 * 2.5),
        1.0 / (epoch as f64 + 1.0),
        1.0 - 1.0 / (epoch as f64 + 1.0)
    )
}

fn format_eta(s: f64) -> String {
    let whole = s as u64;
    format!(
        "{}:{:02}:{:02}.{:06}",
        whole / 3600,
        whole % 3600 / 60,
        whole % 60,
        ((s - whole as f64) * 1e6) as u64
    )
}

/// A results dir under `root` with `status.json` of at least `size` bytes:
/// `size` bytes of records (epochs 1..), and for a size above 4 MiB a
/// sparse hole first (never written, so the test writes 4 MiB however
/// large the file), then the same last records as the small file.
fn results(root: &Path, id: &str, size: u64) -> String {
    let dir = format!("/shared/results/{id}");
    let local = root.join(dir.trim_start_matches('/'));
    std::fs::create_dir_all(&local).unwrap();
    let mut body = String::from("{\"date\": \"12/1/2026\", \"time\": \"14:0:0\", \"status\": \"STARTED\", \"verbosity\": \"INFO\", \"message\": \"Starting Training Loop.\"}\n");
    let written = size.min(1 << 20);
    let mut e = 0;
    while (body.len() as u64) < written {
        e += 1;
        body.push_str(&record(e, 5000));
    }
    let mut f = std::fs::File::create(local.join("status.json")).unwrap();
    if size > written {
        // A hole of NUL bytes (a torn writer leaves such), then records.
        f.set_len(size - body.len() as u64).unwrap();
        std::io::Seek::seek(&mut f, std::io::SeekFrom::End(0)).unwrap();
        f.write_all(b"\n").unwrap();
    }
    f.write_all(body.as_bytes()).unwrap();
    dir
}

fn squeue_running(ids: &[u32]) -> String {
    ids.iter()
        .map(|i| format!("{i}|{i}|RUNNING|n1|1800000000|1800000010|1800014410|1:00|0|None|\n"))
        .collect()
}

fn line(id: &str, sid: u32, results_dir: &str) -> String {
    format!("{{\"id\":\"{id}\",\"storage\":{{\"job_dir\":\"/shared/jobs/{id}\",\"results_dir\":\"{results_dir}\"}},\"slurm\":{{\"job_id\":\"{sid}\"}}}}\n")
}

fn run_poll(args: &[&str], stdin: &str) -> (i32, Vec<Value>, String) {
    let mut child = Command::new(bin())
        .args(args)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let lines = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (
        out.status.code().unwrap_or(-1),
        lines,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// status.json of 1 MiB and of 1 GiB (sparse) give the same `progress`;
/// the 1 GiB one is read in bounded time and memory: tao-poll reads at most
/// `tao_core::progress::TAIL_BYTES` (4 KiB) from the end of each file, so
/// the poll takes under 2 s and its peak RSS stays under 64 MiB, whatever
/// the file's size.
#[test]
fn progress_of_1mib_and_1gib_status_json_is_the_same() {
    let root = tempfile::tempdir().unwrap();
    let small = results(root.path(), "tao-small", 1 << 20);
    let big = results(root.path(), "tao-big", 1 << 30);
    let big_len = std::fs::metadata(
        root.path()
            .join(big.trim_start_matches('/'))
            .join("status.json"),
    )
    .unwrap()
    .len();
    assert!(big_len >= 1 << 30, "{big_len}");
    let sq = root.path().join("squeue.txt");
    std::fs::write(&sq, squeue_running(&[101, 102])).unwrap();
    let args = [
        "--replay-squeue",
        sq.to_str().unwrap(),
        "--replay-sacct",
        "/dev/null",
        "--replay-root",
        root.path().to_str().unwrap(),
    ];
    let input = format!(
        "{}{}",
        line("tao-small", 101, &small),
        line("tao-big", 102, &big)
    );
    let t0 = Instant::now();
    let (code, out, err) = run_poll(&args, &input);
    let took = t0.elapsed();
    assert_eq!(code, 0, "{err}");
    let usage =
        nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_CHILDREN).unwrap();
    let peak_kib = usage.max_rss();
    let (a, b) = (&out[0]["progress"], &out[1]["progress"]);
    assert!(a.is_object(), "{}", out[0]);
    for k in ["epoch", "max_epoch", "percent", "eta_s", "kpi", "history"] {
        assert_eq!(a[k], b[k], "{k}: {a} vs {b}");
    }
    assert_eq!(a["max_epoch"], 5000);
    assert!(a["epoch"].as_u64().unwrap() > 1000, "{a}");
    assert!(a["kpi"]["loss"].as_f64().unwrap() < 0.001, "{a}");
    assert!(b["updated_at"].as_str().unwrap().ends_with('Z'));
    assert!(
        took < Duration::from_secs(2),
        "the 1 GiB poll took {took:?}"
    );
    assert!(peak_kib < 64 * 1024, "peak RSS {peak_kib} KiB");
}

/// Incremental reads (replay): the second poll, fed the first poll's
/// lines, reads again only the status.json whose size or mtime changed
/// since (their `progress.file_size`, `progress.file_mtime_s`). A file
/// with one byte changed in place and its size and mtime put back keeps
/// its progress (it was not read: the planted epoch is not seen); a file
/// made unreadable keeps it too; an appended one advances.
#[test]
fn unchanged_status_json_is_not_read_again() {
    let root = tempfile::tempdir().unwrap();
    let dirs: Vec<String> = ["tao-same", "tao-locked", "tao-grown"]
        .iter()
        .map(|id| results(root.path(), id, 4096))
        .collect();
    let file = |d: &str| {
        root.path()
            .join(d.trim_start_matches('/'))
            .join("status.json")
    };
    let sq = root.path().join("squeue.txt");
    std::fs::write(&sq, squeue_running(&[101, 102, 103])).unwrap();
    let args = [
        "--replay-squeue",
        sq.to_str().unwrap(),
        "--replay-sacct",
        "/dev/null",
        "--replay-root",
        root.path().to_str().unwrap(),
    ];
    let input = format!(
        "{}{}{}",
        line("tao-same", 101, &dirs[0]),
        line("tao-locked", 102, &dirs[1]),
        line("tao-grown", 103, &dirs[2])
    );
    let (code, first, err) = run_poll(&args, &input);
    assert_eq!(code, 0, "{err}");
    let epoch0 = first[0]["progress"]["epoch"].as_u64().unwrap();
    for (k, d) in dirs.iter().enumerate() {
        let m = std::fs::metadata(file(d)).unwrap();
        assert_eq!(first[k]["progress"]["file_size"], m.len(), "{}", first[k]);
        assert!(first[k]["progress"]["file_mtime_s"].as_i64().unwrap() > 0);
    }
    // tao-same: one byte changed in place (its last epoch number), size
    // and mtime put back: the stamp is the same, so it is not read.
    let f = file(&dirs[0]);
    let mtime = std::fs::metadata(&f).unwrap().modified().unwrap();
    let text = std::fs::read_to_string(&f).unwrap();
    let pat = format!("\"epoch\": {epoch0},");
    let at = text.rfind(&pat).unwrap() + "\"epoch\": ".len();
    let mut bytes = text.into_bytes();
    bytes[at] = if bytes[at] == b'9' { b'8' } else { b'9' };
    std::fs::write(&f, &bytes).unwrap();
    std::fs::File::options()
        .write(true)
        .open(&f)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    // tao-locked: unreadable (when the test runs as root, reading still
    // works; the stamp alone keeps it from being read).
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(file(&dirs[1]), std::fs::Permissions::from_mode(0o000)).unwrap();
    // tao-grown: two more epochs appended.
    let mut g = std::fs::OpenOptions::new()
        .append(true)
        .open(file(&dirs[2]))
        .unwrap();
    let e2 = first[2]["progress"]["epoch"].as_u64().unwrap();
    g.write_all((record(e2 + 1, 5000) + &record(e2 + 2, 5000)).as_bytes())
        .unwrap();
    drop(g);
    let again: String = first.iter().map(|v| format!("{v}\n")).collect();
    let (code, second, err) = run_poll(&args, &again);
    std::fs::set_permissions(file(&dirs[1]), std::fs::Permissions::from_mode(0o644)).unwrap();
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        second[0]["progress"], first[0]["progress"],
        "not read again"
    );
    assert_eq!(
        second[1]["progress"], first[1]["progress"],
        "not read again"
    );
    assert_eq!(second[2]["progress"]["epoch"], e2 + 2, "{}", second[2]);
    let grown = std::fs::metadata(file(&dirs[2])).unwrap().len();
    assert_eq!(second[2]["progress"]["file_size"], grown);
    // A cold poll (no recorded progress) reads the planted file and sees it.
    let (_, cold, _) = run_poll(&args, &input);
    assert_ne!(
        cold[0]["progress"]["epoch"], first[0]["progress"]["epoch"],
        "{}",
        cold[0]
    );
}

/// A job whose results dir has no status.json has no `progress` (never a
/// made-up one), and a stale one from an earlier poll is cleared (null).
#[test]
fn no_status_json_no_progress() {
    let root = tempfile::tempdir().unwrap();
    let sq = root.path().join("squeue.txt");
    std::fs::write(&sq, squeue_running(&[103])).unwrap();
    let input = "{\"id\":\"tao-none\",\"storage\":{\"job_dir\":\"/shared/jobs/tao-none\",\"results_dir\":\"/shared/results/tao-none\"},\"slurm\":{\"job_id\":\"103\"},\"progress\":{\"epoch\":9}}\n";
    let (code, out, err) = run_poll(
        &[
            "--replay-squeue",
            sq.to_str().unwrap(),
            "--replay-sacct",
            "/dev/null",
            "--replay-root",
            root.path().to_str().unwrap(),
        ],
        input,
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(out[0]["state"], "RUNNING");
    // null, not removed: tao-record mark merges fields, so a null is what
    // takes the recorded progress away.
    assert_eq!(out[0]["progress"], Value::Null, "{}", out[0]);
}

/// A held job's reason in words with what to do, and its expected start
/// from `squeue --start` where Slurm has one (a job held until a begin
/// time), none where it has not.
#[test]
fn pending_reasons_in_words_with_expected_start() {
    let root = tempfile::tempdir().unwrap();
    let sq = root.path().join("squeue.txt");
    std::fs::write(
        &sq,
        "201|201|PENDING||1800000000|N/A|N/A|0:00|0|JobHeldUser|\n202|202|PENDING||1800000000|1800003600|N/A|0:00|0|BeginTime|\n203|203|PENDING||1800000000|N/A|N/A|0:00|0|QOSMaxGRESPerJob|\n",
    )
    .unwrap();
    let st = root.path().join("start.txt");
    std::fs::write(&st, "201|N/A\n202|1800003600\n203|N/A\n").unwrap();
    let (code, out, err) = run_poll(
        &[
            "--replay-squeue",
            sq.to_str().unwrap(),
            "--replay-sacct",
            "/dev/null",
            "--replay-squeue-start",
            st.to_str().unwrap(),
            "201",
            "202",
            "203",
        ],
        "",
    );
    assert_eq!(code, 0, "{err}");
    let held = &out[0]["pending"];
    assert_eq!(held["reason"], "JobHeldUser");
    assert!(
        held["words"].as_str().unwrap().contains("held by you"),
        "{held}"
    );
    assert!(
        held["action"]
            .as_str()
            .unwrap()
            .contains("scontrol release"),
        "{held}"
    );
    assert_eq!(held["clears"], false);
    assert!(held["expected_start"].is_null());
    let begin = &out[1]["pending"];
    assert_eq!(begin["clears"], true);
    assert_eq!(begin["expected_start"], "2027-01-15T09:00:00Z");
    assert!(begin.get("action").is_none());
    let gres = &out[2]["pending"];
    assert!(
        gres["words"].as_str().unwrap().contains("more GPUs"),
        "{gres}"
    );
    assert!(out[2]["message"]
        .as_str()
        .unwrap()
        .contains("cancel it and submit with a smaller request"));
}

/// Run `tao-poll --watch` on a pseudo-terminal over replayed squeue,
/// squeue --start and status.json (a running job with progress, a job
/// waiting for its begin time, a held job) with the terminal's variables
/// `terminal` (TERM, LANG, NO_COLOR, ...), until its first table is out,
/// then stop it with Ctrl-C. Output: its exit status and all it printed.
fn watch_on_a_terminal(terminal: &[(&str, &str)]) -> (std::process::ExitStatus, String) {
    let root = tempfile::tempdir().unwrap();
    let run_dir = results(root.path(), "tao-run", 4096);
    let sq = root.path().join("squeue.txt");
    std::fs::write(
        &sq,
        format!(
            "{}202|202|PENDING||1800000000|1800003600|N/A|0:00|0|BeginTime|\n203|203|PENDING||1800000000|1800007200|N/A|0:00|0|JobHeldUser|\n",
            squeue_running(&[301])
        ),
    )
    .unwrap();
    // Slurm prints an estimate for the held job too; it means nothing
    // until someone releases it.
    let st = root.path().join("start.txt");
    std::fs::write(&st, "202|1800003600\n203|1800007200\n").unwrap();
    let input = root.path().join("in.jsonl");
    std::fs::write(
        &input,
        format!(
            "{}{{\"id\":\"tao-wait\",\"slurm\":{{\"job_id\":\"202\"}}}}\n{{\"id\":\"tao-held\",\"slurm\":{{\"job_id\":\"203\"}}}}\n",
            line("tao-run", 301, &run_dir)
        ),
    )
    .unwrap();
    let args = [
        "--watch",
        "--interval",
        "1",
        "--replay-squeue",
        sq.to_str().unwrap(),
        "--replay-sacct",
        "/dev/null",
        "--replay-squeue-start",
        st.to_str().unwrap(),
        "--replay-root",
        root.path().to_str().unwrap(),
    ];
    let pty = nix::pty::openpty(None, None).expect("openpty");
    let err_side = pty.slave.try_clone().unwrap();
    let mut cmd = Command::new(bin());
    cmd.args(args)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .envs(terminal.iter().copied())
        .stdin(std::fs::File::open(&input).unwrap())
        .stdout(Stdio::from(pty.slave))
        .stderr(Stdio::from(err_side));
    let mut child = cmd.spawn().unwrap();
    drop(cmd);
    let mut master = std::fs::File::from(pty.master);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        loop {
            match master.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if tx.send(buf[..n].to_vec()).is_err() {
                        break;
                    }
                }
            }
        }
    });
    let mut all = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline && !String::from_utf8_lossy(&all).contains("MESSAGE") {
        if let Ok(b) = rx.recv_timeout(Duration::from_millis(200)) {
            all.extend(b);
        }
    }
    // Let the first table finish, then stop the watch as a user would.
    std::thread::sleep(Duration::from_millis(300));
    while let Ok(b) = rx.try_recv() {
        all.extend(b);
    }
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let status = child.wait().unwrap();
    let text = String::from_utf8_lossy(&all).into_owned();
    (status, text)
}

/// `--watch` on a terminal: the table shows the progress bar, epoch/max,
/// ETA, the KPI sparkline, and for a pending job its reason in words and
/// expected start (for a held one, what to do instead of an estimate);
/// with NO_COLOR set no colour (SGR) sequence is printed.
/// A pipe gets JSON lines instead.
#[test]
fn watch_table_on_a_terminal() {
    let (status, text) = watch_on_a_terminal(&[
        ("TERM", "xterm-256color"),
        ("NO_COLOR", "1"),
        ("LANG", "C.UTF-8"),
    ]);
    // Ctrl-C: 128 + SIGINT, as shells expect (not 1, "a job did not end COMPLETE").
    assert_eq!(status.code(), Some(130), "{text}");
    for want in [
        "PROGRESS",
        "KPI",
        "/5000",
        "ETA ",
        "loss ",
        "BeginTime: its earliest start time",
        "starts ~2027-01-15 09:00 UTC",
        "█",
        "░",
    ] {
        assert!(text.contains(want), "no {want:?} in:\n{text}");
    }
    // A sparkline of the loss history.
    assert!(text.chars().any(|c| ('▁'..='▇').contains(&c)), "{text}");
    // The held job: what to do instead of Slurm's estimate.
    let last_table = &text[text.rfind("PROGRESS").unwrap()..];
    let held_row = last_table
        .lines()
        .find(|l| l.starts_with("tao-held"))
        .unwrap_or_else(|| panic!("no held row in:\n{last_table}"));
    assert!(
        held_row.contains("will not start until you act: release it with `scontrol release 203`"),
        "{held_row}"
    );
    assert!(
        held_row.contains("JobHeldUser: it is held by you"),
        "{held_row}"
    );
    assert!(!held_row.contains("starts ~"), "{held_row}");
    // No colour: no SGR sequence (ESC [ ... m); the screen clear is not colour.
    let sgr = regex_sgr(&text);
    assert!(sgr.is_none(), "colour sequence {sgr:?} with NO_COLOR set");
}

/// The first SGR escape sequence (`ESC [ digits;... m`) in `text`, if any.
fn regex_sgr(text: &str) -> Option<String> {
    let b = text.as_bytes();
    for i in 0..b.len() {
        if b[i] == 0x1b && b.get(i + 1) == Some(&b'[') {
            let mut j = i + 2;
            while j < b.len() && (b[j].is_ascii_digit() || b[j] == b';') {
                j += 1;
            }
            if b.get(j) == Some(&b'm') {
                return Some(text[i..=j].escape_debug().to_string());
            }
        }
    }
    None
}

/// `--watch` on a dumb terminal (TERM=dumb: an editor's shell buffer, a
/// serial console) in the C locale (no LANG): no escape sequence at all
/// (the table is printed again below the last one, not redrawn), and every
/// byte ASCII (the bar and sparkline as `#`, `.` and `_.-~=+*#`).
#[test]
fn watch_on_a_dumb_terminal_in_the_c_locale() {
    let (status, text) = watch_on_a_terminal(&[("TERM", "dumb")]);
    assert_eq!(status.code(), Some(130), "{text}");
    assert!(
        !text.contains('\x1b'),
        "an escape sequence on TERM=dumb: {text:?}"
    );
    assert!(text.is_ascii(), "not ASCII in the C locale: {text}");
    for want in [
        "PROGRESS",
        "[............] 16/5000",
        "ETA ",
        "loss 0.05882 #",
    ] {
        assert!(text.contains(want), "no {want:?} in:\n{text}");
    }
}

/// A fresh user's typo: `tao-poll log ID` is a usage error (2) naming the
/// command meant, not a job line with a "not a Slurm job id" error.
#[test]
fn a_mistyped_command_names_the_real_one() {
    for (word, meant) in [
        ("log", "tao-poll logs JOB_ID"),
        ("reprot", "tao-poll report JOB_ID"),
    ] {
        let (code, out, err) = run_poll(&[word, "tao-20261129-k3f9x2"], "");
        assert_eq!(code, 2, "{err}");
        assert!(out.is_empty());
        assert!(err.contains(&format!("did you mean `{meant}`")), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    let (code, _, err) = run_poll(&["frobnicate"], "");
    assert_eq!(code, 2);
    assert!(
        err.contains("the commands are `logs` and `report`"),
        "{err}"
    );
}

/// `--watch` that cannot poll any line for a reason waiting will not fix
/// (here: no SLURM_HOSTNAME, a configuration error) stops at once with
/// that status (78) and the fix, instead of repeating it every interval,
/// before any line goes out.
#[test]
fn watch_stops_on_a_configuration_error() {
    let mut child = Command::new(bin())
        .args(["--watch", "--interval", "1", "123"])
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            child.kill().unwrap();
            panic!("the watch kept going on a configuration error");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(status.code(), Some(78), "{err}");
    assert!(err.contains("SLURM_HOSTNAME is not set"), "{err}");
    // The run's error, not the job's: no line carries it (for `tao-record
    // mark` to record as the job's failure).
    assert_eq!(String::from_utf8_lossy(&out.stdout), "");
    assert_eq!(err.lines().count(), 1, "{err}");
}
