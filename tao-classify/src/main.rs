//! The `tao-classify` binary: hands the arguments and standard streams to
//! [`tao_classify::cli::run`] and maps its result to an exit status.

fn main() {
    std::process::exit(tao_core::cli::main_with(
        "tao-classify",
        tao_core::cli::PipePolicy::Quiet,
        || {
            tao_classify::cli::run(
                std::env::args_os().skip(1),
                || tao_core::cli::piped_stdin(tao_classify::cli::STDIN_EXAMPLE, None),
                std::io::stdout().lock(),
                std::io::stderr(),
            )
        },
    ))
}
