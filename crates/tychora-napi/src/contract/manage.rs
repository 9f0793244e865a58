//! Administration and provenance: init, status, verify, listings, inspect, job status.

use napi::bindgen_prelude::{Either, Either7, Null};
use napi_derive::napi;
use tychora_core::manage as core;

use super::{Diagnostic, JobRequest, Progress, Receipt, count, nullable};

/// What `init` created.
#[napi(object)]
pub struct InitReport {
    pub dir: String,
    pub created: Vec<String>,
    #[napi(js_name = "schema_version")]
    pub schema_version: i64,
}

impl From<tychora_core::InitReport> for InitReport {
    fn from(value: tychora_core::InitReport) -> Self {
        let tychora_core::InitReport {
            dir,
            created,
            schema_version,
        } = value;
        Self {
            dir,
            created,
            schema_version,
        }
    }
}

/// The current snapshot, as `status` shows it.
#[napi(object)]
pub struct CurrentSnapshot {
    pub id: i64,
    #[napi(js_name = "created_at")]
    pub created_at: i64,
    pub chunks: i64,
    pub sources: i64,
    #[napi(js_name = "job_id")]
    pub job_id: Either<i64, Null>,
}

/// Active sources of one collection.
#[napi(object)]
pub struct CollectionCount {
    pub name: String,
    #[napi(js_name = "active_sources")]
    pub active_sources: i64,
}

/// A kind the store's sources use.
#[napi(object)]
pub struct KindUse {
    pub name: String,
    pub version: i64,
    pub fingerprint: String,
    pub pack: String,
    pub lane: String,
    pub sources: i64,
}

/// Row counts of the canonical tables.
#[napi(object)]
pub struct Counts {
    pub sources: i64,
    #[napi(js_name = "removed_sources")]
    pub removed_sources: i64,
    pub revisions: i64,
    pub extractions: i64,
    #[napi(js_name = "evidence_units")]
    pub evidence_units: i64,
    pub chunks: i64,
    pub identifiers: i64,
    pub artifacts: i64,
    pub snapshots: i64,
    pub jobs: i64,
    #[napi(js_name = "query_runs")]
    pub query_runs: i64,
    #[napi(js_name = "vector_records")]
    pub vector_records: i64,
    #[napi(js_name = "erased_revisions")]
    pub erased_revisions: i64,
    #[napi(js_name = "erasures_pending")]
    pub erasures_pending: i64,
}

/// Bytes on disk (a file linked into several generations counts once).
#[napi(object)]
pub struct Bytes {
    pub corpus: i64,
    pub artifacts: i64,
    pub indexes: i64,
    pub lexical: i64,
    pub vectors: i64,
    /// `corpus.sqlite3` by table (with its indexes), largest first; only when asked for.
    pub tables: Option<Vec<TableBytes>>,
}

/// What a status call measures beyond the counts.
#[napi(object)]
pub struct StatusOptions {
    /// Measure `corpus.sqlite3` table by table (reads every page: 70 ms at 84k chunks). Default true.
    pub tables: Option<bool>,
}

/// One table's share of `corpus.sqlite3`.
#[napi(object)]
pub struct TableBytes {
    pub table: String,
    pub bytes: i64,
}

/// What `manage status` reports.
#[napi(object)]
pub struct Status {
    pub dir: String,
    #[napi(js_name = "schema_version")]
    pub schema_version: i64,
    #[napi(js_name = "engine_version")]
    pub engine_version: String,
    pub profile: String,
    #[napi(js_name = "current_snapshot")]
    pub current_snapshot: Either<CurrentSnapshot, Null>,
    pub collections: Vec<CollectionCount>,
    pub kinds: Vec<KindUse>,
    pub counts: Counts,
    pub bytes: Bytes,
}

