//! Finding the deciding line in the evidence: the redacted tails that
//! `tao-poll --evidence` put in the job line, or a log file streamed from
//! disk with bounded memory however large it is.
//!
//! The streaming scanner reads fixed 1 MiB blocks, asks the catalogue's
//! keyword automaton for the next interesting offset, and only then finds
//! that line's bounds and runs the candidate regexes (ripgrep's shape:
//! search the buffer, not each line). Line numbers come from counting
//! newlines between hits (memchr's vectorised count). A line longer than
//! the block is scanned in block-sized pieces that keep its line number; a
//! match that straddles two pieces of such a line can be missed (documented
//! limit: real log lines are far shorter).

use std::io::Read;

use crate::catalogue::Catalogue;

/// Block size of the streaming scanner, in bytes; also the bound on memory
/// per scanned file.
pub const BLOCK: usize = 1 << 20;

/// Longest evidence text kept, in bytes (the rest is cut at a char boundary
/// and marked with `…`).
pub const MAX_TEXT: usize = 400;

/// The best line found so far in some evidence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    /// Index of the rule in the catalogue.
    pub rule: usize,
    /// The rule's priority (copied for comparisons).
    pub priority: u8,
    /// Which evidence: `"out"`, `"err"`, a log file path, or `"slurm.reason"`.
    pub file: String,
    /// 1-based line number in that file.
    pub line: u64,
    /// The whole line as read (at most [`BLOCK`] bytes), not yet redacted:
    /// [`crate::classify`] redacts it, then [`clean_text`] cuts it. Redacting
    /// before cutting means a secret is never half shown.
    pub raw: Vec<u8>,
    /// The node the line names, if the rule extracts one.
    pub node: Option<String>,
}

/// Keeps the best hit (highest priority wins, ties keep the earlier one)
/// and the context rules ([`crate::catalogue::RuleSpec::refines`]) whose
/// lines occurred anywhere in the same evidence (catalogue indices, no
/// duplicates, in the order first seen).
#[derive(Debug, Default, Clone)]
pub struct Best(pub Option<Hit>, pub Vec<usize>);

impl Best {
    /// Offer `line` (1-based `line_no` in `file`) to the catalogue and keep it if it beats the current best.
    pub fn offer(&mut self, cat: &Catalogue, file: &str, line_no: u64, line: &[u8]) {
        let Some(m) = cat.match_line_with(line, &mut self.1) else {
            return;
        };
        let priority = cat.rules()[m.rule].spec.priority;
        if self.0.as_ref().is_some_and(|b| b.priority >= priority) {
            return;
        }
        self.0 = Some(Hit {
            rule: m.rule,
            priority,
            file: file.to_string(),
            line: line_no,
            raw: line.to_vec(),
            node: m.node,
        });
    }

    /// Merge another scan's result (same rule: higher priority wins, ties keep `self`).
    pub fn merge(&mut self, other: Best) {
        for c in other.1 {
            if !self.1.contains(&c) {
                self.1.push(c);
            }
        }
        if let Some(o) = other.0 {
            if self.0.as_ref().is_none_or(|b| o.priority > b.priority) {
                self.0 = Some(o);
            }
        }
    }
}

impl Best {
    /// The best hit as its context narrows it: when a context rule seen in
    /// the same evidence refines the best hit's rule
    /// ([`Catalogue::refinement`]), the hit is that rule's (same line,
    /// same priority; the node kept only when the context rule is infra).
    pub fn refined(mut self, cat: &Catalogue) -> Best {
        if let Some(hit) = self.0.as_mut() {
            if let Some(c) = cat.refinement(hit.rule, &self.1) {
                hit.rule = c;
                if cat.rules()[c].spec.class != crate::catalogue::Class::Infra {
                    hit.node = None;
                }
            }
        }
        self
    }
}

/// Scan evidence lines already in memory (a tail from `tao-poll --evidence`),
/// numbering them from `first_line`.
pub fn scan_lines<'a>(
    cat: &Catalogue,
    file: &str,
    first_line: u64,
    lines: impl IntoIterator<Item = &'a str>,
) -> Best {
    let mut best = Best::default();
    for (i, line) in lines.into_iter().enumerate() {
        // A tail line may itself hold several lines; the first one's number is close enough.
        for part in line.split('\n') {
            best.offer(cat, file, first_line + i as u64, part.as_bytes());
        }
    }
    best
}

