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
    /// Only records the cron pipeline still has work for: PENDING,
    /// RUNNING and UNKNOWN, plus ERROR records that ran on Slurm and have
    /// no classification yet ([`awaits_classification`]) and ERROR records
    /// classified retryable whose retry was never opened
    /// ([`awaits_retry`]).
    pub live: bool,
    /// Only records in one of these states.
    pub states: Vec<State>,
    /// Only these ids (each must exist).
    pub ids: Vec<String>,
    /// Only records opened at or after this time.
    pub since: Option<DateTime<Utc>>,
    /// Only the retry chain that contains this id.
    pub chain_of: Option<String>,
    /// The order of a listing of the whole store (explicit ids and a
    /// retry chain keep their own order).
    pub order: Order,
}

/// The order `list` prints the records of the whole store in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Order {
    /// Oldest first by creation time (the `at` of the first history
    /// entry; records without one first, then by id), as `squeue` lists
    /// the oldest job first.
    #[default]
    Created,
    /// By id (`tao-YYYYMMDD-xxxxxx`: by UTC day, then by the random part).
    Id,
}

/// Whether a record in `state` is an ended failure the cron pipeline
/// (`list --live | tao-poll --evidence | tao-classify | tao-record mark |
/// tao-record retry ...`) has not handled yet: ERROR, a Slurm job id in
/// `slurm.job_id` (it ran, so tao-poll can fetch its verdict and evidence),
/// and `classification` missing or null. `tao-poll --watch | tao-record
/// mark` records a failure that way; without this it would never be
/// classified nor retried. Once tao-classify's verdict is marked the record
/// leaves `--live`, and tao-record retry opens at most one retry of it.
///
/// Inputs: the record's state, its `classification` and `slurm` values.
pub fn awaits_classification(
    state: State,
    classification: Option<&Value>,
    slurm: Option<&Value>,
) -> bool {
    state == State::Error
        && classification.is_none_or(Value::is_null)
        && slurm
            .and_then(|s| s.get("job_id"))
            .and_then(Value::as_str)
            .is_some_and(|j| !j.is_empty())
}

/// Whether a record in `state` is a failure tao-classify marked retryable
/// (`classification.retry` true) whose retry was never opened: ERROR, its
/// `attempt` (1 when missing) below [`tao_core::DEFAULT_MAX_ATTEMPTS`],
/// and no `retried_by` naming a record that exists (`retry_exists` says
/// whether one does, [`Store::existing_retry`]). A crash (or a killed
/// pipeline) between `tao-record mark` and `tao-record retry` leaves such
/// a record; `list --live` holds it so the next cron run opens its retry,
/// once: `tao-record retry` opens none for a record that has one, and
/// records a budget it finds spent (`classification.retry` false), so the
/// record leaves `--live` then too.
///
/// Inputs: the record's state and its `classification`, `attempt` and
/// `retried_by` values.
pub fn awaits_retry(
    state: State,
    classification: Option<&Value>,
    attempt: Option<&Value>,
    retried_by: Option<&Value>,
    retry_exists: impl FnOnce(Option<&Value>) -> bool,
) -> bool {
    state == State::Error
        && classification.and_then(|c| c.get("retry")) == Some(&Value::Bool(true))
        && attempt.and_then(Value::as_u64).unwrap_or(1) < u64::from(tao_core::DEFAULT_MAX_ATTEMPTS)
        && !retry_exists(retried_by)
}

/// Whether `list --live` holds a record: live, [`awaits_classification`]
/// or [`awaits_retry`]. `field` gives a top-level value of the record.
fn cron_has_work(store: &Store, state: State, field: impl Fn(&str) -> Option<Value>) -> bool {
    if state.is_live() {
        return true;
    }
    if state != State::Error {
        return false;
    }
    let classification = field("classification");
    awaits_classification(state, classification.as_ref(), field("slurm").as_ref())
        || awaits_retry(
            state,
            classification.as_ref(),
            field("attempt").as_ref(),
            field("retried_by").as_ref(),
            |by| store.existing_retry(by).is_some(),
        )
}

