//! Training progress from TAO's `status.json`, and the small text pictures
//! of it (progress bar, sparkline) that the terminal tables draw.
//!
//! TAO's status logger (nvidia_tao_pytorch/core/loggers/api_logging.py in
//! NVIDIA's public tao_pytorch_backend) appends one JSON object per line:
//! `date` (`M/D/YYYY`), `time` (`H:M:S`, the node's local time, no zone),
//! `status` (STARTED, RUNNING, SUCCESS, FAILURE, SKIPPED), `verbosity`,
//! `message`, and, once set on the logger, the sticky objects `kpi`,
//! `graphical` and `categorical` (every later record repeats them). Its
//! epoch callback (nvidia_tao_pytorch/core/callbacks/loggers.py,
//! `TAOStatusLogger.on_train_epoch_end`) writes a RUNNING record with
//! `epoch` (1-based count of finished epochs), `max_epoch`, and
//! `time_per_epoch` and `eta` as Python `str(timedelta)` text
//! (`0:00:12.345678`, `1 day, 2:03:04`).
//!
//! [`Progress::from_tail`] reads the last records of such a file (a bounded
//! tail: the caller reads at most [`TAIL_BYTES`] bytes, whatever the size of
//! the file) into the job line's `progress` object; [`curves`] reads whole
//! files into KPI curves for reports. Values that are not numbers are left
//! out of curves and sparklines, never guessed.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

/// Bytes read from the end of a status.json for `progress`: the bound on
/// the remote read per running job (about 10-15 TAO epoch records of
/// 250-400 bytes; 10,000 running jobs then move at most 40 MiB).
pub const TAIL_BYTES: u64 = 4 * 1024;

/// Values kept per KPI in `progress.history` (the sparkline's points).
pub const HISTORY_MAX: usize = 12;

/// Lines read from the end of the status.json of a job squeue calls
/// RUNNING: its progress is the last RUNNING record with `epoch`, which
/// TAO's epoch callback writes once per epoch, usually followed by at
/// most one record (the KPIs of that epoch's validation). About 600 bytes
/// per job instead of [`TAIL_BYTES`]; when these lines hold no epoch
/// record, the job line keeps the progress an earlier poll read
/// (tao-poll), never a made-up one.
pub const RUNNING_TAIL_LINES: usize = 2;

/// One record of a status.json, as far as progress is concerned.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Record {
    /// `status` (STARTED, RUNNING, SUCCESS, FAILURE, SKIPPED).
    pub status: String,
    /// `epoch`: finished epochs (1-based), when the record has one.
    pub epoch: Option<u64>,
    /// `max_epoch`.
    pub max_epoch: Option<u64>,
    /// `time_per_epoch` in seconds.
    pub time_per_epoch_s: Option<f64>,
    /// `eta` in seconds.
    pub eta_s: Option<f64>,
    /// Numeric values of `kpi`, then of `graphical` (kpi wins on a clash).
    pub values: BTreeMap<String, f64>,
    /// The `kpi` object as written (numbers and strings alike).
    pub kpi: Option<Map<String, Value>>,
}

/// A number from a JSON value: numbers, and strings holding one.
fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64().filter(|f| f.is_finite()),
        Value::String(s) => s.trim().parse::<f64>().ok().filter(|f| f.is_finite()),
        _ => None,
    }
}

