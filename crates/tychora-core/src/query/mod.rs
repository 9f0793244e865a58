//! The query path: pin a snapshot → eligibility → channels → weighted RRF → segments → budget.

mod hydrate;
pub(crate) mod log;

use std::collections::{HashMap, HashSet};
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::exact;
use crate::fusion::{self, ChannelList};
use crate::lexical::Filter;
use crate::safety::{self, Safety};
use crate::store::now_ms;
use crate::tokenize;
use crate::workspace::Workspace;
use hydrate::ChunkRow;

/// One channel's name, weight and `(chunk_id, owner_id)` hits, best first.
type ChannelHits = (&'static str, f64, Vec<(i64, i64)>);

/// The result contract version.
pub const RESULT_VERSION: u32 = 1;

/// A search request (the TS `QueryRequest` zod schema is the public form of this).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(missing_docs)]
pub struct QueryRequest {
    pub query: String,
    #[serde(default)]
    pub collections: Vec<String>,
    #[serde(default)]
    pub kinds: Vec<String>,
    #[serde(default)]
    pub limit: Option<usize>,
    #[serde(default)]
    pub budget_tokens: Option<usize>,
    /// Segments per source; 0 means unlimited.
    #[serde(default)]
    pub max_per_source: Option<usize>,
    #[serde(default)]
    pub snapshot_id: Option<i64>,
    /// Channels to run (default: the profile's).
    #[serde(default)]
    pub channels: Option<Vec<String>>,
    #[serde(default)]
    pub agent_id: Option<String>,
    #[serde(default)]
    pub task_id: Option<String>,
}

/// Where a segment comes from.
#[derive(Debug, Clone, Serialize)]
#[allow(missing_docs)]
pub struct SourceRef {
    pub source_id: i64,
    pub uri: String,
    pub path: String,
    pub collection: String,
    pub kind: String,
}

/// The exact revision a segment was read from.
#[derive(Debug, Clone, Serialize)]
#[allow(missing_docs)]
pub struct RevisionRef {
    pub revision_id: i64,
    pub seq: i64,
    pub sha256: String,
    /// The repository commit the bytes were captured at, when they came from a Git checkout.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
}

/// Where in the retained bytes a segment lies.
#[derive(Debug, Clone, Serialize)]
#[allow(missing_docs)]
pub struct Locator {
    pub byte_start: i64,
    pub byte_end: i64,
    pub line_start: i64,
    pub line_end: i64,
    pub col_start: i64,
    pub col_end: i64,
    pub heading_path: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub json_pointer: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub anchor: Option<String>,
}

/// One channel's rank for a segment.
#[derive(Debug, Clone, Serialize)]
#[allow(missing_docs)]
pub struct ChannelRank {
    pub channel: &'static str,
    pub rank: usize,
}

/// Evidence assembled at query time.
#[derive(Debug, Clone, Serialize)]
#[allow(missing_docs)]
pub struct Segment {
    pub id: String,
    pub rank: usize,
    pub score: f64,
    pub channels: Vec<ChannelRank>,
    pub snapshot_id: i64,
    pub chunk_id: i64,
    pub unit_ids: Vec<i64>,
    pub source: SourceRef,
    pub revision: RevisionRef,
    pub locator: Locator,
    pub text: String,
    pub token_count: usize,
    pub citation: String,
    /// How the graph channel reached this segment from a top candidate (seed first); empty
    /// unless the graph channel ranked it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub found_via: Vec<crate::graph::expand::Hop>,
    #[serde(flatten)]
    pub safety: Safety,
}

/// A citation a person or agent can follow.
#[derive(Debug, Clone, Serialize)]
#[allow(missing_docs)]
pub struct Citation {
    pub segment_id: String,
    pub label: String,
    pub uri: String,
    pub path: String,
    pub revision_id: i64,
    pub sha256: String,
    pub line_start: i64,
    pub line_end: i64,
    pub byte_start: i64,
    pub byte_end: i64,
}

/// What the query saw and kept.
#[derive(Debug, Clone, Serialize, Default)]
#[allow(missing_docs)]
pub struct Coverage {
    pub eligible_sources: i64,
    pub channels: Vec<ChannelCoverage>,
    pub fused_candidates: usize,
    pub returned: usize,
    pub dropped_by_source_limit: usize,
    pub dropped_by_budget: usize,
    pub dropped_as_duplicate: usize,
}

/// One channel's contribution.
#[derive(Debug, Clone, Serialize)]
#[allow(missing_docs)]
pub struct ChannelCoverage {
    pub channel: &'static str,
    pub weight: f64,
    pub candidates: usize,
}

/// The scope actually applied.
#[derive(Debug, Clone, Serialize)]
#[allow(missing_docs)]
pub struct AppliedScope {
    pub snapshot_id: Option<i64>,
    pub collections: Vec<String>,
    pub kinds: Vec<String>,
    pub channels: Vec<String>,
    pub limit: usize,
    pub max_per_source: usize,
}

/// How the output budget was applied.
#[derive(Debug, Clone, Serialize)]
#[allow(missing_docs)]
pub struct BudgetContract {
    pub budget_tokens: usize,
    pub used_tokens: usize,
    pub tokenizer: &'static str,
    /// What the budget counts.
    pub measure: &'static str,
    pub truncated: bool,
}

/// The versioned query result.
#[derive(Debug, Clone, Serialize)]
#[allow(missing_docs)]
pub struct QueryResult {
    pub version: u32,
    pub run_id: String,
    pub snapshot_id: Option<i64>,
    pub query: String,
    pub applied_scope: AppliedScope,
    pub segments: Vec<Segment>,
    pub citations: Vec<Citation>,
    pub coverage: Coverage,
    pub warnings: Vec<String>,
    pub budget_contract: BudgetContract,
    /// Time per stage, in order.
    pub trace: Vec<TraceStage>,
    pub duration_ms: f64,
}

/// One stage of the query path and its duration.
#[derive(Debug, Clone, Serialize)]
#[allow(missing_docs)]
pub struct TraceStage {
    pub stage: &'static str,
    pub ms: f64,
}

const KNOWN_CHANNELS: [&str; 3] = ["exact", "lexical", "graph"];

/// The rendered form the budget counts: the citation line, the heading path and the text, as the
/// Markdown and agent formats print them. The text's count was taken at indexing time (the sum of
/// its units' counts, which BPE makes additive up to a token at each unit boundary).
#[must_use]
pub fn rendered_tokens(citation: &str, heading_path: &[String], text_tokens: usize) -> usize {
    tokenize::count(citation) + tokenize::count(&heading_path.join(" > ")) + text_tokens + 4
}

fn run_id() -> String {
    use sha2::Digest;
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let digest = sha2::Sha256::digest(format!("{nanos}:{}:{n}", std::process::id()));
    format!("qr_{}", &hex::encode(digest)[..20])
}

impl Workspace {
    /// Runs one query through every channel of the profile and records it in `query_runs`.
    ///
    /// # Errors
    /// `E_INVALID_ARGUMENT` for a bad request, `E_NOT_FOUND` for an unknown snapshot or collection.
    #[allow(clippy::too_many_lines)] // The query path reads top to bottom, as DESIGN §8 lists it.
    pub fn search(&self, request: &QueryRequest) -> Result<QueryResult> {
        let started = Instant::now();
        let pack = self.pack();
        let limit = request.limit.unwrap_or(pack.output.limit);
        if limit == 0 || limit > 1000 {
            return Err(Error::InvalidArgument(format!(
                "limit must be between 1 and 1000, got {limit}"
            )));
        }
        let budget = request.budget_tokens.unwrap_or(pack.output.budget_tokens);
        let max_per_source = request.max_per_source.unwrap_or(pack.output.max_per_source);
        let channels: Vec<String> = match &request.channels {
            Some(list) => {
                if let Some(bad) = list.iter().find(|c| !KNOWN_CHANNELS.contains(&c.as_str())) {
                    return Err(Error::InvalidArgument(format!(
                        "unknown channel {bad:?}; expected exact, lexical or graph"
                    )));
                }
                list.clone()
            }
            None => self.config().profiles[&self.config().default_profile]
                .channels
                .clone(),
        };
        // Kinds are matched by their stored names (`code` and `code_file` name the same kind).
        let mut kinds = Vec::with_capacity(request.kinds.len());
        for kind in &request.kinds {
            let Some(parsed) = crate::parse::KindOverride::from_name(kind) else {
                return Err(Error::InvalidArgument(format!("unknown kind {kind:?}")));
            };
            kinds.push(parsed.as_str().to_string());
        }
        let filter = Filter {
            collections: request.collections.clone(),
            kinds,
        };
        let mut warnings = Vec::new();

        let mut segments: Vec<Segment> = Vec::new();
        let mut used = 0;
        let mut truncated = false;
        let mut trace: Vec<TraceStage> = Vec::new();
        let mut lap = started;
        let mut mark = |stage: &'static str| {
            trace.push(TraceStage {
                stage,
                ms: lap.elapsed().as_secs_f64() * 1000.0,
            });
            lap = Instant::now();
        };
        let (snapshot_id, mut coverage) = self.with_reader(|conn| {
            for name in &request.collections {
                Workspace::collection_id(conn, name, false)?;
            }
            let snapshot_id = match request.snapshot_id {
                Some(id) => Some(id),
                None => self.cached_current(conn)?,
            };
            let Some(snapshot_id) = snapshot_id else {
                return Ok((None, Coverage::default()));
            };
            let mut coverage = Coverage {
                eligible_sources: if filter.collections.is_empty() && filter.kinds.is_empty() {
                    self.snapshot_meta(conn, snapshot_id)?.members
                } else {
                    hydrate::eligible_sources(conn, snapshot_id, &filter)?
                },
                ..Coverage::default()
            };
            mark("eligibility");
            // Each channel contributes three candidates per requested segment (at least 30): beyond that,
            // RRF contributions (1/(60+rank)) barely move the top of the list.
            let candidate_k = (limit * 3).max(30);
            // Each channel yields (chunk_id, owner_id) pairs, best first.
            let mut per_channel: Vec<ChannelHits> = Vec::new();
            if channels.iter().any(|c| c == "exact") {
                let ids = exact::query_identifiers(&request.query, self.patterns());
                per_channel.push((
                    "exact",
                    pack.fusion.weights.exact,
                    exact::search(conn, snapshot_id, &ids, &filter, candidate_k)?,
                ));
                mark("exact");
            }
            if channels.iter().any(|c| c == "lexical") {
                let generation = self.snapshot_meta(conn, snapshot_id)?.generation;
                let hits =
                    self.lexical(&generation)?
                        .search(&request.query, &filter, candidate_k)?;
                let as_i64 = |v: u64| i64::try_from(v).unwrap_or_default();
                per_channel.push((
                    "lexical",
                    pack.fusion.weights.lexical,
                    hits.into_iter()
                        .map(|(c, o)| (as_i64(c), as_i64(o)))
                        .collect(),
                ));
                mark("lexical");
            }
            // The graph channel expands from the best candidates of the channels above, so it runs
            // on their preliminary fusion.
            let mut found_via: HashMap<i64, Vec<crate::graph::expand::Hop>> = HashMap::new();
            if channels.iter().any(|c| c == "graph") {
                let seeds: Vec<(i64, i64)> = fuse(&per_channel, pack.fusion.k)
                    .iter()
                    .take(pack.graph.seeds)
                    .map(|(f, chunk)| (*chunk, f.owner))
                    .collect();
                let reached =
                    crate::graph::expand::expand(conn, snapshot_id, &seeds, &filter, &pack.graph)?;
                let hits = reached
                    .into_iter()
                    .map(|r| {
                        found_via.insert(r.owner_id, r.via);
                        (r.chunk_id, r.owner_id)
                    })
                    .collect();
                per_channel.push(("graph", pack.fusion.weights.graph, hits));
                mark("graph");
            }
            for (channel, weight, hits) in &per_channel {
                coverage.channels.push(ChannelCoverage {
                    channel,
                    weight: *weight,
                    candidates: hits.len(),
                });
            }
            let mut candidates = fuse(&per_channel, pack.fusion.k);
            // A code pack may rank test files lower: asked where something is done, the answer is
            // mostly the implementation, while tests repeat its names in many small windows.
            let test_weight = pack.fusion.test_weight;
            if test_weight < 1.0 && !candidates.is_empty() {
                let ids: Vec<i64> = candidates.iter().map(|(_, c)| *c).collect();
                let tests = hydrate::test_chunks(conn, &ids)?;
                for (fused, chunk) in &mut candidates {
                    if tests.contains(chunk) {
                        fused.score *= test_weight;
                    }
                }
                candidates.sort_by(|a, b| b.0.score.total_cmp(&a.0.score));
            }
            coverage.fused_candidates = candidates.len();
            mark("fusion");

            let mut per_source: HashMap<i64, usize> = HashMap::new();
            let mut spans: HashSet<(i64, i64, i64)> = HashSet::new();
            // Hydrate a page of winners; per-source limits and duplicates may ask for the next page.
            let page = limit;
            'pages: for batch in candidates.chunks(page) {
                let rows =
                    hydrate::chunks(conn, &batch.iter().map(|(_, id)| *id).collect::<Vec<_>>())?;
                mark("hydrate");
                for (fused, chunk_id) in batch {
                    if segments.len() >= limit {
                        break 'pages;
                    }
                    let Some(row) = rows.get(chunk_id) else {
                        continue;
                    };
                    if !spans.insert((row.revision_id, row.byte_start, row.byte_end)) {
                        coverage.dropped_as_duplicate += 1;
                        continue;
                    }
                    let count = per_source.entry(row.source_id).or_default();
                    if max_per_source > 0 && *count >= max_per_source {
                        coverage.dropped_by_source_limit += 1;
                        continue;
                    }
                    let citation = format!("{}:{}-{}", row.rel_path, row.line_start, row.line_end);
                    let cost = row.render_tokens;
                    if used + cost > budget {
                        truncated = true;
                        coverage.dropped_by_budget += 1;
                        continue;
                    }
                    used += cost;
                    *count += 1;
                    let mut segment =
                        to_segment(row, fused, snapshot_id, segments.len() + 1, citation);
                    if fused.ranks.iter().any(|(c, _)| *c == "graph")
                        && let Some(via) = found_via.get(&fused.owner)
                    {
                        segment.found_via.clone_from(via);
                    }
                    segments.push(segment);
                }
            }
            mark("segments");
            Ok((Some(snapshot_id), coverage))
        })?;
        if snapshot_id.is_none() {
            warnings
                .push("no published snapshot yet: add sources with `tychora add PATH`".to_string());
        }
        if truncated {
            warnings.push(format!(
                "{} segment(s) left out to stay within the {budget}-token budget",
                coverage.dropped_by_budget
            ));
        }
        coverage.returned = segments.len();
        let citations = segments
            .iter()
            .enumerate()
            .map(|(i, s)| Citation {
                segment_id: s.id.clone(),
                label: format!("[{}]", i + 1),
                uri: s.source.uri.clone(),
                path: s.source.path.clone(),
                revision_id: s.revision.revision_id,
                sha256: s.revision.sha256.clone(),
                line_start: s.locator.line_start,
                line_end: s.locator.line_end,
                byte_start: s.locator.byte_start,
                byte_end: s.locator.byte_end,
            })
            .collect();
        let result = QueryResult {
            version: RESULT_VERSION,
            run_id: run_id(),
            snapshot_id,
            query: request.query.clone(),
            applied_scope: AppliedScope {
                snapshot_id,
                collections: request.collections.clone(),
                kinds: request.kinds.clone(),
                channels,
                limit,
                max_per_source,
            },
            segments,
            citations,
            coverage,
            warnings,
            budget_contract: BudgetContract {
                budget_tokens: budget,
                used_tokens: used,
                tokenizer: tokenize::TOKENIZER,
                measure: "citation line + heading path + segment text, as rendered by the md and agent formats",
                truncated,
            },
            trace,
            duration_ms: started.elapsed().as_secs_f64() * 1000.0,
        };
        self.record_run(request, &result);
        Ok(result)
    }

    fn record_run(&self, request: &QueryRequest, result: &QueryResult) {
        let summary = serde_json::json!({
            "returned": result.segments.len(),
            "segments": result.segments.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(),
            "warnings": result.warnings,
        });
        self.query_log().record(log::QueryRun {
            id: result.run_id.clone(),
            snapshot_id: result.snapshot_id,
            request_json: serde_json::to_string(request).unwrap_or_else(|_| "{}".into()),
            summary_json: summary.to_string(),
            agent_id: request.agent_id.clone(),
            task_id: request.task_id.clone(),
            duration_ms: result.duration_ms,
            created_at: now_ms(),
        });
    }
}

