//! The two askama escapers of the `.sbatch` templates and the validated
//! value type for `#SBATCH` lines.
//!
//! Why two: every value that reaches the shell part of a script goes through
//! [`ShellQuote`], registered for the `sbatch` extension in `askama.toml`, so
//! a template cannot print a value unquoted (the only ways around an
//! escaper, the `safe` filter and the `Safe` wrapper type, are banned and a unit test greps for
//! them). `#SBATCH` lines are read by sbatch, not by a shell: quoting does
//! not protect them (Slurm 22.05 strips plain quotes there, and a value with
//! a space or `#` would end the option). Those values are therefore built
//! only as [`SbatchValue`]s, whose constructors check a strict character set
//! per kind of value, and printed with `{{ v|escape("sbatch-directive") }}`,
//! which selects [`SbatchDirective`]. That escaper is a second lock: it
//! passes a fragment through only when every character is in
//! [`DIRECTIVE_CHARS`] and fails the whole render otherwise, so even a
//! template that used it on an arbitrary string could not inject a space, a
//! quote, `$`, `;`, `#` or a newline.

use std::fmt::{self, Write};

use tao_core::Error;

/// Characters a `#SBATCH` value may contain at all (the union of every
/// [`SbatchValue`] kind): ASCII letters and digits and `_ . , : / % [ ] -`.
/// No whitespace, quotes, `$`, backslash, `#`, `;` or control characters.
pub const DIRECTIVE_CHARS: &str =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.,:/%[]-";

fn is_directive_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "_.,:/%[]-".contains(c)
}

/// askama escaper for the shell part of a script: writes every fragment as
/// one POSIX single-quoted word (`it's` becomes `'it'\''s'`) with
/// [`tao_core::shell::quote_into`]. askama may call it once per fragment of
/// a value; adjacent single-quoted fragments join into one shell word, so
/// that stays correct. Numbers are quoted too (`'16'`): templates assign
/// them to variables before using them in arithmetic.
#[derive(Debug, Clone, Copy, Default)]
pub struct ShellQuote;

impl askama::filters::Escaper for ShellQuote {
    fn write_escaped_str<W: Write>(&self, mut dest: W, string: &str) -> fmt::Result {
        dest.write_str(&script_quote(string))
    }
}

/// Quote `s` as one word of the (bash) batch script: POSIX single quotes
/// ([`tao_core::shell::quote_into`]), except that each carriage return is
/// written as bash's `$'\r'` between quoted pieces (`a\rb` becomes
/// `'a'$'\r''b'`). sbatch refuses a script holding a DOS line break
/// (`\r\n`: "Batch script contains DOS line breaks"), which a value with
/// a CR before a newline would otherwise put into it; the job still gets
/// the value byte for byte. Newlines, tabs and ESC stay inside the quotes.
pub fn script_quote(s: &str) -> String {
    let mut quoted = String::with_capacity(s.len() + 8);
    for (i, piece) in s.split('\r').enumerate() {
        if i > 0 {
            quoted.push_str("$'\\r'");
        }
        tao_core::shell::quote_into(piece, &mut quoted);
    }
    quoted
}

/// askama escaper for `#SBATCH` values (`escape("sbatch-directive")`):
/// writes a fragment unchanged when every character is in
/// [`DIRECTIVE_CHARS`], and otherwise fails the render with `fmt::Error`
/// (reported as an internal error: [`SbatchValue`] constructors refuse such
/// values first, with a message naming the input).
#[derive(Debug, Clone, Copy, Default)]
pub struct SbatchDirective;

impl askama::filters::Escaper for SbatchDirective {
    fn write_escaped_str<W: Write>(&self, mut dest: W, string: &str) -> fmt::Result {
        if string.is_empty() || !string.chars().all(is_directive_char) {
            return Err(fmt::Error);
        }
        dest.write_str(string)
    }
}

/// A value checked for an `#SBATCH` line. The only way to make one is a
/// validating constructor; `Display` prints it as is (through the
/// [`SbatchDirective`] escaper, which checks it again).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SbatchValue(String);

impl fmt::Display for SbatchValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

fn refuse(what: &str, value: &str, rule: &str) -> Error {
    Error::Data(format!(
        "{what} {value:?} cannot go on an #SBATCH line: {rule}"
    ))
}

/// Whether `s` is a non-empty word of `[A-Za-z0-9_.-]`: the set Slurm
/// documents for partition, account and node names and the set the issue's
/// job-name rule allows.
pub fn is_word(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '-')
}

