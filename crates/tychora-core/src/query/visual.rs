//! The query's side of the visual channel: an exact scan of the snapshot's eligible pictures for
//! the nearest to the query's vector.
//!
//! An exact scan, not an ANN index: a corpus holds pictures by the thousand where it holds windows
//! by the million, and scanning them needs no generation file to build, publish and collect. A
//! corpus with hundreds of thousands of pictures would want the text channel's usearch
//! generations; the rows scanned here are what such a generation would be built from.

use crate::error::Result;
use crate::lexical::Filter;
use crate::store::tx::Tx;
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
    conn: &dyn Tx,
    spec: &FamilySpec,
    snapshot_id: i64,
    filter: &Filter,
    query: &[f32],
    limit: usize,
) -> Result<Vec<VisualHit>> {
    let query_norm = norm(query);
    let mut hits: Vec<VisualHit> = Vec::new();
    crate::store::pictures::scan_vectors(
        conn,
        snapshot_id,
        &family_key(spec),
        filter,
        |chunk_id, owner_id, sha256, blob| {
            let vector = from_blob(blob);
            if vector.len() != query.len() {
                return;
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
        },
    )?;
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
pub fn coverage(conn: &dyn Tx, spec: &FamilySpec, snapshot_id: i64) -> Result<(i64, i64)> {
    crate::store::pictures::coverage(conn, snapshot_id, &family_key(spec))
}
