//! `inspect ID`'s reads: one object of the corpus with its provenance (source, revision,
//! extraction, unit, chunk, snapshot), as the store holds it. The types are the contract
//! `manage` re-exports; a job's status is `manage`'s (it carries the ingest request and receipt).

use super::tx::{Row, Tx, args};
use serde::{Deserialize, Serialize};

use crate::error::{Diagnostic, Error, Result};
use crate::unit::UnitType;

crate::wire::wire_enum! {
    /// Whether a source is in new snapshots.
    pub enum SourceStatus {
        /// Captured; new snapshots hold it.
        Active = "active",
        /// A sync no longer found its file, or it was withdrawn; its history stays.
        Removed = "removed",
    }
}

crate::wire::wire_enum! {
    /// Why a revision's bytes are gone.
    pub enum TombstoneKind {
        /// Erased on request (a legal request): its text is out of every snapshot.
        Erasure = "erasure",
        /// The retention policy expired the original; what was derived from it stays.
        Retention = "retention",
    }
}

crate::wire::wire_enum! {
    /// Where an index generation stands.
    pub enum BatchStatus {
        /// Built and checked against its snapshot's chunk count.
        Verified = "verified",
        /// Its files were removed (no snapshot references it any more).
        Retired = "retired",
    }
}

/// A revision as listed under its source.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RevisionBrief {
    /// The revision's row id (`revision:N`).
    pub id: i64,
    /// Its number among its source's revisions, from 1 in capture order.
    pub seq: i64,
    /// Hex sha256 of the captured bytes (the original artifact).
    pub sha256: String,
    /// Size of those bytes, in bytes.
    pub size: i64,
    /// When it was captured, in milliseconds since the Unix epoch.
    pub captured_at: i64,
}

/// `source:N`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename = "source")]
pub struct SourceEvidence {
    /// The source's row id (`source:N`).
    pub id: i64,
    /// Its identity in its collection: `file://` and its absolute path, reversibly escaped.
    pub uri: String,
    /// Its path relative to `root`, with `/` separators.
    pub path: String,
    /// The capture root it was first captured under.
    pub root: String,
    /// The name of its collection.
    pub collection: String,
    /// The kind it was assigned (`None`: none, only its format).
    pub kind: Option<String>,
    /// How its bytes are parsed.
    pub format: String,
    /// Its facet values, by name.
    #[serde(default)]
    pub facets: serde_json::Map<String, serde_json::Value>,
    /// `active`, or `removed` once a sync no longer finds its file or it is withdrawn.
    pub status: SourceStatus,
    /// Its sensitivity label (`add --sensitivity`, `manage sensitivity`); `None` for a source
    /// captured before labels existed.
    pub sensitivity: Option<String>,
    /// When it was first captured, in milliseconds since the Unix epoch.
    pub created_at: i64,
    /// When its row last changed (a capture, a removal, a relabel), in milliseconds
    /// since the Unix epoch.
    pub updated_at: i64,
    /// Every revision of it, oldest first (by `seq`).
    pub revisions: Vec<RevisionBrief>,
}

/// An extraction as listed under its revision.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ExtractionBrief {
    /// The extraction's row id (`extraction:N`).
    pub id: i64,
    /// What read it: `<format>@<parser version>` (`markdown@2`), or a document's reader and
    /// its version (`tychora-docx@2`).
    pub parser: String,
    /// Hex hash of what it was read with (parser and reader versions, kind, chunking,
    /// tokenizer, identifier patterns): a change to any of them re-extracts.
    pub fingerprint: String,
    /// How many units it made, sections included.
    pub units: i64,
    /// How many chunk windows it made.
    pub chunks: i64,
    /// What its parser reported about the file (what was left out and why).
    pub diagnostics: Vec<Diagnostic>,
    /// For a document: its reader, derived text and what was kept out of units.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub document: Option<DocumentBrief>,
}

/// A document extraction's reader, derived text, furniture and outside references.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DocumentBrief {
    /// `docx`, `pdf` or `image`.
    pub format: String,
    /// The reader and its version (`tychora-docx@2`), with `+` and the OCR engine's when
    /// it recognized text.
    pub extractor: String,
    /// A PDF's page count.
    pub pages: Option<i64>,
    /// The artifact the units' byte and line spans index.
    pub derived_sha256: String,
    /// Headers, footers and page numbers: kept out of units.
    pub furniture: Vec<FurnitureEntry>,
    /// Relationship targets outside the package: recorded, never followed.
    pub external_targets: Vec<String>,
    /// Pictures: the image file itself, or those a document embeds.
    #[serde(default)]
    pub assets: Vec<AssetEntry>,
}

