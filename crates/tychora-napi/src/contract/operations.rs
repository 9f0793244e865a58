//! Operations on a workspace's storage: compaction of index generations.

use napi::bindgen_prelude::{Either, Null};
use napi_derive::napi;
use tychora_core::workspace::CompactReport as CoreCompactReport;

use super::{count, nullable};

/// What `manage compact` did.
#[napi(object)]
pub struct CompactReport {
    #[napi(js_name = "snapshot_id")]
    pub snapshot_id: Either<i64, Null>,
    #[napi(js_name = "from_generation")]
    pub from_generation: Either<String, Null>,
    /// The compacted generation, or null when the merge policy found nothing to merge.
    #[napi(js_name = "to_generation")]
    pub to_generation: Either<String, Null>,
    #[napi(js_name = "segments_before")]
    pub segments_before: i64,
    #[napi(js_name = "segments_after")]
    pub segments_after: i64,
    #[napi(js_name = "deleted_before")]
    pub deleted_before: i64,
    /// The full vector generation a grown layer was folded into, or null.
    #[napi(js_name = "text_folded_to")]
    pub text_folded_to: Either<String, Null>,
    #[napi(js_name = "duration_ms")]
    pub duration_ms: f64,
}

impl From<CoreCompactReport> for CompactReport {
    fn from(value: CoreCompactReport) -> Self {
        let CoreCompactReport {
            snapshot_id,
            from_generation,
            to_generation,
            segments_before,
            segments_after,
            deleted_before,
            text_folded_to,
            duration_ms,
        } = value;
        Self {
            snapshot_id: nullable(snapshot_id),
            from_generation: nullable(from_generation),
            to_generation: nullable(to_generation),
            segments_before: count(segments_before),
            segments_after: count(segments_after),
            deleted_before: i64::try_from(deleted_before).unwrap_or(i64::MAX),
            text_folded_to: nullable(text_folded_to),
            duration_ms,
        }
    }
}

/// A source a withdrawal or erasure took out of new snapshots.
#[napi(object)]
pub struct WithdrawnSource {
    #[napi(js_name = "source_id")]
    pub source_id: i64,
    pub uri: String,
    pub path: String,
}

/// Original bytes erased, as their tombstone records them.
#[napi(object)]
pub struct Tombstone {
    pub sha256: String,
    pub size: i64,
    #[napi(js_name = "source_id")]
    pub source_id: i64,
    #[napi(js_name = "revision_id")]
    pub revision_id: i64,
    pub reason: String,
    #[napi(js_name = "deleted_at")]
    pub deleted_at: i64,
}

/// What `manage sensitivity` did.
#[napi(object)]
pub struct RelabelReport {
    #[napi(js_name = "source_id")]
    pub source_id: i64,
    pub path: String,
    /// The label before (`null`: captured before labels, counted as the default).
    pub from: Either<String, Null>,
    pub to: String,
    #[napi(js_name = "summary_trees_deleted")]
    pub summary_trees_deleted: i64,
    /// The erasure, when the new label is above the ceiling.
    pub erased: Either<WithdrawReport, Null>,
}

impl From<tychora_core::ingest::RelabelReport> for RelabelReport {
    fn from(value: tychora_core::ingest::RelabelReport) -> Self {
        let tychora_core::ingest::RelabelReport {
            source_id,
            path,
            from,
            to,
            summary_trees_deleted,
            erased,
        } = value;
        Self {
            source_id,
            path,
            from: nullable(from),
            to,
            summary_trees_deleted: count(summary_trees_deleted),
            erased: nullable(erased.map(WithdrawReport::from)),
        }
    }
}

/// What `manage withdraw` or `manage delete-original` did.
#[napi(object)]
pub struct WithdrawReport {
    pub receipt: super::Receipt,
    pub withdrawn: Vec<WithdrawnSource>,
    pub erased: Vec<Tombstone>,
    #[napi(js_name = "erased_from_snapshots")]
    pub erased_from_snapshots: i64,
}

impl From<tychora_core::ingest::WithdrawReport> for WithdrawReport {
    fn from(value: tychora_core::ingest::WithdrawReport) -> Self {
        let tychora_core::ingest::WithdrawReport {
            receipt,
            withdrawn,
            erased,
            erased_from_snapshots,
        } = value;
        Self {
            erased_from_snapshots: count(erased_from_snapshots),
            receipt: receipt.into(),
            withdrawn: withdrawn
                .into_iter()
                .map(|w| {
                    let tychora_core::ingest::WithdrawnSource {
                        source_id,
                        uri,
                        path,
                    } = w;
                    WithdrawnSource {
                        source_id,
                        uri,
                        path,
                    }
                })
                .collect(),
            erased: erased
                .into_iter()
                .map(|t| {
                    let tychora_core::ingest::Tombstone {
                        sha256,
                        size,
                        source_id,
                        revision_id,
                        reason,
                        deleted_at,
                    } = t;
                    Tombstone {
                        sha256,
                        size,
                        source_id,
                        revision_id,
                        reason,
                        deleted_at,
                    }
                })
                .collect(),
        }
    }
}

/// What `manage backup` or `manage restore` did.
#[napi(object)]
pub struct BackupReport {
    pub dir: String,
    pub files: i64,
    pub bytes: i64,
    pub artifacts: i64,
    pub generations: i64,
    #[napi(js_name = "current_snapshot_id")]
    pub current_snapshot_id: Either<i64, Null>,
    #[napi(js_name = "duration_ms")]
    pub duration_ms: f64,
}