impl From<core::Status> for Status {
    #[allow(clippy::cast_possible_wrap)]
    fn from(value: core::Status) -> Self {
        let core::Status {
            dir,
            schema_version,
            engine_version,
            profile,
            current_snapshot,
            collections,
            kinds,
            counts,
            bytes,
        } = value;
        let core::Counts {
            sources,
            removed_sources,
            revisions,
            extractions,
            evidence_units,
            chunks,
            identifiers,
            artifacts,
            snapshots,
            jobs,
            query_runs,
            vector_records,
            erased_revisions,
            erasures_pending,
        } = counts;
        let core::Bytes {
            corpus,
            artifacts: artifact_bytes,
            indexes,
            lexical,
            vectors,
            tables,
        } = bytes;
        Self {
            dir,
            schema_version,
            engine_version,
            profile,
            current_snapshot: nullable(current_snapshot.map(|c| {
                let core::CurrentSnapshot {
                    id,
                    created_at,
                    chunks,
                    sources,
                    job_id,
                } = c;
                CurrentSnapshot {
                    id,
                    created_at,
                    chunks,
                    sources,
                    job_id: nullable(job_id),
                }
            })),
            kinds: kinds
                .into_iter()
                .map(|k| {
                    let core::KindUse {
                        name,
                        version,
                        fingerprint,
                        pack,
                        lane,
                        sources,
                    } = k;
                    KindUse {
                        name,
                        version,
                        fingerprint,
                        pack,
                        lane,
                        sources,
                    }
                })
                .collect(),
            collections: collections
                .into_iter()
                .map(|c| {
                    let core::CollectionCount {
                        name,
                        active_sources,
                    } = c;
                    CollectionCount {
                        name,
                        active_sources,
                    }
                })
                .collect(),
            counts: Counts {
                sources,
                removed_sources,
                revisions,
                extractions,
                evidence_units,
                chunks,
                identifiers,
                artifacts,
                snapshots,
                jobs,
                query_runs,
                vector_records,
                erased_revisions,
                erasures_pending,
            },
            bytes: Bytes {
                corpus: corpus as i64,
                artifacts: artifact_bytes as i64,
                indexes: indexes as i64,
                lexical: lexical as i64,
                vectors: vectors as i64,
                tables: tables.map(|tables| {
                    tables
                        .into_iter()
                        .map(|t| {
                            let core::TableBytes { table, bytes } = t;
                            TableBytes {
                                table,
                                bytes: bytes as i64,
                            }
                        })
                        .collect()
                }),
            },
        }
    }
}

/// One problem `verify` found.
#[napi(object)]
pub struct Problem {
    pub object: String,
    #[napi(ts_type = "ErrorCode")]
    pub code: String,
    pub message: String,
}

/// The verification report.
#[napi(object)]
pub struct VerifyReport {
    pub ok: bool,
    #[napi(js_name = "artifacts_checked")]
    pub artifacts_checked: i64,
    #[napi(js_name = "references_checked")]
    pub references_checked: i64,
    #[napi(js_name = "snapshots_checked")]
    pub snapshots_checked: i64,
    #[napi(js_name = "erasures_checked")]
    pub erasures_checked: i64,
    pub problems: Vec<Problem>,
}

impl From<core::VerifyReport> for VerifyReport {
    fn from(value: core::VerifyReport) -> Self {
        let core::VerifyReport {
            ok,
            artifacts_checked,
            references_checked,
            snapshots_checked,
            erasures_checked,
            problems,
        } = value;
        Self {
            erasures_checked: count(erasures_checked),
            ok,
            artifacts_checked: count(artifacts_checked),
            references_checked: count(references_checked),
            snapshots_checked: count(snapshots_checked),
            problems: problems
                .into_iter()
                .map(|p| {
                    let core::Problem {
                        object,
                        code,
                        message,
                    } = p;
                    Problem {
                        object,
                        code: code.as_str().into(),
                        message,
                    }
                })
                .collect(),
        }
    }
}

/// Which page of a snapshot's sources to list.
#[napi(object)]
pub struct ListSourcesOptions {
    pub collection: Option<String>,
    #[napi(js_name = "snapshot_id")]
    pub snapshot_id: Option<i64>,
    /// Page size (default 100, at most 1000).
    pub limit: Option<u32>,
    pub offset: Option<u32>,
}

/// A source as a snapshot holds it.
#[napi(object)]
pub struct SourceSummary {
    pub id: i64,
    pub path: String,
    pub uri: String,
    pub collection: String,
    /// The kind it was assigned (`null`: none, only its format).
    pub kind: Either<String, Null>,
    /// How its bytes are parsed.
    pub format: String,
    #[napi(js_name = "revision_id")]
    pub revision_id: i64,
    pub seq: i64,
    pub sha256: String,
    pub size: i64,
    #[napi(js_name = "captured_at")]
    pub captured_at: i64,
}

/// One page of a snapshot's sources.
#[napi(object)]
pub struct SourceList {
    #[napi(js_name = "snapshot_id")]
    pub snapshot_id: Either<i64, Null>,
    pub total: i64,
    pub sources: Vec<SourceSummary>,
}

