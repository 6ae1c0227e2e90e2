//! `make train`: train the evidence fallback on the corpus's DEV split and
//! write `tao-classify/rules/fallback.tsv` (compiled into the binary).
//!
//! usage: cargo run --release -p tao-classify --example train -- [--check] [DIR]
//!
//! DIR defaults to tao-classify/corpus/real. Test records are never read
//! past their id (the split is by id: `eval::split_of`). Prints the
//! leave-one-family-out CV figures of every config of the grid, the chosen
//! one, and how the held-out scores fall on the dev records no rule matches
//! (where the fallback acts). Deterministic: the same corpus gives the same
//! file byte for byte. `--check` writes nothing and exits 1 when the file
//! differs from what training gives (the full drift check).
//! Exit: 0 ok, 1 `--check` found a stale file, 2 bad argument, 78 invalid corpus.

#[path = "../train/trainer.rs"]
mod trainer;

use std::path::PathBuf;

use tao_classify::eval::{load_dir, run, split_of, Split};
use tao_classify::{fallback, Catalogue, Options};

fn main() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut dir = root.join("corpus/real");
    let mut check = false;
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--check" => check = true,
            a if a.starts_with('-') => {
                eprintln!("train: unknown option {a}; usage: train [--check] [DIR]");
                std::process::exit(2);
            }
            a => dir = PathBuf::from(a),
        }
    }
    let records = load_dir(&dir).unwrap_or_else(|e| {
        eprintln!("train: {e}");
        std::process::exit(e.code());
    });
    let dev: Vec<_> = records
        .iter()
        .filter(|r| split_of(&r.id) == Split::Dev)
        .collect();
    // Where the fallback acts: dev records no rule matches.
    let cat = Catalogue::builtin().expect("built-in catalogue");
    let rules_only = Options::default().with_fallback(false);
    let samples: Vec<trainer::Sample> = dev
        .iter()
        .map(|r| {
            let unmatched = run(r, &cat, &rules_only)
                .map(|o| o.rule == "evidence.no_match")
                .unwrap_or(false);
            trainer::Sample::new(&r.id, r.label == "infra", &r.text, unmatched)
        })
        .collect();
    let digest = fallback::training_digest(
        dev.iter()
            .map(|r| (r.id.as_str(), r.label == "infra", r.text.as_str())),
        fallback::BUILTIN_RULES,
    );
    let (model, results) = trainer::train(&samples, &trainer::CONFIGS, &digest);
    println!(
        "dev {} records ({} infra), {} with no rule matched ({} infra)",
        dev.len(),
        samples.iter().filter(|s| s.infra).count(),
        samples.iter().filter(|s| s.unmatched).count(),
        samples.iter().filter(|s| s.unmatched && s.infra).count(),
    );
    println!("cv leave-one-family-out; threshold = highest held-out score of a non-infra dev record no rule matches");
    println!(
        "  ngram min_df alpha  threshold  unmatched-infra>thr  all-infra>thr  all-non-infra>thr"
    );
    for r in &results {
        println!(
            "  {:>5} {:>6} {:>5}  {:>9.4}  {:>19}  {:>13}  {:>17}",
            r.config.ngram,
            r.config.min_df,
            r.config.alpha,
            r.threshold,
            r.infra_above,
            r.all_infra_above,
            r.all_other_above
        );
    }
    println!(
        "chosen: ngram {} threshold {:.6}, {} weights",
        model.ngram,
        model.threshold,
        model.weights.len()
    );
    let path = root.join("rules/fallback.tsv");
    let text = model.to_tsv();
    if check {
        let old = std::fs::read_to_string(&path).unwrap_or_default();
        if old != text {
            eprintln!(
                "train: {} is stale; run `make train` and commit it",
                path.display()
            );
            std::process::exit(1);
        }
        println!("{} is up to date", path.display());
        return;
    }
    if let Err(e) = std::fs::write(&path, text) {
        eprintln!("train: writing {}: {e}", path.display());
        std::process::exit(74);
    }
    println!("wrote {}", path.display());
}
