//! Retention: history is kept as `[snapshots]` and `[history]` say, and everything only purged
//! history used is collected, so a workspace synced thousands of times stays the size of what it
//! retains. It runs after every job that publishes (whichever entry point ran the job: the CLI,
//! the daemon, the library) and as `manage purge`.
//!
//! The work is proportional to what it removes and is done in bounded batches, each its own
//! transaction, so a purge never holds one giant transaction and a killed purge resumes:
//! 1. snapshots outside the policy (never the current one) lose their rows in one short
//!    transaction that records, in `purge_pending`, the extractions and relation sets they held;
//! 2. pending extractions are taken a batch at a time: those no remaining snapshot has as a member
//!    go with their units, locators, identifiers and chunks (found by key, never by a scan);
//! 3. pending relation sets no snapshot pins lose their relations a batch at a time, then the set;
//! 4. revisions outside the policy get a `retention` tombstone and their files go (this pass reads
//!    every revision, so the maintenance after a job runs it at most daily; `manage purge` always);
//! 5. query runs and finished jobs past their age go (their diagnostics lists with them).
//!
//! Index generations no retained snapshot references are collected at the end (readers holding
//! one keep it until they finish).

use serde::{Deserialize, Serialize};

use crate::engine::Engine;
use crate::error::Result;
use crate::store::retention;
use crate::store::tx::Tx;

/// What a purge removed.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct PurgeReport {
    /// Snapshots released: neither among the newest `[snapshots] retain` nor younger than
    /// `keep_days`, and never the current one.
    pub snapshots: usize,
    /// Query runs older than `[history] query_days` deleted.
    pub query_runs: usize,
    /// Code relation sets no snapshot pins any more, deleted with their relations.
    pub relation_sets: usize,
    /// Extractions no remaining snapshot has as a member, deleted.
    pub extractions: usize,
    /// Evidence units of those extractions, deleted.
    pub evidence_units: usize,
    /// Chunks of those extractions, deleted.
    pub chunks: usize,
    /// Revisions whose original bytes were erased by the policy (each with a tombstone).
    pub revisions_expired: usize,
    /// Files of retained originals removed, and their bytes.
    pub artifacts_removed: usize,
    /// Bytes of those files (their artifact rows' sizes).
    pub artifact_bytes: u64,
    /// Index generations (lexical and vector) that no snapshot references, removed from disk.
    pub generations_removed: usize,
    /// Finished jobs past `[history] job_days` removed with their steps and events.
    pub jobs: usize,
    /// Revisions erased on request whose text this pass took out of every snapshot and index
    /// (normally done by the erasure itself; non-zero when one was interrupted).
    pub erased_revisions: usize,
    /// Snapshots that held them.
    pub erased_from_snapshots: usize,
    /// Wall time in milliseconds.
    pub duration_ms: f64,
}

const DAY_MS: i64 = 86_400_000;
/// Extractions checked and removed per transaction.
const EXTRACTION_BATCH: i64 = 256;
/// Relations, query runs or jobs deleted per transaction.
const ROW_BATCH: i64 = 5_000;

/// How much a purge does beyond the snapshots it releases.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scope {
    /// After a job: what released snapshots left, the ages, and the daily expiry pass.
    AfterJob,
    /// `manage purge`: also every extraction and relation set no snapshot references (what a
    /// crashed job left), and the expiry pass whenever it last ran.
    Full,
}

/// Applies the retention policy as of `now` (Unix ms; a parameter so that tests can advance it),
/// everything included (`manage purge`).
///
/// # Errors
/// SQLite errors (each batch committed before stays done and the next purge resumes); a file that
/// cannot be removed is logged and left for the next purge.
pub(crate) fn purge(engine: &Engine, now: i64) -> Result<PurgeReport> {
    run(engine, now, Scope::Full)
}

/// The retention the end of a publishing job applies: bounded by what the new snapshot pushed
/// out of the policy.
///
/// # Errors
/// As [`purge`].
pub(crate) fn retain(engine: &Engine, now: i64) -> Result<PurgeReport> {
    run(engine, now, Scope::AfterJob)
}

