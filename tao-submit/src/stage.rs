//! Staging a job on shared storage before sbatch: the job directory layout
//! of docs/CONTRACT.md, the spec, `meta/job.json`, the approved script, the
//! checksum-closed supporting files and the secrets sidecar.
//!
//! [`Plan::from_line`] checks everything that can be checked on the launch
//! host (paths, checksums, secret variables present) before any byte goes
//! to the cluster, so a bad line stages nothing. [`Plan::staging_script`]
//! then writes each file into a temporary name and renames it into place,
//! so a reader never sees half a file, in the same remote script as sbatch.
//!
//! Secrets: values are read from this process's environment and written
//! only to the script's stdin, read by `umask 077; cat > env/secrets.env`; the
//! file's mode is read back and must be 600. A value is never in a command
//! line, an error message or the output.

use std::path::{Component, Path};

use serde_json::{json, Value};
use tao_core::model::Layout;
use tao_core::{shell, Error, JobLine, Result};

/// A supporting file, read and verified on the launch host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Helper {
    /// Relative path inside the bundle (`train.py`, `pkg/util.py`).
    pub source: String,
    /// The file's bytes.
    pub bytes: Vec<u8>,
    /// Hex SHA-256 of `bytes`.
    pub sha256: String,
}

/// Everything needed to stage and submit one job line.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Record id (also the Slurm job name).
    pub id: String,
    /// `storage.job_dir` (absolute, on shared storage).
    pub job_dir: String,
    /// `storage.results_dir` (absolute, on shared storage).
    pub results_dir: String,
    /// `spec.name` and `spec.text`, when the line has a spec.
    pub spec: Option<(String, String)>,
    /// `meta/job.json`: the line without `script.text`, pretty-printed.
    pub meta: String,
    /// The approved script text.
    pub script: String,
    /// Supporting files, sorted by source.
    pub helpers: Vec<Helper>,
    /// Names of secret variables to put in the sidecar.
    pub secrets: Vec<String>,
    /// Node names from `resources.exclude` (host ranges expanded).
    pub exclude: Vec<String>,
    /// Whether the line excluded any node: sbatch then gets
    /// `--exclude=<checked list>` (possibly empty), which overrides the
    /// script's own `#SBATCH --exclude` when unknown names were dropped.
    pub exclude_given: bool,
    /// Further sbatch options set by tao-submit itself (the dependency on
    /// an image conversion job).
    pub extra_args: Vec<String>,
    /// Slurm job ids that already carried this job name before this
    /// submit (an image conversion's name is the same for every conversion
    /// of that image): never adopted when an ambiguous submit is
    /// reconciled by name, and never counted as duplicates of it.
    pub known_ids: Vec<String>,
}

fn line_err(line: &JobLine, msg: String) -> Error {
    Error::BadLine {
        line: line.line_no,
        message: msg,
    }
}

/// Whether `p` is an absolute path with no `.`/`..` components, no
/// control characters (so it can be named in messages and scripts).
fn is_clean_abs(p: &str) -> bool {
    p.starts_with('/')
        && !p.chars().any(char::is_control)
        && Path::new(p)
            .components()
            .all(|c| matches!(c, Component::RootDir | Component::Normal(_)))
}

/// Whether `s` is a relative path of plain components (no `..`, no `.`,
/// no leading `/`, no control characters, no empty component).
pub fn is_clean_relative(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with('/')
        && !s.chars().any(char::is_control)
        && s.split('/').all(|c| !c.is_empty() && c != "." && c != "..")
}

/// The redactors of tao-submit's own lint (one per process; see
/// `tao_secrets::LineRedactors`).
fn relint_redactors() -> &'static tao_secrets::LineRedactors {
    static R: std::sync::OnceLock<tao_secrets::LineRedactors> = std::sync::OnceLock::new();
    // An unset secret of the job is the one error of Plan::from_line.
    R.get_or_init(|| tao_secrets::LineRedactors::new("tao-submit").without_job_unset_warnings())
}

