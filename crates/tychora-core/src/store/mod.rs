//! The canonical store: one SQLite database per workspace (WAL, `synchronous=FULL`, foreign keys).

pub mod migrate;
pub(crate) mod query_log;
pub(crate) mod runs;

use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use rusqlite::Connection;

use crate::error::Result;

/// Opens a connection with the pragmas every connection needs.
///
/// # Errors
/// SQLite errors opening the file or setting pragmas.
pub fn connect(path: &Path) -> Result<Connection> {
    let conn = Connection::open(path)?;
    configure(&conn)?;
    Ok(conn)
}

/// Applies the per-connection pragmas.
///
/// # Errors
/// SQLite errors.
pub fn configure(conn: &Connection) -> Result<()> {
    conn.pragma_update(None, "journal_mode", "WAL")?;
    // FULL: a committed snapshot pointer survives power loss, not only a process crash.
    conn.pragma_update(None, "synchronous", "FULL")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    conn.busy_timeout(std::time::Duration::from_secs(10))?;
    conn.set_prepared_statement_cache_capacity(64);
    Ok(())
}

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
