//! tao-classify: a failed job's evidence (native Slurm state + log text) ->
//! `classification` = infra / program / scheduler / unknown, and whether to
//! retry.
//!
//! A pure filter: job lines in, job lines out. Lines whose `state` is not
//! `ERROR` pass through byte for byte. An `ERROR` line gets
//! `classification = {class, subclass, rule, evidence: {file, line, text} | null,
//! node, retry, reason}`; every other field passes through in order.
//!
//! Library use (other crates):
//!
//! ```
//! use tao_classify::{classify, Catalogue, Options};
//! let cat = Catalogue::builtin().unwrap();
//! let mut line = tao_core::JobLine::parse(
//!     r#"{"id":"tao-x","state":"ERROR","slurm":{"native_state":"NODE_FAIL","nodes":"n1"}}"#, 1).unwrap();
//! let c = classify(&mut line, &cat, &Options::default()).unwrap().unwrap();
//! assert!(c.retry);
//! assert_eq!(line.get_str(&["classification", "class"]), Some("infra"));
//! ```
//!
//! Modules: [`catalogue`] (the rule data and its fast matcher), [`scan`]
//! (finding the deciding line in tails or streamed files), [`policy`] (the
//! retry policy), [`cli`] (arguments and the filter loop).

pub mod catalogue;
pub mod cli;
pub mod eval;
pub mod fallback;
pub mod policy;
pub mod scan;

use std::path::PathBuf;

use serde_json::Value;
use tao_core::{Error, JobLine, Result};

pub use catalogue::{Catalogue, Class, Rule, RuleSpec};
pub use policy::{Classification, EvidenceKind, EvidenceRef, DEFAULT_MAX_ATTEMPTS};
pub use scan::{Best, Hit};

/// A redaction function applied to every evidence line of a job line
/// (whole, before it is cut to 400 bytes) before it is written: the job
/// line (whose `secrets` name the values to mask) and bytes in, bytes out.
/// The binary uses tao-secrets' [`tao_secrets::LineRedactors`] (secrets
/// masked as `[REDACTED:<rule>]`, plus the exact values of HF_TOKEN,
/// NGC_KEY and of the line's own `secrets`).
pub type Redactor = Box<dyn Fn(&JobLine, &[u8]) -> Vec<u8> + Send + Sync>;

/// The cached result of scanning the `--log` files: the best hit and
/// whether any file had a byte, or the I/O failure (context, kind, text).
type LogScan = std::result::Result<(Best, bool), (String, std::io::ErrorKind, String)>;

/// How [`classify`] works.
pub struct Options {
    /// Retry budget: an infra fault is retried only while `attempt < max_attempts`
    /// (default [`DEFAULT_MAX_ATTEMPTS`] = 10: a first try and nine retries).
    pub max_attempts: u32,
    /// Log files to use as evidence instead of the line's `evidence` field
    /// (`--log FILE`, repeatable); streamed with bounded memory.
    pub logs: Vec<PathBuf>,
    /// Applied to every evidence text written into `classification.evidence.text`.
    pub redact: Option<Redactor>,
    /// Consult the evidence fallback ([`fallback`]) when no rule matched
    /// (default true; the training runner turns it off to see the rules alone).
    pub fallback: bool,
    /// Cache of the `--log` scan (the files are the same for every line).
    log_cache: std::sync::OnceLock<LogScan>,
    /// Cache of the `--log` files' last [`fallback::MAX_EXCERPT`] bytes.
    log_tail: std::sync::OnceLock<String>,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            max_attempts: DEFAULT_MAX_ATTEMPTS,
            logs: Vec::new(),
            redact: None,
            fallback: true,
            log_cache: std::sync::OnceLock::new(),
            log_tail: std::sync::OnceLock::new(),
        }
    }
}

impl std::fmt::Debug for Options {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Options")
            .field("max_attempts", &self.max_attempts)
            .field("logs", &self.logs)
            .field("redact", &self.redact.is_some())
            .field("fallback", &self.fallback)
            .finish()
    }
}

