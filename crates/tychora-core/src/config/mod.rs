//! Workspace configuration (`workspace.toml`) and the resolved pack it selects.
//!
//! Packs are data (`packs/<name>/pack.json`); the built-in ones are embedded so the engine needs no
//! files beside the binary. The TypeScript side validates the same files with its zod schema.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

mod fingerprints;
mod pack;
mod packs;
mod sensitivity;

pub use fingerprints::StageFingerprints;
pub use pack::*;
pub(crate) use packs::identifier_regex;
pub(crate) use packs::record_schema_options;
pub use packs::{
    PACK_SCHEMA, PackCheck, PackFile, Resolved, ResolvedValue, check_pack, resolve, resolve_file,
};
pub use sensitivity::Sensitivity;

/// `workspace.toml`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Config {
    /// The workspace directory the file was read from (its `packs/` may hold packs).
    #[serde(skip)]
    pub dir: Option<std::path::PathBuf>,
    /// Display name.
    pub name: String,
    /// The profile used when a call names none.
    pub default_profile: String,
    /// Profiles by name.
    pub profiles: std::collections::BTreeMap<String, Profile>,
    /// Capture settings.
    pub capture: Capture,
    /// Snapshot retention.
    #[serde(default)]
    pub snapshots: Snapshots,
    /// History retention.
    #[serde(default)]
    pub history: History,
    /// Per-workspace overrides of the pack's lexical analyzer (e.g. to measure stop words).
    #[serde(default)]
    pub lexical: Option<LexicalOverride>,
    /// Per-workspace overrides of the pack's graph expansion and graph channel weight.
    #[serde(default)]
    pub graph: Option<GraphOverride>,
    /// What agents (MCP clients) may do.
    #[serde(default)]
    pub agents: Agents,
    /// Sensitivity levels of captured sources and the ceiling past which nothing is captured.
    #[serde(default)]
    pub sensitivity: Sensitivity,
    /// The text channel's embedding family (absent: no vectors, no text channel, no network).
    #[serde(default)]
    pub embeddings: Option<Embeddings>,
    /// Reranking of the fused candidates (absent: none).
    #[serde(default)]
    pub rerank: Option<Rerank>,
    /// Bounds on reading PDF and Word files, and where PDF passwords come from.
    #[serde(default)]
    pub documents: Documents,
    /// Optical character recognition of pages with no text layer (off unless enabled).
    #[serde(default)]
    pub ocr: Ocr,
    /// Descriptions of visual assets by a vision model (absent: none, nothing uploaded).
    #[serde(default)]
    pub descriptions: Option<Descriptions>,
    /// The visual channel (a multimodal model), when present.
    #[serde(default)]
    pub visual: Option<Visual>,
    /// The summary tree (`tychora index build --raptor`) and its channel, when present.
    #[serde(default)]
    pub summaries: Option<Summaries>,
    /// Where originals, derived texts and pictures are kept (absent: the workspace's
    /// `artifacts/` folder).
    #[serde(default)]
    pub artifacts: Option<Artifacts>,
    /// Where the canonical rows live (absent: the workspace's `corpus.sqlite3`).
    #[serde(default)]
    pub store: Option<StoreConfig>,
    /// Where the derived search indexes live (absent: tantivy and usearch generations in the
    /// workspace's `indexes/` folder).
    #[serde(default)]
    pub search: Option<SearchConfig>,
}

/// `[search]`: the lexical generations on an OpenSearch cluster instead of the workspace's
/// `indexes/lexical/` folder, so several daemons search one copy that shards and replicates.
/// Credentials never go here: `TYCHORA_OPENSEARCH_USER` and `TYCHORA_OPENSEARCH_PASSWORD` come
/// from the environment, and a URL carrying a password is refused.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SearchConfig {
    /// `opensearch://host:port` (plain HTTP: loopback or a private network) or
    /// `opensearch+https://host:port`.
    pub url: String,
    /// What every index this workspace writes is named after (several workspaces share a
    /// cluster under distinct prefixes). Default `tychora`.
    #[serde(default = "default_search_prefix")]
    pub prefix: String,
    /// Primary shards per index. Default 1.
    #[serde(default = "default_search_shards")]
    pub shards: u32,
    /// Replicas of each shard. Default 1 (a node can be lost).
    #[serde(default = "default_search_replicas")]
    pub replicas: u32,
    /// Seconds one request may take. Default 30.
    #[serde(default = "default_search_timeout")]
    pub timeout_seconds: u64,
    /// How long an index no snapshot references is left before collection removes it: another
    /// daemon may be between writing it and publishing the snapshot that references it.
    /// Default 900.
    #[serde(default = "default_collect_after")]
    pub collect_after_seconds: u64,
}

fn default_collect_after() -> u64 {
    900
}

fn default_search_prefix() -> String {
    "tychora".into()
}

fn default_search_shards() -> u32 {
    1
}

fn default_search_replicas() -> u32 {
    1
}

fn default_search_timeout() -> u64 {
    30
}

/// `[store]`: the canonical rows in a PostgreSQL database instead of the workspace's SQLite
/// file, so several daemons serve one corpus. The password never goes here: it comes from the
/// environment (`PGPASSWORD`) or a file (`PGPASSFILE`, `~/.pgpass`), and a URL carrying one is
/// refused.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StoreConfig {
    /// `postgres://user@host:port/database` (or `?host=/socket/dir`).
    pub url: String,
    /// Connections this process pools (writer, readers, the query log's own aside). Default 8.
    #[serde(default = "default_store_connections")]
    pub connections: usize,
    /// How long a daemon holds a job without renewing it (it renews every third of this): a
    /// daemon that dies mid-job loses its jobs to the others this long after its last renewal.
    /// Default 30; at least 1.
    #[serde(default = "default_lease_seconds")]
    pub lease_seconds: u64,
}

fn default_store_connections() -> usize {
    8
}

