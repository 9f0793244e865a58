//! One add/sync job, stage by stage: resolve targets → walk → prepare (all cores) → store
//! artifacts → commit canonical rows (one savepoint per file) → remove what a synced directory no
//! longer holds → resolve code relations → publish (with the job's end in the pointer switch's
//! transaction) → receipt.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::Path;
use std::time::Instant;

use super::prepare::{self, Outcome, PrepareContext};
use super::targets::{Target, resolve_target};
use super::{AddPlan, AddRequest, FileCounts, Receipt, Requester, commit};
use crate::capture::{self, Candidate, Exclusion};
use crate::chunk::ChunkOptions;
use crate::clock::now_ms;
use crate::engine::Engine;
use crate::error::{Diagnostic, Error, Level, Result};
use crate::job::{Phase, Progress, failpoint};
use crate::snapshot::{self, Member};
use crate::store::jobs::Steps;
use crate::store::tx::{Session, Tx};

/// What a job learns as it goes, turned into the receipt at the end.
#[derive(Default)]
struct Tally {
    files: FileCounts,
    diagnostics: Vec<Diagnostic>,
    excluded: Vec<Exclusion>,
    added: Vec<String>,
    changed: Vec<String>,
    removed: Vec<String>,
    bytes_read: u64,
    units: usize,
    chunks: usize,
    /// The source URI of every file this job accounted for: a file walked from two overlapping
    /// roots (or two targets) is one source, accounted for once.
    seen: BTreeSet<String>,
    /// Source ids whose published member is replaced or removed.
    replaced: BTreeSet<i64>,
    /// Source ids that already got a new member in this job.
    member_sources: BTreeSet<i64>,
    /// Source ids of every file read (new, changed or unchanged): the ones this job's facet
    /// values are set on.
    read_sources: Vec<i64>,
    new_members: Vec<Member>,
}

/// The add's facet values, typed by its kind's facets (JSON numbers and booleans are read as
/// their text).
fn facets_of(
    engine: &Engine,
    request: &AddRequest,
    assignment: &super::Assignment,
) -> Result<Vec<(String, crate::facet::Value)>> {
    let mut settings = std::collections::BTreeMap::new();
    for (name, value) in &request.facets {
        let text = match value {
            serde_json::Value::String(s) => s.clone(),
            serde_json::Value::Number(_) | serde_json::Value::Bool(_) => value.to_string(),
            other => {
                return Err(Error::InvalidArgument(format!(
                    "facet {name:?}: expected a string, number or boolean, got {other}"
                )));
            }
        };
        settings.insert(name.clone(), text);
    }
    crate::facet::values_for_kind(&engine.pack().kinds, assignment.kind.as_deref(), &settings)
}

/// The trust a capture writes with: its stamp's, which only the owner may send, else a captured
/// source's.
fn trust_of(request: &AddRequest, requester: Requester) -> Result<crate::trust::Trust> {
    match (&request.stamp, requester) {
        (None, _) => Ok(crate::trust::Trust::CapturedSource),
        (Some(stamp), Requester::Owner) => Ok(stamp.trust),
        (Some(_), Requester::Agent) => Err(Error::Forbidden(
            "an agent cannot write curated knowledge: propose a change instead (`propose_change`)"
                .into(),
        )),
    }
}

/// The label an add writes: checked against the levels and the ceiling before anything is read.
fn sensitivity_of(
    engine: &Engine,
    request: &AddRequest,
    requester: Requester,
) -> Result<Option<String>> {
    let Some(level) = request.sensitivity.as_deref() else {
        return Ok(None);
    };
    if requester == Requester::Agent {
        return Err(Error::Forbidden(
            "an agent cannot label sources: sensitivity is the owner's to set".into(),
        ));
    }
    let sensitivity = &engine.config().sensitivity;
    if !sensitivity.within_ceiling(level)? {
        return Err(Error::Forbidden(format!(
            "sensitivity {level:?} is above this workspace's ceiling {:?}: nothing captured (content above the ceiling is never indexed)",
            sensitivity.ceiling
        )));
    }
    Ok(Some(level.to_string()))
}

/// How many times an add builds again on a pointer another daemon moved before it gives up.
const REBASES: usize = 5;

/// A running add job and the state its stages share.
pub(super) struct AddJob<'a> {
    engine: &'a Engine,
    job_id: i64,
    started: Instant,
    on_progress: &'a (dyn Fn(Progress) + Sync),
    steps: Steps,
    collection_id: i64,
    assignment: super::Assignment,
    fingerprints: commit::Fingerprints<'a>,
    /// Published extractions made with the fingerprint this job would use: an unchanged file
    /// whose extraction is not among them is read again.
    fresh: HashSet<i64>,
    previous: Option<i64>,
    members: Vec<Member>,
    tally: Tally,
    /// Curated knowledge's stamp: it replaces the root's Git provenance.
    stamp: Option<crate::trust::Stamp>,
    /// The label the add gives every file it reads (`None`: new sources get the default).
    sensitivity: Option<String>,
    /// Artifacts not stored yet (a bucket's, gathered).
    uploads: Uploads,
}

