//! Parsing what squeue, sacct and scontrol print into [`Row`]s.
//!
//! Rows are split on a delimiter (`|`) or, for a pasted table with a header,
//! on whitespace, and read by column *name*, never by fixed character
//! positions: the job id is the key and only the first word of the state
//! cell is the state (sacct annotates: `CANCELLED by 0`). Free-text fields
//! (the reason) come last, so a `|` inside them cannot shift a column.
//! A line that cannot be read becomes an [`Issue`] (reported on stderr and,
//! when it names a job, on that job's line), never silently dropped. Rows of
//! job *steps* (`123.batch`, `123.0`, `123.extern`) are not jobs and are
//! skipped by rule.
//!
//! Our own queries use the column lists [`SQUEUE_COLUMNS`] and
//! [`SACCT_COLUMNS`] with `-h`/`-n` (no header); a saved output with its
//! header line (`sacct -P` without `-n`, `squeue -o ...` without `-h`, or a
//! default whitespace table) is read by that header instead, which is what
//! makes a user's paste replayable.
//!
//! Times: we run the commands with `SLURM_TIME_FORMAT=%s` (epoch seconds,
//! no time-zone guesswork; squeue(1)/sacct(1) ENVIRONMENT) and store them as
//! RFC 3339 UTC; a time in another format (a paste) is kept as printed;
//! `Unknown`, `N/A`, `None` are absent.

use std::collections::HashMap;

/// Which command a row came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Source {
    /// `squeue` (the controller's current view).
    Squeue,
    /// `sacct` (the accounting database).
    Sacct,
    /// `scontrol show job` (the controller, used without accounting).
    Scontrol,
}

impl Source {
    /// The command name, e.g. `"squeue"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Squeue => "squeue",
            Source::Sacct => "sacct",
            Source::Scontrol => "scontrol",
        }
    }
}

/// A column this parser understands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Col {
    /// The job id as shown to users: `123`, `123_4`, `123+0`, `123_[1-5]`.
    JobId,
    /// The raw, unique job id (sacct JobIDRaw, squeue `%A`/-O JobID).
    RawId,
    /// Het job leader id (squeue -O HetJobID; `N/A` when not het).
    HetId,
    /// Het job component offset (squeue -O HetJobOffset).
    HetOffset,
    /// The state, long or compact, possibly annotated.
    State,
    /// Why pending / why it ended (free text: keep it last).
    Reason,
    /// `NODELIST(REASON)` of squeue's default table: nodes when running, `(reason)` when pending.
    NodesOrReason,
    /// Exit code `code:signal`.
    ExitCode,
    /// Node list, e.g. `n[1-2]`.
    Nodes,
    /// Submit time.
    Submit,
    /// Start time.
    Start,
    /// End time.
    End,
    /// Elapsed / time used.
    Elapsed,
    /// Restart (requeue) count.
    Restarts,
    /// The cluster name (sacct Cluster).
    Cluster,
    /// A column we do not use.
    Other,
}

/// squeue `-O` fields we request, in order; the free-text reason last.
/// (`JobArrayID` prints `123_4` for array elements and `123+0` for het
/// components, `JobID` the raw id; checked on Slurm 22.05.)
#[rustfmt::skip]
pub const SQUEUE_COLUMNS: &[(&str, Col)] = &[
    ("JobArrayID", Col::JobId), ("JobID", Col::RawId), ("State", Col::State),
    ("NodeList", Col::Nodes), ("SubmitTime", Col::Submit), ("StartTime", Col::Start),
    ("EndTime", Col::End), ("TimeUsed", Col::Elapsed), ("RestartCnt", Col::Restarts),
    ("Reason", Col::Reason),
];

/// The squeue `-o` format used when `-O` is refused (older Slurm): the same
/// columns less the restart count.
pub const SQUEUE_LEGACY_FORMAT: &str = "%i|%A|%T|%N|%V|%S|%e|%M|%r";