/// A count from a JSON value (integer, or a string holding one).
fn count(v: &Value) -> Option<u64> {
    match v {
        Value::Number(n) => n.as_u64().or_else(|| {
            n.as_f64()
                .filter(|f| *f >= 0.0 && f.fract() == 0.0)
                .map(|f| f as u64)
        }),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// Seconds of a Python `str(timedelta)` text (`H:MM:SS[.ffffff]`, with an
/// optional `N day(s), ` prefix, negative days included) or of a plain
/// number of seconds. `None` for anything else.
pub fn parse_timedelta(v: &Value) -> Option<f64> {
    if let Value::Number(_) = v {
        return number(v);
    }
    let s = v.as_str()?.trim();
    if let Ok(f) = s.parse::<f64>() {
        return Some(f).filter(|f| f.is_finite());
    }
    let (days, hms) = match s.split_once(',') {
        Some((d, rest)) => {
            let n: f64 = d.split_whitespace().next()?.parse().ok()?;
            (n, rest.trim())
        }
        None => (0.0, s),
    };
    let mut parts = hms.split(':');
    let h: f64 = parts.next()?.parse().ok()?;
    let m: f64 = parts.next()?.parse().ok()?;
    let sec: f64 = parts.next()?.parse().ok()?;
    if parts.next().is_some() {
        return None;
    }
    Some(days * 86400.0 + h * 3600.0 + m * 60.0 + sec).filter(|f| f.is_finite())
}

/// The fields of a status.json record that progress reads; every other
/// field (`date`, `message`, `categorical`, ...) is skipped unparsed.
#[derive(serde::Deserialize)]
struct RawRecord<'a> {
    #[serde(borrow)]
    status: Option<std::borrow::Cow<'a, str>>,
    epoch: Option<Value>,
    max_epoch: Option<Value>,
    time_per_epoch: Option<Value>,
    eta: Option<Value>,
    kpi: Option<Map<String, Value>>,
    graphical: Option<Map<String, Value>>,
}

/// Read one status.json line. `None` for a line that is not a JSON object
/// with a string `status` (a torn last line, a partial first line of a
/// tail, anything else).
pub fn parse_record(line: &str) -> Option<Record> {
    let line = line.trim();
    if !line.starts_with('{') || !line.contains("\"status\"") {
        return None;
    }
    let r: RawRecord = serde_json::from_str(line).ok()?;
    let status = r.status?.into_owned();
    let mut values = BTreeMap::new();
    for m in [&r.graphical, &r.kpi].into_iter().flatten() {
        for (k, v) in m {
            if let Some(f) = number(v) {
                values.insert(k.clone(), f);
            }
        }
    }
    Some(Record {
        status,
        epoch: r.epoch.as_ref().and_then(count),
        max_epoch: r.max_epoch.as_ref().and_then(count),
        time_per_epoch_s: r.time_per_epoch.as_ref().and_then(parse_timedelta),
        eta_s: r.eta.as_ref().and_then(parse_timedelta),
        values,
        kpi: r.kpi.filter(|m| !m.is_empty()),
    })
}

/// KPI curves of whole records: per KPI name, `(epoch, value)` points in
/// epoch order, one per epoch. A record without `epoch` belongs to the
/// epoch of the last record before it that had one (0 before the first):
/// TAO's models set `kpi` right after the epoch record is written. The
/// last value written for an epoch wins.
pub fn curves<'a>(lines: impl IntoIterator<Item = &'a str>) -> BTreeMap<String, Vec<(u64, f64)>> {
    curves_of(lines.into_iter().filter_map(parse_record))
}

/// [`curves`] of records already read.
fn curves_of(records: impl IntoIterator<Item = Record>) -> BTreeMap<String, Vec<(u64, f64)>> {
    let mut by: BTreeMap<String, BTreeMap<u64, f64>> = BTreeMap::new();
    let mut epoch = 0;
    for r in records {
        if let Some(e) = r.epoch {
            epoch = e;
        }
        for (k, v) in r.values {
            by.entry(k).or_default().insert(epoch, v);
        }
    }
    by.into_iter()
        .map(|(k, m)| (k, m.into_iter().collect()))
        .collect()
}

