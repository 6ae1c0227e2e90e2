//! The `tao-submit` binary: parses arguments and hands over to the library.

fn main() {
    std::process::exit(tao_core::cli::main_with(
        "tao-submit",
        tao_core::cli::PipePolicy::Fail,
        || match tao_submit::cli::parse_args(std::env::args_os())? {
            tao_cli::Parsed::Args(cli) => tao_submit::run(cli),
            tao_cli::Parsed::Done(code) => Ok(code),
        },
    ))
}