impl Options {
    /// Options with `max_attempts`, `logs` and an optional redactor.
    pub fn new(max_attempts: u32, logs: Vec<PathBuf>, redact: Option<Redactor>) -> Self {
        Self {
            max_attempts,
            logs,
            redact,
            ..Self::default()
        }
    }

    /// The same options with the evidence fallback on or off (off: the
    /// rules and the policy's defaults alone, as `make train` needs them).
    pub fn with_fallback(mut self, on: bool) -> Self {
        self.fallback = on;
        self
    }

    /// Scan the `--log` files once: the best hit over all of them, and
    /// whether any of them had a byte in it.
    fn scan_logs(&self, cat: &Catalogue) -> Result<(Best, bool)> {
        let cached = self.log_cache.get_or_init(|| {
            let mut best = Best::default();
            let mut any = false;
            for path in &self.logs {
                let label = path.display().to_string();
                let fail = |what: &str, e: std::io::Error| {
                    (
                        format!("{what} log file {label:?}"),
                        e.kind(),
                        e.to_string(),
                    )
                };
                let file = std::fs::File::open(path).map_err(|e| fail("opening", e))?;
                any |= file.metadata().map(|m| m.len() > 0).unwrap_or(true);
                best.merge(scan::scan_reader(cat, &label, file).map_err(|e| fail("reading", e))?);
            }
            Ok((best, any))
        });
        cached
            .clone()
            .map_err(|(context, kind, text)| Error::io(context, std::io::Error::new(kind, text)))
    }

    /// The excerpt the fallback reads from the `--log` files: the last
    /// [`fallback::MAX_EXCERPT`] bytes of each (seeked to, never the whole
    /// stream), joined. A file that cannot be seeked or read adds nothing
    /// (the scan has already reported a file it could not read).
    fn log_excerpt(&self) -> &str {
        self.log_tail.get_or_init(|| {
            use std::io::{Read, Seek, SeekFrom};
            let mut out = String::new();
            for path in &self.logs {
                let Ok(mut f) = std::fs::File::open(path) else {
                    continue;
                };
                let len = f.metadata().map(|m| m.len()).unwrap_or(0);
                let start = len.saturating_sub(fallback::MAX_EXCERPT as u64);
                if f.seek(SeekFrom::Start(start)).is_err() {
                    continue;
                }
                let mut buf = Vec::with_capacity(fallback::MAX_EXCERPT);
                if f.take(fallback::MAX_EXCERPT as u64)
                    .read_to_end(&mut buf)
                    .is_ok()
                {
                    let text = String::from_utf8_lossy(&buf);
                    // A cut line at the start is dropped (start > 0).
                    let text = match text.find('\n') {
                        Some(n) if start > 0 => &text[n + 1..],
                        _ => &text[..],
                    };
                    out.push_str(text);
                    out.push('\n');
                }
            }
            out
        })
    }
}

