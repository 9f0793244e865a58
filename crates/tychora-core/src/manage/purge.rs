//! `manage purge`: the retention policy applied. History is kept as `[snapshots]` and `[history]`
//! say, and everything only purged history used is collected, so a workspace synced thousands of
//! times stays the size of what it retains.
//!
//! In one transaction: snapshots outside the policy (never the current one) lose their rows;
//! relation sets no snapshot pins go; extractions no remaining snapshot has as a member go with
//! their units, locators, identifiers and chunks; revisions outside the policy get a `retention`
//! tombstone; query runs past their age go. After the commit the tombstoned files are removed and
//! the index generations no retained snapshot references are collected (readers holding one keep
//! it until they finish).

use rusqlite::{Connection, params};
use serde::{Deserialize, Serialize};

use crate::engine::Engine;
use crate::error::Result;

/// What a purge removed.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[allow(missing_docs)]
pub struct PurgeReport {
    pub snapshots: usize,
    pub query_runs: usize,
    pub relation_sets: usize,
    pub extractions: usize,
    pub evidence_units: usize,
    pub chunks: usize,
    /// Revisions whose original bytes were erased by the policy (each with a tombstone).
    pub revisions_expired: usize,
    /// Files of retained originals removed, and their bytes.
    pub artifacts_removed: usize,
    pub artifact_bytes: u64,
    pub generations_removed: usize,
    pub duration_ms: f64,
}

const DAY_MS: i64 = 86_400_000;