impl<'a> AddJob<'a> {
    /// A job over the current snapshot's members, with nothing tallied yet.
    fn start(
        engine: &'a Engine,
        conn: &dyn Tx,
        job_id: i64,
        collection_id: i64,
        assignment: super::Assignment,
        on_progress: &'a (dyn Fn(Progress) + Sync),
    ) -> Result<Self> {
        let previous = snapshot::current(conn)?;
        let fingerprints = commit::Fingerprints::new(engine);
        let fresh = match previous {
            Some(id) => commit::fresh_extractions(conn, id, &fingerprints, &assignment)?,
            None => HashSet::new(),
        };
        Ok(AddJob {
            engine,
            job_id,
            started: Instant::now(),
            on_progress,
            steps: Steps::new(job_id),
            collection_id,
            assignment,
            fingerprints,
            fresh,
            previous,
            members: match previous {
                Some(id) => snapshot::members(conn, id)?,
                None => Vec::new(),
            },
            tally: Tally::default(),
            stamp: None,
            sensitivity: None,
            uploads: Uploads::default(),
        })
    }

    /// Runs every stage of the job on the writer connection.
    pub(super) fn run(
        engine: &'a Engine,
        conn: &dyn Session,
        job_id: i64,
        request: &AddRequest,
        requester: Requester,
        on_progress: &'a (dyn Fn(Progress) + Sync),
    ) -> Result<Receipt> {
        let assignment = super::Assignment::of(
            engine.pack(),
            request.kind.as_deref(),
            request.format.as_deref(),
        )?;
        let facets = facets_of(engine, request, &assignment)?;
        let sensitivity = sensitivity_of(engine, request, requester)?;
        let collection = request.collection.as_deref().unwrap_or("default");
        let collection_id =
            Engine::collection_for(conn, collection, trust_of(request, requester)?)?;
        let mut job = AddJob::start(engine, conn, job_id, collection_id, assignment, on_progress)?;
        job.stamp = request.stamp.clone();
        job.sensitivity = sensitivity;
        job.steps.begin(conn, "walk")?;
        let targets = job.resolve_targets(conn, request, requester);
        for target in &targets {
            job.capture(conn, target)?;
        }
        if let Some(kind) = job.assignment.kind.as_deref()
            && let Some(definition) = engine.pack().kinds.get(kind)
            && !facets.is_empty()
        {
            // Facet values are source metadata that eligibility reads at query time: set on
            // every file read, changed or not, they need no new snapshot.
            conn.together(true, |tx| {
                crate::store::facets::set_source_values(
                    tx,
                    kind,
                    definition,
                    &job.tally.read_sources,
                    &facets,
                    now_ms(),
                )
            })?;
        }
        if let Some(level) = &job.sensitivity {
            // A label is source metadata like a facet value: set on every file read, changed or
            // not (new and changed files got it with their rows).
            conn.together(true, |tx| {
                crate::store::sources::label(tx, &job.tally.read_sources, level)
            })?;
        }
        // A first add publishes even when it found nothing to index (an empty folder answers,
        // emptily), but not when every file it found failed: that job failed, and no snapshot
        // says otherwise.
        let first_publishes = job.previous.is_none()
            && !targets.is_empty()
            && (job.tally.files.failed == 0 || job.tally.files.unchanged > 0);
        let changed =
            !job.tally.new_members.is_empty() || !job.tally.replaced.is_empty() || first_publishes;
        if changed {
            job.publish(conn)
        } else {
            let receipt = job.receipt(job.previous, false);
            commit::finish_job(conn, &receipt)?;
            Ok(receipt)
        }
    }

    /// Publishes the current snapshot's members without `sources` (withdrawn or erased), as job
    /// `job_id`; the receipt lists them as removed. Nothing is published when none of them is a
    /// member.
    pub(super) fn without(
        engine: &'a Engine,
        conn: &dyn Session,
        job_id: i64,
        sources: &[(i64, String)],
        on_progress: &'a (dyn Fn(Progress) + Sync),
    ) -> Result<Receipt> {
        // No capture: the collection and fingerprint are never read.
        let mut job = AddJob::start(
            engine,
            conn,
            job_id,
            0,
            super::Assignment::default(),
            on_progress,
        )?;
        let previous = job.previous;
        for (source_id, uri) in sources {
            if job.members.iter().any(|m| m.source_id == *source_id) {
                job.tally.replaced.insert(*source_id);
                job.tally.files.removed += 1;
                job.tally.removed.push(uri.clone());
            }
        }
        if job.tally.replaced.is_empty() {
            let receipt = job.receipt(previous, false);
            commit::finish_job(conn, &receipt)?;
            return Ok(receipt);
        }
        job.publish(conn)
    }

