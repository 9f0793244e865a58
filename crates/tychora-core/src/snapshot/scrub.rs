//! Erasure in every snapshot at once. An original erased on request (a legal request) must leave
//! no text behind in what any snapshot answers: pinned snapshots answer without it, as the
//! current one does. The erasure job publishes a snapshot without the sources as an add does;
//! this pass then takes the erased revisions out of every retained snapshot:
//!
//! 1. each referenced lexical generation whose segments still hold one of their documents (live,
//!    or deleted but not yet merged away) is copied without them, the segments that held them
//!    merged anew, and its document count checked against what its snapshot keeps;
//! 2. each vector generation holding one of their windows (or a layer over such a base) is
//!    rewritten from the records of what its snapshot keeps;
//!
//! (on a search cluster, steps 1 and 2 are one deletion from every part of the prefix, referenced
//! or waiting for collection, before anything is switched: the generations stay as they are;)
//! 3. one transaction points the snapshots at the new generations, removes the erased members
//!    (with their chunk counts) and the vector records of the erased windows' inputs that nothing
//!    kept needs.
//!
//! The canonical rows (units, chunks, locators) of the erased extractions are left to the purge's
//! batches, which the caller runs next; the old generations are collected once no reader holds
//! them. Every step is found again from the tombstones, so a pass killed half-way is finished by
//! the next one.

use std::collections::{HashMap, HashSet};

use super::{members, read_rows, row_inputs, text_generation, write_text};
use crate::clock::now_ms;
use crate::error::{Error, Result};
use crate::lexical::port::LexicalGenerations;
use crate::store::batches::{self, Repoint};
use crate::store::erasure;
use crate::store::tx::Tx;
use crate::vector::VectorGenerations;

/// What a scrub changed.
#[derive(Debug, Clone, Default)]
pub struct Scrubbed {
    /// Snapshots that held one of the erased revisions.
    pub snapshots: usize,
    /// Lexical generations rewritten without them.
    pub lexical_generations: usize,
    /// Vector generations rewritten without them.
    pub vector_generations: usize,
    /// Vector records of their windows' inputs removed.
    pub vector_records: usize,
    /// The extractions of the erased revisions (for the purge's batches).
    pub extractions: Vec<i64>,
    /// The input sha256s whose records went (for the user-level cache).
    pub inputs: Vec<String>,
}

/// Revisions erased on request whose text is still somewhere in the store: a member of a
/// snapshot, or extraction rows not yet removed.
///
/// # Errors
/// SQLite errors.
pub fn pending_erasures(conn: &dyn Tx) -> Result<Vec<i64>> {
    erasure::pending(conn)
}

