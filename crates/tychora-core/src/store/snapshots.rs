//! Snapshots' rows: the current-snapshot pointer, members, index families and batches, and the
//! publication that inserts a snapshot and switches the pointer in one transaction. The
//! `snapshot` module decides what a snapshot holds and builds its index generations; this module
//! is how those facts are stored, on either adapter (`store::tx`).

use std::collections::HashMap;

use super::tx::{Dialect, Tx, args};
use crate::error::{Error, Result};

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
pub fn current(tx: &dyn Tx) -> Result<Option<i64>> {
    tx.value(
        "SELECT current_snapshot_id FROM workspaces WHERE id = 1",
        &[],
    )
}

/// The members of a snapshot, by source.
pub fn members(tx: &dyn Tx, snapshot_id: i64) -> Result<Vec<Member>> {
    tx.rows(
        "SELECT m.source_id, m.revision_id, m.extraction_id, s.collection_id, s.root_id, s.rel_path, r.sha256, s.uri
         FROM snapshot_members m JOIN sources s ON s.id = m.source_id JOIN revisions r ON r.id = m.revision_id
         WHERE m.snapshot_id = ?1 ORDER BY m.source_id",
        args![snapshot_id],
        |r| {
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
        },
    )
}

/// `source_id → (revision_id, extraction_id)` of a snapshot's members.
pub fn member_map(tx: &dyn Tx, snapshot_id: i64) -> Result<HashMap<i64, (i64, i64)>> {
    Ok(tx
        .rows(
            "SELECT source_id, revision_id, extraction_id FROM snapshot_members WHERE snapshot_id = ?1",
            args![snapshot_id],
            |r| Ok((r.get(0)?, (r.get(1)?, r.get(2)?))),
        )?
        .into_iter()
        .collect())
}

/// The verified lexical generation a snapshot uses, if it has one.
pub fn lexical_generation(tx: &dyn Tx, snapshot_id: i64) -> Result<Option<String>> {
    tx.optional(
        "SELECT b.generation FROM snapshot_indexes si JOIN index_batches b ON b.id = si.batch_id JOIN index_families f ON f.id = si.family_id
         WHERE si.snapshot_id = ?1 AND f.name = 'lexical' AND b.status = 'verified'",
        args![snapshot_id],
        |r| r.get(0),
    )
}

/// A snapshot's verified text-channel generation: its family's recorded configuration, the file's
/// name and its sha256 at publication.
pub fn text_generation(
    tx: &dyn Tx,
    snapshot_id: i64,
) -> Result<Option<(String, String, Option<String>)>> {
    tx.optional(
        "SELECT f.config_json, b.generation, b.file_sha256 FROM snapshot_indexes si JOIN index_batches b ON b.id = si.batch_id JOIN index_families f ON f.id = si.family_id
         WHERE si.snapshot_id = ?1 AND f.channel = 'text' AND b.status = 'verified'",
        args![snapshot_id],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )
}

/// The id of the index family `name` of `channel`, created or its configuration updated.
pub fn family(tx: &dyn Tx, name: &str, channel: &str, config_json: &str) -> Result<i64> {
    tx.value(
        "INSERT INTO index_families (name, channel, config_json) VALUES (?1, ?2, ?3)
         ON CONFLICT (name) DO UPDATE SET config_json = excluded.config_json RETURNING id",
        args![name, channel, config_json],
    )
}

/// The recorded configuration of the index family `name`.
pub fn family_config(tx: &dyn Tx, name: &str) -> Result<Option<String>> {
    tx.optional(
        "SELECT config_json FROM index_families WHERE name = ?1",
        args![name],
        |r| r.get(0),
    )
}

/// How many chunks a snapshot holds (as recorded at publication, less what erasure took out).
pub fn chunk_count(tx: &dyn Tx, snapshot_id: i64) -> Result<i64> {
    tx.value(
        "SELECT chunk_count FROM snapshots WHERE id = ?1",
        args![snapshot_id],
    )
}

/// How many chunks an extraction has.
pub fn chunks_of_extraction(tx: &dyn Tx, extraction_id: i64) -> Result<u64> {
    tx.value(
        "SELECT COUNT(*) FROM chunks WHERE extraction_id = ?1",
        args![extraction_id],
    )
}