impl Plan {
    /// Build the plan of one line, checking it on the launch host:
    /// `id`, `storage.job_dir` (= `<storage.base_dir>/jobs/<id>` when the
    /// base is given), `storage.results_dir`, `script.text` and the lint
    /// gate (`lint.ok == true`, `lint.sha256 == sha256(script.text)`),
    /// `spec` (plain file name, sha256), `execution.supporting_files`
    /// (relative source, readable `local_path`, size and sha256 equal),
    /// `secrets` (valid names, each set in this environment).
    ///
    /// Errors: [`Error::BadLine`] naming the field and the fix;
    /// [`Error::LintBlocked`] for the lint gate.
    pub fn from_line(line: &JobLine) -> Result<Plan> {
        let id = line.require_str(&["id"])?.to_string();
        tao_core::id::validate(&id)?;
        let job_dir = line.require_str(&["storage", "job_dir"])?.to_string();
        let results_dir = line.require_str(&["storage", "results_dir"])?.to_string();
        for (field, p) in [
            ("storage.job_dir", &job_dir),
            ("storage.results_dir", &results_dir),
        ] {
            if !is_clean_abs(p) {
                return Err(line_err(
                    line,
                    format!("`{field}` {p:?} must be an absolute path without `.`/`..`; pipe lines from `tao-record open`"),
                ));
            }
        }
        if let Some(base) = line.get_str(&["storage", "base_dir"]) {
            let want = tao_core::model::Layout::job_dir(base, &id);
            if job_dir != want {
                return Err(line_err(
                    line,
                    format!("`storage.job_dir` {job_dir:?} is not {want:?}; pipe lines from `tao-record open`"),
                ));
            }
        }

        // The lint gate: no lint, no launch.
        let script = line.require_str(&["script", "text"])?.to_string();
        let digest = tao_core::sha256_hex(script.as_bytes());
        if line.get_path(&["lint"]).is_none_or(Value::is_null) {
            // No stamp at all: the lint stage was skipped, the record is
            // fine (a missing stage, not a refused request: the same record
            // goes through once its line passes tao-redact lint).
            return Err(Error::MissingStage {
                line: line.line_no,
                message: format!(
                    "job {id:?} has no lint stamp (`lint`); {}",
                    tao_core::jobline::stage_writing(&["lint"])
                ),
            });
        }
        if line.get_path(&["lint", "ok"]) != Some(&Value::Bool(true)) {
            return Err(Error::LintBlocked(format!(
                "line {}: job {id:?} has no passing lint (`lint.ok` is not true); pipe it through `tao-redact lint` and fix its findings",
                line.line_no
            )));
        }
        if line.get_str(&["lint", "sha256"]) != Some(digest.as_str()) {
            return Err(Error::LintBlocked(format!(
                "line {}: job {id:?}: the script's sha256 {digest} is not the one `tao-redact lint` approved (`lint.sha256`); render and lint it again",
                line.line_no
            )));
        }
        // Never trust the stamp: the same gate again, here, before any
        // connection (a stamp is one `jq` away from `ok: true`).
        let relint = tao_secrets::lint_job(line, relint_redactors())?;
        if let Some(f) = relint.findings.first() {
            let at = match &f.step {
                Some(_) => String::new(),
                None => format!("script line {}, column {}: ", f.line, f.column),
            };
            return Err(Error::LintBlocked(format!(
                "line {}: job {id:?}: tao-submit's own lint blocked the script ({} finding(s)), whatever its `lint` stamp says: {at}{}: {}; fix the job line, render and lint it again",
                line.line_no,
                relint.findings.len(),
                f.rule,
                f.preview
            )));
        }
        // The script belongs to this record (its id and job directory).
        tao_script::check_binding(&script, &id, &job_dir).map_err(|m| {
            line_err(
                line,
                format!("{m} (job {id:?}, storage.job_dir {job_dir:?}); render this record's line again with tao-render"),
            )
        })?;
        if let Some(s) = line.get_str(&["script", "sha256"]) {
            if s != digest {
                return Err(line_err(
                    line,
                    format!("`script.sha256` does not match `script.text` of job {id:?}; render it again"),
                ));
            }
        }

        let spec = match line.get_path(&["spec"]) {
            None | Some(Value::Null) => None,
            Some(_) => {
                let name = line.require_str(&["spec", "name"])?.to_string();
                let text = line.require_str(&["spec", "text"])?.to_string();
                if !is_clean_relative(&name) || name.contains('/') || name.starts_with('.') {
                    return Err(line_err(
                        line,
                        format!("`spec.name` {name:?} must be a plain file name; reopen with --spec FILE"),
                    ));
                }
                if let Some(want) = line.get_str(&["spec", "sha256"]) {
                    if want != tao_core::sha256_hex(text.as_bytes()) {
                        return Err(line_err(
                            line,
                            "`spec.sha256` does not match `spec.text`; reopen the record with --spec FILE".into(),
                        ));
                    }
                }
                Some((name, text))
            }
        };

        let mut helpers = Vec::new();
        if let Some(files) = line.get_path(&["execution", "supporting_files"]) {
            let files = files.as_array().ok_or_else(|| {
                line_err(line, "`execution.supporting_files` must be an array".into())
            })?;
            for f in files {
                helpers.push(read_helper(line, f)?);
            }
            helpers.sort_by(|a, b| a.source.cmp(&b.source));
            if helpers.windows(2).any(|w| w[0].source == w[1].source) {
                return Err(line_err(
                    line,
                    "`execution.supporting_files` names one source twice".into(),
                ));
            }
        }

        let mut secrets = Vec::new();
        if let Some(v) = line.get_path(&["secrets"]).filter(|v| !v.is_null()) {
            let arr = v.as_array().ok_or_else(|| {
                line_err(line, "`secrets` must be an array of variable names".into())
            })?;
            for s in arr {
                let name = s.as_str().ok_or_else(|| {
                    line_err(
                        line,
                        format!("`secrets` holds {s}, which is not a variable name"),
                    )
                })?;
                // The one secret-name rule (tao-core): a variable name that
                // is not reserved (PATH, BASH_ENV, tao_* ... could redirect
                // the script that sources the sidecar).
                tao_core::request::secret_name(name).map_err(|e| line_err(line, e))?;
                match std::env::var_os(name) {
                    Some(v) if !v.is_empty() => {}
                    // The line is well formed; this environment lacks the
                    // value: a configuration error of this line (exit 78
                    // when every line fails so, else 1: Counts::status).
                    _ => {
                        return Err(Error::Config(format!(
                            "line {}: secret {name} (named by the record) is not set in this environment: export {name}=... where tao-submit runs (for cron: in ~/.config/tao-slurm/env), then submit the record: {}",
                            line.line_no,
                            tao_core::jobline::resubmit_pipeline(&id)
                        )))
                    }
                }
                if !secrets.iter().any(|x| x == name) {
                    secrets.push(name.to_string());
                }
            }
        }

        let mut exclude = Vec::new();
        if let Some(v) = line
            .get_path(&["resources", "exclude"])
            .filter(|v| !v.is_null())
        {
            let arr = v.as_array().ok_or_else(|| {
                line_err(
                    line,
                    "`resources.exclude` must be an array of node names".into(),
                )
            })?;
            for n in arr {
                let n = n.as_str().ok_or_else(|| {
                    line_err(line, "`resources.exclude` must hold strings".into())
                })?;
                let names = crate::sched::expand_hostlist(n)
                    .map_err(|e| line_err(line, format!("`resources.exclude`: {e}")))?;
                if exclude.len() + names.len() > tao_core::hostlist::MAX_NAMES {
                    return Err(line_err(
                        line,
                        format!(
                            "`resources.exclude`: {}",
                            tao_core::hostlist::HostlistError::TooManyNames {
                                limit: tao_core::hostlist::MAX_NAMES
                            }
                        ),
                    ));
                }
                exclude.extend(names);
            }
        }

        let exclude_given = !exclude.is_empty();
        let mut meta = line.fields.clone();
        if let Some(Value::Object(s)) = meta.get_mut("script") {
            s.shift_remove("text");
        }
        let meta = serde_json::to_string_pretty(&meta).expect("a JSON map serialises") + "\n";

        Ok(Plan {
            id,
            job_dir,
            results_dir,
            spec,
            meta,
            script,
            helpers,
            secrets,
            exclude,
            exclude_given,
            extra_args: Vec::new(),
            known_ids: Vec::new(),
        })
    }

