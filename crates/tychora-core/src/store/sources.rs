//! Sources: the captured files and documents of a workspace, their withdrawal, removal and
//! sensitivity labels, on either adapter (`store::tx`).

use super::tx::{Tx, args};
use crate::error::Result;

/// How many sources the workspace holds.
///
/// # Errors
/// The store's errors.
pub fn count(tx: &dyn Tx) -> Result<i64> {
    tx.value("SELECT COUNT(*) FROM sources", &[])
}

/// Whether any source is labelled with sensitivity `level` (one lookup on the label index).
///
/// # Errors
/// The store's errors.
pub fn any_labelled(tx: &dyn Tx, level: &str) -> Result<bool> {
    tx.value(
        "SELECT EXISTS (SELECT 1 FROM sources WHERE sensitivity = ?1)",
        args![level],
    )
}

/// Whether a source row exists.
///
/// # Errors
/// The store's errors.
pub fn exists(tx: &dyn Tx, source_id: i64) -> Result<bool> {
    Ok(tx
        .optional(
            "SELECT 1 FROM sources WHERE id = ?1",
            args![source_id],
            |_| Ok(()),
        )?
        .is_some())
}

/// Whether a revision row exists.
///
/// # Errors
/// The store's errors.
pub fn revision_exists(tx: &dyn Tx, revision_id: i64) -> Result<bool> {
    Ok(tx
        .optional(
            "SELECT 1 FROM revisions WHERE id = ?1",
            args![revision_id],
            |_| Ok(()),
        )?
        .is_some())
}

/// A source's revisions, oldest first.
///
/// # Errors
/// The store's errors.
pub fn revisions_of(tx: &dyn Tx, source_id: i64) -> Result<Vec<i64>> {
    tx.rows(
        "SELECT id FROM revisions WHERE source_id = ?1 ORDER BY id",
        args![source_id],
        |r| r.get(0),
    )
}

/// The sha256 of a revision's original bytes.
///
/// # Errors
/// The store's errors (`E_INTERNAL` for no such revision).
pub fn revision_sha256(tx: &dyn Tx, revision_id: i64) -> Result<String> {
    tx.value(
        "SELECT sha256 FROM revisions WHERE id = ?1",
        args![revision_id],
    )
}

/// `(revision id, source id, size)` of every revision holding these bytes, oldest first.
///
/// # Errors
/// The store's errors.
pub fn revisions_holding(tx: &dyn Tx, sha256: &str) -> Result<Vec<(i64, i64, i64)>> {
    tx.rows(
        "SELECT id, source_id, size FROM revisions WHERE sha256 = ?1 ORDER BY id",
        args![sha256],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )
}

