//! What the lexical and vector generations on a cluster share: the prefix a workspace owns, the
//! manifests that list each generation's part indices (with the revisions each part no longer
//! shows), what a manifest lets a query see, and collection.
//!
//! Manifests of both channels are documents of one index, `<prefix>-manifests`; a manifest
//! without a `channel` is the lexical channel's (as the first version wrote them). Parts are
//! `<prefix>-lex-<generation>` and `<prefix>-vec-<generation>`.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use reqwest::Method;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::OpenSearch;
use crate::config::SearchConfig;
use crate::error::{Error, Result};

/// The most manifests listed at once (the cluster's default result window): past it, collection
/// stops rather than delete parts a manifest it did not see still reads.
const MAX_MANIFESTS: usize = 10_000;

/// Which derived index a manifest belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Channel {
    /// As named in messages and recorded in manifests.
    pub name: &'static str,
    /// The part indices' infix.
    pub infix: &'static str,
    /// The mapping version this engine writes and reads.
    pub schema: u64,
}

/// One part index of a generation and the revisions the generation no longer sees in it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct Part {
    pub index: String,
    #[serde(default)]
    pub excluded: Vec<u64>,
}

/// A generation: the parts it reads.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct Manifest {
    pub parts: Vec<Part>,
    /// Primary shards of each part (0: not recorded).
    #[serde(default)]
    pub shards: u32,
    pub documents: u64,
    pub created_ms: i64,
    pub schema: u64,
    /// `vector` for the vector channel's; absent for the lexical channel's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel: Option<String>,
    /// What the vector channel's parts were written with (dimension, metric).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vectors: Option<Value>,
}

impl Manifest {
    /// A manifest of `channel` over `parts` (its count filled in by [`Prefix::publish`]).
    pub fn new(channel: Channel, shards: u32, parts: Vec<Part>) -> Self {
        Self {
            parts,
            shards,
            documents: 0,
            created_ms: crate::clock::now_ms(),
            schema: channel.schema,
            channel: (channel.infix != "lex").then(|| channel.name.to_string()),
            vectors: None,
        }
    }

    fn is_of(&self, channel: Channel) -> bool {
        self.channel.as_deref().unwrap_or("lexical") == channel.name
    }

    /// The comma-separated part indices (a URL path segment).
    pub fn indices(&self) -> String {
        self.parts
            .iter()
            .map(|p| p.index.as_str())
            .collect::<Vec<_>>()
            .join(",")
    }

