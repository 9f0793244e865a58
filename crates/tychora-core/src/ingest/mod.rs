//! `add`/sync as a durable job: capture → parse → commit canonical rows → build and verify an index
//! generation → switch the snapshot pointer in one transaction → receipt.
//!
//! A crash at any point leaves the previous snapshot published and intact: canonical rows of an
//! unfinished job are unreferenced by any snapshot, and an unpublished generation directory is
//! removed by the next open's garbage collection.

mod commit;
mod prepare;
mod rebuild;
mod records;
mod refusals;
mod relabel;
pub(crate) mod relations;
mod run;
mod selector;
mod targets;
mod visual;
mod withdraw;

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

pub use crate::capture::Exclusion;
use crate::config::{KindDefinition, Pack, Strategy};
use crate::engine::Engine;
use crate::error::{Diagnostic, Error, Result};
use crate::job::{JobKind, JobState, Progress};
use crate::parse::{Format, FormatOverride};
use crate::store::tx::Tx;
use targets::{agent_may_capture, capture_roots};

pub(crate) use commit::stored_diagnostics;
pub(crate) use rebuild::rebuild;
pub use rebuild::{RebuildReport, Repaired};
pub use relabel::RelabelReport;
pub(crate) use relabel::relabel;
pub(crate) use withdraw::{Removal, withdraw};
pub use withdraw::{Tombstone, WithdrawReport, WithdrawnSource};

/// How a publication of this workspace gets its vectors (`None` without `[embeddings]`).
fn text_publication<'a>(
    engine: &'a Engine,
    conn: &dyn Tx,
    embedder: Option<&'a std::sync::Arc<dyn crate::vector::Embedder>>,
    dir: &'a Path,
) -> Result<Option<crate::snapshot::TextPublication<'a>>> {
    let Some(embedder) = embedder else {
        return Ok(None);
    };
    Ok(Some(crate::snapshot::TextPublication {
        dir,
        vectors: engine.vector_store(),
        family_id: crate::store::vectors::family_id(conn, embedder.spec())?,
        embedder: embedder.as_ref(),
        cache: engine.user_cache(),
        budget: engine.embed_budget(),
        // Layers are the embedded files' incremental form, and only where this daemon's files
        // are the publisher's (see `TextPublication::layers`).
        layers: engine.canonical().postgres_store().is_none()
            && engine.vector_store().local_dir().is_some(),
    }))
}

/// Makes sure the pictures of `members` have vectors of the visual family before they are
/// published (a workspace with `[visual]` and a multimodal embedder), so a snapshot never answers
/// with a visual channel that silently misses its pictures. `None` without the channel.
fn ensure_visual(
    engine: &Engine,
    conn: &dyn Tx,
    members: &[crate::snapshot::Member],
    on_progress: &(dyn Fn(Progress) + Sync),
) -> Result<Option<crate::vector::VisualReport>> {
    let (Some(settings), Some(embedder)) = (&engine.config().visual, engine.visual()) else {
        return Ok(None);
    };
    let report = visual::ensure(
        conn,
        engine.artifacts(),
        embedder.as_ref(),
        members,
        &|collection| settings.permits(collection),
        (
            engine.config().documents.max_image_pixels,
            u64::from(engine.config().documents.worker_memory_mb) << 20,
        ),
        &|done, total| {
            on_progress(Progress {
                phase: crate::job::Phase::Embed,
                done,
                total,
            });
        },
    )?;
    Ok(Some(report))
}

/// What to add.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct AddRequest {
    /// Files or directories.
    pub paths: Vec<String>,
    /// Target collection (default `default`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collection: Option<String>,
    /// The kind of every file (a kind the pack defines: `regulation`, `standard`, …); its
    /// normalisation may choose the format (`legal`). A format name is taken as `format`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The format every file is parsed as, instead of the one its name implies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// Facet values every file gets (`{"level": 2}`), typed by the facets `kind` declares.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub facets: BTreeMap<String, serde_json::Value>,
    /// Curated knowledge: the trust of the collection it writes and when its content became what
    /// it is. Only the owner's `migrate apply` sends one; without it a capture is a captured
    /// source, refused in a collection of another trust.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stamp: Option<crate::trust::Stamp>,
    /// The sensitivity label of every file (one of `[sensitivity] levels`; default: a new
    /// source gets `[sensitivity] default`, a known one keeps its label). Above the ceiling the
    /// add is refused and nothing is captured. Only the owner labels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sensitivity: Option<String>,
}