/// A job's training progress: the `progress` object of job lines.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Progress {
    /// Finished epochs, from the last RUNNING record with `epoch`.
    pub epoch: Option<u64>,
    /// `max_epoch` of that record.
    pub max_epoch: Option<u64>,
    /// `epoch / max_epoch * 100`, rounded to 0.1, at most 100.
    pub percent: Option<f64>,
    /// Seconds left as the record says (`eta`), else
    /// `time_per_epoch * (max_epoch - epoch)`.
    pub eta_s: Option<f64>,
    /// Seconds per epoch as the record says.
    pub time_per_epoch_s: Option<f64>,
    /// The latest `kpi` object as written.
    pub kpi: Map<String, Value>,
    /// Per KPI, the last [`HISTORY_MAX`] values (one per epoch) in the
    /// tail, or carried on from the previous poll ([`Progress::carry_history`]).
    pub history: BTreeMap<String, Vec<f64>>,
    /// Per KPI, the tail's `(epoch, value)` points (not in the JSON).
    pub curve: BTreeMap<String, Vec<(u64, f64)>>,
    /// When the file was last written (RFC 3339 UTC), from its mtime:
    /// the same `stat` that gives [`Progress::file_mtime_s`]. TAO's own
    /// records carry only the node's local date and time with no zone,
    /// so the mtime is the one zoned time there is (and costs nothing
    /// more: the stat is needed for the incremental read anyway).
    pub updated_at: Option<String>,
    /// The status.json's size in bytes when this progress was read (the
    /// `stat` that preceded the read). With [`Progress::file_mtime_s`]
    /// it is sent back in the next poll's request: a file whose size and
    /// mtime are both unchanged is not read again and its progress stays
    /// as it is ([`FileStamp`]).
    pub file_size: Option<u64>,
    /// The status.json's mtime when this progress was read, whole
    /// seconds since the Unix epoch (UTC), as `stat -c %Y` prints it.
    pub file_mtime_s: Option<i64>,
}

/// The size and mtime of a status.json as one `stat` saw them: what a
/// job line's `progress` records (`file_size`, `file_mtime_s`) and the
/// next poll compares to decide whether to read the file again.
///
/// The rule: a file is read again when its size (bytes) or its mtime
/// (whole seconds since the Unix epoch) differs from the recorded one.
/// TAO's status logger only appends, so every new record changes the
/// size; a rewrite of the same length within the same second is not
/// seen (the next append is).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileStamp {
    /// Size in bytes.
    pub size: u64,
    /// mtime, whole seconds since the Unix epoch.
    pub mtime_s: i64,
}

impl FileStamp {
    /// The stamp a `progress` object records (`file_size`,
    /// `file_mtime_s`), or `None` when it records none (a progress read
    /// by an older tao-poll, or none at all: the file is read in full).
    pub fn of_progress(progress: Option<&Value>) -> Option<FileStamp> {
        let p = progress?;
        Some(FileStamp {
            size: p.get("file_size")?.as_u64()?,
            mtime_s: p.get("file_mtime_s")?.as_i64()?,
        })
    }

    /// Whether a file stamped `now` must be read again, given the stamp
    /// recorded at the last read (`None`: never read, so yes).
    pub fn changed(recorded: Option<FileStamp>, now: FileStamp) -> bool {
        recorded != Some(now)
    }
}

impl Progress {
    /// Progress from the text of a status.json tail. `cut` says the text
    /// starts inside the file (its first line is then partial and
    /// dropped). `None` when no record has an epoch or a KPI: a job with
    /// no such records has no progress, never a made-up one.
    pub fn from_tail(text: &str, cut: bool, updated_at: Option<String>) -> Option<Progress> {
        let mut lines: Vec<&str> = text.split('\n').collect();
        if cut && !lines.is_empty() {
            lines.remove(0);
        }
        let mut p = Progress {
            updated_at,
            ..Default::default()
        };
        let mut any = false;
        let records: Vec<Record> = lines.iter().filter_map(|l| parse_record(l)).collect();
        for r in &records {
            if r.status == "RUNNING" && r.epoch.is_some() {
                any = true;
                p.epoch = r.epoch;
                p.max_epoch = r.max_epoch.or(p.max_epoch);
                p.time_per_epoch_s = r.time_per_epoch_s;
                p.eta_s = r.eta_s;
            }
            if let Some(k) = &r.kpi {
                any = true;
                p.kpi = k.clone();
            }
        }
        if !any {
            return None;
        }
        p.curve = curves_of(records);
        for (k, pts) in &p.curve {
            let vals: Vec<f64> = pts.iter().map(|(_, v)| *v).collect();
            let start = vals.len().saturating_sub(HISTORY_MAX);
            p.history.insert(k.clone(), vals[start..].to_vec());
        }
        if let (Some(e), Some(m)) = (p.epoch, p.max_epoch) {
            if m > 0 {
                p.percent = Some(((e as f64 / m as f64 * 1000.0).round() / 10.0).min(100.0));
            }
            if p.eta_s.is_none() {
                p.eta_s = p.time_per_epoch_s.map(|t| t * m.saturating_sub(e) as f64);
            }
        }
        Some(p)
    }