/// Columns of [`SQUEUE_LEGACY_FORMAT`].
pub const SQUEUE_LEGACY_COLUMNS: &[Col] = &[
    Col::JobId,
    Col::RawId,
    Col::State,
    Col::Nodes,
    Col::Submit,
    Col::Start,
    Col::End,
    Col::Elapsed,
    Col::Reason,
];

/// sacct `-o` fields we request (with `-P -n -X`), in order; reason last.
#[rustfmt::skip]
pub const SACCT_COLUMNS: &[(&str, Col)] = &[
    ("JobIDRaw", Col::RawId), ("JobID", Col::JobId), ("State", Col::State),
    ("ExitCode", Col::ExitCode), ("NodeList", Col::Nodes), ("Submit", Col::Submit),
    ("Start", Col::Start), ("End", Col::End), ("Elapsed", Col::Elapsed),
    ("Reason", Col::Reason),
];

/// The squeue `-O` argument for [`SQUEUE_COLUMNS`]: `JobArrayID:|,JobID:|,...`
/// (a suffix without a size prints the value unpadded and untruncated).
pub fn squeue_format_arg() -> String {
    SQUEUE_COLUMNS
        .iter()
        .map(|(n, _)| format!("{n}:|"))
        .collect::<Vec<_>>()
        .join(",")
}

/// The sacct `-o` argument for [`SACCT_COLUMNS`].
pub fn sacct_format_arg() -> String {
    SACCT_COLUMNS
        .iter()
        .map(|(n, _)| *n)
        .collect::<Vec<_>>()
        .join(",")
}

/// One job (or job component) as a command printed it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Row {
    /// Which command printed it (`None` only in `Default`).
    pub source: Option<Source>,
    /// 1-based line number in that command's output (scontrol: record number).
    pub line_no: usize,
    /// Job id as shown (`123`, `123_4`, `123+0`).
    pub job_id: String,
    /// Raw unique id, when printed.
    pub raw_id: Option<String>,
    /// State cell as printed, e.g. `CANCELLED by 0`.
    pub state: String,
    /// Reason, when printed and not `None`.
    pub reason: Option<String>,
    /// Exit code `code:signal`.
    pub exit_code: Option<String>,
    /// Node list.
    pub nodes: Option<String>,
    /// Submit time (RFC 3339 UTC when the command printed epoch seconds).
    pub submit_time: Option<String>,
    /// Start time.
    pub start_time: Option<String>,
    /// End time.
    pub end_time: Option<String>,
    /// Elapsed time as printed (`1-02:03:04`, `0:05`).
    pub elapsed: Option<String>,
    /// Restart count.
    pub restart_count: Option<u32>,
    /// Cluster, when printed.
    pub cluster: Option<String>,
}

/// A line of a command's output that could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Issue {
    /// The command whose output it was.
    pub source: Source,
    /// 1-based line number.
    pub line_no: usize,
    /// The line (or record) as printed.
    pub text: String,
    /// What is wrong with it.
    pub message: String,
    /// The job id it seems to concern (the first cell, when it looks like one).
    pub job_id: Option<String>,
}

impl Issue {
    /// One-line description for stderr: `sacct line 3: ...: "text"`.
    pub fn describe(&self) -> String {
        format!(
            "{} output line {}: {}: {:?}",
            self.source.as_str(),
            self.line_no,
            self.message,
            self.text
        )
    }
}

/// Parsed output: the rows and the lines that could not be read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Parsed {
    /// Rows of jobs (steps excluded).
    pub rows: Vec<Row>,
    /// Lines that could not be read.
    pub issues: Vec<Issue>,
}

