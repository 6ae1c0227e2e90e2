//! The scanner: finds the secret spans in one line (or one window of a very
//! long line) and writes the line with those spans masked.
//!
//! Fast path first, as gitleaks does with its keywords: a [`Prefilter`]
//! finds every rule keyword and every exact secret value (ASCII
//! case-insensitively, with aho-corasick's packed SIMD searcher over a
//! lowercased copy); a line without a keyword never meets a regex. On a
//! line with keywords only the rules whose keywords occur run (near their
//! keywords, in very long lines), then their post-match checks
//! ([`crate::validate`]). Multi-line blocks (PEM private keys) carry a
//! small [`ScanState`] from one line to the next.

use crate::rules::{Rule, Validator};
use crate::validate;
use crate::Redactor;

/// A PEM block that has not ended after this many lines is closed (a real
/// 16384-bit RSA key is about 200 lines), so a truncated key in a log does
/// not mask the rest of the log.
pub(crate) const MAX_BLOCK_LINES: u32 = 400;

/// Fragments (lines or windows) longer than this run each rule only
/// around its keywords, so a 4 MiB window with a few keywords costs a few
/// short regex searches instead of one pass per rule over the window.
pub(crate) const LOCAL_MIN: usize = 64 << 10;

/// What a prefilter keyword triggers (see [`Prefilter`]).
#[derive(Debug, Clone, Default)]
pub(crate) struct Trigger {
    /// Run these rules (indices into `Redactor::rules`).
    pub rules: Vec<usize>,
    /// Look for exact secret values on this line.
    pub exact: bool,
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
    /// ASCII-lowercased copy of the bytes being prefiltered.
    pub low: Vec<u8>,
    pub hits: Vec<Hit>,
    trig: Vec<bool>,
    any_rule: bool,
    any_exact: bool,
    /// `trig` already holds this line's triggers.
    ready: bool,
    /// (rule, keyword start) of a long fragment, in keyword order.
    positions: Vec<(usize, usize)>,
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
    /// The rules in force, in priority order (built-in catalogue first,
    /// then those of extra rules files); `tao-redact --list-rules` prints
    /// them.
    pub fn rules(&self) -> &[Rule] {
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
            scratch.ready = false;
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

    /// Reset the triggers in `scratch` for a new line.
    pub(crate) fn clear_triggers(&self, scratch: &mut Scratch) {
        scratch.trig.clear();
        scratch.trig.resize(self.rules.len(), false);
        scratch.any_rule = false;
        scratch.any_exact = false;
        scratch.ready = true;
    }

    /// Forget triggers collected for a line that was not scanned.
    pub(crate) fn unready(&self, scratch: &mut Scratch) {
        scratch.ready = false;
    }

    /// Whether the triggers in `scratch` ask for any work.
    pub(crate) fn triggered(&self, scratch: &Scratch) -> bool {
        scratch.any_rule || scratch.any_exact || !self.always.is_empty()
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
        let local = hay.len() > LOCAL_MIN;
        // The caller may have collected the triggers of this line already
        // (one prefilter pass over many lines, see `Stream::lines`); a long
        // fragment needs the keyword positions too.
        if !(scratch.ready && from == 0) || local {
            self.clear_triggers(scratch);
            scratch.positions.clear();
            let mut low = std::mem::take(&mut scratch.low);
            lowercase_into(hay, &mut low);
            for m in self.prefilter.find_iter(&low, 0..low.len()) {
                self.prefilter.verify(&low, &m, scratch, local);
            }
            scratch.low = low;
        }
        scratch.ready = false;
        for &r in &self.always {
            scratch.trig[r] = true;
            scratch.any_rule = true;
        }
        if scratch.any_rule {
            let mut spans = Vec::new();
            for ri in 0..self.rules.len() {
                if !scratch.trig[ri] {
                    continue;
                }
                spans.clear();
                if local && !self.always.contains(&ri) {
                    // Only around this rule's keywords (see LOCAL_REACH).
                    let mut near: Vec<(usize, usize)> = scratch
                        .positions
                        .iter()
                        .filter(|&&(r, _)| r == ri)
                        .map(|&(_, p)| {
                            let (before, after) = self.rules[ri].local_reach;
                            (p.saturating_sub(before), (p + after).min(hay.len()))
                        })
                        .collect();
                    near.sort_unstable();
                    for (s, e) in near {
                        match spans.last_mut() {
                            Some((_, last_e)) if s <= *last_e => *last_e = (*last_e).max(e),
                            _ => spans.push((s, e)),
                        }
                    }
                } else {
                    spans.push((0, hay.len()));
                }
                self.run_rule(ri, hay, from, limit, &spans, state, &mut scratch.hits);
            }
        }
        let any_exact = scratch.any_exact;
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

    /// Run rule `ri` over the `spans` of `hay` (sorted, disjoint), pushing
    /// accepted hits (offset by `from`). A match that reaches the end of a
    /// span inside `hay` may be cut short, so it is matched again on the
    /// whole of `hay` from its start.
    #[allow(clippy::too_many_arguments)]
    fn run_rule(
        &self,
        ri: usize,
        hay: &[u8],
        from: usize,
        limit: usize,
        spans: &[(usize, usize)],
        state: &mut ScanState,
        hits: &mut Vec<Hit>,
    ) {
        let rule = &self.rules[ri];
        let mut next = 0;
        for &(s0, e0) in spans {
            let mut at = s0.max(next);
            while at <= e0 {
                // Find the match with the DFA first; resolve capture groups
                // (slower) only for a match that may be kept.
                let Some(mut whole) = rule.regex.find_at(&hay[..e0], at) else {
                    break;
                };
                let mut searched = &hay[..e0];
                if whole.end() == e0 && e0 < hay.len() {
                    searched = hay;
                    match rule.regex.find_at(hay, whole.start()) {
                        Some(m) => whole = m,
                        None => break,
                    }
                }
                if from + whole.start() >= limit {
                    return;
                }
                next = if whole.is_empty() {
                    whole.end() + 1
                } else {
                    whole.end()
                };
                at = next;
                if rule.validator == Validator::Assignment
                    && !validate::assignment_may_hold_secret(whole.as_bytes())
                {
                    continue;
                }
                if let Some(end_re) = &rule.end {
                    if let Some(e) = end_re.find_at(hay, whole.end()) {
                        hits.push(Hit {
                            start: from + whole.start(),
                            end: from + e.end(),
                            label: ri,
                            open: false,
                            cont: false,
                        });
                        next = e.end();
                        at = next;
                    } else {
                        hits.push(Hit {
                            start: from + whole.start(),
                            end: from + content_end(hay),
                            label: ri,
                            open: true,
                            cont: false,
                        });
                        state.block = Some((ri, 0));
                        return;
                    }
                    continue;
                }
                let Some(caps) = rule.regex.captures_at(searched, whole.start()) else {
                    continue;
                };
                let whole = caps.get(0).expect("group 0 always participates");
                let g = rule
                    .secret_groups
                    .iter()
                    .find_map(|&i| caps.get(i))
                    .unwrap_or(whole);
                let name = rule
                    .name_group
                    .and_then(|i| caps.get(i))
                    .map(|m| m.as_bytes());
                if accept(rule, name, g.as_bytes()) {
                    hits.push(Hit {
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
    if rule.validator == Validator::Assignment {
        // Checks placeholders itself, after its cheaper tests.
        return (rule.min_entropy <= 0.0 || validate::shannon_entropy(secret) >= rule.min_entropy)
            && validate::assignment_value_is_secret(name.unwrap_or(b""), secret);
    }
    if rule.placeholders && validate::is_placeholder(secret) {
        return false;
    }
    if rule.min_entropy > 0.0 && validate::shannon_entropy(secret) < rule.min_entropy {
        return false;
    }
    match rule.validator {
        Validator::None => true,
        Validator::NgcLegacy => validate::is_ngc_legacy_key(secret),
        Validator::BasicAuth => validate::is_basic_credential(secret),
        Validator::VendorKey => validate::vendor_context_is_key(name.unwrap_or(b"")),
        Validator::MixedToken => validate::is_mixed_token(secret),
        Validator::Assignment => validate::assignment_value_is_secret(name.unwrap_or(b""), secret),
    }
}

/// ASCII-lowercase `src` into `dst` (other bytes unchanged). The prefilter
/// runs case-sensitively on this copy, which is several times faster than
/// a case-insensitive automaton and lets the packed (SIMD) searcher work.
pub(crate) fn lowercase_into(src: &[u8], dst: &mut Vec<u8>) {
    dst.clear();
    dst.extend(
        src.iter()
            .map(|&b| b | ((b.wrapping_sub(b'A') < 26) as u8) << 5),
    );
}

/// Anchors are keyword windows of at most this many bytes: short enough
/// that keywords share anchors (`oken=` serves `token=` and `_token=`).
const ANCHOR_LEN: usize = 5;

/// The window of `k` used as its anchor: the `ANCHOR_LEN`-byte window with
/// the most bytes that are not lowercase letters (`oken=` for `token=`),
/// since letters-only windows such as `token` are common words in logs.
/// Ties go to the earliest window. Returns the offset of the window.
fn anchor_offset(k: &[u8]) -> usize {
    let n = k.len().min(ANCHOR_LEN);
    (0..=k.len() - n)
        .max_by_key(|&o| {
            let score = k[o..o + n]
                .iter()
                .filter(|b| !b.is_ascii_lowercase())
                .count();
            (score, std::cmp::Reverse(o))
        })
        .unwrap_or(0)
}

/// `hay[at..]` starts with `needle` (a byte loop: the needles are a few
/// bytes long, where a `memcmp` call costs more than the compare).
#[inline]
fn starts_with_at(hay: &[u8], at: usize, needle: &[u8]) -> bool {
    hay.len() >= at + needle.len()
        && hay[at..at + needle.len()]
            .iter()
            .zip(needle)
            .all(|(a, b)| a == b)
}

/// The keyword prefilter (gitleaks' "keywords before regexes").
///
/// Every rule keyword and every exact secret value, ASCII-lowercased, is a
/// *keyword*. Each keyword has an *anchor*: one window of at most
/// [`ANCHOR_LEN`] of its bytes ([`anchor_offset`]). One
/// [`tao_core::prefilter::KeywordSearcher`] over the distinct anchors (72
/// for the built-in rules; packed SIMD searchers of at most
/// [`tao_core::prefilter::GROUP_MAX`] anchors each, no limit on the number
/// of keywords) runs over a lowercased copy of the input. An anchor match is only a candidate: at each match
/// `[s, e)`, every anchor that occurs at any position in `[s, e)` is
/// checked, and for each, the keywords around it byte by byte. Every
/// keyword occurrence contains its anchor, and an anchor occurrence is
/// either reported or starts inside a match reported by the search of its
/// group (that is all a non-overlapping search can hide), so no keyword is
/// missed.
#[derive(Debug)]
pub(crate) struct Prefilter {
    /// The searcher over the anchors (grouped by length, see
    /// [`tao_core::prefilter`]).
    finder: tao_core::prefilter::KeywordSearcher,
    /// Distinct anchors.
    anchors: Vec<Vec<u8>>,
    /// Per first byte: indices of the anchors starting with it.
    by_first: Vec<Vec<usize>>,
    /// Per anchor: (keyword index, offset of the anchor in the keyword).
    keywords_of: Vec<Vec<(usize, usize)>>,
    /// Lowercased keywords.
    keywords: Vec<Vec<u8>>,
    /// Per keyword: what it triggers.
    triggers: Vec<Trigger>,
}

impl Prefilter {
    /// Build from the rules' keywords and the exact values.
    ///
    /// Errors: [`tao_core::Error::Internal`] if the automaton cannot be built.
    pub(crate) fn new(rules: &[Rule], exact: &[Vec<u8>]) -> tao_core::Result<Prefilter> {
        let mut keywords: Vec<Vec<u8>> = Vec::new();
        let mut triggers: Vec<Trigger> = Vec::new();
        let mut add = |k: Vec<u8>, rule: Option<usize>| {
            let i = match keywords.iter().position(|q| *q == k) {
                Some(i) => i,
                None => {
                    keywords.push(k);
                    triggers.push(Trigger::default());
                    keywords.len() - 1
                }
            };
            match rule {
                Some(r) if !triggers[i].rules.contains(&r) => triggers[i].rules.push(r),
                Some(_) => {}
                None => triggers[i].exact = true,
            }
        };
        for (ri, rule) in rules.iter().enumerate() {
            for k in &rule.keywords {
                add(k.as_bytes().to_ascii_lowercase(), Some(ri));
            }
        }
        for v in exact {
            add(v.to_ascii_lowercase(), None);
        }
        let mut anchors: Vec<Vec<u8>> = Vec::new();
        let mut keywords_of: Vec<Vec<(usize, usize)>> = Vec::new();
        for (ki, k) in keywords.iter().enumerate() {
            let o = anchor_offset(k);
            let a = k[o..o + k.len().min(ANCHOR_LEN)].to_vec();
            let ai = match anchors.iter().position(|x| *x == a) {
                Some(ai) => ai,
                None => {
                    anchors.push(a);
                    keywords_of.push(Vec::new());
                    anchors.len() - 1
                }
            };
            keywords_of[ai].push((ki, o));
        }
        let mut by_first = vec![Vec::new(); 256];
        for (ai, a) in anchors.iter().enumerate() {
            by_first[a[0] as usize].push(ai);
        }
        let finder = tao_core::prefilter::KeywordSearcher::new(&anchors)?;
        Ok(Prefilter {
            finder,
            anchors,
            by_first,
            keywords_of,
            keywords,
            triggers,
        })
    }

    /// Number of distinct anchors.
    #[cfg(test)]
    pub(crate) fn anchor_count(&self) -> usize {
        self.anchors.len()
    }

    /// Per anchor group: whether it is the packed (SIMD) searcher.
    #[cfg(test)]
    pub(crate) fn finders_packed(&self) -> Vec<bool> {
        self.finder.groups_simd()
    }

    /// Anchor matches in `low[span]` (an ASCII-lowercased haystack; `span`
    /// runs to its end), in order of their start.
    pub(crate) fn find_iter<'a>(
        &'a self,
        low: &'a [u8],
        span: std::ops::Range<usize>,
    ) -> impl Iterator<Item = aho_corasick::Match> + 'a {
        debug_assert_eq!(span.end, low.len());
        self.finder.find_iter(low, span.start)
    }

    /// With `positions`, also record (rule, keyword start) for each rule.
    pub(crate) fn verify(
        &self,
        low: &[u8],
        m: &aho_corasick::Match,
        scratch: &mut Scratch,
        positions: bool,
    ) {
        for q in m.start()..m.end() {
            for &ai in &self.by_first[low[q] as usize] {
                if !starts_with_at(low, q, &self.anchors[ai]) {
                    continue;
                }
                for &(ki, o) in &self.keywords_of[ai] {
                    if q >= o && starts_with_at(low, q - o, &self.keywords[ki]) {
                        let t = &self.triggers[ki];
                        for &r in &t.rules {
                            scratch.any_rule = true;
                            scratch.trig[r] = true;
                            if positions {
                                scratch.positions.push((r, q - o));
                            }
                        }
                        scratch.any_exact |= t.exact;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::LOCAL_REACH;

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
    fn keywords_hidden_by_other_anchors_still_trigger() {
        let r = red();
        // `oauthtoken` is found first; `token=`... starts inside no other
        // match here, but `machine` and `password=` overlap nothing either:
        // all three rules must still be considered.
        let line = b"machine nvcr.io login $oauthtoken password=Zk3vQ9pL2mX8rT5wY7nB";
        assert_eq!(
            &*r.redact_line(line),
            &b"machine nvcr.io login $oauthtoken password=[REDACTED:secret-assignment]"[..]
        );
        // `sk-` inside `task-` is an anchor match that hides `k-...`; the
        // key right after must still be seen.
        let line = b"KEY=sk-FAKEtaoRedactTestfjzLczbttOofL9H2WjQ5TY4MyWuUFjs";
        assert_eq!(&*r.redact_line(line), &b"KEY=[REDACTED:openai-api-key]"[..]);
        // An anchor match (`secre`) hiding the start of another keyword
        // (`t_key`? no: `key=` inside `secret_key=`).
        let line = b"AWS_SECRET_KEY=FAKEfakeTESTtest/0123456789+abcdEFGHijkl";
        assert_eq!(
            &*r.redact_line(line),
            &b"AWS_SECRET_KEY=[REDACTED:aws-secret-access-key]"[..]
        );
        assert_eq!(anchor_offset(b"token="), 1);
        assert_eq!(anchor_offset(b"hf_"), 0);
        assert_eq!(anchor_offset(b"private key"), 3);
        // The built-in anchors outgrew the old total of 64; every group
        // still gets the packed searcher.
        assert!(r.prefilter.anchor_count() > tao_core::prefilter::GROUP_MAX);
        let packed = r.prefilter.finders_packed();
        assert!(packed.len() >= 2 && packed.iter().all(|&p| p), "{packed:?}");
        let mut low = Vec::new();
        lowercase_into(b"AbZ[`@\xff", &mut low);
        assert_eq!(low, b"abz[`@\xff");
    }

    /// No keyword budget: 300 extra rules, one keyword each (anchors in
    /// five packed groups), are each found, alone on a line, next to
    /// another keyword, and in one line that holds them all.
    #[test]
    fn many_keywords_each_trigger_their_rule() {
        let mut toml = String::new();
        for i in 0..300 {
            toml.push_str(&format!(
                "[[rule]]\nid = \"k{i}\"\nkeywords = [\"kw{i:03}q\"]\nregex = 'kw{i:03}q=(?P<secret>[0-9]+)'\n"
            ));
        }
        let extra = crate::rules::parse_catalogue(&toml, "t.toml").unwrap();
        let r = Redactor::builder().rules(extra).build().unwrap();
        assert!(r.prefilter.anchor_count() >= 300);
        let packed = r.prefilter.finders_packed();
        assert!(packed.len() >= 6 && packed.iter().all(|&p| p), "{packed:?}");
        let mut all = String::new();
        for i in 0..300 {
            let line = format!("x kw{i:03}q=123 y");
            assert_eq!(masked(&r, &line), format!("x kw{i:03}q=[REDACTED:k{i}] y"));
            let line = format!("hf_ kw{i:03}q=123");
            assert_eq!(masked(&r, &line), format!("hf_ kw{i:03}q=[REDACTED:k{i}]"));
            all.push_str(&format!("kw{i:03}q=1 "));
        }
        let out = masked(&r, &all);
        assert_eq!(out.matches("[REDACTED:k").count(), 300, "{out}");
    }

    #[test]
    fn long_fragments_search_near_keywords_without_cutting_secrets() {
        let r = red();
        let jwt = format!(
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJGQUtFIn0.{}",
            "FAKEsig0".repeat(2000)
        );
        let mut line = "a".repeat(100_000);
        line.push_str(" export DB_PASSWORD='Tr0ub4dor&3x' token ");
        line.push_str(&jwt);
        line.push(' ');
        line.push_str(&"b".repeat(100_000));
        line.push_str(" key=Zk3vQ9pL2mX8rT5wY7nB");
        assert!(line.len() > LOCAL_MIN && jwt.len() > 2 * LOCAL_REACH);
        let out = String::from_utf8(r.redact_line(line.as_bytes()).into_owned()).unwrap();
        assert!(!out.contains("FAKEsig0"), "the long JWT was cut");
        assert!(!out.contains("Tr0ub4dor"));
        assert!(!out.contains("Zk3vQ9pL2"));
        assert_eq!(
            out.matches("[REDACTED:").count(),
            3,
            "{}",
            &out[99_990..100_100]
        );
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
