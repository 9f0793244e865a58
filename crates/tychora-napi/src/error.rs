//! Core errors → napi errors.
//!
//! `Task::compute` and `JsDeferred::reject` only carry `napi::Error<Status>`, so the stable code
//! travels as a `[E_CODE] ` prefix of the message; `ts/engine/call-native.ts` strips it and sets
//! `error.code`. The cause chain is appended as indented lines, as lancedb's binding does.

use std::error::Error as _;

use tychora_core::Error;

/// Converts a core error into a napi error whose message starts with its code.
pub fn to_napi(err: &Error) -> napi::Error {
    let mut message = format!("[{}] {err}", err.code().as_str());
    let mut source = err.source();
    while let Some(cause) = source {
        message.push_str(&format!("\n  caused by: {cause}"));
        source = cause.source();
    }
    napi::Error::from_reason(message)
}

/// A caught panic becomes `E_INTERNAL`, never a crashed host process.
pub fn from_panic(payload: &(dyn std::any::Any + Send)) -> napi::Error {
    let what = payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into());
    napi::Error::from_reason(format!(
        "[E_INTERNAL] internal error (caught panic): {what}"
    ))
}

/// Runs `f`, mapping core errors and panics.
pub fn guarded<T>(f: impl FnOnce() -> tychora_core::Result<T>) -> napi::Result<T> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(err)) => Err(to_napi(&err)),
        Err(payload) => Err(from_panic(payload.as_ref())),
    }
}

/// Serialises a query result for the JS side (it crosses as one JSON string).
pub fn to_json<T: serde::Serialize>(value: &T) -> tychora_core::Result<String> {
    serde_json::to_string(value).map_err(|e| Error::Internal(format!("serialising a result: {e}")))
}