/// A picture kept as a visual asset: its bytes are the artifact `sha256`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AssetEntry {
    /// Its position among the extraction's pictures (1-based).
    pub ordinal: i64,
    /// The artifact of its bytes: the embedded picture, a PDF figure drawn to PNG, or an
    /// image file's original.
    pub sha256: String,
    /// `image/png`, `image/jpeg`, ….
    pub media_type: String,
    /// Pixels across (`None` when its header could not be read).
    pub width: Option<i64>,
    /// Pixels down (`None` when its header could not be read).
    pub height: Option<i64>,
    /// `image` (the file itself), or the DOCX part that draws it.
    pub part: String,
    /// DOCX: `rId7 → word/media/image2.png`.
    pub relationship: Option<String>,
    /// PDF: its page and box `[x0, y0, x1, y1]` in points, origin bottom-left.
    pub page: Option<i64>,
    /// PDF: where it is drawn, `[x0, y0, x1, y1]` in points (`None` for other formats).
    pub bbox: Option<[f64; 4]>,
    /// Its alt text (DOCX `descr`, or `title`); `None` when it has none.
    pub alt_text: Option<String>,
    /// Its caption (a PDF figure's `Figure 3: …` block; for an image file, the words of
    /// its name).
    pub caption: Option<String>,
    /// Text of the paragraph it is anchored in.
    pub context: Option<String>,
    /// The unit that finds it.
    pub unit_id: Option<i64>,
    /// What vision models said it shows: derived evidence, never a quotation of the source.
    #[serde(default)]
    pub descriptions: Vec<super::descriptions::DescriptionEntry>,
}

/// One header, footer or page-number block.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FurnitureEntry {
    /// Where it was found: the DOCX part (`header1`, `footer2`, …) or a PDF page (`p.3`).
    pub part: String,
    /// Its text.
    pub text: String,
}

/// Where a unit sits in its document, with a table row's cells.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct UnitDocument {
    /// `body`, `textbox`, `footnotes`, `endnotes`, `comments` (DOCX; `header1`, … for text a
    /// header hides), `page` (PDF) or `image` (an image file).
    pub part: String,
    /// DOCX: the index of its paragraph (`w:p`) in the part, 1-based; `None` for a table
    /// row and for PDF and image units.
    pub paragraph: Option<i64>,
    /// A table row's table, 1-based: in its part (DOCX) or in the document (PDF, where a
    /// table continued on the next page keeps its number).
    pub table: Option<i64>,
    /// A table row's row in its table, 1-based (PDF: counted across the pages it continues
    /// on).
    pub row: Option<i64>,
    /// Whether it is a header row of its table.
    pub header: bool,
    /// A list item's (or numbered heading's) rendered marker: `1.`, `a)`, `•`.
    pub marker: Option<String>,
    /// A heading's level (1 = top) or a list item's depth (1 = outermost).
    pub level: Option<i64>,
    /// PDF pages (first and last).
    pub page_start: Option<i64>,
    /// The last PDF page: written equal to `page_start`, as a unit is read from one page.
    pub page_end: Option<i64>,
    /// PDF boxes `[page, x0, y0, x1, y1]` in points, origin bottom-left.
    pub boxes: Vec<[f64; 5]>,
    /// Findings such as `hidden: invisible render mode`.
    pub flags: Vec<String>,
    /// `text`, or `ocr` for text recognized from an image of the page.
    pub origin: String,
    /// OCR: the recognizer's confidence, 0 to 1.
    pub confidence: Option<f64>,
    /// A table row's cells in grid-column order; empty for any other unit.
    pub cells: Vec<CellEntry>,
}

impl UnitDocument {
    /// The place a citation names.
    #[must_use]
    pub fn place(&self) -> crate::unit::DocPlace {
        crate::unit::DocPlace {
            part: self.part.clone(),
            paragraph: self.paragraph,
            table: self.table,
            row: self.row,
            page_start: self.page_start,
            page_end: self.page_end,
            flags: self.flags.clone(),
            origin: (self.origin != "text").then(|| self.origin.clone()),
        }
    }
}

/// A table cell.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CellEntry {
    /// Its first grid column (0-based).
    pub col: i64,
    /// Grid columns it spans (1 when not merged).
    pub col_span: i64,
    /// Whether it continues a vertical merge with the cell above.
    pub continues_above: bool,
    /// Its text.
    pub text: String,
    /// PDF: the cell's box `[x0, y0, x1, y1]` in points on its row's page.
    pub bbox: Option<[f64; 4]>,
}