fn default_lease_seconds() -> u64 {
    30
}

/// `[artifacts]`: artifacts in an S3-compatible bucket instead of the workspace's folder, so
/// several daemons on several machines read and write the same ones. Credentials never go here:
/// they come from the environment (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`,
/// `AWS_SESSION_TOKEN`) or the machine's role.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Artifacts {
    /// `s3://bucket` or `s3://bucket/prefix`.
    pub url: String,
    /// The service's endpoint for a store that is not AWS (`http://127.0.0.1:8333`); absent:
    /// AWS, or `AWS_ENDPOINT_URL` from the environment.
    #[serde(default)]
    pub endpoint: Option<String>,
    /// The bucket's region (absent: `AWS_REGION`, else `us-east-1`).
    #[serde(default)]
    pub region: Option<String>,
    /// Allow a plain `http://` endpoint (a loopback or private store). Default false.
    #[serde(default)]
    pub allow_http: bool,
}

/// `[descriptions]`: a vision model describes a visual asset someone selected (`tychora describe`).
/// The asset's bytes leave the machine, so only the collections listed here may be described: an
/// asset held by any other collection is refused. A description is derived evidence, never a
/// quotation of the source.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Descriptions {
    /// `anthropic`.
    pub provider: String,
    /// The model, e.g. `claude-sonnet-4-5`.
    pub model: String,
    /// Collections whose assets may be uploaded. Empty: none may.
    #[serde(default)]
    pub collections: Vec<String>,
    /// Most tokens one description may take.
    #[serde(default = "default_description_tokens")]
    pub max_tokens: u32,
}

fn default_description_tokens() -> u32 {
    600
}

impl Descriptions {
    /// Whether an asset held by `collection` may be uploaded.
    #[must_use]
    pub fn permits(&self, collection: &str) -> bool {
        self.collections.iter().any(|c| c == collection)
    }

    fn check(&self, network: bool) -> std::result::Result<(), String> {
        if self.provider != "anthropic" {
            return Err(format!(
                "[descriptions] provider {:?}; expected \"anthropic\"",
                self.provider
            ));
        }
        if self.model.trim().is_empty() {
            return Err("[descriptions] model must name a model".into());
        }
        if !(16..=8192).contains(&self.max_tokens) {
            return Err(format!(
                "[descriptions] max_tokens = {} must be between 16 and 8192",
                self.max_tokens
            ));
        }
        if !network {
            return Err("[descriptions] uploads images to a provider, but the default profile has network = false; set network = true in that profile to allow it".into());
        }
        Ok(())
    }
}

/// `[summaries]`: the summary tree (RAPTOR). `tychora index build --raptor` clusters the window
/// vectors and summarises each cluster: offline by its most central sentences (`extractive`, the
/// default), or by a model (`anthropic`) for the collections listed, whose text then leaves the
/// machine. A query runs the summary channel when it names it (`channel = true` runs it on every
/// query).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Summaries {
    /// `extractive` or `anthropic`.
    #[serde(default = "default_summary_provider")]
    pub provider: String,
    /// The model (`anthropic`).
    #[serde(default)]
    pub model: Option<String>,
    /// Collections whose text may be sent to the model; the others are summarised extractively.
    #[serde(default)]
    pub collections: Vec<String>,
    /// Children per cluster at most.
    #[serde(default = "default_branching")]
    pub branching: usize,
    /// Most tokens one summary may take.
    #[serde(default = "default_summary_tokens")]
    pub max_tokens: u32,
    /// Whether queries run the summary channel by default (a request can always name it). Off:
    /// on single-passage questions it costs more than it brings (SciFact test nDCG@10 0.7145 →
    /// 0.6138 with it, bench/results/raptor-scifact.md), so it is for questions asked as broad.
    #[serde(default)]
    pub channel: bool,
    /// The summary channel's fusion weight (default: the pack's `fusion.weights.summary`).
    #[serde(default)]
    pub weight: Option<f64>,
}

impl Default for Summaries {
    fn default() -> Self {
        Self {
            provider: default_summary_provider(),
            model: None,
            collections: Vec::new(),
            branching: default_branching(),
            max_tokens: default_summary_tokens(),
            channel: false,
            weight: None,
        }
    }
}

fn default_summary_provider() -> String {
    "extractive".into()
}

fn default_branching() -> usize {
    6
}

fn default_summary_tokens() -> u32 {
    160
}

impl Summaries {
    fn check(&self, network: bool, embeddings: bool) -> std::result::Result<(), String> {
        match self.provider.as_str() {
            "extractive" => {}
            "anthropic" => {
                if self.model.as_deref().is_none_or(|m| m.trim().is_empty()) {
                    return Err("[summaries] provider = \"anthropic\" needs a model".into());
                }
                if !network {
                    return Err("[summaries] sends text to a provider, but the default profile has network = false; set network = true in that profile to allow it".into());
                }
            }
            other => {
                return Err(format!(
                    "[summaries] provider {other:?}; expected \"extractive\" or \"anthropic\""
                ));
            }
        }
        if !(2..=32).contains(&self.branching) {
            return Err(format!(
                "[summaries] branching = {} must be between 2 and 32",
                self.branching
            ));
        }
        if !(32..=4096).contains(&self.max_tokens) {
            return Err(format!(
                "[summaries] max_tokens = {} must be between 32 and 4096",
                self.max_tokens
            ));
        }
        if !embeddings {
            return Err("[summaries] clusters the text channel's window vectors: add an [embeddings] section".into());
        }
        Ok(())
    }
}