    /// The sbatch script's path: `<job_dir>/sbatch/job_<id>.sbatch`.
    pub fn script_path(&self) -> String {
        tao_core::model::Layout::new(&self.id, &self.job_dir).sbatch_file()
    }

    /// The log directory of Slurm job `job_id`: `<job_dir>/slurm-logs/<id>-<job_id>`.
    pub fn log_dir(&self, job_id: &str) -> String {
        tao_core::model::Layout::new(&self.id, &self.job_dir).log_dir(job_id)
    }

    /// The manifest of the supporting files (JSON, one object per file
    /// sorted by source: source, destination, sha256, size), or `None`
    /// without supporting files. Deterministic, so a byte comparison tells
    /// "same bundle" from "different bundle".
    pub fn manifest(&self) -> Option<String> {
        if self.helpers.is_empty() {
            return None;
        }
        let files: Vec<Value> = self
            .helpers
            .iter()
            .map(|h| {
                json!({
                    "source": h.source,
                    "destination": format!("{}/{}", tao_core::model::Layout::new(&self.id, &self.job_dir).action_helpers_dir(), h.source),
                    "sha256": h.sha256,
                    "size": h.bytes.len(),
                })
            })
            .collect();
        Some(serde_json::to_string_pretty(&json!({ "files": files })).expect("json") + "\n")
    }
}

