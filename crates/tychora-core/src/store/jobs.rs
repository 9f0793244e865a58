//! The job queue's rows: `jobs` and `job_steps`. Every statement that reads or writes them is
//! here; the pipelines say what happens to a job (queued, claimed, ended) and this module how it
//! is stored, on either adapter (`store::tx`).

use std::str::FromStr;

use super::tx::{Row, Tx, args};
use crate::clock::now_ms;
use crate::error::{Error, Result};
use crate::job::{JobKind, JobState, StepState};

/// How many times a job is taken before a lease that expires again ends it: a job that kills
/// every worker that runs it must not kill them all in turn for ever.
pub const MAX_ATTEMPTS: i64 = 3;

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
#[allow(missing_docs)] // The columns of migrations/0001_initial.sql, by name.
pub struct StepRow {
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

/// A closed set's name as stored; an unknown one is corrupt data, never a default.
pub fn parsed<T: FromStr>(text: &str, what: &str) -> Result<T> {
    text.parse()
        .map_err(|_| Error::Corrupt(format!("the store holds an unknown {what} {text:?}")))
}

fn job_row(r: &dyn Row) -> Result<JobRow> {
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

fn step_row(r: &dyn Row) -> Result<StepRow> {
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
pub fn enqueue(tx: &dyn Tx, kind: JobKind, request_json: &str) -> Result<i64> {
    tx.insert(
        "INSERT INTO jobs (kind, status, request_json, created_at) VALUES (?1, ?2, ?3, ?4)",
        args![
            kind.as_str(),
            JobState::Queued.as_str(),
            request_json,
            now_ms()
        ],
    )
}

/// Records a job that starts at once on the caller's writer (rebuild, withdraw, erase: they are
/// not queued); returns its id.
pub fn start(tx: &dyn Tx, kind: JobKind, request_json: &str) -> Result<i64> {
    tx.insert(
        "INSERT INTO jobs (kind, status, request_json, pid, created_at, started_at) VALUES (?1, ?2, ?3, ?4, ?5, ?5)",
        args![
            kind.as_str(),
            JobState::Running.as_str(),
            request_json,
            std::process::id(),
            now_ms()
        ],
    )
}

/// Ids of queued jobs, oldest first.
pub fn queued_ids(tx: &dyn Tx) -> Result<Vec<i64>> {
    tx.rows(
        "SELECT id FROM jobs WHERE status = ?1 ORDER BY id",
        args![JobState::Queued.as_str()],
        |r| r.get(0),
    )
}

/// A job's state and request, `None` for an unknown id.
pub fn state_and_request(tx: &dyn Tx, id: i64) -> Result<Option<(JobState, String)>> {
    tx.optional(
        "SELECT status, request_json FROM jobs WHERE id = ?1",
        args![id],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
}

/// A job's state, `None` for an unknown id.
pub fn state(tx: &dyn Tx, id: i64) -> Result<Option<JobState>> {
    tx.optional("SELECT status FROM jobs WHERE id = ?1", args![id], |r| {
        r.get(0)
    })
}

/// Claims a queued job for this process; `false` when it is no longer queued (cancelled).
pub fn claim(tx: &dyn Tx, id: i64) -> Result<bool> {
    let claimed = tx.execute(
        "UPDATE jobs SET status = ?2, pid = ?3, started_at = ?4 WHERE id = ?1 AND status = ?5",
        args![
            id,
            JobState::Running.as_str(),
            std::process::id(),
            now_ms(),
            JobState::Queued.as_str()
        ],
    )?;
    Ok(claimed == 1)
}

/// Takes job `id` for `worker` on a lease of `lease_ms` (the service store: several daemons share
/// one queue): a queued job, or an add whose holder's lease expired and that was taken fewer than
/// [`MAX_ATTEMPTS`] times. `false` when it is not takeable (another worker took it first, it was
/// cancelled, or it ended). One conditional statement: of two workers taking at once, the
/// second sees the first's row once it commits, and its condition no longer holds.
pub fn take(tx: &dyn Tx, id: i64, worker: &str, lease_ms: i64) -> Result<bool> {
    let now = tx.dialect().now_ms();
    let taken = tx.execute(
        &format!(
            "UPDATE jobs SET status = ?2, worker = ?3, lease_until = {now} + ?4, attempts = attempts + 1,
                 pid = ?5, started_at = COALESCE(started_at, {now})
             WHERE id = ?1 AND (status = ?6 OR (status = ?2 AND kind = ?7 AND lease_until < {now} AND attempts < ?8))"
        ),
        args![
            id,
            JobState::Running.as_str(),
            worker,
            lease_ms,
            std::process::id(),
            JobState::Queued.as_str(),
            JobKind::Add.as_str(),
            MAX_ATTEMPTS
        ],
    )?;
    Ok(taken == 1)
}

/// Puts a job this process started at once (rebuild, withdraw, erase) on `worker`'s lease.
pub fn lease(tx: &dyn Tx, id: i64, worker: &str, lease_ms: i64) -> Result<()> {
    let now = tx.dialect().now_ms();
    tx.execute(
        &format!(
            "UPDATE jobs SET worker = ?2, lease_until = {now} + ?3 WHERE id = ?1 AND status = ?4"
        ),
        args![id, worker, lease_ms, JobState::Running.as_str()],
    )?;
    Ok(())
}

/// Extends `worker`'s lease on job `id` to `lease_ms` from now; `false` when it no longer holds
/// it (the lease expired and another worker took the job, or the job ended).
pub fn renew(tx: &dyn Tx, id: i64, worker: &str, lease_ms: i64) -> Result<bool> {
    let now = tx.dialect().now_ms();
    let renewed = tx.execute(
        &format!(
            "UPDATE jobs SET lease_until = {now} + ?3 WHERE id = ?1 AND worker = ?2 AND status = ?4"
        ),
        args![id, worker, lease_ms, JobState::Running.as_str()],
    )?;
    Ok(renewed == 1)
}

/// Whether this process may still end job `id`: it holds its lease, or the job has none.
pub fn held_here(tx: &dyn Tx, id: i64) -> Result<bool> {
    Ok(tx
        .optional("SELECT worker FROM jobs WHERE id = ?1", args![id], |r| {
            r.get::<Option<String>>(0)
        })?
        .is_some_and(|w| w.is_none_or(|w| w == crate::job::worker())))
}

/// Ids a worker may take, oldest first: queued jobs, and adds whose holder's lease expired.
pub fn takeable_ids(tx: &dyn Tx) -> Result<Vec<i64>> {
    let now = tx.dialect().now_ms();
    tx.rows(
        &format!(
            "SELECT id FROM jobs WHERE status IN (?1, ?2)
               AND (status = ?1 OR (kind = ?3 AND lease_until < {now} AND attempts < ?4))
             ORDER BY id"
        ),
        args![
            JobState::Queued.as_str(),
            JobState::Running.as_str(),
            JobKind::Add.as_str(),
            MAX_ATTEMPTS
        ],
        |r| r.get(0),
    )
}

/// Ends as `interrupted` the running jobs whose lease expired and that no worker takes again: a
/// job started at once (its caller is gone with its process) and an add taken
/// [`MAX_ATTEMPTS`] times (a job that kills every worker must not kill them all in turn).
/// Returns how many.
pub fn abandon_expired(tx: &dyn Tx) -> Result<usize> {
    let now = tx.dialect().now_ms();
    let n = tx.execute(
        &format!(
            "UPDATE jobs SET status = ?1, finished_at = {now},
                 error = CASE WHEN kind = ?4 THEN 'abandoned: its lease expired ' || attempts || ' times (each worker that took it stopped renewing, most likely because its process died)'
                              ELSE 'the daemon that ran this job stopped renewing its lease before it finished (most likely its process died)' END
             WHERE status = ?2 AND lease_until < {now} AND (kind <> ?4 OR attempts >= ?3)"
        ),
        args![
            JobState::Interrupted.as_str(),
            JobState::Running.as_str(),
            MAX_ATTEMPTS,
            JobKind::Add.as_str()
        ],
    )?;
    Ok(usize::try_from(n).unwrap_or(usize::MAX))
}

/// The fence every end of a job passes: a job held on a lease ends only by its holder's hand
/// (a worker whose lease expired and whose job another took must not end it); a job held on
/// no lease (the embedded store's single writer) has no holder to check.
fn fence(worker_param: usize) -> String {
    format!("(worker IS NULL OR worker = ?{worker_param})")
}

/// Refuses an end that the fence kept out.
fn fenced(changed: u64, id: i64) -> Result<()> {
    if changed == 0 {
        return Err(Error::Conflict(format!(
            "job {id} is held by another worker (this one's lease expired): its end is not recorded here"
        )));
    }
    Ok(())
}

/// Ends a job as failed with `error` (by its holder only: see [`fence`]).
pub fn fail(tx: &dyn Tx, id: i64, error: &str) -> Result<()> {
    let changed = tx.execute(
        &format!(
            "UPDATE jobs SET status = ?2, error = ?3, finished_at = ?4 WHERE id = ?1 AND {}",
            fence(5)
        ),
        args![
            id,
            JobState::Failed.as_str(),
            error,
            now_ms(),
            crate::job::worker()
        ],
    )?;
    fenced(changed, id)
}

/// Ends a job in `state` with its receipt (and the hash of its diagnostics list, when stored
/// apart), at `finished_at`.
pub fn finish(
    tx: &dyn Tx,
    id: i64,
    state: JobState,
    receipt_json: &str,
    diagnostics_sha256: Option<&str>,
    finished_at: i64,
) -> Result<()> {
    let changed = tx.execute(
        &format!(
            "UPDATE jobs SET status = ?2, receipt_json = ?3, finished_at = ?4, diagnostics_sha256 = ?5 WHERE id = ?1 AND {}",
            fence(6)
        ),
        args![
            id,
            state.as_str(),
            receipt_json,
            finished_at,
            diagnostics_sha256,
            crate::job::worker()
        ],
    )?;
    fenced(changed, id)
}

/// Cancels a job: `cancelled`, now, with `error` saying why.
pub fn cancel(tx: &dyn Tx, id: i64, error: &str) -> Result<()> {
    tx.execute(
        "UPDATE jobs SET status = ?2, finished_at = ?3, error = ?4 WHERE id = ?1",
        args![id, JobState::Cancelled.as_str(), now_ms(), error],
    )?;
    Ok(())
}

/// Marks every running job interrupted; called by the owner of the workspace lock, so a job
/// still running belongs to a process that died. Returns how many.
pub fn interrupt_running(tx: &dyn Tx) -> Result<usize> {
    let n = tx.execute(
        "UPDATE jobs SET status = ?1, error = 'the process that ran this job exited before it finished', finished_at = ?2 WHERE status = ?3",
        args![
            JobState::Interrupted.as_str(),
            now_ms(),
            JobState::Running.as_str()
        ],
    )?;
    Ok(usize::try_from(n).unwrap_or(usize::MAX))
}

/// The newest job's id, state and error.
pub fn latest(tx: &dyn Tx) -> Result<Option<(i64, JobState, Option<String>)>> {
    tx.optional(
        "SELECT id, status, error FROM jobs ORDER BY id DESC LIMIT 1",
        &[],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )
}

/// How many jobs are in `state`.
pub fn count_in(tx: &dyn Tx, state: JobState) -> Result<i64> {
    tx.value(
        "SELECT COUNT(*) FROM jobs WHERE status = ?1",
        args![state.as_str()],
    )
}

/// One job's row.
pub fn get(tx: &dyn Tx, id: i64) -> Result<Option<JobRow>> {
    tx.optional(
        &format!("SELECT {JOB_COLUMNS} FROM jobs WHERE id = ?1"),
        args![id],
        job_row,
    )
}

/// Up to `limit` jobs older than `before` (all when `None`), newest first.
pub fn page(tx: &dyn Tx, before: Option<i64>, limit: i64) -> Result<Vec<JobRow>> {
    tx.rows(
        &format!(
            "SELECT {JOB_COLUMNS} FROM jobs WHERE CAST(?1 AS BIGINT) IS NULL OR id < ?1 ORDER BY id DESC LIMIT ?2"
        ),
        args![before, limit],
        job_row,
    )
}

/// The steps of the jobs whose ids lie in `first..=last`, in the order they were recorded.
/// (`job_steps` has no index on `job_id`: one query over a page's range scans it once, where a
/// query per job would scan it per job.)
pub fn steps_between(tx: &dyn Tx, first: i64, last: i64) -> Result<Vec<StepRow>> {
    tx.rows(
        &format!("SELECT {STEP_COLUMNS} FROM job_steps WHERE job_id BETWEEN ?1 AND ?2 ORDER BY id"),
        args![first, last],
        step_row,
    )
}

/// Records a started step; returns its id.
fn begin_step(tx: &dyn Tx, job_id: i64, name: &str) -> Result<i64> {
    tx.insert(
        "INSERT INTO job_steps (job_id, name, status, started_at) VALUES (?1, ?2, ?3, ?4)",
        args![job_id, name, StepState::Running.as_str(), now_ms()],
    )
}

/// Records a finished step whose span the caller measured.
fn record_step(
    tx: &dyn Tx,
    job_id: i64,
    name: &str,
    started_at: i64,
    finished_at: i64,
    detail_json: &str,
) -> Result<()> {
    tx.execute(
        "INSERT INTO job_steps (job_id, name, status, started_at, finished_at, detail_json) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        args![
            job_id,
            name,
            StepState::Done.as_str(),
            started_at,
            finished_at,
            detail_json
        ],
    )?;
    Ok(())
}

/// Closes a step with its details.
fn finish_step(tx: &dyn Tx, step_id: i64, detail_json: &str) -> Result<()> {
    tx.execute(
        "UPDATE job_steps SET status = ?2, finished_at = ?3, detail_json = ?4 WHERE id = ?1",
        args![step_id, StepState::Done.as_str(), now_ms(), detail_json],
    )?;
    Ok(())
}

/// Removes up to `batch` finished jobs that ended before `before` and that no snapshot,
/// tombstone or withdrawal names, with their steps and events, in the caller's transaction;
/// returns how many. (The ids go through a temporary table of the connection's own.)
pub fn expire(tx: &dyn Tx, before: i64, batch: i64) -> Result<usize> {
    tx.dialect().empty_id_table(tx, "purge_jobs")?;
    let taken = tx.execute(
        "INSERT INTO purge_jobs (id) SELECT j.id FROM jobs j
         WHERE j.finished_at IS NOT NULL AND j.finished_at < ?1
           AND j.status NOT IN (?3, ?4)
           AND NOT EXISTS (SELECT 1 FROM snapshots s WHERE s.job_id = j.id)
           AND NOT EXISTS (SELECT 1 FROM tombstones t WHERE t.job_id = j.id)
           AND NOT EXISTS (SELECT 1 FROM source_withdrawals w WHERE w.job_id = j.id)
         ORDER BY j.finished_at LIMIT ?2",
        args![
            before,
            batch,
            JobState::Queued.as_str(),
            JobState::Running.as_str()
        ],
    )?;
    if taken > 0 {
        for table in ["job_steps", "job_events"] {
            tx.execute(
                &format!("DELETE FROM {table} WHERE job_id IN (SELECT id FROM purge_jobs)"),
                &[],
            )?;
        }
        tx.execute(
            "DELETE FROM jobs WHERE id IN (SELECT id FROM purge_jobs)",
            &[],
        )?;
    }
    Ok(usize::try_from(taken).unwrap_or(usize::MAX))
}

/// Removes the diagnostics lists no job points at any more.
pub fn drop_unreferenced_diagnostics(tx: &dyn Tx) -> Result<usize> {
    let n = tx.execute(
        "DELETE FROM diagnostic_lists WHERE NOT EXISTS (SELECT 1 FROM jobs j WHERE j.diagnostics_sha256 = diagnostic_lists.sha256)",
        &[],
    )?;
    Ok(usize::try_from(n).unwrap_or(usize::MAX))
}

/// Records a job's steps (`job_steps` rows) as they start and finish.
pub struct Steps {
    job_id: i64,
    open: Option<i64>,
}

impl Steps {
    /// The steps of job `job_id`.
    #[must_use]
    pub fn new(job_id: i64) -> Self {
        Self { job_id, open: None }
    }

    /// Records a started step.
    ///
    /// # Errors
    /// The store's errors.
    pub fn begin(&mut self, tx: &dyn Tx, name: &str) -> Result<()> {
        self.open = Some(begin_step(tx, self.job_id, name)?);
        Ok(())
    }

    /// A finished step whose span the caller measured (steps that overlap, such as prepare and
    /// commit, are recorded once both are done).
    ///
    /// # Errors
    /// The store's errors.
    pub fn record(
        &mut self,
        tx: &dyn Tx,
        name: &str,
        started_at: i64,
        finished_at: i64,
        detail: &serde_json::Value,
    ) -> Result<()> {
        record_step(
            tx,
            self.job_id,
            name,
            started_at,
            finished_at,
            &detail.to_string(),
        )
    }

    /// Closes the open step with its details.
    ///
    /// # Errors
    /// The store's errors.
    pub fn finish(&mut self, tx: &dyn Tx, detail: &serde_json::Value) -> Result<()> {
        if let Some(id) = self.open.take() {
            finish_step(tx, id, &detail.to_string())?;
        }
        Ok(())
    }
}

/// Stores a list of diagnostics once by its content's sha256.
///
/// # Errors
/// The store's errors.
pub fn put_diagnostic_list(tx: &dyn Tx, sha256: &str, count: usize, json: &str) -> Result<()> {
    tx.execute(
        "INSERT INTO diagnostic_lists (sha256, count, json) VALUES (?1, ?2, ?3) ON CONFLICT (sha256) DO NOTHING",
        args![sha256, count, json],
    )?;
    Ok(())
}

/// A stored diagnostics list (JSON).
///
/// # Errors
/// The store's errors.
pub fn diagnostic_list(tx: &dyn Tx, sha256: &str) -> Result<Option<String>> {
    tx.optional(
        "SELECT json FROM diagnostic_lists WHERE sha256 = ?1",
        args![sha256],
        |r| r.get(0),
    )
}
