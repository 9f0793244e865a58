//! Snapshots: a coherent published set of corpus members and index generations.
//!
//! Publication order: build the generation from the members' chunk rows → commit + fsync its
//! directory → verify its document count equals the members' chunk count → in one SQLite
//! transaction insert the snapshot, its members and index link, and switch the pointer.

use rusqlite::{Connection, OptionalExtension, params};

use crate::config::Lexical;
use crate::error::{Error, Result};
use crate::job::{Phase, Progress, failpoint};
use crate::lexical::{self, LexDoc};
use crate::store::now_ms;

/// One member of a snapshot: a source at one revision and extraction.
#[derive(Debug, Clone)]
#[allow(missing_docs)]
pub struct Member {
    pub source_id: i64,
    pub revision_id: i64,
    pub extraction_id: i64,
    pub collection_id: i64,
    pub root_id: i64,
    pub rel_path: String,
    pub sha256: String,
}

/// The current snapshot id.
///
/// # Errors
/// SQLite errors.
pub fn current(conn: &Connection) -> Result<Option<i64>> {
    Ok(conn.query_row(
        "SELECT current_snapshot_id FROM workspaces WHERE id = 1",
        [],
        |r| r.get(0),
    )?)
}

/// The members of a snapshot.
///
/// # Errors
/// SQLite errors.
pub fn members(conn: &Connection, snapshot_id: i64) -> Result<Vec<Member>> {
    let mut stmt = conn.prepare_cached(
        "SELECT m.source_id, m.revision_id, m.extraction_id, s.collection_id, s.root_id, s.rel_path, r.sha256
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
                sha256: r.get(6)?,
            })
        })?
        .collect::<rusqlite::Result<_>>()?;
    Ok(rows)
}

/// The lexical generation a snapshot uses.
///
/// # Errors
/// `E_NOT_FOUND` if the snapshot does not exist or has no lexical index.
pub fn lexical_generation(conn: &Connection, snapshot_id: i64) -> Result<String> {
    conn.query_row(
        "SELECT b.generation FROM snapshot_indexes si JOIN index_batches b ON b.id = si.batch_id JOIN index_families f ON f.id = si.family_id
         WHERE si.snapshot_id = ?1 AND f.name = 'lexical' AND b.status = 'verified'",
        params![snapshot_id],
        |r| r.get(0),
    )
    .optional()?
    .ok_or_else(|| Error::NotFound { what: "snapshot (or its retained index generation)", id: snapshot_id.to_string() })
}

fn lexical_family(conn: &Connection, lexical: &Lexical) -> Result<i64> {
    let config = serde_json::to_string(lexical).unwrap_or_else(|_| "{}".into());
    conn.execute(
        "INSERT INTO index_families (name, channel, config_json) VALUES ('lexical', 'lexical', ?1) ON CONFLICT (name) DO UPDATE SET config_json = excluded.config_json",
        params![config],
    )?;
    Ok(conn.query_row(
        "SELECT id FROM index_families WHERE name = 'lexical'",
        [],
        |r| r.get(0),
    )?)
}

/// What a new snapshot holds, where it comes from, and where its index generation goes.
#[derive(Debug)]
pub struct Publication<'a> {
    /// The folder lexical generations live in (`indexes/lexical`).
    pub generations: &'a std::path::Path,
    /// The analyzer the generation is built with.
    pub lexical: &'a Lexical,
    /// The snapshot it follows (the current one), if any.
    pub parent: Option<i64>,
    /// The job that publishes it.
    pub job_id: i64,
    /// Its members.
    pub members: &'a [Member],
    /// The code relation sets it pins.
    pub relation_sets: &'a [i64],
}