/// Marker printed when staging went through.
pub const STAGED: &str = "@@tao-staged";
/// Marker printed when a different bundle is already staged.
pub const BUNDLE_DIFFERS: &str = "@@tao-bundle-differs";
/// Marker printed (with the mode) when the sidecar is not mode 600.
pub const SIDECAR_MODE: &str = "@@tao-sidecar-mode ";

impl Plan {
    /// The whole staging as one POSIX shell script, run before sbatch in
    /// the same remote script: directories, then each file (spec, meta,
    /// sbatch script, supporting files) written from an embedded base64
    /// word ([`tao_ssh::script::embed`]) to a temporary name and renamed,
    /// so a reader never sees half a file; the supporting-file manifest
    /// compared with `cmp` (a different bundle prints [`BUNDLE_DIFFERS`] and
    /// stops, nothing overwritten); the secrets sidecar written from the
    /// script's stdin under `umask 077` and its mode checked (otherwise
    /// removed, [`SIDECAR_MODE`] printed). Ends by printing [`STAGED`] and
    /// `set +e`.
    ///
    /// One path for every size: the script travels on the stdin of `sh -s`
    /// (tao-ssh), never in an exec request or an argument, so a 5 MiB
    /// supporting file goes the same way as a 1 KB spec.
    pub fn staging_script(&self) -> String {
        let q = shell::quote;
        let put = |dest: String, bytes: &[u8]| {
            format!("{} | tao_put {dest}\n", tao_ssh::script::embed(bytes))
        };
        let dirs: Vec<String> = Layout::SUBDIRS
            .iter()
            .map(|sub| format!("\"$d/{sub}\""))
            .collect();
        let mut s = format!(
            "set -e; d={d}; mkdir -p -- {dirs} {r}; chmod 700 -- \"$d/{env}\"\n\
             tao_put() {{ tao_t=\"$1.tao-tmp.$$\"; cat > \"$tao_t\"; mv -f -- \"$tao_t\" \"$1\"; }}\n",
            d = q(&self.job_dir),
            dirs = dirs.join(" "),
            env = Layout::ENV,
            r = q(&self.results_dir)
        );
        if let Some((name, text)) = &self.spec {
            s.push_str(&put(
                format!("\"$d/{}/\"{}", Layout::SPECS, q(name)),
                text.as_bytes(),
            ));
        }
        s.push_str(&put(
            format!("\"$d/{}\"", Layout::META),
            self.meta.as_bytes(),
        ));
        s.push_str(&put(
            format!(
                "\"$d/{}/\"{}",
                Layout::SBATCH,
                q(&format!("job_{}.sbatch", self.id))
            ),
            self.script.as_bytes(),
        ));
        if let Some(manifest) = self.manifest() {
            s.push_str(&format!(
                "m=\"$d/inputs/manifest.json\"\nif [ -f \"$m\" ]; then if ! {} | cmp -s - \"$m\"; then echo '{BUNDLE_DIFFERS}'; exit 0; fi; else\n",
                tao_ssh::script::embed(manifest.as_bytes())
            ));
            for h in &self.helpers {
                let rel = q(&h.source);
                s.push_str(&format!(
                    "mkdir -p -- \"$(dirname -- \"$d/{}/\"{rel})\"\n",
                    Layout::ACTION_HELPERS
                ));
                s.push_str(&put(
                    format!("\"$d/{}/\"{rel}", Layout::ACTION_HELPERS),
                    &h.bytes,
                ));
            }
            // The manifest last: its presence means the bundle is complete.
            s.push_str(&put("\"$m\"".into(), manifest.as_bytes()));
            s.push_str("fi\n");
        }
        if !self.secrets.is_empty() {
            s.push_str(&format!(
                "f=\"$d/{secrets}\"; (umask 077; tao_t=\"$f.tao-tmp.$$\"; cat > \"$tao_t\"; mv -f -- \"$tao_t\" \"$f\")\n\
                 tao_mode=$(stat -c %a -- \"$f\"); if [ \"$tao_mode\" != 600 ]; then rm -f -- \"$f\"; echo \"{SIDECAR_MODE}$tao_mode\"; exit 0; fi\n",
                secrets = Layout::SECRETS
            ));
        }
        s.push_str(&format!("echo '{STAGED}'; set +e\n"));
        s
    }