/// `revision:N`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename = "revision")]
pub struct RevisionEvidence {
    /// The revision's row id (`revision:N`).
    pub id: i64,
    /// Its source's row id (`source:N`).
    pub source_id: i64,
    /// Its source's path relative to its root, with `/` separators.
    pub path: String,
    /// Its number among its source's revisions, from 1 in capture order.
    pub seq: i64,
    /// Hex sha256 of the captured bytes (the original artifact).
    pub sha256: String,
    /// Size of those bytes, in bytes.
    pub size: i64,
    /// Capture provenance (path, kind, Git commit and branch…): open-ended by design.
    pub metadata: serde_json::Value,
    /// When it was captured, in milliseconds since the Unix epoch.
    pub captured_at: i64,
    /// Its extractions, oldest first: one per fingerprint it was read with.
    pub extractions: Vec<ExtractionBrief>,
    /// Why its bytes (or what was derived from them) are gone, when they are: an erasure on
    /// request takes the text out of every snapshot, a retention tombstone only the original.
    pub tombstones: Vec<RevisionTombstone>,
}

/// A tombstone on a revision, as `inspect revision:N` shows it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RevisionTombstone {
    /// `erasure` (on request) or `retention` (the policy).
    pub kind: TombstoneKind,
    /// The erased artifact: the original bytes or, on erasure, a document's derived text
    /// or a picture taken from them.
    pub sha256: String,
    /// Why: the reason given with the request, or the retention rule that expired it.
    pub reason: String,
    /// When it was erased, in milliseconds since the Unix epoch.
    pub deleted_at: i64,
    /// The erasure's job (`job:N`); `None` for a retention tombstone.
    pub job_id: Option<i64>,
}

/// A unit's exact place in its revision's bytes.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct UnitLocator {
    /// Offset of its first byte (for a document, in its derived text:
    /// `DocumentBrief::derived_sha256`).
    pub byte_start: i64,
    /// Offset one past its last byte.
    pub byte_end: i64,
    /// Line of its first byte (1-based).
    pub line_start: i64,
    /// Column of its first byte (1-based, in bytes).
    pub col_start: i64,
    /// Line of its last byte (1-based).
    pub line_end: i64,
    /// Column one past its last byte (1-based, in bytes).
    pub col_end: i64,
    /// A JSON record's pointer (`/requirements/3`); `None` for other units.
    pub json_pointer: Option<String>,
}

/// An identifier a unit registers for the exact channel.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct IdentifierEntry {
    /// What registered it: its parser (`anchor`, `json_id`, `symbol`, `document`, …), or
    /// `heading:P` / `mention:P` for a pack pattern `P` matched in a leaf unit's text.
    pub kind: String,
    /// The identifier as written, or as its pattern's canonical template spells it.
    pub value: String,
}

/// `unit:N`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename = "unit")]
pub struct UnitEvidence {
    /// The unit's row id (`unit:N`).
    pub id: i64,
    /// What its parser made of it: `section`, `heading`, `paragraph`, `list_item`,
    /// `table_row`, `code_block`, `record`, `hidden_text`, ….
    pub unit_type: UnitType,
    /// The extraction it belongs to (`extraction:N`).
    pub extraction_id: i64,
    /// The revision that extraction read (`revision:N`).
    pub revision_id: i64,
    /// Its source's path relative to its root, with `/` separators.
    pub path: String,
    /// Hex sha256 of the revision's original bytes.
    pub sha256: String,
    /// The headings from the document's root down to its section.
    pub heading_path: Vec<String>,
    /// A stable anchor (a heading's slug, a JSON record's id); `None` when it has none.
    pub anchor: Option<String>,
    /// `cl100k_base` tokens in its text (0 for a section unit: only leaves are counted).
    pub tokens: i64,
    /// Its span in the revision's bytes, or in a document's derived text.
    pub locator: UnitLocator,
    /// For a document's unit: its part, paragraph, table row and cells.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub document: Option<UnitDocument>,
    /// `path:12-14`, or for a document `file.docx ¶34`.
    pub citation: String,
    /// The identifiers it registers for the exact channel, in the order written.
    pub identifiers: Vec<IdentifierEntry>,
    /// Its indexed and displayed text.
    pub text: String,
}

/// A chunk's place in its revision's bytes.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ChunkLocator {
    /// Offset of its first byte (for a document, in its derived text:
    /// `DocumentBrief::derived_sha256`).
    pub byte_start: i64,
    /// Offset one past its last byte.
    pub byte_end: i64,
    /// Line of its first byte (1-based).
    pub line_start: i64,
    /// Line of its last byte (1-based).
    pub line_end: i64,
}

