//! Status, verification, provenance and listings.

use napi::bindgen_prelude::*;
use napi_derive::napi;
use tychora_core::manage::SourceQuery;

use crate::contract::{
    self, Evidence, JobList, JobStatus, ListJobsOptions, ListSourcesOptions, SnapshotList,
    SourceList, Status, StatusOptions, VerifyReport,
};
use crate::task::{Blocking, blocking};
use crate::workspace::NativeWorkspace;

#[napi]
impl NativeWorkspace {
    /// Counts, sizes and the current snapshot (with the per-table breakdown unless `options` say
    /// `tables: false`).
    #[napi(catch_unwind, ts_return_type = "Promise<Status>")]
    pub fn status(&self, options: Option<StatusOptions>) -> Result<AsyncTask<Blocking<Status>>> {
        let ws = self.inner_ref()?;
        let options = tychora_core::manage::StatusOptions {
            tables: options.and_then(|o| o.tables).unwrap_or(true),
        };
        Ok(blocking(None, move || Ok(ws.status_with(options)?.into())))
    }

    /// An artifact's bytes by sha256 (original, derived text or picture), verified, from wherever
    /// the workspace keeps them (its folder or its bucket).
    #[napi(catch_unwind, ts_return_type = "Promise<Buffer>")]
    pub fn read_artifact(&self, sha256: String) -> Result<AsyncTask<Blocking<Buffer>>> {
        let ws = self.inner_ref()?;
        Ok(blocking(None, move || Ok(ws.artifact(&sha256)?.into())))
    }

    /// Re-hashes artifacts and checks snapshots against their indexes.
    #[napi(catch_unwind, ts_return_type = "Promise<VerifyReport>")]
    pub fn verify(&self) -> Result<AsyncTask<Blocking<VerifyReport>>> {
        let ws = self.inner_ref()?;
        Ok(blocking(None, move || Ok(ws.verify()?.into())))
    }

