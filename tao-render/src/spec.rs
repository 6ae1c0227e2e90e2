//! The command line of `tao-render` as data: every flag once
//! (`tao_core::flags`). The tool's parser (`cli.rs`), its `-h` and
//! `--help` are driven by it, and man/ compiles this same file
//! (`#[path]` in man/src/commands.rs) to build the `clap::Command` its
//! man page and shell completions are generated from: one definition, no
//! hand-kept mirror.

use tao_core::flags::{Flag, Tool};

/// The command line: every flag once (`tao_core::flags`), driving the
/// parser below, `-h` and `--help`, and the man page and completions
/// (man/ builds a `clap::Command` from it).
pub const SPEC: Tool = Tool {
    name: "tao-render",
    about: "render job lines into sbatch scripts",
    usage: &["tao-render [--print] [--allow-unlimited] [--site-profile NAME|FILE] < lines"],
    description: "Reads job lines (tao-jobline(7)) on standard input and writes each one back \
with `script = {template, sha256, text, bindings, resources, image}` added. The template is \
`single` (one node) or `multi` (two or more nodes). Lines that arrive with an `error` from an \
earlier tool pass through untouched.

Every value reaching the shell is single-quoted by the template escaper; values on #SBATCH \
lines must match a strict character set. A line breaking a rule (wall time above its \
partition's limit, a partition the site profile does not list, a reserved env or secret name, \
a relative or non-.sqsh image, a bad #SBATCH value, ...) gets `error` and goes on. The rules \
are the ones `tao-record open` applies (tao-core's request module): a line it opened renders. \
A malformed line is reported on standard error with its line number and the others are still \
rendered (tao-jobline(7)).",
    flags: &[
        Flag::switch("print", "print the bare script of one job line").long_help(
            "Print the bare script instead of the job line. Takes exactly one job line (for \
many, use: tao-render | jq -r .script.text).",
        ),
        Flag::switch("allow-unlimited", "no effect (kept for old command lines)").long_help(
            "No effect; kept so old command lines still work. `0`, `-1`, `INFINITE` and \
`UNLIMITED` are accepted as resources.time wherever the partition's limit in the site profile \
is unlimited (or the profile does not list the partition), and refused where it is finite, as \
tao-record open does.",
        ),
        Flag::value(
            "site-profile",
            "NAME|FILE",
            "site profile (built-in name or TOML file)",
        )
        .env("TAO_SITE_PROFILE")
        .long_help(
            "Site profile: `local`, `cs-oci-ord`, or a TOML file. Default: the \
TAO_SITE_PROFILE environment variable, else `cs-oci-ord`.",
        ),
        Flag::QUIET,
        Flag::verbose(
            "print what the tool does",
            "Print what the tool does on standard error (one line per line rendered).",
        ),
        Flag::HELP,
        Flag::VERSION,
    ],
    subs: &[],
    sections: &[],
    exit_status: "  0 all rendered; 1 some lines refused (they carry `error`); 2 usage;
  65 malformed input line; 74 output failed; 78 bad site profile.
",
};
