//! The shared state of an open workspace: its directory and configuration, the owner's lock, the
//! connections (one writer, pooled readers), the artifact store, and the caches a query reads
//! (open lexical generations, snapshot facts). Every pipeline (`ingest`, `query`, `graph`,
//! `manage`) takes an `&Engine`; [`crate::Workspace`] is the public front over it. Keeping the
//! state here, below the pipelines, is what keeps the module graph acyclic.

mod canonical;
mod lock;
mod shared;

pub(crate) use canonical::{Canonical, Writer};

pub use lock::WorkspaceLock;

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use crate::store::tx::Tx;

use crate::artifact::ArtifactStore;
use crate::config::{Config, Pack};
use crate::error::{Error, Result};
use crate::job::ProgressBoard;
use crate::lexical::port::{LexicalGenerations, LexicalSearch, TantivyGenerations};
use crate::store::query_log::QueryLog;
use crate::store::vectors::UserCache;
use crate::store::{self, migrate};
use crate::trust::Trust;
use crate::vector::{
    Budget, Embedder, LocalEmbedder, Providers, Reranker, UsearchGenerations, VectorGenerations,
    VectorSearch, VisualEmbedder,
};

/// The text channel's embedder as the workspace configures it: `None` without `[embeddings]`.
type TextEmbedder = Option<Arc<dyn Embedder>>;

/// The engine version recorded in new workspaces.
pub const ENGINE_VERSION: &str = env!("CARGO_PKG_VERSION");

/// An open workspace's state. Writes serialise on one connection.
pub(crate) struct Engine {
    dir: PathBuf,
    config: Config,
    pack: Pack,
    patterns: Vec<crate::unit::IdentifierRule>,
    artifacts: ArtifactStore,
    canonical: Canonical,
    lexical_generations: Arc<dyn LexicalGenerations>,
    generations: Mutex<HashMap<String, Arc<dyn LexicalSearch>>>,
    vector_indexes: Mutex<HashMap<String, Arc<dyn VectorSearch>>>,
    vector_generations: Arc<dyn VectorGenerations>,
    // Resolved on first use, so that commands that never embed (status, manage) do not need the
    // model; an embedder handed in by the binding (a provider the TypeScript side calls) wins.
    embedder: OnceLock<std::result::Result<TextEmbedder, String>>,
    embedder_override: Option<Arc<dyn Embedder>>,
    pdf_reader: Option<Arc<dyn crate::parse::document::PdfReader>>,
    reranker: Option<Arc<dyn Reranker>>,
    visual: Option<Arc<dyn VisualEmbedder>>,
    user_cache: Option<UserCache>,
    query_log: QueryLog,
    progress: ProgressBoard,
    // One process owns the workspace, so the pointer changes only through this handle and a
    // snapshot's generation and members never change: both are cached, and dropped on publish/GC.
    current: Mutex<Option<Option<i64>>>,
    snapshot_meta: Mutex<HashMap<i64, SnapshotMeta>>,
    // The newest summary tree as loaded for queries, by (tree id, built at): an id can come back
    // after every tree was deleted, its build time does not. Its type belongs to a module above
    // this one (`summary`), so it is held as `Any` and downcast there.
    summary_tree: Mutex<Option<((i64, i64), Derived)>>,
    // On a shared store: one build at a time of another daemon's generations (`shared.rs`).
    materializing: Mutex<()>,
    _lock: WorkspaceLock,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("dir", &self.dir)
            .finish_non_exhaustive()
    }
}

/// A derived structure a higher module loads and the engine holds for it (the summary tree).
pub(crate) type Derived = Arc<dyn std::any::Any + Send + Sync>;

/// What a query needs to know about a snapshot, cached per snapshot id.
#[derive(Debug, Clone)]
pub(crate) struct SnapshotMeta {
    pub generation: String,
    pub members: i64,
    pub text: Option<crate::snapshot::TextGeneration>,
}

/// The canonical directory of an existing workspace (`E_NOT_FOUND` without a workspace.toml).
pub(crate) fn resolve(dir: &Path) -> Result<PathBuf> {
    let dir = fs::canonicalize(dir).map_err(|_| Error::NotFound {
        what: "workspace",
        id: dir.display().to_string(),
    })?;
    if !dir.join("workspace.toml").is_file() {
        return Err(Error::NotFound {
            what: "workspace (no workspace.toml; run `tychora init`)",
            id: dir.display().to_string(),
        });
    }
    Ok(dir)
}

