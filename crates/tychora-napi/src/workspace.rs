//! `NativeWorkspace`: a closable handle over `tychora_core::Workspace`.
//!
//! Queries and other bounded work run as `AsyncTask`s on the libuv pool. `add` (multi-second
//! jobs) runs on its own thread and settles a promise through a `JsDeferred`, so long jobs never
//! occupy the libuv pool that Node's `fs` and `zlib` share.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use napi::bindgen_prelude::*;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;
use tychora_core::Workspace;
use tychora_core::ingest::{AddRequest, Requester};
use tychora_core::query::QueryRequest;

use crate::error::{from_json, from_panic, guarded, to_json, to_napi};

type ProgressFn = ThreadsafeFunction<String, (), String, Status, false>;

/// The kinds of bounded work a `WorkTask` does on the libuv pool.
enum Work {
    Open(PathBuf),
    Init(PathBuf, String),
    Migrate(PathBuf),
    Search(Arc<Workspace>, String),
    SearchBatch(Arc<Workspace>, String),
    Inspect(Arc<Workspace>, String),
    Status(Arc<Workspace>),
    Verify(Arc<Workspace>),
    EnqueueAdd(Arc<Workspace>, String, Requester),
    QueuedJobs(Arc<Workspace>),
    JobStatus(Arc<Workspace>, i64),
    ListSources(Arc<Workspace>, String),
    ListSnapshots(Arc<Workspace>),
    InspectSymbol(Arc<Workspace>, String),
    AnalyzeTree(PathBuf),
    AnalyzeSources(String, usize, bool),
}

/// Options of `inspectSymbol`.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct InspectSymbolOptions {
    name: String,
    repo: Option<String>,
    snapshot_id: Option<i64>,
}

/// Options of `listSources`.
#[derive(serde::Deserialize)]
struct ListSourcesOptions {
    collection: Option<String>,
    snapshot_id: Option<i64>,
    limit: Option<usize>,
    offset: Option<usize>,
}

/// What a `WorkTask` produced.
pub enum Done {
    /// An opened workspace.
    Opened(Arc<Workspace>),
    /// A JSON result.
    Json(String),
}

/// One bounded piece of work, computed off the JS thread.
pub struct WorkTask {
    work: Option<Work>,
}

impl Task for WorkTask {
    type Output = Done;
    type JsValue = Either<NativeWorkspace, String>;

    fn compute(&mut self) -> Result<Done> {
        let work = self
            .work
            .take()
            .ok_or_else(|| Error::from_reason("[E_INTERNAL] task computed twice"))?;
        guarded(|| {
            Ok(match work {
                Work::Open(dir) => Done::Opened(Arc::new(Workspace::open(&dir)?)),
                Work::Init(dir, profile) => {
                    Done::Json(to_json(&Workspace::init_with_profile(&dir, &profile)?)?)
                }
                Work::Migrate(dir) => Done::Json(to_json(&Workspace::migrate(&dir)?)?),
                Work::Search(ws, request) => {
                    Done::Json(to_json(
                        &ws.search(&from_json::<QueryRequest>(&request, "query request")?)?,
                    )?)
                }
                Work::SearchBatch(ws, requests) => {
                    let requests: Vec<QueryRequest> = from_json(&requests, "query requests")?;
                    let results = requests
                        .iter()
                        .map(|r| ws.search(r))
                        .collect::<tychora_core::Result<Vec<_>>>()?;
                    Done::Json(to_json(&results)?)
                }
                Work::Inspect(ws, id) => Done::Json(to_json(&ws.inspect(&id)?)?),
                Work::InspectSymbol(ws, options) => {
                    let o: InspectSymbolOptions = from_json(&options, "inspect symbol request")?;
                    Done::Json(to_json(&ws.inspect_symbol(
                        &o.name,
                        o.repo.as_deref(),
                        o.snapshot_id,
                    )?)?)
                }
                Work::Status(ws) => Done::Json(to_json(&ws.status()?)?),
                Work::Verify(ws) => Done::Json(to_json(&ws.verify()?)?),
                Work::EnqueueAdd(ws, request, requester) => Done::Json(to_json(
                    &ws.enqueue_add(&from_json(&request, "add request")?, requester)?,
                )?),
                Work::QueuedJobs(ws) => Done::Json(to_json(&ws.queued_jobs()?)?),
                Work::JobStatus(ws, id) => Done::Json(to_json(&ws.job_status(id)?)?),
                Work::ListSources(ws, options) => {
                    let o: ListSourcesOptions = from_json(&options, "list options")?;
                    Done::Json(to_json(&ws.list_sources(
                        o.collection.as_deref(),
                        o.snapshot_id,
                        o.limit.unwrap_or(100).min(1000),
                        o.offset.unwrap_or(0),
                    )?)?)
                }
                Work::ListSnapshots(ws) => Done::Json(to_json(&ws.list_snapshots()?)?),
                Work::AnalyzeTree(root) => Done::Json(to_json(
                    &tychora_core::code::report::analyze_tree(&root, 16 * 1024 * 1024),
                )?),
                Work::AnalyzeSources(sources, threads, parse_only) => {
                    use tychora_core::code::report::{Work as CodeWork, analyze_sources};
                    let sources: Vec<(String, String)> = from_json(&sources, "sources")?;
                    let work = if parse_only {
                        CodeWork::Parse
                    } else {
                        CodeWork::Extract
                    };
                    Done::Json(to_json(&analyze_sources(&sources, threads, work))?)
                }
            })
        })
    }

