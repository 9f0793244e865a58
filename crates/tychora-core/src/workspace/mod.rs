//! A workspace on disk: `workspace.toml`, `corpus.sqlite3`, `artifacts/`, `indexes/`, `runtime/`.
//!
//! One process owns a workspace through an OS file lock on `runtime/lock`, which also records the
//! owner's pid so a second process gets an error that names it.

use std::fs;
use std::path::Path;

use crate::config::{self, Config, Pack};
use crate::engine::{Engine, WorkspaceLock};
use crate::error::{Error, Result};
use crate::graph::symbol::SymbolReport;
use crate::ingest::{AddRequest, Receipt, Requester};
use crate::job::Progress;
use crate::manage::{
    Evidence, JobStatus, SnapshotList, SourceList, SourceQuery, Status, StatusOptions, VerifyReport,
};
use crate::query::{QueryRequest, QueryResult};
use crate::store::{self, migrate};
use crate::vector::Providers;

pub use crate::engine::ENGINE_VERSION;

mod service;
pub use service::ServiceSettings;

/// The newest canonical schema version this engine writes.
#[must_use]
pub fn schema_version() -> i64 {
    migrate::latest()
}
pub use crate::snapshot::CompactReport;

/// An open workspace: the public front of the engine. Each method is one call into the pipeline
/// that does the work (`ingest`, `query`, `graph`, `manage`).
#[derive(Debug)]
pub struct Workspace {
    engine: Engine,
}

/// What `init` created.
#[derive(Debug, serde::Serialize)]
pub struct InitReport {
    /// The workspace directory.
    pub dir: String,
    /// Files and folders created.
    pub created: Vec<String>,
    /// Schema version.
    pub schema_version: i64,
}

impl Workspace {
    /// Creates a workspace in `dir` (created if missing) and applies the schema.
    ///
    /// # Errors
    /// `E_CONFLICT` if `dir` already holds a workspace; I/O and SQLite errors.
    pub fn init(dir: &Path) -> Result<InitReport> {
        Self::init_with_profile(dir, "documents")
    }

    /// Creates a workspace whose default profile is `profile` (`documents` or `code`).
    ///
    /// # Errors
    /// `E_INVALID_ARGUMENT` for an unknown profile; otherwise as [`Self::init`].
    pub fn init_with_profile(dir: &Path, profile: &str) -> Result<InitReport> {
        Self::init_with(dir, profile, None)
    }

