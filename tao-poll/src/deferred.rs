//! Job lines read with their `progress` left as input text (issue 17,
//! the steady poll): a poll that finds a running job's status.json
//! unchanged leaves its `progress` as it is, so that value is neither
//! parsed into maps nor written back from them; it passes through as the
//! bytes it came in.
//!
//! [`parse`] reads a line as [`JobLine::parse`] does, except the value of
//! a top-level `progress` object: it is kept as its text
//! ([`serde_json::value::RawValue`]), and the line holds a stand-in object
//! with only the two fields a poll reads before it knows whether the file
//! changed (`file_size`, `file_mtime_s`: [`tao_core::progress::FileStamp`]).
//! A poll that writes `progress` first puts the parsed value back
//! ([`materialize`]); [`write_line`] writes a line whose stand-in is still
//! there with the text in its place. For lines as tao-poll writes them
//! (compact JSON) the output is byte for byte the output of a poll of the
//! fully parsed line (a property test in `tests/deferred.rs` checks it);
//! for other input an untouched `progress` keeps its input spelling (the
//! same JSON value).

use serde::de::{Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use tao_core::{JobLine, Result};

/// The text of a line's `progress` object, while the line holds its stand-in.
pub type Deferred = Option<Box<RawValue>>;

/// The fields of a line, `progress` kept as text.
struct Top(Map<String, Value>, Deferred);

struct TopVisitor;

impl<'de> Visitor<'de> for TopVisitor {
    type Value = Top;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> std::result::Result<Top, A::Error> {
        let mut m = Map::new();
        let mut raw: Deferred = None;
        while let Some(k) = a.next_key::<String>()? {
            if k == "progress" {
                if m.contains_key("progress") {
                    // A repeated key: the full parse decides (rare).
                    return Err(serde::de::Error::custom("repeated progress"));
                }
                raw = Some(a.next_value()?);
                m.insert(k, Value::Null);
            } else {
                let v: Value = a.next_value()?;
                m.insert(k, v);
            }
        }
        Ok(Top(m, raw))
    }
}

impl<'de> Deserialize<'de> for Top {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        d.deserialize_map(TopVisitor)
    }
}

/// The two stamp fields of a `progress` object, read without the rest.
#[derive(Deserialize)]
struct StampOnly {
    file_size: Option<Value>,
    file_mtime_s: Option<Value>,
}

/// The stand-in for a `progress` object's text: an object with its
/// `file_size` and `file_mtime_s` (those present and not null), or `None`
/// when the text is not an object whose stamp fields read simply (then
/// the line holds the parsed value, nothing is deferred).
fn stand_in(raw: &RawValue) -> Option<Value> {
    if !raw.get().starts_with('{') {
        return None;
    }
    let s: StampOnly = serde_json::from_str(raw.get()).ok()?;
    let mut o = Map::new();
    if let Some(v) = s.file_size {
        o.insert("file_size".into(), v);
    }
    if let Some(v) = s.file_mtime_s {
        o.insert("file_mtime_s".into(), v);
    }
    Some(Value::Object(o))
}

/// Read one job line (its text without the newline, and its 1-based
/// number) with its `progress` object kept as text: the line with a
/// stand-in there, and the text (`None`: nothing deferred, the line is as
/// [`JobLine::parse`] gives it).
///
/// Errors: exactly those of [`JobLine::parse`] (any text this reader does
/// not take is handed to it).
pub fn parse(text: &str, line_no: u64) -> Result<(JobLine, Deferred)> {
    let Ok(Top(mut fields, raw)) = serde_json::from_str::<Top>(text) else {
        return JobLine::parse(text, line_no).map(|l| (l, None));
    };
    let raw = match raw {
        Some(r) => match stand_in(&r) {
            Some(s) => {
                fields.insert("progress".into(), s);
                Some(r)
            }
            None => match serde_json::from_str::<Value>(r.get()) {
                Ok(v) => {
                    fields.insert("progress".into(), v);
                    None
                }
                Err(_) => return JobLine::parse(text, line_no).map(|l| (l, None)),
            },
        },
        None => None,
    };
    let mut line = JobLine::from_map(fields);
    line.line_no = line_no;
    Ok((line, raw))
}

/// Put a deferred `progress` back as its parsed value, before a poll
/// reads or writes more of it than its stamp; `deferred` is emptied. A
/// text that does not parse (it did once) is left deferred and `false`
/// returned: the caller leaves `progress` alone.
pub fn materialize(line: &mut JobLine, deferred: &mut Deferred) -> bool {
    let Some(r) = deferred.take() else {
        return true;
    };
    match serde_json::from_str::<Value>(r.get()) {
        Ok(v) => {
            line.fields.insert("progress".into(), v);
            true
        }
        Err(_) => {
            *deferred = Some(r);
            false
        }
    }
}

/// Append a line's JSON (compact, as [`JobLine::to_json`], no newline) to
/// `buf`, a deferred `progress` written as its text.
pub fn write_line(buf: &mut Vec<u8>, line: &JobLine, deferred: Option<&RawValue>) {
    let Some(raw) = deferred else {
        serde_json::to_writer(&mut *buf, &line.fields).expect("a JSON map always serialises");
        return;
    };
    buf.push(b'{');
    for (i, (k, v)) in line.fields.iter().enumerate() {
        if i > 0 {
            buf.push(b',');
        }
        serde_json::to_writer(&mut *buf, k).expect("a string always serialises");
        buf.push(b':');
        if k == "progress" {
            buf.extend_from_slice(raw.get().as_bytes());
        } else {
            serde_json::to_writer(&mut *buf, v).expect("a JSON value always serialises");
        }
    }
    buf.push(b'}');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_is_kept_as_text_with_a_stamp_stand_in() {
        let t = r#"{"id":"a","progress":{"epoch":3,"history":{"loss":[0.5,0.25]},"file_size":600,"file_mtime_s":1800000000},"state":"RUNNING"}"#;
        let (l, raw) = parse(t, 4).unwrap();
        assert_eq!(l.line_no, 4);
        assert_eq!(
            l.fields["progress"],
            serde_json::json!({"file_size": 600, "file_mtime_s": 1800000000})
        );
        let mut buf = Vec::new();
        write_line(&mut buf, &l, raw.as_deref());
        assert_eq!(String::from_utf8(buf).unwrap(), t);
        // Put back: the line is the fully parsed one.
        let (mut l, mut raw) = parse(t, 4).unwrap();
        assert!(materialize(&mut l, &mut raw));
        assert!(raw.is_none());
        assert_eq!(l, JobLine::parse(t, 4).unwrap());
    }

    #[test]
    fn what_is_not_a_plain_object_is_parsed_whole() {
        for t in [
            r#"{"progress":[1,2]}"#,
            r#"{"progress":null,"a":1}"#,
            r#"{"progress":{"file_size":1,"file_size":2}}"#,
            r#"{"progress":{"a":1},"progress":{"b":2}}"#,
        ] {
            let (l, raw) = parse(t, 1).unwrap();
            assert!(raw.is_none(), "{t}");
            assert_eq!(l, JobLine::parse(t, 1).unwrap(), "{t}");
        }
        for t in ["[1]", "{", "{\"a\":}"] {
            assert_eq!(
                parse(t, 2).unwrap_err().to_string(),
                JobLine::parse(t, 2).unwrap_err().to_string()
            );
        }
    }
}
