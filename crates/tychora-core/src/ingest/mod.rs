//! `add`/sync as a durable job: capture → parse → commit canonical rows → build and verify an index
//! generation → switch the snapshot pointer in one transaction → receipt.
//!
//! A crash at any point leaves the previous snapshot published and intact: canonical rows of an
//! unfinished job are unreferenced by any snapshot, and an unpublished generation directory is
//! removed by the next open's garbage collection.

mod commit;
pub use commit::normalize_identifier;
mod prepare;

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::time::Instant;

use rusqlite::{OptionalExtension, params};
use serde::{Deserialize, Serialize};

use crate::capture;
use crate::chunk::ChunkOptions;
use crate::error::{Diagnostic, Error, ErrorCode, Result};
use crate::parse::KindOverride;
use crate::snapshot::{self, Member};
use crate::store::now_ms;
use crate::workspace::Workspace;
use prepare::{Outcome, PrepareContext};

/// What to add.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct AddRequest {
    /// Files or directories.
    pub paths: Vec<String>,
    /// Target collection (default `default`).
    #[serde(default)]
    pub collection: Option<String>,
    /// Force a kind instead of detecting it from the extension.
    #[serde(default)]
    pub kind: Option<String>,
}

/// Who asked for a capture; it bounds where the capture may read.
///
/// The owner (the CLI, the library, the owner's token over HTTP) may register a new root when
/// `capture.auto_add_roots` is on. An agent (MCP, the agent token over HTTP) may only capture by
/// absolute path inside the roots already configured or registered: an agent-facing credential
/// can never widen what the workspace reads. The requester is stored with the queued job, so a job
/// resumed after a restart keeps its bounds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Requester {
    /// The workspace's owner.
    Owner,
    /// An agent; also what a job recorded before requesters existed is read as (the safe side).
    #[default]
    Agent,
}

impl Requester {
    /// `owner` or `agent`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Owner => "owner",
            Self::Agent => "agent",
        }
    }

    /// Parses `owner` / `agent`.
    ///
    /// # Errors
    /// `E_INVALID_ARGUMENT` for anything else.
    pub fn parse(value: &str) -> Result<Self> {
        match value {
            "owner" => Ok(Self::Owner),
            "agent" => Ok(Self::Agent),
            other => Err(Error::InvalidArgument(format!(
                "unknown requester {other:?}; expected owner or agent"
            ))),
        }
    }
}

/// A job's stored request: what to add and who asked. Only the engine writes `requester`; the
/// caller's request body cannot carry it (it is not a field of [`AddRequest`]).
#[derive(Debug, Serialize, Deserialize)]
struct QueuedAdd {
    #[serde(flatten)]
    request: AddRequest,
    #[serde(default)]
    requester: Requester,
}

/// File counts of a job.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[allow(missing_docs)] // Each count names its files: scanned by the walk, then one outcome each.
pub struct FileCounts {
    pub scanned: usize,
    pub added: usize,
    pub changed: usize,
    pub unchanged: usize,
    pub removed: usize,
    pub skipped: usize,
    pub failed: usize,
}

/// The receipt of a finished add/sync job.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[allow(missing_docs)]
pub struct Receipt {
    pub job_id: i64,
    /// `succeeded`, `partial` (some files failed) or `failed` (nothing could be captured).
    pub status: String,
    pub snapshot_id: Option<i64>,
    pub previous_snapshot_id: Option<i64>,
    /// Whether this job published a new snapshot.
    pub published: bool,
    pub files: FileCounts,
    pub bytes_read: u64,
    pub units: usize,
    pub chunks: usize,
    pub duration_ms: f64,
    pub added: Vec<String>,
    pub changed: Vec<String>,
    pub removed: Vec<String>,
    pub diagnostics: Vec<Diagnostic>,
    /// Entries the walk left out, counted per rule (hidden names, ignore files, `capture.exclude`).
    #[serde(default)]
    pub excluded: Vec<capture::Exclusion>,
}

/// Progress of a running job.
#[derive(Debug, Clone, Serialize)]
pub struct Progress {
    /// `walk`, `prepare`, `commit`, `index`, `publish`.
    pub phase: &'static str,
    /// Items done in this phase.
    pub done: usize,
    /// Items in this phase (0 when unknown).
    pub total: usize,
}

