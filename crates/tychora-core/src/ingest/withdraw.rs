//! Withdrawal (a source leaves new snapshots, its history stays) and erasure of originals (the
//! retained bytes are deleted for a legal request, a tombstone says what, when and why).
//!
//! Both run as jobs on the single writer: the canonical rows (withdrawal, tombstones) commit
//! first, then the bytes are erased, then a snapshot without the sources is published through
//! the same path as an add (derived lexical generation, verified count, one-transaction switch).
//! Older snapshots keep answering from what they pinned until retention releases them.

use serde::{Deserialize, Serialize};

use super::Receipt;
use super::run::AddJob;
use crate::clock::now_ms;
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::job::{JobKind, Progress};
use crate::store::tx::Tx;
use crate::store::{erasure, sources as source_rows};

/// A source a withdrawal or erasure took out of new snapshots.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WithdrawnSource {
    /// The source's row id (`source:N`).
    pub source_id: i64,
    /// Its identity: `file://` and its absolute path, reversibly escaped.
    pub uri: String,
    /// Relative to its root.
    pub path: String,
}

/// Original bytes erased, as their tombstone records them.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Tombstone {
    /// sha256 of the bytes erased: a revision's original, or a text or picture derived from it.
    pub sha256: String,
    /// Their size in bytes.
    pub size: i64,
    /// The source whose revision held them.
    pub source_id: i64,
    /// The revision that held them (`revision:N`).
    pub revision_id: i64,
    /// The reason given; for derived bytes, `derived from an erased original:` and that reason.
    pub reason: String,
    /// When the tombstone was written, in milliseconds since the Unix epoch (the file is removed
    /// after that commits).
    pub deleted_at: i64,
}

/// What `manage withdraw` or `manage delete-original` did.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WithdrawReport {
    /// The job's receipt: the snapshot published without the sources (`removed` lists them).
    pub receipt: Receipt,
    /// The sources withdrawn from new snapshots.
    pub withdrawn: Vec<WithdrawnSource>,
    /// The tombstones written (erasure only).
    pub erased: Vec<Tombstone>,
    /// Snapshots the erased text was taken out of, pinned ones included (erasure only; every
    /// index generation of theirs that held it was rewritten without it).
    pub erased_from_snapshots: usize,
}

/// What to take out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Removal {
    /// Withdraw sources.
    Withdraw,
    /// Erase original bytes (and withdraw the sources whose published revision they are).
    Erase,
}

/// Withdraws the sources `selector` names, or erases their original bytes.
///
/// `selector`: `source:N`, `revision:N` (erasure only: that revision's bytes), or a source's
/// `file://` URI or path: absolute, relative to the current directory or to its capture root
/// (`selector.rs`).
///
/// # Errors
/// `E_NOT_FOUND` when nothing matches; `E_INVALID_ARGUMENT` for an ambiguous path or an empty
/// reason; SQLite, I/O and publication errors (the job row records them).
pub(crate) fn withdraw(
    engine: &Engine,
    selector: &str,
    reason: &str,
    removal: Removal,
    on_progress: &(dyn Fn(Progress) + Sync),
) -> Result<WithdrawReport> {
    let reason = reason.trim();
    if reason.is_empty() {
        return Err(Error::InvalidArgument(
            "a reason is required: it is recorded with the withdrawal or tombstone".into(),
        ));
    }
    let conn = engine.writer()?;
    let (sources, revisions) = resolve(&*conn, selector, removal)?;
    let kind = match removal {
        Removal::Withdraw => JobKind::Withdraw,
        Removal::Erase => JobKind::DeleteOriginal,
    };
    let request = serde_json::json!({ "selector": selector, "reason": reason }).to_string();
    let now = now_ms();
    let job_id = crate::store::jobs::start(&*conn, kind, &request)?;
    engine.lease_started(&*conn, job_id)?;
    let result = engine.while_leased(job_id, || -> Result<WithdrawReport> {
        // Immediate: the first statements read, and a deferred transaction whose snapshot went stale
        // (the query log commits on its own connection) cannot upgrade to a writer (SQLITE_BUSY).
        let writer: &dyn Tx = &*conn;
        let (erased, pending, withdrawn) = writer.together(true, |tx| {
            let mut erased = Vec::new();
            // Tombstoned by an earlier run whose file removal may not have finished.
            let mut pending = Vec::new();
            let mut withdrawn_ids: Vec<i64> = Vec::new();
            if removal == Removal::Erase {
                // Every revision holding the same bytes is erased with them: the bytes are what the
                // request is about, wherever they were captured.
                let mut shas: Vec<String> = Vec::new();
                for revision in &revisions {
                    let sha = source_rows::revision_sha256(tx, *revision)?;
                    if !shas.contains(&sha) {
                        shas.push(sha);
                    }
                }
                for sha in &shas {
                    let holders = source_rows::revisions_holding(tx, sha)?;
                    for (revision_id, source_id, size) in holders {
                        // Summaries over its windows repeat its words: the tree goes (rebuilt on
                        // request without it).
                        crate::store::summaries::erase_derived(tx, revision_id)?;
                        // A document's derived text holds the same words: it goes with its original.
                        let mut doomed = vec![(sha.clone(), size, reason.to_string())];
                        doomed.extend(
                            erasure::derived_bytes(tx, revision_id, sha)?
                                .into_iter()
                                .map(|(derived, size)| {
                                    (
                                        derived,
                                        size,
                                        format!("derived from an erased original: {reason}"),
                                    )
                                }),
                        );
                        for (doomed_sha, doomed_size, why) in doomed {
                            // What a model said of erased pictures, and where it placed them, are
                            // derived from them: they go too.
                            erasure::forget_picture(tx, &doomed_sha)?;
                            // A second run (after a crash between the tombstone and the file's
                            // removal) finishes the removal without a second tombstone.
                            let inserted = erasure::tombstone(
                                tx,
                                &erasure::NewTombstone {
                                    sha256: &doomed_sha,
                                    size: doomed_size,
                                    source_id,
                                    revision_id,
                                    job_id,
                                    reason: &why,
                                    at: now,
                                },
                            )?;
                            let tombstone = Tombstone {
                                sha256: doomed_sha,
                                size: doomed_size,
                                source_id,
                                revision_id,
                                reason: why,
                                deleted_at: now,
                            };
                            if inserted {
                                erased.push(tombstone);
                            } else {
                                pending.push(tombstone);
                            }
                        }
                        // The source leaves new snapshots when the erased bytes are what it publishes.
                        let published = crate::store::snapshots::publishes(tx, revision_id)?;
                        if (published || sources.contains(&source_id))
                            && !withdrawn_ids.contains(&source_id)
                        {
                            withdrawn_ids.push(source_id);
                        }
                    }
                }
            } else {
                withdrawn_ids.clone_from(&sources);
            }
            let mut withdrawn = Vec::new();
            for source_id in &withdrawn_ids {
                let (uri, path) = source_rows::withdraw(tx, *source_id, job_id, reason, now)?;
                withdrawn.push(WithdrawnSource {
                    source_id: *source_id,
                    uri,
                    path,
                });
            }
            Ok((erased, pending, withdrawn))
        })?;
        crate::job::failpoint("after-tombstones");
        // The rows say the bytes are gone before they go: a crash in between leaves a tombstone
        // whose file still exists, which `verify` reports and a second run erases.
        erase_files(engine, &erased)?;
        erase_files(engine, &pending)?;
        let pairs: Vec<(i64, String)> = withdrawn
            .iter()
            .map(|w| (w.source_id, w.path.clone()))
            .collect();
        let receipt = AddJob::without(engine, &*conn, job_id, &pairs, on_progress)?;
        Ok(WithdrawReport {
            receipt,
            withdrawn,
            erased,
            erased_from_snapshots: 0,
        })
    });
    result.inspect_err(|err| {
        let _ =
            crate::store::jobs::fail(&*conn, job_id, &format!("{}: {err}", err.code().as_str()));
    })
}