/// Finishes erasures on request now: their text leaves every snapshot and index generation
/// (pinned snapshots included), then their rows, then the generations no snapshot references.
/// `delete-original` runs it before answering, so what it reports is already true.
///
/// # Errors
/// As [`purge`]; the erasure is finished by the next purge or job if this one fails.
pub(crate) fn erase_everywhere(engine: &Engine) -> Result<PurgeReport> {
    let started = std::time::Instant::now();
    let mut report = PurgeReport::default();
    engine.query_log().flush();
    let conn = engine.writer()?;
    finish_erasures(engine, &*conn, &mut report)?;
    let mut derived = Vec::new();
    while drain_extractions(&*conn, &mut report, &mut derived)? {}
    remove_files(engine, &[], &derived, &mut report);
    report.generations_removed = engine.collect_garbage_with(&*conn)?;
    report.duration_ms = started.elapsed().as_secs_f64() * 1000.0;
    Ok(report)
}

fn run(engine: &Engine, now: i64, scope: Scope) -> Result<PurgeReport> {
    let started = std::time::Instant::now();
    let mut report = PurgeReport::default();
    // Runs of a moment ago are on their way to the log: they age like the others.
    engine.query_log().flush();
    let conn = engine.writer()?;
    finish_erasures(engine, &*conn, &mut report)?;
    release_snapshots(engine, &*conn, now, scope, &mut report)?;
    // The crash tests stop here: snapshots gone, what they held still pending.
    crate::job::failpoint("after-release-snapshots");
    let mut derived = Vec::new();
    while drain_extractions(&*conn, &mut report, &mut derived)? {}
    while drain_relation_sets(&*conn, &mut report)? {}
    let expired = if scope == Scope::Full || expiry_due(&*conn, now)? {
        expire_revisions(engine, &*conn, now, &mut report)?
    } else {
        Vec::new()
    };
    let query_before = now - i64::from(engine.config().history.query_days) * DAY_MS;
    report.query_runs =
        loop_in_batches(|| crate::store::runs::expire(&*conn, query_before, ROW_BATCH))?;
    report.jobs = expire_jobs(
        &*conn,
        now - i64::from(engine.config().history.job_days) * DAY_MS,
    )?;
    remove_files(engine, &expired, &derived, &mut report);
    report.generations_removed = engine.collect_garbage_with(&*conn)?;
    report.duration_ms = started.elapsed().as_secs_f64() * 1000.0;
    Ok(report)
}

/// Step 0: originals erased on request whose text some snapshot or index still holds are taken
/// out of every snapshot (`snapshot::scrub`); their rows then go with the batches below. Found
/// from the tombstones each time, so an erasure interrupted half-way is finished here.
fn finish_erasures(engine: &Engine, conn: &dyn Tx, report: &mut PurgeReport) -> Result<()> {
    let pending = crate::snapshot::pending_erasures(conn)?;
    if pending.is_empty() {
        return Ok(());
    }
    let scrubbed = crate::snapshot::scrub(
        conn,
        engine.lexical_store(),
        engine.vector_store(),
        &pending,
    )?;
    engine.invalidate_snapshot_cache();
    if let Some(cache) = engine.user_cache() {
        cache.remove(&scrubbed.inputs)?;
    }
    report.erased_revisions += pending.len();
    report.erased_from_snapshots += scrubbed.snapshots;
    Ok(())
}

/// Step 1: the snapshots outside the policy go, and what they held is queued for the batches.
fn release_snapshots(
    engine: &Engine,
    conn: &dyn Tx,
    now: i64,
    scope: Scope,
    report: &mut PurgeReport,
) -> Result<()> {
    let config = engine.config();
    let retain = i64::try_from(config.snapshots.retain.max(1)).unwrap_or(5);
    let keep_after = now - i64::from(config.snapshots.keep_days) * DAY_MS;
    // Immediate: the first statements read, and a deferred transaction whose snapshot went stale
    // (the query log commits on its own connection) cannot upgrade to a writer (SQLITE_BUSY).
    report.snapshots = conn.together(true, |tx| {
        retention::release_snapshots(tx, retain, keep_after, scope == Scope::Full)
    })?;
    Ok(())
}

/// Step 2, one batch: pending extractions no snapshot has as a member lose their rows. Returns
/// whether there may be more.
fn drain_extractions(
    conn: &dyn Tx,
    report: &mut PurgeReport,
    derived: &mut Vec<(String, i64)>,
) -> Result<bool> {
    let Some(batch) = conn.together(true, |tx| {
        retention::drain_extractions(tx, EXTRACTION_BATCH)
    })?
    else {
        return Ok(false);
    };
    report.extractions += batch.extractions;
    report.chunks += batch.chunks;
    report.evidence_units += batch.evidence_units;
    derived.extend(batch.unused_derived);
    Ok(true)
}

