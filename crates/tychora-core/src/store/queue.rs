//! The job queue as a port: any number of workers, in any number of processes, take jobs from one
//! queue without double work, and a job whose worker died is taken again when its lease expires.
//!
//! Two adapters keep the same contract (tests/job_queue.rs runs one suite over both): the
//! embedded store's SQLite database ([`SqliteQueue`]) and the service store on PostgreSQL
//! (`store::postgres::PgQueue`, `SELECT … FOR UPDATE SKIP LOCKED`). Leases are kept on the
//! database's clock: a worker never sends a time, so daemons whose clocks disagree still agree on
//! who holds a job.

use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use super::jobs::{self, JobRow};
use crate::error::{Error, Result};
use crate::job::{JobKind, JobState};

pub use super::jobs::MAX_ATTEMPTS;

/// A job a worker has taken. `attempt` fences it: once the lease expired and another worker took
/// the job, this claim's renewals and finish are refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    /// The job.
    pub id: i64,
    /// What it does.
    pub kind: JobKind,
    /// Its request, as queued.
    pub request_json: String,
    /// Which take this is (1 for the first).
    pub attempt: i64,
    /// Who holds it.
    pub worker: String,
}

/// How a claimed job ended.
#[derive(Debug, Clone, Copy)]
pub struct Ending<'a> {
    /// `succeeded`, `partial` or `failed`.
    pub state: JobState,
    /// Its receipt, when it has one.
    pub receipt_json: Option<&'a str>,
    /// Why it failed, when it did.
    pub error: Option<&'a str>,
}

/// The queue's contract.
pub trait JobQueue: Send + Sync {
    /// Queues a job; returns its id.
    ///
    /// # Errors
    /// `E_STORE_UNAVAILABLE` when the store cannot be reached; store errors.
    fn enqueue(&self, kind: JobKind, request_json: &str) -> Result<i64>;

    /// Takes the oldest job that is queued, or running on a lease that has expired, for
    /// `worker`, for `lease`. A job whose lease expired after its [`MAX_ATTEMPTS`]th take is
    /// ended `interrupted` instead of being taken again. `None` when there is nothing to take.
    ///
    /// # Errors
    /// As [`JobQueue::enqueue`].
    fn claim(&self, worker: &str, lease: Duration) -> Result<Option<Claim>>;

    /// Extends the claim's lease to `lease` from now; `false` when the claim was lost (its
    /// lease expired and another worker took the job, or the job was ended).
    ///
    /// # Errors
    /// As [`JobQueue::enqueue`].
    fn renew(&self, claim: &Claim, lease: Duration) -> Result<bool>;

    /// Ends the claimed job; `false` (and nothing written) when the claim was lost.
    ///
    /// # Errors
    /// `E_INVALID_ARGUMENT` for an ending that is not `succeeded`, `partial` or `failed`; as
    /// [`JobQueue::enqueue`].
    fn finish(&self, claim: &Claim, ending: Ending<'_>) -> Result<bool>;

    /// Takes a queued job off the queue: it never runs.
    ///
    /// # Errors
    /// `E_NOT_FOUND` for an unknown job, `E_CONFLICT` for one that is not queued; as
    /// [`JobQueue::enqueue`].
    fn cancel(&self, id: i64, error: &str) -> Result<()>;

    /// One job's row.
    ///
    /// # Errors
    /// As [`JobQueue::enqueue`].
    fn job(&self, id: i64) -> Result<Option<JobRow>>;

    /// Who holds a running job, and which take it is.
    ///
    /// # Errors
    /// As [`JobQueue::enqueue`].
    fn holder(&self, id: i64) -> Result<Option<(String, i64)>>;
}

/// Checks an ending names how a job ended.
pub(crate) fn check_ending(ending: &Ending<'_>) -> Result<()> {
    match ending.state {
        JobState::Succeeded | JobState::Partial | JobState::Failed => Ok(()),
        other => Err(Error::InvalidArgument(format!(
            "a job ends succeeded, partial or failed, not {other}"
        ))),
    }
}

/// The error a job whose lease expired too often ends with.
pub(crate) fn abandoned(attempts: i64) -> String {
    format!(
        "abandoned: its lease expired {attempts} times (each worker that took it stopped renewing, most likely because its process died)"
    )
}

/// Lease length in whole milliseconds (at least 1).
pub(crate) fn lease_ms(lease: Duration) -> i64 {
    i64::try_from(lease.as_millis()).unwrap_or(i64::MAX).max(1)
}

/// The SQLite clock, in ms since the Unix epoch (not the process's: see the module comment).
const SQLITE_NOW: &str = "CAST(unixepoch('subsec') * 1000 AS INTEGER)";

/// The oldest job a worker may take: queued, or running on an expired lease. The statuses are
/// written out, not bound, and named by the index's own condition first: SQLite uses the partial
/// index `jobs_claimable` only when the query's `WHERE` implies the index's, which a bound `?1`
/// cannot; without it every claim scanned every job ever run (measured on the same table and
/// index with 20,000 finished jobs: 2.3 ms per claim scanning, 0.006 ms through the index).
fn claimable_sql() -> String {
    let (queued, running) = (JobState::Queued.as_str(), JobState::Running.as_str());
    format!(
        "SELECT id, status, attempts FROM jobs
         WHERE status IN ('{queued}', '{running}') AND (status = '{queued}' OR lease_until < {SQLITE_NOW})
         ORDER BY id LIMIT 1"
    )
}

/// The queue on the embedded store: its own connection to the workspace's database, each take one
/// `IMMEDIATE` transaction (SQLite has one writer at a time, so two takes never see the same
/// queued job).
pub struct SqliteQueue {
    conn: Mutex<Connection>,
}

impl SqliteQueue {
    /// Opens the queue of the database at `path` (a workspace's `corpus.sqlite3`, migrated).
    ///
    /// # Errors
    /// SQLite errors opening it.
    pub fn open(path: &Path) -> Result<Self> {
        Ok(Self {
            conn: Mutex::new(super::connect(path)?),
        })
    }