/// The pack's identifier patterns as the engine runs them (case-insensitive).
fn compile_identifier_rules(
    patterns: &[crate::config::IdentifierPattern],
) -> Result<Vec<crate::unit::IdentifierRule>> {
    patterns
        .iter()
        .map(|p| {
            crate::config::identifier_regex(&p.regex)
                .map(|regex| crate::unit::IdentifierRule {
                    name: p.name.clone(),
                    regex,
                    canonical: p.canonical.clone(),
                })
                .map_err(|e| {
                    Error::InvalidArgument(format!("identifier pattern {:?}: {e}", p.name))
                })
        })
        .collect()
}

impl Engine {
    /// Opens an existing workspace, taking its lock, and collects unreferenced generations. Never
    /// migrates.
    ///
    /// # Errors
    /// `E_NOT_FOUND` (no workspace), `E_LOCKED`, `E_MIGRATION_REQUIRED`, `E_CHECKSUM_MISMATCH`.
    pub(crate) fn open(
        dir: &Path,
        providers: Providers,
        pdf_reader: Option<Arc<dyn crate::parse::document::PdfReader>>,
    ) -> Result<Self> {
        let dir = resolve(dir)?;
        let config = Config::load(&dir.join("workspace.toml"))?;
        let pack = config.pack()?;
        // Compiled beside the rest of the open (the lock, SQLite, the query log): the built-in
        // patterns take ~4 ms, the longest step of a CLI search's open (issue 11).
        let compiling = {
            let patterns = pack.identifiers.patterns.clone();
            std::thread::spawn(move || compile_identifier_rules(&patterns))
        };
        let lock = WorkspaceLock::acquire(&dir)?;
        let (canonical, query_log) = match &config.store {
            None => {
                let db = dir.join("corpus.sqlite3");
                let conn = store::connect(&db)?;
                migrate::check(&conn, &dir)?;
                // We own the lock, so a job still marked running belongs to a process that died.
                store::jobs::interrupt_running(&conn)?;
                (Canonical::sqlite(&db, conn), QueryLog::start(&db)?)
            }
            Some(service) => open_service(service)?,
        };
        let user_cache = match config
            .embeddings
            .as_ref()
            .and_then(|e| e.cache_dir.as_deref())
        {
            Some("") => None,
            Some(path) => Some(UserCache::new(Path::new(path))),
            None => UserCache::default_dir().map(|d| UserCache::new(&d)),
        };
        let patterns = compiling
            .join()
            .map_err(|_| Error::Internal("compiling identifier patterns panicked".into()))??;
        let owner = canonical
            .read(|tx| store::workspaces::identity(tx))?
            .unwrap_or_default();
        let (lexical_store, vector_store) = index_generations(&dir, &config, &pack, &owner)?;
        let engine = Self {
            vector_indexes: Mutex::new(HashMap::new()),
            vector_generations: vector_store,
            embedder: OnceLock::new(),
            embedder_override: providers.embedder,
            pdf_reader,
            reranker: if config.rerank.is_some() {
                providers.reranker
            } else {
                None
            },
            visual: if config.visual.is_some() {
                providers.visual
            } else {
                None
            },
            user_cache,
            query_log,
            progress: ProgressBoard::default(),
            current: Mutex::new(None),
            snapshot_meta: Mutex::new(HashMap::new()),
            summary_tree: Mutex::new(None),
            artifacts: artifact_store(&dir, &config)?,
            dir,
            config,
            pack,
            patterns,
            canonical,
            lexical_generations: lexical_store,
            generations: Mutex::new(HashMap::new()),
            materializing: Mutex::new(()),
            _lock: lock,
        };
        match engine.collect_garbage() {
            // A search cluster that is down does not keep the workspace closed: status, listings
            // and the store answer, and the next collection removes what this one could not.
            Err(e) if e.code() == crate::ErrorCode::StoreUnavailable => {
                log::warn!("garbage collection skipped: {e}");
            }
            other => {
                other?;
            }
        }
        Ok(engine)
    }

    /// The workspace directory (canonical).
    #[must_use]
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// The parsed `workspace.toml`.
    #[must_use]
    pub(crate) fn config(&self) -> &Config {
        &self.config
    }

    /// The resolved pack.
    #[must_use]
    pub(crate) fn pack(&self) -> &Pack {
        &self.pack
    }

