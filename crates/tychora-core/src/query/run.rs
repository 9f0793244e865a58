//! The query path, stage by stage (DESIGN §8): plan the request → pin a snapshot → eligibility →
//! channels (exact, lexical, text, then graph from their preliminary fusion) → weighted RRF with
//! the pack's test-file weight → rerank the top (when configured) → hydrate winners, drop
//! duplicates, apply the per-source limit and the token budget → the versioned result, recorded in
//! `query_runs` off the query path.

use std::collections::{HashMap, HashSet};
use std::time::Instant;

use crate::job::JobState;

use super::{
    AppliedScope, BudgetContract, ChannelCoverage, ChannelRank, Citation, Coverage, Locator,
    ProviderCall, QueryRequest, QueryResult, RESULT_VERSION, RevisionRef, Segment, SourceRef,
    TraceStage,
};
use crate::clock::now_ms;
use crate::config::Pack;
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::exact;
use crate::fusion::{self, ChannelList};
use crate::graph::expand::Hop;
use crate::lexical::Filter;
use crate::safety;
use crate::store::hydrate::{self, ChunkRow};
use crate::store::tx::Tx;
use crate::tokenize;

/// One channel's ranked hits.
struct ChannelHits {
    channel: &'static str,
    weight: f64,
    /// `(chunk_id, owner_id)`, best first.
    hits: Vec<(i64, i64)>,
    /// The channel's own score per hit, when it has one.
    scores: Vec<Option<f64>>,
}

impl ChannelHits {
    fn unscored(channel: &'static str, weight: f64, hits: Vec<(i64, i64)>) -> Self {
        let scores = vec![None; hits.len()];
        Self {
            channel,
            weight,
            hits,
            scores,
        }
    }

    /// Only the hits whose window `admitted` says yes to.
    fn keep(self, admitted: &dyn Fn(i64) -> bool) -> Self {
        let (hits, scores) = self
            .hits
            .into_iter()
            .zip(self.scores)
            .filter(|((chunk, _), _)| admitted(*chunk))
            .unzip();
        Self {
            hits,
            scores,
            ..self
        }
    }

    /// The score of an owner's best hit.
    fn score_of(&self, owner: i64) -> Option<f64> {
        self.hits
            .iter()
            .position(|&(_, o)| o == owner)
            .and_then(|i| self.scores[i])
    }
}

/// How the graph channel reached each owner it ranked, by owner id.
type FoundVia = HashMap<i64, Vec<Hop>>;

/// Fused candidates: each owner's fused score and the chunk standing for it, best first.
type Candidates = Vec<(fusion::Fused<i64>, i64)>;

const KNOWN_CHANNELS: [&str; 6] = ["exact", "lexical", "text", "visual", "graph", "summary"];

/// Nodes of the summary tree the summary channel ranked (top first), with the windows each
/// brought, and the tree they come from.
type SummaryFound = Option<(
    std::sync::Arc<crate::summary::tree::LoadedTree>,
    Vec<crate::summary::tree::NodeHit>,
)>;

/// Nodes the summary channel takes, and windows each brings: chosen on the dev half of the
/// multi-passage set (bench/results/raptor.md) against 4 nodes and 6 windows.
const SUMMARY_NODES: usize = 8;
const SUMMARY_WINDOWS: usize = 3;

/// What a request asks for, checked and completed with the pack's defaults.
#[derive(Clone)]
struct Plan {
    limit: usize,
    budget: usize,
    max_per_source: usize,
    channels: Vec<String>,
    filter: Filter,
    explain: bool,
    rerank: bool,
    /// The pack's lane order (the mode's lanes first), for the formatted output's groups.
    lanes: Vec<String>,
    /// Lanes the mode requires evidence from.
    required_lanes: Vec<String>,
    /// What the mode says a decision made from the answer must do.
    decision_requirements: Vec<String>,
}

/// The segments kept and what the selection dropped.
#[derive(Default)]
struct Selection {
    segments: Vec<Segment>,
    used_tokens: usize,
    truncated: bool,
    coverage: Coverage,
    warnings: Vec<String>,
    reranked_by: Option<String>,
    relations: Vec<super::ResultRelation>,
    checks: Vec<super::Check>,
    coverage_gaps: Vec<super::CoverageGap>,
    summaries: Vec<super::ResultSummary>,
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
        self.mark_with(stage, None, None);
    }

    fn mark_with(
        &mut self,
        stage: &'static str,
        candidates: Option<usize>,
        provider: Option<ProviderCall>,
    ) {
        self.stages.push(TraceStage {
            stage,
            ms: self.lap.elapsed().as_secs_f64() * 1000.0,
            candidates,
            provider,
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
    let (snapshot_id, selection) =
        engine.with_reader(|conn| answer(engine, conn, request, &plan, &mut trace))?;
    let result = assemble(request, plan, snapshot_id, selection, trace, started);
    record_run(engine, request, &result);
    Ok(result)
}

/// The query path inside one read transaction: pin the snapshot, resolve what is eligible, run
/// the channels, fuse (and rerank), select the segments, then what is said about them.
fn answer(
    engine: &Engine,
    conn: &dyn Tx,
    request: &QueryRequest,
    plan: &Plan,
    trace: &mut Trace,
) -> Result<(Option<i64>, Selection)> {
    for name in &request.collections {
        Engine::collection_id(conn, name, false)?;
    }
    let sensitivity = sensitivity_scope(engine, conn, request.max_sensitivity.as_deref())?;
    let Some(snapshot_id) = request
        .snapshot_id
        .map_or_else(|| engine.cached_current(conn), |id| Ok(Some(id)))?
    else {
        let selection = Selection {
            warnings: vec![nothing_published(conn)?],
            ..Selection::default()
        };
        return Ok((None, selection));
    };
    let plan = &*with_windows(conn, plan, sensitivity, snapshot_id)?;
    let mut selection = Selection {
        coverage: Coverage {
            eligible_sources: eligible_sources(engine, conn, snapshot_id, &plan.filter)?,
            ..Coverage::default()
        },
        ..Selection::default()
    };
    trace.mark("eligibility");
    let (hits, found_via, summary) = channels(
        engine,
        conn,
        request,
        plan,
        snapshot_id,
        trace,
        &mut selection.warnings,
    )?;
    let mut candidates = fuse_with_test_weight(conn, engine.pack(), &hits)?;
    trace.mark("fusion");
    let mut rerank_scores = HashMap::new();
    if plan.rerank
        && let Some(reranker) = engine.reranker()
    {
        let depth = engine
            .config()
            .rerank
            .as_ref()
            .and_then(|r| r.depth)
            .unwrap_or(engine.pack().text.rerank_depth);
        let reranked = rerank(
            conn,
            reranker.as_ref(),
            &request.query,
            &mut candidates,
            depth,
        )?;
        rerank_scores = reranked.scores;
        selection.reranked_by = Some(reranker.name());
        trace.mark_with(
            "rerank",
            Some(depth.min(candidates.len())),
            Some(reranked.call),
        );
    }
    let shares = fusion::blend_shares(&channel_lists(&hits));
    selection.coverage.channels = hits
        .iter()
        .map(|channel| ChannelCoverage {
            channel: channel.channel,
            weight: channel.weight,
            blend: shares
                .iter()
                .find(|(c, _)| *c == channel.channel)
                .map(|(_, share)| *share),
            candidates: channel.hits.len(),
        })
        .collect();
    selection.coverage.fused_candidates = candidates.len();
    let annotations = Annotations {
        found_via: &found_via,
        explain: plan.explain,
        hits: &hits,
        rerank: &rerank_scores,
        kinds: &engine.pack().kinds,
    };
    select(
        conn,
        plan,
        snapshot_id,
        &candidates,
        &annotations,
        &mut selection,
        trace,
    )?;
    trace.mark("segments");
    selection.summaries = summaries(
        summary.as_ref(),
        &selection.segments,
        plan.budget,
        &mut selection.used_tokens,
    );
    said_about(engine, conn, request, plan, snapshot_id, &mut selection)?;
    trace.mark("checks");
    Ok((Some(snapshot_id), selection))
}

/// The plan with its facet conditions and sensitivity scope resolved, once, against the pinned
/// snapshot to the windows they admit: every channel keeps to them (lexical and text inside their
/// search). The plan as it is when there is nothing to resolve.
fn with_windows<'p>(
    conn: &dyn Tx,
    plan: &'p Plan,
    sensitivity: Option<crate::lexical::SensitivityScope>,
    snapshot_id: i64,
) -> Result<std::borrow::Cow<'p, Plan>> {
    if sensitivity.is_none() && !plan.filter.needs_windows() {
        return Ok(std::borrow::Cow::Borrowed(plan));
    }
    let mut resolved = plan.clone();
    resolved.filter.sensitivity = sensitivity;
    let admitted = hydrate::eligible_chunks(conn, snapshot_id, &resolved.filter)?;
    resolved.filter.chunks = Some(std::sync::Arc::new(admitted));
    Ok(std::borrow::Cow::Owned(resolved))
}