impl From<core::SourceList> for SourceList {
    fn from(value: core::SourceList) -> Self {
        let core::SourceList {
            snapshot_id,
            total,
            sources,
        } = value;
        Self {
            snapshot_id: nullable(snapshot_id),
            total,
            sources: sources
                .into_iter()
                .map(|s| {
                    let core::SourceSummary {
                        id,
                        path,
                        uri,
                        collection,
                        kind,
                        format,
                        revision_id,
                        seq,
                        sha256,
                        size,
                        captured_at,
                    } = s;
                    SourceSummary {
                        id,
                        path,
                        uri,
                        collection,
                        kind: nullable(kind),
                        format,
                        revision_id,
                        seq,
                        sha256,
                        size,
                        captured_at,
                    }
                })
                .collect(),
        }
    }
}

/// A published snapshot.
#[napi(object)]
pub struct SnapshotSummary {
    pub id: i64,
    #[napi(js_name = "parent_id")]
    pub parent_id: Either<i64, Null>,
    #[napi(js_name = "job_id")]
    pub job_id: Either<i64, Null>,
    pub chunks: i64,
    pub sources: i64,
    #[napi(js_name = "created_at")]
    pub created_at: i64,
    pub current: bool,
    pub retained: bool,
}

/// The published snapshots, newest first.
#[napi(object)]
pub struct SnapshotList {
    pub snapshots: Vec<SnapshotSummary>,
}

impl From<core::SnapshotList> for SnapshotList {
    fn from(value: core::SnapshotList) -> Self {
        let core::SnapshotList { snapshots } = value;
        Self {
            snapshots: snapshots
                .into_iter()
                .map(|s| {
                    let core::SnapshotSummary {
                        id,
                        parent_id,
                        job_id,
                        chunks,
                        sources,
                        created_at,
                        current,
                        retained,
                    } = s;
                    SnapshotSummary {
                        id,
                        parent_id: nullable(parent_id),
                        job_id: nullable(job_id),
                        chunks,
                        sources,
                        created_at,
                        current,
                        retained,
                    }
                })
                .collect(),
        }
    }
}

/// A revision as listed under its source.
#[napi(object)]
pub struct RevisionBrief {
    pub id: i64,
    pub seq: i64,
    pub sha256: String,
    pub size: i64,
    #[napi(js_name = "captured_at")]
    pub captured_at: i64,
}

/// `source:N`.
#[napi(object)]
pub struct SourceEvidence {
    #[napi(ts_type = "'source'")]
    pub r#type: String,
    pub id: i64,
    pub uri: String,
    pub path: String,
    pub root: String,
    pub collection: String,
    /// The kind it was assigned (`null`: none, only its format).
    pub kind: Either<String, Null>,
    /// How its bytes are parsed.
    pub format: String,
    /// Its facet values, by name.
    #[napi(ts_type = "Record<string, string | number | boolean | null>")]
    pub facets: serde_json::Value,
    #[napi(ts_type = "'active' | 'removed'")]
    pub status: String,
    /// Its sensitivity label (`null`: captured before labels existed).
    pub sensitivity: Either<String, Null>,
    #[napi(js_name = "created_at")]
    pub created_at: i64,
    #[napi(js_name = "updated_at")]
    pub updated_at: i64,
    pub revisions: Vec<RevisionBrief>,
}

/// An extraction as listed under its revision.
#[napi(object)]
pub struct ExtractionBrief {
    pub id: i64,
    pub parser: String,
    pub fingerprint: String,
    pub units: i64,
    pub chunks: i64,
    pub diagnostics: Vec<Diagnostic>,
    /// For a document: its reader, derived text and what was kept out of units.
    pub document: Option<DocumentBrief>,
}

/// A document extraction's reader, derived text, furniture and outside references.
#[napi(object)]
pub struct DocumentBrief {
    pub format: String,
    pub extractor: String,
    /// A PDF's page count.
    pub pages: Either<i64, Null>,
    /// The artifact the units' byte and line spans index.
    #[napi(js_name = "derived_sha256")]
    pub derived_sha256: String,
    /// Headers, footers and page numbers: kept out of units.
    pub furniture: Vec<FurnitureEntry>,
    /// Relationship targets outside the package: recorded, never followed.
    #[napi(js_name = "external_targets")]
    pub external_targets: Vec<String>,
    /// Pictures: the image file itself, or those a document embeds.
    pub assets: Vec<AssetEntry>,
}

