//! Bounded work on the libuv pool: one generic `AsyncTask` whose output is a typed napi value.

use napi::bindgen_prelude::{AbortSignal, AsyncTask, Object, ToNapiValue, TypeName};
use napi::{Env, Error, Task};

use crate::error::{from_panic, guarded, to_napi};

type Work<T> = Box<dyn FnOnce() -> tychora_core::Result<T> + Send>;

/// A closure run off the JS thread; core errors and panics become coded napi errors.
pub struct Blocking<T> {
    work: Option<Work<T>>,
}

impl<T: ToNapiValue + TypeName + Send + 'static> Task for Blocking<T> {
    type Output = T;
    type JsValue = T;

    fn compute(&mut self) -> napi::Result<T> {
        let work = self
            .work
            .take()
            .ok_or_else(|| Error::from_reason("[E_INTERNAL] task computed twice"))?;
        guarded(work)
    }

    fn resolve(&mut self, _env: Env, output: T) -> napi::Result<T> {
        Ok(output)
    }
}

/// Schedules `work` on the libuv pool; an aborted `signal` cancels it before it starts.
pub fn blocking<T: ToNapiValue + TypeName + Send + 'static>(
    signal: Option<AbortSignal>,
    work: impl FnOnce() -> tychora_core::Result<T> + Send + 'static,
) -> AsyncTask<Blocking<T>> {
    let task = Blocking {
        work: Some(Box::new(work)),
    };
    match signal {
        Some(signal) => AsyncTask::with_signal(task, signal),
        None => AsyncTask::new(task),
    }
}

/// Runs `work` on a thread of its own and resolves the returned promise with its output. For calls
/// that may wait on the JS thread (a provider's promise): on the libuv pool, enough of them would
/// starve the pool the provider's own I/O needs.
pub fn own_thread<'env, T: ToNapiValue + Send + 'static>(
    env: &'env Env,
    work: impl FnOnce() -> tychora_core::Result<T> + Send + 'static,
) -> napi::Result<Object<'env>> {
    let (deferred, promise) = env.create_deferred::<T, _>()?;
    std::thread::Builder::new()
        .name("tychora-call".into())
        .spawn(
            move || match std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)) {
                Ok(Ok(value)) => deferred.resolve(move |_| Ok(value)),
                Ok(Err(err)) => deferred.reject(to_napi(&err)),
                Err(payload) => deferred.reject(from_panic(payload.as_ref())),
            },
        )
        .map_err(|e| Error::from_reason(format!("[E_IO] cannot start a call thread: {e}")))?;
    Ok(promise)
}
