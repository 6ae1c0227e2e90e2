//! The scanner: finds the secret spans in one line (or one window of a very
//! long line) and writes the line with those spans masked.
//!
//! Fast path first, as gitleaks does with its keywords: one case-insensitive
//! Aho-Corasick automaton holds every rule keyword and every exact secret
//! value; a line without a hit is never given to a regex. On a line with
//! hits only the rules whose keywords occur run, then their post-match
//! checks ([`crate::validate`]). Multi-line blocks (PEM private keys) carry
//! a small [`ScanState`] from one line to the next.

use aho_corasick::AhoCorasick;

use crate::rules::{Rule, Validator};
use crate::validate;
use crate::Redactor;

/// A PEM block that has not ended after this many lines is closed (a real
/// 16384-bit RSA key is about 200 lines), so a truncated key in a log does
/// not mask the rest of the log.
pub(crate) const MAX_BLOCK_LINES: u32 = 400;

/// What a prefilter pattern triggers.
#[derive(Debug, Clone)]
pub(crate) enum Trigger {
    /// Run these rules (indices into `Redactor::rules`).
    Rules(Vec<usize>),
    /// Look for exact secret values on this line.
    Exact,
}

/// One span to mask, in bytes of the scanned slice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Hit {
    pub start: usize,
    pub end: usize,
    /// Index into `Redactor::labels`.
    pub label: usize,
    /// A block that goes on past this slice (masked to the slice's end).
    pub open: bool,
    /// The continuation of a block that began on an earlier line (lint
    /// reports a block once, at its BEGIN line).
    pub cont: bool,
}

/// State carried from one line to the next.
#[derive(Debug, Clone, Default)]
pub(crate) struct ScanState {
    /// Inside a block: (rule index, lines masked so far).
    pub block: Option<(usize, u32)>,
}

/// Reused buffers of one scanning run.
#[derive(Debug, Default)]
pub(crate) struct Scratch {
    pub hits: Vec<Hit>,
    trig: Vec<bool>,
}

fn content_end(s: &[u8]) -> usize {
    if s.last() == Some(&b'\r') {
        s.len() - 1
    } else {
        s.len()
    }
}

/// Whether a line inside a PEM block still looks like key material: empty,
/// an RFC 1421 header (`Proc-Type:`, `DEK-Info:`, `Comment:`), or ending in
/// a run of base64 (at least 16 characters, or the whole line).
fn looks_like_block_body(line: &[u8]) -> bool {
    let t = line.trim_ascii();
    if t.is_empty() {
        return true;
    }
    let lower: Vec<u8> = t.iter().take(10).map(u8::to_ascii_lowercase).collect();
    if lower.starts_with(b"proc-type:")
        || lower.starts_with(b"dek-info:")
        || lower.starts_with(b"comment:")
    {
        return true;
    }
    let run = t
        .iter()
        .rev()
        .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'='))
        .count();
    run >= 16 || run == t.len()
}

impl Redactor {
    /// The rules in priority order.
    pub(crate) fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// Find the spans to mask in `frag` (one line without its `\n`, or one
    /// window of a longer line). `at_line_start`: `frag` begins a line.
    /// Matches that start at or after `limit` are left for the next window
    /// (and change no state). Results are in `scratch.hits`, unsorted.
    pub(crate) fn scan(
        &self,
        frag: &[u8],
        at_line_start: bool,
        limit: usize,
        state: &mut ScanState,
        scratch: &mut Scratch,
    ) {
        scratch.hits.clear();
        let mut from = 0;
        if let Some((ri, lines)) = state.block {
            let rule = &self.rules[ri];
            let end_re = rule.end.as_ref().expect("block rules have an end regex");
            if let Some(m) = end_re.find(frag) {
                scratch.hits.push(Hit {
                    start: 0,
                    end: m.end(),
                    label: ri,
                    open: false,
                    cont: true,
                });
                state.block = None;
                from = m.end();
            } else if at_line_start && (lines >= MAX_BLOCK_LINES || !looks_like_block_body(frag)) {
                state.block = None;
            } else {
                scratch.hits.push(Hit {
                    start: 0,
                    end: content_end(frag),
                    label: ri,
                    open: true,
                    cont: true,
                });
                if at_line_start {
                    state.block = Some((ri, lines + 1));
                }
                return;
            }
        }
        self.scan_from(frag, from, limit, state, scratch);
    }