    /// Carry the KPI history on from `prev`, the job line's `progress`
    /// of the previous poll: its `history` values (the last of them at its
    /// `epoch`), then this tail's values of later epochs, the last
    /// [`HISTORY_MAX`] kept. A short tail (a running job's last lines)
    /// then still draws a curve: of the epochs the polls saw, one value
    /// per epoch. Kept only where it is longer than the tail's own
    /// history; nothing is carried when `prev` has no epoch, or a later
    /// one than this tail (a new run), or either side has no epoch.
    pub fn carry_history(&mut self, prev: Option<&Value>) {
        let Some(prev) = prev.filter(|p| p.is_object()) else {
            return;
        };
        let (Some(pe), Some(ne)) = (prev.get("epoch").and_then(Value::as_u64), self.epoch) else {
            return;
        };
        let Some(ph) = prev.get("history").and_then(Value::as_object) else {
            return;
        };
        if ne < pe {
            return;
        }
        for (name, pts) in &self.curve {
            let mut carried: Vec<f64> = ph
                .get(name)
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_f64).collect())
                .unwrap_or_default();
            let Some(last) = carried.last_mut() else {
                continue;
            };
            // A value written again for the previous epoch replaces it.
            if let Some((_, v)) = pts.iter().rfind(|(e, _)| *e == pe) {
                *last = *v;
            }
            carried.extend(pts.iter().filter(|(e, _)| *e > pe).map(|(_, v)| *v));
            if carried.len() > pts.len() {
                let start = carried.len().saturating_sub(HISTORY_MAX);
                self.history.insert(name.clone(), carried[start..].to_vec());
            }
        }
    }

    /// The `progress` JSON object (absent values are left out).
    pub fn to_json(&self) -> Value {
        let mut o = Map::new();
        let round = |f: f64| (f * 1000.0).round() / 1000.0;
        if let Some(e) = self.epoch {
            o.insert("epoch".into(), json!(e));
        }
        if let Some(m) = self.max_epoch {
            o.insert("max_epoch".into(), json!(m));
        }
        if let Some(p) = self.percent {
            o.insert("percent".into(), json!(p));
        }
        if let Some(s) = self.eta_s {
            o.insert("eta_s".into(), json!(round(s)));
        }
        if let Some(s) = self.time_per_epoch_s {
            o.insert("time_per_epoch_s".into(), json!(round(s)));
        }
        o.insert("kpi".into(), Value::Object(self.kpi.clone()));
        o.insert("history".into(), json!(self.history));
        if let Some(u) = &self.updated_at {
            o.insert("updated_at".into(), json!(u));
        }
        if let Some(n) = self.file_size {
            o.insert("file_size".into(), json!(n));
        }
        if let Some(t) = self.file_mtime_s {
            o.insert("file_mtime_s".into(), json!(t));
        }
        Value::Object(o)
    }
}

/// A text progress bar of `width` cells for `percent` (0-100):
/// `█` for done cells, `░` for the rest.
pub fn bar(percent: f64, width: usize) -> String {
    let p = percent.clamp(0.0, 100.0);
    let done = ((p / 100.0) * width as f64).round() as usize;
    let mut s = "█".repeat(done.min(width));
    s.push_str(&"░".repeat(width - done.min(width)));
    s
}

/// The glyphs of [`bar`] and [`sparkline`] and the ASCII byte each becomes
/// outside a UTF-8 locale (one for one, so the columns of a table stay
/// aligned; the sparkline keeps its rising order `_.-~=+*#`).
const ASCII_GLYPHS: [(char, char); 9] = [
    ('█', '#'),
    ('░', '.'),
    ('▁', '_'),
    ('▂', '.'),
    ('▃', '-'),
    ('▄', '~'),
    ('▅', '='),
    ('▆', '+'),
    ('▇', '*'),
];

/// `text` (a table of [`progress_cell`] and [`kpi_cell`] cells) in glyphs
/// the locale can show: unchanged under a UTF-8 locale
/// ([`crate::cli::locale_is_utf8`]); else the block glyphs of the bar and
/// the sparkline become ASCII ([`ascii_glyphs`]). Other text is left as it
/// is (a job's own message is the job's).
pub fn glyphs_for_locale(text: String) -> String {
    if crate::cli::locale_is_utf8() {
        text
    } else {
        ascii_glyphs(&text)
    }
}

