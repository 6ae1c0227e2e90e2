//! `tao-redact lint`: the gate a script must pass before tao-submit sends
//! it. A script that carries a literal secret is blocked; each finding names
//! the rule, the 1-based line and column, and a preview of the line with
//! every secret masked (the secret itself never appears).
//!
//! The result is the job line's `lint` field (docs/CONTRACT.md):
//! `{ok, sha256, findings:[{rule, line, column, preview}]}`. `sha256` is
//! `tao_core::sha256_hex` of exactly the text examined; tao-submit sends a
//! script only when `ok` is true and that digest matches its `script.text`.

use serde::{Deserialize, Serialize};

use crate::scan::{ScanState, Scratch};
use crate::Redactor;

/// Longest preview, in characters (the line is cut around the finding).
pub const PREVIEW_CHARS: usize = 120;

/// One literal secret found in a script.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Finding {
    /// Rule id (`huggingface-token`, ...) or `env:<NAME>` for the exact
    /// value of a secret named in the environment.
    pub rule: String,
    /// 1-based line number in the script.
    pub line: u64,
    /// 1-based column (in characters) where the secret starts.
    pub column: u64,
    /// The line with every secret masked as `[REDACTED:<rule>]`, cut to at
    /// most [`PREVIEW_CHARS`] characters around the finding.
    pub preview: String,
    /// Where the finding is when not in the script text itself: a step
    /// (`main`, `pre_1`, `post_2`), `spec`, `env.NAME`, or `script` for a
    /// whole-script check; `line` is then the line within that text.
    /// Absent for literal secrets of the script.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<String>,
}

/// The `lint` field of a job line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lint {
    /// True when no finding: the script may be submitted.
    pub ok: bool,
    /// SHA-256 (64 lowercase hex) of the text examined. Only `ok: true`
    /// approves it.
    pub sha256: String,
    /// The findings, in line then column order; empty when `ok`.
    pub findings: Vec<Finding>,
}

impl Lint {
    /// The `lint` field as a JSON value.
    pub fn to_value(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("a Lint always serialises")
    }
}

impl Redactor {
    /// Lint a script: every literal secret (by rule or by exact value) is a
    /// finding. Lines are split on `\n`; a trailing `\r` is ignored.
    pub fn lint(&self, text: &str) -> Lint {
        let mut state = ScanState::default();
        let mut scratch = Scratch::default();
        let mut findings = Vec::new();
        for (i, line) in text.as_bytes().split(|&b| b == b'\n').enumerate() {
            self.scan(line, true, usize::MAX, &mut state, &mut scratch);
            // One finding per masked span: overlapping hits (a token that
            // is also a literal assignment) merge, the first rule names it.
            let mut sorted: Vec<(usize, usize, usize, bool)> = scratch
                .hits
                .iter()
                .map(|h| (h.start, h.label, h.end, h.cont))
                .collect();
            sorted.sort_unstable();
            let mut new: Vec<(usize, usize)> = Vec::new();
            let mut covered = 0;
            for (start, label, end, cont) in sorted {
                if start >= covered && !cont {
                    new.push((start, label));
                }
                covered = covered.max(end);
            }
            if new.is_empty() {
                continue;
            }
            let mut masked = Vec::with_capacity(line.len());
            let mut hits = scratch.hits.clone();
            self.apply(line, &mut hits, line.len(), &mut masked);
            let masked = String::from_utf8_lossy(&masked).into_owned();
            for (start, label) in new {
                let before = String::from_utf8_lossy(&line[..start]);
                let column = before.chars().count() as u64 + 1;
                let rule = self.labels[label].clone();
                let preview = cut_preview(&masked, &before, &rule);
                findings.push(Finding {
                    rule,
                    line: i as u64 + 1,
                    column,
                    preview,
                    step: None,
                });
            }
        }
        Lint {
            ok: findings.is_empty(),
            sha256: tao_core::sha256_hex(text.as_bytes()),
            findings,
        }
    }
}

/// Cut the masked line to [`PREVIEW_CHARS`] characters around the finding.
/// `before` is the original text before the secret; its masked form is at
/// most as long, so the finding lies at or before that many characters.
fn cut_preview(masked: &str, before: &str, rule: &str) -> String {
    let chars: Vec<char> = masked.trim_end_matches('\r').chars().collect();
    if chars.len() <= PREVIEW_CHARS {
        return chars.into_iter().collect();
    }
    let marker = format!("[REDACTED:{rule}]");
    let at = masked
        .find(&marker)
        .map(|b| masked[..b].chars().count())
        .unwrap_or_else(|| before.chars().count().min(chars.len()));
    let start = at.saturating_sub(PREVIEW_CHARS / 3);
    let end = (start + PREVIEW_CHARS).min(chars.len());
    let mut s: String = chars[start..end].iter().collect();
    if start > 0 {
        s.insert(0, '\u{2026}');
    }
    if end < chars.len() {
        s.push('\u{2026}');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clean_script_is_approved_with_its_digest() {
        let red = Redactor::builder().build().unwrap();
        let text = "#!/bin/bash\nexport HF_TOKEN=\"$HF_TOKEN\"\nprintf '%s' \"$NGC_KEY\" | docker login nvcr.io -u '$oauthtoken' --password-stdin\n";
        let lint = red.lint(text);
        assert!(lint.ok, "{lint:?}");
        assert_eq!(lint.sha256, tao_core::sha256_hex(text.as_bytes()));
    }

    #[test]
    fn finding_names_rule_line_column_and_masks_the_preview() {
        let red = Redactor::builder().build().unwrap();
        let tok = "hf_FAKEtaoRedactTestTokenQwErTyUiOpAs";
        let text = format!("#!/bin/bash\n  éx HF_TOKEN={tok} run\n");
        let lint = red.lint(&text);
        assert!(!lint.ok);
        assert_eq!(
            lint.findings,
            vec![Finding {
                rule: "huggingface-token".into(),
                line: 2,
                column: 15,
                preview: "  éx HF_TOKEN=[REDACTED:huggingface-token] run".into(),
                step: None,
            }]
        );
    }

    #[test]
    fn overlapping_hits_are_one_finding() {
        let red = Redactor::builder().build().unwrap();
        // secret-assignment (value) and url-credentials / github-token overlap.
        let text = "export GIT_TOKEN=ghp_FAKEtaoRedactTest0123456789abcdefABCD\n";
        let lint = red.lint(text);
        assert_eq!(lint.findings.len(), 1, "{lint:?}");
        assert_eq!(lint.findings[0].rule, "github-token");
    }

    #[test]
    fn pem_block_is_one_finding() {
        let red = Redactor::builder().build().unwrap();
        let text = "cat > k <<EOF\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n-----END OPENSSH PRIVATE KEY-----\nEOF\n";
        let lint = red.lint(text);
        assert_eq!(lint.findings.len(), 1, "{lint:?}");
        assert_eq!((lint.findings[0].line, lint.findings[0].column), (2, 1));
    }

    #[test]
    fn long_lines_are_cut_around_the_finding() {
        let red = Redactor::builder().build().unwrap();
        let tok = "hf_FAKEtaoRedactTestTokenQwErTyUiOpAs";
        let text = format!("{} {tok} {}", "a".repeat(500), "b".repeat(500));
        let lint = red.lint(&text);
        let p = &lint.findings[0].preview;
        assert!(p.contains("[REDACTED:huggingface-token]"), "{p}");
        assert!(p.chars().count() <= PREVIEW_CHARS + 2, "{p}");
        assert!(!p.contains(tok));
    }
}
