//! Scoring the classifier on the corpus of real failure excerpts
//! (`tao-classify/corpus/real/*.jsonl`, schema in `corpus/README.md`):
//! loading and validating the records, the dev/test split, and the figures
//! `make eval` prints.
//!
//! The split is deterministic: a record is in the **test** split iff the
//! first byte of `sha256(id)` modulo 10 is below 3 (about 30%), else in
//! **dev**. Rules are tuned on dev only: [`Report::misses`] is kept for dev
//! only, a test record's outcome is only ever counted.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::Deserialize;
use serde_json::json;
use sha2::{Digest, Sha256};
use tao_core::{Error, JobLine, Result};

use crate::{classify, Catalogue, Class, Options};

/// Where a record came from (`source` object of a corpus record).
#[derive(Debug, Clone, Deserialize)]
pub struct Source {
    /// GitHub `owner/name`, or a documentation site/product name.
    pub repo: String,
    /// `"issue N"`, `"pull N"`, `"discussion N"` or a document's title.
    #[serde(rename = "ref")]
    pub reference: String,
    /// The public address.
    pub url: String,
}

/// One labelled excerpt of a real failure log.
#[derive(Debug, Clone, Deserialize)]
pub struct Record {
    /// Unique id, `<family>-<4 digits>`.
    pub id: String,
    /// Public source.
    pub source: Source,
    /// The log lines the failed job left (`\n`-separated).
    pub text: String,
    /// Slurm end state (`FAILED`, `NODE_FAIL`, `TIMEOUT`, `OUT_OF_MEMORY`, `CANCELLED`, `PREEMPTED`).
    #[serde(default = "failed")]
    pub state: String,
    /// Expected class: `infra`, `program` or `scheduler`.
    pub label: String,
    /// Short snake_case description of the kind (not scored).
    pub subclass: String,
    /// Whether a retry should be attempted.
    pub retry: bool,
    /// Whether the excerpt alone supports two readings.
    #[serde(default)]
    pub ambiguous: bool,
    /// Why this label (not scored).
    #[serde(default)]
    pub rationale: String,
}

fn failed() -> String {
    "FAILED".into()
}

/// The two halves of the corpus.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Split {
    /// Tuned on: misses are printed.
    Dev,
    /// Only scored: misses are never printed.
    Test,
}

impl Split {
    /// `"dev"` or `"test"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Split::Dev => "dev",
            Split::Test => "test",
        }
    }
}

/// The split of a record id: test iff `sha256(id)[0] % 10 < 3`.
pub fn split_of(id: &str) -> Split {
    let digest = Sha256::digest(id.as_bytes());
    if digest[0] % 10 < 3 {
        Split::Test
    } else {
        Split::Dev
    }
}

/// Load every `*.jsonl` file of `dir` (sorted by name) and validate it:
/// every line parses, ids match `<family>-<digits>` and are unique, texts
/// are non-empty and unique, labels are infra/program/scheduler.
///
/// Errors: [`Error::Io`] for an unreadable file; [`Error::BadLine`]-like
/// [`Error::Config`] naming the file, line and the fault otherwise.
pub fn load_dir(dir: &Path) -> Result<Vec<Record>> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| Error::io(format!("reading corpus directory {:?}", dir.display()), e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    let mut ids = BTreeSet::new();
    let mut texts = BTreeMap::new();
    for path in files {
        let text = std::fs::read_to_string(&path)
            .map_err(|e| Error::io(format!("reading {:?}", path.display()), e))?;
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let at = format!("{}:{}", path.display(), i + 1);
            let bad = |m: String| Error::Config(format!("{at}: {m}; fix the record"));
            let rec: Record = serde_json::from_str(line)
                .map_err(|e| bad(format!("not a corpus record ({e})")))?;
            let (family, num) = rec.id.rsplit_once('-').unwrap_or(("", ""));
            if family.is_empty() || num.is_empty() || !num.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad(format!("id {:?} is not <family>-<digits>", rec.id)));
            }
            if !ids.insert(rec.id.clone()) {
                return Err(bad(format!("duplicate id {:?}", rec.id)));
            }
            if rec.text.trim().is_empty() {
                return Err(bad(format!("{}: empty text", rec.id)));
            }
            if let Some(first) = texts.insert(rec.text.trim().to_string(), rec.id.clone()) {
                return Err(bad(format!("{}: same text as {first}", rec.id)));
            }
            if !matches!(rec.label.as_str(), "infra" | "program" | "scheduler") {
                return Err(bad(format!(
                    "{}: label {:?} is not infra/program/scheduler",
                    rec.id, rec.label
                )));
            }
            out.push(rec);
        }
    }
    Ok(out)
}

/// The job line tao-classify would get for a record from `tao-poll
/// --evidence`: `state` ERROR, `slurm.native_state` the record's state, the
/// text as the `err` tail (main.out empty), attempt 1.
pub fn job_line(rec: &Record) -> JobLine {
    let lines: Vec<&str> = rec.text.lines().collect();
    let value = json!({
        "id": format!("tao-20261201-{}", rec.id),
        "state": "ERROR",
        "slurm": {"native_state": rec.state, "exit_code": "1:0", "nodes": "node001"},
        "attempt": 1,
        "evidence": {"out": {"first_line": 1, "lines": []}, "err": {"first_line": 1, "lines": lines}},
    });
    JobLine::parse(&value.to_string(), 1).expect("a built job line parses")
}

