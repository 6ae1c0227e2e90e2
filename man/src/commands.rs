//! The six tools' command lines as `clap::Command`s, the one source the
//! man pages and the shell completions are generated from.
//!
//! tao-record, tao-submit and tao-poll parse with clap derive: their
//! `Cli` types are public, so their `Command` is taken as it is
//! (`CommandFactory::command()`), and a page can never describe an option
//! the parser does not have. tao-render, tao-redact and tao-classify parse
//! by hand with lexopt (small filters with full control of their help
//! text); they are described here as `clap::Command`s that mirror their
//! parsers option for option. The drift test (`tests/drift.rs`) runs each
//! built binary's `--help` and fails when the options it prints and the
//! options of its page differ, so a mirror that falls behind is caught.

use clap::{Arg, ArgAction, Command, CommandFactory};

/// The version printed on every page: the workspace version, which every
/// tool shares (`version.workspace = true`).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

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

/// `-q`/`--quiet` and `-v`/`--verbose` (repeatable), as every tool parses
/// them (`tao_core::cli::set_verbosity`); `what` says what -v prints.
fn verbosity(global: bool, what: &str) -> [Arg; 2] {
    [
        Arg::new("quiet")
            .short('q')
            .long("quiet")
            .action(ArgAction::SetTrue)
            .global(global)
            .help("Print no warnings on standard error; errors are always printed"),
        Arg::new("verbose")
            .short('v')
            .long("verbose")
            .action(ArgAction::Count)
            .global(global)
            .help(format!(
                "Print what the tool does on standard error ({what})"
            )),
    ]
}

/// The `-V`/`--version` flag of the lexopt tools.
fn version_flag() -> Arg {
    Arg::new("version")
        .short('V')
        .long("version")
        .action(ArgAction::Version)
        .help("Print the version")
}

/// `tao-render`, mirroring `tao_render::cli::parse_args`: `--print`,
/// `--allow-unlimited`, `--site-profile NAME|FILE`, `-q`/`--quiet`,
/// `-v`/`--verbose`, `-h`/`--help`, `--version`; no positional arguments.
pub fn render() -> Command {
    Command::new("tao-render")
        .version(VERSION)
        .about("Render job lines into sbatch scripts")
        .long_about(
            "Render job lines into sbatch scripts.\n\n\
Reads job lines (tao-jobline(7)) on standard input and writes each one back with \
`script = {template, sha256, text, bindings, resources, image}` added. The template is \
`single` (one node) or `multi` (two or more nodes). Lines that arrive with an `error` \
from an earlier tool pass through untouched.\n\n\
Every value reaching the shell is single-quoted by the template escaper; values on \
#SBATCH lines must match a strict character set. A line breaking a rule (wall time above \
its partition's limit, a partition the site profile does not list, a reserved env or \
secret name, a relative or non-.sqsh image, a bad #SBATCH value, ...) gets `error` and \
goes on. The rules are the ones `tao-record open` applies (tao-core's request module): \
a line it opened renders.",
        )
        .disable_version_flag(true)
        .arg(
            Arg::new("print")
                .long("print")
                .action(ArgAction::SetTrue)
                .help("Print the bare script instead of the job line")
                .long_help(
                    "Print the bare script instead of the job line. Takes exactly one job \
line (for many, use: tao-render | jq -r .script.text).",
                ),
        )
        .arg(
            Arg::new("allow-unlimited")
                .long("allow-unlimited")
                .action(ArgAction::SetTrue)
                .help("No effect (kept for old command lines)")
                .long_help(
                    "No effect; kept so old command lines still work. `0`, `-1`, `INFINITE` \
and `UNLIMITED` are accepted as resources.time wherever the partition's limit in the site \
profile is unlimited (or the profile does not list the partition), and refused where it \
is finite, as tao-record open does.",
                ),
        )
        .arg(
            Arg::new("site-profile")
                .long("site-profile")
                .value_name("NAME|FILE")
                .env("TAO_SITE_PROFILE")
                .help("Site profile: `local`, `cs-oci-ord` (default), or a TOML file"),
        )
        .args(verbosity(false, "one line per line rendered"))
        .arg(version_flag())
}

