//! Lexical generations on OpenSearch.
//!
//! A generation is a manifest (a document of `<prefix>-manifests`, id = the generation's name)
//! listing the part indices it reads and, per part, the revisions it no longer sees. A full build
//! writes one part; a derived generation (an add) writes a part holding only the changed files'
//! chunks and adds the replaced revisions to its parents' exclusions — so a one-file change
//! writes one file's chunks, never the corpus. Parts are never changed after they are written
//! (except by an erasure, which must reach every copy), so a pinned snapshot keeps answering from
//! its manifest while newer ones are published. At [`MAX_PARTS`] parts an add folds the parts
//! earlier adds wrote (not the full build's) into its own, and `manage compact` reindexes a
//! generation's visible documents into one part.
//!
//! Text is analysed here, by the same analyzer the embedded tantivy index uses, and sent as its
//! tokens to a `whitespace`-tokenised field: the cluster indexes exactly the embedded path's
//! terms (the CJK bigrams and Thai trigrams included), which no chain of OpenSearch's own
//! filters reproduces. Scoring is the cluster's BM25 (k1 1.2, b 0.75, Lucene's IDF) with
//! statistics across every part and shard (`dfs_query_then_fetch`); query terms carry the same
//! weights as on the embedded path ([`crate::lexical::weigh`]).

use std::collections::BTreeSet;
use std::sync::Arc;

use reqwest::Method;
use serde_json::{Value, json};
use tantivy::tokenizer::TextAnalyzer;

use super::OpenSearch;
use super::parts::{Channel, Manifest, Part, Prefix, lost, scored_windows};
use crate::config::Lexical;
use crate::error::Result;
use crate::lexical::port::{LexicalGenerations, LexicalSearch};
use crate::lexical::{Compaction, Filter, LexDoc, TIE_MARGIN, best_first, query_terms, weigh};

/// The lexical channel's manifests and parts (mapping version 1).
const LEXICAL: Channel = Channel {
    name: "lexical",
    infix: "lex",
    schema: 1,
};

/// Parts one generation may read: an add that would make more folds the earlier adds' parts
/// into one.
pub(super) const MAX_PARTS: usize = 8;

/// The most distinct query terms sent: each is two clauses (body and capsule), and the cluster
/// refuses a query of more than 1024 clauses by default (`indices.query.bool.max_clause_count`).
const MAX_QUERY_TERMS: usize = 500;

/// Documents per bulk request before the byte cap splits it further.
const BULK_DOCS: usize = 2000;

/// The lexical generations of one workspace on a cluster.
pub struct OpenSearchGenerations {
    prefix: Arc<Prefix>,
    config: Lexical,
    analyzer: TextAnalyzer,
    query_analyzer: TextAnalyzer,
}

impl std::fmt::Debug for OpenSearchGenerations {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenSearchGenerations")
            .field("url", &self.prefix.client.url())
            .field("prefix", &self.prefix.name)
            .finish_non_exhaustive()
    }
}

impl std::fmt::Debug for OpenSearchIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenSearchIndex")
            .field("parts", &self.manifest.parts.len())
            .finish_non_exhaustive()
    }
}

impl OpenSearchGenerations {
    /// Generations under `prefix`, analysed with `config`.
    pub(super) fn new(prefix: Arc<Prefix>, config: &Lexical) -> Self {
        Self {
            prefix,
            config: config.clone(),
            analyzer: crate::lexical::analyzer(config),
            query_analyzer: crate::lexical::query_analyzer(config),
        }
    }

    fn manifest(&self, generation: &str) -> Result<Manifest> {
        self.prefix.manifest(LEXICAL, generation)
    }

