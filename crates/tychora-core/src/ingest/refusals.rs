//! What capture refuses to take again: a source withdrawn from its collection, bytes erased on
//! request. Read by the add job (before it stores anything) and by withdrawal and erasure, which
//! write them; a module of its own so neither of those depends on the other.

use crate::error::Result;
use crate::store::tx::Tx;

/// Whether the source at `uri` in `collection_id` was withdrawn, and why.
///
/// # Errors
/// SQLite errors.
pub(super) fn withdrawn(
    conn: &dyn Tx,
    collection_id: i64,
    uri: &str,
) -> Result<Option<(i64, String)>> {
    crate::store::sources::withdrawal(conn, collection_id, uri)
}

/// Whether bytes with this sha256 were erased on request (never captured again), and why.
///
/// # Errors
/// SQLite errors.
pub(super) fn erased_on_request(conn: &dyn Tx, sha256: &str) -> Result<Option<(i64, String)>> {
    crate::store::erasure::erased(conn, sha256)
}
