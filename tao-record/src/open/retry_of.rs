//! `tao-record open --retry-of ID`: the next attempt of a failed record,
//! with the parent's request, new id and directories, both records linked
//! and the blamed node excluded.

use serde_json::{json, Map, Value};
use tao_core::{Error, JobLine, Result, State};

use super::args::{usage, OpenArgs, DEFAULT_TIER};
use super::create::{assemble, mint_id, REQUEST_FIELDS};
use crate::store::Store;
use crate::validate;

/// The request fields (`create::REQUEST_FIELDS`) `--retry-of` does not
/// copy from the parent as they are: `storage`, whose directories are bound
/// to the new id (only its `tier` and `base_dir` are carried).
const NOT_COPIED: &[&str] = &["storage"];

/// Replace the directory `old` by `new` in every string inside `v` where it
/// appears as a whole path prefix (followed by `/`, `:`, a quote, space or
/// the end), so `/base/results/tao-x` never matches `/base/results/tao-xy`.
pub fn rebase(v: &mut Value, old: &str, new: &str) {
    match v {
        Value::String(s) => {
            let mut out = String::with_capacity(s.len());
            let mut rest = s.as_str();
            while let Some(i) = rest.find(old) {
                let after = &rest[i + old.len()..];
                let whole = after.chars().next().is_none_or(|c| {
                    matches!(
                        c,
                        '/' | ':' | '\'' | '"' | ' ' | ',' | ';' | '\n' | '\t' | '}'
                    )
                });
                out.push_str(&rest[..i]);
                out.push_str(if whole { new } else { old });
                rest = after;
            }
            out.push_str(rest);
            *s = out;
        }
        Value::Array(a) => a.iter_mut().for_each(|x| rebase(x, old, new)),
        Value::Object(m) => m.values_mut().for_each(|x| rebase(x, old, new)),
        _ => {}
    }
}

/// Flags that describe a request; `--retry-of` carries the parent's and
/// refuses them (only `--exclude` adds to it).
pub(super) fn request_flags_given(a: &OpenArgs) -> Vec<&'static str> {
    let mut v = Vec::new();
    let mut chk = |given: bool, name: &'static str| {
        if given {
            v.push(name)
        }
    };
    chk(a.platform != "slurm", "--platform");
    chk(a.action.is_some(), "--action");
    chk(a.network_arch.is_some(), "--network-arch");
    chk(a.image.is_some(), "--image");
    chk(a.runtime.is_some(), "--runtime");
    chk(a.command.is_some(), "--command");
    chk(a.nodes.is_some(), "--nodes");
    chk(a.gpus_per_node.is_some(), "--gpus-per-node");
    chk(a.cpus_per_task.is_some(), "--cpus-per-task");
    chk(a.time.is_some(), "--time");
    chk(a.child_timeout.is_some(), "--child-timeout");
    chk(a.partition.is_some(), "--partition");
    chk(a.account.is_some(), "--account");
    chk(a.exclusive, "--exclusive");
    chk(a.no_requeue, "--no-requeue");
    chk(a.mem.is_some(), "--mem");
    chk(a.storage_tier.is_some(), "--storage-tier");
    chk(a.results_root.is_some(), "--results-root");
    chk(a.spec.is_some(), "--spec");
    chk(!a.mounts.is_empty(), "--mount");
    chk(!a.env.is_empty(), "--env");
    chk(!a.secrets.is_empty(), "--secret");
    chk(a.execution.is_some(), "--execution");
    chk(!a.supporting_files.is_empty(), "--supporting-file");
    chk(a.attempt.is_some(), "--attempt");
    v
}

