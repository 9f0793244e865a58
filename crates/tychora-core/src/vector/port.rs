//! The vector channels' port: where a snapshot's vector generation is written and searched. The
//! embedded adapter is a `.tyv` file per generation under `indexes/text/` ([`UsearchGenerations`],
//! flat or a usearch graph, possibly a layer over a full file); the service adapter is a set of
//! `knn_vector` indices on an OpenSearch cluster (the `opensearch` module, above this one). The
//! query path (the text and summary channels), publication, verify, erasure and garbage
//! collection go through these traits; eligibility is an [`Eligible`] applied inside the
//! engine's search, never a cut after the top-k.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::embedder::FamilySpec;
use super::index::{Eligible, Entry, VectorIndex};
use crate::error::Result;

/// One opened generation.
pub trait VectorSearch: Send + Sync + std::fmt::Debug {
    /// The `depth` nearest eligible windows to `query`, nearest first, as `(chunk id, owner id,
    /// distance)` (usearch's convention: `1 − cosine` for a cosine family).
    ///
    /// # Errors
    /// A query of the wrong dimension (`E_INVALID_ARGUMENT`); the engine's errors.
    fn search(
        &self,
        query: &[f32],
        depth: usize,
        eligible: &Eligible<'_>,
    ) -> Result<Vec<(u64, u64, f32)>>;

    /// A window's vector, when the generation holds it and `eligible` admits it (unit length for
    /// a cosine family).
    ///
    /// # Errors
    /// The engine's errors.
    fn vector_of(&self, key: u64, eligible: &Eligible<'_>) -> Result<Option<Vec<f32>>>;

    /// [`VectorSearch::vector_of`] for many windows at once (one request on a cluster): the ones
    /// the generation holds and `eligible` admits.
    ///
    /// # Errors
    /// The engine's errors.
    fn vectors_of(&self, keys: &[u64], eligible: &Eligible<'_>) -> Result<HashMap<u64, Vec<f32>>> {
        let mut out = HashMap::with_capacity(keys.len());
        for &key in keys {
            if let Some(v) = self.vector_of(key, eligible)? {
                out.insert(key, v);
            }
        }
        Ok(out)
    }

    /// The evidence owners of the windows of `keys` the generation holds.
    ///
    /// # Errors
    /// The engine's errors.
    fn owners_of(&self, keys: &[u64]) -> Result<HashMap<u64, u64>>;

    /// Vectors the generation holds.
    ///
    /// # Errors
    /// The engine's errors.
    fn documents(&self) -> Result<u64>;
}

/// A written generation: its name (what the store records) and the sha256 the store vouches for
/// it with (the file's, or the cluster manifest's).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// The generation's name.
    pub name: String,
    /// Its sha256.
    pub sha256: String,
    /// Vectors it holds.
    pub documents: u64,
}

