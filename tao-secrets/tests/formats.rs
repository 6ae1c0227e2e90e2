//! A property per common ML-stack secret format (checked against the
//! public rule sets of gitleaks, detect-secrets and trufflehog, and the
//! vendors' docs cited in rules/builtin.toml): a generated secret of that
//! format (not a documented placeholder: [`is_a_secret`]; above its
//! rule's entropy floor where it has one), embedded in generated text, is always masked, by
//! `redact_line`, by `redact_text` and by lint.

use proptest::prelude::*;
use tao_secrets::Redactor;

fn red() -> &'static Redactor {
    static R: std::sync::OnceLock<Redactor> = std::sync::OnceLock::new();
    R.get_or_init(|| Redactor::builder().build().unwrap())
}

/// `n` characters of `alphabet`, from proptest's seed.
fn chars(
    alphabet: &'static str,
    n: std::ops::RangeInclusive<usize>,
) -> impl Strategy<Value = String> {
    let a: Vec<char> = alphabet.chars().collect();
    prop::collection::vec(prop::sample::select(a), n).prop_map(|v| v.into_iter().collect())
}

const ALNUM: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const URLSAFE: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-";
const HEX: &str = "0123456789abcdef";
/// Password bytes that end no value and start no placeholder.
const PW: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789!@#^*+";
/// Password bytes a URL's userinfo may hold unencoded (RFC 3986: no `@`,
/// `/` or `:` there).
const URL_PW: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789!#^*+";

/// Mixed-case with a digit (what a generated key or password has; a value
/// of one case only may read as a word or a hash to the generic filters).
fn mixed(s: &str) -> bool {
    s.bytes().any(|b| b.is_ascii_digit())
        && s.bytes().any(|b| b.is_ascii_uppercase())
        && s.bytes().any(|b| b.is_ascii_lowercase())
}

/// (line with the secret, the secret) for each format.
fn secret_line() -> impl Strategy<Value = (String, String)> {
    let hf = chars(ALNUM, 34..=34).prop_map(|s| {
        let t = format!("hf_{s}");
        (format!("HF_TOKEN={t}"), t)
    });
    let ngc = chars(URLSAFE, 60..=80).prop_map(|s| {
        let t = format!("nvapi-{s}");
        (format!("ngc config set --key {t}"), t)
    });
    let aws = chars("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16..=16).prop_map(|s| {
        let t = format!("AKIA{s}");
        (format!("aws_access_key_id = {t}"), t)
    });
    let gh = chars(ALNUM, 36..=40).prop_map(|s| {
        let t = format!("ghp_{s}");
        (format!("git clone https://{t}@github.com/o/r"), t)
    });
    let ghf = chars(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_",
        82..=82,
    )
    .prop_map(|s| {
        let t = format!("github_pat_{s}");
        (format!("GH_PAT {t} used"), t)
    });
    let slack = (chars("0123456789", 10..=13), chars(ALNUM, 24..=24)).prop_map(|(d, s)| {
        let t = format!("xoxb-{d}-{d}-{s}");
        (format!("slack token {t}"), t)
    });
    // The rule has an entropy floor (`min_entropy = 3.0`,
    // rules/builtin.toml): a random key is far above it, a shrunk one
    // (`sk-proj-AAAA...`) may not be.
    let openai = chars(URLSAFE, 48..=64)
        .prop_filter("mixed", |s| mixed(s))
        .prop_map(|s| {
            let t = format!("sk-proj-{s}");
            (format!("client = OpenAI(api_key=\"{t}\")"), t)
        })
        .prop_filter("above the rule's entropy floor", |(_, t)| {
            tao_secrets::validate::shannon_entropy(t.as_bytes()) >= 3.0
        });
    let gcp = chars(URLSAFE, 35..=35).prop_map(|s| {
        let t = format!("AIza{s}");
        (format!("key {t} ok"), t)
    });
    let wandb = chars(HEX, 40..=40)
        .prop_filter("a key has letters and digits", |s| {
            s.bytes().any(|b| b.is_ascii_digit()) && s.bytes().any(|b| b.is_ascii_alphabetic())
        })
        .prop_map(|s| (format!("wandb login {s}"), s));
    let wandb_env = chars(HEX, 40..=40)
        .prop_filter("a key has letters and digits", |s| {
            s.bytes().any(|b| b.is_ascii_digit()) && s.bytes().any(|b| b.is_ascii_alphabetic())
        })
        .prop_map(|s| (format!("export WANDB_API_KEY={s}"), s));
    let password = (
        chars("ABCDEFGHIJKLMNOPQRSTUVWXYZ_", 2..=12),
        chars(PW, 10..=24),
    )
        .prop_filter("mixed", |(_, p)| mixed(p))
        .prop_map(|(n, p)| (format!("{n}_PASSWORD={p}"), p));
    let token = (
        chars("ABCDEFGHIJKLMNOPQRSTUVWXYZ", 2..=10),
        chars(ALNUM, 16..=40),
    )
        .prop_filter("mixed", |(_, p)| mixed(p))
        .prop_map(|(n, p)| (format!("export {n}_TOKEN=\"{p}\""), p));
    let secret = (
        chars("ABCDEFGHIJKLMNOPQRSTUVWXYZ", 2..=10),
        chars(ALNUM, 16..=40),
    )
        .prop_filter("mixed", |(_, p)| mixed(p))
        .prop_map(|(n, p)| (format!("{n}_SECRET: '{p}'"), p));
    let url = chars(URL_PW, 10..=24)
        .prop_filter("mixed", |p| mixed(p))
        .prop_map(|p| (format!("redis://:{p}@redis.internal:6379/0"), p));
    prop_oneof![
        hf,
        ngc,
        aws,
        gh,
        ghf,
        slack,
        openai,
        gcp,
        wandb,
        wandb_env,
        password,
        token,
        secret,
        url,
        other_vendor_line(),
        command_line_vendor_line()
    ]
    .prop_filter("a secret, not a placeholder", |(_, s)| is_a_secret(s))
}

