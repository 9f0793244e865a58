//! `manage status`: counts, sizes and the current snapshot.

use rusqlite::{Connection, OptionalExtension, params};
use serde::{Deserialize, Serialize};

use crate::engine::Engine;
use crate::error::Result;
use crate::snapshot;
use crate::store::migrate;

/// The current snapshot, as `status` shows it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CurrentSnapshot {
    /// The snapshot's row id (`snapshot:N`).
    pub id: i64,
    /// When it was published, in milliseconds since the Unix epoch.
    pub created_at: i64,
    /// Chunks it indexes (its verified index generation's document count).
    pub chunks: i64,
    /// Sources it holds (its `snapshot_members` rows).
    pub sources: i64,
    /// The job that published it (`None`: no job was recorded with it).
    pub job_id: Option<i64>,
}

/// Active sources of one collection.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CollectionCount {
    /// The collection's name.
    pub name: String,
    /// Its sources with status `active`.
    pub active_sources: i64,
}

/// A kind the store's sources use, with the definition recorded when it was last used.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct KindUse {
    /// The kind's name (`law`, `standard`…).
    pub name: String,
    /// The recorded definition's version, as its pack numbers it.
    pub version: i64,
    /// sha256 of the definition (all zeros: recorded by a migration, before kinds had one).
    pub fingerprint: String,
    /// The pack the definition came from (`core` for one recorded by a migration).
    pub pack: String,
    /// The lane its evidence is grouped in by default (`authority`, `guidance`…).
    pub lane: String,
    /// Active sources of this kind.
    pub sources: i64,
}

/// Row counts of the canonical tables.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Counts {
    /// Sources with status `active`.
    pub sources: i64,
    /// Sources with status `removed`: withdrawn, or no longer found by a sync of their directory.
    pub removed_sources: i64,
    /// Revisions captured, of every source.
    pub revisions: i64,
    /// Extractions kept: one per revision and parser fingerprint.
    pub extractions: i64,
    /// Evidence units (leaf and section) of every kept extraction.
    pub evidence_units: i64,
    /// Chunk windows of every kept extraction, not only the current snapshot's.
    pub chunks: i64,
    /// Identifiers read from units for the exact channel.
    pub identifiers: i64,
    /// Artifact rows, by sha256 (an erased original's row stays; its file is gone).
    pub artifacts: i64,
    /// Snapshots kept (published and not yet purged by retention).
    pub snapshots: i64,
    /// Jobs kept, of any status.
    pub jobs: i64,
    /// Logged queries (`query_runs` rows).
    pub query_runs: i64,
    /// Embedded inputs, all families.
    pub vector_records: i64,
    /// Revisions whose originals were erased on request (their text out of every snapshot).
    pub erased_revisions: i64,
    /// Of those, the ones some snapshot or row still holds (an interrupted erasure; `manage
    /// purge` finishes it).
    pub erasures_pending: i64,
}

/// Bytes on disk. A file hard-linked into several index generations counts once.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Bytes {
    /// `corpus.sqlite3` and its WAL.
    pub corpus: u64,
    /// Retained originals (in a bucket: the sizes the store recorded, not a listing).
    pub artifacts: u64,
    /// Index generations (lexical and vector).
    pub indexes: u64,
    /// Lexical generations.
    pub lexical: u64,
    /// Vector generations.
    pub vectors: u64,
    /// `corpus.sqlite3` by table, each with its indexes, largest first (`None` unless asked:
    /// measuring it reads every page of the corpus, 70 ms at 84k chunks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tables: Option<Vec<TableBytes>>,
}

/// What a status call measures beyond the counts.
#[derive(Debug, Clone, Copy, Default)]
pub struct StatusOptions {
    /// Measure `corpus.sqlite3` table by table (`Bytes::tables`).
    pub tables: bool,
}

/// One table's share of `corpus.sqlite3`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TableBytes {
    /// The table's name (pages with no `sqlite_schema` entry, such as the schema's own, count
    /// under their `dbstat` name).
    pub table: String,
    /// Bytes of the pages of the table and its indexes.
    pub bytes: u64,
}