    /// What the generation sees: each part's documents less the revisions it no longer holds.
    pub fn visibility(&self) -> Value {
        let parts: Vec<Value> = self
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
}

/// A workspace's prefix on a cluster: the client, the settings every part is made with, and the
/// claim that the prefix is this workspace's.
pub(super) struct Prefix {
    pub client: Arc<OpenSearch>,
    pub name: String,
    pub shards: u32,
    pub replicas: u32,
    grace_ms: i64,
    /// The canonical store these generations belong to (`store::workspaces::identity`).
    owner: String,
    claimed: OnceLock<()>,
}

impl Prefix {
    /// `[search]`'s prefix on its cluster, for the store of identity `owner`.
    ///
    /// # Errors
    /// `E_INVALID_ARGUMENT` for an unusable `[search]` setting.
    pub fn open(search: &SearchConfig, owner: &str) -> Result<Self> {
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
            name: prefix.clone(),
            shards: search.shards,
            replicas: search.replicas,
            grace_ms,
            owner: owner.to_string(),
            claimed: OnceLock::new(),
        })
    }

    /// Makes sure the prefix is this workspace's before anything is written or collected under
    /// it: the first use records the canonical store's identity (`_owner` in the manifests
    /// index); another workspace's prefix is `E_CONFLICT`, since collection there would delete
    /// the indices its snapshots read.
    pub fn claim(&self) -> Result<()> {
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
                self.name,
                self.client.url(),
                self.owner
            )));
        }
        let _ = self.claimed.set(());
        Ok(())
    }

    pub fn manifests(&self) -> String {
        format!("{}-manifests", self.name)
    }

    /// The part index a generation's own writes go to.
    pub fn part_name(&self, channel: Channel, generation: &str) -> String {
        format!(
            "{}-{}-{}",
            self.name,
            channel.infix,
            generation.to_ascii_lowercase()
        )
    }

    /// The manifest of `generation`; a missing one is `E_CORRUPT` (rebuild it).
    pub fn manifest(&self, channel: Channel, generation: &str) -> Result<Manifest> {
        let path = format!("/{}/_doc/{}", self.manifests(), encode(generation));
        let found = match self.client.call(Method::GET, &path, None) {
            Err(Error::NotFound { .. }) => None,
            other => other?.get("_source").cloned(),
        };
        let name = channel.name;
        let Some(source) = found else {
            return Err(Error::Corrupt(format!(
                "{name} generation {generation} is missing on OpenSearch ({}); run `tychora manage rebuild`",
                self.client.url()
            )));
        };
        let manifest: Manifest = serde_json::from_value(source).map_err(|e| {
            Error::Corrupt(format!(
                "the manifest of {name} generation {generation} is unreadable ({e}); run `tychora manage rebuild`"
            ))
        })?;
        if !manifest.is_of(channel) {
            return Err(Error::Corrupt(format!(
                "OpenSearch's manifest {generation} is not a {name} generation; run `tychora manage rebuild`"
            )));
        }
        if manifest.schema != channel.schema {
            return Err(Error::Corrupt(format!(
                "{name} generation {generation} was written with mapping version {}, this engine reads {}; run `tychora manage rebuild`",
                manifest.schema, channel.schema
            )));
        }
        Ok(manifest)
    }

    /// Checks that every part of `manifest` is there with this version's mapping.
    pub fn check_parts(
        &self,
        channel: Channel,
        generation: &str,
        manifest: &Manifest,
    ) -> Result<Value> {
        let mappings = match self.client.call(
            Method::GET,
            &format!("/{}/_mapping", manifest.indices()),
            None,
        ) {
            Err(Error::NotFound { id, .. }) => {
                return Err(Error::Corrupt(format!(
                    "an index of {} generation {generation} is missing on OpenSearch ({id}); run `tychora manage rebuild`",
                    channel.name
                )));
            }
            other => other?,
        };
        for part in &manifest.parts {
            let schema = mappings
                .pointer(&format!("/{}/mappings/_meta/tychora_schema", part.index))
                .and_then(Value::as_u64);
            if schema != Some(channel.schema) {
                return Err(Error::Corrupt(format!(
                    "OpenSearch index {} has another mapping than this engine writes; run `tychora manage rebuild`",
                    part.index
                )));
            }
        }
        Ok(mappings)
    }

    /// Writes the manifest of `generation` after counting what it sees; returns that count.
    pub fn publish(&self, generation: &str, mut manifest: Manifest) -> Result<u64> {
        manifest.documents = self.count(&manifest)?;
        self.ensure_manifests()?;
        let path = format!(
            "/{}/_doc/{}?refresh=true",
            self.manifests(),
            encode(generation)
        );
        let body = serde_json::to_value(&manifest)
            .map_err(|e| Error::Internal(format!("manifest: {e}")))?;
        self.client.call(Method::PUT, &path, Some(&body))?;
        Ok(manifest.documents)
    }

    /// Removes a generation's manifest and its own part (best effort).
    pub fn discard(&self, channel: Channel, generation: &str) {
        self.delete_index(&self.part_name(channel, generation));
        let path = format!("/{}/_doc/{}", self.manifests(), encode(generation));
        let _ = self.client.call(Method::DELETE, &path, None);
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

    /// Live documents a manifest's parts hold for it.
    pub fn count(&self, manifest: &Manifest) -> Result<u64> {
        let found = self.client.call(
            Method::POST,
            &format!("/{}/_count", manifest.indices()),
            Some(&json!({ "query": manifest.visibility() })),
        )?;
        whole(&found, "count")?;
        Ok(found.get("count").and_then(Value::as_u64).unwrap_or(0))
    }

    /// Every part index of `channel` under this prefix with its creation time (ms).
    fn part_indices(&self, channel: Channel) -> Result<Vec<(String, i64)>> {
        let found = self.client.call(
            Method::GET,
            &format!(
                "/_cat/indices/{}-{}-*?format=json&h=index,creation.date&expand_wildcards=all",
                self.name, channel.infix
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

    /// Every manifest of `channel`: name → manifest.
    ///
    /// # Errors
    /// `E_LIMIT_EXCEEDED` past [`MAX_MANIFESTS`] (collection would not see every part in use).
    fn all_manifests(&self, channel: Channel) -> Result<HashMap<String, Manifest>> {
        let found = match self.client.call(
            Method::POST,
            &format!("/{}/_search", self.manifests()),
            Some(&json!({
                "size": MAX_MANIFESTS,
                "track_total_hits": true,
                "query": { "match_all": {} }
            })),
        ) {
            Err(Error::NotFound { .. }) => return Ok(HashMap::new()),
            other => other?,
        };
        whole(&found, "manifest listing")?;
        if found
            .pointer("/hits/total/value")
            .and_then(Value::as_u64)
            .is_some_and(|n| n > MAX_MANIFESTS as u64)
        {
            return Err(Error::LimitExceeded(format!(
                "{} holds more than {MAX_MANIFESTS} manifests; nothing is collected until fewer snapshots are retained",
                self.manifests()
            )));
        }
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
            if let Ok(manifest) = serde_json::from_value::<Manifest>(source.clone())
                && manifest.is_of(channel)
            {
                out.insert(id.to_string(), manifest);
            }
        }
        Ok(out)
    }

    pub fn delete_index(&self, index: &str) {
        if let Err(e) = self.client.call(Method::DELETE, &format!("/{index}"), None)
            && !matches!(e, Error::NotFound { .. })
        {
            log::warn!("cannot delete OpenSearch index {index}: {e}");
        }
    }

    /// Removes the manifests of `channel` not in `keep` or `held` (past the grace period), then
    /// the part indices no remaining manifest reads.
    pub fn collect(
        &self,
        channel: Channel,
        keep: &[String],
        held: &[String],
        retired: &mut dyn FnMut(&str) -> Result<()>,
    ) -> Result<usize> {
        let listed = match self.all_manifests(channel) {
            Err(Error::LimitExceeded(m)) => {
                log::warn!("collection skipped: {m}");
                return Ok(0);
            }
            other => other?,
        };
        if listed.is_empty() && self.part_indices(channel)?.is_empty() {
            // Nothing under the prefix yet: nothing to collect, and nothing claimed by opening.
            return Ok(0);
        }
        self.claim()?;
        let now = crate::clock::now_ms();
        let manifests = self.all_manifests(channel)?;
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
        for (index, created) in self.part_indices(channel)? {
            if !referenced.contains(&index) && now - created >= self.grace_ms {
                self.delete_index(&index);
            }
        }
        Ok(removed)
    }

    /// Deletes the documents of `revisions` from every part of `channel` under this prefix (a
    /// part is shared by the generations derived from it, and an unreferenced one may wait for
    /// collection), then merges the parts so that no deleted document remains on disk.
    pub fn erase(&self, channel: Channel, revisions: &[u64]) -> Result<()> {
        let all = format!("{}-{}-*", self.name, channel.infix);
        let long = Some(Duration::from_secs(600));
        let deleted = self.client.call_with(
            Method::POST,
            &format!(
                "/{all}/_delete_by_query?refresh=true&conflicts=proceed&wait_for_completion=true"
            ),
            Some(&json!({ "query": { "terms": { "revision_id": revisions } } })),
            long,
        )?;
        if deleted
            .get("failures")
            .and_then(Value::as_array)
            .is_some_and(|f| !f.is_empty())
        {
            return Err(Error::StoreUnavailable(format!(
                "OpenSearch could not delete every document of the erased revisions ({}); the erasure is retried by the next purge",
                deleted["failures"]
            )));
        }
        let merged = self.client.call_with(
            Method::POST,
            &format!("/{all}/_forcemerge?only_expunge_deletes=true"),
            None,
            long,
        )?;
        whole(&merged, "merge")?;
        Ok(())
    }

    /// Whether `manifest`'s parts hold (live or not) a document of `revisions`.
    pub fn holds_revisions(&self, manifest: &Manifest, revisions: &[u64]) -> Result<bool> {
        if revisions.is_empty() {
            return Ok(false);
        }
        let found = self.client.call(
            Method::POST,
            &format!("/{}/_count", manifest.indices()),
            Some(&json!({ "query": { "terms": { "revision_id": revisions } } })),
        )?;
        whole(&found, "count")?;
        Ok(found.get("count").and_then(Value::as_u64).unwrap_or(0) > 0)
    }

    /// Copies what `from`'s parts show into the new part `index` (made already), refreshed.
    pub fn reindex(&self, from: &Manifest, index: &str) -> Result<()> {
        self.client.call_with(
            Method::POST,
            "/_reindex?refresh=true&wait_for_completion=true",
            Some(&json!({
                "source": { "index": from.parts.iter().map(|p| p.index.as_str()).collect::<Vec<_>>(), "query": from.visibility() },
                "dest": { "index": index }
            })),
            Some(Duration::from_secs(3600)),
        )?;
        Ok(())
    }

    /// Opens a part written with refresh off for searching.
    pub fn open_part(&self, index: &str) -> Result<()> {
        self.client.call(
            Method::PUT,
            &format!("/{index}/_settings"),
            Some(&json!({ "index": { "refresh_interval": "1s" } })),
        )?;
        self.client
            .call(Method::POST, &format!("/{index}/_refresh"), None)?;
        Ok(())
    }
}

/// `E_STORE_UNAVAILABLE` when some shard did not answer `what` (a partial count or listing must
/// not be taken for the whole).
fn whole(found: &Value, what: &str) -> Result<()> {
    let failed = found
        .pointer("/_shards/failed")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    if failed > 0 {
        return Err(Error::StoreUnavailable(format!(
            "{failed} OpenSearch shard(s) did not answer the {what}; try again once the cluster is whole"
        )));
    }
    Ok(())
}

/// The hits of a search answer.
pub(super) fn hits(found: &Value) -> impl Iterator<Item = &Value> {
    found
        .pointer("/hits/hits")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

/// A hit's first doc value of `field`.
pub(super) fn doc_value(hit: &Value, field: &str) -> Option<u64> {
    hit.pointer(&format!("/fields/{field}/0"))
        .and_then(Value::as_u64)
}

/// A search answer's hits as `(chunk_id, owner_id, score)`, in the cluster's order.
///
/// # Errors
/// `E_CORRUPT` for a document without its ids (written by something else: rebuild).
pub(super) fn scored_windows(found: &Value, channel: Channel) -> Result<Vec<(u64, u64, f64)>> {
    hits(found)
        .map(|hit| {
            let (Some(chunk), Some(owner)) = (doc_value(hit, "chunk_id"), doc_value(hit, "owner_id"))
            else {
                return Err(Error::Corrupt(format!(
                    "an OpenSearch {} document has no chunk_id/owner_id; run `tychora manage rebuild`",
                    channel.name
                )));
            };
            Ok((chunk, owner, hit.get("_score").and_then(Value::as_f64).unwrap_or(0.0)))
        })
        .collect()
}

/// A part that went missing after the generation was opened: the generation is damaged.
pub(super) fn lost(channel: Channel) -> impl Fn(Error) -> Error {
    move |e| match e {
        Error::NotFound { id, .. } => Error::Corrupt(format!(
            "an OpenSearch index of the {} generation is missing ({id}); run `tychora manage rebuild`",
            channel.name
        )),
        other => other,
    }
}

/// A generation name as a URL path segment (names are `g<ms>-<job>`; anything else is escaped).
pub(super) fn encode(name: &str) -> String {
    percent_encoding::utf8_percent_encode(name, percent_encoding::NON_ALPHANUMERIC).to_string()
}
