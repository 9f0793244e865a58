//! Sources: the captured files and documents of a workspace (their revisions, extractions and
//! units move here with the ingest pipeline's statements).

use rusqlite::{Connection, OptionalExtension as _, params};

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

/// Whether a source row exists.
///
/// # Errors
/// SQLite errors.
pub fn exists(conn: &Connection, source_id: i64) -> Result<bool> {
    Ok(conn
        .prepare_cached("SELECT 1 FROM sources WHERE id = ?1")?
        .query_row(params![source_id], |_| Ok(()))
        .optional()?
        .is_some())
}

/// Whether a revision row exists.
///
/// # Errors
/// SQLite errors.
pub fn revision_exists(conn: &Connection, revision_id: i64) -> Result<bool> {
    Ok(conn
        .prepare_cached("SELECT 1 FROM revisions WHERE id = ?1")?
        .query_row(params![revision_id], |_| Ok(()))
        .optional()?
        .is_some())
}

/// A source's revisions, oldest first.
///
/// # Errors
/// SQLite errors.
pub fn revisions_of(conn: &Connection, source_id: i64) -> Result<Vec<i64>> {
    Ok(conn
        .prepare_cached("SELECT id FROM revisions WHERE source_id = ?1 ORDER BY id")?
        .query_map(params![source_id], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?)
}

/// The sha256 of a revision's original bytes.
///
/// # Errors
/// SQLite errors (`QueryReturnedNoRows` for no such revision).
pub fn revision_sha256(conn: &Connection, revision_id: i64) -> Result<String> {
    Ok(conn
        .prepare_cached("SELECT sha256 FROM revisions WHERE id = ?1")?
        .query_row(params![revision_id], |r| r.get(0))?)
}

/// `(revision id, source id, size)` of every revision holding these bytes, oldest first.
///
/// # Errors
/// SQLite errors.
pub fn revisions_holding(conn: &Connection, sha256: &str) -> Result<Vec<(i64, i64, i64)>> {
    Ok(conn
        .prepare_cached("SELECT id, source_id, size FROM revisions WHERE sha256 = ?1 ORDER BY id")?
        .query_map(params![sha256], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<rusqlite::Result<_>>()?)
}

/// Withdraws a source from new snapshots (its history stays): records why, by which job, and
/// marks it removed. Returns its URI and path.
///
/// # Errors
/// SQLite errors.
pub fn withdraw(
    tx: &Connection,
    source_id: i64,
    job_id: i64,
    reason: &str,
    now: i64,
) -> Result<(String, String)> {
    tx.execute(
        "INSERT INTO source_withdrawals (source_id, job_id, reason, withdrawn_at) VALUES (?1, ?2, ?3, ?4) ON CONFLICT (source_id) DO NOTHING",
        params![source_id, job_id, reason, now],
    )?;
    tx.execute(
        "UPDATE sources SET status = 'removed', updated_at = ?2 WHERE id = ?1",
        params![source_id, now],
    )?;
    Ok(tx.query_row(
        "SELECT uri, rel_path FROM sources WHERE id = ?1",
        params![source_id],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?)
}

/// Sources with this URI, by id.
///
/// # Errors
/// SQLite errors.
pub fn with_uri(conn: &Connection, uri: &str) -> Result<Vec<i64>> {
    Ok(conn
        .prepare_cached("SELECT id FROM sources WHERE uri = ?1 ORDER BY id")?
        .query_map(params![uri], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?)
}

/// Sources with this path relative to their capture root, by id.
///
/// # Errors
/// SQLite errors.
pub fn with_path(conn: &Connection, rel_path: &str) -> Result<Vec<i64>> {
    Ok(conn
        .prepare_cached("SELECT id FROM sources WHERE rel_path = ?1 ORDER BY id")?
        .query_map(params![rel_path], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?)
}

/// `(id, path, uri)` of every source, by id.
///
/// # Errors
/// SQLite errors.
pub fn all_paths(conn: &Connection) -> Result<Vec<(i64, String, String)>> {
    Ok(conn
        .prepare("SELECT id, rel_path, uri FROM sources ORDER BY id")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<rusqlite::Result<_>>()?)
}

/// A source's path and sensitivity label.
///
/// # Errors
/// SQLite errors (`QueryReturnedNoRows` for no such source).
pub fn path_and_label(conn: &Connection, source_id: i64) -> Result<(String, Option<String>)> {
    Ok(conn.query_row(
        "SELECT rel_path, sensitivity FROM sources WHERE id = ?1",
        params![source_id],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?)
}

/// Labels a source with a sensitivity level.
///
/// # Errors
/// SQLite errors.
pub fn relabel(tx: &Connection, source_id: i64, level: &str, now: i64) -> Result<()> {
    tx.execute(
        "UPDATE sources SET sensitivity = ?2, updated_at = ?3 WHERE id = ?1",
        params![source_id, level, now],
    )?;
    Ok(())
}

/// When and why the source with this URI in this collection was withdrawn, if it was.
///
/// # Errors
/// SQLite errors.
pub fn withdrawal(
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

/// The id of the unit at `ordinal` of an extraction.
///
/// # Errors
/// SQLite errors (`QueryReturnedNoRows` for no such unit).
pub fn unit_id(conn: &Connection, extraction_id: i64, ordinal: usize) -> Result<i64> {
    Ok(conn
        .prepare_cached("SELECT id FROM evidence_units WHERE extraction_id = ?1 AND ordinal = ?2")?
        .query_row(params![extraction_id, ordinal], |r| r.get(0))?)
}

/// Labels sources with a sensitivity level.
///
/// # Errors
/// SQLite errors.
pub fn label<'a>(
    tx: &Connection,
    ids: impl IntoIterator<Item = &'a i64>,
    level: &str,
) -> Result<()> {
    let mut update = tx.prepare_cached("UPDATE sources SET sensitivity = ?1 WHERE id = ?2")?;
    for id in ids {
        update.execute(params![level, id])?;
    }
    Ok(())
}

/// `(uri, label)` of a collection's labelled sources whose URI starts with `prefix`.
///
/// # Errors
/// SQLite errors.
pub fn labels_under(
    conn: &Connection,
    collection_id: i64,
    prefix: &str,
) -> Result<Vec<(String, String)>> {
    Ok(conn
        .prepare_cached(
            "SELECT uri, sensitivity FROM sources WHERE collection_id = ?1 AND sensitivity IS NOT NULL AND substr(uri, 1, length(?2)) = ?2",
        )?
        .query_map(params![collection_id, prefix], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?)
}

/// `(uri, kind)` of a collection's sources with a kind whose URI starts with `prefix`.
///
/// # Errors
/// SQLite errors.
pub fn kinds_under(
    conn: &Connection,
    collection_id: i64,
    prefix: &str,
) -> Result<Vec<(String, String)>> {
    Ok(conn
        .prepare_cached(
            "SELECT uri, kind FROM sources WHERE collection_id = ?1 AND kind IS NOT NULL AND substr(uri, 1, length(?2)) = ?2",
        )?
        .query_map(params![collection_id, prefix], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?)
}

/// Marks a source removed (its file is gone from its root; its history stays).
///
/// # Errors
/// SQLite errors.
pub fn mark_removed(tx: &Connection, source_id: i64, now: i64) -> Result<()> {
    tx.prepare_cached("UPDATE sources SET status = 'removed', updated_at = ?2 WHERE id = ?1")?
        .execute(params![source_id, now])?;
    Ok(())
}

/// The sha256 of every artifact the rows reference (originals, derived texts, pictures), less
/// those a tombstone says are gone when `present_only`.
///
/// # Errors
/// SQLite errors.
pub fn referenced_artifacts(conn: &Connection, present_only: bool) -> Result<Vec<String>> {
    let sql = if present_only {
        "SELECT sha256 FROM revisions UNION SELECT sha256 FROM revision_artifacts
         UNION SELECT derived_sha256 FROM doc_extractions
         UNION SELECT sha256 FROM visual_assets
         EXCEPT SELECT sha256 FROM tombstones"
    } else {
        "SELECT sha256 FROM revisions UNION SELECT sha256 FROM revision_artifacts UNION SELECT derived_sha256 FROM doc_extractions UNION SELECT sha256 FROM visual_assets"
    };
    Ok(conn
        .prepare(sql)?
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?)
}
