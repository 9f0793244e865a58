//! `NativeWorkspace`: a closable handle over `tychora_core::Workspace`, and the functions that
//! create, open and migrate one. The handle's other methods live beside the core modules they call
//! (`ingest.rs`, `query.rs`, `manage.rs`).

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use napi::bindgen_prelude::*;
use napi_derive::napi;
use tychora_core::Workspace;

use crate::contract::InitReport;
use crate::error::to_napi;
use crate::providers::ProviderHooks;
use crate::task::{Blocking, blocking};

/// Creates a workspace in `dir` with a default profile (`documents` unless given), and the text
/// channel when `embeddings` names a provider (`local` or `voyage`).
#[napi(catch_unwind, ts_return_type = "Promise<InitReport>")]
pub fn init_workspace(
    dir: String,
    profile: Option<String>,
    #[napi(ts_arg_type = "'local' | 'voyage' | undefined | null")] embeddings: Option<String>,
) -> AsyncTask<Blocking<InitReport>> {
    blocking(None, move || {
        let profile = profile.as_deref().unwrap_or("documents");
        Ok(Workspace::init_with(&PathBuf::from(dir), profile, embeddings.as_deref())?.into())
    })
}

/// Opens a workspace, taking its lock. `providers` are the network providers the TypeScript side
/// calls (Voyage embeddings, reranking), when the workspace configures them.
#[napi(catch_unwind, ts_return_type = "Promise<NativeWorkspace>")]
pub fn open_workspace(
    dir: String,
    providers: Option<ProviderHooks>,
) -> AsyncTask<Blocking<NativeWorkspace>> {
    let mut providers = providers;
    let pdf = providers.as_mut().and_then(crate::providers::pdf_reader);
    let providers = providers.map(crate::providers::from_hooks);
    blocking(None, move || {
        let remote = providers
            .as_ref()
            .is_some_and(|p| p.embedder.is_some() || p.reranker.is_some());
        let ws =
            Workspace::open_with_readers(&PathBuf::from(dir), providers.unwrap_or_default(), pdf)?;
        Ok(NativeWorkspace {
            inner: Mutex::new(Some(Arc::new(ws))),
            remote,
        })
    })
}

/// Applies pending schema migrations; resolves to the versions applied.
#[napi(catch_unwind, ts_return_type = "Promise<Array<number>>")]
pub fn migrate_workspace(dir: String) -> AsyncTask<Blocking<Vec<i64>>> {
    blocking(None, move || Workspace::migrate(&PathBuf::from(dir)))
}

/// Attaches a workspace's folder to a service several daemons share (`serve --store …
/// --artifacts … --search …`); resolves to whether workspace.toml changed.
#[napi(catch_unwind, ts_return_type = "Promise<boolean>")]
pub fn attach_service(
    dir: String,
    store: Option<String>,
    artifacts: Option<String>,
    endpoint: Option<String>,
    search: Option<String>,
) -> AsyncTask<Blocking<bool>> {
    blocking(None, move || {
        Workspace::attach_service(
            &PathBuf::from(dir),
            &tychora_core::workspace::ServiceSettings {
                store,
                artifacts,
                endpoint,
                search,
            },
        )
    })
}

/// What cloning a workspace shared (hard links) and copied.
#[napi(object)]
pub struct CloneReport {
    pub linked: i64,
    #[napi(js_name = "copied_bytes")]
    pub copied_bytes: i64,
    #[napi(js_name = "duration_ms")]
    pub duration_ms: f64,
}

/// Copies the closed workspace in `src` to `dest` (which must not exist) as the start of another:
/// the database by SQLite's backup API, artifacts and lexical generations as hard links.
#[napi(catch_unwind, ts_return_type = "Promise<CloneReport>")]
pub fn clone_workspace(src: String, dest: String) -> AsyncTask<Blocking<CloneReport>> {
    blocking(None, move || {
        let report = Workspace::clone_into(&PathBuf::from(src), &PathBuf::from(dest))?;
        Ok(CloneReport {
            linked: i64::try_from(report.linked).unwrap_or(i64::MAX),
            copied_bytes: i64::try_from(report.copied_bytes).unwrap_or(i64::MAX),
            duration_ms: report.duration_ms,
        })
    })
}

/// What a built state depends on besides its inputs: the engine's version and the newest
/// canonical schema version it writes.
#[napi(object)]
pub struct EngineIdentity {
    #[napi(js_name = "engine_version")]
    pub engine_version: String,
    #[napi(js_name = "schema_version")]
    pub schema_version: i64,
}

/// The engine's version and schema version (a knowledge state's hash covers both).
#[napi]
#[must_use]
pub fn engine_identity() -> EngineIdentity {
    EngineIdentity {
        engine_version: tychora_core::workspace::ENGINE_VERSION.into(),
        schema_version: tychora_core::workspace::schema_version(),
    }
}

/// The pid recorded by the process that holds the workspace's lock, or `null` when no process
/// holds it (then a `runtime/daemon.json` left behind is stale). A non-blocking probe.
#[napi(catch_unwind)]
pub fn workspace_lock_owner(dir: String) -> Result<Option<String>> {
    Workspace::lock_owner(std::path::Path::new(&dir)).map_err(|e| to_napi(&e))
}

/// A handle over an open workspace. `close()` is idempotent; afterwards every method fails with
/// `E_CLOSED`.
#[napi]
pub struct NativeWorkspace {
    inner: Mutex<Option<Arc<Workspace>>>,
    /// Whether calls may wait on a JS provider: then they run on their own threads, not the
    /// libuv pool, which the provider's own I/O (DNS lookups) needs.
    pub(crate) remote: bool,
}

#[napi]
impl NativeWorkspace {
    pub(crate) fn inner_ref(&self) -> Result<Arc<Workspace>> {
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

    /// The lease jobs are held on when the store is shared with other daemons (`[store]`), in
    /// milliseconds; `null` on the embedded store.
    #[napi(getter, catch_unwind)]
    pub fn job_lease_ms(&self) -> Result<Option<i64>> {
        Ok(self.inner_ref()?.job_lease_ms())
    }

    /// Whether agents may add sources (`[agents] allow_add_source` in workspace.toml).
    #[napi(getter, catch_unwind)]
    pub fn allow_agent_add(&self) -> Result<bool> {
        Ok(self.inner_ref()?.config().agents.allow_add_source)
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