    /// The sidecar's content (`export NAME='value'` lines) read from this
    /// environment now, or `None` without secrets. The value never leaves
    /// this process except over the channel's stdin.
    ///
    /// Errors: [`Error::Config`] when a variable disappeared since planning.
    pub fn secrets_body(&self) -> Result<Option<Vec<u8>>> {
        if self.secrets.is_empty() {
            return Ok(None);
        }
        let mut body = String::new();
        for name in &self.secrets {
            let value = std::env::var(name).map_err(|_| {
                Error::Config(format!(
                    "secret {name:?} is no longer set in this environment"
                ))
            })?;
            body.push_str(&format!("export {name}={}\n", shell::quote(&value)));
        }
        Ok(Some(body.into_bytes()))
    }
}

/// Read and verify one `execution.supporting_files` entry.
fn read_helper(line: &JobLine, f: &Value) -> Result<Helper> {
    let get = |k: &str| f.get(k).and_then(Value::as_str);
    let source = get("source").ok_or_else(|| {
        line_err(
            line,
            "a supporting file has no `source`; reopen with --supporting-file PATH".into(),
        )
    })?;
    if !is_clean_relative(source) {
        return Err(line_err(
            line,
            format!(
                "supporting file source {source:?} must be relative, without `..` or a leading `/`"
            ),
        ));
    }
    let local = get("local_path").ok_or_else(|| {
        line_err(line, format!("supporting file {source:?} has no `local_path`; reopen with --supporting-file PATH"))
    })?;
    let want = get("sha256")
        .ok_or_else(|| line_err(line, format!("supporting file {source:?} has no `sha256`")))?;
    // The line is well formed; the file on this host is not the one the
    // record approved: a gate refusal of this line (exit 1, the other
    // lines go on, as for the lint gate), not a malformed line (65).
    let gate = |msg: String| Error::Data(format!("line {}: {msg}", line.line_no));
    let bytes = std::fs::read(local).map_err(|e| {
        gate(format!(
            "supporting file {source:?}: cannot read {local:?}: {e}; restore it or open a new record"
        ))
    })?;
    let got = tao_core::sha256_hex(&bytes);
    if got != want {
        return Err(gate(format!("supporting file {local:?} changed since the record was opened (sha256 {got}, recorded {want}); open a new record")));
    }
    if let Some(size) = f.get("size").and_then(Value::as_u64) {
        if size != bytes.len() as u64 {
            return Err(gate(format!(
                "supporting file {local:?} is {} bytes, recorded {size}; open a new record",
                bytes.len()
            )));
        }
    }
    Ok(Helper {
        source: source.to_string(),
        bytes,
        sha256: got,
    })
}

