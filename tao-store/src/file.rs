//! The one file lock and the one atomic write of the project's local state
//! files: job records (`records/<id>.json`), the NCCL probe cache
//! (`clusters/<cluster>/nccl.json`) and tao-poll's report file all go
//! through here.
//!
//! - [`lock`]: an exclusive `flock(2)` (via fs4) on a lock file that is
//!   created if missing (mode 600) and kept after use. Deleting a lock file
//!   while another process waits on it would let a third process lock a
//!   fresh inode and run beside it, so callers never delete one they do not
//!   hold.
//! - [`write_atomic`]: the "write a temporary file in the same directory,
//!   fsync, rename, fsync the directory" recipe (POSIX rename(2) is atomic
//!   on a local filesystem; ext4's and SQLite's durability notes). A reader
//!   sees the whole old file or the whole new one, never half of one; a
//!   crash leaves at most a `.tmp-*.part` file beside the target.
//!   Temporary files come from the `tempfile` crate (unique names,
//!   `O_EXCL`).

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;

use tao_core::{Error, Result};

/// Prefix of the temporary files [`write_atomic`] creates beside its
/// target (`.tmp-XXXXXX.part`); `tao-record gc` sweeps stale ones.
pub const TEMP_PREFIX: &str = ".tmp-";
/// Suffix of the temporary files [`write_atomic`] creates.
pub const TEMP_SUFFIX: &str = ".part";

/// Take an exclusive lock on `path` (blocking until it is free), creating
/// the file with mode 600 if it does not exist; the lock is released when
/// the returned file is dropped. The parent directory must exist.
///
/// `what` names the locked thing in the error (`record "tao-…"`).
///
/// Errors: [`Error::Io`] "opening lock <path>" when the file cannot be
/// opened or created, "locking <what>" when `flock(2)` fails.
pub fn lock(path: &Path, what: &str) -> Result<File> {
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(path)
        .map_err(|e| Error::io(format!("opening lock {path:?}"), e))?;
    fs4::FileExt::lock(&file).map_err(|e| Error::io(format!("locking {what}"), e))?;
    Ok(file)
}

/// How [`write_atomic`] writes.
#[derive(Debug, Clone, Copy)]
pub struct Atomic {
    /// Permission bits of the new file, before the umask: `0o600` for
    /// private state (the default), `0o666` for a file the user reads and
    /// shares like one written by `std::fs::write`.
    pub mode: u32,
    /// Fail with `AlreadyExists` instead of replacing an existing target
    /// (link(2) instead of rename(2)), for files that are created once.
    pub noclobber: bool,
    /// fsync the directory after the rename, so the new name survives a
    /// crash (records and caches: yes).
    pub sync_dir: bool,
}

impl Default for Atomic {
    fn default() -> Self {
        Atomic {
            mode: 0o600,
            noclobber: false,
            sync_dir: true,
        }
    }
}

/// Write `bytes` as the whole content of `path`, atomically (see the
/// module documentation). The parent directory must exist; an empty
/// parent means the current directory.
///
/// `what` describes the write in errors (`writing record "tao-…"`).
///
/// Errors: [`Error::Io`] `what` with the cause, when the temporary file
/// cannot be created, written or synced, when the rename fails (with
/// `noclobber`: the target exists) or the directory sync fails. On error
/// the target is unchanged and the temporary file is removed.
pub fn write_atomic(path: &Path, bytes: &[u8], how: Atomic, what: &str) -> Result<()> {
    let err = |e: std::io::Error| Error::io(what.to_string(), e);
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::Builder::new()
        .prefix(TEMP_PREFIX)
        .suffix(TEMP_SUFFIX)
        .permissions(std::fs::Permissions::from_mode(how.mode))
        .tempfile_in(dir)
        .map_err(err)?;
    tmp.write_all(bytes).map_err(err)?;
    tmp.as_file().sync_all().map_err(err)?;
    if how.noclobber {
        tmp.persist_noclobber(path).map_err(|e| err(e.error))?;
    } else {
        tmp.persist(path).map_err(|e| err(e.error))?;
    }
    if how.sync_dir {
        sync_dir(dir)?;
    }
    Ok(())
}

/// fsync directory `dir` (after a rename or unlink in it).
///
/// Errors: [`Error::Io`] "syncing directory <dir>".
pub fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| Error::io(format!("syncing directory {dir:?}"), e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_whole_files_and_respects_noclobber() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.json");
        write_atomic(&p, b"one\n", Atomic::default(), "writing a").unwrap();
        write_atomic(&p, b"two\n", Atomic::default(), "writing a").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"two\n");
        let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let e = write_atomic(
            &p,
            b"three\n",
            Atomic {
                noclobber: true,
                ..Atomic::default()
            },
            "writing a",
        )
        .unwrap_err();
        assert!(e.to_string().contains("writing a"), "{e}");
        assert_eq!(std::fs::read(&p).unwrap(), b"two\n", "target unchanged");
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(
            left,
            vec![std::ffi::OsString::from("a.json")],
            "no temp left"
        );
    }

    #[test]
    fn lock_is_exclusive_while_held() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.lock");
        let held = lock(&p, "x").unwrap();
        let again = File::open(&p).unwrap();
        assert!(fs4::FileExt::try_lock(&again).is_err());
        drop(held);
        fs4::FileExt::try_lock(&again).unwrap();
    }

    #[test]
    fn missing_directory_is_an_io_error_naming_the_write() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("no/such/dir/f");
        let e = write_atomic(&p, b"x", Atomic::default(), "writing f").unwrap_err();
        assert!(matches!(e, Error::Io { .. }), "{e:?}");
        assert!(e.to_string().contains("writing f"), "{e}");
    }
}
