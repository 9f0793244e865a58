//! One vector index generation: a single file holding the chunk keys, each key's collection and
//! kind (so eligibility filters apply inside the search), and either the vectors themselves (small
//! generations are searched exactly) or a usearch HNSW graph.
//!
//! usearch does not fsync, so the file is written to a temporary name, fsynced, renamed and the
//! directory fsynced; its sha256 is recorded with the snapshot and checked when it is opened.
//!
//! A generation may also be a *layer* over a full generation (its base): a flat file of the
//! vectors added since the base was built, and the base's keys it removes. A snapshot that
//! changes a few files writes a layer instead of rebuilding a graph over the whole corpus; the
//! base file is shared, never rewritten, and its sha256 is carried in the layer's header (so the
//! layer's own recorded sha256 vouches for it). A layer's base is always a full generation.

use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::Path;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use usearch::ffi::{IndexOptions, MetricKind, ScalarKind};

use super::embedder::FamilySpec;
use crate::error::{Error, Result};

const MAGIC: &[u8; 4] = b"TYV1";

/// Generations with fewer vectors than this are scored exactly, without a graph. An exact scan of
/// 20,000 × 384-d vectors takes 1.1–1.3 ms (p50; HNSW 0.2 ms), with recall 1 and nothing to
/// build, where the graph costs 6–8 s at every publication (bench/results/ann.md, 2 cores); from
/// 50,000 (2.9–3.4 ms vs 21–27 s) the graph pays for itself.
pub const EXACT_BELOW: usize = 20_000;

/// A filtered search scans the eligible vectors exactly when they are at most this share of the
/// generation: HNSW's filtered traversal degrades as the filter tightens (it can return fewer than
/// `k` results), while a scan of a few eligible vectors is cheap and exact.
const EXACT_FILTER_SHARE: f64 = 0.1;

/// HNSW build parameters (usearch's defaults are M = 16, ef_construction = 128).
const CONNECTIVITY: usize = 16;
const EXPANSION_ADD: usize = 128;
/// Search breadth: chosen in bench/vector for recall@10 ≥ 0.95 on SciFact's windows.
pub const EXPANSION_SEARCH: usize = 64;

#[derive(Debug, Serialize, Deserialize)]
struct Header {
    /// `flat` or `hnsw`.
    layout: String,
    dimension: usize,
    metric: String,
    quantization: String,
    count: usize,
    collections: Vec<String>,
    kinds: Vec<String>,
    /// The metric the HNSW graph was built with, when not `metric`: a cosine family's graph holds
    /// unit vectors under inner product (see [`graph_metric`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    graph_metric: Option<String>,
    /// The full generation this layer amends, when it is a layer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    base: Option<BaseRef>,
    /// The base's keys this layer removes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    deleted: Vec<u64>,
}

/// A layer's base: a full generation file in the same folder, its sha256 and its vector count.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BaseRef {
    /// The base file's name (in the layer's folder).
    pub name: String,
    /// Its sha256.
    pub sha256: String,
    /// Vectors it holds.
    pub count: usize,
}

/// The metric usearch builds a family's graph with. Cosine over unit vectors is 1 − their inner
/// product, so a cosine graph stores its vectors normalised and uses inner product, one dot
/// product per visited node instead of usearch's three-sum cosine (hnswlib does the same). 8-bit
/// graphs keep usearch's cosine, which their quantisation is scaled for.
fn graph_metric(metric: &str, quantization: &str) -> String {
    if metric == "cos" && quantization != "i8" {
        "ip".into()
    } else {
        metric.into()
    }
}

/// One vector to index: its chunk, eligibility attributes and the vector.
#[derive(Debug, Clone)]
pub struct Entry<'a> {
    /// The chunk id (the key).
    pub key: u64,
    /// The evidence owner it votes for (its own id, or the chunk it continues).
    pub owner: u64,
    /// The revision it was cut from (a cluster's generation excludes replaced revisions by it;
    /// 0 where a file does not keep it: a layer's carried vectors, excluded by key).
    pub revision: u64,
    /// The chunk's collection name.
    pub collection: &'a str,
    /// The chunk's source kind.
    pub kind: &'a str,
    /// Its vector.
    pub vector: &'a [f32],
}

/// Which chunks a search may return.
#[derive(Debug, Clone, Default)]
pub struct Eligible<'a> {
    /// Only these collections (empty: all).
    pub collections: &'a [String],
    /// Only these kinds (empty: all).
    pub kinds: &'a [String],
    /// Only these chunks (`None`: all), when the eligibility is finer than collection and kind
    /// (facet conditions).
    pub chunks: Option<&'a HashSet<u64>>,
}

impl Eligible<'_> {
    fn is_open(&self) -> bool {
        self.collections.is_empty() && self.kinds.is_empty() && self.chunks.is_none()
    }
}

enum Payload {
    /// Row-major vectors, one per key.
    Flat(Vec<f32>),
    Hnsw(usearch::Index),
}

