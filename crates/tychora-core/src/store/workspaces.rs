//! The workspace row and its collections.

use super::tx::{Tx, args};
use crate::error::Result;
use crate::trust::Trust;

/// Records a new workspace (its row and its `default` collection) in the caller's transaction.
pub fn create(tx: &dyn Tx, name: &str, engine_version: &str, now: i64) -> Result<()> {
    tx.execute(
        "INSERT INTO workspaces (id, name, created_at, engine_version) VALUES (1, ?1, ?2, ?3)",
        args![name, now, engine_version],
    )?;
    tx.execute(
        "INSERT INTO collections (workspace_id, name, created_at) VALUES (1, 'default', ?1)",
        args![now],
    )?;
    Ok(())
}

/// Records the workspace row and its `default` collection unless they are there (the first
/// daemon on a service store; two at once make one).
pub fn ensure(tx: &dyn Tx, name: &str, engine_version: &str, now: i64) -> Result<()> {
    tx.execute(
        "INSERT INTO workspaces (id, name, created_at, engine_version) VALUES (1, ?1, ?2, ?3)
         ON CONFLICT (id) DO NOTHING",
        args![name, now, engine_version],
    )?;
    tx.execute(
        "INSERT INTO collections (workspace_id, name, created_at) VALUES (1, 'default', ?1)
         ON CONFLICT (name) DO NOTHING",
        args![now],
    )?;
    Ok(())
}

/// What tells this workspace's canonical store from another's: its row's name and creation time
/// (`name@ms`; every daemon of a service store reads the same one). `None` before the row exists.
pub fn identity(tx: &dyn Tx) -> Result<Option<String>> {
    tx.optional(
        "SELECT name, created_at FROM workspaces WHERE id = 1",
        args![],
        |r| {
            let name: String = r.get(0)?;
            let created: i64 = r.get(1)?;
            Ok(format!("{name}@{created}"))
        },
    )
}

/// A collection's id and the trust it holds, by name.
pub fn collection(tx: &dyn Tx, name: &str) -> Result<Option<(i64, String)>> {
    tx.optional(
        "SELECT id, trust FROM collections WHERE name = ?1",
        args![name],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
}

/// Creates a collection holding `trust` (the schema's default, `captured_source`, when `None`);
/// returns its id.
pub fn create_collection(tx: &dyn Tx, name: &str, trust: Option<Trust>, now: i64) -> Result<i64> {
    match trust {
        Some(trust) => tx.insert(
            "INSERT INTO collections (workspace_id, name, created_at, trust) VALUES (1, ?1, ?2, ?3)",
            args![name, now, trust.as_str()],
        ),
        None => tx.insert(
            "INSERT INTO collections (workspace_id, name, created_at) VALUES (1, ?1, ?2)",
            args![name, now],
        ),
    }
}
