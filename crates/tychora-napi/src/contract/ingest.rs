//! Add requests, receipts and progress.

use napi::bindgen_prelude::{Either, Null};
use napi_derive::napi;
use tychora_core::ingest as core;

use super::{count, nullable};

/// Who asks for a capture, as the JS side names it: `owner` may register new roots; `agent` adds
/// only inside existing ones.
pub(crate) fn requester(value: &str) -> tychora_core::Result<core::Requester> {
    core::Requester::parse(value)
}

/// What to add.
#[napi(object)]
pub struct AddRequest {
    /// Files or directories.
    pub paths: Vec<String>,
    /// Target collection (default `default`).
    pub collection: Option<String>,
    /// The kind of every file: one the pack defines (`regulation`, `standard`, …); a format name
    /// is taken as `format`.
    pub kind: Option<String>,
    /// The format every file is parsed as, instead of the one its name implies.
    #[napi(ts_type = "SourceFormat")]
    pub format: Option<String>,
    /// Facet values every file gets (`{ level: 2 }`), typed by the facets `kind` declares.
    #[napi(ts_type = "Record<string, string | number | boolean>")]
    pub facets: Option<serde_json::Value>,
    /// Curated knowledge's stamp (only the owner's `migrate apply` sends one).
    pub stamp: Option<Stamp>,
    /// The sensitivity label of every file (one of `[sensitivity] levels`); only the owner labels.
    pub sensitivity: Option<String>,
}

/// What makes a capture curated knowledge: the trust of the collection it writes, when its
/// content became what it is (ms since the epoch), and the change that made it so.
#[napi(object)]
#[derive(Clone)]
pub struct Stamp {
    #[napi(ts_type = "'approved' | 'rejected_approach' | 'captured_source'")]
    pub trust: String,
    #[napi(js_name = "as_of")]
    pub as_of: i64,
    pub origin: String,
}

impl Stamp {
    fn into_core(self) -> tychora_core::Result<tychora_core::trust::Stamp> {
        Ok(tychora_core::trust::Stamp {
            trust: tychora_core::trust::Trust::parse(&self.trust)?,
            as_of: self.as_of,
            origin: self.origin,
        })
    }

    fn from_core(stamp: tychora_core::trust::Stamp) -> Self {
        Self {
            trust: stamp.trust.as_str().into(),
            as_of: stamp.as_of,
            origin: stamp.origin,
        }
    }
}

/// A facet object's entries (anything else is an empty set, which the core's validation of the
/// contract on the TypeScript side never lets through).
fn facet_map(
    value: Option<serde_json::Value>,
) -> std::collections::BTreeMap<String, serde_json::Value> {
    match value {
        Some(serde_json::Value::Object(map)) => map.into_iter().collect(),
        _ => std::collections::BTreeMap::new(),
    }
}

impl TryFrom<AddRequest> for core::AddRequest {
    type Error = tychora_core::Error;

    fn try_from(value: AddRequest) -> tychora_core::Result<Self> {
        let AddRequest {
            paths,
            collection,
            kind,
            format,
            facets,
            stamp,
            sensitivity,
        } = value;
        Ok(Self {
            paths,
            collection,
            kind,
            format,
            facets: facet_map(facets),
            stamp: stamp.map(Stamp::into_core).transpose()?,
            sensitivity,
        })
    }
}

/// A job's stored request: what to add and who asked.
#[napi(object)]
pub struct JobRequest {
    pub paths: Vec<String>,
    pub collection: Option<String>,
    pub kind: Option<String>,
    #[napi(ts_type = "SourceFormat")]
    pub format: Option<String>,
    #[napi(ts_type = "Record<string, string | number | boolean>")]
    pub facets: Option<serde_json::Value>,
    pub stamp: Option<Stamp>,
    pub sensitivity: Option<String>,
    #[napi(ts_type = "'owner' | 'agent'")]
    pub requester: String,
    /// Withdraw and delete-original: what they took out.
    pub selector: Option<String>,
    /// Withdraw and delete-original: the reason recorded.
    pub reason: Option<String>,
    /// Rebuild: the snapshot that was current when it started.
    #[napi(js_name = "snapshot_id")]
    pub snapshot_id: Option<i64>,
}

