//! The job's own verdict and its log tails, read for all finished jobs of a
//! login host in ONE remote command.
//!
//! Slurm's COMPLETED only says the batch script exited 0; whether the
//! program succeeded is the job's own word (docs/design.md, tao-jobline(7)):
//!
//! * `<results_dir>/status.json`: JSON lines appended by TAO containers
//!   (`date`, `time`, `status` in STARTED/RUNNING/SUCCESS/FAILURE/SKIPPED,
//!   `verbosity`, `message`, ...; nvidia_tao_pytorch/core/loggers/
//!   api_logging.py); the last SUCCESS or FAILURE decides (current TAO
//!   ends a good run with RUNNING `Train finished successfully.`, which
//!   counts as SUCCESS: [`TAO_SUCCESS_SUFFIX`]);
//! * else `<job_dir>/slurm-logs/<id>-<slurm_job_id>/completion.json`, one
//!   object `{"exit_code": int, "end", "slurm_job_id", "restart_count"}`
//!   written by the job script on exit: exit code 0 is success.
//!
//! [`script`] builds a POSIX `sh` script (sent on stdin to `sh -s`, so no
//! command-line limit applies) that prints delimited records: one `awk` over
//! every status file present prints its last SUCCESS/FAILURE line, one `awk`
//! prints every completion record, and (for `--evidence`) `wc`+`tail` print
//! the bounded tails of main.out/main.err of failed jobs. The process count
//! does not grow with the number of jobs except for evidence tails.
//! Records start with a marker line carrying a random nonce, so log text
//! cannot forge one.

use std::collections::HashMap;

use serde_json::Value;
use tao_core::shell::quote;

/// What the job said about itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// status.json's last SUCCESS/FAILURE line said SUCCESS.
    StatusSuccess,
    /// status.json's last SUCCESS/FAILURE line said FAILURE (its message).
    StatusFailure(String),
    /// completion.json with this exit code (no decisive status.json).
    Completion(i64),
    /// Neither file says anything.
    Nothing,
}

impl Verdict {
    /// Whether the verdict is success.
    pub fn is_success(&self) -> bool {
        matches!(self, Verdict::StatusSuccess | Verdict::Completion(0))
    }

    /// Short text for `message`, e.g. `status.json SUCCESS`.
    pub fn describe(&self) -> String {
        match self {
            Verdict::StatusSuccess => "status.json SUCCESS".into(),
            Verdict::StatusFailure(m) if m.is_empty() => "status.json FAILURE".into(),
            Verdict::StatusFailure(m) => format!("status.json FAILURE: {m}"),
            Verdict::Completion(c) => format!("completion.json exit_code {c}"),
            Verdict::Nothing => "no status.json or completion.json".into(),
        }
    }
}

/// The message TAO's entry points write, with status RUNNING, when the
/// run returned without an error (`f"{mode.capitalize()} finished
/// successfully."`, nvidia_tao_pytorch/core/decorators/workflow.py,
/// `monitor_status`): current TAO writes it where older releases wrote
/// SUCCESS.
pub const TAO_SUCCESS_SUFFIX: &str = " finished successfully.";

/// Read one status.json line: `Some(true)` for SUCCESS (or TAO's RUNNING
/// `<Mode> finished successfully.`, see [`TAO_SUCCESS_SUFFIX`]),
/// `Some(false)` for FAILURE (with its message), `None` for any other
/// record or non-JSON.
pub fn status_line(text: &str) -> Option<(bool, String)> {
    let v: Value = serde_json::from_str(text.trim()).ok()?;
    let msg = v
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    match v.get("status").and_then(Value::as_str)? {
        "SUCCESS" => Some((true, msg)),
        "FAILURE" => Some((false, msg)),
        "RUNNING" if msg.ends_with(TAO_SUCCESS_SUFFIX) => Some((true, msg)),
        _ => None,
    }
}

/// The last decisive line of a whole status.json text.
pub fn status_verdict(text: &str) -> Option<Verdict> {
    text.lines().rev().find_map(status_line).map(|(ok, m)| {
        if ok {
            Verdict::StatusSuccess
        } else {
            Verdict::StatusFailure(m)
        }
    })
}

/// A completion record: its `exit_code`, and `slurm_job_id` when present.
///
/// Errors: a message when the text is not an object with an integer `exit_code`.
pub fn completion(text: &str) -> Result<(i64, Option<String>), String> {
    let v: Value = serde_json::from_str(text.trim())
        .map_err(|e| format!("completion.json is not JSON ({e})"))?;
    let code = v
        .get("exit_code")
        .and_then(Value::as_i64)
        .ok_or_else(|| "completion.json has no integer exit_code".to_string())?;
    let sid = v.get("slurm_job_id").map(|s| match s {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    });
    Ok((code, sid))
}

/// Decide from what was read: status.json first, then completion.json (when
/// it belongs to `slurm_job_id`; a record of another job is ignored).
pub fn decide(files: &FileRecords, slurm_job_id: &str) -> Result<Verdict, String> {
    if let Some(line) = &files.status_last {
        if let Some((ok, msg)) = status_line(line) {
            return Ok(if ok {
                Verdict::StatusSuccess
            } else {
                Verdict::StatusFailure(msg)
            });
        }
    }
    if let Some(text) = &files.completion {
        let (code, sid) = completion(text)?;
        if sid.as_deref().is_none_or(|s| s == slurm_job_id) {
            return Ok(Verdict::Completion(code));
        }
    }
    Ok(Verdict::Nothing)
}

/// What to read for one job. Paths are remote, absolute.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileRequest {
    /// `<results_dir>/status.json`.
    pub status: Option<String>,
    /// `<job_dir>/slurm-logs/<id>-<slurm_job_id>/completion.json`.
    pub completion: Option<String>,
    /// `main.out` and `main.err` of the attempt, for evidence tails.
    pub logs: Option<(String, String)>,
    /// `<results_dir>/status.json`, for `progress`: its last
    /// [`tao_core::progress::TAIL_BYTES`] bytes and its size and mtime.
    pub progress: Option<String>,
    /// The job, when what is read of `progress` and `completion` depends
    /// on the state squeue gives it in the same remote script
    /// ([`ReadClass`], [`script`]'s `states`); `None`: read as asked.
    pub job: Option<crate::observe::JobRef>,
    /// Set by the backend for a request with a `job`, when squeue's reply
    /// is in the same script: `<chunk>|<job id>` (see [`script_with`]).
    pub state_key: Option<String>,
    /// The size and mtime of `progress`'s file at the read the job line's
    /// `progress` came from (its `file_size`, `file_mtime_s`). A request
    /// read by its job's state ([`ReadClass::LastLines`]) whose file still
    /// has this stamp is not read again: [`FileRecords::progress_unchanged`].
    /// `None`: read as today.
    pub known: Option<tao_core::progress::FileStamp>,
}