    fn scan_from(
        &self,
        frag: &[u8],
        from: usize,
        limit: usize,
        state: &mut ScanState,
        scratch: &mut Scratch,
    ) {
        let hay = &frag[from..];
        let trig = &mut scratch.trig;
        trig.clear();
        trig.resize(self.rules.len(), false);
        let mut any_exact = false;
        let mut any_rule = false;
        for m in self.prefilter.find_overlapping_iter(hay) {
            match &self.triggers[m.pattern().as_usize()] {
                Trigger::Rules(rs) => {
                    any_rule = true;
                    for &r in rs {
                        trig[r] = true;
                    }
                }
                Trigger::Exact => any_exact = true,
            }
        }
        for &r in &self.always {
            trig[r] = true;
            any_rule = true;
        }
        if any_rule {
            for (ri, rule) in self.rules.iter().enumerate() {
                if !trig[ri] {
                    continue;
                }
                if let Some(end_re) = &rule.end {
                    for m in rule.regex.find_iter(hay) {
                        let s = from + m.start();
                        if s >= limit {
                            break;
                        }
                        if let Some(e) = end_re.find_at(hay, m.end()) {
                            scratch.hits.push(Hit {
                                start: s,
                                end: from + e.end(),
                                label: ri,
                                open: false,
                                cont: false,
                            });
                        } else {
                            scratch.hits.push(Hit {
                                start: s,
                                end: from + content_end(hay),
                                label: ri,
                                open: true,
                                cont: false,
                            });
                            state.block = Some((ri, 0));
                            break;
                        }
                    }
                } else {
                    for caps in rule.regex.captures_iter(hay) {
                        let whole = caps.get(0).expect("group 0 always participates");
                        if from + whole.start() >= limit {
                            break;
                        }
                        let g = rule
                            .secret_groups
                            .iter()
                            .find_map(|&i| caps.get(i))
                            .unwrap_or(whole);
                        let name = rule
                            .name_group
                            .and_then(|i| caps.get(i))
                            .map(|m| m.as_bytes());
                        if !accept(rule, name, g.as_bytes()) {
                            continue;
                        }
                        scratch.hits.push(Hit {
                            start: from + g.start(),
                            end: from + g.end(),
                            label: ri,
                            open: false,
                            cont: false,
                        });
                    }
                }
            }
        }
        if any_exact {
            if let Some(exact) = &self.exact {
                for m in exact.find_iter(hay) {
                    let s = from + m.start();
                    if s >= limit {
                        break;
                    }
                    scratch.hits.push(Hit {
                        start: s,
                        end: from + m.end(),
                        label: self.rules.len() + m.pattern().as_usize(),
                        open: false,
                        cont: false,
                    });
                }
            }
        }
    }

    /// Write `frag[..upto]` to `out` with every hit masked as
    /// `[REDACTED:<label>]`. Overlapping hits merge; the earliest (then the
    /// highest-priority) hit names the mask. Hits are clamped to `upto`.
    pub(crate) fn apply(&self, frag: &[u8], hits: &mut [Hit], upto: usize, out: &mut Vec<u8>) {
        hits.sort_unstable_by_key(|h| (h.start, h.label));
        let mut pos = 0;
        for h in hits.iter() {
            let start = h.start.max(pos).min(upto);
            let end = h.end.min(upto);
            if end <= start {
                if h.start < pos && h.end > pos {
                    pos = h.end.min(upto);
                }
                continue;
            }
            if h.start >= pos {
                out.extend_from_slice(&frag[pos..start]);
                out.extend_from_slice(b"[REDACTED:");
                out.extend_from_slice(self.labels[h.label].as_bytes());
                out.push(b']');
            }
            pos = end;
        }
        if pos < upto {
            out.extend_from_slice(&frag[pos..upto]);
        }
    }
}

