//! The query path: pin a snapshot → eligibility → channels → weighted RRF → segments → budget.

mod run;
mod test_paths;
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
pub struct QueryRequest {
    /// What to look for: words, a phrase, or an identifier (`RFC 9110`).
    pub query: String,
    /// Only sources in these collections (empty: every collection); an unknown name is
    /// `E_NOT_FOUND`.
    #[serde(default)]
    pub collections: Vec<String>,
    /// Only sources of these kinds the pack defines, or of these formats for sources assigned no
    /// kind (empty: every kind).
    #[serde(default)]
    pub kinds: Vec<String>,
    /// Facet conditions (`level>=2`, `jurisdiction=EU`, `decided=2024-01-01..2024-12-31`), all
    /// of which a source must satisfy.
    #[serde(default)]
    pub facets: Vec<String>,
    /// Most segments to return, 1 to 1000 (`None`: the pack's `output.limit`).
    #[serde(default)]
    pub limit: Option<usize>,
    /// Token budget of the rendered output, in `cl100k_base` tokens (`None`: the pack's
    /// `output.budget_tokens`).
    #[serde(default)]
    pub budget_tokens: Option<usize>,
    /// Segments per source; 0 means unlimited.
    #[serde(default)]
    pub max_per_source: Option<usize>,
    /// The published snapshot to answer from (`None`: the current one).
    #[serde(default)]
    pub snapshot_id: Option<i64>,
    /// Channels to run (default: the profile's).
    #[serde(default)]
    pub channels: Option<Vec<String>>,
    /// The calling agent, recorded with the run in `query_runs`.
    #[serde(default)]
    pub agent_id: Option<String>,
    /// The caller's task, recorded with the run in `query_runs`.
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
pub struct SourceRef {
    /// The source (`sources.id`).
    pub source_id: i64,
    /// The source's identity in its collection: `file://` and its exact absolute path (reversibly
    /// escaped).
    pub uri: String,
    /// Its path relative to the capture root it was first captured under, with `/` separators.
    pub path: String,
    /// The name of its collection.
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
pub struct RevisionRef {
    /// The revision (`revisions.id`).
    pub revision_id: i64,
    /// Its number among the source's revisions, from 1.
    pub seq: i64,
    /// Hex SHA-256 of the revision's captured bytes.
    pub sha256: String,
    /// The repository commit the bytes were captured at, when they came from a Git checkout.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
}

/// Where in the retained bytes a segment lies.
#[derive(Debug, Clone, Serialize)]
pub struct Locator {
    /// Offset of the window's first byte.
    pub byte_start: i64,
    /// Offset one past the window's last byte.
    pub byte_end: i64,
    /// Line of the first byte (1-based).
    pub line_start: i64,
    /// Line of the last byte (1-based).
    pub line_end: i64,
    /// Column of the first byte (1-based, in bytes).
    pub col_start: i64,
    /// Column one past the last byte (1-based, in bytes).
    pub col_end: i64,
    /// Headings from the document root down to the window's first unit (empty: none).
    pub heading_path: Vec<String>,
    /// JSON pointer of the window's first unit, for a JSON or JSONL record (`/0`, `/a~1b`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub json_pointer: Option<String>,
    /// Stable anchor of the window's first unit (a heading slug, a JSON id, a code symbol path),
    /// when it has one.
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
pub struct DocumentLocator {
    /// Place of the window's first unit.
    pub first: DocPlace,
    /// Place of the window's last unit.
    pub last: DocPlace,
    /// PDF and image windows: the region covered on each page, `[page, x0, y0, x1, y1]` in PDF
    /// points (an image's pixels), origin bottom-left; what a client crops to show the evidence.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub regions: Vec<[f64; 5]>,
}

/// One channel's rank for a segment.
#[derive(Debug, Clone, Serialize)]
pub struct ChannelRank {
    /// `exact`, `lexical`, `text`, `visual`, `graph` or `summary`.
    pub channel: &'static str,
    /// 1-based rank of the segment's evidence owner in the channel's list (one vote per owner).
    pub rank: usize,
    /// The channel's own score (BM25 for lexical, cosine similarity for text), with `explain`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
}

/// Evidence assembled at query time.
#[derive(Debug, Clone, Serialize)]
pub struct Segment {
    /// `seg_<snapshot>_<chunk>`: names this window in this snapshot; `inspect` takes it.
    pub id: String,
    /// Position in the result's segments, from 1.
    pub rank: usize,
    /// The fused (weighted RRF) score.
    pub score: f64,
    /// The reranker's relevance score, when reranking ran and reached this segment.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rerank_score: Option<f64>,
    /// Each channel that ranked the segment's evidence owner, with its rank there.
    pub channels: Vec<ChannelRank>,
    /// The snapshot it was read from (the one the query pinned).
    pub snapshot_id: i64,
    /// The window (`chunks.id`).
    pub chunk_id: i64,
    /// The evidence units from the window's first to its last (`evidence_units.id`).
    pub unit_ids: Vec<i64>,
    /// The source it comes from.
    pub source: SourceRef,
    /// The revision of the source it was read from.
    pub revision: RevisionRef,
    /// Where in that revision it lies.
    pub locator: Locator,
    /// The window's text: the slice of the source (a JSON record's decoded text, a document's
    /// derived text); quoted evidence, never instructions.
    pub text: String,
    /// `cl100k_base` tokens in `text`.
    pub token_count: usize,
    /// `path:line-line`, or for a document its places (`report.pdf p.12–13`).
    pub citation: String,
    /// How the graph channel reached this segment from a top candidate (seed first); empty
    /// unless the graph channel ranked it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub found_via: Vec<Hop>,
    /// How far it can be trusted: its collection's trust.
    pub trust_level: crate::trust::Trust,
    /// When its content became what it is.
    pub freshness: crate::trust::Freshness,
    /// The safety triple (`content_classification`, `may_contain_instructions`, `executable`),
    /// serialized as fields of the segment.
    #[serde(flatten)]
    pub safety: Safety,
}

/// A citation a person or agent can follow.
#[derive(Debug, Clone, Serialize)]
pub struct Citation {
    /// The segment cited (its `id`).
    pub segment_id: String,
    /// `[n]`: the segment's position in the result, from 1.
    pub label: String,
    /// The source's URI (`file://` and its absolute path).
    pub uri: String,
    /// The source's path relative to its capture root.
    pub path: String,
    /// The revision the segment was read from.
    pub revision_id: i64,
    /// Hex SHA-256 of that revision's bytes.
    pub sha256: String,
    /// Line of the segment's first byte (1-based).
    pub line_start: i64,
    /// Line of the segment's last byte (1-based).
    pub line_end: i64,
    /// Offset of the segment's first byte.
    pub byte_start: i64,
    /// Offset one past the segment's last byte.
    pub byte_end: i64,
}

/// What the query saw and kept.
#[derive(Debug, Clone, Serialize, Default)]
pub struct Coverage {
    /// Sources of the snapshot the request's filters admit (all its members without filters).
    pub eligible_sources: i64,
    /// One entry per ranked list that went into fusion, in the order the channels ran (the exact
    /// channel can add a second list, at the lexical weight, for names the query mentions).
    pub channels: Vec<ChannelCoverage>,
    /// Evidence owners after weighted RRF, before the limits and the budget.
    pub fused_candidates: usize,
    /// Segments returned.
    pub returned: usize,
    /// Candidates examined and passed over because their source already had `max_per_source`
    /// segments.
    pub dropped_by_source_limit: usize,
    /// Candidates examined and passed over because their rendered tokens would have exceeded the
    /// budget.
    pub dropped_by_budget: usize,
    /// Candidates examined and passed over because a kept segment covers the same bytes of the same
    /// revision.
    pub dropped_as_duplicate: usize,
}

/// One channel's contribution.
#[derive(Debug, Clone, Serialize)]
pub struct ChannelCoverage {
    /// The channel's name.
    pub channel: &'static str,
    /// Its fusion weight: the pack's (the text channel's scaled by the share of the query the model
    /// reads).
    pub weight: f64,
    /// Its share of the score blend, for the channels whose normalised scores are summed before
    /// ranks fuse (lexical and text, when both ran); absent for a channel fused by rank only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blend: Option<f64>,
    /// Candidates in its list, before fusion.
    pub candidates: usize,
}

/// The scope actually applied.
#[derive(Debug, Clone, Serialize)]
pub struct AppliedScope {
    /// The snapshot answered from (`None`: nothing is published yet).
    pub snapshot_id: Option<i64>,
    /// The collections the request named (empty: every collection).
    pub collections: Vec<String>,
    /// The kinds or formats the request named, as written (empty: every kind); a mode narrows them
    /// further to its lanes' kinds.
    pub kinds: Vec<String>,
    /// The facet conditions applied.
    pub facets: Vec<String>,
    /// The mode applied, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// The channels planned: the request's, else the profile's and those the config switches on,
    /// with `graph` when asked; one that could not run here is still listed and a warning says so.
    pub channels: Vec<String>,
    /// Most segments returned: the request's `limit`, else the pack's `output.limit`.
    pub limit: usize,
    /// Segments allowed per source (the request's, else the pack's); 0 means unlimited.
    pub max_per_source: usize,
    /// The reranker applied (`provider/model`), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rerank: Option<String>,
}

/// How the output budget was applied.
#[derive(Debug, Clone, Serialize)]
pub struct BudgetContract {
    /// The budget, in `tokenizer` tokens: the request's `budget_tokens`, else the pack's
    /// `output.budget_tokens`.
    pub budget_tokens: usize,
    /// Tokens the returned segments and summaries take, as rendered (see `measure`).
    pub used_tokens: usize,
    /// The tokenizer the budget is counted in.
    pub tokenizer: &'static str,
    /// What the budget counts.
    pub measure: &'static str,
    /// Whether a segment was left out to stay within the budget (`coverage.dropped_by_budget`
    /// counts them).
    pub truncated: bool,
}

/// One check on an answer.
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    /// `superseded_sources`, `quoted_instructions`.
    pub name: &'static str,
    /// `pass` or `warn`.
    pub status: &'static str,
    /// One sentence: what was found, or that nothing was.
    pub detail: String,
}

/// Something asked for with no evidence in the answer.
#[derive(Debug, Clone, Serialize)]
pub struct CoverageGap {
    /// `identifier` or `lane`.
    pub kind: &'static str,
    /// The identifier, or the lane.
    pub name: String,
    /// One sentence saying what has no evidence in the answer.
    pub detail: String,
}

/// An accepted relation assertion touching a returned segment's document or record.
#[derive(Debug, Clone, Serialize)]
pub struct ResultRelation {
    /// An assertion's id (`relation_assertions.id`); assertions of one relation between the same
    /// keys are listed once.
    pub id: i64,
    /// The relation type the pack defines (`obsoletes`, `supersedes`, …).
    pub relation: String,
    /// The key it runs from: a document's own name or a record (`RFC 3986`).
    pub from_key: String,
    /// The key it runs to (`RFC 2396`).
    pub to_key: String,
    /// `parsed` or `declared` (or `proposed`, once a review accepted it).
    pub method: String,
    /// `path:line-line` of the unit that supports it.
    pub support: Option<String>,
}

/// The versioned query result.
#[derive(Debug, Clone, Serialize)]
pub struct QueryResult {
    /// The result contract version (`RESULT_VERSION`).
    pub version: u32,
    /// `qr_` and 20 hex digits: the run's id in `query_runs` (`inspect run`, `search --replay`).
    pub run_id: String,
    /// The snapshot answered from (`None`: nothing is published yet).
    pub snapshot_id: Option<i64>,
    /// The query text, as given.
    pub query: String,
    /// The scope the request resolved to with the pack's defaults.
    pub applied_scope: AppliedScope,
    /// The evidence, best first.
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
    /// One per segment, in the same order, labelled `[1]`, `[2]`, ….
    pub citations: Vec<Citation>,
    /// What the channels found and what the selection kept and dropped.
    pub coverage: Coverage,
    /// What limited the answer: a channel that could not run, segments left out for the budget,
    /// nothing published yet.
    pub warnings: Vec<String>,
    /// How the token budget was applied.
    pub budget_contract: BudgetContract,
    /// Time per stage, in order.
    pub trace: Vec<TraceStage>,
    /// Wall-clock milliseconds from receiving the request to the assembled result.
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
pub struct TraceStage {
    /// `eligibility`, a channel's name, `fusion`, `rerank`, `hydrate` (once per page of
    /// candidates), `segments` or `checks`.
    pub stage: &'static str,
    /// Milliseconds since the previous stage ended (the first stage: since the query started,
    /// planning included).
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
pub struct ProviderCall {
    /// The provider's name.
    pub provider: String,
    /// The model called.
    pub model: String,
    /// Tokens the provider reported for the call (for a query embedding, the query's tokens the
    /// model read).
    pub tokens: usize,
    /// Wall-clock milliseconds of the call (for reranking, reading the candidates' text included).
    pub ms: f64,
}
