//! The query path: pin a snapshot → eligibility → channels → weighted RRF → segments → budget.

pub(crate) mod hydrate;
mod run;
mod visual;

pub(crate) use run::run;

use serde::{Deserialize, Serialize};

pub use crate::graph::Hop;
pub use crate::safety::Safety;

/// The result contract version.
pub const RESULT_VERSION: u32 = 1;

/// A search request (the TS `QueryRequest` zod schema is the public form of this).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct QueryRequest {
    pub query: String,
    #[serde(default)]
    pub collections: Vec<String>,
    #[serde(default)]
    pub kinds: Vec<String>,
    /// Facet conditions (`level>=2`, `jurisdiction=EU`, `decided=2024-01-01..2024-12-31`), all
    /// of which a source must satisfy.
    #[serde(default)]
    pub facets: Vec<String>,
    #[serde(default)]
    pub limit: Option<usize>,
    #[serde(default)]
    pub budget_tokens: Option<usize>,
    /// Segments per source; 0 means unlimited.
    #[serde(default)]
    pub max_per_source: Option<usize>,
    #[serde(default)]
    pub snapshot_id: Option<i64>,
    /// Channels to run (default: the profile's).
    #[serde(default)]
    pub channels: Option<Vec<String>>,
    #[serde(default)]
    pub agent_id: Option<String>,
    #[serde(default)]
    pub task_id: Option<String>,
    /// Per segment, each channel's score beside its rank, and the rerank score.
    #[serde(default)]
    pub explain: bool,
    /// Whether to rerank when `[rerank]` is configured (default: yes).
    #[serde(default)]
    pub rerank: Option<bool>,
    /// Also run the graph channel, on top of the profile's (or the requested) channels.
    #[serde(default)]
    pub graph: bool,
    /// A mode the pack defines (`compliance`, `implementation`): the lanes drawn on, in order,
    /// those that must hold evidence, and what a decision made from the answer must do.
    #[serde(default)]
    pub mode: Option<String>,
    /// Only sources labelled at or below this sensitivity level (never above the ceiling).
    #[serde(default)]
    pub max_sensitivity: Option<String>,
}

/// Where a segment comes from.
#[derive(Debug, Clone, Serialize)]
#[allow(missing_docs)]
pub struct SourceRef {
    pub source_id: i64,
    pub uri: String,
    pub path: String,
    pub collection: String,
    /// The kind the source was assigned (`None`: none, only its format).
    pub kind: Option<String>,
    /// How its bytes were parsed.
    pub format: String,
    /// Its kind's lane (`authority`, `standards`, …), when it has a kind.
    pub lane: Option<String>,
}

/// The exact revision a segment was read from.
#[derive(Debug, Clone, Serialize)]
#[allow(missing_docs)]
pub struct RevisionRef {
    pub revision_id: i64,
    pub seq: i64,
    pub sha256: String,
    /// The repository commit the bytes were captured at, when they came from a Git checkout.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
}

/// Where in the retained bytes a segment lies.
#[derive(Debug, Clone, Serialize)]
#[allow(missing_docs)]
pub struct Locator {
    pub byte_start: i64,
    pub byte_end: i64,
    pub line_start: i64,
    pub line_end: i64,
    pub col_start: i64,
    pub col_end: i64,
    pub heading_path: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub json_pointer: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub anchor: Option<String>,
    /// For a document (DOCX, PDF): where the window sits in it; the byte and line offsets above
    /// then index the document's derived text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub document: Option<DocumentLocator>,
}

pub use crate::parse::document::DocPlace;

/// Where a document window sits: the places of its first and last units.
#[derive(Debug, Clone, Serialize)]
#[allow(missing_docs)]
pub struct DocumentLocator {
    pub first: DocPlace,
    pub last: DocPlace,
    /// PDF and image windows: the region covered on each page, `[page, x0, y0, x1, y1]` in PDF
    /// points (an image's pixels), origin bottom-left; what a client crops to show the evidence.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub regions: Vec<[f64; 5]>,
}