/// What the remote script read for a request with a [`FileRequest::job`],
/// from the state squeue printed for that job moments before in the same
/// script (`squeue -O JobArrayID,JobID,State`; a job id matching several
/// rows in different states counts as none of them: [`ReadClass::Full`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadClass {
    /// squeue said RUNNING, or an end state other than COMPLETED
    /// (CANCELLED, FAILED, TIMEOUT, ...: only COMPLETED asks the job's own
    /// verdict, [`crate::observe`]): the last
    /// [`tao_core::progress::RUNNING_TAIL_LINES`] lines of status.json
    /// (the last RUNNING record is all `progress` needs), no completion
    /// record.
    LastLines,
    /// squeue said PENDING: nothing read (a pending job's progress is not
    /// read, [`crate::poll`]).
    Pending,
    /// Any other state, or the job is not in squeue's reply: read as
    /// asked (the [`tao_core::progress::TAIL_BYTES`] tail, whose verdict
    /// line decides an ended job, and the completion record).
    Full,
}

impl ReadClass {
    fn from_letter(c: u8) -> Option<ReadClass> {
        match c {
            b'R' => Some(ReadClass::LastLines),
            b'P' => Some(ReadClass::Pending),
            b'F' => Some(ReadClass::Full),
            _ => None,
        }
    }
}

/// The bounded tail of a status.json read for `progress`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ProgressTail {
    /// The last bytes of the file (at most [`tao_core::progress::TAIL_BYTES`]), lossy UTF-8.
    pub text: String,
    /// Whether the text starts inside the file (its first line is partial).
    pub cut: bool,
    /// Whether the text is the file's last whole lines (`tail -n`, a
    /// running job's read): it may start inside the file, at a line start.
    pub lines_only: bool,
    /// The file's mtime, seconds since the epoch.
    pub mtime: Option<i64>,
    /// The file's size in bytes (from the same `stat` as `mtime`).
    pub size: Option<u64>,
}

impl ProgressTail {
    /// The job line's `progress` object for this tail, or `None` when the
    /// file holds no epoch or KPI record (see [`tao_core::progress::Progress::from_tail`]).
    pub fn progress(&self) -> Option<tao_core::progress::Progress> {
        let updated = self
            .mtime
            .and_then(|t| chrono::DateTime::from_timestamp(t, 0))
            .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true));
        let mut p = tao_core::progress::Progress::from_tail(&self.text, self.cut, updated)?;
        p.file_size = self.size;
        p.file_mtime_s = self.mtime;
        Some(p)
    }

    /// The verdict line this tail settles: `Some(Some(line))`, the last
    /// SUCCESS/FAILURE line of the file (the last one in the tail is the
    /// last one in the file); `Some(None)`, the file has none (the whole
    /// file is in the tail); `None`, unknown: the tail starts inside the
    /// file and holds none, so an older line may decide (the caller reads
    /// the whole file, [`FileRequest::status`]).
    pub fn verdict_line(&self) -> Option<Option<String>> {
        let mut lines = self.text.split('\n');
        if self.cut {
            // The first line is partial: never a record.
            lines.next();
        }
        match lines.rev().find(|l| status_line(l).is_some()) {
            Some(l) => Some(Some(l.trim().to_string())),
            None if self.cut || self.lines_only => None,
            None => Some(None),
        }
    }
}

/// The most bytes an evidence tail holds per file: 64 KiB. `--evidence-lines`
/// bounds the lines, this bounds their bytes (a log of one 1 GiB line, or
/// of very long lines, would otherwise travel and be stored whole). The
/// remote read takes only the file's last 64 KiB (`tail -c`); lines that do
/// not fit are dropped from the front, and a single line longer than the
/// cap keeps its last 64 KiB.
pub const TAIL_BYTES: usize = 64 * 1024;

/// Cut `t` to at most `max_bytes` (each line counted with its newline):
/// the last lines that fit, or the end of the last line when even it does
/// not fit; `first_line` follows the lines dropped.
pub fn cap_tail(t: &mut Tail, max_bytes: usize) {
    let mut total = 0usize;
    let mut keep = 0usize;
    for l in t.lines.iter().rev() {
        let n = l.len() + 1;
        if total + n > max_bytes {
            break;
        }
        total += n;
        keep += 1;
    }
    if keep == 0 && !t.lines.is_empty() {
        let last = t.lines.pop().unwrap_or_default();
        let dropped = t.lines.len() as u64;
        let mut i = last.len().saturating_sub(max_bytes.saturating_sub(1));
        while !last.is_char_boundary(i) {
            i += 1;
        }
        t.lines = vec![last[i..].to_string()];
        if t.first_line > 0 {
            t.first_line += dropped;
        }
        return;
    }
    let drop = t.lines.len() - keep;
    t.lines.drain(..drop);
    if t.first_line > 0 {
        t.first_line += drop as u64;
    }
}

/// A bounded tail of a log file.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Tail {
    /// 1-based number of the first line in `lines` (0 when the file is empty).
    pub first_line: u64,
    /// The last lines, without newlines (lossy UTF-8).
    pub lines: Vec<String>,
    /// Whether the file existed.
    pub present: bool,
}

/// What was read for one job.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FileRecords {
    /// The last SUCCESS/FAILURE line of status.json.
    pub status_last: Option<String>,
    /// completion.json's text.
    pub completion: Option<String>,
    /// Tail of main.out.
    pub out: Option<Tail>,
    /// Tail of main.err.
    pub err: Option<Tail>,
    /// The status.json tail for `progress`; `None` when it was not asked
    /// for, not read ([`FileRecords::class`]) or the file does not exist.
    pub progress: Option<ProgressTail>,
    /// What was read for a request with a [`FileRequest::job`] (`None`:
    /// read as asked).
    pub class: Option<ReadClass>,
    /// The status.json still has the request's [`FileRequest::known`]
    /// size and mtime: it was not read (`progress` is `None`) and the job
    /// line's `progress` stays as it is.
    pub progress_unchanged: bool,
}

/// A shell variable `var` holding `paths`, one a line, from a here-document
/// (no argument vector, so no size limit; the script is parsed once
/// whatever the count). Paths holding a newline cannot be listed and are
/// left out (such a file is then read as absent). The terminator carries
/// the nonce, so no path can end the document early.
fn path_list(var: &str, paths: &[&str], nonce: &str) -> String {
    let end = format!("@@tao-poll-{nonce}-{var}");
    let mut s = format!("{var}=$(cat <<'{end}'\n");
    for p in paths.iter().filter(|p| !p.contains('\n') && !p.is_empty()) {
        s.push_str(p);
        s.push('\n');
    }
    s.push_str(&end);
    s.push_str("\n)\n");
    s
}

/// sh text feeding the paths of `$var` to one `awk` program that opens
/// each itself (`getline < path`: a missing file is skipped, no process
/// or shell loop per path; a `while read` loop in sh reads a byte per
/// system call).
fn awk_over(var: &str, program: &str) -> String {
    format!("printf '%s\\n' \"${var}\" | awk -v M=\"$M\" '{program}'\n")
}

