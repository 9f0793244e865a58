//! Paged listings: the sources of a snapshot, and the published snapshots.

use rusqlite::params;
use serde::{Deserialize, Serialize};

use crate::engine::Engine;
use crate::error::Result;
use crate::snapshot;

/// A source as a snapshot holds it: its member revision.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[allow(missing_docs)]
pub struct SourceSummary {
    pub id: i64,
    pub path: String,
    pub uri: String,
    pub collection: String,
    /// The kind it was assigned (`None`: none, only its format).
    pub kind: Option<String>,
    /// How its bytes are parsed.
    pub format: String,
    pub revision_id: i64,
    pub seq: i64,
    pub sha256: String,
    pub size: i64,
    pub captured_at: i64,
}

/// One page of a snapshot's sources.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SourceList {
    /// The snapshot listed (`None` before the first publication).
    pub snapshot_id: Option<i64>,
    /// Sources in the snapshot (and collection), across all pages.
    pub total: i64,
    /// This page, by path.
    pub sources: Vec<SourceSummary>,
}

/// A published snapshot.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[allow(missing_docs)]
pub struct SnapshotSummary {
    pub id: i64,
    pub parent_id: Option<i64>,
    pub job_id: Option<i64>,
    pub chunks: i64,
    pub sources: i64,
    pub created_at: i64,
    /// Whether the pointer names it.
    pub current: bool,
    /// Whether its index generation is still kept.
    pub retained: bool,
}

/// The published snapshots, newest first.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[allow(missing_docs)]
pub struct SnapshotList {
    pub snapshots: Vec<SnapshotSummary>,
}

/// What page of sources to list.
#[derive(Debug, Clone, Default)]
pub struct SourceQuery<'a> {
    /// Only this collection.
    pub collection: Option<&'a str>,
    /// Pin a snapshot (default: the current one).
    pub snapshot_id: Option<i64>,
    /// Page size.
    pub limit: usize,
    /// Page offset.
    pub offset: usize,
}

/// Sources of the current snapshot (or of `snapshot_id`), optionally in one collection.
///
/// # Errors
/// `E_NOT_FOUND` for an unknown collection; SQLite errors.
pub(crate) fn list_sources(engine: &Engine, query: &SourceQuery<'_>) -> Result<SourceList> {
    engine.with_reader(|conn| {
        if let Some(name) = query.collection {
            Engine::collection_id(conn, name, false)?;
        }
        let snapshot = match query.snapshot_id {
            Some(id) => Some(id),
            None => snapshot::current(conn)?,
        };
        let Some(snapshot) = snapshot else {
            return Ok(SourceList {
                snapshot_id: None,
                total: 0,
                sources: Vec::new(),
            });
        };
        let filter = "m.snapshot_id = ?1 AND (?2 IS NULL OR c.name = ?2)";
        let total: i64 = conn.query_row(
            &format!("SELECT COUNT(*) FROM snapshot_members m JOIN sources s ON s.id = m.source_id JOIN collections c ON c.id = s.collection_id WHERE {filter}"),
            params![snapshot, query.collection],
            |r| r.get(0),
        )?;
        let sources = conn
            .prepare(&format!(
                "SELECT s.id, s.rel_path, s.uri, c.name, s.kind, r.id, r.seq, r.sha256, r.size, r.captured_at, s.format
                 FROM snapshot_members m JOIN sources s ON s.id = m.source_id JOIN collections c ON c.id = s.collection_id JOIN revisions r ON r.id = m.revision_id
                 WHERE {filter} ORDER BY s.rel_path LIMIT ?3 OFFSET ?4"
            ))?
            .query_map(
                params![snapshot, query.collection, query.limit as i64, query.offset as i64],
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
            )?
            .collect::<rusqlite::Result<_>>()?;
        Ok(SourceList {
            snapshot_id: Some(snapshot),
            total,
            sources,
        })
    })
}

/// Published snapshots, newest first, with whether their indexes are still retained.
///
/// # Errors
/// SQLite errors.
pub(crate) fn list_snapshots(engine: &Engine) -> Result<SnapshotList> {
    engine.with_reader(|conn| {
        let snapshots = conn
            .prepare(
                "SELECT sn.id, sn.parent_id, sn.job_id, sn.chunk_count, (SELECT COUNT(*) FROM snapshot_members m WHERE m.snapshot_id = sn.id), sn.created_at,
                    sn.id IS (SELECT current_snapshot_id FROM workspaces WHERE id = 1),
                    EXISTS (SELECT 1 FROM snapshot_indexes si JOIN index_batches b ON b.id = si.batch_id WHERE si.snapshot_id = sn.id AND b.status = 'verified')
                 FROM snapshots sn ORDER BY sn.id DESC",
            )?
            .query_map([], |r| {
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
            })?
            .collect::<rusqlite::Result<_>>()?;
        Ok(SnapshotList { snapshots })
    })
}