/// A picture kept as a visual asset: its bytes are the artifact `sha256`.
#[napi(object)]
pub struct AssetEntry {
    pub ordinal: i64,
    pub sha256: String,
    #[napi(js_name = "media_type")]
    pub media_type: String,
    pub width: Either<i64, Null>,
    pub height: Either<i64, Null>,
    /// `image` (the file itself), or the DOCX part that draws it.
    pub part: String,
    /// DOCX: `rId7 → word/media/image2.png`.
    pub relationship: Either<String, Null>,
    /// PDF: its page.
    pub page: Either<i64, Null>,
    /// PDF: its box `[x0, y0, x1, y1]` in points, origin bottom-left.
    pub bbox: Either<Vec<f64>, Null>,
    #[napi(js_name = "alt_text")]
    pub alt_text: Either<String, Null>,
    pub caption: Either<String, Null>,
    /// Text of the paragraph it is anchored in.
    pub context: Either<String, Null>,
    /// The unit that finds it.
    #[napi(js_name = "unit_id")]
    pub unit_id: Either<i64, Null>,
    /// What vision models said it shows: derived evidence, never a quotation of the source.
    pub descriptions: Vec<super::DescriptionEntry>,
}

/// One header, footer or page-number block.
#[napi(object)]
pub struct FurnitureEntry {
    pub part: String,
    pub text: String,
}

/// Where a unit sits in its document, with a table row's cells.
#[napi(object)]
pub struct UnitDocument {
    pub part: String,
    pub paragraph: Either<i64, Null>,
    pub table: Either<i64, Null>,
    pub row: Either<i64, Null>,
    pub header: bool,
    pub marker: Either<String, Null>,
    pub level: Either<i64, Null>,
    /// PDF pages (first and last).
    #[napi(js_name = "page_start")]
    pub page_start: Either<i64, Null>,
    #[napi(js_name = "page_end")]
    pub page_end: Either<i64, Null>,
    /// PDF boxes `[page, x0, y0, x1, y1]` in points, origin bottom-left.
    pub boxes: Vec<Vec<f64>>,
    /// Findings such as `hidden: invisible render mode`.
    pub flags: Vec<String>,
    /// `text`, or `ocr` for text recognized from an image of the page.
    #[napi(ts_type = "'text' | 'ocr'")]
    pub origin: String,
    /// OCR: the recognizer's confidence, 0 to 1.
    pub confidence: Either<f64, Null>,
    pub cells: Vec<CellEntry>,
}

/// A table cell.
#[napi(object)]
pub struct CellEntry {
    pub col: i64,
    #[napi(js_name = "col_span")]
    pub col_span: i64,
    #[napi(js_name = "continues_above")]
    pub continues_above: bool,
    pub text: String,
    /// PDF: the cell's box `[x0, y0, x1, y1]` in points on its row's page.
    pub bbox: Option<Vec<f64>>,
}

fn document_brief(value: core::DocumentBrief) -> DocumentBrief {
    let core::DocumentBrief {
        format,
        extractor,
        pages,
        derived_sha256,
        furniture,
        external_targets,
        assets,
    } = value;
    DocumentBrief {
        format,
        extractor,
        pages: nullable(pages),
        derived_sha256,
        furniture: furniture
            .into_iter()
            .map(|f| {
                let core::FurnitureEntry { part, text } = f;
                FurnitureEntry { part, text }
            })
            .collect(),
        external_targets,
        assets: assets
            .into_iter()
            .map(|a| AssetEntry {
                ordinal: a.ordinal,
                sha256: a.sha256,
                media_type: a.media_type,
                width: nullable(a.width),
                height: nullable(a.height),
                part: a.part,
                relationship: nullable(a.relationship),
                page: nullable(a.page),
                bbox: nullable(a.bbox.map(|b| b.to_vec())),
                alt_text: nullable(a.alt_text),
                caption: nullable(a.caption),
                context: nullable(a.context),
                unit_id: nullable(a.unit_id),
                descriptions: a.descriptions.into_iter().map(Into::into).collect(),
            })
            .collect(),
    }
}

