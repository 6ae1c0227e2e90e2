//! Reading many records: `list` and its filters, the retry chain, and
//! `gc`, which archives terminal records older than an age.
//!
//! Reads take no lock (record files are replaced by rename, so a reader
//! sees a whole old or a whole new file). A record that disappears between
//! the directory listing and the read (archived by a concurrent `gc`) is
//! skipped.

use std::borrow::Cow;
use std::io::Write;

use chrono::{DateTime, Utc};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;
use tao_core::{Error, Result, State};

use crate::store::{parse_record, Record, Store};

/// Which records `list` prints. All conditions must hold (empty ones are
/// ignored).
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// Only PENDING, RUNNING and UNKNOWN records.
    pub live: bool,
    /// Only records in one of these states.
    pub states: Vec<State>,
    /// Only these ids (each must exist).
    pub ids: Vec<String>,
    /// Only records opened at or after this time.
    pub since: Option<DateTime<Utc>>,
    /// Only the retry chain that contains this id.
    pub chain_of: Option<String>,
}

impl Filter {
    /// Whether `rec` passes the state and time conditions.
    pub fn matches(&self, rec: &Record) -> bool {
        let state = rec.state().unwrap_or(State::Unknown);
        if self.live && !state.is_live() {
            return false;
        }
        if !self.states.is_empty() && !self.states.contains(&state) {
            return false;
        }
        if let Some(since) = self.since {
            let created = rec.created_at().and_then(tao_core::time::parse_rfc3339);
            if created.is_none_or(|c| c < since) {
                return false;
            }
        }
        true
    }
}

/// The ids of the retry chain that contains `id`, first attempt first:
/// back along `retry_of` to the first attempt, then forward along
/// `retried_by`.
///
/// Errors: [`Error::Data`] when `id` has no record.
pub fn chain(store: &Store, id: &str) -> Result<Vec<String>> {
    let mut first = store.load(id)?;
    let mut guard = 0;
    while let Some(parent) = first.fields.get("retry_of").and_then(Value::as_str) {
        guard += 1;
        match store.load(parent) {
            Ok(p) if guard < 10_000 => first = p,
            _ => break,
        }
    }
    let mut out = vec![first.id().to_string()];
    let mut cur = first;
    while let Some(next) = cur.fields.get("retried_by").and_then(Value::as_str) {
        if out.iter().any(|x| x == next) {
            break;
        }
        match store.load(next) {
            Ok(n) => {
                out.push(next.to_string());
                cur = n;
            }
            Err(_) => break,
        }
    }
    Ok(out)
}

/// Print the job lines (without `history`) of the records that pass
/// `filter` to `out`, one per line, in id order (or the order of
/// `filter.ids` / the chain). `warn` receives one-line diagnostics.
///
/// Returns [`Listed`]: the number printed, the number of requested ids
/// that had no record, and the record files that could not be read (each
/// skipped with a warning naming its path; the rest is still printed).
///
/// Errors: [`Error::Io`] when reading the store or writing fails.
pub fn list<W: Write>(
    store: &Store,
    filter: &Filter,
    out: &mut W,
    warn: &mut dyn FnMut(&str),
) -> Result<Listed> {
    let (ids, explicit) = if let Some(c) = &filter.chain_of {
        let mut ids = chain(store, c)?;
        if !filter.ids.is_empty() {
            ids.retain(|i| filter.ids.contains(i));
        }
        (ids, true)
    } else if !filter.ids.is_empty() {
        (filter.ids.clone(), true)
    } else {
        (store.ids()?, false)
    };
    // Reading and rendering run on up to 4 threads, a batch of ids at a
    // time; each thread renders a contiguous slice into its own buffer and
    // the buffers are written in order, so the output order is the id order
    // whatever the thread count and memory stays bounded by one batch.
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 4);
    let mut printed = 0;
    let mut missing = 0;
    let mut corrupt = Vec::new();
    for batch in ids.chunks(BATCH) {
        let per = batch.len().div_ceil(threads).max(MIN_PER_THREAD);
        let parts: Vec<Result<Part>> = if batch.len() <= MIN_PER_THREAD || threads == 1 {
            vec![render_part(store, batch, explicit, filter)]
        } else {
            std::thread::scope(|sc| {
                let handles: Vec<_> = batch
                    .chunks(per)
                    .map(|slice| sc.spawn(move || render_part(store, slice, explicit, filter)))
                    .collect();
                handles
                    .into_iter()
                    .map(|h| {
                        h.join().unwrap_or_else(|_| {
                            Err(Error::Internal("a list thread panicked".into()))
                        })
                    })
                    .collect()
            })
        };
        for part in parts {
            let part = part?;
            for m in &part.warnings {
                warn(m);
            }
            out.write_all(&part.out)
                .map_err(|e| Error::io("writing standard output", e))?;
            printed += part.printed;
            missing += part.missing;
            corrupt.extend(part.corrupt);
        }
    }
    Ok(Listed {
        printed,
        missing,
        corrupt,
    })
}