/// What is said about the selected segments: relations that name them, the checks those imply,
/// and the coverage gaps of the request.
fn said_about(
    engine: &Engine,
    conn: &dyn Tx,
    request: &QueryRequest,
    plan: &Plan,
    snapshot_id: i64,
    selection: &mut Selection,
) -> Result<()> {
    // What the segments are by key only matters for the relations about them: a corpus without
    // assertions skips the lookups (one per source and per segment).
    let keys = if hydrate::any_relations(conn)? {
        hydrate::segment_keys(
            conn,
            snapshot_id,
            &selection
                .segments
                .iter()
                .map(|s| (s.source.source_id, s.chunk_id))
                .collect::<Vec<_>>(),
        )?
    } else {
        std::collections::BTreeSet::new()
    };
    selection.relations = hydrate::relations_about(conn, &keys)?
        .into_iter()
        .map(|a| super::ResultRelation {
            id: a.id,
            relation: a.relation,
            from_key: a.from_key,
            to_key: a.to_key,
            method: a.method,
            support: a.support,
        })
        .collect();
    selection.checks = checks(&selection.segments, &selection.relations, &keys);
    selection.coverage_gaps = gaps(
        engine,
        conn,
        request,
        plan,
        snapshot_id,
        &selection.segments,
    )?;
    Ok(())
}

/// The request checked and completed with the pack's defaults.
fn plan(engine: &Engine, request: &QueryRequest) -> Result<Plan> {
    let pack = engine.pack();
    allowed_overrides(pack, request)?;
    let limit = request.limit.unwrap_or(pack.output.limit);
    if limit == 0 || limit > 1000 {
        return Err(Error::InvalidArgument(format!(
            "limit must be between 1 and 1000, got {limit}"
        )));
    }
    let channels = planned_channels(engine, request)?;
    let (mode, kinds, lanes) = scope(pack, request)?;
    Ok(Plan {
        lanes,
        required_lanes: mode.map(|m| m.required_lanes.clone()).unwrap_or_default(),
        decision_requirements: mode
            .map(|m| m.decision_requirements.clone())
            .unwrap_or_default(),
        limit,
        budget: request.budget_tokens.unwrap_or(pack.output.budget_tokens),
        max_per_source: request.max_per_source.unwrap_or(pack.output.max_per_source),
        channels,
        filter: Filter {
            collections: request.collections.clone(),
            kinds,
            facets: request
                .facets
                .iter()
                .map(|raw| crate::facet::Condition::parse(&pack.kinds, raw))
                .collect::<Result<_>>()?,
            chunks: None,
            verified: engine.config().profiles[&engine.config().default_profile].verified,
            sensitivity: None,
        },
        explain: request.explain,
        rerank: request.rerank.unwrap_or(true),
    })
}

/// The last layer of resolution: only what the pack lets a request change.
fn allowed_overrides(pack: &crate::config::Pack, request: &QueryRequest) -> Result<()> {
    for (field, set) in [
        ("output.limit", request.limit.is_some()),
        ("output.budget_tokens", request.budget_tokens.is_some()),
        ("output.max_per_source", request.max_per_source.is_some()),
        ("rerank", request.rerank.is_some()),
    ] {
        if set && !pack.request_overrides.iter().any(|f| f == field) {
            return Err(Error::InvalidArgument(format!(
                "pack {:?} does not let a request override {field} (request_overrides: {:?})",
                pack.name, pack.request_overrides
            )));
        }
    }
    Ok(())
}

