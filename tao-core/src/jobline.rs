//! The job line: one JSON object per line, UTF-8, `\n`-terminated.
//!
//! A [`JobLine`] is an ordered JSON object. Tools read the fields they need,
//! add their own, and pass every other field through untouched (unknown
//! keys included, in their original order), so `jq` can sit anywhere in a
//! pipeline. The fields are documented in `man/tao-jobline.7`.
//!
//! [`LineReader`] reads with one reused buffer and a 1-based line counter and
//! tells a syntax error ("line 17, column 3: invalid JSON") from a shape
//! error ("line 17: expected a JSON object"). [`LineWriter`] writes each
//! line with a single `write_all` and flushes it, so a reader never sees
//! half a line.

use std::io::{BufRead, Write};

use serde_json::{Map, Value};

use crate::error::{Error, Result};

/// What serde_json says about a syntax error, without its own position
/// (` at line 1 column 5`): serde parses one input line at a time, so its
/// line is always 1 and would contradict the input line number the report
/// names. The one rule for every tool's JSON-line error position: the
/// input line number and the column ([`Error::BadJson`]), said once.
pub fn json_error_words(e: &serde_json::Error) -> String {
    let text = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    text.strip_suffix(&suffix).unwrap_or(&text).to_string()
}

/// The pipeline order of the job tools (tao-jobline(7)): each stage adds
/// fields the next one needs.
pub const PIPELINE: &str = "tao-record open | tao-render | tao-redact lint | tao-submit";

/// The pipeline that submits the existing record `id` again through every
/// stage of [`PIPELINE`] and records the outcome, for advice:
/// `tao-record list --id ID | tao-render | tao-redact lint | tao-submit | tao-record mark`.
pub fn resubmit_pipeline(id: &str) -> String {
    format!(
        "tao-record list --id {id} | tao-render | tao-redact lint | tao-submit | tao-record mark"
    )
}

/// The fix for a job line missing the field at `path`: the stage of
/// [`PIPELINE`] that writes it. `script.*` is written by tao-render,
/// `lint.*` by tao-redact lint, `slurm.*` by tao-submit (or read back with
/// tao-record list), everything else (`id`, `storage.*`, the request) by
/// tao-record open. Output: one clause for an error message, e.g. "put
/// `tao-render | tao-redact lint` between tao-record open and tao-submit
/// (the pipeline: ...)".
pub fn stage_writing(path: &[&str]) -> String {
    match path.first().copied() {
        Some("script") => format!(
            "it is written by tao-render: put `tao-render | tao-redact lint` between `tao-record open` and this tool (the pipeline: `{PIPELINE}`)"
        ),
        Some("lint") => format!(
            "it is written by tao-redact lint: pipe the lines through `tao-redact lint` first (the pipeline: `{PIPELINE}`)"
        ),
        Some("slurm") => {
            "it is written by tao-submit: pipe lines from `tao-submit` or `tao-record list`".into()
        }
        _ => "it is written by tao-record open: pipe lines from `tao-record open` (or `tao-record list`)".into(),
    }
}

/// One job line: an ordered JSON object (key order is preserved on output).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JobLine {
    /// The fields, in input order.
    pub fields: Map<String, Value>,
    /// 1-based input line number this line came from (0 if it was made here).
    pub line_no: u64,
}

impl JobLine {
    /// An empty line (no fields).
    pub fn new() -> Self {
        Self::default()
    }

    /// Wrap a JSON object.
    pub fn from_map(fields: Map<String, Value>) -> Self {
        Self { fields, line_no: 0 }
    }

    /// Parse one line of text (without its newline).
    ///
    /// Errors: [`Error::BadLine`] naming `line_no` for invalid JSON (with the
    /// column) or for JSON that is not an object; a line starting with a
    /// UTF-8 byte-order mark ([`UTF8_BOM`]; [`LineReader`] skips one at the
    /// start of the input, so this is a file joined after the first) is
    /// said to be one, with the fix.
    pub fn parse(text: &str, line_no: u64) -> Result<Self> {
        let value: Value = serde_json::from_str(text).map_err(|e| Error::BadJson {
            line: line_no,
            column: e.column(),
            message: if text.starts_with('\u{FEFF}') {
                "invalid JSON (a UTF-8 byte-order mark at the start of the line, from a file joined after the first?); remove it (e.g. sed 's/^\\xEF\\xBB\\xBF//')".into()
            } else {
                format!(
                    "invalid JSON ({}); each input line must be one JSON object",
                    json_error_words(&e)
                )
            },
        })?;
        match value {
            Value::Object(fields) => Ok(Self { fields, line_no }),
            // A Slurm job id pasted from squeue where a job line belongs.
            Value::Number(_) if crate::id::looks_like_slurm_job_id(text) => Err(Error::BadLine {
                line: line_no,
                message: crate::id::slurm_id_as_line(text),
            }),
            other => Err(Error::BadLine {
                line: line_no,
                message: format!(
                    "expected a JSON object, got {}; each input line must be one job line",
                    kind_name(&other)
                ),
            }),
        }
    }

