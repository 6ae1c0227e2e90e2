//! The `tao-record` binary: parses arguments and hands over to the library.

fn main() {
    tao_core::cli::main_with("tao-record", tao_core::cli::PipePolicy::Fail, || Ok(0))
}