/// Who asked for a capture; it bounds where the capture may read.
///
/// The owner (the CLI, the library, the owner's token over HTTP) may register a new root when
/// `capture.auto_add_roots` is on. An agent (MCP, the agent token over HTTP) may only capture by
/// absolute path inside the roots already configured or registered: an agent-facing credential
/// can never widen what the workspace reads. The requester is stored with the queued job, so a job
/// resumed after a restart keeps its bounds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Requester {
    /// The workspace's owner.
    Owner,
    /// An agent; also what a job recorded before requesters existed is read as (the safe side).
    #[default]
    Agent,
}

impl Requester {
    /// `owner` or `agent`.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Owner => "owner",
            Self::Agent => "agent",
        }
    }

    /// Parses `owner` / `agent`.
    ///
    /// # Errors
    /// `E_INVALID_ARGUMENT` for anything else.
    pub fn parse(value: &str) -> Result<Self> {
        match value {
            "owner" => Ok(Self::Owner),
            "agent" => Ok(Self::Agent),
            other => Err(Error::InvalidArgument(format!(
                "unknown requester {other:?}; expected owner or agent"
            ))),
        }
    }
}

/// A job's stored request: what to add and who asked. Only the engine writes `requester`; the
/// caller's request body cannot carry it (it is not a field of [`AddRequest`]). The jobs that
/// are not adds (withdraw, delete-original, rebuild) have no paths: what they name is in
/// `selector`, `reason` and `snapshot_id`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct JobRequest {
    /// What to add (no paths for a job that is not an add).
    #[serde(flatten)]
    pub request: AddRequest,
    /// Who asked.
    #[serde(default)]
    pub requester: Requester,
    /// Withdraw and delete-original: what they took out (`source:N`, `revision:N`, a URI or a
    /// path).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<String>,
    /// Withdraw and delete-original: the reason recorded with the withdrawal or tombstone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Rebuild: the snapshot that was current when it started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshot_id: Option<i64>,
}

impl JobRequest {
    /// The request a job of `kind` stored, read back. An add stores a [`JobRequest`]; the other
    /// kinds store what they name, and only the owner's CLI or library runs them.
    ///
    /// # Errors
    /// serde's, for a request that does not parse as its kind's.
    pub(crate) fn read(kind: crate::job::JobKind, stored: &str) -> serde_json::Result<Self> {
        if kind == crate::job::JobKind::Add {
            return serde_json::from_str(stored);
        }
        #[derive(Deserialize)]
        struct Named {
            selector: Option<String>,
            reason: Option<String>,
            snapshot_id: Option<i64>,
        }
        let named: Named = serde_json::from_str(stored)?;
        Ok(Self {
            request: AddRequest::default(),
            requester: Requester::Owner,
            selector: named.selector,
            reason: named.reason,
            snapshot_id: named.snapshot_id,
        })
    }
}

/// File counts of a job.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct FileCounts {
    /// Files the walk found and the job took up (a file two targets reach counts once).
    pub scanned: usize,
    /// Files captured as sources the current snapshot did not hold.
    pub added: usize,
    /// Files of published sources read again: new bytes, or a changed extraction fingerprint.
    pub changed: usize,
    /// Files whose bytes equal their published revision's (not parsed again).
    pub unchanged: usize,
    /// Published sources taken out: not found by a sync of their directory, or withdrawn.
    pub removed: usize,
    /// Files left out with a warning (limits, refusals, a label above the sensitivity ceiling).
    pub skipped: usize,
    /// Files that failed with an error (a published source keeps its revision).
    pub failed: usize,
}

/// The receipt of a finished add/sync job.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Receipt {
    /// The job's row id (`job:N`).
    pub job_id: i64,
    /// `succeeded`, `partial` (some files failed) or `failed` (nothing could be captured and
    /// nothing was published).
    pub status: crate::job::Outcome,
    /// The current snapshot after the job: the one it published, else the one already current
    /// (`None`: nothing has been published).
    pub snapshot_id: Option<i64>,
    /// The snapshot current when the job started (`None`: there was none).
    pub previous_snapshot_id: Option<i64>,
    /// Whether this job published a new snapshot.
    pub published: bool,
    /// Files by outcome.
    pub files: FileCounts,
    /// Bytes of the files read in full (unchanged ones included).
    pub bytes_read: u64,
    /// Evidence units extracted from the added and changed files.
    pub units: usize,
    /// Chunk windows of the added and changed files.
    pub chunks: usize,
    /// Wall time from the job's start, in milliseconds (to the snapshot's commit when it
    /// published).
    pub duration_ms: f64,
    /// Paths of the added files, relative to their root.
    pub added: Vec<String>,
    /// Paths of the changed files, relative to their root.
    pub changed: Vec<String>,
    /// Paths of the sources taken out of the snapshot, relative to their root.
    pub removed: Vec<String>,
    /// What reading the files reported (skips, failures, parser warnings; an unchanged file's
    /// earlier findings are repeated).
    pub diagnostics: Vec<Diagnostic>,
    /// Entries the walk left out, counted per rule (hidden names, ignore files, `capture.exclude`).
    #[serde(default)]
    pub excluded: Vec<Exclusion>,
    /// What the text channel's embedding did (workspaces with `[embeddings]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embedding: Option<crate::vector::EmbedReport>,
    /// What the visual channel's embedding did (workspaces with `[visual]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub visual: Option<crate::vector::VisualReport>,
}

