//! Vector records: one vector per (family, sha256 of the exact input text), in the workspace and in
//! a user-level cache shared by every workspace on the machine, so an input is embedded once.
//! The two ports here are what the embedding flow needs of them; the store implements both
//! (`store::vectors`: the workspace's rows, and the user cache's own database).

use std::collections::HashMap;

use sha2::{Digest, Sha256};

use super::embedder::FamilySpec;
use crate::error::Result;

/// The sha256 (hex) of an input text: the identity of its vector within a family.
#[must_use]
pub fn input_sha256(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
}

/// A stored vector and the tokens its input cost.
#[derive(Debug, Clone)]
pub struct Record {
    /// The vector.
    pub vector: Vec<f32>,
    /// Tokens the embedder read.
    pub tokens: usize,
}

pub(crate) fn to_blob(vector: &[f32]) -> Vec<u8> {
    vector.iter().flat_map(|x| x.to_le_bytes()).collect()
}

pub(crate) fn from_blob(blob: &[u8]) -> Vec<f32> {
    blob.chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

/// The workspace's vector records.
pub trait VectorRecords {
    /// The id of `spec`'s family in this workspace, created on first use.
    ///
    /// # Errors
    /// Store errors.
    fn family_id(&self, spec: &FamilySpec) -> Result<i64>;

    /// The vectors of `shas` this family already has, by sha.
    ///
    /// # Errors
    /// Store errors.
    fn lookup(&self, family: i64, shas: &[String]) -> Result<HashMap<String, Record>>;

    /// Stores vectors (an input already stored keeps its first vector).
    ///
    /// # Errors
    /// Store errors.
    fn insert(
        &self,
        family: i64,
        rows: &[(String, Record)],
        receipt: &serde_json::Value,
    ) -> Result<()>;

    /// Tokens embedded and billed since `since_ms` (Unix ms).
    ///
    /// # Errors
    /// Store errors.
    fn billed_tokens_since(&self, since_ms: i64) -> Result<u64>;
}

/// The user-level cache: vectors by family cache key and input sha. A cache that cannot be read
/// answers nothing and one that cannot be written is skipped (each with a warning): a cache miss
/// is re-embedded, never wrong.
pub trait VectorCache {
    /// Cached vectors of `shas`, by sha.
    fn lookup(&self, key: &str, shas: &[String]) -> HashMap<String, Record>;

    /// Adds vectors.
    fn insert(&self, key: &str, rows: &[(String, Record)]);
}