fn unit_document(value: core::UnitDocument) -> UnitDocument {
    let core::UnitDocument {
        part,
        paragraph,
        table,
        row,
        header,
        marker,
        level,
        page_start,
        page_end,
        boxes,
        flags,
        origin,
        confidence,
        cells,
    } = value;
    UnitDocument {
        origin,
        confidence: nullable(confidence),
        page_start: nullable(page_start),
        page_end: nullable(page_end),
        boxes: boxes.into_iter().map(Vec::from).collect(),
        flags,
        part,
        paragraph: nullable(paragraph),
        table: nullable(table),
        row: nullable(row),
        header,
        marker: nullable(marker),
        level: nullable(level),
        cells: cells
            .into_iter()
            .map(|c| {
                let core::CellEntry {
                    col,
                    col_span,
                    continues_above,
                    text,
                    bbox,
                } = c;
                CellEntry {
                    col,
                    col_span,
                    continues_above,
                    text,
                    bbox: bbox.map(Vec::from),
                }
            })
            .collect(),
    }
}

/// A tombstone on a revision.
#[napi(object)]
pub struct RevisionTombstone {
    #[napi(ts_type = "'erasure' | 'retention'")]
    pub kind: String,
    pub sha256: String,
    pub reason: String,
    #[napi(js_name = "deleted_at")]
    pub deleted_at: i64,
    #[napi(js_name = "job_id")]
    pub job_id: Either<i64, Null>,
}

/// `revision:N`.
#[napi(object)]
pub struct RevisionEvidence {
    #[napi(ts_type = "'revision'")]
    pub r#type: String,
    pub id: i64,
    #[napi(js_name = "source_id")]
    pub source_id: i64,
    pub path: String,
    pub seq: i64,
    pub sha256: String,
    pub size: i64,
    /// Capture provenance (path, kind, Git commit and branch…): open-ended by design.
    #[napi(ts_type = "Record<string, unknown>")]
    pub metadata: serde_json::Value,
    #[napi(js_name = "captured_at")]
    pub captured_at: i64,
    pub extractions: Vec<ExtractionBrief>,
    pub tombstones: Vec<RevisionTombstone>,
}

/// A unit's exact place in its revision's bytes.
#[napi(object)]
pub struct UnitLocator {
    #[napi(js_name = "byte_start")]
    pub byte_start: i64,
    #[napi(js_name = "byte_end")]
    pub byte_end: i64,
    #[napi(js_name = "line_start")]
    pub line_start: i64,
    #[napi(js_name = "col_start")]
    pub col_start: i64,
    #[napi(js_name = "line_end")]
    pub line_end: i64,
    #[napi(js_name = "col_end")]
    pub col_end: i64,
    #[napi(js_name = "json_pointer")]
    pub json_pointer: Either<String, Null>,
}

/// An identifier a unit registers for the exact channel.
#[napi(object)]
pub struct IdentifierEntry {
    pub kind: String,
    pub value: String,
}

/// `unit:N`.
#[napi(object)]
pub struct UnitEvidence {
    #[napi(ts_type = "'unit'")]
    pub r#type: String,
    pub id: i64,
    #[napi(js_name = "unit_type", ts_type = "UnitType")]
    pub unit_type: String,
    #[napi(js_name = "extraction_id")]
    pub extraction_id: i64,
    #[napi(js_name = "revision_id")]
    pub revision_id: i64,
    pub path: String,
    pub sha256: String,
    #[napi(js_name = "heading_path")]
    pub heading_path: Vec<String>,
    pub anchor: Either<String, Null>,
    pub tokens: i64,
    pub locator: UnitLocator,
    /// For a document's unit: its part, paragraph, table row and cells.
    pub document: Option<UnitDocument>,
    /// `path:12-14`, or for a document `file.docx ¶34`.
    pub citation: String,
    pub identifiers: Vec<IdentifierEntry>,
    pub text: String,
}

/// A chunk's place in its revision's bytes.
#[napi(object)]
pub struct ChunkLocator {
    #[napi(js_name = "byte_start")]
    pub byte_start: i64,
    #[napi(js_name = "byte_end")]
    pub byte_end: i64,
    #[napi(js_name = "line_start")]
    pub line_start: i64,
    #[napi(js_name = "line_end")]
    pub line_end: i64,
}

/// The context capsule indexed with a chunk.
#[napi(object)]
pub struct CapsuleView {
    pub title: String,
    pub kind: String,
    #[napi(js_name = "heading_path")]
    pub heading_path: Vec<String>,
    #[napi(js_name = "table_header")]
    pub table_header: Option<String>,
    pub signature: Option<String>,
}