/// Build the script for `requests` (index = key). `nonce` makes the record
/// marker unforgeable; `tail_lines` bounds evidence tails.
///
/// Processes: one `awk` for every status.json verdict read (each file read
/// whole), one for every completion record, one `stat` and one `tail` for
/// every progress tail
/// (more only when xargs splits a list past the argument-size limit), two
/// per evidence log. The paths travel in here-documents, so a poll of
/// 10,000 jobs is one script of about 1 MB, parsed once.
///
/// Requests with a [`FileRequest::state_key`] (`<chunk>|<job id>`) are
/// read by the state squeue gave their job earlier in the same remote
/// script: one more `awk` reads squeue's `-O` replies from `states` (shell
/// words naming `<chunk>/<file>` paths: the directory's name is the
/// chunk), prints one [`ReadClass`] letter per such request (`M K`, then
/// the letters on one line) and splits their paths into the lists below:
/// a RUNNING job's status.json (or one of a job in an end state other
/// than COMPLETED) gets `tail -n`
/// [`tao_core::progress::RUNNING_TAIL_LINES`] (`M PS` stat lines, `M PR`
/// tail text) and no completion read, a PENDING job's files are not
/// read, any other (COMPLETED, not in squeue) is read as asked.
pub fn script(requests: &[FileRequest], nonce: &str, tail_lines: u32) -> String {
    script_with(requests, nonce, tail_lines, "")
}

/// [`script`] with the shell words naming squeue's replies for requests
/// with a [`FileRequest::state_key`] (empty: no replies, every request is
/// read as asked).
pub fn script_with(requests: &[FileRequest], nonce: &str, tail_lines: u32, states: &str) -> String {
    let mut s = String::new();
    s.push_str("export LC_ALL=C\n");
    s.push_str(&format!("M={}\n", quote(&format!("@@tao-poll-{nonce}"))));
    let is_keyed = |r: &&FileRequest| keyed(r, states);
    let keyed_reqs: Vec<&FileRequest> = requests.iter().filter(is_keyed).collect();
    let plain = |r: &&FileRequest| !keyed(r, states);
    if !keyed_reqs.is_empty() {
        // Four lines per request: its key, its known stamp (`<size>
        // <mtime>`, `- -` when none), its progress path, its completion
        // path (paths empty when none, or when they hold a newline;
        // front-coded, push_front_coded).
        let end = format!("@@tao-poll-{nonce}-K");
        s.push_str("K=$(mktemp -d) || exit 75\n: >\"$K/pr\"; : >\"$K/ps\"; : >\"$K/pf\"; : >\"$K/cf\"; : >\"$K/pt\"; : >\"$K/pu\"\n");
        s.push_str(&format!(
            "awk -F'|' -v M=\"$M\" -v D=\"$K\" '{CLASSIFY}' {states} - <<'{end}'\n"
        ));
        let clean = |p: &Option<String>| {
            p.as_deref()
                .filter(|p| !p.contains('\n'))
                .unwrap_or("")
                .to_string()
        };
        let mut prev = String::new();
        for r in &keyed_reqs {
            s.push_str(r.state_key.as_deref().unwrap_or(""));
            s.push('\n');
            match r.known {
                Some(k) => s.push_str(&format!("{} {}", k.size, k.mtime_s)),
                None => s.push_str("- -"),
            }
            s.push('\n');
            push_front_coded(&mut s, &mut prev, &clean(&r.progress));
            push_front_coded(&mut s, &mut prev, &clean(&r.completion));
        }
        s.push_str(&end);
        s.push('\n');
    }
    let keyed_list = |name: &str| {
        if keyed_reqs.is_empty() {
            String::new()
        } else {
            format!("; cat \"$K/{name}\"")
        }
    };
    // Status files (verdicts from the whole file): one awk over those that
    // exist, printing the last decisive line of each: `M S <path>` then
    // the line.
    let status: Vec<&str> = requests
        .iter()
        .filter_map(|r| r.status.as_deref())
        .collect();
    if !status.is_empty() {
        s.push_str(&path_list("S", &status, nonce));
        s.push_str(&awk_over(
            "S",
            "{f=$0; l=\"\"; ok=0; while ((getline x < f) > 0) {ok=1; if (x ~ /\"status\"[ \\t]*:[ \\t]*\"(SUCCESS|FAILURE)\"|finished successfully\\./) l=x} close(f); if (ok) print M\" S \"f\"\\n\"l}",
        ));
    }
    // Completion records (at most 64 lines each).
    let completion: Vec<&str> = requests
        .iter()
        .filter(plain)
        .filter_map(|r| r.completion.as_deref())
        .collect();
    if !completion.is_empty() || !keyed_reqs.is_empty() {
        s.push_str(&path_list("C", &completion, nonce));
        s.push_str(&format!(
            "{{ printf '%s\\n' \"$C\"{} ; }} | awk -v M=\"$M\" '{}'\n",
            keyed_list("cf"),
            "$0 != \"\" {f=$0; n=0; while (n < 64 && (getline x < f) > 0) {if (n == 0) print M\" C \"f; print x; n++} close(f)}",
        ));
    }
    for r in requests {
        if let Some((out, err)) = &r.logs {
            for p in [out, err] {
                s.push_str(&format!(
                    "if [ -f {q} ]; then printf '%s T %s %s\\n' \"$M\" \"$(wc -l < {q})\" {q}; tail -c {TAIL_BYTES} {q} | tail -n {tail_lines}; echo; fi\n",
                    q = quote(p)
                ));
            }
        }
    }
    // Progress: the last TAIL_BYTES of each status.json, for all of them in
    // one `stat` and one `tail` (xargs splits only past the argument-size
    // limit): `M P`, `<size> <mtime> <path>` lines, `M PT`, tail's own
    // `==> path <==` sections; then the same for RUNNING jobs' last lines
    // (`M PS`, `M PR`); `M PE`. Missing files are left out by stat and
    // tail themselves; GNU tail seeks, so each file costs the same
    // whatever its size.
    let progress: Vec<&str> = requests
        .iter()
        .filter(plain)
        .filter_map(|r| r.progress.as_deref())
        .collect();
    if !progress.is_empty() || !keyed_reqs.is_empty() {
        s.push_str(&path_list("P", &progress, nonce));
        let full = format!("{{ printf '%s\\n' \"$P\"{} ; }}", keyed_list("pf"));
        s.push_str(&format!(
            "printf '%s P\\n' \"$M\"\n{full} | {STAT}\nprintf '%s PT\\n' \"$M\"\n{full} | tr '\\n' '\\0' | xargs -0 -r tail -v -c {n} -- 2>/dev/null\necho\nprintf '%s PS\\n' \"$M\"\n",
            n = tao_core::progress::TAIL_BYTES,
        ));
        if keyed_reqs.is_empty() {
            s.push_str("printf '%s PR\\n' \"$M\"\necho\nprintf '%s PU\\n' \"$M\"\necho\n");
        } else {
            // Running jobs' files: stat'ed (one stat for all) and picked
            // by the classifying awk itself ([`CLASSIFY`]'s END: the
            // changed ones' stat lines in `ps`, their paths in the tail
            // list `pt`, one letter per file in `pu`: U unchanged, C
            // changed, M missing); one tail for the changed ones.
            s.push_str(&format!(
                "cat \"$K/ps\"\nprintf '%s PR\\n' \"$M\"\ntr '\\n' '\\0' < \"$K/pt\" | xargs -0 -r tail -v -n {l} -- 2>/dev/null\necho\nprintf '%s PU\\n' \"$M\"\ncat \"$K/pu\"\n",
                l = tao_core::progress::RUNNING_TAIL_LINES,
            ));
        }
        s.push_str("printf '%s PE\\n' \"$M\"\n");
    }
    if !keyed_reqs.is_empty() {
        s.push_str("rm -rf \"$K\"\n");
    }
    s.push_str("printf '%s E\\n' \"$M\"\n");
    s
}