/// `text` with the block glyphs of [`bar`] and [`sparkline`] replaced by
/// ASCII, one character for one: `█` `#`, `░` `.`, `▁▂▃▄▅▆▇` `_.-~=+*`.
pub fn ascii_glyphs(text: &str) -> String {
    text.chars()
        .map(|c| {
            ASCII_GLYPHS
                .iter()
                .find(|(g, _)| *g == c)
                .map_or(c, |(_, a)| *a)
        })
        .collect()
}

/// A sparkline of `values` (`▁▂▃▄▅▆▇█`, one character per value, scaled
/// between their minimum and maximum; all equal values draw `▄`).
pub fn sparkline(values: &[f64]) -> String {
    const TICKS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    let (Some(lo), Some(hi)) = (
        finite.iter().copied().reduce(f64::min),
        finite.iter().copied().reduce(f64::max),
    ) else {
        return String::new();
    };
    finite
        .iter()
        .map(|v| {
            if hi - lo <= f64::EPSILON {
                TICKS[3]
            } else {
                TICKS[(((v - lo) / (hi - lo)) * 7.0).round() as usize]
            }
        })
        .collect()
}

/// A number as a table shows it: 4 significant digits, no exponent for
/// ordinary magnitudes.
pub fn short_number(v: f64) -> String {
    if v == 0.0 || (1e-3..1e6).contains(&v.abs()) {
        let digits = (3 - v.abs().log10().floor() as i32).clamp(0, 6) as usize;
        let s = format!("{v:.digits$}");
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    } else {
        format!("{v:.3e}")
    }
}

/// The table cell of a `progress` object: `[████░░░░] 3/10 30% ETA 00:05:00`,
/// or `-` when there is none.
pub fn progress_cell(progress: Option<&Value>, bar_width: usize) -> String {
    let Some(p) = progress.filter(|p| p.is_object()) else {
        return "-".into();
    };
    let mut s = String::new();
    if let Some(pc) = p.get("percent").and_then(Value::as_f64) {
        s.push_str(&format!("[{}] ", bar(pc, bar_width)));
    }
    match (
        p.get("epoch").and_then(Value::as_u64),
        p.get("max_epoch").and_then(Value::as_u64),
    ) {
        (Some(e), Some(m)) => s.push_str(&format!("{e}/{m}")),
        (Some(e), None) => s.push_str(&format!("epoch {e}")),
        _ => {}
    }
    if let Some(pc) = p.get("percent").and_then(Value::as_f64) {
        s.push_str(&format!(" {}%", short_number(pc)));
    }
    if let Some(eta) = p.get("eta_s").and_then(Value::as_f64) {
        s.push_str(&format!(" ETA {}", hms(eta.max(0.0) as i64)));
    }
    if s.is_empty() {
        "-".into()
    } else {
        s.trim().to_string()
    }
}

/// The KPI cell of a `progress` object: the first KPI (loss-like names
/// first) with its latest value and a sparkline of its history, e.g.
/// `loss 0.231 ▇▅▄▂▁`; `-` when there is none.
pub fn kpi_cell(progress: Option<&Value>) -> String {
    let Some(p) = progress else {
        return "-".into();
    };
    let kpi = p.get("kpi").and_then(Value::as_object);
    let hist = p.get("history").and_then(Value::as_object);
    let mut names: Vec<&String> = kpi.map(|k| k.keys().collect()).unwrap_or_default();
    if names.is_empty() {
        names = hist.map(|h| h.keys().collect()).unwrap_or_default();
    }
    names.sort_by_key(|n| (!n.to_ascii_lowercase().contains("loss"), n.to_string()));
    let Some(name) = names.first() else {
        return "-".into();
    };
    let latest = kpi
        .and_then(|k| k.get(name.as_str()))
        .and_then(number)
        .or_else(|| {
            hist.and_then(|h| h.get(name.as_str()))
                .and_then(Value::as_array)
                .and_then(|a| a.last())
                .and_then(Value::as_f64)
        });
    let series: Vec<f64> = hist
        .and_then(|h| h.get(name.as_str()))
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_f64).collect())
        .unwrap_or_default();
    let mut s = crate::cli::one_line(name);
    if let Some(v) = latest {
        s.push(' ');
        s.push_str(&short_number(v));
    }
    if series.len() > 1 {
        s.push(' ');
        s.push_str(&sparkline(&series));
    }
    s
}