    /// The dry run: stages 1–3 (resolve, walk, prepare) and what embedding the new windows would
    /// cost, inside a transaction that is rolled back, so nothing is written (not even a root or
    /// a collection) and no provider is called.
    pub(super) fn plan(
        engine: &'a Engine,
        conn: &dyn Session,
        request: &AddRequest,
        requester: Requester,
        on_progress: &'a (dyn Fn(Progress) + Sync),
    ) -> Result<AddPlan> {
        let assignment = super::Assignment::of(
            engine.pack(),
            request.kind.as_deref(),
            request.format.as_deref(),
        )?;
        facets_of(engine, request, &assignment)?;
        let collection = request.collection.as_deref().unwrap_or("default");
        // Everything below is rolled back: nothing is written (not even a root or a collection).
        conn.begin(false)?;
        let _undone = RolledBack(conn);
        let tx: &dyn Tx = conn;
        let collection_id = Engine::collection_for(tx, collection, trust_of(request, requester)?)?;
        let mut job = AddJob::start(engine, tx, 0, collection_id, assignment, on_progress)?;
        let targets = job.resolve_targets(tx, request, requester);
        let mut plan = AddPlan::default();
        let mut documents: Vec<crate::vector::DocInputs> = Vec::new();
        let embedder = engine.embedder()?;
        let representation = embedder.as_ref().map(|e| e.spec().representation.clone());
        for target in &targets {
            let candidates = job.walk(target);
            let outcomes = job.prepare(target, &candidates);
            let published: std::collections::HashSet<String> =
                job.published().into_keys().collect();
            for (candidate, outcome) in candidates.iter().zip(outcomes) {
                let key = commit::source_uri(&candidate.path);
                if !job.tally.seen.insert(key.clone()) {
                    continue;
                }
                plan.files.scanned += 1;
                let prepared = match outcome {
                    Outcome::Skipped(d) => {
                        plan.files.skipped += 1;
                        job.tally.diagnostics.push(d);
                        continue;
                    }
                    Outcome::Failed(d) => {
                        plan.files.failed += usize::from(d.level == Level::Error);
                        plan.files.skipped += usize::from(d.level != Level::Error);
                        job.tally.diagnostics.push(d);
                        continue;
                    }
                    Outcome::Ready(p) => p,
                };
                plan.bytes += prepared.bytes.len() as u64;
                let Some(extraction) = &prepared.extraction else {
                    plan.files.unchanged += 1;
                    continue;
                };
                if published.contains(&key) {
                    plan.files.changed += 1;
                } else {
                    plan.files.added += 1;
                }
                plan.units += extraction.units.len();
                plan.windows += extraction.chunks.len();
                if let Some(representation) = &representation {
                    let capsules: Vec<String> = extraction
                        .chunks
                        .iter()
                        .map(|c| {
                            snapshot::capsule_text(
                                &serde_json::to_string(&c.capsule).unwrap_or_default(),
                            )
                        })
                        .collect();
                    let windows: Vec<(&str, &str)> = capsules
                        .iter()
                        .zip(&extraction.chunks)
                        .map(|(capsule, c)| (capsule.as_str(), c.text.as_str()))
                        .collect();
                    documents.extend(crate::vector::document_inputs(representation, &[windows]));
                }
            }
        }
        if let Some(embedder) = &embedder {
            let family = crate::store::vectors::family_id(tx, embedder.spec())?;
            let estimate = crate::vector::estimate(
                &crate::store::vectors::Records(tx),
                Some(family),
                embedder.as_ref(),
                engine
                    .user_cache()
                    .map(|c| c as &dyn crate::vector::VectorCache),
                &documents,
            )?;
            plan.embedding = Some(super::EmbedPlan::new(
                engine,
                embedder.spec(),
                estimate,
                tx,
            )?);
        }
        plan.diagnostics = std::mem::take(&mut job.tally.diagnostics);
        plan.excluded = std::mem::take(&mut job.tally.excluded);
        conn.rollback()?;
        Ok(plan)
    }

    /// Stage 1: each requested path resolved inside the roots, or a diagnostic.
    fn resolve_targets(
        &mut self,
        conn: &dyn Tx,
        request: &AddRequest,
        requester: Requester,
    ) -> Vec<Target> {
        let mut targets = Vec::new();
        for raw in &request.paths {
            match resolve_target(self.engine, conn, Path::new(raw), requester) {
                Ok(target) => targets.push(target),
                Err(diag) => self.tally.diagnostics.push(diag),
            }
        }
        super::targets::with_nested(conn, targets).unwrap_or_else(|e| {
            self.tally
                .diagnostics
                .push(Diagnostic::error("", e.code(), e.to_string()));
            Vec::new()
        })
    }

