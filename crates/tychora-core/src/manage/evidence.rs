//! `inspect ID`: one object of the corpus with its provenance (source, revision, unit, chunk,
//! snapshot, job), and a job's status with its live progress.

use std::collections::HashMap;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::ingest::{JobRequest, Receipt};
use crate::job::Progress;
use crate::store::evidence as rows;
pub use crate::store::evidence::{
    BatchStatus, CapsuleView, CellEntry, ChunkEvidence, ChunkLocator, DocumentBrief,
    ExtractionBrief, ExtractionEvidence, FurnitureEntry, IdentifierEntry, IndexBrief, MemberBrief,
    RevisionBrief, RevisionEvidence, RevisionTombstone, SnapshotEvidence, SourceEvidence,
    SourceStatus, TombstoneKind, UnitBrief, UnitDocument, UnitEvidence, UnitLocator,
};
use crate::store::jobs::{self, JobRow, StepRow};
use crate::store::tx::Tx;

/// One recorded step of a job.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct JobStep {
    /// `walk`, `prepare`, `commit`, `resolve` or `publish`; `repair` in a rebuild.
    pub name: String,
    /// `running` until it finishes, then `done`; a step its job died in stays `running`.
    pub status: crate::job::StepState,
    /// When it started, in milliseconds since the Unix epoch.
    pub started_at: i64,
    /// When it finished, in milliseconds since the Unix epoch; `None` while it runs.
    pub finished_at: Option<i64>,
    /// What the step reports (files, units, snapshot id…): open-ended per step.
    pub detail: serde_json::Value,
}

/// `job:N`: a job's row, steps and receipt, and its live progress while it runs in this process.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename = "job")]
pub struct JobStatus {
    /// The job's row id (`job:N`).
    pub id: i64,
    /// `add`, `rebuild`, `withdraw` or `delete-original`.
    pub kind: crate::job::JobKind,
    /// `queued`, `running`, `succeeded`, `partial`, `failed`, `interrupted` or `cancelled`.
    pub status: crate::job::JobState,
    /// What it was asked to do, as stored when it was created.
    pub request: JobRequest,
    /// What it did, once it ended (`None` before, and for a job that failed before
    /// writing one).
    pub receipt: Option<Receipt>,
    /// Why it failed (`E_…: message`), was interrupted or was cancelled (`cancelled by the
    /// owner[: reason]`); `None` when no error was recorded.
    pub error: Option<String>,
    /// When it was created, in milliseconds since the Unix epoch.
    pub created_at: i64,
    /// When it ended (or was cancelled), in milliseconds since the Unix epoch; `None` while
    /// queued or running.
    pub finished_at: Option<i64>,
    /// Its recorded steps, in the order they were recorded.
    pub steps: Vec<JobStep>,
    /// The latest progress while it runs in this process (`null` otherwise).
    #[serde(default)]
    pub progress: Option<Progress>,
}

/// One object with its provenance; `type` says which. Variants are boxed: an inspected object
/// is built once per call, and a job's status is far larger than a source's.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Evidence {
    /// A source (`source:N`).
    Source(Box<SourceEvidence>),
    /// A revision (`revision:N`).
    Revision(Box<RevisionEvidence>),
    /// A unit (`unit:N`).
    Unit(Box<UnitEvidence>),
    /// A chunk (`chunk:N` or `seg_S_C`).
    Chunk(Box<ChunkEvidence>),
    /// A snapshot (`snapshot:N`).
    Snapshot(Box<SnapshotEvidence>),
    /// A job (`job:N`).
    Job(Box<JobStatus>),
    /// An extraction (`extraction:N`).
    Extraction(Box<ExtractionEvidence>),
}

/// What an id names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    Source(i64),
    Revision(i64),
    Unit(i64),
    Chunk(i64),
    Snapshot(i64),
    Job(i64),
    Extraction(i64),
}

impl FromStr for Target {
    type Err = Error;

    fn from_str(id: &str) -> Result<Self> {
        let bad = || {
            Error::InvalidArgument(format!(
                "cannot read id {id:?}: use source:N, revision:N, extraction:N, unit:N, chunk:N, snapshot:N, job:N or a segment id seg_S_C"
            ))
        };
        if let Some(rest) = id.strip_prefix("seg_") {
            let chunk = rest.split('_').nth(1).ok_or_else(bad)?;
            return Ok(Self::Chunk(chunk.parse().map_err(|_| bad())?));
        }
        let (kind, number) = id.split_once(':').ok_or_else(bad)?;
        let n: i64 = number.parse().map_err(|_| bad())?;
        Ok(match kind {
            "source" | "src" => Self::Source(n),
            "revision" | "rev" => Self::Revision(n),
            "unit" => Self::Unit(n),
            "chunk" => Self::Chunk(n),
            "snapshot" | "snap" => Self::Snapshot(n),
            "job" => Self::Job(n),
            "extraction" => Self::Extraction(n),
            _ => return Err(bad()),
        })
    }
}