    /// Creates a workspace whose default profile is `profile`, with the text channel when
    /// `embeddings` names a provider (`local` or `voyage`).
    ///
    /// # Errors
    /// `E_INVALID_ARGUMENT` for an unknown profile or provider; otherwise as [`Self::init`].
    pub fn init_with(dir: &Path, profile: &str, embeddings: Option<&str>) -> Result<InitReport> {
        if let Some(provider) = embeddings
            && !config::EMBEDDING_PROVIDERS.contains(&provider)
        {
            return Err(Error::InvalidArgument(format!(
                "unknown embedding provider {provider:?}; expected one of {:?}",
                config::EMBEDDING_PROVIDERS
            )));
        }
        if !config::PROFILES.contains(&profile) {
            return Err(Error::InvalidArgument(format!(
                "unknown profile {profile:?}; expected one of {:?}",
                config::PROFILES
            )));
        }
        fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        let dir = fs::canonicalize(dir).map_err(|e| Error::io(dir, e))?;
        let toml_path = dir.join("workspace.toml");
        if toml_path.exists() {
            return Err(Error::Conflict(format!(
                "{} is already a tychora workspace",
                dir.display()
            )));
        }
        let mut created = Vec::new();
        for sub in ["artifacts", "indexes", "runtime"] {
            let path = dir.join(sub);
            fs::create_dir_all(&path).map_err(|e| Error::io(&path, e))?;
            created.push(format!("{sub}/"));
        }
        let lock = WorkspaceLock::acquire(&dir)?;
        // A hidden directory (`.tychora` inside a project) is named after the project that holds it.
        let named = if dir
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with('.'))
        {
            dir.parent()
        } else {
            Some(dir.as_path())
        };
        let name: String = named
            .and_then(Path::file_name)
            .map_or_else(
                || "workspace".to_string(),
                |n| n.to_string_lossy().into_owned(),
            )
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                    c
                } else {
                    '-'
                }
            })
            .collect();
        let mut conn = store::connect(&dir.join("corpus.sqlite3"))?;
        migrate::apply(&mut conn)?;
        let now = crate::clock::now_ms();
        let tx = conn.transaction()?;
        store::workspaces::create(&tx, &name, ENGINE_VERSION, now)?;
        tx.commit()?;
        // workspace.toml last: its presence marks a complete workspace.
        let tmp = dir.join("workspace.toml.tmp");
        fs::write(&tmp, config::default_toml(&name, profile, embeddings))
            .map_err(|e| Error::io(&tmp, e))?;
        fs::rename(&tmp, &toml_path).map_err(|e| Error::io(&toml_path, e))?;
        created.splice(
            0..0,
            ["workspace.toml".to_string(), "corpus.sqlite3".to_string()],
        );
        drop(lock);
        Ok(InitReport {
            dir: dir.display().to_string(),
            created,
            schema_version: migrate::latest(),
        })
    }

    /// Opens an existing workspace, taking its lock. Never migrates.
    ///
    /// # Errors
    /// `E_NOT_FOUND` (no workspace), `E_LOCKED`, `E_MIGRATION_REQUIRED`, `E_CHECKSUM_MISMATCH`.
    pub fn open(dir: &Path) -> Result<Self> {
        Ok(Self {
            engine: Engine::open(dir, Providers::default(), None)?,
        })
    }

    /// Opens a workspace with providers the caller reaches (Voyage, from the TypeScript package):
    /// an embedder replaces the core's local model for the text channel, a reranker serves
    /// `[rerank]`.
    ///
    /// # Errors
    /// As [`Self::open`].
    pub fn open_with(dir: &Path, providers: Providers) -> Result<Self> {
        Self::open_with_readers(dir, providers, None)
    }

    /// [`Self::open_with`], plus the PDF reader the binding provides (pdf.js in worker threads);
    /// without one, PDFs are reported and not read.
    ///
    /// # Errors
    /// As [`Self::open`].
    pub fn open_with_readers(
        dir: &Path,
        providers: Providers,
        pdf: Option<std::sync::Arc<dyn crate::parse::document::PdfReader>>,
    ) -> Result<Self> {
        Ok(Self {
            engine: Engine::open(dir, providers, pdf)?,
        })
    }

    /// Applies pending migrations to the workspace in `dir` (to its service store when
    /// `[store]` names one). Returns the versions applied.
    ///
    /// # Errors
    /// `E_LOCKED`, `E_CHECKSUM_MISMATCH`, SQLite errors.
    pub fn migrate(dir: &Path) -> Result<Vec<i64>> {
        let dir = crate::engine::resolve(dir)?;
        let _lock = WorkspaceLock::acquire(&dir)?;
        let config = Config::load(&dir.join("workspace.toml"))?;
        if let Some(service) = &config.store {
            // The service store's own migrations (daemons migrating at once take turns).
            let (_, applied) = store::postgres::PgStore::open_and_migrate(&service.url, 1)?;
            return Ok(applied);
        }
        let mut conn = store::connect(&dir.join("corpus.sqlite3"))?;
        migrate::apply(&mut conn)
    }

    /// Attaches the workspace in `dir` to a service several daemons share (see
    /// [`ServiceSettings`]); returns whether workspace.toml changed.
    ///
    /// # Errors
    /// `E_INVALID_ARGUMENT` for a password in the URL, a folder naming another store or bucket,
    /// or one with evidence of its own; I/O errors.
    pub fn attach_service(dir: &Path, settings: &ServiceSettings) -> Result<bool> {
        service::attach(dir, settings)
    }

    /// The pid recorded by the process holding the lock of the workspace in `dir`, or `None`
    /// when no process holds it (a non-blocking probe).
    ///
    /// # Errors
    /// I/O errors other than a missing lock file.
    pub fn lock_owner(dir: &Path) -> Result<Option<String>> {
        WorkspaceLock::owner(dir)
    }

    /// The workspace directory (canonical).
    #[must_use]
    pub fn dir(&self) -> &Path {
        self.engine.dir()
    }

    /// The parsed `workspace.toml`.
    #[must_use]
    pub fn config(&self) -> &Config {
        self.engine.config()
    }

    /// The resolved pack.
    #[must_use]
    pub fn pack(&self) -> &Pack {
        self.engine.pack()
    }

    /// The current published snapshot id, if any.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn current_snapshot(&self) -> Result<Option<i64>> {
        self.engine.current_snapshot()
    }

    /// Removes index generations that no retained snapshot references and no reader holds.
    ///
    /// # Errors
    /// SQLite errors. File removal failures are logged, not fatal.
    pub fn collect_garbage(&self) -> Result<usize> {
        self.engine.collect_garbage()
    }

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

    /// What [`Self::add`] would capture and embed, and the embedding's estimated cost, without
    /// writing anything or calling a provider (`tychora add --dry-run`).
    ///
    /// # Errors
    /// `E_INVALID_ARGUMENT` for a bad request; the local model's errors.
    pub fn plan_add(
        &self,
        request: &AddRequest,
        requester: Requester,
        on_progress: &(dyn Fn(Progress) + Sync),
    ) -> Result<crate::ingest::AddPlan> {
        crate::ingest::plan(&self.engine, request, requester, on_progress)
    }

    /// Validates an add request and records it as a queued job, which survives a restart.
    ///
    /// # Errors
    /// `E_INVALID_ARGUMENT` for an empty path list, an unknown kind or (agents) a relative path;
    /// `E_FORBIDDEN` when an agent names a path outside the capture roots.
    pub fn enqueue_add(&self, request: &AddRequest, requester: Requester) -> Result<i64> {
        crate::ingest::enqueue(&self.engine, request, requester)
    }

    /// Ids of queued jobs, oldest first (to resume after a restart).
    ///
    /// # Errors
    /// SQLite errors.
    pub fn queued_jobs(&self) -> Result<Vec<i64>> {
        crate::ingest::queued(&self.engine)
    }

    /// The lease this process holds jobs on, in milliseconds, when its store is shared with other
    /// daemons (`[store]`): their jobs are then this one's to take too, and the daemon looks at the
    /// queue at least this often. `None` on the embedded store.
    #[must_use]
    pub fn job_lease_ms(&self) -> Option<i64> {
        self.engine.lease_ms()
    }

    /// Runs a queued job to completion on the single writer.
    ///
    /// # Errors
    /// `E_NOT_FOUND` for an unknown job, `E_CONFLICT` if it is not queued, whole-job failures.
    pub fn run_job(&self, job_id: i64, on_progress: &(dyn Fn(Progress) + Sync)) -> Result<Receipt> {
        let receipt = crate::ingest::run_job(&self.engine, job_id, on_progress)?;
        if receipt.published {
            self.retain_after_job();
        }
        Ok(receipt)
    }

    /// Retention after a job that published: whichever entry point ran the job (the CLI, the
    /// daemon, the library), history stays within `[snapshots]` and `[history]`. Bounded by what
    /// the new snapshot pushed out; a failure is logged and left for the next job or
    /// `manage purge`, never the job's (its snapshot is published).
    fn retain_after_job(&self) {
        if let Err(e) = crate::manage::retain(&self.engine, crate::clock::now_ms()) {
            log::warn!(
                "retention after the job failed (the next job or `manage purge` retries): {e}"
            );
        }
    }

    /// Makes derived index data whole again, as a `rebuild` job: damaged or missing vector files of
    /// retained snapshots are rewritten from the vector records; a current snapshot whose indexes
    /// are not those the configuration asks for (no vectors yet, another embedding family) is
    /// published again, embedding only inputs without a record.
    ///
    /// # Errors
    /// `E_NOT_FOUND` without a published snapshot; embedding and index build errors (the current
    /// snapshot stays published).
    pub fn rebuild(
        &self,
        on_progress: &(dyn Fn(Progress) + Sync),
    ) -> Result<crate::ingest::RebuildReport> {
        crate::ingest::rebuild(&self.engine, on_progress)
    }

    /// Builds the summary tree of the current snapshot (`tychora index build --raptor`), replacing
    /// the previous one; `summarizer` writes the summaries of the collections `[summaries]`
    /// permits, the extractive summariser the rest.
    ///
    /// # Errors
    /// `E_INVALID_ARGUMENT` without `[embeddings]` or vectors; `E_NOT_FOUND` with nothing
    /// published; the summariser's or embedder's `E_PROVIDER` (nothing written).
    pub fn build_summaries(
        &self,
        summarizer: Option<&dyn crate::summary::Summarizer>,
        options: &crate::summary::SummaryBuildOptions,
    ) -> Result<crate::summary::SummaryReport> {
        crate::summary::build(&self.engine, summarizer, options)
    }

    /// Writes a verified backup to `dest` while the workspace serves (queries go on; jobs wait).
    ///
    /// # Errors
    /// `E_CONFLICT` when `dest` is not empty; I/O errors leave nothing at `dest`.
    pub fn backup(&self, dest: &Path) -> Result<crate::manage::BackupReport> {
        crate::manage::backup(&self.engine, dest)
    }

    /// Verifies the backup in `src` and makes it the workspace `dir`.
    ///
    /// # Errors
    /// See [`crate::manage::restore`].
    pub fn restore(src: &Path, dir: &Path) -> Result<crate::manage::BackupReport> {
        crate::manage::restore(src, dir, &crate::manage::RestoreTarget::default())
    }

    /// Verifies the backup in `src` and makes it the workspace `dir`, its canonical rows restored
    /// into the empty PostgreSQL database and its artifacts into the bucket `target` names (a
    /// service store's backup).
    ///
    /// # Errors
    /// See [`crate::manage::restore`].
    pub fn restore_to(
        src: &Path,
        dir: &Path,
        target: &crate::manage::RestoreTarget<'_>,
    ) -> Result<crate::manage::BackupReport> {
        crate::manage::restore(src, dir, target)
    }

    /// Copies the closed workspace in `src` to `dest` as the start of another: the database by
    /// SQLite's backup API, immutable files as hard links.
    ///
    /// # Errors
    /// See [`crate::manage::clone_workspace`].
    pub fn clone_into(src: &Path, dest: &Path) -> Result<crate::manage::CloneReport> {
        crate::manage::clone_workspace(src, dest)
    }

    /// Integrity, disk space, stale generations, orphaned originals and interrupted jobs, each
    /// with the fix.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn doctor(&self) -> Result<Vec<crate::manage::Finding>> {
        crate::manage::doctor(&self.engine)
    }

    /// A recorded query run: request, applied scope, snapshot, results and the full trace.
    ///
    /// # Errors
    /// `E_NOT_FOUND` for an unknown or expired run.
    pub fn inspect_run(&self, run_id: &str) -> Result<crate::manage::RunRecord> {
        crate::manage::run_record(&self.engine, run_id)
    }

    /// Applies the retention policy (`[snapshots]`, `[history]`) now; see [`Self::purge_at`].
    ///
    /// # Errors
    /// SQLite errors (nothing is removed then).
    pub fn purge(&self) -> Result<crate::manage::PurgeReport> {
        crate::manage::purge(&self.engine, crate::clock::now_ms())
    }

    /// Applies the retention policy as of `now` (Unix ms): snapshots outside it and what only
    /// they used (extractions, units, chunks, relation sets, index generations), expired query
    /// runs, and the original bytes of revisions outside it (each with a tombstone).
    ///
    /// # Errors
    /// SQLite errors (nothing is removed then).
    pub fn purge_at(&self, now: i64) -> Result<crate::manage::PurgeReport> {
        crate::manage::purge(&self.engine, now)
    }

    /// Withdraws a source (`source:N`, its URI, or its path: absolute, relative to the current
    /// directory or to its root) from new snapshots; its history stays, older snapshots keep
    /// answering from it until retention releases them, and a later capture of the same path is
    /// skipped with a diagnostic.
    ///
    /// # Errors
    /// `E_NOT_FOUND`, `E_INVALID_ARGUMENT` (ambiguous path, empty reason); publication errors.
    pub fn withdraw(
        &self,
        selector: &str,
        reason: &str,
        on_progress: &(dyn Fn(Progress) + Sync),
    ) -> Result<crate::ingest::WithdrawReport> {
        let report = crate::ingest::withdraw(
            &self.engine,
            selector,
            reason,
            crate::ingest::Removal::Withdraw,
            on_progress,
        )?;
        if report.receipt.published {
            self.retain_after_job();
        }
        Ok(report)
    }

    /// Erases the retained original bytes of a revision (`revision:N`) or of every revision of a
    /// source, leaving a tombstone per revision (what, when, why); sources whose published
    /// revision is erased leave new snapshots.
    ///
    /// # Errors
    /// As [`Self::withdraw`]; I/O errors removing the files.
    pub fn delete_original(
        &self,
        selector: &str,
        reason: &str,
        on_progress: &(dyn Fn(Progress) + Sync),
    ) -> Result<crate::ingest::WithdrawReport> {
        let mut report = crate::ingest::withdraw(
            &self.engine,
            selector,
            reason,
            crate::ingest::Removal::Erase,
            on_progress,
        )?;
        // Before answering: the erased text leaves every snapshot, pinned ones included.
        report.erased_from_snapshots =
            crate::manage::erase_everywhere(&self.engine)?.erased_from_snapshots;
        self.retain_after_job();
        Ok(report)
    }

    /// Relabels a source's sensitivity (`source:N`, a URI or a path, as [`Self::withdraw`]), for
    /// every snapshot at once; a label above the ceiling erases its original bytes in the same
    /// call and publishes a snapshot without it.
    ///
    /// # Errors
    /// `E_INVALID_ARGUMENT` (unknown level, empty reason, ambiguous path), `E_NOT_FOUND`, and as
    /// [`Self::delete_original`].
    pub fn relabel(
        &self,
        selector: &str,
        level: &str,
        reason: &str,
        on_progress: &(dyn Fn(Progress) + Sync),
    ) -> Result<crate::ingest::RelabelReport> {
        let mut report =
            crate::ingest::relabel(&self.engine, selector, level, reason, on_progress)?;
        if let Some(erased) = report.erased.as_mut() {
            erased.erased_from_snapshots =
                crate::manage::erase_everywhere(&self.engine)?.erased_from_snapshots;
            self.retain_after_job();
        }
        Ok(report)
    }

    /// A visual asset (sha256 or a 12+ digit prefix) checked for description: `[descriptions]`
    /// permits each collection holding it, its bytes are retained and verified, and in a form a
    /// vision model reads. The provider call happens after this, outside the core.
    ///
    /// # Errors
    /// `E_INVALID_ARGUMENT`, `E_NOT_FOUND`, `E_CONFLICT`, `E_FORBIDDEN`, `E_CHECKSUM_MISMATCH`,
    /// `E_UNSUPPORTED_FORMAT` or `E_LIMIT_EXCEEDED`, each with what to do.
    pub fn description_subject(&self, selector: &str) -> Result<crate::manage::DescriptionSubject> {
        crate::manage::description_subject(&self.engine, selector)
    }

    /// Stores a provider's description of an asset, as derived evidence awaiting review.
    ///
    /// # Errors
    /// `E_NOT_FOUND` when the asset was erased meanwhile; `E_INVALID_ARGUMENT` for an empty text.
    pub fn record_description(
        &self,
        description: &crate::manage::NewDescription,
    ) -> Result<crate::manage::DescriptionEntry> {
        crate::manage::record_description(&self.engine, description)
    }

    /// Marks a description accepted, rejected or unreviewed, with an optional note.
    ///
    /// # Errors
    /// `E_INVALID_ARGUMENT` for another status; `E_NOT_FOUND` for no such description.
    pub fn review_description(
        &self,
        id: i64,
        status: &str,
        note: Option<&str>,
    ) -> Result<crate::manage::DescriptionEntry> {
        crate::manage::review_description(&self.engine, id, status, note)
    }

    /// Merges the current snapshot's lexical generation when the merge policy finds segments to
    /// merge (many small segments from one-file adds, or many deleted documents), off any add's
    /// critical path; then collects generations nothing references.
    ///
    /// # Errors
    /// `E_CORRUPT` when the merged generation's count differs (nothing switches); I/O and SQLite errors.
    pub fn compact(&self) -> Result<CompactReport> {
        self.engine.compact()
    }

    /// Runs one query through the profile's channels and records it in `query_runs`.
    ///
    /// # Errors
    /// `E_INVALID_ARGUMENT` for a bad request, `E_NOT_FOUND` for an unknown snapshot or collection.
    pub fn search(&self, request: &QueryRequest) -> Result<QueryResult> {
        crate::query::run(&self.engine, request)
    }

    /// A code symbol's definitions with their references, callers and callees.
    ///
    /// # Errors
    /// `E_INVALID_ARGUMENT` for an empty name, `E_NOT_FOUND` for an unknown snapshot.
    pub fn inspect_symbol(
        &self,
        name: &str,
        repo: Option<&str>,
        snapshot_id: Option<i64>,
    ) -> Result<SymbolReport> {
        crate::graph::symbol::inspect(&self.engine, name, repo, snapshot_id)
    }

    /// Counts, sizes and the current snapshot, with the corpus measured table by table.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn status(&self) -> Result<Status> {
        self.status_with(StatusOptions { tables: true })
    }

    /// Counts, sizes and the current snapshot, measuring what `options` ask for: without the
    /// per-table breakdown a status reads counts only (a few ms at any size).
    ///
    /// # Errors
    /// SQLite errors.
    pub fn status_with(&self, options: StatusOptions) -> Result<Status> {
        crate::manage::status(&self.engine, options)
    }

    /// The bytes of an artifact (an original, a derived text, a picture) by its sha256, from
    /// wherever the workspace keeps them, verified against the name.
    ///
    /// # Errors
    /// `E_INVALID_ARGUMENT` for a name that is not a sha256, `E_NOT_FOUND` when it is not (or no
    /// longer) kept, `E_CHECKSUM_MISMATCH` when its bytes changed, `E_STORE_UNAVAILABLE`.
    pub fn artifact(&self, sha256: &str) -> Result<Vec<u8>> {
        self.engine.artifacts().get(sha256)
    }

    /// Where the workspace keeps its artifacts (`…/artifacts/` or `s3://bucket/prefix`).
    #[must_use]
    pub fn artifact_location(&self) -> String {
        self.engine.artifacts().location()
    }

    /// Re-hashes every artifact and checks every snapshot against its index.
    ///
    /// # Errors
    /// SQLite errors (problems found are data in the report).
    pub fn verify(&self) -> Result<VerifyReport> {
        crate::manage::verify(&self.engine)
    }

    /// One page of a snapshot's sources.
    ///
    /// # Errors
    /// `E_NOT_FOUND` for an unknown collection; SQLite errors.
    pub fn list_sources(&self, query: &SourceQuery<'_>) -> Result<SourceList> {
        crate::manage::list_sources(&self.engine, query)
    }

    /// Structured records (requirements, decisions…) matching `query`.
    ///
    /// # Errors
    /// `E_INVALID_ARGUMENT` for a facet condition that does not read; SQLite errors.
    pub fn list_records(
        &self,
        query: &crate::manage::RecordQuery,
    ) -> Result<crate::manage::RecordList> {
        crate::manage::list_records(&self.engine, query)
    }

    /// The record `key` (of `kind`, when several kinds have one) with every unit that states it.
    ///
    /// # Errors
    /// `E_NOT_FOUND` for no such record.
    pub fn show_record(
        &self,
        key: &str,
        kind: Option<&str>,
    ) -> Result<crate::manage::RecordDetail> {
        crate::manage::show_record(&self.engine, key, kind)
    }

    /// A person's decision on a record: `accept` (reviewed: the verified profile counts it) or
    /// `reject`.
    ///
    /// # Errors
    /// `E_NOT_FOUND` for no such record; `E_INVALID_ARGUMENT` for another action.
    pub fn review_record(
        &self,
        key: &str,
        kind: Option<&str>,
        action: &str,
    ) -> Result<crate::manage::RecordDetail> {
        crate::manage::review_record(&self.engine, key, kind, action)
    }

    /// Relation assertions touching `key`, of `relation`, in `status` (all when none is given).
    ///
    /// # Errors
    /// SQLite errors.
    pub fn list_relations(
        &self,
        key: Option<&str>,
        relation: Option<&str>,
        status: Option<&str>,
    ) -> Result<Vec<crate::manage::RelationAssertion>> {
        crate::manage::list_relations(&self.engine, key, relation, status)
    }

    /// Declares (or proposes) a relation assertion between two named evidence objects, checked
    /// against its type: endpoint kinds, creation method, required support, cardinality.
    ///
    /// # Errors
    /// `E_INVALID_ARGUMENT`, `E_NOT_FOUND` or `E_CONFLICT` (cardinality), with what is wrong.
    pub fn declare_relation(
        &self,
        request: &crate::manage::DeclareRelation,
    ) -> Result<crate::manage::RelationAssertion> {
        crate::manage::declare_relation(&self.engine, request)
    }

    /// Reviews an assertion: `accept`, `reject` or `comment`, as `actor`.
    ///
    /// # Errors
    /// `E_NOT_FOUND`, `E_INVALID_ARGUMENT` or `E_CONFLICT` (accepting would break cardinality).
    pub fn review_relation(
        &self,
        id: i64,
        action: &str,
        actor: &str,
        note: Option<&str>,
    ) -> Result<crate::manage::RelationAssertion> {
        crate::manage::review_relation(&self.engine, id, action, actor, note)
    }

    /// Published snapshots, newest first.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn list_snapshots(&self) -> Result<SnapshotList> {
        crate::manage::list_snapshots(&self.engine)
    }

    /// A job's row, steps, receipt and live progress.
    ///
    /// # Errors
    /// `E_NOT_FOUND` for an unknown job.
    pub fn job_status(&self, job_id: i64) -> Result<JobStatus> {
        crate::manage::job_status(&self.engine, job_id)
    }

    /// Cancels a queued job before it runs: in one write transaction its status becomes
    /// `cancelled`, `finished_at` now and `error` "cancelled by the owner", followed by
    /// ": `reason`" when one is given. The job runner never takes it. Returns the job as
    /// [`Self::job_status`] shows it.
    ///
    /// # Errors
    /// `E_INVALID_ARGUMENT` for a reason over [`crate::manage::MAX_CANCEL_REASON`] characters;
    /// `E_NOT_FOUND` for an unknown job; `E_CONFLICT` for a running job (a job stops only at its
    /// safe points) or one that has already ended or been cancelled.
    pub fn cancel_job(&self, job_id: i64, reason: Option<&str>) -> Result<JobStatus> {
        crate::manage::cancel_job(&self.engine, job_id, reason)
    }

    /// The workspace's jobs, newest first (by id): at most `limit` (default 50, at most 500),
    /// only those with an id below `before` when given. Each is exactly what
    /// [`Self::job_status`] returns for it; `next_before` is the cursor of the next page.
    ///
    /// # Errors
    /// `E_INVALID_ARGUMENT` for a limit outside 1..=500.
    pub fn list_jobs(
        &self,
        limit: Option<u32>,
        before: Option<i64>,
    ) -> Result<crate::manage::JobList> {
        crate::manage::list_jobs(&self.engine, limit, before)
    }

    /// The recorded query runs, newest first (by `created_at`, then id): at most `limit`
    /// (default 50, at most 500), only those after the run `before` in that order when given;
    /// `next_before` is the cursor of the next page.
    ///
    /// # Errors
    /// `E_INVALID_ARGUMENT` for a limit outside 1..=500; `E_NOT_FOUND` for a `before` run that
    /// is not recorded (or expired).
    pub fn list_runs(
        &self,
        limit: Option<u32>,
        before: Option<&str>,
    ) -> Result<crate::manage::RunList> {
        crate::manage::list_runs(&self.engine, limit, before)
    }

    /// One object with its provenance: `source:N`, `revision:N`, `unit:N`, `chunk:N`,
    /// `snapshot:N`, `job:N` or a segment id.
    ///
    /// # Errors
    /// `E_INVALID_ARGUMENT` for an unparseable id, `E_NOT_FOUND` for a missing object.
    pub fn inspect(&self, id: &str) -> Result<Evidence> {
        crate::manage::inspect(&self.engine, id)
    }
}