/// A verified index generation to record with a new snapshot.
pub struct NewBatch<'a> {
    /// Its index family (`index_families.id`).
    pub family_id: i64,
    /// The generation's name (its folder or file under the workspace's indexes).
    pub generation: &'a str,
    /// The generation file's sha256, for a channel that keeps one file.
    pub file_sha256: Option<&'a str>,
    /// The generation a layer builds on.
    pub base_generation: Option<&'a str>,
}

/// A snapshot to record.
pub struct NewSnapshot<'a> {
    /// The snapshot the publisher read and built on: the pointer switches only from it.
    pub parent: Option<i64>,
    /// The job that published it.
    pub job_id: Option<i64>,
    /// How many chunks its indexes hold.
    pub chunk_count: u64,
    /// Its members, a source each.
    pub members: &'a [Member],
    /// Its index generations.
    pub batches: &'a [NewBatch<'a>],
    /// The code-relation sets it reads (`relation_sets.id`).
    pub relation_sets: &'a [i64],
    /// When (ms since the epoch).
    pub created_at: i64,
}

/// The advisory lock a publication holds on a shared store, from reading the pointer it builds on
/// to switching it ("tych" in ASCII).
const PUBLICATION_LOCK: i64 = 0x7479_6368;

/// Waits for this session's turn to publish on a shared store (a PostgreSQL session-level
/// advisory lock, let go by [`end_turn`] or when the session's connection closes: a daemon that
/// dies mid-build frees it). Daemons building on one pointer at once would all but one build in
/// vain; in turn, each builds on the pointer the last one left. Nothing on the embedded store,
/// whose single writer publishes in turn already.
///
/// # Errors
/// The store's errors.
pub fn take_turn(tx: &dyn Tx) -> Result<()> {
    if tx.dialect() == Dialect::Postgres {
        tx.rows(
            "SELECT 1 FROM (SELECT pg_advisory_lock(?1)) AS turn",
            args![PUBLICATION_LOCK],
            |_| Ok(()),
        )?;
    }
    Ok(())
}

/// Ends this session's turn to publish (see [`take_turn`]).
///
/// # Errors
/// The store's errors.
pub fn end_turn(tx: &dyn Tx) -> Result<()> {
    if tx.dialect() == Dialect::Postgres {
        tx.rows(
            "SELECT pg_advisory_unlock(?1)",
            args![PUBLICATION_LOCK],
            |_| Ok(()),
        )?;
    }
    Ok(())
}

/// Records a snapshot — its index batches, members, index links and relation sets — and switches
/// the pointer to it, in the caller's transaction (which the caller's own rows, such as the job's
/// end, commit with, or not at all). Returns its id.
///
/// The switch is a compare-and-set from `new.parent`: when another publisher moved the pointer
/// since this one read it, nothing is switched and the call fails with `E_CONFLICT`; the caller
/// rolls back and builds again on the new pointer (one wins, the other retries). On PostgreSQL
/// the losing `UPDATE` waits for the winner's commit and then finds the pointer moved; on SQLite
/// one writer holds the database at a time, so a publisher that read the pointer in its own
/// write transaction never loses.
///
/// # Errors
/// `E_CONFLICT` when the pointer moved; the store's errors.
pub fn publish(tx: &dyn Tx, new: &NewSnapshot<'_>) -> Result<i64> {
    let mut batch_ids = Vec::with_capacity(new.batches.len());
    for batch in new.batches {
        let id = tx.insert(
            "INSERT INTO index_batches (family_id, generation, doc_count, status, created_at, file_sha256, base_generation) VALUES (?1, ?2, ?3, 'verified', ?4, ?5, ?6)",
            args![batch.family_id, batch.generation, new.chunk_count, new.created_at, batch.file_sha256, batch.base_generation],
        )?;
        batch_ids.push((batch.family_id, id));
    }
    let snapshot_id = tx.insert(
        "INSERT INTO snapshots (parent_id, job_id, chunk_count, created_at) VALUES (?1, ?2, ?3, ?4)",
        args![new.parent, new.job_id, new.chunk_count, new.created_at],
    )?;
    let mut member = tx.prepare(
        "INSERT INTO snapshot_members (snapshot_id, source_id, revision_id, extraction_id) VALUES (?1, ?2, ?3, ?4)",
    )?;
    for m in new.members {
        member.write(args![
            snapshot_id,
            m.source_id,
            m.revision_id,
            m.extraction_id
        ])?;
    }
    drop(member);
    for (family_id, batch_id) in batch_ids {
        tx.execute(
            "INSERT INTO snapshot_indexes (snapshot_id, family_id, batch_id) VALUES (?1, ?2, ?3)",
            args![snapshot_id, family_id, batch_id],
        )?;
    }
    for set_id in new.relation_sets {
        tx.execute(
            "INSERT INTO snapshot_relation_sets (snapshot_id, set_id) VALUES (?1, ?2)",
            args![snapshot_id, *set_id],
        )?;
    }
    let switched = tx.execute(
        "UPDATE workspaces SET current_snapshot_id = ?1 WHERE id = 1 AND current_snapshot_id IS NOT DISTINCT FROM ?2",
        args![snapshot_id, new.parent],
    )?;
    if switched != 1 {
        return Err(Error::Conflict(format!(
            "another publication moved the snapshot pointer from {} while this one was built: build again on the new pointer",
            new.parent
                .map_or_else(|| "no snapshot".to_string(), |p| format!("snapshot {p}"))
        )));
    }
    Ok(snapshot_id)
}

