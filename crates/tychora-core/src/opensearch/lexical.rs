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

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Duration;

use reqwest::Method;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tantivy::tokenizer::TextAnalyzer;

use super::OpenSearch;
use crate::config::{Lexical, SearchConfig};
use crate::error::{Error, Result};
use crate::lexical::port::{LexicalGenerations, LexicalSearch};
use crate::lexical::{Compaction, Filter, LexDoc, TIE_MARGIN, best_first, query_terms, weigh};

/// The mapping's version, recorded in each part's `_meta`: a part written by another version
/// is refused at open (rebuild it).
const SCHEMA: u64 = 1;

/// Parts one generation may read: an add that would make more folds the earlier adds' parts
/// into one.
const MAX_PARTS: usize = 8;

/// The most distinct query terms sent: each is two clauses (body and capsule), and the cluster
/// refuses a query of more than 1024 clauses by default (`indices.query.bool.max_clause_count`).
const MAX_QUERY_TERMS: usize = 500;

/// Documents per bulk request before the byte cap splits it further.
const BULK_DOCS: usize = 2000;

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Part {
    index: String,
    #[serde(default)]
    excluded: Vec<u64>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Manifest {
    parts: Vec<Part>,
    /// Primary shards of each part (0: not recorded).
    #[serde(default)]
    shards: u32,
    documents: u64,
    created_ms: i64,
    schema: u64,
}

/// The lexical generations of one workspace on a cluster.
pub struct OpenSearchGenerations {
    client: Arc<OpenSearch>,
    prefix: String,
    shards: u32,
    replicas: u32,
    config: Lexical,
    analyzer: TextAnalyzer,
    query_analyzer: TextAnalyzer,
    grace_ms: i64,
    /// The canonical store these generations belong to (`store::workspaces::identity`).
    owner: String,
    claimed: std::sync::OnceLock<()>,
}

impl std::fmt::Debug for OpenSearchGenerations {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenSearchGenerations")
            .field("url", &self.client.url())
            .field("prefix", &self.prefix)
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
    /// Generations under `[search]`'s prefix, analysed with `config`.
    ///
    /// # Errors
    /// `E_INVALID_ARGUMENT` for an unusable `[search]` setting.
    pub fn open(search: &SearchConfig, config: &Lexical, owner: &str) -> Result<Self> {
        let prefix = &search.prefix;
        if prefix.is_empty()
            || prefix.len() > 100
            || prefix.starts_with(['-', '_', '+'])
            || !prefix
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
        {
            return Err(Error::InvalidArgument(format!(
                "[search] prefix {prefix:?} must be 1-100 lowercase letters, digits, '-' or '_', not starting with '-' or '_'"
            )));
        }
        if search.shards == 0 || search.shards > 1024 {
            return Err(Error::InvalidArgument(format!(
                "[search] shards = {} must be between 1 and 1024",
                search.shards
            )));
        }
        let client = OpenSearch::connect(
            &search.url,
            Duration::from_secs(search.timeout_seconds.max(1)),
        )?;
        // An unreferenced manifest or part may be another daemon's publication in progress.
        let grace_ms =
            i64::try_from(search.collect_after_seconds.saturating_mul(1000)).unwrap_or(i64::MAX);
        Ok(Self {
            client: Arc::new(client),
            prefix: prefix.clone(),
            shards: search.shards,
            replicas: search.replicas,
            config: config.clone(),
            analyzer: crate::lexical::analyzer(config),
            query_analyzer: crate::lexical::query_analyzer(config),
            grace_ms,
            owner: owner.to_string(),
            claimed: std::sync::OnceLock::new(),
        })
    }

    /// Makes sure the prefix is this workspace's before anything is written or collected under
    /// it: the first use records the canonical store's identity (`_owner` in the manifests
    /// index); another workspace's prefix is `E_CONFLICT`, since collection there would delete
    /// the indices its snapshots read.
    fn claim(&self) -> Result<()> {
        if self.claimed.get().is_some() {
            return Ok(());
        }
        let path = format!("/{}/_doc/_owner", self.manifests());
        let held = match self.client.call(Method::GET, &path, None) {
            Err(Error::NotFound { .. }) => None,
            other => other?
                .pointer("/_source/owner")
                .and_then(Value::as_str)
                .map(str::to_string),
        };
        let held = match held {
            Some(held) => held,
            None => {
                self.ensure_manifests()?;
                let create = format!("/{}/_create/_owner?refresh=true", self.manifests());
                match self
                    .client
                    .call(Method::PUT, &create, Some(&json!({ "owner": self.owner })))
                {
                    Ok(_) => self.owner.clone(),
                    // Another daemon of the same store (or another workspace) claimed it first.
                    Err(Error::Conflict(_)) => self
                        .client
                        .call(Method::GET, &path, None)?
                        .pointer("/_source/owner")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string(),
                    Err(e) => return Err(e),
                }
            }
        };
        if held != self.owner {
            return Err(Error::Conflict(format!(
                "[search] prefix {:?} on {} holds another workspace's indexes ({held:?}, this one is {:?}): give this workspace a prefix of its own",
                self.prefix,
                self.client.url(),
                self.owner
            )));
        }
        let _ = self.claimed.set(());
        Ok(())
    }

    fn manifests(&self) -> String {
        format!("{}-manifests", self.prefix)
    }

    fn part_name(&self, generation: &str) -> String {
        format!("{}-lex-{}", self.prefix, generation.to_ascii_lowercase())
    }

    /// The manifest of `generation`; a missing one is `E_CORRUPT` (rebuild it).
    fn manifest(&self, generation: &str) -> Result<Manifest> {
        let path = format!("/{}/_doc/{}", self.manifests(), encode(generation));
        let found = match self.client.call(Method::GET, &path, None) {
            Err(Error::NotFound { .. }) => None,
            other => other?.get("_source").cloned(),
        };
        let Some(source) = found else {
            return Err(Error::Corrupt(format!(
                "lexical generation {generation} is missing on OpenSearch ({}); run `tychora manage rebuild`",
                self.client.url()
            )));
        };
        let manifest: Manifest = serde_json::from_value(source).map_err(|e| {
            Error::Corrupt(format!(
                "the manifest of lexical generation {generation} is unreadable ({e}); run `tychora manage rebuild`"
            ))
        })?;
        if manifest.schema != SCHEMA {
            return Err(Error::Corrupt(format!(
                "lexical generation {generation} was written with mapping version {}, this engine reads {SCHEMA}; run `tychora manage rebuild`",
                manifest.schema
            )));
        }
        Ok(manifest)
    }

    fn write_manifest(&self, generation: &str, manifest: &Manifest) -> Result<()> {
        self.ensure_manifests()?;
        let path = format!(
            "/{}/_doc/{}?refresh=true",
            self.manifests(),
            encode(generation)
        );
        let body = serde_json::to_value(manifest)
            .map_err(|e| Error::Internal(format!("manifest: {e}")))?;
        self.client.call(Method::PUT, &path, Some(&body))?;
        Ok(())
    }

    fn ensure_manifests(&self) -> Result<()> {
        let path = format!("/{}", self.manifests());
        let body = json!({
            "settings": { "number_of_shards": 1, "number_of_replicas": self.replicas },
            "mappings": { "dynamic": false, "properties": { "created_ms": { "type": "long" } } }
        });
        match self.client.call(Method::PUT, &path, Some(&body)) {
            Ok(_) => Ok(()),
            // Already there (made by an earlier publication or another daemon).
            Err(Error::InvalidArgument(m)) if m.contains("already exists") => Ok(()),
            Err(e) => Err(e),
        }
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
                "number_of_shards": self.shards,
                "number_of_replicas": self.replicas,
                "refresh_interval": "-1",
                // A query's eligible windows arrive as one terms filter (facets, sensitivity).
                "max_terms_count": 4_194_304,
                "analysis": { "analyzer": { "tychora_tokens": {
                    "type": "custom", "tokenizer": "whitespace"
                } } }
            },
            "mappings": {
                "dynamic": "strict",
                "_meta": { "tychora_schema": SCHEMA },
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
        self.client.call(
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
                self.client.bulk(&lines)?;
                lines.clear();
            }
        }
        if !lines.is_empty() {
            self.client.bulk(&lines)?;
        }
        self.client.call(
            Method::PUT,
            &format!("/{index}/_settings"),
            Some(&json!({ "index": { "refresh_interval": "1s" } })),
        )?;
        self.client
            .call(Method::POST, &format!("/{index}/_refresh"), None)?;
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

    /// Live documents a manifest's parts hold for it.
    fn count(&self, manifest: &Manifest) -> Result<u64> {
        let found = self.client.call(
            Method::POST,
            &format!("/{}/_count", indices(manifest)),
            Some(&json!({ "query": visibility(manifest) })),
        )?;
        Ok(found.get("count").and_then(Value::as_u64).unwrap_or(0))
    }

    /// Writes the manifest of `name` after checking what it sees.
    fn publish_manifest(&self, name: &str, parts: Vec<Part>) -> Result<u64> {
        let mut manifest = Manifest {
            parts,
            shards: self.shards,
            documents: 0,
            created_ms: crate::clock::now_ms(),
            schema: SCHEMA,
        };
        manifest.documents = self.count(&manifest)?;
        self.write_manifest(name, &manifest)?;
        Ok(manifest.documents)
    }

    /// Every part index of this prefix with its creation time (ms).
    fn part_indices(&self) -> Result<Vec<(String, i64)>> {
        let found = self.client.call(
            Method::GET,
            &format!(
                "/_cat/indices/{}-lex-*?format=json&h=index,creation.date&expand_wildcards=all",
                self.prefix
            ),
            None,
        )?;
        Ok(found
            .as_array()
            .map(|rows| {
                rows.iter()
                    .filter_map(|r| {
                        let index = r.get("index")?.as_str()?.to_string();
                        let created = r
                            .get("creation.date")
                            .and_then(|c| {
                                c.as_str()
                                    .and_then(|s| s.parse().ok())
                                    .or_else(|| c.as_i64())
                            })
                            .unwrap_or(0);
                        Some((index, created))
                    })
                    .collect()
            })
            .unwrap_or_default())
    }

    /// Every manifest: name → manifest.
    fn all_manifests(&self) -> Result<HashMap<String, Manifest>> {
        let found = match self.client.call(
            Method::POST,
            &format!("/{}/_search", self.manifests()),
            Some(&json!({ "size": 10_000, "query": { "match_all": {} } })),
        ) {
            Err(Error::NotFound { .. }) => return Ok(HashMap::new()),
            other => other?,
        };
        let mut out = HashMap::new();
        for hit in found
            .pointer("/hits/hits")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let (Some(id), Some(source)) =
                (hit.get("_id").and_then(Value::as_str), hit.get("_source"))
            else {
                continue;
            };
            if let Ok(manifest) = serde_json::from_value::<Manifest>(source.clone()) {
                out.insert(id.to_string(), manifest);
            }
        }
        Ok(out)
    }

    fn delete_index(&self, index: &str) {
        if let Err(e) = self.client.call(Method::DELETE, &format!("/{index}"), None)
            && !matches!(e, Error::NotFound { .. })
        {
            log::warn!("cannot delete OpenSearch index {index}: {e}");
        }
    }
}

