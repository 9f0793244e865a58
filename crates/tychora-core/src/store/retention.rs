//! Retention's statements (`manage::purge` runs them, each step its own transaction): release
//! the snapshots outside the policy, drain what they held a batch at a time, expire revisions.
//! The temporary tables hold a batch's ids so every delete finds its rows by key.

use super::tx::{Tx, args};
use crate::error::Result;

/// Runs each statement in order, without values.
fn run_all(tx: &dyn Tx, statements: &[&str]) -> Result<()> {
    for sql in statements {
        tx.execute(sql, &[])?;
    }
    Ok(())
}

/// Releases the snapshots outside the policy — neither among the newest `retain` nor created at
/// or after `keep_after`, never the current one — queueing the extractions and relation sets they
/// held; with `everything_unreferenced`, also every extraction and relation set no snapshot
/// references (what a crashed job left). Returns the snapshots released.
///
/// # Errors
/// The store's errors.
pub fn release_snapshots(
    tx: &dyn Tx,
    retain: i64,
    keep_after: i64,
    everything_unreferenced: bool,
) -> Result<usize> {
    tx.dialect().empty_id_table(tx, "purge_snapshots")?;
    let released = tx.execute(
        "INSERT INTO purge_snapshots (id) SELECT id FROM snapshots
         WHERE id NOT IN (SELECT id FROM snapshots ORDER BY id DESC LIMIT ?1)
           AND id IS DISTINCT FROM (SELECT current_snapshot_id FROM workspaces WHERE id = 1)
           AND created_at < ?2",
        args![retain, keep_after],
    )?;
    if released > 0 {
        run_all(
            tx,
            &[
                "INSERT INTO purge_pending (kind, id)
                   SELECT DISTINCT 'extraction', extraction_id FROM snapshot_members WHERE snapshot_id IN (SELECT id FROM purge_snapshots)
                 ON CONFLICT DO NOTHING",
                "INSERT INTO purge_pending (kind, id)
                   SELECT DISTINCT 'relation_set', set_id FROM snapshot_relation_sets WHERE snapshot_id IN (SELECT id FROM purge_snapshots)
                 ON CONFLICT DO NOTHING",
                "UPDATE query_runs SET snapshot_id = NULL WHERE snapshot_id IN (SELECT id FROM purge_snapshots)",
                "UPDATE snapshots SET parent_id = NULL WHERE parent_id IN (SELECT id FROM purge_snapshots)",
                "DELETE FROM snapshot_members WHERE snapshot_id IN (SELECT id FROM purge_snapshots)",
                "DELETE FROM snapshot_indexes WHERE snapshot_id IN (SELECT id FROM purge_snapshots)",
                "DELETE FROM snapshot_relation_sets WHERE snapshot_id IN (SELECT id FROM purge_snapshots)",
                "DELETE FROM snapshots WHERE id IN (SELECT id FROM purge_snapshots)",
            ],
        )?;
    }
    if everything_unreferenced {
        // What no snapshot references at all (a job that crashed before publishing): found by
        // one pass over the extractions with the membership index, then removed in batches.
        run_all(
            tx,
            &[
                "INSERT INTO purge_pending (kind, id)
                   SELECT 'extraction', e.id FROM extractions e
                   WHERE NOT EXISTS (SELECT 1 FROM snapshot_members m WHERE m.extraction_id = e.id)
                 ON CONFLICT DO NOTHING",
                "INSERT INTO purge_pending (kind, id)
                   SELECT 'relation_set', s.id FROM relation_sets s
                   WHERE NOT EXISTS (SELECT 1 FROM snapshot_relation_sets p WHERE p.set_id = s.id)
                 ON CONFLICT DO NOTHING",
            ],
        )?;
    }
    Ok(usize::try_from(released).unwrap_or(usize::MAX))
}

/// What one batch of pending extractions removed.
#[derive(Debug, Default)]
pub struct DrainedBatch {
    /// Extractions no snapshot has as a member, deleted.
    pub extractions: usize,
    /// Their chunks.
    pub chunks: usize,
    /// Their evidence units.
    pub evidence_units: usize,
    /// `(sha256, size)` of derived texts and pictures no row names any more: their files go.
    pub unused_derived: Vec<(String, i64)>,
}

