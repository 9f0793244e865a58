//! What capture refuses to take again: a source withdrawn from its collection, bytes erased on
//! request. Read by the add job (before it stores anything) and by withdrawal and erasure, which
//! write them; a module of its own so neither of those depends on the other.
use rusqlite::{Connection, OptionalExtension, params};

use crate::error::Result;

/// Whether the source at `uri` in `collection_id` was withdrawn, and why.
///
/// # Errors
/// SQLite errors.
pub(super) fn withdrawn(
    conn: &Connection,
    collection_id: i64,
    uri: &str,
) -> Result<Option<(i64, String)>> {
    Ok(conn
        .query_row(
            "SELECT w.withdrawn_at, w.reason FROM source_withdrawals w JOIN sources s ON s.id = w.source_id
             WHERE s.collection_id = ?1 AND s.uri = ?2",
            params![collection_id, uri],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?)
}

/// Whether bytes with this sha256 were erased on request (never captured again), and why.
///
/// # Errors
/// SQLite errors.
pub(super) fn erased_on_request(conn: &Connection, sha256: &str) -> Result<Option<(i64, String)>> {
    Ok(conn
        .query_row(
            "SELECT deleted_at, reason FROM tombstones WHERE sha256 = ?1 AND kind = 'erasure' ORDER BY id LIMIT 1",
            params![sha256],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?)
}
