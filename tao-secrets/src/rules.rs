//! The rule catalogue as data: `rules/builtin.toml` is compiled into the
//! binary, and a rules file of the same shape (`--rules FILE`) extends it.
//! This module parses and compiles rules; the scanner (`scan.rs`) runs them.
//!
//! The file format is documented at the top of `rules/builtin.toml`; every
//! built-in rule there cites the source of its format.

use regex::bytes::{Regex, RegexBuilder};
use serde::Deserialize;
use tao_core::{Error, Result};

/// In a fragment longer than [`crate::scan::LOCAL_MIN`], a rule's regex runs over
/// `LOCAL_REACH` bytes on each side of each of its keywords (a rule may set
/// its own, shorter, `local_reach` in the catalogue). A match must
/// start within that distance before its keyword (a name or a scheme is
/// never that long); a match that reaches the end of the searched span is
/// matched again over the whole fragment, so long secrets are not cut.
pub(crate) const LOCAL_REACH: usize = 512;

/// The built-in catalogue, as TOML text.
pub const BUILTIN_TOML: &str = include_str!("../rules/builtin.toml");

/// A named post-match check implemented in [`crate::validate`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Validator {
    /// No extra check (placeholders and `min_entropy` still apply).
    None,
    /// [`crate::validate::assignment_value_is_secret`] on the `name` group and the secret.
    Assignment,
    /// [`crate::validate::is_ngc_legacy_key`] on the secret.
    NgcLegacy,
    /// [`crate::validate::is_basic_credential`] on the secret (RFC 7617).
    BasicAuth,
    /// [`crate::validate::vendor_context_is_key`] on the `name` group.
    VendorKey,
    /// [`crate::validate::is_mixed_token`] on the secret.
    MixedToken,
}

/// One compiled rule.
#[derive(Debug, Clone)]
pub struct Rule {
    /// `[a-z0-9-]+`, shown in `[REDACTED:<id>]` and in lint findings.
    pub id: String,
    /// What the secret is.
    pub description: String,
    /// Where the format comes from.
    pub source: String,
    /// Lowercase keywords; the regex runs only on lines containing one
    /// (case-insensitively). Empty: the rule runs on every line.
    pub keywords: Vec<String>,
    /// The match (on bytes, Unicode off).
    pub regex: Regex,
    /// For block rules (PEM): the regex that ends the block.
    pub end: Option<Regex>,
    /// Indices of the capture groups named `secret*`, in group order.
    pub secret_groups: Vec<usize>,
    /// Index of the capture group named `name`, if any (for [`Validator::Assignment`]).
    pub name_group: Option<usize>,
    /// Minimum Shannon entropy (bits per byte) of the masked span.
    pub min_entropy: f64,
    /// Extra check after the match.
    pub validator: Validator,
    /// Whether placeholders and `$VAR` references are skipped.
    pub placeholders: bool,
    /// In a fragment longer than 64 KiB: how many bytes before and after
    /// the start of each keyword the regex runs over (a match must start
    /// within `.0` bytes before its keyword and be found within `.1` bytes
    /// after it; a match reaching the end of that span is extended over
    /// the whole fragment). Default 512 and 512 (`scan::LOCAL_REACH`).
    pub local_reach: (usize, usize),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Catalogue {
    #[serde(default)]
    rule: Vec<RuleSpec>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleSpec {
    id: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    source: String,
    #[serde(default)]
    keywords: Vec<String>,
    regex: String,
    end: Option<String>,
    min_entropy: Option<f64>,
    validate: Option<String>,
    placeholders: Option<bool>,
    local_reach: Option<[usize; 2]>,
}

/// The built-in rules, compiled.
///
/// Errors: [`Error::Internal`] if the compiled-in catalogue is invalid (a
/// unit test keeps that from shipping).
pub fn builtin() -> Result<Vec<Rule>> {
    parse_catalogue(BUILTIN_TOML, "built-in rules").map_err(|e| Error::Internal(e.to_string()))
}

/// Read and compile a rules file (`--rules FILE`).
///
/// Errors: [`Error::Io`] (exit 74) if `path` cannot be read;
/// [`Error::Config`] (exit 78) if it is not a valid catalogue.
pub fn read_rules_file(path: &std::path::Path) -> Result<Vec<Rule>> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::io(format!("reading rules file '{}'", path.display()), e))?;
    parse_catalogue(&text, &format!("'{}'", path.display()))
}

/// [`builtin`], compiled once per process and cloned (a tool that builds a
/// redactor per set of secret names compiles the catalogue once).
///
/// Errors: as [`builtin`].
pub fn builtin_cached() -> Result<Vec<Rule>> {
    static CACHE: std::sync::OnceLock<std::result::Result<Vec<Rule>, String>> =
        std::sync::OnceLock::new();
    CACHE
        .get_or_init(|| builtin().map_err(|e| e.to_string()))
        .clone()
        .map_err(Error::Internal)
}

