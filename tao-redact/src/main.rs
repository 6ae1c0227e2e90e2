//! The `tao-redact` binary: parses arguments and hands over to the library.

fn main() {
    tao_core::cli::main_with("tao-redact", tao_core::cli::PipePolicy::Quiet, || Ok(0))
}