/// The context capsule indexed with a chunk.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CapsuleView {
    /// The document's title: the one its parser found, else its file name (empty for JSON
    /// and JSON Lines records).
    pub title: String,
    /// The source's format (the field predates the format/kind split).
    pub kind: String,
    /// The heading path of the window's first unit.
    pub heading_path: Vec<String>,
    /// The table's header row, when the window starts inside a table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table_header: Option<String>,
    /// The declaration of the code symbol the window belongs to (`def f(a, b) -> int:`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
}

/// `chunk:N`, or a segment id `seg_S_C`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename = "chunk")]
pub struct ChunkEvidence {
    /// The chunk's row id (`chunk:N`).
    pub id: i64,
    /// The extraction it belongs to (`extraction:N`).
    pub extraction_id: i64,
    /// The revision that extraction read (`revision:N`).
    pub revision_id: i64,
    /// Its source's path relative to its root, with `/` separators.
    pub path: String,
    /// Hex sha256 of the revision's original bytes.
    pub sha256: String,
    /// Its evidence owner, by unit ordinal (`s12`: a section, `r3`: a record, `u7`: a code
    /// unit, `h4`: hidden text; `doc`: none, the window stands alone). Windows of one owner
    /// consolidate to one vote per channel.
    pub owner: String,
    /// First and last unit id.
    pub units: (i64, i64),
    /// `cl100k_base` tokens in its text.
    pub tokens: i64,
    /// Its span in the revision's bytes, or in a document's derived text.
    pub locator: ChunkLocator,
    /// `path:12-30`, or for a document `file.docx ¶34–36`.
    pub citation: String,
    /// The context capsule indexed with it (never part of its text).
    pub capsule: CapsuleView,
    /// Its indexed text (read from its unit when the window is exactly that one unit).
    pub text: String,
    /// PDF and image windows: the region covered on each page, `[page, x0, y0, x1, y1]`.
    #[serde(default)]
    pub regions: Vec<[f64; 5]>,
}

/// One index generation a snapshot pins.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct IndexBrief {
    /// `lexical`, or `text:<id>` for a text-embedding family.
    pub family: String,
    /// Its name: the lexical directory (`g<ms>-<job>`) or vector file (`….tyv`) under
    /// `indexes/`.
    pub generation: String,
    /// How many documents it holds (one per chunk of the snapshot when published).
    pub documents: i64,
    /// `verified` (built and checked against the chunk count), or `retired` once its
    /// files are removed.
    pub status: BatchStatus,
}

/// A snapshot member.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MemberBrief {
    /// The member source's row id (`source:N`).
    pub source_id: i64,
    /// Its path relative to its root, with `/` separators.
    pub path: String,
    /// The revision of it the snapshot pins (`revision:N`).
    pub revision_id: i64,
    /// Hex sha256 of that revision's original bytes.
    pub sha256: String,
}

/// `snapshot:N`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename = "snapshot")]
pub struct SnapshotEvidence {
    /// The snapshot's row id (`snapshot:N`).
    pub id: i64,
    /// The snapshot that was current when it was published; `None` for the first.
    pub parent_id: Option<i64>,
    /// The job that published it (`job:N`; every snapshot this engine publishes has one).
    pub job_id: Option<i64>,
    /// How many chunks (windows) it publishes.
    pub chunks: i64,
    /// When it was published, in milliseconds since the Unix epoch.
    pub created_at: i64,
    /// Whether it is the workspace's current snapshot, the one queries read by default.
    pub current: bool,
    /// The index generations it pins, one per family.
    pub indexes: Vec<IndexBrief>,
    /// Its sources, each with the revision it pins.
    pub members: Vec<MemberBrief>,
}

/// `extraction:N`: what a parser made of one revision, every unit in document order (what
/// `tychora inspect` shows to check a reader's work against the file).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename = "extraction")]
pub struct ExtractionEvidence {
    /// The extraction's row id (`extraction:N`).
    pub id: i64,
    /// The revision it read (`revision:N`).
    pub revision_id: i64,
    /// Its source's path relative to its root, with `/` separators.
    pub path: String,
    /// What read it: `<format>@<parser version>` (`markdown@2`), or a document's reader and
    /// its version (`tychora-docx@2`).
    pub parser: String,
    /// For a document: its reader, derived text and what was kept out of units.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub document: Option<DocumentBrief>,
    /// Every unit it made, sections included, in document order.
    pub units: Vec<UnitBrief>,
}

