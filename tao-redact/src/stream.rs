//! The streaming filter: stdin to stdout, line by line, with bounded memory.
//!
//! Input is read into one buffer of [`BUF_SIZE`] bytes. Every complete line
//! in it is scanned and written, then flushed, so `tail -f | tao-redact`
//! shows each line as soon as it arrives. The prefilter runs over all the
//! complete lines at once and only lines with a keyword hit are scanned
//! one by one (most log lines are copied untouched).
//!
//! A line longer than the buffer is scanned in windows: a window is the
//! whole buffer, but only its first `BUF_SIZE - MAX_SECRET` bytes are
//! written (plus any secret that starts there and runs on); the last
//! [`MAX_SECRET`] bytes are carried over and scanned again with the next
//! read. A secret of up to `MAX_SECRET` bytes that straddles a read boundary
//! is therefore always seen whole, and a 1 GiB line needs no more memory
//! than a short one. Bytes need not be UTF-8: everything works on bytes, and
//! bytes outside a secret are written unchanged.

use std::io::{Read, Write};

use tao_core::{Error, Result};

use crate::scan::{ScanState, Scratch};
use crate::Redactor;

/// Size of the read buffer (bytes); also the largest window of a long line.
pub const BUF_SIZE: usize = 1 << 20;

/// The longest single secret (bytes) guaranteed to be caught when it
/// straddles a window boundary of a line longer than [`BUF_SIZE`].
pub const MAX_SECRET: usize = 64 << 10;

/// One filtering run: the scanner state and reused buffers.
pub(crate) struct Stream<'r> {
    red: &'r Redactor,
    state: ScanState,
    scratch: Scratch,
    out: Vec<u8>,
    /// Lowercased copy of the chunk being prefiltered (see `lines`).
    low: Vec<u8>,
}

fn line_end(chunk: &[u8], from: usize) -> usize {
    memchr::memchr(b'\n', &chunk[from..]).map_or(chunk.len(), |i| from + i + 1)
}

impl<'r> Stream<'r> {
    pub(crate) fn new(red: &'r Redactor) -> Self {
        Self {
            red,
            state: ScanState::default(),
            scratch: Scratch::default(),
            out: Vec::with_capacity(BUF_SIZE + 4096),
            low: Vec::with_capacity(BUF_SIZE),
        }
    }

    /// The redacted output so far (taken by [`Stream::flush_to`]).
    pub(crate) fn take_out(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.out)
    }

    /// Complete lines starting at a line start; `chunk` ends with `\n` (or
    /// is the end of the input).
    pub(crate) fn lines(&mut self, chunk: &[u8]) {
        let mut pos = 0;
        self.low.clear();
        'outer: while pos < chunk.len() {
            if self.state.block.is_some() || !self.red.always.is_empty() {
                let le = line_end(chunk, pos);
                self.line(&chunk[pos..le], true);
                pos = le;
                continue;
            }
            // One prefilter pass over all remaining lines: each hit's line
            // collects its triggers; lines without hits are copied as is.
            if self.low.len() != chunk.len() {
                crate::scan::lowercase_into(chunk, &mut self.low);
            }
            let low = std::mem::take(&mut self.low);
            let red = self.red;
            let mut cur: Option<(usize, usize)> = None;
            let mut restart = false;
            for m in red.prefilter.find_iter(&low, pos..chunk.len()) {
                if let Some((ls, le)) = cur {
                    if m.start() < le {
                        self.red
                            .prefilter
                            .verify(&low, &m, &mut self.scratch, false);
                        continue;
                    }
                    self.finish_line(&chunk[ls..le]);
                    pos = le;
                    if self.state.block.is_some() {
                        restart = true;
                        break;
                    }
                }
                let ls =
                    memchr::memrchr(b'\n', &chunk[pos..m.start()]).map_or(pos, |i| pos + i + 1);
                let le = line_end(chunk, m.start());
                self.out.extend_from_slice(&chunk[pos..ls]);
                self.red.clear_triggers(&mut self.scratch);
                self.red
                    .prefilter
                    .verify(&low, &m, &mut self.scratch, false);
                cur = Some((ls, le));
            }
            self.low = low;
            if restart {
                continue 'outer;
            }
            match cur {
                Some((ls, le)) => {
                    self.finish_line(&chunk[ls..le]);
                    pos = le;
                }
                None => {
                    self.out.extend_from_slice(&chunk[pos..]);
                    pos = chunk.len();
                }
            }
        }
    }

    /// A line whose triggers were collected by `lines`: scanned only if a
    /// keyword (not just an anchor) was found.
    fn finish_line(&mut self, line: &[u8]) {
        if self.red.triggered(&self.scratch) {
            self.line(line, true);
        } else {
            self.scratch_reset();
            self.out.extend_from_slice(line);
        }
    }

    fn scratch_reset(&mut self) {
        self.red.clear_triggers(&mut self.scratch);
        self.scratch.hits.clear();
        self.red.unready(&mut self.scratch);
    }

    /// One line with its `\n` (or the last fragment of the input or of a
    /// long line).
    pub(crate) fn line(&mut self, line: &[u8], at_line_start: bool) {
        let (body, term) = match line.last() {
            Some(b'\n') => line.split_at(line.len() - 1),
            _ => (line, &b""[..]),
        };
        self.red.scan(
            body,
            at_line_start,
            usize::MAX,
            &mut self.state,
            &mut self.scratch,
        );
        self.red
            .apply(body, &mut self.scratch.hits, body.len(), &mut self.out);
        self.out.extend_from_slice(term);
    }

    /// One window of a line longer than the buffer, with no `\n` in it.
    /// Writes at least `cut` bytes (more if a secret starting before `cut`
    /// runs on) and returns how many bytes of `win` were consumed.
    pub(crate) fn window(&mut self, win: &[u8], cut: usize, at_line_start: bool) -> usize {
        self.red
            .scan(win, at_line_start, cut, &mut self.state, &mut self.scratch);
        let hits = &mut self.scratch.hits;
        let mut emit = cut;
        if hits.iter().any(|h| h.open) {
            // An open block masks everything from its start; the rest of the
            // window is scanned again (still inside the block) next time.
            for h in hits.iter_mut() {
                h.end = h.end.min(cut);
            }
        } else {
            for h in hits.iter() {
                emit = emit.max(h.end);
            }
        }
        self.red.apply(win, hits, emit, &mut self.out);
        emit
    }

    /// Write and flush what is pending.
    pub(crate) fn flush_to<W: Write>(&mut self, w: &mut W) -> Result<()> {
        w.write_all(&self.out)
            .and_then(|_| w.flush())
            .map_err(|e| Error::io("writing standard output", e))?;
        self.out.clear();
        Ok(())
    }
}

