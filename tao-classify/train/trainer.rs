//! Training the evidence fallback (`tao_classify::fallback`): shared by the
//! `train` example (`make train`, which writes `rules/fallback.tsv`) and the
//! tests (determinism). Not part of the library: it needs `linfa-logistic`,
//! a dev-dependency, so the binary links no linear-algebra crate.
//!
//! How (all of it deterministic: sorted maps, no randomness, L-BFGS from
//! zero):
//! - samples: the corpus's DEV split only, label infra vs. not infra;
//!   features [`tao_classify::fallback::features`] (presence of normalised
//!   tokens, and bigrams when `ngram` = 2);
//! - vocabulary: features present in at least `min_df` training samples;
//! - model: L2-regularised logistic regression (`linfa-logistic`, weight
//!   `alpha`), intercept fitted;
//! - cross-validation: leave-one-family-out (the family is the id's prefix,
//!   `g6cuda` of `g6cuda-0011`: one gatherer's batch of one source family),
//!   so each held-out record is scored by a model that never saw its kind;
//! - threshold: the highest held-out score of a dev record NOT labelled
//!   infra (program or scheduler) among those no rule matches (the only
//!   records the fallback ever sees). The fallback says infra only
//!   strictly above it, so on CV no dev program fault is retried;
//! - selection: over the grid of [`CONFIGS`], the config with the most
//!   held-out unmatched infra records above its threshold (ties: more
//!   infra records above it overall, the larger `alpha`, then unigrams).
//!
//! Which records no rule matches depends on the catalogue, so the digest
//! in the file covers `rules/builtin.toml` as well as the dev split.

#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};

use linfa::prelude::*;
use linfa_logistic::LogisticRegression;
use ndarray::{Array1, Array2};
use tao_classify::fallback::{self, Model};

/// One training sample.
#[derive(Debug, Clone)]
pub struct Sample {
    /// Corpus id.
    pub id: String,
    /// CV group: the id's prefix.
    pub family: String,
    /// Labelled infra.
    pub infra: bool,
    /// Features with ngram 2 (a unigram model filters the bigrams out).
    pub feats: BTreeSet<String>,
    /// No rule of the catalogue matches it: the fallback would act on it.
    pub unmatched: bool,
}

impl Sample {
    /// A sample from an id, a label and an excerpt.
    pub fn new(id: &str, infra: bool, text: &str, unmatched: bool) -> Sample {
        Sample {
            id: id.to_string(),
            family: id.rsplit_once('-').map(|p| p.0).unwrap_or(id).to_string(),
            infra,
            feats: fallback::features(text, 2),
            unmatched,
        }
    }

    fn feats(&self, ngram: u8) -> impl Iterator<Item = &String> {
        self.feats
            .iter()
            .filter(move |f| ngram >= 2 || !f.contains(' '))
    }
}

/// One point of the grid.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Config {
    /// 1 or 2.
    pub ngram: u8,
    /// Minimum number of training samples a feature must occur in.
    pub min_df: usize,
    /// L2 weight.
    pub alpha: f64,
}

/// The grid searched by cross-validation (a first run over ngram 1/2 x
/// alpha 0.3/1/3 put these three on top; kept small so `make train` stays
/// a few minutes on two cores).
pub const CONFIGS: [Config; 3] = [
    Config {
        ngram: 1,
        min_df: 2,
        alpha: 0.3,
    },
    Config {
        ngram: 1,
        min_df: 2,
        alpha: 1.0,
    },
    Config {
        ngram: 2,
        min_df: 2,
        alpha: 1.0,
    },
];

/// Fit one model on `samples`: (bias, weights by feature).
///
/// Panics if `samples` hold one label only (the corpus holds both).
pub fn fit(samples: &[&Sample], cfg: Config) -> (f64, BTreeMap<String, f64>) {
    let mut df: BTreeMap<&String, usize> = BTreeMap::new();
    for s in samples {
        for f in s.feats(cfg.ngram) {
            *df.entry(f).or_default() += 1;
        }
    }
    let vocab: BTreeMap<&String, usize> = df
        .into_iter()
        .filter(|(_, n)| *n >= cfg.min_df)
        .map(|(f, _)| f)
        .enumerate()
        .map(|(i, f)| (f, i))
        .collect();
    let mut x = Array2::<f64>::zeros((samples.len(), vocab.len()));
    for (r, s) in samples.iter().enumerate() {
        for f in s.feats(cfg.ngram) {
            if let Some(&c) = vocab.get(f) {
                x[(r, c)] = 1.0;
            }
        }
    }
    let y: Array1<bool> = samples.iter().map(|s| s.infra).collect();
    let fitted = LogisticRegression::default()
        .alpha(cfg.alpha)
        .max_iterations(150)
        .gradient_tolerance(1e-6)
        .fit(&Dataset::new(x, y))
        .expect("logistic regression fits");
    // linfa's positive class is the first label it met: orient to infra.
    let sign = if fitted.labels().pos.class { 1.0 } else { -1.0 };
    let params = fitted.params();
    let weights = vocab
        .iter()
        .map(|(f, &i)| ((*f).clone(), sign * params[i]))
        .collect();
    (sign * fitted.intercept(), weights)
}