/// One unit as listed under its extraction.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct UnitBrief {
    /// The unit's row id (`unit:N`).
    pub id: i64,
    /// What its parser made of it (`section`, `heading`, `paragraph`, `table_row`, …).
    pub unit_type: UnitType,
    /// The headings from the document's root down to its section.
    pub heading_path: Vec<String>,
    /// For a document's unit: its part, paragraph, table row and cells.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub document: Option<UnitDocument>,
    /// Its indexed and displayed text.
    pub text: String,
}

/// A JSON column read back into its type; a row that does not fit is a corrupt corpus.
pub(crate) fn json<T: serde::de::DeserializeOwned>(text: &str, what: &str) -> Result<T> {
    serde_json::from_str(text).map_err(|e| Error::Corrupt(format!("{what}: {e}")))
}

fn list<T>(
    tx: &dyn Tx,
    sql: &str,
    id: i64,
    row: impl FnMut(&dyn Row) -> Result<T>,
) -> Result<Vec<T>> {
    tx.rows(sql, args![id], row)
}

/// `source:N` with its provenance, when the store holds it.
///
/// # Errors
/// The store's errors; `E_CORRUPT` for a JSON column that does not read.
pub fn source(tx: &dyn Tx, id: i64) -> Result<Option<SourceEvidence>> {
    let Some(mut found) = tx.optional(
            "SELECT s.id, s.uri, s.rel_path, ro.path, c.name, s.kind, s.status, s.created_at, s.updated_at, s.format, s.sensitivity
             FROM sources s JOIN collections c ON c.id = s.collection_id JOIN roots ro ON ro.id = s.root_id WHERE s.id = ?1",
            args![id],
            |r| {
                Ok(SourceEvidence {
                    id: r.get(0)?,
                    uri: r.get(1)?,
                    path: r.get(2)?,
                    root: r.get(3)?,
                    collection: r.get(4)?,
                    kind: r.get(5)?,
                    format: r.get(9)?,
                    facets: serde_json::Map::new(),
                    status: r.get(6)?,
                    sensitivity: r.get(10)?,
                    created_at: r.get(7)?,
                    updated_at: r.get(8)?,
                    revisions: Vec::new(),
                })
            },
        )?
    else {
        return Ok(None);
    };
    found.facets = crate::store::facets::source_values(tx, id)?;
    found.revisions = list(
        tx,
        "SELECT id, seq, sha256, size, captured_at FROM revisions WHERE source_id = ?1 ORDER BY seq",
        id,
        |r| {
            Ok(RevisionBrief {
                id: r.get(0)?,
                seq: r.get(1)?,
                sha256: r.get(2)?,
                size: r.get(3)?,
                captured_at: r.get(4)?,
            })
        },
    )?;
    Ok(Some(found))
}

/// `revision:N` with its provenance, when the store holds it.
///
/// # Errors
/// The store's errors; `E_CORRUPT` for a JSON column that does not read.
pub fn revision(tx: &dyn Tx, id: i64) -> Result<Option<RevisionEvidence>> {
    let Some((mut found, metadata)) = tx.optional(
            "SELECT r.id, r.source_id, s.rel_path, r.seq, r.sha256, r.size, r.metadata_json, r.captured_at
             FROM revisions r JOIN sources s ON s.id = r.source_id WHERE r.id = ?1",
            args![id],
            |r| {
                Ok((
                    RevisionEvidence {
                        id: r.get(0)?,
                        source_id: r.get(1)?,
                        path: r.get(2)?,
                        seq: r.get(3)?,
                        sha256: r.get(4)?,
                        size: r.get(5)?,
                        metadata: serde_json::Value::Null,
                        captured_at: r.get(7)?,
                        extractions: Vec::new(),
                        tombstones: Vec::new(),
                    },
                    r.get::<String>(6)?,
                ))
            },
        )?
    else {
        return Ok(None);
    };
    found.metadata = json(&metadata, "revision metadata")?;
    found.tombstones = list(
        tx,
        "SELECT kind, sha256, reason, deleted_at, job_id FROM tombstones WHERE revision_id = ?1 ORDER BY id",
        id,
        |r| {
            Ok(RevisionTombstone {
                kind: r.get(0)?,
                sha256: r.get(1)?,
                reason: r.get(2)?,
                deleted_at: r.get(3)?,
                job_id: r.get(4)?,
            })
        },
    )?;
    let rows = list(
        tx,
        "SELECT id, parser, fingerprint, unit_count, chunk_count, diagnostics_json FROM extractions WHERE revision_id = ?1 ORDER BY id",
        id,
        |r| {
            Ok((
                r.get::<i64>(0)?,
                r.get::<String>(1)?,
                r.get::<String>(2)?,
                r.get::<i64>(3)?,
                r.get::<i64>(4)?,
                r.get::<String>(5)?,
            ))
        },
    )?;
    for (id, parser, fingerprint, units, chunks, diagnostics) in rows {
        found.extractions.push(ExtractionBrief {
            id,
            parser,
            fingerprint,
            units,
            chunks,
            diagnostics: json(&diagnostics, "extraction diagnostics")?,
            document: document_brief(tx, id)?,
        });
    }
    Ok(Some(found))
}

