//! The record store on local disk: one JSON file per record under
//! `<dir>/records/<id>.json`, archived records under `<dir>/archive/`.
//!
//! Every write takes the record's lock (`flock(2)` on `records/<id>.lock`,
//! [`crate::file::lock`]), writes a temporary file in the same directory, fsyncs it,
//! renames it over the record and fsyncs the directory. A reader therefore
//! sees either the old file or the new one, never half of one, and two
//! writers of the same record never lose each other's update. Readers take
//! no lock: rename(2) is atomic on a local filesystem (POSIX rename, and
//! the "write temp, fsync, rename, fsync dir" recipe of ext4's and
//! SQLite's durability notes; [`crate::file::write_atomic`]).
//!
//! Lock files are kept after use: deleting a lock file while another
//! process waits on it would let a third process lock a fresh inode and
//! run beside it. Only `gc` removes the lock of a record it archives, while
//! holding it, after the record itself is gone.

use std::fs::File;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};
use tao_core::{Error, JobLine, Result, State};

use crate::file::sync_dir;

/// The name of the directory of live records inside the store.
pub const RECORDS_DIR: &str = "records";
/// The name of the directory of archived records inside the store.
pub const ARCHIVE_DIR: &str = "archive";

/// A full record: the job line's fields plus `history`
/// (`[{at, state, source, message}]`, oldest first).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Record {
    /// The fields, in order, `history` included.
    pub fields: Map<String, Value>,
}

impl Record {
    /// Wrap a JSON object read from a record file.
    pub fn from_map(fields: Map<String, Value>) -> Self {
        Self { fields }
    }

    /// The record id (`id`), empty if missing.
    pub fn id(&self) -> &str {
        self.fields.get("id").and_then(Value::as_str).unwrap_or("")
    }

    /// The recorded state; `None` if the field is missing or not a state name.
    pub fn state(&self) -> Option<State> {
        self.fields
            .get("state")
            .and_then(Value::as_str)
            .and_then(State::parse)
    }

    /// The history entries (empty if the field is missing).
    pub fn history(&self) -> &[Value] {
        self.fields
            .get("history")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    /// When the record was opened: the `at` of its first history entry
    /// (RFC 3339 UTC), if any.
    pub fn created_at(&self) -> Option<&str> {
        self.history().first()?.get("at")?.as_str()
    }

    /// When the record last changed state: the `at` of its last history
    /// entry (RFC 3339 UTC), if any.
    pub fn last_transition_at(&self) -> Option<&str> {
        self.history().last()?.get("at")?.as_str()
    }

    /// The job line view: every field except `history`, in order.
    pub fn to_job_line(&self) -> JobLine {
        let mut fields = self.fields.clone();
        fields.shift_remove("history");
        JobLine::from_map(fields)
    }

    /// Consume into the job line view (without `history`).
    pub fn into_job_line(mut self) -> JobLine {
        self.fields.shift_remove("history");
        JobLine::from_map(self.fields)
    }
}

/// The record store rooted at one directory (`$TAO_STATE_DIR`).
#[derive(Debug, Clone)]
pub struct Store {
    dir: PathBuf,
    records: PathBuf,
    archive: PathBuf,
}

impl Store {
    /// Open (and create, mode 700, if missing) the store at `dir`.
    ///
    /// Errors: [`Error::Io`] when `dir/records` cannot be created.
    pub fn open(dir: PathBuf) -> Result<Store> {
        let records = dir.join(RECORDS_DIR);
        let archive = dir.join(ARCHIVE_DIR);
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&records)
            .map_err(|e| Error::io(format!("creating record store {:?}", records), e))?;
        Ok(Store {
            dir,
            records,
            archive,
        })
    }

    /// Open the store at the default location (see [`default_dir`]).
    ///
    /// Errors: [`Error::Config`] when no location can be derived;
    /// [`Error::Io`] as for [`Store::open`].
    pub fn open_default() -> Result<Store> {
        Store::open(default_dir()?)
    }

    /// The store's root directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The directory of live records (`<dir>/records`).
    pub fn records_dir(&self) -> &Path {
        &self.records
    }

    /// The directory of archived records (`<dir>/archive`).
    pub fn archive_dir(&self) -> &Path {
        &self.archive
    }

    /// The path of the live record file for `id` (whether or not it exists).
    pub fn record_path(&self, id: &str) -> PathBuf {
        self.records.join(format!("{id}.json"))
    }

