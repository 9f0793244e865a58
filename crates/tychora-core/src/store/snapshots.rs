//! Snapshots' rows: the current-snapshot pointer, members, index families and batches, and the
//! publication that inserts a snapshot and switches the pointer in one transaction. The
//! `snapshot` module decides what a snapshot holds and builds its index generations; this module
//! is how those facts are stored.

use std::collections::HashMap;

use rusqlite::{Connection, OptionalExtension, Transaction, params};

use crate::error::Result;

/// One member of a snapshot: a source at one revision and extraction.
#[derive(Debug, Clone)]
pub struct Member {
    /// The source (`sources.id`).
    pub source_id: i64,
    /// The revision of the source it holds.
    pub revision_id: i64,
    /// The extraction of that revision whose units and windows it holds.
    pub extraction_id: i64,
    /// The source's collection.
    pub collection_id: i64,
    /// The registered root the source was first captured under.
    pub root_id: i64,
    /// Its path relative to that root, with `/` separators.
    pub rel_path: String,
    /// The source's identity in its collection (`file://` and the exact path): one file is one
    /// source whichever registered root it was walked from.
    pub uri: String,
    /// Hex SHA-256 of the revision's captured bytes.
    pub sha256: String,
}

/// The current snapshot id (the pointer).
pub(crate) fn current(conn: &Connection) -> Result<Option<i64>> {
    Ok(conn.query_row(
        "SELECT current_snapshot_id FROM workspaces WHERE id = 1",
        [],
        |r| r.get(0),
    )?)
}

/// The members of a snapshot, by source.
pub(crate) fn members(conn: &Connection, snapshot_id: i64) -> Result<Vec<Member>> {
    let mut stmt = conn.prepare_cached(
        "SELECT m.source_id, m.revision_id, m.extraction_id, s.collection_id, s.root_id, s.rel_path, r.sha256, s.uri
         FROM snapshot_members m JOIN sources s ON s.id = m.source_id JOIN revisions r ON r.id = m.revision_id
         WHERE m.snapshot_id = ?1 ORDER BY m.source_id",
    )?;
    let rows = stmt
        .query_map(params![snapshot_id], |r| {
            Ok(Member {
                source_id: r.get(0)?,
                revision_id: r.get(1)?,
                extraction_id: r.get(2)?,
                collection_id: r.get(3)?,
                root_id: r.get(4)?,
                rel_path: r.get(5)?,
                uri: r.get(7)?,
                sha256: r.get(6)?,
            })
        })?
        .collect::<rusqlite::Result<_>>()?;
    Ok(rows)
}

/// `source_id → (revision_id, extraction_id)` of a snapshot's members.
pub(crate) fn member_map(conn: &Connection, snapshot_id: i64) -> Result<HashMap<i64, (i64, i64)>> {
    let mut stmt = conn.prepare_cached(
        "SELECT source_id, revision_id, extraction_id FROM snapshot_members WHERE snapshot_id = ?1",
    )?;
    let rows = stmt
        .query_map(params![snapshot_id], |r| {
            Ok((r.get(0)?, (r.get(1)?, r.get(2)?)))
        })?
        .collect::<rusqlite::Result<_>>()?;
    Ok(rows)
}

/// The verified lexical generation a snapshot uses, if it has one.
pub(crate) fn lexical_generation(conn: &Connection, snapshot_id: i64) -> Result<Option<String>> {
    Ok(conn
        .query_row(
            "SELECT b.generation FROM snapshot_indexes si JOIN index_batches b ON b.id = si.batch_id JOIN index_families f ON f.id = si.family_id
             WHERE si.snapshot_id = ?1 AND f.name = 'lexical' AND b.status = 'verified'",
            params![snapshot_id],
            |r| r.get(0),
        )
        .optional()?)
}