/// `unit:N` with its provenance, when the store holds it.
///
/// # Errors
/// The store's errors; `E_CORRUPT` for a JSON column that does not read.
pub fn unit(tx: &dyn Tx, id: i64) -> Result<Option<UnitEvidence>> {
    let Some((mut found, heading_path)) = tx.optional(
            "SELECT u.id, u.unit_type, u.extraction_id, e.revision_id, s.rel_path, r.sha256, u.heading_path_json, u.anchor, u.token_count,
                    l.byte_start, l.byte_end, l.line_start, l.col_start, l.line_end, l.col_end, l.json_pointer, u.text
             FROM evidence_units u JOIN locators l ON l.unit_id = u.id JOIN extractions e ON e.id = u.extraction_id
             JOIN revisions r ON r.id = e.revision_id JOIN sources s ON s.id = r.source_id WHERE u.id = ?1",
            args![id],
            |r| {
                Ok((
                    UnitEvidence {
                        id: r.get(0)?,
                        unit_type: r.get(1)?,
                        extraction_id: r.get(2)?,
                        revision_id: r.get(3)?,
                        path: r.get(4)?,
                        sha256: r.get(5)?,
                        heading_path: Vec::new(),
                        anchor: r.get(7)?,
                        tokens: r.get(8)?,
                        locator: UnitLocator {
                            byte_start: r.get(9)?,
                            byte_end: r.get(10)?,
                            line_start: r.get(11)?,
                            col_start: r.get(12)?,
                            line_end: r.get(13)?,
                            col_end: r.get(14)?,
                            json_pointer: r.get(15)?,
                        },
                        document: None,
                        citation: String::new(),
                        identifiers: Vec::new(),
                        text: r.get(16)?,
                    },
                    r.get::<String>(6)?,
                ))
            },
        )?
    else {
        return Ok(None);
    };
    found.heading_path = json(&heading_path, "unit heading path")?;
    found.document = unit_document(tx, id)?;
    found.citation = match &found.document {
        Some(d) => crate::unit::document_citation(&found.path, &d.place(), &d.place()),
        None => format!(
            "{}:{}-{}",
            found.path, found.locator.line_start, found.locator.line_end
        ),
    };
    found.identifiers = list(
        tx,
        "SELECT kind, value FROM identifiers WHERE unit_id = ?1 ORDER BY id",
        id,
        |r| {
            Ok(IdentifierEntry {
                kind: r.get(0)?,
                value: r.get(1)?,
            })
        },
    )?;
    Ok(Some(found))
}

/// `extraction:N` with its provenance, when the store holds it.
///
/// # Errors
/// The store's errors; `E_CORRUPT` for a JSON column that does not read.
pub fn extraction(tx: &dyn Tx, id: i64) -> Result<Option<ExtractionEvidence>> {
    let Some(mut found) = tx.optional(
            "SELECT e.id, e.revision_id, s.rel_path, e.parser FROM extractions e JOIN revisions r ON r.id = e.revision_id
             JOIN sources s ON s.id = r.source_id WHERE e.id = ?1",
            args![id],
            |r| {
                Ok(ExtractionEvidence {
                    id: r.get(0)?,
                    revision_id: r.get(1)?,
                    path: r.get(2)?,
                    parser: r.get(3)?,
                    document: None,
                    units: Vec::new(),
                })
            },
        )?
    else {
        return Ok(None);
    };
    found.document = document_brief(tx, id)?;
    let rows = list(
        tx,
        "SELECT id, unit_type, heading_path_json, text FROM evidence_units WHERE extraction_id = ?1 ORDER BY ordinal",
        id,
        |r| {
            Ok((
                r.get::<i64>(0)?,
                r.get::<UnitType>(1)?,
                r.get::<String>(2)?,
                r.get::<String>(3)?,
            ))
        },
    )?;
    let mut places = if found.document.is_some() {
        unit_documents(
            tx,
            "unit_id IN (SELECT id FROM evidence_units WHERE extraction_id = ?1)",
            id,
        )?
    } else {
        std::collections::HashMap::new()
    };
    for (unit_id, unit_type, heading_path, text) in rows {
        found.units.push(UnitBrief {
            id: unit_id,
            unit_type,
            heading_path: json(&heading_path, "unit heading path")?,
            document: places.remove(&unit_id),
            text,
        });
    }
    Ok(Some(found))
}

