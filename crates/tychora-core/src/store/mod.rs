//! The canonical store: one SQLite database per workspace (WAL, `synchronous=FULL`, foreign keys).

pub mod assertions;
pub(crate) mod batches;
pub mod descriptions;
pub(crate) mod erasure;
pub(crate) mod extractions;
pub(crate) mod facets;
pub(crate) mod filter;
pub(crate) mod hydrate;
pub mod identifiers;
pub(crate) mod integrity;
pub mod inventory;
pub mod jobs;
pub mod listings;
pub mod migrate;
pub(crate) mod pictures;
pub mod postgres;
pub(crate) mod query_log;
pub mod queue;
pub mod records;
pub mod relations;
pub(crate) mod retention;
pub(crate) mod runs;
pub(crate) mod snapshots;
pub(crate) mod sources;
pub mod summaries;
pub mod vectors;
pub(crate) mod workspaces;

use std::path::Path;

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
