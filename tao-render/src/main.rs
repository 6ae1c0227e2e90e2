//! The `tao-render` binary: parses arguments and hands over to the library.

fn main() {
    tao_core::cli::main_with("tao-render", tao_core::cli::PipePolicy::Quiet, || Ok(0))
}
