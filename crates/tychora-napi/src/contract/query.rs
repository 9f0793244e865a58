//! The query contract. A request crosses as an object; the result crosses as one JSON string,
//! which measurably pays for it (thousands of fields per result; building them as napi objects cost
//! more than one `JSON.parse`), so `QueryResult` here is the declaration of that JSON: its
//! conversion is never called at runtime, and exists so the compiler checks it field for field
//! against the core's type.

use napi::bindgen_prelude::{Either, Null};
use napi_derive::napi;
use tychora_core::query as core;

use super::{count, nullable};

/// A search request.
#[napi(object)]
pub struct QueryRequest {
    pub query: String,
    pub collections: Option<Vec<String>>,
    /// Kinds the pack defines, or format names (a source with no kind is matched by its format).
    pub kinds: Option<Vec<String>>,
    /// Facet conditions (`level>=2`, `decided=2024-01-01..2024-12-31`), all of which hold.
    pub facets: Option<Vec<String>>,
    pub limit: Option<u32>,
    #[napi(js_name = "budget_tokens")]
    pub budget_tokens: Option<u32>,
    /// Segments per source; 0 means unlimited.
    #[napi(js_name = "max_per_source")]
    pub max_per_source: Option<u32>,
    #[napi(js_name = "snapshot_id")]
    pub snapshot_id: Option<i64>,
    #[napi(ts_type = "Array<'exact' | 'lexical' | 'text' | 'visual' | 'graph' | 'summary'>")]
    pub channels: Option<Vec<String>>,
    #[napi(js_name = "agent_id")]
    pub agent_id: Option<String>,
    #[napi(js_name = "task_id")]
    pub task_id: Option<String>,
    /// Per segment, each channel's score beside its rank, and the rerank score.
    pub explain: Option<bool>,
    /// Whether to rerank when `[rerank]` is configured (default: yes).
    pub rerank: Option<bool>,
    /// Also run the graph channel, on top of the profile's (or the requested) channels.
    pub graph: Option<bool>,
    /// A mode the pack defines (`compliance`, `implementation`).
    pub mode: Option<String>,
    /// Only sources labelled at or below this sensitivity level.
    #[napi(js_name = "max_sensitivity")]
    pub max_sensitivity: Option<String>,
}

impl From<QueryRequest> for core::QueryRequest {
    fn from(value: QueryRequest) -> Self {
        let QueryRequest {
            query,
            collections,
            kinds,
            facets,
            limit,
            budget_tokens,
            max_per_source,
            snapshot_id,
            channels,
            agent_id,
            task_id,
            explain,
            rerank,
            graph,
            mode,
            max_sensitivity,
        } = value;
        let size = |v: Option<u32>| v.map(|n| n as usize);
        Self {
            query,
            collections: collections.unwrap_or_default(),
            kinds: kinds.unwrap_or_default(),
            facets: facets.unwrap_or_default(),
            limit: size(limit),
            budget_tokens: size(budget_tokens),
            max_per_source: size(max_per_source),
            snapshot_id,
            channels,
            agent_id,
            task_id,
            explain: explain.unwrap_or(false),
            rerank,
            graph: graph.unwrap_or(false),
            mode,
            max_sensitivity,
        }
    }
}

/// Where a segment comes from.
#[napi(object)]
pub struct SourceRef {
    #[napi(js_name = "source_id")]
    pub source_id: i64,
    pub uri: String,
    pub path: String,
    pub collection: String,
    /// The kind the source was assigned (`null`: none, only its format).
    pub kind: Either<String, Null>,
    /// How its bytes were parsed.
    pub format: String,
    /// Its kind's lane, when it has a kind.
    pub lane: Either<String, Null>,
}

/// The exact revision a segment was read from.
#[napi(object)]
pub struct RevisionRef {
    #[napi(js_name = "revision_id")]
    pub revision_id: i64,
    pub seq: i64,
    pub sha256: String,
    /// The repository commit the bytes were captured at (Git checkouts).
    pub commit: Option<String>,
}

/// Where in the retained bytes a segment lies.
#[napi(object)]
pub struct Locator {
    #[napi(js_name = "byte_start")]
    pub byte_start: i64,
    #[napi(js_name = "byte_end")]
    pub byte_end: i64,
    #[napi(js_name = "line_start")]
    pub line_start: i64,
    #[napi(js_name = "line_end")]
    pub line_end: i64,
    #[napi(js_name = "col_start")]
    pub col_start: i64,
    #[napi(js_name = "col_end")]
    pub col_end: i64,
    #[napi(js_name = "heading_path")]
    pub heading_path: Vec<String>,
    #[napi(js_name = "json_pointer")]
    pub json_pointer: Option<String>,
    pub anchor: Option<String>,
    /// For a document: where the window sits (the offsets above index its derived text).
    pub document: Option<DocumentLocator>,
}

