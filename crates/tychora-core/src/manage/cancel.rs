//! The owner takes a queued job off the queue (`tychora manage cancel`, the dashboard).
//!
//! Only a queued job is cancelled: a running one holds the single writer and stops only at its
//! safe points (it ends, or its process exits and it reads as `interrupted`), so it is refused
//! rather than half-stopped. The check and the change are one write transaction, and the job
//! runner claims a job only while it is still `queued` (`ingest::run_job`), so a job is either
//! cancelled or run, never both.

use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::job::JobState;
use crate::store::tx::Tx;

use super::JobStatus;

/// The longest reason recorded with a cancellation, in characters.
pub const MAX_CANCEL_REASON: usize = 500;

/// What a cancelled job's `error` says: who cancelled it, then why when given.
fn cancellation_text(reason: Option<&str>) -> Result<String> {
    let reason = reason.map(str::trim).filter(|r| !r.is_empty());
    match reason {
        None => Ok("cancelled by the owner".into()),
        Some(r) if r.chars().count() > MAX_CANCEL_REASON => Err(Error::InvalidArgument(format!(
            "a cancellation reason is at most {MAX_CANCEL_REASON} characters (got {})",
            r.chars().count()
        ))),
        Some(r) => Ok(format!("cancelled by the owner: {r}")),
    }
}

/// The job's state, or `E_NOT_FOUND`.
fn state_of(conn: &dyn Tx, job_id: i64) -> Result<JobState> {
    crate::store::jobs::state(conn, job_id)?.ok_or_else(|| Error::NotFound {
        what: "job",
        id: job_id.to_string(),
    })
}

/// Why a job in `state` cannot be cancelled; `None` when it can (it is queued).
fn refusal(job_id: i64, state: JobState) -> Option<Error> {
    match state {
        JobState::Queued => None,
        JobState::Running => Some(Error::Conflict(format!(
            "job {job_id} is running and cannot be cancelled: a running job stops only at its safe points (when it ends, or as interrupted when its process exits); only a queued job can be cancelled"
        ))),
        JobState::Succeeded
        | JobState::Partial
        | JobState::Failed
        | JobState::Interrupted
        | JobState::Cancelled => Some(Error::Conflict(format!(
            "job {job_id} is {state}, not queued: only a queued job can be cancelled"
        ))),
    }
}

/// Cancels the queued job `job_id`: its status becomes `cancelled`, `finished_at` now and
/// `error` the reason; it never runs. Returns the job as `job_status` shows it.
///
/// # Errors
/// `E_INVALID_ARGUMENT` for a reason over [`MAX_CANCEL_REASON`] characters; `E_NOT_FOUND` for an
/// unknown job; `E_CONFLICT` for a job that is running or has already ended (cancelled included).
pub(crate) fn cancel_job(engine: &Engine, job_id: i64, reason: Option<&str>) -> Result<JobStatus> {
    let error = cancellation_text(reason)?;
    // A pooled connection, not the writer, which a running job holds for its whole run. A job
    // that is not queued is refused from a plain read, which never waits for the writer's
    // transaction; a queued one is checked again and changed in one write transaction.
    engine.with_reader(|conn| {
        if let Some(refused) = refusal(job_id, state_of(conn, job_id)?) {
            return Err(refused);
        }
        conn.together(true, |tx| {
            if let Some(refused) = refusal(job_id, state_of(tx, job_id)?) {
                return Err(refused);
            }
            crate::store::jobs::cancel(tx, job_id, &error)
        })
    })?;
    log::info!("job {job_id} cancelled ({error})");
    super::job_status(engine, job_id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reason_is_recorded_trimmed_and_bounded() {
        assert_eq!(cancellation_text(None).unwrap(), "cancelled by the owner");
        assert_eq!(
            cancellation_text(Some("  ")).unwrap(),
            "cancelled by the owner"
        );
        assert_eq!(
            cancellation_text(Some(" wrong folder ")).unwrap(),
            "cancelled by the owner: wrong folder"
        );
        let longest = "é".repeat(MAX_CANCEL_REASON);
        assert!(cancellation_text(Some(&longest)).is_ok());
        let err = cancellation_text(Some(&format!("{longest}x"))).unwrap_err();
        assert_eq!(err.code(), crate::ErrorCode::InvalidArgument);
    }
}