/// Ids per batch of `list` (bounds the memory of the rendered lines).
const BATCH: usize = 4096;
/// Below this many ids a batch is rendered on one thread.
const MIN_PER_THREAD: usize = 256;

/// What one thread of `list` rendered.
#[derive(Default)]
struct Part {
    out: Vec<u8>,
    warnings: Vec<String>,
    printed: u64,
    missing: u64,
    corrupt: Vec<std::path::PathBuf>,
}

/// What [`list`] did besides printing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Listed {
    /// Lines printed.
    pub printed: u64,
    /// Explicitly requested ids without a record.
    pub missing: u64,
    /// Record files that could not be read (not a JSON object), in id
    /// order: each was warned about, skipped, and the others printed.
    pub corrupt: Vec<std::path::PathBuf>,
}

/// Render the records `ids` that pass `filter` as job lines.
fn render_part(store: &Store, ids: &[String], explicit: bool, filter: &Filter) -> Result<Part> {
    let mut part = Part {
        out: Vec::with_capacity(ids.len() * 1024),
        ..Default::default()
    };
    let mut bytes = Vec::with_capacity(8192);
    for id in ids {
        let mut path = store.record_path(id);
        let mut found = read_into(&path, &mut bytes)?;
        if !found && explicit {
            path = store.archive_dir().join(format!("{id}.json"));
            found = read_into(&path, &mut bytes)?;
        }
        if !found {
            if explicit {
                part.warnings.push(format!(
                    "no record {id:?} in {:?}; check the id (`tao-record list`) or TAO_STATE_DIR",
                    store.dir()
                ));
                part.missing += 1;
            }
            // Otherwise archived by a concurrent gc since the listing: skip.
            continue;
        }
        let mark = part.out.len();
        match render_line(&bytes, filter, &mut part.out) {
            Ok(true) => part.printed += 1,
            Ok(false) => {}
            Err(_) => {
                part.out.truncate(mark);
                match parse_record(&bytes, &path) {
                    // Not compact JSON on one line: take the slow path.
                    Ok(rec) => {
                        if filter.matches(&rec) {
                            serde_json::to_writer(&mut part.out, &rec.into_job_line().fields)
                                .map_err(|e| Error::Internal(e.to_string()))?;
                            part.out.push(b'\n');
                            part.printed += 1;
                        }
                    }
                    Err(e) => {
                        part.warnings.push(e.to_string());
                        part.corrupt.push(path.clone());
                    }
                }
            }
        }
    }
    Ok(part)
}

/// Read a whole file into `buf` (reused between files); `Ok(false)` if it
/// does not exist.
fn read_into(path: &std::path::Path, buf: &mut Vec<u8>) -> Result<bool> {
    use std::io::Read;
    buf.clear();
    match std::fs::File::open(path) {
        Ok(mut f) => {
            f.read_to_end(buf)
                .map_err(|e| Error::io(format!("reading {:?}", path), e))?;
            Ok(true)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(Error::io(format!("reading {:?}", path), e)),
    }
}

/// The top level of a record with its values left as raw JSON text.
struct RawTop<'a>(Vec<(Cow<'a, str>, &'a RawValue)>);

impl<'de> Deserialize<'de> for RawTop<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = RawTop<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> std::result::Result<Self::Value, A::Error> {
                let mut v = Vec::with_capacity(24);
                while let Some((k, val)) = map.next_entry::<Cow<'de, str>, &'de RawValue>()? {
                    v.push((k, val));
                }
                Ok(RawTop(v))
            }
        }
        d.deserialize_map(V)
    }
}