/// `[visual]`: the visual channel. A multimodal model (Voyage) embeds the pictures of the listed
/// collections at publication (their bytes leave the machine, so no other collection's are sent)
/// and each query's text; the nearest pictures vote for the windows that hold them, fused at the
/// pack's `fusion.weights.visual` (DESIGN §9: 0.7).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Visual {
    /// `voyage`.
    pub provider: String,
    /// The model (default `voyage-multimodal-3`).
    #[serde(default = "default_visual_model")]
    pub model: String,
    /// Vector length, when the model is not one this package knows.
    #[serde(default)]
    pub dimension: Option<usize>,
    /// Collections whose pictures may be uploaded. Empty: none may.
    #[serde(default)]
    pub collections: Vec<String>,
    /// Overrides the pack's visual channel weight.
    #[serde(default)]
    pub weight: Option<f64>,
}

fn default_visual_model() -> String {
    "voyage-multimodal-3".into()
}

impl Visual {
    /// Whether pictures held by `collection` may be uploaded.
    #[must_use]
    pub fn permits(&self, collection: &str) -> bool {
        self.collections.iter().any(|c| c == collection)
    }

    fn check(&self, network: bool) -> std::result::Result<(), String> {
        if self.provider != "voyage" {
            return Err(format!(
                "[visual] provider {:?}; expected \"voyage\"",
                self.provider
            ));
        }
        if self.model.trim().is_empty() {
            return Err("[visual] model must name a model".into());
        }
        if self.dimension == Some(0) {
            return Err("[visual] dimension must be positive".into());
        }
        if let Some(w) = self.weight
            && !(w.is_finite() && w >= 0.0)
        {
            return Err(format!(
                "[visual] weight = {w} must be a finite number >= 0"
            ));
        }
        if !network {
            return Err("[visual] uploads pictures to a provider, but the default profile has network = false; set network = true in that profile to allow it".into());
        }
        Ok(())
    }
}

/// `[ocr]`: pages with no text layer (scans) rendered and read by tesseract.js, offline, with the
/// traineddata of each language from its npm package (`@tesseract.js-data/<lang>`). Off by
/// default: without it such pages are reported, never silently empty.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Ocr {
    /// Whether pages with no text layer are read by OCR.
    pub enabled: bool,
    /// Tesseract language codes (`eng`, `fra`, …), each from its `@tesseract.js-data` package.
    pub languages: Vec<String>,
    /// Resolution the page is rendered at for OCR (tesseract reads best near 300).
    pub dpi: u32,
    /// Milliseconds rendering and reading one page may take before the reader is stopped.
    pub page_timeout_ms: u32,
}

impl Default for Ocr {
    fn default() -> Self {
        Self {
            enabled: false,
            languages: vec!["eng".into()],
            dpi: 300,
            page_timeout_ms: 120_000,
        }
    }
}

impl Ocr {
    fn check(&self) -> std::result::Result<(), String> {
        if !(72..=600).contains(&self.dpi) {
            return Err(format!(
                "[ocr] dpi = {} must be between 72 and 600",
                self.dpi
            ));
        }
        if self.page_timeout_ms == 0 {
            return Err("[ocr] page_timeout_ms must be above 0".into());
        }
        if self.languages.is_empty() {
            return Err("[ocr] languages must name at least one language (eng)".into());
        }
        // A language names a package directory: nothing else may reach the path.
        if let Some(bad) = self.languages.iter().find(|l| {
            l.is_empty() || l.len() > 16 || !l.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')
        }) {
            return Err(format!(
                "[ocr] languages: {bad:?} is not a tesseract language code (lowercase letters and _, e.g. eng, chi_sim)"
            ));
        }
        Ok(())
    }

    /// What the OCR of a page depends on, for the extraction fingerprint of PDFs; `None` when off.
    #[must_use]
    pub fn fingerprint(&self) -> Option<String> {
        self.enabled
            .then(|| format!("ocr:{}:{}dpi", self.languages.join("+"), self.dpi))
    }
}

/// `[documents]`: what one PDF or DOCX may cost to read. Each bound, when reached, fails that file
/// alone with `E_LIMIT_EXCEEDED` naming the bound; the rest of the job goes on.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Documents {
    /// Pages one PDF may have.
    pub max_pages: u32,
    /// Bytes one PDF stream or one DOCX part may inflate to.
    pub max_stream_bytes: u64,
    /// Bytes all of one file's streams (or parts) may inflate to together.
    pub max_decompressed_bytes: u64,
    /// Pixels one embedded image may declare.
    pub max_image_pixels: u64,
    /// Milliseconds the PDF reader may spend on one page before it is stopped.
    pub page_timeout_ms: u32,
    /// Heap (MB) of each PDF reader worker; a file that needs more fails alone.
    pub worker_memory_mb: u32,
    /// Passwords for encrypted PDFs, each taken from an environment variable (never stored).
    pub passwords: Vec<DocumentPassword>,
    /// Whether the figures a PDF's pages draw are kept as visual assets (a pass of its own, about
    /// as costly as reading the text on picture-heavy files).
    pub pdf_figures: bool,
}

impl Default for Documents {
    fn default() -> Self {
        Self {
            max_pages: 2_000,
            max_stream_bytes: 64 << 20,
            max_decompressed_bytes: 512 << 20,
            max_image_pixels: 100_000_000,
            page_timeout_ms: 10_000,
            worker_memory_mb: 256,
            passwords: Vec::new(),
            pdf_figures: true,
        }
    }
}

impl Documents {
    /// Bounds of zero and globs that do not parse, refused when the file is read.
    fn check(&self) -> std::result::Result<(), String> {
        let bounds = [
            ("max_pages", u64::from(self.max_pages)),
            ("max_stream_bytes", self.max_stream_bytes),
            ("max_decompressed_bytes", self.max_decompressed_bytes),
            ("max_image_pixels", self.max_image_pixels),
            ("page_timeout_ms", u64::from(self.page_timeout_ms)),
            ("worker_memory_mb", u64::from(self.worker_memory_mb)),
        ];
        if let Some((name, _)) = bounds.iter().find(|(_, v)| *v == 0) {
            return Err(format!("[documents] {name} must be above 0"));
        }
        if self.worker_memory_mb < 32 {
            return Err("[documents] worker_memory_mb must be at least 32 (pdf.js itself needs about 20 MB)".into());
        }
        for (i, p) in self.passwords.iter().enumerate() {
            globset::Glob::new(&p.path).map_err(|e| {
                format!(
                    "[[documents.passwords]] entry {}: path {:?}: {e}",
                    i + 1,
                    p.path
                )
            })?;
            if p.env.is_empty() || p.env.contains('=') || p.env.contains('\0') {
                return Err(format!(
                    "[[documents.passwords]] entry {}: env must name an environment variable",
                    i + 1
                ));
            }
        }
        Ok(())
    }