    /// The latest progress of each job running in this process.
    pub(crate) fn progress(&self) -> &ProgressBoard {
        &self.progress
    }

    /// The current snapshot id, from the cache when this handle already read it.
    pub(crate) fn cached_current(&self, conn: &dyn Tx) -> Result<Option<i64>> {
        let mut cache = self
            .current
            .lock()
            .map_err(|_| Error::Internal("snapshot cache poisoned".into()))?;
        if let Some(current) = *cache {
            return Ok(current);
        }
        if self.canonical.postgres_store().is_some() {
            // Other daemons publish too: the pointer is read every time (one indexed row).
            return crate::snapshot::current(conn);
        }
        let current = crate::snapshot::current(conn)?;
        *cache = Some(current);
        Ok(current)
    }

    /// Generation and member count of a snapshot (`E_NOT_FOUND` when it or its index is gone).
    pub(crate) fn snapshot_meta(&self, conn: &dyn Tx, snapshot_id: i64) -> Result<SnapshotMeta> {
        if let Some(meta) = self
            .snapshot_meta
            .lock()
            .ok()
            .and_then(|m| m.get(&snapshot_id).cloned())
        {
            return Ok(meta);
        }
        let generation = crate::snapshot::lexical_generation(conn, snapshot_id)?;
        let members = store::snapshots::member_count(conn, snapshot_id)?;
        let meta = SnapshotMeta {
            generation,
            members,
            text: crate::snapshot::text_generation(conn, snapshot_id)?,
        };
        self.materialize(conn, snapshot_id, &meta)?;
        if let Ok(mut cache) = self.snapshot_meta.lock() {
            cache.insert(snapshot_id, meta.clone());
        }
        Ok(meta)
    }

    /// The loaded summary tree cached for `key` (tree id, built at), if it is the one held.
    pub(crate) fn cached_summary_tree(&self, key: (i64, i64)) -> Option<Derived> {
        self.summary_tree.lock().ok().and_then(|held| {
            held.as_ref()
                .filter(|(k, _)| *k == key)
                .map(|(_, t)| Arc::clone(t))
        })
    }

    /// Holds a loaded summary tree (replacing the one held).
    pub(crate) fn cache_summary_tree(&self, key: (i64, i64), tree: Derived) {
        if let Ok(mut held) = self.summary_tree.lock() {
            *held = Some((key, tree));
        }
    }

    /// Forgets cached snapshot facts (after a publication or garbage collection).
    pub(crate) fn invalidate_snapshot_cache(&self) {
        if let Ok(mut current) = self.current.lock() {
            *current = None;
        }
        if let Ok(mut meta) = self.snapshot_meta.lock() {
            meta.clear();
        }
    }

    pub(crate) fn query_log(&self) -> &QueryLog {
        &self.query_log
    }

    pub(crate) fn patterns(&self) -> &[crate::unit::IdentifierRule] {
        &self.patterns
    }

    pub(crate) fn artifacts(&self) -> &ArtifactStore {
        &self.artifacts
    }

