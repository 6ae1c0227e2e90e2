//! The `tao-redact` binary: a thin command over the shared scanner library
//! `tao_secrets` (rules, lint, streaming redaction, credential checks),
//! which tao-submit, tao-poll, tao-record and tao-classify link directly.
//! [`cli::run`] parses the arguments and runs the filter; errors become
//! `tao-redact: error: ...` and the exit status of `tao_core::exit`. A
//! closed stdout ends the filter quietly.

mod cli;
mod spec;

fn main() {
    std::process::exit(tao_core::cli::main_with(
        "tao-redact",
        tao_core::cli::PipePolicy::Quiet,
        || cli::run(std::env::args_os().skip(1)),
    ))
}
