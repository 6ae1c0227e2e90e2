//! The `tao-poll` binary: parses arguments and hands over to the library.

use clap::Parser;

fn main() {
    let cli = tao_poll::Cli::try_parse().unwrap_or_else(|e| e.exit());
    tao_core::cli::main_with("tao-poll", tao_core::cli::PipePolicy::Quiet, || {
        tao_poll::run(cli)
    })
}
