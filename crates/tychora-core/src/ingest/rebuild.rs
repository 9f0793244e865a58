//! `manage rebuild`: derived index data made whole again from the canonical rows and the vector
//! records, as a durable `rebuild` job.
//!
//! 1. Every retained snapshot's vector generation file that is missing or does not match its
//!    recorded sha256 is rewritten from the workspace's vector records (nothing is embedded: the
//!    members and their vectors are those the snapshot was published with).
//! 2. When the current snapshot's indexes are not those the configuration asks for (no vectors yet,
//!    vectors of another family, an unreadable lexical generation), its members are published
//!    again as a new snapshot, embedding only inputs that have no record.

use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::clock::now_ms;
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::job::{JobKind, JobState, Progress};
use crate::snapshot;
use crate::store::tx::{Session, Tx};
use crate::store::{self, jobs::Steps};
use crate::vector::EmbedReport;

/// One vector generation rewritten from the records.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Repaired {
    /// The snapshot it belongs to.
    pub snapshot_id: i64,
    /// The generation file (under `indexes/text/`).
    pub generation: String,
}

/// What `manage rebuild` did.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RebuildReport {
    /// The `rebuild` job.
    pub job_id: i64,
    /// Vector generations rewritten in place.
    pub repaired: Vec<Repaired>,
    /// Whether the current snapshot's members were published again.
    pub republished: bool,
    /// Why they were (or were not).
    pub reason: String,
    /// The current snapshot afterwards.
    pub snapshot_id: Option<i64>,
    /// What embedding did, when the members were published again with vectors.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embedding: Option<EmbedReport>,
    /// What the visual channel's embedding did (workspaces with `[visual]`): pictures of the
    /// current snapshot that had no vector get one, without publishing again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub visual: Option<crate::vector::VisualReport>,
    /// Wall time.
    pub duration_ms: f64,
}

/// Repairs vector files and republishes the current snapshot when its indexes are stale.
///
/// # Errors
/// `E_NOT_FOUND` without a published snapshot; embedding errors (`E_PROVIDER`,
/// `E_BUDGET_EXCEEDED`) and index build errors, after which the current snapshot is unchanged.
pub(crate) fn rebuild(
    engine: &Engine,
    on_progress: &(dyn Fn(Progress) + Sync),
) -> Result<RebuildReport> {
    let started = Instant::now();
    let conn = engine.writer()?;
    let current = snapshot::current(&*conn)?.ok_or_else(|| Error::NotFound {
        what: "published snapshot to rebuild",
        id: "current".into(),
    })?;
    let job_id = store::jobs::start(
        &*conn,
        JobKind::Rebuild,
        &serde_json::json!({ "snapshot_id": current }).to_string(),
    )?;
    engine.lease_started(&*conn, job_id)?;
    let record = |p: Progress| {
        engine.progress().record(job_id, &p);
        on_progress(p);
    };
    let mut report = RebuildReport {
        job_id,
        repaired: Vec::new(),
        republished: false,
        reason: String::new(),
        snapshot_id: Some(current),
        embedding: None,
        visual: None,
        duration_ms: 0.0,
    };
    let result = engine.while_leased(job_id, || {
        run(engine, &*conn, current, &mut report, &record, started)
    });
    engine.progress().clear(job_id);
    engine.forget_vector_indexes();
    engine.invalidate_snapshot_cache();
    match result {
        Ok(()) => {
            if let Err(e) = engine.collect_garbage_with(&*conn) {
                log::warn!("garbage collection after a rebuild failed: {e}");
            }
            Ok(report)
        }
        Err(err) => {
            let _ = store::jobs::fail(&*conn, job_id, &format!("{}: {err}", err.code().as_str()));
            Err(err)
        }
    }
}

