//! Add requests, receipts and progress.

use napi::bindgen_prelude::{Either, Null};
use napi_derive::napi;
use tychora_core::ingest as core;

use super::{count, nullable};

/// Who asks for a capture, as the JS side names it: `owner` may register new roots; `agent` adds
/// only inside existing ones.
pub(crate) fn requester(value: &str) -> tychora_core::Result<core::Requester> {
    core::Requester::parse(value)
}

/// What to add.
#[napi(object)]
pub struct AddRequest {
    /// Files or directories.
    pub paths: Vec<String>,
    /// Target collection (default `default`).
    pub collection: Option<String>,
    /// Force a kind instead of detecting it from the file extension.
    #[napi(ts_type = "'markdown' | 'text' | 'json' | 'jsonl' | 'code_file'")]
    pub kind: Option<String>,
}

impl From<AddRequest> for core::AddRequest {
    fn from(value: AddRequest) -> Self {
        let AddRequest {
            paths,
            collection,
            kind,
        } = value;
        Self {
            paths,
            collection,
            kind,
        }
    }
}

/// A job's stored request: what to add and who asked.
#[napi(object)]
pub struct JobRequest {
    pub paths: Vec<String>,
    pub collection: Option<String>,
    #[napi(ts_type = "'markdown' | 'text' | 'json' | 'jsonl' | 'code_file'")]
    pub kind: Option<String>,
    #[napi(ts_type = "'owner' | 'agent'")]
    pub requester: String,
}

impl From<core::JobRequest> for JobRequest {
    fn from(value: core::JobRequest) -> Self {
        let core::JobRequest {
            request:
                core::AddRequest {
                    paths,
                    collection,
                    kind,
                },
            requester,
        } = value;
        Self {
            paths,
            collection,
            kind,
            requester: requester.as_str().into(),
        }
    }
}

/// File counts of a job.
#[napi(object)]
pub struct FileCounts {
    pub scanned: i64,
    pub added: i64,
    pub changed: i64,
    pub unchanged: i64,
    pub removed: i64,
    pub skipped: i64,
    pub failed: i64,
}

impl From<core::FileCounts> for FileCounts {
    fn from(value: core::FileCounts) -> Self {
        let core::FileCounts {
            scanned,
            added,
            changed,
            unchanged,
            removed,
            skipped,
            failed,
        } = value;
        Self {
            scanned: count(scanned),
            added: count(added),
            changed: count(changed),
            unchanged: count(unchanged),
            removed: count(removed),
            skipped: count(skipped),
            failed: count(failed),
        }
    }
}

/// A per-file problem; the rest of the job goes on.
#[napi(object)]
pub struct Diagnostic {
    pub path: String,
    #[napi(ts_type = "'info' | 'warning' | 'error'")]
    pub level: String,
    pub code: String,
    pub message: String,
    /// `line:col`, when known.
    pub locator: Option<String>,
}

impl From<tychora_core::Diagnostic> for Diagnostic {
    fn from(value: tychora_core::Diagnostic) -> Self {
        let tychora_core::Diagnostic {
            path,
            level,
            code,
            message,
            locator,
        } = value;
        Self {
            path,
            level,
            code,
            message,
            locator,
        }
    }
}

/// Entries the walk left out under one rule.
#[napi(object)]
pub struct Exclusion {
    pub rule: String,
    pub count: i64,
    pub example: String,
}

impl From<core::Exclusion> for Exclusion {
    fn from(value: core::Exclusion) -> Self {
        let core::Exclusion {
            rule,
            count: n,
            example,
        } = value;
        Self {
            rule,
            count: count(n),
            example,
        }
    }
}

/// The receipt of a finished add/sync job.
#[napi(object)]
pub struct Receipt {
    #[napi(js_name = "job_id")]
    pub job_id: i64,
    #[napi(ts_type = "'succeeded' | 'partial' | 'failed'")]
    pub status: String,
    #[napi(js_name = "snapshot_id")]
    pub snapshot_id: Either<i64, Null>,
    #[napi(js_name = "previous_snapshot_id")]
    pub previous_snapshot_id: Either<i64, Null>,
    pub published: bool,
    pub files: FileCounts,
    #[napi(js_name = "bytes_read")]
    pub bytes_read: i64,
    pub units: i64,
    pub chunks: i64,
    #[napi(js_name = "duration_ms")]
    pub duration_ms: f64,
    pub added: Vec<String>,
    pub changed: Vec<String>,
    pub removed: Vec<String>,
    pub diagnostics: Vec<Diagnostic>,
    pub excluded: Vec<Exclusion>,
}

impl From<core::Receipt> for Receipt {
    #[allow(clippy::cast_possible_wrap)]
    fn from(value: core::Receipt) -> Self {
        let core::Receipt {
            job_id,
            status,
            snapshot_id,
            previous_snapshot_id,
            published,
            files,
            bytes_read,
            units,
            chunks,
            duration_ms,
            added,
            changed,
            removed,
            diagnostics,
            excluded,
        } = value;
        Self {
            job_id,
            status,
            snapshot_id: nullable(snapshot_id),
            previous_snapshot_id: nullable(previous_snapshot_id),
            published,
            files: files.into(),
            bytes_read: bytes_read as i64,
            units: count(units),
            chunks: count(chunks),
            duration_ms,
            added,
            changed,
            removed,
            diagnostics: diagnostics.into_iter().map(Into::into).collect(),
            excluded: excluded.into_iter().map(Into::into).collect(),
        }
    }
}

/// Progress of a running job.
#[napi(object)]
pub struct Progress {
    #[napi(ts_type = "'walk' | 'prepare' | 'commit' | 'index' | 'publish'")]
    pub phase: String,
    /// Items done in this phase.
    pub done: i64,
    /// Items in this phase (0 when unknown).
    pub total: i64,
}

impl From<tychora_core::job::Progress> for Progress {
    fn from(value: tychora_core::job::Progress) -> Self {
        let tychora_core::job::Progress { phase, done, total } = value;
        Self {
            phase: match phase {
                tychora_core::job::Phase::Walk => "walk",
                tychora_core::job::Phase::Prepare => "prepare",
                tychora_core::job::Phase::Commit => "commit",
                tychora_core::job::Phase::Index => "index",
                tychora_core::job::Phase::Publish => "publish",
            }
            .into(),
            done: count(done),
            total: count(total),
        }
    }
}
