//! The job queue's rows: `jobs` and `job_steps`. Every statement that reads or writes them is
//! here; the pipelines say what happens to a job (queued, claimed, ended) and this module how it
//! is stored.

use rusqlite::{Connection, OptionalExtension, Row, params};

use crate::clock::now_ms;
use crate::error::Result;
use crate::job::{JobKind, JobState, StepState};

/// A `jobs` row as stored, before its JSON columns are read.
#[allow(missing_docs)] // The columns of migrations/0001_initial.sql and 0021, by name.
pub struct JobRow {
    pub id: i64,
    pub kind: JobKind,
    pub status: JobState,
    pub request: String,
    pub receipt: Option<String>,
    pub error: Option<String>,
    pub created_at: i64,
    pub finished_at: Option<i64>,
    pub diagnostics: Option<String>,
}

/// A `job_steps` row as stored, before its detail is read.
pub(crate) struct StepRow {
    pub job_id: i64,
    pub name: String,
    pub status: StepState,
    pub started_at: i64,
    pub finished_at: Option<i64>,
    pub detail: Option<String>,
}

/// The `jobs` columns [`job_row`] reads, in its order.
const JOB_COLUMNS: &str = "id, kind, status, request_json, receipt_json, error, created_at, finished_at, diagnostics_sha256";

/// The `job_steps` columns [`step_row`] reads, in its order.
const STEP_COLUMNS: &str = "job_id, name, status, started_at, finished_at, detail_json";

fn job_row(r: &Row<'_>) -> rusqlite::Result<JobRow> {
    Ok(JobRow {
        id: r.get(0)?,
        kind: r.get(1)?,
        status: r.get(2)?,
        request: r.get(3)?,
        receipt: r.get(4)?,
        error: r.get(5)?,
        created_at: r.get(6)?,
        finished_at: r.get(7)?,
        diagnostics: r.get(8)?,
    })
}

fn step_row(r: &Row<'_>) -> rusqlite::Result<StepRow> {
    Ok(StepRow {
        job_id: r.get(0)?,
        name: r.get(1)?,
        status: r.get(2)?,
        started_at: r.get(3)?,
        finished_at: r.get(4)?,
        detail: r.get(5)?,
    })
}

/// Queues a job; returns its id.
pub(crate) fn enqueue(conn: &Connection, kind: JobKind, request_json: &str) -> Result<i64> {
    conn.execute(
        "INSERT INTO jobs (kind, status, request_json, created_at) VALUES (?1, ?2, ?3, ?4)",
        params![kind, JobState::Queued, request_json, now_ms()],
    )?;
    Ok(conn.last_insert_rowid())
}

/// Records a job that starts at once on the caller's writer (rebuild, withdraw, erase: they are
/// not queued); returns its id.
pub(crate) fn start(conn: &Connection, kind: JobKind, request_json: &str) -> Result<i64> {
    conn.execute(
        "INSERT INTO jobs (kind, status, request_json, pid, created_at, started_at) VALUES (?1, ?2, ?3, ?4, ?5, ?5)",
        params![kind, JobState::Running, request_json, std::process::id(), now_ms()],
    )?;
    Ok(conn.last_insert_rowid())
}

