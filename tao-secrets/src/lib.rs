//! tao-secrets: the secret scanner of tao-slurm, as a shared library: the
//! lint gate for sbatch scripts and job lines and the streaming redaction
//! filter for logs. The `tao-redact` command is a thin CLI over it;
//! tao-submit, tao-poll, tao-record and tao-classify link it directly.
//!
//! Two uses of one scanner:
//! - [`Redactor::lint`] / [`lint_script`]: a script with a literal secret is
//!   blocked before submit (the job line's `lint` field, [`Lint`]).
//! - [`Redactor::filter`] / [`Redactor::redact_line`]: any byte stream with
//!   every secret masked as `[REDACTED:<rule>]` (tao-poll's log output goes
//!   through the same code).
//!
//! What counts as a secret: the rules of the catalogue (`rules/builtin.toml`,
//! compiled in, each citing its source; extensible with a rules file, see
//! [`rules`]) and the exact values of the secrets named in the environment
//! (`HF_TOKEN`, `NGC_KEY` and any others named), whatever their format.
//!
//! ```
//! let red = tao_secrets::Redactor::builder().build().unwrap();
//! let line = b"export GH_TOKEN=ghp_FAKEtaoRedactTest0123456789abcdefABCD";
//! assert_eq!(&*red.redact_line(line), &b"export GH_TOKEN=[REDACTED:github-token]"[..]);
//! ```

use std::borrow::Cow;
use std::sync::OnceLock;

use aho_corasick::AhoCorasick;
use tao_core::{Error, Result};

pub mod job;
pub mod lint;
pub mod rules;
mod scan;
pub mod stream;
pub mod validate;

pub use job::{lint_job, secret_names, LineRedactors};
pub use lint::{Finding, Lint};
pub use rules::Rule;
pub use stream::Filter;

/// The fix named wherever a literal secret is refused (tao-record open's
/// exit 3, tao-redact lint's blocked scripts): the one wording, so the
/// advice cannot drift. `--env` values are passed byte for byte and never
/// expanded (tao-jobline(7)), so `$NAME` inside one stays literal: the job
/// gets the secret as its environment variable NAME and the program (or
/// the spec, through its own env interpolation if it has one) reads it at
/// run time.
pub const BY_NAME_ADVICE: &str = "pass it by name with --secret NAME: the job gets it as the environment variable NAME; --env values are passed byte for byte and never expanded, so the program (or the spec, through its own env interpolation if it has one) must read $NAME at run time";

/// Names whose values are always masked by value when set.
pub const DEFAULT_SECRET_ENV: &[&str] = &["HF_TOKEN", "NGC_KEY"];

/// Exact values shorter than this (bytes) are not masked by value: a short
/// value would mask ordinary text everywhere. Patterns still apply.
pub const MIN_EXACT_LEN: usize = 8;

/// The scanner: compiled rules, the keyword prefilter and the exact values.
/// Build one per process ([`Redactor::from_env`]) and share it; it is
/// `Send + Sync` and scanning does not mutate it.
#[derive(Debug)]
pub struct Redactor {
    rules: Vec<Rule>,
    /// Mask labels: rule ids, then `env:<NAME>` per exact value.
    labels: Vec<String>,
    prefilter: scan::Prefilter,
    /// Rules without keywords (run on every line).
    always: Vec<usize>,
    exact: Option<AhoCorasick>,
    /// The exact values (same order as their labels), for
    /// [`Redactor::trailing_prefix`].
    values: Vec<Vec<u8>>,
    skipped: Vec<String>,
}

/// A fragment that ends a stream early (a log still being written) is
/// checked for a cut exact value only when at least this many bytes of it
/// are there: fewer could be anything.
pub const MIN_PREFIX_LEN: usize = 4;

/// Builds a [`Redactor`]: the built-in rules, optional extra rules files and
/// exact secret values.
#[derive(Debug, Default)]
pub struct RedactorBuilder {
    extra: Vec<Rule>,
    exact: Vec<(String, Vec<u8>)>,
    skipped: Vec<String>,
}

impl RedactorBuilder {
    /// Add the rules of a rules file (the `rules/builtin.toml` format),
    /// after the built-in ones.
    ///
    /// Errors: [`Error::Io`] (exit 74) if `path` cannot be read;
    /// [`Error::Config`] (exit 78) if it is not a valid catalogue or reuses
    /// an id.
    pub fn rules_file(mut self, path: &std::path::Path) -> Result<Self> {
        self.extra.extend(rules::read_rules_file(path)?);
        Ok(self)
    }

    /// Add compiled rules (e.g. from [`rules::parse_catalogue`]).
    pub fn rules(mut self, rules: Vec<Rule>) -> Self {
        self.extra.extend(rules);
        self
    }

