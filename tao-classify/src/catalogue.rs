//! The rule catalogue: data, not code.
//!
//! The built-in rules live in `rules/builtin.toml` (compiled in with
//! `include_str!` and parsed once per run); a site adds or replaces rules
//! with `--rules FILE` in the same format. Each rule has an id, a class, a
//! subclass, a priority, literal keywords, a regex and a reason; a named
//! capture group whose name starts with `node` extracts the node the line
//! blames.
//!
//! Matching has a fast path, as gitleaks and ripgrep do: the shared SIMD
//! multi-literal searcher ([`tao_core::prefilter::KeywordSearcher`]:
//! aho-corasick's packed Teddy in groups, no limit on the number of
//! literals) over every rule's keywords finds the few
//! lines worth a closer look, and only the rules whose keywords occur in
//! such a line run their regex on it. A line without any keyword costs one
//! SIMD scan.
//!
//! A rule with `refines` is a *context* rule: it never decides a line by
//! itself; it narrows another rule's reading when its own line occurs
//! anywhere in the same evidence (the job's own ranks sharing an
//! exclusive-process GPU, the job's own library cache under a stale file
//! handle). See [`RuleSpec::refines`].

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
use regex::bytes::{Regex, RegexSet};
use serde::Deserialize;
use tao_core::prefilter::KeywordSearcher;
use tao_core::{Error, Result};

/// The built-in catalogue text (TOML), compiled into the binary.
pub const BUILTIN_RULES: &str = include_str!("../rules/builtin.toml");

/// Who is at fault, as `classification.class` says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Class {
    /// The cluster's fault (node, GPU, network, filesystem, container runtime): retried.
    Infra,
    /// The user's program or request: surfaced at once, never retried.
    Program,
    /// The scheduler ended the job on purpose (time limit, cancel, preemption): not retried.
    Scheduler,
    /// Nothing decided it: surfaced, not retried.
    Unknown,
}

impl Class {
    /// The lowercase name used in job lines (`"infra"`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Class::Infra => "infra",
            Class::Program => "program",
            Class::Scheduler => "scheduler",
            Class::Unknown => "unknown",
        }
    }
}

/// One rule as written in a rules file (TOML `[[rule]]` table).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleSpec {
    /// Stable id, e.g. `"xid.hardware"`; a later file's rule with the same id replaces it.
    pub id: String,
    /// Who is at fault.
    pub class: Class,
    /// Short snake_case name of the fault, e.g. `"gpu_lost"`.
    pub subclass: String,
    /// 0..=255; the highest-priority match decides (ties: the earliest line).
    pub priority: u8,
    /// Literal, case-sensitive strings; the rule is tried on a line only when one occurs in it.
    /// Empty means "try on every line" (slow: avoid).
    #[serde(default)]
    pub keywords: Vec<String>,
    /// Regex (Rust `regex` syntax) tried on candidate lines.
    pub pattern: String,
    /// One line for the user: what happened, what to do.
    pub reason: String,
    /// Where the message format and its meaning come from.
    #[serde(default)]
    pub source: String,
    /// Ids of the rules this one narrows. Non-empty makes this a *context*
    /// rule: it never decides a line by itself; when the evidence's best
    /// line was matched by one of these rules and any line of the same
    /// evidence (any file, before or after) matches this rule's pattern,
    /// this rule's class, subclass and reason decide instead, the best line
    /// staying the evidence. Errors: an id that names no rule (exit 78).
    #[serde(default)]
    pub refines: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RulesFile {
    #[serde(default)]
    rule: Vec<RuleSpec>,
}

/// A compiled rule.
#[derive(Debug, Clone)]
pub struct Rule {
    /// The rule as written.
    pub spec: RuleSpec,
    regex: Regex,
    node_groups: Vec<usize>,
    /// Indices of the rules named by `spec.refines`.
    refines: Vec<usize>,
}

impl Rule {
    /// Whether this is a context rule (non-empty `refines`): it never
    /// decides a line by itself.
    pub fn is_context(&self) -> bool {
        !self.refines.is_empty()
    }

    /// Whether the rule's regex alone matches `line` (keywords not consulted;
    /// used to check that every match contains a keyword).
    pub fn regex_matches(&self, line: &[u8]) -> bool {
        self.regex.is_match(line)
    }

