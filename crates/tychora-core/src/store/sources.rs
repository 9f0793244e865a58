//! Sources: the captured files and documents of a workspace (their revisions, extractions and
//! units move here with the ingest pipeline's statements).

use rusqlite::Connection;

use crate::error::Result;

/// How many sources the workspace holds.
///
/// # Errors
/// SQLite errors.
pub fn count(conn: &Connection) -> Result<i64> {
    Ok(conn
        .prepare_cached("SELECT COUNT(*) FROM sources")?
        .query_row([], |r| r.get(0))?)
}

/// Whether any source is labelled with sensitivity `level` (one lookup on the label index).
///
/// # Errors
/// SQLite errors.
pub fn any_labelled(conn: &Connection, level: &str) -> Result<bool> {
    Ok(conn
        .prepare_cached("SELECT EXISTS (SELECT 1 FROM sources WHERE sensitivity = ?1)")?
        .query_row([level], |r| r.get(0))?)
}