/// Weighted RRF over the channels' owners, each owner with the chunk standing for it: the first
/// seen with the channels in order, so the exact channel (run first) wins, since it pinpoints the
/// unit carrying the identifier.
fn fuse(per_channel: &[ChannelHits], k: f64) -> Vec<(fusion::Fused<i64>, i64)> {
    let mut representative: HashMap<i64, i64> = HashMap::new();
    let lists: Vec<ChannelList<i64>> = per_channel
        .iter()
        .map(|(channel, weight, hits)| {
            for &(chunk, owner) in hits {
                representative.entry(owner).or_insert(chunk);
            }
            ChannelList {
                channel,
                weight: *weight,
                owners: hits.iter().map(|&(_, owner)| owner).collect(),
            }
        })
        .collect();
    fusion::rrf(&lists, k)
        .into_iter()
        .filter_map(|f| representative.get(&f.owner).map(|&chunk| (f, chunk)))
        .collect()
}

fn to_segment(
    row: &ChunkRow,
    fused: &fusion::Fused<i64>,
    snapshot_id: i64,
    rank: usize,
    citation: String,
) -> Segment {
    Segment {
        id: format!("seg_{}_{}", snapshot_id, row.chunk_id),
        rank,
        score: fused.score,
        channels: fused
            .ranks
            .iter()
            .map(|&(channel, rank)| ChannelRank { channel, rank })
            .collect(),
        snapshot_id,
        chunk_id: row.chunk_id,
        unit_ids: (row.first_unit_id..=row.last_unit_id).collect(),
        source: SourceRef {
            source_id: row.source_id,
            uri: row.uri.clone(),
            path: row.rel_path.clone(),
            collection: row.collection.clone(),
            kind: row.kind.clone(),
        },
        revision: RevisionRef {
            revision_id: row.revision_id,
            seq: row.seq,
            sha256: row.sha256.clone(),
            commit: row.commit.clone(),
        },
        locator: Locator {
            byte_start: row.byte_start,
            byte_end: row.byte_end,
            line_start: row.line_start,
            line_end: row.line_end,
            col_start: row.col_start,
            col_end: row.col_end,
            heading_path: row.heading_path.clone(),
            json_pointer: row.json_pointer.clone(),
            anchor: row.anchor.clone(),
        },
        safety: safety::triple(row.has_code, row.may_contain_instructions),
        token_count: row.token_count,
        text: row.text.clone(),
        citation,
        found_via: Vec::new(),
    }
}