    /// One object with its provenance (`source:N`, `revision:N`, `unit:N`, `chunk:N`,
    /// `snapshot:N`, `job:N`, `seg_S_C`).
    #[napi(
        catch_unwind,
        ts_return_type = "Promise<SourceEvidence | RevisionEvidence | UnitEvidence | ChunkEvidence | SnapshotEvidence | JobStatus>"
    )]
    pub fn inspect(&self, id: String) -> Result<AsyncTask<Blocking<Evidence>>> {
        let ws = self.inner_ref()?;
        Ok(blocking(None, move || {
            Ok(contract::evidence(ws.inspect(&id)?))
        }))
    }

    /// A job's row, steps, receipt and live progress.
    #[napi(catch_unwind, ts_return_type = "Promise<JobStatus>")]
    pub fn job_status(&self, job_id: i64) -> Result<AsyncTask<Blocking<JobStatus>>> {
        let ws = self.inner_ref()?;
        Ok(blocking(None, move || Ok(ws.job_status(job_id)?.into())))
    }

    /// Cancels a queued job before it runs (the owner's call): its status becomes `cancelled`,
    /// `finished_at` now and `error` "cancelled by the owner", then ": reason" when given
    /// (at most 500 characters, else `E_INVALID_ARGUMENT`). `E_CONFLICT` for a running job (a
    /// job stops only at its safe points) or one that has ended; `E_NOT_FOUND` for an unknown
    /// one.
    #[napi(catch_unwind, ts_return_type = "Promise<JobStatus>")]
    pub fn cancel_job(
        &self,
        job_id: i64,
        reason: Option<String>,
    ) -> Result<AsyncTask<Blocking<JobStatus>>> {
        let ws = self.inner_ref()?;
        Ok(blocking(None, move || {
            Ok(ws.cancel_job(job_id, reason.as_deref())?.into())
        }))
    }

    /// The workspace's jobs, newest first, each as `jobStatus` returns it; page on with
    /// `next_before`.
    #[napi(catch_unwind, ts_return_type = "Promise<JobList>")]
    pub fn list_jobs(
        &self,
        options: Option<ListJobsOptions>,
    ) -> Result<AsyncTask<Blocking<JobList>>> {
        let ws = self.inner_ref()?;
        Ok(blocking(None, move || {
            let ListJobsOptions { limit, before } = options.unwrap_or(ListJobsOptions {
                limit: None,
                before: None,
            });
            Ok(ws.list_jobs(limit, before)?.into())
        }))
    }

    /// One page of a snapshot's sources.
    #[napi(catch_unwind, ts_return_type = "Promise<SourceList>")]
    pub fn list_sources(
        &self,
        options: ListSourcesOptions,
    ) -> Result<AsyncTask<Blocking<SourceList>>> {
        let ws = self.inner_ref()?;
        Ok(blocking(None, move || {
            let ListSourcesOptions {
                collection,
                snapshot_id,
                limit,
                offset,
            } = options;
            let query = SourceQuery {
                collection: collection.as_deref(),
                snapshot_id,
                limit: limit.unwrap_or(100).min(1000) as usize,
                offset: offset.unwrap_or(0) as usize,
            };
            Ok(ws.list_sources(&query)?.into())
        }))
    }

    /// Structured records (requirements, decisions…) matching `options`.
    #[napi(catch_unwind, ts_return_type = "Promise<RecordList>")]
    pub fn list_records(
        &self,
        options: contract::ListRecordsOptions,
    ) -> Result<AsyncTask<Blocking<contract::RecordList>>> {
        let ws = self.inner_ref()?;
        Ok(blocking(None, move || {
            Ok(ws.list_records(&options.into())?.into())
        }))
    }

    /// The record `key` (of `kind`, when several kinds have one) with every unit that states it.
    #[napi(catch_unwind, ts_return_type = "Promise<RecordDetail>")]
    pub fn show_record(
        &self,
        key: String,
        kind: Option<String>,
    ) -> Result<AsyncTask<Blocking<contract::RecordDetail>>> {
        let ws = self.inner_ref()?;
        Ok(blocking(None, move || {
            Ok(ws.show_record(&key, kind.as_deref())?.into())
        }))
    }

    /// A person's decision on a record: `accept` (reviewed) or `reject`.
    #[napi(catch_unwind, ts_return_type = "Promise<RecordDetail>")]
    pub fn review_record(
        &self,
        key: String,
        kind: Option<String>,
        action: String,
    ) -> Result<AsyncTask<Blocking<contract::RecordDetail>>> {
        let ws = self.inner_ref()?;
        Ok(blocking(None, move || {
            Ok(ws.review_record(&key, kind.as_deref(), &action)?.into())
        }))
    }

    /// Relation assertions touching a key, of a relation, in a status.
    #[napi(catch_unwind, ts_return_type = "Promise<Array<RelationAssertion>>")]
    pub fn list_relations(
        &self,
        options: contract::ListRelationsOptions,
    ) -> Result<AsyncTask<Blocking<Vec<contract::RelationAssertion>>>> {
        let ws = self.inner_ref()?;
        Ok(blocking(None, move || {
            let contract::ListRelationsOptions {
                key,
                relation,
                status,
            } = options;
            Ok(ws
                .list_relations(key.as_deref(), relation.as_deref(), status.as_deref())?
                .into_iter()
                .map(Into::into)
                .collect())
        }))
    }

    /// Declares (or proposes) an assertion, checked against its type.
    #[napi(catch_unwind, ts_return_type = "Promise<RelationAssertion>")]
    pub fn declare_relation(
        &self,
        request: contract::DeclareRelation,
    ) -> Result<AsyncTask<Blocking<contract::RelationAssertion>>> {
        let ws = self.inner_ref()?;
        Ok(blocking(None, move || {
            Ok(ws.declare_relation(&request.into())?.into())
        }))
    }

    /// Reviews an assertion: `accept`, `reject` or `comment`.
    #[napi(catch_unwind, ts_return_type = "Promise<RelationAssertion>")]
    pub fn review_relation(
        &self,
        id: i64,
        action: String,
        actor: String,
        note: Option<String>,
    ) -> Result<AsyncTask<Blocking<contract::RelationAssertion>>> {
        let ws = self.inner_ref()?;
        Ok(blocking(None, move || {
            Ok(ws
                .review_relation(id, &action, &actor, note.as_deref())?
                .into())
        }))
    }

    /// Published snapshots, newest first.
    #[napi(catch_unwind, ts_return_type = "Promise<SnapshotList>")]
    pub fn list_snapshots(&self) -> Result<AsyncTask<Blocking<SnapshotList>>> {
        let ws = self.inner_ref()?;
        Ok(blocking(None, move || Ok(ws.list_snapshots()?.into())))
    }
}