impl LexicalGenerations for OpenSearchGenerations {
    fn derivable(&self, generation: &str) -> bool {
        self.manifest(generation).is_ok()
    }

    fn build<'a>(&self, name: &str, docs: &mut dyn Iterator<Item = LexDoc<'a>>) -> Result<u64> {
        self.claim()?;
        let index = self.part_name(name);
        self.write_part(&index, docs)?;
        self.publish_manifest(
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
        self.claim()?;
        let base = self.manifest(base)?;
        let mut parts: Vec<Part> = base
            .parts
            .into_iter()
            .map(|mut p| {
                let mut excluded: BTreeSet<u64> = p.excluded.into_iter().collect();
                excluded.extend(removed_revisions.iter().copied());
                p.excluded = excluded.into_iter().collect();
                p
            })
            .collect();
        let mut docs = docs.peekable();
        let index = self.part_name(name);
        if parts.len() >= MAX_PARTS {
            // The parts written by earlier adds (all but the first, the full build's) are folded
            // with this change into one new part: the cost follows those small parts, never the
            // corpus, and a generation reads at most MAX_PARTS indices.
            let small = Manifest {
                parts: parts.split_off(1),
                shards: self.shards,
                documents: 0,
                created_ms: 0,
                schema: SCHEMA,
            };
            self.create_part(&index)?;
            self.client.call_with(
                Method::POST,
                "/_reindex?refresh=true&wait_for_completion=true",
                Some(&json!({
                    "source": { "index": small.parts.iter().map(|p| p.index.as_str()).collect::<Vec<_>>(), "query": visibility(&small) },
                    "dest": { "index": index }
                })),
                Some(Duration::from_secs(3600)),
            )?;
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
        self.publish_manifest(name, parts)
    }

    fn discard(&self, name: &str) {
        self.delete_index(&self.part_name(name));
        let path = format!("/{}/_doc/{}", self.manifests(), encode(name));
        let _ = self.client.call(Method::DELETE, &path, None);
    }

    fn open(&self, generation: &str) -> Result<Arc<dyn LexicalSearch>> {
        let manifest = self.manifest(generation)?;
        // Every part must be there with this version's mapping.
        let mappings = match self.client.call(
            Method::GET,
            &format!("/{}/_mapping", indices(&manifest)),
            None,
        ) {
            Err(Error::NotFound { id, .. }) => {
                return Err(Error::Corrupt(format!(
                    "an index of lexical generation {generation} is missing on OpenSearch ({id}); run `tychora manage rebuild`"
                )));
            }
            other => other?,
        };
        for part in &manifest.parts {
            let schema = mappings
                .pointer(&format!("/{}/mappings/_meta/tychora_schema", part.index))
                .and_then(Value::as_u64);
            if schema != Some(SCHEMA) {
                return Err(Error::Corrupt(format!(
                    "OpenSearch index {} has another mapping than this engine writes; run `tychora manage rebuild`",
                    part.index
                )));
            }
        }
        Ok(Arc::new(OpenSearchIndex {
            client: Arc::clone(&self.client),
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
        let found = self.client.call(
            Method::POST,
            &format!("/{}/_count", indices(&manifest)),
            Some(&json!({ "query": { "terms": { "revision_id": revisions } } })),
        )?;
        Ok(found.get("count").and_then(Value::as_u64).unwrap_or(0) > 0)
    }

    /// An erasure reaches every copy: the revisions' documents are deleted from every part of
    /// this prefix (a part is shared by the generations derived from it, and an unreferenced one
    /// may wait for collection), and the parts that held them are merged so that no deleted
    /// document's terms remain.
    fn scrub(&self, from: &str, name: &str, revisions: &[u64]) -> Result<u64> {
        self.claim()?;
        let manifest = self.manifest(from)?;
        let all = format!("{}-lex-*", self.prefix);
        let long = Some(Duration::from_secs(600));
        self.client.call_with(
            Method::POST,
            &format!(
                "/{all}/_delete_by_query?refresh=true&conflicts=proceed&wait_for_completion=true"
            ),
            Some(&json!({ "query": { "terms": { "revision_id": revisions } } })),
            long,
        )?;
        self.client.call_with(
            Method::POST,
            &format!("/{all}/_forcemerge?only_expunge_deletes=true"),
            None,
            long,
        )?;
        self.publish_manifest(name, manifest.parts)
    }

    fn shape(&self, generation: &str) -> Result<(usize, u64)> {
        let manifest = self.manifest(generation)?;
        let found = self.client.call(
            Method::POST,
            &format!("/{}/_count", indices(&manifest)),
            None,
        )?;
        let stored = found.get("count").and_then(Value::as_u64).unwrap_or(0);
        Ok((
            manifest.parts.len(),
            stored.saturating_sub(self.count(&manifest)?),
        ))
    }

    fn compact(&self, from: &str, name: &str) -> Result<Option<Compaction>> {
        self.claim()?;
        let manifest = self.manifest(from)?;
        if manifest.parts.len() == 1 && manifest.parts[0].excluded.is_empty() {
            return Ok(None);
        }
        let index = self.part_name(name);
        self.create_part(&index)?;
        self.client.call_with(
            Method::POST,
            "/_reindex?refresh=true&wait_for_completion=true",
            Some(&json!({
                "source": { "index": manifest.parts.iter().map(|p| p.index.as_str()).collect::<Vec<_>>(), "query": visibility(&manifest) },
                "dest": { "index": index }
            })),
            Some(Duration::from_secs(3600)),
        )?;
        self.client.call(
            Method::PUT,
            &format!("/{index}/_settings"),
            Some(&json!({ "index": { "refresh_interval": "1s" } })),
        )?;
        let documents = self.publish_manifest(
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
        if self.all_manifests()?.is_empty() && self.part_indices()?.is_empty() {
            // Nothing under the prefix yet: nothing to collect, and nothing claimed by opening.
            return Ok(0);
        }
        self.claim()?;
        let now = crate::clock::now_ms();
        let manifests = self.all_manifests()?;
        let mut removed = 0;
        let mut referenced: BTreeSet<String> = BTreeSet::new();
        for (name, manifest) in &manifests {
            let kept = keep.contains(name)
                || held.contains(name)
                || now - manifest.created_ms < self.grace_ms;
            if kept {
                referenced.extend(manifest.parts.iter().map(|p| p.index.clone()));
                continue;
            }
            let path = format!("/{}/_doc/{}?refresh=true", self.manifests(), encode(name));
            match self.client.call(Method::DELETE, &path, None) {
                Ok(_) | Err(Error::NotFound { .. }) => {
                    removed += 1;
                    retired(name)?;
                }
                Err(e) => log::warn!("cannot delete the manifest of generation {name}: {e}"),
            }
        }
        for (index, created) in self.part_indices()? {
            if !referenced.contains(&index) && now - created >= self.grace_ms {
                self.delete_index(&index);
            }
        }
        Ok(removed)
    }
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
        let mut eligible = vec![visibility(&self.manifest)];
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
                    indices(&self.manifest),
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
            .map_err(lost)?;
        let mut hits = Vec::new();
        for hit in found
            .pointer("/hits/hits")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let field = |name: &str| {
                hit.pointer(&format!("/fields/{name}/0"))
                    .and_then(Value::as_u64)
            };
            let (Some(chunk), Some(owner)) = (field("chunk_id"), field("owner_id")) else {
                return Err(Error::Corrupt(
                    "an OpenSearch lexical document has no chunk_id/owner_id; run `tychora manage rebuild`".into(),
                ));
            };
            #[allow(clippy::cast_possible_truncation)] // BM25 scores are small
            let score = hit.get("_score").and_then(Value::as_f64).unwrap_or(0.0) as f32;
            hits.push((score, chunk, owner));
        }
        Ok(best_first(hits, limit))
    }

    fn documents(&self) -> Result<u64> {
        let found = self
            .client
            .call(
                Method::POST,
                &format!("/{}/_count", indices(&self.manifest)),
                Some(&json!({ "query": visibility(&self.manifest) })),
            )
            .map_err(lost)?;
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
            &format!("/{}/_search", indices(&self.manifest)),
            Some(&json!({ "size": 0, "query": visibility(&self.manifest), "aggs": aggs })),
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

/// A part that went missing after the generation was opened: the generation is damaged.
fn lost(e: Error) -> Error {
    match e {
        Error::NotFound { id, .. } => Error::Corrupt(format!(
            "an OpenSearch index of the lexical generation is missing ({id}); run `tychora manage rebuild`"
        )),
        other => other,
    }
}

/// The comma-separated part indices of a manifest (a URL path segment).
fn indices(manifest: &Manifest) -> String {
    manifest
        .parts
        .iter()
        .map(|p| p.index.as_str())
        .collect::<Vec<_>>()
        .join(",")
}

/// What a generation sees: each part's documents less the revisions it no longer holds.
fn visibility(manifest: &Manifest) -> Value {
    let parts: Vec<Value> = manifest
        .parts
        .iter()
        .map(|p| {
            if p.excluded.is_empty() {
                json!({ "term": { "_index": p.index } })
            } else {
                json!({ "bool": {
                    "filter": [{ "term": { "_index": p.index } }],
                    "must_not": [{ "terms": { "revision_id": p.excluded } }]
                } })
            }
        })
        .collect();
    json!({ "bool": { "should": parts, "minimum_should_match": 1 } })
}

/// A generation name as a URL path segment (names are `g<ms>-<job>`; anything else is escaped).
fn encode(name: &str) -> String {
    percent_encoding::utf8_percent_encode(name, percent_encoding::NON_ALPHANUMERIC).to_string()
}