/// Step 3, one batch: a pending relation set no snapshot pins loses up to [`ROW_BATCH`] of its
/// relations, and the set goes with its last. Returns whether there may be more.
fn drain_relation_sets(conn: &dyn Tx, report: &mut PurgeReport) -> Result<bool> {
    let Some(set_deleted) =
        conn.together(true, |tx| retention::drain_relation_set(tx, ROW_BATCH))?
    else {
        return Ok(false);
    };
    if set_deleted {
        report.relation_sets += 1;
    }
    Ok(true)
}

/// Whether the daily expiry pass is due (and records that it runs now).
fn expiry_due(conn: &dyn Tx, now: i64) -> Result<bool> {
    let last = retention::last_expiry(conn)?;
    Ok(last.is_none_or(|at| now - at >= DAY_MS || at > now))
}

/// Step 4: revisions outside the policy (not a member of a remaining snapshot, not among their
/// source's newest `revisions_per_source`, captured before `revision_days`, bytes not yet
/// tombstoned and not shared with a revision that stays) get a `retention` tombstone. Returns
/// them; their files go once the transaction is committed.
fn expire_revisions(
    engine: &Engine,
    conn: &dyn Tx,
    now: i64,
    report: &mut PurgeReport,
) -> Result<Vec<(String, i64)>> {
    let config = engine.config();
    let revision_after = now - i64::from(config.history.revision_days) * DAY_MS;
    let per_source = i64::from(config.history.revisions_per_source);
    let reason = format!(
        "retention: not in a retained snapshot, older than {} days and than the newest {per_source} revisions of its source",
        config.history.revision_days
    );
    let expired = conn.together(true, |tx| {
        retention::expire_revisions(tx, per_source, revision_after, &reason, now)
    })?;
    report.revisions_expired = expired.len();
    Ok(expired)
}

/// Runs `batch` (one deleting transaction of at most `ROW_BATCH` rows) until a batch comes short.
fn loop_in_batches(mut batch: impl FnMut() -> Result<usize>) -> Result<usize> {
    let mut total = 0;
    loop {
        let deleted = batch()?;
        total += deleted;
        if i64::try_from(deleted).unwrap_or(i64::MAX) < ROW_BATCH {
            return Ok(total);
        }
    }
}

/// Step 5 for jobs: finished jobs older than `before` that no snapshot, tombstone or withdrawal
/// names go with their steps and events, a batch per transaction; then the diagnostics lists no
/// job points at.
fn expire_jobs(conn: &dyn Tx, before: i64) -> Result<usize> {
    let mut total = 0;
    loop {
        let taken = conn.together(true, |tx| crate::store::jobs::expire(tx, before, ROW_BATCH))?;
        total += taken;
        if i64::try_from(taken).unwrap_or(i64::MAX) < ROW_BATCH {
            break;
        }
    }
    if total > 0 {
        crate::store::jobs::drop_unreferenced_diagnostics(conn)?;
    }
    Ok(total)
}

/// Removes the files of expired originals and of derived artifacts no row names any more.
fn remove_files(
    engine: &Engine,
    expired: &[(String, i64)],
    derived: &[(String, i64)],
    report: &mut PurgeReport,
) {
    let mut seen: std::collections::HashSet<&str> = std::collections::HashSet::new();
    let doomed: Vec<(&str, i64)> = expired
        .iter()
        .chain(derived)
        .filter(|(sha, _)| seen.insert(sha.as_str()))
        .map(|(sha, size)| (sha.as_str(), *size))
        .collect();
    let shas: Vec<&str> = doomed.iter().map(|(sha, _)| *sha).collect();
    // In bulk: a bucket takes many deletes a request.
    for ((sha, size), removed) in doomed.iter().zip(engine.artifacts().delete_many(&shas)) {
        match removed {
            Ok(true) => {
                report.artifacts_removed += 1;
                report.artifact_bytes += u64::try_from(*size).unwrap_or_default();
            }
            Ok(false) => {}
            Err(e) => log::warn!("cannot remove expired original {sha}: {e}"),
        }
    }
}
