//! Index batches: the generations (lexical directories, vector files) a snapshot's indexes point
//! at, and the one-transaction switch of a snapshot from one generation to another holding the
//! same documents (a compaction, a fold, an erasure's rewrite).

use rusqlite::{Connection, OptionalExtension as _, params};

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
/// SQLite errors.
pub fn repoint(tx: &Connection, switches: &[Repoint], now: i64) -> Result<()> {
    for r in switches {
        tx.prepare_cached(
            "INSERT INTO index_batches (family_id, generation, doc_count, status, created_at, file_sha256) VALUES (?1, ?2, ?3, 'verified', ?4, ?5)",
        )?
        .execute(params![r.family_id, r.generation, r.documents, now, r.sha256])?;
        let batch = tx.last_insert_rowid();
        tx.prepare_cached(
            "UPDATE snapshot_indexes SET batch_id = ?1 WHERE snapshot_id = ?2 AND family_id = ?3 AND batch_id = ?4",
        )?
        .execute(params![batch, r.snapshot_id, r.family_id, r.old_batch])?;
    }
    Ok(())
}

/// The verified lexical batch of a snapshot: `(batch id, family id, generation, documents)`.
///
/// # Errors
/// SQLite errors (none when the snapshot has no lexical batch: `QueryReturnedNoRows`).
pub fn lexical_batch(conn: &Connection, snapshot_id: i64) -> Result<(i64, i64, String, u64)> {
    Ok(conn.query_row(
        "SELECT b.id, b.family_id, b.generation, b.doc_count FROM snapshot_indexes si JOIN index_batches b ON b.id = si.batch_id JOIN index_families f ON f.id = si.family_id
         WHERE si.snapshot_id = ?1 AND f.name = 'lexical' AND b.status = 'verified'",
        params![snapshot_id],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
    )?)
}

/// A generation's batch: `(batch id, family id, documents, base generation of a layer)`.
///
/// # Errors
/// SQLite errors (`QueryReturnedNoRows` for a generation no batch records).
pub fn of_generation(
    conn: &Connection,
    generation: &str,
) -> Result<(i64, i64, i64, Option<String>)> {
    Ok(conn
        .prepare_cached(
            "SELECT id, family_id, doc_count, base_generation FROM index_batches WHERE generation = ?1",
        )?
        .query_row(params![generation], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
        })?)
}

/// The base generation a layer stands on (`None` for a full generation or an unknown one).
///
/// # Errors
/// SQLite errors.
pub fn base_of(conn: &Connection, generation: &str) -> Result<Option<String>> {
    Ok(conn
        .prepare_cached("SELECT base_generation FROM index_batches WHERE generation = ?1")?
        .query_row(params![generation], |r| r.get(0))
        .optional()?
        .flatten())
}

/// Marks a rebuilt vector generation verified with its file's sha256 (a full file now: no base).
///
/// # Errors
/// SQLite errors.
pub fn verify(conn: &Connection, generation: &str, sha256: &str) -> Result<()> {
    conn.execute(
        "UPDATE index_batches SET file_sha256 = ?1, status = 'verified', base_generation = NULL WHERE generation = ?2",
        params![sha256, generation],
    )?;
    Ok(())
}

/// The snapshots whose indexes point at a verified batch, by id.
///
/// # Errors
/// SQLite errors.
pub fn indexed_snapshots(conn: &Connection) -> Result<Vec<i64>> {
    Ok(conn
        .prepare(
            "SELECT DISTINCT si.snapshot_id FROM snapshot_indexes si JOIN index_batches b ON b.id = si.batch_id WHERE b.status = 'verified' ORDER BY si.snapshot_id",
        )?
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?)
}

/// The generations any snapshot's index points at, and the bases of those that are layers.
///
/// # Errors
/// SQLite errors.
pub fn referenced_generations(conn: &Connection) -> Result<Vec<String>> {
    Ok(conn
        .prepare(
            "SELECT b.generation FROM snapshot_indexes si JOIN index_batches b ON b.id = si.batch_id
             UNION SELECT b.base_generation FROM snapshot_indexes si JOIN index_batches b ON b.id = si.batch_id WHERE b.base_generation IS NOT NULL",
        )?
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?)
}

/// The workspace-relative paths (`indexes/lexical/<g>`, `indexes/text/<g>`) of the verified
/// generations snapshots point at, and of the bases of those that are layers.
///
/// # Errors
/// SQLite errors.
pub fn generation_paths(conn: &Connection) -> Result<Vec<String>> {
    Ok(conn
        .prepare(
            "SELECT DISTINCT CASE f.channel WHEN 'lexical' THEN 'indexes/lexical/' ELSE 'indexes/text/' END || b.generation
             FROM snapshot_indexes si JOIN index_batches b ON b.id = si.batch_id JOIN index_families f ON f.id = si.family_id
             WHERE b.status = 'verified'
             UNION
             SELECT 'indexes/text/' || b.base_generation FROM snapshot_indexes si JOIN index_batches b ON b.id = si.batch_id
             WHERE b.status = 'verified' AND b.base_generation IS NOT NULL",
        )?
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?)
}