fn header_col(name: &str) -> Col {
    let n = name
        .trim()
        .trim_end_matches('+')
        .to_ascii_uppercase()
        .replace(['-', ' '], "_");
    match n.as_str() {
        "JOBID" | "JOBARRAYID" | "JOB_ID" => Col::JobId,
        "JOBIDRAW" | "ARRAY_JOB_ID" | "RAWJOBID" => Col::RawId,
        "HET_JOB_ID" | "HETJOBID" => Col::HetId,
        "HET_JOB_OFFSET" | "HETJOBOFFSET" => Col::HetOffset,
        "STATE" | "ST" | "JOBSTATE" => Col::State,
        "REASON" => Col::Reason,
        "NODELIST(REASON)" => Col::NodesOrReason,
        "EXITCODE" | "EXIT_CODE" => Col::ExitCode,
        "NODELIST" | "NODES_LIST" => Col::Nodes,
        "SUBMIT" | "SUBMIT_TIME" | "SUBMITTIME" => Col::Submit,
        "START" | "START_TIME" | "STARTTIME" => Col::Start,
        "END" | "END_TIME" | "ENDTIME" => Col::End,
        "ELAPSED" | "TIME" | "TIME_USED" | "TIMEUSED" => Col::Elapsed,
        "RESTARTCNT" | "RESTARTS" | "RESTART_CNT" => Col::Restarts,
        "CLUSTER" => Col::Cluster,
        _ => Col::Other,
    }
}

/// Whether a line looks like a header: it names a state column and no cell
/// looks like a job id.
fn looks_like_header(cells: &[&str]) -> bool {
    cells.iter().any(|c| header_col(c) == Col::State)
        && cells
            .iter()
            .any(|c| header_col(c) == Col::JobId || header_col(c) == Col::RawId)
        && !cells.iter().any(|c| {
            c.trim()
                .chars()
                .next()
                .is_some_and(|ch| ch.is_ascii_digit())
        })
}

/// Normalise a time cell: `Unknown`/`N/A`/`None`/empty are absent; epoch
/// seconds become RFC 3339 UTC; anything else is kept as printed.
pub fn norm_time(cell: &str) -> Option<String> {
    let c = cell.trim();
    if c.is_empty()
        || ["unknown", "n/a", "none", "(null)"].contains(&c.to_ascii_lowercase().as_str())
    {
        return None;
    }
    if !c.is_empty() && c.len() <= 12 && c.bytes().all(|b| b.is_ascii_digit()) {
        if let Ok(secs) = c.parse::<i64>() {
            if let Some(t) = chrono::DateTime::from_timestamp(secs, 0) {
                return Some(t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true));
            }
        }
    }
    Some(c.to_string())
}

fn norm_text(cell: &str) -> Option<String> {
    let c = cell.trim();
    if c.is_empty()
        || ["none", "n/a", "(null)", "none assigned"].contains(&c.to_ascii_lowercase().as_str())
    {
        None
    } else {
        Some(c.to_string())
    }
}

/// Whether an id is a job step (`123.batch`, `123.0`, `123_4.extern`).
pub fn is_step_id(id: &str) -> bool {
    id.contains('.')
}

/// Whether a cell looks like a job id: digits, optionally with `_index`,
/// `_[range]`, `+offset` or `;cluster`.
pub fn looks_like_job_id(cell: &str) -> bool {
    let c = cell.trim();
    c.chars().next().is_some_and(|ch| ch.is_ascii_digit())
        && c.chars()
            .all(|ch| ch.is_ascii_alphanumeric() || "_[]-,+;.%".contains(ch))
}