/// Stream a log (any bytes, any size) through the catalogue with memory
/// bounded by [`BLOCK`]. `file` labels the hits.
///
/// Errors: the reader's I/O error.
pub fn scan_reader(cat: &Catalogue, file: &str, mut reader: impl Read) -> std::io::Result<Best> {
    let mut best = Best::default();
    let mut buf = vec![0u8; BLOCK];
    let mut len = 0usize; // bytes of valid data in buf
    let mut line_no: u64 = 1; // number of the line starting at buf[0]
    let mut eof = false;
    let slow = cat.has_slow_rules();
    while !eof || len > 0 {
        // Fill the block.
        while !eof && len < buf.len() {
            match reader.read(&mut buf[len..]) {
                Ok(0) => eof = true,
                Ok(n) => len += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        // The region of whole lines; at EOF or for an over-long line, everything.
        let (end, split_line) = match memchr::memrchr(b'\n', &buf[..len]) {
            Some(nl) if !eof => (nl + 1, false),
            Some(_) => (len, false),
            None => (len, !eof),
        };
        let region = &buf[..end];
        if slow {
            for (i, line) in region.split(|&b| b == b'\n').enumerate() {
                if i == 0 || !line.is_empty() {
                    best.offer(cat, file, line_no + i as u64, trim_cr(line));
                }
            }
        } else {
            let mut pos = 0usize;
            let mut counted = 0usize; // newlines counted up to this offset
            let mut cur_line = line_no;
            // One pass of the keyword searcher; hits inside a line already
            // offered are skipped.
            for hit in cat.keyword_starts(region, 0) {
                if hit < pos {
                    continue;
                }
                let start = memchr::memrchr(b'\n', &region[..hit]).map_or(0, |p| p + 1);
                let stop = memchr::memchr(b'\n', &region[hit..]).map_or(region.len(), |p| hit + p);
                cur_line += memchr::memchr_iter(b'\n', &region[counted..start]).count() as u64;
                counted = start;
                best.offer(cat, file, cur_line, trim_cr(&region[start..stop]));
                pos = stop + 1;
                if pos >= region.len() {
                    break;
                }
            }
        }
        let newlines = memchr::memchr_iter(b'\n', region).count() as u64;
        line_no += newlines;
        let _ = split_line; // an over-long line keeps its number for the next piece
        buf.copy_within(end..len, 0);
        len -= end;
        if eof && len == 0 {
            break;
        }
    }
    Ok(best)
}

fn trim_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// Lossy UTF-8, control characters dropped, trimmed, cut to [`MAX_TEXT`] bytes.
pub fn clean_text(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(line);
    let text: String = text
        .chars()
        .map(|c| if c.is_control() && c != '\t' { ' ' } else { c })
        .collect();
    let text = text.trim();
    if text.len() <= MAX_TEXT {
        return text.to_string();
    }
    let mut cut = MAX_TEXT;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}…", &text[..cut])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cat() -> Catalogue {
        Catalogue::builtin().unwrap()
    }

    #[test]
    fn stream_finds_line_numbers_across_blocks() {
        let cat = cat();
        let mut log = Vec::new();
        let filler = b"epoch 1 step 10 loss 0.1234 lr 1e-4 throughput 812 img/s\n";
        let n = (BLOCK * 3) / filler.len();
        for _ in 0..n {
            log.extend_from_slice(filler);
        }
        log.extend_from_slice(
            b"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\r\n",
        );
        for _ in 0..10 {
            log.extend_from_slice(filler);
        }
        let best = scan_reader(&cat, "main.err", &log[..]).unwrap().0.unwrap();
        assert_eq!(best.line, n as u64 + 1);
        assert_eq!(cat.rules()[best.rule].spec.id, "cuda.oom");
        assert!(clean_text(&best.raw).ends_with("2.00 GiB"));
    }

    #[test]
    fn stream_keeps_higher_priority_and_earliest_tie() {
        let cat = cat();
        let log = "ValueError: first\nValueError: second\nNVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.\nKeyError: 'x'\n";
        let best = scan_reader(&cat, "f", log.as_bytes()).unwrap().0.unwrap();
        assert_eq!(best.line, 3);
        let log = "ValueError: first\nValueError: second\n";
        let best = scan_reader(&cat, "f", log.as_bytes()).unwrap().0.unwrap();
        assert_eq!(best.line, 1);
    }

    #[test]
    fn stream_without_trailing_newline_and_empty_input() {
        let cat = cat();
        assert!(scan_reader(&cat, "f", &b""[..]).unwrap().0.is_none());
        let best = scan_reader(&cat, "f", &b"a\nb\nKeyError: 'dataset'"[..])
            .unwrap()
            .0
            .unwrap();
        assert_eq!(best.line, 3);
    }

    #[test]
    fn over_long_line_is_scanned_in_pieces_with_bounded_memory() {
        let cat = cat();
        let mut log = vec![b'x'; BLOCK * 2 + 17];
        log.extend_from_slice(b" KeyError: 'a' \nnext\nLustreError: 11-0: x\n");
        let best = scan_reader(&cat, "f", &log[..]).unwrap().0.unwrap();
        assert_eq!(best.line, 3);
        assert_eq!(cat.rules()[best.rule].spec.id, "fs.lustre");
    }

    #[test]
    fn text_is_cut_and_cleaned() {
        let long = "é".repeat(400);
        let t = clean_text(long.as_bytes());
        assert!(t.len() <= MAX_TEXT + "…".len() && t.ends_with('…'));
        assert_eq!(clean_text(b"  a\x1b[31mb \xff "), "a [31mb \u{fffd}");
    }

    #[test]
    fn tail_lines_are_numbered_from_first_line() {
        let cat = cat();
        let best = scan_lines(
            &cat,
            "err",
            120,
            ["ok", "ok", "RendezvousConnectionError: x"],
        )
        .0
        .unwrap();
        assert_eq!((best.file.as_str(), best.line), ("err", 122));
    }
}
