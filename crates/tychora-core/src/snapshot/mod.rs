//! Snapshots: a coherent published set of corpus members and index generations.
//!
//! Publication order: read the members' chunk rows → (text channel) make sure every window's input
//! has a vector, embedding only new inputs → build the lexical generation, commit + fsync its
//! directory, verify its document count equals the members' chunk count → (text channel) write the
//! vector generation file, fsync it and its directory, record its sha256 → in one SQLite
//! transaction insert the snapshot, its members and index links, and switch the pointer.
//! Nothing a failed step leaves behind is referenced; garbage collection removes it.

use rusqlite::{Connection, OptionalExtension, params};

use std::path::Path;

use crate::config::Lexical;
use crate::error::{Error, Result};
use crate::job::{Phase, Progress, failpoint};
use crate::lexical::{self, LexDoc};
use crate::store::now_ms;
use crate::vector::{self, Budget, EmbedReport, Embedder, FamilySpec, UserCache};

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

/// A snapshot's vector generation: its family, file name and recorded sha256.
#[derive(Debug, Clone)]
pub struct TextGeneration {
    /// The family (as recorded when the generation was built).
    pub spec: FamilySpec,
    /// The file's name under `indexes/text/`.
    pub generation: String,
    /// Its sha256 at publication.
    pub sha256: String,
}

/// The text channel's generation of a snapshot, if the snapshot has one.
///
/// # Errors
/// SQLite errors; `E_CORRUPT` for an unreadable family record.
pub fn text_generation(conn: &Connection, snapshot_id: i64) -> Result<Option<TextGeneration>> {
    let row = conn
        .query_row(
            "SELECT f.config_json, b.generation, b.file_sha256 FROM snapshot_indexes si JOIN index_batches b ON b.id = si.batch_id JOIN index_families f ON f.id = si.family_id
             WHERE si.snapshot_id = ?1 AND f.channel = 'text' AND b.status = 'verified'",
            params![snapshot_id],
            |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get::<_, Option<String>>(2)?)),
        )
        .optional()?;
    let Some((config, generation, sha256)) = row else {
        return Ok(None);
    };
    #[derive(serde::Deserialize)]
    struct Recorded {
        spec: FamilySpec,
    }
    let recorded: Recorded = serde_json::from_str(&config)
        .map_err(|e| Error::Corrupt(format!("text index family record: {e}")))?;
    Ok(Some(TextGeneration {
        spec: recorded.spec,
        generation,
        sha256: sha256.unwrap_or_default(),
    }))
}

/// The `index_families` row of a vector family (one per family: `text:<id>`).
fn text_family(conn: &Connection, family_id: i64, spec: &FamilySpec) -> Result<i64> {
    let name = format!("text:{family_id}");
    let config = serde_json::json!({ "family_id": family_id, "spec": spec }).to_string();
    conn.execute(
        "INSERT INTO index_families (name, channel, config_json) VALUES (?1, 'text', ?2) ON CONFLICT (name) DO UPDATE SET config_json = excluded.config_json",
        params![name, config],
    )?;
    Ok(conn.query_row(
        "SELECT id FROM index_families WHERE name = ?1",
        params![name],
        |r| r.get(0),
    )?)
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
    /// The text channel's family, when the workspace embeds.
    pub text: Option<TextPublication<'a>>,
}

/// How a publication gets the text channel's vectors and where their generation goes.
pub struct TextPublication<'a> {
    /// The folder vector generations live in (`indexes/text`).
    pub dir: &'a Path,
    /// The workspace's id of the family.
    pub family_id: i64,
    /// What embeds inputs that have no vector yet.
    pub embedder: &'a dyn Embedder,
    /// The user-level cache, if enabled.
    pub cache: Option<&'a UserCache>,
    /// Caps on tokens embedded.
    pub budget: Budget,
}

impl std::fmt::Debug for TextPublication<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TextPublication")
            .field("family_id", &self.family_id)
            .field("spec", self.embedder.spec())
            .finish_non_exhaustive()
    }
}

/// What publishing did beyond the snapshot itself.
#[derive(Debug, Clone, Default)]
pub struct Published {
    /// What embedding the windows did (text channel only).
    pub embedding: Option<EmbedReport>,
}

