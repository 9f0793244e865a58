//! What `manage verify` checks the artifacts and indexes against: every artifact row, every row
//! that references one, chunk spans, and the snapshots' lexical generations with their counts.

use rusqlite::Connection;

use crate::error::Result;

fn all<T: rusqlite::types::FromSql>(conn: &Connection, sql: &str) -> Result<Vec<T>> {
    Ok(conn
        .prepare(sql)?
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?)
}

/// `(sha256, size)` of every artifact row.
///
/// # Errors
/// SQLite errors.
pub fn artifacts(conn: &Connection) -> Result<Vec<(String, i64)>> {
    Ok(conn
        .prepare("SELECT sha256, size FROM artifacts")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?)
}

/// The sha256 of every tombstone (erased on request or by retention).
///
/// # Errors
/// SQLite errors.
pub fn tombstoned(conn: &Connection) -> Result<Vec<String>> {
    all(conn, "SELECT DISTINCT sha256 FROM tombstones")
}

/// `(what refers, sha256, recorded size or -1)` of every row that references an artifact.
///
/// # Errors
/// SQLite errors.
pub fn artifact_references(conn: &Connection) -> Result<Vec<(String, String, i64)>> {
    Ok(conn
        .prepare(
            "SELECT 'revision ' || r.id, r.sha256, r.size FROM revisions r
             UNION ALL SELECT 'revision_artifact ' || ra.revision_id || '/' || ra.role, ra.sha256, -1 FROM revision_artifacts ra
             UNION ALL SELECT 'derived text of extraction ' || d.extraction_id, d.derived_sha256, -1 FROM doc_extractions d
             UNION ALL SELECT 'visual asset ' || v.extraction_id || '/' || v.ordinal, v.sha256, -1 FROM visual_assets v",
        )?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<rusqlite::Result<_>>()?)
}

/// Chunks whose span falls outside their revision's bytes (a document's spans index its derived
/// text, not its original).
///
/// # Errors
/// SQLite errors.
pub fn chunks_out_of_range(conn: &Connection) -> Result<i64> {
    Ok(conn.query_row(
        "SELECT COUNT(*) FROM chunks c JOIN extractions e ON e.id = c.extraction_id JOIN revisions r ON r.id = e.revision_id
         LEFT JOIN doc_extractions d ON d.extraction_id = e.id LEFT JOIN artifacts a ON a.sha256 = d.derived_sha256
         WHERE c.byte_end > COALESCE(a.size, r.size) OR c.byte_start > c.byte_end",
        [],
        |r| r.get(0),
    )?)
}

/// `(snapshot, recorded chunk count, lexical generation, its members' chunk count)` of each
/// snapshot with a verified lexical generation.
///
/// # Errors
/// SQLite errors.
pub fn lexical_snapshots(conn: &Connection) -> Result<Vec<(i64, i64, String, i64)>> {
    Ok(conn
        .prepare(
            "SELECT s.id, s.chunk_count, b.generation, (SELECT COALESCE(SUM(e.chunk_count), 0) FROM snapshot_members m JOIN extractions e ON e.id = m.extraction_id WHERE m.snapshot_id = s.id)
             FROM snapshots s JOIN snapshot_indexes si ON si.snapshot_id = s.id JOIN index_batches b ON b.id = si.batch_id JOIN index_families f ON f.id = si.family_id
             WHERE b.status = 'verified' AND f.channel = 'lexical'",
        )?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
        .collect::<rusqlite::Result<_>>()?)
}

/// Revisions erased on request, by id.
///
/// # Errors
/// SQLite errors.
pub fn erased_revisions(conn: &Connection) -> Result<Vec<i64>> {
    all(
        conn,
        "SELECT DISTINCT revision_id FROM tombstones WHERE kind = 'erasure' ORDER BY revision_id",
    )
}
