//! Memory sizes as sbatch(1) `--mem` reads them: one parser for the
//! request rules (tao_core::request) and the site profile's partition
//! limits (tao_core::site), which both need it.

/// Check and normalise a memory size (sbatch `--mem`): 1-12 digits with an
/// optional unit K, M, G or T, in either case (sbatch(1) reads `64g` as
/// `64G`). Output: the size with the unit in upper case.
///
/// Errors: the message naming the value and the form.
pub fn mem(s: &str) -> Result<String, String> {
    let digits = s
        .strip_suffix(['K', 'M', 'G', 'T', 'k', 'm', 'g', 't'])
        .unwrap_or(s);
    if digits.is_empty() || digits.len() > 12 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("{s:?} is not a memory size; use e.g. 64G or 7200M"));
    }
    Ok(s.to_ascii_uppercase())
}

/// A memory size in megabytes: [`mem`]'s form, no unit meaning
/// megabytes (sbatch(1) `--mem`), K rounded up.
///
/// Errors: the message naming the value and the form.
pub fn mem_megabytes(s: &str) -> Result<u64, String> {
    let m = mem(s)?;
    let (digits, mult) = match m.as_bytes().last() {
        Some(b'K') => (&m[..m.len() - 1], 0),
        Some(b'M') => (&m[..m.len() - 1], 1),
        Some(b'G') => (&m[..m.len() - 1], 1024),
        Some(b'T') => (&m[..m.len() - 1], 1024 * 1024),
        _ => (m.as_str(), 1),
    };
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("{s:?} is not a memory size; use e.g. 64G or 7200M"))?;
    Ok(if mult == 0 {
        n.div_ceil(1024)
    } else {
        n.saturating_mul(mult)
    })
}
