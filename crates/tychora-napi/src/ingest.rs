//! Add/sync jobs. A job runs on its own thread, not the libuv pool (multi-second jobs would occupy
//! the pool Node's `fs` and `zlib` share), and settles a promise when done; progress crosses as a
//! non-blocking threadsafe function.

use napi::bindgen_prelude::*;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;
use tychora_core::Workspace;

use crate::contract::{
    AddPlan, AddRequest, Progress, RebuildReport, Receipt, requester as parse_requester,
};
use crate::error::{from_panic, to_napi};
use crate::task::{Blocking, blocking};
use crate::workspace::NativeWorkspace;

/// Hands a progress event to the JS callback, if there is one, without waiting for it.
pub(crate) fn forward(progress: Option<&ProgressFn>, event: tychora_core::job::Progress) {
    if let Some(tsfn) = progress {
        tsfn.call(event.into(), ThreadsafeFunctionCallMode::NonBlocking);
    }
}

pub(crate) type ProgressFn = ThreadsafeFunction<Progress, (), Progress, Status, false>;

#[napi]
impl NativeWorkspace {
    /// Records an add request as a queued job (durable across restarts), asked by `requester`.
    /// Resolves to the job id.
    #[napi(
        catch_unwind,
        ts_args_type = "request: AddRequest, requester: 'owner' | 'agent'",
        ts_return_type = "Promise<number>"
    )]
    pub fn enqueue_add(
        &self,
        request: AddRequest,
        requester: String,
    ) -> Result<AsyncTask<Blocking<i64>>> {
        let ws = self.inner_ref()?;
        Ok(blocking(None, move || {
            ws.enqueue_add(&request.try_into()?, parse_requester(&requester)?)
        }))
    }

    /// What an add would capture and embed, and the embedding's estimated cost; writes nothing and
    /// calls no provider (`tychora add --dry-run`).
    #[napi(
        catch_unwind,
        ts_args_type = "request: AddRequest, requester: 'owner' | 'agent'",
        ts_return_type = "Promise<AddPlan>"
    )]
    pub fn plan_add(
        &self,
        request: AddRequest,
        requester: String,
    ) -> Result<AsyncTask<Blocking<AddPlan>>> {
        let ws = self.inner_ref()?;
        Ok(blocking(None, move || {
            Ok(ws
                .plan_add(&request.try_into()?, parse_requester(&requester)?, &|_| {})?
                .into())
        }))
    }

    /// Ids of queued jobs, oldest first.
    #[napi(catch_unwind, ts_return_type = "Promise<Array<number>>")]
    pub fn queued_jobs(&self) -> Result<AsyncTask<Blocking<Vec<i64>>>> {
        let ws = self.inner_ref()?;
        Ok(blocking(None, move || ws.queued_jobs()))
    }

    /// Adds or syncs paths as one durable job on a dedicated thread. Resolves to the receipt.
    #[napi(
        catch_unwind,
        ts_args_type = "request: AddRequest, requester: 'owner' | 'agent', progress?: (progress: Progress) => void",
        ts_return_type = "Promise<Receipt>"
    )]
    pub fn add<'env>(
        &self,
        env: &'env Env,
        request: AddRequest,
        requester: String,
        progress: Option<ProgressFn>,
    ) -> Result<Object<'env>> {
        let request: tychora_core::ingest::AddRequest =
            request.try_into().map_err(|e| to_napi(&e))?;
        let requester = parse_requester(&requester).map_err(|e| to_napi(&e))?;
        self.spawn_job(env, progress, move |ws, report| {
            ws.add(&request, requester, report)
        })
    }

    /// Runs a queued job on a dedicated thread. Resolves to the receipt.
    #[napi(
        catch_unwind,
        ts_args_type = "jobId: number, progress?: (progress: Progress) => void",
        ts_return_type = "Promise<Receipt>"
    )]
    pub fn run_job<'env>(
        &self,
        env: &'env Env,
        job_id: i64,
        progress: Option<ProgressFn>,
    ) -> Result<Object<'env>> {
        self.spawn_job(env, progress, move |ws, report| ws.run_job(job_id, report))
    }

    /// Makes derived index data whole again (`manage rebuild`): damaged vector files rewritten
    /// from the records; a current snapshot with stale indexes published again. Resolves to the
    /// report.
    #[napi(
        catch_unwind,
        ts_args_type = "progress?: (progress: Progress) => void",
        ts_return_type = "Promise<RebuildReport>"
    )]
    pub fn rebuild<'env>(
        &self,
        env: &'env Env,
        progress: Option<ProgressFn>,
    ) -> Result<Object<'env>> {
        let ws = self.inner_ref()?;
        crate::task::own_thread(env, move || {
            let report = |p| forward(progress.as_ref(), p);
            Ok(RebuildReport::from(ws.rebuild(&report)?))
        })
    }

    fn spawn_job<'env>(
        &self,
        env: &'env Env,
        progress: Option<ProgressFn>,
        job: impl FnOnce(
            &Workspace,
            &(dyn Fn(tychora_core::job::Progress) + Sync),
        ) -> tychora_core::Result<tychora_core::ingest::Receipt>
        + Send
        + 'static,
    ) -> Result<Object<'env>> {
        let ws = self.inner_ref()?;
        let (deferred, promise) = env.create_deferred::<Receipt, _>()?;
        std::thread::Builder::new()
            .name("tychora-job".into())
            .spawn(move || {
                let report = |p| forward(progress.as_ref(), p);
                let outcome =
                    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| job(&ws, &report)));
                // The handle goes before the promise settles: a caller that closes the workspace
                // once the job resolves, then opens it again, must find the lock free.
                drop(ws);
                match outcome {
                    Ok(Ok(receipt)) => {
                        let receipt = Receipt::from(receipt);
                        deferred.resolve(move |_| Ok(receipt));
                    }
                    Ok(Err(err)) => deferred.reject(to_napi(&err)),
                    Err(payload) => deferred.reject(from_panic(payload.as_ref())),
                }
            })
            .map_err(|e| Error::from_reason(format!("[E_IO] cannot start the job thread: {e}")))?;
        Ok(promise)
    }
}
