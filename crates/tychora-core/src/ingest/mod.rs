//! `add`/sync as a durable job: capture → parse → commit canonical rows → build and verify an index
//! generation → switch the snapshot pointer in one transaction → receipt.
//!
//! A crash at any point leaves the previous snapshot published and intact: canonical rows of an
//! unfinished job are unreferenced by any snapshot, and an unpublished generation directory is
//! removed by the next open's garbage collection.

mod commit;
mod prepare;
mod run;
mod targets;

use std::path::Path;

use rusqlite::{OptionalExtension, params};
use serde::{Deserialize, Serialize};

pub use crate::capture::Exclusion;
use crate::engine::Engine;
use crate::error::{Diagnostic, Error, Result};
use crate::job::Progress;
use crate::parse::KindOverride;
use crate::store::now_ms;
use targets::{agent_may_capture, capture_roots};

/// What to add.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct AddRequest {
    /// Files or directories.
    pub paths: Vec<String>,
    /// Target collection (default `default`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collection: Option<String>,
    /// Force a kind instead of detecting it from the extension.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
}

/// Who asked for a capture; it bounds where the capture may read.
///
/// The owner (the CLI, the library, the owner's token over HTTP) may register a new root when
/// `capture.auto_add_roots` is on. An agent (MCP, the agent token over HTTP) may only capture by
/// absolute path inside the roots already configured or registered: an agent-facing credential
/// can never widen what the workspace reads. The requester is stored with the queued job, so a job
/// resumed after a restart keeps its bounds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Requester {
    /// The workspace's owner.
    Owner,
    /// An agent; also what a job recorded before requesters existed is read as (the safe side).
    #[default]
    Agent,
}

impl Requester {
    /// `owner` or `agent`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Owner => "owner",
            Self::Agent => "agent",
        }
    }

    /// Parses `owner` / `agent`.
    ///
    /// # Errors
    /// `E_INVALID_ARGUMENT` for anything else.
    pub fn parse(value: &str) -> Result<Self> {
        match value {
            "owner" => Ok(Self::Owner),
            "agent" => Ok(Self::Agent),
            other => Err(Error::InvalidArgument(format!(
                "unknown requester {other:?}; expected owner or agent"
            ))),
        }
    }
}

/// A job's stored request: what to add and who asked. Only the engine writes `requester`; the
/// caller's request body cannot carry it (it is not a field of [`AddRequest`]).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct JobRequest {
    /// What to add.
    #[serde(flatten)]
    pub request: AddRequest,
    /// Who asked.
    #[serde(default)]
    pub requester: Requester,
}

/// File counts of a job.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[allow(missing_docs)] // Each count names its files: scanned by the walk, then one outcome each.
pub struct FileCounts {
    pub scanned: usize,
    pub added: usize,
    pub changed: usize,
    pub unchanged: usize,
    pub removed: usize,
    pub skipped: usize,
    pub failed: usize,
}

/// The receipt of a finished add/sync job.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[allow(missing_docs)]
pub struct Receipt {
    pub job_id: i64,
    /// `succeeded`, `partial` (some files failed) or `failed` (nothing could be captured).
    pub status: String,
    pub snapshot_id: Option<i64>,
    pub previous_snapshot_id: Option<i64>,
    /// Whether this job published a new snapshot.
    pub published: bool,
    pub files: FileCounts,
    pub bytes_read: u64,
    pub units: usize,
    pub chunks: usize,
    pub duration_ms: f64,
    pub added: Vec<String>,
    pub changed: Vec<String>,
    pub removed: Vec<String>,
    pub diagnostics: Vec<Diagnostic>,
    /// Entries the walk left out, counted per rule (hidden names, ignore files, `capture.exclude`).
    #[serde(default)]
    pub excluded: Vec<Exclusion>,
}

fn parse_kind(kind: Option<&str>) -> Result<Option<KindOverride>> {
    kind.map(|k| {
        KindOverride::from_name(k).ok_or_else(|| {
            Error::InvalidArgument(format!(
                "unknown kind {k:?}; expected markdown, text, json, jsonl or code_file"
            ))
        })
    })
    .transpose()
}

/// Validates an add request and records it as a queued job. Queued jobs survive a restart.
/// Does not wait for a running job: it writes through a pooled connection, not the writer.
/// An agent's paths are checked now as well as when the job runs, so a path outside the
/// roots is refused at once rather than in a receipt.
///
/// # Errors
/// `E_INVALID_ARGUMENT` for an empty path list, an unknown kind or (agents) a relative path;
/// `E_FORBIDDEN` when an agent names a path outside the capture roots.
pub(crate) fn enqueue(engine: &Engine, request: &AddRequest, requester: Requester) -> Result<i64> {
    parse_kind(request.kind.as_deref())?;
    if request.paths.is_empty() {
        return Err(Error::InvalidArgument("add needs at least one path".into()));
    }
    if requester == Requester::Agent {
        let roots = engine.with_reader(|conn| capture_roots(engine, conn))?;
        for raw in &request.paths {
            agent_may_capture(Path::new(raw), &roots)?;
        }
    }
    let queued = JobRequest {
        request: request.clone(),
        requester,
    };
    let json = serde_json::to_string(&queued).map_err(|e| Error::Internal(e.to_string()))?;
    engine.with_reader(|conn| {
        conn.execute("INSERT INTO jobs (kind, status, request_json, created_at) VALUES ('add', 'queued', ?1, ?2)", params![json, now_ms()])?;
        Ok(conn.last_insert_rowid())
    })
}

/// Ids of queued jobs, oldest first (to resume after a restart).
///
/// # Errors
/// SQLite errors.
pub(crate) fn queued(engine: &Engine) -> Result<Vec<i64>> {
    engine.with_reader(|conn| {
        let mut stmt =
            conn.prepare_cached("SELECT id FROM jobs WHERE status = 'queued' ORDER BY id")?;
        let ids = stmt
            .query_map([], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        Ok(ids)
    })
}

/// Runs a queued job to completion on the single writer.
///
/// # Errors
/// `E_NOT_FOUND` for an unknown job, `E_CONFLICT` if it is not queued, whole-job failures.
pub(crate) fn run_job(
    engine: &Engine,
    job_id: i64,
    on_progress: &(dyn Fn(Progress) + Sync),
) -> Result<Receipt> {
    let mut conn = engine.writer()?;
    let (status, request_json): (String, String) = conn
        .query_row(
            "SELECT status, request_json FROM jobs WHERE id = ?1",
            params![job_id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?
        .ok_or_else(|| Error::NotFound {
            what: "job",
            id: job_id.to_string(),
        })?;
    if status != "queued" {
        return Err(Error::Conflict(format!(
            "job {job_id} is {status}, not queued"
        )));
    }
    let JobRequest { request, requester } = serde_json::from_str(&request_json)
        .map_err(|e| Error::Corrupt(format!("job {job_id} request: {e}")))?;
    conn.execute(
        "UPDATE jobs SET status = 'running', pid = ?2, started_at = ?3 WHERE id = ?1",
        params![job_id, std::process::id(), now_ms()],
    )?;
    let record = |p: Progress| {
        engine.progress().record(job_id, &p);
        on_progress(p);
    };
    let result = run::AddJob::run(engine, &mut conn, job_id, &request, requester, &record);
    engine.progress().clear(job_id);
    result.inspect_err(|err| {
        let _ = conn.execute(
            "UPDATE jobs SET status = 'failed', error = ?2, finished_at = ?3 WHERE id = ?1",
            params![job_id, format!("{}: {err}", err.code().as_str()), now_ms()],
        );
    })
}
