//! Pictures of a snapshot (`visual_assets`) and their vectors (`visual_vectors`), as the visual
//! channel reads them.

use rusqlite::{Connection, params};

use crate::error::Result;
use crate::lexical::Filter;
use crate::vector::records::to_blob;

/// Calls `visit(chunk id, owner id, picture sha256, vector blob)` for each eligible picture of
/// the snapshot that family `family_key` holds a vector for, with the window holding the
/// picture's unit (rows stream: no vector is held after its visit).
///
/// # Errors
/// SQLite errors.
pub fn scan_vectors(
    conn: &Connection,
    snapshot_id: i64,
    family_key: &str,
    filter: &Filter,
    mut visit: impl FnMut(i64, i64, String, &[u8]),
) -> Result<()> {
    let mut sql = String::from(
        "SELECT c.id, COALESCE(c.owner_chunk_id, c.id), v.sha256, vv.vector
         FROM snapshot_members m
         CROSS JOIN visual_assets v ON v.extraction_id = m.extraction_id
         CROSS JOIN visual_vectors vv ON vv.family = ?2 AND vv.sha256 = v.sha256
         CROSS JOIN sources s ON s.id = m.source_id
         CROSS JOIN collections col ON col.id = s.collection_id
         CROSS JOIN chunks c ON c.id = (
             SELECT w.id FROM chunks w
             WHERE w.extraction_id = v.extraction_id AND w.last_unit_id >= v.unit_id
             ORDER BY w.last_unit_id LIMIT 1)
         WHERE m.snapshot_id = ?1 AND v.unit_id IS NOT NULL",
    );
    let mut values: Vec<super::tx::Value> = vec![snapshot_id.into(), family_key.to_string().into()];
    super::filter::push_sql(filter, &mut sql, &mut values);
    let bound = super::tx::params(&values);
    let mut stmt = conn.prepare_cached(&sql)?;
    let mut rows = stmt.query(rusqlite::params_from_iter(bound.iter()))?;
    while let Some(r) = rows.next()? {
        let blob = r.get_ref(3)?.as_blob().map_err(rusqlite::Error::from)?;
        visit(r.get(0)?, r.get(1)?, r.get(2)?, blob);
    }
    Ok(())
}

/// `(pictures with a vector of the family, pictures without one)` in the snapshot, counted by
/// sha256.
///
/// # Errors
/// SQLite errors.
pub fn coverage(conn: &Connection, snapshot_id: i64, family_key: &str) -> Result<(i64, i64)> {
    Ok(conn.query_row(
        "SELECT COUNT(DISTINCT v.sha256),
                COUNT(DISTINCT CASE WHEN vv.sha256 IS NULL THEN v.sha256 END)
         FROM snapshot_members m JOIN visual_assets v ON v.extraction_id = m.extraction_id
         LEFT JOIN visual_vectors vv ON vv.family = ?2 AND vv.sha256 = v.sha256
         WHERE m.snapshot_id = ?1",
        params![snapshot_id, family_key],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?)
}

/// `(sha256, collection name)` of an extraction's pictures, the collection being the member's.
///
/// # Errors
/// SQLite errors.
pub fn of_extraction(
    conn: &Connection,
    extraction_id: i64,
    collection_id: i64,
) -> Result<Vec<(String, String)>> {
    Ok(conn
        .prepare_cached(
            "SELECT v.sha256, c.name FROM visual_assets v
             JOIN collections c ON c.id = ?2 WHERE v.extraction_id = ?1",
        )?
        .query_map(params![extraction_id, collection_id], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })?
        .collect::<rusqlite::Result<_>>()?)
}

/// Whether family `family_key` holds a vector of this picture.
///
/// # Errors
/// SQLite errors.
pub fn has_vector(conn: &Connection, family_key: &str, sha256: &str) -> Result<bool> {
    Ok(conn
        .prepare_cached(
            "SELECT EXISTS (SELECT 1 FROM visual_vectors WHERE family = ?1 AND sha256 = ?2)",
        )?
        .query_row(params![family_key, sha256], |r| r.get(0))?)
}

/// Stores pictures' vectors `(sha256, vector)` of one embedder answer (`receipt`, JSON).
///
/// # Errors
/// SQLite errors.
pub fn put_vectors(
    tx: &Connection,
    family_key: &str,
    rows: &[(&str, &[f32])],
    receipt: &str,
    now: i64,
) -> Result<()> {
    let mut insert = tx.prepare_cached(
        "INSERT OR REPLACE INTO visual_vectors (family, sha256, dimension, vector, receipt_json, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?;
    for (sha, vector) in rows {
        insert.execute(params![
            family_key,
            sha,
            vector.len() as i64,
            to_blob(vector),
            receipt,
            now
        ])?;
    }
    Ok(())
}
