//! A configuration pack's shape: the sections the engine reads once a pack is resolved.
//!
//! Field meanings are documented in the zod pack schema (ts/contracts/pack.ts), from which the
//! published JSON Schema (packs/pack.schema.json) is generated.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use sha2::Digest as _;

/// A configuration pack, as resolved for one workspace ([`super::packs::resolve`]).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Pack {
    /// The selected pack's name (`documents`, `code`), as a profile's `pack` names it.
    pub name: String,
    /// The selected pack's version (a positive integer).
    pub version: u32,
    /// What the pack is for.
    pub description: String,
    /// Formats detected from file names; others are read only when a caller forces them.
    pub formats: Vec<String>,
    /// Kind definitions by name.
    #[serde(default)]
    pub kinds: BTreeMap<String, KindDefinition>,
    /// Lane order in formatted output.
    #[serde(default)]
    pub lanes: Vec<String>,
    /// Settings a single request may override (`output.limit`, `rerank`, …).
    #[serde(default)]
    pub request_overrides: Vec<String>,
    /// Relation types by name.
    #[serde(default)]
    pub relations: BTreeMap<String, RelationDefinition>,
    /// Query modes by name: what a use of the evidence selects and requires.
    #[serde(default)]
    pub modes: BTreeMap<String, ModeDefinition>,
    /// How units are grouped into windows.
    pub chunking: Chunking,
    /// The lexical channel's analyzer and term weighting.
    pub lexical: Lexical,
    /// Identifier patterns registered for the exact channel.
    pub identifiers: Identifiers,
    /// How the channels' rankings are fused.
    pub fusion: Fusion,
    /// What one query returns.
    pub output: Output,
    /// Graph expansion limits (code packs); the built-in defaults otherwise.
    #[serde(default)]
    pub graph: Graph,
    /// The text (dense) channel's settings, used when a workspace enables embeddings.
    #[serde(default)]
    pub text: Text,
    /// Provider prices for the dry run's cost estimate.
    #[serde(default)]
    pub prices: Prices,
}

/// What a source is and how its evidence is to be read: a versioned definition in a pack.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct KindDefinition {
    /// Bumped whenever the definition changes meaning; part of the eligibility fingerprint.
    pub version: u32,
    /// What a source of this kind is.
    pub description: String,
    /// How evidence of this kind is to be interpreted.
    pub role: String,
    /// The lane its evidence is grouped in (one of the pack's `lanes`).
    pub lane: String,
    /// How its text is normalised into units.
    pub normalisation: Normalisation,
    /// The formats a source of this kind is expected in; under the `format` strategy a single
    /// one is forced on the kind's files, whatever their names say.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub formats: Vec<String>,
    /// Names of the identifier patterns (`identifiers.patterns`) that cite it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub identifiers: Vec<String>,
    /// Typed filter fields its sources and records carry, by facet name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub facets: BTreeMap<String, Facet>,
    /// JSON Schemas of the structured records the kind holds, by record type.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub schemas: BTreeMap<String, serde_json::Value>,
    /// How records of each type are read from row-shaped units (table rows, CSV rows, JSON
    /// objects), by record type.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub records: BTreeMap<String, RecordRule>,
}

/// A query mode: the lanes a use of the evidence draws on (in order), the ones it must find
/// evidence in, and what a decision made from the answer must do.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ModeDefinition {
    /// What the mode is for.
    pub description: String,
    /// The lanes it draws on, in the order output groups them (the pack's other lanes after);
    /// sources whose kind is in another lane, or that have no kind, are not eligible.
    pub lanes: Vec<String>,
    /// Lanes an answer must hold evidence from; a missing one is a coverage gap.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub required_lanes: Vec<String>,
    /// What a decision made from the answer must do, returned with it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub decision_requirements: Vec<String>,
}

