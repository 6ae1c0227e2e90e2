//! What travels to the login node: one POSIX `sh` script on the standard
//! input of a constant remote command, [`REMOTE_COMMAND`] (`sh -s`).
//!
//! Why: a remote command is one exec request, parsed by the remote user's
//! *login shell*. libssh2 refuses an exec request of about 32 KB ("Unable to
//! send channel request"), Linux limits one argument to 128 KiB
//! (`MAX_ARG_STRLEN`), fish reads backslashes inside single quotes and tcsh
//! refuses newlines inside them. `sh -s` means the same in bash, zsh, fish
//! and tcsh, and everything else (the script, the files it stages, the
//! data for its stdin) is read by `sh` itself from the channel's stdin,
//! where size is not limited and only POSIX `sh` quoting is relied on.
//!
//! Shape of the stream ([`compose`]):
//!
//! ```text
//! {                                    # a brace group: sh parses all of it
//! <remote prefix of the site profile>  # before running any of it, so a cut
//! <script>                             # stream runs nothing
//! } </dev/null                         # (no stdin given)
//! ```
//!
//! With stdin data, the group reads it from a pipe instead:
//! `printf '%s' '<base64>' | base64 -d | { ... }`. `printf` is a builtin of
//! every `sh` in use (dash, bash, busybox ash, ksh), so the data is never in
//! an argument vector or a temporary file; base64 (RFC 4648, wrapped at 76
//! columns) keeps any byte, NUL included, inside one single-quoted word.
//! The same [`embed`] carries file contents inside a script.

use base64::Engine as _;

/// The constant remote command every transport runs: a POSIX shell reading
/// its script from standard input.
pub const REMOTE_COMMAND: &str = "sh -s";

/// The first line every composed script prints, before the site prefix and
/// the script: its presence proves `sh -s` started (the login shell ran
/// the constant command); [`finish`] strips it.
pub const STARTED: &[u8] = b"@@tao-sh\n";

/// Width of the base64 lines inside an embedded word (RFC 2045's 76).
const B64_LINE: usize = 76;

/// A shell pipeline fragment that writes exactly `bytes` to its stdout:
/// `printf '%s' '<base64, wrapped>' | base64 -d`. Put it before `|` or
/// `>` in a POSIX sh script (`{embed} > "$t"`).
///
/// Input: any bytes. Output: sh text using only the `printf` builtin and
/// coreutils' `base64 -d` (which ignores the newlines of the wrapping).
pub fn embed(bytes: &[u8]) -> String {
    let enc = base64::engine::general_purpose::STANDARD.encode(bytes);
    let mut s = String::with_capacity(enc.len() + enc.len() / B64_LINE + 32);
    s.push_str("printf '%s' '");
    for (i, chunk) in enc.as_bytes().chunks(B64_LINE).enumerate() {
        if i > 0 {
            s.push('\n');
        }
        // base64's alphabet holds no quote: the word needs no escaping.
        s.push_str(std::str::from_utf8(chunk).expect("base64 is ASCII"));
    }
    s.push_str("' | base64 -d");
    s
}

/// The whole standard input of [`REMOTE_COMMAND`]: `prefix` (the site
/// profile's `remote_prefix`, POSIX sh text, may be empty) and `script`
/// inside one brace group; the group's stdin is `stdin` (decoded from an
/// [`embed`]ded word) or `/dev/null`.
///
/// Input: `script`, POSIX sh with every value quoted by
/// [`tao_core::shell::quote`]. Output: bytes to write to the channel's
/// stdin. The exit status of `sh -s` is the script's.
pub fn compose(prefix: &str, script: &str, stdin: Option<&[u8]>) -> Vec<u8> {
    let mut s = String::with_capacity(script.len() + stdin.map_or(0, |b| b.len() * 4 / 3) + 256);
    if let Some(data) = stdin {
        s.push_str(&embed(data));
        s.push_str(" | ");
    }
    s.push_str("{\nprintf '@@tao-sh\\n'\n");
    let prefix = prefix.trim();
    if !prefix.is_empty() {
        s.push_str(prefix);
        s.push('\n');
    }
    s.push_str(script);
    // A script ending in a comment or without a newline still closes.
    s.push_str("\n}");
    if stdin.is_none() {
        s.push_str(" </dev/null");
    }
    s.push('\n');
    s.into_bytes()
}

/// Check and strip [`STARTED`] from a composed script's output.
///
/// Errors: [`tao_core::Error::Config`] (exit 78) when it is missing: the
/// remote user's login shell did not run `sh -s` (a missing or broken
/// shell, a forced command), one line naming the host, the user and what
/// the shell said.
pub fn finish(
    spec: &str,
    user: &str,
    mut out: crate::output::Output,
) -> tao_core::Result<crate::output::Output> {
    if out.stdout.starts_with(STARTED) {
        out.stdout.drain(..STARTED.len());
        return Ok(out);
    }
    Err(tao_core::Error::Config(format!(
        "login host {spec:?}: the login shell of {user:?} did not start `sh -s` (exit {}: {:?}); the account's shell is missing or broken (or a forced command runs): ask the cluster admins to fix it (`chsh`)",
        out.status,
        out.stderr_line()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::process::{Command, Stdio};

    fn run_sh(stream: &[u8]) -> (i32, Vec<u8>) {
        let mut c = Command::new("sh")
            .arg("-s")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut w = c.stdin.take().unwrap();
        let data = stream.to_vec();
        let t = std::thread::spawn(move || {
            let _ = w.write_all(&data);
        });
        let out = c.wait_with_output().unwrap();
        t.join().unwrap();
        let mut stdout = out.stdout;
        if stdout.starts_with(STARTED) {
            stdout.drain(..STARTED.len());
        }
        (out.status.code().unwrap_or(-1), stdout)
    }

    #[test]
    fn embed_round_trips_any_bytes() {
        let all: Vec<u8> = (0..=255u8).cycle().take(1000).collect();
        let (rc, out) = run_sh(&compose("", &embed(&all), None));
        assert_eq!(rc, 0);
        assert_eq!(out, all);
        assert_eq!(embed(b""), "printf '%s' '' | base64 -d");
        assert!(embed(&[0u8; 200]).lines().all(|l| l.len() <= B64_LINE + 16));
    }

    #[test]
    fn compose_runs_prefix_then_script_with_stdin_and_status() {
        let (rc, out) = run_sh(&compose(
            "X=pre;",
            "printf '%s:' \"$X\"; cat; exit 3",
            Some(b"in\0put"),
        ));
        assert_eq!((rc, out.as_slice()), (3, &b"pre:in\0put"[..]));
        // Without stdin: the script's stdin is empty, not the rest of the stream.
        let (rc, out) = run_sh(&compose("", "cat; echo done # trailing comment", None));
        assert_eq!((rc, out.as_slice()), (0, &b"done\n"[..]));
    }

    #[test]
    fn a_cut_stream_runs_nothing() {
        let full = compose("", "echo ran; echo more", None);
        let cut = full.len() - " </dev/null\n".len() - 2; // the closing "\n}" gone
        let (_, out) = run_sh(&full[..cut]);
        assert_eq!(out, b"", "nothing of a truncated group runs");
        let missing = crate::output::Output {
            stdout: b"x".to_vec(),
            stderr: b"/usr/bin/nosuchshell: No such file or directory\n".to_vec(),
            status: 1,
        };
        let e = finish("h:22", "alice", missing).unwrap_err();
        assert_eq!(e.code(), tao_core::exit::CONFIG);
        assert!(
            e.to_string().contains("nosuchshell") && e.to_string().contains("chsh"),
            "{e}"
        );
    }
}
