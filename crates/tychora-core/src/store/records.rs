//! Structured records (a kind's requirements, controls, obligations…) and the evidence that
//! states them, as ingest writes them.

use rusqlite::{Connection, OptionalExtension as _, params};

use crate::error::Result;

/// `(id, body JSON)` of the record of this kind, type and key.
///
/// # Errors
/// SQLite errors.
pub fn by_key(
    conn: &Connection,
    kind: &str,
    record_type: &str,
    key: &str,
) -> Result<Option<(i64, String)>> {
    Ok(conn
        .prepare_cached(
            "SELECT id, body_json FROM structured_records WHERE kind = ?1 AND record_type = ?2 AND key = ?3",
        )?
        .query_row(params![kind, record_type, key], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?)
}

/// Replaces a record's body.
///
/// # Errors
/// SQLite errors.
pub fn set_body(tx: &Connection, record_id: i64, body_json: &str, now: i64) -> Result<()> {
    tx.prepare_cached(
        "UPDATE structured_records SET body_json = ?2, updated_at = ?3 WHERE id = ?1",
    )?
    .execute(params![record_id, body_json, now])?;
    Ok(())
}

/// Records a new record; returns its id.
///
/// # Errors
/// SQLite errors.
pub fn insert(
    tx: &Connection,
    kind: &str,
    record_type: &str,
    key: &str,
    body_json: &str,
    now: i64,
) -> Result<i64> {
    tx.prepare_cached(
        "INSERT INTO structured_records (kind, record_type, key, body_json, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?5)",
    )?
    .execute(params![kind, record_type, key, body_json, now])?;
    Ok(tx.last_insert_rowid())
}

/// `(path, body JSON)` of what other sources state about a record, at their newest revision
/// (other than the source of `revision_id`).
///
/// # Errors
/// SQLite errors.
pub fn stated_elsewhere(
    conn: &Connection,
    record_id: i64,
    revision_id: i64,
) -> Result<Vec<(String, String)>> {
    Ok(conn
        .prepare_cached(
            "SELECT s.rel_path, re.body_json FROM record_evidence re
             JOIN revisions r ON r.id = re.revision_id JOIN sources s ON s.id = r.source_id
             WHERE re.record_id = ?1 AND r.source_id != (SELECT source_id FROM revisions WHERE id = ?2)
               AND r.seq = (SELECT MAX(seq) FROM revisions WHERE source_id = r.source_id)",
        )?
        .query_map(params![record_id, revision_id], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?)
}

/// Records that a unit states (part of) a record, with what it states.
///
/// # Errors
/// SQLite errors.
pub fn put_evidence(
    tx: &Connection,
    record_id: i64,
    unit_id: i64,
    revision_id: i64,
    body_json: &str,
) -> Result<()> {
    tx.prepare_cached(
        "INSERT INTO record_evidence (record_id, unit_id, revision_id, body_json) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (record_id, unit_id) DO UPDATE SET body_json = excluded.body_json",
    )?
    .execute(params![record_id, unit_id, revision_id, body_json])?;
    Ok(())
}