/// A relation type between evidence objects named by key: which kinds it joins, how many of
/// each side it allows, and how assertions of it may come about.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RelationDefinition {
    /// What an assertion of it states.
    pub description: String,
    /// Kinds its subject may be.
    pub from: Vec<String>,
    /// Kinds its object may be.
    pub to: Vec<String>,
    /// `directed`, or `symmetric` (A→B also states B→A).
    pub direction: String,
    /// `one_to_one`, `one_to_many`, `many_to_one` or `many_to_many` (`one_to_many`: a subject
    /// relates to many objects, an object to one subject); an assertion that breaks it is refused.
    pub cardinality: String,
    /// How assertions of it may come about: `parsed` and `declared` ones are accepted as stored,
    /// `proposed` ones wait for review.
    pub creation: Vec<String>,
    /// Its name read from the object (`obsoleted_by`); `None` when it has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inverse: Option<String>,
    /// Whether an assertion must cite the evidence (a unit) that supports it (default true).
    #[serde(default = "yes")]
    pub requires_support: bool,
}

fn yes() -> bool {
    true
}

/// Where a record's fields are in a row: for each field, the column names (or JSON keys) it
/// may be under, first match wins.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RecordRule {
    /// Columns holding the record's key (its `id`).
    pub key: Vec<String>,
    /// Put before a key that lacks it (`1.2.3` in a chapter table is `V1.2.3`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_prefix: Option<String>,
    /// A key must match this (linear-time regex), after the prefix; other rows are not records.
    pub key_pattern: String,
    /// Fields that are the key's first N dot-separated parts (`chapter: 1` of `V1.2.3` is `V1`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub key_parts: BTreeMap<String, usize>,
    /// Other fields of the record, by field name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub fields: BTreeMap<String, Vec<String>>,
}

impl KindDefinition {
    /// sha256 of the definition as the engine reads it: a change of meaning changes it, a
    /// reformatted pack file does not.
    #[must_use]
    pub fn fingerprint(&self) -> String {
        let canonical = serde_json::to_vec(self).unwrap_or_default();
        hex::encode(sha2::Sha256::digest(&canonical))
    }

    /// What of the definition extraction reads (record rules and their schemas), for the
    /// extraction fingerprint; `None` when it reads nothing of it, so a kind without records
    /// keeps the fingerprint it had and a changed facet description re-extracts nothing.
    #[must_use]
    pub fn extraction_fingerprint(&self) -> Option<String> {
        if self.records.is_empty() {
            return None;
        }
        let canonical = serde_json::to_vec(&(&self.records, &self.schemas)).unwrap_or_default();
        Some(hex::encode(&sha2::Sha256::digest(&canonical)[..16]))
    }
}

/// Which of the engine's normalisation algorithms a kind's text goes through.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Strategy {
    /// The format's own parser (Markdown sections, PDF pages, code symbols, …).
    Format,
    /// Legislative structure: recitals, articles, paragraphs, points (plain text).
    Legal,
    /// An RFC's numbered sections, page furniture left out (plain text).
    Rfc,
}

impl Strategy {
    /// The strategy names, for the error that says a new one needs code.
    pub const NAMES: [&'static str; 3] = ["format", "legal", "rfc"];
}

/// `normalisation` of a kind.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Normalisation {
    /// The algorithm.
    pub strategy: Strategy,
}

/// A typed filter field a kind declares.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Facet {
    /// `string`, `enum`, `number`, `date` or `boolean`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The allowed values of an enum facet.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<String>,
    /// What the facet's values mean.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// The text channel: what is embedded, with which provider models, and how deep it ranks.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Text {
    /// `window` or `window+capsule`.
    #[serde(default = "default_representation")]
    pub representation: String,
    /// Candidates the text channel ranks per query (at least this, or three per requested segment).
    #[serde(default = "default_text_depth")]
    pub depth: usize,
    /// Model names per provider (`voyage`, `voyage_contextual`); the local provider reads its
    /// model from a directory instead.
    #[serde(default)]
    pub models: std::collections::BTreeMap<String, String>,
    /// The reranking model (Voyage); `[rerank] model` overrides it.
    #[serde(default)]
    pub rerank_model: Option<String>,
    /// Fused candidates the reranker reorders (default 30; `[rerank] depth` overrides it).
    #[serde(default = "default_rerank_depth")]
    pub rerank_depth: usize,
}

