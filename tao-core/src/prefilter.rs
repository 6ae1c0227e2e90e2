//! The keyword prefilter shared by tao-secrets (rule keywords and exact
//! secret values) and tao-classify (rule keywords): a multi-literal search
//! on aho-corasick's packed SIMD searcher (Teddy) with no limit on the
//! number of literals.
//!
//! Teddy, as aho-corasick 1.1 builds it, declines more than 64 patterns
//! (its heuristic, "too many patterns will overwhelm Teddy") and has a hard
//! limit of 128 (`packed::api::PATTERN_LIMIT`); past it the caller falls
//! back to a DFA, about 3x slower on the tao-classify bench. Source: the
//! aho-corasick docs of `packed` and `packed::teddy` (docs.rs/aho-corasick/1.1,
//! `src/packed/teddy/builder.rs`). [`KeywordSearcher`] lifts that limit by
//! splitting the literals into groups of at most [`GROUP_MAX`], one packed
//! searcher per group, and merging their matches in order of start.

use aho_corasick::{packed, AhoCorasick, AhoCorasickKind, MatchKind};

pub use aho_corasick::Match;

use crate::{Error, Result};

/// Most literals one packed (Teddy) searcher takes here: aho-corasick 1.1's
/// Teddy builder declines more than 64 patterns with its default heuristic
/// (`packed/teddy/builder.rs`). More literals are spread over more groups,
/// one SIMD pass each. On the tao-redact bench log (1 GiB,
/// `tao-redact/bench/genlog.py`) with 60 keywords added by `--rules`, three
/// packed passes ran 902 to 967 MB/s per CPU second, one DFA over the 116
/// long literals 820 to 887 (2026-12-05).
pub const GROUP_MAX: usize = 64;

/// Literals of at least this many bytes are grouped apart from the shorter
/// ones: Teddy compares masks of up to 4 bytes, as many as its shortest
/// pattern, so long literals alone get 4-byte masks and few false
/// candidates (two passes beat one with 3-byte masks on the tao-redact
/// bench).
pub const LONG_LEN: usize = 4;

/// A leftmost-first multi-literal searcher without a limit on the number
/// of literals (case-sensitive, bytes).
///
/// Input: the literals (non-empty byte strings, any number, duplicates
/// allowed), identified by their index in the input. They are split by
/// length class (at least [`LONG_LEN`] bytes, shorter) and each class into
/// `ceil(n / GROUP_MAX)` groups of nearly equal size, in input order; each
/// group is one packed (SIMD Teddy) searcher, or aho-corasick's DFA where
/// Teddy is not available (no SSSE3/AVX2, non-x86_64 without NEON).
///
/// Output ([`KeywordSearcher::find_iter`]): matches (pattern index into the
/// input, byte span in the haystack), in order of start. Within one group
/// the matches are leftmost-first and non-overlapping; matches of different
/// groups may overlap, and a match of one group may hide an occurrence of
/// another literal of the same group that starts inside it. The first match
/// always starts at the earliest occurrence of any literal.
#[derive(Clone)]
pub struct KeywordSearcher {
    groups: Vec<Group>,
    /// Length in bytes of the longest literal.
    max_len: usize,
}

impl std::fmt::Debug for KeywordSearcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeywordSearcher")
            .field("groups_simd", &self.groups_simd())
            .field("max_len", &self.max_len)
            .finish()
    }
}

/// One group: its searcher and, per local pattern id, the input index.
#[derive(Clone)]
struct Group {
    finder: Finder,
    ids: Vec<usize>,
}

/// aho-corasick's packed (SIMD) searcher when it accepts the group, else its DFA.
#[derive(Clone)]
enum Finder {
    Packed(packed::Searcher),
    Dfa(AhoCorasick),
}

impl Group {
    fn build(patterns: &[&[u8]], ids: Vec<usize>) -> Result<Group> {
        let packed = packed::Config::new()
            .match_kind(packed::MatchKind::LeftmostFirst)
            .builder()
            .extend(patterns.iter())
            .build();
        let finder = match packed {
            Some(p) => Finder::Packed(p),
            None => Finder::Dfa(
                AhoCorasick::builder()
                    .match_kind(MatchKind::LeftmostFirst)
                    .kind(Some(AhoCorasickKind::DFA))
                    .build(patterns)
                    .map_err(|e| Error::Internal(format!("building the keyword automaton: {e}")))?,
            ),
        };
        Ok(Group { finder, ids })
    }

