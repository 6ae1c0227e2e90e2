//! The job-level rules, in one place for every tool:
//!
//! - which secret values a tool masks for a job line ([`secret_names`],
//!   [`LineRedactors`]): `HF_TOKEN`, `NGC_KEY` and every name in the line's
//!   own `secrets` field, each read by name from the caller's environment.
//!   tao-poll (evidence, `logs`), tao-classify and `tao-redact lint` build
//!   their redactors here and nowhere else;
//! - the lint gate of a whole job ([`lint_job`]): literal secrets in the
//!   script, xtrace in any step of a job that has secrets (bash would print
//!   every expanded `$SECRET` into the job's logs), and the syntax gate
//!   (`bash -n` on the script and on each step text as the job runs it).
//!   `tao-redact lint` writes its result into the line; tao-submit runs the
//!   same function again and never trusts the stamp it is given.

use std::collections::HashMap;
use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock};

use regex::bytes::Regex;
use serde_json::Value;
use tao_core::{JobLine, Result};

use crate::lint::{Finding, Lint};
use crate::{Redactor, Rule, DEFAULT_SECRET_ENV};

/// Whether `name` is an environment variable name (`[A-Za-z_][A-Za-z0-9_]*`).
pub fn is_var_name(name: &str) -> bool {
    let mut b = name.bytes();
    matches!(b.next(), Some(c) if c.is_ascii_alphabetic() || c == b'_')
        && b.all(|c| c.is_ascii_alphanumeric() || c == b'_')
}

/// The names whose values are masked for `line`: [`DEFAULT_SECRET_ENV`]
/// then the line's `secrets` (an array of variable names; entries that are
/// not variable names are ignored here, tao-record and tao-submit refuse
/// them), without duplicates, in that order.
pub fn secret_names(line: &JobLine) -> Vec<String> {
    let mut names: Vec<String> = DEFAULT_SECRET_ENV.iter().map(|s| s.to_string()).collect();
    if let Some(Value::Array(a)) = line.get_path(&["secrets"]) {
        for n in a.iter().filter_map(Value::as_str) {
            if is_var_name(n) && !names.iter().any(|x| x == n) {
                names.push(n.to_string());
            }
        }
    }
    names
}

/// The names a job line passes to its job as secrets (its `secrets` field
/// only, without the defaults): non-empty means the job has secrets.
pub fn line_secrets(line: &JobLine) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    if let Some(Value::Array(a)) = line.get_path(&["secrets"]) {
        for n in a.iter().filter_map(Value::as_str) {
            if is_var_name(n) && !names.iter().any(|x| x == n) {
                names.push(n.to_string());
            }
        }
    }
    names
}

/// Redactors per set of secret names, built on first use and cached (a
/// pipeline of many jobs with the same secrets builds one). Thread-safe.
///
/// Every redactor holds the built-in rules, the `extra` rules and the
/// values, read from this process's environment, of [`secret_names`] of
/// the line plus the `extra_names` given at construction. A name (the
/// line's or an extra one) that is not set here is reported once on stderr,
/// naming where it came from (its value cannot be masked by value; the
/// catalogue's patterns still apply).
#[derive(Debug)]
pub struct LineRedactors {
    tool: &'static str,
    extra: Vec<Rule>,
    extra_names: Vec<String>,
    cache: Mutex<HashMap<Vec<String>, Arc<Redactor>>>,
    warned: Mutex<Vec<String>>,
    warn_unset: bool,
    warn_job_unset: bool,
}

impl LineRedactors {
    /// Redactors with no extra rules or names; warnings name `tool`.
    pub fn new(tool: &'static str) -> Self {
        Self::with(tool, Vec::new(), Vec::new())
    }

    /// Redactors that also carry `extra` rules and mask `extra_names`.
    pub fn with(tool: &'static str, extra: Vec<Rule>, extra_names: Vec<String>) -> Self {
        LineRedactors {
            tool,
            extra,
            extra_names,
            cache: Mutex::new(HashMap::new()),
            warned: Mutex::new(Vec::new()),
            warn_unset: true,
            warn_job_unset: true,
        }
    }