/// `open --retry-of PARENT`: see the module docs. Under the parent's lock:
/// check it is ERROR or CANCELED and not already retried, name the new id
/// in the parent (`retried_by`), write it, then create the new record. A
/// crash between the two leaves a parent naming a record that does not
/// exist; the next retry sees that and proceeds.
pub(super) fn open_retry(store: &Store, args: &OpenArgs, parent_id: &str) -> Result<JobLine> {
    let given = request_flags_given(args);
    if !given.is_empty() {
        return Err(usage(
            given[0],
            "cannot be combined with --retry-of: a retry carries its parent's request (only --exclude may be added); open a fresh record to change it",
        ));
    }
    tao_core::id::validate(parent_id).map_err(|e| usage("--retry-of", e))?;
    let extra_exclude =
        validate::exclude_nodes(&args.exclude).map_err(|e| usage("--exclude", e))?;
    let now = tao_core::time::now_rfc3339();
    let child = store.update_then(
        parent_id,
        |p| {
            let state = p.state().unwrap_or(State::Unknown);
            if !matches!(state, State::Error | State::Canceled) {
                return Err(Error::Data(format!(
                    "record {parent_id:?} is {state}; only ERROR or CANCELED records can be retried{}",
                    if state.is_live() { " (wait for it to end, or cancel it)" } else { "" }
                )));
            }
            if let Some(by) = store.existing_retry(p.fields.get("retried_by")) {
                return Err(Error::Data(format!(
                    "record {parent_id:?} was already retried by {by:?}; retry {by:?} instead if it failed too"
                )));
            }
            let mut request = Map::new();
            for k in REQUEST_FIELDS.iter().filter(|k| !NOT_COPIED.contains(k)) {
                if let Some(v) = p.fields.get(*k) {
                    request.insert((*k).to_string(), v.clone());
                }
            }
            let st = p.fields.get("storage").cloned().unwrap_or(Value::Null);
            request.insert(
                "storage".into(),
                json!({"tier": st.get("tier").cloned().unwrap_or(json!(DEFAULT_TIER)),
                       "base_dir": st.get("base_dir").cloned().unwrap_or(Value::Null)}),
            );
            // Only a node the classification blames: an infra fault (or a
            // classification without a class). A program fault that names
            // the node it ran on does not make the node bad.
            let blamed = p
                .fields
                .get("classification")
                .filter(|c| matches!(c.get("class").and_then(Value::as_str), None | Some("infra")))
                .and_then(|c| c.get("node"))
                .and_then(Value::as_str)
                .map(str::to_string);
            let res = request.entry("resources").or_insert_with(|| json!({}));
            if let Value::Object(res) = res {
                let ex = res.entry("exclude").or_insert_with(|| json!([]));
                if !ex.is_array() {
                    *ex = json!([]);
                }
                let arr = ex.as_array_mut().expect("array");
                for n in blamed.iter().chain(extra_exclude.iter()) {
                    if validate::slurm_names(n, false, "node name").is_ok() && !arr.iter().any(|x| x == n) {
                        arr.push(json!(n));
                    }
                }
            }
            let attempt = p.fields.get("attempt").and_then(Value::as_u64).unwrap_or(1) + 1;
            let mut id = mint_id()?;
            let mut tries = 0;
            while store.exists(&id) {
                tries += 1;
                if tries > 16 {
                    return Err(Error::TempFail("could not mint an unused record id; try again".into()));
                }
                id = mint_id()?;
            }
            // Rebase writable paths that name the parent's directories
            // (command, env, mounts, execution; never the spec, whose text
            // is checksummed input and may point at a checkpoint to resume).
            for key in ["job_dir", "results_dir"] {
                let old = st.get(key).and_then(Value::as_str).filter(|s| !s.is_empty());
                let base = st.get("base_dir").and_then(Value::as_str).unwrap_or("");
                if let Some(old) = old {
                    let sub = if key == "job_dir" { "jobs" } else { "results" };
                    let new = format!("{base}/{sub}/{id}");
                    for k in ["command", "env", "mounts", "execution"] {
                        if let Some(v) = request.get_mut(k) {
                            rebase(v, old, &new);
                        }
                    }
                }
            }
            let record = assemble(&id, &request, Some((parent_id, attempt)), &now);
            p.fields.insert("retried_by".into(), json!(id));
            Ok(record)
        },
        |record| store.create(record),
    )?;
    Ok(child.into_job_line())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn rebase_replaces_whole_path_prefixes_only() {
        let mut v = json!({"a": "cp /b/results/tao-x/ckpt /b/results/tao-xy/z", "m": ["/b/results/tao-x:/out"], "n": 3});
        rebase(&mut v, "/b/results/tao-x", "/b/results/tao-y");
        assert_eq!(
            v,
            json!({"a": "cp /b/results/tao-y/ckpt /b/results/tao-xy/z", "m": ["/b/results/tao-y:/out"], "n": 3})
        );
    }
}
