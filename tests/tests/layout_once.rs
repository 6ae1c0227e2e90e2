//! The job-folder layout is spelled once (issue 13): outside
//! `tao_core::model` (its `Layout`), no product source spells the paths of
//! tao-jobline(7) SHARED STORAGE. Doc comments and `#[cfg(test)]` modules
//! may name them; code must call the model's methods.

use std::path::{Path, PathBuf};

/// Spellings of the layout that only `Layout` may hold.
const SPELLINGS: &[&str] = &[
    "slurm-logs/",
    "env/secrets.env",
    "inputs/action-helpers",
    "/sbatch/job_",
    "meta/job.json",
    "}/jobs/{",
    "}/results/{",
    "}/images/{",
];

/// Known exceptions: (file suffix, spelling, why).
const ALLOWED: &[(&str, &str, &str)] = &[
    (
        "tao-submit/src/cli.rs",
        "meta/job.json",
        "help text telling the user what is staged",
    ),
    (
        "tao-submit/src/probe/config.rs",
        "inputs/action-helpers",
        "PROGRAM_REL is a const &str (concat! takes only literals); it must stay under Layout::ACTION_HELPERS",
    ),
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn only_the_model_spells_the_job_folder_layout() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for e in std::fs::read_dir(&root).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        if name.starts_with("tao-") && p.join("src").is_dir() {
            rust_files(&p.join("src"), &mut files);
        }
    }
    assert!(files.len() > 20, "found only {} source files", files.len());
    let mut found = Vec::new();
    for f in files {
        if f.ends_with("tao-core/src/model.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap();
        // Product code only: up to the unit-test module.
        let code = text.split("#[cfg(test)]").next().unwrap();
        for (i, line) in code.lines().enumerate() {
            let t = line.trim_start();
            if t.starts_with("//") {
                continue;
            }
            for s in SPELLINGS {
                let allowed = ALLOWED
                    .iter()
                    .any(|(file, sp, _)| f.ends_with(file) && sp == s);
                if line.contains(s) && !allowed {
                    found.push(format!("{}:{}: {}", f.display(), i + 1, line.trim()));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "use tao_core::model::Layout instead of spelling the layout:\n{}",
        found.join("\n")
    );
}
