//! Checks that run after a rule's regex matched, to keep false alarms down:
//! placeholders and references (`$HF_TOKEN`, `<your-key>`, `xxxx`), Shannon
//! entropy, the literal-assignment filters, the NGC legacy-key decode and
//! the HTTP Basic credentials decode (RFC 7617).
//!
//! The ideas come from the public secret scanners: detect-secrets'
//! `KeywordDetector` filters (references, placeholders, code) and its
//! high-entropy limits, gitleaks' per-rule `entropy` and allowlists, and
//! trufflehog's verification-before-report (here: a decode check instead of
//! a network call, since tao-redact talks to nothing).

use base64::Engine as _;

/// Shannon entropy of `bytes` in bits per byte (0.0 for an empty slice).
///
/// A random base62 token of 40 characters scores about 5; English words
/// about 3; `aaaa` scores 0. Source: Shannon 1948; the thresholds used by
/// the rules follow gitleaks (3.5 for generic keys) and detect-secrets
/// (3.0 for hex, 4.5 for base64 strings).
pub fn shannon_entropy(bytes: &[u8]) -> f64 {
    if bytes.is_empty() {
        return 0.0;
    }
    let mut counts = [0u32; 256];
    for &b in bytes {
        counts[b as usize] += 1;
    }
    let n = bytes.len() as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = f64::from(c) / n;
            -p * p.log2()
        })
        .sum()
}

/// Words that stand for a secret rather than being one (compared whole,
/// case-insensitively).
const PLACEHOLDER_WORDS: &[&str] = &[
    "password",
    "passwd",
    "pass",
    "secret",
    "token",
    "key",
    "apikey",
    "api_key",
    "none",
    "null",
    "nil",
    "true",
    "false",
    "yes",
    "no",
    "undefined",
    "empty",
    "todo",
    "tbd",
    "fixme",
    "required",
    "optional",
    "string",
];

/// Fragments that mark a value as a placeholder wherever they appear
/// (case-insensitive).
const PLACEHOLDER_PARTS: &[&str] = &[
    "****",
    "....",
    "\u{2026}",
    "changeme",
    "change_me",
    "change-me",
    "your_",
    "your-",
    "yourkey",
    "yourtoken",
    "yourpassword",
    "placeholder",
    "redacted",
    "replace_me",
    "replace-me",
    "replaceme",
    "example",
    "insert_",
    "insert-",
];

/// Whether `value` is a reference or an obvious placeholder, not a secret.
///
/// References: anything starting with `$` (`$HF_TOKEN`, `${NGC_KEY}`,
/// `${VAR:-}`, `$(cat file)`) or `%` (`%s`, `%(token)s`), template
/// expressions (`{{ vault_pw }}`, `{token}`), `<your-key>`-style angle
/// brackets. Placeholders: the words and fragments above (`changeme`,
/// `your-token`, AWS's documented `...EXAMPLE` keys); a run of `xxxx` (any
/// case) when `x`s make up at least a third of the value (`hf_xxxx...`,
/// `xxxx-xxxx`, `AKIAXXXXXXXXXXXXXXXX`: a random 60-character key holds
/// four `x`s in a row about once in 15,000 keys, and such a key is a secret;
/// found by tao-secrets' formats property); and values of six or more bytes
/// made of at most two distinct bytes (`00000000`).
pub fn is_placeholder(value: &[u8]) -> bool {
    let v = trim_quotes(value);
    if v.is_empty() {
        return true;
    }
    match v[0] {
        b'$' | b'%' | b'{' | b'<' => return true,
        _ => {}
    }
    if v.windows(2).any(|w| w == b"{{" || w == b"${") || (v.contains(&b'<') && v.contains(&b'>')) {
        return true;
    }
    let lower = v.to_ascii_lowercase();
    if PLACEHOLDER_WORDS.iter().any(|w| lower == w.as_bytes()) {
        return true;
    }
    if PLACEHOLDER_PARTS
        .iter()
        .any(|p| memchr::memmem::find(&lower, p.as_bytes()).is_some())
    {
        return true;
    }
    if memchr::memmem::find(&lower, b"xxxx").is_some()
        && 3 * lower.iter().filter(|&&b| b == b'x').count() >= lower.len()
    {
        return true;
    }
    if v.len() >= 6 {
        let mut seen = [false; 256];
        let mut distinct = 0;
        for &b in v {
            if !seen[b as usize] {
                seen[b as usize] = true;
                distinct += 1;
            }
        }
        if distinct <= 2 {
            return true;
        }
    }
    false
}