/// The `stat` of a path list on stdin: `<size> <mtime> <path>` lines.
const STAT: &str = "tr '\\n' '\\0' | xargs -0 -r stat -L -c '%s %Y %n' -- 2>/dev/null";

/// The awk program that classifies keyed requests (see [`script`]): first
/// squeue's replies (`-F'|'`, columns JobArrayID, JobID, State; the
/// chunk is the reply's directory name), then the request quadruples on
/// stdin (key, known stamp, progress path, completion path). At its end
/// it picks the running jobs' files to read again: one `stat` of them all
/// (`<size> <mtime> <path>`); a file whose stat line equals the stamp its
/// job line recorded (`<size> <mtime> <path>`, `- - <path>` when none) is
/// unchanged ([`tao_core::progress::FileStamp`]'s rule): letter `U`,
/// nothing read; any other present file gets letter `C`, its stat line in
/// `ps` and its path in the tail list `pt`; an absent one `M`. The
/// letters, one per file and then a newline, go to `pu`. (One awk for
/// both: before 2026-12-02 a second awk did the picking, over the stat's
/// output and a copy of the stamps in two more temporary files.)
const CLASSIFY: &str = concat!(
    "function path(s,  i, r) {i = index(s, \" \"); r = substr(s, i + 1); i = index(r, \" \"); return substr(r, i + 1)} ",
    "BEGIN {printf \"%s K\\n\", M; PR = D \"/pr\"; PS = D \"/ps\"; PT = D \"/pt\"; PU = D \"/pu\"; PF = D \"/pf\"; CF = D \"/cf\"; ",
    "n = split(\"RUNNING CANCELLED FAILED TIMEOUT NODE_FAIL OUT_OF_MEMORY BOOT_FAIL DEADLINE PREEMPTED\", a, \" \"); ",
    "for (i = 1; i <= n; i++) LAST[a[i]] = 1} ",
    "FILENAME != \"-\" {if (FNR == 1) {n = split(FILENAME, a, \"/\"); c = a[n-1] \"|\"} ",
    "if (NF >= 3) {s = $3; if (s ~ /[ \\t]/) gsub(/[ \\t]/, \"\", s); ",
    "for (i = 1; i <= 2; i++) {id = $i; if (id ~ /[ \\t]/) gsub(/[ \\t]/, \"\", id); ",
    "if (id != \"\") {k = c id; if ((k in st) && st[k] != s) st[k] = \"?\"; else st[k] = s}}} next} ",
    "{m = (FNR - 1) % 4} ",
    "m == 0 {cl = \"F\"; if ($0 in st) {s = st[$0]; if (s in LAST) cl = \"R\"; else if (s == \"PENDING\") cl = \"P\"} printf \"%s\", cl; next} ",
    "m == 1 {kn = $0; next} ",
    "{i = index($0, \" \"); pv = substr(pv, 1, substr($0, 1, i - 1) + 0) substr($0, i + 1)} ",
    "m == 2 {if (pv != \"\") {if (cl == \"R\") {print pv > PR; nr++; RK[nr] = kn \" \" pv; RP[nr] = pv} else if (cl == \"F\") print pv > PF} next} ",
    "cl == \"F\" && pv != \"\" {print pv > CF} ",
    "END {print \"\"; close(PR); ",
    "cmd = \"tr \\\"\\\\n\\\" \\\"\\\\0\\\" < \\\"\" PR \"\\\" | xargs -0 -r stat -L -c \\\"%s %Y %n\\\" -- 2>/dev/null\"; ",
    "while ((cmd | getline x) > 0) ss[path(x)] = x; close(cmd); ",
    "for (j = 1; j <= nr; j++) {p = RP[j]; if (!(p in ss)) l = \"M\"; else if (ss[p] == RK[j]) l = \"U\"; else {l = \"C\"; print ss[p] > PS; print p > PT} printf \"%s\", l > PU} ",
    "printf \"\\n\" > PU}",
);

/// Append `path` to a request list of [`script_with`] front-coded against
/// `prev`, the path before it (`<n> <rest>`: the first `n` bytes of the
/// previous path, then `rest`; [`CLASSIFY`] decodes it). The paths of one
/// poll share long prefixes (`<base>/results/`, a job's own directory),
/// so the list is about half the bytes (for 10,000 jobs, about a
/// megabyte less for the login host's shell to read). `prev` becomes
/// `path`.
fn push_front_coded(s: &mut String, prev: &mut String, path: &str) {
    let mut n = prev
        .bytes()
        .zip(path.bytes())
        .take_while(|(a, b)| a == b)
        .count();
    while !path.is_char_boundary(n) {
        n -= 1;
    }
    s.push_str(&n.to_string());
    s.push(' ');
    s.push_str(&path[n..]);
    s.push('\n');
    prev.clear();
    prev.push_str(path);
}

/// Whether `r` is read by its job's squeue state ([`script_with`]).
fn keyed(r: &FileRequest, states: &str) -> bool {
    !states.is_empty() && is_keyed(r)
}

/// Read the progress tail of a local file (replay): at most
/// [`tao_core::progress::TAIL_BYTES`] bytes from its end, found by seeking,
/// so the time and memory spent do not depend on the file's size.
///
/// Errors: the file cannot be opened or read (absent included).
pub fn local_progress_tail(path: &std::path::Path) -> std::io::Result<ProgressTail> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = std::fs::File::open(path)?;
    let meta = f.metadata()?;
    let n = tao_core::progress::TAIL_BYTES;
    let size = meta.len();
    let from = size.saturating_sub(n);
    f.seek(SeekFrom::Start(from))?;
    let mut buf = Vec::with_capacity(n as usize);
    f.take(n).read_to_end(&mut buf)?;
    let mtime = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_secs() as i64);
    Ok(ProgressTail {
        text: String::from_utf8_lossy(&buf).into_owned(),
        cut: from > 0,
        lines_only: false,
        mtime,
        size: Some(size),
    })
}