/// Parse a delimited or whitespace table.
///
/// `columns` is the layout of header-less output (our own queries); a header
/// line in `text`, when present, overrides it. `delim` is the field
/// separator; a header line without it switches to whitespace splitting
/// (a pasted default `squeue`/`sacct` table; `----` rule lines are skipped).
/// The last column takes the rest of the line, so free text there is safe.
/// `trailing` says each line also ends with the delimiter (squeue `-O 'X:|'`,
/// `sacct -p`); a header line ending with it says the same.
pub fn parse_table(
    source: Source,
    text: &str,
    columns: &[Col],
    delim: char,
    trailing: bool,
) -> Parsed {
    let mut trailing = trailing;
    let mut out = Parsed::default();
    let mut cols: Vec<Col> = columns.to_vec();
    let mut whitespace = false;
    let mut seen_data = false;
    let mut spans: Option<Vec<(usize, usize)>> = None;
    for (idx, raw_line) in text.lines().enumerate() {
        let line_no = idx + 1;
        let line = raw_line.trim_end_matches('\r');
        // Rule lines of a pasted table give the column extents of a
        // whitespace table (cells may be blank there); `CLUSTER: name`
        // headers of `-M` output are skipped.
        if !line.trim().is_empty() && line.trim().chars().all(|c| c == '-' || c == ' ') {
            if whitespace && !seen_data {
                spans = Some(rule_spans(line));
            }
            continue;
        }
        if line.trim().is_empty() || line.starts_with("CLUSTER: ") {
            continue;
        }
        let first = line
            .split(|c: char| c == delim || c.is_whitespace())
            .find(|c| !c.is_empty())
            .unwrap_or("");
        if is_step_id(first) {
            continue;
        }
        // A header may appear before any data (a paste with its header).
        if !seen_data {
            let cells: Vec<&str> = if line.contains(delim) {
                line.split(delim).collect()
            } else {
                line.split_whitespace().collect()
            };
            if looks_like_header(&cells) {
                whitespace = !line.contains(delim);
                trailing = !whitespace && line.trim_end().ends_with(delim);
                let cells: Vec<&str> = if trailing {
                    line.trim_end()
                        .strip_suffix(delim)
                        .unwrap_or(line)
                        .split(delim)
                        .collect()
                } else {
                    cells
                };
                cols = cells.iter().map(|c| header_col(c)).collect();
                while cols.last() == Some(&Col::Other)
                    && cells.last().is_some_and(|c| c.trim().is_empty())
                {
                    cols.pop();
                }
                continue;
            }
        }
        seen_data = true;
        let line = if trailing {
            line.strip_suffix(delim).unwrap_or(line)
        } else {
            line
        };
        let parsed = match &spans {
            Some(sp) if sp.len() == cols.len() => parse_cells_spans(line, &cols, sp),
            _ => parse_cells(line, &cols, delim, whitespace),
        };
        match parsed {
            Ok(Some(mut row)) => {
                row.source = Some(source);
                row.line_no = line_no;
                out.rows.push(row);
            }
            Ok(None) => {}
            Err(message) => {
                let first = if whitespace {
                    line.split_whitespace().next().unwrap_or("")
                } else {
                    line.split(delim).next().unwrap_or("")
                };
                out.issues.push(Issue {
                    source,
                    line_no,
                    text: line.to_string(),
                    message,
                    job_id: looks_like_job_id(first).then(|| first.trim().to_string()),
                });
            }
        }
    }
    out
}

/// Split one line into cells; the last column takes the remainder.
fn split_cells(line: &str, n: usize, delim: char, whitespace: bool) -> Vec<&str> {
    if !whitespace {
        return line.splitn(n, delim).collect();
    }
    let mut cells = Vec::with_capacity(n);
    let mut rest = line.trim_start();
    while cells.len() + 1 < n {
        match rest.find(char::is_whitespace) {
            Some(i) => {
                cells.push(&rest[..i]);
                rest = rest[i..].trim_start();
            }
            None => {
                if !rest.is_empty() {
                    cells.push(rest);
                }
                rest = "";
                break;
            }
        }
    }
    if !rest.is_empty() {
        cells.push(rest.trim_end());
    }
    cells
}

/// Column extents `(start, end)` of the dash runs of a table's rule line.
fn rule_spans(rule: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, b) in rule.bytes().enumerate() {
        match (b == b'-', start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                out.push((s, i));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push((s, rule.len()));
    }
    out
}

/// Cut a line of a pasted table at the rule line's extents (the last
/// column runs to the end of the line).
fn parse_cells_spans(
    line: &str,
    cols: &[Col],
    spans: &[(usize, usize)],
) -> Result<Option<Row>, String> {
    if !line.is_ascii() {
        return parse_cells(line, cols, '|', true);
    }
    let cells: Vec<String> = spans
        .iter()
        .enumerate()
        .map(|(i, (a, b))| {
            let end = if i + 1 == spans.len() {
                line.len()
            } else {
                (*b).min(line.len())
            };
            line.get((*a).min(line.len())..end)
                .unwrap_or("")
                .trim()
                .to_string()
        })
        .collect();
    let joined = cells.join("\u{1f}");
    parse_cells(&joined, cols, '\u{1f}', false)
}