/// `chunk:N`, or a segment id `seg_S_C`.
#[napi(object)]
pub struct ChunkEvidence {
    #[napi(ts_type = "'chunk'")]
    pub r#type: String,
    pub id: i64,
    #[napi(js_name = "extraction_id")]
    pub extraction_id: i64,
    #[napi(js_name = "revision_id")]
    pub revision_id: i64,
    pub path: String,
    pub sha256: String,
    pub owner: String,
    /// First and last unit id.
    #[napi(ts_type = "[number, number]")]
    pub units: Vec<i64>,
    pub tokens: i64,
    pub locator: ChunkLocator,
    /// `path:12-30`, or for a document `file.docx ¶34–36`.
    pub citation: String,
    pub capsule: CapsuleView,
    pub text: String,
    /// PDF and image windows: the region covered on each page, `[page, x0, y0, x1, y1]` in PDF
    /// points (an image's pixels), origin bottom-left.
    pub regions: Vec<Vec<f64>>,
}

/// One index generation a snapshot pins.
#[napi(object)]
pub struct IndexBrief {
    pub family: String,
    pub generation: String,
    pub documents: i64,
    #[napi(ts_type = "'verified' | 'retired'")]
    pub status: String,
}

/// A snapshot member.
#[napi(object)]
pub struct MemberBrief {
    #[napi(js_name = "source_id")]
    pub source_id: i64,
    pub path: String,
    #[napi(js_name = "revision_id")]
    pub revision_id: i64,
    pub sha256: String,
}

/// `snapshot:N`.
#[napi(object)]
pub struct SnapshotEvidence {
    #[napi(ts_type = "'snapshot'")]
    pub r#type: String,
    pub id: i64,
    #[napi(js_name = "parent_id")]
    pub parent_id: Either<i64, Null>,
    #[napi(js_name = "job_id")]
    pub job_id: Either<i64, Null>,
    pub chunks: i64,
    #[napi(js_name = "created_at")]
    pub created_at: i64,
    pub current: bool,
    pub indexes: Vec<IndexBrief>,
    pub members: Vec<MemberBrief>,
}

/// One recorded step of a job.
#[napi(object)]
pub struct JobStep {
    pub name: String,
    #[napi(ts_type = "'running' | 'done'")]
    pub status: String,
    #[napi(js_name = "started_at")]
    pub started_at: i64,
    #[napi(js_name = "finished_at")]
    pub finished_at: Either<i64, Null>,
    /// What the step reports: open-ended per step.
    #[napi(ts_type = "unknown")]
    pub detail: serde_json::Value,
}

/// `job:N`: a job's row, steps and receipt, with its live progress while it runs.
#[napi(object)]
pub struct JobStatus {
    #[napi(ts_type = "'job'")]
    pub r#type: String,
    pub id: i64,
    #[napi(ts_type = "'add' | 'rebuild' | 'withdraw' | 'delete-original'")]
    pub kind: String,
    #[napi(
        ts_type = "'queued' | 'running' | 'succeeded' | 'partial' | 'failed' | 'interrupted' | 'cancelled'"
    )]
    pub status: String,
    pub request: JobRequest,
    pub receipt: Either<Receipt, Null>,
    pub error: Either<String, Null>,
    #[napi(js_name = "created_at")]
    pub created_at: i64,
    #[napi(js_name = "finished_at")]
    pub finished_at: Either<i64, Null>,
    pub steps: Vec<JobStep>,
    pub progress: Either<Progress, Null>,
}

/// Which page of jobs `listJobs` returns.
#[napi(object)]
pub struct ListJobsOptions {
    /// Page size (default 50, 1 to 500).
    pub limit: Option<u32>,
    /// Only jobs with an id below this one: the previous page's `next_before`.
    pub before: Option<i64>,
}

/// One page of the workspace's jobs, newest first.
#[napi(object)]
pub struct JobList {
    /// Each job exactly as `jobStatus` returns it, by descending id.
    pub jobs: Vec<JobStatus>,
    /// The `before` of the next page; null when no older job is left.
    #[napi(js_name = "next_before")]
    pub next_before: Either<i64, Null>,
}

impl From<core::JobList> for JobList {
    fn from(value: core::JobList) -> Self {
        let core::JobList { jobs, next_before } = value;
        Self {
            jobs: jobs.into_iter().map(Into::into).collect(),
            next_before: nullable(next_before),
        }
    }
}