/// How many members a snapshot has.
pub fn member_count(tx: &dyn Tx, snapshot_id: i64) -> Result<i64> {
    tx.value(
        "SELECT COUNT(*) FROM snapshot_members WHERE snapshot_id = ?1",
        args![snapshot_id],
    )
}

/// Every index generation a snapshot row references, with the bases its layers build on.
pub fn referenced_generations(tx: &dyn Tx) -> Result<Vec<String>> {
    tx.rows(
        "WITH kept AS (SELECT b.generation, b.base_generation FROM snapshot_indexes si JOIN index_batches b ON b.id = si.batch_id)
         -- a layer keeps its base generation
         SELECT generation FROM kept UNION SELECT base_generation FROM kept WHERE base_generation IS NOT NULL",
        &[],
        |r| r.get(0),
    )
}

/// Marks the batch of a removed generation retired.
pub fn retire_generation(tx: &dyn Tx, generation: &str) -> Result<()> {
    tx.execute(
        "UPDATE index_batches SET status = 'retired' WHERE generation = ?1",
        args![generation],
    )?;
    Ok(())
}

/// A window as the indexes read it.
pub struct IndexWindow {
    /// The window (`chunks.id`).
    pub chunk_id: i64,
    /// The window whose evidence it is (itself, or the window it repeats).
    pub owner_id: i64,
    /// Its text.
    pub text: String,
    /// Its capsule (JSON).
    pub capsule_json: String,
    /// The source's kind, or its format when it has none.
    pub kind: String,
    /// The source's collection.
    pub collection: String,
}

/// The windows of an extraction in order, as the lexical and text indexes read them.
pub fn index_windows(tx: &dyn Tx, extraction_id: i64) -> Result<Vec<IndexWindow>> {
    tx.rows(
        "SELECT c.id, COALESCE(c.text, u.text), c.capsule_json, COALESCE(s.kind, s.format), col.name, COALESCE(c.owner_chunk_id, c.id) FROM chunks c
         JOIN evidence_units u ON u.id = c.first_unit_id
         JOIN extractions e ON e.id = c.extraction_id JOIN revisions r ON r.id = e.revision_id
         JOIN sources s ON s.id = r.source_id JOIN collections col ON col.id = s.collection_id
         WHERE c.extraction_id = ?1 ORDER BY c.ordinal",
        args![extraction_id],
        |r| {
            Ok(IndexWindow {
                chunk_id: r.get(0)?,
                text: r.get(1)?,
                capsule_json: r.get(2)?,
                kind: r.get(3)?,
                collection: r.get(4)?,
                owner_id: r.get(5)?,
            })
        },
    )
}

/// Whether the current snapshot publishes this revision.
pub fn publishes(tx: &dyn Tx, revision_id: i64) -> Result<bool> {
    Ok(tx
        .optional(
            "SELECT 1 FROM snapshot_members WHERE snapshot_id = (SELECT current_snapshot_id FROM workspaces WHERE id = 1) AND revision_id = ?1",
            args![revision_id],
            |_| Ok(()),
        )?
        .is_some())
}