/// The channels a query runs: the request's (each one the workspace can run), else the
/// profile's with what the config switches on; `graph` when asked for.
fn planned_channels(engine: &Engine, request: &QueryRequest) -> Result<Vec<String>> {
    let channels: Vec<String> = match &request.channels {
        Some(list) => {
            if let Some(bad) = list.iter().find(|c| !KNOWN_CHANNELS.contains(&c.as_str())) {
                return Err(Error::InvalidArgument(format!(
                    "unknown channel {bad:?}; expected exact, lexical, text, visual, graph or summary"
                )));
            }
            if list.iter().any(|c| c == "visual") && engine.config().visual.is_none() {
                return Err(Error::InvalidArgument(
                    "the visual channel needs a [visual] section in workspace.toml".into(),
                ));
            }
            if list.iter().any(|c| c == "text") && engine.config().embeddings.is_none() {
                return Err(Error::InvalidArgument(
                    "the text channel needs an [embeddings] section in workspace.toml (for example `tychora init --embeddings local`)".into(),
                ));
            }
            if list.iter().any(|c| c == "summary") && engine.config().embeddings.is_none() {
                return Err(Error::InvalidArgument(
                    "the summary channel needs an [embeddings] section in workspace.toml and a tree built by `tychora index build --raptor`".into(),
                ));
            }
            list.clone()
        }
        None => {
            let mut channels = engine.config().profiles[&engine.config().default_profile]
                .channels
                .clone();
            // `[visual]` is the switch: a workspace that configures the channel runs it.
            if engine.config().visual.is_some() && !channels.iter().any(|c| c == "visual") {
                channels.push("visual".into());
            }
            // The summary channel runs on every query only when `[summaries] channel = true`: it
            // helps broad questions and costs single-passage ones.
            if engine
                .config()
                .summaries
                .as_ref()
                .is_some_and(|s| s.channel)
                && !channels.iter().any(|c| c == "summary")
            {
                channels.push("summary".into());
            }
            channels
        }
    };
    let mut channels = channels;
    if request.graph && !channels.iter().any(|c| c == "graph") {
        channels.push("graph".into());
    }
    Ok(channels)
}

/// The kinds a query draws on and the order of lanes: the request's kinds (a kind of the pack,
/// or a format), narrowed to its mode's lanes, which come first.
fn scope<'p>(
    pack: &'p crate::config::Pack,
    request: &QueryRequest,
) -> Result<(
    Option<&'p crate::config::ModeDefinition>,
    Vec<String>,
    Vec<String>,
)> {
    // A source is matched by its kind, or by its format when it was assigned no kind (`code`
    // and `code_file` name the same format).
    let mut kinds = Vec::with_capacity(request.kinds.len());
    for kind in &request.kinds {
        if pack.kinds.contains_key(kind) {
            kinds.push(kind.clone());
        } else if let Some(format) = crate::parse::FormatOverride::from_name(kind) {
            kinds.push(format.as_str().to_string());
        } else {
            return Err(Error::InvalidArgument(format!(
                "unknown kind {kind:?}: neither a kind of pack {:?} nor a format",
                pack.name
            )));
        }
    }
    // A mode draws on the kinds of its lanes (a kind filter of the request narrows further) and
    // puts its lanes first.
    let mode = match &request.mode {
        None => None,
        Some(name) => Some(pack.modes.get(name).ok_or_else(|| {
            Error::InvalidArgument(format!(
                "unknown mode {name:?}: pack {:?} defines {}",
                pack.name,
                if pack.modes.is_empty() {
                    "none".to_string()
                } else {
                    pack.modes.keys().cloned().collect::<Vec<_>>().join(", ")
                }
            ))
        })?),
    };
    let mut lanes = pack.lanes.clone();
    if let Some(mode) = mode {
        let drawn: Vec<String> = pack
            .kinds
            .iter()
            .filter(|(_, k)| mode.lanes.contains(&k.lane))
            .map(|(name, _)| name.clone())
            .collect();
        kinds = if kinds.is_empty() {
            drawn
        } else {
            kinds.into_iter().filter(|k| drawn.contains(k)).collect()
        };
        if kinds.is_empty() {
            // Every kind the request named is outside the mode: nothing is eligible, and the
            // coverage says so (an empty filter would admit everything).
            kinds.push(String::new());
        }
        lanes = mode.lanes.clone();
        lanes.extend(
            pack.lanes
                .iter()
                .filter(|l| !mode.lanes.contains(l))
                .cloned(),
        );
    }
    Ok((mode, kinds, lanes))
}

/// The sensitivity levels a query may see, when some source is labelled with one it may not:
/// a `max_sensitivity` below the ceiling, or labels above the ceiling (lowered since those
/// sources were captured; the next sync takes them out). `None` when nothing would be hidden, so
/// a query that hides nothing resolves no windows. Each hidden level is one lookup on the
/// label index.
fn sensitivity_scope(
    engine: &Engine,
    conn: &dyn Tx,
    max: Option<&str>,
) -> Result<Option<crate::lexical::SensitivityScope>> {
    let config = &engine.config().sensitivity;
    let levels = config.visible_up_to(max)?;
    let hidden: Vec<&String> = config
        .levels
        .iter()
        .filter(|l| !levels.contains(l))
        .collect();
    let mut any_hidden = hidden.contains(&&config.default);
    for level in &hidden {
        if any_hidden {
            break;
        }
        any_hidden = crate::store::sources::any_labelled(conn, level)?;
    }
    Ok(any_hidden.then(|| crate::lexical::SensitivityScope {
        levels,
        unlabelled: config.default.clone(),
    }))
}

