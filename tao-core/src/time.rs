//! Timestamps: RFC 3339 in UTC with microseconds (`2026-11-29T18:58:47.123456Z`),
//! the one format used in job lines and record histories. Strings in this
//! format sort in time order.

use chrono::{DateTime, SecondsFormat, Utc};

/// The current time as RFC 3339 UTC with microseconds.
pub fn now_rfc3339() -> String {
    Utc::now().to_rfc3339_opts(SecondsFormat::Micros, true)
}

/// Parse an RFC 3339 timestamp. `None` when it is not one.
pub fn parse_rfc3339(s: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(s)
        .ok()
        .map(|d| d.with_timezone(&Utc))
}

#[cfg(test)]
mod tests {
    #[test]
    fn now_parses_back() {
        let now = super::now_rfc3339();
        assert!(now.ends_with('Z'));
        assert!(super::parse_rfc3339(&now).is_some());
    }
}