/// What the classifier said about one record.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The class given (`unknown` counts as a miss).
    pub class: Class,
    /// The retry decision.
    pub retry: bool,
    /// The deciding rule.
    pub rule: String,
}

/// Classify one record.
///
/// Errors: whatever [`classify`] returns (a malformed line cannot happen here).
pub fn run(rec: &Record, cat: &Catalogue, opts: &Options) -> Result<Outcome> {
    let mut line = job_line(rec);
    let c = classify(&mut line, cat, opts)?
        .ok_or_else(|| Error::Internal(format!("{}: not classified", rec.id)))?;
    Ok(Outcome {
        class: c.class,
        retry: c.retry,
        rule: c.rule,
    })
}

/// Labels in the order of the confusion matrix rows.
pub const LABELS: [&str; 3] = ["infra", "program", "scheduler"];
/// Classes in the order of the confusion matrix columns.
pub const CLASSES: [&str; 4] = ["infra", "program", "scheduler", "unknown"];

/// The figures of one split.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// Records scored.
    pub total: usize,
    /// `confusion[label][class]`: counts, rows [`LABELS`], columns [`CLASSES`].
    pub confusion: [[usize; 4]; 3],
    /// Right (class and retry as labelled) per label: (right, total).
    pub per_label: [(usize, usize); 3],
    /// Unambiguous records: (right, total).
    pub unambiguous: (usize, usize),
    /// Ambiguous records: (right, total).
    pub ambiguous: (usize, usize),
    /// Records labelled program that were marked for retry.
    pub program_retried: usize,
    /// Per-record misses (`id: expected ... got ...`); filled for dev only.
    pub misses: Vec<String>,
    /// Per deciding rule: counts of the records it decided by label
    /// (columns [`LABELS`]) and how many of them were right; filled for dev
    /// only (the tuning view: a rule whose records have mixed labels is
    /// not specific evidence).
    pub by_rule: BTreeMap<String, ([usize; 3], usize)>,
    /// Per deciding rule, the dev records it decided (`id:label/retry`); dev only.
    pub rule_records: BTreeMap<String, Vec<String>>,
}

impl Report {
    /// Add one record's outcome. `keep_miss`: record the miss line (dev only).
    pub fn add(&mut self, rec: &Record, got: &Outcome, keep_miss: bool) {
        let row = LABELS.iter().position(|l| *l == rec.label).unwrap_or(0);
        let col = CLASSES
            .iter()
            .position(|c| *c == got.class.as_str())
            .unwrap_or(3);
        self.total += 1;
        self.confusion[row][col] += 1;
        let right = got.class.as_str() == rec.label && got.retry == rec.retry;
        let bump = |p: &mut (usize, usize)| {
            p.1 += 1;
            if right {
                p.0 += 1;
            }
        };
        bump(&mut self.per_label[row]);
        bump(if rec.ambiguous {
            &mut self.ambiguous
        } else {
            &mut self.unambiguous
        });
        if rec.label == "program" && got.retry {
            self.program_retried += 1;
        }
        if keep_miss {
            let e = self.by_rule.entry(got.rule.clone()).or_default();
            e.0[row] += 1;
            if right {
                e.1 += 1;
            }
            self.rule_records
                .entry(got.rule.clone())
                .or_default()
                .push(format!("{}:{}/{}", rec.id, rec.label, rec.retry));
        }
        if !right && keep_miss {
            self.misses.push(format!(
                "{} ({}{}): expected {}/{} got {}/{} by {}",
                rec.id,
                rec.subclass,
                if rec.ambiguous { ", ambiguous" } else { "" },
                rec.label,
                rec.retry,
                got.class.as_str(),
                got.retry,
                got.rule
            ));
        }
    }

    /// The per-rule table of [`Report::by_rule`] (dev only), one line a rule.
    pub fn render_by_rule(&self) -> String {
        let mut s = String::from("deciding rule (dev): infra program scheduler right/total\n");
        for (rule, (n, right)) in &self.by_rule {
            let total: usize = n.iter().sum();
            let mixed = if n.iter().filter(|&&c| c > 0).count() > 1 {
                "  MIXED"
            } else {
                ""
            };
            s.push_str(&format!(
                "  {rule:<34}{:>6}{:>8}{:>10}  {right}/{total}{mixed}\n",
                n[0], n[1], n[2]
            ));
        }
        s
    }

    /// Share right of the unambiguous records (1.0 when there are none).
    pub fn unambiguous_share(&self) -> f64 {
        share(self.unambiguous)
    }

    /// Share right of the ambiguous records (1.0 when there are none).
    pub fn ambiguous_share(&self) -> f64 {
        share(self.ambiguous)
    }

