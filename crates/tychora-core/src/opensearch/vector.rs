//! Vector generations on OpenSearch: the text channel's windows as `knn_vector` fields (HNSW,
//! `engine: lucene`, which applies a query's filter inside the graph search), one set of part
//! indices per generation as the lexical channel has (see `parts`): a full build writes one part,
//! an add writes a part holding only the changed files' windows and excludes the replaced
//! revisions from its parents' parts, and a pinned snapshot keeps reading its own manifest.
//!
//! Eligibility (collections, kinds, facet-selected windows) and the generation's visibility are
//! the k-NN query's `filter`, so a tight filter still returns `k` eligible windows. Scores come
//! back as the Lucene engine reports them and are turned into the distances the embedded index
//! reports (`1 − cosine` for a cosine family), so fusion sees the same figures.

use std::collections::HashMap;
use std::sync::Arc;

use reqwest::Method;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::OpenSearch;
use super::lexical::{MAX_PARTS, excluding};
use super::parts::{Channel, Manifest, Part, Prefix, doc_value, hits, lost, scored_windows};
use crate::error::{Error, Result};
use crate::lexical::TIE_MARGIN;
use crate::vector::embedder::FamilySpec;
use crate::vector::index::{Eligible, Entry, unit};
use crate::vector::port::{VectorGenerations, VectorSearch, Written};

/// The vector channel's manifests and parts (mapping version 1).
const VECTORS: Channel = Channel {
    name: "vector",
    infix: "vec",
    schema: 1,
};

/// Windows per bulk request (a 384-d vector is ~4 KB of JSON); the byte cap splits further.
const BULK_DOCS: usize = 500;

/// Windows fetched per request by `vectors_of` and `owners_of` (the cluster's default result
/// window is 10,000).
const FETCH_DOCS: usize = 1000;

/// HNSW parameters, as the embedded graph's (`vector::index`).
const CONNECTIVITY: usize = 16;
const EXPANSION_ADD: usize = 128;

/// The vector generations of one workspace on a cluster.
pub struct OpenSearchVectors {
    prefix: Arc<Prefix>,
}

impl std::fmt::Debug for OpenSearchVectors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenSearchVectors")
            .field("url", &self.prefix.client.url())
            .field("prefix", &self.prefix.name)
            .finish_non_exhaustive()
    }
}

/// The Lucene engine's name of a family's metric.
fn space_type(metric: &str) -> Result<&'static str> {
    match metric {
        "cos" => Ok("cosinesimil"),
        "ip" => Ok("innerproduct"),
        "l2" => Ok("l2"),
        other => Err(Error::InvalidArgument(format!(
            "unknown vector metric {other:?}"
        ))),
    }
}

/// The embedded index's distance from the Lucene engine's score of `metric`.
fn distance(metric: &str, score: f64) -> f32 {
    let d = match metric {
        // score = (1 + cos) / 2
        "cos" => 2.0 - 2.0 * score,
        // score = 1 + ip when ip ≥ 0, else 1 / (1 − ip); distance = 1 − ip
        "ip" => {
            let ip = if score >= 1.0 {
                score - 1.0
            } else {
                1.0 - 1.0 / score.max(f64::MIN_POSITIVE)
            };
            1.0 - ip
        }
        // score = 1 / (1 + d²); distance = d²
        _ => 1.0 / score.max(f64::MIN_POSITIVE) - 1.0,
    };
    #[allow(clippy::cast_possible_truncation)] // distances are small
    let d = d as f32;
    d
}

/// What the store vouches for a cluster generation with: the sha256 of its part list (the
/// parts are never rewritten, so the list names what the generation reads).
fn parts_sha256(manifest: &Manifest) -> String {
    let listed: Vec<(&str, &[u64])> = manifest
        .parts
        .iter()
        .map(|p| (p.index.as_str(), p.excluded.as_slice()))
        .collect();
    let bytes = serde_json::to_vec(&listed).unwrap_or_default();
    hex::encode(Sha256::digest(&bytes))
}

impl OpenSearchVectors {
    pub(super) fn new(prefix: Arc<Prefix>) -> Self {
        Self { prefix }
    }

    fn manifest(&self, generation: &str) -> Result<Manifest> {
        self.prefix.manifest(VECTORS, generation)
    }

