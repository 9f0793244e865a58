//! The workspace row and its collections.

use rusqlite::{Connection, OptionalExtension, params};

use crate::error::Result;
use crate::trust::Trust;

/// Records a new workspace (its row and its `default` collection) in the caller's transaction.
pub(crate) fn create(conn: &Connection, name: &str, engine_version: &str, now: i64) -> Result<()> {
    conn.execute(
        "INSERT INTO workspaces (id, name, created_at, engine_version) VALUES (1, ?1, ?2, ?3)",
        params![name, now, engine_version],
    )?;
    conn.execute(
        "INSERT INTO collections (workspace_id, name, created_at) VALUES (1, 'default', ?1)",
        params![now],
    )?;
    Ok(())
}

/// A collection's id and the trust it holds, by name.
pub(crate) fn collection(conn: &Connection, name: &str) -> Result<Option<(i64, String)>> {
    Ok(conn
        .query_row(
            "SELECT id, trust FROM collections WHERE name = ?1",
            params![name],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?)
}

/// Creates a collection holding `trust` (the schema's default, `captured_source`, when `None`);
/// returns its id.
pub(crate) fn create_collection(
    conn: &Connection,
    name: &str,
    trust: Option<Trust>,
    now: i64,
) -> Result<i64> {
    match trust {
        Some(trust) => conn.execute(
            "INSERT INTO collections (workspace_id, name, created_at, trust) VALUES (1, ?1, ?2, ?3)",
            params![name, now, trust.as_str()],
        )?,
        None => conn.execute(
            "INSERT INTO collections (workspace_id, name, created_at) VALUES (1, ?1, ?2)",
            params![name, now],
        )?,
    };
    Ok(conn.last_insert_rowid())
}
