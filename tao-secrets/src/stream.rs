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
pub const BUF_SIZE: usize = 4 << 20;

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

/// A push-fed filter: bytes go in as they arrive ([`Filter::push`]), the
/// masked bytes of every complete line (and of the fixed-size windows of a
/// line longer than [`BUF_SIZE`]) come out; [`Filter::finish`] writes the
/// rest. What `tao-poll logs --follow` feeds with each round's bytes.
///
/// Memory: one buffer of [`BUF_SIZE`] bytes plus the output of one batch,
/// whatever the input: a stream that never writes `\n` (progress bars
/// that use only `\r`) is written out in windows, never accumulated. Bytes
/// held back between pushes are at most `BUF_SIZE` (a partial line shorter
/// than the buffer waits for its `\n`; a longer one is written up to its
/// last [`MAX_SECRET`] bytes). A secret split across two pushes is therefore
/// never printed in part: its first bytes wait in the buffer until the
/// rest arrives.
pub struct Filter<'r> {
    buf: Vec<u8>,
    len: usize,
    at_line_start: bool,
    s: Stream<'r>,
}

impl std::fmt::Debug for Filter<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Filter")
            .field("pending", &self.len)
            .finish()
    }
}

impl<'r> Filter<'r> {
    /// A filter masking what `red` masks.
    pub fn new(red: &'r Redactor) -> Self {
        Filter {
            buf: vec![0u8; BUF_SIZE],
            len: 0,
            at_line_start: true,
            s: Stream::new(red),
        }
    }

    /// Bytes held back, waiting for the end of their line (at most
    /// [`BUF_SIZE`]).
    pub fn pending(&self) -> usize {
        self.len
    }

    /// Feed `data`; write the masked complete lines (and long-line windows)
    /// to `w`, flushing after each batch.
    ///
    /// Errors: [`Error::Io`] writing `w`.
    pub fn push<W: Write>(&mut self, mut data: &[u8], w: &mut W) -> Result<()> {
        while !data.is_empty() {
            let n = data.len().min(self.buf.len() - self.len);
            self.buf[self.len..self.len + n].copy_from_slice(&data[..n]);
            data = &data[n..];
            let old = self.len;
            self.len += n;
            self.step(old, w)?;
        }
        Ok(())
    }

    /// Write what is held back (the last line without its `\n`), masked.
    ///
    /// Errors: [`Error::Io`] writing `w`.
    pub fn finish<W: Write>(&mut self, w: &mut W) -> Result<()> {
        if self.len > 0 {
            // A stream that stops inside a secret value (a log read while
            // the job writes it): the cut value is masked too.
            let frag = &self.buf[..self.len];
            match self.s.red.trailing_prefix(frag) {
                Some((at, label)) if frag[at..].iter().all(|&b| b != b'\n') => {
                    self.s.line(&frag[..at], self.at_line_start);
                    self.s.out.extend_from_slice(b"[REDACTED:");
                    self.s
                        .out
                        .extend_from_slice(self.s.red.labels[label].as_bytes());
                    self.s.out.push(b']');
                }
                _ => self.s.line(frag, self.at_line_start),
            }
            self.len = 0;
            self.at_line_start = true;
        }
        self.s.flush_to(w)
    }

    /// Process the buffer after `buf[old..len]` arrived.
    #[inline]
    fn step<W: Write>(&mut self, old: usize, w: &mut W) -> Result<()> {
        let len = self.len;
        let buf = &mut self.buf;
        let s = &mut self.s;
        if let Some(i) = memchr::memrchr(b'\n', &buf[old..len]) {
            let last = old + i + 1;
            let mut start = 0;
            if !self.at_line_start {
                // The end of a long line: carried bytes hold no newline.
                let le = line_end(&buf[..last], 0);
                s.line(&buf[..le], false);
                start = le;
            }
            s.lines(&buf[start..last]);
            s.flush_to(w)?;
            buf.copy_within(last..len, 0);
            self.len -= last;
            self.at_line_start = true;
        } else if len == buf.len() {
            let consumed = s.window(&buf[..len], len - MAX_SECRET, self.at_line_start);
            s.flush_to(w)?;
            buf.copy_within(consumed..len, 0);
            self.len -= consumed;
            self.at_line_start = false;
        }
        Ok(())
    }
}

/// Run the filter from `r` to `w` (see the module docs): reads go straight
/// into the [`Filter`]'s buffer (no copy).
pub(crate) fn run<R: Read, W: Write>(red: &Redactor, mut r: R, mut w: W) -> Result<()> {
    let mut f = Filter::new(red);
    loop {
        let len = f.len;
        let n = match r.read(&mut f.buf[len..]) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Error::io("reading standard input", e)),
        };
        if n == 0 {
            return f.finish(&mut w);
        }
        f.len += n;
        f.step(len, &mut w)?;
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

    #[test]
    fn push_holds_a_split_secret_until_it_is_whole() {
        let red = Redactor::builder()
            .secret_value("MY_DB_PASSWORD", b"c0rrect-h0rse-battery")
            .build()
            .unwrap();
        let mut f = Filter::new(&red);
        let mut out = Vec::new();
        f.push(b"line one\nprogress 10% pw=c0rrect-h0", &mut out)
            .unwrap();
        assert_eq!(out, b"line one\n");
        let mut early = Filter::new(&red);
        let mut cut = Vec::new();
        early.push(b"pw=c0rrect-h0", &mut cut).unwrap();
        early.finish(&mut cut).unwrap();
        assert_eq!(cut, b"pw=[REDACTED:env:MY_DB_PASSWORD]");
        f.push(b"rse-battery done\n", &mut out).unwrap();
        f.finish(&mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(!text.contains("c0rrect-h0"), "{text}");
        assert!(text.contains("[REDACTED:env:MY_DB_PASSWORD]"), "{text}");
    }

    #[test]
    fn push_of_carriage_returns_only_stays_bounded() {
        let red = Redactor::builder()
            .secret_value("MY_DB_PASSWORD", b"c0rrect-h0rse-battery")
            .build()
            .unwrap();
        let mut f = Filter::new(&red);
        let mut sink = Vec::new();
        let chunk = b"\r[=====>    ] 42% c0rrect-h0rse-battery ";
        for _ in 0..100_000 {
            f.push(chunk, &mut sink).unwrap();
            assert!(f.pending() <= BUF_SIZE);
            if sink.len() > (8 << 20) {
                assert!(!String::from_utf8_lossy(&sink).contains("c0rrect"));
                sink.clear();
            }
        }
        f.finish(&mut sink).unwrap();
        assert!(!String::from_utf8_lossy(&sink).contains("c0rrect"));
    }
}
