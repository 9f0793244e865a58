//! The visual channel (DESIGN §9): a multimodal model embeds each visual asset's pixels and the
//! query's words into one space, so a query finds a chart or a photograph whose words are in no
//! text layer. Its vectors are a family of their own, keyed by the asset's bytes (`visual_vectors`):
//! a picture that recurs in later revisions or other documents is embedded once.
//!
//! Search is an exact scan of the snapshot's eligible assets, not an ANN index: a corpus holds
//! pictures by the thousand where it holds windows by the million, and scanning 10,000 vectors of
//! 1,024 dimensions is ~10 M multiply-adds (a few ms) with no generation file to build, publish and
//! collect. A corpus with hundreds of thousands of pictures would want the text channel's usearch
//! generations; the rows here are what such a generation would be built from.

use std::collections::HashMap;
use std::time::Instant;

use rusqlite::{Connection, params};
use serde::{Deserialize, Serialize};

use super::embedder::{Embedded, FamilySpec};
use super::records::{from_blob, to_blob};
use crate::artifact::ArtifactStore;
use crate::error::{Error, Result};
use crate::lexical::Filter;
use crate::parse::image;
use crate::snapshot::Member;
use crate::store::now_ms;

/// Pictures per embedder call: a failure loses little, and vectors are stored after every call.
const CALL_PICTURES: usize = 16;

/// One picture to embed.
#[derive(Debug, Clone, Copy)]
pub struct Picture<'a> {
    /// Its bytes, as retained.
    pub bytes: &'a [u8],
    /// Its media type: PNG, JPEG, GIF or WebP.
    pub media_type: &'a str,
}