/// The places of a document window's first and last units.
#[napi(object)]
pub struct DocumentLocator {
    pub first: DocPlace,
    pub last: DocPlace,
    /// PDF and image windows: the region covered on each page, `[page, x0, y0, x1, y1]` in PDF
    /// points (an image's pixels), origin bottom-left (absent: none, as for DOCX).
    pub regions: Option<Vec<Vec<f64>>>,
}

/// A unit's place in its document: part and paragraph, table and row (DOCX), pages (PDF).
#[napi(object)]
pub struct DocPlace {
    pub part: String,
    pub paragraph: Option<i64>,
    pub table: Option<i64>,
    pub row: Option<i64>,
    #[napi(js_name = "page_start")]
    pub page_start: Option<i64>,
    #[napi(js_name = "page_end")]
    pub page_end: Option<i64>,
    /// Findings about the unit, e.g. `hidden: same colour as its background` (absent: none).
    pub flags: Option<Vec<String>>,
    /// `ocr`: recognized from an image of the page (absent: its text layer).
    #[napi(ts_type = "'ocr'")]
    pub origin: Option<String>,
}

pub(crate) fn doc_place(value: core::DocPlace) -> DocPlace {
    let core::DocPlace {
        part,
        paragraph,
        table,
        row,
        page_start,
        page_end,
        flags,
        origin,
    } = value;
    DocPlace {
        origin,
        part,
        paragraph,
        table,
        row,
        page_start,
        page_end,
        flags: (!flags.is_empty()).then_some(flags),
    }
}

/// One channel's rank for a segment.
#[napi(object)]
pub struct ChannelRank {
    #[napi(ts_type = "'exact' | 'lexical' | 'text' | 'visual' | 'graph' | 'summary'")]
    pub channel: String,
    pub rank: i64,
    /// The channel's own score (BM25, cosine similarity), with `explain`.
    pub score: Option<f64>,
}

/// One step of a "found via" path: `from` calls `to`.
#[napi(object)]
pub struct Hop {
    pub from: String,
    #[napi(ts_type = "'calls' | 'references' | 'inherits' | 'implements'")]
    pub relation: String,
    pub to: String,
    pub path: String,
    pub line: i64,
}

/// Evidence assembled at query time.
#[napi(object)]
pub struct Segment {
    pub id: String,
    pub rank: i64,
    /// The fused (weighted RRF) score.
    pub score: f64,
    /// The reranker's score, when reranking reached this segment.
    #[napi(js_name = "rerank_score")]
    pub rerank_score: Option<f64>,
    pub channels: Vec<ChannelRank>,
    #[napi(js_name = "snapshot_id")]
    pub snapshot_id: i64,
    #[napi(js_name = "chunk_id")]
    pub chunk_id: i64,
    #[napi(js_name = "unit_ids")]
    pub unit_ids: Vec<i64>,
    pub source: SourceRef,
    pub revision: RevisionRef,
    pub locator: Locator,
    pub text: String,
    #[napi(js_name = "token_count")]
    pub token_count: i64,
    pub citation: String,
    /// How the graph channel reached this segment (absent unless it ranked it).
    #[napi(js_name = "found_via")]
    pub found_via: Option<Vec<Hop>>,
    /// How far it can be trusted: its collection's trust.
    #[napi(
        js_name = "trust_level",
        ts_type = "'approved' | 'rejected_approach' | 'captured_source'"
    )]
    pub trust_level: String,
    pub freshness: Freshness,
    #[napi(
        js_name = "content_classification",
        ts_type = "'source_text' | 'source_code' | 'hidden_text'"
    )]
    pub content_classification: String,
    #[napi(js_name = "may_contain_instructions")]
    pub may_contain_instructions: bool,
    pub executable: bool,
}

/// When a segment's content became what it is.
#[napi(object)]
pub struct Freshness {
    /// ms since the epoch.
    #[napi(js_name = "as_of")]
    pub as_of: i64,
    /// `reviewed`: a person's decision (a knowledge migration's acceptance); `captured`: the
    /// capture of its bytes.
    #[napi(ts_type = "'reviewed' | 'captured'")]
    pub basis: String,
}

