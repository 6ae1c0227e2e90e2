//! The command line of `tao-redact` as data: every flag once
//! (`tao_core::flags`). The tool's parser (`cli.rs`), its `-h` and
//! `--help` are driven by it, and man/ compiles this same file
//! (`#[path]` in man/src/commands.rs) to build the `clap::Command` its
//! man page and shell completions are generated from: one definition, no
//! hand-kept mirror.

use tao_core::flags::{Flag, Sub, Tool};

/// The command line: every flag once (`tao_core::flags`), driving
/// [`parse_args`], `-h` and `--help`, and the man page and completions
/// (man/ builds a `clap::Command` from it).
pub const SPEC: Tool = Tool {
    name: "tao-redact",
    about: "mask secrets in a stream, or block scripts that carry them",
    usage: &[
        "tao-redact [OPTIONS]                 filter stdin to stdout",
        "tao-redact lint [OPTIONS] [FILE...]  lint job lines (stdin) or script files",
    ],
    description: "Filter mode (no command) copies stdin to stdout and masks every secret as \
[REDACTED:<rule>]. Each line is written as soon as it is read. Memory stays bounded on lines \
of any length and bytes need not be UTF-8; bytes outside a secret pass through unchanged. \
Multi-line PEM private keys are masked from BEGIN to END. The exact values of HF_TOKEN, \
NGC_KEY and every --secret-env variable are masked too, whatever their format (values under \
8 bytes are not, with a warning).",
    flags: &[
        Flag::value(
            "rules",
            "FILE",
            "add the rules of FILE to the built-in catalogue",
        )
        .long_help(
            "Add the rules of FILE (the format of the built-in rules/builtin.toml) after \
the built-in ones.",
        )
        .repeatable()
        .global(),
        Flag::value(
            "secret-env",
            "NAME",
            "also mask the exact value of $NAME (repeatable)",
        )
        .long_help(
            "Also mask the exact value of the variable NAME (repeatable; HF_TOKEN and \
NGC_KEY always are).",
        )
        .repeatable()
        .global(),
        Flag::switch("list-rules", "print the rule catalogue and exit")
            .long_help("Print the rule catalogue (id, description, source) and exit.")
            .global(),
        Flag::QUIET.global(),
        Flag::verbose(
            "print what the tool does",
            "Print what the tool does on standard error (lint verdicts).",
        )
        .global(),
        Flag::HELP,
        Flag::VERSION,
    ],
    subs: &[Sub {
        name: "lint",
        about: "Lint job lines (stdin) or script files: the secret gate before submit",
        long_about: "lint reads job lines on stdin and checks each line's `script.text`. A \
clean script gets lint = {ok: true, sha256: <sha256 of script.text>, findings: []}; a script \
with a literal secret gets lint.ok = false and one finding per secret {rule, line, column, \
preview} (the preview is masked, never the secret); the line goes on either way. References \
are fine: \"$HF_TOKEN\", ${NGC_KEY}, printf '%s' \"$HF_TOKEN\", placeholders like <your-key>. \
Exit status 3 when any script is blocked. A line that is not JSON or has no `script.text` is \
reported on standard error with its line number, and lint goes on with the next line \
(tao-jobline(7)).

On a job line lint also blocks, each as one finding naming the step
({rule, line, column, preview, step}):
  xtrace   on a job whose `secrets` is not empty: `set -x`, `set -o xtrace`,
           `bash -x`/`sh -x`, BASH_XTRACEFD, or SHELLOPTS with xtrace in a
           command, a pre/post step, the spec, `env` or the script (bash
           would print every expanded secret into the job's logs)
  syntax   `bash -n` fails on a step text as the job runs it (`pre_N`,
           `main`, `post_N`; `line` is the line in that step) or on the
           script (`script`)
The values of HF_TOKEN, NGC_KEY and of every name in the line's `secrets`
(read from this environment) are findings wherever they appear.

With FILE arguments, each file is a script and one line {\"file\": FILE, \"lint\": {...}} is \
printed per file.",
        positional: Some((
            "FILE",
            "Script files to lint instead of job lines on stdin",
            true,
        )),
    }],
    sections: &[],
    exit_status: "  0   ok (filter: stream copied; lint: every script clean)
  2   usage error
  3   lint blocked at least one script: a literal secret, xtrace on a job
      with secrets, or a shell syntax error (the lines still went out)
  65  bad input: a job line that is not JSON (reported, dropped) or has no
      `script.text` (reported, goes on with error.code \"missing_stage\": pipe it
      through tao-render first; lint goes on with the next line; 65 comes
      before 3), a script file that is not UTF-8
  74  local I/O error
  78  bad --rules file
",
};