/// Takes up to `batch` pending extractions; those no snapshot has as a member lose their rows
/// (units, locators, identifiers, relations, records only they state, document rows, chunks).
/// `None` when nothing is pending.
///
/// # Errors
/// The store's errors.
pub fn drain_extractions(tx: &dyn Tx, batch: i64) -> Result<Option<DrainedBatch>> {
    let mut out = DrainedBatch::default();
    let dialect = tx.dialect();
    dialect.empty_id_table(tx, "purge_batch")?;
    dialect.empty_id_table(tx, "purge_extractions")?;
    let taken = tx.execute(
        "INSERT INTO purge_batch (id) SELECT id FROM purge_pending WHERE kind = 'extraction' ORDER BY id LIMIT ?1",
        args![batch],
    )?;
    if taken == 0 {
        return Ok(None);
    }
    let gone = tx.execute(
        "INSERT INTO purge_extractions (id) SELECT b.id FROM purge_batch b
         WHERE NOT EXISTS (SELECT 1 FROM snapshot_members m WHERE m.extraction_id = b.id)
           AND EXISTS (SELECT 1 FROM extractions e WHERE e.id = b.id)",
        &[],
    )?;
    if gone > 0 {
        out.extractions = usize::try_from(gone).unwrap_or(usize::MAX);
        // Derived texts and pictures of the purged extractions, removed below once nothing names them.
        let found: Vec<(String, i64)> = tx.rows(
            "SELECT DISTINCT a.sha256, a.size FROM doc_extractions d JOIN artifacts a ON a.sha256 = d.derived_sha256
             WHERE d.extraction_id IN (SELECT id FROM purge_extractions)
             UNION SELECT a.sha256, a.size FROM visual_assets v JOIN artifacts a ON a.sha256 = v.sha256
             WHERE v.extraction_id IN (SELECT id FROM purge_extractions)
             ORDER BY 1",
            &[],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        dialect.empty_id_table(tx, "purge_units")?;
        dialect.empty_id_table(tx, "purge_records")?;
        run_all(
            tx,
            &[
                "INSERT INTO purge_units (id) SELECT u.id FROM evidence_units u JOIN purge_extractions p ON p.id = u.extraction_id",
                "INSERT INTO purge_records (id) SELECT record_id FROM record_evidence WHERE unit_id IN (SELECT id FROM purge_units)
                 ON CONFLICT DO NOTHING",
                "DELETE FROM record_evidence WHERE unit_id IN (SELECT id FROM purge_units)",
                // A captured record no retained unit states any more goes with its facet values; a
                // reviewed one is a person's decision and stays.
                "DELETE FROM facet_values WHERE record_id IN (SELECT p.id FROM purge_records p JOIN structured_records r ON r.id = p.id
                   WHERE r.status = 'captured' AND NOT EXISTS (SELECT 1 FROM record_evidence e WHERE e.record_id = p.id))",
                "DELETE FROM structured_records WHERE status = 'captured' AND id IN (SELECT id FROM purge_records)
                   AND NOT EXISTS (SELECT 1 FROM record_evidence e WHERE e.record_id = structured_records.id)",
                "UPDATE relation_assertions SET support_unit_id = NULL WHERE support_unit_id IN (SELECT id FROM purge_units)",
                "DELETE FROM locators WHERE unit_id IN (SELECT id FROM purge_units)",
                "DELETE FROM identifiers WHERE unit_id IN (SELECT id FROM purge_units)",
                "DELETE FROM relations WHERE src_unit_id IN (SELECT id FROM purge_units)",
                "DELETE FROM relations WHERE target_unit_id IN (SELECT id FROM purge_units)",
                "DELETE FROM code_extractions WHERE extraction_id IN (SELECT id FROM purge_extractions)",
                "DELETE FROM doc_locators WHERE unit_id IN (SELECT id FROM purge_units)",
                "DELETE FROM table_cells WHERE unit_id IN (SELECT id FROM purge_units)",
                "DELETE FROM visual_assets WHERE extraction_id IN (SELECT id FROM purge_extractions)",
                "DELETE FROM doc_extractions WHERE extraction_id IN (SELECT id FROM purge_extractions)",
            ],
        )?;
        // Descriptions and picture vectors are kept by the picture's bytes: they go when no
        // remaining picture has those bytes.
        for (sha, _) in &found {
            tx.execute(
                "DELETE FROM asset_descriptions WHERE sha256 = ?1 AND NOT EXISTS (SELECT 1 FROM visual_assets WHERE sha256 = ?1)",
                args![sha],
            )?;
            tx.execute(
                "DELETE FROM visual_vectors WHERE sha256 = ?1 AND NOT EXISTS (SELECT 1 FROM visual_assets WHERE sha256 = ?1)",
                args![sha],
            )?;
        }
        super::summaries::forget_purged(tx, "SELECT id FROM purge_extractions")?;
        let count = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
        out.chunks = count(tx.execute(
            "DELETE FROM chunks WHERE extraction_id IN (SELECT id FROM purge_extractions)",
            &[],
        )?);
        out.evidence_units = count(tx.execute(
            "DELETE FROM evidence_units WHERE extraction_id IN (SELECT id FROM purge_extractions)",
            &[],
        )?);
        tx.execute(
            "DELETE FROM extractions WHERE id IN (SELECT id FROM purge_extractions)",
            &[],
        )?;
        for (sha, size) in found {
            let unused = tx.execute(
                "DELETE FROM artifacts WHERE sha256 = ?1
                   AND NOT EXISTS (SELECT 1 FROM doc_extractions WHERE derived_sha256 = ?1)
                   AND NOT EXISTS (SELECT 1 FROM visual_assets WHERE sha256 = ?1)
                   AND NOT EXISTS (SELECT 1 FROM revisions WHERE sha256 = ?1)
                   AND NOT EXISTS (SELECT 1 FROM revision_artifacts WHERE sha256 = ?1)
                   AND NOT EXISTS (SELECT 1 FROM tombstones WHERE sha256 = ?1)",
                args![sha.as_str()],
            )?;
            if unused == 1 {
                out.unused_derived.push((sha, size));
            }
        }
    }
    tx.execute(
        "DELETE FROM purge_pending WHERE kind = 'extraction' AND id IN (SELECT id FROM purge_batch)",
        &[],
    )?;
    Ok(Some(out))
}