    /// Whether `line` contains one of the rule's keywords (or the rule has none).
    pub fn keyword_in(&self, line: &[u8]) -> bool {
        self.spec.keywords.iter().all(|k| k.is_empty())
            || self
                .spec
                .keywords
                .iter()
                .any(|k| !k.is_empty() && memchr::memmem::find(line, k.as_bytes()).is_some())
    }
}

/// What one rule found in one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineMatch {
    /// Index of the rule in [`Catalogue::rules`].
    pub rule: usize,
    /// The node named by the line (first participating `node*` capture group), if any.
    pub node: Option<String>,
}

/// The compiled catalogue: rules plus the keyword automata of the fast path.
#[derive(Debug, Clone)]
pub struct Catalogue {
    rules: Vec<Rule>,
    /// SIMD searcher over all keywords (shared with tao-secrets, see
    /// [`tao_core::prefilter`]): finds lines worth a look.
    finder: KeywordSearcher,
    /// Overlapping automaton over the same keywords: every rule a line may match.
    overlap: Option<AhoCorasick>,
    /// Keyword index -> rule indices that keyword belongs to.
    keyword_rules: Vec<Vec<usize>>,
    /// Rules without keywords (tried on every line).
    always: Vec<usize>,
    /// Every rule's regex in one set: a line with many candidate rules is
    /// scanned once (one automaton pass) instead of once per rule.
    set: RegexSet,
}

impl Catalogue {
    /// The built-in catalogue.
    ///
    /// Errors: [`Error::Internal`] if the compiled-in TOML is invalid (a test guards this).
    pub fn builtin() -> Result<Self> {
        let specs = parse_rules(BUILTIN_RULES, "built-in rules")
            .map_err(|e| Error::Internal(e.to_string()))?;
        Self::from_specs(specs).map_err(|e| Error::Internal(e.to_string()))
    }

    /// The built-in catalogue plus the rules of each site file, in order; a
    /// rule whose id already exists replaces the earlier one.
    ///
    /// Errors: [`Error::Io`] when a file cannot be read (exit 74);
    /// [`Error::Config`] naming the file and the rule for bad TOML, an
    /// unknown field, an invalid regex or an empty pattern (exit 78).
    pub fn with_site_files(paths: &[std::path::PathBuf]) -> Result<Self> {
        let mut specs = parse_rules(BUILTIN_RULES, "built-in rules")
            .map_err(|e| Error::Internal(e.to_string()))?;
        for path in paths {
            let text = std::fs::read_to_string(path).map_err(|e| {
                Error::io(
                    format!("reading rules file {:?}", path.display().to_string()),
                    e,
                )
            })?;
            let label = format!("rules file {:?}", path.display().to_string());
            for spec in parse_rules(&text, &label)? {
                match specs.iter_mut().find(|s| s.id == spec.id) {
                    Some(old) => *old = spec,
                    None => specs.push(spec),
                }
            }
        }
        Self::from_specs(specs)
    }