fn score(bias: f64, w: &BTreeMap<String, f64>, s: &Sample, ngram: u8) -> f64 {
    let z = bias + s.feats(ngram).filter_map(|f| w.get(f)).sum::<f64>();
    1.0 / (1.0 + (-z).exp())
}

/// Held-out scores, leave-one-family-out, in the order of `samples`.
pub fn cv_scores(samples: &[Sample], cfg: Config) -> Vec<f64> {
    let families: BTreeSet<&str> = samples.iter().map(|s| s.family.as_str()).collect();
    let mut out = vec![0.0; samples.len()];
    for fam in families {
        let train: Vec<&Sample> = samples.iter().filter(|s| s.family != fam).collect();
        let (bias, w) = fit(&train, cfg);
        for (i, s) in samples.iter().enumerate() {
            if s.family == fam {
                out[i] = score(bias, &w, s, cfg.ngram);
            }
        }
    }
    out
}

/// The CV figures of one config.
#[derive(Debug, Clone)]
pub struct CvResult {
    /// The config.
    pub config: Config,
    /// Highest held-out score of an unmatched record not labelled infra.
    pub threshold: f64,
    /// Held-out unmatched infra records scored above the threshold.
    pub infra_above: usize,
    /// Held-out infra records (matched by a rule or not) above the threshold.
    pub all_infra_above: usize,
    /// Held-out non-infra records (matched by a rule or not) above the threshold.
    pub all_other_above: usize,
    /// Held-out scores, in sample order.
    pub scores: Vec<f64>,
}

/// Cross-validate one config.
pub fn cross_validate(samples: &[Sample], cfg: Config) -> CvResult {
    let scores = cv_scores(samples, cfg);
    let threshold = samples
        .iter()
        .zip(&scores)
        .filter(|(s, _)| !s.infra && s.unmatched)
        .map(|(_, &p)| p)
        .fold(0.0f64, f64::max);
    let above = |infra: bool, only_unmatched: bool| {
        samples
            .iter()
            .zip(&scores)
            .filter(|(s, &p)| s.infra == infra && (s.unmatched || !only_unmatched) && p > threshold)
            .count()
    };
    CvResult {
        config: cfg,
        threshold,
        infra_above: above(true, true),
        all_infra_above: above(true, false),
        all_other_above: above(false, false),
        scores,
    }
}

/// Train: cross-validate every config of `configs`, pick one (see the
/// module docs), fit it on every sample, and return the model (its
/// threshold rounded UP to 6 decimals, the precision of the file) with the
/// CV results of every config.
pub fn train(samples: &[Sample], configs: &[Config], digest: &str) -> (Model, Vec<CvResult>) {
    let results: Vec<CvResult> = configs
        .iter()
        .map(|&c| cross_validate(samples, c))
        .collect();
    let best = results
        .iter()
        .max_by(|a, b| {
            a.infra_above
                .cmp(&b.infra_above)
                .then(a.all_infra_above.cmp(&b.all_infra_above))
                .then(a.config.alpha.total_cmp(&b.config.alpha))
                .then(b.config.ngram.cmp(&a.config.ngram))
        })
        .expect("at least one config");
    let cfg = best.config;
    let all: Vec<&Sample> = samples.iter().collect();
    let (bias, weights) = fit(&all, cfg);
    let threshold = ((best.threshold * 1e6).ceil() / 1e6).min(1.0);
    let families: BTreeSet<&str> = samples.iter().map(|s| s.family.as_str()).collect();
    let n_infra = samples.iter().filter(|s| s.infra).count();
    let n_unmatched = samples.iter().filter(|s| s.unmatched).count();
    let n_unmatched_infra = samples.iter().filter(|s| s.unmatched && s.infra).count();
    let notes = vec![
        "generated by `make train` (cargo run --release -p tao-classify --example train): do not edit".to_string(),
        "the evidence fallback of tao-classify (src/fallback.rs, train/trainer.rs): logistic regression, infra vs not".to_string(),
        format!("dev_digest {digest}"),
        format!("ngram {}", cfg.ngram),
        format!("min_df {} alpha {}", cfg.min_df, cfg.alpha),
        format!("trained on the dev split: {} records, {} infra; {} matched by no rule, {} of them infra", samples.len(), n_infra, n_unmatched, n_unmatched_infra),
        format!(
            "cv leave-one-family-out over {} families: threshold = highest held-out score of a non-infra record no rule matches",
            families.len(),
        ),
        format!(
            "cv at the threshold: unmatched infra above {}/{}, unmatched non-infra above 0; all infra above {}/{}, all non-infra above {}",
            best.infra_above, n_unmatched_infra, best.all_infra_above, n_infra, best.all_other_above
        ),
    ];
    let model = Model {
        ngram: cfg.ngram,
        bias: round6(bias),
        weights: weights
            .into_iter()
            .map(|(f, w)| (f, round6(w)))
            .filter(|(_, w)| *w != 0.0)
            .collect(),
        threshold,
        dev_digest: digest.to_string(),
        notes,
    };
    (model, results)
}

fn round6(x: f64) -> f64 {
    let r = (x * 1e6).round() / 1e6;
    if r == 0.0 {
        0.0
    } else {
        r
    }
}