    /// The writer: the one connection this process writes through (a `&dyn Session`).
    pub(crate) fn writer(&self) -> Result<Writer<'_>> {
        self.canonical.writer()
    }

    /// Where the canonical rows live.
    pub(crate) fn canonical(&self) -> &Canonical {
        &self.canonical
    }

    /// Runs `f` on a read connection (WAL readers run concurrently with the writer), through
    /// the store's transaction interface: what reads the corpus names no adapter.
    pub(crate) fn with_reader<T>(&self, f: impl FnOnce(&dyn Tx) -> Result<T>) -> Result<T> {
        self.canonical.read(f)
    }

    /// The folder lexical generations live in.
    pub(crate) fn generations_dir(&self) -> PathBuf {
        self.dir.join("indexes").join("lexical")
    }

    /// The directory of a lexical generation.
    pub(crate) fn generation_dir(&self, generation: &str) -> PathBuf {
        self.generations_dir().join(generation)
    }

    /// An opened lexical generation, cached; readers holding the `Arc` keep it open during GC.
    pub(crate) fn lexical(&self, generation: &str) -> Result<Arc<dyn LexicalSearch>> {
        let mut cache = self
            .generations
            .lock()
            .map_err(|_| Error::Internal("generation cache poisoned".into()))?;
        if let Some(index) = cache.get(generation) {
            return Ok(Arc::clone(index));
        }
        let index = self.lexical_generations.open(generation)?;
        cache.insert(generation.to_string(), Arc::clone(&index));
        Ok(index)
    }

    /// Where lexical generations are written and read: the workspace's folder, or the cluster
    /// `[search]` names.
    pub(crate) fn lexical_store(&self) -> &dyn LexicalGenerations {
        &*self.lexical_generations
    }

    /// The text channel's embedder (`None` when the workspace has no `[embeddings]`).
    ///
    /// # Errors
    /// The local model's directory is missing or holds an unsupported model.
    pub(crate) fn embedder(&self) -> Result<TextEmbedder> {
        self.embedder
            .get_or_init(|| self.make_embedder().map_err(|e| e.to_string()))
            .clone()
            .map_err(Error::InvalidArgument)
    }

    fn make_embedder(&self) -> Result<TextEmbedder> {
        let Some(settings) = &self.config.embeddings else {
            return Ok(None);
        };
        if let Some(embedder) = &self.embedder_override {
            return Ok(Some(Arc::clone(embedder)));
        }
        let representation = settings
            .representation
            .clone()
            .unwrap_or_else(|| self.pack.text.representation.clone());
        match settings.provider.as_str() {
            "local" => {
                let dir = match &settings.model_dir {
                    Some(d) => PathBuf::from(d),
                    None => UserCache::default_dir()
                        .map(|c| c.join("models").join("all-MiniLM-L6-v2"))
                        .ok_or_else(|| {
                            Error::InvalidArgument(
                                "[embeddings] provider = \"local\" needs model_dir (no user cache directory here)".into(),
                            )
                        })?,
                };
                let embedder = LocalEmbedder::open(
                    &dir,
                    &representation,
                    &settings.quantization,
                    settings.long_inputs,
                )
                .map_err(|e| {
                    Error::InvalidArgument(format!(
                        "[embeddings] local model: {e} (fetch all-MiniLM-L6-v2 with `node scripts/fetch-model.mjs`, or set model_dir)"
                    ))
                })?;
                Ok(Some(Arc::new(embedder)))
            }
            other => Err(Error::InvalidArgument(format!(
                "[embeddings] provider {other:?} is called from the TypeScript package (tychora CLI, server or library); the core alone runs only \"local\""
            ))),
        }
    }

    /// The PDF reader the binding handed in, if any.
    pub(crate) fn pdf_reader(&self) -> Option<&dyn crate::parse::document::PdfReader> {
        self.pdf_reader.as_deref()
    }

    /// The multimodal embedder, when `[visual]` is configured and the caller provided one.
    pub(crate) fn visual(&self) -> Option<&Arc<dyn VisualEmbedder>> {
        self.visual.as_ref()
    }

    /// The reranker, when `[rerank]` is configured and the caller provided one.
    pub(crate) fn reranker(&self) -> Option<&Arc<dyn Reranker>> {
        self.reranker.as_ref()
    }

    /// The user-level vector cache, unless turned off.
    pub(crate) fn user_cache(&self) -> Option<&UserCache> {
        self.user_cache.as_ref()
    }

    /// The caps on tokens embedded.
    pub(crate) fn embed_budget(&self) -> Budget {
        self.config
            .embeddings
            .as_ref()
            .map_or_else(Budget::default, |e| Budget {
                per_job: e.max_embed_tokens_per_job,
                per_month: e.max_embed_tokens_per_month,
            })
    }

    /// The folder vector generations live in.
    pub(crate) fn text_dir(&self) -> PathBuf {
        self.dir.join("indexes").join("text")
    }

    /// An opened vector generation, cached and verified against its recorded sha256 on first open.
    pub(crate) fn vector_index(
        &self,
        generation: &crate::snapshot::TextGeneration,
    ) -> Result<Arc<dyn VectorSearch>> {
        let mut cache = self
            .vector_indexes
            .lock()
            .map_err(|_| Error::Internal("vector index cache poisoned".into()))?;
        if let Some(index) = cache.get(&generation.generation) {
            return Ok(Arc::clone(index));
        }
        let index = self
            .vector_generations
            .open(&generation.generation, &self.local_text_sha(generation))?;
        cache.insert(generation.generation.clone(), Arc::clone(&index));
        Ok(index)
    }

    /// Where vector generations are written and opened (the workspace's folder, or `[search]`'s
    /// cluster).
    pub(crate) fn vector_store(&self) -> &dyn VectorGenerations {
        &*self.vector_generations
    }

    /// Forgets every opened vector generation (after a rebuild).
    pub(crate) fn forget_vector_indexes(&self) {
        if let Ok(mut cache) = self.vector_indexes.lock() {
            cache.clear();
        }
    }

    /// The current published snapshot id, if any.
    ///
    /// # Errors
    /// SQLite errors.
    pub(crate) fn current_snapshot(&self) -> Result<Option<i64>> {
        self.with_reader(|conn| store::snapshots::current(conn))
    }

    /// Compacts the current snapshot's lexical generation (see `snapshot::compact`) and collects what it replaced.
    pub(crate) fn compact(&self) -> Result<crate::snapshot::CompactReport> {
        let conn = self.writer()?;
        let started = std::time::Instant::now();
        let mut report = crate::snapshot::compact(&*conn, self.lexical_store())?;
        report.text_folded_to = crate::snapshot::fold_text(&*conn, &self.text_dir())?;
        report.duration_ms = started.elapsed().as_secs_f64() * 1000.0;
        if report.to_generation.is_some() || report.text_folded_to.is_some() {
            self.collect_garbage_with(&*conn)?;
        }
        Ok(report)
    }

    /// Removes index generations that no snapshot row references and no reader holds.
    ///
    /// Which snapshots stay is retention's decision alone (`manage::retain` releases the rows,
    /// and their index links with them, in one transaction); reading the policy here as well
    /// removed the files of a snapshot whose row retention had not yet released (a process
    /// killed between the two, or an open with one snapshot over the window), and that snapshot
    /// then failed verify and answered nothing.
    ///
    /// # Errors
    /// SQLite errors. File removal failures are logged, not fatal.
    pub(crate) fn collect_garbage(&self) -> Result<usize> {
        let conn = self.writer()?;
        self.collect_garbage_with(&*conn)
    }

    /// [`Self::collect_garbage`] on a writer connection the caller already holds.
    pub(crate) fn collect_garbage_with(&self, conn: &dyn Tx) -> Result<usize> {
        self.invalidate_snapshot_cache();
        let keep = store::snapshots::referenced_generations(conn)?;
        let held_vectors = in_use(&self.vector_indexes);
        let mut removed = self
            .vector_generations
            .collect(&keep, &held_vectors, &mut |name| {
                if let Ok(mut cache) = self.vector_indexes.lock() {
                    cache.remove(name);
                }
                store::snapshots::retire_generation(conn, name)
            })?;
        removed += sweep(
            conn,
            &self.local_sha_dir(),
            &keep,
            &self.vector_indexes,
            |p: &Path| fs::remove_file(p),
        )?;
        let held = in_use(&self.generations);
        removed += self
            .lexical_generations
            .collect(&keep, &held, &mut |name| {
                if let Ok(mut cache) = self.generations.lock() {
                    cache.remove(name);
                }
                store::snapshots::retire_generation(conn, name)
            })?;
        Ok(removed)
    }

    /// The collection a capture of `trust` writes into, created with that trust when new.
    ///
    /// # Errors
    /// `E_FORBIDDEN` when the collection exists with another trust: approved knowledge is written
    /// only by `migrate apply`, and a capture is never dressed up as approved.
    pub(crate) fn collection_for(conn: &dyn Tx, name: &str, trust: Trust) -> Result<i64> {
        match store::workspaces::collection(conn, name)? {
            Some((id, held)) if held == trust.as_str() => Ok(id),
            Some((_, held)) => Err(Error::Forbidden(format!(
                "collection {name:?} holds {held} evidence; a capture of {} evidence cannot write into it{}",
                trust.as_str(),
                if held == "captured_source" {
                    ""
                } else {
                    " (only `tychora migrate apply` writes curated knowledge)"
                }
            ))),
            None => store::workspaces::create_collection(
                conn,
                name,
                Some(trust),
                crate::clock::now_ms(),
            ),
        }
    }

    /// Looks up a collection id by name, creating it when `create` is set.
    pub(crate) fn collection_id(conn: &dyn Tx, name: &str, create: bool) -> Result<i64> {
        if let Some((id, _)) = store::workspaces::collection(conn, name)? {
            return Ok(id);
        }
        if !create {
            return Err(Error::NotFound {
                what: "collection",
                id: name.to_string(),
            });
        }
        store::workspaces::create_collection(conn, name, None, crate::clock::now_ms())
    }
}

