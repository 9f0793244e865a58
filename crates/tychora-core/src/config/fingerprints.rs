//! One fingerprint per stage a setting can affect (DESIGN §4): acquisition, extraction, indexing,
//! eligibility, query and output. A changed setting changes the fingerprint of its own stage
//! only, so a formatting change never re-extracts or re-indexes anything, and an analyzer change
//! rebuilds the lexical generation and nothing else. Code versions (parser, grammar, document
//! readers) add to the extraction fingerprint where extractions are written (`ingest`).

use serde::Serialize;
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};

use super::{Config, Pack};

/// The version of the lexical analyzer's own code (`lexical/`), part of the indexing fingerprint:
/// a change rebuilds the lexical generation. 2: unspaced scripts as bigrams (`lexical/scripts.rs`).
pub const ANALYZER_VERSION: &str = "words.2";

/// sha256 (first 16 bytes, hex) of each stage's settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StageFingerprints {
    /// The `[capture]` settings.
    pub acquisition: String,
    /// The pack's formats, chunking and identifier patterns, each kind's normalisation and
    /// formats, `[documents]` and `[ocr]`.
    pub extraction: String,
    /// The pack's `lexical` settings with [`ANALYZER_VERSION`], the `[embeddings]` family, the
    /// text representation and the `[visual]` model.
    pub indexing: String,
    /// Each kind's version, lane, facets and schemas, the pack's lane order, and `[sensitivity]`.
    pub eligibility: String,
    /// The pack's fusion and graph settings, text depth, rerank depth and rerank model;
    /// `[rerank]` and `[summaries]`.
    pub query: String,
    /// The pack's `output` and `request_overrides`.
    pub output: String,
}

fn digest(value: &Value) -> String {
    let bytes = serde_json::to_vec(value).unwrap_or_default();
    hex::encode(&Sha256::digest(&bytes)[..16])
}

impl Config {
    /// The stage fingerprints of this configuration with its resolved `pack`.
    #[must_use]
    pub fn stage_fingerprints(&self, pack: &Pack) -> StageFingerprints {
        // How each kind is read belongs to extraction; how its evidence is grouped and filtered,
        // to eligibility.
        let reading: Value = pack
            .kinds
            .iter()
            .map(|(name, k)| {
                (
                    name.clone(),
                    json!({ "normalisation": k.normalisation, "formats": k.formats }),
                )
            })
            .collect::<serde_json::Map<_, _>>()
            .into();
        let grouping: Value = pack
            .kinds
            .iter()
            .map(|(name, k)| {
                (name.clone(), json!({ "version": k.version, "lane": k.lane, "facets": k.facets, "schemas": k.schemas }))
            })
            .collect::<serde_json::Map<_, _>>()
            .into();
        let embeddings = self.embeddings.as_ref().map(|e| {
            json!({
                "provider": e.provider, "model": e.model, "model_dir": e.model_dir, "dimension": e.dimension,
                "representation": e.representation, "quantization": e.quantization,
            })
        });
        StageFingerprints {
            acquisition: digest(&json!({ "capture": self.capture })),
            extraction: digest(&json!({
                "formats": pack.formats, "chunking": pack.chunking, "identifiers": pack.identifiers,
                "kinds": reading, "documents": self.documents, "ocr": self.ocr,
            })),
            indexing: digest(&json!({
                "lexical": pack.lexical, "analyzer": ANALYZER_VERSION, "embeddings": embeddings, "representation": pack.text.representation,
                "visual": self.visual.as_ref().map(|v| (&v.provider, &v.model, v.dimension)),
            })),
            eligibility: digest(
                &json!({ "kinds": grouping, "lanes": pack.lanes, "sensitivity": self.sensitivity }),
            ),
            query: digest(&json!({
                "fusion": pack.fusion, "graph": pack.graph, "text": { "depth": pack.text.depth,
                "rerank_depth": pack.text.rerank_depth, "rerank_model": pack.text.rerank_model },
                "rerank": self.rerank.as_ref().map(|r| (&r.provider, &r.model, r.depth)),
                "summaries": self.summaries,
            })),
            output: digest(
                &json!({ "output": pack.output, "request_overrides": pack.request_overrides }),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn changed(a: &StageFingerprints, b: &StageFingerprints) -> Vec<&'static str> {
        let pairs = [
            ("acquisition", &a.acquisition, &b.acquisition),
            ("extraction", &a.extraction, &b.extraction),
            ("indexing", &a.indexing, &b.indexing),
            ("eligibility", &a.eligibility, &b.eligibility),
            ("query", &a.query, &b.query),
            ("output", &a.output, &b.output),
        ];
        pairs
            .iter()
            .filter(|(_, x, y)| x != y)
            .map(|(n, _, _)| *n)
            .collect()
    }

    #[test]
    fn each_setting_changes_the_fingerprint_of_its_own_stage_only() {
        let config: Config =
            toml::from_str(&super::super::default_toml("demo", "documents", None)).unwrap();
        let pack = config.pack().unwrap();
        let base = config.stage_fingerprints(&pack);
        let with = |f: &dyn Fn(&mut Config, &mut Pack)| {
            let (mut c, mut p) = (config.clone(), pack.clone());
            f(&mut c, &mut p);
            changed(&base, &c.stage_fingerprints(&p))
        };
        assert_eq!(with(&|_, p| p.output.limit = 3), ["output"]);
        assert_eq!(with(&|_, p| p.lexical.stemmer = false), ["indexing"]);
        assert_eq!(with(&|_, p| p.chunking.target_tokens = 256), ["extraction"]);
        assert_eq!(with(&|_, p| p.fusion.weights.exact = 1.0), ["query"]);
        assert_eq!(
            with(&|_, p| p.kinds.get_mut("law").unwrap().lane = "guidance".into()),
            ["eligibility"]
        );
        assert_eq!(with(&|c, _| c.capture.max_file_bytes = 1), ["acquisition"]);
        assert_eq!(
            with(
                &|_, p| p.kinds.get_mut("law").unwrap().normalisation.strategy =
                    super::super::Strategy::Format
            ),
            ["extraction"]
        );
    }
}