/// What the promise covers: a value of the format that is not one of the
/// documented placeholders (`validate::is_placeholder`: a placeholder word
/// or fragment, mostly `x`s, two distinct bytes). A random key is almost
/// never one; a shrunk one (`AAAA...`) may be.
fn is_a_secret(s: &str) -> bool {
    !tao_secrets::validate::is_placeholder(s.as_bytes())
}

/// Formats a new user brought (the first fakes of each were not caught):
/// Databricks and Docker Hub tokens, Discord and Teams webhooks,
/// pre-signed URL signatures, and a password on a curl command line. The formats are those cited in rules/builtin.toml.
fn other_vendor_line() -> impl Strategy<Value = (String, String)> {
    let databricks = chars(HEX, 32..=32).prop_map(|s| {
        let t = format!("dapi{s}");
        (format!("databricks configure --host h {t}"), t)
    });
    let docker = chars(URLSAFE, 27..=27).prop_map(|s| {
        let t = format!("dckr_pat_{s}");
        (format!("using {t} for hub"), t)
    });
    let discord = (chars("0123456789", 17..=19), chars(URLSAFE, 60..=68)).prop_map(|(id, s)| {
        let t = format!("{id}/{s}");
        (format!("notify: https://discord.com/api/webhooks/{t}"), t)
    });
    let teams = (chars(HEX, 32..=32), chars(HEX, 32..=32)).prop_map(|(a, b)| {
        let t = format!("webhookb2/{a}@{b}/IncomingWebhook/{a}/{b}");
        (format!("url https://contoso.webhook.office.com/{t}"), t)
    });
    let sig = (
        prop::sample::select(vec!["sig", "X-Amz-Signature", "X-Goog-Signature"]),
        chars(ALNUM, 40..=64),
    )
        .prop_map(|(k, s)| {
            (
                format!("wget 'https://acct.example.net/c/f?sv=2022-11-02&sp=r&{k}={s}&x=1'"),
                s,
            )
        });
    let curl = chars(PW, 10..=24)
        .prop_filter("mixed", |p| mixed(p))
        .prop_map(|p| (format!("curl -sS -u alice:{p} https://h/x"), p));
    prop_oneof![databricks, docker, discord, teams, sig, curl]
}

/// A generated token `prefix` + `body` that is above `floor`, the rule's
/// entropy floor (`min_entropy` in rules/builtin.toml): a random token is
/// far above it, a shrunk one (`npm_AAAA...`) may not be.
fn above_floor(t: &str, floor: f64) -> bool {
    tao_secrets::validate::shannon_entropy(t.as_bytes()) >= floor
}