fn default_representation() -> String {
    "window+capsule".into()
}

fn default_text_depth() -> usize {
    30
}

fn default_rerank_depth() -> usize {
    30
}

impl Default for Text {
    fn default() -> Self {
        Self {
            representation: default_representation(),
            depth: default_text_depth(),
            models: std::collections::BTreeMap::new(),
            rerank_model: None,
            rerank_depth: default_rerank_depth(),
        }
    }
}

/// A dated price table: US dollars per million input tokens, by model.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Prices {
    /// The day the prices were read from the provider's price page (YYYY-MM-DD).
    #[serde(default)]
    pub as_of: String,
    /// Where they were read.
    #[serde(default)]
    pub source: String,
    /// US dollars per million input tokens, by model name; a model without a price gets no
    /// estimate (the local model costs nothing).
    #[serde(default)]
    pub usd_per_million_tokens: std::collections::BTreeMap<String, f64>,
}

/// Bounded expansion for the graph channel.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Graph {
    /// Hops followed from each seed symbol (a pack may set 0 to 4; default 2); 0 turns the
    /// expansion off.
    pub depth: usize,
    /// Relations followed per symbol and direction, each to a distinct symbol (a pack may set 1
    /// to 50; default 6).
    pub fanout: usize,
    /// Top fused candidates of the other channels expanded from (a pack may set 1 to 100;
    /// default 5).
    pub seeds: usize,
    /// Symbols reached per query at most, the seeds not counted (a pack may set 1 to 1000;
    /// default 60).
    pub max_nodes: usize,
    /// Relation kinds followed.
    #[serde(default = "default_followed")]
    pub relations: Vec<String>,
    /// Whether relations are also followed backwards (to callers and subclasses); off by default,
    /// since callers are mostly tests (dev set: file MRR 0.476 with callers, 0.560 without).
    #[serde(default = "default_false")]
    pub callers: bool,
}

/// Calls and inheritance; plain name references (a class attribute's default, an argument) were
/// noise on the SWE-bench-style dev set (bench/results/eval-swebench-dev.md).
fn default_followed() -> Vec<String> {
    ["calls", "inherits", "implements"]
        .map(String::from)
        .to_vec()
}

fn default_false() -> bool {
    false
}

impl Default for Graph {
    fn default() -> Self {
        Self {
            depth: 2,
            fanout: 6,
            seeds: 5,
            max_nodes: 60,
            relations: default_followed(),
            callers: false,
        }
    }
}

/// Window sizes, in `cl100k_base` tokens: how a source's units are grouped into the windows
/// that are indexed and returned.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Chunking {
    /// The size a window aims for (default 512).
    pub target_tokens: usize,
    /// A window under a quarter of the target may grow to this to take the next unit whole; a
    /// unit larger than this is split into pieces near the target (default 800).
    pub soft_ceiling_tokens: usize,
}

/// The lexical (BM25) channel's analyzer and term weighting; a change rebuilds the lexical
/// generation.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Lexical {
    /// The language of the stop words and the stemmer: `english` (default), `french`, `german`
    /// or `spanish`.
    pub language: String,
    /// Whether index and query terms are stemmed (Snowball; default on).
    pub stemmer: bool,
    /// Whether the language's stop words are left out of index and queries (default off; on in
    /// the `documents` pack, off in `code`, where they are keywords).
    pub stopwords: bool,
    /// Weight of a query term's match in the context capsule (title, heading path), relative to
    /// its match in the body; 0 leaves the capsule unsearched (default 0.5).
    pub capsule_boost: f32,
    /// Index camelCase / letter-digit identifier parts beside the whole identifier (code packs).
    #[serde(default)]
    pub split_identifiers: bool,
    /// How a query term's BM25 contribution is weighted by how many documents hold it.
    #[serde(default)]
    pub idf: Idf,
    /// A query with more distinct terms keeps only this many, the most selective (rarest) first.
    #[serde(default)]
    pub max_query_terms: Option<usize>,
}