fn unit_document(tx: &dyn Tx, id: i64) -> Result<Option<UnitDocument>> {
    Ok(unit_documents(tx, "unit_id = ?1", id)?.remove(&id))
}

/// The document places (with cells) of the units `which` selects (`unit_id = ?1`, or every unit
/// of an extraction), in two queries whatever their number.
fn unit_documents(
    tx: &dyn Tx,
    which: &str,
    id: i64,
) -> Result<std::collections::HashMap<i64, UnitDocument>> {
    let mut found: std::collections::HashMap<i64, UnitDocument> = list(
        tx,
        &format!("SELECT unit_id, part, paragraph, table_no, row_no, header, marker, level, page_start, page_end, boxes_json, flags_json, origin, confidence FROM doc_locators WHERE {which}"),
        id,
        |r| {
            Ok((
                r.get(0)?,
                UnitDocument {
                    part: r.get(1)?,
                    paragraph: r.get(2)?,
                    table: r.get(3)?,
                    row: r.get(4)?,
                    header: r.get(5)?,
                    marker: r.get(6)?,
                    level: r.get(7)?,
                    page_start: r.get(8)?,
                    page_end: r.get(9)?,
                    boxes: r
                        .get::<Option<String>>(10)?
                        .and_then(|b| serde_json::from_str(&b).ok())
                        .unwrap_or_default(),
                    flags: serde_json::from_str(&r.get::<String>(11)?).unwrap_or_default(),
                    origin: r.get(12)?,
                    confidence: r.get(13)?,
                    cells: Vec::new(),
                },
            ))
        },
    )?
    .into_iter()
    .collect();
    let cells = list(
        tx,
        &format!(
            "SELECT unit_id, col, col_span, continues_above, text, box_json FROM table_cells WHERE {which} ORDER BY unit_id, col"
        ),
        id,
        |r| {
            Ok((
                r.get::<i64>(0)?,
                CellEntry {
                    col: r.get(1)?,
                    col_span: r.get(2)?,
                    continues_above: r.get(3)?,
                    text: r.get(4)?,
                    bbox: r
                        .get::<Option<String>>(5)?
                        .and_then(|b| serde_json::from_str(&b).ok()),
                },
            ))
        },
    )?;
    for (unit, cell) in cells {
        if let Some(doc) = found.get_mut(&unit) {
            doc.cells.push(cell);
        }
    }
    Ok(found)
}

fn document_brief(tx: &dyn Tx, extraction_id: i64) -> Result<Option<DocumentBrief>> {
    let Some((format, extractor, derived_sha256, furniture, external, pages)) = tx.optional(
            "SELECT format, extractor, derived_sha256, furniture_json, external_json, pages FROM doc_extractions WHERE extraction_id = ?1",
            args![extraction_id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get::<String>(3)?, r.get::<String>(4)?, r.get(5)?)),
        )?
    else {
        return Ok(None);
    };
    Ok(Some(DocumentBrief {
        format,
        extractor,
        pages,
        derived_sha256,
        furniture: json(&furniture, "document furniture")?,
        external_targets: json(&external, "document external targets")?,
        assets: tx
            .rows(
                "SELECT ordinal, sha256, media_type, width, height, part, relationship, alt_text, caption, context, unit_id, page, box_json
                 FROM visual_assets WHERE extraction_id = ?1 ORDER BY ordinal",
                args![extraction_id],
                |r| {
                Ok(AssetEntry {
                    ordinal: r.get(0)?,
                    sha256: r.get(1)?,
                    media_type: r.get(2)?,
                    width: r.get(3)?,
                    height: r.get(4)?,
                    part: r.get(5)?,
                    relationship: r.get(6)?,
                    alt_text: r.get(7)?,
                    caption: r.get(8)?,
                    context: r.get(9)?,
                    unit_id: r.get(10)?,
                    page: r.get(11)?,
                    bbox: r
                        .get::<Option<String>>(12)?
                        .and_then(|b| serde_json::from_str(&b).ok()),
                    descriptions: Vec::new(),
                })
            })?
            .into_iter()
            .map(|mut asset| {
                asset.descriptions = super::descriptions::of_asset(tx, &asset.sha256)?;
                Ok(asset)
            })
            .collect::<Result<_>>()?,
    }))
}

