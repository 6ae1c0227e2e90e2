//! Writing a new record: a fresh id (minted again on a clash), the
//! storage paths bound to it, the fields in canonical order, and no literal
//! secret in the request.

use serde_json::{json, Map, Value};
use tao_core::model::Layout;
use tao_core::{Error, JobLine, Result, State};

use crate::machine::{push_history, TOOL};
use crate::store::{Record, Store};

/// The request fields of a record, in the order a new record writes them
/// (tao-jobline(7)). `open --retry-of` copies them from the parent, all but
/// `storage` (`retry_of::NOT_COPIED`).
pub const REQUEST_FIELDS: &[&str] = &[
    "platform",
    "action",
    "network_arch",
    "image",
    "runtime",
    "command",
    "resources",
    "storage",
    "spec",
    "mounts",
    "env",
    "secrets",
    "execution",
];

/// Mint a fresh id `tao-YYYYMMDD-xxxxxx`: the UTC date and 6 characters of
/// `[a-z0-9]` from the operating system's random source (getrandom),
/// drawn without modulo bias.
///
/// Errors: [`Error::Internal`] when the random source fails.
pub fn mint_id() -> Result<String> {
    const ALPHABET: &[u8; 36] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let date = chrono::Utc::now().format("%Y%m%d");
    let mut out = String::with_capacity(6);
    let mut buf = [0u8; 32];
    while out.len() < 6 {
        getrandom::fill(&mut buf).map_err(|e| Error::Internal(format!("random source: {e}")))?;
        for b in buf {
            // 252 = 7 * 36: bytes above it would favour the first letters.
            if b < 252 && out.len() < 6 {
                out.push(ALPHABET[(b % 36) as usize] as char);
            }
        }
    }
    Ok(format!("tao-{date}-{out}"))
}

/// Bind `storage.job_dir`/`results_dir` under `base` for `id`.
pub(super) fn bind_storage(fields: &mut Map<String, Value>, id: &str) {
    if let Some(Value::Object(st)) = fields.get_mut("storage") {
        let base = st
            .get("base_dir")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        st.insert("job_dir".into(), json!(Layout::job_dir(&base, id)));
        st.insert("results_dir".into(), json!(Layout::results_dir(&base, id)));
    }
}

/// Refuse a request whose command, execution steps, env values, mounts,
/// spec text or supporting files (read from their `local_path`) hold what
/// tao-redact's rules call a secret (a literal token in `--command` or in
/// the `--spec` file), or the value of HF_TOKEN, NGC_KEY or a secret the
/// request names: the record would keep it in plain text (and the job
/// directory a copy), before any lint runs. Secrets travel by name only
/// ([`tao_secrets::BY_NAME_ADVICE`]).
///
/// Errors: [`Error::LintBlocked`] (exit 3) naming the field, the rule and
/// the masked line; nothing is written.
pub fn refuse_literal_secrets(request: &Map<String, Value>) -> Result<()> {
    fn walk(path: &str, v: &Value, out: &mut Vec<(String, String)>) {
        match v {
            Value::String(s) => out.push((path.to_string(), s.clone())),
            Value::Array(a) => {
                for (i, x) in a.iter().enumerate() {
                    walk(&format!("{path}[{i}]"), x, out);
                }
            }
            Value::Object(m) => {
                for (k, x) in m {
                    walk(&format!("{path}.{k}"), x, out);
                }
            }
            _ => {}
        }
    }
    let mut texts = Vec::new();
    for key in ["command", "execution", "env", "mounts"] {
        if let Some(v) = request.get(key) {
            walk(key, v, &mut texts);
        }
    }
    // The spec is staged and bound like a command: scanned like one.
    if let Some(t) = request
        .get("spec")
        .and_then(|s| s.get("text"))
        .and_then(Value::as_str)
    {
        let name = request
            .get("spec")
            .and_then(|s| s.get("name"))
            .and_then(Value::as_str)
            .unwrap_or("spec");
        texts.push((format!("--spec file {name:?}"), t.to_string()));
    }
    // Supporting files are staged next to the job: their bytes too.
    if let Some(Value::Array(files)) = request
        .get("execution")
        .and_then(|e| e.get("supporting_files"))
    {
        for f in files {
            if let Some(local) = f.get("local_path").and_then(Value::as_str) {
                let bytes = std::fs::read(local)
                    .map_err(|e| Error::io(format!("reading supporting file {local:?}"), e))?;
                texts.push((
                    format!("supporting file {local:?}"),
                    String::from_utf8_lossy(&bytes).into_owned(),
                ));
            }
        }
    }
    // The catalogue plus the values of HF_TOKEN, NGC_KEY and of the
    // request's own `secrets` (tao_secrets::LineRedactors, the one rule).
    let red = tao_secrets::LineRedactors::new("tao-record")
        .without_unset_warnings()
        .for_line(&tao_core::JobLine::from_map(request.clone()))?;
    for (path, text) in texts {
        let lint = red.lint(&text);
        if let Some(f) = lint.findings.first() {
            let what = if path.starts_with("--spec") || path.starts_with("supporting") {
                format!("{path} (line {})", f.line)
            } else {
                format!("`{path}`")
            };
            return Err(Error::LintBlocked(format!(
                "{what} holds what looks like a secret ({}: {}); nothing was recorded: {}",
                f.rule,
                f.preview,
                tao_secrets::BY_NAME_ADVICE
            )));
        }
    }
    Ok(())
}

