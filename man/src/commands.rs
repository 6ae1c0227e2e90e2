//! The six tools' command lines as `clap::Command`s, the one source the
//! man pages and the shell completions are generated from.
//!
//! tao-record, tao-submit and tao-poll parse with clap derive: their
//! `Cli` types are public, so their `Command` is taken as it is
//! (`CommandFactory::command()`), and a page can never describe an option
//! the parser does not have. tao-render, tao-redact and tao-classify parse
//! with lexopt (small filters with full control of their help text and
//! start-up) from a flag table (`tao_core::flags::Tool`, each tool's
//! `SPEC`: tao-render/src/spec.rs, tao-redact/src/spec.rs,
//! `tao_classify::cli::SPEC`) that also writes their `--help`; their `Command` is built
//! from that same table (`tao_cli::table::command`), so no flag is stated
//! twice. The drift test (`tests/drift.rs`) still runs each built
//! binary's `--help` and compares its options with the page's.

use clap::{Command, CommandFactory};

/// The version printed on every page: the workspace version, which every
/// tool shares (`version.workspace = true`).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The six tools' names, in pipeline order (the names [`all`] pairs with
/// their commands): [`tao_core::TOOLS`].
pub use tao_core::TOOLS;

/// The six tools, in pipeline order: (binary name, command line).
///
/// Output: `(name, clap::Command)` pairs; the name is the binary's file
/// name and the page's name (`<name>.1`).
pub fn all() -> Vec<(&'static str, Command)> {
    vec![
        ("tao-record", tao_record::cli::Cli::command()),
        ("tao-render", render()),
        ("tao-redact", redact()),
        ("tao-submit", tao_submit::cli::Cli::command()),
        ("tao-poll", tao_poll::cli::Cli::command()),
        ("tao-classify", classify()),
    ]
}

// tao-render and tao-redact are binary-only crates: their flag tables are
// compiled here from the same files their binaries compile.
#[path = "../../tao-redact/src/spec.rs"]
mod redact_spec;
#[path = "../../tao-render/src/spec.rs"]
mod render_spec;

/// `tao-render`: built from its flag table (tao-render/src/spec.rs).
pub fn render() -> Command {
    tao_cli::table::command(&render_spec::SPEC, VERSION)
}

/// `tao-redact`: built from its flag table (tao-redact/src/spec.rs):
/// filter mode without a command, `lint [FILE...]`, every option global.
pub fn redact() -> Command {
    tao_cli::table::command(&redact_spec::SPEC, VERSION)
}

/// `tao-classify`: built from its flag table (`tao_classify::cli::SPEC`).
pub fn classify() -> Command {
    tao_cli::table::command(&tao_classify::cli::SPEC, VERSION)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_command_is_consistent() {
        for (name, cmd) in all() {
            assert_eq!(cmd.get_name(), name);
            cmd.debug_assert();
        }
    }

    #[test]
    fn table_built_commands_accept_what_the_tools_accept() {
        render()
            .try_get_matches_from(["tao-render", "--print", "--site-profile", "local"])
            .unwrap();
        redact()
            .try_get_matches_from(["tao-redact", "lint", "--secret-env", "X", "a.sh", "b.sh"])
            .unwrap();
        classify()
            .try_get_matches_from(["tao-classify", "--log", "a", "--log", "b"])
            .unwrap();
        assert!(classify()
            .try_get_matches_from(["tao-classify", "--max-attempts", "0"])
            .is_err());
        assert!(render().try_get_matches_from(["tao-render", "-V"]).is_err());
        let m = classify()
            .try_get_matches_from(["tao-classify", "-vv", "-q"])
            .unwrap();
        assert_eq!(m.get_count("verbose"), 2);
        redact()
            .try_get_matches_from(["tao-redact", "lint", "-v", "--quiet"])
            .unwrap();
    }
}