/// Classify one job line in place.
///
/// Input: a job line. If its `state` is not `"ERROR"`, or it is an ERROR
/// that an earlier tool set (an `error` object and no `slurm.native_state`:
/// the job never reached Slurm), nothing is touched and `Ok(None)` is
/// returned. Otherwise reads `slurm.native_state` (required),
/// `slurm.exit_code`, `slurm.nodes`, `slurm.reason`, `message`,
/// `resources.time`, `attempt` (default 1) and the evidence (`evidence`
/// tails, or the `--log` files of `opts`), sets `classification`
/// and returns it.
///
/// Errors: [`Error::BadLine`] (exit 65) when an ERROR line has no string
/// `slurm.native_state`, when `attempt` is not a positive integer, or when
/// `evidence` is not of the shape `{out?: {first_line, lines:[str]}, err?: ...}`;
/// [`Error::Io`] (exit 74) when a `--log` file cannot be read.
pub fn classify(
    line: &mut JobLine,
    cat: &Catalogue,
    opts: &Options,
) -> Result<Option<Classification>> {
    if line.state() != Some(tao_core::State::Error) {
        return Ok(None);
    }
    let slurm = line.slurm().unwrap_or_default();
    let bad = |message: String| Error::BadLine {
        line: line.line_no,
        message,
    };
    if slurm.native_state.is_none() && line.has_error() {
        // An earlier tool failed for this job (e.g. sbatch refused it): no
        // Slurm verdict to classify; the line goes on untouched.
        return Ok(None);
    }
    let native = slurm.native_state.as_deref().ok_or_else(|| {
        bad(
            "state is ERROR but `slurm.native_state` is missing; pipe lines through tao-poll first"
                .into(),
        )
    })?;
    let attempt = match line.fields.get("attempt") {
        None | Some(Value::Null) => 1,
        Some(v) => match v.as_u64() {
            Some(n) if n >= 1 && n <= u32::MAX as u64 => n as u32,
            _ => {
                return Err(bad(format!(
                    "`attempt` must be a positive integer, got {v}; 1 is the first try"
                )))
            }
        },
    };
    // Evidence: --log files win over the line's tails.
    let (best, kind) = if !opts.logs.is_empty() {
        let (best, any) = opts.scan_logs(cat)?;
        (
            best,
            if any {
                EvidenceKind::Lines
            } else {
                EvidenceKind::Empty
            },
        )
    } else {
        scan_tails(line, cat)?
    };
    // A context line elsewhere in the same evidence may narrow the reading.
    let mut best = best.refined(cat);
    // The scheduler's own words, for launch failures.
    let mut reason_hit = Best::default();
    for (file, path) in [
        ("slurm.reason", &["slurm", "reason"][..]),
        ("message", &["message"][..]),
    ] {
        if let Some(text) = line.get_str(path) {
            reason_hit.merge(scan::scan_lines(cat, file, 1, [text]));
        }
    }
    if let Some(redact) = &opts.redact {
        for hit in [&mut best.0, &mut reason_hit.0].into_iter().flatten() {
            hit.raw = redact(line, &hit.raw);
        }
    }
    // The evidence fallback: only when no rule matched lines that exist,
    // for a state whose decision the evidence makes.
    let mut verdict = None;
    if opts.fallback
        && best.0.is_none()
        && kind == EvidenceKind::Lines
        && policy::evidence_decides_state(native)
    {
        let model = fallback::Model::builtin();
        let entries = if !opts.logs.is_empty() {
            let file = opts.logs[0].display().to_string();
            opts.log_excerpt()
                .lines()
                .map(|l| (file.clone(), 0, l.to_string()))
                .collect()
        } else {
            tails_excerpt(line)
        };
        let entries = bounded(entries, fallback::MAX_EXCERPT);
        let text: String = entries.iter().map(|e| format!("{}\n", e.2)).collect();
        let v = model.score(&text);
        verdict = Some(policy::FallbackFacts {
            score: v.score,
            threshold: v.threshold,
            line: v
                .line
                .and_then(|(i, _)| entries.get(i))
                .map(|(file, no, text)| {
                    let raw = match &opts.redact {
                        Some(redact) => redact(line, text.as_bytes()),
                        None => text.clone().into_bytes(),
                    };
                    (file.clone(), *no, raw)
                }),
        });
    }
    let facts = policy::Facts {
        native_state: native,
        exit_code: slurm.exit_code.as_deref(),
        nodes: slurm.nodes.as_deref(),
        time_limit: line.get_str(&["resources", "time"]),
        attempt,
        max_attempts: opts.max_attempts,
        evidence: kind,
        best: best.0,
        reason_hit: reason_hit.0,
        fallback: verdict,
    };
    let c = policy::decide(cat, &facts);
    if let Some(redact) = &opts.redact {
        redact_evidence(line, redact);
    }
    let value = serde_json::to_value(&c).map_err(|e| Error::Internal(e.to_string()))?;
    line.fields.insert("classification".into(), value);
    Ok(Some(c))
}