fn parse_cells(
    line: &str,
    cols: &[Col],
    delim: char,
    whitespace: bool,
) -> Result<Option<Row>, String> {
    let cells = split_cells(line, cols.len(), delim, whitespace);
    // A whitespace table may leave trailing optional cells (reason) empty.
    let required = cols
        .iter()
        .position(|c| *c == Col::State)
        .map(|i| i + 1)
        .unwrap_or(cols.len());
    if cells.len() < cols.len() && (!whitespace || cells.len() < required) {
        return Err(format!(
            "expected {} fields, found {}",
            cols.len(),
            cells.len()
        ));
    }
    let mut row = Row::default();
    let mut het: (Option<String>, Option<String>) = (None, None);
    for (col, cell) in cols.iter().zip(cells.iter()) {
        let cell = cell.trim();
        match col {
            Col::JobId => row.job_id = cell.to_string(),
            Col::RawId => row.raw_id = norm_text(cell),
            Col::HetId => het.0 = norm_text(cell).filter(|v| v != "0"),
            Col::HetOffset => het.1 = norm_text(cell),
            Col::State => row.state = cell.to_string(),
            Col::Reason => row.reason = norm_text(cell),
            Col::NodesOrReason => {
                if let Some(r) = cell.strip_prefix('(').and_then(|c| c.strip_suffix(')')) {
                    row.reason = norm_text(r);
                } else {
                    row.nodes = norm_text(cell);
                }
            }
            Col::ExitCode => row.exit_code = norm_text(cell),
            Col::Nodes => row.nodes = norm_text(cell),
            Col::Submit => row.submit_time = norm_time(cell),
            Col::Start => row.start_time = norm_time(cell),
            Col::End => row.end_time = norm_time(cell),
            Col::Elapsed => row.elapsed = norm_text(cell),
            Col::Restarts => {
                row.restart_count = match norm_text(cell) {
                    None => None,
                    Some(v) => Some(
                        v.parse()
                            .map_err(|_| format!("restart count {v:?} is not a number"))?,
                    ),
                }
            }
            Col::Cluster => row.cluster = norm_text(cell),
            Col::Other => {}
        }
    }
    if row.job_id.is_empty() {
        if let Some(raw) = &row.raw_id {
            row.job_id = raw.clone();
        }
    }
    if let (Some(h), Some(o)) = het {
        if !row.job_id.contains('+') {
            row.job_id = format!("{h}+{o}");
        }
    }
    if row.job_id.is_empty() {
        return Err("no job id".into());
    }
    if is_step_id(&row.job_id) || row.raw_id.as_deref().is_some_and(is_step_id) {
        return Ok(None);
    }
    if !looks_like_job_id(&row.job_id) {
        return Err(format!("job id {:?} is not a Slurm job id", row.job_id));
    }
    // An empty State cell is kept: the job maps to UNKNOWN (native `?`),
    // the other rows of the reply are unaffected (case sacct-empty-state).
    Ok(Some(row))
}

/// Parse header-less squeue `-O` output of [`SQUEUE_COLUMNS`] (or a saved
/// output with its header).
pub fn parse_squeue(text: &str) -> Parsed {
    let cols: Vec<Col> = SQUEUE_COLUMNS.iter().map(|(_, c)| *c).collect();
    parse_table(Source::Squeue, text, &cols, '|', true)
}

/// Parse header-less squeue `-o` output of [`SQUEUE_LEGACY_FORMAT`].
pub fn parse_squeue_legacy(text: &str) -> Parsed {
    parse_table(Source::Squeue, text, SQUEUE_LEGACY_COLUMNS, '|', false)
}

/// Parse header-less `sacct -P -n -X -o` output of [`SACCT_COLUMNS`] (or a
/// saved output with its header, `-P` or a default table).
pub fn parse_sacct(text: &str) -> Parsed {
    let cols: Vec<Col> = SACCT_COLUMNS.iter().map(|(_, c)| *c).collect();
    parse_table(Source::Sacct, text, &cols, '|', false)
}