/// One channel's rank for a segment.
#[derive(Debug, Clone, Serialize)]
#[allow(missing_docs)]
pub struct ChannelRank {
    pub channel: &'static str,
    pub rank: usize,
    /// The channel's own score (BM25 for lexical, cosine similarity for text), with `explain`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
}

/// Evidence assembled at query time.
#[derive(Debug, Clone, Serialize)]
#[allow(missing_docs)]
pub struct Segment {
    pub id: String,
    pub rank: usize,
    /// The fused (weighted RRF) score.
    pub score: f64,
    /// The reranker's relevance score, when reranking ran and reached this segment.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rerank_score: Option<f64>,
    pub channels: Vec<ChannelRank>,
    pub snapshot_id: i64,
    pub chunk_id: i64,
    pub unit_ids: Vec<i64>,
    pub source: SourceRef,
    pub revision: RevisionRef,
    pub locator: Locator,
    pub text: String,
    pub token_count: usize,
    pub citation: String,
    /// How the graph channel reached this segment from a top candidate (seed first); empty
    /// unless the graph channel ranked it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub found_via: Vec<Hop>,
    /// How far it can be trusted: its collection's trust.
    pub trust_level: crate::trust::Trust,
    /// When its content became what it is.
    pub freshness: crate::trust::Freshness,
    #[serde(flatten)]
    pub safety: Safety,
}

/// A citation a person or agent can follow.
#[derive(Debug, Clone, Serialize)]
#[allow(missing_docs)]
pub struct Citation {
    pub segment_id: String,
    pub label: String,
    pub uri: String,
    pub path: String,
    pub revision_id: i64,
    pub sha256: String,
    pub line_start: i64,
    pub line_end: i64,
    pub byte_start: i64,
    pub byte_end: i64,
}

/// What the query saw and kept.
#[derive(Debug, Clone, Serialize, Default)]
#[allow(missing_docs)]
pub struct Coverage {
    pub eligible_sources: i64,
    pub channels: Vec<ChannelCoverage>,
    pub fused_candidates: usize,
    pub returned: usize,
    pub dropped_by_source_limit: usize,
    pub dropped_by_budget: usize,
    pub dropped_as_duplicate: usize,
}

/// One channel's contribution.
#[derive(Debug, Clone, Serialize)]
#[allow(missing_docs)]
pub struct ChannelCoverage {
    pub channel: &'static str,
    pub weight: f64,
    pub candidates: usize,
}

/// The scope actually applied.
#[derive(Debug, Clone, Serialize)]
#[allow(missing_docs)]
pub struct AppliedScope {
    pub snapshot_id: Option<i64>,
    pub collections: Vec<String>,
    pub kinds: Vec<String>,
    pub facets: Vec<String>,
    /// The mode applied, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    pub channels: Vec<String>,
    pub limit: usize,
    pub max_per_source: usize,
    /// The reranker applied (`provider/model`), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rerank: Option<String>,
}

/// How the output budget was applied.
#[derive(Debug, Clone, Serialize)]
#[allow(missing_docs)]
pub struct BudgetContract {
    pub budget_tokens: usize,
    pub used_tokens: usize,
    pub tokenizer: &'static str,
    /// What the budget counts.
    pub measure: &'static str,
    pub truncated: bool,
}

/// One check on an answer.
#[derive(Debug, Clone, Serialize)]
#[allow(missing_docs)]
pub struct Check {
    /// `superseded_sources`, `quoted_instructions`.
    pub name: &'static str,
    /// `pass` or `warn`.
    pub status: &'static str,
    pub detail: String,
}

/// Something asked for with no evidence in the answer.
#[derive(Debug, Clone, Serialize)]
#[allow(missing_docs)]
pub struct CoverageGap {
    /// `identifier` or `lane`.
    pub kind: &'static str,
    pub name: String,
    pub detail: String,
}