/// Sources the filter leaves eligible (the snapshot's member count when there is no filter).
fn eligible_sources(
    engine: &Engine,
    conn: &dyn Tx,
    snapshot_id: i64,
    filter: &Filter,
) -> Result<i64> {
    if filter.is_open() {
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
    conn: &dyn Tx,
    request: &QueryRequest,
    plan: &Plan,
    snapshot_id: i64,
    trace: &mut Trace,
    warnings: &mut Vec<String>,
) -> Result<(Vec<ChannelHits>, FoundVia, SummaryFound)> {
    let pack = engine.pack();
    let wants = |name: &str| plan.channels.iter().any(|c| c == name);
    let candidate_k = (plan.limit * 3).max(30);
    // Facet conditions, as the windows they admit: the SQL channels select by source, and a
    // record's facet admits only the windows holding the record.
    let chunks = plan.filter.chunks.as_deref();
    let admitted =
        |chunk: i64| chunks.is_none_or(|c| u64::try_from(chunk).is_ok_and(|id| c.contains(&id)));
    let mut hits: Vec<ChannelHits> = Vec::new();
    if wants("exact") {
        let lists = exact_lists(engine, conn, request, plan, snapshot_id, candidate_k)?;
        let n = lists.last().map_or(0, |l| l.hits.len());
        hits.extend(lists);
        trace.mark_with("exact", Some(n), None);
    }
    if wants("lexical") {
        let list = lexical_list(
            engine,
            conn,
            request,
            plan,
            snapshot_id,
            candidate_k,
            warnings,
        )?;
        let n = list.hits.len();
        hits.push(list);
        trace.mark_with("lexical", Some(n), None);
    }
    let summary = dense_channels(
        engine,
        conn,
        request,
        plan,
        snapshot_id,
        candidate_k,
        (wants("text"), wants("summary")),
        &mut hits,
        trace,
        warnings,
    )?;
    if wants("visual") {
        let ran = visual_channel(engine, conn, request, plan, snapshot_id, candidate_k)?
            .map(|(channel, call)| (channel.keep(&admitted), call));
        add_provider_channel("visual", ran, &mut hits, trace, warnings);
    }
    let mut found_via: FoundVia = HashMap::new();
    if wants("graph") {
        let (graph, via) = graph_list(conn, pack, plan, snapshot_id, &hits, &admitted)?;
        let n = graph.hits.len();
        hits.push(graph);
        found_via = via;
        trace.mark_with("graph", Some(n), None);
    }
    Ok((hits, found_via, summary))
}

/// The channels over the query's embedding: the text channel (as far as the model reads the
/// query's script, `crate::scripts`; a query it cannot read is answered without it, and says so)
/// and the summary channel, which share one embedding call. Returns what the summary channel found.
#[allow(clippy::too_many_arguments)] // The channel stage's state, passed as `channels` holds it.
fn dense_channels(
    engine: &Engine,
    conn: &dyn Tx,
    request: &QueryRequest,
    plan: &Plan,
    snapshot_id: i64,
    candidate_k: usize,
    (wants_text, wants_summary): (bool, bool),
    hits: &mut Vec<ChannelHits>,
    trace: &mut Trace,
    warnings: &mut Vec<String>,
) -> Result<SummaryFound> {
    let pack = engine.pack();
    let chunks = plan.filter.chunks.as_deref();
    let read = text_share(engine, &request.query);
    let text = wants_text && read >= crate::scripts::MIN_SHARE;
    if wants_text && !text {
        warnings.push(
            "the embedding model does not read this query's script ([embeddings] scripts): answered without the text channel".into(),
        );
    }
    let dense = if text || wants_summary {
        Some(dense_query(engine, conn, request, snapshot_id)?)
    } else {
        None
    };
    if text && let Some(dense) = &dense {
        let depth = pack.text.depth.max(candidate_k);
        let ran = match dense {
            Ok(d) => Ok((
                text_channel(engine, plan, d, depth, chunks, read)?,
                d.call.clone(),
            )),
            Err(warning) => Err(warning.clone()),
        };
        add_provider_channel("text", ran, hits, trace, warnings);
    }
    let mut summary: SummaryFound = None;
    if wants_summary && let Some(dense) = &dense {
        match dense {
            Ok(d) => match summary_channel(engine, conn, plan, d, chunks)? {
                Ok((channel, found)) => {
                    let n = channel.hits.len();
                    hits.push(channel);
                    // The query's embedding is the text channel's call when both ran.
                    trace.mark_with("summary", Some(n), (!wants_text).then(|| d.call.clone()));
                    summary = found;
                }
                Err(warning) => {
                    warnings.push(warning);
                    trace.mark_with("summary", Some(0), None);
                }
            },
            Err(warning) => {
                if !wants_text {
                    warnings.push(warning.clone());
                }
                trace.mark_with("summary", Some(0), None);
            }
        }
    }
    Ok(summary)
}

/// The graph channel: bounded expansion over resolved calls and inheritance from the best
/// candidates of the other channels (their preliminary fusion), with each owner's path.
fn graph_list(
    conn: &dyn Tx,
    pack: &crate::config::Pack,
    plan: &Plan,
    snapshot_id: i64,
    hits: &[ChannelHits],
    admitted: &dyn Fn(i64) -> bool,
) -> Result<(ChannelHits, FoundVia)> {
    let seeds: Vec<(i64, i64)> = fuse(hits, pack.fusion.k)
        .iter()
        .take(pack.graph.seeds)
        .map(|(f, chunk)| (*chunk, f.owner))
        .collect();
    let reached =
        crate::graph::expand::expand(conn, snapshot_id, &seeds, &plan.filter, &pack.graph)?;
    let mut found_via: FoundVia = HashMap::new();
    let graph: Vec<(i64, i64)> = reached
        .into_iter()
        // The expansion follows relations by collection and kind; facet conditions cut here,
        // before fusion ranks anything.
        .filter(|r| admitted(r.chunk_id))
        .map(|r| {
            found_via.insert(r.owner_id, r.via);
            (r.chunk_id, r.owner_id)
        })
        .collect();
    Ok((
        ChannelHits::unscored("graph", pack.fusion.weights.graph, graph),
        found_via,
    ))
}

/// The exact channel's lists: what the text names besides identifier patterns (paths,
/// stack-trace frames, code in backticks, dotted names) at the lexical channel's weight, when it
/// names any, then the identifiers the patterns find at the exact weight (last).
fn exact_lists(
    engine: &Engine,
    conn: &dyn Tx,
    request: &QueryRequest,
    plan: &Plan,
    snapshot_id: i64,
    candidate_k: usize,
) -> Result<Vec<ChannelHits>> {
    let pack = engine.pack();
    let chunks = plan.filter.chunks.as_deref();
    let admitted =
        |chunk: i64| chunks.is_none_or(|c| u64::try_from(chunk).is_ok_and(|id| c.contains(&id)));
    let ids = exact::query_identifiers(&request.query, engine.patterns());
    let mut found =
        match scoped_to_documents(engine, conn, request, plan, snapshot_id, &ids, candidate_k)? {
            Some(found) => found,
            None => exact::search(conn, snapshot_id, &ids, &plan.filter, candidate_k)?,
        };
    let mut lists = Vec::new();
    // A name in an issue text is evidence, not an identifier the question asks for: at the exact
    // weight it outranked every lexical hit (issue-text dev set, 60 issues).
    let named = exact::mentions::find(&request.query);
    if !named.is_empty() {
        let mut mentioned =
            exact::mentions::search(conn, snapshot_id, &named, &plan.filter, candidate_k)?;
        mentioned.retain(|&(chunk, owner)| admitted(chunk) && !found.iter().any(|f| f.1 == owner));
        if !mentioned.is_empty() {
            lists.push(ChannelHits::unscored(
                "exact",
                pack.fusion.weights.lexical,
                mentioned,
            ));
        }
    }
    found.retain(|&(chunk, _)| admitted(chunk));
    lists.push(ChannelHits::unscored(
        "exact",
        pack.fusion.weights.exact,
        found,
    ));
    Ok(lists)
}

/// The lexical channel: BM25 over the pinned snapshot's generation, inside the filter. Queries are
/// analysed with the pack's analyzer; an index built with another one answers badly and
/// silently, so that is said.
fn lexical_list(
    engine: &Engine,
    conn: &dyn Tx,
    request: &QueryRequest,
    plan: &Plan,
    snapshot_id: i64,
    candidate_k: usize,
    warnings: &mut Vec<String>,
) -> Result<ChannelHits> {
    let pack = engine.pack();
    if crate::snapshot::lexical_analyzer_matches(conn, &pack.lexical)? == Some(false) {
        warnings.push(
            "the lexical index was built with another analyzer than the pack's: run `tychora manage rebuild`".into(),
        );
    }
    let generation = engine.snapshot_meta(conn, snapshot_id)?.generation;
    let found = engine
        .lexical(&generation)?
        .search(&request.query, &plan.filter, candidate_k)?;
    let as_i64 = |v: u64| i64::try_from(v).unwrap_or_default();
    Ok(ChannelHits {
        channel: "lexical",
        weight: pack.fusion.weights.lexical,
        hits: found
            .iter()
            .map(|&(c, o, _)| (as_i64(c), as_i64(o)))
            .collect(),
        scores: found.iter().map(|&(_, _, s)| Some(f64::from(s))).collect(),
    })
}

/// A query that names a whole document and asks something of it (`Entity Tags in RFC 2616`) is
/// answered, in the exact channel, from inside that document: BM25 over the rest of the query,
/// kept to the document's windows. Its title block and the passages elsewhere that cite it are
/// not the answer. `None` when the query names no document of the snapshot, or nothing else.
#[allow(clippy::too_many_arguments)]
fn scoped_to_documents(
    engine: &Engine,
    conn: &dyn Tx,
    request: &QueryRequest,
    plan: &Plan,
    snapshot_id: i64,
    ids: &[String],
    limit: usize,
) -> Result<Option<Vec<(i64, i64)>>> {
    let Some(rest) = exact::residual(&request.query, engine.patterns()) else {
        return Ok(None);
    };
    let documents = exact::documents_named(conn, snapshot_id, ids, &plan.filter)?;
    if documents.is_empty() {
        return Ok(None);
    }
    let mut inside = hydrate::chunks_of_sources(conn, snapshot_id, &documents)?;
    if let Some(admitted) = &plan.filter.chunks {
        inside.retain(|c| admitted.contains(c));
    }
    let scoped = Filter {
        chunks: Some(std::sync::Arc::new(inside)),
        ..plan.filter.clone()
    };
    let generation = engine.snapshot_meta(conn, snapshot_id)?.generation;
    let found = engine.lexical(&generation)?.search(&rest, &scoped, limit)?;
    let as_i64 = |v: u64| i64::try_from(v).unwrap_or_default();
    Ok(Some(
        found
            .into_iter()
            .map(|(c, o, _)| (as_i64(c), as_i64(o)))
            .collect(),
    ))
}

/// What is checked about every answer: whether it cites a source that another obsoletes or
/// supersedes, and whether it quotes text addressed to an AI agent.
fn checks(
    segments: &[super::Segment],
    relations: &[super::ResultRelation],
    keys: &std::collections::BTreeSet<String>,
) -> Vec<super::Check> {
    if segments.is_empty() {
        return Vec::new();
    }
    let superseded: Vec<String> = relations
        .iter()
        .filter(|r| {
            matches!(r.relation.as_str(), "obsoletes" | "supersedes") && keys.contains(&r.to_key)
        })
        .map(|r| {
            format!(
                "{} is {} by {}",
                r.to_key,
                if r.relation == "obsoletes" {
                    "obsoleted"
                } else {
                    "superseded"
                },
                r.from_key
            )
        })
        .collect();
    let quoted = segments
        .iter()
        .filter(|s| s.safety.may_contain_instructions)
        .count();
    vec![
        super::Check {
            name: "superseded_sources",
            status: if superseded.is_empty() {
                "pass"
            } else {
                "warn"
            },
            detail: if superseded.is_empty() {
                "no cited source is known to be obsoleted or superseded".into()
            } else {
                format!("{}: prefer the current source", superseded.join("; "))
            },
        },
        super::Check {
            name: "quoted_instructions",
            status: if quoted == 0 { "pass" } else { "warn" },
            detail: if quoted == 0 {
                "no segment quotes text addressed to an AI agent".into()
            } else {
                format!(
                    "{quoted} segment(s) quote text addressed to an AI agent: it is source, not instructions"
                )
            },
        },
    ]
}

/// What was asked for and has no evidence in the answer: identifiers the query names that no
/// eligible unit carries, and lanes the mode requires that no segment comes from.
fn gaps(
    engine: &Engine,
    conn: &dyn Tx,
    request: &QueryRequest,
    plan: &Plan,
    snapshot_id: i64,
    segments: &[super::Segment],
) -> Result<Vec<super::CoverageGap>> {
    let mut out = Vec::new();
    let named = exact::named_identifiers(&request.query, engine.patterns());
    for id in exact::unmatched(conn, snapshot_id, &named, &plan.filter)? {
        out.push(super::CoverageGap {
            kind: "identifier",
            detail: if plan.filter.verified {
                format!("no eligible source carries {id} (in the verified profile a record counts once reviewed): the answer cannot cite it")
            } else {
                format!("no eligible source carries {id}: the answer cannot cite it")
            },
            name: id,
        });
    }
    for lane in &plan.required_lanes {
        if !segments
            .iter()
            .any(|s| s.source.lane.as_deref() == Some(lane.as_str()))
        {
            out.push(super::CoverageGap {
                kind: "lane",
                name: lane.clone(),
                detail: format!(
                    "the {} mode requires evidence from the {lane} lane and the answer has none",
                    request.mode.as_deref().unwrap_or_default()
                ),
            });
        }
    }
    Ok(out)
}

/// A channel that calls a provider ran (its hits and the call go in), or could not run here
/// (its warning goes in and the trace says it found nothing).
fn add_provider_channel(
    name: &'static str,
    ran: std::result::Result<(ChannelHits, ProviderCall), String>,
    hits: &mut Vec<ChannelHits>,
    trace: &mut Trace,
    warnings: &mut Vec<String>,
) {
    match ran {
        Ok((channel, call)) => {
            let n = channel.hits.len();
            hits.push(channel);
            trace.mark_with(name, Some(n), Some(call));
        }
        Err(warning) => {
            warnings.push(warning);
            trace.mark_with(name, Some(0), None);
        }
    }
}

/// The query embedded for the dense channels (text, summary), with the pinned snapshot's vector
/// generation.
struct Dense {
    vector: Vec<f32>,
    call: ProviderCall,
    index: std::sync::Arc<dyn crate::vector::VectorSearch>,
    spec: crate::vector::FamilySpec,
}

/// Embeds the query once for the text and summary channels. A snapshot without vectors, or with
/// vectors of another family than the configured one, is answered without them and a warning
/// (`Err` of the inner result).
fn dense_query(
    engine: &Engine,
    conn: &dyn Tx,
    request: &QueryRequest,
    snapshot_id: i64,
) -> Result<std::result::Result<Dense, String>> {
    let Some(embedder) = engine.embedder()? else {
        return Ok(Err(
            "the text channel is not configured ([embeddings])".into()
        ));
    };
    let Some(generation) = engine.snapshot_meta(conn, snapshot_id)?.text else {
        return Ok(Err(format!(
            "snapshot {snapshot_id} has no vectors (it was published before [embeddings] was set): run `tychora manage rebuild`; answered without the text channel"
        )));
    };
    if generation.spec != *embedder.spec() {
        return Ok(Err(format!(
            "snapshot {snapshot_id}'s vectors are from {}, the workspace now embeds with {}: run `tychora manage rebuild`; answered without the text channel",
            generation.spec,
            embedder.spec()
        )));
    }
    let started = Instant::now();
    let embedded = embedder.embed(&[request.query.as_str()], crate::vector::InputKind::Query)?;
    let vector = embedded.vectors.into_iter().next().ok_or_else(|| {
        Error::Provider(format!(
            "{} returned no query vector",
            embedder.spec().provider
        ))
    })?;
    let call = ProviderCall {
        provider: embedder.spec().provider.clone(),
        model: embedder.spec().model.clone(),
        tokens: embedded.tokens.first().copied().unwrap_or(0),
        ms: started.elapsed().as_secs_f64() * 1000.0,
    };
    let index = match engine.vector_index(&generation) {
        Ok(index) => index,
        Err(e) if e.code() == crate::ErrorCode::Corrupt => {
            return Ok(Err(format!("{e}; answered without the text channel")));
        }
        Err(e) => return Err(e),
    };
    Ok(Ok(Dense {
        vector,
        call,
        index,
        spec: generation.spec,
    }))
}

/// The share of `query`'s letters the configured embedding model reads (1 without a restriction).
fn text_share(engine: &Engine, query: &str) -> f64 {
    // The config was validated on open, so the names parse; a failure here reads everything.
    match engine
        .config()
        .embeddings
        .as_ref()
        .map(crate::config::Embeddings::reads)
    {
        Some(Ok(Some(scripts))) => crate::scripts::share(query, &scripts),
        _ => 1.0,
    }
}

/// The text channel: the snapshot's vector generation searched with the eligibility filter inside
/// the search, one vote per evidence owner (its nearest window). Its fusion weight is the pack's
/// times `read`, the share of the query the model reads.
fn text_channel(
    engine: &Engine,
    plan: &Plan,
    dense: &Dense,
    depth: usize,
    chunks: Option<&HashSet<u64>>,
    read: f64,
) -> Result<ChannelHits> {
    let eligible = crate::vector::Eligible {
        collections: &plan.filter.collections,
        kinds: &plan.filter.kinds,
        chunks,
    };
    let found = dense.index.search(&dense.vector, depth, &eligible)?;
    let as_i64 = |v: u64| i64::try_from(v).unwrap_or_default();
    let mut hits = Vec::with_capacity(found.len());
    let mut scores = Vec::with_capacity(found.len());
    for (key, owner, distance) in found {
        hits.push((as_i64(key), as_i64(owner)));
        // Cosine distance back to similarity, the figure a reader expects.
        scores.push(Some(1.0 - f64::from(distance)));
    }
    Ok(ChannelHits {
        channel: "text",
        weight: engine.pack().fusion.weights.text * read,
        hits,
        scores,
    })
}

/// The summary channel: the newest summary tree's nodes scored by the similarity of the query to
/// the windows under them (their centroid); each of the best brings its children's best windows
/// that the pinned snapshot holds and the eligibility admits, in node order (its score is the
/// node's). Without a tree, or with one of
/// another family, the answer carries a warning (`Err` of the inner result).
fn summary_channel(
    engine: &Engine,
    conn: &dyn Tx,
    plan: &Plan,
    dense: &Dense,
    chunks: Option<&HashSet<u64>>,
) -> Result<std::result::Result<(ChannelHits, SummaryFound), String>> {
    let Some(tree) = crate::summary::tree::newest(engine, conn)? else {
        return Ok(Err(
            "no summary tree is built: run `tychora index build --raptor`; answered without the summary channel".into(),
        ));
    };
    if tree.spec != dense.spec {
        return Ok(Err(format!(
            "the summary tree was built with {}, the snapshot's vectors are {}: run `tychora index build --raptor`; answered without the summary channel",
            tree.spec, dense.spec
        )));
    }
    let eligible = crate::vector::Eligible {
        collections: &plan.filter.collections,
        kinds: &plan.filter.kinds,
        chunks,
    };
    let found = tree.search(
        &dense.vector,
        &*dense.index,
        &eligible,
        SUMMARY_NODES,
        SUMMARY_WINDOWS,
    )?;
    let as_i64 = |v: u64| i64::try_from(v).unwrap_or_default();
    let mut seen = HashSet::new();
    let mut hits = Vec::new();
    let mut scores = Vec::new();
    let brought: Vec<u64> = found
        .iter()
        .flat_map(|h| h.windows.iter().map(|w| w.0))
        .collect();
    let owners = dense.index.owners_of(&brought)?;
    for hit in &found {
        for &(chunk, _) in &hit.windows {
            if seen.insert(chunk) {
                let owner = owners.get(&chunk).copied().unwrap_or(chunk);
                hits.push((as_i64(chunk), as_i64(owner)));
                scores.push(Some(f64::from(hit.score)));
            }
        }
    }
    Ok(Ok((
        ChannelHits {
            channel: "summary",
            weight: engine.pack().fusion.weights.summary,
            hits,
            scores,
        },
        Some((tree, found)),
    )))
}

/// The visual channel: the query's words embedded by the multimodal model, the snapshot's eligible
/// pictures scanned for the nearest, each voting for the window that holds the unit naming it.
/// Without an embedder, or with pictures that have no vector of the family, the answer carries a
/// warning (`Err` of the inner result) instead of silently missing them.
fn visual_channel(
    engine: &Engine,
    conn: &dyn Tx,
    request: &QueryRequest,
    plan: &Plan,
    snapshot_id: i64,
    depth: usize,
) -> Result<std::result::Result<(ChannelHits, ProviderCall), String>> {
    let Some(embedder) = engine.visual() else {
        return Ok(Err(
            "the visual channel ([visual]) has no multimodal embedder here (the TypeScript package provides it); answered without it".into(),
        ));
    };
    let spec = embedder.spec();
    let (pictures, missing) = super::visual::coverage(conn, spec, snapshot_id)?;
    if pictures > 0 && missing == pictures {
        return Ok(Err(format!(
            "none of snapshot {snapshot_id}'s {pictures} pictures has a vector of {spec}: run `tychora manage rebuild`; answered without the visual channel"
        )));
    }
    let started = Instant::now();
    let embedded = embedder.embed_query(&request.query)?;
    let query =
        embedded.vectors.into_iter().next().ok_or_else(|| {
            Error::Provider(format!("{} returned no query vector", spec.provider))
        })?;
    let call = ProviderCall {
        provider: spec.provider.clone(),
        model: spec.model.clone(),
        tokens: embedded.tokens.first().copied().unwrap_or(0),
        ms: started.elapsed().as_secs_f64() * 1000.0,
    };
    let found = super::visual::search(conn, spec, snapshot_id, &plan.filter, &query, depth)?;
    Ok(Ok((
        ChannelHits {
            channel: "visual",
            weight: engine.pack().fusion.weights.visual,
            hits: found.iter().map(|h| (h.chunk_id, h.owner_id)).collect(),
            scores: found.iter().map(|h| Some(h.similarity)).collect(),
        },
        call,
    )))
}

/// Reorders the top `depth` candidates by the reranker's relevance; the rest keep their fused
/// order after them. Returns the rerank score per chunk and the provider call.
fn rerank(
    conn: &dyn Tx,
    reranker: &dyn crate::vector::Reranker,
    query: &str,
    candidates: &mut Candidates,
    depth: usize,
) -> Result<Reranked> {
    let started = Instant::now();
    let depth = depth.min(candidates.len());
    let ids: Vec<i64> = candidates[..depth].iter().map(|(_, c)| *c).collect();
    let rows = hydrate::chunks(conn, &ids)?;
    let texts: Vec<&str> = ids
        .iter()
        .map(|id| rows.get(id).map_or("", |r| r.text.as_str()))
        .collect();
    let reranked = reranker.rerank(query, &texts)?;
    if reranked.scores.len() != texts.len() {
        return Err(Error::Provider(format!(
            "{} returned {} scores for {} documents",
            reranker.name(),
            reranked.scores.len(),
            texts.len()
        )));
    }
    let scores: HashMap<i64, f64> = ids
        .iter()
        .copied()
        .zip(reranked.scores.iter().copied())
        .collect();
    candidates[..depth].sort_by(|a, b| scores[&b.1].total_cmp(&scores[&a.1]).then(a.1.cmp(&b.1)));
    let name = reranker.name();
    let (provider, model) = name.split_once('/').unwrap_or(("", name.as_str()));
    Ok(Reranked {
        scores,
        call: ProviderCall {
            provider: provider.to_string(),
            model: model.to_string(),
            tokens: reranked.tokens,
            ms: started.elapsed().as_secs_f64() * 1000.0,
        },
    })
}

/// What reranking the top candidates gave: each one's score, and the provider call.
struct Reranked {
    scores: HashMap<i64, f64>,
    call: ProviderCall,
}

/// The pack's lanes, with approved knowledge first and rejected approaches last when the answer
/// holds any.
fn with_trust_lanes(mut lanes: Vec<String>, segments: &[Segment]) -> Vec<String> {
    use crate::trust::Trust;
    let holds = |trust: Trust| segments.iter().any(|s| s.trust_level == trust);
    if let Some(lane) = Trust::Approved.lane().filter(|_| holds(Trust::Approved)) {
        lanes.insert(0, lane.to_string());
    }
    if let Some(lane) = Trust::RejectedApproach
        .lane()
        .filter(|_| holds(Trust::RejectedApproach))
    {
        lanes.push(lane.to_string());
    }
    lanes
}

/// What a segment is annotated with besides its row: how the graph reached it, and (with
/// `explain`) the channels' own scores; the rerank scores.
struct Annotations<'a> {
    found_via: &'a FoundVia,
    explain: bool,
    hits: &'a [ChannelHits],
    rerank: &'a HashMap<i64, f64>,
    /// The pack's kinds: a segment's lane is its source's kind's.
    kinds: &'a std::collections::BTreeMap<String, crate::config::KindDefinition>,
}

