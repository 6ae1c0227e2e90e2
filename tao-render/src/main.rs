//! The `tao-render` binary: a job line in, the same line with an sbatch
//! script out. A thin command ([`cli::main`]) over the shared rendering
//! library `tao_script` (templates, escapers, resource rules), which
//! tao-submit links too.

mod cli;
mod spec;

/// The tool name used in messages and in `error.tool`.
pub const TOOL: &str = "tao-render";

fn main() {
    std::process::exit(tao_core::cli::main_with(
        TOOL,
        tao_core::cli::PipePolicy::Quiet,
        || cli::main(std::env::args_os().skip(1)),
    ))
}