/// What `add --dry-run` found: what would be captured and embedded, and what embedding would cost.
#[derive(Debug, Clone, Default, Serialize)]
pub struct AddPlan {
    /// Files by outcome (nothing was recorded).
    pub files: FileCounts,
    /// Bytes read.
    pub bytes: u64,
    /// Evidence units of the new and changed files.
    pub units: usize,
    /// Windows of the new and changed files.
    pub windows: usize,
    /// What the text channel would embed (workspaces with `[embeddings]`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub embedding: Option<EmbedPlan>,
    /// Per-file problems the real run would report.
    pub diagnostics: Vec<Diagnostic>,
    /// Entries the walk would leave out.
    pub excluded: Vec<Exclusion>,
}

/// The embedding part of a dry run.
#[derive(Debug, Clone, Serialize)]
pub struct EmbedPlan {
    /// The configured provider.
    pub provider: String,
    /// Its model.
    pub model: String,
    /// Distinct inputs of the new and changed windows.
    pub inputs: usize,
    /// Already embedded (this workspace or the user cache): free.
    pub cached: usize,
    /// To embed.
    pub new_inputs: usize,
    /// Their tokens (the provider's count, or an estimate where it has no local tokenizer).
    pub new_tokens: u64,
    /// Tokens of the cached inputs.
    pub cached_tokens: u64,
    /// Estimated cost in US dollars (0 for the local model; `None` without a price for the model).
    pub usd: Option<f64>,
    /// The price used, per million tokens, and the date of the pack's price table.
    pub usd_per_million_tokens: Option<f64>,
    /// The date of the price table.
    pub prices_as_of: String,
    /// Tokens embedded by this workspace this month (for the monthly cap).
    pub month_tokens: u64,
    /// The caps, and whether this add would stop on one (`E_BUDGET_EXCEEDED`).
    pub max_embed_tokens_per_job: Option<u64>,
    /// The monthly cap.
    pub max_embed_tokens_per_month: Option<u64>,
    /// Whether the real run would stop before its first provider call.
    pub over_budget: bool,
}

impl EmbedPlan {
    fn new(
        engine: &Engine,
        spec: &crate::vector::FamilySpec,
        estimate: crate::vector::Estimate,
        conn: &dyn Tx,
    ) -> Result<Self> {
        let prices = &engine.pack().prices;
        let price = if spec.provider == "local" {
            Some(0.0)
        } else {
            prices.usd_per_million_tokens.get(&spec.model).copied()
        };
        let budget = engine.embed_budget();
        let month_tokens = crate::vector::month_tokens(&crate::store::vectors::Records(conn))?;
        let over_budget = budget.per_job.is_some_and(|cap| estimate.new_tokens > cap)
            || budget
                .per_month
                .is_some_and(|cap| month_tokens + estimate.new_tokens > cap);
        #[allow(clippy::cast_precision_loss)]
        let usd = price.map(|p| p * estimate.new_tokens as f64 / 1_000_000.0);
        Ok(Self {
            provider: spec.provider.clone(),
            model: spec.model.clone(),
            inputs: estimate.inputs,
            cached: estimate.cached,
            new_inputs: estimate.new_inputs,
            new_tokens: estimate.new_tokens,
            cached_tokens: estimate.cached_tokens,
            usd,
            usd_per_million_tokens: price,
            prices_as_of: prices.as_of.clone(),
            month_tokens,
            max_embed_tokens_per_job: budget.per_job,
            max_embed_tokens_per_month: budget.per_month,
            over_budget,
        })
    }
}

