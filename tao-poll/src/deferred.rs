//! Job lines kept as their input text (issue 17, the steady poll): a poll
//! that finds a running job's status.json unchanged and squeue saying
//! nothing new about it changes nothing on its line but `observed_at`, so
//! that line is neither parsed into maps nor written back from them; it
//! passes through as the bytes it came in, the new `observed_at` in place
//! of the old one.
//!
//! [`parse`] reads a line as a [`TextLine`]: its text with an index of its
//! top-level members and of its `slurm` section's (offsets into the text,
//! nothing parsed into maps). The poll reads the fields it needs through
//! [`Fields`] (the same reads for a parsed [`JobLine`] and a text line),
//! decides every job as for a parsed line, and asks whether its writes
//! would change the line (`tao_poll::poll`'s observation rule, one place
//! for both). A line whose writes change more than `observed_at` is
//! parsed whole first ([`materialize`]) and written from its fields; one
//! whose writes change nothing else is written by [`write_line`] as its
//! text with the new stamp spliced in ([`TextLine::set_observed_at`]).
//!
//! For lines as tao-poll writes them (compact JSON: `serde_json`'s
//! spelling, no repeated keys) the output is byte for byte the output of a
//! poll of the fully parsed line (the property tests in
//! `tests/deferred.rs` check it); for other input a line passed through
//! keeps its input spelling (the same JSON value). Text the index does not
//! take (not a JSON object, a key or string with a `\u` escape, a
//! repeated top-level or `slurm` key, 128 or more `[`/`{` bytes: deeper
//! than the full parse allows is possible, a number beyond f64's range) is parsed whole at once, with
//! exactly [`JobLine::parse`]'s errors.

use std::borrow::Cow;
use std::ops::Range;

use serde::de::{Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;
use tao_core::progress::FileStamp;
use tao_core::{JobLine, Result};

/// A line still held as its text ([`TextLine`]), or `None`: the line is
/// its parsed [`JobLine`].
pub type Deferred = Option<Box<TextLine>>;

/// One member of a JSON object: the byte ranges of its key (without the
/// quotes) and of its value, in the line's text.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Member {
    key: Range<usize>,
    value: Range<usize>,
}

/// A job line as its text, with its top-level members and its `slurm`
/// section's indexed (byte ranges); see the module docs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextLine {
    text: String,
    top: Vec<Member>,
    /// The `slurm` section's members (`None`: no `slurm` object).
    slurm: Option<Vec<Member>>,
    /// The `observed_at` a poll gave the line, written in place of the
    /// old one.
    observed_at: Option<String>,
}

/// An object's members, values borrowed from the text, keys too unless
/// they hold an escape (then decoded: `Cow::Owned`).
struct Members<'a>(Vec<(Cow<'a, str>, &'a RawValue)>);

/// An object key, borrowed from the text when it has no escape.
struct Key<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object key")
            }
            fn visit_borrowed_str<E>(self, s: &'de str) -> std::result::Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(s)))
            }
            fn visit_str<E>(self, s: &str) -> std::result::Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(s.to_string())))
            }
        }
        d.deserialize_str(V)
    }
}

impl<'de> Deserialize<'de> for Members<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Members<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(
                self,
                mut a: A,
            ) -> std::result::Result<Members<'de>, A::Error> {
                let mut v = Vec::with_capacity(16);
                while let Some(Key(k)) = a.next_key::<Key<'de>>()? {
                    v.push((k, a.next_value::<&'de RawValue>()?));
                }
                Ok(Members(v))
            }
        }
        d.deserialize_map(V)
    }
}

/// Whether `text` holds a number beyond f64's range (`1e400`, 400
/// digits): the index checks the JSON grammar only, and the full parse
/// (`serde_json` to a `Value`) refuses such a number, so the line must be
/// parsed whole to get [`JobLine::parse`]'s error. Every maximal run of
/// number bytes (`0-9 . e E + -`) holding a digit is read as an f64
/// (Rust's parse rounds correctly, as `serde_json`'s `float_roundtrip`);
/// a run inside a string that reads as infinite only costs a whole parse.
fn has_number_out_of_range(text: &str) -> bool {
    let is_num = |b: &u8| matches!(b, b'0'..=b'9' | b'.' | b'e' | b'E' | b'+' | b'-');
    text.as_bytes()
        .split(|b| !is_num(b))
        // A run of 4 bytes or fewer is below 1e100: only longer ones
        // are read.
        .filter(|run| run.len() >= 5 && run.iter().any(u8::is_ascii_digit))
        .any(|run| {
            std::str::from_utf8(run)
                .ok()
                .and_then(|r| r.parse::<f64>().ok())
                .is_some_and(|v| v.is_infinite())
        })
}

