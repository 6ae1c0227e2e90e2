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
}