/// Whether `s` is an absolute path of `[A-Za-z0-9_./-]` without `..`
/// components: paths that may go on `#SBATCH` lines and be substituted into
/// commands raw (they mean the same quoted or not).
pub fn is_plain_abs_path(s: &str) -> bool {
    s.starts_with('/')
        && s.len() > 1
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '-' || c == '/')
        && !s.split('/').any(|part| part == "..")
}

/// Maximum job-name length accepted (Slurm keeps job names in a 1024-byte
/// buffer; ours are record ids of at most 64 characters, so this is loose).
pub const MAX_JOB_NAME: usize = 128;

impl SbatchValue {
    /// A job name (`--job-name`): 1-128 characters of `[A-Za-z0-9_.-]`.
    ///
    /// Errors: [`Error::Data`] naming the value and the rule.
    pub fn job_name(s: &str) -> Result<Self, Error> {
        if is_word(s) && s.len() <= MAX_JOB_NAME {
            Ok(Self(s.to_string()))
        } else {
            Err(refuse(
                "job name",
                s,
                "use 1-128 characters of [A-Za-z0-9_.-] (the record id from `tao-record open`)",
            ))
        }
    }

    /// A comma-separated list of partition names (`--partition`), each
    /// `[A-Za-z0-9_.-]+`.
    ///
    /// Errors: [`Error::Data`] naming the value and the rule.
    pub fn partitions(s: &str) -> Result<Self, Error> {
        if s.split(',').all(is_word) {
            Ok(Self(s.to_string()))
        } else {
            Err(refuse(
                "partition",
                s,
                "use partition names of [A-Za-z0-9_.-] separated by commas",
            ))
        }
    }

    /// An account name (`--account`): `[A-Za-z0-9_.-]+`.
    ///
    /// Errors: [`Error::Data`] naming the value and the rule.
    pub fn account(s: &str) -> Result<Self, Error> {
        if is_word(s) {
            Ok(Self(s.to_string()))
        } else {
            Err(refuse(
                "account",
                s,
                "use an account name of [A-Za-z0-9_.-]",
            ))
        }
    }

    /// A node list (`--exclude`): names or Slurm host ranges (`n[1-3]`)
    /// of `[A-Za-z0-9_.[]-]`, joined with commas. `nodes` must not be empty.
    ///
    /// Errors: [`Error::Data`] naming the offending node name.
    pub fn node_list(nodes: &[String]) -> Result<Self, Error> {
        for n in nodes {
            let ok = !n.is_empty()
                && n.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_.-[]".contains(c) || c == ',')
                && !n.split(',').any(str::is_empty);
            if !ok {
                return Err(refuse(
                    "excluded node",
                    n,
                    "use node names or ranges of [A-Za-z0-9_.-[]] such as n1 or n[1-3]",
                ));
            }
        }
        if nodes.is_empty() {
            return Err(Error::Internal("empty node list for --exclude".into()));
        }
        Ok(Self(nodes.join(",")))
    }

    /// A memory size (`--mem`): digits with an optional unit `K`, `M`, `G`
    /// or `T` (sbatch(1), `--mem`).
    ///
    /// Errors: [`Error::Data`] naming the value and the rule.
    pub fn mem(s: &str) -> Result<Self, Error> {
        let digits = s.strip_suffix(['K', 'M', 'G', 'T']).unwrap_or(s);
        if !digits.is_empty() && digits.len() <= 12 && digits.bytes().all(|b| b.is_ascii_digit()) {
            Ok(Self(s.to_string()))
        } else {
            Err(refuse(
                "memory",
                s,
                "use digits with an optional K, M, G or T, e.g. 7200M",
            ))
        }
    }

    /// A canonical Slurm time (`D-HH:MM:SS`, see [`tao_core::slurm_time`]).
    pub fn time(t: &tao_core::slurm_time::SlurmTime) -> Self {
        Self(t.canonical())
    }

    /// A count (`--nodes`, `--cpus-per-task`, ...).
    pub fn number(n: u32) -> Self {
        Self(n.to_string())
    }

    /// A GPU request (`--gres=gpu:N`).
    pub fn gres_gpu(n: u32) -> Self {
        Self(format!("gpu:{n}"))
    }