/// The byte range of `part`, a slice of `whole`.
fn range_in(whole: &str, part: &str) -> Range<usize> {
    let start = part.as_ptr() as usize - whole.as_ptr() as usize;
    start..start + part.len()
}

/// The members of the object `part` (a slice of `whole`), or `None` when
/// it is not an object, repeats a key or has a key with an escape (its
/// text is not the key).
fn index_object(whole: &str, part: &str) -> Option<Vec<Member>> {
    let Members(ms) = serde_json::from_str::<Members>(part).ok()?;
    let mut out = Vec::with_capacity(ms.len());
    for (i, (k, v)) in ms.iter().enumerate() {
        let Cow::Borrowed(k) = k else {
            return None;
        };
        if ms[..i].iter().any(|(k2, _)| k2 == k) {
            return None;
        }
        out.push(Member {
            key: range_in(whole, k),
            value: range_in(whole, v.get()),
        });
    }
    Some(out)
}

impl TextLine {
    /// Index `text` (one job line without its newline); `None` when the
    /// index does not take it (see the module docs): parse it whole.
    pub fn index(text: &str) -> Option<TextLine> {
        if text.contains("\\u")
            || text.bytes().filter(|b| matches!(b, b'[' | b'{')).count() >= 128
            || has_number_out_of_range(text)
        {
            return None;
        }
        let top = index_object(text, text.trim_matches([' ', '\t', '\r']))?;
        let mut line = TextLine {
            text: String::new(),
            top,
            slurm: None,
            observed_at: None,
        };
        if let Some(r) = line.top_range(text, "slurm") {
            let v = &text[r];
            if v.starts_with('{') {
                line.slurm = Some(index_object(text, v)?);
            }
        }
        line.text = text.to_string();
        Some(line)
    }

    fn top_range(&self, text: &str, key: &str) -> Option<Range<usize>> {
        self.top
            .iter()
            .find(|m| &text[m.key.clone()] == key)
            .map(|m| m.value.clone())
    }

    /// The text of the value at `path` (object keys), as it stands in the
    /// line; `None` when a key is missing or a step is not an object.
    fn raw_at(&self, path: &[&str]) -> Option<&str> {
        let t = &self.text;
        let (first, rest) = path.split_first()?;
        let (mut cur, rest) = match (self.slurm.as_ref(), *first, rest.split_first()) {
            (Some(s), "slurm", Some((k, rest))) => (
                &t[s.iter().find(|m| &t[m.key.clone()] == *k)?.value.clone()],
                rest,
            ),
            _ => (&t[self.top_range(t, first)?], rest),
        };
        for k in rest {
            // Off the index (rare: `storage`, `resources`, `error`, the
            // progress stamp): the object is scanned; the last of
            // repeated keys wins, as in a parsed map.
            let Members(ms) = serde_json::from_str::<Members>(cur).ok()?;
            cur = ms.iter().rev().find(|(mk, _)| mk == k)?.1.get();
        }
        Some(cur)
    }

    /// Whether the line's `slurm` is an object.
    pub fn has_slurm_object(&self) -> bool {
        self.slurm.is_some()
    }

    /// Give the line a new `observed_at` (RFC 3339 UTC), written in place
    /// of the old one; `false` (nothing set) when the line has no
    /// `observed_at` string to replace.
    pub fn set_observed_at(&mut self, at: &str) -> bool {
        match self.raw_at(&["observed_at"]) {
            Some(r) if r.starts_with('"') => {
                self.observed_at = Some(at.to_string());
                true
            }
            _ => false,
        }
    }
}

/// The reads a poll makes of a line, for a parsed [`JobLine`] and a
/// [`TextLine`] alike.
pub trait Fields {
    /// The value at a path of object keys (as [`JobLine::get_path`]).
    fn at(&self, path: &[&str]) -> Option<Cow<'_, Value>>;

    /// The string at a path, if it is a string (as [`JobLine::get_str`]).
    fn str_at(&self, path: &[&str]) -> Option<Cow<'_, str>> {
        match self.at(path)? {
            Cow::Borrowed(Value::String(s)) => Some(Cow::Borrowed(s)),
            Cow::Owned(Value::String(s)) => Some(Cow::Owned(s)),
            _ => None,
        }
    }

    /// The status.json stamp the line's `progress` was read at
    /// ([`FileStamp::of_progress`]).
    fn progress_stamp(&self) -> Option<FileStamp>;
}

