//! Paged listings: the sources of a snapshot, and the published snapshots.

use serde::{Deserialize, Serialize};

use crate::engine::Engine;
use crate::error::Result;
use crate::snapshot;
use crate::store::listings;
pub use crate::store::listings::{SnapshotSummary, SourceSummary};

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

/// The published snapshots, newest first.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SnapshotList {
    /// Every snapshot retention has not purged, newest first.
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
        let (total, sources) =
            listings::source_page(conn, snapshot, query.collection, query.limit, query.offset)?;
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
        let snapshots = listings::snapshots(conn)?;
        Ok(SnapshotList { snapshots })
    })
}