fn trim_quotes(v: &[u8]) -> &[u8] {
    let mut v = v;
    while let Some((&f, rest)) = v.split_first() {
        if f == b'"' || f == b'\'' || f == b'\\' {
            v = rest;
        } else {
            break;
        }
    }
    while let Some((&l, rest)) = v.split_last() {
        if l == b'"' || l == b'\'' || l == b'\\' {
            v = rest;
        } else {
            break;
        }
    }
    v
}

/// Whether the words between a vendor's name and a hex string (the `name`
/// group of a keyword-scoped hex rule such as `wandb-api-key`) leave it a
/// key: false when they say it is a git object or a digest (`commit`,
/// `sha`, `hash`, `revision`, `rev `, `checkout`, `git`, `digest`, `md5`),
/// so `wandb: code commit <40 hex>` is not called a W&B key.
pub fn vendor_context_is_key(context: &[u8]) -> bool {
    let lower = context.to_ascii_lowercase();
    ![
        &b"commit"[..],
        b"sha",
        b"hash",
        b"revision",
        b"rev ",
        b"rev:",
        b"rev=",
        b"checkout",
        b"git",
        b"digest",
        b"md5",
    ]
    .iter()
    .any(|w| memchr::memmem::find(&lower, w).is_some())
}

/// Whether the token in `secret` (the masked span of a token rule: bytes;
/// the token is what follows its first `.`, so the prefix of `s.` + token
/// does not count, or all of it when it has no `.`) holds an ASCII digit,
/// an upper-case and a lower-case letter, as a random base62 token almost
/// always does and a word, an identifier or a file name rarely does
/// (`s.getElementsByTagName`). Rule `vault-legacy-token`
/// (rules/builtin.toml; gitleaks allowlists letters-only `s.` tokens for
/// the same reason).
pub fn is_mixed_token(secret: &[u8]) -> bool {
    let token = match memchr::memchr(b'.', secret) {
        Some(i) => &secret[i + 1..],
        None => secret,
    };
    token.iter().any(u8::is_ascii_digit)
        && token.iter().any(u8::is_ascii_uppercase)
        && token.iter().any(u8::is_ascii_lowercase)
}

/// Whether a name matched by an assignment rule is a password-like name
/// (`PASSWORD`, `db_passwd`, `PWD`, `DB_PASS`), which gets the lower thresholds of
/// [`assignment_value_is_secret`].
pub fn is_password_name(name: &[u8]) -> bool {
    let lower = name.to_ascii_lowercase();
    memchr::memmem::find(&lower, b"passw").is_some()
        || lower.ends_with(b"pwd")
        || lower.ends_with(b"pass")
}

/// Whether a lowercase name names public key material (`public_key`,
/// `pubkey`, `ssh_pub_key`, `publickey`, `public-key`): not a secret. A
/// name that only contains `pub` (`PUB_TOKEN`, `NPM_PUBLISH_TOKEN`,
/// `PYPI_PUBLISH_PASSWORD`) is judged like any other secret-looking name.
fn is_public_key_name(lname: &[u8]) -> bool {
    const PUBLIC_KEY: [&[u8]; 6] = [
        b"pubkey",
        b"pub_key",
        b"pub-key",
        b"publickey",
        b"public_key",
        b"public-key",
    ];
    PUBLIC_KEY
        .iter()
        .any(|k| memchr::memmem::find(lname, k).is_some())
}