    /// Creates an empty part index with the mapping every part has.
    fn create_part(&self, index: &str) -> Result<()> {
        let text = json!({
            "type": "text",
            "analyzer": "tychora_tokens",
            "index_options": "freqs",
        });
        let body = json!({
            "settings": {
                "number_of_shards": self.prefix.shards,
                "number_of_replicas": self.prefix.replicas,
                "refresh_interval": "-1",
                // A query's eligible windows arrive as one terms filter (facets, sensitivity).
                "max_terms_count": 4_194_304,
                "analysis": { "analyzer": { "tychora_tokens": {
                    "type": "custom", "tokenizer": "whitespace"
                } } }
            },
            "mappings": {
                "dynamic": "strict",
                "_meta": { "tychora_schema": LEXICAL.schema },
                "properties": {
                    "chunk_id": { "type": "long" },
                    "owner_id": { "type": "long" },
                    "revision_id": { "type": "long" },
                    "collection": { "type": "keyword" },
                    "kind": { "type": "keyword" },
                    "body": text,
                    "capsule": text,
                }
            }
        });
        self.prefix.client.call(
            Method::PUT,
            &format!("/{index}?wait_for_active_shards=1"),
            Some(&body),
        )?;
        Ok(())
    }

    /// Writes `docs` into the new part `index`, refreshed; returns how many were written.
    fn write_part<'a>(
        &self,
        index: &str,
        docs: &mut dyn Iterator<Item = LexDoc<'a>>,
    ) -> Result<u64> {
        self.create_part(index)?;
        self.fill_part(index, docs)
    }

    /// Writes `docs` into the part `index` (made already), then opens it to search.
    fn fill_part<'a>(
        &self,
        index: &str,
        docs: &mut dyn Iterator<Item = LexDoc<'a>>,
    ) -> Result<u64> {
        let mut written = 0u64;
        let mut lines = Vec::with_capacity(BULK_DOCS * 2);
        for doc in docs {
            lines.push(
                json!({ "index": { "_index": index, "_id": doc.chunk_id.to_string() } })
                    .to_string(),
            );
            lines.push(
                json!({
                    "chunk_id": doc.chunk_id,
                    "owner_id": doc.owner_id,
                    "revision_id": doc.revision_id,
                    "collection": doc.collection,
                    "kind": doc.kind,
                    "body": self.tokens(doc.text),
                    "capsule": self.tokens(doc.capsule),
                })
                .to_string(),
            );
            written += 1;
            if lines.len() >= BULK_DOCS * 2 {
                self.prefix.client.bulk(&lines)?;
                lines.clear();
            }
        }
        if !lines.is_empty() {
            self.prefix.client.bulk(&lines)?;
        }
        self.prefix.open_part(index)?;
        Ok(written)
    }

    /// `text` as the index analyzer's tokens, space-separated (the field splits on whitespace,
    /// and no token holds one).
    fn tokens(&self, text: &str) -> String {
        let mut analyzer = self.analyzer.clone();
        let mut stream = analyzer.token_stream(text);
        let mut out = String::with_capacity(text.len());
        while let Some(token) = stream.next() {
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(&token.text);
        }
        out
    }

    fn publish(&self, name: &str, parts: Vec<Part>) -> Result<u64> {
        self.prefix
            .publish(name, Manifest::new(LEXICAL, self.prefix.shards, parts))
    }
}

impl LexicalGenerations for OpenSearchGenerations {
    fn derivable(&self, generation: &str) -> bool {
        self.manifest(generation).is_ok()
    }

