//! Paged listings: the sources of a snapshot with their member revisions, and the published
//! snapshots.

use serde::{Deserialize, Serialize};

use super::tx::{Tx, args};
use crate::error::Result;

/// A source as a snapshot holds it: its member revision.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SourceSummary {
    /// The source's row id (`source:N`).
    pub id: i64,
    /// Its path relative to its capture root, with `/` separators.
    pub path: String,
    /// Its identity: `file://` and its absolute path, reversibly escaped.
    pub uri: String,
    /// The collection it belongs to.
    pub collection: String,
    /// The kind it was assigned (`None`: none, only its format).
    pub kind: Option<String>,
    /// How its bytes are parsed.
    pub format: String,
    /// The revision the snapshot holds of it (`revision:N`).
    pub revision_id: i64,
    /// That revision's number within its source (1 for the first capture).
    pub seq: i64,
    /// sha256 of the revision's original bytes.
    pub sha256: String,
    /// Size of the original, in bytes.
    pub size: i64,
    /// When the revision was captured, in milliseconds since the Unix epoch.
    pub captured_at: i64,
}

/// A published snapshot.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SnapshotSummary {
    /// The snapshot's row id (`snapshot:N`).
    pub id: i64,
    /// The snapshot current when it was published (`None` for the first, or once retention
    /// has purged that one).
    pub parent_id: Option<i64>,
    /// The job that published it (`None`: no job was recorded with it).
    pub job_id: Option<i64>,
    /// Chunks it indexes (its verified index generation's document count).
    pub chunks: i64,
    /// Sources it holds (its `snapshot_members` rows).
    pub sources: i64,
    /// When it was published, in milliseconds since the Unix epoch.
    pub created_at: i64,
    /// Whether the pointer names it.
    pub current: bool,
    /// Whether its index generation is still kept.
    pub retained: bool,
}

/// One page of a snapshot's sources (in one collection, when named), by path, and how many
/// there are in all.
///
/// # Errors
/// The store's errors.
pub fn source_page(
    tx: &dyn Tx,
    snapshot: i64,
    collection: Option<&str>,
    limit: usize,
    offset: usize,
) -> Result<(i64, Vec<SourceSummary>)> {
    let filter = "m.snapshot_id = ?1 AND (CAST(?2 AS TEXT) IS NULL OR c.name = ?2)";
    let total: i64 = tx.value(
        &format!("SELECT COUNT(*) FROM snapshot_members m JOIN sources s ON s.id = m.source_id JOIN collections c ON c.id = s.collection_id WHERE {filter}"),
        args![snapshot, collection],
    )?;
    let sources = tx.rows(
        &format!(
            "SELECT s.id, s.rel_path, s.uri, c.name, s.kind, r.id, r.seq, r.sha256, r.size, r.captured_at, s.format
             FROM snapshot_members m JOIN sources s ON s.id = m.source_id JOIN collections c ON c.id = s.collection_id JOIN revisions r ON r.id = m.revision_id
             WHERE {filter} ORDER BY s.rel_path LIMIT ?3 OFFSET ?4"
        ),
        args![snapshot, collection, limit, offset],
        |r| {
            Ok(SourceSummary {
                id: r.get(0)?,
                path: r.get(1)?,
                uri: r.get(2)?,
                collection: r.get(3)?,
                kind: r.get(4)?,
                format: r.get(10)?,
                revision_id: r.get(5)?,
                seq: r.get(6)?,
                sha256: r.get(7)?,
                size: r.get(8)?,
                captured_at: r.get(9)?,
            })
        },
    )?;
    Ok((total, sources))
}

/// The snapshots retention has not purged, newest first.
///
/// # Errors
/// The store's errors.
pub fn snapshots(tx: &dyn Tx) -> Result<Vec<SnapshotSummary>> {
    tx.rows(
        "SELECT sn.id, sn.parent_id, sn.job_id, sn.chunk_count, (SELECT COUNT(*) FROM snapshot_members m WHERE m.snapshot_id = sn.id), sn.created_at,
            sn.id IS NOT DISTINCT FROM (SELECT current_snapshot_id FROM workspaces WHERE id = 1),
            EXISTS (SELECT 1 FROM snapshot_indexes si JOIN index_batches b ON b.id = si.batch_id WHERE si.snapshot_id = sn.id AND b.status = 'verified')
         FROM snapshots sn ORDER BY sn.id DESC",
        &[],
        |r| {
            Ok(SnapshotSummary {
                id: r.get(0)?,
                parent_id: r.get(1)?,
                job_id: r.get(2)?,
                chunks: r.get(3)?,
                sources: r.get(4)?,
                created_at: r.get(5)?,
                current: r.get(6)?,
                retained: r.get(7)?,
            })
        },
    )
}
