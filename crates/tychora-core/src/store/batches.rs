//! Index batches: the generations (lexical directories, vector files) a snapshot's indexes point
//! at, and the one-transaction switch of a snapshot from one generation to another holding the
//! same documents (a compaction, a fold, an erasure's rewrite).

use super::tx::{Tx, args};
use crate::error::Result;

/// A verified generation replacing the one a snapshot's index points at.
#[derive(Debug, Clone)]
pub struct Repoint {
    /// The snapshot.
    pub snapshot_id: i64,
    /// The index family.
    pub family_id: i64,
    /// The batch it points at now.
    pub old_batch: i64,
    /// The new generation's name.
    pub generation: String,
    /// Documents it holds.
    pub documents: u64,
    /// A vector file's sha256 (`None` for a lexical directory).
    pub sha256: Option<String>,
}

/// Records each new generation as a verified batch and points its snapshot's index at it, in the
/// caller's transaction (`tx`).
///
/// # Errors
/// The store's errors.
pub fn repoint(tx: &dyn Tx, switches: &[Repoint], now: i64) -> Result<()> {
    for r in switches {
        let batch = tx.insert(
            "INSERT INTO index_batches (family_id, generation, doc_count, status, created_at, file_sha256) VALUES (?1, ?2, ?3, 'verified', ?4, ?5)",
            args![r.family_id, r.generation.as_str(), r.documents, now, r.sha256.as_deref()],
        )?;
        tx.execute(
            "UPDATE snapshot_indexes SET batch_id = ?1 WHERE snapshot_id = ?2 AND family_id = ?3 AND batch_id = ?4",
            args![batch, r.snapshot_id, r.family_id, r.old_batch],
        )?;
    }
    Ok(())
}

/// The verified lexical batch of a snapshot: `(batch id, family id, generation, documents)`.
///
/// # Errors
/// The store's errors (`E_INTERNAL` when the snapshot has no lexical batch).
pub fn lexical_batch(tx: &dyn Tx, snapshot_id: i64) -> Result<(i64, i64, String, u64)> {
    tx.one(
        "SELECT b.id, b.family_id, b.generation, b.doc_count FROM snapshot_indexes si JOIN index_batches b ON b.id = si.batch_id JOIN index_families f ON f.id = si.family_id
         WHERE si.snapshot_id = ?1 AND f.name = 'lexical' AND b.status = 'verified'",
        args![snapshot_id],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
    )
}

/// A generation's batch: `(batch id, family id, documents, base generation of a layer)`.
///
/// # Errors
/// The store's errors (`E_INTERNAL` for a generation no batch records).
pub fn of_generation(tx: &dyn Tx, generation: &str) -> Result<(i64, i64, i64, Option<String>)> {
    tx.one(
        "SELECT id, family_id, doc_count, base_generation FROM index_batches WHERE generation = ?1",
        args![generation],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
    )
}

/// The base generation a layer stands on (`None` for a full generation or an unknown one).
///
/// # Errors
/// The store's errors.
pub fn base_of(tx: &dyn Tx, generation: &str) -> Result<Option<String>> {
    Ok(tx
        .optional(
            "SELECT base_generation FROM index_batches WHERE generation = ?1",
            args![generation],
            |r| r.get::<Option<String>>(0),
        )?
        .flatten())
}

/// Marks a rebuilt vector generation verified with its file's sha256 (a full file now: no base).
///
/// # Errors
/// The store's errors.
pub fn verify(tx: &dyn Tx, generation: &str, sha256: &str) -> Result<()> {
    tx.execute(
        "UPDATE index_batches SET file_sha256 = ?1, status = 'verified', base_generation = NULL WHERE generation = ?2",
        args![sha256, generation],
    )?;
    Ok(())
}

/// The snapshots whose indexes point at a verified batch, by id.
///
/// # Errors
/// The store's errors.
pub fn indexed_snapshots(tx: &dyn Tx) -> Result<Vec<i64>> {
    tx.rows(
        "SELECT DISTINCT si.snapshot_id FROM snapshot_indexes si JOIN index_batches b ON b.id = si.batch_id WHERE b.status = 'verified' ORDER BY si.snapshot_id",
        &[],
        |r| r.get(0),
    )
}

/// The generations any snapshot's index points at, and the bases of those that are layers.
///
/// # Errors
/// The store's errors.
pub fn referenced_generations(tx: &dyn Tx) -> Result<Vec<String>> {
    tx.rows(
        "SELECT b.generation FROM snapshot_indexes si JOIN index_batches b ON b.id = si.batch_id
         UNION SELECT b.base_generation FROM snapshot_indexes si JOIN index_batches b ON b.id = si.batch_id WHERE b.base_generation IS NOT NULL",
        &[],
        |r| r.get(0),
    )
}

/// The workspace-relative paths (`indexes/lexical/<g>`, `indexes/text/<g>`) of the verified
/// generations snapshots point at, and of the bases of those that are layers.
///
/// # Errors
/// The store's errors.
pub fn generation_paths(tx: &dyn Tx) -> Result<Vec<String>> {
    tx.rows(
        "SELECT DISTINCT CASE f.channel WHEN 'lexical' THEN 'indexes/lexical/' ELSE 'indexes/text/' END || b.generation
         FROM snapshot_indexes si JOIN index_batches b ON b.id = si.batch_id JOIN index_families f ON f.id = si.family_id
         WHERE b.status = 'verified'
         UNION
         SELECT 'indexes/text/' || b.base_generation FROM snapshot_indexes si JOIN index_batches b ON b.id = si.batch_id
         WHERE b.status = 'verified' AND b.base_generation IS NOT NULL",
        &[],
        |r| r.get(0),
    )
}
