//! Slurm time strings: parse every form sbatch accepts for `--time`
//! (sbatch(1): "minutes", "minutes:seconds", "hours:minutes:seconds",
//! "days-hours", "days-hours:minutes", "days-hours:minutes:seconds") and
//! print one canonical form, `D-HH:MM:SS`.
//!
//! Two traps from other launchers' bug trackers are handled here: `M:S` is
//! minutes and seconds (never hours and minutes), and `0`, `-1`,
//! `INFINITE` and `UNLIMITED` all mean "no limit" to Slurm (sbatch(1): "A
//! time limit of zero requests that no time limit be imposed"), so they
//! parse to [`SlurmTime::Unlimited`]. Whether a job may have no limit is
//! the partition's to say ([`crate::request::check_time_limit`]).
//!
//! Stricter than Slurm: a field below a larger one must be in range
//! (minutes and seconds below 60, hours below 24 after days). Slurm 22.05's
//! sbatch carries the excess over (`1:75:00` runs as `2:15:00`); a value
//! out of range is far more often a typo, so it is refused with the form
//! to write instead. This is the one parser: tao-record checks `--time`
//! and tao-render plans `#SBATCH --time` with it.

use std::fmt;

/// A parsed Slurm time limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum SlurmTime {
    /// A finite limit in seconds (greater than zero).
    Seconds(u64),
    /// No limit (`0`, `-1`, `INFINITE`, `UNLIMITED`).
    Unlimited,
}

/// Why a time string did not parse; the `Display` text names the input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimeError(String);

impl fmt::Display for TimeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

fn num(part: &str, whole: &str) -> Result<u64, TimeError> {
    if part.is_empty() || part.len() > 9 || !part.bytes().all(|b| b.is_ascii_digit()) {
        return Err(TimeError(format!(
            "time {whole:?} is not a Slurm time: use minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS"
        )));
    }
    part.parse()
        .map_err(|_| TimeError(format!("time {whole:?}: number {part:?} is too large")))
}

fn below(v: u64, limit: u64, what: &str, whole: &str) -> Result<u64, TimeError> {
    if v < limit {
        Ok(v)
    } else {
        Err(TimeError(format!(
            "time {whole:?}: {what} must be below {limit}"
        )))
    }
}

impl SlurmTime {
    /// Parse a Slurm time string (surrounding whitespace ignored).
    ///
    /// Forms (sbatch(1), `--time`): `M`, `M:S`, `H:M:S`, `D-H`, `D-H:M`,
    /// `D-H:M:S`; minutes and seconds below 60 wherever hours are given,
    /// seconds below 60 in `M:S`, hours below 24 wherever days are given.
    /// `0`, `-1`, `INFINITE`, `UNLIMITED` (any case) and any form adding
    /// up to zero are [`SlurmTime::Unlimited`].
    ///
    /// Errors: [`TimeError`] naming the input and the accepted forms.
    pub fn parse(input: &str) -> Result<Self, TimeError> {
        let s = input.trim();
        if s == "-1" || s.eq_ignore_ascii_case("infinite") || s.eq_ignore_ascii_case("unlimited") {
            return Ok(SlurmTime::Unlimited);
        }
        let (days, rest) = match s.split_once('-') {
            Some((d, rest)) => (Some(num(d, input)?), rest),
            None => (None, s),
        };
        let parts: Vec<&str> = rest.split(':').collect();
        let secs = match (days, parts.as_slice()) {
            (None, [m]) => num(m, input)? * 60,
            (None, [m, sec]) => num(m, input)? * 60 + below(num(sec, input)?, 60, "seconds", input)?,
            (None, [h, m, sec]) => {
                num(h, input)? * 3600
                    + below(num(m, input)?, 60, "minutes", input)? * 60
                    + below(num(sec, input)?, 60, "seconds", input)?
            }
            (Some(d), [h]) => d * 86400 + below(num(h, input)?, 24, "hours", input)? * 3600,
            (Some(d), [h, m]) => {
                d * 86400
                    + below(num(h, input)?, 24, "hours", input)? * 3600
                    + below(num(m, input)?, 60, "minutes", input)? * 60
            }
            (Some(d), [h, m, sec]) => {
                d * 86400
                    + below(num(h, input)?, 24, "hours", input)? * 3600
                    + below(num(m, input)?, 60, "minutes", input)? * 60
                    + below(num(sec, input)?, 60, "seconds", input)?
            }
            _ => {
                return Err(TimeError(format!(
                    "time {input:?} is not a Slurm time: use minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS"
                )))
            }
        };
        Ok(if secs == 0 {
            SlurmTime::Unlimited
        } else {
            SlurmTime::Seconds(secs)
        })
    }