    /// Stages 2–5 for one target: walk, prepare, store artifacts, commit rows, sync removals.
    /// Prepare (on every core) and commit (on this thread) overlap: file `i`'s artifact and rows
    /// are written while the workers parse the files after it, all rows in one transaction.
    fn capture(&mut self, conn: &dyn Session, target: &Target) -> Result<()> {
        let walked = self.walk(target);
        let candidates = self.withhold_above_ceiling(conn, target, walked)?;
        self.steps
            .finish(conn, &serde_json::json!({ "files": candidates.len() }))?;
        let engine = self.engine;
        let on_progress = self.on_progress;
        let inputs = self.prepare_inputs(target, &candidates);
        let total = candidates.len();
        let prepared = std::sync::atomic::AtomicUsize::new(0);
        let prepare_started = now_ms();
        let prepare_ended = std::sync::atomic::AtomicI64::new(prepare_started);
        // Where the bytes came from: the repository commit, read without running git.
        // Curated knowledge says instead which change made it and when, so a state rebuilt on
        // another commit holds the same revisions.
        let provenance = match &self.stamp {
            Some(stamp) => serde_json::json!({ "stamp": stamp }),
            None => capture::git::head_of(&target.root).map_or_else(
                || serde_json::json!({}),
                |head| serde_json::json!({ "git": head }),
            ),
        };
        let published: HashMap<String, (i64, i64)> = self
            .published()
            .into_iter()
            .map(|(k, m)| (k, (m.source_id, m.extraction_id)))
            .collect();
        let mut tx = RowsTransaction::new(conn);
        let mut commit_started = None;
        // Cloned: the closure below commits through `self`.
        let assignment = self.assignment.clone();
        with_context(engine, &assignment, target, &inputs, |ctx| {
            crate::parallel::map_in_order(
                &candidates,
                crate::parallel::cores(),
                |candidate| {
                    let outcome = prepare::prepare_one(ctx, candidate);
                    let done = prepared.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
                    on_progress(Progress {
                        phase: Phase::Prepare,
                        done,
                        total,
                    });
                    if done == total {
                        prepare_ended.store(now_ms(), std::sync::atomic::Ordering::Relaxed);
                    }
                    outcome
                },
                |i, outcome| {
                    let candidate = &candidates[i];
                    let outcome = outcome.unwrap_or_else(|| {
                        Outcome::Failed(Diagnostic::error(
                            &candidate.rel_path,
                            crate::error::ErrorCode::Internal,
                            "worker thread panicked",
                        ))
                    });
                    if commit_started.is_none() {
                        // Something is prepared and nothing written yet (the crash tests stop here).
                        failpoint("after-prepare");
                        commit_started = Some(now_ms());
                    }
                    let conn = tx.begun()?;
                    self.commit_one(conn, target, candidate, outcome, &published, &provenance)
                },
            )
        })?;
        {
            let conn = tx.begun()?;
            if target.is_dir {
                self.remove_missing(conn, target)?;
            }
        }
        // Every artifact the rows name is stored before they commit.
        self.uploads.flush(engine)?;
        tx.commit()?;
        let conn = tx.connection();
        let prepare_ended = prepare_ended.load(std::sync::atomic::Ordering::Relaxed);
        self.steps.record(
            conn,
            "prepare",
            prepare_started,
            prepare_ended,
            &serde_json::json!({ "files": total }),
        )?;
        self.steps.record(
            conn,
            "commit",
            commit_started.unwrap_or(prepare_ended),
            now_ms(),
            &serde_json::json!({ "units": self.tally.units, "chunks": self.tally.chunks }),
        )?;
        failpoint("after-commit");
        Ok(())
    }

    /// The candidates whose sources are labelled above the ceiling (relabelled there, or the
    /// ceiling lowered since), left out before a byte of them is read: content above the
    /// ceiling is never captured. An add that labels its files (within the ceiling) relabels
    /// them instead. A published one that is left out leaves the new snapshot, as a missing file.
    fn withhold_above_ceiling(
        &mut self,
        conn: &dyn Tx,
        target: &Target,
        candidates: Vec<Candidate>,
    ) -> Result<Vec<Candidate>> {
        let sensitivity = &self.engine.config().sensitivity;
        let above = sensitivity.above_ceiling();
        if self.sensitivity.is_some() || above.is_empty() {
            return Ok(candidates);
        }
        // By URI: a file under an overlapping root keeps the label of its one source.
        let prefix = commit::uri_prefix(&target.root);
        let labelled: HashMap<String, String> =
            crate::store::sources::labels_under(conn, self.collection_id, &prefix)?
                .into_iter()
                .collect();
        let mut kept = Vec::with_capacity(candidates.len());
        for candidate in candidates {
            match labelled.get(&commit::source_uri(&candidate.path)) {
                Some(level) if above.contains(level) => {
                    self.tally.files.skipped += 1;
                    self.tally.diagnostics.push(Diagnostic::warning(
                        &candidate.rel_path,
                        crate::error::ErrorCode::Forbidden,
                        format!(
                            "labelled {level}, above this workspace's sensitivity ceiling {}: not captured (manage sensitivity relabels it)",
                            sensitivity.ceiling
                        ),
                    ));
                }
                _ => kept.push(candidate),
            }
        }
        Ok(kept)
    }

    /// Stage 2: the files under a target, with what the rules left out.
    fn walk(&mut self, target: &Target) -> Vec<Candidate> {
        let walked = capture::walk_around(
            &target.root,
            &target.start,
            self.engine.dir(),
            &self.engine.config().capture.exclude,
            &target.nested,
        );
        self.tally.diagnostics.extend(walked.diagnostics);
        merge_exclusions(&mut self.tally.excluded, walked.excluded);
        (self.on_progress)(Progress {
            phase: Phase::Walk,
            done: walked.candidates.len(),
            total: walked.candidates.len(),
        });
        walked.candidates
    }