/// The stamp of a local file (replay): its size and mtime in whole
/// seconds, as `stat -c '%s %Y'` prints them. `None` when it cannot be
/// stat'ed.
pub fn local_stamp(path: &std::path::Path) -> Option<tao_core::progress::FileStamp> {
    let m = std::fs::metadata(path).ok()?;
    let t = m.modified().ok()?;
    let mtime_s = match t.duration_since(std::time::UNIX_EPOCH) {
        Ok(d) => d.as_secs() as i64,
        // Before 1970: stat's %Y floors too.
        Err(e) => -(e.duration().as_secs_f64().ceil() as i64),
    };
    Some(tao_core::progress::FileStamp {
        size: m.len(),
        mtime_s,
    })
}

/// How a progress tail section was read.
#[derive(Debug, Clone, Copy)]
enum TailMode {
    /// `tail -c N`: at most N bytes per file.
    Bytes(usize),
    /// `tail -n N`: at most N whole lines per file.
    Lines(usize),
}

/// Split a progress section of the script's output (`stat` lines and
/// `tail -v` text) into one [`ProgressTail`] per path.
///
/// tail's `==> path <==` headers are searched in the order stat listed the
/// files, and the search for the next header starts only after the bytes
/// the current file is known to hold (min of its size and the tail bound:
/// N bytes, or N lines), so a status.json line that looks like a header
/// cannot cut another file's text short.
fn parse_progress_mode(stat: &str, tail: &str, mode: TailMode) -> HashMap<String, ProgressTail> {
    let entries: Vec<(usize, i64, &str)> = stat
        .lines()
        .filter_map(|l| {
            let mut it = l.splitn(3, ' ');
            let size = it.next()?.parse().ok()?;
            let mtime = it.next()?.parse().ok()?;
            Some((size, mtime, it.next()?))
        })
        .collect();
    let mut out = HashMap::with_capacity(entries.len());
    let mut pos = 0;
    let mut found: Vec<(usize, usize, &(usize, i64, &str))> = Vec::new();
    let mut header = String::new();
    for e in &entries {
        header.clear();
        header.push_str("==> ");
        header.push_str(e.2);
        header.push_str(" <==\n");
        let Some(at) = tail[pos..].find(&header).map(|i| i + pos) else {
            continue;
        };
        let start = at + header.len();
        found.push((at, start, e));
        let mut limit = (start + e.0).min(tail.len());
        // The size is stat's, the text tail's: a file written between the
        // two may put the bound inside a character.
        while !tail.is_char_boundary(limit) {
            limit -= 1;
        }
        pos = match mode {
            TailMode::Bytes(n) => (start + e.0.min(n)).min(tail.len()),
            TailMode::Lines(n) => {
                let mut p = start;
                for _ in 0..n {
                    match tail[p..limit].find('\n') {
                        Some(i) => p += i + 1,
                        None => {
                            p = limit;
                            break;
                        }
                    }
                }
                p
            }
        };
        while !tail.is_char_boundary(pos) {
            pos -= 1;
        }
    }
    for (k, (_, start, e)) in found.iter().enumerate() {
        // A text ends before the newline tail puts before the next
        // header; a header found mid-line (a file that grew after stat)
        // has none, and the byte before it may be inside a character.
        let end = found
            .get(k + 1)
            .map(|(at, _, _)| {
                let nl = *at > 0 && tail.as_bytes()[*at - 1] == b'\n';
                (if nl { at - 1 } else { *at }).max(*start)
            })
            .unwrap_or(tail.len());
        let text = tail[*start..end].to_string();
        let (cut, lines_only) = match mode {
            TailMode::Bytes(n) => (e.0 > n || text.len() >= n, false),
            TailMode::Lines(_) => (false, true),
        };
        out.insert(
            e.2.to_string(),
            ProgressTail {
                text,
                cut,
                lines_only,
                mtime: Some(e.1),
                size: Some(e.0 as u64),
            },
        );
    }
    out
}

/// Split the `tail -c` progress section of the script's output (`stat`
/// lines and `tail -v` text) into one [`ProgressTail`] per path (see
/// [`parse_progress_mode`]: headers are searched past each file's known
/// bytes, so a line that looks like a header cannot cut another file's
/// text short).
pub fn parse_progress(stat: &str, tail: &str) -> HashMap<String, ProgressTail> {
    parse_progress_mode(
        stat,
        tail,
        TailMode::Bytes(tao_core::progress::TAIL_BYTES as usize),
    )
}

/// Parse the script's output into records by path. Returns the records
/// keyed by remote path (status, completion and log paths alike; progress
/// tails under [`progress_key`]), and
/// whether the end marker was seen (a missing end marker means the output
/// was cut: the caller treats the read as failed).
pub fn parse_output(
    out: &str,
    nonce: &str,
    tail_lines: u32,
) -> (HashMap<String, PathRecord>, bool) {
    let marker = format!("@@tao-poll-{nonce} ");
    let mut map: HashMap<String, PathRecord> = HashMap::new();
    // The progress section is sliced out whole (it is most of the bytes of
    // a large poll: no per-line copying), then the rest is read by lines.
    let (before, after) = match progress_section(out, &marker) {
        Some(sec) => {
            let running = parse_progress_mode(
                sec.run_stat,
                sec.run_tail,
                TailMode::Lines(tao_core::progress::RUNNING_TAIL_LINES),
            );
            for (path, t) in parse_progress(sec.stat, sec.tail)
                .into_iter()
                .chain(running)
            {
                map.insert(progress_key(&path), PathRecord::Progress(t));
            }
            map.insert(
                STAMPS_KEY.to_string(),
                PathRecord::Classes(sec.run_letters.to_string()),
            );
            let b = &out[..sec.start];
            (b.strip_suffix('\n').unwrap_or(b), &out[sec.end..])
        }
        None => (out, ""),
    };
    let mut cur: Option<(String, PathRecord)> = None;
    let mut ended = false;
    let flush = |cur: &mut Option<(String, PathRecord)>, map: &mut HashMap<String, PathRecord>| {
        if let Some((p, mut r)) = cur.take() {
            if let PathRecord::Tail(t) = &mut r {
                // The script echoes one newline after each tail.
                if t.lines.last().is_some_and(String::is_empty) {
                    t.lines.pop();
                }
                if t.lines.len() > tail_lines as usize {
                    let cut = t.lines.len() - tail_lines as usize;
                    t.lines.drain(..cut);
                }
            }
            map.insert(p, r);
        }
    };
    let lines = before
        .split('\n')
        .chain(after.split('\n').filter(|_| !after.is_empty()));
    for line in lines {
        if let Some(rest) = line.strip_prefix(&marker) {
            flush(&mut cur, &mut map);
            let (kind, rest) = rest.split_once(' ').unwrap_or((rest, ""));
            match kind {
                "S" => cur = Some((rest.to_string(), PathRecord::Status(String::new()))),
                "K" => cur = Some((CLASSES_KEY.to_string(), PathRecord::Classes(String::new()))),
                "C" => cur = Some((rest.to_string(), PathRecord::Completion(String::new()))),
                "T" => {
                    let (count, path) = rest.split_once(' ').unwrap_or(("0", rest));
                    let total: u64 = count.trim().parse().unwrap_or(0);
                    cur = Some((
                        path.to_string(),
                        PathRecord::Tail(Tail {
                            first_line: total,
                            lines: Vec::new(),
                            present: true,
                        }),
                    ));
                }
                "E" => ended = true,
                _ => {}
            }
            continue;
        }
        if ended {
            continue;
        }
        match &mut cur {
            Some((_, PathRecord::Status(s))) if s.is_empty() => *s = line.to_string(),
            Some((_, PathRecord::Status(_))) => {}
            Some((_, PathRecord::Classes(s))) if s.is_empty() => *s = line.to_string(),
            Some((_, PathRecord::Classes(_))) => {}
            Some((_, PathRecord::Completion(s))) => {
                s.push_str(line);
                s.push('\n');
            }
            Some((_, PathRecord::Tail(t))) => t.lines.push(line.to_string()),
            Some((_, PathRecord::Progress(_))) | None => {}
        }
    }
    flush(&mut cur, &mut map);
    // first_line: total lines minus the tail length plus one.
    for r in map.values_mut() {
        if let PathRecord::Tail(t) = r {
            let n = t.lines.len() as u64;
            // `wc -l` counts newlines; a last line without one is still a line.
            let total = t.first_line.max(n);
            t.first_line = if n == 0 { 0 } else { total - n + 1 };
            cap_tail(t, TAIL_BYTES);
        }
    }
    (map, ended)
}