/// An accepted relation assertion touching a returned segment's document or record.
#[derive(Debug, Clone, Serialize)]
#[allow(missing_docs)]
pub struct ResultRelation {
    pub id: i64,
    pub relation: String,
    pub from_key: String,
    pub to_key: String,
    /// `parsed` or `declared` (or `proposed`, once a review accepted it).
    pub method: String,
    /// `path:line-line` of the unit that supports it.
    pub support: Option<String>,
}

/// The versioned query result.
#[derive(Debug, Clone, Serialize)]
#[allow(missing_docs)]
pub struct QueryResult {
    pub version: u32,
    pub run_id: String,
    pub snapshot_id: Option<i64>,
    pub query: String,
    pub applied_scope: AppliedScope,
    pub segments: Vec<Segment>,
    /// Summaries of the summary tree that led to segments, or stand above them: derived text,
    /// never a quotation; each names the segments under it.
    pub summaries: Vec<ResultSummary>,
    /// The pack's lane order: formatted output groups segments by lane in this order.
    pub lanes: Vec<String>,
    /// Accepted relation assertions about what the segments are (`RFC 3986 obsoletes RFC
    /// 2396`): an answer from a superseded source says so.
    pub relations: Vec<ResultRelation>,
    /// What was checked about the answer (a cited source obsoleted or superseded, quoted text
    /// addressing an agent), each passed or with a warning.
    pub checks: Vec<Check>,
    /// What was asked for and has no evidence here: identifiers the query names that no eligible
    /// unit carries, lanes the mode requires that no segment comes from.
    pub coverage_gaps: Vec<CoverageGap>,
    /// What a decision made from the answer must do, as the mode states it.
    pub decision_requirements: Vec<String>,
    pub citations: Vec<Citation>,
    pub coverage: Coverage,
    pub warnings: Vec<String>,
    pub budget_contract: BudgetContract,
    /// Time per stage, in order.
    pub trace: Vec<TraceStage>,
    pub duration_ms: f64,
}

/// A node of the summary tree in a result.
#[derive(Debug, Clone, Serialize)]
pub struct ResultSummary {
    /// The node (`summary_nodes.id`).
    pub node_id: i64,
    /// Height above the windows (1 summarises windows).
    pub level: u32,
    /// `document` (inside one source) or `corpus` (across a collection).
    pub scope: String,
    /// `hit`: the summary channel ranked it and its windows are among the segments; `context`:
    /// the node directly above a segment's window.
    pub role: &'static str,
    /// Its similarity to the query (hits).
    pub score: Option<f64>,
    /// The summary: derived from the windows under it, not a quotation of any source.
    pub text: String,
    /// `extractive` or the provider that wrote it.
    pub summarizer: String,
    /// The model that wrote it (none for an extractive summary).
    pub model: Option<String>,
    /// Windows under it.
    pub leaf_count: usize,
    /// The segments of this result under it.
    pub segment_ids: Vec<String>,
    /// Rendered tokens it takes of the budget.
    pub token_count: usize,
    /// The snapshot the tree was built from.
    pub built_from_snapshot_id: i64,
    /// The safety detector's verdict on the summary's text.
    pub may_contain_instructions: bool,
}

/// One stage of the query path and its duration.
#[derive(Debug, Clone, Serialize)]
#[allow(missing_docs)]
pub struct TraceStage {
    pub stage: &'static str,
    pub ms: f64,
    /// Candidates a channel stage produced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub candidates: Option<usize>,
    /// The provider call the stage made (query embedding, reranking).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider: Option<ProviderCall>,
}

/// A provider call made while answering a query.
#[derive(Debug, Clone, Serialize)]
#[allow(missing_docs)]
pub struct ProviderCall {
    pub provider: String,
    pub model: String,
    pub tokens: usize,
    pub ms: f64,
}