    fn archive_path(&self, id: &str) -> PathBuf {
        self.archive.join(format!("{id}.json"))
    }

    fn lock_path(&self, id: &str) -> PathBuf {
        self.records.join(format!("{id}.lock"))
    }

    /// Whether a record with this id exists, live or archived.
    pub fn exists(&self, id: &str) -> bool {
        self.record_path(id).exists() || self.archive_path(id).exists()
    }

    /// The retry a record's `retried_by` value names, when that record
    /// exists (live or archived). `None` for no `retried_by`, a value that
    /// is not a string, or a record that was never created: `open
    /// --retry-of` names the child in the parent before it creates it, so
    /// a crash in between leaves a name without a record, and the retry
    /// is still due.
    ///
    /// Input: the parent's `retried_by` value, if any.
    pub fn existing_retry<'a>(&self, retried_by: Option<&'a Value>) -> Option<&'a str> {
        retried_by
            .and_then(Value::as_str)
            .filter(|by| tao_core::id::is_valid(by) && self.exists(by))
    }

    /// The job line of record `id`, without `history` (live records first,
    /// then the archive).
    ///
    /// Errors: [`Error::Data`] "no record ..." when it does not exist or
    /// the id is malformed; [`Error::Io`] when the file cannot be read;
    /// [`Error::Data`] when the file is not a JSON object.
    pub fn get(&self, id: &str) -> Result<JobLine> {
        Ok(self.load(id)?.into_job_line())
    }

    /// The full record `id` (with `history`), live first, then archived.
    ///
    /// Errors: as for [`Store::get`].
    pub fn load(&self, id: &str) -> Result<Record> {
        tao_core::id::validate(id)?;
        match read_record(&self.record_path(id))? {
            Some(r) => Ok(r),
            None => match read_record(&self.archive_path(id))? {
                Some(r) => Ok(r),
                None => Err(self.no_record(id)),
            },
        }
    }

    /// Load the live record `id` if it exists (no archive lookup).
    ///
    /// Errors: [`Error::Io`] / [`Error::Data`] for an unreadable file.
    pub fn load_live(&self, id: &str) -> Result<Option<Record>> {
        tao_core::id::validate(id)?;
        read_record(&self.record_path(id))
    }

    /// Write a new record. Fails if a record with its id exists (live or
    /// archived); the write is atomic and never replaces an existing file
    /// (`link(2)`-based no-clobber persist).
    ///
    /// Errors: [`Error::Io`] with kind `AlreadyExists` when the id is taken;
    /// other [`Error::Io`] for disk failures; [`Error::Data`] for a bad id
    /// or a `state` missing or not a state word (what [`parse_record`]
    /// would refuse to read back).
    pub fn create(&self, record: &Record) -> Result<()> {
        let id = record.id();
        tao_core::id::validate(id)?;
        // Never write what `parse_record` would refuse to read back.
        if record.state().is_none() {
            return Err(Error::Data(format!(
                "record {id:?} has \"state\": {}, not a state; a new record holds one of {}",
                shown_state(record),
                state_words()
            )));
        }
        if self.archive_path(id).exists() {
            return Err(Error::io(
                format!("creating record {id:?}"),
                std::io::Error::from(std::io::ErrorKind::AlreadyExists),
            ));
        }
        self.write_atomic(id, &record.fields, true)
    }

    /// Lock the live record `id`, read it, let `f` change it, and write it
    /// back atomically if it changed. Returns `f`'s result. The lock is held
    /// from before the read until after the rename and directory fsync, so
    /// concurrent updates of the same record serialise and none is lost.
    ///
    /// Errors: [`Error::Data`] "no record ..." when there is no live record
    /// (an archived record cannot be changed); any error of `f` (the record
    /// is then left untouched); [`Error::Io`] for disk failures.
    pub fn update<T>(&self, id: &str, f: impl FnOnce(&mut Record) -> Result<T>) -> Result<T> {
        self.update_then(id, f, |_| Ok(()))
    }

    /// Like [`Store::update`], then run `after` with `f`'s result while the
    /// record's lock is still held (after its new version is on disk). Used
    /// by `open --retry-of`: the parent names its retry first, then the
    /// retry record is created, and no second retry can start in between.
    ///
    /// Errors: as for [`Store::update`], plus any error of `after` (the
    /// record's update is then already written).
    pub fn update_then<T>(
        &self,
        id: &str,
        f: impl FnOnce(&mut Record) -> Result<T>,
        after: impl FnOnce(&T) -> Result<()>,
    ) -> Result<T> {
        tao_core::id::validate(id)?;
        let path = self.record_path(id);
        if !path.exists() {
            return Err(self.missing_live(id));
        }
        let _lock = self.lock(id)?;
        let Some(mut record) = read_record(&path)? else {
            // gc archived it while we waited for the lock.
            return Err(self.missing_live(id));
        };
        let before = record.fields.clone();
        let out = f(&mut record)?;
        if record.fields != before {
            self.write_atomic(id, &record.fields, false)?;
        }
        after(&out)?;
        Ok(out)
    }

    /// Check that `id` names a live record (one `mark` can change).
    ///
    /// Errors: [`Error::Data`] "no record ..." or "... is archived ...".
    pub fn require_live(&self, id: &str) -> Result<()> {
        tao_core::id::validate(id)?;
        if self.record_path(id).exists() {
            Ok(())
        } else {
            Err(self.missing_live(id))
        }
    }

    fn missing_live(&self, id: &str) -> Error {
        if self.archive_path(id).exists() {
            Error::Data(format!(
                "record {id:?} is archived in {:?} and cannot change; open a new record",
                self.archive
            ))
        } else {
            self.no_record(id)
        }
    }

    /// The error for a record id that names no record: for a Slurm job id
    /// given instead, what to give (the record holding that Slurm job,
    /// found by reading the live records: an error path only,
    /// `tao_core::id::slurm_id_given`); else check the id or the store.
    fn no_record(&self, id: &str) -> Error {
        if tao_core::id::looks_like_slurm_job_id(id) {
            let holder = self.ids().ok().and_then(|ids| {
                ids.into_iter().find(|rid| {
                    read_record(&self.record_path(rid))
                        .ok()
                        .flatten()
                        .is_some_and(|r| r.into_job_line().slurm_job_id().as_deref() == Some(id))
                })
            });
            return Error::Data(tao_core::id::slurm_id_given(id, holder.as_deref()));
        }
        Error::Data(format!(
            "no record {id:?} in {:?}; check the id (`tao-record list`) or TAO_STATE_DIR",
            self.dir
        ))
    }

    /// The ids of all live records, sorted (ids start with their UTC date,
    /// so this is roughly creation order). Temporary files and locks are
    /// skipped.
    ///
    /// Errors: [`Error::Io`] when the directory cannot be read.
    pub fn ids(&self) -> Result<Vec<String>> {
        let mut ids = Vec::new();
        let rd = std::fs::read_dir(&self.records)
            .map_err(|e| Error::io(format!("reading {:?}", self.records), e))?;
        for entry in rd {
            let entry = entry.map_err(|e| Error::io(format!("reading {:?}", self.records), e))?;
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            if let Some(id) = name.strip_suffix(".json") {
                if tao_core::id::is_valid(id) {
                    ids.push(id.to_string());
                }
            }
        }
        ids.sort_unstable();
        Ok(ids)
    }

    /// Move the live record `id` to the archive if `keep(record)` says
    /// false, under the record's lock. Returns whether it moved.
    ///
    /// Errors: [`Error::Io`] for disk failures.
    pub fn archive_if(&self, id: &str, archive: impl FnOnce(&Record) -> bool) -> Result<bool> {
        tao_core::id::validate(id)?;
        let path = self.record_path(id);
        let lock = self.lock(id)?;
        let Some(record) = read_record(&path)? else {
            return Ok(false);
        };
        if !archive(&record) {
            return Ok(false);
        }
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&self.archive)
            .map_err(|e| Error::io(format!("creating {:?}", self.archive), e))?;
        let dest = self.archive_path(id);
        std::fs::rename(&path, &dest)
            .map_err(|e| Error::io(format!("archiving record {id:?}"), e))?;
        sync_dir(&self.archive)?;
        sync_dir(&self.records)?;
        // The record is gone from records/: a writer that now takes this
        // lock re-reads, finds nothing and reports "archived".
        let _ = std::fs::remove_file(self.lock_path(id));
        drop(lock);
        Ok(true)
    }

    /// Take the exclusive lock of record `id` (blocks until it is free),
    /// with [`crate::file::lock`]. The lock is released when the returned
    /// file is dropped.
    fn lock(&self, id: &str) -> Result<File> {
        crate::file::lock(&self.lock_path(id), &format!("record {id:?}"))
    }

    /// Write `fields` as `records/<id>.json` with
    /// [`crate::file::write_atomic`] (temporary file in the same directory,
    /// fsync, rename, or link when `noclobber`, directory fsync).
    fn write_atomic(&self, id: &str, fields: &Map<String, Value>, noclobber: bool) -> Result<()> {
        let mut bytes = serde_json::to_vec(fields).map_err(|e| Error::Internal(e.to_string()))?;
        bytes.push(b'\n');
        let how = crate::file::Atomic {
            noclobber,
            ..crate::file::Atomic::default()
        };
        crate::file::write_atomic(
            &self.record_path(id),
            &bytes,
            how,
            &format!("writing record {id:?}"),
        )
    }
}