/// Where vector generations are written, opened, scrubbed and collected.
pub trait VectorGenerations: Send + Sync + std::fmt::Debug {
    /// Writes generation `name` of family `spec` holding `entries`.
    ///
    /// # Errors
    /// The engine's and I/O errors; a vector of the wrong dimension.
    fn build(&self, name: &str, spec: &FamilySpec, entries: &[Entry<'_>]) -> Result<Written>;

    /// Writes generation `name` as `base` without the windows of `removed_revisions`, plus
    /// `entries`: the cost follows the change. `None` where the adapter's incremental form is
    /// another (the embedded files' layers, planned from the store's batch records by
    /// `snapshot::text_layer`); the caller then writes a layer or a full generation.
    ///
    /// # Errors
    /// The engine's errors (the caller then builds afresh).
    fn derive(
        &self,
        base: &str,
        name: &str,
        spec: &FamilySpec,
        removed_revisions: &[u64],
        entries: &[Entry<'_>],
    ) -> Result<Option<Written>>;

    /// Whether [`VectorGenerations::derive`] writes generations incrementally (else it answers
    /// `None` and a publication writes a layer or a full generation).
    fn derives(&self) -> bool {
        false
    }

    /// Removes what a failed write of `name` left (best effort).
    fn discard(&self, name: &str);

    /// Opens `generation`, checked against the sha256 the store recorded for it.
    ///
    /// # Errors
    /// `E_CORRUPT` when it is missing, changed or unreadable (rebuild it); `E_STORE_UNAVAILABLE`
    /// when the engine cannot be reached.
    fn open(&self, generation: &str, sha256: &str) -> Result<Arc<dyn VectorSearch>>;

    /// Whether `generation` still holds a window of `revisions` (or one of `chunks`).
    ///
    /// # Errors
    /// The engine's errors.
    fn holds(
        &self,
        generation: &str,
        sha256: &str,
        revisions: &[u64],
        chunks: &HashSet<u64>,
    ) -> Result<bool>;

    /// Takes `revisions` out of every copy the engine keeps, in place, and says whether it did:
    /// then no generation needs rewriting. `false` where a generation is instead rewritten
    /// from the vector records (the embedded files: a graph cannot forget a vector).
    ///
    /// # Errors
    /// The engine's errors (nothing is taken out of the store then).
    fn erase(&self, revisions: &[u64]) -> Result<bool>;

    /// Removes every generation not in `keep` and not in `held` (opened by a query now); calls
    /// `retired` with each one removed. Returns how many were removed.
    ///
    /// # Errors
    /// The engine's errors.
    fn collect(
        &self,
        keep: &[String],
        held: &[String],
        retired: &mut dyn FnMut(&str) -> Result<()>,
    ) -> Result<usize>;

    /// The folder generations live in, for the embedded adapter (`None` on a cluster).
    fn local_dir(&self) -> Option<&Path> {
        None
    }
}

/// The embedded adapter: a `.tyv` file per generation.
#[derive(Debug, Clone)]
pub struct UsearchGenerations {
    dir: PathBuf,
}

impl UsearchGenerations {
    /// Generations under `dir`.
    #[must_use]
    pub fn new(dir: PathBuf) -> Self {
        Self { dir }
    }
}

impl VectorSearch for VectorIndex {
    fn search(
        &self,
        query: &[f32],
        depth: usize,
        eligible: &Eligible<'_>,
    ) -> Result<Vec<(u64, u64, f32)>> {
        Ok(VectorIndex::search(self, query, depth, eligible)?
            .into_iter()
            .map(|(key, distance)| (key, self.owner_of(key).unwrap_or(key), distance))
            .collect())
    }

    fn vector_of(&self, key: u64, eligible: &Eligible<'_>) -> Result<Option<Vec<f32>>> {
        VectorIndex::vector_of(self, key, eligible)
    }

    fn owners_of(&self, keys: &[u64]) -> Result<HashMap<u64, u64>> {
        Ok(keys
            .iter()
            .filter_map(|&k| self.owner_of(k).map(|o| (k, o)))
            .collect())
    }

    fn documents(&self) -> Result<u64> {
        Ok(self.len() as u64)
    }
}

impl VectorGenerations for UsearchGenerations {
    fn build(&self, name: &str, spec: &FamilySpec, entries: &[Entry<'_>]) -> Result<Written> {
        let (sha256, _) = super::index::build(&self.dir.join(name), spec, entries)?;
        Ok(Written {
            name: name.to_string(),
            sha256,
            documents: entries.len() as u64,
        })
    }

    fn derive(
        &self,
        _base: &str,
        _name: &str,
        _spec: &FamilySpec,
        _removed_revisions: &[u64],
        _entries: &[Entry<'_>],
    ) -> Result<Option<Written>> {
        Ok(None)
    }

    fn discard(&self, name: &str) {
        let _ = std::fs::remove_file(self.dir.join(name));
    }

    fn open(&self, generation: &str, sha256: &str) -> Result<Arc<dyn VectorSearch>> {
        Ok(Arc::new(VectorIndex::open(
            &self.dir.join(generation),
            sha256,
        )?))
    }

    fn holds(
        &self,
        generation: &str,
        sha256: &str,
        _revisions: &[u64],
        chunks: &HashSet<u64>,
    ) -> Result<bool> {
        if chunks.is_empty() {
            return Ok(false);
        }
        Ok(
            match VectorIndex::open(&self.dir.join(generation), sha256) {
                // A layer is read with its base; rewriting it whole leaves neither behind.
                Ok(index) if index.layer().is_some() => true,
                Ok(index) => index.keys().iter().any(|k| chunks.contains(k)),
                // Unreadable: rewritten from the records like a damaged one.
                Err(_) => true,
            },
        )
    }

    fn erase(&self, _revisions: &[u64]) -> Result<bool> {
        Ok(false)
    }

    fn collect(
        &self,
        keep: &[String],
        held: &[String],
        retired: &mut dyn FnMut(&str) -> Result<()>,
    ) -> Result<usize> {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return Ok(0);
        };
        let mut removed = 0;
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if keep.contains(&name) || held.contains(&name) {
                continue;
            }
            match std::fs::remove_file(entry.path()) {
                Ok(()) => removed += 1,
                Err(e) => log::warn!(
                    "cannot remove stale generation {}: {e}",
                    entry.path().display()
                ),
            }
            retired(&name)?;
        }
        Ok(removed)
    }

    fn local_dir(&self) -> Option<&Path> {
        Some(&self.dir)
    }
}
