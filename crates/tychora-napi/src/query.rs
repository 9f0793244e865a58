//! Search (the hot path) and `inspect symbol`.

use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::contract::{InspectSymbolRequest, QueryRequest, SymbolReport};
use crate::error::to_json;
use crate::task::{Blocking, blocking, own_thread};
use crate::workspace::NativeWorkspace;

#[napi]
impl NativeWorkspace {
    /// Runs one query. Resolves to the `QueryResult` as one JSON string (see `contract/query.rs`).
    #[napi(catch_unwind, ts_return_type = "Promise<string>")]
    pub fn search<'env>(
        &self,
        env: &'env Env,
        request: QueryRequest,
        signal: Option<AbortSignal>,
    ) -> Result<Either<AsyncTask<Blocking<String>>, Object<'env>>> {
        let ws = self.inner_ref()?;
        let request: tychora_core::query::QueryRequest = request.into();
        if self.remote {
            return Ok(Either::B(own_thread(env, move || {
                to_json(&ws.search(&request)?)
            })?));
        }
        Ok(Either::A(blocking(signal, move || {
            to_json(&ws.search(&request)?)
        })))
    }

    /// Runs many queries in one crossing. Resolves to a JSON array of `QueryResult`s.
    #[napi(catch_unwind, ts_return_type = "Promise<string>")]
    pub fn search_batch<'env>(
        &self,
        env: &'env Env,
        requests: Vec<QueryRequest>,
        signal: Option<AbortSignal>,
    ) -> Result<Either<AsyncTask<Blocking<String>>, Object<'env>>> {
        let ws = self.inner_ref()?;
        let requests: Vec<tychora_core::query::QueryRequest> =
            requests.into_iter().map(Into::into).collect();
        let work = move || {
            let results = requests
                .iter()
                .map(|r| ws.search(r))
                .collect::<tychora_core::Result<Vec<_>>>()?;
            to_json(&results)
        };
        if self.remote {
            return Ok(Either::B(own_thread(env, work)?));
        }
        Ok(Either::A(blocking(signal, work)))
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