/// The parts of the progress section of the script's output.
struct ProgressSection<'a> {
    /// Where it starts (its `P` marker line) and ends (after its `PE` line).
    start: usize,
    end: usize,
    /// stat lines and `tail -c` text of the files read in full.
    stat: &'a str,
    tail: &'a str,
    /// stat lines and `tail -n` text of running jobs' changed files.
    run_stat: &'a str,
    run_tail: &'a str,
    /// One letter per running job's file (`U`, `C`, `M`: [`CLASSIFY`]).
    run_letters: &'a str,
}

/// Find the progress section of the script's output, from its `P` marker
/// line to the end of its `PE` line. `None` when there is none or it was
/// cut.
fn progress_section<'a>(out: &'a str, marker: &str) -> Option<ProgressSection<'a>> {
    let at_line = |pat: &str, from: usize| -> Option<usize> {
        let mut from = from;
        loop {
            let i = out[from..].find(pat)? + from;
            if i == 0 || out.as_bytes()[i - 1] == b'\n' {
                return Some(i);
            }
            from = i + 1;
        }
    };
    let tag = |t: &str| format!("{marker}{t}\n");
    let (p, pt, ps, pr, pu, pe) = (
        tag("P"),
        tag("PT"),
        tag("PS"),
        tag("PR"),
        tag("PU"),
        tag("PE"),
    );
    let start = at_line(&p, 0)?;
    let stat_from = start + p.len();
    let t = at_line(&pt, stat_from)?;
    let tail_from = t + pt.len();
    // A section of `tail -v` text ends before the newline the script's
    // `echo` added.
    let before = |e: usize, from: usize| if e > from { e - 1 } else { e };
    let s2 = at_line(&ps, tail_from)?;
    let run_stat_from = s2 + ps.len();
    let r = at_line(&pr, run_stat_from)?;
    let run_tail_from = r + pr.len();
    let u = at_line(&pu, run_tail_from)?;
    let letters_from = u + pu.len();
    let e = at_line(&pe, letters_from)?;
    Some(ProgressSection {
        start,
        end: e + pe.len(),
        stat: &out[stat_from..t],
        tail: &out[tail_from..before(s2, tail_from)],
        run_stat: &out[run_stat_from..r],
        run_tail: &out[run_tail_from..before(u, run_tail_from)],
        run_letters: out[letters_from..e].trim_end_matches('\n'),
    })
}

/// One path's record in the script output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathRecord {
    /// status.json's last decisive line (empty when none).
    Status(String),
    /// completion.json's text.
    Completion(String),
    /// A log tail.
    Tail(Tail),
    /// A status.json tail for `progress`.
    Progress(ProgressTail),
    /// The [`ReadClass`] letters of the keyed requests, in order (under
    /// [`CLASSES_KEY`]).
    Classes(String),
}

/// The key of the [`ReadClass`] letters in [`parse_output`]'s map (no
/// path holds a NUL).
pub const CLASSES_KEY: &str = "\0classes";

/// The key of the running files' letters in [`parse_output`]'s map: one
/// per request read as [`ReadClass::LastLines`] with a progress path
/// ([`reads_stamp`]), in order: `U` (unchanged stamp, not read), `C`
/// (read), `M` (absent).
pub const STAMPS_KEY: &str = "\0stamps";

/// Whether a request that its job's state put in [`ReadClass::LastLines`]
/// has its file stamped and selected by the script ([`CLASSIFY`]): it has
/// a progress path the script can list (not empty, no newline).
fn reads_stamp(r: &FileRequest) -> bool {
    r.progress
        .as_deref()
        .is_some_and(|p| !p.is_empty() && !p.contains('\n'))
}

/// Gather one job's records from the parsed output.
pub fn records_for(req: &FileRequest, map: &HashMap<String, PathRecord>) -> FileRecords {
    let mut fr = records_but_progress(req, map);
    if let Some(p) = &req.progress {
        if let Some(PathRecord::Progress(t)) = map.get(&progress_key(p)) {
            fr.progress = Some(t.clone());
        }
    }
    fr
}

/// [`records_for`] without the progress tail.
fn records_but_progress(req: &FileRequest, map: &HashMap<String, PathRecord>) -> FileRecords {
    let mut fr = FileRecords::default();
    if let Some(p) = &req.status {
        if let Some(PathRecord::Status(s)) = map.get(p) {
            fr.status_last = Some(s.clone()).filter(|s| !s.is_empty());
        }
    }
    if let Some(p) = &req.completion {
        if let Some(PathRecord::Completion(s)) = map.get(p) {
            fr.completion = Some(s.clone());
        }
    }
    if let Some((o, e)) = &req.logs {
        let get = |p: &String| match map.get(p) {
            Some(PathRecord::Tail(t)) => Some(t.clone()),
            _ => Some(Tail::default()),
        };
        fr.out = get(o);
        fr.err = get(e);
    }
    fr
}