    /// The password for a file: the first entry whose glob matches its root-relative or absolute
    /// path. `Err` names the entry's variable when it is not set.
    ///
    /// # Errors
    /// The message for a diagnostic when the matching entry's variable is unset.
    pub fn password_for(
        &self,
        rel: &str,
        absolute: &Path,
    ) -> std::result::Result<Option<String>, String> {
        for p in &self.passwords {
            let Ok(glob) = globset::Glob::new(&p.path) else {
                continue;
            };
            let m = glob.compile_matcher();
            if m.is_match(rel) || m.is_match(absolute) {
                return std::env::var(&p.env)
                    .map(Some)
                    .map_err(|_| format!("its password comes from ${}, which is not set", p.env));
            }
        }
        Ok(None)
    }
}

/// One `[[documents.passwords]]` entry: the files it opens and the variable that holds it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DocumentPassword {
    /// A glob matched against the file's path relative to its root, or its absolute path.
    pub path: String,
    /// The environment variable whose value is the password. The workspace never stores it.
    pub env: String,
}

/// What agents may do through MCP. Approved knowledge is never writable from MCP or HTTP.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Agents {
    /// Whether the MCP `add_source` tool is offered (off by default).
    #[serde(default)]
    pub allow_add_source: bool,
}

/// Optional overrides of [`Lexical`]; unset fields keep the pack's value.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LexicalOverride {
    /// `[lexical] stemmer`: whether index and query terms are stemmed.
    pub stemmer: Option<bool>,
    /// `[lexical] stopwords`: whether the language's stop words are left out.
    pub stopwords: Option<bool>,
    /// `[lexical] capsule_boost`: weight of a match in the context capsule relative to the body.
    pub capsule_boost: Option<f32>,
    /// `[lexical] split_identifiers`: whether camelCase / letter-digit parts are indexed too.
    pub split_identifiers: Option<bool>,
    /// `[lexical] idf`: `lucene` or `probabilistic`.
    pub idf: Option<Idf>,
    /// `[lexical] max_query_terms`: the most terms a query keeps, the rarest first.
    pub max_query_terms: Option<usize>,
}

/// Optional overrides of [`Graph`] and the graph channel's fusion weight.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GraphOverride {
    /// `[graph] depth`: hops followed from each seed symbol.
    pub depth: Option<usize>,
    /// `[graph] fanout`: relations followed per symbol and direction.
    pub fanout: Option<usize>,
    /// `[graph] seeds`: top fused candidates expanded from.
    pub seeds: Option<usize>,
    /// `[graph] max_nodes`: symbols reached per query at most.
    pub max_nodes: Option<usize>,
    /// `[graph] relations`: relation kinds followed (`calls`, `references`, `inherits`,
    /// `implements`).
    pub relations: Option<Vec<String>>,
    /// `[graph] callers`: whether relations are also followed backwards.
    pub callers: Option<bool>,
    /// `[graph] weight`: the graph channel's fusion weight (the pack's `fusion.weights.graph`).
    pub weight: Option<f64>,
}

/// A profile: which pack and channels a workspace uses.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Profile {
    /// What it is for.
    pub description: String,
    /// The pack it resolves.
    pub pack: String,
    /// Channels it runs.
    pub channels: Vec<String>,
    /// Whether it may call the network (never, for the built-in profiles).
    #[serde(default)]
    pub network: bool,
    /// Stricter eligibility: a structured record counts (its facets, its key in the exact
    /// channel) only once a person reviewed it, and identifiers that only unreviewed records
    /// carry are coverage gaps.
    #[serde(default)]
    pub verified: bool,
}

/// `[embeddings]`: which provider and model embed the windows, and the caps on what they cost.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Embeddings {
    /// `local` (a model directory run in-process, never the network) or `voyage`.
    pub provider: String,
    /// The local model's directory (Hugging Face layout). Default: `models/all-MiniLM-L6-v2`
    /// under the user cache directory, where `scripts/fetch-model.mjs` puts it.
    #[serde(default)]
    pub model_dir: Option<String>,
    /// The provider's model (default: the pack's `text.models.<provider>`).
    #[serde(default)]
    pub model: Option<String>,
    /// The provider's output dimension, when it offers several.
    #[serde(default)]
    pub dimension: Option<usize>,
    /// `window`, `window+capsule` or (Voyage) `contextual` (default: the pack's).
    #[serde(default)]
    pub representation: Option<String>,
    /// How the ANN index stores vectors: `f32`, `f16` or `i8`.
    #[serde(default = "default_quantization")]
    pub quantization: String,
    /// What the local model does with a window longer than its `max_seq_length`.
    #[serde(default)]
    pub long_inputs: LongInputs,
    /// The user-level vector cache directory shared by this user's workspaces (default: the OS
    /// cache directory's `tychora`); `""` turns it off.
    #[serde(default)]
    pub cache_dir: Option<String>,
    /// Most tokens one job may send to the embedder (`E_BUDGET_EXCEEDED` before the first call).
    #[serde(default)]
    pub max_embed_tokens_per_job: Option<u64>,
    /// Most tokens this workspace may send to the embedder in a calendar month (UTC).
    #[serde(default)]
    pub max_embed_tokens_per_month: Option<u64>,
    /// Overrides the pack's text channel weight in the fusion (`fusion.weights.text`).
    #[serde(default)]
    pub weight: Option<f64>,
    /// Overrides the pack's text channel depth (`text.depth`).
    #[serde(default)]
    pub depth: Option<usize>,
    /// The scripts the model reads, by Unicode name (`["Latin"]`, `["Latin", "Han"]`): the text
    /// channel's weight is scaled by the share of a query's letters written in them. Default:
    /// `["Latin"]` for the local model (all-MiniLM-L6-v2 was trained on English), every script
    /// for Voyage.
    #[serde(default)]
    pub scripts: Option<Vec<String>>,
}