impl Filter {
    /// Whether `rec` passes the state and time conditions (`store`: to
    /// tell whether a retry the record names exists, for `live`).
    pub fn matches(&self, rec: &Record, store: &Store) -> bool {
        let state = rec.state().unwrap_or(State::Unknown);
        if self.live && !cron_has_work(store, state, |k| rec.fields.get(k).cloned()) {
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
/// `filter` to `out`, one per line, in `filter.order` (creation time by
/// default), or the order of `filter.ids` / the chain when given. `warn`
/// receives one-line diagnostics.
///
/// Creation order is made one id day at a time: an id's date is the UTC
/// day it was minted, right before its first history entry, so the days
/// come in id order. A day of at most 4096 records is rendered and then
/// sorted; a larger day is sorted first by a pass that reads only the
/// times, then rendered in batches, so memory stays bounded by a batch.
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
    let by_created = !explicit && filter.order == Order::Created;
    // A day of more than BATCH records is put in creation order first
    // (a pass that reads only the times), then rendered in batches as in
    // id order, so memory stays bounded by one batch whatever the day; a
    // smaller day is rendered whole and its lines sorted (`true`).
    let mut batches: Vec<(Cow<'_, [String]>, bool)> = Vec::new();
    if by_created {
        for day in days(&ids) {
            if day.len() > BATCH {
                let sorted = in_created_order(store, day, threads)?;
                batches.extend(
                    sorted
                        .chunks(BATCH)
                        .map(|c| (Cow::Owned(c.to_vec()), false)),
                );
            } else {
                batches.push((Cow::Borrowed(day), true));
            }
        }
    } else {
        batches.extend(ids.chunks(BATCH).map(|c| (Cow::Borrowed(c), false)));
    }
    let mut printed = 0;
    let mut missing = 0;
    let mut corrupt = Vec::new();
    for (batch, sort_batch) in &batches {
        let (batch, sort_batch): (&[String], bool) = (batch, *sort_batch);
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
        let parts = parts.into_iter().collect::<Result<Vec<Part>>>()?;
        let mut order: Vec<(Option<DateTime<Utc>>, usize, usize, usize)> = Vec::new();
        for (n, part) in parts.iter().enumerate() {
            for m in &part.warnings {
                warn(m);
            }
            if sort_batch {
                // Stable: equal times keep id order.
                order.extend(part.created.iter().map(|(t, a, b)| (*t, n, *a, *b)));
            } else {
                out.write_all(&part.out)
                    .map_err(|e| Error::io("writing standard output", e))?;
            }
        }
        order.sort_by_key(|(t, ..)| *t);
        for (_, n, a, b) in order {
            out.write_all(&parts[n].out[a..b])
                .map_err(|e| Error::io("writing standard output", e))?;
        }
        for part in parts {
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

/// `ids` sorted by creation time (stable: equal times, and records
/// without one, which come first, keep their order), reading only each
/// record's first history entry, on up to `threads` threads. A record
/// that cannot be read sorts first; the listing itself reports it.
///
/// Errors: [`Error::Io`] when reading a record fails.
fn in_created_order(store: &Store, ids: &[String], threads: usize) -> Result<Vec<String>> {
    fn times(store: &Store, ids: &[String]) -> Result<Vec<Option<DateTime<Utc>>>> {
        #[derive(Deserialize)]
        struct Created<'a> {
            #[serde(borrow)]
            history: Option<Vec<At<'a>>>,
        }
        let mut bytes = Vec::with_capacity(8192);
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            let t = if read_into(&store.record_path(id), &mut bytes)? {
                // The store writes compact JSON: the time is found as text
                // (about twice as fast as parsing the record; a string
                // cannot hold this unescaped, and a nested value holding
                // it would only misplace its record), parsed in full only
                // when it is not there.
                std::str::from_utf8(&bytes)
                    .ok()
                    .and_then(|t| {
                        let at = &t[t.find(FIRST_AT)? + FIRST_AT.len()..];
                        tao_core::time::parse_rfc3339(&at[..at.find('"')?])
                    })
                    .or_else(|| {
                        serde_json::from_slice::<Created>(&bytes)
                            .ok()
                            .and_then(|c| c.history?.into_iter().next()?.at)
                            .and_then(|a| tao_core::time::parse_rfc3339(&a))
                    })
            } else {
                None
            };
            out.push(t);
        }
        Ok(out)
    }
    let per = ids.len().div_ceil(threads).max(MIN_PER_THREAD);
    let parts: Vec<Result<Vec<Option<DateTime<Utc>>>>> = std::thread::scope(|sc| {
        let handles: Vec<_> = ids
            .chunks(per)
            .map(|slice| sc.spawn(move || times(store, slice)))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(Error::Internal("a list thread panicked".into())))
            })
            .collect()
    });
    let mut keyed: Vec<(Option<DateTime<Utc>>, &String)> = Vec::with_capacity(ids.len());
    let mut it = ids.iter();
    for part in parts {
        for t in part? {
            keyed.push((t, it.next().expect("one time per id")));
        }
    }
    keyed.sort_by_key(|(t, _)| *t);
    Ok(keyed.into_iter().map(|(_, id)| id.clone()).collect())
}

/// How the store writes the start of a record's history (compact JSON).
const FIRST_AT: &str = "\"history\":[{\"at\":\"";

/// `ids` (sorted) cut into runs of one id day: the id without its last
/// `-` part (`tao-20261201` of `tao-20261201-k3f9x2`).
fn days(ids: &[String]) -> Vec<&[String]> {
    fn day(id: &str) -> &str {
        id.rsplit_once('-').map_or("", |(d, _)| d)
    }
    let mut out = Vec::new();
    let mut start = 0;
    for i in 1..=ids.len() {
        if i == ids.len() || day(&ids[i]) != day(&ids[start]) {
            if i > start {
                out.push(&ids[start..i]);
            }
            start = i;
        }
    }
    out
}

/// Ids per batch of `list` (bounds the memory of the rendered lines).
const BATCH: usize = 4096;
/// Below this many ids a batch is rendered on one thread.
const MIN_PER_THREAD: usize = 256;

/// What one thread of `list` rendered.
#[derive(Default)]
struct Part {
    out: Vec<u8>,
    /// Each printed line's creation time and byte range in `out`.
    created: Vec<(Option<DateTime<Utc>>, usize, usize)>,
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
        let mut created = None;
        match render_line(store, id, &bytes, filter, &mut part.out, &mut created) {
            Ok(true) => {
                part.printed += 1;
                part.created.push((created, mark, part.out.len()));
            }
            Ok(false) => {}
            Err(_) => {
                part.out.truncate(mark);
                match parse_record(&bytes, &path) {
                    // Not compact JSON on one line: take the slow path.
                    Ok(rec) => {
                        if filter.matches(&rec, store) {
                            let created = rec.created_at().and_then(tao_core::time::parse_rfc3339);
                            serde_json::to_writer(&mut part.out, &rec.into_job_line().fields)
                                .map_err(|e| Error::Internal(e.to_string()))?;
                            part.out.push(b'\n');
                            part.printed += 1;
                            part.created.push((created, mark, part.out.len()));
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
/// record passed the filter; `created` gets its creation time (the `at`
/// of its first history entry), if any.
///
/// Errors: when the file is not compact JSON (any raw value holding a
/// newline), does not parse, or is not a usable record of `id` (its `id`
/// is not `id`, its `state` not a state); the caller then takes the slow
/// path, whose [`parse_record`] names what is wrong.
fn render_line(
    store: &Store,
    id: &str,
    bytes: &[u8],
    filter: &Filter,
    out: &mut Vec<u8>,
    created_at: &mut Option<DateTime<Utc>>,
) -> std::result::Result<bool, ()> {
    let text = std::str::from_utf8(bytes).map_err(|_| ())?;
    let top: RawTop = serde_json::from_str(text.trim_end()).map_err(|_| ())?;
    let str_of = |key: &str| {
        top.0
            .iter()
            .find(|(k, _)| k == key)
            .and_then(|(_, v)| serde_json::from_str::<Cow<str>>(v.get()).ok())
    };
    if str_of("id").as_deref() != Some(id) {
        return Err(());
    }
    let state = str_of("state").and_then(|s| State::parse(&s)).ok_or(())?;
    if filter.live && !state.is_live() {
        let raw = |key: &str| {
            top.0
                .iter()
                .find(|(k, _)| k == key)
                .and_then(|(_, v)| serde_json::from_str::<Value>(v.get()).ok())
        };
        if !cron_has_work(store, state, raw) {
            return Ok(false);
        }
    }
    if !filter.states.is_empty() && !filter.states.contains(&state) {
        return Ok(false);
    }
    let created = top
        .0
        .iter()
        .find(|(k, _)| k == "history")
        .and_then(|(_, v)| serde_json::from_str::<Vec<At>>(v.get()).ok())
        .and_then(|h| h.into_iter().next())
        .and_then(|a| a.at)
        .and_then(|a| tao_core::time::parse_rfc3339(&a));
    if let Some(since) = filter.since {
        if created.is_none_or(|c| c < since) {
            return Ok(false);
        }
    }
    *created_at = created;
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

    /// The `id` of a record's text (its file is `<id>.json`).
    fn id_of(text: &str) -> String {
        let v: Value = serde_json::from_str(text).unwrap();
        v["id"].as_str().unwrap().to_string()
    }

    /// The fast path's verdict on a record's `text` under `filter`
    /// ([`render_line`], the id taken from the text): whether it is
    /// printed, or `Err` to fall back to the slow path. `out` gets the line.
    fn fast_path(
        store: &Store,
        text: &str,
        filter: &Filter,
        out: &mut Vec<u8>,
    ) -> std::result::Result<bool, ()> {
        render_line(store, &id_of(text), text.as_bytes(), filter, out, &mut None)
    }

    /// The slow path's verdict on a record's `text` under `filter`:
    /// [`parse_record`] as `list` calls it, then [`Filter::matches`].
    fn slow_path(store: &Store, text: &str, filter: &Filter) -> bool {
        let rec = parse_record(
            text.as_bytes(),
            &std::path::PathBuf::from(format!("{}.json", id_of(text))),
        )
        .unwrap();
        filter.matches(&rec, store)
    }

    /// The `id` of each line `list` printed.
    fn ids_of_lines(out: Vec<u8>) -> Vec<String> {
        String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| {
                serde_json::from_str::<Value>(l).unwrap()["id"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect()
    }

    #[test]
    fn fast_path_prints_what_the_slow_path_prints() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::open(tmp.path().to_path_buf()).unwrap();
        let text = r#"{"id":"a","state":"RUNNING","x":{"b":[1,2.5,"é\n"]},"history":[{"at":"2026-11-29T10:00:00Z","state":"PENDING"}],"z":null}"#;
        let mut fast = Vec::new();
        assert_eq!(
            fast_path(&store, text, &Filter::default(), &mut fast),
            Ok(true)
        );
        let rec = parse_record(
            text.as_bytes(),
            &std::path::PathBuf::from(format!("{}.json", id_of(text))),
        )
        .unwrap();
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
        assert_eq!(fast_path(&store, text, &live, &mut out), Ok(true));
        let done = Filter {
            states: vec![State::Complete],
            ..Default::default()
        };
        assert_eq!(fast_path(&store, text, &done, &mut out), Ok(false));
        let since = Filter {
            since: tao_core::time::parse_rfc3339("2026-11-29T11:00:00Z"),
            ..Default::default()
        };
        assert_eq!(fast_path(&store, text, &since, &mut out), Ok(false));
        // Pretty-printed files go to the slow path.
        assert!(render_line(
            &store,
            "a",
            b"{\"id\":\n [1,\n 2]}",
            &Filter::default(),
            &mut out,
            &mut None
        )
        .is_err());
    }

    /// The ids `list` prints for `filter`.
    fn listed_ids(store: &Store, filter: &Filter) -> Vec<String> {
        let mut out = Vec::new();
        list(store, filter, &mut out, &mut |_| {}).unwrap();
        ids_of_lines(out)
    }

    #[test]
    fn list_is_in_creation_order_unless_asked_for_id_order() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::open(tmp.path().to_path_buf()).unwrap();
        // (id, created): ids of one day in another order than their times,
        // a pretty-printed record (slow path), and a later day.
        let recs = [
            ("tao-20261201-aaaaaa", "2026-12-01T10:00:03Z", false),
            ("tao-20261201-bbbbbb", "2026-12-01T10:00:01Z", true),
            ("tao-20261201-cccccc", "2026-12-01T10:00:02.5Z", false),
            ("tao-20261202-000000", "2026-12-02T00:00:00Z", false),
        ];
        for (id, at, pretty) in recs {
            let v = serde_json::json!({"id": id, "state": "RUNNING", "history": [{"at": at}]});
            let text = if pretty {
                serde_json::to_string_pretty(&v).unwrap()
            } else {
                v.to_string()
            };
            std::fs::write(store.record_path(id), text).unwrap();
        }
        // A day of more than a batch (sorted by a pass over the times
        // first), each record older than the one before it in id order.
        let end = tao_core::time::parse_rfc3339("2026-11-30T23:59:59Z").unwrap();
        for i in 0..BATCH + 10 {
            let id = format!("tao-20261130-{i:06}");
            let at = (end - chrono::Duration::seconds(i as i64)).to_rfc3339();
            let v = serde_json::json!({"id": id, "state": "COMPLETE", "history": [{"at": at}]});
            std::fs::write(store.record_path(&id), v.to_string()).unwrap();
        }
        let ids = listed_ids(&store, &Filter::default());
        let n = ids.len();
        assert_eq!(
            ids[n - 4..],
            [
                "tao-20261201-bbbbbb",
                "tao-20261201-cccccc",
                "tao-20261201-aaaaaa",
                "tao-20261202-000000"
            ]
        );
        let first: Vec<&String> = ids[..n - 4].iter().collect();
        let mut rev = first.clone();
        rev.sort_by(|a, b| b.cmp(a));
        assert_eq!(first, rev, "older records first");
        let by_id = listed_ids(
            &store,
            &Filter {
                order: Order::Id,
                ..Default::default()
            },
        );
        let mut sorted = by_id.clone();
        sorted.sort();
        assert_eq!(by_id, sorted);
        // Explicit ids keep the order given.
        let given = listed_ids(
            &store,
            &Filter {
                ids: vec!["tao-20261202-000000".into(), "tao-20261201-aaaaaa".into()],
                ..Default::default()
            },
        );
        assert_eq!(given, ["tao-20261202-000000", "tao-20261201-aaaaaa"]);
    }

    #[test]
    fn live_holds_ended_failures_not_yet_classified() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::open(tmp.path().to_path_buf()).unwrap();
        let live = Filter {
            live: true,
            ..Default::default()
        };
        let h = r#""history":[{"at":"2026-11-29T10:00:00Z"}]"#;
        for (text, want) in [
            (
                format!(
                    r#"{{"id":"a","state":"ERROR","slurm":{{"job_id":"7"}},"classification":null,{h}}}"#
                ),
                true,
            ),
            (
                format!(r#"{{"id":"a","state":"ERROR","slurm":{{"job_id":"7"}},{h}}}"#),
                true,
            ),
            (
                format!(
                    r#"{{"id":"a","state":"ERROR","slurm":{{"job_id":"7"}},"classification":{{"class":"infra"}},{h}}}"#
                ),
                false,
            ),
            // Never submitted: nothing for tao-poll to fetch.
            (
                format!(r#"{{"id":"a","state":"ERROR","classification":null,{h}}}"#),
                false,
            ),
            (
                format!(r#"{{"id":"a","state":"COMPLETE","slurm":{{"job_id":"7"}},{h}}}"#),
                false,
            ),
            (
                format!(r#"{{"id":"a","state":"CANCELED","slurm":{{"job_id":"7"}},{h}}}"#),
                false,
            ),
        ] {
            let fast = fast_path(&store, &text, &live, &mut Vec::new());
            assert_eq!(fast, Ok(want), "{text}");
            assert_eq!(slow_path(&store, &text, &live), want, "slow path: {text}");
        }
    }

    /// A crash between `tao-record mark` and `tao-record retry` leaves an
    /// ERROR record classified retryable with no retry: `--live` holds it
    /// until its retry exists or its budget is spent.
    #[test]
    fn live_holds_retryable_failures_whose_retry_was_never_opened() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::open(tmp.path().to_path_buf()).unwrap();
        let child = "tao-20261201-child1";
        let live = Filter {
            live: true,
            ..Default::default()
        };
        let h = r#""history":[{"at":"2026-11-29T10:00:00Z"}]"#;
        let retry = r#""classification":{"class":"infra","retry":true}"#;
        let cases = [
            (format!(r#"{{"id":"a","state":"ERROR",{retry},{h}}}"#), true),
            (
                format!(r#"{{"id":"a","state":"ERROR","attempt":9,{retry},{h}}}"#),
                true,
            ),
            // The retry was named in the parent but never created.
            (
                format!(r#"{{"id":"a","state":"ERROR",{retry},"retried_by":"{child}",{h}}}"#),
                true,
            ),
            (
                format!(r#"{{"id":"a","state":"ERROR","attempt":10,{retry},{h}}}"#),
                false,
            ),
            (
                format!(
                    r#"{{"id":"a","state":"ERROR","classification":{{"class":"infra","retry":false}},{h}}}"#
                ),
                false,
            ),
            (
                format!(r#"{{"id":"a","state":"CANCELED",{retry},{h}}}"#),
                false,
            ),
        ];
        for (text, want) in &cases {
            let fast = fast_path(&store, text, &live, &mut Vec::new());
            assert_eq!(fast, Ok(*want), "{text}");
            assert_eq!(slow_path(&store, text, &live), *want, "slow path: {text}");
        }
        // Once the retry exists, the parent leaves --live.
        std::fs::write(
            store.record_path(child),
            format!(r#"{{"id":"{child}","state":"PENDING"}}"#),
        )
        .unwrap();
        let text = &cases[2].0;
        assert_eq!(fast_path(&store, text, &live, &mut Vec::new()), Ok(false));
        assert!(!slow_path(&store, text, &live));
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
        let by_id = Filter {
            order: Order::Id,
            ..Default::default()
        };
        let listed = list(&store, &by_id, &mut out, &mut |w| {
            warnings.push(w.to_string())
        })
        .unwrap();
        assert_eq!((listed.printed, listed.missing), (n as u64 - 1, 0));
        assert_eq!(listed.corrupt, [store.record_path("r-00002")]);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        let ids = ids_of_lines(out);
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
