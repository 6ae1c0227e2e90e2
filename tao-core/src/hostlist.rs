//! Slurm host lists (`n[1-3,7],gpu01`) expanded into node names, with a
//! bound on the expanded size.
//!
//! Why a bound: a host list is short text that can stand for very many
//! names (`n[0-99999,0-99999,...]` in 10 KB is millions of names, hundreds
//! of megabytes). Every caller (tao-submit's `resources.exclude`) needs the
//! names of real nodes only, and no cluster has more than
//! [`MAX_NAMES`]; past it the list is refused with an error naming the
//! bound, before anything large is allocated.
//!
//! Syntax (Slurm's hostlist(3) as sbatch `--exclude` accepts it): names
//! separated by commas outside brackets; a name may end in one bracket
//! group of comma-separated numbers and `A-B` ranges, the width of `A`
//! giving the zero padding (`n[01-03]` is n01, n02, n03). A group that is
//! not of that form is kept as written (it then matches no node).

/// The most node names one host list may expand to: 65536, more than the
/// nodes of any cluster the tools target.
pub const MAX_NAMES: usize = 65_536;

/// The longest host list text accepted, in bytes (1 MiB).
pub const MAX_TEXT: usize = 1 << 20;

/// A host list past a bound.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HostlistError {
    /// It expands to more than `limit` names.
    #[error("host list expands to more than {limit} node names (the bound on one list); name fewer nodes or narrower ranges")]
    TooManyNames {
        /// The bound that was passed.
        limit: usize,
    },
    /// Its text is longer than [`MAX_TEXT`] bytes.
    #[error("host list is {len} bytes, longer than the bound of {MAX_TEXT}; name fewer nodes")]
    TooLong {
        /// Its length in bytes.
        len: usize,
    },
}

/// Expand `list` into node names, in order, at most `limit` of them
/// (use [`MAX_NAMES`] unless a caller has a smaller bound).
///
/// Output: the names; a malformed bracket group is kept as written.
///
/// Errors: [`HostlistError::TooLong`] for text past [`MAX_TEXT`];
/// [`HostlistError::TooManyNames`] as soon as the expansion would pass
/// `limit` (the count is checked before each range is expanded, so the
/// memory used stays within `limit` names).
pub fn expand(list: &str, limit: usize) -> Result<Vec<String>, HostlistError> {
    if list.len() > MAX_TEXT {
        return Err(HostlistError::TooLong { len: list.len() });
    }
    let mut out: Vec<String> = Vec::new();
    let too_many = || HostlistError::TooManyNames { limit };
    for part in split_outside_brackets(list) {
        let p = part.trim();
        if p.is_empty() {
            continue;
        }
        let group = match (p.find('['), p.ends_with(']')) {
            (Some(open), true) => Some((&p[..open], &p[open + 1..p.len() - 1])),
            _ => None,
        };
        let Some((prefix, inner)) = group else {
            if out.len() >= limit {
                return Err(too_many());
            }
            out.push(p.to_string());
            continue;
        };
        // A group with a nested bracket or an unparsable range is kept.
        let mut ranges: Vec<(u64, u64, usize)> = Vec::new();
        let mut well_formed = !inner.contains(['[', ']']);
        for r in inner.split(',') {
            let (a, b) = r.split_once('-').unwrap_or((r, r));
            match (a.parse::<u64>(), b.parse::<u64>()) {
                (Ok(x), Ok(y))
                    if x <= y
                        && a.bytes().all(|c| c.is_ascii_digit())
                        && b.bytes().all(|c| c.is_ascii_digit()) =>
                {
                    ranges.push((x, y, a.len()))
                }
                _ => well_formed = false,
            }
        }
        if !well_formed {
            if out.len() >= limit {
                return Err(too_many());
            }
            out.push(p.to_string());
            continue;
        }
        for (x, y, width) in ranges {
            let count = (y - x).saturating_add(1);
            if count > (limit - out.len()) as u64 {
                return Err(too_many());
            }
            for n in x..=y {
                out.push(format!("{prefix}{n:0width$}"));
            }
        }
    }
    Ok(out)
}

/// Split on commas that are not inside brackets (an unbalanced `]` does
/// not make the depth negative).
fn split_outside_brackets(list: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    for (i, ch) in list.char_indices() {
        match ch {
            '[' => depth += 1,
            ']' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                parts.push(&list[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&list[start..]);
    parts
}

/// At most `max` items of `names` joined with commas, then `and N more`
/// when there were more: a bounded form for messages that name many
/// things (dropped nodes, unreadable record files).
pub fn summarize(names: &[String], max: usize) -> String {
    let shown = names
        .iter()
        .take(max)
        .cloned()
        .collect::<Vec<_>>()
        .join(",");
    if names.len() > max {
        format!("{shown} and {} more", names.len() - max)
    } else {
        shown
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expands_ranges_lists_and_padding() {
        assert_eq!(
            expand("n[1-3,7],gpu01", MAX_NAMES).unwrap(),
            ["n1", "n2", "n3", "n7", "gpu01"]
        );
        assert_eq!(
            expand("n[08-10]", MAX_NAMES).unwrap(),
            ["n08", "n09", "n10"]
        );
        assert_eq!(expand(" a , ,b", MAX_NAMES).unwrap(), ["a", "b"]);
        // Malformed groups are kept as written.
        for bad in ["n[3-1]", "n[a-b]", "n[1-]", "n[[1-2]]", "n[-1]", "n[+1-2]"] {
            assert_eq!(expand(bad, MAX_NAMES).unwrap(), [bad], "{bad}");
        }
        assert_eq!(expand("n]1,2[", MAX_NAMES).unwrap(), ["n]1", "2["]);
    }

    #[test]
    fn the_bound_is_checked_before_expanding() {
        let big = format!("n[{}]", vec!["0-99999"; 1000].join(","));
        assert!(big.len() > 7000);
        assert_eq!(
            expand(&big, MAX_NAMES),
            Err(HostlistError::TooManyNames { limit: MAX_NAMES })
        );
        assert_eq!(
            expand("n[0-18446744073709551615]", MAX_NAMES),
            Err(HostlistError::TooManyNames { limit: MAX_NAMES })
        );
        assert_eq!(expand("n[1-4]", 4).unwrap().len(), 4);
        assert!(expand("n[1-4],x", 4).is_err());
        let e = expand(&big, MAX_NAMES).unwrap_err().to_string();
        assert!(e.contains("65536"), "{e}");
        assert!(matches!(
            expand(&"a,".repeat(MAX_TEXT), MAX_NAMES),
            Err(HostlistError::TooLong { .. })
        ));
    }

    #[test]
    fn summaries_are_bounded() {
        let names: Vec<String> = (0..300).map(|i| format!("n{i}")).collect();
        let s = summarize(&names, 10);
        assert!(s.ends_with("and 290 more"), "{s}");
        assert!(s.len() < 100);
        assert_eq!(summarize(&names[..2], 10), "n0,n1");
    }
}
