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
                run_row,
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

/// A recorded query run as a listing shows it: what was asked, when, and how many results came
/// back (`inspect_run` has the rest).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunBrief {
    /// The run's id (`qr_` and 20 hex digits).
    pub id: String,
    /// When the run was logged, in milliseconds since the Unix epoch.
    pub created_at: i64,
    /// The snapshot it read (null once retention purged that snapshot).
    pub snapshot_id: Option<i64>,
    /// The query text of its request.
    pub query: String,
    /// Wall time of the query, in milliseconds.
    pub duration_ms: f64,
    /// Segments it returned.
    pub results: u32,
    /// The agent the request named (`None`: it named none).
    pub agent_id: Option<String>,
    /// The task the request named (`None`: it named none).
    pub task_id: Option<String>,
}

/// One page of the recorded query runs, newest first.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunList {
    /// This page, newest first (by `created_at`, then id).
    pub runs: Vec<RunBrief>,
    /// The `before` cursor of the next page (the last run's id here); `None` when no older run
    /// is left.
    pub next_before: Option<String>,
}

/// The recorded query runs, newest first (`created_at` descending, then id descending): at most
/// `limit` (see [`super::page_limit`]), and only those after the run `before` in that order when
/// given.
///
/// # Errors
/// `E_INVALID_ARGUMENT` for a limit outside 1..=500; `E_NOT_FOUND` for a `before` run that is
/// not (or no longer) recorded; `E_CORRUPT` for a row whose JSON does not parse.
pub(crate) fn list_runs(
    engine: &Engine,
    limit: Option<u32>,
    before: Option<&str>,
) -> Result<RunList> {
    let limit = super::page_limit(limit)?;
    let page = limit as usize;
    engine.query_log().flush();
    engine.with_reader(|conn| {
        let tx = conn.unchecked_transaction()?;
        let cursor = match before {
            Some(id) => Some(
                tx.query_row(
                    "SELECT created_at, id FROM query_runs WHERE id = ?1",
                    params![id],
                    |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)),
                )
                .optional()?
                .ok_or_else(|| Error::NotFound {
                    what: "query run (the `before` cursor; or expired by [history] query_days)",
                    id: id.to_string(),
                })?,
            ),
            None => None,
        };
        let (at, id) = cursor.unzip();
        let mut rows = tx
            .prepare_cached(
                "SELECT id, snapshot_id, request_json, summary_json, agent_id, task_id, duration_ms, created_at FROM query_runs
                 WHERE ?1 IS NULL OR (created_at, id) < (?1, ?2)
                 ORDER BY created_at DESC, id DESC LIMIT ?3",
            )?
            .query_map(params![at, id, i64::from(limit) + 1], run_row)?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        let more = rows.len() > page;
        rows.truncate(page);
        let runs = rows
            .into_iter()
            .map(|(id, snapshot_id, request, summary, agent_id, task_id, duration_ms, created_at)| {
                let (query, results) = brief(&id, &request, &summary)?;
                Ok(RunBrief {
                    id,
                    created_at,
                    snapshot_id,
                    query,
                    duration_ms,
                    results,
                    agent_id,
                    task_id,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let next_before = if more { runs.last().map(|r| r.id.clone()) } else { None };
        Ok(RunList { runs, next_before })
    })
}

/// A run's query text (its request's `query`) and result count (its summary's `returned`; the
/// length of `segments` for a summary without one).
/// A `query_runs` row as both readers select it: id, snapshot, request and summary JSON, agent,
/// task, duration, time.
type RunRow = (
    String,
    Option<i64>,
    String,
    String,
    Option<String>,
    Option<String>,
    f64,
    i64,
);

fn run_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<RunRow> {
    Ok((
        r.get(0)?,
        r.get(1)?,
        r.get(2)?,
        r.get(3)?,
        r.get(4)?,
        r.get(5)?,
        r.get(6)?,
        r.get(7)?,
    ))
}

fn brief(run_id: &str, request: &str, summary: &str) -> Result<(String, u32)> {
    #[derive(Deserialize)]
    struct Request {
        #[serde(default)]
        query: String,
    }
    #[derive(Deserialize)]
    struct Summary {
        returned: Option<u32>,
        #[serde(default)]
        segments: Vec<serde::de::IgnoredAny>,
    }
    let corrupt = |what: &str, e: serde_json::Error| {
        Error::Corrupt(format!("query run {run_id}: {what}: {e}"))
    };
    let request: Request = serde_json::from_str(request).map_err(|e| corrupt("request", e))?;
    let summary: Summary = serde_json::from_str(summary).map_err(|e| corrupt("summary", e))?;
    let results = summary
        .returned
        .unwrap_or_else(|| u32::try_from(summary.segments.len()).unwrap_or(u32::MAX));
    Ok((request.query, results))
}