/// Plans an add without writing anything or calling a provider (`add --dry-run`).
///
/// # Errors
/// `E_INVALID_ARGUMENT` for an unknown kind or an empty path list; the local model's errors.
pub(crate) fn plan(
    engine: &Engine,
    request: &AddRequest,
    requester: Requester,
    on_progress: &(dyn Fn(Progress) + Sync),
) -> Result<AddPlan> {
    if request.paths.is_empty() {
        return Err(Error::InvalidArgument("add needs at least one path".into()));
    }
    let conn = engine.writer()?;
    run::AddJob::plan(engine, &*conn, request, requester, on_progress)
}

/// The format a kind's files are parsed as whatever their names say: the one its normalisation
/// needs (`legal`, `rfc`), or its only expected format (`code_file`).
fn forced_by(kind: &KindDefinition) -> Option<FormatOverride> {
    match kind.normalisation.strategy {
        Strategy::Legal => Some(FormatOverride::Fixed(Format::Legal)),
        Strategy::Rfc => Some(FormatOverride::Fixed(Format::Rfc)),
        Strategy::Format => match kind.formats.as_slice() {
            [only] => FormatOverride::from_name(only),
            _ => None,
        },
    }
}

/// What an add assigns to the files it reads: a kind the pack defines, and the format that
/// kind's normalisation (or `--format`) forces.
#[derive(Debug, Clone, Default)]
pub(crate) struct Assignment {
    /// The kind every file of the add gets (`None`: only what its format implies).
    pub kind: Option<String>,
    /// The format every file is parsed as (`None`: from its name).
    pub format: Option<FormatOverride>,
}

impl Assignment {
    /// Reads `--kind` and `--format` against the pack. A format name given as a kind (`--kind
    /// markdown`, as before kinds were separate) is taken as the format.
    ///
    /// # Errors
    /// `E_INVALID_ARGUMENT` for a name that is neither a kind of the pack nor a format.
    pub(crate) fn of(pack: &Pack, kind: Option<&str>, format: Option<&str>) -> Result<Self> {
        let forced = format
            .map(|f| {
                FormatOverride::from_name(f).ok_or_else(|| {
                    Error::InvalidArgument(format!(
                        "unknown format {f:?}; expected markdown, text, json, jsonl, csv, code_file, docx, pdf, image, legal or rfc"
                    ))
                })
            })
            .transpose()?;
        let Some(name) = kind else {
            return Ok(Self {
                kind: None,
                format: forced,
            });
        };
        if let Some(definition) = pack.kinds.get(name) {
            return Ok(Self {
                kind: Some(name.to_string()),
                format: forced.or_else(|| forced_by(definition)),
            });
        }
        match FormatOverride::from_name(name) {
            Some(as_format) => Ok(Self {
                kind: None,
                format: forced.or(Some(as_format)),
            }),
            None => Err(Error::InvalidArgument(format!(
                "unknown kind {name:?}; pack {:?} defines {}",
                pack.name,
                pack.kinds.keys().cloned().collect::<Vec<_>>().join(", ")
            ))),
        }
    }

    /// This add's assignment for one file whose source was given the kind `stored` before: an
    /// add that names no kind keeps it, with the format its normalisation forces (a law stays a
    /// law when its folder is synced again), unless it is only what the file's format implies.
    /// `implied` is the kind the file's format implies ([`implied_kind`]).
    pub(crate) fn for_file(
        &self,
        kinds: &BTreeMap<String, KindDefinition>,
        stored: Option<&str>,
        implied: Option<&str>,
    ) -> Self {
        let Some(stored) = stored.filter(|_| self.kind.is_none()) else {
            return self.clone();
        };
        if implied == Some(stored) {
            return self.clone();
        }
        match kinds.get(stored) {
            Some(definition) => Self {
                kind: Some(stored.to_string()),
                format: self.format.or_else(|| forced_by(definition)),
            },
            None => self.clone(),
        }
    }

    /// The kind a file in `format` is stored with: the assigned one, else the one its format
    /// implies when the pack defines it.
    pub(crate) fn kind_for<'p>(
        &'p self,
        kinds: &BTreeMap<String, KindDefinition>,
        format: Format,
    ) -> Option<&'p str> {
        self.kind
            .as_deref()
            .or_else(|| implied_kind(format).filter(|k| kinds.contains_key(*k)))
    }
}

/// The kind a format implies: code is `code_file`, an RFC's text is `rfc`.
pub(crate) fn implied_kind(format: Format) -> Option<&'static str> {
    implied_kind_of(format.as_str())
}

/// As [`implied_kind`], for a format's stored name.
pub(crate) fn implied_kind_of(format: &str) -> Option<&'static str> {
    match format {
        "code_file" => Some("code_file"),
        "rfc" => Some("rfc"),
        _ => None,
    }
}