    fn with<T>(&self, f: impl FnOnce(&mut Connection) -> Result<T>) -> Result<T> {
        let mut conn = self
            .conn
            .lock()
            .map_err(|_| Error::Internal("the job queue's connection was poisoned".into()))?;
        f(&mut conn)
    }
}

impl JobQueue for SqliteQueue {
    fn enqueue(&self, kind: JobKind, request_json: &str) -> Result<i64> {
        self.with(|conn| jobs::enqueue(conn, kind, request_json))
    }

    fn claim(&self, worker: &str, lease: Duration) -> Result<Option<Claim>> {
        self.with(|conn| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let claimed = loop {
                let next: Option<(i64, JobState, i64)> = tx
                    .query_row(&claimable_sql(), [], |r| {
                        Ok((r.get(0)?, r.get(1)?, r.get(2)?))
                    })
                    .optional()?;
                let Some((id, status, attempts)) = next else {
                    break None;
                };
                if status == JobState::Running && attempts >= MAX_ATTEMPTS {
                    tx.execute(
                        &format!(
                            "UPDATE jobs SET status = ?2, error = ?3, finished_at = {SQLITE_NOW}, worker = NULL, lease_until = NULL WHERE id = ?1"
                        ),
                        params![id, JobState::Interrupted, abandoned(attempts)],
                    )?;
                    continue;
                }
                let row: (JobKind, String, i64) = tx.query_row(
                    &format!(
                        "UPDATE jobs SET status = ?2, worker = ?3, lease_until = {SQLITE_NOW} + ?4,
                            attempts = attempts + 1, started_at = COALESCE(started_at, {SQLITE_NOW})
                         WHERE id = ?1 RETURNING kind, request_json, attempts"
                    ),
                    params![id, JobState::Running, worker, lease_ms(lease)],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
                )?;
                break Some(Claim {
                    id,
                    kind: row.0,
                    request_json: row.1,
                    attempt: row.2,
                    worker: worker.to_string(),
                });
            };
            tx.commit()?;
            Ok(claimed)
        })
    }

    fn renew(&self, claim: &Claim, lease: Duration) -> Result<bool> {
        self.with(|conn| {
            let renewed = conn.execute(
                &format!(
                    "UPDATE jobs SET lease_until = {SQLITE_NOW} + ?4
                     WHERE id = ?1 AND status = ?2 AND worker = ?3 AND attempts = ?5"
                ),
                params![
                    claim.id,
                    JobState::Running,
                    claim.worker,
                    lease_ms(lease),
                    claim.attempt
                ],
            )?;
            Ok(renewed == 1)
        })
    }

    fn finish(&self, claim: &Claim, ending: Ending<'_>) -> Result<bool> {
        check_ending(&ending)?;
        self.with(|conn| {
            let ended = conn.execute(
                &format!(
                    "UPDATE jobs SET status = ?5, receipt_json = ?6, error = ?7, finished_at = {SQLITE_NOW},
                        worker = NULL, lease_until = NULL
                     WHERE id = ?1 AND status = ?2 AND worker = ?3 AND attempts = ?4"
                ),
                params![
                    claim.id,
                    JobState::Running,
                    claim.worker,
                    claim.attempt,
                    ending.state,
                    ending.receipt_json,
                    ending.error
                ],
            )?;
            Ok(ended == 1)
        })
    }

    fn cancel(&self, id: i64, error: &str) -> Result<()> {
        self.with(|conn| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            match jobs::state(&tx, id)? {
                None => {
                    return Err(Error::NotFound {
                        what: "job",
                        id: id.to_string(),
                    });
                }
                Some(JobState::Queued) => jobs::cancel(&tx, id, error)?,
                Some(state) => {
                    return Err(Error::Conflict(format!(
                        "job {id} is {state}, not queued: only a queued job can be cancelled"
                    )));
                }
            }
            tx.commit()?;
            Ok(())
        })
    }

    fn job(&self, id: i64) -> Result<Option<JobRow>> {
        self.with(|conn| jobs::get(conn, id))
    }

    fn holder(&self, id: i64) -> Result<Option<(String, i64)>> {
        self.with(|conn| {
            Ok(conn
                .query_row(
                    "SELECT worker, attempts FROM jobs WHERE id = ?1 AND status = ?2 AND worker IS NOT NULL",
                    params![id, JobState::Running],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .optional()?)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A claim reads the claimable jobs through their partial index, however many have finished.
    #[test]
    fn a_claim_searches_the_claimable_index_not_every_job() {
        let mut conn = Connection::open_in_memory().unwrap();
        crate::store::migrate::apply(&mut conn).unwrap();
        let plan: Vec<String> = conn
            .prepare(&format!("EXPLAIN QUERY PLAN {}", claimable_sql()))
            .unwrap()
            .query_map([], |r| r.get::<_, String>(3))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        assert!(
            plan.iter()
                .any(|step| step.contains("USING INDEX jobs_claimable")),
            "{plan:?}"
        );
        assert!(
            !plan.iter().any(|step| step.starts_with("SCAN jobs")),
            "{plan:?}"
        );
    }
}
