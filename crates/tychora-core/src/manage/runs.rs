//! `inspect run RUN_ID`: a recorded query run — its request, the scope applied, the snapshot it
//! read, its results and the full trace — as the query log stored it.

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
        let row = crate::store::runs::get(conn, run_id)?.ok_or_else(|| Error::NotFound {
            what: "query run (or expired by [history] query_days)",
            id: run_id.to_string(),
        })?;
        let parse = |text: &str, what: &str| {
            serde_json::from_str(text)
                .map_err(|e| Error::Corrupt(format!("query run {run_id}: {what}: {e}")))
        };
        Ok(RunRecord {
            request: parse(&row.request_json, "request")?,
            summary: parse(&row.summary_json, "summary")?,
            run_id: row.id,
            snapshot_id: row.snapshot_id,
            agent_id: row.agent_id,
            task_id: row.task_id,
            duration_ms: row.duration_ms,
            created_at: row.created_at,
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
    // One read transaction: the cursor's position and the page from the same state.
    engine.with_reader(|conn| {
        conn.together(false, |tx| {
            let after = match before {
                Some(id) => Some(crate::store::runs::position(tx, id)?.ok_or_else(|| {
                    Error::NotFound {
                        what: "query run (the `before` cursor; or expired by [history] query_days)",
                        id: id.to_string(),
                    }
                })?),
                None => None,
            };
            let mut rows = crate::store::runs::page(tx, after, i64::from(limit) + 1)?;
            let more = rows.len() > page;
            rows.truncate(page);
            let runs = rows
                .into_iter()
                .map(|r| {
                    let (query, results) = brief(&r.id, &r.request_json, &r.summary_json)?;
                    Ok(RunBrief {
                        id: r.id,
                        created_at: r.created_at,
                        snapshot_id: r.snapshot_id,
                        query,
                        duration_ms: r.duration_ms,
                        results,
                        agent_id: r.agent_id,
                        task_id: r.task_id,
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            let next_before = if more {
                runs.last().map(|r| r.id.clone())
            } else {
                None
            };
            Ok(RunList { runs, next_before })
        })
    })
}

/// A run's query text (its request's `query`) and result count (its summary's `returned`; the
/// length of `segments` for a summary without one).
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