    /// The record id (`id`), if present and a string.
    pub fn id(&self) -> Option<&str> {
        self.fields.get("id").and_then(Value::as_str)
    }

    /// The value at a dotted path of object keys, e.g. `get_path(&["slurm", "job_id"])`.
    pub fn get_path(&self, path: &[&str]) -> Option<&Value> {
        let (first, rest) = path.split_first()?;
        let mut cur = self.fields.get(*first)?;
        for key in rest {
            cur = cur.as_object()?.get(*key)?;
        }
        Some(cur)
    }

    /// The string at a dotted path, if it is a string.
    pub fn get_str(&self, path: &[&str]) -> Option<&str> {
        self.get_path(path).and_then(Value::as_str)
    }

    /// Set the value at a dotted path, creating intermediate objects. An
    /// intermediate value that is not an object is replaced by one.
    pub fn set_path(&mut self, path: &[&str], value: Value) {
        let Some((last, parents)) = path.split_last() else {
            return;
        };
        let mut map = &mut self.fields;
        for key in parents {
            // Keys already there are found without allocating a copy.
            if !map.get(*key).is_some_and(Value::is_object) {
                map.insert(key.to_string(), Value::Object(Map::new()));
            }
            map = map
                .get_mut(*key)
                .and_then(Value::as_object_mut)
                .expect("just made an object");
        }
        match map.get_mut(*last) {
            // Replaced where it stands, as `insert` would.
            Some(v) => *v = value,
            None => {
                map.insert(last.to_string(), value);
            }
        }
    }

    /// A required string field at `path`.
    ///
    /// Errors: [`Error::MissingStage`] "missing string field `a.b`" naming
    /// this line and the pipeline stage that writes the field
    /// ([`stage_writing`]).
    pub fn require_str(&self, path: &[&str]) -> Result<&str> {
        self.get_str(path).ok_or_else(|| Error::MissingStage {
            line: self.line_no,
            message: format!(
                "missing string field `{}`; {}",
                path.join("."),
                stage_writing(path)
            ),
        })
    }

    /// Record that `tool` failed for this job: sets `error` to
    /// `{"tool", "code", "message"}`. The line goes on; the tool's exit
    /// status reports that some lines failed.
    pub fn set_error(&mut self, tool: &str, err: &Error) {
        self.set_error_parts(tool, err.kind(), &err.to_string());
    }

    /// Like [`JobLine::set_error`] with an explicit code and message.
    pub fn set_error_parts(&mut self, tool: &str, code: &str, message: &str) {
        let mut e = Map::new();
        e.insert("tool".into(), Value::String(tool.into()));
        e.insert("code".into(), Value::String(code.into()));
        e.insert("message".into(), Value::String(message.into()));
        self.fields.insert("error".into(), Value::Object(e));
    }

    /// Whether the line carries an `error` object from an earlier tool.
    pub fn has_error(&self) -> bool {
        self.fields.get("error").is_some_and(|v| !v.is_null())
    }

    /// Serialise to one line of JSON, without the trailing newline.
    pub fn to_json(&self) -> String {
        serde_json::to_string(&self.fields).expect("a JSON map always serialises")
    }
}

