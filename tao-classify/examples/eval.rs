//! `make eval`: score tao-classify on the corpus of real failure excerpts.
//!
//! usage: cargo run -q -p tao-classify --example eval -- [--dev-misses] [--dev-only] [--by-rule] [DIR]
//!
//! DIR defaults to tao-classify/corpus/real. Prints, per split (dev, test),
//! accuracy per class, a confusion matrix, the ambiguous and unambiguous
//! figures and the count of program faults marked for retry.
//! `--dev-misses` also prints each missed DEV record (test-split misses are
//! never printed: rules are tuned on dev only, see corpus/README.md).
//! `--by-rule` prints, for the dev split, each deciding rule with the
//! labels of the records it decided (a rule with mixed labels is no
//! specific evidence).
//! `--dev-only` prints the dev split alone (no test figure at all, exit 0):
//! the tuning loop, so the test aggregates are read only when meant to.
//! Exit: 0 when the test split meets the goals (unambiguous >= 95%,
//! ambiguous >= 80%, no program fault retried), 1 when it does not, 2 for a
//! bad argument, 78 for an invalid corpus.

use std::path::PathBuf;

use tao_classify::eval::{load_dir, score, split_of, Split};
use tao_classify::Catalogue;

fn main() {
    let mut dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/corpus/real"));
    let mut dev_misses = false;
    let mut dev_only = false;
    let mut by_rule = false;
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--dev-misses" => dev_misses = true,
            "--dev-only" => dev_only = true,
            "--by-rule" => by_rule = true,
            "--test-misses" => {
                eprintln!("eval: test-split misses are never printed (tune on dev only; corpus/README.md)");
                std::process::exit(2);
            }
            a if a.starts_with('-') => {
                eprintln!("eval: unknown option {a}; usage: eval [--dev-misses] [--dev-only] [--by-rule] [DIR]");
                std::process::exit(2);
            }
            a => dir = PathBuf::from(a),
        }
    }
    let records = match load_dir(&dir) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("eval: {e}");
            std::process::exit(e.code());
        }
    };
    let cat = Catalogue::builtin().expect("built-in catalogue");
    let reports = match score(&records, &cat) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("eval: {e}");
            std::process::exit(e.code());
        }
    };
    let n_test = records
        .iter()
        .filter(|r| split_of(&r.id) == Split::Test)
        .count();
    println!(
        "corpus {}: {} records, dev {}, test {} (test iff sha256(id)[0] % 10 < 3)",
        dir.display(),
        records.len(),
        records.len() - n_test,
        n_test
    );
    for (split, rep) in &reports {
        if dev_only && *split == Split::Test {
            continue;
        }
        print!("{}", rep.render(*split));
        if *split == Split::Dev && by_rule {
            print!("{}", rep.render_by_rule());
            if std::env::var_os("EVAL_RULE_RECORDS").is_some() {
                for (rule, ids) in &rep.rule_records {
                    println!("  {rule}: {}", ids.join(" "));
                }
            }
        }
        if *split == Split::Dev && dev_misses {
            for m in &rep.misses {
                println!("  MISS {m}");
            }
        }
    }
    if dev_only {
        return;
    }
    let test = &reports[&Split::Test];
    if test.meets_goals() {
        println!("test split meets the goals (unambiguous >= 95%, ambiguous >= 80%, 0 program faults retried)");
    } else {
        println!("test split MISSES the goals (unambiguous >= 95%, ambiguous >= 80%, 0 program faults retried)");
        std::process::exit(1);
    }
}