/// A citation a person or agent can follow.
#[napi(object)]
pub struct Citation {
    #[napi(js_name = "segment_id")]
    pub segment_id: String,
    pub label: String,
    pub uri: String,
    pub path: String,
    #[napi(js_name = "revision_id")]
    pub revision_id: i64,
    pub sha256: String,
    #[napi(js_name = "line_start")]
    pub line_start: i64,
    #[napi(js_name = "line_end")]
    pub line_end: i64,
    #[napi(js_name = "byte_start")]
    pub byte_start: i64,
    #[napi(js_name = "byte_end")]
    pub byte_end: i64,
}

/// One channel's contribution.
#[napi(object)]
pub struct ChannelCoverage {
    pub channel: String,
    pub weight: f64,
    /// Its share of the lexical/text score blend (absent: fused by rank only).
    pub blend: Option<f64>,
    pub candidates: i64,
}

/// What the query saw and kept.
#[napi(object)]
pub struct Coverage {
    #[napi(js_name = "eligible_sources")]
    pub eligible_sources: i64,
    pub channels: Vec<ChannelCoverage>,
    #[napi(js_name = "fused_candidates")]
    pub fused_candidates: i64,
    pub returned: i64,
    #[napi(js_name = "dropped_by_source_limit")]
    pub dropped_by_source_limit: i64,
    #[napi(js_name = "dropped_by_budget")]
    pub dropped_by_budget: i64,
    #[napi(js_name = "dropped_as_duplicate")]
    pub dropped_as_duplicate: i64,
}

/// The scope actually applied.
#[napi(object)]
pub struct AppliedScope {
    #[napi(js_name = "snapshot_id")]
    pub snapshot_id: Either<i64, Null>,
    pub collections: Vec<String>,
    pub kinds: Vec<String>,
    /// The facet conditions applied.
    pub facets: Vec<String>,
    /// The mode applied, if any.
    pub mode: Option<String>,
    pub channels: Vec<String>,
    pub limit: i64,
    #[napi(js_name = "max_per_source")]
    pub max_per_source: i64,
    /// The reranker applied (`provider/model`), if any.
    pub rerank: Option<String>,
}

/// One check on an answer.
#[napi(object)]
pub struct Check {
    #[napi(ts_type = "'superseded_sources' | 'quoted_instructions'")]
    pub name: String,
    #[napi(ts_type = "'pass' | 'warn'")]
    pub status: String,
    pub detail: String,
}

/// Something asked for with no evidence in the answer.
#[napi(object)]
pub struct CoverageGap {
    #[napi(ts_type = "'identifier' | 'lane'")]
    pub kind: String,
    pub name: String,
    pub detail: String,
}

/// An accepted relation assertion touching a returned segment's document or record.
#[napi(object)]
pub struct ResultRelation {
    pub id: i64,
    pub relation: String,
    #[napi(js_name = "from_key")]
    pub from_key: String,
    #[napi(js_name = "to_key")]
    pub to_key: String,
    #[napi(ts_type = "'parsed' | 'declared' | 'proposed'")]
    pub method: String,
    pub support: Either<String, Null>,
}

/// How the output budget was applied.
#[napi(object)]
pub struct BudgetContract {
    #[napi(js_name = "budget_tokens")]
    pub budget_tokens: i64,
    #[napi(js_name = "used_tokens")]
    pub used_tokens: i64,
    pub tokenizer: String,
    pub measure: String,
    pub truncated: bool,
}

/// One stage of the query path and its duration.
#[napi(object)]
pub struct TraceStage {
    pub stage: String,
    pub ms: f64,
    /// Candidates a channel stage produced.
    pub candidates: Option<i64>,
    /// The provider call the stage made.
    pub provider: Option<ProviderCall>,
}

/// A provider call made while answering a query.
#[napi(object)]
pub struct ProviderCall {
    pub provider: String,
    pub model: String,
    pub tokens: i64,
    pub ms: f64,
}

/// A node of the summary tree in a result: derived text, never a quotation.
#[napi(object)]
pub struct ResultSummary {
    #[napi(js_name = "node_id")]
    pub node_id: i64,
    pub level: u32,
    #[napi(ts_type = "'document' | 'corpus'")]
    pub scope: String,
    #[napi(ts_type = "'hit' | 'context'")]
    pub role: String,
    pub score: Either<f64, Null>,
    pub text: String,
    pub summarizer: String,
    pub model: Either<String, Null>,
    #[napi(js_name = "leaf_count")]
    pub leaf_count: i64,
    #[napi(js_name = "segment_ids")]
    pub segment_ids: Vec<String>,
    #[napi(js_name = "token_count")]
    pub token_count: i64,
    #[napi(js_name = "built_from_snapshot_id")]
    pub built_from_snapshot_id: i64,
    #[napi(js_name = "may_contain_instructions")]
    pub may_contain_instructions: bool,
}

