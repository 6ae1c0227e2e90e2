//! The per-cluster NCCL cache: `<state_dir>/clusters/<cluster>/nccl.json`
//! holds the environment that passed, written atomically; `nccl.lock`
//! beside it makes one probe per cluster at a time.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use tao_core::{Error, Result};

use super::env::check_env;

/// One environment tried and what the probe said.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tried {
    /// The knob set (`{}` for the cluster's own environment).
    pub env: BTreeMap<String, String>,
    /// `ok`, `timeout`, `failed exit=N`, or why there was no verdict.
    pub outcome: String,
    /// The probe's Slurm job id, when it was submitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe_job_id: Option<String>,
}

/// The cache file `clusters/<cluster>/nccl.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheEntry {
    /// The environment that passed (`{}`: none needed).
    pub env: BTreeMap<String, String>,
    /// RFC 3339 UTC time of the passing probe.
    pub passed_at: String,
    /// Slurm job id of the passing probe.
    pub probe_job_id: String,
    /// Every environment tried before it passed, in order.
    #[serde(default)]
    pub tried: Vec<Tried>,
}

/// The cache file of `cluster` under the record store's directory:
/// `<state_dir>/clusters/<cluster>/nccl.json`.
pub fn cache_path(state_dir: &Path, cluster: &str) -> PathBuf {
    state_dir.join("clusters").join(cluster).join("nccl.json")
}

/// Read a cache file. `Ok(None)` when it does not exist.
///
/// Errors: [`Error::Io`] when it cannot be read; [`Error::Data`] when it
/// is not a cache entry (naming the file: delete it to probe again).
pub fn read_cache(path: &Path) -> Result<Option<CacheEntry>> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io(format!("reading {path:?}"), e)),
    };
    let entry: CacheEntry = serde_json::from_slice(&bytes).map_err(|e| {
        Error::Data(format!(
            "{path:?} is not an NCCL cache entry ({e}); delete it and the probe runs again"
        ))
    })?;
    check_env(&entry.env)
        .map_err(|m| Error::Data(format!("{path:?}: {m}; delete it and the probe runs again")))?;
    Ok(Some(entry))
}

/// Write a cache file atomically ([`tao_store::file::write_atomic`]: a
/// temporary file in the same directory, fsync, rename, directory fsync;
/// mode 600), creating its directory.
///
/// Errors: [`Error::Io`] naming the directory or the file.
pub fn write_cache(path: &Path, entry: &CacheEntry) -> Result<()> {
    let dir = path
        .parent()
        .ok_or_else(|| Error::Internal(format!("cache path {path:?} has no directory")))?;
    std::fs::create_dir_all(dir).map_err(|e| Error::io(format!("creating {dir:?}"), e))?;
    let text = serde_json::to_string_pretty(entry).expect("a cache entry serialises") + "\n";
    tao_store::file::write_atomic(
        path,
        text.as_bytes(),
        tao_store::file::Atomic::default(),
        &format!("writing {path:?}"),
    )
}

/// Take the cluster's probe lock, `nccl.lock` beside the cache file
/// ([`tao_store::file::lock`]: `flock(2)`, blocking; released when the
/// file is dropped), creating its directory.
///
/// Errors: [`Error::Io`].
pub fn lock_cluster(cache: &Path) -> Result<std::fs::File> {
    let dir = cache
        .parent()
        .ok_or_else(|| Error::Internal(format!("cache path {cache:?} has no directory")))?;
    std::fs::create_dir_all(dir).map_err(|e| Error::io(format!("creating {dir:?}"), e))?;
    let path = dir.join("nccl.lock");
    tao_store::file::lock(&path, &format!("{path:?}"))
}