/// The inverse document frequency a query term is weighted with.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Idf {
    /// Lucene's `ln(1 + (N − df + 0.5) / (df + 0.5))` (tantivy's BM25): every term adds something,
    /// however common.
    #[default]
    Lucene,
    /// Robertson–Spärck Jones `ln((N − df + 0.5) / (df + 0.5))`, floored at 0: a term in half the
    /// corpus or more adds nothing (SQLite FTS5's choice).
    Probabilistic,
}

/// Explicit identifiers (`RFC 6749`, `Article 5(1)(a)`) the exact channel finds in units and
/// queries.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Identifiers {
    /// The patterns, read against every unit at ingestion and every query (engine default: none).
    pub patterns: Vec<IdentifierPattern>,
}

/// One identifier pattern: its name, its regex and how a match is written.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct IdentifierPattern {
    /// The pattern's name (`rfc`, `article`): part of its matches' identifier kind, and what a
    /// kind's `identifiers` cite.
    pub name: String,
    /// A Rust regex, matched case-insensitively (linear time: no look-around or back-references).
    pub regex: String,
    /// How a match is written as an identifier, from the regex's named groups (`RFC ${rfc}
    /// §${section}`), so that different spellings of one reference (`Section 4.1.2 of RFC 6749`,
    /// `RFC 6749 §4.1.2`) are one identifier. Absent: the match as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub canonical: Option<String>,
}

/// Weighted reciprocal-rank fusion of the channels' rankings: `Σ weight / (k + rank)`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Fusion {
    /// The rank constant: the larger, the less a better rank counts over a worse (default 60).
    pub k: f64,
    /// Each channel's weight.
    pub weights: FusionWeights,
    /// Multiplies the fused score of windows from test files (code kinds; `test_*.py`, `tests/`,
    /// `*.spec.ts`, …). 1 keeps them level.
    #[serde(default = "default_test_weight")]
    pub test_weight: f64,
}

fn default_test_weight() -> f64 {
    1.0
}

/// Each channel's weight in the fusion.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FusionWeights {
    /// The exact (identifier) channel's weight (default 2).
    pub exact: f64,
    /// The lexical (BM25) channel's weight (default 1).
    pub lexical: f64,
    /// The graph channel's weight (DESIGN §9: 0.35).
    #[serde(default = "default_graph_weight")]
    pub graph: f64,
    /// The text channel's weight (DESIGN §9: 1).
    #[serde(default = "default_text_weight")]
    pub text: f64,
    /// The visual channel's weight (DESIGN §9: 0.7).
    #[serde(default = "default_visual_weight")]
    pub visual: f64,
    /// The summary channel's weight (the windows a matching node of the summary tree brings):
    /// 1, chosen against 0.5, 1.5 and 2 on the dev half of the multi-passage set
    /// (bench/results/raptor.md).
    #[serde(default = "default_summary_weight")]
    pub summary: f64,
}

fn default_summary_weight() -> f64 {
    1.0
}

fn default_visual_weight() -> f64 {
    0.7
}

fn default_text_weight() -> f64 {
    1.0
}

fn default_graph_weight() -> f64 {
    0.35
}

/// What one query returns; a request may override the fields the pack lists in
/// `request_overrides`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Output {
    /// Tokens (`cl100k_base`) the returned segments may take together; a segment that would go
    /// past it is left out and the result marked truncated (default 4000).
    pub budget_tokens: usize,
    /// Segments returned per source at most; 0: no limit (default 3).
    pub max_per_source: usize,
    /// Segments returned at most (default 10); a query's limit must be 1 to 1000.
    pub limit: usize,
}