    /// A log file path (`--output`/`--error`):
    /// `<job_dir>/slurm-logs/<id>-%j/<file>`; `%j` is sbatch's job-id
    /// pattern (sbatch(1), "filename pattern"). `job_dir` must pass
    /// [`is_plain_abs_path`] (so it holds no `%` of its own), `id` must be a
    /// word and `file` a word.
    ///
    /// Errors: [`Error::Data`] naming the path and the rule.
    pub fn log_path(job_dir: &str, id: &str, file: &str) -> Result<Self, Error> {
        if !is_plain_abs_path(job_dir) {
            return Err(refuse(
                "job directory",
                job_dir,
                "use an absolute path of [A-Za-z0-9_./-] without '..'",
            ));
        }
        if !is_word(id) || !is_word(file) {
            return Err(refuse(
                "log file name",
                &format!("{id}/{file}"),
                "use [A-Za-z0-9_.-]",
            ));
        }
        // sbatch's `%j` is the Slurm job id.
        Ok(Self(format!(
            "{}/{file}",
            tao_core::model::Layout::new(id, job_dir).log_dir("%j")
        )))
    }

    /// The value as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn script_quote_keeps_control_bytes_and_never_a_dos_line_break() {
        let v = "a\nb\tc\r\nd\x1be'f\r";
        let q = script_quote(v);
        assert!(!q.contains('\r'), "{q:?}");
        assert_eq!(q, "'a\nb\tc'$'\\r''\nd\x1be'\\''f'$'\\r'''");
        let out = std::process::Command::new("bash")
            .arg("-c")
            .arg(format!("printf %s {q}"))
            .output()
            .unwrap();
        assert_eq!(out.stdout, v.as_bytes());
    }

    use super::*;
    use askama::filters::Escaper;

    fn shell(s: &str) -> String {
        let mut out = String::new();
        ShellQuote.write_escaped_str(&mut out, s).unwrap();
        out
    }

    #[test]
    fn shell_quote_always_quotes() {
        assert_eq!(shell("it's $(x)"), r"'it'\''s $(x)'");
        assert_eq!(shell(""), "''");
        assert_eq!(shell("16"), "'16'");
    }

    #[test]
    fn directive_escaper_refuses_anything_outside_the_set() {
        for bad in [
            "a b", "a'b", "a\"b", "$x", "a;b", "a#b", "a\nb", "", "é", "a\\b", "`x`",
        ] {
            let mut out = String::new();
            assert!(
                SbatchDirective.write_escaped_str(&mut out, bad).is_err(),
                "{bad:?}"
            );
        }
        let mut out = String::new();
        SbatchDirective
            .write_escaped_str(&mut out, "/base/jobs/x/slurm-logs/x-%j/main.out")
            .unwrap();
        assert_eq!(out, "/base/jobs/x/slurm-logs/x-%j/main.out");
        for c in DIRECTIVE_CHARS.chars() {
            assert!(is_directive_char(c));
        }
    }

    #[test]
    fn constructors_validate() {
        assert!(SbatchValue::job_name("tao-1").is_ok());
        assert!(SbatchValue::job_name("a b").is_err());
        assert!(SbatchValue::job_name(&"a".repeat(129)).is_err());
        assert!(SbatchValue::partitions("polar,polar3").is_ok());
        assert!(SbatchValue::partitions("polar,").is_err());
        assert!(SbatchValue::partitions("p q").is_err());
        assert!(SbatchValue::account("acc-1").is_ok());
        assert!(SbatchValue::account("acc#1").is_err());
        assert!(SbatchValue::mem("7200M").is_ok());
        assert!(SbatchValue::mem("7200MB").is_err());
        assert!(SbatchValue::mem("M").is_err());
        assert_eq!(
            SbatchValue::node_list(&["n1".into(), "n[2-3]".into()])
                .unwrap()
                .as_str(),
            "n1,n[2-3]"
        );
        assert!(SbatchValue::node_list(&["n1 n2".into()]).is_err());
        assert_eq!(
            SbatchValue::log_path("/b/jobs/x/", "x", "main.out")
                .unwrap()
                .as_str(),
            "/b/jobs/x/slurm-logs/x-%j/main.out"
        );
        assert!(SbatchValue::log_path("/b/jo bs/x", "x", "main.out").is_err());
        assert!(SbatchValue::log_path("/b/%x", "x", "main.out").is_err());
        assert!(SbatchValue::log_path("rel/x", "x", "main.out").is_err());
        assert!(SbatchValue::log_path("/b/../x", "x", "main.out").is_err());
        let err = SbatchValue::account("a\"b").unwrap_err().to_string();
        assert!(err.contains("account \"a\\\"b\""), "{err}");
    }
}
