//! The text channel's generation as a layer over its parent's: when a snapshot changes a few
//! files, publication writes the new windows' vectors and the removed windows' keys over the
//! parent's full generation file instead of rebuilding a graph over the whole corpus (an HNSW
//! graph of 50,000 windows takes 21–27 s on 2 cores). Layers do not stack: a new layer carries
//! its parent layer's vectors forward over the same base, and compaction folds a layer that has
//! grown into a new full generation, off the add's critical path.

use std::collections::HashSet;
use std::path::Path;

use super::{Row, TextPublication};
use crate::error::{Error, Result};
use crate::store::tx::Tx;
use crate::vector::{self, Entry, VectorIndex, index::BaseRef};

/// A layer holds at most this share of its base (vectors it adds plus keys it removes) before
/// publication builds a full generation again: past it, every query scans the layer's vectors
/// exactly and the base's graph holds dead keys.
const LAYER_SHARE: f64 = 0.10;
/// ... and always at least this many, so a small corpus is not rebuilt on every change.
const LAYER_MIN: usize = 2_048;
/// Compaction folds a layer into a full generation past this share of its base.
pub(crate) const FOLD_SHARE: f64 = 0.05;

/// What a new layer starts from: the base, the parent layer's vectors (if the parent is a
/// layer) and the base keys already removed.
pub(super) struct LayerPlan {
    base: BaseRef,
    /// The parent layer, opened without its base (its vectors are carried forward).
    parent: Option<VectorIndex>,
    /// Chunk ids of the members the new snapshot drops or replaces.
    removed: HashSet<u64>,
}

/// The layer plan for a publication over `parent_snapshot`, or `None` for a full generation: the
/// parent has no text generation of this family, its layer cannot be read, or the layer would
/// outgrow [`LAYER_SHARE`] of its base.
pub(super) fn plan(
    conn: &dyn Tx,
    parent_snapshot: i64,
    text: &TextPublication<'_>,
    removed_extractions: &[i64],
    added_documents: u64,
) -> Result<Option<LayerPlan>> {
    let Some(generation) = super::text_generation(conn, parent_snapshot)? else {
        return Ok(None);
    };
    if generation.spec != *text.embedder.spec() {
        return Ok(None);
    }
    let (_, _, doc_count, base_generation) =
        crate::store::batches::of_generation(conn, &generation.generation)?;
    let (base, parent) = if base_generation.is_some() {
        // The parent is a layer: small, read whole; its header names the base.
        let path = text.dir.join(&generation.generation);
        let layer = match VectorIndex::open_layer(&path, &generation.sha256) {
            Ok(layer) => layer,
            Err(e) => {
                log::warn!(
                    "cannot read vector layer {}: {e}; building afresh",
                    path.display()
                );
                return Ok(None);
            }
        };
        let Some((base, _, _)) = layer.layer() else {
            return Ok(None);
        };
        if !text.dir.join(&base.name).is_file() {
            // A missing base cannot carry another layer: build a full generation instead.
            return Ok(None);
        }
        (base.clone(), Some(layer))
    } else {
        // A full parent is the base as it is: not read here (readers check its sha256 on open).
        if !text.dir.join(&generation.generation).is_file() {
            return Ok(None);
        }
        let count = usize::try_from(doc_count).unwrap_or_default();
        let base = BaseRef {
            name: generation.generation,
            sha256: generation.sha256,
            count,
        };
        (base, None)
    };
    let removed = chunk_ids(conn, removed_extractions)?;
    let carried = parent
        .as_ref()
        .and_then(VectorIndex::layer)
        .map_or(0, |(_, own, gone)| own + gone);
    let size = carried + removed.len() + usize::try_from(added_documents).unwrap_or(usize::MAX);
    if size as f64 > (base.count as f64 * LAYER_SHARE).max(LAYER_MIN as f64) {
        return Ok(None);
    }
    Ok(Some(LayerPlan {
        base,
        parent,
        removed,
    }))
}

/// Writes the layer of a publication whose new windows are `rows` (with their inputs'
/// `per_row` shas, all of which have vector records) and checks that it holds `expected`
/// vectors. Returns the file's name, its sha256 and the base generation's name.
pub(super) fn write(
    conn: &dyn Tx,
    text: &TextPublication<'_>,
    generation: &str,
    plan: &LayerPlan,
    rows: &[Row],
    per_row: &[String],
    expected: u64,
) -> Result<(String, String, String)> {
    let spec = text.embedder.spec();
    let records = crate::store::vectors::lookup(conn, text.family_id, per_row)?;
    let own = plan
        .parent
        .as_ref()
        .and_then(VectorIndex::own_entries)
        .unwrap_or_default();
    let carried_keys: HashSet<u64> = own.iter().map(|e| e.key).collect();
    let mut entries: Vec<Entry<'_>> = own
        .into_iter()
        .filter(|e| !plan.removed.contains(&e.key))
        .collect();
    for (row, sha) in rows.iter().zip(per_row) {
        let record = records.get(sha).ok_or_else(|| {
            Error::Corrupt(format!(
                "window {} has no vector record of {}/{}; publish again with that family configured",
                row.id, spec.provider, spec.model
            ))
        })?;
        entries.push(Entry {
            key: row.id,
            owner: row.owner,
            revision: row.revision,
            collection: &row.collection,
            kind: &row.kind,
            vector: &record.vector,
        });
    }
    // The base keys gone: the parent layer's, and the removed windows the base holds (a removed
    // window the parent layer added simply is not carried).
    let mut deleted: Vec<u64> = plan
        .parent
        .as_ref()
        .map(|p| p.deleted().iter().copied().collect())
        .unwrap_or_default();
    deleted.extend(plan.removed.iter().filter(|k| !carried_keys.contains(k)));
    deleted.sort_unstable();
    deleted.dedup();
    let count = (plan.base.count + entries.len()).saturating_sub(deleted.len()) as u64;
    if count != expected {
        return Err(Error::Corrupt(format!(
            "vector layer {generation} would hold {count} vectors but the snapshot has {expected} chunks; not published"
        )));
    }
    let name = format!("{generation}-f{}.tyv", text.family_id);
    let (sha256, _) =
        vector::index::build_layer(&text.dir.join(&name), spec, &plan.base, &deleted, &entries)?;
    Ok((name, sha256, plan.base.name.clone()))
}

/// The chunk ids of `extractions`.
fn chunk_ids(conn: &dyn Tx, extractions: &[i64]) -> Result<HashSet<u64>> {
    Ok(crate::store::erasure::chunks_of(conn, extractions)?
        .into_iter()
        .map(|id| u64::try_from(id).unwrap_or_default())
        .collect())
}

/// Whether the current snapshot's text generation is a layer grown past [`FOLD_SHARE`] of its
/// base (compaction then folds it into a full generation).
pub(crate) fn should_fold(conn: &dyn Tx, snapshot_id: i64, dir: &Path) -> Result<bool> {
    let Some(generation) = super::text_generation(conn, snapshot_id)? else {
        return Ok(false);
    };
    let layered = crate::store::batches::base_of(conn, &generation.generation)?;
    if layered.is_none() {
        return Ok(false);
    }
    let Ok(layer) = VectorIndex::open_layer(&dir.join(&generation.generation), &generation.sha256)
    else {
        // An unreadable layer is folded too: the full generation is rebuilt from the records.
        return Ok(true);
    };
    Ok(layer
        .layer()
        .is_some_and(|(base, own, gone)| (own + gone) as f64 > base.count as f64 * FOLD_SHARE))
}