/// Whether `name = value` (a literal assigned to a secret-looking name) is
/// a secret.
///
/// Rejected (not a secret): placeholders and references
/// ([`is_placeholder`]); names of public or non-secret material
/// (`public_key`, `pubkey`, `*_id`, `tokenizer`); paths (`/x`, `~/x`,
/// `./x`); URLs (handled by `url-credentials`); code (`os.environ[...]`,
/// `get_token()`, `args.token`, `self.key`); values without a letter;
/// values that read as words (`created_at_v2_index`: every `_`/`-`/`.`
/// separated part is lowercase letters, digits, or at most 3 bytes; for
/// password names only when the value has such separators, so `hunter22`
/// stays a password).
///
/// Kept: password names with at least 6 bytes, a digit or symbol, and an
/// entropy of at least 2.3 bits; other names with at least 12 bytes, a
/// letter and a digit, and an entropy of at least 3.0 bits (detect-secrets'
/// hex limit; gitleaks uses 3.5 for its generic rule, which also needs a
/// longer value).
pub fn assignment_value_is_secret(name: &[u8], value: &[u8]) -> bool {
    // Cheapest rejections first: most candidates in logs are `x_token=3`.
    if value.len() < 6 || !value.iter().any(u8::is_ascii_alphabetic) {
        return false;
    }
    if is_placeholder(value) {
        return false;
    }
    let lname = name.to_ascii_lowercase();
    if is_public_key_name(&lname)
        || lname.ends_with(b"_id")
        || memchr::memmem::find(&lname, b"tokenizer").is_some()
    {
        return false;
    }
    let v = value;
    if v.starts_with(b"/") || v.starts_with(b"~") || v.starts_with(b"./") || v.starts_with(b"../") {
        return false;
    }
    if memchr::memmem::find(v, b"://").is_some() {
        return false;
    }
    if v.iter()
        .any(|&b| matches!(b, b'(' | b')' | b'[' | b']' | b'{' | b'}'))
    {
        return false;
    }
    if is_dotted_identifier(v) {
        return false;
    }
    let has_letter = v.iter().any(u8::is_ascii_alphabetic);
    let has_digit = v.iter().any(u8::is_ascii_digit);
    let has_symbol = v.iter().any(|b| b.is_ascii_punctuation() || *b >= 0x80);
    if !has_letter {
        return false;
    }
    let password = is_password_name(name);
    let has_separator = v.iter().any(|b| matches!(b, b'_' | b'-' | b'.' | b'/'));
    // A password may be a word with digits (`hunter22`); other values and
    // separated words (`my_password_file`) must not read as words.
    if (!password || has_separator) && looks_like_words(v) {
        return false;
    }
    let entropy = shannon_entropy(v);
    if password {
        v.len() >= 6 && (has_digit || has_symbol) && entropy >= 2.3
    } else {
        v.len() >= 12 && has_digit && entropy >= 3.0
    }
}

/// A cheap test on the whole text matched by an assignment rule (optional
/// boundary byte, name, separator, value), before its capture groups are
/// resolved: false when the value cannot pass [`assignment_value_is_secret`]
/// (shorter than 6 bytes or without a letter), e.g. `pad_token=3`.
///
/// The name holds no `=` or `:`, so the value is everything after the first
/// of them past the first byte; the quotes and spaces counted with it only
/// make the estimate longer, never shorter.
pub fn assignment_may_hold_secret(matched: &[u8]) -> bool {
    let body = matched.get(1..).unwrap_or(b"");
    let Some(sep) = body.iter().position(|&b| b == b'=' || b == b':') else {
        return true;
    };
    let value = &body[sep + 1..];
    value.len() >= 6 && value.iter().any(u8::is_ascii_alphabetic)
}

/// `a.b`, `os.environ`, `self.token`: identifiers joined by dots.
fn is_dotted_identifier(v: &[u8]) -> bool {
    if !v.contains(&b'.') {
        return false;
    }
    v.split(|&b| b == b'.').all(|part| {
        !part.is_empty()
            && (part[0].is_ascii_alphabetic() || part[0] == b'_')
            && part.iter().all(|b| b.is_ascii_alphanumeric() || *b == b'_')
            && !part.iter().any(u8::is_ascii_digit)
    })
}

/// Whether a value reads as words joined by separators, e.g.
/// `created_at_v2_index`, `my-bucket-name`, `float32`: every part split on
/// `_`, `-`, `.`, `/` is all lowercase letters, all uppercase letters, all
/// digits, or at most 3 bytes, and there are no more than 8 digits in all.
fn looks_like_words(v: &[u8]) -> bool {
    let digits = v.iter().filter(|b| b.is_ascii_digit()).count();
    if digits > 8 {
        return false;
    }
    v.split(|&b| matches!(b, b'_' | b'-' | b'.' | b'/'))
        .all(|part| {
            part.len() <= 3
                || part.iter().all(u8::is_ascii_lowercase)
                || part.iter().all(u8::is_ascii_uppercase)
                || part.iter().all(u8::is_ascii_digit)
                || is_word_then_digits(part)
        })
}