impl Fields for JobLine {
    fn at(&self, path: &[&str]) -> Option<Cow<'_, Value>> {
        self.get_path(path).map(Cow::Borrowed)
    }

    fn progress_stamp(&self) -> Option<FileStamp> {
        FileStamp::of_progress(self.fields.get("progress"))
    }
}

impl Fields for TextLine {
    fn at(&self, path: &[&str]) -> Option<Cow<'_, Value>> {
        let raw = self.raw_at(path)?;
        // A plain string (no escape) needs no parser.
        if raw.len() >= 2 && raw.starts_with('"') && !raw[1..raw.len() - 1].contains(['"', '\\']) {
            return Some(Cow::Owned(Value::String(raw[1..raw.len() - 1].into())));
        }
        serde_json::from_str(raw).ok().map(Cow::Owned)
    }

    fn progress_stamp(&self) -> Option<FileStamp> {
        // The rule is FileStamp::of_progress's, on the two fields it reads
        // (one scan of the object; the last of repeated keys wins).
        let Members(ms) = serde_json::from_str::<Members>(self.raw_at(&["progress"])?).ok()?;
        let mut o = serde_json::Map::new();
        for k in ["file_size", "file_mtime_s"] {
            if let Some((_, v)) = ms.iter().rev().find(|(mk, _)| *mk == k) {
                o.insert(k.into(), serde_json::from_str(v.get()).ok()?);
            }
        }
        FileStamp::of_progress(Some(&Value::Object(o)))
    }
}

/// Read one job line (its text without the newline, and its 1-based
/// number): kept as its [`TextLine`] when the index takes it (the
/// [`JobLine`] is then a stand-in holding only `line_no`), else parsed
/// whole (`None`).
///
/// Errors: exactly those of [`JobLine::parse`] (any text the index does
/// not take is handed to it).
pub fn parse(text: &str, line_no: u64) -> Result<(JobLine, Deferred)> {
    match TextLine::index(text) {
        Some(t) => {
            let mut line = JobLine::new();
            line.line_no = line_no;
            Ok((line, Some(Box::new(t))))
        }
        None => JobLine::parse(text, line_no).map(|l| (l, None)),
    }
}

/// Parse a line kept as text whole, before a poll writes to it;
/// `deferred` is emptied. A text that does not parse whole (none the
/// index takes: it refuses numbers beyond f64's range, which the JSON
/// grammar allows and the full parse does not) is left as it is and
/// `false` returned: the caller leaves the line alone.
pub fn materialize(line: &mut JobLine, deferred: &mut Deferred) -> bool {
    let Some(t) = deferred.take() else {
        return true;
    };
    match JobLine::parse(&t.text, line.line_no) {
        Ok(l) => {
            *line = l;
            true
        }
        Err(_) => {
            *deferred = Some(t);
            false
        }
    }
}