/// The `at` of history entries, nothing else.
#[derive(Deserialize)]
struct At<'a> {
    #[serde(borrow)]
    at: Option<Cow<'a, str>>,
}

/// The fast path of `list`: filter and print one record file without
/// building its tree. Top-level values are copied as the raw text the
/// store wrote (compact JSON, as `serde_json::to_vec` writes it), so the
/// output is the same bytes the slow path would print. Returns whether the
/// record passed the filter.
///
/// Errors: when the file is not compact JSON (any raw value holding a
/// newline) or does not parse; the caller then takes the slow path.
fn render_line(bytes: &[u8], filter: &Filter, out: &mut Vec<u8>) -> std::result::Result<bool, ()> {
    let text = std::str::from_utf8(bytes).map_err(|_| ())?;
    let top: RawTop = serde_json::from_str(text.trim_end()).map_err(|_| ())?;
    let state = top
        .0
        .iter()
        .find(|(k, _)| k == "state")
        .and_then(|(_, v)| serde_json::from_str::<Cow<str>>(v.get()).ok())
        .and_then(|s| State::parse(&s))
        .unwrap_or(State::Unknown);
    if filter.live && !state.is_live() {
        return Ok(false);
    }
    if !filter.states.is_empty() && !filter.states.contains(&state) {
        return Ok(false);
    }
    if let Some(since) = filter.since {
        let created = top
            .0
            .iter()
            .find(|(k, _)| k == "history")
            .and_then(|(_, v)| serde_json::from_str::<Vec<At>>(v.get()).ok())
            .and_then(|h| h.into_iter().next())
            .and_then(|a| a.at)
            .and_then(|a| tao_core::time::parse_rfc3339(&a));
        if created.is_none_or(|c| c < since) {
            return Ok(false);
        }
    }
    out.push(b'{');
    let mut first = true;
    for (k, v) in &top.0 {
        if k == "history" {
            continue;
        }
        let raw = v.get();
        if raw.contains('\n') {
            return Err(());
        }
        if !first {
            out.push(b',');
        }
        first = false;
        serde_json::to_writer(&mut *out, k.as_ref()).map_err(|_| ())?;
        out.push(b':');
        out.extend_from_slice(raw.as_bytes());
    }
    out.extend_from_slice(b"}\n");
    Ok(true)
}

/// Archive every terminal record whose last transition is older than
/// `older_than` seconds (checked again under the record's lock), and
/// remove temporary files left by killed writers (older than an hour).
/// Returns the archived ids.
///
/// Errors: [`Error::Io`] for disk failures.
pub fn gc(store: &Store, older_than: u64, now: DateTime<Utc>) -> Result<Vec<String>> {
    let cutoff =
        now - chrono::Duration::seconds(i64::try_from(older_than).unwrap_or(i64::MAX / 2_000_000));
    let old_enough = |rec: &Record| {
        rec.state().is_some_and(State::is_final)
            && rec
                .last_transition_at()
                .and_then(tao_core::time::parse_rfc3339)
                .is_some_and(|t| t < cutoff)
    };
    let mut archived = Vec::new();
    for id in store.ids()? {
        let Ok(Some(rec)) = store.load_live(&id) else {
            continue;
        };
        if !old_enough(&rec) {
            continue;
        }
        if store.archive_if(&id, old_enough)? {
            archived.push(id);
        }
    }
    sweep_temp_files(store, now)?;
    Ok(archived)
}

