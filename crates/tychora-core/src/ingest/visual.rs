//! Publication's side of the visual channel: the pictures a snapshot will hold get vectors of the
//! multimodal family before it is published (`vector::visual` holds the vocabulary).

use std::collections::HashMap;
use std::time::Instant;

use crate::artifact::ArtifactStore;
use crate::clock::now_ms;
use crate::error::{Error, Result};
use crate::parse::image;
use crate::snapshot::Member;
use crate::store::pictures;
use crate::store::tx::Tx;
use crate::vector::visual::family_key;
use crate::vector::{Embedded, FamilySpec, Picture, VisualEmbedder, VisualReport};

/// Pictures per embedder call: a failure loses little, and vectors are stored after every call.
const CALL_PICTURES: usize = 16;

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
    conn: &dyn Tx,
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
    for m in members {
        for (sha, collection) in pictures::of_extraction(conn, m.extraction_id, m.collection_id)? {
            *wanted.entry(sha).or_insert(false) |= permits(&collection);
        }
    }
    let mut todo: Vec<String> = Vec::new();
    let mut shas: Vec<_> = wanted.into_iter().collect();
    shas.sort();
    for (sha, permitted) in shas {
        if !permitted {
            report.not_permitted += 1;
            continue;
        }
        report.pictures += 1;
        if pictures::has_vector(conn, &family, &sha)? {
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
        let rows: Vec<(&str, &[f32])> = held
            .iter()
            .zip(&embedded.vectors)
            .map(|((sha, _, _), vector)| (*sha, vector.as_slice()))
            .collect();
        conn.together(false, |tx| {
            pictures::put_vectors(tx, &family, &rows, &receipt, now)
        })?;
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