/// Takes `revisions` out of every snapshot and index generation (see the module's comment).
///
/// # Errors
/// `E_CORRUPT` when a rewritten generation's count differs from what its snapshot keeps (nothing
/// is switched then); tantivy, I/O and SQLite errors.
pub fn scrub(
    conn: &dyn Tx,
    generations: &dyn LexicalGenerations,
    vectors: &dyn VectorGenerations,
    revisions: &[i64],
) -> Result<Scrubbed> {
    let mut out = Scrubbed::default();
    if revisions.is_empty() {
        return Ok(out);
    }
    let erased: HashSet<i64> = revisions.iter().copied().collect();
    let as_u64: Vec<u64> = revisions
        .iter()
        .map(|r| u64::try_from(*r).unwrap_or_default())
        .collect();
    out.extractions = erasure::extractions_of(conn, revisions)?;
    let erased_chunks: HashSet<u64> = erasure::chunks_of(conn, &out.extractions)?
        .into_iter()
        .map(|id| u64::try_from(id).unwrap_or_default())
        .collect();
    let holding: HashSet<i64> = erasure::snapshots_holding(conn, revisions)?
        .into_iter()
        .collect();
    out.snapshots = holding.len();
    // A search cluster deletes the revisions' documents from every part it keeps, referenced or
    // not, before anything is switched; its generations then need no rewriting.
    let lexical_in_place = generations.erase(&as_u64)?;
    let vectors_in_place = vectors.erase(&as_u64)?;
    let snapshots = erasure::all_snapshots(conn)?;
    let mut replacements = Vec::new();
    let mut needed_inputs: HashSet<String> = HashSet::new();
    let mut erased_inputs: HashMap<i64, HashSet<String>> = HashMap::new();
    for &snapshot_id in &snapshots {
        let all = members(conn, snapshot_id)?;
        let (gone, kept): (Vec<_>, Vec<_>) = all
            .into_iter()
            .partition(|m| erased.contains(&m.revision_id));
        let kept_rows = read_rows(conn, &kept)?;
        let expected = kept_rows.len() as u64;
        if !lexical_in_place
            && let Some(replacement) =
                scrub_lexical(conn, generations, snapshot_id, &as_u64, expected)?
        {
            replacements.push(replacement);
        }
        let Some(text) = text_generation(conn, snapshot_id)? else {
            continue;
        };
        let family = crate::store::vectors::family_id(conn, &text.spec)?;
        let kept_inputs: Vec<String> = row_inputs(&text.spec.representation, &kept_rows)
            .into_iter()
            .flat_map(|d| d.shas)
            .collect();
        let gone_rows = read_rows(conn, &gone)?;
        erased_inputs.entry(family).or_default().extend(
            row_inputs(&text.spec.representation, &gone_rows)
                .into_iter()
                .flat_map(|d| d.shas),
        );
        if !vectors_in_place
            && vectors.holds(&text.generation, &text.sha256, &as_u64, &erased_chunks)?
        {
            let name = format!("g{}-e{snapshot_id}-f{family}.tyv", now_ms());
            let written = write_text(
                conn,
                vectors,
                family,
                &text.spec,
                &name,
                &kept_rows,
                &kept_inputs,
            )?;
            if written.documents != expected {
                vectors.discard(&name);
                return Err(Error::Corrupt(format!(
                    "vector generation {name} holds {} vectors after the erasure, snapshot {snapshot_id} keeps {expected}; nothing switched",
                    written.documents
                )));
            }
            let sha256 = written.sha256;
            let (old_batch, family_id, _, _) = batches::of_generation(conn, &text.generation)?;
            replacements.push(Repoint {
                snapshot_id,
                family_id,
                old_batch,
                generation: name,
                documents: expected,
                sha256: Some(sha256),
            });
            out.vector_generations += 1;
        }
        needed_inputs.extend(kept_inputs);
    }
    out.lexical_generations = replacements.iter().filter(|r| r.sha256.is_none()).count();
    conn.together(true, |tx| {
        batches::repoint(tx, &replacements, now_ms())?;
        for &revision in revisions {
            erasure::take_out(tx, revision)?;
        }
        for (family, inputs) in &erased_inputs {
            for sha in inputs.difference(&needed_inputs) {
                out.vector_records += erasure::delete_vector_record(tx, *family, sha)?;
                out.inputs.push(sha.clone());
            }
        }
        erasure::queue_purge(tx)
    })?;
    Ok(out)
}

/// The lexical generation of `snapshot_id` copied without `revisions`, when it holds any of them.
fn scrub_lexical(
    conn: &dyn Tx,
    generations: &dyn LexicalGenerations,
    snapshot_id: i64,
    revisions: &[u64],
    expected: u64,
) -> Result<Option<Repoint>> {
    let Ok(generation) = super::lexical_generation(conn, snapshot_id) else {
        return Ok(None);
    };
    if !generations.holds_revisions(&generation, revisions)? {
        return Ok(None);
    }
    let name = format!("g{}-e{snapshot_id}", now_ms());
    let documents = match generations.scrub(&generation, &name, revisions) {
        Ok(n) => n,
        Err(e) => {
            generations.discard(&name);
            return Err(e);
        }
    };
    if documents != expected {
        generations.discard(&name);
        return Err(Error::Corrupt(format!(
            "lexical generation {name} holds {documents} documents after the erasure, snapshot {snapshot_id} keeps {expected}; nothing switched"
        )));
    }
    let (old_batch, family_id, _, _) = batches::of_generation(conn, &generation)?;
    Ok(Some(Repoint {
        snapshot_id,
        family_id,
        old_batch,
        generation: name,
        documents,
        sha256: None,
    }))
}