/// Split `scontrol show job` text into `key=value` pairs. A value runs to
/// the next word that starts a new `Key=`; words without `=` continue the
/// previous value (values such as `Command=` and `Reason=` may hold spaces).
fn scontrol_pairs(record: &str) -> Vec<(String, String)> {
    let mut pairs: Vec<(String, String)> = Vec::new();
    for word in record.split_whitespace() {
        let starts_key = word.find('=').is_some_and(|i| {
            i > 0
                && word[..i]
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':' || c == '/')
                && word.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        });
        if starts_key {
            let (k, v) = word.split_once('=').expect("checked");
            pairs.push((k.to_string(), v.to_string()));
        } else if let Some(last) = pairs.last_mut() {
            last.1.push(' ');
            last.1.push_str(word);
        }
    }
    pairs
}

/// Parse `scontrol show job` output (multi-line records separated by blank
/// lines, or `-o` one record per line). Keys used: JobId, ArrayJobId,
/// ArrayTaskId, HetJobId, HetJobOffset, JobState, Reason, Restarts,
/// ExitCode, NodeList, SubmitTime, StartTime, EndTime, RunTime
/// (scontrol(1) "show job").
pub fn parse_scontrol(text: &str) -> Parsed {
    parse_scontrol_of(text, None)
}

/// Keys of `scontrol show job` whose values are free text a user chooses
/// (`--comment`, the command line, paths). scontrol prints them after
/// every key read here (JobId ... NodeList, then Command, WorkDir,
/// Comment, StdErr, StdIn, StdOut; scontrol(1) and Slurm 22.05 output),
/// so reading stops at the first of them: words inside them that look
/// like `JobState=FAILED` are never read as the job's own keys.
const FREE_TEXT_KEYS: &[&str] = &[
    "Command",
    "WorkDir",
    "Comment",
    "AdminComment",
    "SystemComment",
    "StdErr",
    "StdIn",
    "StdOut",
];

/// The name part of scontrol's `UserId=taouser(1000)`.
fn user_name(user_id: &str) -> &str {
    user_id.split('(').next().unwrap_or("").trim()
}

