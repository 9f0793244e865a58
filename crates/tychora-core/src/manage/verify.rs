//! `manage verify`: every artifact re-hashed, every reference checked, every retained snapshot's
//! index counted against its chunk rows.

use serde::{Deserialize, Serialize};

use crate::engine::Engine;
use crate::error::{ErrorCode, Result};
use crate::store::integrity;

/// One problem `verify` found.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Problem {
    /// What was checked.
    pub object: String,
    /// Stable code.
    pub code: ErrorCode,
    /// What is wrong.
    pub message: String,
}

/// The verification report.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct VerifyReport {
    /// True when no problem was found.
    pub ok: bool,
    /// Artifacts re-hashed.
    pub artifacts_checked: usize,
    /// Rows referencing artifacts that were checked.
    pub references_checked: usize,
    /// Snapshots whose indexes were checked.
    pub snapshots_checked: usize,
    /// Revisions erased on request checked to be out of every snapshot, row and lexical
    /// generation.
    pub erasures_checked: usize,
    /// Problems, if any.
    pub problems: Vec<Problem>,
}

/// Re-hashes every artifact, checks every row that references one, and checks that each
/// retained snapshot's lexical index matches its chunk rows.
///
/// # Errors
/// SQLite errors (problems found are data in the report).
pub(crate) fn verify(engine: &Engine) -> Result<VerifyReport> {
    engine.with_reader(|conn| {
        let mut problems = Vec::new();
        let artifacts = integrity::artifacts(conn)?;
        // Erased originals: a tombstone says the file is gone on purpose; one still on disk is a
        // problem (the erasure did not finish).
        let erased: std::collections::HashSet<String> = integrity::tombstoned(conn)?.into_iter().collect();
        let mut sizes = std::collections::HashMap::new();
        // Read back several at once: hashing keeps the cores busy on the folder, and a bucket's
        // round trips overlap (one at a time, 1,664 objects took 2.7 s on loopback).
        let store = engine.artifacts();
        let checked = crate::parallel::map(&artifacts, store.concurrency(), |(sha, size)| -> Result<Option<Problem>> {
            if erased.contains(sha) {
                return Ok(store.exists(sha)?.then(|| Problem { object: format!("artifact {sha}"), code: ErrorCode::Conflict, message: "has a tombstone but its file is still on disk; run `manage delete-original` again".into() }));
            }
            Ok(match store.get(sha) {
                Ok(bytes) if bytes.len() as i64 == *size => None,
                Ok(bytes) => Some(Problem { object: format!("artifact {sha}"), code: ErrorCode::ChecksumMismatch, message: format!("size {} but {} recorded", bytes.len(), size) }),
                Err(e) => Some(Problem { object: format!("artifact {sha}"), code: e.code(), message: e.to_string() }),
            })
        });
        for ((sha, size), outcome) in artifacts.iter().zip(checked) {
            match outcome {
                Some(Ok(None)) => {
                    sizes.insert(sha.clone(), *size);
                }
                Some(Ok(Some(problem))) => {
                    // A tombstoned artifact still stored counts its size: its references are fine.
                    if erased.contains(sha) {
                        sizes.insert(sha.clone(), *size);
                    }
                    problems.push(problem);
                }
                Some(Err(e)) => return Err(e),
                None => problems.push(Problem { object: format!("artifact {sha}"), code: ErrorCode::Internal, message: "its check panicked".into() }),
            }
        }
        let references = integrity::artifact_references(conn)?;
        for (object, sha, size) in &references {
            match sizes.get(sha) {
                None => problems.push(Problem { object: object.clone(), code: ErrorCode::NotFound, message: format!("references artifact {sha}, which is missing or damaged") }),
                Some(actual) if *size >= 0 && actual != size => {
                    problems.push(Problem { object: object.clone(), code: ErrorCode::ChecksumMismatch, message: format!("records size {size}, artifact has {actual}") });
                }
                Some(_) => {}
            }
        }
        let out_of_range = integrity::chunks_out_of_range(conn)?;
        if out_of_range > 0 {
            problems.push(Problem { object: "chunks".into(), code: ErrorCode::Corrupt, message: format!("{out_of_range} chunk spans fall outside their revision's bytes") });
        }
        let snapshots = integrity::lexical_snapshots(conn)?;
        // Erasures on request: nothing of the text may remain in any snapshot, row or index.
        let erased = integrity::erased_revisions(conn)?;
        for revision in crate::snapshot::pending_erasures(conn)? {
            problems.push(Problem {
                object: format!("revision {revision}"),
                code: ErrorCode::Conflict,
                message: "erased on request, but a snapshot or extraction rows still hold its text; run `manage purge` to finish the erasure".into(),
            });
        }
        let erased_u64: Vec<u64> = erased.iter().map(|r| u64::try_from(*r).unwrap_or_default()).collect();
        for (id, chunk_count, generation, member_chunks) in &snapshots {
            // On a shared store this daemon's copies of another's generations are built from the
            // store on first use; verify builds those it lacks, then checks them as any other.
            if engine.lease_ms().is_some()
                && let Err(e) = engine.snapshot_meta(conn, *id)
            {
                problems.push(Problem { object: format!("snapshot {id}"), code: e.code(), message: e.to_string() });
                continue;
            }
            if !erased_u64.is_empty() {
                match engine.lexical_store().holds_revisions(generation, &erased_u64) {
                    Ok(false) => {}
                    Ok(true) => problems.push(Problem {
                        object: format!("snapshot {id}"),
                        code: ErrorCode::Conflict,
                        message: format!("lexical generation {generation} still holds text erased on request; run `manage purge` to finish the erasure"),
                    }),
                    Err(e) => problems.push(Problem { object: format!("snapshot {id}"), code: e.code(), message: e.to_string() }),
                }
            }
            if chunk_count != member_chunks {
                problems.push(Problem { object: format!("snapshot {id}"), code: ErrorCode::Corrupt, message: format!("records {chunk_count} chunks, its members have {member_chunks}") });
            }
            match engine.lexical(generation).and_then(|index| index.documents()) {
                Ok(documents) if documents as i64 == *chunk_count => {}
                Ok(documents) => problems.push(Problem {
                    object: format!("snapshot {id}"),
                    code: ErrorCode::Corrupt,
                    message: format!("lexical generation {generation} holds {documents} documents, the snapshot {chunk_count} chunks; rebuild it"),
                }),
                Err(e) => problems.push(Problem { object: format!("snapshot {id}"), code: e.code(), message: e.to_string() }),
            }
            // The vector generation is re-read and re-hashed from disk, not taken from the cache.
            match crate::snapshot::text_generation(conn, *id) {
                Ok(Some(text)) => match engine.vector_store().open(&text.generation, &engine.local_text_sha(&text)).and_then(|index| index.documents()) {
                    Ok(documents) if documents as i64 == *chunk_count => {}
                    Ok(documents) => problems.push(Problem {
                        object: format!("snapshot {id}"),
                        code: ErrorCode::Corrupt,
                        message: format!("vector generation {} holds {documents} vectors, the snapshot {chunk_count} chunks; run `tychora manage rebuild`", text.generation),
                    }),
                    Err(e) => problems.push(Problem { object: format!("snapshot {id}"), code: e.code(), message: e.to_string() }),
                },
                Ok(None) => {}
                Err(e) => problems.push(Problem { object: format!("snapshot {id}"), code: e.code(), message: e.to_string() }),
            }
        }
        Ok(VerifyReport { ok: problems.is_empty(), artifacts_checked: artifacts.len(), references_checked: references.len(), snapshots_checked: snapshots.len(), erasures_checked: erased.len(), problems })
    })
}