    /// Stage 3 alone (a plan): read, hash, parse and chunk every candidate on all cores.
    fn prepare(&self, target: &Target, candidates: &[Candidate]) -> Vec<Outcome> {
        let inputs = self.prepare_inputs(target, candidates);
        let total = candidates.len();
        with_context(self.engine, &self.assignment, target, &inputs, |ctx| {
            prepare::prepare_all(ctx, candidates, &|done| {
                (self.on_progress)(Progress {
                    phase: Phase::Prepare,
                    done,
                    total,
                });
            })
        })
    }

    /// What preparing the candidates of `target` needs from the job (owned, so that the job can
    /// commit while they are prepared).
    fn prepare_inputs(&self, target: &Target, candidates: &[Candidate]) -> PrepareInputs {
        // Keyed by the path under this target's root, found by URI: a source first captured
        // under another (overlapping) root is the same file.
        let prefix = commit::uri_prefix(&target.root);
        let under_root = |uri: &str| uri.strip_prefix(prefix.as_str()).map(str::to_string);
        PrepareInputs {
            current: self
                .published()
                .into_iter()
                .filter(|(_, m)| self.fresh.contains(&m.extraction_id))
                .filter_map(|(uri, m)| under_root(&uri).map(|rel| (rel, m.sha256.clone())))
                .collect(),
            kinds: self
                .engine
                .with_reader(|c| {
                    let rows = crate::store::sources::kinds_under(c, self.collection_id, &prefix)?;
                    Ok(rows
                        .into_iter()
                        .filter_map(|(uri, kind)| under_root(&uri).map(|rel| (rel, kind)))
                        .collect())
                })
                .unwrap_or_default(),
            python_packages: crate::code::python_packages(
                candidates.iter().map(|c| c.rel_path.as_str()),
            ),
        }
    }

    /// Source URI → the member currently published for it in this job's collection.
    fn published(&self) -> HashMap<String, &Member> {
        self.members
            .iter()
            .filter(|m| m.collection_id == self.collection_id)
            .map(|m| (m.uri.clone(), m))
            .collect()
    }

    /// Stage 4 for one prepared file: its original's bytes (stored before the rows that name
    /// them commit) and its canonical rows in a savepoint, so that whatever goes wrong with one
    /// file (a constraint, a value SQLite refuses) fails that file, never the job.
    fn commit_one(
        &mut self,
        conn: &dyn Session,
        target: &Target,
        candidate: &Candidate,
        outcome: Outcome,
        published: &HashMap<String, (i64, i64)>,
        provenance: &serde_json::Value,
    ) -> Result<()> {
        let key = commit::source_uri(&candidate.path);
        if self.tally.seen.contains(&key) {
            return Ok(()); // two targets of one job overlap: the file was handled already
        }
        let t = &mut self.tally;
        t.files.scanned += 1;
        let prepared = match outcome {
            Outcome::Skipped(diag) => {
                t.files.skipped += 1;
                t.diagnostics.push(diag);
                return Ok(());
            }
            Outcome::Failed(diag) => {
                t.files.failed += usize::from(diag.level == Level::Error);
                t.files.skipped += usize::from(diag.level != Level::Error);
                t.diagnostics.push(diag);
                // A file that can no longer be read keeps its published revision.
                t.seen.insert(key);
                return Ok(());
            }
            Outcome::Ready(prepared) => prepared,
        };
        t.bytes_read += prepared.bytes.len() as u64;
        t.seen.insert(key.clone());
        let Some(extraction) = &prepared.extraction else {
            t.files.unchanged += 1;
            if let Some(&(source_id, extraction_id)) = published.get(&key) {
                t.read_sources.push(source_id);
                // What reading it said then still holds: the receipt says it again.
                t.diagnostics
                    .extend(commit::extraction_diagnostics(conn, extraction_id)?);
            }
            return Ok(());
        };
        if let Some(refused) = refusal(
            conn,
            self.collection_id,
            &key,
            &prepared,
            &candidate.rel_path,
        )? {
            t.files.skipped += 1;
            t.diagnostics.push(refused);
            return Ok(());
        }
        // The bytes, and a document's derived text and pictures, before the rows naming them
        // commit (a bucket's puts are gathered and sent several at once, at the latest just
        // before the job's rows commit).
        self.uploads.add(self.engine, &prepared, extraction)?;
        // This file's rows in a savepoint of the job's transaction: a file that fails leaves none.
        let written = conn.together(true, |savepoint| {
            commit::write_revision(
                savepoint,
                self.engine,
                &commit::Place {
                    collection_id: self.collection_id,
                    root_id: target.root_id,
                    rel_path: &candidate.rel_path,
                    abs_path: &candidate.path,
                    sensitivity: self.sensitivity.as_deref(),
                },
                &prepared,
                extraction,
                &self.fingerprints.of(prepared.format, &prepared.assignment),
                provenance,
            )
            .and_then(|(m, diagnostics)| {
                if t.member_sources.contains(&m.source_id) {
                    Err(Error::Conflict(
                        "another file of this job already maps to the same source".into(),
                    ))
                } else {
                    Ok((m, diagnostics))
                }
            })
        });
        let written = match written {
            Ok((m, diagnostics)) => {
                t.diagnostics.extend(diagnostics);
                m
            }
            Err(e) => {
                t.files.failed += 1;
                t.diagnostics.push(Diagnostic::error(
                    &candidate.rel_path,
                    e.code(),
                    format!("not recorded: {e}"),
                ));
                return Ok(());
            }
        };
        t.member_sources.insert(written.source_id);
        t.read_sources.push(written.source_id);
        t.units += extraction.units.len();
        t.chunks += extraction.chunks.len();
        t.diagnostics.extend(extraction.diagnostics.iter().cloned());
        if let Some(&(old, _)) = published.get(&key) {
            t.replaced.insert(old);
            t.files.changed += 1;
            t.changed.push(candidate.rel_path.clone());
        } else {
            t.files.added += 1;
            t.added.push(candidate.rel_path.clone());
        }
        t.new_members.push(written);
        Ok(())
    }

