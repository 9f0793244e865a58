//! The query path, stage by stage (DESIGN §8): plan the request → pin a snapshot → eligibility →
//! channels (exact, lexical, then graph from their preliminary fusion) → weighted RRF with the
//! pack's test-file weight → hydrate winners, drop duplicates, apply the per-source limit and the
//! token budget → the versioned result, recorded in `query_runs` off the query path.

use std::collections::{HashMap, HashSet};
use std::time::Instant;

use rusqlite::Connection;

use super::hydrate::{self, ChunkRow};
use super::{
    AppliedScope, BudgetContract, ChannelCoverage, ChannelRank, Citation, Coverage, Locator,
    QueryRequest, QueryResult, RESULT_VERSION, RevisionRef, Segment, SourceRef, TraceStage,
};
use crate::config::Pack;
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::exact;
use crate::fusion::{self, ChannelList};
use crate::graph::expand::Hop;
use crate::lexical::Filter;
use crate::safety;
use crate::store::now_ms;
use crate::tokenize;

/// One channel's name, weight and `(chunk_id, owner_id)` hits, best first.
type ChannelHits = (&'static str, f64, Vec<(i64, i64)>);

/// How the graph channel reached each owner it ranked, by owner id.
type FoundVia = HashMap<i64, Vec<Hop>>;

/// Fused candidates: each owner's fused score and the chunk standing for it, best first.
type Candidates = Vec<(fusion::Fused<i64>, i64)>;

const KNOWN_CHANNELS: [&str; 3] = ["exact", "lexical", "graph"];

/// What a request asks for, checked and completed with the pack's defaults.
struct Plan {
    limit: usize,
    budget: usize,
    max_per_source: usize,
    channels: Vec<String>,
    filter: Filter,
}

/// The segments kept and what the selection dropped.
#[derive(Default)]
struct Selection {
    segments: Vec<Segment>,
    used_tokens: usize,
    truncated: bool,
    coverage: Coverage,
}

/// Time per stage, each measured from the end of the previous one.
struct Trace {
    lap: Instant,
    stages: Vec<TraceStage>,
}

impl Trace {
    fn new(started: Instant) -> Self {
        Self {
            lap: started,
            stages: Vec::new(),
        }
    }

    fn mark(&mut self, stage: &'static str) {
        self.stages.push(TraceStage {
            stage,
            ms: self.lap.elapsed().as_secs_f64() * 1000.0,
        });
        self.lap = Instant::now();
    }
}

/// Runs one query through the profile's channels (or the request's) and records it.
///
/// # Errors
/// `E_INVALID_ARGUMENT` for a bad request, `E_NOT_FOUND` for an unknown snapshot or collection.
pub(crate) fn run(engine: &Engine, request: &QueryRequest) -> Result<QueryResult> {
    let started = Instant::now();
    let plan = plan(engine, request)?;
    let mut trace = Trace::new(started);
    let (snapshot_id, selection) = engine.with_reader(|conn| {
        for name in &request.collections {
            Engine::collection_id(conn, name, false)?;
        }
        let snapshot_id = match request.snapshot_id {
            Some(id) => Some(id),
            None => engine.cached_current(conn)?,
        };
        let Some(snapshot_id) = snapshot_id else {
            return Ok((None, Selection::default()));
        };
        let coverage = Coverage {
            eligible_sources: eligible_sources(engine, conn, snapshot_id, &plan.filter)?,
            ..Coverage::default()
        };
        trace.mark("eligibility");
        let (hits, found_via) = channels(engine, conn, request, &plan, snapshot_id, &mut trace)?;
        let candidates = fuse_with_test_weight(conn, engine.pack(), &hits)?;
        trace.mark("fusion");
        let mut selection = Selection {
            coverage,
            ..Selection::default()
        };
        for (channel, weight, hits) in &hits {
            selection.coverage.channels.push(ChannelCoverage {
                channel,
                weight: *weight,
                candidates: hits.len(),
            });
        }
        selection.coverage.fused_candidates = candidates.len();
        select(
            conn,
            &plan,
            snapshot_id,
            &candidates,
            &found_via,
            &mut selection,
            &mut trace,
        )?;
        trace.mark("segments");
        Ok((Some(snapshot_id), selection))
    })?;
    let result = assemble(request, plan, snapshot_id, selection, trace, started);
    record_run(engine, request, &result);
    Ok(result)
}

/// The request checked and completed with the pack's defaults.
fn plan(engine: &Engine, request: &QueryRequest) -> Result<Plan> {
    let pack = engine.pack();
    let limit = request.limit.unwrap_or(pack.output.limit);
    if limit == 0 || limit > 1000 {
        return Err(Error::InvalidArgument(format!(
            "limit must be between 1 and 1000, got {limit}"
        )));
    }
    let channels: Vec<String> = match &request.channels {
        Some(list) => {
            if let Some(bad) = list.iter().find(|c| !KNOWN_CHANNELS.contains(&c.as_str())) {
                return Err(Error::InvalidArgument(format!(
                    "unknown channel {bad:?}; expected exact, lexical or graph"
                )));
            }
            list.clone()
        }
        None => engine.config().profiles[&engine.config().default_profile]
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
    Ok(Plan {
        limit,
        budget: request.budget_tokens.unwrap_or(pack.output.budget_tokens),
        max_per_source: request.max_per_source.unwrap_or(pack.output.max_per_source),
        channels,
        filter: Filter {
            collections: request.collections.clone(),
            kinds,
        },
    })
}

/// Sources the filter leaves eligible (the snapshot's member count when there is no filter).
fn eligible_sources(
    engine: &Engine,
    conn: &Connection,
    snapshot_id: i64,
    filter: &Filter,
) -> Result<i64> {
    if filter.collections.is_empty() && filter.kinds.is_empty() {
        Ok(engine.snapshot_meta(conn, snapshot_id)?.members)
    } else {
        hydrate::eligible_sources(conn, snapshot_id, filter)
    }
}

/// Runs the planned channels. Each contributes three candidates per requested segment (at least
/// 30): beyond that, RRF contributions (1/(60+rank)) barely move the top of the list. The graph
/// channel expands from the best candidates of the others, so it runs on their preliminary fusion;
/// it also says, per owner, how it was reached.
fn channels(
    engine: &Engine,
    conn: &Connection,
    request: &QueryRequest,
    plan: &Plan,
    snapshot_id: i64,
    trace: &mut Trace,
) -> Result<(Vec<ChannelHits>, FoundVia)> {
    let pack = engine.pack();
    let wants = |name: &str| plan.channels.iter().any(|c| c == name);
    let candidate_k = (plan.limit * 3).max(30);
    let mut hits: Vec<ChannelHits> = Vec::new();
    if wants("exact") {
        let ids = exact::query_identifiers(&request.query, engine.patterns());
        let found = exact::search(conn, snapshot_id, &ids, &plan.filter, candidate_k)?;
        hits.push(("exact", pack.fusion.weights.exact, found));
        trace.mark("exact");
    }
    if wants("lexical") {
        let generation = engine.snapshot_meta(conn, snapshot_id)?.generation;
        let found =
            engine
                .lexical(&generation)?
                .search(&request.query, &plan.filter, candidate_k)?;
        let as_i64 = |v: u64| i64::try_from(v).unwrap_or_default();
        hits.push((
            "lexical",
            pack.fusion.weights.lexical,
            found
                .into_iter()
                .map(|(c, o)| (as_i64(c), as_i64(o)))
                .collect(),
        ));
        trace.mark("lexical");
    }
    let mut found_via: FoundVia = HashMap::new();
    if wants("graph") {
        let seeds: Vec<(i64, i64)> = fuse(&hits, pack.fusion.k)
            .iter()
            .take(pack.graph.seeds)
            .map(|(f, chunk)| (*chunk, f.owner))
            .collect();
        let reached =
            crate::graph::expand::expand(conn, snapshot_id, &seeds, &plan.filter, &pack.graph)?;
        let graph = reached
            .into_iter()
            .map(|r| {
                found_via.insert(r.owner_id, r.via);
                (r.chunk_id, r.owner_id)
            })
            .collect();
        hits.push(("graph", pack.fusion.weights.graph, graph));
        trace.mark("graph");
    }
    Ok((hits, found_via))
}

/// Weighted RRF, then the pack's weight for test files: asked where something is done, the
/// answer is mostly the implementation, while tests repeat its names in many small windows.
fn fuse_with_test_weight(
    conn: &Connection,
    pack: &Pack,
    hits: &[ChannelHits],
) -> Result<Candidates> {
    let mut candidates = fuse(hits, pack.fusion.k);
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
    Ok(candidates)
}

/// Hydrates winners a page at a time and keeps segments until the limit: duplicates of a span
/// already kept, sources over their limit and segments over the token budget are counted, not
/// kept (the next page fills in for them).
fn select(
    conn: &Connection,
    plan: &Plan,
    snapshot_id: i64,
    candidates: &Candidates,
    found_via: &FoundVia,
    out: &mut Selection,
    trace: &mut Trace,
) -> Result<()> {
    let mut per_source: HashMap<i64, usize> = HashMap::new();
    let mut spans: HashSet<(i64, i64, i64)> = HashSet::new();
    for batch in candidates.chunks(plan.limit) {
        // A full page needs no further hydration (each page is one SQL query with its rows' text).
        if out.segments.len() >= plan.limit {
            break;
        }
        let rows = hydrate::chunks(conn, &batch.iter().map(|(_, id)| *id).collect::<Vec<_>>())?;
        trace.mark("hydrate");
        for (fused, chunk_id) in batch {
            if out.segments.len() >= plan.limit {
                return Ok(());
            }
            let Some(row) = rows.get(chunk_id) else {
                continue;
            };
            if !spans.insert((row.revision_id, row.byte_start, row.byte_end)) {
                out.coverage.dropped_as_duplicate += 1;
                continue;
            }
            let count = per_source.entry(row.source_id).or_default();
            if plan.max_per_source > 0 && *count >= plan.max_per_source {
                out.coverage.dropped_by_source_limit += 1;
                continue;
            }
            let cost = row.render_tokens;
            if out.used_tokens + cost > plan.budget {
                out.truncated = true;
                out.coverage.dropped_by_budget += 1;
                continue;
            }
            out.used_tokens += cost;
            *count += 1;
            let citation = format!("{}:{}-{}", row.rel_path, row.line_start, row.line_end);
            let mut segment = to_segment(row, fused, snapshot_id, out.segments.len() + 1, citation);
            if fused.ranks.iter().any(|(c, _)| *c == "graph")
                && let Some(via) = found_via.get(&fused.owner)
            {
                segment.found_via.clone_from(via);
            }
            out.segments.push(segment);
        }
    }
    Ok(())
}

/// The versioned result: segments with their citations, what was applied and dropped, the trace.
fn assemble(
    request: &QueryRequest,
    plan: Plan,
    snapshot_id: Option<i64>,
    selection: Selection,
    trace: Trace,
    started: Instant,
) -> QueryResult {
    let Selection {
        segments,
        used_tokens,
        truncated,
        mut coverage,
    } = selection;
    let mut warnings = Vec::new();
    if snapshot_id.is_none() {
        warnings.push("no published snapshot yet: add sources with `tychora add PATH`".to_string());
    }
    if truncated {
        warnings.push(format!(
            "{} segment(s) left out to stay within the {}-token budget",
            coverage.dropped_by_budget, plan.budget
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
    QueryResult {
        version: RESULT_VERSION,
        run_id: run_id(),
        snapshot_id,
        query: request.query.clone(),
        applied_scope: AppliedScope {
            snapshot_id,
            collections: request.collections.clone(),
            kinds: request.kinds.clone(),
            channels: plan.channels,
            limit: plan.limit,
            max_per_source: plan.max_per_source,
        },
        segments,
        citations,
        coverage,
        warnings,
        budget_contract: BudgetContract {
            budget_tokens: plan.budget,
            used_tokens,
            tokenizer: tokenize::TOKENIZER,
            measure: "citation line + heading path + segment text, as rendered by the md and agent formats",
            truncated,
        },
        trace: trace.stages,
        duration_ms: started.elapsed().as_secs_f64() * 1000.0,
    }
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

/// Hands the run to the query log, which writes it off the query path.
fn record_run(engine: &Engine, request: &QueryRequest, result: &QueryResult) {
    let summary = serde_json::json!({
        "returned": result.segments.len(),
        "segments": result.segments.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(),
        "warnings": result.warnings,
    });
    engine
        .query_log()
        .record(crate::store::query_log::QueryRun {
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