    /// Creates an empty part index for vectors of `spec`.
    fn create_part(&self, index: &str, spec: &FamilySpec) -> Result<()> {
        let body = json!({
            "settings": {
                "index": { "knn": true },
                "number_of_shards": self.prefix.shards,
                "number_of_replicas": self.prefix.replicas,
                "refresh_interval": "-1",
                "max_terms_count": 4_194_304,
            },
            "mappings": {
                "dynamic": "strict",
                "_meta": { "tychora_schema": VECTORS.schema },
                "properties": {
                    "chunk_id": { "type": "long" },
                    "owner_id": { "type": "long" },
                    "revision_id": { "type": "long" },
                    "collection": { "type": "keyword" },
                    "kind": { "type": "keyword" },
                    "vector": {
                        "type": "knn_vector",
                        "dimension": spec.dimension,
                        "method": {
                            "name": "hnsw",
                            // The only engine whose filter applies inside the graph search, and
                            // the one a k-NN plugin without native libraries has.
                            "engine": "lucene",
                            "space_type": space_type(&spec.metric)?,
                            "parameters": { "m": CONNECTIVITY, "ef_construction": EXPANSION_ADD }
                        }
                    }
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

    /// Writes `entries` into the part `index` (made already), then opens it to search.
    fn fill_part(&self, index: &str, spec: &FamilySpec, entries: &[Entry<'_>]) -> Result<()> {
        let mut lines = Vec::with_capacity(BULK_DOCS * 2);
        for e in entries {
            if e.vector.len() != spec.dimension {
                return Err(Error::Corrupt(format!(
                    "vector of chunk {} has {} dimensions, its family {}",
                    e.key,
                    e.vector.len(),
                    spec.dimension
                )));
            }
            lines.push(
                json!({ "index": { "_index": index, "_id": e.key.to_string() } }).to_string(),
            );
            lines.push(
                json!({
                    "chunk_id": e.key,
                    "owner_id": e.owner,
                    "revision_id": e.revision,
                    "collection": e.collection,
                    "kind": e.kind,
                    "vector": e.vector,
                })
                .to_string(),
            );
            if lines.len() >= BULK_DOCS * 2 {
                self.prefix.client.bulk(&lines)?;
                lines.clear();
            }
        }
        if !lines.is_empty() {
            self.prefix.client.bulk(&lines)?;
        }
        self.prefix.open_part(index)
    }

    /// Publishes the manifest of `name` over `parts` and returns what the store records.
    fn publish(&self, name: &str, spec: &FamilySpec, parts: Vec<Part>) -> Result<Written> {
        let mut manifest = Manifest::new(VECTORS, self.prefix.shards, parts);
        manifest.vectors = Some(json!({ "dimension": spec.dimension, "metric": spec.metric }));
        let sha256 = parts_sha256(&manifest);
        let documents = self.prefix.publish(name, manifest)?;
        Ok(Written {
            name: name.to_string(),
            sha256,
            documents,
        })
    }
}

impl VectorGenerations for OpenSearchVectors {
    fn build(&self, name: &str, spec: &FamilySpec, entries: &[Entry<'_>]) -> Result<Written> {
        self.prefix.claim()?;
        let mut index = self.prefix.part_name(VECTORS, name);
        match self.create_part(&index, spec) {
            // A repair writes a generation again under the name the store records: its part
            // goes beside the old one, which generations derived from it may still read (it is
            // collected once no manifest names it).
            Err(Error::InvalidArgument(m)) if m.contains("already exists") => {
                index = format!("{index}-r{}", crate::clock::now_ms());
                self.create_part(&index, spec)?;
            }
            other => other?,
        }
        self.fill_part(&index, spec, entries)?;
        self.publish(
            name,
            spec,
            vec![Part {
                index,
                excluded: Vec::new(),
            }],
        )
    }

    fn derive(
        &self,
        base: &str,
        name: &str,
        spec: &FamilySpec,
        removed_revisions: &[u64],
        entries: &[Entry<'_>],
    ) -> Result<Option<Written>> {
        self.prefix.claim()?;
        let base = self.manifest(base)?;
        if base
            .vectors
            .as_ref()
            .and_then(|v| v.get("dimension"))
            .and_then(Value::as_u64)
            != Some(spec.dimension as u64)
        {
            return Ok(None);
        }
        let mut parts = excluding(base.parts, removed_revisions);
        let index = self.prefix.part_name(VECTORS, name);
        if parts.len() >= MAX_PARTS {
            // As the lexical channel: the earlier adds' parts fold with this change into one.
            let small = Manifest::new(VECTORS, self.prefix.shards, parts.split_off(1));
            self.create_part(&index, spec)?;
            self.prefix.reindex(&small, &index)?;
            self.fill_part(&index, spec, entries)?;
            parts.push(Part {
                index,
                excluded: Vec::new(),
            });
        } else if !entries.is_empty() {
            self.create_part(&index, spec)?;
            self.fill_part(&index, spec, entries)?;
            parts.push(Part {
                index,
                excluded: Vec::new(),
            });
        }
        self.publish(name, spec, parts).map(Some)
    }

    fn derives(&self) -> bool {
        true
    }

    fn discard(&self, name: &str) {
        self.prefix.discard(VECTORS, name);
    }

    fn open(&self, generation: &str, sha256: &str) -> Result<Arc<dyn VectorSearch>> {
        let manifest = self.manifest(generation)?;
        if parts_sha256(&manifest) != sha256 {
            return Err(Error::Corrupt(format!(
                "vector generation {generation} on OpenSearch lists other parts than the store recorded; run `tychora manage rebuild`"
            )));
        }
        self.prefix.check_parts(VECTORS, generation, &manifest)?;
        let field = |name: &str| manifest.vectors.as_ref().and_then(|v| v.get(name)).cloned();
        let dimension = field("dimension")
            .and_then(|d| d.as_u64())
            .and_then(|d| usize::try_from(d).ok())
            .unwrap_or(0);
        let metric = field("metric")
            .and_then(|m| m.as_str().map(str::to_string))
            .unwrap_or_else(|| "cos".into());
        Ok(Arc::new(OpenSearchVectorIndex {
            client: Arc::clone(&self.prefix.client),
            manifest,
            dimension,
            metric,
        }))
    }

    fn holds(
        &self,
        generation: &str,
        _sha256: &str,
        revisions: &[u64],
        _chunks: &std::collections::HashSet<u64>,
    ) -> Result<bool> {
        if revisions.is_empty() {
            return Ok(false);
        }
        let manifest = self.manifest(generation)?;
        self.prefix.holds_revisions(&manifest, revisions)
    }

    /// An erasure reaches every copy: the revisions' windows are deleted from every vector part
    /// of this prefix, whatever references it, and the parts merged (see `Prefix::erase`).
    fn erase(&self, revisions: &[u64]) -> Result<bool> {
        self.prefix.claim()?;
        self.prefix.erase(VECTORS, revisions)?;
        Ok(true)
    }

    fn collect(
        &self,
        keep: &[String],
        held: &[String],
        retired: &mut dyn FnMut(&str) -> Result<()>,
    ) -> Result<usize> {
        self.prefix.collect(VECTORS, keep, held, retired)
    }
}

/// One opened vector generation on the cluster.
struct OpenSearchVectorIndex {
    client: Arc<OpenSearch>,
    manifest: Manifest,
    dimension: usize,
    metric: String,
}

impl std::fmt::Debug for OpenSearchVectorIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenSearchVectorIndex")
            .field("parts", &self.manifest.parts.len())
            .field("dimension", &self.dimension)
            .finish_non_exhaustive()
    }
}

impl OpenSearchVectorIndex {
    /// The generation's visibility and `eligible` as filter clauses.
    fn filter(&self, eligible: &Eligible<'_>) -> Vec<Value> {
        let mut filter = vec![self.manifest.visibility()];
        if !eligible.collections.is_empty() {
            filter.push(json!({ "terms": { "collection": eligible.collections } }));
        }
        if !eligible.kinds.is_empty() {
            filter.push(json!({ "terms": { "kind": eligible.kinds } }));
        }
        if let Some(chunks) = eligible.chunks {
            let ids: Vec<u64> = chunks.iter().copied().collect();
            filter.push(json!({ "terms": { "chunk_id": ids } }));
        }
        filter
    }

    fn search_path(&self) -> String {
        format!("/{}/_search", self.manifest.indices())
    }
}

impl VectorSearch for OpenSearchVectorIndex {
    fn search(
        &self,
        query: &[f32],
        depth: usize,
        eligible: &Eligible<'_>,
    ) -> Result<Vec<(u64, u64, f32)>> {
        if query.len() != self.dimension {
            return Err(Error::InvalidArgument(format!(
                "query vector has {} dimensions, the index {}",
                query.len(),
                self.dimension
            )));
        }
        if depth == 0 {
            return Ok(Vec::new());
        }
        // A few beyond the depth, so that windows tied at the cut are ordered by chunk id as on
        // the embedded path, not by which shard answered first.
        let asked = depth + TIE_MARGIN;
        let body = json!({
            "size": asked,
            "_source": false,
            "track_total_hits": false,
            "docvalue_fields": ["chunk_id", "owner_id"],
            "query": { "knn": { "vector": {
                "vector": query,
                "k": asked,
                "filter": { "bool": { "filter": self.filter(eligible) } }
            } } }
        });
        let found = self
            .client
            .call(Method::POST, &self.search_path(), Some(&body))
            .map_err(lost(VECTORS))?;
        let mut nearest: Vec<(u64, u64, f32)> = scored_windows(&found, VECTORS)?
            .into_iter()
            .map(|(chunk, owner, score)| (chunk, owner, distance(&self.metric, score)))
            .collect();
        // Nearest first, equal distances by chunk id (the cluster merges shards by score only).
        nearest.sort_by(|a, b| a.2.total_cmp(&b.2).then(a.0.cmp(&b.0)));
        nearest.truncate(depth);
        Ok(nearest)
    }

    fn vector_of(&self, key: u64, eligible: &Eligible<'_>) -> Result<Option<Vec<f32>>> {
        Ok(self.vectors_of(&[key], eligible)?.remove(&key))
    }

    fn vectors_of(&self, keys: &[u64], eligible: &Eligible<'_>) -> Result<HashMap<u64, Vec<f32>>> {
        let mut out = HashMap::with_capacity(keys.len());
        for batch in keys.chunks(FETCH_DOCS) {
            let mut filter = self.filter(eligible);
            filter.push(json!({ "terms": { "chunk_id": batch } }));
            let found = self
                .client
                .call(
                    Method::POST,
                    &self.search_path(),
                    Some(&json!({
                        "size": batch.len(),
                        "_source": ["vector"],
                        "docvalue_fields": ["chunk_id"],
                        "query": { "bool": { "filter": filter } }
                    })),
                )
                .map_err(lost(VECTORS))?;
            for hit in hits(&found) {
                let (Some(chunk), Some(values)) = (
                    doc_value(hit, "chunk_id"),
                    hit.pointer("/_source/vector").and_then(Value::as_array),
                ) else {
                    continue;
                };
                #[allow(clippy::cast_possible_truncation)] // stored as f32
                let vector: Vec<f32> = values
                    .iter()
                    .filter_map(Value::as_f64)
                    .map(|x| x as f32)
                    .collect();
                out.insert(
                    chunk,
                    if self.metric == "cos" {
                        unit(&vector)
                    } else {
                        vector
                    },
                );
            }
        }
        Ok(out)
    }

    fn owners_of(&self, keys: &[u64]) -> Result<HashMap<u64, u64>> {
        let mut out = HashMap::with_capacity(keys.len());
        for batch in keys.chunks(FETCH_DOCS) {
            let found = self
                .client
                .call(
                    Method::POST,
                    &self.search_path(),
                    Some(&json!({
                        "size": batch.len(),
                        "_source": false,
                        "docvalue_fields": ["chunk_id", "owner_id"],
                        "query": { "bool": { "filter": [
                            self.manifest.visibility(),
                            { "terms": { "chunk_id": batch } }
                        ] } }
                    })),
                )
                .map_err(lost(VECTORS))?;
            for hit in hits(&found) {
                if let (Some(chunk), Some(owner)) =
                    (doc_value(hit, "chunk_id"), doc_value(hit, "owner_id"))
                {
                    out.insert(chunk, owner);
                }
            }
        }
        Ok(out)
    }

    fn documents(&self) -> Result<u64> {
        let found = self
            .client
            .call(
                Method::POST,
                &format!("/{}/_count", self.manifest.indices()),
                Some(&json!({ "query": self.manifest.visibility() })),
            )
            .map_err(lost(VECTORS))?;
        Ok(found.get("count").and_then(Value::as_u64).unwrap_or(0))
    }
}

#[cfg(test)]
mod tests {
    use super::distance;

    #[test]
    fn lucene_scores_turn_back_into_the_embedded_distances() {
        for cos in [-0.5f64, 0.0, 0.3, 0.99] {
            let score = (1.0 + cos) / 2.0;
            assert!((f64::from(distance("cos", score)) - (1.0 - cos)).abs() < 1e-6);
        }
        for ip in [-2.0f64, -0.25, 0.0, 0.7, 3.0] {
            let score = if ip >= 0.0 {
                1.0 + ip
            } else {
                1.0 / (1.0 - ip)
            };
            assert!((f64::from(distance("ip", score)) - (1.0 - ip)).abs() < 1e-5);
        }
        for d2 in [0.0f64, 0.5, 4.0] {
            assert!((f64::from(distance("l2", 1.0 / (1.0 + d2))) - d2).abs() < 1e-5);
        }
    }
}
