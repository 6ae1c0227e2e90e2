//! POSIX shell quoting: always single quotes, each `'` written as `'\''`.
//!
//! Every value is quoted, never judged "safe unquoted" (the `shlex` crate's
//! RUSTSEC-2024-0006 came from exactly that judgement). Adjacent quoted
//! fragments join into one shell word, so quoting pieces of a value
//! separately stays correct.

/// Quote `s` as one POSIX shell word: `it's` becomes `'it'\''s'`, the empty
/// string becomes `''`. NUL cannot be passed to a shell; callers reject it
/// when they parse input (see [`has_nul`]).
pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    quote_into(s, &mut out);
    out
}

/// Append the quoted form of `s` to `out` (see [`quote`]).
pub fn quote_into(s: &str, out: &mut String) {
    out.push('\'');
    for ch in s.chars() {
        if ch == '\'' {
            out.push_str("'\\''");
        } else {
            out.push(ch);
        }
    }
    out.push('\'');
}

/// Quote each word and join them with spaces: an argv for a remote shell.
pub fn join<I, S>(words: I) -> String
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    let mut out = String::new();
    for (i, w) in words.into_iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        quote_into(w.as_ref(), &mut out);
    }
    out
}

/// The secrets sidecar of a job: `<job_dir>/env/secrets.env`
/// (tao-jobline(7), storage layout). tao-submit writes it, the job sources
/// it and removes it on exit.
pub fn sidecar_path(job_dir: &str) -> String {
    crate::model::Layout::new("", job_dir).secrets_file()
}

/// A POSIX shell command that removes the secrets sidecar of each job dir
/// in `job_dirs`, and the temporary files an interrupted write left
/// (`secrets.env.tao-tmp.*`): `shred -u` where available, else `rm -f` (the
/// job script's own `tao_remove_secrets` does the same). Used on every
/// path where the job will not run it: sbatch refused after staging, an
/// ambiguous submit whose jobs were cancelled, `tao-submit cancel`, and
/// tao-poll's sweep of jobs in an end state. Prints one line
/// `@@tao-sidecar-left <path>` per sidecar still there afterwards (a
/// read-only filesystem, another owner); exits 0 either way.
pub fn remove_sidecars_command<S: AsRef<str>>(job_dirs: &[S]) -> String {
    let mut s = String::from("for f in");
    for d in job_dirs {
        s.push(' ');
        quote_into(&sidecar_path(d.as_ref()), &mut s);
    }
    s.push_str(
        "; do for t in \"$f\" \"$f\".tao-tmp.*; do if [ -f \"$t\" ]; then shred -u -- \"$t\" 2>/dev/null || rm -f -- \"$t\"; fi; done; \
         if [ -e \"$f\" ]; then printf '@@tao-sidecar-left %s\\n' \"$f\"; fi; done; true",
    );
    s
}

/// Whether `s` contains a NUL byte, which no shell word can carry.
pub fn has_nul(s: &str) -> bool {
    s.as_bytes().contains(&0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_everything() {
        assert_eq!(quote(""), "''");
        assert_eq!(quote("abc"), "'abc'");
        assert_eq!(quote("it's $(x)"), r"'it'\''s $(x)'");
        assert_eq!(join(["a b", "c"]), "'a b' 'c'");
    }

    #[test]
    fn bash_reads_back_every_value() {
        // Round trip through a real shell when one is present.
        let Ok(out) = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("printf '%s' {}", quote("a'b\"c$(d)`e`\n;f\\g ü")))
            .output()
        else {
            return;
        };
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "a'b\"c$(d)`e`\n;f\\g ü"
        );
    }

    #[test]
    fn sidecars_are_removed_with_their_temporary_files() {
        let dir = std::env::temp_dir().join(format!("tao-core-sidecar-{}", std::process::id()));
        let a = dir.join("a b");
        std::fs::create_dir_all(a.join("env")).unwrap();
        std::fs::write(a.join("env/secrets.env"), "export X='y'\n").unwrap();
        std::fs::write(a.join("env/secrets.env.tao-tmp.12"), "export X='y'\n").unwrap();
        let none = dir.join("none");
        let cmd = remove_sidecars_command(&[a.to_str().unwrap(), none.to_str().unwrap()]);
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(&cmd)
            .output()
            .unwrap();
        assert!(out.status.success());
        assert_eq!(String::from_utf8_lossy(&out.stdout), "");
        assert_eq!(std::fs::read_dir(a.join("env")).unwrap().count(), 0);
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(sidecar_path("/b/jobs/x/"), "/b/jobs/x/env/secrets.env");
    }
}