impl From<tychora_core::manage::BackupReport> for BackupReport {
    #[allow(clippy::cast_possible_wrap)]
    fn from(value: tychora_core::manage::BackupReport) -> Self {
        let tychora_core::manage::BackupReport {
            dir,
            files,
            bytes,
            artifacts,
            generations,
            current_snapshot_id,
            duration_ms,
        } = value;
        Self {
            dir,
            files: count(files),
            bytes: bytes as i64,
            artifacts: count(artifacts),
            generations: count(generations),
            current_snapshot_id: nullable(current_snapshot_id),
            duration_ms,
        }
    }
}

/// What `manage purge` removed.
#[napi(object)]
pub struct PurgeReport {
    pub snapshots: i64,
    #[napi(js_name = "query_runs")]
    pub query_runs: i64,
    #[napi(js_name = "relation_sets")]
    pub relation_sets: i64,
    pub extractions: i64,
    #[napi(js_name = "evidence_units")]
    pub evidence_units: i64,
    pub chunks: i64,
    #[napi(js_name = "revisions_expired")]
    pub revisions_expired: i64,
    #[napi(js_name = "artifacts_removed")]
    pub artifacts_removed: i64,
    #[napi(js_name = "artifact_bytes")]
    pub artifact_bytes: i64,
    #[napi(js_name = "generations_removed")]
    pub generations_removed: i64,
    pub jobs: i64,
    #[napi(js_name = "erased_revisions")]
    pub erased_revisions: i64,
    #[napi(js_name = "erased_from_snapshots")]
    pub erased_from_snapshots: i64,
    #[napi(js_name = "duration_ms")]
    pub duration_ms: f64,
}

impl From<tychora_core::manage::PurgeReport> for PurgeReport {
    #[allow(clippy::cast_possible_wrap)]
    fn from(value: tychora_core::manage::PurgeReport) -> Self {
        let tychora_core::manage::PurgeReport {
            snapshots,
            query_runs,
            relation_sets,
            extractions,
            evidence_units,
            chunks,
            revisions_expired,
            artifacts_removed,
            artifact_bytes,
            generations_removed,
            jobs,
            erased_revisions,
            erased_from_snapshots,
            duration_ms,
        } = value;
        Self {
            snapshots: count(snapshots),
            query_runs: count(query_runs),
            relation_sets: count(relation_sets),
            extractions: count(extractions),
            evidence_units: count(evidence_units),
            chunks: count(chunks),
            revisions_expired: count(revisions_expired),
            artifacts_removed: count(artifacts_removed),
            artifact_bytes: artifact_bytes as i64,
            generations_removed: count(generations_removed),
            jobs: count(jobs),
            erased_revisions: count(erased_revisions),
            erased_from_snapshots: count(erased_from_snapshots),
            duration_ms,
        }
    }
}

/// One `manage doctor` check and what it found.
#[napi(object)]
pub struct Finding {
    pub check: String,
    /// `ok`, `warn` or `fail`.
    #[napi(ts_type = "'ok' | 'warn' | 'fail'")]
    pub status: String,
    pub detail: String,
    pub fix: String,
}

impl From<tychora_core::manage::Finding> for Finding {
    fn from(value: tychora_core::manage::Finding) -> Self {
        let tychora_core::manage::Finding {
            check,
            status,
            detail,
            fix,
        } = value;
        Self {
            check,
            status: status.as_str().into(),
            detail,
            fix,
        }
    }
}

/// Which page of recorded query runs `listRuns` returns.
#[napi(object)]
pub struct ListRunsOptions {
    /// Page size (default 50, 1 to 500).
    pub limit: Option<u32>,
    /// Only runs older than this run (a run id): the previous page's `next_before`.
    pub before: Option<String>,
}

/// A recorded query run as a listing shows it (`inspectRun` has the rest).
#[napi(object)]
pub struct RunBrief {
    pub id: String,
    #[napi(js_name = "created_at")]
    pub created_at: i64,
    /// The snapshot it read; null once retention purged that snapshot.
    #[napi(js_name = "snapshot_id")]
    pub snapshot_id: Either<i64, Null>,
    /// The query text of its request.
    pub query: String,
    #[napi(js_name = "duration_ms")]
    pub duration_ms: f64,
    /// Segments it returned.
    pub results: u32,
    #[napi(js_name = "agent_id")]
    pub agent_id: Either<String, Null>,
    #[napi(js_name = "task_id")]
    pub task_id: Either<String, Null>,
}

/// One page of the recorded query runs, newest first.
#[napi(object)]
pub struct RunList {
    pub runs: Vec<RunBrief>,
    /// The `before` of the next page; null when no older run is left.
    #[napi(js_name = "next_before")]
    pub next_before: Either<String, Null>,
}

impl From<tychora_core::manage::RunList> for RunList {
    fn from(value: tychora_core::manage::RunList) -> Self {
        let tychora_core::manage::RunList { runs, next_before } = value;
        Self {
            runs: runs
                .into_iter()
                .map(|r| {
                    let tychora_core::manage::RunBrief {
                        id,
                        created_at,
                        snapshot_id,
                        query,
                        duration_ms,
                        results,
                        agent_id,
                        task_id,
                    } = r;
                    RunBrief {
                        id,
                        created_at,
                        snapshot_id: nullable(snapshot_id),
                        query,
                        duration_ms,
                        results,
                        agent_id: nullable(agent_id),
                        task_id: nullable(task_id),
                    }
                })
                .collect(),
            next_before: nullable(next_before),
        }
    }
}
