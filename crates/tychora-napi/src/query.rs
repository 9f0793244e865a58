//! Search (the hot path) and `inspect symbol`.

use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::contract::{InspectSymbolRequest, QueryRequest, SymbolReport};
use crate::error::to_json;
use crate::task::{Blocking, blocking};
use crate::workspace::NativeWorkspace;

#[napi]
impl NativeWorkspace {
    /// Runs one query. Resolves to the `QueryResult` as one JSON string (see `contract/query.rs`).
    #[napi(catch_unwind, ts_return_type = "Promise<string>")]
    pub fn search(
        &self,
        request: QueryRequest,
        signal: Option<AbortSignal>,
    ) -> Result<AsyncTask<Blocking<String>>> {
        let ws = self.inner_ref()?;
        Ok(blocking(signal, move || {
            to_json(&ws.search(&request.into())?)
        }))
    }

    /// Runs many queries in one crossing. Resolves to a JSON array of `QueryResult`s.
    #[napi(catch_unwind, ts_return_type = "Promise<string>")]
    pub fn search_batch(
        &self,
        requests: Vec<QueryRequest>,
        signal: Option<AbortSignal>,
    ) -> Result<AsyncTask<Blocking<String>>> {
        let ws = self.inner_ref()?;
        Ok(blocking(signal, move || {
            let results = requests
                .into_iter()
                .map(|r| ws.search(&r.into()))
                .collect::<tychora_core::Result<Vec<_>>>()?;
            to_json(&results)
        }))
    }

    /// A symbol's definitions with references, callers and callees.
    #[napi(catch_unwind, ts_return_type = "Promise<SymbolReport>")]
    pub fn inspect_symbol(
        &self,
        request: InspectSymbolRequest,
    ) -> Result<AsyncTask<Blocking<SymbolReport>>> {
        let ws = self.inner_ref()?;
        Ok(blocking(None, move || {
            let InspectSymbolRequest {
                name,
                repo,
                snapshot_id,
            } = request;
            Ok(ws
                .inspect_symbol(&name, repo.as_deref(), snapshot_id)?
                .into())
        }))
    }
}