    /// Stage 5: a sync of a directory removes the members under it that the walk no longer finds
    /// (by path, whichever root each was first captured under).
    fn remove_missing(&mut self, tx: &dyn Tx, target: &Target) -> Result<()> {
        let prefix = commit::uri_prefix(&target.start);
        let gone: Vec<(String, i64)> = self
            .published()
            .into_iter()
            .filter(|(uri, _)| uri.starts_with(prefix.as_str()) && !self.tally.seen.contains(uri))
            .map(|(_, m)| (m.rel_path.clone(), m.source_id))
            .collect();
        for (rel, source_id) in gone {
            if self.tally.replaced.insert(source_id) {
                crate::store::sources::mark_removed(tx, source_id, now_ms())?;
                self.tally.files.removed += 1;
                self.tally.removed.push(rel);
            }
        }
        Ok(())
    }

    /// Stages 6–7: resolve code relations of the roots that changed, then build, verify and
    /// publish the snapshot. The job's end is written in the pointer switch's transaction, so a
    /// crash never leaves a published snapshot whose job reads as interrupted, or the reverse.
    ///
    /// On a shared store another daemon may publish while this one builds: the pointer switch then
    /// refuses this publication (a compare-and-set on the parent), and the job builds again on
    /// the new pointer — its members with this job's changes laid over them — up to
    /// [`REBASES`] times.
    fn publish(mut self, conn: &dyn Session) -> Result<Receipt> {
        let new_members = std::mem::take(&mut self.tally.new_members);
        let replaced = self.tally.replaced.clone();
        // The receipt of a job that publishes: it is used only once the snapshot commits (the
        // job's row is written in the pointer switch's transaction).
        let receipt = self.receipt(self.previous, true);
        let mut rebased = 0;
        loop {
            // In turn with other daemons' publications: the pointer read now is the one switched
            // from, unless a publisher that does not take turns moved it meanwhile.
            let turn = Turn::take(conn)?;
            let current = snapshot::current(conn)?;
            if current != self.previous {
                self.rebase(conn, current)?;
            }
            let published = self.publish_once(conn, &new_members, &replaced, receipt.clone());
            drop(turn);
            match published {
                Err(Error::Conflict(why))
                    if rebased < REBASES
                        && snapshot::current(conn)? != self.previous
                        && crate::store::jobs::held_here(conn, self.job_id)? =>
                {
                    rebased += 1;
                    log::info!(
                        "job {}: {why}; building again on the new pointer",
                        self.job_id
                    );
                }
                other => return other,
            }
        }
    }

    /// Makes `current` (another daemon's publication) the snapshot this job builds on.
    fn rebase(&mut self, conn: &dyn Tx, current: Option<i64>) -> Result<()> {
        self.previous = current;
        self.members = match current {
            Some(id) => snapshot::members(conn, id)?,
            None => Vec::new(),
        };
        Ok(())
    }

