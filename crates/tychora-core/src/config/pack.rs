//! A configuration pack's shape: the sections the engine reads once a pack is resolved.
//!
//! Field meanings are documented in the zod pack schema (ts/contracts/pack.ts), from which the
//! published JSON Schema (packs/pack.schema.json) is generated.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use sha2::Digest as _;

/// A configuration pack, as resolved for one workspace ([`super::packs::resolve`]).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[allow(missing_docs)] // Field meanings are documented in the zod pack schema (ts/contracts/pack.ts).
pub struct Pack {
    pub name: String,
    pub version: u32,
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
    pub chunking: Chunking,
    pub lexical: Lexical,
    pub identifiers: Identifiers,
    pub fusion: Fusion,
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
#[allow(missing_docs)] // Documented in the zod pack schema.
pub struct KindDefinition {
    pub version: u32,
    pub description: String,
    pub role: String,
    pub lane: String,
    pub normalisation: Normalisation,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub formats: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub identifiers: Vec<String>,
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
#[allow(missing_docs)] // Documented in the zod pack schema.
pub struct ModeDefinition {
    pub description: String,
    pub lanes: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub required_lanes: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub decision_requirements: Vec<String>,
}

/// A relation type between evidence objects named by key: which kinds it joins, how many of
/// each side it allows, and how assertions of it may come about.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[allow(missing_docs)] // Documented in the zod pack schema.
pub struct RelationDefinition {
    pub description: String,
    pub from: Vec<String>,
    pub to: Vec<String>,
    pub direction: String,
    pub cardinality: String,
    pub creation: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inverse: Option<String>,
    #[serde(default = "yes")]
    pub requires_support: bool,
}

fn yes() -> bool {
    true
}

/// Where a record's fields are in a row: for each field, the column names (or JSON keys) it
/// may be under, first match wins.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[allow(missing_docs)] // Documented in the zod pack schema.
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[allow(missing_docs)]
    pub description: Option<String>,
}

/// The text channel: what is embedded, with which provider models, and how deep it ranks.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[allow(missing_docs)] // Documented in the zod pack schema.
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
    /// The reranking model (Voyage) and how many fused candidates it reorders.
    #[serde(default)]
    pub rerank_model: Option<String>,
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
#[allow(missing_docs)]
pub struct Prices {
    /// The day the prices were read from the provider's price page (YYYY-MM-DD).
    #[serde(default)]
    pub as_of: String,
    /// Where they were read.
    #[serde(default)]
    pub source: String,
    #[serde(default)]
    pub usd_per_million_tokens: std::collections::BTreeMap<String, f64>,
}

/// Bounded expansion for the graph channel.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[allow(missing_docs)] // Documented in the zod pack schema.
pub struct Graph {
    pub depth: usize,
    pub fanout: usize,
    pub seeds: usize,
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

#[derive(Debug, Clone, Serialize, Deserialize)]
#[allow(missing_docs)]
pub struct Chunking {
    pub target_tokens: usize,
    pub soft_ceiling_tokens: usize,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[allow(missing_docs)]
pub struct Lexical {
    pub language: String,
    pub stemmer: bool,
    pub stopwords: bool,
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

#[derive(Debug, Clone, Serialize, Deserialize)]
#[allow(missing_docs)]
pub struct Identifiers {
    pub patterns: Vec<IdentifierPattern>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[allow(missing_docs)]
pub struct IdentifierPattern {
    pub name: String,
    pub regex: String,
    /// How a match is written as an identifier, from the regex's named groups (`RFC ${rfc}
    /// §${section}`), so that different spellings of one reference (`Section 4.1.2 of RFC 6749`,
    /// `RFC 6749 §4.1.2`) are one identifier. Absent: the match as written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub canonical: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[allow(missing_docs)]
pub struct Fusion {
    pub k: f64,
    pub weights: FusionWeights,
    /// Multiplies the fused score of windows from test files (code kinds; `test_*.py`, `tests/`,
    /// `*.spec.ts`, …). 1 keeps them level.
    #[serde(default = "default_test_weight")]
    pub test_weight: f64,
}

fn default_test_weight() -> f64 {
    1.0
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[allow(missing_docs)]
pub struct FusionWeights {
    pub exact: f64,
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

#[derive(Debug, Clone, Serialize, Deserialize)]
#[allow(missing_docs)]
pub struct Output {
    pub budget_tokens: usize,
    pub max_per_source: usize,
    pub limit: usize,
}
