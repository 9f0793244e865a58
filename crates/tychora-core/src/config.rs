//! Workspace configuration (`workspace.toml`) and the resolved pack it selects.
//!
//! Packs are data (`packs/<name>/pack.json`); the built-in ones are embedded so the engine needs no
//! files beside the binary. The TypeScript side validates the same files with its zod schema.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// The embedded `documents` pack.
pub const DOCUMENTS_PACK: &str = include_str!("../../../packs/documents/pack.json");
/// The embedded `code` pack.
pub const CODE_PACK: &str = include_str!("../../../packs/code/pack.json");

/// A configuration pack, as resolved for one workspace.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[allow(missing_docs)] // Field meanings are documented in the zod pack schema (ts/contracts/pack.ts).
pub struct Pack {
    pub name: String,
    pub version: u32,
    pub description: String,
    pub kinds: Vec<String>,
    pub chunking: Chunking,
    pub lexical: Lexical,
    pub identifiers: Identifiers,
    pub fusion: Fusion,
    pub output: Output,
    /// Graph expansion limits (code packs); the built-in defaults otherwise.
    #[serde(default)]
    pub graph: Graph,
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

impl Pack {
    /// The built-in pack of that name.
    ///
    /// # Errors
    /// `E_NOT_FOUND` for an unknown pack.
    pub fn builtin(name: &str) -> Result<Self> {
        match name {
            "documents" => serde_json::from_str(DOCUMENTS_PACK)
                .map_err(|e| Error::Internal(format!("embedded pack: {e}"))),
            "code" => serde_json::from_str(CODE_PACK)
                .map_err(|e| Error::Internal(format!("embedded pack: {e}"))),
            other => Err(Error::NotFound {
                what: "pack",
                id: other.to_string(),
            }),
        }
    }
}

/// `workspace.toml`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Config {
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
    /// Per-workspace overrides of the pack's lexical analyzer (e.g. to measure stop words).
    #[serde(default)]
    pub lexical: Option<LexicalOverride>,
    /// Per-workspace overrides of the pack's graph expansion and graph channel weight.
    #[serde(default)]
    pub graph: Option<GraphOverride>,
    /// What agents (MCP clients) may do.
    #[serde(default)]
    pub agents: Agents,
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
#[allow(missing_docs)]
pub struct LexicalOverride {
    pub stemmer: Option<bool>,
    pub stopwords: Option<bool>,
    pub capsule_boost: Option<f32>,
    pub split_identifiers: Option<bool>,
}

/// Optional overrides of [`Graph`] and the graph channel's fusion weight.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct GraphOverride {
    pub depth: Option<usize>,
    pub fanout: Option<usize>,
    pub seeds: Option<usize>,
    pub max_nodes: Option<usize>,
    pub relations: Option<Vec<String>>,
    pub callers: Option<bool>,
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
    /// How many published snapshots keep their index generations.
    pub retain: usize,
}

impl Default for Snapshots {
    fn default() -> Self {
        Self { retain: 5 }
    }
}

fn yes() -> bool {
    true
}

/// The profiles `tychora init --profile` accepts.
pub const PROFILES: [&str; 2] = ["documents", "code"];

/// The `workspace.toml` written by `tychora init`.
#[must_use]
pub fn default_toml(name: &str, profile: &str) -> String {
    format!(
        r#"# Tychora workspace configuration.
name = {name:?}
default_profile = {profile:?}

[profiles.documents]
description = "Offline documents: exact + lexical channels, no network"
pack = "documents"
channels = ["exact", "lexical"]
network = false

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
# Published snapshots whose index generations are kept for pinned readers.
retain = 5

# Graph channel (code profile) overrides of the pack: depth, fanout, seeds, max_nodes, relations,
# callers, weight. For example:
# [graph]
# depth = 1
# callers = false

[agents]
# Whether MCP clients get the add_source tool.
allow_add_source = false
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
        let config: Self = toml::from_str(&text)
            .map_err(|e| Error::InvalidArgument(format!("{}: {e}", path.display())))?;
        if !config.profiles.contains_key(&config.default_profile) {
            return Err(Error::InvalidArgument(format!(
                "{}: default_profile {:?} is not defined",
                path.display(),
                config.default_profile
            )));
        }
        Ok(config)
    }

    /// The pack of the default profile.
    ///
    /// # Errors
    /// `E_NOT_FOUND` if the profile names an unknown pack.
    pub fn pack(&self) -> Result<Pack> {
        let profile = &self.profiles[&self.default_profile];
        let mut pack = Pack::builtin(&profile.pack)?;
        if let Some(o) = &self.lexical {
            pack.lexical.stemmer = o.stemmer.unwrap_or(pack.lexical.stemmer);
            pack.lexical.stopwords = o.stopwords.unwrap_or(pack.lexical.stopwords);
            pack.lexical.capsule_boost = o.capsule_boost.unwrap_or(pack.lexical.capsule_boost);
            pack.lexical.split_identifiers = o
                .split_identifiers
                .unwrap_or(pack.lexical.split_identifiers);
        }
        if let Some(o) = &self.graph {
            let g = &mut pack.graph;
            g.depth = o.depth.unwrap_or(g.depth);
            g.fanout = o.fanout.unwrap_or(g.fanout);
            g.seeds = o.seeds.unwrap_or(g.seeds);
            g.max_nodes = o.max_nodes.unwrap_or(g.max_nodes);
            g.callers = o.callers.unwrap_or(g.callers);
            if let Some(relations) = &o.relations {
                g.relations.clone_from(relations);
            }
            pack.fusion.weights.graph = o.weight.unwrap_or(pack.fusion.weights.graph);
        }
        Ok(pack)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_config_round_trips_and_resolves_its_pack() {
        let config: Config = toml::from_str(&default_toml("demo", "documents")).unwrap();
        assert_eq!(config.default_profile, "documents");
        let pack = config.pack().unwrap();
        assert_eq!(pack.chunking.target_tokens, 512);
        assert!((pack.fusion.weights.exact - 2.0).abs() < f64::EPSILON);
        assert!(!pack.lexical.split_identifiers);
        assert!(Pack::builtin("code").unwrap().lexical.split_identifiers);
        assert_eq!(
            Pack::builtin("nope").unwrap_err().code(),
            crate::ErrorCode::NotFound
        );
    }
}