/// What `manage status` reports.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Status {
    /// The workspace directory (canonical path).
    pub dir: String,
    /// The newest schema version this engine knows; an open workspace is at it.
    pub schema_version: i64,
    /// This engine's version (the crate version), not the one that created the workspace.
    pub engine_version: String,
    /// The profile used when a call names none (`default_profile` in `workspace.toml`).
    pub profile: String,
    /// The snapshot readers see by default (`None` before the first publication).
    pub current_snapshot: Option<CurrentSnapshot>,
    /// Every collection with its active sources, by name.
    pub collections: Vec<CollectionCount>,
    /// The kinds sources were assigned, by name.
    pub kinds: Vec<KindUse>,
    /// Row counts of the canonical tables.
    pub counts: Counts,
    /// Bytes on disk.
    pub bytes: Bytes,
}

/// Bytes under `path`, each file counted once however many generations link it.
fn dir_size(path: &std::path::Path) -> u64 {
    fn walk(path: &std::path::Path, seen: &mut std::collections::HashSet<(u64, u64)>) -> u64 {
        use std::os::unix::fs::MetadataExt as _;
        let Ok(entries) = std::fs::read_dir(path) else {
            return 0;
        };
        entries
            .flatten()
            .map(|e| match e.file_type() {
                Ok(t) if t.is_dir() => walk(&e.path(), seen),
                Ok(_) => e
                    .metadata()
                    .ok()
                    .filter(|m| seen.insert((m.dev(), m.ino())))
                    .map_or(0, |m| m.len()),
                Err(_) => 0,
            })
            .sum()
    }
    walk(path, &mut std::collections::HashSet::new())
}

/// Pages of each table and its indexes (SQLite's `dbstat`), largest first.
fn table_bytes(conn: &Connection) -> Result<Vec<TableBytes>> {
    let mut stmt = conn.prepare(
        // `aggregate = TRUE`: one row per b-tree, summed inside SQLite, instead of a row per page
        // (the dashboard's operations view asks for this on every visit).
        "SELECT COALESCE(m.tbl_name, d.name), SUM(d.pgsize) FROM dbstat d LEFT JOIN sqlite_schema m ON m.name = d.name
         WHERE d.aggregate = TRUE GROUP BY 1 ORDER BY 2 DESC",
    )?;
    let rows = stmt
        .query_map([], |r| {
            Ok(TableBytes {
                table: r.get(0)?,
                bytes: r.get(1)?,
            })
        })?
        .collect::<rusqlite::Result<_>>()?;
    Ok(rows)
}

fn count(conn: &Connection, table_and_filter: &str) -> Result<i64> {
    Ok(conn.query_row(
        &format!("SELECT COUNT(*) FROM {table_and_filter}"),
        [],
        |r| r.get(0),
    )?)
}

