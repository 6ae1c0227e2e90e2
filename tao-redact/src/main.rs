//! The `tao-redact` binary: parses arguments and hands over to the library
//! (`tao_redact::cli::run`); errors become `tao-redact: error: ...` and the
//! exit status of `tao_core::exit`. A closed stdout ends the filter quietly.

fn main() {
    tao_core::cli::main_with("tao-redact", tao_core::cli::PipePolicy::Quiet, || {
        tao_redact::cli::run(std::env::args_os().skip(1))
    })
}