/// Stripe, npm and Vault tokens and passwords on sshpass and MySQL/MariaDB
/// command lines (rules `stripe-secret-key`, `npm-access-token`,
/// `vault-token`, `sshpass-password`, `mysql-password`; formats as cited
/// there).
fn command_line_vendor_line() -> impl Strategy<Value = (String, String)> {
    let stripe = (
        prop::sample::select(vec!["sk_live_", "rk_live_", "sk_test_", "rk_test_"]),
        chars(ALNUM, 24..=99),
    )
        .prop_map(|(p, s)| {
            let t = format!("{p}{s}");
            (format!("STRIPE_KEY {t} loaded"), t)
        })
        .prop_filter("above the rule's entropy floor", |(_, t)| {
            above_floor(t, 3.0)
        });
    let npm = chars(ALNUM, 36..=36)
        .prop_map(|s| {
            let t = format!("npm_{s}");
            (format!("//registry.npmjs.org/:_authToken={t}"), t)
        })
        .prop_filter("above the rule's entropy floor", |(_, t)| {
            above_floor(t, 3.0)
        });
    let vault = (
        prop::sample::select(vec!["hvs.", "hvb."]),
        chars(URLSAFE, 90..=160),
    )
        .prop_map(|(p, s)| {
            let t = format!("{p}{s}");
            (format!("vault login {t}"), t)
        })
        .prop_filter("above the rule's entropy floor", |(_, t)| {
            above_floor(t, 3.0)
        });
    let sshpass = (
        prop::sample::select(vec!["-p ", "-p", "-v -p ", "-f /dev/null -P pw: -p"]),
        chars(PW, 8..=24),
    )
        .prop_filter("mixed", |(_, p)| mixed(p))
        .prop_map(|(o, p)| (format!("sshpass {o}{p} ssh -p 2222 dtn01 true"), p));
    let mysql = (
        prop::sample::select(vec![
            "mysql -u tao -p",
            "/usr/bin/mysqldump -h db --password=",
            "mariadb -uroot -p",
        ]),
        chars(PW, 8..=24),
    )
        .prop_filter("mixed", |(_, p)| mixed(p))
        .prop_map(|(c, p)| (format!("{c}{p} taodb"), p));
    // Legacy (before Vault 1.10) service tokens: `s.` + 24 base62, an
    // optional `.` + namespace id; batch tokens: `b.` + 90 or more
    // (rule `vault-legacy-token`: a digit, an upper and a lower letter).
    let vault_legacy = (
        prop::sample::select(vec![
            "vault login ",
            "export VAULT_TOKEN=",
            "X-Vault-Token: ",
            "token=\"",
        ]),
        prop_oneof![
            (chars(ALNUM, 24..=24), prop::option::of(chars(ALNUM, 5..=5))).prop_map(|(s, ns)| {
                match ns {
                    Some(ns) => format!("s.{s}.{ns}"),
                    None => format!("s.{s}"),
                }
            }),
            chars(URLSAFE, 90..=160).prop_map(|s| format!("b.{s}")),
        ],
    )
        .prop_filter("mixed, above the rule's entropy floor", |(_, t)| {
            mixed(&t[2..t.len().min(26)]) && above_floor(t, 3.0)
        })
        .prop_map(|(before, t)| (format!("{before}{t} ok"), t));
    prop_oneof![stripe, npm, vault, vault_legacy, sshpass, mysql]
}

proptest! {
    #![proptest_config(tao_core::testing::config(512))]

    #[test]
    fn every_format_is_masked_in_any_text(
        (line, secret) in secret_line(),
        before in chars("abcdefghijklmnopqrstuvwxyz ", 0..=24),
        after in chars("abcdefghijklmnopqrstuvwxyz ", 0..=24),
        lines_before in chars("abcdefghijklmnopqrstuvwxyz \n", 0..=60),
    ) {
        let text = format!("{lines_before}\n{before} {line} {after}\n");
        let r = red();
        let one = format!("{before} {line} {after}");
        let masked = String::from_utf8_lossy(&r.redact_line(one.as_bytes())).into_owned();
        prop_assert!(!masked.contains(&secret), "redact_line: {masked}");
        let masked = String::from_utf8_lossy(&r.redact_text(text.as_bytes())).into_owned();
        prop_assert!(!masked.contains(&secret), "redact_text: {masked}");
        prop_assert!(!r.lint(&text).ok, "lint approved: {text}");
    }
}

