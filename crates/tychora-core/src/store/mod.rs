//! The canonical store: one SQLite database per workspace (WAL, `synchronous=FULL`, foreign keys),
//! or a PostgreSQL database shared by a service's daemons (`postgres/`).
//!
//! The only module that writes SQL (`tests/architecture.rs` forbids it anywhere else): one
//! repository module per domain, each a set of functions over the caller's transaction. Those
//! that take the one transaction interface (`tx::Tx`: capture, publication, sources, batches, the
//! query log, a query's reads, listings, verify's reads, jobs) run unchanged on both adapters (`tests/store_contract.rs`); the
//! others still take a rusqlite connection and move domain by domain. The job queue is a port of
//! its own with both adapters (`queue`). Modules below the store reach it through ports they
//! declare (`vector::VectorRecords`, `vector::VectorCache`).

pub mod assertions;
pub mod batches;
pub mod descriptions;
pub mod erasure;
pub mod evidence;
pub mod extractions;
pub(crate) mod facets;
pub mod filter;
pub mod hydrate;
pub mod identifiers;
pub mod integrity;
pub mod inventory;
pub mod jobs;
pub mod listings;
pub mod migrate;
pub mod pictures;
pub mod postgres;
pub mod query_log;
pub mod queue;
pub mod records;
pub mod relations;
pub mod retention;
pub mod runs;
pub mod snapshots;
pub mod sources;
pub mod summaries;
pub mod tx;
pub mod vectors;
pub mod workspaces;

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

/// Begins a transaction that takes the write lock at once, on a connection the caller holds
/// across calls (the add's batch committer, a job's finish): a deferred transaction whose
/// snapshot went stale (the query log commits on its own connection) cannot upgrade to a
/// writer (`SQLITE_BUSY`). [`commit`] or [`rollback`] ends it.
///
/// # Errors
/// SQLite errors (another writer holding the lock past the busy timeout).
pub fn begin_immediate(conn: &Connection) -> Result<()> {
    conn.execute_batch("BEGIN IMMEDIATE")?;
    Ok(())
}

/// Commits the transaction [`begin_immediate`] began.
///
/// # Errors
/// SQLite errors.
pub fn commit(conn: &Connection) -> Result<()> {
    conn.execute_batch("COMMIT")?;
    Ok(())
}

/// Rolls back the transaction [`begin_immediate`] began (nothing of it is kept).
///
/// # Errors
/// SQLite errors.
pub fn rollback(conn: &Connection) -> Result<()> {
    conn.execute_batch("ROLLBACK")?;
    Ok(())
}
