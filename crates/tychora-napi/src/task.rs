//! Bounded work on the libuv pool: one generic `AsyncTask` whose output is a typed napi value.

use napi::bindgen_prelude::{AbortSignal, AsyncTask, ToNapiValue, TypeName};
use napi::{Env, Error, Task};

use crate::error::guarded;

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