/// A script with the binding lines of record `id` (tests only).
#[cfg(test)]
pub(crate) fn bound_script(id: &str, job_dir: &str, body: &str) -> String {
    format!(
        "#!/bin/bash\n#SBATCH --job-name={id}\ntao_job_id={}\ntao_secrets={}\n{body}\n",
        tao_core::shell::quote(id),
        tao_core::shell::quote(&tao_core::shell::sidecar_path(job_dir))
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stamped(script: &str, extra: Value) -> JobLine {
        let mut l = line(extra);
        l.set_path(&["script", "text"], json!(script));
        l.set_path(
            &["script", "sha256"],
            json!(tao_core::sha256_hex(script.as_bytes())),
        );
        // What `jq '.lint = {ok: true, sha256: .script.sha256}'` forges.
        l.set_path(
            &["lint"],
            json!({"ok": true, "sha256": tao_core::sha256_hex(script.as_bytes())}),
        );
        l
    }

    /// Issue 16: a jq-forged stamp on a script with a literal token got
    /// past the gate; tao-submit lints the script itself now.
    #[test]
    fn a_forged_lint_stamp_does_not_pass() {
        let tok = "hf_FAKEtaoRedactTestTokenQwErTyUiOpAs";
        let script = bound_script(
            "tao-x1",
            "/b/jobs/tao-x1",
            &format!("export HF_TOKEN={tok}"),
        );
        let e = Plan::from_line(&stamped(&script, json!({}))).unwrap_err();
        assert_eq!(e.code(), tao_core::exit::LINT_BLOCKED, "{e}");
        assert!(e.to_string().contains("huggingface-token"), "{e}");
        assert!(!e.to_string().contains(tok), "{e}");
        // xtrace on a job with secrets, and a syntax error, likewise.
        let script = bound_script("tao-x1", "/b/jobs/tao-x1", "echo hi");
        let e = Plan::from_line(&stamped(
            &script,
            json!({"command": "set -x; train", "secrets": ["HF_TOKEN"]}),
        ))
        .unwrap_err();
        assert_eq!(e.code(), tao_core::exit::LINT_BLOCKED, "{e}");
        assert!(e.to_string().contains("xtrace"), "{e}");
        let script = bound_script("tao-x1", "/b/jobs/tao-x1", "if true; then");
        let e = Plan::from_line(&stamped(&script, json!({}))).unwrap_err();
        assert!(e.to_string().contains("syntax"), "{e}");
    }

    /// Issue 16: a script rendered for another record (here: reading
    /// another job's secrets sidecar) is refused.
    #[test]
    fn a_script_of_another_record_is_refused() {
        let script = bound_script("tao-x2", "/b/jobs/tao-x2", "echo hi");
        let e = Plan::from_line(&stamped(&script, json!({}))).unwrap_err();
        assert!(e.to_string().contains("rendered for another record"), "{e}");
        let script = bound_script("tao-x1", "/b/jobs/tao-x2", "echo hi");
        let e = Plan::from_line(&stamped(&script, json!({}))).unwrap_err();
        assert!(e.to_string().contains("tao_secrets="), "{e}");
        let script = "#!/bin/bash\necho hi\n";
        assert!(Plan::from_line(&stamped(script, json!({}))).is_err());
    }

    fn line(extra: Value) -> JobLine {
        let script = &bound_script("tao-x1", "/b/jobs/tao-x1", "echo hi");
        let mut v = json!({
            "id": "tao-x1",
            "storage": {"base_dir": "/b", "job_dir": "/b/jobs/tao-x1", "results_dir": "/b/results/tao-x1"},
            "script": {"template": "single", "sha256": tao_core::sha256_hex(script.as_bytes()), "text": script},
            "lint": {"ok": true, "sha256": tao_core::sha256_hex(script.as_bytes()), "findings": []},
        });
        if let (Value::Object(m), Value::Object(e)) = (&mut v, extra) {
            for (k, x) in e {
                m.insert(k, x);
            }
        }
        JobLine::parse(&v.to_string(), 7).unwrap()
    }

    #[test]
    fn a_good_line_plans() {
        let p = Plan::from_line(&line(
            json!({"spec": {"name": "spec.yaml", "text": "a: 1\n"}}),
        ))
        .unwrap();
        assert_eq!(p.script_path(), "/b/jobs/tao-x1/sbatch/job_tao-x1.sbatch");
        assert_eq!(p.log_dir("55"), "/b/jobs/tao-x1/slurm-logs/tao-x1-55");
        assert!(!p.meta.contains("echo hi"), "meta has no script text");
        assert!(p.meta.contains("\"sha256\""));
        assert_eq!(p.manifest(), None);
    }

    #[test]
    fn lint_gate() {
        let mut l = line(json!({}));
        l.set_path(&["lint", "sha256"], json!("0".repeat(64)));
        let e = Plan::from_line(&l).unwrap_err();
        assert_eq!(e.code(), tao_core::exit::LINT_BLOCKED);
        assert!(e.to_string().contains("tao-redact lint"), "{e}");
        let mut l = line(json!({}));
        l.set_path(&["lint", "ok"], json!(false));
        assert_eq!(
            Plan::from_line(&l).unwrap_err().code(),
            tao_core::exit::LINT_BLOCKED
        );
        // No stamp: the lint stage was skipped (the record is fine).
        let mut l = line(json!({}));
        l.fields.shift_remove("lint");
        let e = Plan::from_line(&l).unwrap_err();
        assert_eq!(e.kind(), "missing_stage", "{e}");
        assert!(
            e.to_string().contains("has no lint stamp (`lint`); it is written by tao-redact lint: pipe the lines through `tao-redact lint` first"),
            "{e}"
        );
    }

    #[test]
    fn paths_are_checked() {
        for (k, v) in [
            ("job_dir", "/b/jobs/other"),
            ("job_dir", "relative"),
            ("results_dir", "/b/results/../x"),
        ] {
            let mut l = line(json!({}));
            l.set_path(&["storage", k], json!(v));
            let e = Plan::from_line(&l).unwrap_err();
            assert!(e.to_string().starts_with("line 7:"), "{e}");
        }
        let l = line(json!({"spec": {"name": "../x", "text": ""}}));
        assert!(Plan::from_line(&l).is_err());
    }

    #[test]
    fn supporting_files_are_verified() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("train.py");
        std::fs::write(&f, "print(1)\n").unwrap();
        let sha = tao_core::sha256_hex(b"print(1)\n");
        let ok = json!({"execution": {"supporting_files": [
            {"source": "train.py", "local_path": f, "sha256": sha, "size": 9}]}});
        let p = Plan::from_line(&line(ok)).unwrap();
        let m = p.manifest().unwrap();
        assert!(
            m.contains("/b/jobs/tao-x1/inputs/action-helpers/train.py"),
            "{m}"
        );
        assert_eq!(p.manifest().unwrap(), m, "deterministic");
        for bad in [
            json!({"source": "../train.py", "local_path": f, "sha256": sha}),
            json!({"source": "/abs", "local_path": f, "sha256": sha}),
            json!({"source": "train.py", "local_path": f, "sha256": "0".repeat(64)}),
            json!({"source": "train.py", "local_path": f, "sha256": sha, "size": 10}),
            json!({"source": "train.py", "local_path": dir.path().join("missing"), "sha256": sha}),
        ] {
            let l = line(json!({"execution": {"supporting_files": [bad.clone()]}}));
            assert!(Plan::from_line(&l).is_err(), "{bad}");
        }
        // A file changed (or gone) on this host since the record was
        // opened: the line is well formed, so the refusal is a gate's
        // (exit 1, the other lines go on), never a bad line (65, stop).
        for changed in [
            json!({"source": "train.py", "local_path": f, "sha256": "0".repeat(64)}),
            json!({"source": "train.py", "local_path": f, "sha256": sha, "size": 10}),
            json!({"source": "train.py", "local_path": dir.path().join("missing"), "sha256": sha}),
        ] {
            let l = line(json!({"execution": {"supporting_files": [changed.clone()]}}));
            let e = Plan::from_line(&l).unwrap_err();
            assert!(!tao_core::filter::is_bad_line(&e), "{changed}: {e:?}");
            assert!(e.to_string().contains("open a new record"), "{e}");
        }
    }

    #[test]
    fn secrets_need_valid_names_and_values() {
        let l = line(json!({"secrets": ["TAO_SUBMIT_UNIT_TEST_SURELY_UNSET"]}));
        let e = Plan::from_line(&l).unwrap_err();
        assert!(
            e.to_string()
                .contains("export TAO_SUBMIT_UNIT_TEST_SURELY_UNSET="),
            "{e}"
        );
        let l = line(json!({"secrets": ["BAD NAME"]}));
        assert!(Plan::from_line(&l).is_err());
        // PATH is set but reserved: a sidecar must never redefine it.
        let e = Plan::from_line(&line(json!({"secrets": ["PATH"]}))).unwrap_err();
        assert!(e.to_string().contains("PATH"), "{e}");
        // A set, unreserved name plans once, however often it is named.
        // (HOME is set in any test run and not reserved.)
        let p = Plan::from_line(&line(json!({"secrets": ["HOME", "HOME"]}))).unwrap();
        assert_eq!(p.secrets, ["HOME"]);
    }

    #[test]
    fn staging_script_runs_in_sh_and_stages_every_file() {
        let dir = tempfile::tempdir().unwrap();
        let helper = dir.path().join("h.bin");
        std::fs::write(&helper, [0u8, 1, 2, 255, b'\'', b'\n']).unwrap();
        let text_helper = dir.path().join("t.py");
        std::fs::write(&text_helper, "print('it''s')\n").unwrap();
        let base = dir.path().join("remote");
        let b = base.display().to_string();
        let script = &*bound_script("tao-x1", &format!("{b}/jobs/tao-x1"), "echo 'q' \"$x\" `y`");
        let sha = tao_core::sha256_hex(script.as_bytes());
        let mut l = line(json!({
            "spec": {"name": "spec.yaml", "text": "a: 'b'\n"},
            "execution": {"supporting_files": [
                {"source": "bin/h.bin", "local_path": helper, "sha256": tao_core::sha256_hex(&std::fs::read(&helper).unwrap())},
                {"source": "t.py", "local_path": text_helper, "sha256": tao_core::sha256_hex(&std::fs::read(&text_helper).unwrap())}]},
        }));
        l.set_path(&["storage", "base_dir"], json!(b));
        l.set_path(&["storage", "job_dir"], json!(format!("{b}/jobs/tao-x1")));
        l.set_path(
            &["storage", "results_dir"],
            json!(format!("{b}/results/tao-x1")),
        );
        l.set_path(&["script", "text"], json!(script));
        l.set_path(&["script", "sha256"], json!(sha));
        l.set_path(&["lint", "sha256"], json!(sha));
        let p = Plan::from_line(&l).unwrap();
        let run = |stdin: &[u8]| {
            let mut c = std::process::Command::new("sh")
                .arg("-c")
                .arg(p.staging_script())
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            use std::io::Write;
            c.stdin.take().unwrap().write_all(stdin).unwrap();
            String::from_utf8(c.wait_with_output().unwrap().stdout).unwrap()
        };
        assert_eq!(run(b""), "@@tao-staged\n");
        let jd = base.join("jobs/tao-x1");
        assert_eq!(
            std::fs::read_to_string(jd.join("sbatch/job_tao-x1.sbatch")).unwrap(),
            script
        );
        assert_eq!(
            std::fs::read_to_string(jd.join("specs/spec.yaml")).unwrap(),
            "a: 'b'\n"
        );
        assert_eq!(
            std::fs::read(jd.join("inputs/action-helpers/bin/h.bin")).unwrap(),
            std::fs::read(&helper).unwrap()
        );
        assert_eq!(
            std::fs::read(jd.join("inputs/action-helpers/t.py")).unwrap(),
            std::fs::read(&text_helper).unwrap()
        );
        assert_eq!(
            std::fs::read_to_string(jd.join("inputs/manifest.json")).unwrap(),
            p.manifest().unwrap()
        );
        assert!(base.join("results/tao-x1").is_dir());
        // Same bundle again: reused. A different manifest: refused, nothing overwritten.
        assert_eq!(run(b""), "@@tao-staged\n");
        std::fs::write(jd.join("inputs/manifest.json"), "other\n").unwrap();
        assert_eq!(run(b""), format!("{BUNDLE_DIFFERS}\n"));
        assert_eq!(
            std::fs::read_to_string(jd.join("inputs/manifest.json")).unwrap(),
            "other\n"
        );
    }

    #[test]
    fn names() {
        assert!(is_clean_relative("a/b.py"));
        for bad in ["", "/a", "a/../b", "./a", "a//b", "a\nb"] {
            assert!(!is_clean_relative(bad), "{bad:?}");
        }
    }
}