/// Mask the `evidence` tails the line carries (what tao-record mark would
/// store): each `evidence.{out,err}.lines[i]` string through `redact`.
fn redact_evidence(line: &mut JobLine, redact: &Redactor) {
    let Some(ev) = line.fields.get("evidence") else {
        return;
    };
    let mut ev = ev.clone();
    let mut changed = false;
    for key in ["out", "err"] {
        if let Some(Value::Array(lines)) = ev.get_mut(key).and_then(|t| t.get_mut("lines")) {
            for l in lines.iter_mut() {
                if let Value::String(text) = l {
                    let masked = redact(line, text.as_bytes());
                    if masked != text.as_bytes() {
                        *text = String::from_utf8_lossy(&masked).into_owned();
                        changed = true;
                    }
                }
            }
        }
    }
    if changed {
        line.fields.insert("evidence".into(), ev);
    }
}

/// The fallback's excerpt from the `evidence` tails: `(file, line number,
/// text)` of every `err` line then every `out` line (control characters
/// made spaces, so one entry is one line).
fn tails_excerpt(line: &JobLine) -> Vec<(String, u64, String)> {
    let mut out = Vec::new();
    for key in ["err", "out"] {
        let Some(tail) = line.fields.get("evidence").and_then(|e| e.get(key)) else {
            continue;
        };
        let first = tail.get("first_line").and_then(Value::as_u64).unwrap_or(1);
        let Some(lines) = tail.get("lines").and_then(Value::as_array) else {
            continue;
        };
        for (i, l) in lines.iter().filter_map(Value::as_str).enumerate() {
            let text = l.replace(['\n', '\r'], " ");
            out.push((key.to_string(), first + i as u64, text));
        }
    }
    out
}

/// The last entries whose texts (each with its newline) fit in `max` bytes.
fn bounded(mut entries: Vec<(String, u64, String)>, max: usize) -> Vec<(String, u64, String)> {
    let mut total = 0;
    let mut keep = entries.len();
    while keep > 0 {
        let n = entries[keep - 1].2.len() + 1;
        if total + n > max {
            break;
        }
        total += n;
        keep -= 1;
    }
    entries.split_off(keep)
}