    fn resolve(&mut self, _env: Env, output: Done) -> Result<Self::JsValue> {
        Ok(match output {
            Done::Opened(ws) => Either::A(NativeWorkspace {
                inner: Mutex::new(Some(ws)),
            }),
            Done::Json(json) => Either::B(json),
        })
    }
}

fn task(work: Work, signal: Option<AbortSignal>) -> AsyncTask<WorkTask> {
    let task = WorkTask { work: Some(work) };
    match signal {
        Some(signal) => AsyncTask::with_signal(task, signal),
        None => AsyncTask::new(task),
    }
}

/// Analyzes every code file under `root` (walked as `add` walks) and resolves its references,
/// without a workspace. Resolves to a JSON report (definitions and reference outcomes), for the
/// resolver agreement benchmark.
#[napi(catch_unwind, ts_return_type = "Promise<string>")]
pub fn analyze_code_tree(root: String) -> AsyncTask<WorkTask> {
    task(Work::AnalyzeTree(PathBuf::from(root)), None)
}

/// Parses and extracts `sources` (JSON `[[path, source], …]`) on `threads` threads and resolves
/// to JSON parse statistics (seconds spent parsing and extracting), for the throughput benchmark.
/// With `parseOnly`, trees are parsed and dropped (`units` then counts syntax nodes).
#[napi(catch_unwind, ts_return_type = "Promise<string>")]
pub fn analyze_code_sources(
    sources: String,
    threads: u32,
    parse_only: Option<bool>,
) -> AsyncTask<WorkTask> {
    task(
        Work::AnalyzeSources(sources, threads as usize, parse_only.unwrap_or(false)),
        None,
    )
}

/// Creates a workspace in `dir` with a default profile (`documents` unless given). Resolves to the init report as JSON.
#[napi(catch_unwind, ts_return_type = "Promise<string>")]
pub fn init_workspace(dir: String, profile: Option<String>) -> AsyncTask<WorkTask> {
    task(
        Work::Init(
            PathBuf::from(dir),
            profile.unwrap_or_else(|| "documents".into()),
        ),
        None,
    )
}

/// Opens a workspace (taking its lock). Resolves to a `NativeWorkspace`.
#[napi(catch_unwind, ts_return_type = "Promise<NativeWorkspace>")]
pub fn open_workspace(dir: String) -> AsyncTask<WorkTask> {
    task(Work::Open(PathBuf::from(dir)), None)
}

/// The pid recorded by the process that holds the workspace's lock, or `null` when no process
/// holds it (then a `runtime/daemon.json` left behind is stale). A non-blocking probe.
#[napi(catch_unwind)]
pub fn workspace_lock_owner(dir: String) -> Result<Option<String>> {
    tychora_core::workspace::WorkspaceLock::owner(std::path::Path::new(&dir))
        .map_err(|e| to_napi(&e))
}

/// Applies pending schema migrations. Resolves to the applied versions as JSON.
#[napi(catch_unwind, ts_return_type = "Promise<string>")]
pub fn migrate_workspace(dir: String) -> AsyncTask<WorkTask> {
    task(Work::Migrate(PathBuf::from(dir)), None)
}