/// Weighted RRF, then the pack's weight for test files: asked where something is done, the
/// answer is mostly the implementation, while tests repeat its names in many small windows.
fn fuse_with_test_weight(conn: &dyn Tx, pack: &Pack, hits: &[ChannelHits]) -> Result<Candidates> {
    let mut candidates = fuse(hits, pack.fusion.k);
    let test_weight = pack.fusion.test_weight;
    if test_weight < 1.0 && !candidates.is_empty() {
        let ids: Vec<i64> = candidates.iter().map(|(_, c)| *c).collect();
        let tests: std::collections::HashSet<i64> = hydrate::code_paths(conn, &ids)?
            .into_iter()
            .filter(|(_, path)| super::test_paths::is_test_path(path))
            .map(|(id, _)| id)
            .collect();
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
    conn: &dyn Tx,
    plan: &Plan,
    snapshot_id: i64,
    candidates: &Candidates,
    annotations: &Annotations<'_>,
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
            let citation = match &row.document {
                Some((first, last)) => crate::parse::document::citation(&row.rel_path, first, last),
                None => format!("{}:{}-{}", row.rel_path, row.line_start, row.line_end),
            };
            let mut segment = to_segment(row, fused, snapshot_id, out.segments.len() + 1, citation);
            // Approved knowledge and rejected approaches are lanes of their own, whatever their
            // kind: an agent reads what a person approved apart from what was only captured.
            segment.source.lane = match row.trust.lane() {
                Some(lane) => Some(lane.to_string()),
                None => row
                    .kind
                    .as_ref()
                    .and_then(|k| annotations.kinds.get(k))
                    .map(|d| d.lane.clone()),
            };
            segment.rerank_score = annotations.rerank.get(chunk_id).copied();
            if annotations.explain {
                for rank in &mut segment.channels {
                    rank.score = annotations
                        .hits
                        .iter()
                        .find(|h| h.channel == rank.channel)
                        .and_then(|h| h.score_of(fused.owner));
                }
            }
            if fused.ranks.iter().any(|(c, _)| *c == "graph")
                && let Some(via) = annotations.found_via.get(&fused.owner)
            {
                segment.found_via.clone_from(via);
            }
            out.segments.push(segment);
        }
    }
    Ok(())
}