/// Test hook: when `TYCHORA_FAILPOINT` names this step, aborts the process there (`NAME`) or
/// pauses it for a minute (`NAME:sleep`, so a test can kill it mid-job). Crash safety is tested at
/// exact points rather than by timing.
pub(crate) fn failpoint(name: &str) {
    let Ok(value) = std::env::var("TYCHORA_FAILPOINT") else {
        return;
    };
    if value == name {
        log::error!("failpoint {name}: aborting");
        std::process::abort();
    }
    if value.strip_suffix(":sleep") == Some(name) {
        log::error!("failpoint {name}: sleeping");
        std::thread::sleep(std::time::Duration::from_secs(60));
    }
}

fn parse_kind(kind: Option<&str>) -> Result<Option<KindOverride>> {
    kind.map(|k| {
        KindOverride::from_name(k).ok_or_else(|| {
            Error::InvalidArgument(format!(
                "unknown kind {k:?}; expected markdown, text, json, jsonl or code_file"
            ))
        })
    })
    .transpose()
}

struct Target {
    root_id: i64,
    root: PathBuf,
    start: PathBuf,
    is_dir: bool,
}

impl Workspace {
    /// Adds or syncs files and directories as one durable job: [`Self::enqueue_add`] then
    /// [`Self::run_job`].
    ///
    /// # Errors
    /// Only whole-job failures (database, index build); per-file problems are diagnostics.
    pub fn add(
        &self,
        request: &AddRequest,
        requester: Requester,
        on_progress: &(dyn Fn(Progress) + Sync),
    ) -> Result<Receipt> {
        let job_id = self.enqueue_add(request, requester)?;
        self.run_job(job_id, on_progress)
    }

    /// Validates an add request and records it as a queued job. Queued jobs survive a restart.
    /// Does not wait for a running job: it writes through a pooled connection, not the writer.
    /// An agent's paths are checked now as well as when the job runs, so a path outside the
    /// roots is refused at once rather than in a receipt.
    ///
    /// # Errors
    /// `E_INVALID_ARGUMENT` for an empty path list, an unknown kind or (agents) a relative path;
    /// `E_FORBIDDEN` when an agent names a path outside the capture roots.
    pub fn enqueue_add(&self, request: &AddRequest, requester: Requester) -> Result<i64> {
        parse_kind(request.kind.as_deref())?;
        if request.paths.is_empty() {
            return Err(Error::InvalidArgument("add needs at least one path".into()));
        }
        if requester == Requester::Agent {
            let roots = self.with_reader(|conn| self.capture_roots(conn))?;
            for raw in &request.paths {
                agent_may_capture(Path::new(raw), &roots)?;
            }
        }
        let queued = QueuedAdd {
            request: request.clone(),
            requester,
        };
        let json = serde_json::to_string(&queued).map_err(|e| Error::Internal(e.to_string()))?;
        self.with_reader(|conn| {
            conn.execute("INSERT INTO jobs (kind, status, request_json, created_at) VALUES ('add', 'queued', ?1, ?2)", params![json, now_ms()])?;
            Ok(conn.last_insert_rowid())
        })
    }

    /// Ids of queued jobs, oldest first (to resume after a restart).
    ///
    /// # Errors
    /// SQLite errors.
    pub fn queued_jobs(&self) -> Result<Vec<i64>> {
        self.with_reader(|conn| {
            let mut stmt =
                conn.prepare_cached("SELECT id FROM jobs WHERE status = 'queued' ORDER BY id")?;
            let ids = stmt
                .query_map([], |r| r.get(0))?
                .collect::<rusqlite::Result<_>>()?;
            Ok(ids)
        })
    }