impl Embeddings {
    /// The scripts the model reads; `None` for every script.
    ///
    /// # Errors
    /// A name that is not a Unicode script.
    pub fn reads(&self) -> Result<Option<Vec<unicode_script::Script>>, String> {
        match (&self.scripts, self.provider.as_str()) {
            (Some(names), _) => crate::scripts::parse(names).map(Some),
            (None, "local") => crate::scripts::parse(crate::scripts::LOCAL_DEFAULT).map(Some),
            (None, _) => Ok(None),
        }
    }
}

fn default_quantization() -> String {
    "f32".into()
}

/// What the local model does with an input longer than its `max_seq_length`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum LongInputs {
    /// Keep its first `max_seq_length` tokens.
    #[default]
    Truncate,
    /// Embed it as consecutive sub-windows and average their vectors (weighted by length).
    Pool,
}

/// `[rerank]`: reorder the top fused candidates with a provider's reranker.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rerank {
    /// `voyage`.
    pub provider: String,
    /// The model (default: the pack's `text.rerank_model`).
    #[serde(default)]
    pub model: Option<String>,
    /// Fused candidates reordered (default: the pack's `text.rerank_depth`).
    #[serde(default)]
    pub depth: Option<usize>,
}

/// Capture settings.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Capture {
    /// Absolute directories capture may read from, besides those `add` registers.
    #[serde(default)]
    pub roots: Vec<String>,
    /// Whether a path given to `add` becomes a root.
    #[serde(default = "yes")]
    pub auto_add_roots: bool,
    /// Files above this size are refused with `E_LIMIT_EXCEEDED`.
    pub max_file_bytes: u64,
    /// Gitignore-style globs never captured (vendored and generated folders, minified bundles),
    /// on top of the repositories' own `.gitignore` files.
    #[serde(default = "default_excludes")]
    pub exclude: Vec<String>,
    /// Code files with a longer line are treated as minified or generated and skipped.
    #[serde(default = "default_max_line_bytes")]
    pub max_line_bytes: usize,
}

/// Folders and files no profile indexes unless the config says otherwise.
#[must_use]
pub fn default_excludes() -> Vec<String> {
    [
        "node_modules/",
        "dist/",
        "build/",
        ".venv/",
        "venv/",
        "__pycache__/",
        "target/",
        "vendor/",
        "*.min.js",
        "*.min.css",
        "*.map",
    ]
    .map(String::from)
    .to_vec()
}

fn default_max_line_bytes() -> usize {
    4096
}

/// Snapshot retention.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Snapshots {
    /// How many published snapshots (the newest) stay readable with their index generations.
    pub retain: usize,
    /// Snapshots younger than this many days stay as well (0: only the newest `retain`).
    #[serde(default)]
    pub keep_days: u32,
}

impl Default for Snapshots {
    fn default() -> Self {
        Self {
            retain: 5,
            keep_days: 0,
        }
    }
}

/// How long history is kept; `manage purge` (and the maintenance after jobs) applies it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct History {
    /// Query runs (their requests, results and traces) older than this many days are deleted.
    pub query_days: u32,
    /// Each source keeps at least its newest revisions' original bytes, this many of them.
    pub revisions_per_source: u32,
    /// Revisions captured within this many days keep their original bytes.
    pub revision_days: u32,
    /// Finished jobs (their receipts, steps and diagnostics) older than this many days are
    /// deleted, except those a retained snapshot, a tombstone or a withdrawal names.
    #[serde(default = "default_job_days")]
    pub job_days: u32,
}

fn default_job_days() -> u32 {
    30
}

impl Default for History {
    fn default() -> Self {
        Self {
            query_days: 30,
            revisions_per_source: 10,
            revision_days: 30,
            job_days: default_job_days(),
        }
    }
}

fn yes() -> bool {
    true
}

/// The profiles `tychora init --profile` accepts.
pub const PROFILES: [&str; 3] = ["documents", "code", "verified"];

/// The embedding providers `tychora init --embeddings` accepts.
pub const EMBEDDING_PROVIDERS: [&str; 2] = ["local", "voyage"];

/// The `workspace.toml` written by `tychora init`, with the text channel when `embeddings` names a
/// provider (`local`: the model directory the fetch script fills; `voyage`: the network, allowed
/// for the profiles).
#[must_use]
pub fn default_toml(name: &str, profile: &str, embeddings: Option<&str>) -> String {
    let base = base_toml(name, profile);
    match embeddings {
        None => format!("{base}{EMBEDDINGS_COMMENT}"),
        Some(provider) => {
            let mut text = base.replace(
                "channels = [\"exact\", \"lexical\"]",
                "channels = [\"exact\", \"lexical\", \"text\"]",
            );
            if provider != "local" {
                text = text.replace("network = false", "network = true");
            }
            format!(
                "{text}
[embeddings]
# The text channel (dense vectors). local: a sentence-transformers model directory run in-process
# (default all-MiniLM-L6-v2 under the user cache directory; fetch it with
# `node scripts/fetch-model.mjs`). voyage: the Voyage API (VOYAGE_API_KEY), model from the pack.
provider = {provider:?}
# model_dir = \"/path/to/model\"
# representation = \"window+capsule\"   # or \"window\"; \"contextual\" with voyage
# quantization = \"f32\"                # f16 or i8 shrink the ANN index
# scripts = [\"Latin\"]                  # what the model reads (local default); a query in other scripts leans on the lexical channel
# max_embed_tokens_per_job = 5000000
# max_embed_tokens_per_month = 50000000
"
            )
        }
    }
}