    /// The canonical form: `D-HH:MM:SS` for a finite limit (`0-04:00:00`),
    /// `UNLIMITED` otherwise.
    pub fn canonical(&self) -> String {
        match *self {
            SlurmTime::Unlimited => "UNLIMITED".to_string(),
            SlurmTime::Seconds(s) => format!(
                "{}-{:02}:{:02}:{:02}",
                s / 86400,
                (s % 86400) / 3600,
                (s % 3600) / 60,
                s % 60
            ),
        }
    }

    /// Seconds, or `None` when unlimited.
    pub fn seconds(&self) -> Option<u64> {
        match *self {
            SlurmTime::Seconds(s) => Some(s),
            SlurmTime::Unlimited => None,
        }
    }
}

/// Format seconds as `HH:MM:SS` (hours may exceed 24), the form
/// tao-record writes for a default `resources.child_timeout`.
pub fn format_hms(secs: u64) -> String {
    format!(
        "{:02}:{:02}:{:02}",
        secs / 3600,
        (secs / 60) % 60,
        secs % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(s: &str) -> u64 {
        SlurmTime::parse(s).unwrap().seconds().unwrap()
    }

    #[test]
    fn every_slurm_form() {
        assert_eq!(secs("240"), 4 * 3600);
        assert_eq!(secs("30:15"), 30 * 60 + 15); // M:S, never H:M
        assert_eq!(secs("04:00:00"), 4 * 3600);
        assert_eq!(secs("2-12"), 2 * 86400 + 12 * 3600);
        assert_eq!(secs("1-02:30"), 86400 + 2 * 3600 + 30 * 60);
        assert_eq!(secs("1-02:30:05"), 86400 + 2 * 3600 + 30 * 60 + 5);
        assert_eq!(secs("100:00:00"), 100 * 3600);
        assert_eq!(secs(" 90 "), 90 * 60);
    }

    #[test]
    fn hms_form() {
        assert_eq!(format_hms(13680), "03:48:00");
        assert_eq!(format_hms(360000), "100:00:00");
    }

    #[test]
    fn canonical_form() {
        assert_eq!(SlurmTime::parse("240").unwrap().canonical(), "0-04:00:00");
        assert_eq!(SlurmTime::parse("30:15").unwrap().canonical(), "0-00:30:15");
        assert_eq!(
            SlurmTime::parse("2-00:00:00").unwrap().canonical(),
            "2-00:00:00"
        );
        assert_eq!(
            SlurmTime::parse("49:00:00").unwrap().canonical(),
            "2-01:00:00"
        );
    }

    #[test]
    fn unlimited_spellings() {
        for s in [
            "0",
            "-1",
            "UNLIMITED",
            "unlimited",
            "INFINITE",
            "00:00:00",
            "0-0",
        ] {
            assert_eq!(SlurmTime::parse(s).unwrap(), SlurmTime::Unlimited, "{s}");
        }
    }

    #[test]
    fn refused_forms() {
        for s in [
            "",
            "4h",
            "1:2:3:4",
            "1-2-3",
            "-5",
            "1-24",
            "1-23:60",
            "00:60:00",
            "10:60",
            "a:b",
            "1 2",
            "9999999999",
        ] {
            assert!(SlurmTime::parse(s).is_err(), "{s:?}");
        }
        let msg = SlurmTime::parse("4h").unwrap_err().to_string();
        assert!(msg.contains("\"4h\"") && msg.contains("HH:MM:SS"), "{msg}");
    }
}