/// An opened generation.
pub struct VectorIndex {
    dimension: usize,
    metric: String,
    keys: Vec<u64>,
    owners: Vec<u64>,
    /// Per key: (collection index, kind index) into `collections` / `kinds`.
    attrs: Vec<(u16, u16)>,
    collections: Vec<String>,
    kinds: Vec<String>,
    positions: HashMap<u64, usize>,
    payload: Payload,
    /// The graph holds unit vectors under inner product: queries are normalised first.
    unit_queries: bool,
    bytes: u64,
    /// A layer's base (opened with the layer by [`VectorIndex::open`]).
    base_ref: Option<BaseRef>,
    base: Option<Box<VectorIndex>>,
    /// The base's keys a layer removes.
    deleted: HashSet<u64>,
}

impl std::fmt::Debug for VectorIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VectorIndex")
            .field("vectors", &self.keys.len())
            .field("bytes", &self.bytes)
            .finish_non_exhaustive()
    }
}

fn metric_kind(metric: &str) -> Result<MetricKind> {
    match metric {
        "cos" => Ok(MetricKind::Cos),
        "ip" => Ok(MetricKind::IP),
        "l2" => Ok(MetricKind::L2sq),
        other => Err(Error::InvalidArgument(format!(
            "unknown vector metric {other:?}"
        ))),
    }
}

fn scalar_kind(quantization: &str) -> Result<ScalarKind> {
    match quantization {
        "f32" => Ok(ScalarKind::F32),
        "f16" => Ok(ScalarKind::F16),
        "i8" => Ok(ScalarKind::I8),
        other => Err(Error::InvalidArgument(format!(
            "unknown quantization {other:?}"
        ))),
    }
}

fn usearch_error(e: impl std::fmt::Display) -> Error {
    Error::Internal(format!("usearch: {e}"))
}

fn options(dimension: usize, metric: &str, quantization: &str) -> Result<IndexOptions> {
    Ok(IndexOptions {
        dimensions: dimension,
        metric: metric_kind(metric)?,
        quantization: scalar_kind(quantization)?,
        connectivity: CONNECTIVITY,
        expansion_add: EXPANSION_ADD,
        expansion_search: EXPANSION_SEARCH,
        multi: false,
    })
}

/// Distance as usearch reports it: smaller is closer.
fn distance(metric: &str, a: &[f32], b: &[f32]) -> f32 {
    match metric {
        "l2" => squared_l2(a, b),
        "ip" => 1.0 - dot(a, b),
        _ => {
            let (na, nb) = (dot(a, a).sqrt(), dot(b, b).sqrt());
            if na == 0.0 || nb == 0.0 {
                1.0
            } else {
                1.0 - dot(a, b) / (na * nb)
            }
        }
    }
}

/// Lanes of the exact scan's sums. A plain `.sum()` over f32 must add in order, which keeps the
/// compiler from using SIMD; eight independent partial sums let it (the exact layout's query over
/// 20,000 × 384-d vectors: p50 5.99 ms before, 1.14 ms after; bench/results/ann.md).
const LANES: usize = 8;

/// Σ aᵢ·bᵢ.
fn dot(a: &[f32], b: &[f32]) -> f32 {
    lanes(a, b, |x, y| x * y)
}

/// Σ (aᵢ − bᵢ)².
fn squared_l2(a: &[f32], b: &[f32]) -> f32 {
    lanes(a, b, |x, y| (x - y) * (x - y))
}

#[inline(always)]
fn lanes(a: &[f32], b: &[f32], term: impl Fn(f32, f32) -> f32) -> f32 {
    let (ca, cb) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
    let rest: f32 = ca
        .remainder()
        .iter()
        .zip(cb.remainder())
        .map(|(x, y)| term(*x, *y))
        .sum();
    let mut acc = [0f32; LANES];
    for (x, y) in ca.zip(cb) {
        for ((sum, x), y) in acc.iter_mut().zip(x).zip(y) {
            *sum += term(*x, *y);
        }
    }
    acc.iter().sum::<f32>() + rest
}