/// Generations of `cache` some query still holds (an `Arc` besides the cache's own).
fn in_use<T: ?Sized>(cache: &Mutex<HashMap<String, Arc<T>>>) -> Vec<String> {
    cache
        .lock()
        .map(|cache| {
            cache
                .iter()
                .filter(|(_, idx)| Arc::strong_count(idx) > 1)
                .map(|(g, _)| g.clone())
                .collect()
        })
        .unwrap_or_default()
}

/// Removes every generation in `dir` that is neither kept nor held by a query, drops it from `cache` and
/// marks its batch retired; returns how many were removed. A file that cannot be removed is
/// logged and tried again at the next collection.
fn sweep<T: ?Sized>(
    conn: &dyn Tx,
    dir: &Path,
    keep: &[String],
    cache: &Mutex<HashMap<String, Arc<T>>>,
    remove: fn(&Path) -> std::io::Result<()>,
) -> Result<usize> {
    let held = in_use(cache);
    let Ok(entries) = fs::read_dir(dir) else {
        return Ok(0);
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if keep.contains(&name) || held.contains(&name) {
            continue;
        }
        if let Ok(mut cache) = cache.lock() {
            cache.remove(&name);
        }
        match remove(&entry.path()) {
            Ok(()) => removed += 1,
            Err(e) => log::warn!(
                "cannot remove stale generation {}: {e}",
                entry.path().display()
            ),
        }
        store::snapshots::retire_generation(conn, &name)?;
    }
    Ok(removed)
}