    /// No warning for a job's secret names that are not set, only for the
    /// names of `extra_names` (a tool's own --secret-env): for the tools of
    /// the submit pipeline (tao-redact lint, tao-submit's own lint), where
    /// tao-submit refuses such a line with the one error that names the
    /// variable and the fix; a warning each before it would only repeat it.
    pub fn without_job_unset_warnings(mut self) -> Self {
        self.warn_job_unset = false;
        self
    }

    /// No warning for names that are not set (tao-record open: secrets are
    /// read at submit, not at open).
    pub fn without_unset_warnings(mut self) -> Self {
        self.warn_unset = false;
        self
    }

    /// The redactor for the names `names` (plus the defaults and the extra
    /// names).
    ///
    /// Errors: as [`crate::RedactorBuilder::build`].
    pub fn for_names(&self, names: &[String]) -> Result<Arc<Redactor>> {
        let mut key: Vec<String> = DEFAULT_SECRET_ENV.iter().map(|s| s.to_string()).collect();
        for n in names.iter().chain(&self.extra_names) {
            if !key.contains(n) {
                key.push(n.clone());
            }
        }
        key[DEFAULT_SECRET_ENV.len()..].sort();
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(r) = cache.get(&key) {
            return Ok(Arc::clone(r));
        }
        for n in &key[DEFAULT_SECRET_ENV.len()..] {
            let named_here = self.extra_names.contains(n);
            if self.warn_unset
                && (named_here || self.warn_job_unset)
                && std::env::var_os(n).is_none_or(|v| v.is_empty())
            {
                let mut warned = self.warned.lock().unwrap_or_else(|e| e.into_inner());
                if !warned.contains(n) {
                    warned.push(n.clone());
                    // One warning per name, saying who named it: the
                    // tool's own --secret-env, or a job's `secrets`.
                    let msg = if named_here {
                        format!("{n} is not set (named by --secret-env); nothing to mask by its value (export {n} where this tool runs)")
                    } else {
                        format!("secret {n} is named by a job but not set in this environment: its value cannot be masked by value (export {n} where this tool runs)")
                    };
                    tao_core::cli::warn(self.tool, &msg);
                }
            }
        }
        let red = Arc::new(
            Redactor::builder()
                .rules(self.extra.clone())
                .secret_env(&key)
                .build()?,
        );
        cache.insert(key, Arc::clone(&red));
        Ok(red)
    }

    /// The redactor for one job line ([`secret_names`]).
    ///
    /// Errors: as [`LineRedactors::for_names`].
    pub fn for_line(&self, line: &JobLine) -> Result<Arc<Redactor>> {
        self.for_names(&secret_names(line))
    }

    /// One redactor for many lines: the union of their names (what a tool
    /// that prints text of several jobs through one filter uses).
    ///
    /// Errors: as [`LineRedactors::for_names`].
    pub fn for_lines<'a>(
        &self,
        lines: impl IntoIterator<Item = &'a JobLine>,
    ) -> Result<Arc<Redactor>> {
        let mut names: Vec<String> = Vec::new();
        for l in lines {
            for n in secret_names(l) {
                if !names.contains(&n) {
                    names.push(n);
                }
            }
        }
        self.for_names(&names)
    }
}

/// One shell text of a job: where it comes from (`main`, `pre_1`,
/// `post_2`, `spec`, `env.NAME`, `script`) and the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepText {
    /// The step's name as the script and completion.json call it, or the
    /// field it comes from.
    pub name: String,
    /// The text, unbound (`{config_path}` and friends are plain words to
    /// the shell, so binding them changes no syntax).
    pub text: String,
    /// Whether bash runs this text (steps: yes; spec: no, it is data that
    /// xtrace is still checked in).
    pub shell: bool,
}

