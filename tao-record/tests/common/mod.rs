//! Shared helpers of the integration tests: a fresh store per test and a
//! `tao-record` command with a cleared environment (the shape of
//! ripgrep's test utilities), so the developer's own TAO_*/SLURM_* settings
//! never leak in.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;

/// A temporary store directory and the environment a test runs with.
pub struct Env {
    pub dir: tempfile::TempDir,
    pub vars: Vec<(String, String)>,
}

impl Env {
    /// A fresh store, results root `/shared/tao`, site profile `local`.
    pub fn new() -> Env {
        let dir = tempfile::tempdir().unwrap();
        let vars = vec![
            (
                "TAO_STATE_DIR".into(),
                dir.path().join("state").display().to_string(),
            ),
            ("SLURM_BASE_RESULTS_DIR".into(), "/shared/tao".into()),
            ("TAO_SITE_PROFILE".into(), "local".into()),
        ];
        Env { dir, vars }
    }

    /// Set (or replace) a variable.
    pub fn set(&mut self, k: &str, v: &str) -> &mut Self {
        self.vars.retain(|(n, _)| n != k);
        self.vars.push((k.into(), v.into()));
        self
    }

    /// Remove a variable.
    pub fn unset(&mut self, k: &str) -> &mut Self {
        self.vars.retain(|(n, _)| n != k);
        self
    }

    /// The store directory.
    pub fn state(&self) -> PathBuf {
        self.dir.path().join("state")
    }

    /// A record file path.
    pub fn record_path(&self, id: &str) -> PathBuf {
        self.state().join("records").join(format!("{id}.json"))
    }

    /// A `tao-record` command with only this environment.
    pub fn cmd(&self) -> Command {
        let mut c = Command::cargo_bin("tao-record").unwrap();
        c.env_clear();
        for (k, v) in &self.vars {
            c.env(k, v);
        }
        c
    }

    /// Write a file under the temp dir and return its path.
    pub fn file(&self, name: &str, text: &str) -> PathBuf {
        let p = self.dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    /// `open --runtime none --command ...` plus `extra`; returns the id.
    pub fn open(&self, extra: &[&str]) -> String {
        let out = self
            .cmd()
            .args([
                "open",
                "--runtime",
                "none",
                "--command",
                "python train.py",
                "--print-id",
            ])
            .args(extra)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    }

    /// Mark `id` with flags; asserts success.
    pub fn mark(&self, id: &str, state: &str, msg: &str) {
        self.cmd()
            .args(["mark", id, "--state", state, "--message", msg])
            .assert()
            .success();
    }

    /// The full record on disk (with history).
    pub fn record(&self, id: &str) -> Value {
        read_json(&self.record_path(id))
    }
}

/// Parse a JSON file.
pub fn read_json(p: &Path) -> Value {
    let bytes = std::fs::read(p).unwrap();
    serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Parse stdout as JSON lines.
pub fn lines(stdout: &[u8]) -> Vec<Value> {
    String::from_utf8(stdout.to_vec())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect()
}

/// A small xorshift generator (the tests only need varied, reproducible
/// choices; the seed is printed so a failure can be replayed).
pub struct Rng(pub u64);

impl Rng {
    pub fn from_env_or_time() -> Rng {
        let seed = std::env::var("TAO_TEST_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap()
                    .as_nanos() as u64
                    | 1
            });
        eprintln!("seed: TAO_TEST_SEED={seed}");
        Rng(seed)
    }

    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}