/// Parse and compile a catalogue in the `rules/builtin.toml` format.
/// `origin` names the file in error messages.
///
/// Errors: [`Error::Config`] naming `origin` and the rule for invalid TOML,
/// an unknown key, a bad id, a regex that does not compile, an unknown
/// `validate` name or a duplicate id.
pub fn parse_catalogue(text: &str, origin: &str) -> Result<Vec<Rule>> {
    let cat: Catalogue = toml::from_str(text).map_err(|e| {
        Error::Config(format!(
            "{origin}: invalid rules file ({}); see rules/builtin.toml for the format",
            e.message()
        ))
    })?;
    let mut rules = Vec::with_capacity(cat.rule.len());
    for spec in cat.rule {
        let rule = compile(spec, origin)?;
        if rules.iter().any(|r: &Rule| r.id == rule.id) {
            return Err(Error::Config(format!(
                "{origin}: rule id '{}' is defined twice; give each rule its own id",
                rule.id
            )));
        }
        rules.push(rule);
    }
    Ok(rules)
}

fn build_regex(pattern: &str, origin: &str, id: &str, field: &str) -> Result<Regex> {
    RegexBuilder::new(pattern)
        .unicode(false)
        .size_limit(32 << 20)
        .dfa_size_limit(16 << 20)
        .build()
        .map_err(|e| {
            Error::Config(format!(
                "{origin}: rule '{id}': {field} does not compile: {}",
                tao_core::cli::one_line(&e.to_string())
            ))
        })
}

fn compile(spec: RuleSpec, origin: &str) -> Result<Rule> {
    let id = spec.id;
    if id.is_empty()
        || !id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    {
        return Err(Error::Config(format!(
            "{origin}: rule id '{id}' must match [a-z0-9-]+"
        )));
    }
    let regex = build_regex(&spec.regex, origin, &id, "regex")?;
    let end = spec
        .end
        .as_deref()
        .map(|p| build_regex(p, origin, &id, "end"))
        .transpose()?;
    let mut secret_groups = Vec::new();
    let mut name_group = None;
    for (i, name) in regex.capture_names().enumerate() {
        match name {
            Some(n) if n.starts_with("secret") => secret_groups.push(i),
            Some("name") => name_group = Some(i),
            _ => {}
        }
    }
    let validator = match spec.validate.as_deref() {
        None => Validator::None,
        Some("assignment") => Validator::Assignment,
        Some("ngc-legacy") => Validator::NgcLegacy,
        Some("basic-auth") => Validator::BasicAuth,
        Some("vendor-key") => Validator::VendorKey,
        Some("mixed-token") => Validator::MixedToken,
        Some(other) => {
            return Err(Error::Config(format!(
                "{origin}: rule '{id}': unknown validate '{other}'; use \"assignment\", \"ngc-legacy\", \"basic-auth\", \"vendor-key\" or \"mixed-token\""
            )))
        }
    };
    if matches!(validator, Validator::Assignment | Validator::VendorKey) && name_group.is_none() {
        return Err(Error::Config(format!(
            "{origin}: rule '{id}': validate = \"assignment\" needs a capture group named `name`"
        )));
    }
    let keywords = spec
        .keywords
        .into_iter()
        .filter(|k| !k.is_empty())
        .map(|k| k.to_ascii_lowercase())
        .collect();
    let local_reach = match spec.local_reach {
        None => (LOCAL_REACH, LOCAL_REACH),
        Some([b, a]) if (1..=LOCAL_REACH).contains(&b) && (1..=LOCAL_REACH).contains(&a) => (b, a),
        Some(x) => {
            return Err(Error::Config(format!(
                "{origin}: rule '{id}': local_reach {x:?} must be two byte counts from 1 to {}",
                LOCAL_REACH
            )))
        }
    };
    Ok(Rule {
        id,
        description: spec.description,
        source: spec.source,
        keywords,
        regex,
        end,
        secret_groups,
        name_group,
        min_entropy: spec.min_entropy.unwrap_or(0.0),
        validator,
        placeholders: spec.placeholders.unwrap_or(true),
        local_reach,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_catalogue_compiles_and_cites_sources() {
        let rules = builtin().unwrap();
        assert!(rules.len() >= 18, "{}", rules.len());
        for r in &rules {
            assert!(!r.source.is_empty(), "rule {} has no source", r.id);
            assert!(
                !r.description.is_empty(),
                "rule {} has no description",
                r.id
            );
            assert!(
                !r.keywords.is_empty(),
                "built-in rule {} has no keywords",
                r.id
            );
        }
    }

    #[test]
    fn bad_rules_files_name_the_problem() {
        let e = parse_catalogue("[[rule]]\nid = \"x\"\nregex = \"(\"\n", "f.toml").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("f.toml: rule 'x': regex does not compile"),
            "{e}"
        );
        assert_eq!(e.code(), tao_core::exit::CONFIG);
        let e = parse_catalogue("[[rule]]\nid = \"X Y\"\nregex = \"a\"\n", "f.toml").unwrap_err();
        assert!(e.to_string().contains("must match"), "{e}");
        let e = parse_catalogue(
            "[[rule]]\nid = \"x\"\nregex = \"a\"\ncolour = 1\n",
            "f.toml",
        )
        .unwrap_err();
        assert!(e.to_string().contains("invalid rules file"), "{e}");
        let e = parse_catalogue(
            "[[rule]]\nid = \"x\"\nregex = \"a\"\n[[rule]]\nid = \"x\"\nregex = \"b\"\n",
            "f.toml",
        )
        .unwrap_err();
        assert!(e.to_string().contains("defined twice"), "{e}");
    }
}