fn ids(conn: &Connection, sql: &str, values: impl rusqlite::Params) -> Result<Vec<i64>> {
    Ok(conn
        .prepare(sql)?
        .query_map(values, |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?)
}

/// Applies the retention policy as of `now` (Unix ms; a parameter so that tests can advance it).
///
/// # Errors
/// SQLite errors (nothing is removed then); a file that cannot be removed is logged and left for
/// the next purge.
pub(crate) fn purge(engine: &Engine, now: i64) -> Result<PurgeReport> {
    let started = std::time::Instant::now();
    let config = engine.config();
    let mut report = PurgeReport::default();
    // Runs of a moment ago are on their way to the log: they age like the others.
    engine.query_log().flush();
    let mut conn = engine.writer()?;
    // Immediate: the first statements read, and a deferred transaction whose snapshot went stale
    // (the query log commits on its own connection) cannot upgrade to a writer (SQLITE_BUSY).
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    tx.execute_batch(
        "CREATE TEMP TABLE IF NOT EXISTS purge_snapshots (id INTEGER PRIMARY KEY);
         CREATE TEMP TABLE IF NOT EXISTS purge_extractions (id INTEGER PRIMARY KEY);
         DELETE FROM purge_snapshots; DELETE FROM purge_extractions;",
    )?;
    let retain = i64::try_from(config.snapshots.retain.max(1)).unwrap_or(5);
    let keep_after = now - i64::from(config.snapshots.keep_days) * DAY_MS;
    report.snapshots = tx.execute(
        "INSERT INTO purge_snapshots (id) SELECT id FROM snapshots
         WHERE id NOT IN (SELECT id FROM snapshots ORDER BY id DESC LIMIT ?1)
           AND id IS NOT (SELECT current_snapshot_id FROM workspaces WHERE id = 1)
           AND created_at < ?2",
        params![retain, keep_after],
    )?;
    if report.snapshots > 0 {
        tx.execute_batch(
            "UPDATE query_runs SET snapshot_id = NULL WHERE snapshot_id IN (SELECT id FROM purge_snapshots);
             UPDATE snapshots SET parent_id = NULL WHERE parent_id IN (SELECT id FROM purge_snapshots);
             DELETE FROM snapshot_members WHERE snapshot_id IN (SELECT id FROM purge_snapshots);
             DELETE FROM snapshot_indexes WHERE snapshot_id IN (SELECT id FROM purge_snapshots);
             DELETE FROM snapshot_relation_sets WHERE snapshot_id IN (SELECT id FROM purge_snapshots);
             DELETE FROM snapshots WHERE id IN (SELECT id FROM purge_snapshots);",
        )?;
    }
    let sets = ids(
        &tx,
        "SELECT id FROM relation_sets WHERE id NOT IN (SELECT set_id FROM snapshot_relation_sets)",
        [],
    )?;
    for set in &sets {
        tx.execute("DELETE FROM relations WHERE set_id = ?1", params![set])?;
        tx.execute("DELETE FROM relation_sets WHERE id = ?1", params![set])?;
    }
    report.relation_sets = sets.len();
    report.extractions = tx.execute(
        "INSERT INTO purge_extractions (id) SELECT id FROM extractions
         WHERE id NOT IN (SELECT extraction_id FROM snapshot_members)",
        [],
    )?;
    // Derived texts of purged document extractions, removed below once nothing names them.
    let mut derived: Vec<(String, i64)> = Vec::new();
    if report.extractions > 0 {
        derived = tx
            .prepare(
                "SELECT DISTINCT a.sha256, a.size FROM doc_extractions d JOIN artifacts a ON a.sha256 = d.derived_sha256
                 WHERE d.extraction_id IN (SELECT id FROM purge_extractions)
                 UNION SELECT a.sha256, a.size FROM visual_assets v JOIN artifacts a ON a.sha256 = v.sha256
                 WHERE v.extraction_id IN (SELECT id FROM purge_extractions)",
            )?
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<rusqlite::Result<_>>()?;
        tx.execute_batch(
            "DELETE FROM locators WHERE unit_id IN (SELECT u.id FROM evidence_units u JOIN purge_extractions p ON p.id = u.extraction_id);
             DELETE FROM identifiers WHERE unit_id IN (SELECT u.id FROM evidence_units u JOIN purge_extractions p ON p.id = u.extraction_id);
             DELETE FROM relations WHERE src_unit_id IN (SELECT u.id FROM evidence_units u JOIN purge_extractions p ON p.id = u.extraction_id)
                OR target_unit_id IN (SELECT u.id FROM evidence_units u JOIN purge_extractions p ON p.id = u.extraction_id);
             DELETE FROM code_extractions WHERE extraction_id IN (SELECT id FROM purge_extractions);
             DELETE FROM doc_locators WHERE unit_id IN (SELECT u.id FROM evidence_units u JOIN purge_extractions p ON p.id = u.extraction_id);
             DELETE FROM table_cells WHERE unit_id IN (SELECT u.id FROM evidence_units u JOIN purge_extractions p ON p.id = u.extraction_id);
             DELETE FROM visual_assets WHERE extraction_id IN (SELECT id FROM purge_extractions);
             DELETE FROM asset_descriptions WHERE sha256 NOT IN (SELECT sha256 FROM visual_assets);
             DELETE FROM visual_vectors WHERE sha256 NOT IN (SELECT sha256 FROM visual_assets);
             DELETE FROM doc_extractions WHERE extraction_id IN (SELECT id FROM purge_extractions);",
        )?;
        crate::summary::forget_purged(&tx, "SELECT id FROM purge_extractions")?;
        report.chunks = tx.execute(
            "DELETE FROM chunks WHERE extraction_id IN (SELECT id FROM purge_extractions)",
            [],
        )?;
        report.evidence_units = tx.execute(
            "DELETE FROM evidence_units WHERE extraction_id IN (SELECT id FROM purge_extractions)",
            [],
        )?;
        tx.execute(
            "DELETE FROM extractions WHERE id IN (SELECT id FROM purge_extractions)",
            [],
        )?;
        derived.retain(|(sha, _)| {
            tx.execute(
                "DELETE FROM artifacts WHERE sha256 = ?1
                   AND NOT EXISTS (SELECT 1 FROM doc_extractions WHERE derived_sha256 = ?1)
                   AND NOT EXISTS (SELECT 1 FROM visual_assets WHERE sha256 = ?1)
                   AND NOT EXISTS (SELECT 1 FROM revisions WHERE sha256 = ?1)
                   AND NOT EXISTS (SELECT 1 FROM revision_artifacts WHERE sha256 = ?1)
                   AND NOT EXISTS (SELECT 1 FROM tombstones WHERE sha256 = ?1)",
                params![sha],
            )
            .is_ok_and(|n| n == 1)
        });
    }
    // Revisions outside the policy: not a member of a remaining snapshot, not among their source's
    // newest `revisions_per_source`, captured before `revision_days`, bytes not yet tombstoned and
    // not shared with a revision that stays.
    let revision_after = now - i64::from(config.history.revision_days) * DAY_MS;
    let per_source = i64::from(config.history.revisions_per_source);
    let expired: Vec<(i64, i64, String, i64)> = tx
        .prepare(
            "WITH kept AS (
               SELECT revision_id AS id FROM snapshot_members
               UNION SELECT id FROM (SELECT id, ROW_NUMBER() OVER (PARTITION BY source_id ORDER BY seq DESC) AS n FROM revisions) WHERE n <= ?1
               UNION SELECT id FROM revisions WHERE captured_at >= ?2
             )
             SELECT r.id, r.source_id, r.sha256, r.size FROM revisions r
             WHERE r.id NOT IN (SELECT id FROM kept)
               AND r.sha256 NOT IN (SELECT sha256 FROM tombstones)
               AND r.sha256 NOT IN (SELECT r2.sha256 FROM revisions r2 WHERE r2.id IN (SELECT id FROM kept))",
        )?
        .query_map(params![per_source, revision_after], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
        .collect::<rusqlite::Result<_>>()?;
    for (revision, source, sha, size) in &expired {
        tx.execute(
            "INSERT INTO tombstones (kind, sha256, size, source_id, revision_id, job_id, reason, deleted_at) VALUES ('retention', ?1, ?2, ?3, ?4, NULL, ?5, ?6)",
            params![sha, size, source, revision, format!("retention: not in a retained snapshot, older than {} days and than the newest {per_source} revisions of its source", config.history.revision_days), now],
        )?;
    }
    report.revisions_expired = expired.len();
    let query_before = now - i64::from(config.history.query_days) * DAY_MS;
    report.query_runs = tx.execute(
        "DELETE FROM query_runs WHERE created_at < ?1",
        params![query_before],
    )?;
    tx.commit()?;
    let mut removed: Vec<&str> = Vec::new();
    let orphaned = derived.iter().map(|(sha, size)| (0, 0, sha.clone(), *size));
    for (_, _, sha, size) in expired
        .iter()
        .cloned()
        .chain(orphaned)
        .collect::<Vec<_>>()
        .iter()
    {
        if removed.contains(&sha.as_str()) {
            continue;
        }
        let path = engine.artifacts().path_of(sha);
        match std::fs::remove_file(&path) {
            Ok(()) => {
                removed.push(sha);
                report.artifacts_removed += 1;
                report.artifact_bytes += u64::try_from(*size).unwrap_or_default();
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => removed.push(sha),
            Err(e) => log::warn!("cannot remove expired original {}: {e}", path.display()),
        }
    }
    report.generations_removed = engine.collect_garbage_with(&conn)?;
    report.duration_ms = started.elapsed().as_secs_f64() * 1000.0;
    Ok(report)
}