    /// The group's matches in `hay[span]`, with input pattern indices.
    fn iter<'a>(
        &'a self,
        hay: &'a [u8],
        span: std::ops::Range<usize>,
    ) -> Box<dyn Iterator<Item = Match> + 'a> {
        let ids = &self.ids;
        let global = move |m: Match| Match::must(ids[m.pattern().as_usize()], m.range());
        match &self.finder {
            Finder::Packed(p) => {
                let start = span.start;
                Box::new(p.find_iter(&hay[span]).map(move |m| {
                    Match::must(
                        ids[m.pattern().as_usize()],
                        m.start() + start..m.end() + start,
                    )
                }))
            }
            Finder::Dfa(ac) => Box::new(
                ac.find_iter(aho_corasick::Input::new(hay).span(span))
                    .map(global),
            ),
        }
    }

    /// The group's first match in `hay[span]`.
    fn find(&self, hay: &[u8], span: std::ops::Range<usize>) -> Option<Match> {
        let m = match &self.finder {
            Finder::Packed(p) => p.find_in(hay, aho_corasick::Span::from(span)),
            Finder::Dfa(ac) => ac.find(aho_corasick::Input::new(hay).span(span)),
        }?;
        Some(Match::must(self.ids[m.pattern().as_usize()], m.range()))
    }
}

impl KeywordSearcher {
    /// Build the searcher over `patterns` (see [`KeywordSearcher`]).
    ///
    /// Errors: [`Error::Internal`] naming the pattern if one is empty (the
    /// callers drop empty keywords), or if a DFA cannot be built.
    pub fn new<P: AsRef<[u8]>>(patterns: &[P]) -> Result<KeywordSearcher> {
        if let Some(i) = patterns.iter().position(|p| p.as_ref().is_empty()) {
            return Err(Error::Internal(format!(
                "keyword prefilter: pattern {i} is empty; drop empty keywords"
            )));
        }
        let (long, short): (Vec<usize>, Vec<usize>) =
            (0..patterns.len()).partition(|&i| patterns[i].as_ref().len() >= LONG_LEN);
        let mut groups = Vec::new();
        for class in [long, short] {
            // ceil(n / GROUP_MAX) groups of nearly equal size.
            let n = class.len().div_ceil(GROUP_MAX);
            for g in 0..n {
                let ids = class[g * class.len() / n..(g + 1) * class.len() / n].to_vec();
                let pats: Vec<&[u8]> = ids.iter().map(|&i| patterns[i].as_ref()).collect();
                groups.push(Group::build(&pats, ids)?);
            }
        }
        let max_len = patterns.iter().map(|p| p.as_ref().len()).max().unwrap_or(0);
        Ok(KeywordSearcher { groups, max_len })
    }

    /// Whether there are no literals (then nothing is ever found).
    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    /// Per group, in search order: whether it runs on the packed SIMD
    /// searcher (Teddy) rather than the DFA.
    pub fn groups_simd(&self) -> Vec<bool> {
        self.groups
            .iter()
            .map(|g| matches!(g.finder, Finder::Packed(_)))
            .collect()
    }

    /// Whether there is at least one literal and every group runs on the
    /// packed SIMD searcher.
    pub fn is_simd(&self) -> bool {
        !self.groups.is_empty()
            && self
                .groups
                .iter()
                .all(|g| matches!(g.finder, Finder::Packed(_)))
    }

    /// Matches in `hay[from..]` in order of start (ties to the earlier
    /// group), offsets into `hay`. One pass per group over the haystack in
    /// total, however far the caller iterates.
    ///
    /// Panics if `from > hay.len()`.
    pub fn find_iter<'a>(&'a self, hay: &'a [u8], from: usize) -> impl Iterator<Item = Match> + 'a {
        let mut streams: Vec<_> = self
            .groups
            .iter()
            .map(|g| g.iter(hay, from..hay.len()))
            .collect();
        let heads = streams.iter_mut().map(|s| s.next()).collect();
        Merge { heads, streams }
    }