    /// Mask the exact bytes `value` wherever they occur, labelled
    /// `env:<name>`. A value with newlines is masked line by line; lines
    /// shorter than [`MIN_EXACT_LEN`] bytes are skipped and `name` is
    /// listed by [`Redactor::skipped_secrets`].
    pub fn secret_value(mut self, name: &str, value: &[u8]) -> Self {
        let mut any = false;
        for part in value.split(|&b| b == b'\n') {
            let part = part.strip_suffix(b"\r").unwrap_or(part);
            if part.len() >= MIN_EXACT_LEN && part.len() <= stream::MAX_SECRET {
                self.exact.push((name.to_string(), part.to_vec()));
                any = true;
            }
        }
        if !any && !value.is_empty() {
            self.skipped.push(name.to_string());
        }
        self
    }

    /// Mask the values of `HF_TOKEN`, `NGC_KEY` and of every variable in
    /// `names`, read from this process's environment. Unset or empty
    /// variables are ignored.
    pub fn secret_env(mut self, names: &[String]) -> Self {
        let mut all: Vec<String> = DEFAULT_SECRET_ENV.iter().map(|s| s.to_string()).collect();
        for n in names {
            if !all.contains(n) {
                all.push(n.clone());
            }
        }
        for name in all {
            if let Some(v) = std::env::var_os(&name) {
                use std::os::unix::ffi::OsStrExt;
                self = self.secret_value(&name, v.as_bytes());
            }
        }
        self
    }

    /// Compile everything into a [`Redactor`].
    ///
    /// Errors: [`Error::Config`] if an extra rule reuses a built-in id;
    /// [`Error::Internal`] if the built-in catalogue is broken.
    pub fn build(self) -> Result<Redactor> {
        let mut rules = rules::builtin_cached()?;
        for r in self.extra {
            if rules.iter().any(|b| b.id == r.id) {
                return Err(Error::Config(format!(
                    "rule id '{}' is already defined; give the rule in the rules file another id",
                    r.id
                )));
            }
            rules.push(r);
        }
        let mut labels: Vec<String> = rules.iter().map(|r| r.id.clone()).collect();
        labels.extend(self.exact.iter().map(|(n, _)| format!("env:{n}")));
        let values: Vec<Vec<u8>> = self.exact.iter().map(|(_, v)| v.clone()).collect();
        let prefilter = scan::Prefilter::new(&rules, &values)?;
        let exact = if values.is_empty() {
            None
        } else {
            Some(
                AhoCorasick::builder()
                    .match_kind(aho_corasick::MatchKind::LeftmostLongest)
                    .build(&values)
                    .map_err(|e| {
                        Error::Internal(format!("building the exact-value automaton: {e}"))
                    })?,
            )
        };
        let always = rules
            .iter()
            .enumerate()
            .filter(|(_, r)| r.keywords.is_empty())
            .map(|(i, _)| i)
            .collect();
        Ok(Redactor {
            rules,
            labels,
            prefilter,
            always,
            exact,
            values,
            skipped: self.skipped,
        })
    }
}

impl Redactor {
    /// A builder starting from the built-in rules, with no exact values.
    pub fn builder() -> RedactorBuilder {
        RedactorBuilder::default()
    }

    /// The built-in rules plus the exact values of `HF_TOKEN` and `NGC_KEY`
    /// from the environment (when set). What tao-poll uses for logs.
    ///
    /// Errors: [`Error::Internal`] only if the built-in catalogue is broken.
    pub fn from_env() -> Result<Redactor> {
        Self::with_secret_env(&[])
    }

    /// Like [`Redactor::from_env`], also masking the values of the
    /// variables named in `names` (e.g. a job line's `secrets`).
    ///
    /// Errors: as [`Redactor::from_env`].
    pub fn with_secret_env(names: &[String]) -> Result<Redactor> {
        Self::builder().secret_env(names).build()
    }

    /// The end of `frag` that is the start (at least [`MIN_PREFIX_LEN`]
    /// bytes, not all) of an exact secret value: `(offset in frag, label
    /// index)` of the longest such end. A stream that stops in the middle
    /// of a secret (the job is still writing it) masks that part.
    pub(crate) fn trailing_prefix(&self, frag: &[u8]) -> Option<(usize, usize)> {
        let mut best: Option<(usize, usize)> = None;
        for (i, v) in self.values.iter().enumerate() {
            let max = (v.len() - 1).min(frag.len());
            for k in (MIN_PREFIX_LEN..=max).rev() {
                if frag[frag.len() - k..] == v[..k] {
                    if best.is_none_or(|(o, _)| frag.len() - k < o) {
                        best = Some((frag.len() - k, self.rules.len() + i));
                    }
                    break;
                }
            }
        }
        best
    }

    /// Names of secrets whose values were too short to mask by value.
    pub fn skipped_secrets(&self) -> &[String] {
        &self.skipped
    }

    /// The ids of the rules, in priority order.
    pub fn rule_ids(&self) -> impl Iterator<Item = &str> {
        self.rules().iter().map(|r| r.id.as_str())
    }

