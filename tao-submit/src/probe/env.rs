//! NCCL environments: the rule on knob names and values, the sbatch
//! `--export` option that carries one to the real job, and how one is
//! named in messages.

use std::collections::BTreeMap;

use serde_json::Value;
use tao_core::{Error, JobLine, Result};

/// Whether `c` may appear in a knob value on the sbatch command line:
/// `[A-Za-z0-9_.:/@+^=-]` (interface lists such as `^docker0` or `=eth0`,
/// numbers, paths). No comma: `--export` separates variables with commas.
pub(super) fn is_value_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "_.:/@+^=-".contains(c)
}

/// Check knob names (`[A-Z_][A-Z0-9_]*`) and values (see `--export`).
///
/// Errors: a message naming the variable and the rule.
pub fn check_env(env: &BTreeMap<String, String>) -> std::result::Result<(), String> {
    for (k, v) in env {
        let mut b = k.bytes();
        let name_ok = matches!(b.next(), Some(c) if c.is_ascii_uppercase() || c == b'_')
            && b.all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == b'_');
        if !name_ok {
            return Err(format!("NCCL knob name {k:?} must be [A-Z_][A-Z0-9_]*"));
        }
        if v.is_empty() || !v.chars().all(is_value_char) {
            return Err(format!(
                "NCCL knob {k}={v:?}: the value must be non-empty [A-Za-z0-9_.:/@+^=-] (no commas or spaces: it travels in sbatch --export)"
            ));
        }
    }
    Ok(())
}

/// The sbatch option carrying `env` to the real job:
/// `--export=ALL,NAME=value,...` (sbatch(1): `ALL` keeps the submitting
/// environment, the listed variables are added), or `None` for `{}`.
///
/// Errors: as [`check_env`], as [`Error::Config`].
pub fn export_arg(env: &BTreeMap<String, String>) -> Result<Option<String>> {
    check_env(env).map_err(Error::Config)?;
    if env.is_empty() {
        return Ok(None);
    }
    let parts: Vec<String> = env.iter().map(|(k, v)| format!("{k}={v}")).collect();
    Ok(Some(format!("--export=ALL,{}", parts.join(","))))
}

/// Text of one NCCL environment for messages: `no NCCL settings` (the
/// cluster's defaults: the first try) or `NCCL settings A=1 B=2`.
pub fn env_text(env: &BTreeMap<String, String>) -> String {
    if env.is_empty() {
        return "no NCCL settings".into();
    }
    let parts: Vec<String> = env.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!("NCCL settings {}", parts.join(" "))
}

/// The progress line of probe try `n` (1-based) of at most `of`: which
/// environment it runs with, named so a reader can find it (try 1: no NCCL
/// settings; try k > 1: the site profile's `[[nccl_knobs]]` set k-1).
pub fn probe_progress(
    line_id: &str,
    n: usize,
    of: usize,
    slurm_job_id: &str,
    env: &BTreeMap<String, String>,
    cluster: &str,
) -> String {
    let with = if n <= 1 {
        format!("{} (the cluster's defaults)", env_text(env))
    } else {
        format!(
            "{} (site profile [[nccl_knobs]] set {} of {})",
            env_text(env),
            n - 1,
            of - 1
        )
    };
    format!(
        "job {line_id:?}: communication probe try {n} of at most {of} (Slurm job {slurm_job_id}) with {with} on cluster {cluster:?}"
    )
}

/// The line's non-secret `env` as strings (numbers and booleans as JSON text).
pub(super) fn line_env(line: &JobLine) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    if let Some(Value::Object(m)) = line.get_path(&["env"]) {
        for (k, v) in m {
            let s = match v {
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                Value::Bool(b) => b.to_string(),
                _ => continue,
            };
            out.insert(k.clone(), s);
        }
    }
    out
}