/// The table cells of a pending job's `pending` object: `(progress
/// cell, message cell)`. A job that waits until someone acts (`action`
/// set: held, a request the partition can never meet, ...) shows that
/// advice instead of an expected start, since Slurm's estimate for it
/// means nothing; any other shows `starts ~YYYY-MM-DD HH:MM UTC` (or
/// `start unknown`). The message cell is `REASON: words`; with no reason
/// (squeue's `None` right after sbatch: the scheduler has not looked at the
/// job yet) `no reason from Slurm yet`. Both one line.
pub fn pending_cells(pending: &Value) -> (String, String) {
    let get = |k: &str| pending.get(k).and_then(Value::as_str);
    let words = get("words").unwrap_or("");
    let message = match get("reason") {
        Some(reason) => format!("{reason}: {words}"),
        None if !words.is_empty() => words.to_string(),
        None => "no reason from Slurm yet".to_string(),
    };
    let progress = match (get("action"), get("expected_start")) {
        (Some(a), _) => format!("will not start until you act: {a}"),
        (None, Some(t)) => format!(
            "starts ~{}",
            crate::time::parse_rfc3339(t)
                .map(|d| d.format("%Y-%m-%d %H:%M UTC").to_string())
                .unwrap_or_else(|| t.to_string())
        ),
        (None, None) => "start unknown".into(),
    };
    (
        crate::cli::one_line(&progress),
        crate::cli::one_line(&message),
    )
}

/// The message cell of a job in a table (`tao-record list`, `tao-poll
/// --watch`), one line. Input: the line's `error` object (if any), its
/// `state`, its `slurm.job_id` and the cell it shows otherwise (its
/// `message`, or a pending job's reason). A line that carries an error
/// shows it as what failed, so a failed submit never looks like a queued
/// job: `submit failed: MSG` (error.tool tao-submit), `poll failed: MSG`
/// (tao-poll), `error from TOOL: MSG` (any other tool). A PENDING line with
/// no Slurm job id and no error was opened but never submitted: `not
/// submitted` (PENDING covers it in the state vocabulary of tao-jobline(7);
/// the cell says why no scheduler knows it).
pub fn message_cell(
    error: Option<&Value>,
    state: Option<&str>,
    job_id: Option<&str>,
    otherwise: String,
) -> String {
    if let Some(e) = error.filter(|e| e.is_object()) {
        let get = |k: &str| e.get(k).and_then(Value::as_str).unwrap_or("");
        let msg = get("message");
        let text = match get("tool") {
            "tao-submit" => format!("submit failed: {msg}"),
            "tao-poll" => format!("poll failed: {msg}"),
            "" => format!("error: {msg}"),
            tool => format!("error from {tool}: {msg}"),
        };
        return crate::cli::one_line(&text);
    }
    let no_job = job_id.is_none_or(|j| j.trim().is_empty());
    if state == Some("PENDING") && no_job {
        return "not submitted".into();
    }
    otherwise
}