/// The versioned query result (the shape of the JSON `search` resolves to).
#[napi(object)]
pub struct QueryResult {
    #[napi(ts_type = "1")]
    pub version: u32,
    #[napi(js_name = "run_id")]
    pub run_id: String,
    #[napi(js_name = "snapshot_id")]
    pub snapshot_id: Either<i64, Null>,
    pub query: String,
    #[napi(js_name = "applied_scope")]
    pub applied_scope: AppliedScope,
    pub segments: Vec<Segment>,
    /// Summaries of the summary tree that led to segments or stand above them (derived text).
    pub summaries: Vec<ResultSummary>,
    /// The pack's lane order.
    pub lanes: Vec<String>,
    /// Accepted relation assertions about the segments' documents and records.
    pub relations: Vec<ResultRelation>,
    /// What was checked about the answer.
    pub checks: Vec<Check>,
    /// What was asked for and has no evidence here.
    #[napi(js_name = "coverage_gaps")]
    pub coverage_gaps: Vec<CoverageGap>,
    /// What a decision made from the answer must do (the mode's).
    #[napi(js_name = "decision_requirements")]
    pub decision_requirements: Vec<String>,
    pub citations: Vec<Citation>,
    pub coverage: Coverage,
    pub warnings: Vec<String>,
    #[napi(js_name = "budget_contract")]
    pub budget_contract: BudgetContract,
    /// Time per stage of the query path.
    pub trace: Vec<TraceStage>,
    #[napi(js_name = "duration_ms")]
    pub duration_ms: f64,
}

impl From<core::QueryResult> for QueryResult {
    fn from(value: core::QueryResult) -> Self {
        let core::QueryResult {
            version,
            run_id,
            snapshot_id,
            query,
            applied_scope,
            segments,
            summaries,
            lanes,
            relations,
            checks,
            coverage_gaps,
            decision_requirements,
            citations,
            coverage,
            warnings,
            budget_contract,
            trace,
            duration_ms,
        } = value;
        let core::AppliedScope {
            snapshot_id: scope_snapshot,
            collections,
            kinds,
            facets,
            mode,
            channels,
            limit,
            max_per_source,
            rerank,
        } = applied_scope;
        let core::Coverage {
            eligible_sources,
            channels: channel_coverage,
            fused_candidates,
            returned,
            dropped_by_source_limit,
            dropped_by_budget,
            dropped_as_duplicate,
        } = coverage;
        let core::BudgetContract {
            budget_tokens,
            used_tokens,
            tokenizer,
            measure,
            truncated,
        } = budget_contract;
        Self {
            version,
            run_id,
            snapshot_id: nullable(snapshot_id),
            query,
            applied_scope: AppliedScope {
                snapshot_id: nullable(scope_snapshot),
                collections,
                kinds,
                facets,
                mode,
                channels,
                limit: count(limit),
                max_per_source: count(max_per_source),
                rerank,
            },
            segments: segments.into_iter().map(segment).collect(),
            summaries: summaries
                .into_iter()
                .map(|s| {
                    let core::ResultSummary {
                        node_id,
                        level,
                        scope,
                        role,
                        score,
                        text,
                        summarizer,
                        model,
                        leaf_count,
                        segment_ids,
                        token_count,
                        built_from_snapshot_id,
                        may_contain_instructions,
                    } = s;
                    ResultSummary {
                        node_id,
                        level,
                        scope,
                        role: role.into(),
                        score: nullable(score),
                        text,
                        summarizer,
                        model: nullable(model),
                        leaf_count: count(leaf_count),
                        segment_ids,
                        token_count: count(token_count),
                        built_from_snapshot_id,
                        may_contain_instructions,
                    }
                })
                .collect(),
            lanes,
            checks: checks
                .into_iter()
                .map(|c| {
                    let core::Check {
                        name,
                        status,
                        detail,
                    } = c;
                    Check {
                        name: name.into(),
                        status: status.into(),
                        detail,
                    }
                })
                .collect(),
            coverage_gaps: coverage_gaps
                .into_iter()
                .map(|g| {
                    let core::CoverageGap { kind, name, detail } = g;
                    CoverageGap {
                        kind: kind.into(),
                        name,
                        detail,
                    }
                })
                .collect(),
            decision_requirements,
            relations: relations
                .into_iter()
                .map(|r| {
                    let core::ResultRelation {
                        id,
                        relation,
                        from_key,
                        to_key,
                        method,
                        support,
                    } = r;
                    ResultRelation {
                        id,
                        relation,
                        from_key,
                        to_key,
                        method,
                        support: nullable(support),
                    }
                })
                .collect(),
            citations: citations.into_iter().map(citation).collect(),
            coverage: Coverage {
                eligible_sources,
                channels: channel_coverage
                    .into_iter()
                    .map(|c| {
                        let core::ChannelCoverage {
                            channel,
                            weight,
                            blend,
                            candidates,
                        } = c;
                        ChannelCoverage {
                            channel: channel.into(),
                            weight,
                            blend,
                            candidates: count(candidates),
                        }
                    })
                    .collect(),
                fused_candidates: count(fused_candidates),
                returned: count(returned),
                dropped_by_source_limit: count(dropped_by_source_limit),
                dropped_by_budget: count(dropped_by_budget),
                dropped_as_duplicate: count(dropped_as_duplicate),
            },
            warnings,
            budget_contract: BudgetContract {
                budget_tokens: count(budget_tokens),
                used_tokens: count(used_tokens),
                tokenizer: tokenizer.into(),
                measure: measure.into(),
                truncated,
            },
            trace: trace
                .into_iter()
                .map(|t| {
                    let core::TraceStage {
                        stage,
                        ms,
                        candidates,
                        provider,
                    } = t;
                    TraceStage {
                        stage: stage.into(),
                        ms,
                        candidates: candidates.map(count),
                        provider: provider.map(|p| {
                            let core::ProviderCall {
                                provider,
                                model,
                                tokens,
                                ms,
                            } = p;
                            ProviderCall {
                                provider,
                                model,
                                tokens: count(tokens),
                                ms,
                            }
                        }),
                    }
                })
                .collect(),
            duration_ms,
        }
    }
}