const EMBEDDINGS_COMMENT: &str = "
# The text channel (dense vectors) is off: nothing is embedded and no network call is made.
# `tychora init --embeddings local` (or an [embeddings] section with provider = \"local\" and
# \"text\" in the profile's channels) turns it on.
";

fn base_toml(name: &str, profile: &str) -> String {
    format!(
        r#"# Tychora workspace configuration.
name = {name:?}
default_profile = {profile:?}

[profiles.documents]
description = "Offline documents: exact + lexical channels, no network"
pack = "documents"
channels = ["exact", "lexical"]
network = false

[profiles.verified]
description = "Offline documents, stricter: structured records count once reviewed (`tychora records review`), relations once accepted; what only unreviewed records say is a coverage gap"
pack = "documents"
channels = ["exact", "lexical"]
network = false
verified = true

[profiles.code]
description = "Repositories: code files as symbols (tree-sitter) plus their docs; identifiers split into sub-tokens; a reference graph; no network"
pack = "code"
# "graph" (bounded expansion over resolved calls and inheritance, with "found via" paths) is opt-in
# per query (`--graph`, channels: [..., "graph"]): on the SWE-bench-style dev set it found the same
# functions but ranked files lower (bench/results/eval-swebench-dev.md). Add it here to make it the default.
channels = ["exact", "lexical"]
network = false

[capture]
# Absolute directories capture may read from. `tychora add PATH` adds PATH as a root when
# auto_add_roots is true; set it to false to confine capture to the roots listed here.
roots = []
auto_add_roots = true
max_file_bytes = 67108864 # 64 MiB
# Never captured (gitignore syntax), besides each repository's own .gitignore.
exclude = ["node_modules/", "dist/", "build/", ".venv/", "venv/", "__pycache__/", "target/", "vendor/", "*.min.js", "*.min.css", "*.map"]
# Code files with a longer line are treated as minified or generated and skipped.
max_line_bytes = 4096

[snapshots]
# Published snapshots that stay readable (with their index generations) for pinned readers: the
# newest `retain`, and any younger than `keep_days`. Older ones are purged with what only they used.
retain = 5
keep_days = 0

[history]
# Query runs (request, results, trace) are kept this many days.
query_days = 30
# Original bytes of revisions no retained snapshot uses: each source keeps its newest
# `revisions_per_source`, and any captured within `revision_days`; older ones are erased with a
# tombstone (reason "retention"). Extractions, units and chunks no retained snapshot uses are deleted.
revisions_per_source = 10
revision_days = 30
# Finished jobs (receipts, steps) are kept this many days, except those a retained snapshot, a
# tombstone or a withdrawal names. Retention runs at the end of every job that publishes.
job_days = 30

# Graph channel (code profile) overrides of the pack: depth, fanout, seeds, max_nodes, relations,
# callers, weight. For example:
# [graph]
# depth = 1
# callers = false

[agents]
# Whether MCP clients get the add_source tool.
allow_add_source = false

[sensitivity]
# Every source is labelled with one of these levels, lowest first: `add --sensitivity LEVEL`, else
# `default`; `manage sensitivity SOURCE LEVEL` relabels. Nothing above `ceiling` is captured (not
# even into the lexical statistics), and relabelling a source past it erases it from new
# snapshots. A query may ask for less (`search --max-sensitivity internal`).
levels = ["public", "internal", "confidential", "secret"]
default = "internal"
ceiling = "confidential"

[documents]
# What one PDF or Word file may cost to read; a file past a bound fails alone (E_LIMIT_EXCEEDED).
max_pages = 2000
max_stream_bytes = 67108864        # one PDF stream or DOCX part, inflated (64 MiB)
max_decompressed_bytes = 536870912 # all of one file's streams together (512 MiB)
max_image_pixels = 100000000
page_timeout_ms = 10000
worker_memory_mb = 256             # heap of each PDF reader worker
pdf_figures = true                 # keep the figures PDF pages draw as visual assets (PNG)
# Encrypted PDFs: the password comes from an environment variable, never from this file.
# [[documents.passwords]]
# path = "reports/**/*.pdf"
# env = "TYCHORA_PDF_PASSWORD"

[ocr]
# Pages with no text layer (scans) are reported; enabled = true renders them and reads them with
# tesseract.js, offline. OCR text is cited as OCR of its page, with its confidence.
enabled = false
languages = ["eng"]                # each needs the npm package @tesseract.js-data/<language>
dpi = 300
page_timeout_ms = 120000

# Descriptions of pictures by a vision model (tychora describe ASSET), off unless this section is
# present. The picture leaves the machine: only the collections listed may be described. The key
# comes from ANTHROPIC_API_KEY and is never stored. Needs network = true in the profile.
# [descriptions]
# provider = "anthropic"
# model = "claude-sonnet-4-5"
# collections = ["manuals"]
# max_tokens = 600

# The visual channel: a multimodal model embeds the pictures of the listed collections and each
# query, so a query finds a chart by what it shows. Off unless present; the key comes from
# VOYAGE_API_KEY. Needs network = true in the profile.
# [visual]
# provider = "voyage"
# model = "voyage-multimodal-3"
# collections = ["manuals"]

# The summary tree (tychora index build --raptor): window vectors clustered inside each document,
# then across each collection, and every cluster summarised, so a broad question finds the windows
# a summary covers. Summaries are derived, never cited. Offline by default (each cluster's most
# central sentences); provider = "anthropic" sends the listed collections' text to the model (key
# from ANTHROPIC_API_KEY, never stored; needs network = true). Needs [embeddings].
# A query runs the summary channel when it names it (--channels …,summary); channel = true runs
# it on every query (it helps broad questions and costs single-passage ones).
# [summaries]
# provider = "extractive"
# branching = 6
# max_tokens = 160
# channel = false
"#
    )
}