/// `float32`, `v100`, `resnet50`: lowercase letters followed by a few digits.
fn is_word_then_digits(part: &[u8]) -> bool {
    let letters = part.iter().take_while(|b| b.is_ascii_lowercase()).count();
    let rest = &part[letters..];
    letters >= 1 && rest.len() <= 4 && rest.iter().all(u8::is_ascii_digit)
}

/// Whether `candidate` (84 base64 characters) decodes to an NGC legacy API
/// key: `<alphanumerics>:<uuid>` with a lowercase-hex 8-4-4-4-12 UUID.
pub fn is_ngc_legacy_key(candidate: &[u8]) -> bool {
    let Ok(decoded) = base64::engine::general_purpose::STANDARD.decode(candidate) else {
        return false;
    };
    let Some(colon) = decoded.iter().position(|&b| b == b':') else {
        return false;
    };
    let (id, uuid) = (&decoded[..colon], &decoded[colon + 1..]);
    if id.is_empty() || !id.iter().all(u8::is_ascii_alphanumeric) || uuid.len() != 36 {
        return false;
    }
    uuid.iter().enumerate().all(|(i, &b)| match i {
        8 | 13 | 18 | 23 => b == b'-',
        _ => b.is_ascii_hexdigit(),
    })
}

/// Whether `candidate` (the credentials of an `Authorization: Basic` header)
/// is a literal user and password rather than an example or a placeholder.
///
/// RFC 7617 section 2: the credentials are the base64 (RFC 4648 section 4;
/// padding is accepted but not required here) of `user-id ":" password`,
/// UTF-8, no control characters, and the user-id holds no colon. Kept when
/// it decodes so and either the password passes the password-name filters
/// of [`assignment_value_is_secret`] (6+ bytes, a digit or symbol, not a
/// placeholder such as `user:pass` or `user:changeme`), or the password is
/// at most one byte and the user-id passes the key filters (APIs that take
/// a key as the user name, `KEY:` or `KEY:X`). The RFC's own example
/// `Aladdin:open sesame` is not kept (a phrase: no digit or symbol).
pub fn is_basic_credential(candidate: &[u8]) -> bool {
    let trimmed = candidate
        .iter()
        .rposition(|&b| b != b'=')
        .map_or(&candidate[..0], |i| &candidate[..=i]);
    let Ok(decoded) = base64::engine::general_purpose::STANDARD_NO_PAD.decode(trimmed) else {
        return false;
    };
    let Ok(text) = std::str::from_utf8(&decoded) else {
        return false;
    };
    if text.chars().any(char::is_control) {
        return false;
    }
    let Some((user, password)) = text.split_once(':') else {
        return false;
    };
    if password.len() <= 1 {
        return assignment_value_is_secret(b"api_key", user.as_bytes());
    }
    assignment_value_is_secret(b"password", password.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entropy_orders_random_above_words() {
        assert_eq!(shannon_entropy(b"aaaa"), 0.0);
        assert!((shannon_entropy(b"ab") - 1.0).abs() < 1e-9);
        assert!(shannon_entropy(b"Xk29fQzLm3PwA8rT") > shannon_entropy(b"password"));
    }

    #[test]
    fn a_mixed_token_has_a_digit_and_both_cases() {
        assert!(is_mixed_token(b"s.FAKEtaoQw3rTy9uI0pAsDfGh"));
        assert!(!is_mixed_token(b"s.getElementsByTagNameNSx"));
        assert!(!is_mixed_token(b"s.abcdefghijklmnopqrstuv12"));
        assert!(!is_mixed_token(b"s.ABCDEFGHIJKLMNOPQRSTUV12"));
        assert!(is_mixed_token(b"Ab3"));
    }

    #[test]
    fn references_and_placeholders_are_not_secrets() {
        for v in [
            "$HF_TOKEN",
            "${NGC_KEY}",
            "${VAR:-}",
            "\"$HF_TOKEN\"",
            "<your-key>",
            "xxxxxxxxxxxx",
            "hf_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
            "xxxx-xxxx-xxxx",
            "AKIAXXXXXXXXXXXXXXXX",
            "changeme",
            "%s",
            "{{ vault_password }}",
            "AKIAIOSFODNN7EXAMPLE",
            "00000000000",
            "password",
            "",
        ] {
            assert!(is_placeholder(v.as_bytes()), "{v}");
        }
        for v in [
            "hunter2x",
            "Xk29fQzLm3PwA8rT",
            "hf_FakeTokenQrStUvWxYz",
            // A random key with four x's together by chance (the formats
            // property's seed).
            "sk-proj-2tCWb2A07jqFS61KIk20a5J92S4xxXXA5zEmDqJxDap1O07ACqrGqPHGLBqMrXy",
        ] {
            assert!(!is_placeholder(v.as_bytes()), "{v}");
        }
    }

    #[test]
    fn assignment_filters() {
        let yes = |n: &str, v: &str| assignment_value_is_secret(n.as_bytes(), v.as_bytes());
        assert!(yes("DB_PASSWORD", "hunter22"));
        assert!(yes("MY_API_KEY", "Zk3vQ9pL2mX8rT5wY7nB"));
        assert!(!yes("MY_API_KEY", "created_at_v2_index"));
        assert!(!yes("token", "os.environ"));
        assert!(!yes("key", "get_key"));
        assert!(!yes("SSH_KEY", "/home/u/.ssh/id_ed25519"));
        assert!(!yes("public_key", "AAAAC3NzaC1lZDI1NTE5AAAAIFakeFakeFake"));
        // `pub` inside a token or password name is no public key.
        assert!(yes("PUB_TOKEN", "Xk9fQ2mZp7LwR4tY"));
        assert!(yes("NPM_PUBLISH_TOKEN", "Xk9fQ2mZp7LwR4tY"));
        assert!(!yes("SSH_PUB_KEY", "AAAAC3NzaC1lZDI1NTE5AAAAIFakeFakeFake"));
        assert!(!yes("cache_key", "12345"));
        assert!(!yes("password", "hunter"));
        assert!(!yes("sort_key", "resnet50"));
    }

    #[test]
    fn assignment_precheck_is_conservative() {
        assert!(!assignment_may_hold_secret(b" pad_token=3"));
        assert!(!assignment_may_hold_secret(b"max_key: 1024"));
        assert!(assignment_may_hold_secret(b" DB_PASSWORD='hunter22'"));
        assert!(assignment_may_hold_secret(b"=api_key=abcdef=="));
        assert!(assignment_may_hold_secret(b"\"key\": \"Zk3vQ9\""));
    }

    #[test]
    fn basic_credentials_decode_to_a_real_looking_password() {
        use base64::Engine as _;
        let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
        for yes in [
            "user:password123",
            "fakeuser:Fak3Passw0rd!9",
            ":Tr0ub4dor&3x",
            "FAKEX0t0ZBfdTEmxI6CmuxV5:",
            "FAKEX0t0ZBfdTEmxI6CmuxV5:X",
        ] {
            assert!(is_basic_credential(b64(yes).as_bytes()), "{yes}");
            let unpadded = b64(yes).trim_end_matches('=').to_string();
            assert!(is_basic_credential(unpadded.as_bytes()), "{yes} unpadded");
        }
        for no in [
            "Aladdin:open sesame",
            "user:pass",
            "admin:admin",
            "user:changeme",
            "user:${PASSWORD}",
            "no colon here at all",
            "fakeuser:",
            "user:pa\u{7}ss123",
        ] {
            assert!(!is_basic_credential(b64(no).as_bytes()), "{no}");
        }
        assert!(!is_basic_credential(b"not-base64!!"));
        assert!(!is_basic_credential(&[0xff, 0xfe]));
        assert!(!is_basic_credential(b""));
    }

    #[test]
    fn ngc_legacy_decode_check() {
        use base64::Engine as _;
        let raw = b"FakeNgcLegacyKeyForTests01:0f0e0d0c-1234-4abc-8def-0123456789ab";
        let enc = base64::engine::general_purpose::STANDARD.encode(raw);
        assert!(is_ngc_legacy_key(enc.as_bytes()), "{enc}");
        let other = base64::engine::general_purpose::STANDARD.encode([b'q'; 63]);
        assert!(!is_ngc_legacy_key(other.as_bytes()));
    }
}
