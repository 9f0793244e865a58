//! The query-runs repository: the statements that read and expire `query_runs` (the log thread's
//! batched insert is in `query_log.rs`), on either adapter (`store::tx`).

use super::query_log::QueryRun;
use super::tx::{Row, Tx, args};
use crate::error::Result;

const COLUMNS: &str =
    "id, snapshot_id, request_json, summary_json, agent_id, task_id, duration_ms, created_at";

fn row(r: &dyn Row) -> Result<QueryRun> {
    Ok(QueryRun {
        id: r.get(0)?,
        snapshot_id: r.get(1)?,
        request_json: r.get(2)?,
        summary_json: r.get(3)?,
        agent_id: r.get(4)?,
        task_id: r.get(5)?,
        duration_ms: r.get(6)?,
        created_at: r.get(7)?,
    })
}

/// The run `id`, if recorded.
///
/// # Errors
/// The store's errors.
pub fn get(tx: &dyn Tx, id: &str) -> Result<Option<QueryRun>> {
    tx.optional(
        &format!("SELECT {COLUMNS} FROM query_runs WHERE id = ?1"),
        args![id],
        row,
    )
}

/// Where run `id` sits in the newest-first order (`created_at`, id), if recorded.
///
/// # Errors
/// The store's errors.
pub fn position(tx: &dyn Tx, id: &str) -> Result<Option<(i64, String)>> {
    tx.optional(
        "SELECT created_at, id FROM query_runs WHERE id = ?1",
        args![id],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
}

/// At most `limit` runs, newest first (`created_at` descending, then id descending), only those
/// after `after` in that order when given.
///
/// # Errors
/// The store's errors.
pub fn page(tx: &dyn Tx, after: Option<(i64, String)>, limit: i64) -> Result<Vec<QueryRun>> {
    let (at, id) = after.unzip();
    tx.rows(
        &format!(
            "SELECT {COLUMNS} FROM query_runs
             WHERE CAST(?1 AS BIGINT) IS NULL OR (created_at, id) < (?1, ?2)
             ORDER BY created_at DESC, id DESC LIMIT ?3"
        ),
        args![at, id.as_deref(), limit],
        row,
    )
}

/// Deletes at most `batch` runs logged before `before`; how many went.
///
/// # Errors
/// The store's errors.
pub fn expire(tx: &dyn Tx, before: i64, batch: i64) -> Result<usize> {
    let gone = tx.execute(
        "DELETE FROM query_runs WHERE id IN (SELECT id FROM query_runs WHERE created_at < ?1 LIMIT ?2)",
        args![before, batch],
    )?;
    Ok(usize::try_from(gone).unwrap_or(usize::MAX))
}