/// Embeds pictures and text queries into one space (a provider the TypeScript side calls).
pub trait VisualEmbedder: Send + Sync {
    /// The family its vectors belong to (`representation` is `image`).
    fn spec(&self) -> &FamilySpec;
    /// Embeds pictures as documents, in order.
    ///
    /// # Errors
    /// `E_PROVIDER` for a provider failure.
    fn embed_pictures(&self, pictures: &[Picture<'_>]) -> Result<Embedded>;
    /// Embeds a search query's text.
    ///
    /// # Errors
    /// `E_PROVIDER` for a provider failure.
    fn embed_query(&self, text: &str) -> Result<Embedded>;
}

/// What making sure the snapshot's pictures have vectors did.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct VisualReport {
    /// Distinct pictures the members hold whose collection permits upload.
    pub pictures: usize,
    /// Already embedded (in this family).
    pub cached: usize,
    /// Sent to the embedder now.
    pub embedded: usize,
    /// Not embeddable: pixels that do not decode within the limits, or bytes no longer retained.
    pub skipped: usize,
    /// Held only by collections that do not permit upload.
    pub not_permitted: usize,
    /// Tokens the provider reported.
    pub tokens: u64,
    /// Embedder calls.
    pub calls: usize,
    /// Time spent embedding.
    pub embed_ms: u64,
}

/// The key a family's rows are stored under.
fn family_key(spec: &FamilySpec) -> String {
    spec.cache_key()
}

/// Makes sure every picture `members` hold, in a collection `permits` allows, has a vector of the
/// embedder's family. A picture is sent in the form a vision upload takes (`image::upload_form`:
/// as it is when PNG, JPEG, GIF or WebP within 5 MB and 8000 px a side, else decoded under the
/// pixel and memory limits and re-encoded as PNG of at most 1568 px), so a TIFF is embedded too and
/// a decompression bomb is refused, not sent. Vectors are stored after every call, so a failure
/// keeps what was paid for.
///
/// # Errors
/// `E_PROVIDER` from the embedder (nothing is published by the caller then); SQLite errors.
pub fn ensure(
    conn: &Connection,
    artifacts: &ArtifactStore,
    embedder: &dyn VisualEmbedder,
    members: &[Member],
    permits: &dyn Fn(&str) -> bool,
    limits: (u64, u64),
    on_progress: &dyn Fn(usize, usize),
) -> Result<VisualReport> {
    let (max_pixels, max_alloc) = limits;
    let family = family_key(embedder.spec());
    let mut report = VisualReport::default();
    // Per picture: whether a permitting collection holds it.
    let mut wanted: HashMap<String, bool> = HashMap::new();
    {
        let mut stmt = conn.prepare_cached(
            "SELECT v.sha256, c.name FROM visual_assets v
             JOIN collections c ON c.id = ?2 WHERE v.extraction_id = ?1",
        )?;
        for m in members {
            let rows = stmt.query_map(params![m.extraction_id, m.collection_id], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
            })?;
            for row in rows {
                let (sha, collection) = row?;
                *wanted.entry(sha).or_insert(false) |= permits(&collection);
            }
        }
    }
    let mut have = conn.prepare_cached(
        "SELECT EXISTS (SELECT 1 FROM visual_vectors WHERE family = ?1 AND sha256 = ?2)",
    )?;
    let mut todo: Vec<String> = Vec::new();
    let mut shas: Vec<_> = wanted.into_iter().collect();
    shas.sort();
    for (sha, permitted) in shas {
        if !permitted {
            report.not_permitted += 1;
            continue;
        }
        report.pictures += 1;
        if have.query_row(params![family, sha], |r| r.get::<_, bool>(0))? {
            report.cached += 1;
        } else {
            todo.push(sha);
        }
    }
    let total = todo.len();
    on_progress(0, total);
    let started = Instant::now();
    let mut done = 0;
    for batch in todo.chunks(CALL_PICTURES) {
        // Bytes erased for a legal request (or lost), or pixels that do not decode within the
        // limits, leave the picture unembedded, not the job failed.
        let mut held: Vec<(&str, &'static str, Vec<u8>)> = Vec::with_capacity(batch.len());
        for sha in batch {
            let upload = artifacts
                .get(sha)
                .map_err(|e| e.to_string())
                .and_then(|bytes| {
                    image::upload_form(&bytes, max_pixels, max_alloc).map_err(|f| f.message)
                });
            match upload {
                Ok((media_type, bytes)) => held.push((sha, media_type, bytes)),
                Err(why) => {
                    log::warn!("visual asset {sha} is not embedded: {why}");
                    report.skipped += 1;
                }
            }
        }
        done += batch.len();
        if held.is_empty() {
            continue;
        }
        let pictures: Vec<Picture<'_>> = held
            .iter()
            .map(|(_, media_type, bytes)| Picture { bytes, media_type })
            .collect();
        let embedded = embedder.embed_pictures(&pictures)?;
        check_answer(embedder.spec(), &embedded, held.len())?;
        report.calls += 1;
        report.tokens += embedded.tokens.iter().map(|&t| t as u64).sum::<u64>();
        let receipt = embedded.receipt.to_string();
        let now = now_ms();
        let tx = conn.unchecked_transaction()?;
        {
            let mut insert = tx.prepare_cached(
                "INSERT OR REPLACE INTO visual_vectors (family, sha256, dimension, vector, receipt_json, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )?;
            for ((sha, _, _), vector) in held.iter().zip(&embedded.vectors) {
                insert.execute(params![
                    family,
                    sha,
                    vector.len() as i64,
                    to_blob(vector),
                    receipt,
                    now
                ])?;
            }
        }
        tx.commit()?;
        report.embedded += held.len();
        on_progress(done, total);
    }
    report.embed_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    Ok(report)
}

/// One vector per picture, each of the family's dimension and finite.
fn check_answer(spec: &FamilySpec, embedded: &Embedded, count: usize) -> Result<()> {
    if embedded.vectors.len() != count {
        return Err(Error::Provider(format!(
            "{}/{} returned {} vectors for {count} pictures",
            spec.provider,
            spec.model,
            embedded.vectors.len()
        )));
    }
    if let Some(bad) = embedded
        .vectors
        .iter()
        .find(|v| v.len() != spec.dimension || v.iter().any(|x| !x.is_finite()))
    {
        return Err(Error::Provider(format!(
            "{}/{} returned a vector of {} numbers (not {} finite ones)",
            spec.provider,
            spec.model,
            bad.len(),
            spec.dimension
        )));
    }
    Ok(())
}

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
    filter.push_sql(&mut sql, &mut values);
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
