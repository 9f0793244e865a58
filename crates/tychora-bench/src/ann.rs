//! Vector measurements: the local embedder over a list of texts, and the engine's vector index
//! (the same `vector::index` the text channel opens) built exact and as an HNSW graph over raw
//! little-endian f32 vectors, searched with each query, against exact ground truth.

use std::path::Path;
use std::time::Instant;

use serde::Serialize;
use tychora_core::vector::index::{self, Eligible, Entry, VectorIndex};
use tychora_core::vector::{Embedder, FamilySpec, InputKind, LocalEmbedder, LongInputs};

#[derive(Serialize)]
pub struct Embedding {
    vectors: Vec<Vec<f32>>,
    tokens: Vec<usize>,
    ms: f64,
}

pub fn embed(model: &Path, texts: &[String], long: LongInputs) -> tychora_core::Result<Embedding> {
    let embedder = LocalEmbedder::open(model, "window", "f32", long)?;
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    // The first call loads the weights; time the embedding alone.
    embedder.embed(&refs[..refs.len().min(1)], InputKind::Document)?;
    let started = Instant::now();
    let out = embedder.embed(&refs, InputKind::Document)?;
    Ok(Embedding {
        vectors: out.vectors,
        tokens: out.tokens,
        ms: started.elapsed().as_secs_f64() * 1000.0,
    })
}

#[derive(Serialize)]
pub struct Layout {
    layout: &'static str,
    expansion_search: Option<usize>,
    build_ms: f64,
    file_bytes: u64,
    open_ms: f64,
    /// Heap the opened index holds (MB; `VectorIndex::memory_bytes`: usearch's own count for a
    /// graph). The process RSS is not used: memory freed by the previous layout's run hid it.
    memory_mb: f64,
    qps: f64,
    p50_ms: f64,
    p99_ms: f64,
    recall_at_10: f64,
    /// Recall@10 of a search restricted to 1% of the vectors, and whether each returned 10.
    filtered_recall_at_10: f64,
    filtered_full: bool,
    filtered_p50_ms: f64,
}

#[derive(Serialize)]
pub struct AnnReport {
    vectors: usize,
    queries: usize,
    dimension: usize,
    layouts: Vec<Layout>,
}

fn read_f32(path: &Path, dim: usize) -> Result<Vec<Vec<f32>>, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if bytes.len() % (dim * 4) != 0 {
        return Err(format!(
            "{}: not a whole number of {dim}-d f32 vectors",
            path.display()
        ));
    }
    Ok(bytes
        .chunks_exact(dim * 4)
        .map(|v| {
            v.chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect()
        })
        .collect())
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i]
}

pub fn run(
    vectors: &Path,
    queries: &Path,
    dim: usize,
    out: &Path,
    quantization: &str,
) -> Result<AnnReport, String> {
    let base = read_f32(vectors, dim)?;
    let queries = read_f32(queries, dim)?;
    let spec = FamilySpec {
        provider: "bench".into(),
        model: "bench".into(),
        dimension: dim,
        representation: "window".into(),
        normalization: "l2".into(),
        quantization: quantization.into(),
        metric: "cos".into(),
    };
    // One vector in 100 is in collection "rare": the 1% filter.
    let names = ["rare".to_string(), "common".to_string()];
    let entries: Vec<Entry<'_>> = base
        .iter()
        .enumerate()
        .map(|(i, v)| Entry {
            key: i as u64,
            owner: i as u64,
            revision: 1,
            collection: if i % 100 == 0 { &names[0] } else { &names[1] },
            kind: "text",
            vector: v,
        })
        .collect();
    std::fs::create_dir_all(out).map_err(|e| e.to_string())?;
    let err = |e: tychora_core::Error| e.to_string();
    let mut layouts = Vec::new();
    let mut truth: Vec<Vec<u64>> = Vec::new();
    let mut truth_rare: Vec<Vec<u64>> = Vec::new();
    let rare = [names[0].clone()];
    for (flat, expansions) in [
        (true, vec![None]),
        (
            false,
            vec![Some(16), Some(32), Some(64), Some(128), Some(256)],
        ),
    ] {
        let path = out.join(if flat { "flat.tyv" } else { "hnsw.tyv" });
        let started = Instant::now();
        let (sha, bytes) = index::build_as(&path, &spec, &entries, flat).map_err(err)?;
        let build_ms = started.elapsed().as_secs_f64() * 1000.0;
        let started = Instant::now();
        let opened = VectorIndex::open(&path, &sha).map_err(err)?;
        let open_ms = started.elapsed().as_secs_f64() * 1000.0;
        let memory_mb = opened.memory_bytes() as f64 / 1e6;
        for expansion in expansions {
            if let Some(e) = expansion {
                opened.set_expansion_search(e);
            }
            let mut times = Vec::with_capacity(queries.len());
            let mut found = Vec::with_capacity(queries.len());
            let all = Instant::now();
            for q in &queries {
                let t = Instant::now();
                let hits = opened.search(q, 10, &Eligible::default()).map_err(err)?;
                times.push(t.elapsed().as_secs_f64() * 1000.0);
                found.push(hits.into_iter().map(|h| h.0).collect::<Vec<_>>());
            }
            let total = all.elapsed().as_secs_f64();
            let mut filtered_times = Vec::with_capacity(queries.len());
            let mut filtered = Vec::with_capacity(queries.len());
            for q in &queries {
                let t = Instant::now();
                let hits = opened
                    .search(
                        q,
                        10,
                        &Eligible {
                            collections: &rare,
                            kinds: &[],
                            chunks: None,
                        },
                    )
                    .map_err(err)?;
                filtered_times.push(t.elapsed().as_secs_f64() * 1000.0);
                filtered.push(hits.into_iter().map(|h| h.0).collect::<Vec<_>>());
            }
            if flat {
                truth.clone_from(&found);
                truth_rare.clone_from(&filtered);
                // Exact ground truth for the peers measured in other processes.
                let json = serde_json::to_string(&truth).map_err(|e| e.to_string())?;
                std::fs::write(out.join("truth.json"), json).map_err(|e| e.to_string())?;
            }
            let recall = |got: &[Vec<u64>], want: &[Vec<u64>]| {
                let hit: usize = got
                    .iter()
                    .zip(want)
                    .map(|(g, w)| g.iter().filter(|k| w.contains(k)).count())
                    .sum();
                hit as f64 / want.iter().map(Vec::len).sum::<usize>().max(1) as f64
            };
            times.sort_by(f64::total_cmp);
            filtered_times.sort_by(f64::total_cmp);
            layouts.push(Layout {
                layout: if flat { "flat" } else { "hnsw" },
                expansion_search: expansion,
                build_ms,
                file_bytes: bytes,
                open_ms,
                memory_mb,
                qps: queries.len() as f64 / total,
                p50_ms: percentile(&times, 0.5),
                p99_ms: percentile(&times, 0.99),
                recall_at_10: recall(&found, &truth),
                filtered_recall_at_10: recall(&filtered, &truth_rare),
                filtered_full: filtered.iter().all(|f| f.len() == 10),
                filtered_p50_ms: percentile(&filtered_times, 0.5),
            });
        }
    }
    Ok(AnnReport {
        vectors: base.len(),
        queries: queries.len(),
        dimension: dim,
        layouts,
    })
}