/// Feed `text` to a [`tao_secrets::Filter`] cut at `cuts` (fractions of
/// its length, any byte: inside a secret, inside a multi-byte character)
/// and return everything it wrote.
fn filtered(r: &Redactor, text: &[u8], cuts: &[f64]) -> Vec<u8> {
    let mut at: Vec<usize> = cuts
        .iter()
        .map(|c| ((c * text.len() as f64) as usize).min(text.len()))
        .collect();
    at.sort_unstable();
    let mut f = tao_secrets::Filter::new(r);
    let mut out = Vec::new();
    let mut from = 0;
    for a in at.into_iter().chain([text.len()]) {
        f.push(&text[from..a], &mut out).unwrap();
        from = a;
    }
    f.finish(&mut out).unwrap();
    out
}

/// An exact secret value under an unusual variable name: `(name, value,
/// the value's lines that must be masked)`. Some values hold a newline
/// (a PEM-like or multi-line env value): each line of 8 or more bytes is
/// masked on its own (`RedactorBuilder::secret_value`).
fn exact_secret() -> impl Strategy<Value = (String, String, Vec<String>)> {
    let part = || chars(PW, 10..=30).prop_filter("mixed", |p| mixed(p));
    (
        chars("ABCDEFGHIJKLMNOPQRSTUVWXYZ_", 3..=16),
        part(),
        prop::option::of(part()),
    )
        .prop_map(|(name, a, b)| {
            let name = format!("X{name}");
            match b {
                Some(b) => (name, format!("{a}\n{b}"), vec![a, b]),
                None => (name, a.clone(), vec![a]),
            }
        })
}

/// Filler with multi-byte characters, so cuts fall inside them.
const FILLER: &str = "abc xyz \u{e9}\u{20ac}\u{1f600}\t.:=";

proptest! {
    #![proptest_config(tao_core::testing::config(384))]

    /// Promise: "byte for byte" and "no secret leaks" for the streaming
    /// filter (tao-secrets `stream` module doc: "a secret split across two
    /// pushes is never printed in part"; tao-redact(1): output does not
    /// depend on how stdin arrives). A text of generated lines holding
    /// secrets of every catalogue format and exact values under unusual
    /// names (some with a newline inside), fed to `Filter::push` in up to
    /// 12 pieces cut anywhere (inside a secret, inside a UTF-8 character),
    /// gives exactly the output of one push, that output equals
    /// `redact_text` of the whole text, and no secret (nor any line of a
    /// multi-line value) is in it.
    #[test]
    fn filter_output_does_not_depend_on_the_cuts(
        secrets in prop::collection::vec(secret_line(), 1..4),
        (name, value, parts) in exact_secret(),
        filler in prop::collection::vec(chars(FILLER, 0..=12), 6),
        cuts in prop::collection::vec(0.0..1.0f64, 0..12),
        last_newline in any::<bool>(),
    ) {
        let r = Redactor::builder().secret_value(&name, value.as_bytes()).build().unwrap();
        let mut text = format!("{}\n", filler[0]);
        for (i, (line, _)) in secrets.iter().enumerate() {
            text.push_str(&format!("{} {line} {}\n", filler[1 + i], filler[4]));
        }
        text.push_str(&format!("{} {name}={value} {}", filler[5], filler[0]));
        if last_newline {
            text.push('\n');
        }
        let whole = filtered(&r, text.as_bytes(), &[]);
        let cut = filtered(&r, text.as_bytes(), &cuts);
        prop_assert_eq!(
            String::from_utf8_lossy(&cut),
            String::from_utf8_lossy(&whole),
            "cuts {:?}", cuts
        );
        let text_once = r.redact_text(text.as_bytes()).into_owned();
        prop_assert_eq!(
            String::from_utf8_lossy(&whole),
            String::from_utf8_lossy(&text_once)
        );
        let out = String::from_utf8_lossy(&whole);
        for (_, s) in &secrets {
            prop_assert!(!out.contains(s.as_str()), "{} in {}", s, out);
        }
        for p in &parts {
            prop_assert!(!out.contains(p.as_str()), "{} in {}", p, out);
        }
    }
}