/// One object with its provenance; `type` says which.
pub type Evidence = Either7<
    SourceEvidence,
    RevisionEvidence,
    UnitEvidence,
    ChunkEvidence,
    SnapshotEvidence,
    JobStatus,
    ExtractionEvidence,
>;

/// `extraction:N`: every unit of one revision's extraction, in document order.
#[napi(object)]
pub struct ExtractionEvidence {
    #[napi(ts_type = "'extraction'")]
    pub r#type: String,
    pub id: i64,
    #[napi(js_name = "revision_id")]
    pub revision_id: i64,
    pub path: String,
    pub parser: String,
    pub document: Option<DocumentBrief>,
    pub units: Vec<UnitBrief>,
}

/// One unit as listed under its extraction.
#[napi(object)]
pub struct UnitBrief {
    pub id: i64,
    #[napi(js_name = "unit_type", ts_type = "UnitType")]
    pub unit_type: String,
    #[napi(js_name = "heading_path")]
    pub heading_path: Vec<String>,
    pub document: Option<UnitDocument>,
    pub text: String,
}

fn extraction(value: core::ExtractionEvidence) -> ExtractionEvidence {
    let core::ExtractionEvidence {
        id,
        revision_id,
        path,
        parser,
        document,
        units,
    } = value;
    ExtractionEvidence {
        r#type: "extraction".into(),
        id,
        revision_id,
        path,
        parser,
        document: document.map(document_brief),
        units: units
            .into_iter()
            .map(|u| {
                let core::UnitBrief {
                    id,
                    unit_type,
                    heading_path,
                    document,
                    text,
                } = u;
                UnitBrief {
                    id,
                    unit_type: unit_type.to_string(),
                    heading_path,
                    document: document.map(unit_document),
                    text,
                }
            })
            .collect(),
    }
}

impl From<core::JobStatus> for JobStatus {
    fn from(value: core::JobStatus) -> Self {
        let core::JobStatus {
            id,
            kind,
            status,
            request,
            receipt,
            error,
            created_at,
            finished_at,
            steps,
            progress,
        } = value;
        Self {
            r#type: "job".into(),
            id,
            kind: kind.as_str().into(),
            status: status.as_str().into(),
            request: request.into(),
            receipt: nullable(receipt.map(Into::into)),
            error: nullable(error),
            created_at,
            finished_at: nullable(finished_at),
            steps: steps
                .into_iter()
                .map(|s| {
                    let core::JobStep {
                        name,
                        status,
                        started_at,
                        finished_at,
                        detail,
                    } = s;
                    JobStep {
                        name,
                        status: status.as_str().into(),
                        started_at,
                        finished_at: nullable(finished_at),
                        detail,
                    }
                })
                .collect(),
            progress: nullable(progress.map(Into::into)),
        }
    }
}

/// The napi form of an inspected object.
pub fn evidence(value: core::Evidence) -> Evidence {
    match value {
        core::Evidence::Source(s) => Either7::A(source(*s)),
        core::Evidence::Revision(r) => Either7::B(revision(*r)),
        core::Evidence::Unit(u) => Either7::C(unit(*u)),
        core::Evidence::Chunk(c) => Either7::D(chunk(*c)),
        core::Evidence::Snapshot(s) => Either7::E(snapshot(*s)),
        core::Evidence::Job(j) => Either7::F((*j).into()),
        core::Evidence::Extraction(e) => Either7::G(extraction(*e)),
    }
}

fn source(value: core::SourceEvidence) -> SourceEvidence {
    let core::SourceEvidence {
        id,
        uri,
        path,
        root,
        collection,
        kind,
        format,
        facets,
        status,
        sensitivity,
        created_at,
        updated_at,
        revisions,
    } = value;
    SourceEvidence {
        r#type: "source".into(),
        id,
        uri,
        path,
        root,
        collection,
        kind: nullable(kind),
        format,
        facets: serde_json::Value::Object(facets),
        status: status.as_str().into(),
        sensitivity: nullable(sensitivity),
        created_at,
        updated_at,
        revisions: revisions
            .into_iter()
            .map(|r| {
                let core::RevisionBrief {
                    id,
                    seq,
                    sha256,
                    size,
                    captured_at,
                } = r;
                RevisionBrief {
                    id,
                    seq,
                    sha256,
                    size,
                    captured_at,
                }
            })
            .collect(),
    }
}

