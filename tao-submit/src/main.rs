//! The `tao-submit` binary: parses arguments and hands over to the library.

fn main() {
    tao_core::cli::main_with("tao-submit", tao_core::cli::PipePolicy::Quiet, || Ok(0))
}
