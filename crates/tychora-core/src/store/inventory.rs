//! What `manage status` counts in the store: the current snapshot, collections and kinds in use,
//! row counts, the bytes of kept artifacts, and each table's pages.

use super::tx::{Dialect, Tx, args};
use serde::{Deserialize, Serialize};

use crate::error::Result;

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

/// One table's share of `corpus.sqlite3`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TableBytes {
    /// The table's name (pages with no `sqlite_schema` entry, such as the schema's own, count
    /// under their `dbstat` name).
    pub table: String,
    /// Bytes of the pages of the table and its indexes.
    pub bytes: u64,
}

/// The current snapshot's summary.
///
/// # Errors
/// The store's errors.
pub fn current_snapshot(tx: &dyn Tx, id: i64) -> Result<Option<CurrentSnapshot>> {
    tx.optional(
        "SELECT id, created_at, chunk_count, (SELECT COUNT(*) FROM snapshot_members WHERE snapshot_id = s.id), job_id FROM snapshots s WHERE id = ?1",
        args![id],
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
}

/// Each collection with its active sources, by name.
///
/// # Errors
/// The store's errors.
pub fn collections(tx: &dyn Tx) -> Result<Vec<CollectionCount>> {
    tx.rows(
        "SELECT c.name, (SELECT COUNT(*) FROM sources s WHERE s.collection_id = c.id AND s.status = 'active') FROM collections c ORDER BY c.name",
        &[],
        |r| {
            Ok(CollectionCount {
                name: r.get(0)?,
                active_sources: r.get(1)?,
            })
        },
    )
}

/// Each kind recorded, with its active sources, by name.
///
/// # Errors
/// The store's errors.
pub fn kinds(tx: &dyn Tx) -> Result<Vec<KindUse>> {
    tx.rows(
        "SELECT k.name, k.version, k.fingerprint, k.pack, k.lane,
                (SELECT COUNT(*) FROM sources s WHERE s.kind = k.name AND s.status = 'active')
         FROM kinds k ORDER BY k.name",
        &[],
        |r| {
            Ok(KindUse {
                name: r.get(0)?,
                version: r.get(1)?,
                fingerprint: r.get(2)?,
                pack: r.get(3)?,
                lane: r.get(4)?,
                sources: r.get(5)?,
            })
        },
    )
}

fn count(tx: &dyn Tx, sql: &str) -> Result<i64> {
    tx.value(sql, &[])
}

/// Row counts (`erasures_pending` as the caller found it).
///
/// # Errors
/// The store's errors.
pub fn counts(tx: &dyn Tx, erasures_pending: i64) -> Result<Counts> {
    Ok(Counts {
        sources: count(tx, "SELECT COUNT(*) FROM sources WHERE status = 'active'")?,
        removed_sources: count(tx, "SELECT COUNT(*) FROM sources WHERE status = 'removed'")?,
        revisions: count(tx, "SELECT COUNT(*) FROM revisions")?,
        extractions: count(tx, "SELECT COUNT(*) FROM extractions")?,
        evidence_units: count(tx, "SELECT COUNT(*) FROM evidence_units")?,
        chunks: count(tx, "SELECT COUNT(*) FROM chunks")?,
        identifiers: count(tx, "SELECT COUNT(*) FROM identifiers")?,
        artifacts: count(tx, "SELECT COUNT(*) FROM artifacts")?,
        snapshots: count(tx, "SELECT COUNT(*) FROM snapshots")?,
        jobs: count(tx, "SELECT COUNT(*) FROM jobs")?,
        query_runs: count(tx, "SELECT COUNT(*) FROM query_runs")?,
        vector_records: count(tx, "SELECT COUNT(*) FROM vector_records")?,
        erased_revisions: count(
            tx,
            "SELECT COUNT(DISTINCT revision_id) FROM tombstones WHERE kind = 'erasure'",
        )?,
        erasures_pending,
    })
}

/// Bytes of the artifacts the store records as kept (erased ones are gone).
///
/// # Errors
/// The store's errors.
pub fn kept_artifact_bytes(tx: &dyn Tx) -> Result<i64> {
    tx.value(
        "SELECT CAST(COALESCE(SUM(size), 0) AS BIGINT) FROM artifacts WHERE sha256 NOT IN (SELECT sha256 FROM tombstones)",
        &[],
    )
}

/// Pages of each table and its indexes (SQLite's `dbstat`), largest first.
///
/// # Errors
/// The store's errors.
pub fn table_bytes(tx: &dyn Tx) -> Result<Vec<TableBytes>> {
    let sql = match tx.dialect() {
        // `aggregate = TRUE`: one row per b-tree, summed inside SQLite, instead of a row per page
        // (the dashboard's operations view asks for this on every visit).
        Dialect::Sqlite => {
            "SELECT COALESCE(m.tbl_name, d.name), SUM(d.pgsize) FROM dbstat d LEFT JOIN sqlite_schema m ON m.name = d.name
             WHERE d.aggregate = TRUE GROUP BY 1 ORDER BY 2 DESC, 1"
        }
        // A table with its indexes and TOAST, from the catalogue (no scan of the rows).
        Dialect::Postgres => {
            "SELECT c.relname::text, pg_total_relation_size(c.oid) FROM pg_class c
             JOIN pg_namespace n ON n.oid = c.relnamespace
             WHERE c.relkind = 'r' AND n.nspname = current_schema() ORDER BY 2 DESC, 1"
        }
    };
    tx.rows(sql, &[], |r| {
        Ok(TableBytes {
            table: r.get(0)?,
            bytes: r.get(1)?,
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
