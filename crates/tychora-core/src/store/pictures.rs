//! Pictures of a snapshot (`visual_assets`) and their vectors (`visual_vectors`), as the visual
//! channel reads them.

use super::tx::{Tx, Value, args, params};
use crate::error::Result;
use crate::lexical::Filter;
use crate::vector::records::to_blob;

/// Calls `visit(chunk id, owner id, picture sha256, vector blob)` for each eligible picture of
/// the snapshot that family `family_key` holds a vector for, with the window holding the
/// picture's unit (rows stream: no vector is held after its visit).
///
/// # Errors
/// The store's errors.
pub fn scan_vectors(
    tx: &dyn Tx,
    snapshot_id: i64,
    family_key: &str,
    filter: &Filter,
    mut visit: impl FnMut(i64, i64, String, &[u8]),
) -> Result<()> {
    let join = tx.dialect().ordered_join();
    let mut sql = format!(
        "SELECT c.id, COALESCE(c.owner_chunk_id, c.id), v.sha256, vv.vector
         FROM snapshot_members m
         {join} visual_assets v ON v.extraction_id = m.extraction_id
         {join} visual_vectors vv ON vv.family = ?2 AND vv.sha256 = v.sha256
         {join} sources s ON s.id = m.source_id
         {join} collections col ON col.id = s.collection_id
         {join} chunks c ON c.id = (
             SELECT w.id FROM chunks w
             WHERE w.extraction_id = v.extraction_id AND w.last_unit_id >= v.unit_id
             ORDER BY w.last_unit_id LIMIT 1)
         WHERE m.snapshot_id = ?1 AND v.unit_id IS NOT NULL",
    );
    let mut values: Vec<Value> = vec![snapshot_id.into(), family_key.to_string().into()];
    super::filter::push_sql(filter, &mut sql, &mut values);
    tx.each(&sql, &params(&values), &mut |r| {
        let blob: Vec<u8> = r.get(3)?;
        visit(r.get(0)?, r.get(1)?, r.get(2)?, &blob);
        Ok(())
    })
}

/// `(pictures with a vector of the family, pictures without one)` in the snapshot, counted by
/// sha256.
///
/// # Errors
/// The store's errors.
pub fn coverage(tx: &dyn Tx, snapshot_id: i64, family_key: &str) -> Result<(i64, i64)> {
    tx.one(
        "SELECT COUNT(DISTINCT v.sha256),
                COUNT(DISTINCT CASE WHEN vv.sha256 IS NULL THEN v.sha256 END)
         FROM snapshot_members m JOIN visual_assets v ON v.extraction_id = m.extraction_id
         LEFT JOIN visual_vectors vv ON vv.family = ?2 AND vv.sha256 = v.sha256
         WHERE m.snapshot_id = ?1",
        args![snapshot_id, family_key],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
}

/// `(sha256, collection name)` of an extraction's pictures, the collection being the member's.
///
/// # Errors
/// The store's errors.
pub fn of_extraction(
    tx: &dyn Tx,
    extraction_id: i64,
    collection_id: i64,
) -> Result<Vec<(String, String)>> {
    tx.rows(
        "SELECT v.sha256, c.name FROM visual_assets v
         JOIN collections c ON c.id = ?2 WHERE v.extraction_id = ?1",
        args![extraction_id, collection_id],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
}

/// Whether family `family_key` holds a vector of this picture.
///
/// # Errors
/// The store's errors.
pub fn has_vector(tx: &dyn Tx, family_key: &str, sha256: &str) -> Result<bool> {
    tx.value(
        "SELECT EXISTS (SELECT 1 FROM visual_vectors WHERE family = ?1 AND sha256 = ?2)",
        args![family_key, sha256],
    )
}

/// Stores pictures' vectors `(sha256, vector)` of one embedder answer (`receipt`, JSON).
///
/// # Errors
/// The store's errors.
pub fn put_vectors(
    tx: &dyn Tx,
    family_key: &str,
    rows: &[(&str, &[f32])],
    receipt: &str,
    now: i64,
) -> Result<()> {
    // A newer answer for the same picture replaces the stored one.
    let mut insert = tx.prepare(
        "INSERT INTO visual_vectors (family, sha256, dimension, vector, receipt_json, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)
         ON CONFLICT (family, sha256) DO UPDATE SET dimension = excluded.dimension,
           vector = excluded.vector, receipt_json = excluded.receipt_json, created_at = excluded.created_at",
    )?;
    for (sha, vector) in rows {
        let blob = to_blob(vector);
        insert.write(args![
            family_key,
            *sha,
            vector.len(),
            blob.as_slice(),
            receipt,
            now
        ])?;
    }
    Ok(())
}