fn segment(value: core::Segment) -> Segment {
    let core::Segment {
        id,
        rank,
        score,
        rerank_score,
        channels,
        snapshot_id,
        chunk_id,
        unit_ids,
        source,
        revision,
        locator,
        text,
        token_count,
        citation,
        found_via,
        trust_level,
        freshness,
        safety,
    } = value;
    let core::SourceRef {
        source_id,
        uri,
        path,
        collection,
        kind,
        format,
        lane,
    } = source;
    let core::RevisionRef {
        revision_id,
        seq,
        sha256,
        commit,
    } = revision;
    let core::Locator {
        byte_start,
        byte_end,
        line_start,
        line_end,
        col_start,
        col_end,
        heading_path,
        json_pointer,
        anchor,
        document,
    } = locator;
    let core::Safety {
        content_classification,
        may_contain_instructions,
        executable,
    } = safety;
    Segment {
        id,
        rank: count(rank),
        score,
        rerank_score,
        channels: channels
            .into_iter()
            .map(|c| {
                let core::ChannelRank {
                    channel,
                    rank,
                    score,
                } = c;
                ChannelRank {
                    channel: channel.into(),
                    rank: count(rank),
                    score,
                }
            })
            .collect(),
        snapshot_id,
        chunk_id,
        unit_ids,
        source: SourceRef {
            source_id,
            uri,
            path,
            collection,
            kind: nullable(kind),
            format,
            lane: nullable(lane),
        },
        revision: RevisionRef {
            revision_id,
            seq,
            sha256,
            commit,
        },
        locator: Locator {
            byte_start,
            byte_end,
            line_start,
            line_end,
            col_start,
            col_end,
            heading_path,
            json_pointer,
            anchor,
            document: document.map(|d| DocumentLocator {
                first: doc_place(d.first),
                last: doc_place(d.last),
                regions: (!d.regions.is_empty())
                    .then(|| d.regions.iter().map(|b| b.to_vec()).collect()),
            }),
        },
        text,
        token_count: count(token_count),
        citation,
        found_via: (!found_via.is_empty()).then(|| found_via.into_iter().map(hop).collect()),
        trust_level: trust_level.as_str().into(),
        freshness: Freshness {
            as_of: freshness.as_of,
            basis: freshness.basis.into(),
        },
        content_classification: content_classification.into(),
        may_contain_instructions,
        executable,
    }
}

pub(crate) fn hop(value: core::Hop) -> Hop {
    let core::Hop {
        from,
        relation,
        to,
        path,
        line,
    } = value;
    Hop {
        from,
        relation,
        to,
        path,
        line,
    }
}

fn citation(value: core::Citation) -> Citation {
    let core::Citation {
        segment_id,
        label,
        uri,
        path,
        revision_id,
        sha256,
        line_start,
        line_end,
        byte_start,
        byte_end,
    } = value;
    Citation {
        segment_id,
        label,
        uri,
        path,
        revision_id,
        sha256,
        line_start,
        line_end,
        byte_start,
        byte_end,
    }
}