    /// Compile rule specs.
    ///
    /// Errors: [`Error::Config`] for an invalid regex, an empty pattern or a
    /// duplicate id.
    pub fn from_specs(specs: Vec<RuleSpec>) -> Result<Self> {
        let mut rules = Vec::with_capacity(specs.len());
        let mut keywords: Vec<String> = Vec::new();
        let mut keyword_rules: Vec<Vec<usize>> = Vec::new();
        let mut always = Vec::new();
        for (i, spec) in specs.into_iter().enumerate() {
            if rules.iter().any(|r: &Rule| r.spec.id == spec.id) {
                return Err(Error::Config(format!(
                    "duplicate rule id {:?}; give each rule its own id",
                    spec.id
                )));
            }
            if spec.pattern.is_empty() {
                return Err(Error::Config(format!(
                    "rule {:?} has an empty pattern; give it a regex",
                    spec.id
                )));
            }
            let regex = Regex::new(&spec.pattern).map_err(|e| {
                Error::Config(format!(
                    "rule {:?}: invalid pattern ({}); fix the regex",
                    spec.id,
                    tao_core::cli::one_line(&e.to_string())
                ))
            })?;
            let node_groups = regex
                .capture_names()
                .enumerate()
                .filter_map(|(gi, name)| name.filter(|n| n.starts_with("node")).map(|_| gi))
                .collect();
            if spec.keywords.iter().all(|k| k.is_empty()) {
                always.push(i);
            }
            for kw in spec.keywords.iter().filter(|k| !k.is_empty()) {
                match keywords.iter().position(|k| k == kw) {
                    Some(ki) => keyword_rules[ki].push(i),
                    None => {
                        keywords.push(kw.clone());
                        keyword_rules.push(vec![i]);
                    }
                }
            }
            rules.push(Rule {
                spec,
                regex,
                node_groups,
                refines: Vec::new(),
            });
        }
        for i in 0..rules.len() {
            let mut refines = Vec::new();
            for id in &rules[i].spec.refines {
                let Some(t) = rules.iter().position(|r| &r.spec.id == id) else {
                    return Err(Error::Config(format!(
                        "rule {:?} refines {id:?}, which names no rule; give the id of an existing rule",
                        rules[i].spec.id
                    )));
                };
                if !rules[t].spec.refines.is_empty() {
                    return Err(Error::Config(format!(
                        "rule {:?} refines {id:?}, itself a context rule; refine the rule that decides",
                        rules[i].spec.id
                    )));
                }
                refines.push(t);
            }
            rules[i].refines = refines;
        }
        let finder = KeywordSearcher::new(&keywords)
            .map_err(|e| Error::Config(format!("rule keywords: {e}")))?;
        let overlap = if keywords.is_empty() {
            None
        } else {
            let overlap = AhoCorasickBuilder::new()
                .match_kind(MatchKind::Standard)
                .build(&keywords)
                .map_err(|e| Error::Config(format!("rule keywords: {e}")))?;
            Some(overlap)
        };
        let set = RegexSet::new(rules.iter().map(|r| r.spec.pattern.as_str())).map_err(|e| {
            Error::Config(format!(
                "rule patterns: {}",
                tao_core::cli::one_line(&e.to_string())
            ))
        })?;
        Ok(Self {
            rules,
            finder,
            overlap,
            keyword_rules,
            always,
            set,
        })
    }

    /// The compiled rules, in catalogue order.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// Whether some rule must be tried on every line (a rule without keywords).
    pub fn has_slow_rules(&self) -> bool {
        !self.always.is_empty()
    }

    /// Offset of the first keyword occurrence in `haystack` at or after `from`
    /// (`None`: no keyword there). Used by the streaming scanner to skip
    /// uninteresting lines in bulk.
    pub fn find_keyword(&self, haystack: &[u8], from: usize) -> Option<usize> {
        self.finder.find(haystack, from).map(|m| m.start())
    }