    /// One try at [`Self::publish`]: the parent's members, less those this job replaced or
    /// removed, plus the ones it wrote.
    fn publish_once(
        &mut self,
        conn: &dyn Session,
        new_members: &[Member],
        replaced: &BTreeSet<i64>,
        mut receipt: Receipt,
    ) -> Result<Receipt> {
        let written: HashSet<i64> = new_members.iter().map(|m| m.source_id).collect();
        let mut next: Vec<Member> = self
            .members
            .iter()
            .filter(|m| !replaced.contains(&m.source_id) && !written.contains(&m.source_id))
            .cloned()
            .collect();
        next.extend(new_members.iter().cloned());
        self.steps.begin(conn, "resolve")?;
        let resolve_started = Instant::now();
        let sets = crate::graph::build::relation_sets(conn, &next)?;
        self.steps.finish(
            conn,
            &serde_json::json!({ "relation_sets": sets, "ms": resolve_started.elapsed().as_millis() as u64 }),
        )?;
        self.steps.begin(conn, "publish")?;
        let members_total = next.len();
        // Pictures before the snapshot: a provider failure publishes nothing (as for windows).
        let visual = super::ensure_visual(self.engine, conn, &next, self.on_progress)?;
        receipt.visual = visual;
        let started = self.started;
        let steps = &mut self.steps;
        let finish = |tx: &dyn Tx, id: i64, published: &snapshot::Published| {
            let mut done = receipt.clone();
            done.snapshot_id = Some(id);
            done.published = true;
            done.embedding.clone_from(&published.embedding);
            done.duration_ms = started.elapsed().as_secs_f64() * 1000.0;
            steps.finish(
                tx,
                &serde_json::json!({ "snapshot_id": id, "members": members_total, "embedding": published.embedding, "visual": done.visual }),
            )?;
            commit::finish_job(tx, &done)?;
            receipt = done;
            Ok(())
        };
        let text_dir = self.engine.text_dir();
        let embedder = self.engine.embedder()?;
        let text = super::text_publication(self.engine, conn, embedder.as_ref(), &text_dir)?;
        let publication = snapshot::Publication {
            generations: self.engine.lexical_store(),
            lexical: &self.engine.pack().lexical,
            parent: self.previous,
            derive: true,
            job_id: self.job_id,
            members: &next,
            relation_sets: &sets,
            text,
        };
        let id = snapshot::publish(conn, &publication, self.on_progress, finish)?;
        debug_assert_eq!(receipt.snapshot_id, Some(id));
        // Generations beyond the retention window go now; pinned readers keep theirs open.
        if let Err(e) = self.engine.collect_garbage_with(conn) {
            log::warn!("garbage collection after publishing snapshot {id} failed: {e}");
        }
        Ok(receipt)
    }

    /// The receipt of what the stages found.
    fn receipt(&mut self, snapshot_id: Option<i64>, published: bool) -> Receipt {
        let t = std::mem::take(&mut self.tally);
        let errors = t
            .diagnostics
            .iter()
            .filter(|d| d.level == Level::Error)
            .count();
        let captured = t.files.added + t.files.changed + t.files.unchanged + t.files.removed;
        // A job that publishes a snapshot did something (a first add registers its roots even when
        // every file fails): it is partial at worst. `failed` means nothing was captured and
        // nothing published, so the job's row never says failed beside a published snapshot.
        let status = if errors == 0 {
            crate::job::Outcome::Succeeded
        } else if captured > 0 || published {
            crate::job::Outcome::Partial
        } else {
            crate::job::Outcome::Failed
        };
        Receipt {
            job_id: self.job_id,
            status,
            snapshot_id,
            previous_snapshot_id: self.previous,
            published,
            files: t.files,
            bytes_read: t.bytes_read,
            units: t.units,
            chunks: t.chunks,
            duration_ms: self.started.elapsed().as_secs_f64() * 1000.0,
            added: t.added,
            changed: t.changed,
            removed: t.removed,
            diagnostics: t.diagnostics,
            excluded: t.excluded,
            embedding: None,
            visual: None,
        }
    }
}

/// Adds one target's exclusion counts to the job's.
fn merge_exclusions(into: &mut Vec<capture::Exclusion>, from: Vec<capture::Exclusion>) {
    for e in from {
        match into.iter_mut().find(|x| x.rule == e.rule) {
            Some(x) => x.count += e.count,
            None => into.push(e),
        }
    }
}

/// The job's rows transaction on the writer connection. It begins at the first write, so that
/// preparing holds no lock (the daemon queues jobs and the query log commits meanwhile), and it
/// rolls back when dropped uncommitted (an error, or a panic unwinding through the job).
struct RowsTransaction<'c> {
    conn: &'c dyn Session,
    begun: bool,
}

impl<'c> RowsTransaction<'c> {
    fn new(conn: &'c dyn Session) -> Self {
        Self { conn, begun: false }
    }

    /// The connection inside the transaction, beginning it if needed.
    fn begun(&mut self) -> Result<&'c dyn Session> {
        if !self.begun {
            self.conn.begin(true)?;
            self.begun = true;
        }
        Ok(self.conn)
    }

    fn commit(&mut self) -> Result<()> {
        if self.begun {
            self.conn.commit()?;
            self.begun = false;
        }
        Ok(())
    }

    /// The connection, outside any transaction once committed.
    fn connection(&self) -> &'c dyn Session {
        self.conn
    }
}

impl Drop for RowsTransaction<'_> {
    fn drop(&mut self) {
        if self.begun {
            let _ = self.conn.rollback();
        }
    }
}

/// This session's turn to publish on a shared store, ended when dropped (see
/// `store::snapshots::take_turn`).
struct Turn<'c>(&'c dyn Session);

impl<'c> Turn<'c> {
    fn take(conn: &'c dyn Session) -> Result<Self> {
        crate::store::snapshots::take_turn(conn)?;
        Ok(Self(conn))
    }
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        if let Err(e) = crate::store::snapshots::end_turn(self.0) {
            log::warn!("ending a publication's turn failed (it ends with the connection): {e}");
        }
    }
}

/// Rolls back, when dropped, the transaction a dry run began (whichever way it ends).
struct RolledBack<'c>(&'c dyn Session);

impl Drop for RolledBack<'_> {
    fn drop(&mut self) {
        let _ = self.0.rollback();
    }
}

