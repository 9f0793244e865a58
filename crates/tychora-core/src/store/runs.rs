//! The query-runs repository: the statements that read and expire `query_runs` (the log thread's
//! batched insert is in `query_log.rs`). The first domain moved behind `store/` on the way to a
//! store port with a PostgreSQL adapter (docs/plans/scale-out.md).

use rusqlite::{Connection, OptionalExtension, params};

use super::query_log::QueryRun;
use crate::error::Result;

const COLUMNS: &str =
    "id, snapshot_id, request_json, summary_json, agent_id, task_id, duration_ms, created_at";

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<QueryRun> {
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
/// SQLite errors.
pub(crate) fn get(conn: &Connection, id: &str) -> Result<Option<QueryRun>> {
    Ok(conn
        .prepare_cached(&format!("SELECT {COLUMNS} FROM query_runs WHERE id = ?1"))?
        .query_row(params![id], row)
        .optional()?)
}

/// Where run `id` sits in the newest-first order (`created_at`, id), if recorded.
///
/// # Errors
/// SQLite errors.
pub(crate) fn position(conn: &Connection, id: &str) -> Result<Option<(i64, String)>> {
    Ok(conn
        .prepare_cached("SELECT created_at, id FROM query_runs WHERE id = ?1")?
        .query_row(params![id], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?)
}

/// At most `limit` runs, newest first (`created_at` descending, then id descending), only those
/// after `after` in that order when given.
///
/// # Errors
/// SQLite errors.
pub(crate) fn page(
    conn: &Connection,
    after: Option<(i64, String)>,
    limit: i64,
) -> Result<Vec<QueryRun>> {
    let (at, id) = after.unzip();
    let rows = conn
        .prepare_cached(&format!(
            "SELECT {COLUMNS} FROM query_runs
             WHERE ?1 IS NULL OR (created_at, id) < (?1, ?2)
             ORDER BY created_at DESC, id DESC LIMIT ?3"
        ))?
        .query_map(params![at, id, limit], row)?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(rows)
}

/// Deletes at most `batch` runs logged before `before`; how many went.
///
/// # Errors
/// SQLite errors.
pub(crate) fn expire(conn: &Connection, before: i64, batch: i64) -> Result<usize> {
    Ok(conn
        .prepare_cached(
            "DELETE FROM query_runs WHERE rowid IN (SELECT rowid FROM query_runs WHERE created_at < ?1 LIMIT ?2)",
        )?
        .execute(params![before, batch])?)
}