fn kind_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The longest job line the reader accepts, in bytes (64 MiB, newline
/// excluded). A job line holds its spec (tao-record refuses a spec over
/// 4 MiB), its script and its evidence tails; with JSON escaping that is
/// far under this bound. A longer line is a line error (exit 65) naming
/// its number and this bound; it is skipped without being kept in memory,
/// and the lines after it are still read.
pub const MAX_LINE_BYTES: usize = 64 << 20;

/// The UTF-8 byte-order mark (U+FEFF as bytes). Editors on Windows (and
/// PowerShell's `Out-File`) start a UTF-8 file with it; JSON forbids it
/// (RFC 8259 §8.1) but allows a parser to ignore it, as many Unix tools do.
pub const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// Reads job lines from any `BufRead` with a reused buffer and a 1-based
/// line counter. Blank lines are skipped (they still count). A UTF-8
/// byte-order mark ([`UTF8_BOM`]) at the very start of the input (line 1)
/// is skipped, as RFC 8259 §8.1 allows; one anywhere else is a bad line
/// (invalid JSON). Lines longer
/// than the reader's bound ([`MAX_LINE_BYTES`] unless set with
/// [`LineReader::with_max_line`]) are errors, read past in bounded memory.
pub struct LineReader<R> {
    inner: R,
    buf: Vec<u8>,
    line_no: u64,
    max_line: usize,
}

impl<R: BufRead> LineReader<R> {
    /// Wrap a reader; lines may be up to [`MAX_LINE_BYTES`] long.
    pub fn new(inner: R) -> Self {
        Self::with_max_line(inner, MAX_LINE_BYTES)
    }

    /// Wrap a reader whose lines may be up to `max_line` bytes long
    /// (newline excluded); for tests and for tools with a smaller bound.
    pub fn with_max_line(inner: R, max_line: usize) -> Self {
        Self {
            inner,
            buf: Vec::with_capacity(4096),
            line_no: 0,
            max_line,
        }
    }

    /// Read one line (through its `\n`) into `self.buf`, keeping at most
    /// `max_line + 2` bytes (room for `\r\n`); the rest of a longer line is
    /// consumed and dropped. Returns (bytes consumed, whether it was cut).
    fn read_bounded(&mut self) -> std::io::Result<(usize, bool)> {
        let cap = self.max_line.saturating_add(2);
        let mut total = 0usize;
        let mut cut = false;
        loop {
            let avail = match self.inner.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if avail.is_empty() {
                return Ok((total, cut));
            }
            let (chunk, done) = match memchr::memchr(b'\n', avail) {
                Some(i) => (&avail[..=i], true),
                None => (avail, false),
            };
            let room = cap.saturating_sub(self.buf.len());
            if chunk.len() > room {
                cut = true;
            }
            self.buf.extend_from_slice(&chunk[..chunk.len().min(room)]);
            let n = chunk.len();
            self.inner.consume(n);
            total = total.saturating_add(n);
            if done {
                return Ok((total, cut));
            }
        }
    }

    /// The number of the last line read (1-based; 0 before the first).
    pub fn line_no(&self) -> u64 {
        self.line_no
    }

    /// The text of the line [`LineReader::next_line`] returned last, as
    /// read (without its `\n` or `\r\n`); empty before the first line and
    /// unspecified after an error.
    pub fn last_text(&self) -> &str {
        let line = self.buf.strip_suffix(b"\n").unwrap_or(&self.buf);
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        std::str::from_utf8(line).unwrap_or("")
    }

    /// The next job line, `None` at end of input.
    ///
    /// Errors: [`Error::BadLine`] for a line that is not UTF-8, not JSON,
    /// not an object, or longer than the bound (the next call reads the
    /// line after it); [`Error::Io`] when reading fails.
    pub fn next_line(&mut self) -> Result<Option<JobLine>> {
        self.next_line_with(JobLine::parse)
    }

    /// [`LineReader::next_line`] with another parser of a line's text
    /// (without its newline; blank lines are skipped before it) and its
    /// 1-based number: for a tool that reads only some fields of a line
    /// (tao-poll passes an unchanged `progress` through as its text).
    /// `parse` must return the errors [`JobLine::parse`] would.
    ///
    /// Errors: as [`LineReader::next_line`], and those of `parse`.
    pub fn next_line_with<T>(
        &mut self,
        mut parse: impl FnMut(&str, u64) -> Result<T>,
    ) -> Result<Option<T>> {
        loop {
            self.buf.clear();
            let (n, cut) = self
                .read_bounded()
                .map_err(|e| Error::io("reading standard input", e))?;
            if n == 0 {
                return Ok(None);
            }
            self.line_no += 1;
            let line = self.buf.strip_suffix(b"\n").unwrap_or(&self.buf);
            let body = line.strip_suffix(b"\r").unwrap_or(line).len();
            if cut || body > self.max_line {
                return Err(Error::BadLine {
                    line: self.line_no,
                    message: format!(
                        "longer than {} bytes, the bound on one job line; it was skipped (the lines after it are read)",
                        self.max_line
                    ),
                });
            }
            if self.line_no == 1 && self.buf.starts_with(UTF8_BOM) {
                // Not part of the line: the file's encoding mark.
                self.buf.drain(..UTF8_BOM.len());
            }
            let text = std::str::from_utf8(&self.buf).map_err(|e| Error::BadLine {
                line: self.line_no,
                message: format!(
                    "not UTF-8 at byte {}; job lines are UTF-8 JSON",
                    e.valid_up_to()
                ),
            })?;
            let text = text.trim_end_matches(['\n', '\r']);
            if text.trim().is_empty() {
                continue;
            }
            return parse(text, self.line_no).map(Some);
        }
    }

    /// Every line up to the end of input or the first error, for a tool
    /// that acts on its lines together (one batched look-up for all) and
    /// stops reading at a bad line: the lines read before it, and the error
    /// (`None` at the end of input), as [`LineReader::next_line`] gives it.
    pub fn read_until_error(&mut self) -> (Vec<JobLine>, Option<Error>) {
        let mut lines = Vec::new();
        loop {
            match self.next_line() {
                Ok(Some(l)) => lines.push(l),
                Ok(None) => return (lines, None),
                Err(e) => return (lines, Some(e)),
            }
        }
    }
}

impl<R: BufRead> Iterator for LineReader<R> {
    type Item = Result<JobLine>;
    fn next(&mut self) -> Option<Self::Item> {
        self.next_line().transpose()
    }
}

/// Writes job lines: one `write_all` of the whole line plus `\n`, then a
/// flush, so a downstream reader never sees half a line and `tail -f`
/// style consumers see each line at once.
pub struct LineWriter<W: Write> {
    inner: W,
}

impl<W: Write> LineWriter<W> {
    /// Wrap a writer (usually `std::io::stdout().lock()`).
    pub fn new(inner: W) -> Self {
        Self { inner }
    }

    /// Write one job line and flush.
    ///
    /// Errors: [`Error::Io`] (a broken pipe has kind `BrokenPipe`; see
    /// [`crate::cli::is_broken_pipe`]).
    pub fn write(&mut self, line: &JobLine) -> Result<()> {
        let mut text = line.to_json();
        text.push('\n');
        self.write_raw(text.as_bytes())
    }

    /// Write pre-rendered bytes (which must end with `\n`) and flush.
    pub fn write_raw(&mut self, bytes: &[u8]) -> Result<()> {
        self.inner
            .write_all(bytes)
            .and_then(|_| self.inner.flush())
            .map_err(|e| Error::io("writing standard output", e))
    }

    /// The wrapped writer.
    pub fn into_inner(self) -> W {
        self.inner
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_past_the_bound_is_an_error_and_the_rest_is_read() {
        let long = format!("{{\"id\":\"{}\"}}", "x".repeat(100));
        let input = format!("{{\"id\":\"a\"}}\n{long}\n{{\"id\":\"b\"}}\r\n{long}");
        // A tiny BufReader capacity: lines span many fill_buf calls.
        let r = std::io::BufReader::with_capacity(7, input.as_bytes());
        let mut reader = LineReader::with_max_line(r, 50);
        let got: Vec<_> = (&mut reader).collect();
        assert_eq!(got.len(), 4);
        assert_eq!(got[0].as_ref().unwrap().id(), Some("a"));
        let e = got[1].as_ref().unwrap_err();
        assert_eq!(e.code(), crate::exit::DATAERR);
        let msg = e.to_string();
        assert!(msg.starts_with("line 2: longer than 50 bytes"), "{msg}");
        assert_eq!(got[2].as_ref().unwrap().id(), Some("b"));
        assert!(got[3]
            .as_ref()
            .unwrap_err()
            .to_string()
            .starts_with("line 4:"));
        // Exactly at the bound is fine, with or without \r\n.
        let at = format!("{{\"id\":\"{}\"}}", "y".repeat(41));
        assert_eq!(at.len(), 50);
        for input in [format!("{at}\n"), format!("{at}\r\n"), at.clone()] {
            let mut r = LineReader::with_max_line(input.as_bytes(), 50);
            assert!(r.next_line().unwrap().is_some(), "{input:?}");
        }
    }

    #[test]
    fn unknown_fields_pass_through_in_order() {
        let text = r#"{"zeta":1,"id":"tao-x","alpha":{"b":2,"a":1},"extra":[1,"two"]}"#;
        let line = JobLine::parse(text, 1).unwrap();
        assert_eq!(line.to_json(), text);
    }

    #[test]
    fn syntax_error_names_line_and_column() {
        let err = JobLine::parse("{\"id\": ", 17).unwrap_err();
        let msg = err.to_string();
        assert!(msg.starts_with("line 17, column"), "{msg}");
        assert_eq!(err.code(), crate::exit::DATAERR);
    }

    #[test]
    fn non_object_is_a_shape_error() {
        let err = JobLine::parse("[1,2]", 3).unwrap_err();
        assert!(err
            .to_string()
            .contains("line 3: expected a JSON object, got an array"));
    }

    #[test]
    fn reader_counts_lines_and_skips_blank_ones() {
        let input = b"{\"id\":\"a\"}\n\n{\"id\":\"b\"}\nnot json\n";
        let mut r = LineReader::new(&input[..]);
        assert_eq!(r.next_line().unwrap().unwrap().id(), Some("a"));
        let b = r.next_line().unwrap().unwrap();
        assert_eq!((b.id(), b.line_no), (Some("b"), 3));
        let err = r.next_line().unwrap_err();
        assert!(err.to_string().starts_with("line 4"));
    }

    #[test]
    fn read_until_error_stops_at_the_first_bad_line() {
        let input = b"{\"id\":\"a\"}\n\n{\"id\":\"b\"}\nnot json\n{\"id\":\"c\"}\n";
        let (lines, err) = LineReader::new(&input[..]).read_until_error();
        let ids: Vec<_> = lines.iter().map(|l| l.id().unwrap()).collect();
        assert_eq!(ids, ["a", "b"]);
        assert!(
            matches!(err, Some(Error::BadJson { line: 4, .. })),
            "{err:?}"
        );
        let (lines, err) = LineReader::new(&input[..11]).read_until_error();
        assert_eq!((lines.len(), err.is_none()), (1, true));
    }

    #[test]
    fn a_leading_byte_order_mark_is_skipped_and_a_later_one_named() {
        // Notepad / PowerShell `Out-File -Encoding utf8` start a file so.
        let input = b"\xEF\xBB\xBF{\"id\":\"a\"}\r\n\xEF\xBB\xBF{\"id\":\"b\"}\n";
        let mut r = LineReader::new(&input[..]);
        let a = r.next_line().unwrap().unwrap();
        assert_eq!((a.id(), a.line_no), (Some("a"), 1));
        assert_eq!(r.last_text(), "{\"id\":\"a\"}");
        let msg = r.next_line().unwrap_err().to_string();
        assert!(
            msg.starts_with("line 2, column 1: invalid JSON (a UTF-8 byte-order mark"),
            "{msg}"
        );
        assert!(msg.contains("sed 's/^\\xEF\\xBB\\xBF//'"), "{msg}");
        // A line of only the mark is blank.
        let mut r = LineReader::new(&b"\xEF\xBB\xBF\n{\"id\":\"c\"}"[..]);
        assert_eq!(r.next_line().unwrap().unwrap().line_no, 2);
    }

    #[test]
    fn reader_accepts_last_line_without_newline() {
        let mut r = LineReader::new(&b"{\"id\":\"a\"}"[..]);
        assert_eq!(r.next_line().unwrap().unwrap().id(), Some("a"));
        assert!(r.next_line().unwrap().is_none());
    }

    #[test]
    fn set_path_creates_objects_and_replaces_scalars() {
        let mut line = JobLine::parse(r#"{"slurm":3}"#, 1).unwrap();
        line.set_path(&["slurm", "job_id"], Value::String("42".into()));
        assert_eq!(line.get_str(&["slurm", "job_id"]), Some("42"));
        let err = line.require_str(&["slurm", "cluster"]).unwrap_err();
        assert!(err
            .to_string()
            .contains("missing string field `slurm.cluster`"));
    }

    #[test]
    fn a_missing_field_names_the_stage_that_writes_it() {
        let line = JobLine::parse(r#"{"id":"a","storage":{}}"#, 3).unwrap();
        let msg = |p: &[&str]| line.require_str(p).unwrap_err().to_string();
        let script = msg(&["script", "text"]);
        assert!(
            script.contains("`tao-render | tao-redact lint`"),
            "{script}"
        );
        assert!(
            !script.contains("pipe lines from `tao-record open`"),
            "{script}"
        );
        assert!(msg(&["lint", "ok"]).contains("`tao-redact lint`"));
        assert!(msg(&["slurm", "job_id"]).contains("tao-submit"));
        assert!(msg(&["storage", "job_dir"]).contains("`tao-record open`"));
        // Its own code, not `data`: the request is fine, a stage was skipped.
        let e = line.require_str(&["script", "text"]).unwrap_err();
        assert_eq!(e.kind(), "missing_stage");
        assert_eq!(e.code(), crate::exit::DATAERR);
    }

    #[test]
    fn writer_emits_whole_lines() {
        let mut w = LineWriter::new(Vec::new());
        w.write(&JobLine::parse(r#"{"id":"a"}"#, 1).unwrap())
            .unwrap();
        assert_eq!(w.into_inner(), b"{\"id\":\"a\"}\n");
    }
}