/// The published sha256 of each path of a target's root, and its Python packages.
struct PrepareInputs {
    current: HashMap<String, String>,
    /// The kind each path of this root and collection was given, where one was.
    kinds: HashMap<String, String>,
    python_packages: std::collections::HashSet<String>,
}

/// Calls `f` with the context preparing a target's candidates reads (the pack's chunking and
/// kinds, the capture limits, the published shas, the syntax cache).
fn with_context<R>(
    engine: &Engine,
    assignment: &super::Assignment,
    target: &Target,
    inputs: &PrepareInputs,
    f: impl FnOnce(&PrepareContext<'_>) -> R,
) -> R {
    let current_sha = |rel: &str| inputs.current.get(rel).cloned();
    let syntax_cached = |key: &str| {
        engine
            .with_reader(|c| crate::store::relations::syntax_payload(c, key))
            .ok()
            .flatten()
    };
    let pack = engine.pack();
    f(&PrepareContext {
        root: &target.root,
        assignment,
        kinds: &pack.kinds,
        stored_kinds: &inputs.kinds,
        formats: &pack.formats,
        profile: &engine.config().default_profile,
        max_file_bytes: engine.config().capture.max_file_bytes,
        max_line_bytes: engine.config().capture.max_line_bytes,
        python_packages: &inputs.python_packages,
        chunking: ChunkOptions {
            target_tokens: pack.chunking.target_tokens,
            soft_ceiling_tokens: pack.chunking.soft_ceiling_tokens,
        },
        current_sha: &current_sha,
        syntax_cached: &syntax_cached,
        pdf: engine.pdf_reader(),
        documents: &engine.config().documents,
        ocr: &engine.config().ocr,
    })
}

/// Why capture will not take this file again, if it will not: its bytes were erased on request
/// (a warning), or its source was withdrawn and a sync does not bring it back (an info).
fn refusal(
    conn: &dyn Tx,
    collection_id: i64,
    key: &str,
    prepared: &super::prepare::Prepared,
    rel_path: &str,
) -> Result<Option<Diagnostic>> {
    if let Some((at, reason)) = super::refusals::erased_on_request(conn, &prepared.sha256)? {
        return Ok(Some(Diagnostic::warning(
            rel_path,
            crate::error::ErrorCode::Forbidden,
            format!(
                "these bytes were erased on request at {}: {reason}; not captured again",
                crate::clock::iso_utc(at)
            ),
        )));
    }
    if let Some((at, reason)) = super::refusals::withdrawn(conn, collection_id, key)? {
        return Ok(Some(Diagnostic::info(
            rel_path,
            crate::error::ErrorCode::Forbidden,
            format!(
                "withdrawn at {}: {reason}; not captured",
                crate::clock::iso_utc(at)
            ),
        )));
    }
    Ok(None)
}

/// A file's original bytes, and a document's derived text and picture bytes, into the artifact
/// store (content-addressed, so a second put of the same bytes is a no-op).
/// Artifacts a job has yet to store. The folder gets each at once; a bucket's are gathered and
/// sent several at once ([`crate::artifact::ArtifactStore::put_many`]) when this many or these
/// many bytes wait, and always before the rows naming them commit: a round trip per file was
/// the bucket's whole cost on the add's path.
#[derive(Default)]
struct Uploads {
    waiting: Vec<(String, Vec<u8>)>,
    bytes: usize,
}

impl Uploads {
    const MOST: usize = 64;
    const MOST_BYTES: usize = 32 << 20;

    /// A file's original, and a document's derived text and pictures.
    fn add(
        &mut self,
        engine: &Engine,
        prepared: &super::prepare::Prepared,
        extraction: &super::prepare::Extraction,
    ) -> Result<()> {
        let mut items: Vec<(&str, &[u8])> = vec![(&prepared.sha256, &prepared.bytes)];
        if let Some(doc) = &extraction.document {
            items.push((&doc.text_sha256, doc.read.text.as_bytes()));
            for (asset, sha) in doc.read.assets.iter().zip(&doc.asset_sha256) {
                if let (Some(bytes), Some(sha)) = (&asset.bytes, sha) {
                    items.push((sha, bytes));
                }
            }
        }
        if !engine.artifacts().remote() {
            return items
                .iter()
                .try_for_each(|(sha, bytes)| engine.artifacts().put(sha, bytes));
        }
        for (sha, bytes) in items {
            self.bytes += bytes.len();
            self.waiting.push((sha.to_string(), bytes.to_vec()));
        }
        if self.waiting.len() >= Self::MOST || self.bytes >= Self::MOST_BYTES {
            self.flush(engine)?;
        }
        Ok(())
    }

    /// Stores everything waiting.
    fn flush(&mut self, engine: &Engine) -> Result<()> {
        if self.waiting.is_empty() {
            return Ok(());
        }
        let items: Vec<(&str, &[u8])> = self
            .waiting
            .iter()
            .map(|(sha, bytes)| (sha.as_str(), bytes.as_slice()))
            .collect();
        engine.artifacts().put_many(&items)?;
        self.waiting.clear();
        self.bytes = 0;
        Ok(())
    }
}