/// Writes a generation to `path` (durably) and returns its sha256 and size.
///
/// # Errors
/// I/O errors, a vector of the wrong dimension, usearch errors.
pub fn build(path: &Path, spec: &FamilySpec, entries: &[Entry<'_>]) -> Result<(String, u64)> {
    build_as(path, spec, entries, entries.len() < EXACT_BELOW)
}

/// Writes a layer over `base`: the flat vectors of `entries` and the base keys in `deleted`
/// (each must be a key of the base). Returns the layer file's sha256 and size.
///
/// # Errors
/// As [`build`].
pub fn build_layer(
    path: &Path,
    spec: &FamilySpec,
    base: &BaseRef,
    deleted: &[u64],
    entries: &[Entry<'_>],
) -> Result<(String, u64)> {
    write_file(path, spec, entries, true, Some(base), deleted)
}

/// [`build`] with the layout chosen by the caller (`flat`: exact scan; otherwise an HNSW graph),
/// for the benchmarks that measure the crossover.
///
/// # Errors
/// As [`build`].
pub fn build_as(
    path: &Path,
    spec: &FamilySpec,
    entries: &[Entry<'_>],
    flat: bool,
) -> Result<(String, u64)> {
    write_file(path, spec, entries, flat, None, &[])
}

fn write_file(
    path: &Path,
    spec: &FamilySpec,
    entries: &[Entry<'_>],
    flat: bool,
    base: Option<&BaseRef>,
    deleted: &[u64],
) -> Result<(String, u64)> {
    let mut collections: Vec<String> = Vec::new();
    let mut kinds: Vec<String> = Vec::new();
    let index_of = |list: &mut Vec<String>, value: &str| -> Result<u16> {
        let i = match list.iter().position(|v| v == value) {
            Some(i) => i,
            None => {
                list.push(value.to_string());
                list.len() - 1
            }
        };
        u16::try_from(i).map_err(|_| {
            Error::LimitExceeded(
                "more than 65,535 collections or kinds in one vector generation".into(),
            )
        })
    };
    let mut keys = Vec::with_capacity(entries.len());
    let mut owners = Vec::with_capacity(entries.len());
    let mut attrs = Vec::with_capacity(entries.len());
    for e in entries {
        if e.vector.len() != spec.dimension {
            return Err(Error::Corrupt(format!(
                "vector of chunk {} has {} dimensions, its family {}",
                e.key,
                e.vector.len(),
                spec.dimension
            )));
        }
        keys.push(e.key);
        owners.push(e.owner);
        attrs.push((
            index_of(&mut collections, e.collection)?,
            index_of(&mut kinds, e.kind)?,
        ));
    }
    let payload: Vec<u8> = if flat {
        entries
            .iter()
            .flat_map(|e| e.vector.iter().flat_map(|x| x.to_le_bytes()))
            .collect()
    } else {
        let graph = graph_metric(&spec.metric, &spec.quantization);
        let normalise = graph != spec.metric;
        let index = usearch::Index::new(&options(spec.dimension, &graph, &spec.quantization)?)
            .map_err(usearch_error)?;
        // usearch inserts concurrently when reserved for that many threads: one per core.
        let threads = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
        index
            .reserve_capacity_and_threads(entries.len(), threads)
            .map_err(usearch_error)?;
        let failed: Vec<Error> = std::thread::scope(|scope| {
            let workers: Vec<_> = (0..threads)
                .map(|t| {
                    let index = &index;
                    scope.spawn(move || {
                        entries.iter().skip(t).step_by(threads).find_map(|e| {
                            let added = if normalise {
                                index.add(e.key, &unit(e.vector))
                            } else {
                                index.add(e.key, e.vector)
                            };
                            added.err().map(usearch_error)
                        })
                    })
                })
                .collect();
            workers
                .into_iter()
                .filter_map(|w| {
                    w.join().unwrap_or_else(|_| {
                        Some(Error::Internal("an index build thread panicked".into()))
                    })
                })
                .collect()
        });
        if let Some(e) = failed.into_iter().next() {
            return Err(e);
        }
        let mut buffer = vec![0u8; index.serialized_length()];
        index.save_to_buffer(&mut buffer).map_err(usearch_error)?;
        buffer
    };
    let header = serde_json::to_vec(&Header {
        layout: if flat { "flat" } else { "hnsw" }.into(),
        dimension: spec.dimension,
        metric: spec.metric.clone(),
        quantization: spec.quantization.clone(),
        count: entries.len(),
        collections,
        kinds,
        graph_metric: (!flat)
            .then(|| graph_metric(&spec.metric, &spec.quantization))
            .filter(|g| *g != spec.metric),
        base: base.cloned(),
        deleted: deleted.to_vec(),
    })
    .map_err(|e| Error::Internal(e.to_string()))?;

    let dir = path
        .parent()
        .ok_or_else(|| Error::Internal("vector index path has no parent".into()))?;
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let tmp = path.with_extension("tmp");
    let mut hasher = Sha256::new();
    let mut size = 0u64;
    {
        let mut file = std::fs::File::create(&tmp).map_err(|e| Error::io(&tmp, e))?;
        let header_len = u32::try_from(header.len())
            .map_err(|_| Error::Internal("vector index header too large".into()))?;
        let key_bytes: Vec<u8> = keys
            .iter()
            .chain(&owners)
            .flat_map(|k| k.to_le_bytes())
            .collect();
        let attr_bytes: Vec<u8> = attrs
            .iter()
            .flat_map(|(c, k)| c.to_le_bytes().into_iter().chain(k.to_le_bytes()))
            .collect();
        for part in [
            &MAGIC[..],
            &header_len.to_le_bytes(),
            &header,
            &key_bytes,
            &attr_bytes,
            &payload,
        ] {
            file.write_all(part).map_err(|e| Error::io(&tmp, e))?;
            hasher.update(part);
            size += part.len() as u64;
        }
        file.sync_all().map_err(|e| Error::io(&tmp, e))?;
    }
    std::fs::rename(&tmp, path).map_err(|e| Error::io(path, e))?;
    crate::artifact::sync_dir(dir)?;
    Ok((hex::encode(hasher.finalize()), size))
}

/// The sha256 of a generation file (for `manage verify`).
///
/// # Errors
/// I/O errors.
pub fn file_sha256(path: &Path) -> Result<String> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    Ok(hex::encode(Sha256::digest(&bytes)))
}

impl VectorIndex {
    /// Opens a generation, checking its sha256 against the one recorded at publication; a layer
    /// opens its base too, checked against the sha256 the layer carries.
    ///
    /// # Errors
    /// `E_CORRUPT` when the file (or a layer's base) is missing, truncated, changed or unreadable.
    pub fn open(path: &Path, expected_sha256: &str) -> Result<Self> {
        let mut index = Self::open_layer(path, expected_sha256)?;
        if let Some(base_ref) = &index.base_ref {
            let base_path = path.with_file_name(&base_ref.name);
            let base = Self::open_layer(&base_path, &base_ref.sha256)?;
            let corrupt = |why: &str| {
                Error::Corrupt(format!(
                    "vector index {} {why}; rebuild it with `tychora manage rebuild`",
                    path.display()
                ))
            };
            if base.base_ref.is_some() {
                return Err(corrupt("is a layer over another layer"));
            }
            if base.keys.len() != base_ref.count
                || index
                    .deleted
                    .iter()
                    .any(|k| !base.positions.contains_key(k))
            {
                return Err(corrupt("does not match its base generation"));
            }
            index.bytes += base.bytes;
            index.base = Some(Box::new(base));
        }
        Ok(index)
    }

    /// Opens one file without a layer's base: what publication reads to carry a layer forward.
    ///
    /// # Errors
    /// As [`VectorIndex::open`].
    pub fn open_layer(path: &Path, expected_sha256: &str) -> Result<Self> {
        let corrupt = |why: String| {
            Error::Corrupt(format!(
                "vector index {} {why}; rebuild it with `tychora manage rebuild`",
                path.display()
            ))
        };
        let bytes = std::fs::read(path).map_err(|e| corrupt(format!("cannot be read ({e})")))?;
        let actual = hex::encode(Sha256::digest(&bytes));
        if actual != expected_sha256 {
            return Err(corrupt(format!(
                "does not match its recorded sha256 (recorded {}, found {})",
                &expected_sha256[..expected_sha256.len().min(12)],
                &actual[..12]
            )));
        }
        let take = |at: usize, n: usize| {
            bytes
                .get(at..at + n)
                .ok_or_else(|| corrupt("is truncated".into()))
        };
        if take(0, 4)? != MAGIC {
            return Err(corrupt("is not a tychora vector index".into()));
        }
        let header_len = u32::from_le_bytes(take(4, 4)?.try_into().unwrap_or([0; 4])) as usize;
        let header: Header = serde_json::from_slice(take(8, header_len)?)
            .map_err(|e| corrupt(format!("has an unreadable header ({e})")))?;
        let mut at = 8 + header_len;
        let words = |at: usize| -> Result<Vec<u64>> {
            Ok(take(at, header.count * 8)?
                .chunks_exact(8)
                .map(|b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
                .collect())
        };
        let keys = words(at)?;
        let owners = words(at + header.count * 8)?;
        at += header.count * 16;
        let attrs: Vec<(u16, u16)> = take(at, header.count * 4)?
            .chunks_exact(4)
            .map(|b| {
                (
                    u16::from_le_bytes([b[0], b[1]]),
                    u16::from_le_bytes([b[2], b[3]]),
                )
            })
            .collect();
        at += header.count * 4;
        let rest = &bytes[at..];
        let payload = match header.layout.as_str() {
            "flat" => {
                if rest.len() != header.count * header.dimension * 4 {
                    return Err(corrupt("has a vector section of the wrong size".into()));
                }
                let mut vectors: Vec<f32> = rest
                    .chunks_exact(4)
                    .map(|b| f32::from_le_bytes(b.try_into().unwrap_or([0; 4])))
                    .collect();
                if header.metric == "cos" && header.dimension > 0 {
                    for v in vectors.chunks_exact_mut(header.dimension) {
                        let n = unit(v);
                        v.copy_from_slice(&n);
                    }
                }
                Payload::Flat(vectors)
            }
            "hnsw" => {
                let index = usearch::Index::new(&options(
                    header.dimension,
                    header.graph_metric.as_deref().unwrap_or(&header.metric),
                    &header.quantization,
                )?)
                .map_err(usearch_error)?;
                index
                    .load_from_buffer(rest)
                    .map_err(|e| corrupt(format!("holds a graph usearch cannot load ({e})")))?;
                if index.size() != header.count {
                    return Err(corrupt("holds a graph of the wrong size".into()));
                }
                index.change_expansion_search(EXPANSION_SEARCH);
                Payload::Hnsw(index)
            }
            other => return Err(corrupt(format!("has an unknown layout {other:?}"))),
        };
        let positions = keys.iter().enumerate().map(|(i, k)| (*k, i)).collect();
        let unit_queries = header.graph_metric.as_deref() == Some("ip") && header.metric == "cos";
        Ok(Self {
            unit_queries,
            dimension: header.dimension,
            metric: header.metric,
            keys,
            owners,
            attrs,
            collections: header.collections,
            kinds: header.kinds,
            positions,
            payload,
            bytes: bytes.len() as u64,
            base_ref: header.base,
            base: None,
            deleted: header.deleted.into_iter().collect(),
        })
    }

    /// Vectors in the generation (a layer's with its base's, less the ones it removes).
    #[must_use]
    pub fn len(&self) -> usize {
        self.keys.len() + self.base_ref.as_ref().map_or(0, |b| b.count) - self.deleted.len()
    }

    /// Whether the generation holds no vector.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A layer's base, the vectors the layer itself holds and the base keys it removes; `None`
    /// for a full generation.
    #[must_use]
    pub fn layer(&self) -> Option<(&BaseRef, usize, usize)> {
        self.base_ref
            .as_ref()
            .map(|b| (b, self.keys.len(), self.deleted.len()))
    }

    /// The base keys a layer removes.
    #[must_use]
    pub fn deleted(&self) -> &HashSet<u64> {
        &self.deleted
    }

    /// The vectors this file itself holds (a layer's, not its base's), when they are flat; cosine
    /// vectors come back normalised, which leaves every distance unchanged.
    #[must_use]
    pub fn own_entries(&self) -> Option<Vec<Entry<'_>>> {
        let Payload::Flat(vectors) = &self.payload else {
            return None;
        };
        Some(
            (0..self.keys.len())
                .map(|i| Entry {
                    key: self.keys[i],
                    owner: self.owners[i],
                    revision: 0,
                    collection: &self.collections[self.attrs[i].0 as usize],
                    kind: &self.kinds[self.attrs[i].1 as usize],
                    vector: &vectors[i * self.dimension..(i + 1) * self.dimension],
                })
                .collect(),
        )
    }

    /// Sets the HNSW search breadth (benchmarks; the engine uses [`EXPANSION_SEARCH`]).
    pub fn set_expansion_search(&self, expansion: usize) {
        if let Payload::Hnsw(index) = &self.payload {
            index.change_expansion_search(expansion);
        }
        if let Some(base) = &self.base {
            base.set_expansion_search(expansion);
        }
    }

    /// The evidence owner of a chunk in this generation.
    #[must_use]
    pub fn owner_of(&self, key: u64) -> Option<u64> {
        match self.positions.get(&key) {
            Some(&i) => Some(self.owners[i]),
            None if self.deleted.contains(&key) => None,
            None => self.base.as_ref().and_then(|b| b.owner_of(key)),
        }
    }

    /// A window's vector in this generation, when it holds the window and `eligible` admits it;
    /// cosine families give it back as a unit vector (the summary channel ranks a node's windows
    /// by it, and clustering reads it).
    ///
    /// # Errors
    /// usearch errors reading a graph's vector.
    pub fn vector_of(&self, key: u64, eligible: &Eligible<'_>) -> Result<Option<Vec<f32>>> {
        let Some(&i) = self.positions.get(&key) else {
            if self.deleted.contains(&key) {
                return Ok(None);
            }
            return match &self.base {
                Some(base) => base.vector_of(key, eligible),
                None => Ok(None),
            };
        };
        let (c, k) = self.attrs[i];
        let admitted = (eligible.collections.is_empty()
            || eligible.collections.contains(&self.collections[c as usize]))
            && (eligible.kinds.is_empty() || eligible.kinds.contains(&self.kinds[k as usize]))
            && eligible.chunks.is_none_or(|chunks| chunks.contains(&key));
        if !admitted {
            return Ok(None);
        }
        let vector = match &self.payload {
            Payload::Flat(vectors) => {
                vectors[i * self.dimension..(i + 1) * self.dimension].to_vec()
            }
            Payload::Hnsw(index) => {
                let mut buffer = vec![0f32; self.dimension];
                index.get(key, &mut buffer).map_err(usearch_error)?;
                buffer
            }
        };
        Ok(Some(if self.metric == "cos" || self.unit_queries {
            unit(&vector)
        } else {
            vector
        }))
    }

    /// The keys this generation holds (a layer's with its base's, less what the layer removes).
    #[must_use]
    pub fn keys(&self) -> Vec<u64> {
        let mut keys = self.keys.clone();
        if let Some(base) = &self.base {
            keys.extend(
                base.keys()
                    .into_iter()
                    .filter(|k| !self.deleted.contains(k)),
            );
        }
        keys
    }

    /// The file's size in bytes (a layer's with its base's).
    #[must_use]
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Heap bytes the opened generation holds: vectors or graph (as usearch counts it), keys,
    /// owners, attributes and the key → position map.
    #[must_use]
    pub fn memory_bytes(&self) -> u64 {
        let payload = match &self.payload {
            Payload::Flat(v) => v.len() * 4,
            Payload::Hnsw(index) => index.memory_usage(),
        };
        // keys + owners (8 B each), attrs (4 B), positions (key, position and hash overhead);
        // a layer's removed keys (key and hash overhead).
        (payload + self.keys.len() * (8 + 8 + 4 + 24) + self.deleted.len() * 16) as u64
            + self.base.as_ref().map_or(0, |b| b.memory_bytes())
    }

    /// Whether the search is exact (no graph).
    #[must_use]
    pub fn is_exact(&self) -> bool {
        matches!(self.payload, Payload::Flat(_)) && self.base.as_ref().is_none_or(|b| b.is_exact())
    }

    /// The `k` nearest eligible chunks to `query`, nearest first, as (chunk id, distance).
    /// Eligibility applies inside the search: a tight filter still returns `k` results when `k`
    /// eligible chunks exist.
    ///
    /// # Errors
    /// A query of the wrong dimension; usearch errors.
    pub fn search(
        &self,
        query: &[f32],
        k: usize,
        eligible: &Eligible<'_>,
    ) -> Result<Vec<(u64, f32)>> {
        if query.len() != self.dimension {
            return Err(Error::InvalidArgument(format!(
                "query vector has {} dimensions, the index {}",
                query.len(),
                self.dimension
            )));
        }
        let mut found = self.search_file(query, k, eligible, &HashSet::new())?;
        if let Some(base) = &self.base {
            found.extend(base.search_file(query, k, eligible, &self.deleted)?);
            found = top(found, k);
        }
        Ok(found)
    }

    /// [`VectorIndex::search`] over this file's own vectors, leaving out the keys in `removed`.
    fn search_file(
        &self,
        query: &[f32],
        k: usize,
        eligible: &Eligible<'_>,
        removed: &HashSet<u64>,
    ) -> Result<Vec<(u64, f32)>> {
        if k == 0 || self.keys.is_empty() {
            return Ok(Vec::new());
        }
        let allowed = self.allowed(eligible, removed);
        let admitted = |i: usize| allowed.as_ref().is_none_or(|a| a[i]);
        let eligible_count = allowed
            .as_ref()
            .map_or(self.keys.len(), |a| a.iter().filter(|x| **x).count());
        match &self.payload {
            Payload::Flat(vectors) => {
                // Flat cosine vectors were normalised at open: one dot product per vector.
                let (query, metric) = if self.metric == "cos" {
                    (unit(query), "ip")
                } else {
                    (query.to_vec(), self.metric.as_str())
                };
                let scored = (0..self.keys.len())
                    .filter(|&i| admitted(i))
                    .map(|i| {
                        let v = &vectors[i * self.dimension..(i + 1) * self.dimension];
                        let d = if metric == "ip" {
                            1.0 - dot(&query, v)
                        } else {
                            distance(metric, &query, v)
                        };
                        (self.keys[i], d)
                    })
                    .collect();
                Ok(top(scored, k))
            }
            Payload::Hnsw(index) => {
                let normalised;
                let query = if self.unit_queries {
                    normalised = unit(query);
                    &normalised[..]
                } else {
                    query
                };
                let scan_exactly = allowed.is_some()
                    && (eligible_count as f64) <= EXACT_FILTER_SHARE * self.keys.len() as f64;
                if !scan_exactly {
                    let found = match &allowed {
                        None => index.search(query, k),
                        Some(a) => index.filtered_search(query, k, |key| {
                            self.positions.get(&key).is_some_and(|&i| a[i])
                        }),
                    }
                    .map_err(usearch_error)?;
                    if found.keys.len() >= k.min(eligible_count) {
                        return Ok(found.keys.into_iter().zip(found.distances).collect());
                    }
                }
                // A tight filter: score the eligible vectors exactly, reading them from the graph.
                let mut buffer = vec![0f32; self.dimension];
                let mut scored: Vec<(u64, f32)> = Vec::with_capacity(eligible_count);
                for (i, key) in self.keys.iter().enumerate() {
                    if admitted(i) && index.get(*key, &mut buffer).map_err(usearch_error)? > 0 {
                        scored.push((*key, distance(&self.metric, query, &buffer)));
                    }
                }
                Ok(top(scored, k))
            }
        }
    }

    /// Per position, whether the chunk is eligible and not removed (`None`: every chunk is).
    fn allowed(&self, eligible: &Eligible<'_>, removed: &HashSet<u64>) -> Option<Vec<bool>> {
        if eligible.is_open() && removed.is_empty() {
            return None;
        }
        let collections: Vec<bool> = self
            .collections
            .iter()
            .map(|c| eligible.collections.is_empty() || eligible.collections.contains(c))
            .collect();
        let kinds: Vec<bool> = self
            .kinds
            .iter()
            .map(|k| eligible.kinds.is_empty() || eligible.kinds.contains(k))
            .collect();
        Some(
            self.attrs
                .iter()
                .zip(&self.keys)
                .map(|((c, k), key)| {
                    collections[*c as usize]
                        && kinds[*k as usize]
                        && !removed.contains(key)
                        && eligible.chunks.is_none_or(|chunks| chunks.contains(key))
                })
                .collect(),
        )
    }
}

/// `v` scaled to length 1 (a zero vector stays zero).
pub(crate) fn unit(v: &[f32]) -> Vec<f32> {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter().map(|x| x / norm).collect()
    } else {
        v.to_vec()
    }
}

/// The `k` smallest distances, ties by key.
fn top(mut scored: Vec<(u64, f32)>, k: usize) -> Vec<(u64, f32)> {
    let order = |a: &(u64, f32), b: &(u64, f32)| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0));
    if scored.len() > k && k > 0 {
        scored.select_nth_unstable_by(k - 1, order);
        scored.truncate(k);
    }
    scored.sort_by(order);
    scored.truncate(k);
    scored
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(dimension: usize) -> FamilySpec {
        FamilySpec {
            provider: "test".into(),
            model: "m".into(),
            dimension,
            representation: "window".into(),
            normalization: "l2".into(),
            quantization: "f32".into(),
            metric: "cos".into(),
        }
    }

    /// Deterministic unit vectors.
    fn vectors(n: usize, dim: usize) -> Vec<Vec<f32>> {
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        (0..n)
            .map(|_| {
                let mut v: Vec<f32> = (0..dim)
                    .map(|_| {
                        state ^= state << 13;
                        state ^= state >> 7;
                        state ^= state << 17;
                        (state % 2000) as f32 / 1000.0 - 1.0
                    })
                    .collect();
                let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
                v.iter_mut().for_each(|x| *x /= norm);
                v
            })
            .collect()
    }

    fn entries<'a>(vs: &'a [Vec<f32>], collections: &'a [String]) -> Vec<Entry<'a>> {
        vs.iter()
            .enumerate()
            .map(|(i, v)| Entry {
                key: i as u64 + 1,
                owner: i as u64 + 1,
                revision: 1,
                collection: &collections[i % collections.len()],
                kind: "markdown",
                vector: v,
            })
            .collect()
    }

    #[test]
    fn a_layer_answers_like_a_full_generation_of_the_same_vectors() {
        let dir = tempfile::tempdir().unwrap();
        let names: Vec<String> = vec!["a".into(), "b".into()];
        for n in [300, EXACT_BELOW + 300] {
            let vs = vectors(n + 40, 16);
            let all = entries(&vs, &names);
            let base_path = dir.path().join(format!("base{n}.tyv"));
            let (base_sha, _) = build(&base_path, &spec(16), &all[..n]).unwrap();
            let base = BaseRef {
                name: format!("base{n}.tyv"),
                sha256: base_sha,
                count: n,
            };
            // The layer removes every tenth base key and adds 40 new vectors.
            let deleted: Vec<u64> = (1..=n as u64).filter(|k| k % 10 == 0).collect();
            let layer_path = dir.path().join(format!("layer{n}.tyv"));
            let (layer_sha, _) =
                build_layer(&layer_path, &spec(16), &base, &deleted, &all[n..]).unwrap();
            let layered = VectorIndex::open(&layer_path, &layer_sha).unwrap();
            // The same vectors as one full generation.
            let kept: Vec<Entry<'_>> = all
                .iter()
                .filter(|e| !deleted.contains(&e.key))
                .cloned()
                .collect();
            let full_path = dir.path().join(format!("full{n}.tyv"));
            let (full_sha, _) = build_as(&full_path, &spec(16), &kept, true).unwrap();
            let full = VectorIndex::open(&full_path, &full_sha).unwrap();
            assert_eq!(layered.len(), full.len());
            assert_eq!(
                layered.layer().map(|(b, own, gone)| (b.count, own, gone)),
                Some((n, 40, deleted.len()))
            );
            assert_eq!(layered.owner_of(10), None, "a removed key has no owner");
            assert_eq!(layered.owner_of(n as u64 + 3), Some(n as u64 + 3));
            let only_b = ["b".to_string()];
            for q in [&vs[9], &vs[n + 5], &vs[77]] {
                for eligible in [
                    Eligible::default(),
                    Eligible {
                        collections: &only_b,
                        kinds: &[],
                        chunks: None,
                    },
                ] {
                    let got: Vec<u64> = layered
                        .search(q, 10, &eligible)
                        .unwrap()
                        .iter()
                        .map(|h| h.0)
                        .collect();
                    let want: Vec<u64> = full
                        .search(q, 10, &eligible)
                        .unwrap()
                        .iter()
                        .map(|h| h.0)
                        .collect();
                    assert!(!got.contains(&10), "a removed key is never returned");
                    if n < EXACT_BELOW {
                        assert_eq!(got, want, "an exact layer over an exact base is exact");
                    } else {
                        let overlap = got.iter().filter(|k| want.contains(k)).count();
                        assert!(
                            overlap >= 9,
                            "graph base: {overlap}/10 of the exact neighbours"
                        );
                    }
                }
            }
            // A changed base is refused through the layer.
            let mut bytes = std::fs::read(&base_path).unwrap();
            let last = bytes.len() - 1;
            bytes[last] ^= 1;
            std::fs::write(&base_path, &bytes).unwrap();
            let refused = VectorIndex::open(&layer_path, &layer_sha).unwrap_err();
            assert!(refused.to_string().contains("sha256"), "{refused}");
        }
    }

    #[test]
    fn flat_and_graph_generations_find_the_nearest_and_honour_filters() {
        let dir = tempfile::tempdir().unwrap();
        // 1 vector in 100 is in the "rare" collection: a filter that excludes 99%.
        let names: Vec<String> = (0..100)
            .map(|i| {
                if i == 0 {
                    "rare".into()
                } else {
                    format!("c{i}")
                }
            })
            .collect();
        for n in [500, EXACT_BELOW + 500] {
            let vs = vectors(n, 16);
            let path = dir.path().join(format!("g{n}.vec"));
            let (sha, size) = build(&path, &spec(16), &entries(&vs, &names)).unwrap();
            assert_eq!(size, std::fs::metadata(&path).unwrap().len());
            let index = VectorIndex::open(&path, &sha).unwrap();
            assert_eq!(index.is_exact(), n < EXACT_BELOW);
            let hits = index.search(&vs[41], 10, &Eligible::default()).unwrap();
            assert_eq!(hits[0].0, 42, "a vector is its own nearest neighbour");
            assert_eq!(hits.len(), 10);
            let rare = ["rare".to_string()];
            let filtered = index
                .search(
                    &vs[7],
                    10,
                    &Eligible {
                        collections: &rare,
                        kinds: &[],
                        chunks: None,
                    },
                )
                .unwrap();
            // 1% of 500 is 5 eligible vectors; 1% of 20,500 is 205.
            assert_eq!(
                filtered.len(),
                (n / 100).min(10),
                "a 1% filter still returns the limit"
            );
            assert!(filtered.iter().all(|(k, _)| (k - 1) % 100 == 0));
            // A chunk set (facet conditions) narrows inside the search as well.
            let three: HashSet<u64> = [5, 250, 499].into_iter().collect();
            let chosen = index
                .search(
                    &vs[7],
                    10,
                    &Eligible {
                        chunks: Some(&three),
                        ..Eligible::default()
                    },
                )
                .unwrap();
            let mut keys: Vec<u64> = chosen.iter().map(|h| h.0).collect();
            keys.sort_unstable();
            assert_eq!(keys, vec![5, 250, 499]);
        }
    }

    #[test]
    fn a_cosine_graph_answers_like_the_exact_scan_for_vectors_of_any_length() {
        let dir = tempfile::tempdir().unwrap();
        // Vectors and query of different lengths: the graph normalises both.
        let vs: Vec<Vec<f32>> = vectors(3000, 32)
            .into_iter()
            .enumerate()
            .map(|(i, v)| v.iter().map(|x| x * (1.0 + (i % 7) as f32)).collect())
            .collect();
        let names = vec!["c".to_string()];
        let mut answers = Vec::new();
        for flat in [true, false] {
            let path = dir.path().join(format!("{flat}.tyv"));
            let (sha, _) = build_as(&path, &spec(32), &entries(&vs, &names), flat).unwrap();
            let index = VectorIndex::open(&path, &sha).unwrap();
            index.set_expansion_search(256);
            let query: Vec<f32> = vs[41].iter().map(|x| x * 5.0).collect();
            answers.push(index.search(&query, 5, &Eligible::default()).unwrap());
        }
        let (exact, graph) = (&answers[0], &answers[1]);
        assert_eq!(exact[0].0, 42);
        assert_eq!(
            exact.iter().map(|h| h.0).collect::<Vec<_>>(),
            graph.iter().map(|h| h.0).collect::<Vec<_>>()
        );
        for (e, g) in exact.iter().zip(graph) {
            assert!((e.1 - g.1).abs() < 1e-4, "cosine distances {e:?} vs {g:?}");
        }
    }

    #[test]
    fn quantised_graphs_find_the_nearest_and_are_smaller() {
        let dir = tempfile::tempdir().unwrap();
        let vs = vectors(2000, 64);
        let names = vec!["c".to_string()];
        let mut sizes = Vec::new();
        for quantization in ["f32", "f16", "i8"] {
            let path = dir.path().join(format!("{quantization}.tyv"));
            let spec = FamilySpec {
                quantization: quantization.into(),
                ..spec(64)
            };
            let (sha, size) = build_as(&path, &spec, &entries(&vs, &names), false).unwrap();
            let index = VectorIndex::open(&path, &sha).unwrap();
            assert!(!index.is_exact());
            let hits = index.search(&vs[99], 5, &Eligible::default()).unwrap();
            assert_eq!(
                hits[0].0, 100,
                "{quantization}: a vector is its own nearest neighbour"
            );
            sizes.push(size);
        }
        assert!(sizes[1] < sizes[0] && sizes[2] < sizes[1], "{sizes:?}");
    }

    #[test]
    fn a_changed_or_truncated_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let vs = vectors(50, 8);
        let names = vec!["c".to_string()];
        let path = dir.path().join("g.vec");
        let (sha, _) = build(&path, &spec(8), &entries(&vs, &names)).unwrap();
        let mut bytes = std::fs::read(&path).unwrap();
        bytes.truncate(bytes.len() - 9);
        std::fs::write(&path, &bytes).unwrap();
        assert_eq!(
            VectorIndex::open(&path, &sha).unwrap_err().code(),
            crate::ErrorCode::Corrupt
        );
        std::fs::remove_file(&path).unwrap();
        assert_eq!(
            VectorIndex::open(&path, &sha).unwrap_err().code(),
            crate::ErrorCode::Corrupt
        );
    }
}
