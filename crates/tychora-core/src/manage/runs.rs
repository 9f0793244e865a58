//! `inspect run RUN_ID`: a recorded query run — its request, the scope applied, the snapshot it
//! read, its results and the full trace — as the query log stored it.

use rusqlite::{OptionalExtension, params};
use serde::{Deserialize, Serialize};

use crate::engine::Engine;
use crate::error::{Error, Result};

/// A recorded query run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunRecord {
    /// The run's id (`qr_` and 20 hex digits), as the query's result gave it.
    pub run_id: String,
    /// The snapshot it read (null once retention purged that snapshot).
    pub snapshot_id: Option<i64>,
    /// The request as received.
    pub request: serde_json::Value,
    /// Segment ids and citations, applied scope, coverage, trace and warnings.
    pub summary: serde_json::Value,
    /// The agent the request named (`None`: it named none).
    pub agent_id: Option<String>,
    /// The task the request named (`None`: it named none).
    pub task_id: Option<String>,
    /// Wall time of the query, in milliseconds.
    pub duration_ms: f64,
    /// When the run was logged (as the query finished), in milliseconds since the Unix epoch.
    pub created_at: i64,
}

/// The run `run_id`.
///
/// # Errors
/// `E_NOT_FOUND` for an unknown (or expired) run; `E_CORRUPT` for a row whose JSON does not parse.
pub(crate) fn run_record(engine: &Engine, run_id: &str) -> Result<RunRecord> {
    engine.query_log().flush();
    engine.with_reader(|conn| {
        let row = conn
            .query_row(
                "SELECT id, snapshot_id, request_json, summary_json, agent_id, task_id, duration_ms, created_at FROM query_runs WHERE id = ?1",
                params![run_id],
                |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, Option<i64>>(1)?,
                        r.get::<_, String>(2)?,
                        r.get::<_, String>(3)?,
                        r.get::<_, Option<String>>(4)?,
                        r.get::<_, Option<String>>(5)?,
                        r.get::<_, f64>(6)?,
                        r.get::<_, i64>(7)?,
                    ))
                },
            )
            .optional()?
            .ok_or_else(|| Error::NotFound { what: "query run (or expired by [history] query_days)", id: run_id.to_string() })?;
        let (run_id, snapshot_id, request, summary, agent_id, task_id, duration_ms, created_at) = row;
        let parse = |text: &str, what: &str| {
            serde_json::from_str(text).map_err(|e| Error::Corrupt(format!("query run {run_id}: {what}: {e}")))
        };
        Ok(RunRecord {
            request: parse(&request, "request")?,
            summary: parse(&summary, "summary")?,
            run_id: run_id.clone(),
            snapshot_id,
            agent_id,
            task_id,
            duration_ms,
            created_at,
        })
    })
}