    fn build<'a>(&self, name: &str, docs: &mut dyn Iterator<Item = LexDoc<'a>>) -> Result<u64> {
        self.prefix.claim()?;
        let index = self.prefix.part_name(LEXICAL, name);
        self.write_part(&index, docs)?;
        self.publish(
            name,
            vec![Part {
                index,
                excluded: Vec::new(),
            }],
        )
    }

    fn derive<'a>(
        &self,
        base: &str,
        name: &str,
        removed_revisions: &[u64],
        docs: &mut dyn Iterator<Item = LexDoc<'a>>,
    ) -> Result<u64> {
        self.prefix.claim()?;
        let mut parts = excluding(self.manifest(base)?.parts, removed_revisions);
        let mut docs = docs.peekable();
        let index = self.prefix.part_name(LEXICAL, name);
        if parts.len() >= MAX_PARTS {
            // The parts written by earlier adds (all but the first, the full build's) are folded
            // with this change into one new part: the cost follows those small parts, never the
            // corpus, and a generation reads at most MAX_PARTS indices.
            let small = Manifest::new(LEXICAL, self.prefix.shards, parts.split_off(1));
            self.create_part(&index)?;
            self.prefix.reindex(&small, &index)?;
            self.fill_part(&index, &mut docs)?;
            parts.push(Part {
                index,
                excluded: Vec::new(),
            });
        } else if docs.peek().is_some() {
            self.write_part(&index, &mut docs)?;
            parts.push(Part {
                index,
                excluded: Vec::new(),
            });
        }
        self.publish(name, parts)
    }

    fn discard(&self, name: &str) {
        self.prefix.discard(LEXICAL, name);
    }

    fn open(&self, generation: &str) -> Result<Arc<dyn LexicalSearch>> {
        let manifest = self.manifest(generation)?;
        self.prefix.check_parts(LEXICAL, generation, &manifest)?;
        Ok(Arc::new(OpenSearchIndex {
            client: Arc::clone(&self.prefix.client),
            manifest,
            analyzer: self.query_analyzer.clone(),
            config: self.config.clone(),
        }))
    }

    fn holds_revisions(&self, generation: &str, revisions: &[u64]) -> Result<bool> {
        if revisions.is_empty() {
            return Ok(false);
        }
        let manifest = self.manifest(generation)?;
        self.prefix.holds_revisions(&manifest, revisions)
    }

    /// An erasure reaches every copy: the revisions' documents are deleted from every part of
    /// this prefix and the parts merged (see [`Prefix::erase`]).
    fn scrub(&self, from: &str, name: &str, revisions: &[u64]) -> Result<u64> {
        self.prefix.claim()?;
        let manifest = self.manifest(from)?;
        self.prefix.erase(LEXICAL, revisions)?;
        self.publish(name, manifest.parts)
    }

    /// Every part of the prefix, whatever references it (a pinned generation, one waiting for
    /// collection): see [`Prefix::erase`].
    fn erase(&self, revisions: &[u64]) -> Result<bool> {
        self.prefix.claim()?;
        self.prefix.erase(LEXICAL, revisions)?;
        Ok(true)
    }

    fn shape(&self, generation: &str) -> Result<(usize, u64)> {
        let manifest = self.manifest(generation)?;
        let found = self.prefix.client.call(
            Method::POST,
            &format!("/{}/_count", manifest.indices()),
            None,
        )?;
        let stored = found.get("count").and_then(Value::as_u64).unwrap_or(0);
        Ok((
            manifest.parts.len(),
            stored.saturating_sub(self.prefix.count(&manifest)?),
        ))
    }

    fn compact(&self, from: &str, name: &str) -> Result<Option<Compaction>> {
        self.prefix.claim()?;
        let manifest = self.manifest(from)?;
        if manifest.parts.len() == 1 && manifest.parts[0].excluded.is_empty() {
            return Ok(None);
        }
        let index = self.prefix.part_name(LEXICAL, name);
        self.create_part(&index)?;
        self.prefix.reindex(&manifest, &index)?;
        self.prefix.open_part(&index)?;
        let documents = self.publish(
            name,
            vec![Part {
                index,
                excluded: Vec::new(),
            }],
        )?;
        Ok(Some(Compaction {
            segments_after: 1,
            documents,
        }))
    }

    fn collect(
        &self,
        keep: &[String],
        held: &[String],
        retired: &mut dyn FnMut(&str) -> Result<()>,
    ) -> Result<usize> {
        self.prefix.collect(LEXICAL, keep, held, retired)
    }
}

/// `parts` with `removed_revisions` added to each one's exclusions.
pub(super) fn excluding(parts: Vec<Part>, removed_revisions: &[u64]) -> Vec<Part> {
    parts
        .into_iter()
        .map(|mut p| {
            let mut excluded: BTreeSet<u64> = p.excluded.into_iter().collect();
            excluded.extend(removed_revisions.iter().copied());
            p.excluded = excluded.into_iter().collect();
            p
        })
        .collect()
}

