//! Operations: compaction, withdrawal, erasure of originals, backup and restore, retention, and
//! recorded query runs.

use std::path::PathBuf;

use napi::bindgen_prelude::*;
use napi_derive::napi;
use tychora_core::Workspace;

use crate::contract::{self, BackupReport, PurgeReport, RelabelReport, WithdrawReport};
use crate::ingest::{ProgressFn, forward};
use crate::task::{Blocking, blocking};
use crate::workspace::NativeWorkspace;

/// Verifies the backup in `src` and makes it the workspace `dir` (which must not exist, or be
/// empty); nothing is written to `dir` unless every file matches the manifest.
#[napi(catch_unwind, ts_return_type = "Promise<BackupReport>")]
/// A service store's backup restores into the empty PostgreSQL database `store`, its artifacts
/// into the bucket `artifacts` (at `endpoint`) when given, else the backup's own.
pub fn restore_workspace(
    src: String,
    dir: String,
    store: Option<String>,
    artifacts: Option<String>,
    endpoint: Option<String>,
) -> AsyncTask<Blocking<BackupReport>> {
    blocking(None, move || {
        let target = tychora_core::manage::RestoreTarget {
            store: store.as_deref(),
            artifacts: artifacts.as_deref(),
            endpoint: endpoint.as_deref(),
        };
        Ok(Workspace::restore_to(&PathBuf::from(src), &PathBuf::from(dir), &target)?.into())
    })
}

#[napi]
impl NativeWorkspace {
    /// Merges the current snapshot's lexical generation when the merge policy finds segments to
    /// merge; nothing a snapshot answers changes.
    #[napi(catch_unwind, ts_return_type = "Promise<CompactReport>")]
    pub fn compact(&self) -> Result<AsyncTask<Blocking<contract::CompactReport>>> {
        let ws = self.inner_ref()?;
        Ok(blocking(None, move || Ok(ws.compact()?.into())))
    }

    /// Applies the retention policy now (`now_ms` overrides the clock; tests only).
    #[napi(catch_unwind, ts_return_type = "Promise<PurgeReport>")]
    pub fn purge(&self, now_ms: Option<i64>) -> Result<AsyncTask<Blocking<PurgeReport>>> {
        let ws = self.inner_ref()?;
        Ok(blocking(None, move || {
            Ok(match now_ms {
                Some(now) => ws.purge_at(now)?,
                None => ws.purge()?,
            }
            .into())
        }))
    }

    /// Writes a verified backup to `dest` while the workspace serves.
    #[napi(catch_unwind, ts_return_type = "Promise<BackupReport>")]
    pub fn backup<'env>(&self, env: &'env Env, dest: String) -> Result<Object<'env>> {
        let ws = self.inner_ref()?;
        // On its own thread: a large backup must not occupy the libuv pool.
        crate::task::own_thread(env, move || {
            Ok(BackupReport::from(ws.backup(&PathBuf::from(dest))?))
        })
    }

    /// Integrity, disk space, stale generations, orphaned originals and interrupted jobs.
    #[napi(catch_unwind, ts_return_type = "Promise<Array<Finding>>")]
    pub fn doctor(&self) -> Result<AsyncTask<Blocking<Vec<contract::Finding>>>> {
        let ws = self.inner_ref()?;
        Ok(blocking(None, move || {
            Ok(ws.doctor()?.into_iter().map(Into::into).collect())
        }))
    }

    /// A recorded query run as JSON (request, applied scope, snapshot, results, trace).
    #[napi(catch_unwind, ts_return_type = "Promise<string>")]
    pub fn inspect_run(&self, run_id: String) -> Result<AsyncTask<Blocking<String>>> {
        let ws = self.inner_ref()?;
        Ok(blocking(None, move || {
            serde_json::to_string(&ws.inspect_run(&run_id)?)
                .map_err(|e| tychora_core::Error::Internal(e.to_string()))
        }))
    }

    /// The recorded query runs, newest first (request time, then id); page on with
    /// `next_before`.
    #[napi(catch_unwind, ts_return_type = "Promise<RunList>")]
    pub fn list_runs(
        &self,
        options: Option<contract::ListRunsOptions>,
    ) -> Result<AsyncTask<Blocking<contract::RunList>>> {
        let ws = self.inner_ref()?;
        Ok(blocking(None, move || {
            let contract::ListRunsOptions { limit, before } =
                options.unwrap_or(contract::ListRunsOptions {
                    limit: None,
                    before: None,
                });
            Ok(ws.list_runs(limit, before.as_deref())?.into())
        }))
    }

    /// Withdraws a source from new snapshots (its history stays).
    #[napi(
        catch_unwind,
        ts_args_type = "selector: string, reason: string, progress?: (progress: Progress) => void",
        ts_return_type = "Promise<WithdrawReport>"
    )]
    pub fn withdraw<'env>(
        &self,
        env: &'env Env,
        selector: String,
        reason: String,
        progress: Option<ProgressFn>,
    ) -> Result<Object<'env>> {
        self.removal(env, selector, reason, progress, false)
    }

    /// Erases retained original bytes (`revision:N`, or every revision of a source), leaving
    /// tombstones; sources whose published revision is erased leave new snapshots.
    #[napi(
        catch_unwind,
        ts_args_type = "selector: string, reason: string, progress?: (progress: Progress) => void",
        ts_return_type = "Promise<WithdrawReport>"
    )]
    pub fn delete_original<'env>(
        &self,
        env: &'env Env,
        selector: String,
        reason: String,
        progress: Option<ProgressFn>,
    ) -> Result<Object<'env>> {
        self.removal(env, selector, reason, progress, true)
    }

    /// Relabels a source's sensitivity; above the ceiling its original bytes are erased too.
    #[napi(
        catch_unwind,
        ts_args_type = "selector: string, level: string, reason: string, progress?: (progress: Progress) => void",
        ts_return_type = "Promise<RelabelReport>"
    )]
    pub fn relabel<'env>(
        &self,
        env: &'env Env,
        selector: String,
        level: String,
        reason: String,
        progress: Option<ProgressFn>,
    ) -> Result<Object<'env>> {
        let ws = self.inner_ref()?;
        crate::task::own_thread(env, move || {
            let report = |p| forward(progress.as_ref(), p);
            Ok(RelabelReport::from(
                ws.relabel(&selector, &level, &reason, &report)?,
            ))
        })
    }

    fn removal<'env>(
        &self,
        env: &'env Env,
        selector: String,
        reason: String,
        progress: Option<ProgressFn>,
        erase: bool,
    ) -> Result<Object<'env>> {
        let ws = self.inner_ref()?;
        crate::task::own_thread(env, move || {
            let report = |p| forward(progress.as_ref(), p);
            let done = if erase {
                ws.delete_original(&selector, &reason, &report)?
            } else {
                ws.withdraw(&selector, &reason, &report)?
            };
            Ok(WithdrawReport::from(done))
        })
    }
}
