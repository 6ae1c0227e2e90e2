//! The `tao-render` binary: parses arguments and hands over to the library.

fn main() {
    tao_core::cli::main_with(tao_render::TOOL, tao_core::cli::PipePolicy::Quiet, || {
        tao_render::cli::main(std::env::args_os().skip(1))
    })
}