fn revision(value: core::RevisionEvidence) -> RevisionEvidence {
    let core::RevisionEvidence {
        id,
        source_id,
        path,
        seq,
        sha256,
        size,
        metadata,
        captured_at,
        extractions,
        tombstones,
    } = value;
    RevisionEvidence {
        r#type: "revision".into(),
        tombstones: tombstones
            .into_iter()
            .map(|t| {
                let core::RevisionTombstone {
                    kind,
                    sha256,
                    reason,
                    deleted_at,
                    job_id,
                } = t;
                RevisionTombstone {
                    kind: kind.as_str().into(),
                    sha256,
                    reason,
                    deleted_at,
                    job_id: nullable(job_id),
                }
            })
            .collect(),
        id,
        source_id,
        path,
        seq,
        sha256,
        size,
        metadata,
        captured_at,
        extractions: extractions
            .into_iter()
            .map(|e| {
                let core::ExtractionBrief {
                    id,
                    parser,
                    fingerprint,
                    units,
                    chunks,
                    diagnostics,
                    document,
                } = e;
                ExtractionBrief {
                    id,
                    parser,
                    fingerprint,
                    units,
                    chunks,
                    diagnostics: diagnostics.into_iter().map(Into::into).collect(),
                    document: document.map(document_brief),
                }
            })
            .collect(),
    }
}

fn unit(value: core::UnitEvidence) -> UnitEvidence {
    let core::UnitEvidence {
        id,
        unit_type,
        extraction_id,
        revision_id,
        path,
        sha256,
        heading_path,
        anchor,
        tokens,
        locator,
        document,
        citation,
        identifiers,
        text,
    } = value;
    let core::UnitLocator {
        byte_start,
        byte_end,
        line_start,
        col_start,
        line_end,
        col_end,
        json_pointer,
    } = locator;
    UnitEvidence {
        r#type: "unit".into(),
        id,
        unit_type: unit_type.to_string(),
        extraction_id,
        revision_id,
        path,
        sha256,
        heading_path,
        anchor: nullable(anchor),
        tokens,
        locator: UnitLocator {
            byte_start,
            byte_end,
            line_start,
            col_start,
            line_end,
            col_end,
            json_pointer: nullable(json_pointer),
        },
        document: document.map(unit_document),
        citation,
        identifiers: identifiers
            .into_iter()
            .map(|i| {
                let core::IdentifierEntry { kind, value } = i;
                IdentifierEntry { kind, value }
            })
            .collect(),
        text,
    }
}

fn chunk(value: core::ChunkEvidence) -> ChunkEvidence {
    let core::ChunkEvidence {
        id,
        extraction_id,
        revision_id,
        path,
        sha256,
        owner,
        units,
        tokens,
        locator,
        citation,
        capsule,
        text,
        regions,
    } = value;
    let core::ChunkLocator {
        byte_start,
        byte_end,
        line_start,
        line_end,
    } = locator;
    let core::CapsuleView {
        title,
        kind,
        heading_path,
        table_header,
        signature,
    } = capsule;
    ChunkEvidence {
        regions: regions.iter().map(|b| b.to_vec()).collect(),
        r#type: "chunk".into(),
        id,
        extraction_id,
        revision_id,
        path,
        sha256,
        owner,
        units: vec![units.0, units.1],
        tokens,
        locator: ChunkLocator {
            byte_start,
            byte_end,
            line_start,
            line_end,
        },
        citation,
        capsule: CapsuleView {
            title,
            kind,
            heading_path,
            table_header,
            signature,
        },
        text,
    }
}

fn snapshot(value: core::SnapshotEvidence) -> SnapshotEvidence {
    let core::SnapshotEvidence {
        id,
        parent_id,
        job_id,
        chunks,
        created_at,
        current,
        indexes,
        members,
    } = value;
    SnapshotEvidence {
        r#type: "snapshot".into(),
        id,
        parent_id: nullable(parent_id),
        job_id: nullable(job_id),
        chunks,
        created_at,
        current,
        indexes: indexes
            .into_iter()
            .map(|i| {
                let core::IndexBrief {
                    family,
                    generation,
                    documents,
                    status,
                } = i;
                IndexBrief {
                    family,
                    generation,
                    documents,
                    status: status.as_str().into(),
                }
            })
            .collect(),
        members: members
            .into_iter()
            .map(|m| {
                let core::MemberBrief {
                    source_id,
                    path,
                    revision_id,
                    sha256,
                } = m;
                MemberBrief {
                    source_id,
                    path,
                    revision_id,
                    sha256,
                }
            })
            .collect(),
    }
}
