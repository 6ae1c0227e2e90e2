//! Reading many records: `list` and its filters, the retry chain, and
//! `gc`, which archives terminal records older than an age.
//!
//! Reads take no lock (record files are replaced by rename, so a reader
//! sees a whole old or a whole new file). A record that disappears between
//! the directory listing and the read (archived by a concurrent `gc`) is
//! skipped.

use std::io::Write;

use chrono::{DateTime, Utc};
use serde_json::Value;
use tao_core::{Error, Result, State};

use crate::store::{parse_record, Record, Store};
use crate::validate;

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

/// Parse `--since`: a duration back from `now` (`30m`, `12h`, `7d`) or an
/// RFC 3339 time.
///
/// Errors: the reason, for the caller to wrap.
pub fn parse_since(s: &str, now: DateTime<Utc>) -> std::result::Result<DateTime<Utc>, String> {
    if let Some(t) = tao_core::time::parse_rfc3339(s) {
        return Ok(t);
    }
    let secs = validate::duration_secs(s)
        .map_err(|_| format!("{s:?} is neither a duration (30m, 12h, 7d) nor an RFC 3339 time"))?;
    let secs = i64::try_from(secs).map_err(|_| format!("{s:?} is too long"))?;
    Ok(now - chrono::Duration::seconds(secs))
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
/// Returns the number printed and the number of requested ids that had
/// no record.
///
/// Errors: [`Error::Io`] when reading the store or writing fails.
pub fn list<W: Write>(
    store: &Store,
    filter: &Filter,
    out: &mut W,
    warn: &mut dyn FnMut(&str),
) -> Result<(u64, u64)> {
    let (ids, explicit) = if let Some(c) = &filter.chain_of {
        let mut ids = chain(store, c)?;
        if !filter.ids.is_empty() {
            ids.retain(|i| filter.ids.contains(i));
        }
        (ids, false)
    } else if !filter.ids.is_empty() {
        (filter.ids.clone(), true)
    } else {
        (store.ids()?, false)
    };
    let mut printed = 0;
    let mut missing = 0;
    let mut buf = Vec::with_capacity(4096);
    for id in &ids {
        let rec = if explicit || filter.chain_of.is_some() {
            match store.load(id) {
                Ok(r) => r,
                Err(e) => {
                    warn(&e.to_string());
                    missing += 1;
                    continue;
                }
            }
        } else {
            let path = store.record_path(id);
            let bytes = match std::fs::read(&path) {
                Ok(b) => b,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(Error::io(format!("reading {:?}", path), e)),
            };
            match parse_record(&bytes, &path) {
                Ok(r) => r,
                Err(e) => {
                    warn(&e.to_string());
                    continue;
                }
            }
        };
        if !filter.matches(&rec) {
            continue;
        }
        let line = rec.into_job_line();
        buf.clear();
        serde_json::to_writer(&mut buf, &line.fields)
            .map_err(|e| Error::Internal(e.to_string()))?;
        buf.push(b'\n');
        out.write_all(&buf)
            .map_err(|e| Error::io("writing standard output", e))?;
        printed += 1;
    }
    Ok((printed, missing))
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
        if !(name.starts_with(".tmp-") && name.ends_with(".part")) {
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
    fn since_forms() {
        let now = tao_core::time::parse_rfc3339("2026-11-29T12:00:00Z").unwrap();
        assert_eq!(
            parse_since("2h", now).unwrap(),
            tao_core::time::parse_rfc3339("2026-11-29T10:00:00Z").unwrap()
        );
        assert_eq!(
            parse_since("2026-11-28T00:00:00Z", now).unwrap(),
            tao_core::time::parse_rfc3339("2026-11-28T00:00:00Z").unwrap()
        );
        assert!(parse_since("yesterday", now).is_err());
    }
}
