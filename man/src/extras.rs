//! The hand-written sections of each section-1 page: ENVIRONMENT, FILES,
//! EXIT STATUS, EXAMPLES and SEE ALSO. The rest of a page comes from the
//! tool's argument definitions.
//!
//! The text is data: man/extras.toml (compiled in), with its sources
//! named there; this file reads it and adds SEE ALSO and NO_COLOR.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::Deserialize;

use crate::page::Extra;

/// man/extras.toml, compiled in.
const DATA: &str = include_str!("../extras.toml");

/// One tool's table of man/extras.toml (or `[ssh]`).
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct Sections {
    /// Whether the `[ssh]` variables come first in ENVIRONMENT.
    ssh_env: bool,
    environment: Vec<(String, String)>,
    files: Vec<(String, String)>,
    exit_status: Vec<(i32, String)>,
    examples: Vec<(String, String)>,
}

/// man/extras.toml, parsed once: table name -> sections.
fn data() -> &'static BTreeMap<String, Sections> {
    static PARSED: OnceLock<BTreeMap<String, Sections>> = OnceLock::new();
    PARSED.get_or_init(|| {
        toml::from_str(DATA).expect("man/extras.toml parses (a unit test checks it)")
    })
}

/// `(a, b)` pairs of owned strings as the borrowed pairs of [`Extra`].
fn pairs(v: &'static [(String, String)]) -> impl Iterator<Item = (&'static str, &'static str)> {
    v.iter().map(|(a, b)| (a.as_str(), b.as_str()))
}

const SEE_ALSO: &[(&str, u8)] = &[
    ("tao-jobline", 7),
    ("tao-record", 1),
    ("tao-render", 1),
    ("tao-redact", 1),
    ("tao-submit", 1),
    ("tao-poll", 1),
    ("tao-classify", 1),
    ("sbatch", 1),
    ("squeue", 1),
    ("sacct", 1),
    ("jq", 1),
];

/// The tools that read a site profile (TAO_SITE_PROFILE): their SEE ALSO
/// names tao-site-profile(5).
const SITE_PROFILE_READERS: [&str; 4] = ["tao-record", "tao-render", "tao-submit", "tao-poll"];

/// SEE ALSO without the page itself, with tao-site-profile(5) after
/// tao-jobline(7) for the tools that read a site profile.
fn see_also(tool: &str) -> Vec<(&'static str, u8)> {
    let mut v: Vec<(&'static str, u8)> = SEE_ALSO
        .iter()
        .copied()
        .filter(|(n, _)| *n != tool)
        .collect();
    if SITE_PROFILE_READERS.contains(&tool) {
        v.insert(1, ("tao-site-profile", 5));
    }
    v
}

/// The ENVIRONMENT entry every page ends with: NO_COLOR
/// (https://no-color.org) is honoured because no tool ever prints colour.
pub const NO_COLOR: (&str, &str) = (
    "NO_COLOR",
    "Honoured: the tools never print colour (help, usage errors, tables and messages are plain text, on a terminal too), so there is nothing to turn off.",
);

/// The hand-written sections of `tool`'s page (an empty [`Extra`] for an
/// unknown name); ENVIRONMENT ends with [`NO_COLOR`].
pub fn for_tool(tool: &str) -> Extra {
    let Some(s) = data().get(tool) else {
        return Extra::default();
    };
    let mut environment = Vec::new();
    if s.ssh_env {
        environment.extend(pairs(&data()["ssh"].environment));
    }
    environment.extend(pairs(&s.environment));
    environment.push(NO_COLOR);
    Extra {
        environment,
        files: pairs(&s.files).collect(),
        exit_status: s
            .exit_status
            .iter()
            .map(|(c, t)| (*c, t.as_str()))
            .collect(),
        examples: pairs(&s.examples).collect(),
        see_also: see_also(tool),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The data file parses, names the six tools, and every exit status in
    /// it is one of tao_core::exit's.
    #[test]
    fn the_data_file_is_whole() {
        use tao_core::exit::*;
        let known = [
            OK,
            SOME_FAILED,
            USAGE,
            LINT_BLOCKED,
            DATAERR,
            UNAVAILABLE,
            SOFTWARE,
            IOERR,
            TEMPFAIL,
            PROTOCOL,
            NOPERM,
            CONFIG,
            INTERRUPTED,
            TERMINATED,
        ];
        let tools = crate::commands::TOOLS;
        for t in tools {
            let e = for_tool(t);
            assert!(e.environment.len() > 1 && !e.exit_status.is_empty(), "{t}");
            for (code, _) in &e.exit_status {
                assert!(known.contains(code), "{t}: exit status {code}");
            }
        }
        let names: Vec<&str> = data().keys().map(String::as_str).collect();
        assert_eq!(names.len(), tools.len() + 1, "{names:?}");
        assert!(!data()["ssh"].environment.is_empty());
        assert!(for_tool("tao-submit").environment[0].0 == "SLURM_HOSTNAME");
    }
}