/// `tao-redact`, mirroring `tao_redact::cli::parse_args`: filter mode
/// without a command, `lint [FILE...]`, and the options `--rules FILE`,
/// `--secret-env NAME` (both repeatable), `--list-rules`, `-q`/`--quiet`,
/// `-v`/`--verbose`, `-h`/`--help`, `-V`/`--version`, accepted before or
/// after `lint`.
pub fn redact() -> Command {
    Command::new("tao-redact")
        .version(VERSION)
        .about("Mask secrets in a stream, or block scripts that carry them")
        .long_about(
            "Mask secrets in a stream, or block scripts that carry them.\n\n\
Filter mode (no command) copies stdin to stdout and masks every secret as \
[REDACTED:<rule>]. Each line is written as soon as it is read. Memory stays bounded on \
lines of any length and bytes need not be UTF-8; bytes outside a secret pass through \
unchanged. Multi-line PEM private keys are masked from BEGIN to END. The exact values of \
HF_TOKEN, NGC_KEY and every --secret-env variable are masked too, whatever their format \
(values under 8 bytes are not, with a warning).",
        )
        .disable_help_subcommand(true)
        .arg(
            Arg::new("rules")
                .long("rules")
                .value_name("FILE")
                .action(ArgAction::Append)
                .global(true)
                .help("Add the rules of FILE (the format of the built-in rules/builtin.toml) after the built-in ones"),
        )
        .arg(
            Arg::new("secret-env")
                .long("secret-env")
                .value_name("NAME")
                .action(ArgAction::Append)
                .global(true)
                .help("Also mask the exact value of the variable NAME (repeatable; HF_TOKEN and NGC_KEY always are)"),
        )
        .arg(
            Arg::new("list-rules")
                .long("list-rules")
                .action(ArgAction::SetTrue)
                .global(true)
                .help("Print the rule catalogue (id, description, source) and exit"),
        )
        .args(verbosity(true, "lint verdicts"))
        .subcommand(
            Command::new("lint")
                .about("Lint job lines (stdin) or script files: the secret gate before submit")
                .long_about(
                    "Lint job lines (stdin) or script files: the secret gate before submit.\n\n\
lint reads job lines on stdin and checks each line's `script.text`. A clean script gets \
lint = {ok: true, sha256: <sha256 of script.text>, findings: []}; a script with a literal \
secret gets lint.ok = false and one finding per secret {rule, line, column, preview} (the \
preview is masked, never the secret); the line goes on either way. References are fine: \
\"$HF_TOKEN\", ${NGC_KEY}, printf '%s' \"$HF_TOKEN\", placeholders like <your-key>. On a \
job line lint also blocks, each as one finding naming the step ({rule, line, column, preview, \
step}): xtrace (`set -x`, `set -o xtrace`, `bash -x`/`sh -x`, BASH_XTRACEFD, SHELLOPTS with \
xtrace) in a command, a pre/post step, the spec, `env` or the script of a job whose `secrets` \
is not empty; and syntax, when `bash -n` fails on a step text as the job runs it (pre_N, \
main, post_N; `line` is the line in that step) or on the script. The values of HF_TOKEN, \
NGC_KEY and of every name in the line's `secrets` (read from this environment) are findings \
wherever they appear. Exit status 3 when any script is blocked. With \
FILE arguments, each file is a script and one line {\"file\": FILE, \"lint\": {...}} is \
printed per file.",
                )
                .arg(
                    Arg::new("file")
                        .value_name("FILE")
                        .num_args(0..)
                        .action(ArgAction::Append)
                        .help("Script files to lint instead of job lines on stdin"),
                ),
        )
}

/// `tao-classify`, mirroring `tao_classify::cli::parse_args`: `--log FILE`
/// and `--rules FILE` (repeatable), `--max-attempts N` (default 10, N >= 1),
/// `--list-rules`, `-q`/`--quiet`, `-v`/`--verbose`, `-h`/`--help`,
/// `--version`; no positional arguments.
pub fn classify() -> Command {
    Command::new("tao-classify")
        .version(VERSION)
        .about("Classify failed jobs (infra / program / scheduler) and decide retry")
        .long_about(
            "Classify failed jobs (infra / program / scheduler) and decide retry.\n\n\
Reads job lines on stdin and writes them to stdout. Lines whose `state` is not ERROR pass \
through byte for byte. An ERROR line gets classification = {class, subclass, rule, \
evidence: {file, line, text} | null, node, retry, reason}.\n\n\
class is infra (the cluster's fault: retried), program (the user's: never retried), \
scheduler (time limit, cancel, preemption: not retried) or unknown (no evidence at all: \
not retried). The evidence is the `evidence` field (tao-poll --evidence: {out: {first_line, lines}, err: \
{...}}) or the files given with --log.\n\n\
Policy: NODE_FAIL and BOOT_FAIL are infra whatever the log says. For FAILED, \
OUT_OF_MEMORY and DEADLINE the highest-priority rule matching the log decides. No log at \
all (empty evidence) is a launch failure: infra, unless slurm.reason blames the request. \
No evidence field and no --log: unknown, not retried. TIMEOUT: scheduler, not retried \
(ask for a longer partition or time, or resume). CANCELLED and PREEMPTED: tao-poll maps \
them to CANCELED, which passes through; as ERROR they are classed scheduler, not retried. \
Budget: infra faults are retried only while attempt < --max-attempts (attempt 1 is the \
first try); then the reason is \"retry budget exhausted (attempt 10 of 10)\". A log that \
matches no rule is the program's to look at (class program, not retried).",
        )
        .disable_version_flag(true)
        .arg(
            Arg::new("log")
                .long("log")
                .value_name("FILE")
                .action(ArgAction::Append)
                .help("Use FILE (a job's main.out/main.err) as the evidence for every ERROR line; repeatable")
                .long_help(
                    "Use FILE (a job's main.out/main.err) as the evidence for every ERROR line \
(streamed with bounded memory); repeatable; an empty file means \"no log\".",
                ),
        )
        .arg(
            Arg::new("max-attempts")
                .long("max-attempts")
                .value_name("N")
                .default_value("10")
                .value_parser(clap::value_parser!(u32).range(1..=100))
                .help("Retry budget: retry infra faults while attempt < N; 1-100"),
        )
        .arg(
            Arg::new("rules")
                .long("rules")
                .value_name("FILE")
                .action(ArgAction::Append)
                .help("Add or replace rules from a TOML file; repeatable")
                .long_help(
                    "A TOML file of [[rule]] tables (id, class, subclass, priority, keywords, \
pattern, reason, source); a rule with a built-in id replaces it. A named group \
(?P<node>...) names the node to avoid. Repeatable.",
                ),
        )
        .arg(
            Arg::new("list-rules")
                .long("list-rules")
                .action(ArgAction::SetTrue)
                .help("Print the rule catalogue as JSON lines and exit")
                .long_help(
                    "Print the catalogue as JSON lines (id, class, subclass, priority, \
keywords, pattern, reason, source) and exit.",
                ),
        )
        .args(verbosity(false, "one line per classified job"))
        .arg(version_flag())
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
    fn hand_described_parsers_accept_what_the_tools_accept() {
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
