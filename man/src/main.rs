//! `tao-man`: (re)writes the checked-in man pages and shell completions.
//!
//! Usage: `cargo run -p tao-man [-- DIR]`; DIR defaults to this crate's
//! directory (`man/`). Prints each path written.

fn main() {
    let dir = std::env::args_os()
        .nth(1)
        .map(std::path::PathBuf::from)
        .unwrap_or_else(tao_man::man_dir);
    match tao_man::write_all(&dir) {
        Ok(paths) => {
            for p in paths {
                println!("{}", p.display());
            }
        }
        Err(e) => {
            eprintln!("tao-man: error: writing {}: {e}", dir.display());
            std::process::exit(tao_core::exit::IOERR);
        }
    }
}