    /// Runs a queued job to completion on the single writer.
    ///
    /// # Errors
    /// `E_NOT_FOUND` for an unknown job, `E_CONFLICT` if it is not queued, whole-job failures.
    pub fn run_job(&self, job_id: i64, on_progress: &(dyn Fn(Progress) + Sync)) -> Result<Receipt> {
        let started = Instant::now();
        let mut conn = self.writer()?;
        let (status, request_json): (String, String) = conn
            .query_row(
                "SELECT status, request_json FROM jobs WHERE id = ?1",
                params![job_id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?
            .ok_or_else(|| Error::NotFound {
                what: "job",
                id: job_id.to_string(),
            })?;
        if status != "queued" {
            return Err(Error::Conflict(format!(
                "job {job_id} is {status}, not queued"
            )));
        }
        let QueuedAdd { request, requester } = serde_json::from_str(&request_json)
            .map_err(|e| Error::Corrupt(format!("job {job_id} request: {e}")))?;
        let kind_override = parse_kind(request.kind.as_deref())?;
        let collection = request
            .collection
            .clone()
            .unwrap_or_else(|| "default".into());
        conn.execute(
            "UPDATE jobs SET status = 'running', pid = ?2, started_at = ?3 WHERE id = ?1",
            params![job_id, std::process::id(), now_ms()],
        )?;
        let record = |p: Progress| {
            self.record_progress(job_id, &p);
            on_progress(p);
        };
        let result = self.run_add(
            &mut conn,
            job_id,
            &request,
            requester,
            &collection,
            kind_override,
            started,
            &record,
        );
        self.clear_progress(job_id);
        result.inspect_err(|err| {
            let _ = conn.execute(
                "UPDATE jobs SET status = 'failed', error = ?2, finished_at = ?3 WHERE id = ?1",
                params![job_id, format!("{}: {err}", err.code().as_str()), now_ms()],
            );
        })
    }

    #[allow(clippy::too_many_arguments, clippy::too_many_lines)] // The job's steps in order; splitting would scatter them.
    fn run_add(
        &self,
        conn: &mut rusqlite::Connection,
        job_id: i64,
        request: &AddRequest,
        requester: Requester,
        collection: &str,
        kind_override: Option<KindOverride>,
        started: Instant,
        on_progress: &(dyn Fn(Progress) + Sync),
    ) -> Result<Receipt> {
        let mut diagnostics = Vec::new();
        let mut step = commit::Steps::new(job_id);

        // 1. Resolve targets inside configured roots.
        step.begin(conn, "walk")?;
        let mut targets = Vec::new();
        for raw in &request.paths {
            match self.resolve_target(conn, Path::new(raw), requester) {
                Ok(target) => targets.push(target),
                Err(diag) => diagnostics.push(diag),
            }
        }
        let collection_id = Workspace::collection_id(conn, collection, true)?;
        let previous = snapshot::current(conn)?;
        let members = match previous {
            Some(id) => snapshot::members(conn, id)?,
            None => Vec::new(),
        };
        // (root_id, rel_path) → the member currently published for it.
        let published: HashMap<(i64, String), &Member> = members
            .iter()
            .filter(|m| m.collection_id == collection_id)
            .map(|m| ((m.root_id, m.rel_path.clone()), m))
            .collect();

        let mut files = FileCounts::default();
        let mut seen: BTreeSet<(i64, String)> = BTreeSet::new();
        let mut replaced: BTreeSet<i64> = BTreeSet::new(); // source ids whose member changes
        let mut new_members: Vec<Member> = Vec::new();
        let mut added = Vec::new();
        let mut changed = Vec::new();
        let mut removed = Vec::new();
        let mut bytes_read = 0u64;
        let mut unit_total = 0usize;
        let mut chunk_total = 0usize;
        let mut excluded: Vec<capture::Exclusion> = Vec::new();
        let mut member_sources: BTreeSet<i64> = BTreeSet::new();
        let pack = self.pack();
        let chunking = ChunkOptions {
            target_tokens: pack.chunking.target_tokens,
            soft_ceiling_tokens: pack.chunking.soft_ceiling_tokens,
        };
        let fingerprint = commit::fingerprint(pack, kind_override);

        for target in &targets {
            // Where the bytes came from: the repository commit, read without running git.
            let provenance = capture::git::head_of(&target.root).map_or_else(
                || serde_json::json!({}),
                |head| serde_json::json!({ "git": head }),
            );
            let walked = capture::walk(
                &target.root,
                &target.start,
                self.dir(),
                &self.config().capture.exclude,
            );
            diagnostics.extend(walked.diagnostics);
            merge_exclusions(&mut excluded, walked.excluded);
            let candidates = walked.candidates;
            on_progress(Progress {
                phase: "walk",
                done: candidates.len(),
                total: candidates.len(),
            });
            step.finish(
                conn,
                "walk",
                &serde_json::json!({ "files": candidates.len() }),
            )?;

            // 2. Read, hash, parse and chunk on all cores.
            step.begin(conn, "prepare")?;
            let current_sha = |rel: &str| {
                published
                    .get(&(target.root_id, rel.to_string()))
                    .map(|m| m.sha256.clone())
            };
            let syntax_cached = |key: &str| {
                self.with_reader(|c| {
                    Ok(c.query_row(
                        "SELECT payload FROM syntax_cache WHERE key = ?1",
                        params![key],
                        |r| r.get::<_, String>(0),
                    )
                    .optional()?)
                })
                .ok()
                .flatten()
            };
            let python_packages =
                crate::code::python_packages(candidates.iter().map(|c| c.rel_path.as_str()));
            let ctx = PrepareContext {
                root: &target.root,
                kind_override,
                kinds: &pack.kinds,
                profile: &self.config().default_profile,
                max_file_bytes: self.config().capture.max_file_bytes,
                max_line_bytes: self.config().capture.max_line_bytes,
                python_packages: &python_packages,
                chunking,
                current_sha: &current_sha,
                syntax_cached: &syntax_cached,
            };
            let total = candidates.len();
            let outcomes = prepare::prepare_all(&ctx, &candidates, &|done| {
                on_progress(Progress {
                    phase: "prepare",
                    done,
                    total,
                })
            });
            failpoint("after-prepare");

            // 3. Artifacts first (outside any transaction), then canonical rows in one transaction.
            for outcome in &outcomes {
                if let Outcome::Ready(p) = outcome
                    && p.extraction.is_some()
                {
                    self.artifacts().put(&p.sha256, &p.bytes)?;
                }
            }
            step.finish(conn, "prepare", &serde_json::json!({ "files": total }))?;
            step.begin(conn, "commit")?;
            let mut tx = conn.transaction()?;
            for (candidate, outcome) in candidates.iter().zip(outcomes) {
                files.scanned += 1;
                let key = (target.root_id, candidate.rel_path.clone());
                if seen.contains(&key) {
                    // Two targets of one job overlapping: the file was handled already.
                    files.scanned -= 1;
                    continue;
                }
                match outcome {
                    Outcome::Skipped(diag) => {
                        files.skipped += 1;
                        diagnostics.push(diag);
                    }
                    Outcome::Failed(diag) => {
                        files.failed += usize::from(diag.level == "error");
                        files.skipped += usize::from(diag.level != "error");
                        diagnostics.push(diag);
                        // A file that can no longer be read keeps its published revision.
                        seen.insert(key);
                    }
                    Outcome::Ready(prepared) => {
                        bytes_read += prepared.bytes.len() as u64;
                        seen.insert(key.clone());
                        let Some(extraction) = &prepared.extraction else {
                            files.unchanged += 1;
                            continue;
                        };
                        // One file's rows in a savepoint: whatever goes wrong with it (a
                        // constraint, a value SQLite refuses) fails that file, never the job.
                        let savepoint = tx.savepoint()?;
                        let written = commit::write_revision(
                            &savepoint,
                            self,
                            collection_id,
                            target.root_id,
                            &candidate.rel_path,
                            &candidate.path,
                            &prepared,
                            extraction,
                            &fingerprint,
                            &provenance,
                        )
                        .and_then(|m| {
                            if member_sources.contains(&m.source_id) {
                                Err(Error::Conflict(
                                    "another file of this job already maps to the same source"
                                        .into(),
                                ))
                            } else {
                                Ok(m)
                            }
                        });
                        let written = match written {
                            Ok(m) => {
                                savepoint.commit()?;
                                m
                            }
                            Err(e) => {
                                drop(savepoint); // rolls back this file's rows
                                files.failed += 1;
                                diagnostics.push(Diagnostic::error(
                                    &candidate.rel_path,
                                    e.code(),
                                    format!("not recorded: {e}"),
                                ));
                                continue;
                            }
                        };
                        member_sources.insert(written.source_id);
                        unit_total += extraction.units.len();
                        chunk_total += extraction.chunks.len();
                        diagnostics.extend(extraction.diagnostics.iter().cloned());
                        if let Some(old) = published.get(&key) {
                            replaced.insert(old.source_id);
                            files.changed += 1;
                            changed.push(candidate.rel_path.clone());
                        } else {
                            files.added += 1;
                            added.push(candidate.rel_path.clone());
                        }
                        new_members.push(written);
                    }
                }
            }
            // A sync of a directory removes members under it that the walk no longer finds.
            if target.is_dir {
                let prefix = capture::rel_path(&target.root, &target.start);
                let under = |rel: &str| {
                    target.start == target.root
                        || rel == prefix
                        || rel.starts_with(&format!("{prefix}/"))
                };
                for ((root_id, rel), member) in &published {
                    if *root_id == target.root_id
                        && under(rel)
                        && !seen.contains(&(*root_id, rel.clone()))
                        && replaced.insert(member.source_id)
                    {
                        tx.execute(
                            "UPDATE sources SET status = 'removed', updated_at = ?2 WHERE id = ?1",
                            params![member.source_id, now_ms()],
                        )?;
                        files.removed += 1;
                        removed.push(rel.clone());
                    }
                }
            }
            tx.commit()?;
            step.finish(
                conn,
                "commit",
                &serde_json::json!({ "units": unit_total, "chunks": chunk_total }),
            )?;
            failpoint("after-commit");
        }

        // 4. Publish a new snapshot when membership changed.
        let errors = diagnostics.iter().filter(|d| d.level == "error").count();
        let captured = files.added + files.changed + files.unchanged + files.removed;
        let status = if errors == 0 {
            "succeeded"
        } else if captured > 0 {
            "partial"
        } else {
            "failed"
        };
        let mut receipt = Receipt {
            job_id,
            status: status.into(),
            snapshot_id: previous,
            previous_snapshot_id: previous,
            published: false,
            files,
            bytes_read,
            units: unit_total,
            chunks: chunk_total,
            duration_ms: 0.0,
            added,
            changed,
            removed,
            diagnostics,
            excluded,
        };
        if !new_members.is_empty()
            || !replaced.is_empty()
            || previous.is_none() && !targets.is_empty()
        {
            let mut next: Vec<Member> = members
                .iter()
                .filter(|m| !replaced.contains(&m.source_id))
                .cloned()
                .collect();
            next.extend(new_members);
            // 5. Resolve references of every root whose code changed (reused sets otherwise).
            step.begin(conn, "resolve")?;
            let resolve_started = Instant::now();
            let sets = crate::graph::build::relation_sets(conn, &next)?;
            step.finish(
                conn,
                "resolve",
                &serde_json::json!({ "relation_sets": sets, "ms": resolve_started.elapsed().as_millis() as u64 }),
            )?;
            step.begin(conn, "publish")?;
            // The job's end is written in the pointer switch's transaction: a crash can never
            // leave a published snapshot whose job reads as interrupted, or the reverse.
            let members_total = next.len();
            let finish = |tx: &rusqlite::Transaction<'_>, id: i64| {
                let mut done = receipt.clone();
                done.snapshot_id = Some(id);
                done.published = true;
                done.duration_ms = started.elapsed().as_secs_f64() * 1000.0;
                step.finish(
                    tx,
                    "publish",
                    &serde_json::json!({ "snapshot_id": id, "members": members_total }),
                )?;
                commit::finish_job(tx, &done)
            };
            let publication = snapshot::Publication {
                parent: previous,
                job_id,
                members: &next,
                relation_sets: &sets,
            };
            let id = snapshot::publish(self, conn, &publication, on_progress, finish)?;
            receipt.snapshot_id = Some(id);
            receipt.published = true;
            receipt.duration_ms = started.elapsed().as_secs_f64() * 1000.0;
            // Generations beyond the retention window go now; pinned readers keep theirs open.
            if let Err(e) = self.collect_garbage_with(conn) {
                log::warn!("garbage collection after publishing snapshot {id} failed: {e}");
            }
            return Ok(receipt);
        }
        receipt.duration_ms = started.elapsed().as_secs_f64() * 1000.0;
        commit::finish_job(conn, &receipt)?;
        Ok(receipt)
    }

    /// The canonical roots capture may read from: configured `capture.roots` and the roots that
    /// earlier owner adds registered.
    fn capture_roots(&self, conn: &rusqlite::Connection) -> Result<Vec<PathBuf>> {
        let mut roots: Vec<PathBuf> = self
            .config()
            .capture
            .roots
            .iter()
            .filter_map(|r| std::fs::canonicalize(r).ok())
            .collect();
        roots.extend(
            commit::registered_roots(conn)?
                .iter()
                .map(|(_, p)| capture::names::decode_path(p)),
        );
        Ok(roots)
    }

    /// Canonicalises `path`, finds its root, registers a new one only for the owner (and only
    /// with `auto_add_roots`), and refuses paths outside the roots.
    fn resolve_target(
        &self,
        conn: &rusqlite::Connection,
        path: &Path,
        requester: Requester,
    ) -> std::result::Result<Target, Diagnostic> {
        let shown = capture::names::encode_path(path);
        if requester == Requester::Agent {
            // The job may run after a restart with different roots: judged again, as at enqueue.
            let roots = self
                .capture_roots(conn)
                .map_err(|e| Diagnostic::error(&shown, e.code(), e.to_string()))?;
            agent_may_capture(path, &roots)
                .map_err(|e| Diagnostic::error(&shown, e.code(), e.to_string()))?;
        }
        let abs = std::path::absolute(path).map_err(|e| {
            Diagnostic::error(
                &shown,
                ErrorCode::InvalidArgument,
                format!("cannot resolve path: {e}"),
            )
        })?;
        let meta = std::fs::symlink_metadata(&abs).map_err(|e| {
            Diagnostic::error(
                &shown,
                ErrorCode::NotFound,
                format!("cannot read path: {e}"),
            )
        })?;
        let link = meta.file_type().is_symlink();
        // A symlink given by name is not resolved: the walker reports it and never follows it.
        let real = match (link, abs.parent(), abs.file_name()) {
            (true, Some(parent), Some(name)) => std::fs::canonicalize(parent).map(|p| p.join(name)),
            _ => std::fs::canonicalize(&abs),
        }
        .map_err(|e| {
            Diagnostic::error(
                &shown,
                ErrorCode::NotFound,
                format!("cannot resolve path: {e}"),
            )
        })?;
        if real.starts_with(self.dir()) {
            return Err(Diagnostic::error(
                &shown,
                ErrorCode::InvalidArgument,
                "refusing to capture the workspace itself",
            ));
        }
        let is_dir = !link && meta.is_dir();
        let roots = self
            .capture_roots(conn)
            .map_err(|e| Diagnostic::error(&shown, e.code(), e.to_string()))?;
        let found = roots
            .iter()
            .filter(|r| real.starts_with(r))
            .max_by_key(|r| r.as_os_str().len())
            .cloned();
        let root = match found {
            Some(root) => root,
            None if requester == Requester::Owner && self.config().capture.auto_add_roots => {
                if is_dir {
                    real.clone()
                } else {
                    real.parent()
                        .map(Path::to_path_buf)
                        .unwrap_or_else(|| real.clone())
                }
            }
            None if requester == Requester::Agent => {
                return Err(Diagnostic::error(
                    &shown,
                    ErrorCode::Forbidden,
                    OUTSIDE_ROOTS_FOR_AGENTS,
                ));
            }
            None => {
                return Err(Diagnostic::error(
                    &shown,
                    ErrorCode::InvalidArgument,
                    "outside the workspace's configured capture roots (capture.roots in workspace.toml)",
                ));
            }
        };
        let root_id = commit::root_id(conn, &root)
            .map_err(|e| Diagnostic::error(&shown, e.code(), e.to_string()))?;
        Ok(Target {
            root_id,
            root,
            start: real,
            is_dir,
        })
    }
}

const OUTSIDE_ROOTS_FOR_AGENTS: &str = "outside the workspace's capture roots; agents may add only inside roots the owner configured or added (`tychora add` or capture.roots)";

/// Whether an agent may name `path`: absolute, without `..`, and inside one of `roots` once
/// resolved (a link named as the last component is judged by where it sits, since capture never
/// follows it). A path that does not exist is judged by its text, so whether something exists
/// outside the roots is not revealed either.
fn agent_may_capture(path: &Path, roots: &[PathBuf]) -> Result<()> {
    let shown = capture::names::encode_path(path);
    if !path.is_absolute() {
        return Err(Error::InvalidArgument(format!(
            "paths must be absolute: {shown}"
        )));
    }
    if path
        .components()
        .any(|c| c == std::path::Component::ParentDir)
    {
        return Err(Error::InvalidArgument(format!(
            "paths must not contain `..`: {shown}"
        )));
    }
    let real = match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) => std::fs::canonicalize(parent).map(|p| p.join(name)),
        _ => std::fs::canonicalize(path),
    };
    let inside = match real {
        Ok(real) => roots.iter().any(|r| real.starts_with(r)),
        Err(_) => roots.iter().any(|r| path.starts_with(r)),
    };
    if inside {
        Ok(())
    } else {
        Err(Error::Forbidden(format!(
            "{shown}: {OUTSIDE_ROOTS_FOR_AGENTS}"
        )))
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