/// Builds, verifies and publishes a snapshot of `members`. `finish` writes the caller's own rows
/// (the job's end) in the pointer switch's transaction. Returns the snapshot's id.
///
/// # Errors
/// `E_CORRUPT` if verification fails (nothing is published); tantivy, I/O and SQLite errors.
pub fn publish(
    conn: &mut Connection,
    publication: &Publication<'_>,
    on_progress: &(dyn Fn(Progress) + Sync),
    finish: impl FnOnce(&rusqlite::Transaction<'_>, i64) -> Result<()>,
) -> Result<i64> {
    let Publication {
        generations,
        lexical,
        parent,
        job_id,
        members,
        relation_sets,
    } = *publication;
    let generation = format!("g{}-{job_id}", now_ms());
    let dir = generations.join(&generation);
    let expected;
    {
        let mut stmt = conn.prepare_cached(
            "SELECT c.id, c.text, c.capsule_json, s.kind, col.name, COALESCE(c.owner_chunk_id, c.id) FROM chunks c
             JOIN extractions e ON e.id = c.extraction_id JOIN revisions r ON r.id = e.revision_id
             JOIN sources s ON s.id = r.source_id JOIN collections col ON col.id = s.collection_id
             WHERE c.extraction_id = ?1 ORDER BY c.ordinal",
        )?;
        let mut rows: Vec<(u64, u64, u64, String, String, String, String)> = Vec::new();
        for member in members {
            let revision = u64::try_from(member.revision_id).unwrap_or_default();
            let found = stmt.query_map(params![member.extraction_id], |r| {
                let capsule: String = r.get(2)?;
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, String>(1)?,
                    capsule,
                    r.get::<_, String>(3)?,
                    r.get::<_, String>(4)?,
                    r.get::<_, i64>(5)?,
                ))
            })?;
            for row in found {
                let (id, text, capsule, kind, collection, owner) = row?;
                let id = u64::try_from(id).unwrap_or_default();
                rows.push((
                    id,
                    u64::try_from(owner).unwrap_or(id),
                    revision,
                    text,
                    capsule_text(&capsule),
                    kind,
                    collection,
                ));
            }
        }
        expected = rows.len() as u64;
        on_progress(Progress {
            phase: Phase::Index,
            done: 0,
            total: rows.len(),
        });
        let docs = rows
            .iter()
            .map(|(id, owner, rev, text, capsule, kind, collection)| LexDoc {
                chunk_id: *id,
                owner_id: *owner,
                revision_id: *rev,
                collection,
                kind,
                text,
                capsule,
            });
        let count = lexical::build_generation(&dir, lexical, docs)?;
        if count != expected {
            let _ = std::fs::remove_dir_all(&dir);
            return Err(Error::Corrupt(format!(
                "index generation {generation} holds {count} documents but the snapshot has {expected} chunks; not published"
            )));
        }
        on_progress(Progress {
            phase: Phase::Index,
            done: rows.len(),
            total: rows.len(),
        });
    }
    failpoint("after-index");
    let family = lexical_family(conn, lexical)?;
    let tx = conn.transaction()?;
    let now = now_ms();
    tx.execute(
        "INSERT INTO index_batches (family_id, generation, doc_count, status, created_at) VALUES (?1, ?2, ?3, 'verified', ?4)",
        params![family, generation, expected, now],
    )?;
    let batch_id = tx.last_insert_rowid();
    tx.execute("INSERT INTO snapshots (parent_id, job_id, chunk_count, created_at) VALUES (?1, ?2, ?3, ?4)", params![parent, job_id, expected, now])?;
    let snapshot_id = tx.last_insert_rowid();
    {
        let mut insert = tx.prepare_cached("INSERT INTO snapshot_members (snapshot_id, source_id, revision_id, extraction_id) VALUES (?1, ?2, ?3, ?4)")?;
        for m in members {
            insert.execute(params![
                snapshot_id,
                m.source_id,
                m.revision_id,
                m.extraction_id
            ])?;
        }
    }
    tx.execute(
        "INSERT INTO snapshot_indexes (snapshot_id, family_id, batch_id) VALUES (?1, ?2, ?3)",
        params![snapshot_id, family, batch_id],
    )?;
    for set_id in relation_sets {
        tx.execute(
            "INSERT INTO snapshot_relation_sets (snapshot_id, set_id) VALUES (?1, ?2)",
            params![snapshot_id, set_id],
        )?;
    }
    tx.execute(
        "UPDATE workspaces SET current_snapshot_id = ?1 WHERE id = 1",
        params![snapshot_id],
    )?;
    // The caller's own rows (the job's end) commit with the pointer switch, or not at all.
    finish(&tx, snapshot_id)?;
    failpoint("before-switch-commit");
    tx.commit()?;
    on_progress(Progress {
        phase: Phase::Publish,
        done: 1,
        total: 1,
    });
    Ok(snapshot_id)
}

/// The capsule as indexed text.
fn capsule_text(json: &str) -> String {
    serde_json::from_str::<serde_json::Value>(json)
        .ok()
        .map(|v| {
            let mut parts: Vec<String> = Vec::new();
            if let Some(t) = v
                .get("title")
                .and_then(|t| t.as_str())
                .filter(|t| !t.is_empty())
            {
                parts.push(t.to_string());
            }
            if let Some(path) = v.get("heading_path").and_then(|p| p.as_array()) {
                parts.extend(path.iter().filter_map(|h| h.as_str().map(str::to_string)));
            }
            for field in ["table_header", "signature"] {
                if let Some(h) = v.get(field).and_then(|t| t.as_str()) {
                    parts.push(h.to_string());
                }
            }
            parts.join("\n")
        })
        .unwrap_or_default()
}
