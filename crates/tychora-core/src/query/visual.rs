//! The query's side of the visual channel: an exact scan of the snapshot's eligible pictures for
//! the nearest to the query's vector.
//!
//! An exact scan, not an ANN index: a corpus holds pictures by the thousand where it holds windows
//! by the million, and scanning them needs no generation file to build, publish and collect. A
//! corpus with hundreds of thousands of pictures would want the text channel's usearch
//! generations; the rows scanned here are what such a generation would be built from.

use rusqlite::{Connection, params};

use crate::error::Result;
use crate::lexical::Filter;
use crate::vector::FamilySpec;
use crate::vector::records::from_blob;
use crate::vector::visual::family_key;

/// One hit of the visual channel: the window that holds the picture's unit, its owner, the
/// picture and its cosine similarity to the query.
#[derive(Debug, Clone, PartialEq)]
pub struct VisualHit {
    /// The chunk (window) holding the unit that finds the picture.
    pub chunk_id: i64,
    /// Its evidence owner.
    pub owner_id: i64,
    /// The picture's sha256.
    pub sha256: String,
    /// Cosine similarity.
    pub similarity: f64,
}

/// The snapshot's eligible pictures nearest to `query` (a vector of the family), best first, at
/// most `limit`. A picture held by several windows votes for each.
///
/// # Errors
/// SQLite errors.
pub fn search(
    conn: &Connection,
    spec: &FamilySpec,
    snapshot_id: i64,
    filter: &Filter,
    query: &[f32],
    limit: usize,
) -> Result<Vec<VisualHit>> {
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
    let mut values: Vec<rusqlite::types::Value> = vec![snapshot_id.into(), family_key(spec).into()];
    crate::store::filter::push_sql(filter, &mut sql, &mut values);
    let mut stmt = conn.prepare_cached(&sql)?;
    let query_norm = norm(query);
    let mut hits: Vec<VisualHit> = Vec::new();
    let rows = stmt.query_map(rusqlite::params_from_iter(values), |r| {
        Ok((
            r.get::<_, i64>(0)?,
            r.get::<_, i64>(1)?,
            r.get::<_, String>(2)?,
            r.get::<_, Vec<u8>>(3)?,
        ))
    })?;
    for row in rows {
        let (chunk_id, owner_id, sha256, blob) = row?;
        let vector = from_blob(&blob);
        if vector.len() != query.len() {
            continue;
        }
        let dot: f64 = vector
            .iter()
            .zip(query)
            .map(|(a, b)| f64::from(*a) * f64::from(*b))
            .sum();
        let denominator = norm(&vector) * query_norm;
        let similarity = if denominator > 0.0 {
            dot / denominator
        } else {
            0.0
        };
        hits.push(VisualHit {
            chunk_id,
            owner_id,
            sha256,
            similarity,
        });
    }
    hits.sort_by(|a, b| {
        b.similarity
            .total_cmp(&a.similarity)
            .then(a.chunk_id.cmp(&b.chunk_id))
    });
    let mut seen = std::collections::HashSet::new();
    hits.retain(|h| seen.insert(h.chunk_id));
    hits.truncate(limit);
    Ok(hits)
}

fn norm(v: &[f32]) -> f64 {
    v.iter()
        .map(|x| f64::from(*x) * f64::from(*x))
        .sum::<f64>()
        .sqrt()
}

/// Vectors of the family stored for pictures, and how many of the snapshot's pictures lack one.
///
/// # Errors
/// SQLite errors.
pub fn coverage(conn: &Connection, spec: &FamilySpec, snapshot_id: i64) -> Result<(i64, i64)> {
    Ok(conn.query_row(
        "SELECT COUNT(DISTINCT v.sha256),
                COUNT(DISTINCT CASE WHEN vv.sha256 IS NULL THEN v.sha256 END)
         FROM snapshot_members m JOIN visual_assets v ON v.extraction_id = m.extraction_id
         LEFT JOIN visual_vectors vv ON vv.family = ?2 AND vv.sha256 = v.sha256
         WHERE m.snapshot_id = ?1",
        params![snapshot_id, family_key(spec)],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?)
}