/// [`records_for`] of every request, in order, moving the progress tails
/// out of `map` (they are most of its bytes) instead of copying them; a
/// path asked for twice gets its tail copied once more.
pub fn records_for_all(
    reqs: &[FileRequest],
    mut map: HashMap<String, PathRecord>,
) -> Vec<FileRecords> {
    let mut uses: HashMap<&str, usize> = HashMap::new();
    for r in reqs {
        if let Some(p) = &r.progress {
            *uses.entry(p.as_str()).or_default() += 1;
        }
    }
    let letters = match map.remove(CLASSES_KEY) {
        Some(PathRecord::Classes(l)) => l.into_bytes(),
        _ => Vec::new(),
    };
    let mut letters = letters.into_iter();
    let stamps = match map.remove(STAMPS_KEY) {
        Some(PathRecord::Classes(l)) => l.into_bytes(),
        _ => Vec::new(),
    };
    let mut stamps = stamps.into_iter();
    reqs.iter()
        .map(|r| {
            let class = is_keyed(r)
                .then(|| letters.next().and_then(ReadClass::from_letter))
                .flatten();
            let unchanged = class == Some(ReadClass::LastLines)
                && reads_stamp(r)
                && stamps.next() == Some(b'U');
            let mut fr = records_but_progress(r, &map);
            if let Some(p) = &r.progress {
                let key = progress_key(p);
                let n = uses.get_mut(p.as_str()).expect("counted above");
                *n -= 1;
                let rec = if *n == 0 {
                    map.remove(&key)
                } else {
                    map.get(&key).cloned()
                };
                if let Some(PathRecord::Progress(t)) = rec.filter(|_| !unchanged) {
                    fr.progress = Some(t);
                }
            }
            fr.class = class;
            fr.progress_unchanged = unchanged;
            fr
        })
        .collect()
}

/// Whether `r` was read by its job's squeue state: it has a
/// [`FileRequest::state_key`] (set only when squeue's reply is in the same
/// script) and something to read.
fn is_keyed(r: &FileRequest) -> bool {
    r.state_key.is_some() && (r.progress.is_some() || r.completion.is_some())
}

/// Whether the output holds one [`ReadClass`] letter for each request
/// read by its job's state ([`script_with`]); when it does not, what was
/// read for them is unknown and the read counts as failed.
pub fn classes_complete(reqs: &[FileRequest], map: &HashMap<String, PathRecord>) -> bool {
    let keyed: Vec<&FileRequest> = reqs.iter().filter(|r| is_keyed(r)).collect();
    let n = keyed.len();
    let ok = match map.get(CLASSES_KEY) {
        Some(PathRecord::Classes(l)) => {
            l.len() == n && l.bytes().all(|c| ReadClass::from_letter(c).is_some())
        }
        _ => n == 0,
    };
    if !ok || n == 0 {
        return ok;
    }
    // One stamp letter per running request with a listable path.
    let Some(PathRecord::Classes(l)) = map.get(CLASSES_KEY) else {
        return false;
    };
    let running = keyed
        .iter()
        .zip(l.bytes())
        .filter(|(r, c)| ReadClass::from_letter(*c) == Some(ReadClass::LastLines) && reads_stamp(r))
        .count();
    match map.get(STAMPS_KEY) {
        Some(PathRecord::Classes(s)) => {
            s.len() == running && s.bytes().all(|c| matches!(c, b'U' | b'C' | b'M'))
        }
        _ => false,
    }
}

/// The key of a path's progress record in [`parse_output`]'s map (the
/// same status.json also has a verdict record under its plain path).
pub fn progress_key(path: &str) -> String {
    format!("progress\0{path}")
}

#[cfg(test)]
mod tests {

    #[test]
    fn tails_are_capped_in_bytes() {
        let mut t = Tail {
            first_line: 10,
            lines: (0..10).map(|i| format!("{i}{}", "x".repeat(99))).collect(),
            present: true,
        };
        cap_tail(&mut t, 350);
        assert_eq!(t.lines.len(), 3);
        assert_eq!(t.first_line, 17);
        assert!(t.lines[0].starts_with('7'));
        let mut one = Tail {
            first_line: 5,
            lines: vec!["a".into(), "é".repeat(100_000)],
            present: true,
        };
        cap_tail(&mut one, TAIL_BYTES);
        assert_eq!(one.lines.len(), 1);
        assert!(one.lines[0].len() < TAIL_BYTES);
        assert_eq!(one.first_line, 6);
    }

    use super::*;

    #[test]
    fn last_decisive_status_line_wins() {
        let text = r#"{"date":"11/29/2026","time":"19:00:00","status":"STARTED","verbosity":"INFO","message":"Starting"}
{"status":"FAILURE","message":"first try"}
{"status":"RUNNING","message":"epoch 1","kpi":{"loss":0.1}}
{"status":"SUCCESS","message":"Train finished successfully."}
{"status":"RUNNING","message":"after"}"#;
        assert_eq!(status_verdict(text), Some(Verdict::StatusSuccess));
        assert_eq!(
            status_verdict(r#"{"status":"FAILURE","message":"boom"}"#),
            Some(Verdict::StatusFailure("boom".into()))
        );
        assert_eq!(status_verdict("{\"status\":\"STARTED\"}\nnot json"), None);
        // Current TAO: a good run ends with RUNNING "<Mode> finished
        // successfully." (after an earlier attempt's FAILURE, it decides).
        let tao = "{\"status\": \"FAILURE\", \"message\": \"Train was interrupted\"}\n{\"status\": \"STARTED\", \"message\": \"Starting dino train.\"}\n{\"status\": \"RUNNING\", \"message\": \"Train finished successfully.\"}\n";
        assert_eq!(status_verdict(tao), Some(Verdict::StatusSuccess));
        assert_eq!(
            status_line("{\"status\": \"RUNNING\", \"message\": \"Training loop in progress\"}"),
            None
        );
    }

    #[test]
    fn completion_of_another_attempt_is_ignored() {
        let fr = FileRecords {
            completion: Some(r#"{"exit_code":0,"slurm_job_id":"99"}"#.into()),
            ..Default::default()
        };
        assert_eq!(decide(&fr, "12").unwrap(), Verdict::Nothing);
        assert_eq!(decide(&fr, "99").unwrap(), Verdict::Completion(0));
        let bad = FileRecords {
            completion: Some("{".into()),
            ..Default::default()
        };
        assert!(decide(&bad, "1").is_err());
    }

    #[test]
    fn script_runs_and_parses_back() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().to_str().unwrap();
        std::fs::write(
            format!("{d}/status.json"),
            "{\"status\":\"STARTED\"}\n{\"status\":\"SUCCESS\",\"message\":\"ok\"}\n{\"status\":\"RUNNING\"}\n",
        )
        .unwrap();
        std::fs::write(format!("{d}/completion.json"), "{\"exit_code\": 3}\n").unwrap();
        let body: String = (1..=10).map(|i| format!("line {i}\n")).collect();
        std::fs::write(format!("{d}/main.out"), body).unwrap();
        std::fs::write(format!("{d}/main.err"), "no newline at end").unwrap();
        let req = FileRequest {
            status: Some(format!("{d}/status.json")),
            completion: Some(format!("{d}/completion.json")),
            logs: Some((format!("{d}/main.out"), format!("{d}/main.err"))),
            progress: None,
            job: None,
            state_key: None,
            known: None,
        };
        let missing = FileRequest {
            status: Some(format!("{d}/nope/status.json")),
            completion: Some(format!("{d}/nope/completion.json")),
            logs: Some((format!("{d}/nope/o"), format!("{d}/nope/e"))),
            progress: None,
            job: None,
            state_key: None,
            known: None,
        };
        let text = script(&[req.clone(), missing.clone()], "n0nce", 4);
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(&text)
            .output()
            .unwrap();
        let out = String::from_utf8(out.stdout).unwrap();
        let (map, ended) = parse_output(&out, "n0nce", 4);
        assert!(ended, "{out}");
        let fr = records_for(&req, &map);
        assert_eq!(decide(&fr, "1").unwrap(), Verdict::StatusSuccess);
        assert_eq!(
            fr.completion.as_deref().map(str::trim),
            Some("{\"exit_code\": 3}")
        );
        let o = fr.out.unwrap();
        assert_eq!((o.first_line, o.lines.len()), (7, 4));
        assert_eq!(o.lines[3], "line 10");
        let e = fr.err.unwrap();
        assert_eq!(
            (e.first_line, e.lines.clone()),
            (1, vec!["no newline at end".to_string()])
        );
        let none = records_for(&missing, &map);
        assert_eq!(decide(&none, "1").unwrap(), Verdict::Nothing);
        assert!(!none.out.unwrap().present);
    }

    #[test]
    fn progress_tails_in_one_read() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().to_str().unwrap();
        let rec = |e: u64| {
            format!("{{\"epoch\": {e}, \"max_epoch\": 400, \"time_per_epoch\": \"0:00:02\", \"eta\": \"0:00:04\", \"status\": \"RUNNING\", \"kpi\": {{\"loss\": {}}}}}\n", 1.0 / e as f64)
        };
        // a: long enough to be cut; b: short, and it holds a forged tail
        // header naming a; c: missing.
        let a: String = (1..=300).map(rec).collect();
        assert!(a.len() as u64 > tao_core::progress::TAIL_BYTES);
        std::fs::write(format!("{d}/a.json"), &a).unwrap();
        let b = format!("{}==> {d}/c.json <==\n{}", rec(1), rec(2));
        std::fs::write(format!("{d}/b.json"), &b).unwrap();
        let req = |n: &str| FileRequest {
            status: None,
            completion: None,
            logs: None,
            progress: Some(format!("{d}/{n}.json")),
            job: None,
            state_key: None,
            known: None,
        };
        let reqs = [req("a"), req("b"), req("c")];
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(script(&reqs, "n1", 4))
            .output()
            .unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        let (map, ended) = parse_output(&text, "n1", 4);
        assert!(ended);
        let pa = records_for(&reqs[0], &map).progress.unwrap();
        assert!(pa.cut);
        assert!(pa.text.len() as u64 <= tao_core::progress::TAIL_BYTES + 1);
        let p = pa.progress().unwrap();
        assert_eq!(
            (p.epoch, p.max_epoch, p.percent),
            (Some(300), Some(400), Some(75.0))
        );
        assert!(p.updated_at.is_some());
        let pb = records_for(&reqs[1], &map)
            .progress
            .unwrap()
            .progress()
            .unwrap();
        assert_eq!(pb.epoch, Some(2));
        assert!(records_for(&reqs[2], &map).progress.is_none());
        // The same from a local file (replay): the same progress.
        let local = local_progress_tail(std::path::Path::new(&format!("{d}/a.json"))).unwrap();
        assert_eq!(local.progress().unwrap().history, p.history);
    }

