//! Man pages and shell completions for the tao-slurm tools.
//!
//! One source for each tool's command line ([`commands`]): the clap
//! parsers of tao-record, tao-submit and tao-poll as they are, and
//! `clap::Command` mirrors of the lexopt parsers of tao-render,
//! tao-redact and tao-classify. From it, clap_mangen renders NAME,
//! SYNOPSIS, DESCRIPTION and OPTIONS ([`page`]), to which the
//! hand-written ENVIRONMENT, FILES, EXIT STATUS, EXAMPLES and SEE ALSO of
//! [`extras`] are appended; clap_complete renders the bash, zsh and fish
//! completions. [`jobline`] writes tao-jobline(7), the protocol page,
//! with its state table taken from the tools' own (`tao_core::state::native::TABLE`)
//! and its exit statuses from `tao_core::exit`; [`siteprofile`] writes
//! tao-site-profile(5), the site-profile TOML format.
//!
//! The generated files are checked in (`man/*.1`, `man/tao-site-profile.5`, `man/tao-jobline.7`,
//! `man/completions/`); `cargo run -p tao-man` rewrites them and
//! `tests/drift.rs` fails when they differ from a fresh generation, when a
//! page and its binary's `--help` disagree on the options, or when
//! `mandoc -T lint` finds a warning.

use std::path::{Path, PathBuf};

use clap_complete::Shell;

pub mod commands;
pub mod extras;
pub mod jobline;
pub mod page;
pub mod siteprofile;

/// One generated file: its path relative to the `man/` directory and its
/// bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct File {
    /// Path relative to `man/`, `/`-separated (e.g. `completions/zsh/_tao-poll`).
    pub path: String,
    /// Contents.
    pub bytes: Vec<u8>,
}

/// The shells completions are generated for, with the file name each
/// expects under its directory (the usual install locations:
/// `share/bash-completion/completions/<tool>`,
/// `share/zsh/site-functions/_<tool>`,
/// `share/fish/vendor_completions.d/<tool>.fish`).
pub const SHELLS: [(Shell, &str); 3] = [
    (Shell::Bash, "bash"),
    (Shell::Zsh, "zsh"),
    (Shell::Fish, "fish"),
];

/// The completion file name of `tool` for `shell` (`tao-x`, `_tao-x`,
/// `tao-x.fish`).
pub fn completion_file_name(shell: Shell, tool: &str) -> String {
    match shell {
        Shell::Zsh => format!("_{tool}"),
        Shell::Fish => format!("{tool}.fish"),
        _ => tool.to_string(),
    }
}

/// Every generated file, in a fixed order: six section-1 pages,
/// tao-jobline.7, tao-site-profile.5, then 18 completion scripts.
///
/// Output: [`File`]s; deterministic (no dates, no environment values).
pub fn generate() -> Vec<File> {
    let mut files = Vec::new();
    for (tool, cmd) in commands::all() {
        let extra = extras::for_tool(tool);
        files.push(File {
            path: format!("{tool}.1"),
            bytes: page::render(tool, &cmd, &extra).into_bytes(),
        });
    }
    files.push(File {
        path: "tao-jobline.7".into(),
        bytes: jobline::render().into_bytes(),
    });
    files.push(File {
        path: "tao-site-profile.5".into(),
        bytes: siteprofile::render().into_bytes(),
    });
    for (shell, dir) in SHELLS {
        for (tool, mut cmd) in commands::all() {
            let mut bytes = Vec::new();
            clap_complete::generate(shell, &mut cmd, tool, &mut bytes);
            files.push(File {
                path: format!("completions/{dir}/{}", completion_file_name(shell, tool)),
                bytes,
            });
        }
    }
    files
}

/// Write every generated file under `dir` (created as needed), each
/// atomically (temporary file in the same directory, then rename).
///
/// Output: the paths written. Errors: the first I/O error, with the path.
pub fn write_all(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    for f in generate() {
        let path = dir.join(&f.path);
        let parent = path.parent().unwrap_or(dir);
        std::fs::create_dir_all(parent)?;
        let tmp = parent.join(format!(
            ".{}.tmp",
            path.file_name().and_then(|n| n.to_str()).unwrap_or("page")
        ));
        std::fs::write(&tmp, &f.bytes)
            .and_then(|_| std::fs::rename(&tmp, &path))
            .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
        written.push(path);
    }
    Ok(written)
}

/// The checked-in `man/` directory (this crate's manifest directory).
pub fn man_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generation_is_deterministic_and_complete() {
        let a = generate();
        let b = generate();
        assert_eq!(a, b);
        assert_eq!(a.len(), 6 + 1 + 1 + 18);
        assert!(a.iter().any(|f| f.path == "completions/zsh/_tao-submit"));
        assert!(a.iter().any(|f| f.path == "completions/fish/tao-poll.fish"));
    }
}