/// Context summaries (the nodes above a segment's window) a result carries at most.
const CONTEXT_SUMMARIES: usize = 3;

/// The summaries a result carries: each node the summary channel ranked whose windows became
/// segments (`hit`), then the document-level node above a segment's window (`context`, the parent
/// a child hit brings), while the rendered-token budget has room. Derived text, never a segment.
fn summaries(
    found: Option<&(
        std::sync::Arc<crate::summary::tree::LoadedTree>,
        Vec<crate::summary::tree::NodeHit>,
    )>,
    segments: &[Segment],
    budget: usize,
    used_tokens: &mut usize,
) -> Vec<super::ResultSummary> {
    let Some((tree, hits)) = found else {
        return Vec::new();
    };
    let chunk = |s: &Segment| u64::try_from(s.chunk_id).unwrap_or_default();
    let mut out: Vec<super::ResultSummary> = Vec::new();
    let mut taken = HashSet::new();
    let mut push = |node: usize,
                    role: &'static str,
                    score: Option<f32>,
                    ids: Vec<String>,
                    out: &mut Vec<super::ResultSummary>| {
        let n = &tree.nodes[node];
        // Rendered like a segment: a label line, then the text.
        let tokens = tokenize::count(&n.text) + 12;
        // A node over the same segments as one already shown (its ancestor or descendant on the
        // same path) adds nothing an agent can use.
        let repeats = out
            .iter()
            .any(|m| ids.iter().all(|id| m.segment_ids.contains(id)));
        if ids.is_empty() || repeats || *used_tokens + tokens > budget || !taken.insert(node) {
            return;
        }
        *used_tokens += tokens;
        out.push(super::ResultSummary {
            node_id: n.id,
            level: n.level,
            scope: n.scope.clone(),
            role,
            score: score.map(f64::from),
            text: n.text.clone(),
            summarizer: n.summarizer.clone(),
            model: n.model.clone(),
            leaf_count: n.leaf_count,
            segment_ids: ids,
            token_count: tokens,
            built_from_snapshot_id: tree.snapshot_id,
            may_contain_instructions: safety::may_contain_instructions(&n.text),
        });
    };
    for hit in hits {
        let ids: Vec<String> = segments
            .iter()
            .filter(|s| tree.holds(hit.node, chunk(s)))
            .map(|s| s.id.clone())
            .collect();
        push(hit.node, "hit", Some(hit.score), ids, &mut out);
    }
    let mut contexts = 0;
    for segment in segments {
        if contexts == CONTEXT_SUMMARIES {
            break;
        }
        let Some(node) = tree.holder_of(chunk(segment)) else {
            continue;
        };
        if tree.nodes[node].scope != "document" {
            continue;
        }
        let before = out.len();
        let ids: Vec<String> = segments
            .iter()
            .filter(|s| tree.holder_of(chunk(s)) == Some(node))
            .map(|s| s.id.clone())
            .collect();
        push(node, "context", None, ids, &mut out);
        contexts += out.len() - before;
    }
    out
}

