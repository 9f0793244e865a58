//! What erasure on request reads and writes in the snapshots (`snapshot::scrub`): the revisions
//! still to scrub, the rows derived from them, and taking them out of every snapshot.

use super::tx::{Param, Tx, args};

use crate::error::Result;

/// Revisions erased on request whose text is still somewhere in the store: a member of a
/// snapshot, or extraction rows not yet removed.
///
/// # Errors
/// The store's errors.
pub fn pending(tx: &dyn Tx) -> Result<Vec<i64>> {
    tx.rows(
        "SELECT DISTINCT t.revision_id FROM tombstones t WHERE t.kind = 'erasure'
               AND (EXISTS (SELECT 1 FROM snapshot_members m WHERE m.revision_id = t.revision_id)
                    OR EXISTS (SELECT 1 FROM extractions e WHERE e.revision_id = t.revision_id))
             ORDER BY t.revision_id",
        &[],
        |r| r.get(0),
    )
}

/// The extractions of `revisions`.
///
/// # Errors
/// The store's errors.
pub fn extractions_of(tx: &dyn Tx, revisions: &[i64]) -> Result<Vec<i64>> {
    in_list(
        tx,
        "SELECT id FROM extractions WHERE revision_id IN",
        revisions,
    )
}

/// The windows of `extractions`.
///
/// # Errors
/// The store's errors.
pub fn chunks_of(tx: &dyn Tx, extractions: &[i64]) -> Result<Vec<i64>> {
    in_list(
        tx,
        "SELECT id FROM chunks WHERE extraction_id IN",
        extractions,
    )
}

/// The snapshots holding one of `revisions`.
///
/// # Errors
/// The store's errors.
pub fn snapshots_holding(tx: &dyn Tx, revisions: &[i64]) -> Result<Vec<i64>> {
    in_list(
        tx,
        "SELECT DISTINCT snapshot_id FROM snapshot_members WHERE revision_id IN",
        revisions,
    )
}

/// Every snapshot, oldest first.
///
/// # Errors
/// The store's errors.
pub fn all_snapshots(tx: &dyn Tx) -> Result<Vec<i64>> {
    tx.rows("SELECT id FROM snapshots ORDER BY id", &[], |r| r.get(0))
}

/// Takes a revision out of every snapshot: its members go and each snapshot's chunk count drops
/// by its windows.
///
/// # Errors
/// The store's errors.
pub fn take_out(tx: &dyn Tx, revision_id: i64) -> Result<()> {
    tx.execute(
        "UPDATE snapshots SET chunk_count = chunk_count - (
           SELECT COALESCE(SUM(e.chunk_count), 0) FROM snapshot_members m JOIN extractions e ON e.id = m.extraction_id
           WHERE m.snapshot_id = snapshots.id AND m.revision_id = ?1)
         WHERE id IN (SELECT snapshot_id FROM snapshot_members WHERE revision_id = ?1)",
        args![revision_id],
    )?;
    tx.execute(
        "DELETE FROM snapshot_members WHERE revision_id = ?1",
        args![revision_id],
    )?;
    Ok(())
}

/// Deletes a family's vector record of one input; returns how many rows went (0 or 1).
///
/// # Errors
/// The store's errors.
pub fn delete_vector_record(tx: &dyn Tx, family_id: i64, input_sha256: &str) -> Result<usize> {
    let deleted = tx.execute(
        "DELETE FROM vector_records WHERE family_id = ?1 AND input_sha256 = ?2",
        args![family_id, input_sha256],
    )?;
    Ok(usize::try_from(deleted).unwrap_or(usize::MAX))
}

/// Queues the extractions of every erased revision for the purge.
///
/// # Errors
/// The store's errors.
pub fn queue_purge(tx: &dyn Tx) -> Result<()> {
    tx.execute(
        "INSERT INTO purge_pending (kind, id) SELECT 'extraction', e.id FROM extractions e
           WHERE e.revision_id IN (SELECT revision_id FROM tombstones WHERE kind = 'erasure')
         ON CONFLICT DO NOTHING",
        &[],
    )?;
    Ok(())
}