/// Takes the oldest pending relation set: one no snapshot pins loses up to `batch` relations, and
/// the set goes with its last. `None` when nothing is pending; else whether the set was deleted.
///
/// # Errors
/// The store's errors.
pub fn drain_relation_set(tx: &dyn Tx, batch: i64) -> Result<Option<bool>> {
    let mut set_deleted = false;
    let Some(set) = tx.optional(
        "SELECT id FROM purge_pending WHERE kind = 'relation_set' ORDER BY id LIMIT 1",
        &[],
        |r| r.get::<i64>(0),
    )?
    else {
        return Ok(None);
    };
    let pinned = tx
        .optional(
            "SELECT 1 FROM snapshot_relation_sets WHERE set_id = ?1 LIMIT 1",
            args![set],
            |_| Ok(()),
        )?
        .is_some();
    let mut done = true;
    if !pinned {
        let deleted = tx.execute(
            "DELETE FROM relations WHERE id IN (SELECT id FROM relations WHERE set_id = ?1 LIMIT ?2)",
            args![set, batch],
        )?;
        if i64::try_from(deleted).unwrap_or(i64::MAX) == batch {
            done = false;
        } else {
            set_deleted = tx.execute("DELETE FROM relation_sets WHERE id = ?1", args![set])? == 1;
        }
    }
    if done {
        tx.execute(
            "DELETE FROM purge_pending WHERE kind = 'relation_set' AND id = ?1",
            args![set],
        )?;
    }
    Ok(Some(set_deleted))
}

/// When the revision expiry pass last ran (Unix ms).
///
/// # Errors
/// The store's errors.
pub fn last_expiry(tx: &dyn Tx) -> Result<Option<i64>> {
    tx.optional(
        "SELECT ran_at FROM maintenance_runs WHERE task = 'expire-revisions'",
        &[],
        |r| r.get(0),
    )
}

/// Gives each revision outside the policy — not a member of a remaining snapshot, not among its
/// source's newest `per_source`, captured before `revision_after`, bytes not yet tombstoned and
/// not shared with a revision that stays — a `retention` tombstone, and records that the pass ran
/// at `now`. Returns `(sha256, size)` of those revisions (their files go after the commit).
///
/// # Errors
/// The store's errors.
pub fn expire_revisions(
    tx: &dyn Tx,
    per_source: i64,
    revision_after: i64,
    reason: &str,
    now: i64,
) -> Result<Vec<(String, i64)>> {
    let expired: Vec<(i64, i64, String, i64)> = tx.rows(
        "WITH kept AS (
           SELECT revision_id AS id FROM snapshot_members
           UNION SELECT id FROM (SELECT id, ROW_NUMBER() OVER (PARTITION BY source_id ORDER BY seq DESC) AS n FROM revisions) ranked WHERE n <= ?1
           UNION SELECT id FROM revisions WHERE captured_at >= ?2
         )
         SELECT r.id, r.source_id, r.sha256, r.size FROM revisions r
         WHERE r.id NOT IN (SELECT id FROM kept)
           AND r.sha256 NOT IN (SELECT sha256 FROM tombstones)
           AND r.sha256 NOT IN (SELECT r2.sha256 FROM revisions r2 WHERE r2.id IN (SELECT id FROM kept))
         ORDER BY r.id",
        args![per_source, revision_after],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
    )?;
    for (revision, source, sha, size) in &expired {
        tx.execute(
            "INSERT INTO tombstones (kind, sha256, size, source_id, revision_id, job_id, reason, deleted_at) VALUES ('retention', ?1, ?2, ?3, ?4, NULL, ?5, ?6)",
            args![sha, *size, *source, *revision, reason, now],
        )?;
    }
    tx.execute(
        "INSERT INTO maintenance_runs (task, ran_at) VALUES ('expire-revisions', ?1)
         ON CONFLICT (task) DO UPDATE SET ran_at = excluded.ran_at",
        args![now],
    )?;
    Ok(expired
        .into_iter()
        .map(|(_, _, sha, size)| (sha, size))
        .collect())
}