/// The texts of a job line as its steps (tao-render's names: `pre_N`,
/// `main`, `post_N`), then the spec text (`spec`).
pub fn step_texts(line: &JobLine) -> Vec<StepText> {
    let mut out = Vec::new();
    let exec = line.get_path(&["execution"]).and_then(Value::as_object);
    if let Some(e) = exec {
        if let Some(Value::Array(pre)) = e.get("pre_commands") {
            for (i, c) in pre.iter().enumerate() {
                if let Some(t) = c.as_str() {
                    out.push(StepText {
                        name: format!("pre_{}", i + 1),
                        text: t.to_string(),
                        shell: true,
                    });
                }
            }
        }
    }
    let main = exec
        .and_then(|e| e.get("command"))
        .and_then(Value::as_str)
        .or_else(|| line.get_str(&["command"]));
    if let Some(t) = main {
        out.push(StepText {
            name: "main".into(),
            text: t.to_string(),
            shell: true,
        });
    }
    if let Some(e) = exec {
        if let Some(Value::Array(post)) = e.get("post_commands") {
            for (i, p) in post.iter().enumerate() {
                let t = p
                    .as_str()
                    .or_else(|| p.get("command").and_then(Value::as_str));
                if let Some(t) = t {
                    out.push(StepText {
                        name: format!("post_{}", i + 1),
                        text: t.to_string(),
                        shell: true,
                    });
                }
            }
        }
    }
    if let Some(t) = line.get_str(&["spec", "text"]) {
        out.push(StepText {
            name: "spec".into(),
            text: t.to_string(),
            shell: false,
        });
    }
    out
}

fn xtrace_res() -> &'static [Regex; 4] {
    static RES: OnceLock<[Regex; 4]> = OnceLock::new();
    RES.get_or_init(|| {
        let re = |p: &str| Regex::new(p).expect("xtrace patterns compile (unit-tested)");
        [
            // `set -x`, `set -eux`, `set -e -x`, `set -o xtrace`.
            re(r"(?:^|[\s;&|(`{!])set((?:\s+(?:[-+][A-Za-z]+|-o\s+[a-z]+|--))+)"),
            // `bash -x`, `sh -ex`, `bash --norc -x script`.
            re(r"(?:^|[\s;&|(`{/!])(?:ba|da|k|z|)sh((?:\s+--?[A-Za-z][A-Za-z-]*)+)"),
            re(r"BASH_XTRACEFD"),
            re(r"SHELLOPTS"),
        ]
    })
}

/// The 1-based (line, column) of each xtrace switch in `text`, with the
/// switch as written: `set -x`, `set -o xtrace`, `bash -x` (any `sh`),
/// `BASH_XTRACEFD`, `SHELLOPTS` on a line that says `xtrace`.
pub fn find_xtrace(text: &str) -> Vec<(u64, u64, String)> {
    let res = xtrace_res();
    let mut out = Vec::new();
    for (i, line) in text.as_bytes().split(|&b| b == b'\n').enumerate() {
        let mut hits: Vec<(usize, Vec<u8>)> = Vec::new();
        let mut push = |start: usize, what: &[u8]| hits.push((start, what.to_vec()));
        for c in res[0].captures_iter(line) {
            let opts = c.get(1).expect("group 1 always participates");
            let words: Vec<&[u8]> = opts
                .as_bytes()
                .split(|b| b.is_ascii_whitespace())
                .filter(|w| !w.is_empty())
                .collect();
            let mut hit = false;
            for (k, w) in words.iter().enumerate() {
                if w.starts_with(b"-")
                    && !w.starts_with(b"--")
                    && w[1..] != *b"o"
                    && w.contains(&b'x')
                {
                    hit = true;
                }
                if *w == b"-o" && words.get(k + 1) == Some(&&b"xtrace"[..]) {
                    hit = true;
                }
            }
            if hit {
                let m = c.get(0).expect("group 0");
                let s = m.start() + m.as_bytes().iter().position(|&b| b == b's').unwrap_or(0);
                push(s, &line[s..m.end()]);
            }
        }
        for c in res[1].captures_iter(line) {
            let opts = c.get(1).expect("group 1 always participates");
            let hit = opts
                .as_bytes()
                .split(|b| b.is_ascii_whitespace())
                .any(|w| w.starts_with(b"-") && !w.starts_with(b"--") && w.contains(&b'x'))
                || opts.as_bytes().windows(6).any(|w| w == b"xtrace");
            if hit {
                let m = c.get(0).expect("group 0");
                let lead = m
                    .as_bytes()
                    .iter()
                    .position(|b| b.is_ascii_alphabetic())
                    .unwrap_or(0);
                push(m.start() + lead, &line[m.start() + lead..m.end()]);
            }
        }
        if let Some(m) = res[2].find(line) {
            push(m.start(), m.as_bytes());
        }
        if let Some(m) = res[3].find(line) {
            if line.windows(6).any(|w| w == b"xtrace") {
                push(m.start(), &line[m.start()..]);
            }
        }
        if hits.is_empty() {
            if let Some(p) = line.windows(9).position(|w| w == b"-o xtrace") {
                hits.push((p, b"-o xtrace".to_vec()));
            }
        }
        for (start, what) in hits {
            let col = String::from_utf8_lossy(&line[..start]).chars().count() as u64 + 1;
            out.push((
                i as u64 + 1,
                col,
                String::from_utf8_lossy(&what).trim().to_string(),
            ));
        }
    }
    out
}