/// Removes the files of erased artifacts (each once) and makes the removal durable.
fn erase_files(engine: &Engine, erased: &[Tombstone]) -> Result<()> {
    let mut doomed: Vec<&str> = Vec::new();
    for t in erased {
        if !doomed.contains(&t.sha256.as_str()) {
            doomed.push(&t.sha256);
        }
    }
    // Durable on return (the local adapter syncs the folder); absent already is fine. The
    // first failure is the job's (a second run finishes the removal).
    for removed in engine.artifacts().delete_many(&doomed) {
        removed?;
    }
    Ok(())
}

/// The sources (and, for erasure, the revisions) a selector names.
pub(super) fn resolve(
    conn: &dyn Tx,
    selector: &str,
    removal: Removal,
) -> Result<(Vec<i64>, Vec<i64>)> {
    let not_found = || Error::NotFound {
        what: "source",
        id: selector.to_string(),
    };
    if let Some(id) = selector.strip_prefix("revision:") {
        if removal == Removal::Withdraw {
            return Err(Error::InvalidArgument(format!(
                "withdraw takes a source (source:N, a URI or a path), not {selector}; to erase one revision's bytes use delete-original"
            )));
        }
        let id: i64 = id
            .parse()
            .map_err(|_| Error::InvalidArgument(format!("bad revision id in {selector:?}")))?;
        // Its source is withdrawn only when the revision is what the source publishes (decided
        // while erasing): an older revision's bytes can go while the source stays.
        source_rows::revision_exists(conn, id)?
            .then_some(())
            .ok_or_else(|| Error::NotFound {
                what: "revision",
                id: selector.to_string(),
            })?;
        return Ok((vec![], vec![id]));
    }
    let sources: Vec<i64> = if let Some(id) = selector.strip_prefix("source:") {
        let id: i64 = id
            .parse()
            .map_err(|_| Error::InvalidArgument(format!("bad source id in {selector:?}")))?;
        if source_rows::exists(conn, id)? {
            vec![id]
        } else {
            Vec::new()
        }
    } else {
        super::selector::sources_named(conn, selector)?
    };
    match sources.as_slice() {
        [] => Err(not_found()),
        [one] => {
            let revisions = source_rows::revisions_of(conn, *one)?;
            Ok((vec![*one], revisions))
        }
        many => Err(Error::InvalidArgument(format!(
            "{selector:?} names {} sources ({}); pass source:N",
            many.len(),
            many.iter()
                .map(|id| format!("source:{id}"))
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}
