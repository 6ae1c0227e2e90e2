//! The `tao-classify` binary: hands the arguments and standard streams to
//! [`tao_classify::cli::run`] and maps its result to an exit status.

fn main() {
    tao_core::cli::main_with("tao-classify", tao_core::cli::PipePolicy::Quiet, || {
        let stdin = std::io::stdin().lock();
        let stdout = std::io::stdout().lock();
        tao_classify::cli::run(
            std::env::args_os().skip(1),
            stdin,
            stdout,
            std::io::stderr(),
        )
    })
}
