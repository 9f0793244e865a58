//! What `manage verify` checks the artifacts and indexes against: every artifact row, every row
//! that references one, chunk spans, and the snapshots' lexical generations with their counts, on
//! either adapter (`store::tx`).

use super::tx::Tx;
use crate::error::Result;

/// `(sha256, size)` of every artifact row.
///
/// # Errors
/// The store's errors.
pub fn artifacts(tx: &dyn Tx) -> Result<Vec<(String, i64)>> {
    tx.rows("SELECT sha256, size FROM artifacts", &[], |r| {
        Ok((r.get(0)?, r.get(1)?))
    })
}

/// The sha256 of every tombstone (erased on request or by retention).
///
/// # Errors
/// The store's errors.
pub fn tombstoned(tx: &dyn Tx) -> Result<Vec<String>> {
    tx.rows("SELECT DISTINCT sha256 FROM tombstones", &[], |r| r.get(0))
}

/// `(what refers, sha256, recorded size or -1)` of every row that references an artifact.
///
/// # Errors
/// The store's errors.
pub fn artifact_references(tx: &dyn Tx) -> Result<Vec<(String, String, i64)>> {
    tx.rows(
        "SELECT 'revision ' || r.id, r.sha256, r.size FROM revisions r
         UNION ALL SELECT 'revision_artifact ' || ra.revision_id || '/' || ra.role, ra.sha256, -1 FROM revision_artifacts ra
         UNION ALL SELECT 'derived text of extraction ' || d.extraction_id, d.derived_sha256, -1 FROM doc_extractions d
         UNION ALL SELECT 'visual asset ' || v.extraction_id || '/' || v.ordinal, v.sha256, -1 FROM visual_assets v",
        &[],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )
}

/// Chunks whose span falls outside their revision's bytes (a document's spans index its derived
/// text, not its original).
///
/// # Errors
/// The store's errors.
pub fn chunks_out_of_range(tx: &dyn Tx) -> Result<i64> {
    tx.value(
        "SELECT COUNT(*) FROM chunks c JOIN extractions e ON e.id = c.extraction_id JOIN revisions r ON r.id = e.revision_id
         LEFT JOIN doc_extractions d ON d.extraction_id = e.id LEFT JOIN artifacts a ON a.sha256 = d.derived_sha256
         WHERE c.byte_end > COALESCE(a.size, r.size) OR c.byte_start > c.byte_end",
        &[],
    )
}

/// `(snapshot, recorded chunk count, lexical generation, its members' chunk count)` of each
/// snapshot with a verified lexical generation. (The cast: PostgreSQL sums integers as
/// `numeric`.)
///
/// # Errors
/// The store's errors.
pub fn lexical_snapshots(tx: &dyn Tx) -> Result<Vec<(i64, i64, String, i64)>> {
    tx.rows(
        "SELECT s.id, s.chunk_count, b.generation, (SELECT CAST(COALESCE(SUM(e.chunk_count), 0) AS BIGINT) FROM snapshot_members m JOIN extractions e ON e.id = m.extraction_id WHERE m.snapshot_id = s.id)
         FROM snapshots s JOIN snapshot_indexes si ON si.snapshot_id = s.id JOIN index_batches b ON b.id = si.batch_id JOIN index_families f ON f.id = si.family_id
         WHERE b.status = 'verified' AND f.channel = 'lexical'",
        &[],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
    )
}

/// Revisions erased on request, by id.
///
/// # Errors
/// The store's errors.
pub fn erased_revisions(tx: &dyn Tx) -> Result<Vec<i64>> {
    tx.rows(
        "SELECT DISTINCT revision_id FROM tombstones WHERE kind = 'erasure' ORDER BY revision_id",
        &[],
        |r| r.get(0),
    )
}