/// Read and parse one record file; `Ok(None)` if it does not exist.
fn read_record(path: &Path) -> Result<Option<Record>> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io(format!("reading {:?}", path), e)),
    };
    parse_record(&bytes, path).map(Some)
}

/// Parse the bytes of a record file `<id>.json`.
///
/// A record edited by hand (`jq ... > t && mv t ID.json`) is checked for
/// what every tool relies on: `id` is the file's name (a copied or
/// renamed file would print a line for another record, or one without
/// an id), and `state` is a word of the vocabulary (tao-jobline(7)).
///
/// Errors: [`Error::Data`] naming the file and the fix when it is not a
/// JSON object, its `id` is not its file name, or its `state` is missing
/// or not a state.
pub fn parse_record(bytes: &[u8], path: &Path) -> Result<Record> {
    let map: Map<String, Value> = serde_json::from_slice(bytes).map_err(|e| {
        Error::Data(format!(
            "record file {:?} is not a JSON object ({e}); move it aside and restore it from a backup",
            path
        ))
    })?;
    let rec = Record::from_map(map);
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    if rec.id() != stem {
        return Err(Error::Data(format!(
            "record file {:?} has \"id\": {}, not its file name {stem:?} (edited, copied or renamed by hand); set \"id\" back to {stem:?}, or move the file aside",
            path,
            rec.fields.get("id").map_or_else(|| "missing".to_string(), Value::to_string)
        )));
    }
    if rec.state().is_none() {
        return Err(Error::Data(format!(
            "record file {:?} has \"state\": {}, not a state (edited by hand); set it to one of {}",
            path,
            shown_state(&rec),
            state_words()
        )));
    }
    Ok(rec)
}