/// `HH:MM:SS`, or `Nd HH:MM:SS` from a day on.
pub fn hms(s: i64) -> String {
    let s = s.max(0);
    let (d, h, m, sec) = (s / 86400, s % 86400 / 3600, s % 3600 / 60, s % 60);
    if d > 0 {
        format!("{d}d{h:02}:{m:02}:{sec:02}")
    } else {
        format!("{h:02}:{m:02}:{sec:02}")
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn message_cell_names_what_failed_and_what_never_ran() {
        use super::message_cell;
        let e = |tool: &str| serde_json::json!({"tool": tool, "message": "no\nhost"});
        let s = |x: &str| x.to_string();
        assert_eq!(
            message_cell(Some(&e("tao-submit")), Some("PENDING"), None, s("-")),
            "submit failed: no\\nhost"
        );
        assert_eq!(
            message_cell(Some(&e("tao-poll")), Some("RUNNING"), Some("7"), s("x")),
            "poll failed: no\\nhost"
        );
        assert!(message_cell(Some(&e("tao-render")), None, None, s("-"))
            .starts_with("error from tao-render: no"));
        assert_eq!(
            message_cell(None, Some("PENDING"), None, s("-")),
            "not submitted"
        );
        assert_eq!(
            message_cell(None, Some("PENDING"), Some(" "), s("-")),
            "not submitted"
        );
        assert_eq!(
            message_cell(None, Some("PENDING"), Some("7"), s("Priority: waits")),
            "Priority: waits"
        );
        assert_eq!(message_cell(None, Some("ERROR"), None, s("-")), "-");
    }

    use super::*;

    const TAO: &str = r#"{"date": "12/1/2026", "time": "14:2:5", "status": "STARTED", "verbosity": "INFO", "message": "Starting Training Loop."}
{"epoch": 1, "max_epoch": 4, "time_per_epoch": "0:00:10.500000", "eta": "0:00:31.500000", "date": "12/1/2026", "time": "14:2:16", "status": "RUNNING", "verbosity": "INFO", "message": "Training loop in progress", "kpi": {"loss": 0.9, "accuracy": 0.5}}
{"epoch": 2, "max_epoch": 4, "time_per_epoch": "0:00:10", "eta": "0:00:20", "date": "12/1/2026", "time": "14:2:26", "status": "RUNNING", "verbosity": "INFO", "message": "Training loop in progress", "kpi": {"loss": 0.7, "accuracy": 0.6}}
{"date": "12/1/2026", "time": "14:2:27", "status": "RUNNING", "verbosity": "INFO", "message": "Train and Val metrics generated.", "kpi": {"loss": 0.6, "accuracy": 0.65}}
{"epoch": 3, "max_ep"#;

    #[test]
    fn timedelta_texts() {
        assert_eq!(parse_timedelta(&json!("0:00:12.5")), Some(12.5));
        assert_eq!(parse_timedelta(&json!("1 day, 2:03:04")), Some(93784.0));
        assert_eq!(parse_timedelta(&json!("2 days, 0:00:00")), Some(172800.0));
        assert_eq!(parse_timedelta(&json!(7)), Some(7.0));
        assert_eq!(parse_timedelta(&json!("soon")), None);
    }

    #[test]
    fn progress_of_a_tao_tail() {
        let p = Progress::from_tail(TAO, false, Some("2026-12-01T14:02:27Z".into())).unwrap();
        assert_eq!(
            (p.epoch, p.max_epoch, p.percent),
            (Some(2), Some(4), Some(50.0))
        );
        assert_eq!(p.eta_s, Some(20.0));
        assert_eq!(p.kpi.get("loss"), Some(&json!(0.6)));
        // Epoch 2's loss is the later kpi record's (it belongs to epoch 2).
        assert_eq!(p.history["loss"], vec![0.9, 0.6]);
        let j = p.to_json();
        assert_eq!(j["updated_at"], "2026-12-01T14:02:27Z");
        // A cut tail drops its partial first line.
        let cut = Progress::from_tail(&TAO[20..], true, None).unwrap();
        assert_eq!(cut.epoch, Some(2));
    }

    /// A running job's short tail (its last lines) carries the history
    /// of the previous poll on; a new run (an earlier epoch) does not.
    #[test]
    fn history_is_carried_from_the_previous_poll() {
        let rec = |e: u64, loss: f64| {
            format!("{{\"epoch\": {e}, \"max_epoch\": 9, \"status\": \"RUNNING\", \"kpi\": {{\"loss\": {loss}}}}}\n")
        };
        let prev = json!({"epoch": 3, "history": {"loss": [0.9, 0.8, 0.7]}});
        // Epochs 3 (written again, 0.65) and 5 in the tail: 4 was not seen.
        let mut p = Progress::from_tail(&(rec(3, 0.65) + &rec(5, 0.5)), false, None).unwrap();
        assert_eq!(p.history["loss"], vec![0.65, 0.5]);
        p.carry_history(Some(&prev));
        assert_eq!(p.history["loss"], vec![0.9, 0.8, 0.65, 0.5]);
        // The same epoch again: the history stays.
        let mut same = Progress::from_tail(&rec(3, 0.7), false, None).unwrap();
        same.carry_history(Some(&prev));
        assert_eq!(same.history["loss"], vec![0.9, 0.8, 0.7]);
        // A new run (epoch 1 after 3): its own history only.
        let mut again = Progress::from_tail(&rec(1, 2.0), false, None).unwrap();
        again.carry_history(Some(&prev));
        assert_eq!(again.history["loss"], vec![2.0]);
        // A longer tail of its own (a 4 KiB read) wins over a sparse carry.
        let long: String = (1..=5).map(|e| rec(e, 1.0 / e as f64)).collect();
        let mut full = Progress::from_tail(&long, false, None).unwrap();
        full.carry_history(Some(&json!({"epoch": 4, "history": {"loss": [0.9, 0.25]}})));
        assert_eq!(full.history["loss"].len(), 5);
        // Bounded: at most HISTORY_MAX values.
        let many = json!({"epoch": 20, "history": {"loss": vec![1.0; HISTORY_MAX]}});
        let mut b = Progress::from_tail(&rec(21, 0.1), false, None).unwrap();
        b.carry_history(Some(&many));
        assert_eq!(b.history["loss"].len(), HISTORY_MAX);
        assert_eq!(b.history["loss"].last(), Some(&0.1));
    }

    /// The changed-file rule: read again unless both size and mtime are
    /// the recorded ones; a progress without a stamp is read in full.
    #[test]
    fn file_stamp_selects_changed_files() {
        let at = |size, mtime_s| FileStamp { size, mtime_s };
        let p = json!({"epoch": 3, "file_size": 6000, "file_mtime_s": 1800000000});
        let rec = FileStamp::of_progress(Some(&p));
        assert_eq!(rec, Some(at(6000, 1800000000)));
        assert!(!FileStamp::changed(rec, at(6000, 1800000000)));
        assert!(FileStamp::changed(rec, at(6300, 1800000000)));
        assert!(FileStamp::changed(rec, at(6000, 1800000001)));
        assert!(FileStamp::changed(None, at(6000, 1800000000)));
        assert_eq!(FileStamp::of_progress(Some(&json!({"epoch": 3}))), None);
        assert_eq!(
            FileStamp::of_progress(Some(&json!({"file_size": "6000", "file_mtime_s": 1}))),
            None
        );
        assert_eq!(FileStamp::of_progress(None), None);
        // to_json carries the stamp round trip.
        let mut pr = Progress::from_tail(TAO, false, None).unwrap();
        pr.file_size = Some(6000);
        pr.file_mtime_s = Some(1800000000);
        assert_eq!(FileStamp::of_progress(Some(&pr.to_json())), rec);
    }

    #[test]
    fn no_epochs_no_kpi_no_progress() {
        assert!(
            Progress::from_tail(r#"{"status":"STARTED","message":"x"}"#, false, None).is_none()
        );
        assert!(Progress::from_tail("", false, None).is_none());
    }

    #[test]
    fn pictures() {
        assert_eq!(bar(50.0, 4), "██░░");
        assert_eq!(bar(150.0, 2), "██");
        assert_eq!(sparkline(&[1.0, 0.5, 0.0]), "█▅▁");
        assert_eq!(sparkline(&[2.0, 2.0]), "▄▄");
        assert_eq!(ascii_glyphs("[██░░] loss █▅▁ é"), "[##..] loss #=_ é");
        let all: String = (0..8)
            .map(|i| sparkline(&[0.0, 7.0, i as f64]).pop().unwrap())
            .collect();
        assert_eq!(ascii_glyphs(&all), "_.-~=+*#");
        assert_eq!(short_number(0.123456), "0.1235");
        assert_eq!(short_number(100.0), "100");
        let p = Progress::from_tail(TAO, false, None).unwrap().to_json();
        assert_eq!(progress_cell(Some(&p), 4), "[██░░] 2/4 50% ETA 00:00:20");
        assert_eq!(kpi_cell(Some(&p)), "loss 0.6 █▁");
        assert_eq!(progress_cell(None, 4), "-");
    }
}