/// Why nothing is published: nothing captured yet, or sources captured by a job that has not
/// published a snapshot (still running, or failed: its id and error), so a failed first add is
/// not mistaken for an empty workspace.
fn nothing_published(conn: &dyn Tx) -> Result<String> {
    let sources = crate::store::sources::count(conn)?;
    if sources == 0 {
        return Ok("no published snapshot yet: add sources with `tychora add PATH`".to_string());
    }
    let last = crate::store::jobs::latest(conn)?;
    let captured = format!("{sources} source(s) captured but no snapshot published yet");
    Ok(match last {
        Some((id, status, _)) if matches!(status, JobState::Queued | JobState::Running) => {
            format!(
                "{captured}: job {id} is {status}; its snapshot is searchable once it publishes"
            )
        }
        Some((id, status, error)) => format!(
            "{captured}: job {id} {status}{}; fix the cause and run the same `tychora add` again (`tychora inspect job:{id}`)",
            error.map(|e| format!(" ({e})")).unwrap_or_default()
        ),
        None => format!("{captured}; run `tychora add` again to publish one"),
    })
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
        warnings: channel_warnings,
        reranked_by,
        relations,
        checks,
        coverage_gaps,
        summaries,
    } = selection;
    let mut warnings = channel_warnings;
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
            facets: request.facets.clone(),
            mode: request.mode.clone(),
            channels: plan.channels,
            limit: plan.limit,
            max_per_source: plan.max_per_source,
            rerank: reranked_by,
        },
        lanes: with_trust_lanes(plan.lanes, &segments),
        segments,
        summaries,
        relations,
        checks,
        coverage_gaps,
        decision_requirements: plan.decision_requirements,
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
    // What `inspect run` shows and `search --replay` diffs against: the scope applied, every
    // result with its citation, per-channel candidates and the stage timings.
    let summary = serde_json::json!({
        "returned": result.segments.len(),
        "segments": result.segments.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(),
        "citations": result.segments.iter().map(|s| s.citation.as_str()).collect::<Vec<_>>(),
        "applied_scope": result.applied_scope,
        "coverage": result.coverage,
        "trace": result.trace,
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

/// The channels whose scores blend before ranks fuse (crate::fusion): both score the same windows'
/// content, BM25 and cosine, on scales a min-max normalisation makes comparable. The exact
/// channel's lists (matches, not degrees), the graph's hops and the summary and visual channels
/// (other spans than the windows) fuse by rank.
const BLENDED: [&str; 2] = ["lexical", "text"];

/// Weighted RRF over the channels' owners, each owner with the chunk standing for it: the first
/// seen with the channels in order, so the exact channel (run first) wins, since it pinpoints the
/// unit carrying the identifier.
fn fuse(per_channel: &[ChannelHits], k: f64) -> Vec<(fusion::Fused<i64>, i64)> {
    let mut representative: HashMap<i64, i64> = HashMap::new();
    for c in per_channel {
        for &(chunk, owner) in &c.hits {
            representative.entry(owner).or_insert(chunk);
        }
    }
    fusion::rrf(&channel_lists(per_channel), k)
        .into_iter()
        .filter_map(|f| representative.get(&f.owner).map(|&chunk| (f, chunk)))
        .collect()
}

/// The channels' hits as fusion's lists (owners; scores for the channels that blend).
fn channel_lists(per_channel: &[ChannelHits]) -> Vec<ChannelList<i64>> {
    per_channel
        .iter()
        .map(|c| ChannelList {
            channel: c.channel,
            weight: c.weight,
            owners: c.hits.iter().map(|&(_, owner)| owner).collect(),
            scores: if BLENDED.contains(&c.channel) {
                c.scores.iter().copied().collect()
            } else {
                None
            },
        })
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
        rerank_score: None,
        channels: fused
            .ranks
            .iter()
            .map(|&(channel, rank)| ChannelRank {
                channel,
                rank,
                score: None,
            })
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
            format: row.format.clone(),
            lane: None,
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
            document: row
                .document
                .clone()
                .map(|(first, last)| super::DocumentLocator {
                    first,
                    last,
                    regions: row.regions.clone(),
                }),
        },
        safety: {
            // Chunks stored before invisible characters were flagged are checked as they are read.
            let flagged = row.may_contain_instructions || safety::hides_characters(&row.text);
            let triple = safety::triple(row.has_code, flagged);
            let unseen = row.document.as_ref().is_some_and(|(first, last)| {
                first
                    .flags
                    .iter()
                    .chain(&last.flags)
                    .any(|f| f.starts_with("hidden"))
            });
            if unseen { triple.unseen() } else { triple }
        },
        token_count: row.token_count,
        text: row.text.clone(),
        citation,
        found_via: Vec::new(),
        trust_level: row.trust,
        freshness: row.freshness.clone(),
    }
}