/// Withdraws a source from new snapshots (its history stays): records why, by which job, and
/// marks it removed. Returns its URI and path.
///
/// # Errors
/// The store's errors.
pub fn withdraw(
    tx: &dyn Tx,
    source_id: i64,
    job_id: i64,
    reason: &str,
    now: i64,
) -> Result<(String, String)> {
    tx.execute(
        "INSERT INTO source_withdrawals (source_id, job_id, reason, withdrawn_at) VALUES (?1, ?2, ?3, ?4) ON CONFLICT (source_id) DO NOTHING",
        args![source_id, job_id, reason, now],
    )?;
    tx.one(
        "UPDATE sources SET status = 'removed', updated_at = ?2 WHERE id = ?1 RETURNING uri, rel_path",
        args![source_id, now],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
}

/// Sources with this URI, by id.
///
/// # Errors
/// The store's errors.
pub fn with_uri(tx: &dyn Tx, uri: &str) -> Result<Vec<i64>> {
    tx.rows(
        "SELECT id FROM sources WHERE uri = ?1 ORDER BY id",
        args![uri],
        |r| r.get(0),
    )
}

/// Sources with this path relative to their capture root, by id.
///
/// # Errors
/// The store's errors.
pub fn with_path(tx: &dyn Tx, rel_path: &str) -> Result<Vec<i64>> {
    tx.rows(
        "SELECT id FROM sources WHERE rel_path = ?1 ORDER BY id",
        args![rel_path],
        |r| r.get(0),
    )
}

/// `(id, path, uri)` of every source, by id.
///
/// # Errors
/// The store's errors.
pub fn all_paths(tx: &dyn Tx) -> Result<Vec<(i64, String, String)>> {
    tx.rows(
        "SELECT id, rel_path, uri FROM sources ORDER BY id",
        &[],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )
}

/// A source's path and sensitivity label.
///
/// # Errors
/// The store's errors (`E_INTERNAL` for no such source).
pub fn path_and_label(tx: &dyn Tx, source_id: i64) -> Result<(String, Option<String>)> {
    tx.one(
        "SELECT rel_path, sensitivity FROM sources WHERE id = ?1",
        args![source_id],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
}

/// Labels a source with a sensitivity level.
///
/// # Errors
/// The store's errors.
pub fn relabel(tx: &dyn Tx, source_id: i64, level: &str, now: i64) -> Result<()> {
    tx.execute(
        "UPDATE sources SET sensitivity = ?2, updated_at = ?3 WHERE id = ?1",
        args![source_id, level, now],
    )?;
    Ok(())
}

/// When and why the source with this URI in this collection was withdrawn, if it was.
///
/// # Errors
/// The store's errors.
pub fn withdrawal(tx: &dyn Tx, collection_id: i64, uri: &str) -> Result<Option<(i64, String)>> {
    tx.optional(
        "SELECT w.withdrawn_at, w.reason FROM source_withdrawals w JOIN sources s ON s.id = w.source_id
         WHERE s.collection_id = ?1 AND s.uri = ?2",
        args![collection_id, uri],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
}

/// The id of the unit at `ordinal` of an extraction.
///
/// # Errors
/// The store's errors (`E_INTERNAL` for no such unit).
pub fn unit_id(tx: &dyn Tx, extraction_id: i64, ordinal: usize) -> Result<i64> {
    tx.value(
        "SELECT id FROM evidence_units WHERE extraction_id = ?1 AND ordinal = ?2",
        args![extraction_id, ordinal],
    )
}

/// Labels sources with a sensitivity level.
///
/// # Errors
/// The store's errors.
pub fn label<'a>(tx: &dyn Tx, ids: impl IntoIterator<Item = &'a i64>, level: &str) -> Result<()> {
    for id in ids {
        tx.execute(
            "UPDATE sources SET sensitivity = ?1 WHERE id = ?2",
            args![level, *id],
        )?;
    }
    Ok(())
}

/// `(uri, label)` of a collection's labelled sources whose URI starts with `prefix`.
///
/// # Errors
/// The store's errors.
pub fn labels_under(
    tx: &dyn Tx,
    collection_id: i64,
    prefix: &str,
) -> Result<Vec<(String, String)>> {
    tx.rows(
        "SELECT uri, sensitivity FROM sources WHERE collection_id = ?1 AND sensitivity IS NOT NULL
         AND substr(uri, 1, length(CAST(?2 AS TEXT))) = ?2",
        args![collection_id, prefix],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
}

/// `(uri, kind)` of a collection's sources with a kind whose URI starts with `prefix`.
///
/// # Errors
/// The store's errors.
pub fn kinds_under(tx: &dyn Tx, collection_id: i64, prefix: &str) -> Result<Vec<(String, String)>> {
    tx.rows(
        "SELECT uri, kind FROM sources WHERE collection_id = ?1 AND kind IS NOT NULL
         AND substr(uri, 1, length(CAST(?2 AS TEXT))) = ?2",
        args![collection_id, prefix],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
}

/// Marks a source removed (its file is gone from its root; its history stays).
///
/// # Errors
/// The store's errors.
pub fn mark_removed(tx: &dyn Tx, source_id: i64, now: i64) -> Result<()> {
    tx.execute(
        "UPDATE sources SET status = 'removed', updated_at = ?2 WHERE id = ?1",
        args![source_id, now],
    )?;
    Ok(())
}

/// The sha256 of every artifact the rows reference (originals, derived texts, pictures), less
/// those a tombstone says are gone when `present_only`.
///
/// # Errors
/// The store's errors.
pub fn referenced_artifacts(tx: &dyn Tx, present_only: bool) -> Result<Vec<String>> {
    let sql = if present_only {
        "SELECT sha256 FROM revisions UNION SELECT sha256 FROM revision_artifacts
         UNION SELECT derived_sha256 FROM doc_extractions
         UNION SELECT sha256 FROM visual_assets
         EXCEPT SELECT sha256 FROM tombstones"
    } else {
        "SELECT sha256 FROM revisions UNION SELECT sha256 FROM revision_artifacts UNION SELECT derived_sha256 FROM doc_extractions UNION SELECT sha256 FROM visual_assets"
    };
    tx.rows(sql, &[], |r| r.get(0))
}