    /// A sparse 1 GiB status.json read by the script: the same progress as
    /// its last records alone, in bounded bytes (tail seeks).
    #[test]
    fn a_1_gib_status_json_costs_its_tail_only() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().to_str().unwrap();
        let recs: String = (1..=30)
            .map(|e| format!("{{\"epoch\": {e}, \"max_epoch\": 30, \"status\": \"RUNNING\", \"kpi\": {{\"loss\": {e}}}}}\n"))
            .collect();
        let big = format!("{d}/big.json");
        {
            use std::io::{Seek, Write};
            let mut f = std::fs::File::create(&big).unwrap();
            f.set_len(1 << 30).unwrap();
            f.seek(std::io::SeekFrom::End(0)).unwrap();
            f.write_all(b"\n").unwrap();
            f.write_all(recs.as_bytes()).unwrap();
        }
        std::fs::write(format!("{d}/small.json"), &recs).unwrap();
        let req = |p: &str| FileRequest {
            status: None,
            completion: None,
            logs: None,
            progress: Some(p.to_string()),
            job: None,
            state_key: None,
            known: None,
        };
        let reqs = [req(&big), req(&format!("{d}/small.json"))];
        let t0 = std::time::Instant::now();
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(script(&reqs, "g1", 0))
            .output()
            .unwrap();
        assert!(t0.elapsed() < std::time::Duration::from_secs(5));
        assert!(out.stdout.len() < 2 * tao_core::progress::TAIL_BYTES as usize + 4096);
        let (map, ended) = parse_output(&String::from_utf8_lossy(&out.stdout), "g1", 0);
        assert!(ended);
        let fr = records_for_all(&reqs, map);
        let (b, s) = (
            fr[0].progress.as_ref().unwrap(),
            fr[1].progress.as_ref().unwrap(),
        );
        assert!(b.cut && !s.cut);
        let (pb, ps) = (b.progress().unwrap(), s.progress().unwrap());
        assert_eq!(
            (pb.epoch, pb.percent, pb.kpi.clone()),
            (ps.epoch, ps.percent, ps.kpi.clone())
        );
        // No verdict line: unknown for the cut file, none for the whole one.
        assert_eq!(b.verdict_line(), None);
        assert_eq!(s.verdict_line(), Some(None));
    }

    /// Front-coded request paths decode to themselves in the login host's
    /// awk (the decoding line of CLASSIFY), spaces, multi-byte characters
    /// and empty paths included.
    #[test]
    fn front_coded_paths_decode_in_awk() {
        let paths = [
            "/b/results/tao-a/status.json",
            "/b/jobs/tao-a/slurm-logs/tao-a-7/completion.json",
            "",
            "/b/results/tao b é/status.json",
            "/b/results/tao b ü/status.json",
            "/b/results/tao b ü/status.json",
            "/other",
        ];
        let (mut s, mut prev) = (String::new(), String::new());
        for p in paths {
            push_front_coded(&mut s, &mut prev, p);
        }
        assert!(
            s.starts_with("0 /b/results/tao-a/status.json\n3 jobs/"),
            "{s}"
        );
        let decode = CLASSIFY
            .split("} ")
            .find(|p| p.contains("pv = substr"))
            .unwrap();
        let prog = format!("{decode}}} {{print pv}}");
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("LC_ALL=C awk '{prog}'"))
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .and_then(|mut c| {
                use std::io::Write;
                c.stdin.take().unwrap().write_all(s.as_bytes())?;
                c.wait_with_output()
            })
            .unwrap();
        let got = String::from_utf8(out.stdout).unwrap();
        assert_eq!(got.lines().collect::<Vec<_>>(), paths, "{prog}");
    }

    #[test]
    fn forged_marker_in_logs_is_plain_text() {
        let (map, ended) = parse_output("@@tao-poll-other E\n", "n", 5);
        assert!(map.is_empty());
        assert!(!ended);
    }
}