impl From<core::JobRequest> for JobRequest {
    fn from(value: core::JobRequest) -> Self {
        let core::JobRequest {
            request:
                core::AddRequest {
                    paths,
                    collection,
                    kind,
                    format,
                    facets,
                    stamp,
                    sensitivity,
                },
            requester,
            selector,
            reason,
            snapshot_id,
        } = value;
        Self {
            paths,
            collection,
            kind,
            format,
            facets: (!facets.is_empty())
                .then(|| serde_json::Value::Object(facets.into_iter().collect())),
            stamp: stamp.map(Stamp::from_core),
            sensitivity,
            requester: requester.as_str().into(),
            selector,
            reason,
            snapshot_id,
        }
    }
}

/// File counts of a job.
#[napi(object)]
pub struct FileCounts {
    pub scanned: i64,
    pub added: i64,
    pub changed: i64,
    pub unchanged: i64,
    pub removed: i64,
    pub skipped: i64,
    pub failed: i64,
}

impl From<core::FileCounts> for FileCounts {
    fn from(value: core::FileCounts) -> Self {
        let core::FileCounts {
            scanned,
            added,
            changed,
            unchanged,
            removed,
            skipped,
            failed,
        } = value;
        Self {
            scanned: count(scanned),
            added: count(added),
            changed: count(changed),
            unchanged: count(unchanged),
            removed: count(removed),
            skipped: count(skipped),
            failed: count(failed),
        }
    }
}

/// A per-file problem; the rest of the job goes on.
#[napi(object)]
pub struct Diagnostic {
    pub path: String,
    #[napi(ts_type = "'info' | 'warning' | 'error'")]
    pub level: String,
    #[napi(ts_type = "ErrorCode")]
    pub code: String,
    pub message: String,
    /// `line:col`, when known.
    pub locator: Option<String>,
}

impl From<tychora_core::Diagnostic> for Diagnostic {
    fn from(value: tychora_core::Diagnostic) -> Self {
        let tychora_core::Diagnostic {
            path,
            level,
            code,
            message,
            locator,
        } = value;
        Self {
            path,
            level: level.as_str().into(),
            code: code.as_str().into(),
            message,
            locator,
        }
    }
}

/// Entries the walk left out under one rule.
#[napi(object)]
pub struct Exclusion {
    pub rule: String,
    pub count: i64,
    pub example: String,
}

impl From<core::Exclusion> for Exclusion {
    fn from(value: core::Exclusion) -> Self {
        let core::Exclusion {
            rule,
            count: n,
            example,
        } = value;
        Self {
            rule,
            count: count(n),
            example,
        }
    }
}

/// The receipt of a finished add/sync job.
#[napi(object)]
pub struct Receipt {
    #[napi(js_name = "job_id")]
    pub job_id: i64,
    #[napi(ts_type = "'succeeded' | 'partial' | 'failed'")]
    pub status: String,
    #[napi(js_name = "snapshot_id")]
    pub snapshot_id: Either<i64, Null>,
    #[napi(js_name = "previous_snapshot_id")]
    pub previous_snapshot_id: Either<i64, Null>,
    pub published: bool,
    pub files: FileCounts,
    #[napi(js_name = "bytes_read")]
    pub bytes_read: i64,
    pub units: i64,
    pub chunks: i64,
    #[napi(js_name = "duration_ms")]
    pub duration_ms: f64,
    pub added: Vec<String>,
    pub changed: Vec<String>,
    pub removed: Vec<String>,
    pub diagnostics: Vec<Diagnostic>,
    pub excluded: Vec<Exclusion>,
    /// What the text channel's embedding did (workspaces with `[embeddings]`).
    pub embedding: Option<EmbedReport>,
    /// What the visual channel's embedding did (workspaces with `[visual]`).
    pub visual: Option<VisualReport>,
}

/// What making sure every picture has a vector of the visual family did.
#[napi(object)]
pub struct VisualReport {
    /// Distinct pictures held by collections that permit upload.
    pub pictures: i64,
    pub cached: i64,
    pub embedded: i64,
    /// Not embeddable: pixels that do not decode within the limits, or bytes no longer retained.
    pub skipped: i64,
    /// Held only by collections that do not permit upload (never sent).
    #[napi(js_name = "not_permitted")]
    pub not_permitted: i64,
    pub tokens: i64,
    pub calls: i64,
    #[napi(js_name = "embed_ms")]
    pub embed_ms: i64,
}