/// The artifact store `config` names for the workspace at `dir`: its `artifacts/` folder, or the
/// bucket of `[artifacts]`.
///
/// # Errors
/// `E_INVALID_ARGUMENT` for an unusable `[artifacts]` setting.
/// The service store `[store]` names, with the query log writing to it off the query path.
/// Opening never migrates (`tychora manage migrate` does); a database with no workspace row yet
/// (the first daemon on it) gets one. Jobs other daemons run are not this process's to
/// interrupt: the queue's leases end a dead worker's.
fn open_service(service: &crate::config::StoreConfig) -> Result<(Canonical, QueryLog)> {
    use crate::store::postgres::PgStore;
    if PgStore::names_a_password(&service.url) {
        return Err(Error::InvalidArgument(
            "[store] url names a password: remove it, and set PGPASSWORD (or a ~/.pgpass entry) in the daemon's environment".into(),
        ));
    }
    let pg = PgStore::open(&service.url, service.connections)?;
    pg.transaction(|tx| {
        store::workspaces::ensure(tx, "service", ENGINE_VERSION, crate::clock::now_ms())
    })?;
    let log = QueryLog::start_on(PgStore::open(&service.url, 1)?)?;
    Ok((Canonical::postgres(pg), log))
}

/// Where the lexical and vector generations of the workspace at `dir` live: its `indexes/`
/// folder, or the OpenSearch cluster of `[search]`.
///
/// # Errors
/// `E_INVALID_ARGUMENT` for an unusable `[search]` setting.
fn index_generations(
    dir: &Path,
    config: &Config,
    pack: &Pack,
    owner: &str,
) -> Result<(Arc<dyn LexicalGenerations>, Arc<dyn VectorGenerations>)> {
    Ok(match &config.search {
        None => (
            Arc::new(TantivyGenerations::new(
                dir.join("indexes").join("lexical"),
                pack.lexical.clone(),
            )),
            Arc::new(UsearchGenerations::new(dir.join("indexes").join("text"))),
        ),
        Some(search) => {
            let (lexical, vectors) = crate::opensearch::generations(search, &pack.lexical, owner)?;
            (Arc::new(lexical), Arc::new(vectors))
        }
    })
}

pub(crate) fn artifact_store(dir: &std::path::Path, config: &Config) -> Result<ArtifactStore> {
    Ok(match &config.artifacts {
        None => ArtifactStore::new(dir.join("artifacts")),
        Some(bucket) => ArtifactStore::with(std::sync::Arc::new(
            crate::artifact::S3Artifacts::open(&crate::artifact::S3Location {
                url: bucket.url.clone(),
                endpoint: bucket.endpoint.clone(),
                region: bucket.region.clone(),
                allow_http: bucket.allow_http,
            })?,
        )),
    })
}