/// A snapshot's verified text-channel generation: its family's recorded configuration, the file's
/// name and its sha256 at publication.
pub(crate) fn text_generation(
    conn: &Connection,
    snapshot_id: i64,
) -> Result<Option<(String, String, Option<String>)>> {
    Ok(conn
        .query_row(
            "SELECT f.config_json, b.generation, b.file_sha256 FROM snapshot_indexes si JOIN index_batches b ON b.id = si.batch_id JOIN index_families f ON f.id = si.family_id
             WHERE si.snapshot_id = ?1 AND f.channel = 'text' AND b.status = 'verified'",
            params![snapshot_id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .optional()?)
}

/// The id of the index family `name` of `channel`, created or its configuration updated.
pub(crate) fn family(
    conn: &Connection,
    name: &str,
    channel: &str,
    config_json: &str,
) -> Result<i64> {
    conn.execute(
        "INSERT INTO index_families (name, channel, config_json) VALUES (?1, ?2, ?3) ON CONFLICT (name) DO UPDATE SET config_json = excluded.config_json",
        params![name, channel, config_json],
    )?;
    Ok(conn.query_row(
        "SELECT id FROM index_families WHERE name = ?1",
        params![name],
        |r| r.get(0),
    )?)
}

/// The recorded configuration of the index family `name`.
pub(crate) fn family_config(conn: &Connection, name: &str) -> Result<Option<String>> {
    Ok(conn
        .query_row(
            "SELECT config_json FROM index_families WHERE name = ?1",
            params![name],
            |r| r.get(0),
        )
        .optional()?)
}

/// How many chunks a snapshot holds (as recorded at publication, less what erasure took out).
pub(crate) fn chunk_count(conn: &Connection, snapshot_id: i64) -> Result<i64> {
    Ok(conn.query_row(
        "SELECT chunk_count FROM snapshots WHERE id = ?1",
        params![snapshot_id],
        |r| r.get(0),
    )?)
}

/// How many chunks an extraction has.
pub(crate) fn chunks_of_extraction(conn: &Connection, extraction_id: i64) -> Result<u64> {
    Ok(conn
        .prepare_cached("SELECT COUNT(*) FROM chunks WHERE extraction_id = ?1")?
        .query_row(params![extraction_id], |r| r.get(0))?)
}

/// A verified index generation to record with a new snapshot.
pub(crate) struct NewBatch<'a> {
    pub family_id: i64,
    pub generation: &'a str,
    pub file_sha256: Option<&'a str>,
    pub base_generation: Option<&'a str>,
}

/// A snapshot to record.
pub(crate) struct NewSnapshot<'a> {
    pub parent: Option<i64>,
    pub job_id: i64,
    pub chunk_count: u64,
    pub members: &'a [Member],
    pub batches: &'a [NewBatch<'a>],
    pub relation_sets: &'a [i64],
    pub created_at: i64,
}

/// Records a snapshot — its index batches, members, index links and relation sets — and switches
/// the pointer to it, in the caller's transaction (which the caller's own rows, such as the job's
/// end, commit with, or not at all). Returns its id.
pub(crate) fn publish(tx: &Transaction<'_>, new: &NewSnapshot<'_>) -> Result<i64> {
    let mut batch_ids = Vec::with_capacity(new.batches.len());
    for batch in new.batches {
        tx.execute(
            "INSERT INTO index_batches (family_id, generation, doc_count, status, created_at, file_sha256, base_generation) VALUES (?1, ?2, ?3, 'verified', ?4, ?5, ?6)",
            params![batch.family_id, batch.generation, new.chunk_count, new.created_at, batch.file_sha256, batch.base_generation],
        )?;
        batch_ids.push((batch.family_id, tx.last_insert_rowid()));
    }
    tx.execute(
        "INSERT INTO snapshots (parent_id, job_id, chunk_count, created_at) VALUES (?1, ?2, ?3, ?4)",
        params![new.parent, new.job_id, new.chunk_count, new.created_at],
    )?;
    let snapshot_id = tx.last_insert_rowid();
    {
        let mut insert = tx.prepare_cached("INSERT INTO snapshot_members (snapshot_id, source_id, revision_id, extraction_id) VALUES (?1, ?2, ?3, ?4)")?;
        for m in new.members {
            insert.execute(params![
                snapshot_id,
                m.source_id,
                m.revision_id,
                m.extraction_id
            ])?;
        }
    }
    for (family_id, batch_id) in batch_ids {
        tx.execute(
            "INSERT INTO snapshot_indexes (snapshot_id, family_id, batch_id) VALUES (?1, ?2, ?3)",
            params![snapshot_id, family_id, batch_id],
        )?;
    }
    for set_id in new.relation_sets {
        tx.execute(
            "INSERT INTO snapshot_relation_sets (snapshot_id, set_id) VALUES (?1, ?2)",
            params![snapshot_id, set_id],
        )?;
    }
    tx.execute(
        "UPDATE workspaces SET current_snapshot_id = ?1 WHERE id = 1",
        params![snapshot_id],
    )?;
    Ok(snapshot_id)
}