    /// The goals (docs/design.md, "Retry policy"): unambiguous >= 95%, ambiguous >= 80%, no program fault retried.
    pub fn meets_goals(&self) -> bool {
        self.unambiguous_share() >= 0.95
            && self.ambiguous_share() >= 0.80
            && self.program_retried == 0
    }

    /// The printed figures (no per-record lines).
    pub fn render(&self, split: Split) -> String {
        let mut s = format!("== {} split: {} records\n", split.as_str(), self.total);
        s.push_str("accuracy per class (class and retry as labelled):\n");
        for (i, l) in LABELS.iter().enumerate() {
            s.push_str(&format!("  {l:<10} {}\n", fmt(self.per_label[i])));
        }
        s.push_str("confusion (rows: label, columns: class given):\n");
        s.push_str(&format!("  {:<10}", ""));
        for c in CLASSES {
            s.push_str(&format!("{c:>10}"));
        }
        s.push('\n');
        for (i, l) in LABELS.iter().enumerate() {
            s.push_str(&format!("  {l:<10}"));
            for n in self.confusion[i] {
                s.push_str(&format!("{n:>10}"));
            }
            s.push('\n');
        }
        s.push_str(&format!("unambiguous: {}\n", fmt(self.unambiguous)));
        s.push_str(&format!("ambiguous:   {}\n", fmt(self.ambiguous)));
        s.push_str(&format!(
            "program faults marked for retry: {}\n",
            self.program_retried
        ));
        s
    }
}

fn share((right, total): (usize, usize)) -> f64 {
    if total == 0 {
        1.0
    } else {
        right as f64 / total as f64
    }
}

fn fmt(p: (usize, usize)) -> String {
    format!("{}/{} ({:.1}%)", p.0, p.1, share(p) * 100.0)
}

/// Score every record: one [`Report`] per split; misses are kept for dev only.
///
/// Errors: whatever [`run`] returns.
pub fn score(records: &[Record], cat: &Catalogue) -> Result<BTreeMap<Split, Report>> {
    let opts = Options::default();
    let mut out: BTreeMap<Split, Report> = BTreeMap::new();
    out.insert(Split::Dev, Report::default());
    out.insert(Split::Test, Report::default());
    for rec in records {
        let split = split_of(&rec.id);
        let got = run(rec, cat, &opts)?;
        out.get_mut(&split)
            .expect("both splits present")
            .add(rec, &got, split == Split::Dev);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_is_sha256_first_byte_mod_10() {
        // sha256("nccl-0001") and friends, computed with sha256sum.
        let test = ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"]
            .iter()
            .filter(|id| split_of(id) == Split::Test)
            .count();
        assert!(test < 10 && test > 0);
        // sha256("abc")[0] = 0xba = 186 -> 6 -> dev
        assert_eq!(split_of("abc"), Split::Dev);
    }

    fn rec(id: &str, text: &str, label: &str) -> String {
        json!({"id": id, "source": {"repo": "r", "ref": "issue 1", "url": "u"},
               "text": text, "state": "FAILED", "label": label, "subclass": "s",
               "retry": label == "infra", "ambiguous": false, "rationale": "r"})
        .to_string()
    }

    #[test]
    fn load_validates_ids_texts_and_labels() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.jsonl");
        std::fs::write(
            &p,
            format!(
                "{}\n{}\n",
                rec("x-0001", "t1", "infra"),
                rec("x-0002", "t2", "program")
            ),
        )
        .unwrap();
        assert_eq!(load_dir(dir.path()).unwrap().len(), 2);
        for (bad, what) in [
            (rec("x-0001", "t3", "infra"), "duplicate id"),
            (rec("x-0003", "t1", "infra"), "same text"),
            (rec("x-0004", "t4", "unknown"), "label"),
            (rec("x0005", "t5", "infra"), "not <family>"),
        ] {
            std::fs::write(dir.path().join("b.jsonl"), format!("{bad}\n")).unwrap();
            let e = load_dir(dir.path()).unwrap_err().to_string();
            assert!(e.contains(what), "{e}");
        }
    }

    #[test]
    fn report_counts_and_keeps_misses_only_when_asked() {
        let r: Record = serde_json::from_str(&rec("x-0001", "t", "program")).unwrap();
        let mut rep = Report::default();
        let got = Outcome {
            class: Class::Infra,
            retry: true,
            rule: "x".into(),
        };
        rep.add(&r, &got, false);
        assert_eq!((rep.program_retried, rep.unambiguous), (1, (0, 1)));
        assert!(rep.misses.is_empty() && !rep.meets_goals());
        assert!(
            rep.by_rule.is_empty(),
            "the per-rule view is kept for dev only"
        );
        rep.add(&r, &got, true);
        assert_eq!(rep.misses.len(), 1);
        assert_eq!(rep.confusion[1][0], 2);
        assert_eq!(rep.by_rule["x"], ([0, 1, 0], 0));
        assert_eq!(
            rep.rule_records["x"],
            vec!["x-0001:program/false".to_string()]
        );
        assert!(rep.render_by_rule().contains("  x "));
    }
}
