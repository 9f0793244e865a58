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
use tychora_core::ingest::AddRequest;
use tychora_core::query::QueryRequest;

use crate::error::{from_json, from_panic, guarded, to_json, to_napi};

type ProgressFn = ThreadsafeFunction<String, (), String, Status, false>;

/// The kinds of bounded work a `WorkTask` does on the libuv pool.
enum Work {
    Open(PathBuf),
    Init(PathBuf),
    Migrate(PathBuf),
    Search(Arc<Workspace>, String),
    SearchBatch(Arc<Workspace>, String),
    Inspect(Arc<Workspace>, String),
    Status(Arc<Workspace>),
    Verify(Arc<Workspace>),
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
                Work::Init(dir) => Done::Json(to_json(&Workspace::init(&dir)?)?),
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
                Work::Status(ws) => Done::Json(to_json(&ws.status()?)?),
                Work::Verify(ws) => Done::Json(to_json(&ws.verify()?)?),
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

/// Creates a workspace in `dir`. Resolves to the init report as JSON.
#[napi(catch_unwind, ts_return_type = "Promise<string>")]
pub fn init_workspace(dir: String) -> AsyncTask<WorkTask> {
    task(Work::Init(PathBuf::from(dir)), None)
}

/// Opens a workspace (taking its lock). Resolves to a `NativeWorkspace`.
#[napi(catch_unwind, ts_return_type = "Promise<NativeWorkspace>")]
pub fn open_workspace(dir: String) -> AsyncTask<WorkTask> {
    task(Work::Open(PathBuf::from(dir)), None)
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

    /// Adds or syncs paths as one durable job on a dedicated thread. `progress` receives
    /// `{phase, done, total}` JSON, without blocking the job. Resolves to the receipt JSON.
    #[napi(
        catch_unwind,
        ts_args_type = "requestJson: string, progress?: (event: string) => void",
        ts_return_type = "Promise<string>"
    )]
    pub fn add<'env>(
        &self,
        env: &'env Env,
        request_json: String,
        progress: Option<ProgressFn>,
    ) -> Result<Object<'env>> {
        let ws = self.inner_ref()?;
        let request: AddRequest =
            from_json(&request_json, "add request").map_err(|e| to_napi(&e))?;
        let (deferred, promise) = env.create_deferred::<String, _>()?;
        std::thread::Builder::new()
            .name("tychora-add".into())
            .spawn(move || {
                let report = |p: tychora_core::ingest::Progress| {
                    if let (Some(tsfn), Ok(json)) = (&progress, serde_json::to_string(&p)) {
                        tsfn.call(json, ThreadsafeFunctionCallMode::NonBlocking);
                    }
                };
                match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    ws.add(&request, &report).and_then(|r| to_json(&r))
                })) {
                    Ok(Ok(json)) => deferred.resolve(move |_| Ok(json)),
                    Ok(Err(err)) => deferred.reject(to_napi(&err)),
                    Err(payload) => deferred.reject(from_panic(payload.as_ref())),
                }
            })
            .map_err(|e| Error::from_reason(format!("[E_IO] cannot start the add thread: {e}")))?;
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