    /// The match at the earliest occurrence of any literal in `hay[from..]`
    /// (`None`: no literal there). Each group after the first searches only
    /// up to the best start so far (plus the longest literal), but the
    /// first group searches to its own next match: to walk a haystack, use
    /// [`KeywordSearcher::find_iter`].
    ///
    /// Panics if `from > hay.len()`.
    pub fn find(&self, hay: &[u8], from: usize) -> Option<Match> {
        let mut best: Option<Match> = None;
        for g in &self.groups {
            let end = best.map_or(hay.len(), |b| (b.start() + self.max_len).min(hay.len()));
            if let Some(m) = g.find(hay, from..end) {
                if best.is_none_or(|b| m.start() < b.start()) {
                    best = Some(m);
                }
            }
        }
        best
    }
}

/// Match streams, each in order of start, merged in order of start (ties
/// to the earlier stream). There are few streams, so the smallest head is
/// found by a linear scan.
struct Merge<'a> {
    heads: Vec<Option<Match>>,
    streams: Vec<Box<dyn Iterator<Item = Match> + 'a>>,
}

impl Iterator for Merge<'_> {
    type Item = Match;
    fn next(&mut self) -> Option<Match> {
        let mut best: Option<usize> = None;
        for (i, h) in self.heads.iter().enumerate() {
            if let Some(m) = h {
                if best.is_none_or(|b| self.heads[b].is_some_and(|x| m.start() < x.start())) {
                    best = Some(i);
                }
            }
        }
        let i = best?;
        let m = self.heads[i].take();
        self.heads[i] = self.streams[i].next();
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Earliest start of any pattern in `hay[from..]`, by brute force.
    fn plain(pats: &[Vec<u8>], hay: &[u8], from: usize) -> Option<usize> {
        (from..hay.len()).find(|&i| pats.iter().any(|p| hay[i..].starts_with(p)))
    }

    /// 300 literals (five long groups, one short group) are each found,
    /// with their own index, alone and among others; every group is SIMD
    /// where the CPU has it; `find` agrees with a brute-force search at
    /// every offset and `find_iter` starts in order.
    #[test]
    fn no_limit_on_literals_and_the_earliest_occurrence_is_found() {
        let mut pats: Vec<Vec<u8>> = (0..280)
            .map(|i| format!("kw{i:03}q").into_bytes())
            .collect();
        pats.extend((0..20).map(|i| format!("#{}", (b'a' + i) as char).into_bytes()));
        let s = KeywordSearcher::new(&pats).unwrap();
        let simd = s.groups_simd();
        assert_eq!(simd.len(), 5 + 1, "{simd:?}");
        if cfg!(target_arch = "x86_64") && std::is_x86_feature_detected!("ssse3") {
            assert!(s.is_simd(), "{simd:?}");
        }
        for (i, p) in pats.iter().enumerate() {
            let mut hay = b"some filler text ".repeat(3);
            hay.extend_from_slice(p);
            hay.extend_from_slice(b" tail");
            let m = s.find(&hay, 0).unwrap();
            assert_eq!((m.pattern().as_usize(), m.start()), (i, 51), "pattern {i}");
            let all: Vec<_> = s.find_iter(&hay, 0).collect();
            assert_eq!(all.len(), 1, "pattern {i}");
            assert_eq!(all[0].pattern().as_usize(), i);
        }
        let mut hay = Vec::new();
        for (i, p) in pats.iter().enumerate().rev().step_by(7) {
            hay.extend_from_slice(format!("filler {i} kw12 ").as_bytes());
            hay.extend_from_slice(p);
        }
        for from in (0..hay.len()).step_by(5) {
            assert_eq!(
                s.find(&hay, from).map(|m| m.start()),
                plain(&pats, &hay, from),
                "from {from}"
            );
        }
        let starts: Vec<usize> = s.find_iter(&hay, 3).map(|m| m.start()).collect();
        assert!(starts.windows(2).all(|w| w[0] <= w[1]), "{starts:?}");
        assert_eq!(starts.len(), pats.iter().rev().step_by(7).count());
    }

    #[test]
    fn empty_patterns_are_refused_and_no_patterns_find_nothing() {
        let err = KeywordSearcher::new(&["ab", ""]).unwrap_err();
        assert!(err.to_string().contains("pattern 1 is empty"), "{err}");
        let s = KeywordSearcher::new::<&str>(&[]).unwrap();
        assert!(s.is_empty() && !s.is_simd());
        assert!(s.find(b"anything", 0).is_none());
        assert_eq!(s.find_iter(b"anything", 0).count(), 0);
    }
}