/// Runs `select` (ending in `IN`) over `ids`, a few hundred at a time.
fn in_list(tx: &dyn Tx, select: &str, ids: &[i64]) -> Result<Vec<i64>> {
    let mut out = Vec::new();
    for part in ids.chunks(500) {
        let marks = (1..=part.len())
            .map(|i| format!("?{i}"))
            .collect::<Vec<_>>()
            .join(", ");
        let values: Vec<Param<'_>> = part.iter().map(|&id| Param::Int(id)).collect();
        tx.each(&format!("{select} ({marks})"), &values, &mut |r| {
            out.push(r.get(0)?);
            Ok(())
        })?;
    }
    Ok(out)
}

/// `(sha256, size)` of the bytes derived from a revision other than its original `sha256`: a
/// document's derived text and its pictures.
///
/// # Errors
/// The store's errors.
pub fn derived_bytes(tx: &dyn Tx, revision_id: i64, sha256: &str) -> Result<Vec<(String, i64)>> {
    tx.rows(
        "SELECT DISTINCT d.derived_sha256, a.size FROM doc_extractions d JOIN extractions e ON e.id = d.extraction_id
             JOIN artifacts a ON a.sha256 = d.derived_sha256 WHERE e.revision_id = ?1
             UNION SELECT v.sha256, a.size FROM visual_assets v JOIN extractions e ON e.id = v.extraction_id
             JOIN artifacts a ON a.sha256 = v.sha256 WHERE e.revision_id = ?1 AND v.sha256 <> ?2
             ORDER BY 1",
        args![revision_id, sha256],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
}

/// Deletes what a model said of a picture and its vectors (derived from the picture).
///
/// # Errors
/// The store's errors.
pub fn forget_picture(tx: &dyn Tx, sha256: &str) -> Result<()> {
    tx.execute(
        "DELETE FROM asset_descriptions WHERE sha256 = ?1",
        args![sha256],
    )?;
    tx.execute(
        "DELETE FROM visual_vectors WHERE sha256 = ?1",
        args![sha256],
    )?;
    Ok(())
}

/// An erasure's tombstone.
pub struct NewTombstone<'a> {
    /// The bytes erased.
    pub sha256: &'a str,
    /// Their size.
    pub size: i64,
    /// The source whose revision held them.
    pub source_id: i64,
    /// The revision.
    pub revision_id: i64,
    /// The job erasing them.
    pub job_id: i64,
    /// Why.
    pub reason: &'a str,
    /// When (Unix ms).
    pub at: i64,
}

/// Writes an erasure tombstone unless that revision's bytes have one already (a second run after
/// a crash between the tombstone and the file's removal finishes the removal without a second
/// one). Returns whether it was written.
///
/// # Errors
/// The store's errors.
pub fn tombstone(tx: &dyn Tx, t: &NewTombstone<'_>) -> Result<bool> {
    // Typed where PostgreSQL meets a placeholder first in a SELECT list, with nothing to infer from.
    Ok(tx.execute(
        "INSERT INTO tombstones (kind, sha256, size, source_id, revision_id, job_id, reason, deleted_at)
         SELECT 'erasure', CAST(?1 AS TEXT), CAST(?2 AS BIGINT), CAST(?3 AS BIGINT), CAST(?4 AS BIGINT),
                CAST(?5 AS BIGINT), CAST(?6 AS TEXT), CAST(?7 AS BIGINT)
         WHERE NOT EXISTS (SELECT 1 FROM tombstones WHERE sha256 = ?1 AND revision_id = ?4 AND kind = 'erasure')",
        args![t.sha256, t.size, t.source_id, t.revision_id, t.job_id, t.reason, t.at],
    )? == 1)
}

/// When and why bytes with this sha256 were erased on request, if they were.
///
/// # Errors
/// The store's errors.
pub fn erased(tx: &dyn Tx, sha256: &str) -> Result<Option<(i64, String)>> {
    tx.optional(
        "SELECT deleted_at, reason FROM tombstones WHERE sha256 = ?1 AND kind = 'erasure' ORDER BY id LIMIT 1",
        args![sha256],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
}