/// Append a line's JSON (compact, as [`JobLine::to_json`], no newline) to
/// `buf`: a line kept as text is written as its text, with the
/// `observed_at` the poll gave it in place of the old one.
pub fn write_line(buf: &mut Vec<u8>, line: &JobLine, deferred: Option<&TextLine>) {
    let Some(t) = deferred else {
        serde_json::to_writer(&mut *buf, &line.fields).expect("a JSON map always serialises");
        return;
    };
    match (&t.observed_at, t.top_range(&t.text, "observed_at")) {
        (Some(at), Some(r)) => {
            buf.extend_from_slice(&t.text.as_bytes()[..r.start]);
            serde_json::to_writer(&mut *buf, at).expect("a string always serialises");
            buf.extend_from_slice(&t.text.as_bytes()[r.end..]);
        }
        _ => buf.extend_from_slice(t.text.as_bytes()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_is_kept_as_text_and_read_like_the_parsed_one() {
        let t = r#"{"id":"a","slurm":{"job_id":"7","restart_count":0,"x":{"y":1}},"progress":{"epoch":3,"history":{"loss":[0.5,0.25]},"file_size":600,"file_mtime_s":1800000000},"state":"RUNNING","observed_at":"2026-12-01T00:00:00Z","storage":{"job_dir":"/j/a"}}"#;
        let (l, d) = parse(t, 4).unwrap();
        assert_eq!(l.line_no, 4);
        let d = d.unwrap();
        let full = JobLine::parse(t, 4).unwrap();
        for p in [
            &["id"][..],
            &["slurm", "job_id"],
            &["slurm", "restart_count"],
            &["slurm", "x", "y"],
            &["storage", "job_dir"],
            &["progress", "file_size"],
            &["state"],
            &["nope"],
            &["slurm", "nope"],
            &["id", "x"],
        ] {
            assert_eq!(
                d.at(p).map(Cow::into_owned),
                full.at(p).map(Cow::into_owned),
                "{p:?}"
            );
        }
        assert_eq!(d.progress_stamp(), full.progress_stamp());
        assert!(d.progress_stamp().is_some());
        // Written as it came; with a new stamp, only that changes.
        let mut buf = Vec::new();
        write_line(&mut buf, &l, Some(&d));
        assert_eq!(String::from_utf8(buf).unwrap(), t);
        let mut d2 = d.clone();
        assert!(d2.set_observed_at("2026-12-02T00:00:00.5Z"));
        let mut buf = Vec::new();
        write_line(&mut buf, &l, Some(&d2));
        assert_eq!(
            String::from_utf8(buf).unwrap(),
            t.replace("2026-12-01T00:00:00Z", "2026-12-02T00:00:00.5Z")
        );
        // Parsed whole: the fully parsed line.
        let (mut l, mut d) = (l, Some(d));
        assert!(materialize(&mut l, &mut d));
        assert!(d.is_none());
        assert_eq!(l, full);
    }

    /// A key with an escape (`\"`, `\\`, `\n`, `\/`: serde_json writes
    /// the first three) in an object off the index (`storage`,
    /// `resources`, `error`, `progress`) is read as the parsed line reads
    /// it: the fields beside it are found.
    #[test]
    fn an_escaped_key_off_the_index_hides_no_field() {
        let t = r#"{"id":"a","slurm":{"job_id":"7"},"progress":{"k\"q":1,"file_size":600,"file_mtime_s":1800000000},"storage":{"a\\b":1,"job_dir":"/j/a"},"resources":{"n\nl":2,"requeue":true},"error":{"c\/d":0,"code":"data"},"observed_at":"2026-12-01T00:00:00Z"}"#;
        let full = JobLine::parse(t, 1).unwrap();
        let (_, d) = parse(t, 1).unwrap();
        let d = d.expect("indexed: no \\u escape, no repeated key");
        for p in [
            &["storage", "job_dir"][..],
            &["storage", "a\\b"],
            &["resources", "requeue"],
            &["resources", "n\nl"],
            &["error", "code"],
            &["error", "c/d"],
            &["progress", "k\"q"],
        ] {
            assert!(full.at(p).is_some(), "{p:?}");
            assert_eq!(
                d.at(p).map(Cow::into_owned),
                full.at(p).map(Cow::into_owned),
                "{p:?}"
            );
        }
        assert!(full.progress_stamp().is_some());
        assert_eq!(d.progress_stamp(), full.progress_stamp());
    }

    #[test]
    fn what_the_index_does_not_take_is_parsed_whole() {
        for t in [
            r#"{"a":1,"a":2}"#,
            r#"{"slurm":{"job_id":"1","job_id":"2"}}"#,
            r#"{"k\u00e9":1}"#,
            r#"{"a":"\u00e9"}"#,
            r#"{"a\"b":1}"#,
            &format!("{{\"a\":[{}[]]}}", "[],".repeat(130)),
        ] {
            let (l, d) = parse(t, 1).unwrap_or_else(|e| panic!("{t}: {e}"));
            assert!(d.is_none(), "{t}");
            assert_eq!(l, JobLine::parse(t, 1).unwrap(), "{t}");
        }
        // No observed_at: nothing to splice, the caller parses it whole.
        let (_, d) = parse(r#"{"a":1}"#, 1).unwrap();
        assert!(!d.unwrap().set_observed_at("x"));
        for t in [
            "[1]",
            "{",
            "{\"a\":}",
            "1",
            "",
            // Numbers beyond f64's range: the grammar holds, the full
            // parse refuses them (a bad line, as before the index).
            r#"{"a":1e400,"observed_at":"2026-12-01T00:00:00Z"}"#,
            r#"{"slurm":{"job_id":"7","x":-2.5E+309},"observed_at":"x"}"#,
            &format!("{{\"a\":[1{}]}}", "0".repeat(400)),
        ] {
            assert_eq!(
                parse(t, 2).unwrap_err().to_string(),
                JobLine::parse(t, 2).unwrap_err().to_string()
            );
        }
    }
}