impl Config {
    /// Reads and validates `workspace.toml`.
    ///
    /// # Errors
    /// `E_INVALID_ARGUMENT` naming the file and the TOML error.
    pub fn load(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        let mut config: Self = toml::from_str(&text)
            .map_err(|e| Error::InvalidArgument(format!("{}: {e}", path.display())))?;
        config.dir = path.parent().map(Path::to_path_buf);
        if !config.profiles.contains_key(&config.default_profile) {
            return Err(Error::InvalidArgument(format!(
                "{}: default_profile {:?} is not defined",
                path.display(),
                config.default_profile
            )));
        }
        config
            .check_providers()
            .and_then(|()| config.documents.check())
            .and_then(|()| config.sensitivity.check())
            .and_then(|()| config.ocr.check())
            .and_then(|()| {
                config.descriptions.as_ref().map_or(Ok(()), |d| {
                    d.check(config.profiles[&config.default_profile].network)
                })
            })
            .and_then(|()| {
                config.visual.as_ref().map_or(Ok(()), |v| {
                    v.check(config.profiles[&config.default_profile].network)
                })
            })
            .and_then(|()| {
                config.summaries.as_ref().map_or(Ok(()), |s| {
                    s.check(
                        config.profiles[&config.default_profile].network,
                        config.embeddings.is_some(),
                    )
                })
            })
            .map_err(|why| Error::InvalidArgument(format!("{}: {why}", path.display())))?;
        Ok(config)
    }

    /// Provider settings that cannot work, refused when the file is read rather than mid-job.
    fn check_providers(&self) -> std::result::Result<(), String> {
        let profile = &self.profiles[&self.default_profile];
        let wants_text = profile.channels.iter().any(|c| c == "text");
        let Some(e) = &self.embeddings else {
            if wants_text {
                return Err(format!(
                    "profile {:?} runs the text channel but there is no [embeddings] section",
                    self.default_profile
                ));
            }
            if self.rerank.is_some() {
                return Err("[rerank] needs the network; no [embeddings] section either".into());
            }
            return Ok(());
        };
        let one_of = |what: &str, value: &str, allowed: &[&str]| {
            if allowed.contains(&value) {
                Ok(())
            } else {
                Err(format!(
                    "[embeddings] {what} {value:?}; expected one of {allowed:?}"
                ))
            }
        };
        one_of("provider", &e.provider, &["local", "voyage"])?;
        one_of("quantization", &e.quantization, &["f32", "f16", "i8"])?;
        e.reads()?;
        if let Some(r) = &e.representation {
            one_of(
                "representation",
                r,
                &["window", "window+capsule", "contextual"],
            )?;
            if r == "contextual" && e.provider != "voyage" {
                return Err(
                    "[embeddings] representation \"contextual\" needs provider = \"voyage\"".into(),
                );
            }
        }
        let networked = e.provider != "local" || self.rerank.is_some();
        if networked && !profile.network {
            return Err(format!(
                "profile {:?} has network = false, but [embeddings]/[rerank] name a network provider; set network = true in that profile to allow it",
                self.default_profile
            ));
        }
        if let Some(r) = &self.rerank {
            one_of("[rerank] provider", &r.provider, &["voyage"])?;
        }
        Ok(())
    }

    /// The pack of the default profile, resolved.
    ///
    /// # Errors
    /// As [`packs::resolve`].
    pub fn pack(&self) -> Result<Pack> {
        self.resolved(None).map(|r| r.pack)
    }

    /// The pack of a profile (the default one when `None`), resolved with where each value came
    /// from: engine defaults, the pack's dependencies, the pack, then this file's overrides.
    ///
    /// # Errors
    /// `E_NOT_FOUND` for an unknown profile or pack; otherwise as [`packs::resolve`].
    pub fn resolved(&self, profile: Option<&str>) -> Result<Resolved> {
        let name = profile.unwrap_or(&self.default_profile);
        let profile = self.profiles.get(name).ok_or_else(|| Error::NotFound {
            what: "profile",
            id: name.to_string(),
        })?;
        packs::resolve(self.dir.as_deref(), &profile.pack, &self.overrides())
    }