/// `chunk:N` with its provenance, when the store holds it.
///
/// # Errors
/// The store's errors; `E_CORRUPT` for a JSON column that does not read.
pub fn chunk(tx: &dyn Tx, id: i64) -> Result<Option<ChunkEvidence>> {
    let Some((capsule, found)) = tx.optional(
            "SELECT c.capsule_json, c.id, c.extraction_id, e.revision_id, s.rel_path, r.sha256, c.owner_key, c.first_unit_id, c.last_unit_id, c.token_count,
                    c.byte_start, c.byte_end, c.line_start, c.line_end, COALESCE(c.text, u.text)
             FROM chunks c JOIN extractions e ON e.id = c.extraction_id JOIN revisions r ON r.id = e.revision_id
             JOIN sources s ON s.id = r.source_id JOIN evidence_units u ON u.id = c.first_unit_id WHERE c.id = ?1",
            args![id],
            |r| {
                Ok((
                    r.get::<String>(0)?,
                    (
                        r.get(1)?,
                        r.get(2)?,
                        r.get(3)?,
                        r.get::<String>(4)?,
                        r.get(5)?,
                        r.get(6)?,
                        (r.get(7)?, r.get(8)?),
                        r.get(9)?,
                        ChunkLocator {
                            byte_start: r.get(10)?,
                            byte_end: r.get(11)?,
                            line_start: r.get(12)?,
                            line_end: r.get(13)?,
                        },
                        r.get(14)?,
                    ),
                ))
            },
        )?
    else {
        return Ok(None);
    };
    let (id, extraction_id, revision_id, path, sha256, owner, units, tokens, locator, text) = found;
    let citation = match (unit_document(tx, units.0)?, unit_document(tx, units.1)?) {
        (Some(first), Some(last)) => {
            crate::unit::document_citation(&path, &first.place(), &last.place())
        }
        _ => format!("{path}:{}-{}", locator.line_start, locator.line_end),
    };
    Ok(Some(ChunkEvidence {
        citation,
        id,
        extraction_id,
        revision_id,
        path,
        sha256,
        owner,
        units,
        tokens,
        locator,
        capsule: json(&capsule, "chunk capsule")?,
        text,
        regions: super::hydrate::regions(tx, units.0, units.1)?,
    }))
}

/// `snapshot:N` with its provenance, when the store holds it.
///
/// # Errors
/// The store's errors; `E_CORRUPT` for a JSON column that does not read.
pub fn snapshot(tx: &dyn Tx, id: i64) -> Result<Option<SnapshotEvidence>> {
    let Some(mut found) = tx.optional(
            "SELECT id, parent_id, job_id, chunk_count, created_at, id IS NOT DISTINCT FROM (SELECT current_snapshot_id FROM workspaces WHERE id = 1)
             FROM snapshots WHERE id = ?1",
            args![id],
            |r| {
                Ok(SnapshotEvidence {
                    id: r.get(0)?,
                    parent_id: r.get(1)?,
                    job_id: r.get(2)?,
                    chunks: r.get(3)?,
                    created_at: r.get(4)?,
                    current: r.get(5)?,
                    indexes: Vec::new(),
                    members: Vec::new(),
                })
            },
        )?
    else {
        return Ok(None);
    };
    found.indexes = list(
        tx,
        "SELECT f.name, b.generation, b.doc_count, b.status FROM snapshot_indexes si JOIN index_batches b ON b.id = si.batch_id
         JOIN index_families f ON f.id = si.family_id WHERE si.snapshot_id = ?1 ORDER BY f.name, si.family_id",
        id,
        |r| {
            Ok(IndexBrief {
                family: r.get(0)?,
                generation: r.get(1)?,
                documents: r.get(2)?,
                status: r.get(3)?,
            })
        },
    )?;
    found.members = list(
        tx,
        "SELECT m.source_id, s.rel_path, m.revision_id, r.sha256 FROM snapshot_members m JOIN sources s ON s.id = m.source_id
         JOIN revisions r ON r.id = m.revision_id WHERE m.snapshot_id = ?1 ORDER BY s.rel_path, m.source_id",
        id,
        |r| {
            Ok(MemberBrief {
                source_id: r.get(0)?,
                path: r.get(1)?,
                revision_id: r.get(2)?,
                sha256: r.get(3)?,
            })
        },
    )?;
    Ok(Some(found))
}