    /// Mask the secrets in one line (without its `\n`; embedded newlines
    /// are ordinary bytes). Borrowed when nothing was masked. Multi-line
    /// blocks cannot be followed line by line here: a PEM BEGIN line is
    /// masked to its end; use [`Redactor::redact_text`] or
    /// [`Redactor::filter`] for several lines.
    pub fn redact_line<'a>(&self, line: &'a [u8]) -> Cow<'a, [u8]> {
        let mut state = scan::ScanState::default();
        let mut scratch = scan::Scratch::default();
        self.scan(line, true, usize::MAX, &mut state, &mut scratch);
        if scratch.hits.is_empty() {
            return Cow::Borrowed(line);
        }
        let mut out = Vec::with_capacity(line.len() + 32);
        self.apply(line, &mut scratch.hits, line.len(), &mut out);
        Cow::Owned(out)
    }

    /// Mask the secrets in several lines at once (a log tail), following
    /// multi-line blocks. Borrowed when nothing was masked.
    pub fn redact_text<'a>(&self, text: &'a [u8]) -> Cow<'a, [u8]> {
        let mut s = stream::Stream::new(self);
        s.lines(text);
        let out = s.take_out();
        if out == text {
            Cow::Borrowed(text)
        } else {
            Cow::Owned(out)
        }
    }

    /// Copy `r` to `w` masking every secret, flushing after each batch of
    /// complete lines (each line is written as soon as it has been read).
    /// Memory stays bounded (about 2 x [`stream::BUF_SIZE`]) whatever the
    /// line lengths; bytes need not be UTF-8 (see [`stream`]).
    ///
    /// Errors: [`Error::Io`] (exit 74) reading `r` or writing `w` (a
    /// broken pipe keeps its kind, see `tao_core::cli::is_broken_pipe`).
    pub fn filter<R: std::io::Read, W: std::io::Write>(&self, r: R, w: W) -> Result<()> {
        stream::run(self, r, w)
    }
}

/// Lint a script with the built-in rules only (no exact values; the binary
/// and [`Redactor::lint`] add those).
pub fn lint_script(text: &str) -> Lint {
    static BUILTIN: OnceLock<Redactor> = OnceLock::new();
    BUILTIN
        .get_or_init(|| {
            Redactor::builder()
                .build()
                .expect("the built-in catalogue compiles (unit-tested)")
        })
        .lint(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_values_are_masked_whatever_their_format() {
        let red = Redactor::builder()
            .secret_value("MY_PW", b"plain words here")
            .secret_value("SHORT", b"abc")
            .build()
            .unwrap();
        assert_eq!(
            &*red.redact_line(b"echo plain words here!"),
            b"echo [REDACTED:env:MY_PW]!"
        );
        assert_eq!(red.skipped_secrets(), ["SHORT".to_string()]);
        let lint = red.lint("x='plain words here'\n");
        assert_eq!(lint.findings[0].rule, "env:MY_PW");
    }

    #[test]
    fn extra_rules_extend_and_may_not_shadow() {
        let extra = rules::parse_catalogue(
            "[[rule]]\nid = \"acme-token\"\ndescription = \"x\"\nkeywords = [\"acme_\"]\nregex = '''\\bacme_[a-z0-9]{16}\\b'''\n",
            "t",
        )
        .unwrap();
        let red = Redactor::builder().rules(extra).build().unwrap();
        assert_eq!(
            &*red.redact_line(b"k=acme_0123456789abcdef"),
            b"k=[REDACTED:acme-token]"
        );
        let dup = rules::parse_catalogue("[[rule]]\nid = \"jwt\"\nregex = \"x\"\n", "t").unwrap();
        let e = Redactor::builder().rules(dup).build().unwrap_err();
        assert_eq!(e.code(), tao_core::exit::CONFIG);
    }

    #[test]
    fn redact_text_follows_pem_blocks_and_borrows_clean_text() {
        let red = Redactor::builder().build().unwrap();
        let clean = b"a\nb\n";
        assert!(matches!(red.redact_text(clean), Cow::Borrowed(_)));
        let text = b"x\n-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIFakeFakeFakeFakeFake\n-----END EC PRIVATE KEY-----\ny";
        assert_eq!(
            &*red.redact_text(text),
            &b"x\n[REDACTED:pem-private-key]\n[REDACTED:pem-private-key]\n[REDACTED:pem-private-key]\ny"[..]
        );
    }

    #[test]
    fn redactor_can_be_shared_between_threads() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<Redactor>();
    }

    #[test]
    fn lint_script_uses_builtin_rules() {
        assert!(lint_script("echo hello\n").ok);
        assert!(!lint_script("export GH_TOKEN=ghp_FAKEtaoRedactTest0123456789abcdefABCD\n").ok);
    }
}
