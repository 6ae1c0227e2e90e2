//! The `tao-poll` binary: parses arguments and hands over to the library.

fn main() {
    std::process::exit(tao_core::cli::main_with(
        "tao-poll",
        tao_core::cli::PipePolicy::Quiet,
        || match tao_cli::parse::<tao_poll::Cli, _, _>("tao-poll", std::env::args_os())? {
            tao_cli::Parsed::Args(cli) => tao_poll::run(cli),
            tao_cli::Parsed::Done(code) => Ok(code),
        },
    ))
}