    /// This file's overrides of pack settings, as a layer of pack JSON.
    fn overrides(&self) -> serde_json::Value {
        let mut layer = serde_json::Map::new();
        let mut set = |section: &str, field: &str, value: Option<serde_json::Value>| {
            let Some(value) = value else { return };
            let mut target = &mut layer;
            for part in section.split('.') {
                target = target
                    .entry(part)
                    .or_insert_with(|| serde_json::Value::Object(serde_json::Map::new()))
                    .as_object_mut()
                    .expect("override sections are objects");
            }
            target.insert(field.to_string(), value);
        };
        if let Some(o) = &self.lexical {
            set("lexical", "stemmer", o.stemmer.map(Into::into));
            set("lexical", "stopwords", o.stopwords.map(Into::into));
            set("lexical", "capsule_boost", o.capsule_boost.map(Into::into));
            set(
                "lexical",
                "split_identifiers",
                o.split_identifiers.map(Into::into),
            );
            set(
                "lexical",
                "idf",
                o.idf.and_then(|i| serde_json::to_value(i).ok()),
            );
            set(
                "lexical",
                "max_query_terms",
                o.max_query_terms.map(Into::into),
            );
        }
        if let Some(e) = &self.embeddings {
            set("fusion.weights", "text", e.weight.map(Into::into));
            set("text", "depth", e.depth.map(Into::into));
        }
        if let Some(visual) = &self.visual {
            set("fusion.weights", "visual", visual.weight.map(Into::into));
        }
        if let Some(summaries) = &self.summaries {
            set(
                "fusion.weights",
                "summary",
                summaries.weight.map(Into::into),
            );
        }
        if let Some(o) = &self.graph {
            set("graph", "depth", o.depth.map(Into::into));
            set("graph", "fanout", o.fanout.map(Into::into));
            set("graph", "seeds", o.seeds.map(Into::into));
            set("graph", "max_nodes", o.max_nodes.map(Into::into));
            set("graph", "callers", o.callers.map(Into::into));
            set("graph", "relations", o.relations.clone().map(Into::into));
            set("fusion.weights", "graph", o.weight.map(Into::into));
        }
        serde_json::Value::Object(layer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_config_round_trips_and_resolves_its_pack() {
        let config: Config = toml::from_str(&default_toml("demo", "documents", None)).unwrap();
        assert_eq!(config.default_profile, "documents");
        let pack = config.pack().unwrap();
        assert_eq!(pack.chunking.target_tokens, 512);
        assert!((pack.fusion.weights.exact - 2.0).abs() < f64::EPSILON);
        assert!(!pack.lexical.split_identifiers);
        let code = packs::resolve(None, "code", &serde_json::json!({})).unwrap();
        assert!(code.pack.lexical.split_identifiers);
        assert_eq!(code.chain, ["core", "code"]);
        assert_eq!(
            packs::resolve(None, "nope", &serde_json::json!({}))
                .unwrap_err()
                .code(),
            crate::ErrorCode::NotFound
        );
    }

    #[test]
    fn documents_bounds_are_checked_when_read_and_passwords_come_from_variables() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("workspace.toml");
        let base = default_toml("demo", "documents", None);
        let parsed: Config = toml::from_str(&base).unwrap();
        assert_eq!(parsed.documents.max_pages, 2000);
        assert!(!parsed.ocr.enabled && parsed.ocr.fingerprint().is_none());
        let on: Config =
            toml::from_str(&base.replace("enabled = false", "enabled = true")).unwrap();
        assert_eq!(on.ocr.fingerprint().as_deref(), Some("ocr:eng:300dpi"));
        let with = |from: &str, to: &str| base.replace(from, to);
        for (text, why) in [
            (
                with("max_pages = 2000", "max_pages = 0"),
                "max_pages must be above 0",
            ),
            (
                with("worker_memory_mb = 256", "worker_memory_mb = 8"),
                "worker_memory_mb must be at least 32",
            ),
            (
                with("max_pages = 2000", "max_pagez = 3"),
                "unknown field `max_pagez`",
            ),
            (
                format!("{base}\n[lexical]\nmax_query_term = 16\n"),
                "unknown field `max_query_term`",
            ),
            (
                format!("{base}\n[[documents.passwords]]\npath = \"a/[b\"\nenv = \"P\"\n"),
                "entry 1: path \"a/[b\"",
            ),
            (with("dpi = 300", "dpi = 5000"), "[ocr] dpi = 5000"),
            (
                format!("{base}\n[descriptions]\nprovider = \"anthropic\"\nmodel = \"m\"\n"),
                "[descriptions] uploads images to a provider, but the default profile has network = false",
            ),
            (
                format!(
                    "{}\n[descriptions]\nprovider = \"openai\"\nmodel = \"m\"\n",
                    base.replacen("network = false", "network = true", 1)
                ),
                "[descriptions] provider \"openai\"; expected \"anthropic\"",
            ),
            (
                with("languages = [\"eng\"]", "languages = [\"../../etc\"]"),
                "\"../../etc\" is not a tesseract language code",
            ),
        ] {
            std::fs::write(&path, &text).unwrap();
            let err = Config::load(&path).unwrap_err().to_string();
            assert!(err.contains(why), "{why}: {err}");
        }
        let described: Config = toml::from_str(&format!(
            "{base}\n[descriptions]\nprovider = \"anthropic\"\nmodel = \"m\"\ncollections = [\"manuals\"]\n"
        ))
        .unwrap();
        let d = described.descriptions.unwrap();
        assert!(d.permits("manuals") && !d.permits("secret"));
        assert_eq!(d.max_tokens, 600);
        let docs = Documents {
            passwords: vec![DocumentPassword {
                path: "reports/**/*.pdf".into(),
                env: "TYCHORA_CONFIG_TEST_UNSET".into(),
            }],
            ..Documents::default()
        };
        assert_eq!(
            docs.password_for("notes/a.pdf", Path::new("/x/notes/a.pdf")),
            Ok(None)
        );
        assert_eq!(
            docs.password_for("reports/2024/a.pdf", Path::new("/x/reports/2024/a.pdf")),
            Err("its password comes from $TYCHORA_CONFIG_TEST_UNSET, which is not set".into())
        );
    }

    #[test]
    fn the_text_channel_is_refused_without_embeddings_and_voyage_without_network() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("workspace.toml");
        let local = default_toml("demo", "code", Some("local"));
        std::fs::write(&path, &local).unwrap();
        let config = Config::load(&path).unwrap();
        assert!(
            config.profiles["code"]
                .channels
                .contains(&"text".to_string())
        );
        assert_eq!(config.embeddings.unwrap().provider, "local");
        // The text channel without [embeddings].
        let cut = local.split("[embeddings]").next().unwrap().to_string();
        std::fs::write(&path, &cut).unwrap();
        let err = Config::load(&path).unwrap_err().to_string();
        assert!(err.contains("no [embeddings] section"), "{err}");
        // Voyage with network = false.
        std::fs::write(
            &path,
            local.replace("provider = \"local\"", "provider = \"voyage\""),
        )
        .unwrap();
        let err = Config::load(&path).unwrap_err().to_string();
        assert!(err.contains("network = false"), "{err}");
        std::fs::write(&path, default_toml("demo", "documents", Some("voyage"))).unwrap();
        assert_eq!(
            Config::load(&path).unwrap().embeddings.unwrap().provider,
            "voyage"
        );
    }
}