/// A handle over an open workspace. `close()` is idempotent; afterwards every method fails with
/// `E_CLOSED`.
#[napi]
pub struct NativeWorkspace {
    inner: Mutex<Option<Arc<Workspace>>>,
}

#[napi]
impl NativeWorkspace {
    fn inner_ref(&self) -> Result<Arc<Workspace>> {
        self.inner
            .lock()
            .map_err(|_| Error::from_reason("[E_INTERNAL] workspace handle poisoned"))?
            .clone()
            .ok_or_else(|| Error::from_reason("[E_CLOSED] workspace is closed"))
    }

    /// The canonical workspace directory.
    #[napi(getter, catch_unwind)]
    pub fn dir(&self) -> Result<String> {
        Ok(self.inner_ref()?.dir().display().to_string())
    }

    /// The workspace's name from `workspace.toml` (the daemon's project name).
    #[napi(getter, catch_unwind)]
    pub fn name(&self) -> Result<String> {
        Ok(self.inner_ref()?.config().name.clone())
    }

    /// Whether MCP clients may add sources (`[agents] allow_add_source` in workspace.toml).
    #[napi(getter, catch_unwind)]
    pub fn allow_agent_add(&self) -> Result<bool> {
        Ok(self.inner_ref()?.config().agents.allow_add_source)
    }

    /// Runs one query (`QueryRequest` JSON). Resolves to `QueryResult` JSON.
    #[napi(catch_unwind, ts_return_type = "Promise<string>")]
    pub fn search(
        &self,
        request_json: String,
        signal: Option<AbortSignal>,
    ) -> Result<AsyncTask<WorkTask>> {
        Ok(task(Work::Search(self.inner_ref()?, request_json), signal))
    }

    /// Runs a batch of queries (a JSON array) in one crossing. Resolves to a JSON array of results.
    #[napi(catch_unwind, ts_return_type = "Promise<string>")]
    pub fn search_batch(
        &self,
        requests_json: String,
        signal: Option<AbortSignal>,
    ) -> Result<AsyncTask<WorkTask>> {
        Ok(task(
            Work::SearchBatch(self.inner_ref()?, requests_json),
            signal,
        ))
    }

    /// Shows one object with its provenance (`source:N`, `revision:N`, `unit:N`, `chunk:N`, `snapshot:N`, `job:N`, `seg_S_C`).
    #[napi(catch_unwind, ts_return_type = "Promise<string>")]
    pub fn inspect(&self, id: String) -> Result<AsyncTask<WorkTask>> {
        Ok(task(Work::Inspect(self.inner_ref()?, id), None))
    }

    /// A symbol's definitions with references, callers and callees (JSON `{name, repo?, snapshot_id?}`).
    #[napi(catch_unwind, ts_return_type = "Promise<string>")]
    pub fn inspect_symbol(&self, request_json: String) -> Result<AsyncTask<WorkTask>> {
        Ok(task(
            Work::InspectSymbol(self.inner_ref()?, request_json),
            None,
        ))
    }

    /// Counts, sizes and the current snapshot, as JSON.
    #[napi(catch_unwind, ts_return_type = "Promise<string>")]
    pub fn status(&self) -> Result<AsyncTask<WorkTask>> {
        Ok(task(Work::Status(self.inner_ref()?), None))
    }

    /// Re-hashes artifacts and checks snapshots against their indexes. Resolves to the report JSON.
    #[napi(catch_unwind, ts_return_type = "Promise<string>")]
    pub fn verify(&self) -> Result<AsyncTask<WorkTask>> {
        Ok(task(Work::Verify(self.inner_ref()?), None))
    }

    /// Records an add request as a queued job (durable across restarts), asked by `requester`
    /// (`owner` may register new roots; `agent` only captures inside existing ones). Resolves to
    /// the job id as JSON.
    #[napi(catch_unwind, ts_return_type = "Promise<string>")]
    pub fn enqueue_add(
        &self,
        request_json: String,
        requester: String,
    ) -> Result<AsyncTask<WorkTask>> {
        let requester = Requester::parse(&requester).map_err(|e| to_napi(&e))?;
        Ok(task(
            Work::EnqueueAdd(self.inner_ref()?, request_json, requester),
            None,
        ))
    }