fn run(
    engine: &Engine,
    conn: &dyn Session,
    current: i64,
    report: &mut RebuildReport,
    on_progress: &(dyn Fn(Progress) + Sync),
    started: Instant,
) -> Result<()> {
    let mut steps = Steps::new(report.job_id);
    steps.begin(conn, "repair")?;
    let retained = store::batches::indexed_snapshots(conn)?;
    for id in retained {
        if let Some(generation) = snapshot::text_generation(conn, id)?
            && snapshot::repair_text(conn, id, &generation, engine.vector_store())?
        {
            report.repaired.push(Repaired {
                snapshot_id: id,
                generation: generation.generation,
            });
        }
    }
    steps.finish(
        conn,
        &serde_json::json!({ "repaired": report.repaired.len() }),
    )?;

    // Pictures of the current snapshot that lack a vector (`[visual]` set after they were added)
    // get one; vectors are keyed by the pictures' bytes, so the snapshot need not be published again.
    let current_members = snapshot::members(conn, current)?;
    report.visual = super::ensure_visual(engine, conn, &current_members, on_progress)?;
    let stale = stale_reason(engine, conn, current)?;
    let Some(reason) = stale else {
        report.reason = "the current snapshot's indexes match the configuration".into();
        report.duration_ms = started.elapsed().as_secs_f64() * 1000.0;
        store::jobs::finish(
            conn,
            report.job_id,
            JobState::Succeeded,
            &serde_json::to_string(&*report).unwrap_or_default(),
            None,
            now_ms(),
        )?;
        return Ok(());
    };
    report.reason = reason;
    steps.begin(conn, "publish")?;
    let members = snapshot::members(conn, current)?;
    let sets: Vec<i64> = store::relations::snapshot_sets(conn, current)?
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    let text_dir = engine.text_dir();
    let embedder = engine.embedder()?;
    let text = super::text_publication(engine, conn, embedder.as_ref(), &text_dir)?;
    let publication = snapshot::Publication {
        generations: engine.lexical_store(),
        lexical: &engine.pack().lexical,
        parent: Some(current),
        derive: false,
        job_id: report.job_id,
        members: &members,
        relation_sets: &sets,
        text,
    };
    let finish = |tx: &dyn Tx, id: i64, published: &snapshot::Published| {
        report.republished = true;
        report.snapshot_id = Some(id);
        report.embedding.clone_from(&published.embedding);
        report.duration_ms = started.elapsed().as_secs_f64() * 1000.0;
        steps.finish(
            tx,
            &serde_json::json!({ "snapshot_id": id, "members": members.len(), "embedding": published.embedding }),
        )?;
        store::jobs::finish(
            tx,
            report.job_id,
            JobState::Succeeded,
            &serde_json::to_string(&*report).unwrap_or_default(),
            None,
            now_ms(),
        )?;
        Ok(())
    };
    snapshot::publish(conn, &publication, on_progress, finish)?;
    Ok(())
}

/// Why the current snapshot must be published again, if it must.
fn stale_reason(engine: &Engine, conn: &dyn Tx, current: i64) -> Result<Option<String>> {
    if let Err(e) =
        // Opened afresh, not from the cache: an index lost on a cluster since it was opened.
        snapshot::lexical_generation(conn, current)
            .and_then(|g| engine.lexical_store().open(&g).map(|_| ()))
    {
        return Ok(Some(format!(
            "its lexical generation cannot be opened ({e})"
        )));
    }
    if snapshot::lexical_analyzer_matches(conn, &engine.pack().lexical)? == Some(false) {
        return Ok(Some(
            "its lexical generation was built with another analyzer than the pack's".into(),
        ));
    }
    let Some(embedder) = engine.embedder()? else {
        return Ok(None);
    };
    Ok(match snapshot::text_generation(conn, current)? {
        None => Some("it has no vectors".into()),
        Some(g) if g.spec != *embedder.spec() => Some(format!(
            "its vectors are from {}; the configuration embeds with {}",
            g.spec,
            embedder.spec()
        )),
        Some(_) => None,
    })
}