/// Validates an add request and records it as a queued job. Queued jobs survive a restart.
/// Does not wait for a running job: it writes through a pooled connection, not the writer.
/// An agent's paths are checked now as well as when the job runs, so a path outside the
/// roots is refused at once rather than in a receipt.
///
/// # Errors
/// `E_INVALID_ARGUMENT` for an empty path list, an unknown kind or (agents) a relative path;
/// `E_FORBIDDEN` when an agent names a path outside the capture roots.
pub(crate) fn enqueue(engine: &Engine, request: &AddRequest, requester: Requester) -> Result<i64> {
    Assignment::of(
        engine.pack(),
        request.kind.as_deref(),
        request.format.as_deref(),
    )?;
    if request.paths.is_empty() {
        return Err(Error::InvalidArgument("add needs at least one path".into()));
    }
    if requester == Requester::Agent {
        let roots = engine.with_reader(|conn| capture_roots(engine, conn))?;
        for raw in &request.paths {
            agent_may_capture(Path::new(raw), &roots)?;
        }
    }
    let queued = JobRequest {
        request: request.clone(),
        requester,
        selector: None,
        reason: None,
        snapshot_id: None,
    };
    let json = serde_json::to_string(&queued).map_err(|e| Error::Internal(e.to_string()))?;
    engine.with_reader(|conn| crate::store::jobs::enqueue(conn, JobKind::Add, &json))
}

/// Ids of queued jobs, oldest first (to resume after a restart).
///
/// # Errors
/// SQLite errors.
pub(crate) fn queued(engine: &Engine) -> Result<Vec<i64>> {
    if engine.lease_ms().is_none() {
        return engine.with_reader(|conn| crate::store::jobs::queued_ids(conn));
    }
    // A shared store: jobs are anyone's to take, and a daemon that died leaves running jobs
    // whose lease expires. Those no one takes again end `interrupted` here (whichever daemon
    // looks first); an add whose holder died is taken again.
    engine.with_reader(|conn| {
        let abandoned = crate::store::jobs::abandon_expired(conn)?;
        if abandoned > 0 {
            log::warn!(
                "{abandoned} job(s) ended interrupted: their daemon stopped renewing its lease"
            );
        }
        crate::store::jobs::takeable_ids(conn)
    })
}

/// Runs a queued job to completion on the single writer.
///
/// # Errors
/// `E_NOT_FOUND` for an unknown job, `E_CONFLICT` if it is not queued, whole-job failures.
pub(crate) fn run_job(
    engine: &Engine,
    job_id: i64,
    on_progress: &(dyn Fn(Progress) + Sync),
) -> Result<Receipt> {
    let conn = engine.writer()?;
    let (status, request_json) = crate::store::jobs::state_and_request(&*conn, job_id)?
        .ok_or_else(|| Error::NotFound {
            what: "job",
            id: job_id.to_string(),
        })?;
    let lease = engine.lease_ms();
    if status != JobState::Queued && (lease.is_none() || status != JobState::Running) {
        return Err(Error::Conflict(format!(
            "job {job_id} is {status}, not queued"
        )));
    }
    let JobRequest {
        request, requester, ..
    } = serde_json::from_str(&request_json)
        .map_err(|e| Error::Corrupt(format!("job {job_id} request: {e}")))?;
    // Claimed only while still queued: an owner's cancellation committed since the read above
    // wins, and the job never runs. On a shared store the take is a lease: of daemons taking at
    // once one gets it, and an add whose holder's lease expired is taken again.
    let taken = match lease {
        None => crate::store::jobs::claim(&*conn, job_id)?,
        Some(lease) => crate::store::jobs::take(&*conn, job_id, crate::job::worker(), lease)?,
    };
    if !taken {
        return Err(Error::Conflict(format!(
            "job {job_id} is no longer queued (cancelled, or taken by another worker, meanwhile)"
        )));
    }
    let record = |p: Progress| {
        engine.progress().record(job_id, &p);
        on_progress(p);
    };
    let result = engine.while_leased(job_id, || {
        run::AddJob::run(engine, &*conn, job_id, &request, requester, &record)
    });
    engine.progress().clear(job_id);
    result.inspect_err(|err| {
        let _ =
            crate::store::jobs::fail(&*conn, job_id, &format!("{}: {err}", err.code().as_str()));
    })
}

/// The id of the unit at `ordinal` of an extraction just written (records and relations found
/// while reading name their unit by ordinal).
pub(super) fn unit_id(tx: &dyn Tx, extraction_id: i64, ordinal: usize) -> Result<i64> {
    crate::store::sources::unit_id(tx, extraction_id, ordinal)
}
