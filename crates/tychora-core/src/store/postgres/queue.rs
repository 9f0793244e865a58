//! The job queue on PostgreSQL: the contract of `store::queue` with `FOR UPDATE SKIP LOCKED`
//! takes, so any number of workers in any number of daemons take jobs without waiting on each
//! other and without double work; leases on the database's clock (`tychora_now_ms()`).

use std::time::Duration;

use tokio_postgres::Row;

use super::{PgStore, error};
use crate::error::{Error, Result};
use crate::job::{JobKind, JobState};
use crate::store::jobs::{JobRow, parsed};
use crate::store::queue::{
    Claim, Ending, JobQueue, MAX_ATTEMPTS, abandoned, check_ending, lease_ms,
};

/// The queue of a PostgreSQL store.
pub struct PgQueue {
    store: PgStore,
}

impl PgQueue {
    /// The queue of `store`.
    #[must_use]
    pub const fn new(store: PgStore) -> Self {
        Self { store }
    }

    /// The store it runs on.
    #[must_use]
    pub const fn store(&self) -> &PgStore {
        &self.store
    }

    fn failed(&self) -> impl Fn(tokio_postgres::Error) -> Error + '_ {
        |e| error(&self.store.location, &e)
    }
}

fn job_row(row: &Row) -> Result<JobRow> {
    Ok(JobRow {
        id: row.get(0),
        kind: parsed(row.get(1), "job kind")?,
        status: parsed(row.get(2), "job status")?,
        request: row.get(3),
        receipt: row.get(4),
        error: row.get(5),
        created_at: row.get(6),
        finished_at: row.get(7),
        diagnostics: row.get(8),
    })
}

impl JobQueue for PgQueue {
    fn enqueue(&self, kind: JobKind, request_json: &str) -> Result<i64> {
        self.store.run(async |client| {
            let row = client
                .query_one(
                    "INSERT INTO jobs (kind, status, request_json, created_at) VALUES ($1, $2, $3, tychora_now_ms()) RETURNING id",
                    &[&kind.as_str(), &JobState::Queued.as_str(), &request_json],
                )
                .await
                .map_err(self.failed())?;
            Ok(row.get(0))
        })
    }

    fn claim(&self, worker: &str, lease: Duration) -> Result<Option<Claim>> {
        let lease = lease_ms(lease);
        self.store.run(async |client| {
            let tx = client.transaction().await.map_err(self.failed())?;
            let claimed = loop {
                // SKIP LOCKED: a job another worker is taking right now is passed over, not
                // waited for; that worker's transaction decides it.
                let Some(next) = tx
                    .query_opt(
                        "SELECT id, status, attempts FROM jobs
                         WHERE status = 'queued' OR (status = 'running' AND lease_until < tychora_now_ms())
                         ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED",
                        &[],
                    )
                    .await
                    .map_err(self.failed())?
                else {
                    break None;
                };
                let id: i64 = next.get(0);
                let status: &str = next.get(1);
                let attempts = i64::from(next.get::<_, i32>(2));
                if status == JobState::Running.as_str() && attempts >= MAX_ATTEMPTS {
                    tx.execute(
                        "UPDATE jobs SET status = 'interrupted', error = $2, finished_at = tychora_now_ms(), worker = NULL, lease_until = NULL WHERE id = $1",
                        &[&id, &abandoned(attempts)],
                    )
                    .await
                    .map_err(self.failed())?;
                    continue;
                }
                let row = tx
                    .query_one(
                        "UPDATE jobs SET status = 'running', worker = $2, lease_until = tychora_now_ms() + $3,
                            attempts = attempts + 1, started_at = COALESCE(started_at, tychora_now_ms())
                         WHERE id = $1 RETURNING kind, request_json, attempts",
                        &[&id, &worker, &lease],
                    )
                    .await
                    .map_err(self.failed())?;
                break Some(Claim {
                    id,
                    kind: parsed(row.get(0), "job kind")?,
                    request_json: row.get(1),
                    attempt: i64::from(row.get::<_, i32>(2)),
                    worker: worker.to_string(),
                });
            };
            tx.commit().await.map_err(self.failed())?;
            Ok(claimed)
        })
    }

    fn renew(&self, claim: &Claim, lease: Duration) -> Result<bool> {
        let lease = lease_ms(lease);
        let attempt = i32::try_from(claim.attempt).unwrap_or(i32::MAX);
        self.store.run(async |client| {
            let renewed = client
                .execute(
                    "UPDATE jobs SET lease_until = tychora_now_ms() + $4
                     WHERE id = $1 AND status = 'running' AND worker = $2 AND attempts = $3",
                    &[&claim.id, &claim.worker, &attempt, &lease],
                )
                .await
                .map_err(self.failed())?;
            Ok(renewed == 1)
        })
    }

    fn finish(&self, claim: &Claim, ending: Ending<'_>) -> Result<bool> {
        check_ending(&ending)?;
        let attempt = i32::try_from(claim.attempt).unwrap_or(i32::MAX);
        self.store.run(async |client| {
            let ended = client
                .execute(
                    "UPDATE jobs SET status = $4, receipt_json = $5, error = $6, finished_at = tychora_now_ms(),
                        worker = NULL, lease_until = NULL
                     WHERE id = $1 AND status = 'running' AND worker = $2 AND attempts = $3",
                    &[
                        &claim.id,
                        &claim.worker,
                        &attempt,
                        &ending.state.as_str(),
                        &ending.receipt_json,
                        &ending.error,
                    ],
                )
                .await
                .map_err(self.failed())?;
            Ok(ended == 1)
        })
    }

    fn cancel(&self, id: i64, reason: &str) -> Result<()> {
        self.store.run(async |client| {
            let tx = client.transaction().await.map_err(self.failed())?;
            let state = tx
                .query_opt("SELECT status FROM jobs WHERE id = $1 FOR UPDATE", &[&id])
                .await
                .map_err(self.failed())?;
            let Some(state) = state else {
                return Err(Error::NotFound {
                    what: "job",
                    id: id.to_string(),
                });
            };
            let state: JobState = parsed(state.get(0), "job status")?;
            if state != JobState::Queued {
                return Err(Error::Conflict(format!(
                    "job {id} is {state}, not queued: only a queued job can be cancelled"
                )));
            }
            tx.execute(
                "UPDATE jobs SET status = 'cancelled', finished_at = tychora_now_ms(), error = $2 WHERE id = $1",
                &[&id, &reason],
            )
            .await
            .map_err(self.failed())?;
            tx.commit().await.map_err(self.failed())?;
            Ok(())
        })
    }

    fn job(&self, id: i64) -> Result<Option<JobRow>> {
        self.store.run(async |client| {
            client
                .query_opt(
                    "SELECT id, kind, status, request_json, receipt_json, error, created_at, finished_at, diagnostics_sha256 FROM jobs WHERE id = $1",
                    &[&id],
                )
                .await
                .map_err(self.failed())?
                .as_ref()
                .map(job_row)
                .transpose()
        })
    }

    fn holder(&self, id: i64) -> Result<Option<(String, i64)>> {
        self.store.run(async |client| {
            Ok(client
                .query_opt(
                    "SELECT worker, attempts FROM jobs WHERE id = $1 AND status = 'running' AND worker IS NOT NULL",
                    &[&id],
                )
                .await
                .map_err(self.failed())?
                .map(|row| (row.get(0), i64::from(row.get::<_, i32>(1)))))
        })
    }
}
