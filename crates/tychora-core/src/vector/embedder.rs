//! What turns text into vectors. The core runs the local model itself; a provider the TypeScript
//! side calls (Voyage) is handed in through the binding as an [`Embedder`] too.

use serde::{Deserialize, Serialize};

use crate::error::Result;

/// Whether a text is a query or a document: asymmetric models embed the two differently.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum InputKind {
    /// A search query.
    Query,
    /// A window of a document.
    Document,
}

/// A family of vectors: who makes them, from what text, and how they are compared.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FamilySpec {
    /// `local` or `voyage`.
    pub provider: String,
    /// The model (for `local`, its name and the sha256 prefix of its weights).
    pub model: String,
    /// Vector length.
    pub dimension: usize,
    /// What is embedded: `window`, `window+capsule` or `contextual`.
    pub representation: String,
    /// `l2` (unit vectors) or `none`.
    pub normalization: String,
    /// How the index stores vectors: `f32`, `f16` or `i8`.
    pub quantization: String,
    /// `cos`, `ip` or `l2`.
    pub metric: String,
}

/// `provider/model (representation)`, as diagnostics name a family.
impl std::fmt::Display for FamilySpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}/{} ({})",
            self.provider, self.model, self.representation
        )
    }
}

impl FamilySpec {
    /// The key vectors of this family are cached under outside a workspace (the user-level
    /// cache), independent of any workspace's family ids. Quantization is an index setting, not
    /// part of the vectors, so it is not in the key.
    #[must_use]
    pub fn cache_key(&self) -> String {
        format!(
            "{}|{}|{}|{}|{}",
            self.provider, self.model, self.dimension, self.representation, self.normalization
        )
    }
}

/// Vectors for a batch of inputs, in input order.
#[derive(Debug, Clone)]
pub struct Embedded {
    /// One vector per input.
    pub vectors: Vec<Vec<f32>>,
    /// Tokens the model read per input (after any truncation).
    pub tokens: Vec<usize>,
    /// Where they came from (provider, model, calls, time), recorded with each vector.
    pub receipt: serde_json::Value,
}

/// Turns texts into vectors of one family.
pub trait Embedder: Send + Sync {
    /// The family the vectors belong to.
    fn spec(&self) -> &FamilySpec;
    /// Embeds `texts` (in order). Vectors are normalised when the family says `l2`.
    ///
    /// # Errors
    /// Model or provider failures (`E_PROVIDER` for a provider, `E_INTERNAL` for a model bug).
    fn embed(&self, texts: &[&str], kind: InputKind) -> Result<Embedded>;
    /// Embeds whole documents, each window in the context of its document (contextualised chunk
    /// embeddings; families whose representation is `contextual`). One answer per document.
    ///
    /// # Errors
    /// `E_INVALID_ARGUMENT` for an embedder that cannot; as [`Self::embed`].
    fn embed_documents(&self, documents: &[Vec<&str>], kind: InputKind) -> Result<Vec<Embedded>> {
        let _ = (documents, kind);
        Err(crate::error::Error::InvalidArgument(format!(
            "{}/{} does not embed windows in the context of their document (representation \"contextual\")",
            self.spec().provider,
            self.spec().model
        )))
    }
    /// How many tokens an input may have before the embedder truncates it (for cost estimates).
    fn max_input_tokens(&self) -> usize;
    /// Counts an input's tokens the way the embedder would (for the dry run and budgets).
    fn count_tokens(&self, text: &str) -> usize;
}

/// Relevance scores for documents against a query, from a reranking model.
#[derive(Debug, Clone)]
pub struct Reranked {
    /// One score per document, in document order (higher is more relevant).
    pub scores: Vec<f64>,
    /// Tokens the provider billed.
    pub tokens: usize,
    /// Where they came from (provider, model, time).
    pub receipt: serde_json::Value,
}

/// Reorders candidates by a cross-encoder's relevance (a provider the TypeScript side calls).
pub trait Reranker: Send + Sync {
    /// `provider/model`, as reported in the result.
    fn name(&self) -> String;
    /// Scores `documents` against `query`.
    ///
    /// # Errors
    /// `E_PROVIDER` for a provider failure.
    fn rerank(&self, query: &str, documents: &[&str]) -> Result<Reranked>;
}
