//! The visual channel's vocabulary (DESIGN §9): a multimodal model embeds each visual asset's
//! pixels and the query's words into one space, so a query finds a chart or a photograph whose
//! words are in no text layer. Its vectors are a family of their own, keyed by the asset's bytes
//! (`visual_vectors`): a picture that recurs in later revisions or other documents is embedded once.
//! Publication makes sure the pictures have vectors (`ingest::visual`); the query scans them
//! (`query::visual`).

use serde::{Deserialize, Serialize};

use super::embedder::{Embedded, FamilySpec};
use crate::error::Result;

/// One picture to embed.
#[derive(Debug, Clone, Copy)]
pub struct Picture<'a> {
    /// Its bytes, as retained.
    pub bytes: &'a [u8],
    /// Its media type: PNG, JPEG, GIF or WebP.
    pub media_type: &'a str,
}

/// Embeds pictures and text queries into one space (a provider the TypeScript side calls).
pub trait VisualEmbedder: Send + Sync {
    /// The family its vectors belong to (`representation` is `image`).
    fn spec(&self) -> &FamilySpec;
    /// Embeds pictures as documents, in order.
    ///
    /// # Errors
    /// `E_PROVIDER` for a provider failure.
    fn embed_pictures(&self, pictures: &[Picture<'_>]) -> Result<Embedded>;
    /// Embeds a search query's text.
    ///
    /// # Errors
    /// `E_PROVIDER` for a provider failure.
    fn embed_query(&self, text: &str) -> Result<Embedded>;
}

/// What making sure the snapshot's pictures have vectors did.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct VisualReport {
    /// Distinct pictures the members hold whose collection permits upload.
    pub pictures: usize,
    /// Already embedded (in this family).
    pub cached: usize,
    /// Sent to the embedder now.
    pub embedded: usize,
    /// Not embeddable: pixels that do not decode within the limits, or bytes no longer retained.
    pub skipped: usize,
    /// Held only by collections that do not permit upload.
    pub not_permitted: usize,
    /// Tokens the provider reported.
    pub tokens: u64,
    /// Embedder calls.
    pub calls: usize,
    /// Time spent embedding.
    pub embed_ms: u64,
}

/// The key a family's rows are stored under.
#[must_use]
pub fn family_key(spec: &FamilySpec) -> String {
    spec.cache_key()
}