    /// Offsets of keyword occurrences in `haystack[from..]`, in increasing
    /// order, from one pass of the keyword searcher (the first is the
    /// earliest keyword; occurrences hidden inside an earlier one may be
    /// left out). The streaming scanner skips those inside a line it has
    /// already offered.
    pub fn keyword_starts<'a>(
        &'a self,
        haystack: &'a [u8],
        from: usize,
    ) -> impl Iterator<Item = usize> + 'a {
        self.finder.find_iter(haystack, from).map(|m| m.start())
    }

    /// Whether the fast path's keyword search runs on the SIMD searcher
    /// (packed Teddy, every group) rather than the automaton.
    pub fn keyword_search_is_simd(&self) -> bool {
        self.finder.is_simd()
    }

    /// The context rule that narrows `rule` given the context rules `seen`
    /// in the same evidence: the first in catalogue order whose `refines`
    /// names `rule`, or `None`.
    pub fn refinement(&self, rule: usize, seen: &[usize]) -> Option<usize> {
        let mut hits: Vec<usize> = seen
            .iter()
            .copied()
            .filter(|&c| self.rules[c].refines.contains(&rule))
            .collect();
        hits.sort_unstable();
        hits.first().copied()
    }

    /// The best rule matching one line (without its newline): the
    /// highest-priority rule whose keywords occur in the line and whose
    /// regex matches; ties go to the rule listed first. Context rules
    /// (`refines`) never decide a line; see [`Catalogue::match_line_with`].
    pub fn match_line(&self, line: &[u8]) -> Option<LineMatch> {
        self.match_line_with(line, &mut Vec::new())
    }

    /// [`Catalogue::match_line`], also adding to `context` (no duplicates)
    /// the index of every context rule whose pattern matches the line.
    pub fn match_line_with(&self, line: &[u8], context: &mut Vec<usize>) -> Option<LineMatch> {
        let mut candidates: Vec<usize> = self.always.clone();
        if let Some(overlap) = &self.overlap {
            for m in overlap.find_overlapping_iter(line) {
                for &ri in &self.keyword_rules[m.pattern().as_usize()] {
                    if !candidates.contains(&ri) {
                        candidates.push(ri);
                    }
                }
            }
        }
        if candidates.is_empty() {
            return None;
        }
        // Highest priority first; among equals, catalogue order. With more
        // than a few candidates, one pass of the set says which match.
        candidates.sort_by_key(|&ri| (std::cmp::Reverse(self.rules[ri].spec.priority), ri));
        let matched = (candidates.len() > 2).then(|| self.set.matches(line));
        let mut found = None;
        for ri in candidates {
            let rule = &self.rules[ri];
            if let Some(m) = &matched {
                if !m.matched(ri) {
                    continue;
                }
            }
            if rule.is_context() {
                if !context.contains(&ri) && (matched.is_some() || rule.regex.is_match(line)) {
                    context.push(ri);
                }
                continue;
            }
            if found.is_some() {
                continue;
            }
            if rule.node_groups.is_empty() {
                if matched.is_some() || rule.regex.is_match(line) {
                    found = Some(LineMatch {
                        rule: ri,
                        node: None,
                    });
                }
                continue;
            }
            if let Some(caps) = rule.regex.captures(line) {
                let node = rule
                    .node_groups
                    .iter()
                    .find_map(|&gi| caps.get(gi))
                    .map(|m| String::from_utf8_lossy(m.as_bytes()).into_owned());
                found = Some(LineMatch { rule: ri, node });
            }
        }
        found
    }
}