/// Ids of queued jobs, oldest first.
pub(crate) fn queued_ids(conn: &Connection) -> Result<Vec<i64>> {
    let mut stmt = conn.prepare_cached("SELECT id FROM jobs WHERE status = ?1 ORDER BY id")?;
    let ids = stmt
        .query_map(params![JobState::Queued], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    Ok(ids)
}

/// A job's state and request, `None` for an unknown id.
pub(crate) fn state_and_request(conn: &Connection, id: i64) -> Result<Option<(JobState, String)>> {
    Ok(conn
        .query_row(
            "SELECT status, request_json FROM jobs WHERE id = ?1",
            params![id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?)
}

/// A job's state, `None` for an unknown id.
pub(crate) fn state(conn: &Connection, id: i64) -> Result<Option<JobState>> {
    Ok(conn
        .query_row("SELECT status FROM jobs WHERE id = ?1", params![id], |r| {
            r.get(0)
        })
        .optional()?)
}

/// Claims a queued job for this process; `false` when it is no longer queued (cancelled).
pub(crate) fn claim(conn: &Connection, id: i64) -> Result<bool> {
    let claimed = conn.execute(
        "UPDATE jobs SET status = ?2, pid = ?3, started_at = ?4 WHERE id = ?1 AND status = ?5",
        params![
            id,
            JobState::Running,
            std::process::id(),
            now_ms(),
            JobState::Queued
        ],
    )?;
    Ok(claimed == 1)
}

/// Ends a job as failed with `error`.
pub(crate) fn fail(conn: &Connection, id: i64, error: &str) -> Result<()> {
    conn.execute(
        "UPDATE jobs SET status = ?2, error = ?3, finished_at = ?4 WHERE id = ?1",
        params![id, JobState::Failed, error, now_ms()],
    )?;
    Ok(())
}

/// Ends a job in `state` with its receipt (and the hash of its diagnostics list, when stored
/// apart), at `finished_at`.
pub(crate) fn finish(
    conn: &Connection,
    id: i64,
    state: JobState,
    receipt_json: &str,
    diagnostics_sha256: Option<&str>,
    finished_at: i64,
) -> Result<()> {
    conn.execute(
        "UPDATE jobs SET status = ?2, receipt_json = ?3, finished_at = ?4, diagnostics_sha256 = ?5 WHERE id = ?1",
        params![id, state, receipt_json, finished_at, diagnostics_sha256],
    )?;
    Ok(())
}

/// Cancels a job: `cancelled`, now, with `error` saying why.
pub(crate) fn cancel(conn: &Connection, id: i64, error: &str) -> Result<()> {
    conn.execute(
        "UPDATE jobs SET status = ?2, finished_at = ?3, error = ?4 WHERE id = ?1",
        params![id, JobState::Cancelled, now_ms(), error],
    )?;
    Ok(())
}

/// Marks every running job interrupted; called by the owner of the workspace lock, so a job
/// still running belongs to a process that died. Returns how many.
pub(crate) fn interrupt_running(conn: &Connection) -> Result<usize> {
    Ok(conn.execute(
        "UPDATE jobs SET status = ?1, error = 'the process that ran this job exited before it finished', finished_at = ?2 WHERE status = ?3",
        params![JobState::Interrupted, now_ms(), JobState::Running],
    )?)
}

/// The newest job's id, state and error.
pub(crate) fn latest(conn: &Connection) -> Result<Option<(i64, JobState, Option<String>)>> {
    Ok(conn
        .query_row(
            "SELECT id, status, error FROM jobs ORDER BY id DESC LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .optional()?)
}

/// How many jobs are in `state`.
pub(crate) fn count_in(conn: &Connection, state: JobState) -> Result<i64> {
    Ok(conn.query_row(
        "SELECT COUNT(*) FROM jobs WHERE status = ?1",
        params![state],
        |r| r.get(0),
    )?)
}

/// One job's row.
pub(crate) fn get(conn: &Connection, id: i64) -> Result<Option<JobRow>> {
    Ok(conn
        .prepare_cached(&format!("SELECT {JOB_COLUMNS} FROM jobs WHERE id = ?1"))?
        .query_row(params![id], job_row)
        .optional()?)
}

/// Up to `limit` jobs older than `before` (all when `None`), newest first.
pub(crate) fn page(conn: &Connection, before: Option<i64>, limit: i64) -> Result<Vec<JobRow>> {
    Ok(conn
        .prepare_cached(&format!(
            "SELECT {JOB_COLUMNS} FROM jobs WHERE ?1 IS NULL OR id < ?1 ORDER BY id DESC LIMIT ?2"
        ))?
        .query_map(params![before, limit], job_row)?
        .collect::<rusqlite::Result<Vec<_>>>()?)
}

/// The steps of the jobs whose ids lie in `first..=last`, in the order they were recorded.
/// (`job_steps` has no index on `job_id`: one query over a page's range scans it once, where a
/// query per job would scan it per job.)
pub(crate) fn steps_between(conn: &Connection, first: i64, last: i64) -> Result<Vec<StepRow>> {
    Ok(conn
        .prepare_cached(&format!(
            "SELECT {STEP_COLUMNS} FROM job_steps WHERE job_id BETWEEN ?1 AND ?2 ORDER BY id"
        ))?
        .query_map(params![first, last], step_row)?
        .collect::<rusqlite::Result<Vec<_>>>()?)
}

/// Records a started step; returns its id.
fn begin_step(conn: &Connection, job_id: i64, name: &str) -> Result<i64> {
    conn.execute(
        "INSERT INTO job_steps (job_id, name, status, started_at) VALUES (?1, ?2, ?3, ?4)",
        params![job_id, name, StepState::Running, now_ms()],
    )?;
    Ok(conn.last_insert_rowid())
}

/// Records a finished step whose span the caller measured.
fn record_step(
    conn: &Connection,
    job_id: i64,
    name: &str,
    started_at: i64,
    finished_at: i64,
    detail_json: &str,
) -> Result<()> {
    conn.execute(
        "INSERT INTO job_steps (job_id, name, status, started_at, finished_at, detail_json) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![job_id, name, StepState::Done, started_at, finished_at, detail_json],
    )?;
    Ok(())
}

/// Closes a step with its details.
fn finish_step(conn: &Connection, step_id: i64, detail_json: &str) -> Result<()> {
    conn.execute(
        "UPDATE job_steps SET status = ?2, finished_at = ?3, detail_json = ?4 WHERE id = ?1",
        params![step_id, StepState::Done, now_ms(), detail_json],
    )?;
    Ok(())
}

/// Removes up to `batch` finished jobs that ended before `before` and that no snapshot,
/// tombstone or withdrawal names, with their steps and events, in the caller's transaction;
/// returns how many.
pub(crate) fn expire(conn: &Connection, before: i64, batch: i64) -> Result<usize> {
    conn.execute_batch(
        "CREATE TEMP TABLE IF NOT EXISTS purge_jobs (id INTEGER PRIMARY KEY); DELETE FROM purge_jobs;",
    )?;
    let taken = conn.execute(
        "INSERT INTO purge_jobs (id) SELECT j.id FROM jobs j
         WHERE j.finished_at IS NOT NULL AND j.finished_at < ?1
           AND j.status NOT IN (?3, ?4)
           AND NOT EXISTS (SELECT 1 FROM snapshots s WHERE s.job_id = j.id)
           AND NOT EXISTS (SELECT 1 FROM tombstones t WHERE t.job_id = j.id)
           AND NOT EXISTS (SELECT 1 FROM source_withdrawals w WHERE w.job_id = j.id)
         ORDER BY j.finished_at LIMIT ?2",
        params![before, batch, JobState::Queued, JobState::Running],
    )?;
    if taken > 0 {
        conn.execute_batch(
            "DELETE FROM job_steps WHERE job_id IN (SELECT id FROM purge_jobs);
             DELETE FROM job_events WHERE job_id IN (SELECT id FROM purge_jobs);
             DELETE FROM jobs WHERE id IN (SELECT id FROM purge_jobs);",
        )?;
    }
    Ok(taken)
}

/// Removes the diagnostics lists no job points at any more.
pub(crate) fn drop_unreferenced_diagnostics(conn: &Connection) -> Result<usize> {
    Ok(conn.execute(
        "DELETE FROM diagnostic_lists WHERE NOT EXISTS (SELECT 1 FROM jobs j WHERE j.diagnostics_sha256 = diagnostic_lists.sha256)",
        [],
    )?)
}

/// Records a job's steps (`job_steps` rows) as they start and finish.
pub(crate) struct Steps {
    job_id: i64,
    open: Option<i64>,
}

impl Steps {
    pub(crate) fn new(job_id: i64) -> Self {
        Self { job_id, open: None }
    }

    pub(crate) fn begin(&mut self, conn: &Connection, name: &str) -> Result<()> {
        self.open = Some(begin_step(conn, self.job_id, name)?);
        Ok(())
    }

    /// A finished step whose span the caller measured (steps that overlap, such as prepare and
    /// commit, are recorded once both are done).
    pub(crate) fn record(
        &mut self,
        conn: &Connection,
        name: &str,
        started_at: i64,
        finished_at: i64,
        detail: &serde_json::Value,
    ) -> Result<()> {
        record_step(
            conn,
            self.job_id,
            name,
            started_at,
            finished_at,
            &detail.to_string(),
        )
    }

    /// Closes the open step with its details.
    pub(crate) fn finish(&mut self, conn: &Connection, detail: &serde_json::Value) -> Result<()> {
        if let Some(id) = self.open.take() {
            finish_step(conn, id, &detail.to_string())?;
        }
        Ok(())
    }
}

/// Stores a list of diagnostics once by its content's sha256.
///
/// # Errors
/// SQLite errors.
pub fn put_diagnostic_list(
    conn: &Connection,
    sha256: &str,
    count: usize,
    json: &str,
) -> Result<()> {
    conn.prepare_cached(
        "INSERT INTO diagnostic_lists (sha256, count, json) VALUES (?1, ?2, ?3) ON CONFLICT (sha256) DO NOTHING",
    )?
    .execute(params![sha256, count, json])?;
    Ok(())
}

/// A stored diagnostics list (JSON).
///
/// # Errors
/// SQLite errors.
pub fn diagnostic_list(conn: &Connection, sha256: &str) -> Result<Option<String>> {
    Ok(conn
        .prepare_cached("SELECT json FROM diagnostic_lists WHERE sha256 = ?1")?
        .query_row(params![sha256], |r| r.get(0))
        .optional()?)
}