/// A record's `state` as JSON text, or `missing`.
fn shown_state(rec: &Record) -> String {
    rec.fields
        .get("state")
        .map_or_else(|| "missing".to_string(), Value::to_string)
}

/// The state vocabulary (tao-jobline(7)), comma-separated.
fn state_words() -> String {
    let words: Vec<&str> = State::ALL.iter().map(|s| s.as_str()).collect();
    words.join(", ")
}

/// The default store directory: `$TAO_STATE_DIR`, else
/// `$XDG_STATE_HOME/tao-slurm`, else `$HOME/.local/state/tao-slurm`
/// (XDG Base Directory Specification: relative values are ignored).
///
/// Errors: [`Error::Config`] when none of the three gives a directory
/// ([`default_dir_from`] with the process environment).
pub fn default_dir() -> Result<PathBuf> {
    default_dir_from(|name| std::env::var_os(name))
}

/// [`default_dir`] with the variables read through `var` (a name to its
/// value; an empty value counts as unset).
///
/// Errors: [`Error::Config`] when none gives a directory; the message
/// names a relative XDG_STATE_HOME as ignored, so that the fix is plain.
pub fn default_dir_from(var: impl Fn(&str) -> Option<std::ffi::OsString>) -> Result<PathBuf> {
    let var = |name: &str| var(name).filter(|v| !v.is_empty());
    if let Some(d) = var("TAO_STATE_DIR") {
        return Ok(PathBuf::from(d));
    }
    let xdg = var("XDG_STATE_HOME").map(PathBuf::from);
    if let Some(d) = &xdg {
        if d.is_absolute() {
            return Ok(d.join("tao-slurm"));
        }
    }
    if let Some(h) = var("HOME") {
        return Ok(PathBuf::from(h).join(".local/state/tao-slurm"));
    }
    Err(Error::Config(match xdg {
        Some(d) => format!(
            "no record store: XDG_STATE_HOME={:?} is relative, and the XDG Base Directory spec says to ignore it, and HOME is not set: set XDG_STATE_HOME to an absolute path, or TAO_STATE_DIR to a writable directory",
            d.display().to_string()
        ),
        None => "no record store: set TAO_STATE_DIR (or XDG_STATE_HOME or HOME) to a writable directory"
            .into(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn default_dir_order_and_relative_xdg_named() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| std::ffi::OsString::from(v))
            }
        };
        let d = default_dir_from(env(&[("TAO_STATE_DIR", "/s"), ("HOME", "/h")])).unwrap();
        assert_eq!(d, PathBuf::from("/s"));
        let d = default_dir_from(env(&[("XDG_STATE_HOME", "/x"), ("HOME", "/h")])).unwrap();
        assert_eq!(d, PathBuf::from("/x/tao-slurm"));
        let d = default_dir_from(env(&[("XDG_STATE_HOME", "rel"), ("HOME", "/h")])).unwrap();
        assert_eq!(d, PathBuf::from("/h/.local/state/tao-slurm"));
        let e = default_dir_from(env(&[("XDG_STATE_HOME", "rel"), ("TAO_STATE_DIR", "")]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("XDG_STATE_HOME=\"rel\" is relative"), "{e}");
        assert!(e.contains("absolute path"), "{e}");
        assert_eq!(e.lines().count(), 1);
        let e = default_dir_from(env(&[])).unwrap_err().to_string();
        assert!(e.contains("set TAO_STATE_DIR"), "{e}");
    }

    fn rec(id: &str) -> Record {
        let Value::Object(m) = json!({"id": id, "state": "PENDING", "history": [
            {"at": "2026-11-29T00:00:00.000000Z", "state": "PENDING", "source": "tao-record", "message": "opened"}
        ]}) else {
            unreachable!()
        };
        Record::from_map(m)
    }

    #[test]
    fn create_get_update_and_no_clobber() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::open(tmp.path().to_path_buf()).unwrap();
        store.create(&rec("a-1")).unwrap();
        let mut stateless = rec("a-2");
        stateless.fields.shift_remove("state");
        let err = store.create(&stateless).unwrap_err().to_string();
        assert!(err.contains("\"a-2\"") && err.contains("missing"), "{err}");
        assert!(!store.record_path("a-2").exists(), "nothing written");
        let err = store.create(&rec("a-1")).unwrap_err();
        assert!(
            matches!(&err, Error::Io { source, .. } if source.kind() == std::io::ErrorKind::AlreadyExists)
        );
        let line = store.get("a-1").unwrap();
        assert!(line.fields.get("history").is_none());
        assert_eq!(line.id(), Some("a-1"));
        store
            .update("a-1", |r| {
                r.fields.insert("state".into(), json!("RUNNING"));
                Ok(())
            })
            .unwrap();
        assert_eq!(store.load("a-1").unwrap().state(), Some(State::Running));
        assert_eq!(store.ids().unwrap(), vec!["a-1".to_string()]);
    }

    #[test]
    fn missing_record_is_a_data_error() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::open(tmp.path().to_path_buf()).unwrap();
        let err = store.get("nope").unwrap_err();
        assert!(matches!(err, Error::Data(_)));
        assert!(err.to_string().starts_with("no record \"nope\""), "{err}");
        assert!(store.update("nope", |_| Ok(())).is_err());
    }

    #[test]
    fn failed_update_leaves_the_record_alone() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::open(tmp.path().to_path_buf()).unwrap();
        store.create(&rec("b")).unwrap();
        let before = std::fs::read(store.record_path("b")).unwrap();
        let r: Result<()> = store.update("b", |r| {
            r.fields.insert("state".into(), json!("ERROR"));
            Err(Error::Data("no".into()))
        });
        assert!(r.is_err());
        assert_eq!(std::fs::read(store.record_path("b")).unwrap(), before);
    }

    #[test]
    fn archive_moves_and_blocks_updates() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::open(tmp.path().to_path_buf()).unwrap();
        store.create(&rec("c")).unwrap();
        assert!(!store.archive_if("c", |_| false).unwrap());
        assert!(store.archive_if("c", |_| true).unwrap());
        assert!(store.ids().unwrap().is_empty());
        assert_eq!(store.get("c").unwrap().id(), Some("c"));
        let err = store.update("c", |_| Ok(())).unwrap_err();
        assert!(err.to_string().contains("archived"), "{err}");
        assert!(store.create(&rec("c")).is_err());
    }
}
