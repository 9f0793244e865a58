//! The clock: stored times are milliseconds since the Unix epoch; messages show them in UTC.

use std::time::{SystemTime, UNIX_EPOCH};

/// Milliseconds since the Unix epoch.
#[must_use]
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// A stored time (ms since the Unix epoch) as people read it in messages: ISO 8601 in UTC, to
/// the second (`2026-01-31T09:04:05Z`). Data fields keep the milliseconds.
#[must_use]
pub fn iso_utc(ms: i64) -> String {
    match jiff::Timestamp::from_millisecond(ms) {
        Ok(at) => at.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
        Err(_) => format!("{ms} ms after the Unix epoch"),
    }
}

#[cfg(test)]
mod time_tests {
    #[test]
    fn stored_times_read_as_iso_8601_utc() {
        assert_eq!(super::iso_utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(super::iso_utc(1_769_850_245_678), "2026-01-31T09:04:05Z");
    }
}