impl From<tychora_core::vector::VisualReport> for VisualReport {
    #[allow(clippy::cast_possible_wrap)]
    fn from(value: tychora_core::vector::VisualReport) -> Self {
        let tychora_core::vector::VisualReport {
            pictures,
            cached,
            embedded,
            skipped,
            not_permitted,
            tokens,
            calls,
            embed_ms,
        } = value;
        Self {
            pictures: count(pictures),
            cached: count(cached),
            embedded: count(embedded),
            skipped: count(skipped),
            not_permitted: count(not_permitted),
            tokens: tokens as i64,
            calls: count(calls),
            embed_ms: embed_ms as i64,
        }
    }
}

/// What making sure every window has a vector did.
#[napi(object)]
pub struct EmbedReport {
    /// Distinct inputs.
    pub inputs: i64,
    #[napi(js_name = "workspace_cached")]
    pub workspace_cached: i64,
    #[napi(js_name = "user_cached")]
    pub user_cached: i64,
    pub embedded: i64,
    #[napi(js_name = "tokens_embedded")]
    pub tokens_embedded: i64,
    pub calls: i64,
    #[napi(js_name = "embed_ms")]
    pub embed_ms: f64,
}

impl From<tychora_core::vector::EmbedReport> for EmbedReport {
    #[allow(clippy::cast_possible_wrap)]
    fn from(value: tychora_core::vector::EmbedReport) -> Self {
        let tychora_core::vector::EmbedReport {
            inputs,
            workspace_cached,
            user_cached,
            embedded,
            tokens_embedded,
            calls,
            embed_ms,
        } = value;
        Self {
            inputs: count(inputs),
            workspace_cached: count(workspace_cached),
            user_cached: count(user_cached),
            embedded: count(embedded),
            tokens_embedded: tokens_embedded as i64,
            calls: count(calls),
            embed_ms,
        }
    }
}

impl From<core::Receipt> for Receipt {
    #[allow(clippy::cast_possible_wrap)]
    fn from(value: core::Receipt) -> Self {
        let core::Receipt {
            job_id,
            status,
            snapshot_id,
            previous_snapshot_id,
            published,
            files,
            bytes_read,
            units,
            chunks,
            duration_ms,
            added,
            changed,
            removed,
            diagnostics,
            excluded,
            embedding,
            visual,
        } = value;
        Self {
            job_id,
            status: status.as_str().into(),
            snapshot_id: nullable(snapshot_id),
            previous_snapshot_id: nullable(previous_snapshot_id),
            published,
            files: files.into(),
            bytes_read: bytes_read as i64,
            units: count(units),
            chunks: count(chunks),
            duration_ms,
            added,
            changed,
            removed,
            diagnostics: diagnostics.into_iter().map(Into::into).collect(),
            excluded: excluded.into_iter().map(Into::into).collect(),
            embedding: embedding.map(Into::into),
            visual: visual.map(Into::into),
        }
    }
}

/// Progress of a running job.
#[napi(object)]
pub struct Progress {
    #[napi(ts_type = "'walk' | 'prepare' | 'commit' | 'embed' | 'index' | 'publish'")]
    pub phase: String,
    /// Items done in this phase.
    pub done: i64,
    /// Items in this phase (0 when unknown).
    pub total: i64,
}

impl From<tychora_core::job::Progress> for Progress {
    fn from(value: tychora_core::job::Progress) -> Self {
        let tychora_core::job::Progress { phase, done, total } = value;
        Self {
            phase: match phase {
                tychora_core::job::Phase::Walk => "walk",
                tychora_core::job::Phase::Prepare => "prepare",
                tychora_core::job::Phase::Commit => "commit",
                tychora_core::job::Phase::Index => "index",
                tychora_core::job::Phase::Publish => "publish",
                tychora_core::job::Phase::Embed => "embed",
            }
            .into(),
            done: count(done),
            total: count(total),
        }
    }
}

/// What `add --dry-run` found (nothing was written, no provider was called).
#[napi(object)]
pub struct AddPlan {
    pub files: FileCounts,
    pub bytes: i64,
    pub units: i64,
    pub windows: i64,
    pub embedding: Option<EmbedPlan>,
    pub diagnostics: Vec<Diagnostic>,
    pub excluded: Vec<Exclusion>,
}