/// Shows one object with its provenance. `id` is `source:N`, `revision:N`, `extraction:N`, `unit:N`,
/// `chunk:N`, `snapshot:N`, `job:N`, or a segment id `seg_S_C`.
///
/// # Errors
/// `E_INVALID_ARGUMENT` for an unparseable id, `E_NOT_FOUND` for a missing object.
pub(crate) fn inspect(engine: &Engine, id: &str) -> Result<Evidence> {
    let target: Target = id.parse()?;
    let found = engine.with_reader(|conn| {
        Ok(match target {
            Target::Source(n) => rows::source(conn, n)?.map(|e| Evidence::Source(Box::new(e))),
            Target::Revision(n) => {
                rows::revision(conn, n)?.map(|e| Evidence::Revision(Box::new(e)))
            }
            Target::Unit(n) => rows::unit(conn, n)?.map(|e| Evidence::Unit(Box::new(e))),
            Target::Chunk(n) => rows::chunk(conn, n)?.map(|e| Evidence::Chunk(Box::new(e))),
            Target::Snapshot(n) => {
                rows::snapshot(conn, n)?.map(|e| Evidence::Snapshot(Box::new(e)))
            }
            Target::Job(n) => job(conn, n)?.map(|e| Evidence::Job(Box::new(e))),
            Target::Extraction(n) => {
                rows::extraction(conn, n)?.map(|e| Evidence::Extraction(Box::new(e)))
            }
        })
    })?;
    let found = found.ok_or_else(|| Error::NotFound {
        what: "object",
        id: id.to_string(),
    })?;
    Ok(match found {
        Evidence::Job(status) => Evidence::Job(Box::new(with_progress(engine, *status))),
        other => other,
    })
}

/// A job's row, steps and receipt, plus its live progress while it runs in this process.
///
/// # Errors
/// `E_NOT_FOUND` for an unknown job.
pub(crate) fn job_status(engine: &Engine, job_id: i64) -> Result<JobStatus> {
    let status = engine
        .with_reader(|conn| job(conn, job_id))?
        .ok_or_else(|| Error::NotFound {
            what: "job",
            id: job_id.to_string(),
        })?;
    Ok(with_progress(engine, status))
}

/// One page of the workspace's jobs, newest first.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct JobList {
    /// This page: each job exactly as `job_status` shows it, by descending id.
    pub jobs: Vec<JobStatus>,
    /// The `before` cursor of the next page (the last job's id here); `None` when no older
    /// job is left.
    pub next_before: Option<i64>,
}

/// The workspace's jobs, newest first: at most `limit` (see [`super::page_limit`]), only those
/// whose id is below `before` when given. Each is what [`job_status`] returns for it.
///
/// # Errors
/// `E_INVALID_ARGUMENT` for a limit outside 1..=500; `E_CORRUPT` for a row whose JSON does not
/// parse.
pub(crate) fn list_jobs(
    engine: &Engine,
    limit: Option<u32>,
    before: Option<i64>,
) -> Result<JobList> {
    let limit = super::page_limit(limit)?;
    let page = limit as usize;
    // One read transaction: the rows and their steps from the same state of the corpus.
    let (jobs, more) = engine.with_reader(|conn| {
        conn.together(false, |tx| {
            let mut rows = jobs::page(tx, before, i64::from(limit) + 1)?;
            let more = rows.len() > page;
            rows.truncate(page);
            // The page's steps in one query. The page is every job between its first and last id,
            // so the range is exactly its jobs.
            let mut steps: HashMap<i64, Vec<StepRow>> = HashMap::new();
            if let (Some(newest), Some(oldest)) = (rows.first(), rows.last()) {
                for step in jobs::steps_between(tx, oldest.id, newest.id)? {
                    steps.entry(step.job_id).or_default().push(step);
                }
            }
            let jobs = rows
                .into_iter()
                .map(|row| {
                    let own = steps.remove(&row.id).unwrap_or_default();
                    job_of(tx, row, own)
                })
                .collect::<Result<Vec<_>>>()?;
            Ok((jobs, more))
        })
    })?;
    let next_before = if more {
        jobs.last().map(|j| j.id)
    } else {
        None
    };
    Ok(JobList {
        jobs: jobs.into_iter().map(|j| with_progress(engine, j)).collect(),
        next_before,
    })
}

fn with_progress(engine: &Engine, mut status: JobStatus) -> JobStatus {
    status.progress = engine.progress().get(status.id);
    status
}

/// A JSON column read back into its type; a row that does not fit is a corrupt corpus.
fn json<T: serde::de::DeserializeOwned>(text: &str, what: &str) -> Result<T> {
    serde_json::from_str(text).map_err(|e| Error::Corrupt(format!("{what}: {e}")))
}

fn job(conn: &dyn Tx, id: i64) -> Result<Option<JobStatus>> {
    let Some(row) = jobs::get(conn, id)? else {
        return Ok(None);
    };
    let steps = jobs::steps_between(conn, id, id)?;
    job_of(conn, row, steps).map(Some)
}

/// A job's status from its row and its steps (in the order they were recorded).
fn job_of(conn: &dyn Tx, row: JobRow, steps: Vec<StepRow>) -> Result<JobStatus> {
    let JobRow {
        id,
        kind,
        status,
        request,
        receipt,
        error,
        created_at,
        finished_at,
        diagnostics,
    } = row;
    let steps = steps
        .into_iter()
        .map(|step| {
            let StepRow {
                name,
                status,
                started_at,
                finished_at,
                detail,
                ..
            } = step;
            Ok(JobStep {
                name,
                status,
                started_at,
                finished_at,
                detail: detail
                    .map(|d| json(&d, "job step detail"))
                    .transpose()?
                    .unwrap_or(serde_json::Value::Null),
            })
        })
        .collect::<Result<_>>()?;
    Ok(JobStatus {
        id,
        kind,
        status,
        request: crate::ingest::JobRequest::read(kind, &request)
            .map_err(|e| Error::Corrupt(format!("job {id} request: {e}")))?,
        receipt: receipt
            .map(|r| -> Result<Receipt> {
                let mut receipt: Receipt = json(&r, "job receipt")?;
                if let Some(sha) = &diagnostics {
                    receipt.diagnostics = crate::ingest::stored_diagnostics(conn, sha)?;
                }
                Ok(receipt)
            })
            .transpose()?,
        error,
        created_at,
        finished_at,
        steps,
        progress: None,
    })
}
