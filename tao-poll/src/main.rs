//! The `tao-poll` binary: parses arguments and hands over to the library.

fn main() {
    let cli: tao_poll::Cli = tao_cli::parse_or_exit("tao-poll");
    tao_core::cli::main_with("tao-poll", tao_core::cli::PipePolicy::Quiet, || {
        tao_poll::run(cli)
    })
}