/// The embedding part of a dry run.
#[napi(object)]
pub struct EmbedPlan {
    pub provider: String,
    pub model: String,
    pub inputs: i64,
    pub cached: i64,
    #[napi(js_name = "new_inputs")]
    pub new_inputs: i64,
    #[napi(js_name = "new_tokens")]
    pub new_tokens: i64,
    #[napi(js_name = "cached_tokens")]
    pub cached_tokens: i64,
    /// Estimated cost in US dollars (`null` without a price for the model).
    pub usd: Option<f64>,
    #[napi(js_name = "usd_per_million_tokens")]
    pub usd_per_million_tokens: Option<f64>,
    #[napi(js_name = "prices_as_of")]
    pub prices_as_of: String,
    #[napi(js_name = "month_tokens")]
    pub month_tokens: i64,
    #[napi(js_name = "max_embed_tokens_per_job")]
    pub max_embed_tokens_per_job: Option<i64>,
    #[napi(js_name = "max_embed_tokens_per_month")]
    pub max_embed_tokens_per_month: Option<i64>,
    /// Whether the real run would stop before its first provider call (`E_BUDGET_EXCEEDED`).
    #[napi(js_name = "over_budget")]
    pub over_budget: bool,
}

impl From<core::AddPlan> for AddPlan {
    #[allow(clippy::cast_possible_wrap)]
    fn from(value: core::AddPlan) -> Self {
        let core::AddPlan {
            files,
            bytes,
            units,
            windows,
            embedding,
            diagnostics,
            excluded,
        } = value;
        Self {
            files: files.into(),
            bytes: bytes as i64,
            units: count(units),
            windows: count(windows),
            embedding: embedding.map(|e| {
                let core::EmbedPlan {
                    provider,
                    model,
                    inputs,
                    cached,
                    new_inputs,
                    new_tokens,
                    cached_tokens,
                    usd,
                    usd_per_million_tokens,
                    prices_as_of,
                    month_tokens,
                    max_embed_tokens_per_job,
                    max_embed_tokens_per_month,
                    over_budget,
                } = e;
                EmbedPlan {
                    provider,
                    model,
                    inputs: count(inputs),
                    cached: count(cached),
                    new_inputs: count(new_inputs),
                    new_tokens: new_tokens as i64,
                    cached_tokens: cached_tokens as i64,
                    usd,
                    usd_per_million_tokens,
                    prices_as_of,
                    month_tokens: month_tokens as i64,
                    max_embed_tokens_per_job: max_embed_tokens_per_job.map(|n| n as i64),
                    max_embed_tokens_per_month: max_embed_tokens_per_month.map(|n| n as i64),
                    over_budget,
                }
            }),
            diagnostics: diagnostics.into_iter().map(Into::into).collect(),
            excluded: excluded.into_iter().map(Into::into).collect(),
        }
    }
}

/// One vector generation rewritten from the records.
#[napi(object)]
pub struct Repaired {
    #[napi(js_name = "snapshot_id")]
    pub snapshot_id: i64,
    pub generation: String,
}

/// What `manage rebuild` did.
#[napi(object)]
pub struct RebuildReport {
    #[napi(js_name = "job_id")]
    pub job_id: i64,
    /// Vector generations rewritten in place from the vector records.
    pub repaired: Vec<Repaired>,
    /// Whether the current snapshot's members were published again.
    pub republished: bool,
    pub reason: String,
    #[napi(js_name = "snapshot_id")]
    pub snapshot_id: Either<i64, Null>,
    pub embedding: Option<EmbedReport>,
    pub visual: Option<VisualReport>,
    #[napi(js_name = "duration_ms")]
    pub duration_ms: f64,
}

impl From<core::RebuildReport> for RebuildReport {
    fn from(value: core::RebuildReport) -> Self {
        let core::RebuildReport {
            job_id,
            repaired,
            republished,
            reason,
            snapshot_id,
            embedding,
            visual,
            duration_ms,
        } = value;
        Self {
            job_id,
            repaired: repaired
                .into_iter()
                .map(|r| {
                    let core::Repaired {
                        snapshot_id,
                        generation,
                    } = r;
                    Repaired {
                        snapshot_id,
                        generation,
                    }
                })
                .collect(),
            republished,
            reason,
            snapshot_id: nullable(snapshot_id),
            embedding: embedding.map(Into::into),
            visual: visual.map(Into::into),
            duration_ms,
        }
    }
}