/// One opened generation on the cluster.
struct OpenSearchIndex {
    client: Arc<OpenSearch>,
    manifest: Manifest,
    analyzer: TextAnalyzer,
    config: Lexical,
}

impl LexicalSearch for OpenSearchIndex {
    fn search(&self, query: &str, filter: &Filter, limit: usize) -> Result<Vec<(u64, u64, f32)>> {
        let terms = query_terms(&self.analyzer, query);
        if terms.is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        let max = self
            .config
            .max_query_terms
            .map_or(MAX_QUERY_TERMS, |m| m.min(MAX_QUERY_TERMS));
        let documents = self.manifest.documents as f64;
        let weighted = weigh(&terms, self.config.idf, Some(max), &mut |asked| {
            Ok((documents, self.document_frequencies(asked)?))
        })?;
        let mut should = Vec::with_capacity(weighted.len() * 2);
        for (term, weight) in &weighted {
            should.push(json!({ "term": { "body": { "value": term, "boost": weight } } }));
            if self.config.capsule_boost > 0.0 {
                should.push(json!({ "term": { "capsule": {
                    "value": term, "boost": self.config.capsule_boost * weight
                } } }));
            }
        }
        let mut eligible = vec![self.manifest.visibility()];
        if !filter.collections.is_empty() {
            eligible.push(json!({ "terms": { "collection": filter.collections } }));
        }
        if !filter.kinds.is_empty() {
            eligible.push(json!({ "terms": { "kind": filter.kinds } }));
        }
        if let Some(chunks) = &filter.chunks {
            let ids: Vec<u64> = chunks.iter().copied().collect();
            eligible.push(json!({ "terms": { "chunk_id": ids } }));
        }
        let body = json!({
            "size": limit + TIE_MARGIN,
            "_source": false,
            "track_total_hits": false,
            "docvalue_fields": ["chunk_id", "owner_id"],
            "query": { "bool": { "should": should, "minimum_should_match": 1, "filter": eligible } }
        });
        let found = self
            .client
            .call(
                Method::POST,
                &format!(
                    "/{}/_search?search_type={}",
                    self.manifest.indices(),
                    // BM25's statistics across every part and shard; one shard of one part has
                    // them already, and the extra round trip is skipped.
                    if self.manifest.parts.len() == 1 && self.manifest.shards == 1 {
                        "query_then_fetch"
                    } else {
                        "dfs_query_then_fetch"
                    }
                ),
                Some(&body),
            )
            .map_err(lost(LEXICAL))?;
        #[allow(clippy::cast_possible_truncation)] // BM25 scores are small
        let hits = scored_windows(&found, LEXICAL)?
            .into_iter()
            .map(|(chunk, owner, score)| (score as f32, chunk, owner))
            .collect();
        Ok(best_first(hits, limit))
    }

    fn documents(&self) -> Result<u64> {
        let found = self
            .client
            .call(
                Method::POST,
                &format!("/{}/_count", self.manifest.indices()),
                Some(&json!({ "query": self.manifest.visibility() })),
            )
            .map_err(lost(LEXICAL))?;
        Ok(found.get("count").and_then(Value::as_u64).unwrap_or(0))
    }
}

impl OpenSearchIndex {
    /// Document frequencies of `terms` in the generation's body field, in one request (one
    /// filter aggregation per term).
    fn document_frequencies(&self, terms: &[&str]) -> Result<Vec<f64>> {
        let aggs: serde_json::Map<String, Value> = terms
            .iter()
            .enumerate()
            .map(|(i, t)| {
                (
                    format!("t{i}"),
                    json!({ "filter": { "term": { "body": t } } }),
                )
            })
            .collect();
        let found = self.client.call(
            Method::POST,
            &format!("/{}/_search", self.manifest.indices()),
            Some(&json!({ "size": 0, "query": self.manifest.visibility(), "aggs": aggs })),
        )?;
        Ok((0..terms.len())
            .map(|i| {
                found
                    .pointer(&format!("/aggregations/t{i}/doc_count"))
                    .and_then(Value::as_f64)
                    .unwrap_or(0.0)
            })
            .collect())
    }
}