/// Parse a rules file's text (`[[rule]]` tables).
///
/// Errors: [`Error::Config`] naming `label` for bad TOML or unknown fields.
pub fn parse_rules(text: &str, label: &str) -> Result<Vec<RuleSpec>> {
    let file: RulesFile = toml::from_str(text).map_err(|e| {
        Error::Config(format!(
            "{label}: {}; see tao-classify --help for the rule format",
            tao_core::cli::one_line(e.message())
        ))
    })?;
    Ok(file.rule)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_catalogue_compiles_and_ids_are_unique() {
        let cat = Catalogue::builtin().unwrap();
        assert!(cat.rules().len() >= 30);
        assert!(!cat.has_slow_rules(), "every built-in rule has keywords");
    }

    #[test]
    fn every_builtin_rule_cites_a_source_and_gives_a_reason() {
        for r in Catalogue::builtin().unwrap().rules() {
            assert!(!r.spec.source.is_empty(), "{} has no source", r.spec.id);
            assert!(!r.spec.reason.is_empty(), "{} has no reason", r.spec.id);
        }
    }

    /// The patterns stay in the subset GNU `grep -E` reads the same way, so
    /// the benchmark compares like with like.
    #[test]
    fn builtin_patterns_are_grep_portable() {
        for r in Catalogue::builtin().unwrap().rules() {
            let p = &r.spec.pattern;
            for bad in ["\\d", "\\w", "\\s", "(?i)", "*?", "+?", "\\A", "\\z"] {
                assert!(!p.contains(bad), "{}: {bad:?} is not portable", r.spec.id);
            }
            // No backslash inside a bracket expression.
            let mut in_class = false;
            let mut prev = ' ';
            for (i, ch) in p.chars().enumerate() {
                if !in_class && ch == '[' && prev != '\\' {
                    in_class = true;
                    // `]` right after `[` or `[^` is a literal.
                    let rest: String = p.chars().skip(i + 1).take(2).collect();
                    if rest.starts_with(']') || rest.starts_with("^]") {
                        prev = ch;
                        continue;
                    }
                } else if in_class && ch == ']' && prev != '[' && prev != '^' {
                    in_class = false;
                } else if in_class {
                    assert_ne!(ch, '\\', "{}: backslash inside [...]", r.spec.id);
                }
                prev = ch;
            }
        }
    }

    #[test]
    fn site_rule_replaces_builtin_with_same_id_and_adds_new() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("site.toml");
        std::fs::write(
            &path,
            r#"
[[rule]]
id = "python.exception"
class = "unknown"
subclass = "exception"
priority = 10
keywords = ["Error: "]
pattern = 'Error: '
reason = "site says unknown"

[[rule]]
id = "site.gpfs"
class = "infra"
subclass = "shared_fs"
priority = 90
keywords = ["mmfs"]
pattern = 'mmfs: .*(?P<node>n[0-9]+) unmounted'
reason = "GPFS unmounted"
"#,
        )
        .unwrap();
        let cat = Catalogue::with_site_files(&[path]).unwrap();
        let m = cat.match_line(b"mmfs: fs0 on n7 unmounted").unwrap();
        assert_eq!(cat.rules()[m.rule].spec.id, "site.gpfs");
        assert_eq!(m.node.as_deref(), Some("n7"));
        let m = cat.match_line(b"ValueError: bad").unwrap();
        assert_eq!(cat.rules()[m.rule].spec.class, Class::Unknown);
    }

    #[test]
    fn bad_site_rule_is_a_config_error_naming_the_rule() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.toml");
        std::fs::write(
            &path,
            "[[rule]]\nid='x'\nclass='infra'\nsubclass='s'\npriority=1\nkeywords=['a']\npattern='('\nreason='r'\n",
        )
        .unwrap();
        let err = Catalogue::with_site_files(std::slice::from_ref(&path)).unwrap_err();
        assert_eq!(err.code(), tao_core::exit::CONFIG);
        assert!(
            err.to_string().contains("rule \"x\": invalid pattern"),
            "{err}"
        );
        std::fs::write(&path, "[[rule]]\nid='x'\nclas='infra'\n").unwrap();
        let err = Catalogue::with_site_files(&[path]).unwrap_err();
        assert_eq!(err.code(), tao_core::exit::CONFIG);
        assert!(err.to_string().contains("bad.toml"), "{err}");
    }

    /// The built-in keywords run on the packed SIMD searcher (Teddy, in
    /// groups of at most 64: [`tao_core::prefilter`]), and stay within two
    /// groups of long keywords plus one of short ones (each group is one
    /// pass over the log).
    #[test]
    fn builtin_keywords_fit_the_simd_searcher() {
        let cat = Catalogue::builtin().unwrap();
        let mut kws: Vec<&str> = cat
            .rules()
            .iter()
            .flat_map(|r| r.spec.keywords.iter().map(String::as_str))
            .collect();
        kws.sort_unstable();
        kws.dedup();
        assert!(
            kws.len() <= 2 * tao_core::prefilter::GROUP_MAX,
            "{} distinct keywords; share more of them between rules",
            kws.len()
        );
        for k in &kws {
            assert!(k.len() >= 2, "keyword {k:?} is too short for the fast path");
        }
        if cfg!(target_arch = "x86_64") && std::is_x86_feature_detected!("ssse3") {
            assert!(cat.keyword_search_is_simd(), "{} keywords", kws.len());
        }
    }

    /// Past Teddy's 64 (heuristic) and 128 (hard) pattern limits, the fast
    /// path keeps the packed searcher and finds the same first keyword as a
    /// plain search, at every start offset.
    #[test]
    fn fast_path_past_64_keywords_finds_what_a_plain_search_finds() {
        const MANY: usize = 300;
        let mut text = String::new();
        for i in 0..MANY {
            text.push_str(&format!(
                "[[rule]]\nid='k{i}'\nclass='infra'\nsubclass='s'\npriority=1\nkeywords=['kw{i:03}x']\npattern='kw{i:03}x'\nreason='r'\n"
            ));
        }
        let cat = Catalogue::from_specs(parse_rules(&text, "t").unwrap()).unwrap();
        if cfg!(target_arch = "x86_64") && std::is_x86_feature_detected!("ssse3") {
            assert!(cat.keyword_search_is_simd());
        }
        let mut hay = "filler line without any of them, kw12 kw1000x\n".repeat(40);
        hay.push_str("xx kw299x then kw005x and kw064x kw128x\n");
        hay.push_str(&"more filler\n".repeat(40));
        let hay = hay.as_bytes();
        let plain = |from: usize| {
            (from..hay.len())
                .find(|&i| (0..MANY).any(|k| hay[i..].starts_with(format!("kw{k:03}x").as_bytes())))
        };
        for from in (0..hay.len()).step_by(7) {
            assert_eq!(cat.find_keyword(hay, from), plain(from), "from {from}");
        }
    }

    #[test]
    fn a_context_rule_must_refine_an_existing_deciding_rule() {
        let base = "[[rule]]\nid='a'\nclass='infra'\nsubclass='s'\npriority=1\nkeywords=['a']\npattern='a'\nreason='r'\n";
        let ctx = |target: &str| {
            format!("{base}[[rule]]\nid='c'\nclass='program'\nsubclass='s'\npriority=1\nkeywords=['c']\npattern='c'\nreason='r'\nrefines=['{target}']\n")
        };
        let cat = Catalogue::from_specs(parse_rules(&ctx("a"), "t").unwrap()).unwrap();
        // The context rule never decides a line itself, and is reported as seen.
        let mut seen = Vec::new();
        let m = cat.match_line_with(b"c and a", &mut seen).unwrap();
        assert_eq!(cat.rules()[m.rule].spec.id, "a");
        assert_eq!(seen, vec![1]);
        assert!(cat.match_line(b"c only").is_none());
        assert_eq!(cat.refinement(0, &seen), Some(1));
        assert_eq!(cat.refinement(0, &[]), None);
        let err = Catalogue::from_specs(parse_rules(&ctx("nope"), "t").unwrap()).unwrap_err();
        assert_eq!(err.code(), tao_core::exit::CONFIG);
        assert!(err.to_string().contains("refines \"nope\""), "{err}");
        let err = Catalogue::from_specs(parse_rules(&ctx("c"), "t").unwrap()).unwrap_err();
        assert!(err.to_string().contains("itself a context rule"), "{err}");
    }

    #[test]
    fn priority_decides_between_rules_on_one_line() {
        let cat = Catalogue::builtin().unwrap();
        // Both the generic exception rule and the CUDA OOM rule match.
        let m = cat
            .match_line(b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB")
            .unwrap();
        assert_eq!(cat.rules()[m.rule].spec.id, "cuda.oom");
    }

    #[test]
    fn node_is_taken_from_any_node_group() {
        let cat = Catalogue::builtin().unwrap();
        let m = cat
            .match_line(b"slurmstepd: error: *** JOB 123 CANCELLED AT 2026-11-29T10:00:00 DUE TO NODE n4 FAILURE ***")
            .unwrap();
        assert_eq!(cat.rules()[m.rule].spec.id, "slurm.node_failure");
        assert_eq!(m.node.as_deref(), Some("n4"));
    }

    #[test]
    fn the_child_timeout_line_outranks_the_step_cancelled_line() {
        let cat = Catalogue::builtin().unwrap();
        let id = |line: &[u8]| {
            cat.rules()[cat.match_line(line).unwrap().rule]
                .spec
                .id
                .clone()
        };
        let stopped = id(b"tao: step main: child timeout reached after 57 s (the job's child timeout, a share of its --time); stopped, returned error code 124");
        let cancelled =
            id(b"slurmstepd-n1: error: *** STEP 6307.0 ON n1 CANCELLED AT 2026-11-29T22:59:00 ***");
        assert_eq!(stopped, "tao.child_timeout");
        assert_eq!(cancelled, "slurm.cancelled");
        let p = |id: &str| {
            cat.rules()
                .iter()
                .find(|r| r.spec.id == id)
                .unwrap()
                .spec
                .priority
        };
        assert!(p("tao.child_timeout") > p("slurm.cancelled"));
        let late = id(b"tao: step post_2: child timeout reached after 57 s (the job's child timeout, a share of its --time); not started, returned error code 124");
        assert_eq!(late, "tao.child_timeout");
    }

    #[test]
    fn requeue_without_secrets_reads_old_and_new_wording() {
        let cat = Catalogue::builtin().unwrap();
        for line in [
            &b"tao: error: requeued by Slurm (restart 2): the secrets sidecar /x/env/secrets.env does not exist (the previous run removed it)"[..],
            &b"tao: error: requeued attempt: the secrets sidecar /x/env/secrets.env does not exist (the previous attempt removed it)"[..],
        ] {
            let m = cat.match_line(line).unwrap();
            assert_eq!(cat.rules()[m.rule].spec.id, "tao.secrets_gone_after_requeue");
        }
    }
}
