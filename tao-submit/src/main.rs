//! The `tao-submit` binary: parses arguments and hands over to the library.

fn main() {
    tao_core::cli::main_with("tao-submit", tao_core::cli::PipePolicy::Fail, || {
        tao_submit::run(tao_submit::cli::parse_args(std::env::args_os())?)
    })
}
