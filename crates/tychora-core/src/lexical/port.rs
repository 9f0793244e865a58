//! The lexical channel's port: where a snapshot's generation is written and searched. The
//! embedded adapter is a tantivy directory per generation under `indexes/lexical/`
//! ([`TantivyGenerations`]); the service adapter is a set of indices on an OpenSearch cluster
//! (the `opensearch` module, above this one). Publication, the query path, verify, compaction, erasure and garbage
//! collection see only these traits; eligibility is always a [`Filter`] applied inside the
//! engine's search, never a cut after the top-k.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{Compaction, Filter, LexDoc, LexicalIndex};
use crate::config::Lexical;
use crate::error::Result;

/// One opened generation.
pub trait LexicalSearch: Send + Sync + std::fmt::Debug {
    /// BM25 over body and capsule, query terms OR-ed, inside `filter`. Returns `(chunk_id,
    /// owner_id, score)`, best first, equal scores by chunk id.
    ///
    /// # Errors
    /// The engine's errors; a query it rejects is `E_INVALID_ARGUMENT`.
    fn search(&self, query: &str, filter: &Filter, limit: usize) -> Result<Vec<(u64, u64, f32)>>;

    /// Live documents the generation holds.
    ///
    /// # Errors
    /// The engine's errors.
    fn documents(&self) -> Result<u64>;
}

/// Where generations are written, opened, compacted, scrubbed and collected.
pub trait LexicalGenerations: Send + Sync + std::fmt::Debug {
    /// Whether `generation` exists and can be derived from (else a publication builds afresh).
    fn derivable(&self, generation: &str) -> bool;

    /// Writes generation `name` from `docs`; returns its document count.
    ///
    /// # Errors
    /// The engine's and I/O errors; nothing that failed is referenced.
    fn build<'a>(&self, name: &str, docs: &mut dyn Iterator<Item = LexDoc<'a>>) -> Result<u64>;

    /// Writes generation `name` as `base` without the documents of `removed_revisions`, plus
    /// `docs`: the cost follows the change, not the corpus. Returns its document count.
    ///
    /// # Errors
    /// The engine's and I/O errors (the caller then builds afresh).
    fn derive<'a>(
        &self,
        base: &str,
        name: &str,
        removed_revisions: &[u64],
        docs: &mut dyn Iterator<Item = LexDoc<'a>>,
    ) -> Result<u64>;

    /// Removes what a failed write of `name` left (best effort).
    fn discard(&self, name: &str);

    /// Opens `generation` for searching.
    ///
    /// # Errors
    /// `E_CORRUPT` when it is missing or unreadable (rebuild it); `E_STORE_UNAVAILABLE` when the
    /// engine cannot be reached.
    fn open(&self, generation: &str) -> Result<Arc<dyn LexicalSearch>>;

    /// Whether `generation` still holds (live or deleted) a document of one of `revisions`.
    ///
    /// # Errors
    /// The engine's errors.
    fn holds_revisions(&self, generation: &str, revisions: &[u64]) -> Result<bool>;

    /// Writes `name` as `from` without any trace of `revisions`; returns its document count.
    ///
    /// # Errors
    /// The engine's errors.
    fn scrub(&self, from: &str, name: &str, revisions: &[u64]) -> Result<u64>;

    /// Takes `revisions` out of every copy the engine keeps, in place, and says whether it did
    /// (then no generation needs [`LexicalGenerations::scrub`]). `false` for the embedded
    /// directories, which are copied without them.
    ///
    /// # Errors
    /// The engine's errors (nothing is taken out of the store then).
    fn erase(&self, _revisions: &[u64]) -> Result<bool> {
        Ok(false)
    }

    /// `(parts, deleted documents)` of `generation`: segments for tantivy, indices for OpenSearch.
    ///
    /// # Errors
    /// The engine's errors.
    fn shape(&self, generation: &str) -> Result<(usize, u64)>;

    /// Writes a compacted copy of `from` as `name`, when there is something to compact.
    ///
    /// # Errors
    /// The engine's errors.
    fn compact(&self, from: &str, name: &str) -> Result<Option<Compaction>>;

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

    /// The folder a generation lives in, for the embedded adapter (`None` on a cluster).
    fn local_dir(&self) -> Option<&Path> {
        None
    }
}

/// The embedded adapter: a tantivy directory per generation.
#[derive(Debug, Clone)]
pub struct TantivyGenerations {
    dir: PathBuf,
    config: Lexical,
}

impl TantivyGenerations {
    /// Generations under `dir`, analysed with `config`.
    #[must_use]
    pub fn new(dir: PathBuf, config: Lexical) -> Self {
        Self { dir, config }
    }

    fn path(&self, generation: &str) -> PathBuf {
        self.dir.join(generation)
    }
}

impl LexicalSearch for LexicalIndex {
    fn search(&self, query: &str, filter: &Filter, limit: usize) -> Result<Vec<(u64, u64, f32)>> {
        LexicalIndex::search(self, query, filter, limit)
    }

    fn documents(&self) -> Result<u64> {
        Ok(self.num_docs())
    }
}

impl LexicalGenerations for TantivyGenerations {
    fn derivable(&self, generation: &str) -> bool {
        self.path(generation).join("meta.json").is_file()
    }

    fn build<'a>(&self, name: &str, docs: &mut dyn Iterator<Item = LexDoc<'a>>) -> Result<u64> {
        super::build_generation(&self.path(name), &self.config, docs)
    }

    fn derive<'a>(
        &self,
        base: &str,
        name: &str,
        removed_revisions: &[u64],
        docs: &mut dyn Iterator<Item = LexDoc<'a>>,
    ) -> Result<u64> {
        super::derive_generation(
            &self.path(base),
            &self.path(name),
            &self.config,
            removed_revisions,
            docs,
        )
    }

    fn discard(&self, name: &str) {
        let _ = std::fs::remove_dir_all(self.path(name));
    }

    fn open(&self, generation: &str) -> Result<Arc<dyn LexicalSearch>> {
        Ok(Arc::new(LexicalIndex::open(
            &self.path(generation),
            &self.config,
        )?))
    }

    fn holds_revisions(&self, generation: &str, revisions: &[u64]) -> Result<bool> {
        super::holds_revisions(&self.path(generation), revisions)
    }

    fn scrub(&self, from: &str, name: &str, revisions: &[u64]) -> Result<u64> {
        super::scrub_generation(&self.path(from), &self.path(name), &self.config, revisions)
    }

    fn shape(&self, generation: &str) -> Result<(usize, u64)> {
        super::segment_stats(&self.path(generation))
    }

    fn compact(&self, from: &str, name: &str) -> Result<Option<Compaction>> {
        super::compact_generation(&self.path(from), &self.path(name), &self.config)
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
            match std::fs::remove_dir_all(entry.path()) {
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