fn sweep_temp_files(store: &Store, now: DateTime<Utc>) -> Result<()> {
    let dir = store.records_dir();
    let rd = std::fs::read_dir(dir).map_err(|e| Error::io(format!("reading {:?}", dir), e))?;
    for entry in rd.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if !(name.starts_with(crate::file::TEMP_PREFIX) && name.ends_with(crate::file::TEMP_SUFFIX))
        {
            continue;
        }
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .map(|t| DateTime::<Utc>::from(t) < now - chrono::Duration::hours(1))
            .unwrap_or(false);
        if old {
            let _ = std::fs::remove_file(entry.path());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fast_path_prints_what_the_slow_path_prints() {
        let text = r#"{"id":"a","state":"RUNNING","x":{"b":[1,2.5,"é\n"]},"history":[{"at":"2026-11-29T10:00:00Z","state":"PENDING"}],"z":null}"#;
        let mut fast = Vec::new();
        assert_eq!(
            render_line(text.as_bytes(), &Filter::default(), &mut fast),
            Ok(true)
        );
        let rec = parse_record(text.as_bytes(), std::path::Path::new("x")).unwrap();
        let mut slow = serde_json::to_vec(&rec.into_job_line().fields).unwrap();
        slow.push(b'\n');
        assert_eq!(
            String::from_utf8(fast).unwrap(),
            String::from_utf8(slow).unwrap()
        );
        let mut out = Vec::new();
        let live = Filter {
            live: true,
            ..Default::default()
        };
        assert_eq!(render_line(text.as_bytes(), &live, &mut out), Ok(true));
        let done = Filter {
            states: vec![State::Complete],
            ..Default::default()
        };
        assert_eq!(render_line(text.as_bytes(), &done, &mut out), Ok(false));
        let since = Filter {
            since: tao_core::time::parse_rfc3339("2026-11-29T11:00:00Z"),
            ..Default::default()
        };
        assert_eq!(render_line(text.as_bytes(), &since, &mut out), Ok(false));
        // Pretty-printed files go to the slow path.
        assert!(render_line(b"{\"id\":\n [1,\n 2]}", &Filter::default(), &mut out).is_err());
    }

    #[test]
    fn threaded_list_keeps_id_order_and_reports_bad_files() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::open(tmp.path().to_path_buf()).unwrap();
        let n = BATCH + 700; // two batches, several threads each
        for i in 0..n {
            let state = if i % 3 == 0 { "COMPLETE" } else { "RUNNING" };
            let text = format!(
                "{{\"id\":\"r-{i:05}\",\"state\":\"{state}\",\"history\":[{{\"at\":\"2026-11-29T10:00:00Z\"}}]}}\n"
            );
            std::fs::write(store.record_path(&format!("r-{i:05}")), text).unwrap();
        }
        // One pretty-printed record (slow path) and one broken file.
        std::fs::write(
            store.record_path("r-00001"),
            "{\n  \"id\": \"r-00001\",\n  \"state\": \"RUNNING\"\n}\n",
        )
        .unwrap();
        std::fs::write(store.record_path("r-00002"), "{\"id\": \"r-0").unwrap();
        let mut out = Vec::new();
        let mut warnings = Vec::new();
        let listed = list(&store, &Filter::default(), &mut out, &mut |w| {
            warnings.push(w.to_string())
        })
        .unwrap();
        assert_eq!((listed.printed, listed.missing), (n as u64 - 1, 0));
        assert_eq!(listed.corrupt, [store.record_path("r-00002")]);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        let ids: Vec<String> = String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| {
                serde_json::from_str::<Value>(l).unwrap()["id"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect();
        let mut sorted = ids.clone();
        sorted.sort();
        assert_eq!(ids, sorted);
        assert_eq!(ids[1], "r-00001");
        let mut out = Vec::new();
        let live = Filter {
            live: true,
            ..Default::default()
        };
        let printed = list(&store, &live, &mut out, &mut |_| {}).unwrap().printed;
        assert_eq!(
            printed as usize,
            (0..n).filter(|i| i % 3 != 0 && *i != 2).count()
        );
    }
}