/// Counts, sizes and the current snapshot; the per-table breakdown only when `options` ask.
///
/// # Errors
/// SQLite errors.
pub(crate) fn status(engine: &Engine, options: StatusOptions) -> Result<Status> {
    // Queries of a moment ago are counted: the log writes off the query path.
    engine.query_log().flush();
    engine.with_reader(|conn| {
        let current_snapshot = match snapshot::current(conn)? {
            Some(id) => conn
                .query_row(
                    "SELECT id, created_at, chunk_count, (SELECT COUNT(*) FROM snapshot_members WHERE snapshot_id = s.id), job_id FROM snapshots s WHERE id = ?1",
                    params![id],
                    |r| {
                        Ok(CurrentSnapshot {
                            id: r.get(0)?,
                            created_at: r.get(1)?,
                            chunks: r.get(2)?,
                            sources: r.get(3)?,
                            job_id: r.get(4)?,
                        })
                    },
                )
                .optional()?,
            None => None,
        };
        let collections = conn
            .prepare("SELECT c.name, (SELECT COUNT(*) FROM sources s WHERE s.collection_id = c.id AND s.status = 'active') FROM collections c ORDER BY c.name")?
            .query_map([], |r| {
                Ok(CollectionCount {
                    name: r.get(0)?,
                    active_sources: r.get(1)?,
                })
            })?
            .collect::<rusqlite::Result<_>>()?;
        let kinds = conn
            .prepare(
                "SELECT k.name, k.version, k.fingerprint, k.pack, k.lane,
                        (SELECT COUNT(*) FROM sources s WHERE s.kind = k.name AND s.status = 'active')
                 FROM kinds k ORDER BY k.name",
            )?
            .query_map([], |r| {
                Ok(KindUse {
                    name: r.get(0)?,
                    version: r.get(1)?,
                    fingerprint: r.get(2)?,
                    pack: r.get(3)?,
                    lane: r.get(4)?,
                    sources: r.get(5)?,
                })
            })?
            .collect::<rusqlite::Result<_>>()?;
        let db = engine.dir().join("corpus.sqlite3");
        let corpus = [db.clone(), db.with_extension("sqlite3-wal")]
            .iter()
            .map(|p| std::fs::metadata(p).map_or(0, |m| m.len()))
            .sum::<u64>();
        Ok(Status {
            dir: engine.dir().display().to_string(),
            schema_version: migrate::latest(),
            engine_version: crate::engine::ENGINE_VERSION.to_string(),
            profile: engine.config().default_profile.clone(),
            current_snapshot,
            collections,
            kinds,
            counts: Counts {
                sources: count(conn, "sources WHERE status = 'active'")?,
                removed_sources: count(conn, "sources WHERE status = 'removed'")?,
                revisions: count(conn, "revisions")?,
                extractions: count(conn, "extractions")?,
                evidence_units: count(conn, "evidence_units")?,
                chunks: count(conn, "chunks")?,
                identifiers: count(conn, "identifiers")?,
                artifacts: count(conn, "artifacts")?,
                snapshots: count(conn, "snapshots")?,
                jobs: count(conn, "jobs")?,
                query_runs: count(conn, "query_runs")?,
                vector_records: count(conn, "vector_records")?,
                erased_revisions: count(conn, "(SELECT DISTINCT revision_id FROM tombstones WHERE kind = 'erasure')")?,
                erasures_pending: i64::try_from(snapshot::pending_erasures(conn)?.len()).unwrap_or(i64::MAX),
            },
            bytes: {
                let indexes = engine.dir().join("indexes");
                let (lexical, vectors) = (
                    dir_size(&indexes.join("lexical")),
                    dir_size(&indexes.join("text")),
                );
                Bytes {
                    corpus,
                    artifacts: match engine.artifacts().local_root() {
                        Some(root) => dir_size(&root),
                        // A bucket is not listed on every status: what the store recorded it
                        // holds (erased originals are gone from it).
                        None => conn.query_row(
                            "SELECT COALESCE(SUM(size), 0) FROM artifacts WHERE sha256 NOT IN (SELECT sha256 FROM tombstones)",
                            [],
                            |r| r.get::<_, i64>(0),
                        )?.try_into().unwrap_or_default(),
                    },
                    indexes: lexical + vectors,
                    lexical,
                    vectors,
                    tables: options.tables.then(|| table_bytes(conn)).transpose()?,
                }
            },
        })
    })
}

#[cfg(test)]
mod tests {
    use rusqlite::Connection;

    /// The aggregate `dbstat` rows sum to what a walk of every page sums to, table by table.
    #[test]
    fn table_bytes_match_a_page_by_page_sum() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(
            "CREATE TABLE a (id INTEGER PRIMARY KEY, t TEXT); CREATE INDEX a_t ON a (t);
             CREATE TABLE b (id INTEGER PRIMARY KEY, t TEXT);",
        )
        .unwrap();
        for i in 0..2000 {
            conn.execute(
                "INSERT INTO a (t) VALUES (?1)",
                [format!("row {i} {}", "x".repeat(i % 300))],
            )
            .unwrap();
            if i % 3 == 0 {
                conn.execute("INSERT INTO b (t) VALUES (?1)", [format!("b {i}")])
                    .unwrap();
            }
        }
        let by_page: Vec<(String, i64)> = conn
            .prepare(
                "SELECT COALESCE(m.tbl_name, d.name), SUM(d.pgsize) FROM dbstat d LEFT JOIN sqlite_schema m ON m.name = d.name
                 GROUP BY 1 ORDER BY 2 DESC",
            )
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        let aggregate: Vec<(String, i64)> = super::table_bytes(&conn)
            .unwrap()
            .into_iter()
            .map(|t| (t.table, i64::try_from(t.bytes).unwrap()))
            .collect();
        assert!(by_page.len() >= 3);
        assert_eq!(aggregate, by_page);
    }
}