    /// Ids of queued jobs, oldest first, as JSON.
    #[napi(catch_unwind, ts_return_type = "Promise<string>")]
    pub fn queued_jobs(&self) -> Result<AsyncTask<WorkTask>> {
        Ok(task(Work::QueuedJobs(self.inner_ref()?), None))
    }

    /// A job's row, steps, receipt and live progress, as JSON.
    #[napi(catch_unwind, ts_return_type = "Promise<string>")]
    pub fn job_status(&self, job_id: i64) -> Result<AsyncTask<WorkTask>> {
        Ok(task(Work::JobStatus(self.inner_ref()?, job_id), None))
    }

    /// Sources of a snapshot (`{collection?, snapshot_id?, limit?, offset?}` JSON), as JSON.
    #[napi(catch_unwind, ts_return_type = "Promise<string>")]
    pub fn list_sources(&self, options_json: String) -> Result<AsyncTask<WorkTask>> {
        Ok(task(
            Work::ListSources(self.inner_ref()?, options_json),
            None,
        ))
    }

    /// Published snapshots, newest first, as JSON.
    #[napi(catch_unwind, ts_return_type = "Promise<string>")]
    pub fn list_snapshots(&self) -> Result<AsyncTask<WorkTask>> {
        Ok(task(Work::ListSnapshots(self.inner_ref()?), None))
    }

    /// Adds or syncs paths as one durable job on a dedicated thread. `progress` receives
    /// `{phase, done, total}` JSON, without blocking the job. Resolves to the receipt JSON.
    #[napi(
        catch_unwind,
        ts_args_type = "requestJson: string, requester: 'owner' | 'agent', progress?: (event: string) => void",
        ts_return_type = "Promise<string>"
    )]
    pub fn add<'env>(
        &self,
        env: &'env Env,
        request_json: String,
        requester: String,
        progress: Option<ProgressFn>,
    ) -> Result<Object<'env>> {
        let request: AddRequest =
            from_json(&request_json, "add request").map_err(|e| to_napi(&e))?;
        let requester = Requester::parse(&requester).map_err(|e| to_napi(&e))?;
        self.spawn_job(env, progress, move |ws, report| {
            ws.add(&request, requester, report)
        })
    }

    /// Runs a queued job on a dedicated thread. Resolves to the receipt JSON.
    #[napi(
        catch_unwind,
        ts_args_type = "jobId: number, progress?: (event: string) => void",
        ts_return_type = "Promise<string>"
    )]
    pub fn run_job<'env>(
        &self,
        env: &'env Env,
        job_id: i64,
        progress: Option<ProgressFn>,
    ) -> Result<Object<'env>> {
        self.spawn_job(env, progress, move |ws, report| ws.run_job(job_id, report))
    }

    /// Long jobs run on their own thread, not the libuv pool, and settle a promise when done.
    fn spawn_job<'env>(
        &self,
        env: &'env Env,
        progress: Option<ProgressFn>,
        job: impl FnOnce(
            &Workspace,
            &(dyn Fn(tychora_core::ingest::Progress) + Sync),
        ) -> tychora_core::Result<tychora_core::ingest::Receipt>
        + Send
        + 'static,
    ) -> Result<Object<'env>> {
        let ws = self.inner_ref()?;
        let (deferred, promise) = env.create_deferred::<String, _>()?;
        std::thread::Builder::new()
            .name("tychora-job".into())
            .spawn(move || {
                let report = |p: tychora_core::ingest::Progress| {
                    if let (Some(tsfn), Ok(json)) = (&progress, serde_json::to_string(&p)) {
                        tsfn.call(json, ThreadsafeFunctionCallMode::NonBlocking);
                    }
                };
                match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    job(&ws, &report).and_then(|r| to_json(&r))
                })) {
                    Ok(Ok(json)) => deferred.resolve(move |_| Ok(json)),
                    Ok(Err(err)) => deferred.reject(to_napi(&err)),
                    Err(payload) => deferred.reject(from_panic(payload.as_ref())),
                }
            })
            .map_err(|e| Error::from_reason(format!("[E_IO] cannot start the job thread: {e}")))?;
        Ok(promise)
    }

    /// Releases the workspace (and its lock once in-flight calls finish). Safe to call twice.
    #[napi(catch_unwind)]
    pub fn close(&self) -> Result<()> {
        self.inner
            .lock()
            .map_err(|_| Error::from_reason("[E_INTERNAL] workspace handle poisoned"))?
            .take();
        Ok(())
    }
}