/// `bash -n` on `text` (read from stdin, so nothing is in argv): `None`
/// when it parses, else the 1-based line and bash's message. `None` too
/// when bash cannot be run (reported once on stderr; the gate is then
/// skipped, the secret and xtrace checks still run).
pub fn syntax_error(text: &str) -> Option<(u64, String)> {
    let child = Command::new("bash")
        .arg("-n")
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("LC_ALL", "C")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => {
            static WARNED: OnceLock<()> = OnceLock::new();
            WARNED.get_or_init(|| {
                tao_core::cli::warn(
                    "tao-redact",
                    &format!(
                        "cannot run `bash -n` ({e}): the syntax gate is skipped; install bash"
                    ),
                );
            });
            return None;
        }
    };
    let mut stdin = child.stdin.take().expect("piped");
    let body = text.to_string();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(body.as_bytes());
    });
    let out = child.wait_with_output().ok()?;
    let _ = writer.join();
    if out.status.success() {
        return None;
    }
    let err = String::from_utf8_lossy(&out.stderr);
    let first = err
        .lines()
        .find(|l| l.contains("line "))
        .or_else(|| err.lines().next())
        .unwrap_or("syntax error");
    let line = first
        .split("line ")
        .nth(1)
        .and_then(|r| r.split(':').next())
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(1);
    let msg = match first.split_once(&format!("line {line}: ")) {
        Some((_, m)) => m.to_string(),
        None => first.to_string(),
    };
    Some((line, msg))
}