/// The post-match checks of one rule on the masked span `secret`.
fn accept(rule: &Rule, name: Option<&[u8]>, secret: &[u8]) -> bool {
    if rule.placeholders && validate::is_placeholder(secret) {
        return false;
    }
    if rule.min_entropy > 0.0 && validate::shannon_entropy(secret) < rule.min_entropy {
        return false;
    }
    match rule.validator {
        Validator::None => true,
        Validator::NgcLegacy => validate::is_ngc_legacy_key(secret),
        Validator::Assignment => validate::assignment_value_is_secret(name.unwrap_or(b""), secret),
    }
}

/// Build the prefilter: rule keywords and exact values, ASCII
/// case-insensitive, as one automaton. Returns the automaton and what each
/// pattern triggers.
pub(crate) fn build_prefilter(
    rules: &[Rule],
    exact: &[Vec<u8>],
) -> tao_core::Result<(AhoCorasick, Vec<Trigger>)> {
    let mut patterns: Vec<Vec<u8>> = Vec::new();
    let mut triggers: Vec<Trigger> = Vec::new();
    for (ri, rule) in rules.iter().enumerate() {
        for k in &rule.keywords {
            let kb = k.as_bytes().to_vec();
            match patterns.iter().position(|p| *p == kb) {
                Some(i) => {
                    if let Trigger::Rules(rs) = &mut triggers[i] {
                        rs.push(ri);
                    }
                }
                None => {
                    patterns.push(kb);
                    triggers.push(Trigger::Rules(vec![ri]));
                }
            }
        }
    }
    for v in exact {
        patterns.push(v.clone());
        triggers.push(Trigger::Exact);
    }
    let ac = AhoCorasick::builder()
        .ascii_case_insensitive(true)
        .kind(Some(aho_corasick::AhoCorasickKind::DFA))
        .build(&patterns)
        .map_err(|e| tao_core::Error::Internal(format!("building the keyword automaton: {e}")))?;
    Ok((ac, triggers))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn red() -> Redactor {
        Redactor::builder().build().unwrap()
    }

    fn masked(r: &Redactor, line: &str) -> String {
        String::from_utf8(r.redact_line(line.as_bytes()).into_owned()).unwrap()
    }

    #[test]
    fn clean_lines_are_borrowed() {
        let r = red();
        let line = b"Epoch 3/100: loss=0.123 lr=1e-4";
        assert!(matches!(r.redact_line(line), std::borrow::Cow::Borrowed(_)));
    }

    #[test]
    fn assignment_masks_only_the_value() {
        let r = red();
        assert_eq!(
            masked(&r, "export DB_PASSWORD='Tr0ub4dor&3x'"),
            "export DB_PASSWORD='[REDACTED:secret-assignment]'"
        );
    }

    #[test]
    fn overlapping_hits_merge_under_the_first_rule() {
        let r = red();
        let tok = "hf_FAKEtaoRedactTestTokenQwErTyUiOpAs";
        let out = masked(&r, &format!("export HF_TOKEN={tok}"));
        assert_eq!(out, "export HF_TOKEN=[REDACTED:huggingface-token]");
    }

    #[test]
    fn block_body_heuristic() {
        assert!(looks_like_block_body(b"MIIEowIBAAKCAQEAfakefakefakefake"));
        assert!(looks_like_block_body(b"  AB=="));
        assert!(looks_like_block_body(b"Proc-Type: 4,ENCRYPTED"));
        assert!(!looks_like_block_body(b"Epoch 1: loss 0.3"));
    }

    #[test]
    fn apply_clamps_and_merges() {
        let r = red();
        let mut hits = vec![
            Hit {
                start: 2,
                end: 6,
                label: 0,
                open: false,
                cont: false,
            },
            Hit {
                start: 4,
                end: 8,
                label: 1,
                open: false,
                cont: false,
            },
        ];
        let mut out = Vec::new();
        r.apply(b"0123456789", &mut hits, 10, &mut out);
        assert_eq!(out, b"01[REDACTED:pem-private-key]89");
        let mut out = Vec::new();
        r.apply(b"0123456789", &mut hits, 5, &mut out);
        assert_eq!(out, b"01[REDACTED:pem-private-key]");
    }
}