/// [`parse_scontrol`], keeping only the records of `user` (by `UserId=`)
/// when it is given: another user's job is not an answer about ours, even
/// when it names our id (a record of theirs is dropped without an issue).
///
/// Each record's keys are read up to the first free-text key
/// ([`FREE_TEXT_KEYS`]), and a repeated key keeps its first value: a
/// comment holding `JobId=100 JobState=FAILED ExitCode=9:0` cannot stand
/// for the job's own values, even for a key the record lacks.
pub fn parse_scontrol_of(text: &str, user: Option<&str>) -> Parsed {
    let mut out = Parsed::default();
    let mut records: Vec<(usize, String)> = Vec::new();
    let mut cur = String::new();
    let mut start = 0;
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.is_empty() {
            if !cur.is_empty() {
                records.push((start, std::mem::take(&mut cur)));
            }
            continue;
        }
        if t.starts_with("JobId=") && !cur.is_empty() {
            records.push((start, std::mem::take(&mut cur)));
        }
        if cur.is_empty() {
            start = i + 1;
        }
        cur.push_str(t);
        cur.push(' ');
    }
    if !cur.is_empty() {
        records.push((start, cur));
    }
    for (line_no, rec) in records {
        let mut map: HashMap<String, String> = HashMap::new();
        for (k, v) in scontrol_pairs(&rec) {
            if FREE_TEXT_KEYS.contains(&k.as_str()) {
                break;
            }
            map.entry(k).or_insert(v);
        }
        let get = |k: &str| map.get(k).map(String::as_str);
        if let Some(u) = user {
            if get("UserId").is_none_or(|id| user_name(id) != u) {
                continue;
            }
        }
        let Some(job) = get("JobId") else {
            out.issues.push(Issue {
                source: Source::Scontrol,
                line_no,
                text: rec.trim().to_string(),
                message: "record without JobId=".into(),
                job_id: None,
            });
            continue;
        };
        if !looks_like_job_id(job) {
            out.issues.push(Issue {
                source: Source::Scontrol,
                line_no,
                text: rec.trim().to_string(),
                message: format!("JobId={job:?} is not a Slurm job id"),
                job_id: None,
            });
            continue;
        }
        let Some(state) = get("JobState") else {
            out.issues.push(Issue {
                source: Source::Scontrol,
                line_no,
                text: rec.trim().to_string(),
                message: "record without JobState=".into(),
                job_id: Some(job.to_string()),
            });
            continue;
        };
        let job_id = match (
            get("ArrayJobId"),
            get("ArrayTaskId"),
            get("HetJobId"),
            get("HetJobOffset"),
        ) {
            (Some(a), Some(t), _, _) => format!("{a}_{t}"),
            (_, _, Some(h), Some(o)) => format!("{h}+{o}"),
            _ => job.to_string(),
        };
        let restart_count = match get("Restarts").map(str::parse::<u32>) {
            None => None,
            Some(Ok(n)) => Some(n),
            Some(Err(_)) => {
                out.issues.push(Issue {
                    source: Source::Scontrol,
                    line_no,
                    text: rec.trim().to_string(),
                    message: "Restarts= is not a number".into(),
                    job_id: Some(job.to_string()),
                });
                continue;
            }
        };
        out.rows.push(Row {
            source: Some(Source::Scontrol),
            line_no,
            job_id,
            raw_id: Some(job.to_string()),
            state: state.to_string(),
            reason: get("Reason").and_then(norm_text),
            exit_code: get("ExitCode").and_then(norm_text),
            nodes: get("NodeList").and_then(norm_text),
            submit_time: get("SubmitTime").and_then(norm_time),
            start_time: get("StartTime").and_then(norm_time),
            end_time: get("EndTime").and_then(norm_time),
            elapsed: get("RunTime").and_then(norm_text),
            restart_count,
            cluster: None,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn squeue_o_format_rows_with_trailing_delimiter() {
        let p = parse_squeue(
            "5_1|8|COMPLETED|n1|1795979121|1795979122|1795979123|0:01|0|None|\n\
             6+1|7|PENDING||1795979239|N/A|N/A|0:00|0|JobHeldUser|\n",
        );
        assert!(p.issues.is_empty(), "{:?}", p.issues);
        assert_eq!(p.rows[0].job_id, "5_1");
        assert_eq!(p.rows[0].raw_id.as_deref(), Some("8"));
        assert_eq!(
            p.rows[0].start_time.as_deref(),
            Some("2026-11-29T19:05:22Z")
        );
        assert_eq!(p.rows[0].reason, None);
        assert_eq!(p.rows[1].reason.as_deref(), Some("JobHeldUser"));
        assert_eq!(p.rows[1].nodes, None);
        assert_eq!(p.rows[1].restart_count, Some(0));
    }

    #[test]
    fn reason_with_delimiter_stays_whole() {
        let p = parse_squeue("9|9|PENDING||1|N/A|N/A|0:00|0|admin says a|b|\n");
        assert_eq!(p.rows[0].reason.as_deref(), Some("admin says a|b"));
    }

    #[test]
    fn short_rows_are_issues_naming_the_job() {
        let p = parse_sacct("42|42|RUNNING\n");
        assert!(p.rows.is_empty());
        assert_eq!(p.issues[0].job_id.as_deref(), Some("42"));
        assert!(p.issues[0].describe().contains("sacct output line 1"));
        let p = parse_sacct("garbage\n");
        assert_eq!(p.issues[0].job_id, None);
    }

    #[test]
    fn sacct_with_header_and_steps() {
        let text = "JobIDRaw|JobID|State|ExitCode\n7|7|COMPLETED|0:0\n7.batch|7.batch|COMPLETED|0:0\n7.extern|7.extern|COMPLETED|0:0\n";
        let p = parse_sacct(text);
        assert!(p.issues.is_empty(), "{:?}", p.issues);
        assert_eq!(p.rows.len(), 1);
        assert_eq!(p.rows[0].exit_code.as_deref(), Some("0:0"));
    }

    #[test]
    fn pasted_default_tables() {
        let sacct = "JobID           JobName  Partition    Account  AllocCPUS      State ExitCode \n\
                     ------------ ---------- ---------- ---------- ---------- ---------- -------- \n\
                     3                  wrap        gpu                     1 CANCELLED+      0:0 \n\
                     3.batch           batch                                1 CANCELLED      0:15 \n";
        let p = parse_sacct(sacct);
        assert!(p.issues.is_empty(), "{:?}", p.issues);
        assert_eq!(
            (p.rows[0].job_id.as_str(), p.rows[0].state.as_str()),
            ("3", "CANCELLED+")
        );
        let squeue = "JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)\n\
                      12       gpu     wrap  taouser PD       0:00      1 (JobHeldUser)\n\
                      13       gpu     wrap  taouser  R       0:05      1 n1\n";
        let p = parse_squeue(squeue);
        assert!(p.issues.is_empty(), "{:?}", p.issues);
        assert_eq!(p.rows[0].reason.as_deref(), Some("JobHeldUser"));
        assert_eq!(
            (p.rows[1].state.as_str(), p.rows[1].nodes.as_deref()),
            ("R", Some("n1"))
        );
    }

    #[test]
    fn scontrol_records() {
        let text = "JobId=11 JobName=wrap\n   UserId=taouser(1000) JobState=PENDING Reason=BeginTime Dependency=(null)\n   Requeue=1 Restarts=1 BatchFlag=1 Reboot=0 ExitCode=0:0\n   SubmitTime=2026-11-29T19:10:00 StartTime=Unknown EndTime=Unknown\n   NodeList=(null)\n\nJobId=12 ArrayJobId=10 ArrayTaskId=2 JobState=RUNNING Reason=None NodeList=n2 Command=/bin/x a b\n";
        let p = parse_scontrol(text);
        assert!(p.issues.is_empty(), "{:?}", p.issues);
        assert_eq!(p.rows.len(), 2);
        assert_eq!(p.rows[0].restart_count, Some(1));
        assert_eq!(p.rows[0].reason.as_deref(), Some("BeginTime"));
        assert_eq!(p.rows[0].start_time, None);
        assert_eq!(p.rows[1].job_id, "10_2");
        assert_eq!(p.rows[1].nodes.as_deref(), Some("n2"));
        let p = parse_scontrol("JobId=5 JobName=x\n");
        assert_eq!(p.issues.len(), 1);
    }

    /// Fuzzing found a JobId value that swallowed a stray word
    /// (fuzz/regressions/squeue_sacct/scontrol-jobid-unchecked-min): it is
    /// reported, never taken as a job.
    #[test]
    fn scontrol_first_key_wins_and_other_users_are_dropped() {
        let text = "JobId=100 JobName=x UserId=taouser(1000) JobState=RUNNING Reason=None Comment=JobId=100 JobState=FAILED ExitCode=9:0\n\
                    JobId=101 JobName=y UserId=mallory(1001) JobState=RUNNING Comment=HetJobId=100 HetJobOffset=0 JobState=FAILED\n";
        let p = parse_scontrol_of(text, Some("taouser"));
        assert_eq!(p.rows.len(), 1, "{p:?}");
        assert_eq!(
            (p.rows[0].job_id.as_str(), p.rows[0].state.as_str()),
            ("100", "RUNNING")
        );
        assert_eq!(p.rows[0].exit_code, None);
        assert!(p.issues.is_empty());
        // Without a user, both records are read, each by its own keys.
        let p = parse_scontrol(text);
        assert_eq!(p.rows.len(), 2);
        assert_eq!(p.rows[0].state, "RUNNING");
    }

    #[test]
    fn scontrol_jobid_that_is_not_a_job_id_is_an_issue() {
        let p =
            parse_scontrol("JobId=2245 ]JobName=x\n   JobState=FAILED Reason=NonZeroExitCode\n");
        assert!(p.rows.is_empty(), "{:?}", p.rows);
        assert_eq!(p.issues.len(), 1);
        assert!(p.issues[0].message.contains("not a Slurm job id"));
    }
}
