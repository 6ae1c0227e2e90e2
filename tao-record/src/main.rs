//! The `tao-record` binary: parses arguments and hands over to the library.
//!
//! Broken pipe policy `Fail`: a record may have changed, so a lost report
//! is not success (exit 74).

fn main() {
    std::process::exit(tao_core::cli::main_with(
        "tao-record",
        tao_core::cli::PipePolicy::Fail,
        || tao_record::cli::run(std::env::args_os()),
    ))
}