/// One chunk row as a publication reads it.
struct Row {
    /// Index of its member (its document).
    member: usize,
    id: u64,
    owner: u64,
    revision: u64,
    text: String,
    capsule: String,
    kind: String,
    collection: String,
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
    finish: impl FnOnce(&rusqlite::Transaction<'_>, i64, &Published) -> Result<()>,
) -> Result<i64> {
    let Publication {
        generations,
        lexical,
        parent,
        job_id,
        members,
        relation_sets,
        ref text,
    } = *publication;
    let rows = read_rows(conn, members)?;
    let expected = rows.len() as u64;
    let mut published = Published::default();
    // Vectors first: a provider failure or a budget stop leaves nothing half-built.
    let inputs = match text {
        Some(t) => {
            let documents = row_inputs(&t.embedder.spec().representation, &rows);
            let report = vector::ensure(
                conn,
                t.family_id,
                t.embedder,
                t.cache,
                &documents,
                t.budget,
                &|done, total| {
                    on_progress(Progress {
                        phase: Phase::Embed,
                        done,
                        total,
                    });
                },
            )?;
            published.embedding = Some(report);
            Some(
                documents
                    .into_iter()
                    .flat_map(|d| d.shas)
                    .collect::<Vec<_>>(),
            )
        }
        None => None,
    };
    let generation = format!("g{}-{job_id}", now_ms());
    let dir = generations.join(&generation);
    on_progress(Progress {
        phase: Phase::Index,
        done: 0,
        total: rows.len(),
    });
    let docs = rows.iter().map(|r| LexDoc {
        chunk_id: r.id,
        owner_id: r.owner,
        revision_id: r.revision,
        collection: &r.collection,
        kind: &r.kind,
        text: &r.text,
        capsule: &r.capsule,
    });
    let count = lexical::build_generation(&dir, lexical, docs)?;
    if count != expected {
        let _ = std::fs::remove_dir_all(&dir);
        return Err(Error::Corrupt(format!(
            "index generation {generation} holds {count} documents but the snapshot has {expected} chunks; not published"
        )));
    }
    let text_file = match (text, &inputs) {
        (Some(t), Some(per_row)) => Some(build_text(conn, t, &generation, &rows, per_row)?),
        _ => None,
    };
    on_progress(Progress {
        phase: Phase::Index,
        done: rows.len(),
        total: rows.len(),
    });
    failpoint("after-index");
    let family = lexical_family(conn, lexical)?;
    let text_family = match (text, &text_file) {
        (Some(t), Some(_)) => Some(text_family(conn, t.family_id, t.embedder.spec())?),
        _ => None,
    };
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
    if let (Some(text_family), Some((name, sha256))) = (text_family, &text_file) {
        tx.execute(
            "INSERT INTO index_batches (family_id, generation, doc_count, status, created_at, file_sha256) VALUES (?1, ?2, ?3, 'verified', ?4, ?5)",
            params![text_family, name, expected, now, sha256],
        )?;
        let text_batch = tx.last_insert_rowid();
        tx.execute(
            "INSERT INTO snapshot_indexes (snapshot_id, family_id, batch_id) VALUES (?1, ?2, ?3)",
            params![snapshot_id, text_family, text_batch],
        )?;
    }
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
    finish(&tx, snapshot_id, &published)?;
    failpoint("before-switch-commit");
    tx.commit()?;
    on_progress(Progress {
        phase: Phase::Publish,
        done: 1,
        total: 1,
    });
    Ok(snapshot_id)
}

/// The embedding inputs of `rows`, one document per member, in row order.
fn row_inputs(representation: &str, rows: &[Row]) -> Vec<vector::DocInputs> {
    let mut documents: Vec<Vec<(&str, &str)>> = Vec::new();
    let mut last = None;
    for r in rows {
        if last != Some(r.member) {
            documents.push(Vec::new());
            last = Some(r.member);
        }
        if let Some(d) = documents.last_mut() {
            d.push((r.capsule.as_str(), r.text.as_str()));
        }
    }
    vector::document_inputs(representation, &documents)
}

/// The chunk rows of `members`, in member then window order.
fn read_rows(conn: &Connection, members: &[Member]) -> Result<Vec<Row>> {
    let mut stmt = conn.prepare_cached(
        "SELECT c.id, c.text, c.capsule_json, s.kind, col.name, COALESCE(c.owner_chunk_id, c.id) FROM chunks c
         JOIN extractions e ON e.id = c.extraction_id JOIN revisions r ON r.id = e.revision_id
         JOIN sources s ON s.id = r.source_id JOIN collections col ON col.id = s.collection_id
         WHERE c.extraction_id = ?1 ORDER BY c.ordinal",
    )?;
    let mut rows = Vec::new();
    for (index, member) in members.iter().enumerate() {
        let revision = u64::try_from(member.revision_id).unwrap_or_default();
        let found = stmt.query_map(params![member.extraction_id], |r| {
            let id = u64::try_from(r.get::<_, i64>(0)?).unwrap_or_default();
            Ok(Row {
                member: index,
                id,
                owner: u64::try_from(r.get::<_, i64>(5)?).unwrap_or(id),
                revision,
                text: r.get(1)?,
                capsule: capsule_text(&r.get::<_, String>(2)?),
                kind: r.get(3)?,
                collection: r.get(4)?,
            })
        })?;
        for row in found {
            rows.push(row?);
        }
    }
    Ok(rows)
}

/// Writes the vector generation of `rows` (whose inputs all have records now) and returns its
/// file name and sha256.
fn build_text(
    conn: &Connection,
    text: &TextPublication<'_>,
    generation: &str,
    rows: &[Row],
    per_row: &[String],
) -> Result<(String, String)> {
    let name = format!("{generation}-f{}.tyv", text.family_id);
    let sha256 = write_text(
        conn,
        text.family_id,
        text.embedder.spec(),
        &text.dir.join(&name),
        rows,
        per_row,
    )?;
    Ok((name, sha256))
}

/// Writes a vector generation file from the records of `family` and returns its sha256.
fn write_text(
    conn: &Connection,
    family: i64,
    spec: &FamilySpec,
    path: &Path,
    rows: &[Row],
    per_row: &[String],
) -> Result<String> {
    let records = vector::records::lookup(conn, family, per_row)?;
    let mut entries = Vec::with_capacity(rows.len());
    for (row, sha) in rows.iter().zip(per_row) {
        let record = records.get(sha).ok_or_else(|| {
            Error::Corrupt(format!(
                "window {} has no vector record of {}/{}; publish again with that family configured",
                row.id, spec.provider, spec.model
            ))
        })?;
        entries.push(vector::Entry {
            key: row.id,
            owner: row.owner,
            collection: &row.collection,
            kind: &row.kind,
            vector: &record.vector,
        });
    }
    Ok(vector::index::build(path, spec, &entries)?.0)
}

/// Rewrites a snapshot's vector generation file from the workspace's vector records when it is
/// missing or does not match its recorded sha256, and records the new file's sha256 (the members
/// and vectors are the same; an HNSW graph built again may differ byte for byte). Returns whether
/// it rewrote the file.
///
/// # Errors
/// `E_CORRUPT` when a window has no record of the family; I/O and SQLite errors.
pub fn repair_text(
    conn: &Connection,
    snapshot_id: i64,
    generation: &TextGeneration,
    dir: &Path,
) -> Result<bool> {
    let path = dir.join(&generation.generation);
    if vector::VectorIndex::open(&path, &generation.sha256).is_ok() {
        return Ok(false);
    }
    let rows = read_rows(conn, &members(conn, snapshot_id)?)?;
    let per_row: Vec<String> = row_inputs(&generation.spec.representation, &rows)
        .into_iter()
        .flat_map(|d| d.shas)
        .collect();
    let family = vector::records::family_id(conn, &generation.spec)?;
    let sha256 = write_text(conn, family, &generation.spec, &path, &rows, &per_row)?;
    conn.execute(
        "UPDATE index_batches SET file_sha256 = ?1, status = 'verified' WHERE generation = ?2",
        params![sha256, generation.generation],
    )?;
    Ok(true)
}

/// The capsule as indexed text.
pub(crate) fn capsule_text(json: &str) -> String {
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