/// The full lint gate of one job line: what `tao-redact lint` writes into
/// `lint` and what tao-submit checks again before connecting.
///
/// Findings (rule ids): the literal secrets of `script.text` (the
/// catalogue's ids and `env:NAME` for the values of [`secret_names`]);
/// `xtrace` in a step, the spec or the script of a job whose `secrets` is
/// not empty (`step` names where); `syntax`, `bash -n` failing on the
/// script or on a step text (`step`, and `line` within that text). `sha256`
/// is that of `script.text`.
///
/// Errors: [`tao_core::Error::BadLine`] when `script.text` is missing;
/// those of [`LineRedactors::for_line`].
pub fn lint_job(line: &JobLine, reds: &LineRedactors) -> Result<Lint> {
    let text = line.require_str(&["script", "text"])?;
    let red = reds.for_line(line)?;
    let mut lint = red.lint(text);
    let has_secrets = !line_secrets(line).is_empty();
    let steps = step_texts(line);
    let mask = |s: &str| String::from_utf8_lossy(&red.redact_line(s.as_bytes())).into_owned();
    if has_secrets {
        let mut any = false;
        for st in &steps {
            for (l, c, what) in find_xtrace(&st.text) {
                any = true;
                lint.findings.push(Finding {
                    rule: "xtrace".into(),
                    line: l,
                    column: c,
                    preview: mask(&format!(
                        "step {}: `{what}` would print every secret of the job into its logs; remove it (the job has secrets)",
                        st.name
                    )),
                    step: Some(st.name.clone()),
                });
            }
        }
        if let Some(Value::Object(env)) = line.get_path(&["env"]) {
            for k in env.keys() {
                let v = env.get(k).and_then(Value::as_str).unwrap_or("");
                if k == "BASH_XTRACEFD" || (k == "SHELLOPTS" && v.contains("xtrace")) {
                    any = true;
                    lint.findings.push(Finding {
                        rule: "xtrace".into(),
                        line: 1,
                        column: 1,
                        preview: format!("env.{k}: turns on bash xtrace, which would print every secret of the job into its logs; remove it (the job has secrets)"),
                        step: Some(format!("env.{k}")),
                    });
                }
            }
        }
        if !any {
            for (l, c, what) in find_xtrace(text) {
                lint.findings.push(Finding {
                    rule: "xtrace".into(),
                    line: l,
                    column: c,
                    preview: mask(&format!("script: `{what}` would print every secret of the job into its logs; remove it (the job has secrets)")),
                    step: Some("script".into()),
                });
            }
        }
    }
    // The syntax gate: each step as `eval` runs it, then the script.
    let mut step_bad = false;
    for st in steps.iter().filter(|s| s.shell) {
        if let Some((l, msg)) = syntax_error(&st.text) {
            step_bad = true;
            lint.findings.push(Finding {
                rule: "syntax".into(),
                line: l,
                column: 1,
                preview: mask(&format!("step {} line {l}: bash -n: {msg}", st.name)),
                step: Some(st.name.clone()),
            });
        }
    }
    if !step_bad {
        if let Some((l, msg)) = syntax_error(text) {
            lint.findings.push(Finding {
                rule: "syntax".into(),
                line: l,
                column: 1,
                preview: mask(&format!("script line {l}: bash -n: {msg}")),
                step: Some("script".into()),
            });
        }
    }
    lint.ok = lint.findings.is_empty();
    Ok(lint)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(v: serde_json::Value) -> JobLine {
        JobLine::parse(&v.to_string(), 1).unwrap()
    }

    #[test]
    fn xtrace_forms_are_found_and_harmless_ones_are_not() {
        for t in [
            "set -x",
            "set -eux; train",
            "set -e -x",
            "true && set -o xtrace",
            "bash -x run.sh",
            "sh -xc 'echo'",
            "/bin/bash -ex x.sh",
            "export BASH_XTRACEFD=1",
            "SHELLOPTS=xtrace bash x.sh",
            "bash --norc -x y",
        ] {
            assert!(!find_xtrace(t).is_empty(), "{t}");
        }
        for t in [
            "set +x",
            "set -e",
            "set -euo pipefail",
            "bash -c 'echo x'",
            "python train.py --max-x 3",
            "echo reset -x",
            "offset -x",
        ] {
            assert!(find_xtrace(t).is_empty(), "{t}: {:?}", find_xtrace(t));
        }
        assert_eq!(find_xtrace("a\n  set -x\n")[0].0, 2);
    }

    #[test]
    fn syntax_errors_name_the_line() {
        if Command::new("bash").arg("-c").arg("true").status().is_err() {
            panic!("bash is needed for the syntax gate");
        }
        assert_eq!(syntax_error("echo ok\nfor x in 1; do echo; done\n"), None);
        let (l, m) = syntax_error("echo ok\nif true; then\n  echo (\nfi\n").unwrap();
        assert_eq!(l, 3, "{m}");
        assert!(m.contains("syntax error"), "{m}");
    }

    #[test]
    fn names_are_the_defaults_plus_the_lines_own() {
        let l = line(serde_json::json!({"secrets": ["WANDB_API_KEY", "HF_TOKEN", "bad name"]}));
        assert_eq!(secret_names(&l), ["HF_TOKEN", "NGC_KEY", "WANDB_API_KEY"]);
        assert_eq!(line_secrets(&l), ["WANDB_API_KEY", "HF_TOKEN"]);
    }
}