/// How many members a snapshot has.
pub(crate) fn member_count(conn: &Connection, snapshot_id: i64) -> Result<i64> {
    Ok(conn
        .prepare_cached("SELECT COUNT(*) FROM snapshot_members WHERE snapshot_id = ?1")?
        .query_row([snapshot_id], |r| r.get(0))?)
}

/// Every index generation a snapshot row references, with the bases its layers build on.
pub(crate) fn referenced_generations(conn: &Connection) -> Result<Vec<String>> {
    Ok(conn
        .prepare(
            "WITH kept AS (SELECT b.generation, b.base_generation FROM snapshot_indexes si JOIN index_batches b ON b.id = si.batch_id)
             -- a layer keeps its base generation
             SELECT generation FROM kept UNION SELECT base_generation FROM kept WHERE base_generation IS NOT NULL",
        )?
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?)
}

/// Marks the batch of a removed generation retired.
pub(crate) fn retire_generation(conn: &Connection, generation: &str) -> Result<()> {
    conn.execute(
        "UPDATE index_batches SET status = 'retired' WHERE generation = ?1",
        params![generation],
    )?;
    Ok(())
}

/// A window as the indexes read it.
pub(crate) struct IndexWindow {
    pub chunk_id: i64,
    /// The window whose evidence it is (itself, or the window it repeats).
    pub owner_id: i64,
    pub text: String,
    pub capsule_json: String,
    /// The source's kind, or its format when it has none.
    pub kind: String,
    pub collection: String,
}

/// The windows of an extraction in order, as the lexical and text indexes read them.
pub(crate) fn index_windows(conn: &Connection, extraction_id: i64) -> Result<Vec<IndexWindow>> {
    let mut stmt = conn.prepare_cached(
        "SELECT c.id, COALESCE(c.text, u.text), c.capsule_json, COALESCE(s.kind, s.format), col.name, COALESCE(c.owner_chunk_id, c.id) FROM chunks c
         JOIN evidence_units u ON u.id = c.first_unit_id
         JOIN extractions e ON e.id = c.extraction_id JOIN revisions r ON r.id = e.revision_id
         JOIN sources s ON s.id = r.source_id JOIN collections col ON col.id = s.collection_id
         WHERE c.extraction_id = ?1 ORDER BY c.ordinal",
    )?;
    Ok(stmt
        .query_map(params![extraction_id], |r| {
            Ok(IndexWindow {
                chunk_id: r.get(0)?,
                text: r.get(1)?,
                capsule_json: r.get(2)?,
                kind: r.get(3)?,
                collection: r.get(4)?,
                owner_id: r.get(5)?,
            })
        })?
        .collect::<rusqlite::Result<_>>()?)
}

/// Whether the current snapshot publishes this revision.
pub(crate) fn publishes(conn: &Connection, revision_id: i64) -> Result<bool> {
    Ok(conn
        .prepare_cached(
            "SELECT 1 FROM snapshot_members WHERE snapshot_id = (SELECT current_snapshot_id FROM workspaces WHERE id = 1) AND revision_id = ?1",
        )?
        .query_row(params![revision_id], |_| Ok(()))
        .optional()?
        .is_some())
}