/// Run the filter from `r` to `w` (see the module docs).
pub(crate) fn run<R: Read, W: Write>(red: &Redactor, mut r: R, mut w: W) -> Result<()> {
    let mut buf = vec![0u8; BUF_SIZE];
    let mut len = 0;
    let mut at_line_start = true;
    let mut s = Stream::new(red);
    loop {
        let n = match r.read(&mut buf[len..]) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Error::io("reading standard input", e)),
        };
        if n == 0 {
            if len > 0 {
                s.line(&buf[..len], at_line_start);
            }
            return s.flush_to(&mut w);
        }
        let old = len;
        len += n;
        if let Some(i) = memchr::memrchr(b'\n', &buf[old..len]) {
            let last = old + i + 1;
            let mut start = 0;
            if !at_line_start {
                // The end of a long line: carried bytes hold no newline.
                let le = line_end(&buf[..last], 0);
                s.line(&buf[..le], false);
                start = le;
            }
            s.lines(&buf[start..last]);
            s.flush_to(&mut w)?;
            buf.copy_within(last..len, 0);
            len -= last;
            at_line_start = true;
        } else if len == buf.len() {
            let consumed = s.window(&buf[..len], len - MAX_SECRET, at_line_start);
            s.flush_to(&mut w)?;
            buf.copy_within(consumed..len, 0);
            len -= consumed;
            at_line_start = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that hands out at most `step` bytes per read.
    struct Trickle<'a> {
        data: &'a [u8],
        step: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.step.min(buf.len()).min(self.data.len());
            buf[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    fn filter(red: &Redactor, input: &[u8], step: usize) -> Vec<u8> {
        let mut out = Vec::new();
        run(red, Trickle { data: input, step }, &mut out).unwrap();
        out
    }

    const TOK: &str = "ghp_FAKEtaoRedactTest0123456789abcdefABCD";

    #[test]
    fn split_reads_give_the_same_output() {
        let red = Redactor::builder().build().unwrap();
        let input = format!("a\nexport GH_TOKEN={TOK}\nb\n");
        let want = filter(&red, input.as_bytes(), 1 << 20);
        assert!(!String::from_utf8_lossy(&want).contains(TOK));
        for step in [1, 2, 3, 7, 17] {
            assert_eq!(filter(&red, input.as_bytes(), step), want, "step {step}");
        }
    }

    #[test]
    fn long_line_secret_on_a_window_boundary_is_caught() {
        let red = Redactor::builder().build().unwrap();
        let cut = BUF_SIZE - MAX_SECRET;
        for offset in [
            cut - 20,
            cut - 1,
            cut,
            cut + 5,
            BUF_SIZE - 10,
            BUF_SIZE - 41,
        ] {
            let mut input = vec![b'.'; offset];
            input.push(b' ');
            input.extend_from_slice(TOK.as_bytes());
            input.push(b' ');
            input.extend(std::iter::repeat_n(b'.', BUF_SIZE * 2));
            input.push(b'\n');
            let out = filter(&red, &input, 64 << 10);
            let text = String::from_utf8_lossy(&out);
            assert!(!text.contains(TOK), "offset {offset}");
            assert!(text.contains("[REDACTED:github-token]"), "offset {offset}");
            assert_eq!(
                out.len(),
                input.len() - TOK.len() + "[REDACTED:github-token]".len()
            );
        }
    }

    #[test]
    fn pem_block_over_lines_and_windows() {
        let red = Redactor::builder().build().unwrap();
        let input = b"before\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAfakefakefakefake\nAB==\n-----END RSA PRIVATE KEY-----\nafter\n";
        let out = filter(&red, input, 5);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "before\n[REDACTED:pem-private-key]\n[REDACTED:pem-private-key]\n[REDACTED:pem-private-key]\n[REDACTED:pem-private-key]\nafter\n"
        );
    }
}