/// Scan the `evidence` field's tails (`out` then `err`).
fn scan_tails(line: &JobLine, cat: &Catalogue) -> Result<(Best, EvidenceKind)> {
    let Some(ev) = line.fields.get("evidence").filter(|v| !v.is_null()) else {
        return Ok((Best::default(), EvidenceKind::Absent));
    };
    let shape = || {
        Error::BadLine {
        line: line.line_no,
        message: "`evidence` must be {\"out\": {\"first_line\": N, \"lines\": [str]}, \"err\": {...}} as tao-poll --evidence writes it".into(),
    }
    };
    let ev = ev.as_object().ok_or_else(shape)?;
    let mut best = Best::default();
    let mut any = false;
    for key in ["err", "out"] {
        let Some(tail) = ev.get(key).filter(|v| !v.is_null()) else {
            continue;
        };
        let tail = tail.as_object().ok_or_else(shape)?;
        let first = match tail.get("first_line") {
            None | Some(Value::Null) => 1,
            Some(v) => v.as_u64().ok_or_else(shape)?,
        };
        let lines = match tail.get("lines") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(a)) => a
                .iter()
                .map(|v| v.as_str().ok_or_else(shape))
                .collect::<Result<Vec<_>>>()?,
            Some(_) => return Err(shape()),
        };
        any |= lines.iter().any(|l| !l.trim().is_empty());
        // err first: on ties of priority the earlier-scanned file keeps the hit.
        best.merge(scan::scan_lines(cat, key, first, lines));
    }
    Ok((
        best,
        if any {
            EvidenceKind::Lines
        } else {
            EvidenceKind::Empty
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(text: &str) -> JobLine {
        JobLine::parse(text, 4).unwrap()
    }

    #[test]
    fn non_error_lines_are_untouched() {
        let cat = Catalogue::builtin().unwrap();
        for s in ["RUNNING", "CANCELED", "COMPLETE"] {
            let text = format!(r#"{{"id":"a","state":"{s}","slurm":{{"native_state":"FAILED"}}}}"#);
            let mut l = line(&text);
            assert!(classify(&mut l, &cat, &Options::default())
                .unwrap()
                .is_none());
            assert_eq!(l.to_json(), text);
        }
    }

    #[test]
    fn tails_are_numbered_and_err_is_preferred_on_ties() {
        let cat = Catalogue::builtin().unwrap();
        let mut l = line(
            r#"{"id":"a","state":"ERROR","slurm":{"native_state":"FAILED","exit_code":"1:0"},"attempt":1,
            "evidence":{"out":{"first_line":10,"lines":["ok","ValueError: out"]},"err":{"first_line":200,"lines":["x","y","ValueError: err"]}}}"#,
        );
        let c = classify(&mut l, &cat, &Options::default())
            .unwrap()
            .unwrap();
        let ev = c.evidence.unwrap();
        assert_eq!((ev.file.as_str(), ev.line), ("err", 202));
        assert_eq!(
            l.get_str(&["classification", "rule"]),
            Some("python.exception")
        );
    }

    /// main.out and main.err are read together: the hardware cause in one
    /// outranks the program-looking consequence in the other, whichever
    /// file holds which.
    #[test]
    fn out_and_err_are_read_together_and_the_cause_wins() {
        let cat = Catalogue::builtin().unwrap();
        let xid = "kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=7, GPU has fallen off the bus.";
        let cuda = "RuntimeError: CUDA error: an illegal memory access was encountered";
        for (out, err) in [(xid, cuda), (cuda, xid)] {
            let text = format!(
                r#"{{"state":"ERROR","slurm":{{"native_state":"FAILED","nodes":"n1"}},"evidence":{{"out":{{"first_line":1,"lines":[{out:?}]}},"err":{{"first_line":1,"lines":[{err:?}]}}}}}}"#
            );
            let c = classify(&mut line(&text), &cat, &Options::default())
                .unwrap()
                .unwrap();
            assert_eq!((c.rule.as_str(), c.retry), ("xid.hardware", true), "{text}");
        }
    }

    /// A log no rule matches gets the fallback's score; the output says so.
    #[test]
    fn unmatched_logs_carry_the_fallback_score() {
        let cat = Catalogue::builtin().unwrap();
        let mut l = line(
            r#"{"state":"ERROR","slurm":{"native_state":"FAILED","nodes":"n1"},"evidence":{"err":{"first_line":3,"lines":["the frobnicator gave up"]}}}"#,
        );
        let c = classify(&mut l, &cat, &Options::default())
            .unwrap()
            .unwrap();
        let fb = c.fallback.expect("fallback consulted");
        assert!((0.0..=1.0).contains(&fb.score));
        assert_eq!(fb.threshold, fallback::Model::builtin().threshold);
        assert!(l.get_str(&["classification", "rule"]).is_some());
        assert!(l.fields["classification"]["fallback"]["score"].is_number());
        // Off: the policy's default alone.
        let opts = Options::default().with_fallback(false);
        let c = classify(&mut l, &cat, &opts).unwrap().unwrap();
        assert_eq!((c.rule.as_str(), c.fallback), ("evidence.no_match", None));
    }

    /// With --log, the fallback reads the file's last MAX_EXCERPT bytes
    /// only (seeked to), never the whole stream: a file whose only infra-
    /// looking line sits before its tail is scored on the tail.
    #[test]
    fn log_files_give_the_fallback_their_tail_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("main.err");
        let mut text = String::from("NCCL WARN NET/IB : Got completion from peer with status=12\n");
        while text.len() < 3 * fallback::MAX_EXCERPT {
            text.push_str("the frobnicator gave up\n");
        }
        std::fs::write(&path, &text).unwrap();
        let opts = Options::new(10, vec![path], None);
        let excerpt = opts.log_excerpt();
        assert!(
            excerpt.len() <= fallback::MAX_EXCERPT + 1,
            "{}",
            excerpt.len()
        );
        assert!(!excerpt.contains("NET/IB"));
        assert!(excerpt.starts_with("the frobnicator"));
    }

    #[test]
    fn bounded_keeps_the_last_lines_within_the_budget() {
        let e = |i: u64| ("err".to_string(), i, "x".repeat(9));
        let kept = bounded((1..=5).map(e).collect(), 25);
        assert_eq!(kept.iter().map(|k| k.1).collect::<Vec<_>>(), vec![4, 5]);
    }

    #[test]
    fn empty_tails_mean_no_log() {
        let cat = Catalogue::builtin().unwrap();
        let mut l = line(
            r#"{"state":"ERROR","slurm":{"native_state":"FAILED","exit_code":"0:53"},"evidence":{"out":{"first_line":1,"lines":[]},"err":null}}"#,
        );
        let c = classify(&mut l, &cat, &Options::default())
            .unwrap()
            .unwrap();
        assert_eq!((c.rule.as_str(), c.retry), ("launch.no_log", true));
    }

    #[test]
    fn error_from_an_earlier_tool_without_slurm_state_passes_through() {
        let cat = Catalogue::builtin().unwrap();
        let text = r#"{"state":"ERROR","error":{"tool":"tao-submit","code":"config","message":"sbatch: error: Invalid account"}}"#;
        let mut l = line(text);
        assert!(classify(&mut l, &cat, &Options::default())
            .unwrap()
            .is_none());
        assert_eq!(l.to_json(), text);
    }

    #[test]
    fn bad_shapes_are_bad_lines() {
        let cat = Catalogue::builtin().unwrap();
        for text in [
            r#"{"state":"ERROR","slurm":{}}"#,
            r#"{"state":"ERROR","slurm":{"native_state":"FAILED"},"attempt":0}"#,
            r#"{"state":"ERROR","slurm":{"native_state":"FAILED"},"attempt":"2"}"#,
            r#"{"state":"ERROR","slurm":{"native_state":"FAILED"},"evidence":{"out":{"lines":"x"}}}"#,
            r#"{"state":"ERROR","slurm":{"native_state":"FAILED"},"evidence":[1]}"#,
        ] {
            let err = classify(&mut line(text), &cat, &Options::default()).unwrap_err();
            assert_eq!(err.code(), tao_core::exit::DATAERR, "{text}");
            assert!(err.to_string().starts_with("line 4: "), "{err}");
        }
    }

    #[test]
    fn redactor_is_applied_to_evidence_text() {
        let cat = Catalogue::builtin().unwrap();
        let mut l = line(
            r#"{"state":"ERROR","slurm":{"native_state":"FAILED"},"evidence":{"err":{"first_line":1,"lines":["PermissionError: [Errno 13] Permission denied: '/r/hf_abcdefghijklmnopqrstuvwxyzABCDEFGH'"]}}}"#,
        );
        let opts = Options::new(
            3,
            vec![],
            Some(Box::new(|_: &JobLine, s: &[u8]| {
                String::from_utf8_lossy(s)
                    .replace("hf_abcdefghijklmnopqrstuvwxyzABCDEFGH", "[REDACTED:hf]")
                    .into_bytes()
            })),
        );
        let c = classify(&mut l, &cat, &opts).unwrap().unwrap();
        assert!(c.evidence.unwrap().text.ends_with("'/r/[REDACTED:hf]'"));
    }
}
