//! The evidence fallback's generated weights and its training.

#[path = "../train/trainer.rs"]
mod trainer;

use tao_classify::eval::{load_dir, split_of, Split};
use tao_classify::fallback::{self, Model};

/// Drift: `rules/fallback.tsv` was trained on the current dev split and the
/// current built-in rules. Fails after a dev record is added, removed,
/// relabelled or edited (or a rule changed) until `make train` is run.
#[test]
fn weights_were_trained_on_the_current_dev_split_and_rules() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/real");
    let records = load_dir(&dir).unwrap();
    let digest = fallback::training_digest(
        records
            .iter()
            .filter(|r| split_of(&r.id) == Split::Dev)
            .map(|r| (r.id.as_str(), r.label == "infra", r.text.as_str())),
        fallback::BUILTIN_RULES,
    );
    assert_eq!(
        Model::builtin().dev_digest,
        digest,
        "the dev split or rules/builtin.toml changed since rules/fallback.tsv was trained: run `make train` and commit rules/fallback.tsv"
    );
}

fn synthetic() -> Vec<trainer::Sample> {
    let mut out = Vec::new();
    let infra = [
        "NCCL WARN NET/IB : Got completion from peer with status=12 retry counter exceeded",
        "kernel: mlx5_core link down on port 1 transport retry counter exceeded",
        "NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus",
        "pcieport 0000:00:03.1: AER: Uncorrected (Fatal) error received, link down",
    ];
    let program = [
        "KeyError: 'train_dataset' in the spec file",
        "ValueError: batch size must be positive, got 0",
        "AssertionError: the spec file names no model",
        "TypeError: forward() missing 1 required positional argument",
    ];
    for fam in 0..4 {
        for (i, t) in infra.iter().enumerate() {
            out.push(trainer::Sample::new(
                &format!("f{fam}i-{i:04}"),
                true,
                &format!("{t} on node00{fam}"),
                i % 2 == 0,
            ));
        }
        for (i, t) in program.iter().enumerate() {
            out.push(trainer::Sample::new(
                &format!("f{fam}p-{i:04}"),
                false,
                &format!("{t} (rank {fam})"),
                i % 2 == 0,
            ));
        }
    }
    out
}

/// Training twice on the same samples gives the same file byte for byte,
/// and the threshold is at least every held-out score of an unmatched
/// non-infra sample (so CV retries none of them).
#[test]
fn training_is_deterministic_and_the_threshold_retries_no_held_out_program_fault() {
    let samples = synthetic();
    let (a, cv_a) = trainer::train(&samples, &trainer::CONFIGS[..1], "d");
    let (b, _) = trainer::train(&samples, &trainer::CONFIGS[..1], "d");
    assert_eq!(a.to_tsv(), b.to_tsv());
    assert_eq!(Model::parse(&a.to_tsv()).unwrap(), a);
    let cv = &cv_a[0];
    for (s, p) in samples.iter().zip(&cv.scores) {
        if !s.infra && s.unmatched {
            assert!(
                *p <= a.threshold,
                "{} held out at {p} > {}",
                s.id,
                a.threshold
            );
        }
    }
    assert!(a.weights.get("fallen").copied().unwrap_or(0.0) > 0.0);
    assert!(a.weights.get("keyerror").copied().unwrap_or(0.0) < 0.0);
}