/// Mint an id, bind storage and create the record, minting again if the
/// id is taken (a no-clobber create: two processes never share an id).
pub(super) fn create_with_fresh_id(
    store: &Store,
    request: Map<String, Value>,
    parent: Option<(&str, u64)>,
) -> Result<JobLine> {
    refuse_literal_secrets(&request)?;
    let now = tao_core::time::now_rfc3339();
    for _ in 0..16 {
        let id = mint_id()?;
        if store.exists(&id) {
            continue;
        }
        let record = assemble(&id, &request, parent, &now);
        match store.create(&record) {
            Ok(()) => return Ok(record.into_job_line()),
            Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::AlreadyExists => {
                continue
            }
            Err(e) => return Err(e),
        }
    }
    Err(Error::TempFail(
        "could not mint an unused record id after 16 tries; try again".into(),
    ))
}

pub(super) fn assemble(
    id: &str,
    request: &Map<String, Value>,
    parent: Option<(&str, u64)>,
    now: &str,
) -> Record {
    let mut f = Map::new();
    f.insert("id".into(), json!(id));
    // Canonical order first (a retry's request arrives in another order),
    // then anything else the parent carried.
    for k in REQUEST_FIELDS {
        if let Some(v) = request.get(*k) {
            f.insert((*k).to_string(), v.clone());
        }
    }
    for (k, v) in request {
        if k != "attempt" && !f.contains_key(k) {
            f.insert(k.clone(), v.clone());
        }
    }
    bind_storage(&mut f, id);
    let attempt = match parent {
        Some((p, a)) => {
            f.insert("retry_of".into(), json!(p));
            a
        }
        None => request.get("attempt").and_then(Value::as_u64).unwrap_or(1),
    };
    f.insert("attempt".into(), json!(attempt));
    f.insert("state".into(), json!(State::Pending.as_str()));
    f.insert("observed_at".into(), json!(now));
    f.insert("observed_by".into(), json!(TOOL));
    let mut r = Record::from_map(f);
    let msg = match parent {
        Some((p, a)) => format!("opened as attempt {a}, retry of {p}"),
        None => "opened".to_string(),
    };
    push_history(&mut r, now, State::Pending, TOOL, Some(&msg));
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_have_the_documented_shape() {
        let mut seen = std::collections::HashSet::new();
        for _ in 0..200 {
            let id = mint_id().unwrap();
            assert!(tao_core::id::is_valid(&id));
            let parts: Vec<&str> = id.split('-').collect();
            assert_eq!(parts.len(), 3, "{id}");
            assert_eq!(parts[0], "tao");
            assert_eq!(parts[1].len(), 8);
            assert!(parts[1].bytes().all(|b| b.is_ascii_digit()));
            assert_eq!(parts[2].len(), 6);
            assert!(parts[2]
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()));
            seen.insert(id);
        }
        assert!(seen.len() > 190, "ids repeat too often");
    }
}
