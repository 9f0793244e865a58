//! The commit path's writes (`ingest::commit`): roots, kinds, sources, artifacts, revisions and
//! extractions with their units, locators, identifiers, windows and document rows, in the
//! caller's transaction, on either adapter (`store::tx`).

use super::tx::{Dialect, Param, Statement, Tx, args};
use crate::error::{Error, Result};
use crate::unit::{Span, UnitType};

/// `(extraction, fingerprint, format, kind)` of a member.
pub type MemberFingerprint = (i64, String, String, Option<String>);

/// `(extraction, fingerprint, format, kind)` of a snapshot's members.
///
/// # Errors
/// The store's errors.
pub fn member_fingerprints(tx: &dyn Tx, snapshot_id: i64) -> Result<Vec<MemberFingerprint>> {
    tx.rows(
        "SELECT m.extraction_id, e.fingerprint, s.format, s.kind FROM snapshot_members m
         JOIN extractions e ON e.id = m.extraction_id JOIN sources s ON s.id = m.source_id
         WHERE m.snapshot_id = ?1",
        args![snapshot_id],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
    )
}

/// `(id, encoded path)` of every capture root.
///
/// # Errors
/// The store's errors.
pub fn roots(tx: &dyn Tx) -> Result<Vec<(i64, String)>> {
    tx.rows("SELECT id, path FROM roots ORDER BY id", &[], |r| {
        Ok((r.get(0)?, r.get(1)?))
    })
}

/// The id of the capture root at `path` (encoded), recorded on first use. Two captures naming
/// a new root at once both get its one row (the later insert does nothing, then reads it).
///
/// # Errors
/// The store's errors.
pub fn root_id(tx: &dyn Tx, path: &str, now: i64) -> Result<i64> {
    const FIND: &str = "SELECT id FROM roots WHERE path = ?1";
    if let Some(id) = tx.optional(FIND, args![path], |r| r.get(0))? {
        return Ok(id);
    }
    tx.execute(
        "INSERT INTO roots (path, added_at) VALUES (?1, ?2) ON CONFLICT (path) DO NOTHING",
        args![path, now],
    )?;
    tx.value(FIND, args![path])
}

/// A kind's definition as the pack holds it.
pub struct KindRow<'a> {
    /// Its name.
    pub name: &'a str,
    /// Its version.
    pub version: u32,
    /// Its definition's fingerprint.
    pub fingerprint: &'a str,
    /// The pack defining it.
    pub pack: &'a str,
    /// Its lane.
    pub lane: &'a str,
    /// The definition, JSON.
    pub definition_json: &'a str,
}

/// Records a kind's definition, replacing an older one (unchanged when its fingerprint is).
///
/// # Errors
/// The store's errors.
pub fn record_kind(tx: &dyn Tx, kind: &KindRow<'_>, now: i64) -> Result<()> {
    tx.execute(
        "INSERT INTO kinds (name, version, fingerprint, pack, lane, definition_json, recorded_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
         ON CONFLICT (name) DO UPDATE SET version = excluded.version, fingerprint = excluded.fingerprint, pack = excluded.pack,
           lane = excluded.lane, definition_json = excluded.definition_json, recorded_at = excluded.recorded_at
         WHERE kinds.fingerprint != excluded.fingerprint",
        args![
            kind.name,
            kind.version,
            kind.fingerprint,
            kind.pack,
            kind.lane,
            kind.definition_json,
            now
        ],
    )?;
    Ok(())
}

/// A file as a source of a collection.
pub struct SourceRow<'a> {
    /// Its collection.
    pub collection_id: i64,
    /// How its bytes are parsed.
    pub format: &'a str,
    /// Its kind.
    pub kind: Option<&'a str>,
    /// The root that walked it.
    pub root_id: i64,
    /// Its path under that root.
    pub rel_path: &'a str,
    /// Its identity.
    pub uri: &'a str,
    /// The add's label (`None`: a new source gets `default_sensitivity`, a known one keeps its own).
    pub sensitivity: Option<&'a str>,
    /// The workspace's default label.
    pub default_sensitivity: &'a str,
}

/// Records a source (or makes a known one active again) and returns `(id, root id, path)`: a
/// known source keeps the place it was first captured under, whichever overlapping root walked
/// it this time.
///
/// # Errors
/// The store's errors.
pub fn upsert_source(tx: &dyn Tx, s: &SourceRow<'_>, now: i64) -> Result<(i64, i64, String)> {
    tx.one(
        "INSERT INTO sources (collection_id, format, kind, root_id, rel_path, uri, status, created_at, updated_at, sensitivity) VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'active', ?7, ?7, COALESCE(?8, ?9))
         ON CONFLICT (collection_id, uri) DO UPDATE SET status = 'active', format = excluded.format, kind = excluded.kind, updated_at = excluded.updated_at, sensitivity = COALESCE(?8, sources.sensitivity)
         RETURNING id, root_id, rel_path",
        args![
            s.collection_id,
            s.format,
            s.kind,
            s.root_id,
            s.rel_path,
            s.uri,
            now,
            s.sensitivity,
            s.default_sensitivity
        ],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )
}

/// Records an artifact (bytes already stored under their sha256); a known one is left as it is.
///
/// # Errors
/// The store's errors.
pub fn put_artifact(
    tx: &dyn Tx,
    sha256: &str,
    size: usize,
    media_type: &str,
    now: i64,
) -> Result<()> {
    tx.write(
        "INSERT INTO artifacts (sha256, size, media_type, created_at) VALUES (?1, ?2, ?3, ?4) ON CONFLICT (sha256) DO NOTHING",
        args![sha256, size, media_type, now],
    )
}

/// Bytes the retention policy erased are back (a capture stored them again): their retention
/// tombstone goes.
///
/// # Errors
/// The store's errors.
pub fn clear_retention_tombstone(tx: &dyn Tx, sha256: &str) -> Result<()> {
    tx.execute(
        "DELETE FROM tombstones WHERE sha256 = ?1 AND kind = 'retention'",
        args![sha256],
    )?;
    Ok(())
}

/// The newest revision of a source with these bytes.
///
/// # Errors
/// The store's errors.
pub fn revision_with_bytes(tx: &dyn Tx, source_id: i64, sha256: &str) -> Result<Option<i64>> {
    tx.optional(
        "SELECT id FROM revisions WHERE source_id = ?1 AND sha256 = ?2 ORDER BY seq DESC LIMIT 1",
        args![source_id, sha256],
        |r| r.get(0),
    )
}

/// Records a source's next revision (its bytes as its original); returns its id. (The casts type
/// the placeholders of the `SELECT` for PostgreSQL, which cannot infer them there.) Two captures
/// of one source at once cannot both take the next number: `(source_id, seq)` is unique, and the
/// later one fails with `E_CONFLICT` (its job retries).
///
/// # Errors
/// The store's errors.
pub fn insert_revision(
    tx: &dyn Tx,
    source_id: i64,
    sha256: &str,
    size: usize,
    metadata_json: &str,
    now: i64,
) -> Result<i64> {
    let id = tx.insert(
        "INSERT INTO revisions (source_id, seq, sha256, size, metadata_json, captured_at)
         SELECT CAST(?1 AS BIGINT), COALESCE(MAX(seq), 0) + 1, CAST(?2 AS TEXT), CAST(?3 AS BIGINT), CAST(?4 AS TEXT), CAST(?5 AS BIGINT)
         FROM revisions WHERE source_id = ?1",
        args![source_id, sha256, size, metadata_json, now],
    )?;
    tx.write(
        "INSERT INTO revision_artifacts (revision_id, sha256, role) VALUES (?1, ?2, 'original')",
        args![id, sha256],
    )?;
    Ok(id)
}

/// The extraction of a revision made with this fingerprint.
///
/// # Errors
/// The store's errors.
pub fn extraction_with(tx: &dyn Tx, revision_id: i64, fingerprint: &str) -> Result<Option<i64>> {
    tx.optional(
        "SELECT id FROM extractions WHERE revision_id = ?1 AND fingerprint = ?2",
        args![revision_id, fingerprint],
        |r| r.get(0),
    )
}

/// Replaces an extraction's diagnostics (JSON).
///
/// # Errors
/// The store's errors.
pub fn set_diagnostics(tx: &dyn Tx, extraction_id: i64, json: &str) -> Result<()> {
    tx.execute(
        "UPDATE extractions SET diagnostics_json = ?2 WHERE id = ?1",
        args![extraction_id, json],
    )?;
    Ok(())
}

/// An extraction's diagnostics (JSON).
///
/// # Errors
/// The store's errors.
pub fn diagnostics(tx: &dyn Tx, extraction_id: i64) -> Result<Option<String>> {
    tx.optional(
        "SELECT diagnostics_json FROM extractions WHERE id = ?1",
        args![extraction_id],
        |r| r.get(0),
    )
}

/// An extraction's row.
pub struct ExtractionRow<'a> {
    /// The revision read.
    pub revision_id: i64,
    /// The reader (`markdown@N`, a document extractor).
    pub parser: &'a str,
    /// What the file's reading depends on.
    pub fingerprint: &'a str,
    /// Units.
    pub unit_count: usize,
    /// Windows.
    pub chunk_count: usize,
    /// The reader's diagnostics (JSON).
    pub diagnostics_json: &'a str,
}

/// Records an extraction; returns its id.
///
/// # Errors
/// The store's errors.
pub fn insert_extraction(tx: &dyn Tx, e: &ExtractionRow<'_>, now: i64) -> Result<i64> {
    if let Some(id) = tx.next_id("extractions")? {
        tx.write(
            "INSERT INTO extractions (id, revision_id, parser, fingerprint, unit_count, chunk_count, diagnostics_json, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            args![
                id,
                e.revision_id,
                e.parser,
                e.fingerprint,
                e.unit_count,
                e.chunk_count,
                e.diagnostics_json,
                now
            ],
        )?;
        return Ok(id);
    }
    tx.insert(
        "INSERT INTO extractions (revision_id, parser, fingerprint, unit_count, chunk_count, diagnostics_json, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        args![
            e.revision_id,
            e.parser,
            e.fingerprint,
            e.unit_count,
            e.chunk_count,
            e.diagnostics_json,
            now
        ],
    )
}

/// Records a code file's syntax: the cache entry (when new) and the extraction's language,
/// module and cache key.
///
/// # Errors
/// The store's errors.
pub fn put_code(
    tx: &dyn Tx,
    extraction_id: i64,
    language: &str,
    module: &str,
    key: &str,
    new_payload: Option<&str>,
    now: i64,
) -> Result<()> {
    if let Some(payload) = new_payload {
        tx.execute(
            "INSERT INTO syntax_cache (key, payload, created_at) VALUES (?1, ?2, ?3) ON CONFLICT (key) DO NOTHING",
            args![key, payload, now],
        )?;
    }
    tx.execute(
        "INSERT INTO code_extractions (extraction_id, language, module, syntax_key) VALUES (?1, ?2, ?3, ?4)",
        args![extraction_id, language, module, key],
    )?;
    Ok(())
}

/// A unit's row.
pub struct UnitRow<'a> {
    /// Its place in the extraction.
    pub ordinal: usize,
    /// Its type.
    pub unit_type: UnitType,
    /// Whether it holds no other unit.
    pub is_leaf: bool,
    /// Its parent's ordinal.
    pub parent_ordinal: Option<usize>,
    /// Its text.
    pub text: &'a str,
    /// Its headings (JSON list).
    pub heading_path_json: &'a str,
    /// Its anchor.
    pub anchor: Option<&'a str>,
    /// Its tokens.
    pub token_count: usize,
    /// Where it is.
    pub span: Span,
    /// Its JSON Pointer, in a JSON document.
    pub json_pointer: Option<&'a str>,
}

/// A window's row.
pub struct ChunkRow<'a> {
    /// Its place in the extraction.
    pub ordinal: usize,
    /// Its first unit.
    pub first_unit_id: i64,
    /// Its last unit.
    pub last_unit_id: i64,
    /// What its evidence owner is keyed by.
    pub owner_key: &'a str,
    /// The owner's first window, when this is not it.
    pub owner_chunk_id: Option<i64>,
    /// Where it is.
    pub span: Span,
    /// Its tokens.
    pub token_count: usize,
    /// Its tokens as rendered with its citation and headings.
    pub render_tokens: usize,
    /// Whether it holds a code block.
    pub has_code: bool,
    /// Whether it may carry instructions (hidden text, instruction-like words).
    pub may_contain_instructions: bool,
    /// Its text, when not exactly one unit's.
    pub text: Option<&'a str>,
    /// Its capsule (JSON).
    pub capsule_json: &'a str,
}

/// Writes one extraction's units, locators, identifiers and windows, each statement prepared
/// once per file. Where the store hands ids out ahead (PostgreSQL: `Tx::next_id`), a unit's and
/// a window's rows are written behind with their ids, pipelined with the rest; SQLite inserts
/// each in process and reads its id back.
pub struct UnitWriter<'c> {
    tx: &'c dyn Tx,
    extraction_id: i64,
    revision_id: i64,
    /// Ids come from `Tx::next_id`, and `unit` and `chunk` take them as their first value.
    ahead: bool,
    unit: Box<dyn Statement + 'c>,
    locator: Box<dyn Statement + 'c>,
    identifier: Box<dyn Statement + 'c>,
    chunk: Box<dyn Statement + 'c>,
}

const UNIT_COLUMNS: &str = "extraction_id, ordinal, unit_type, is_leaf, parent_ordinal, text, heading_path_json, anchor, token_count";
const CHUNK_COLUMNS: &str = "extraction_id, ordinal, first_unit_id, last_unit_id, owner_key, owner_chunk_id, byte_start, byte_end, line_start, col_start, line_end, col_end, token_count, render_tokens, has_code, may_contain_instructions, text, capsule_json";

/// `INSERT INTO table (columns) VALUES (?1, …)`, with `id` first when `ahead`.
fn insert_sql(table: &str, columns: &str, ahead: bool) -> String {
    let n = columns.split(',').count() + usize::from(ahead);
    let values: Vec<String> = (1..=n).map(|i| format!("?{i}")).collect();
    let id = if ahead { "id, " } else { "" };
    format!(
        "INSERT INTO {table} ({id}{columns}) VALUES ({})",
        values.join(", ")
    )
}

impl<'c> UnitWriter<'c> {
    /// A writer for an extraction of a revision.
    ///
    /// # Errors
    /// The store's errors.
    pub fn new(tx: &'c dyn Tx, extraction_id: i64, revision_id: i64) -> Result<Self> {
        let ahead = tx.dialect() == Dialect::Postgres;
        let prepare = |table, columns| {
            let sql = insert_sql(table, columns, ahead);
            if ahead {
                tx.prepare(&sql)
            } else {
                tx.prepare_insert(&sql)
            }
        };
        Ok(Self {
            tx,
            extraction_id,
            revision_id,
            ahead,
            unit: prepare("evidence_units", UNIT_COLUMNS)?,
            locator: tx.prepare(
                "INSERT INTO locators (unit_id, byte_start, byte_end, line_start, col_start, line_end, col_end, json_pointer) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            )?,
            identifier: tx.prepare(
                "INSERT INTO identifiers (unit_id, revision_id, kind, value, normalized) VALUES (?1, ?2, ?3, ?4, ?5)",
            )?,
            chunk: prepare("chunks", CHUNK_COLUMNS)?,
        })
    }

    /// Writes a row of `statement` with `values`, its id first when ids come ahead.
    fn row(&mut self, table: &str, which: Which, values: &[Param<'_>]) -> Result<i64> {
        let statement = match which {
            Which::Unit => &mut self.unit,
            Which::Chunk => &mut self.chunk,
        };
        if !self.ahead {
            return statement.insert(values);
        }
        let id = self
            .tx
            .next_id(table)?
            .ok_or_else(|| Error::Internal(format!("the store handed out no id for {table}")))?;
        let mut with_id = Vec::with_capacity(values.len() + 1);
        with_id.push(Param::Int(id));
        with_id.extend_from_slice(values);
        statement.write(&with_id)?;
        Ok(id)
    }

    /// Writes a unit with its locator; returns its id.
    ///
    /// # Errors
    /// The store's errors.
    pub fn unit(&mut self, u: &UnitRow<'_>) -> Result<i64> {
        let id = self.row(
            "evidence_units",
            Which::Unit,
            args![
                self.extraction_id,
                u.ordinal,
                u.unit_type.as_str(),
                u.is_leaf,
                u.parent_ordinal,
                u.text,
                u.heading_path_json,
                u.anchor,
                u.token_count
            ],
        )?;
        let s = u.span;
        self.locator.write(args![
            id,
            s.byte_start,
            s.byte_end,
            s.line_start,
            s.col_start,
            s.line_end,
            s.col_end,
            u.json_pointer
        ])?;
        Ok(id)
    }

    /// Records an identifier a unit carries.
    ///
    /// # Errors
    /// The store's errors.
    pub fn identifier(
        &mut self,
        unit_id: i64,
        kind: &str,
        value: &str,
        normalized: &str,
    ) -> Result<()> {
        self.identifier
            .write(args![unit_id, self.revision_id, kind, value, normalized])
    }

    /// Writes a window; returns its id.
    ///
    /// # Errors
    /// The store's errors.
    pub fn chunk(&mut self, c: &ChunkRow<'_>) -> Result<i64> {
        self.row(
            "chunks",
            Which::Chunk,
            args![
                self.extraction_id,
                c.ordinal,
                c.first_unit_id,
                c.last_unit_id,
                c.owner_key,
                c.owner_chunk_id,
                c.span.byte_start,
                c.span.byte_end,
                c.span.line_start,
                c.span.col_start,
                c.span.line_end,
                c.span.col_end,
                c.token_count,
                c.render_tokens,
                c.has_code,
                c.may_contain_instructions,
                c.text,
                c.capsule_json
            ],
        )
    }
}

/// Which of a [`UnitWriter`]'s keyed statements.
#[derive(Clone, Copy)]
enum Which {
    Unit,
    Chunk,
}

/// A document extraction's row.
pub struct DocumentRow<'a> {
    /// `docx`, `pdf`, `image`.
    pub format: &'a str,
    /// The extractor and its version.
    pub extractor: &'a str,
    /// The derived text's sha256.
    pub derived_sha256: &'a str,
    /// Headers, footers and the like (JSON).
    pub furniture_json: &'a str,
    /// External link targets (JSON).
    pub external_json: &'a str,
    /// Pages.
    pub pages: Option<u32>,
}

/// A document unit's place.
pub struct DocLocatorRow<'a> {
    /// The unit.
    pub unit_id: i64,
    /// `body`, `footnotes`…
    pub part: &'a str,
    /// Paragraph in the part.
    pub paragraph: Option<usize>,
    /// Table in the part.
    pub table: Option<usize>,
    /// Row in the table.
    pub row: Option<usize>,
    /// Whether the row is a header.
    pub header: bool,
    /// A list marker.
    pub marker: Option<&'a str>,
    /// A heading or list level.
    pub level: Option<u8>,
    /// Its page.
    pub page: Option<u32>,
    /// Its boxes (JSON), when drawn.
    pub boxes_json: Option<String>,
    /// Findings about it (JSON list).
    pub flags_json: &'a str,
    /// `text` or `ocr`.
    pub origin: &'a str,
    /// OCR confidence.
    pub confidence: Option<f64>,
}

/// A table cell of a row unit.
pub struct CellRow<'a> {
    /// The row's unit.
    pub unit_id: i64,
    /// Its column.
    pub col: usize,
    /// Columns it spans.
    pub col_span: usize,
    /// Whether it continues the cell above (a vertical merge).
    pub continues_above: bool,
    /// Its text.
    pub text: &'a str,
    /// Its box (JSON).
    pub box_json: Option<String>,
}

/// A picture of a document.
pub struct AssetRow<'a> {
    /// Its place among the document's pictures (from 1).
    pub ordinal: usize,
    /// Its bytes' sha256 (the original's, for an image file).
    pub sha256: &'a str,
    /// Its media type.
    pub media_type: &'a str,
    /// Pixels across.
    pub width: Option<u32>,
    /// Pixels down.
    pub height: Option<u32>,
    /// The part holding it.
    pub part: &'a str,
    /// Its relationship id (DOCX).
    pub relationship: Option<&'a str>,
    /// Its alt text.
    pub alt_text: Option<&'a str>,
    /// Its caption.
    pub caption: Option<&'a str>,
    /// The text around it.
    pub context: Option<&'a str>,
    /// The unit that finds it.
    pub unit_id: Option<i64>,
    /// Its page.
    pub page: Option<u32>,
    /// Its box (JSON).
    pub box_json: Option<String>,
}

/// Writes a document extraction's rows.
pub struct DocumentWriter<'c> {
    extraction_id: i64,
    locator: Box<dyn Statement + 'c>,
    cell: Box<dyn Statement + 'c>,
    asset: Box<dyn Statement + 'c>,
}

impl<'c> DocumentWriter<'c> {
    /// Records the document row of an extraction and returns a writer for its places.
    ///
    /// # Errors
    /// The store's errors.
    pub fn new(tx: &'c dyn Tx, extraction_id: i64, doc: &DocumentRow<'_>) -> Result<Self> {
        tx.execute(
            "INSERT INTO doc_extractions (extraction_id, format, extractor, derived_sha256, furniture_json, external_json, pages) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            args![
                extraction_id,
                doc.format,
                doc.extractor,
                doc.derived_sha256,
                doc.furniture_json,
                doc.external_json,
                doc.pages
            ],
        )?;
        Ok(Self {
            extraction_id,
            locator: tx.prepare(
                "INSERT INTO doc_locators (unit_id, part, paragraph, table_no, row_no, header, marker, level, page_start, page_end, boxes_json, flags_json, origin, confidence) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
            )?,
            cell: tx.prepare(
                "INSERT INTO table_cells (unit_id, col, col_span, continues_above, text, box_json) VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT DO NOTHING",
            )?,
            asset: tx.prepare(
                "INSERT INTO visual_assets (extraction_id, ordinal, sha256, media_type, width, height, part, relationship, alt_text, caption, context, unit_id, page, box_json) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
            )?,
        })
    }

    /// Records a unit's place.
    ///
    /// # Errors
    /// The store's errors.
    pub fn locator(&mut self, l: &DocLocatorRow<'_>) -> Result<()> {
        self.locator.write(args![
            l.unit_id,
            l.part,
            l.paragraph,
            l.table,
            l.row,
            l.header,
            l.marker,
            l.level.map(u32::from),
            l.page,
            l.page,
            l.boxes_json.as_deref(),
            l.flags_json,
            l.origin,
            l.confidence
        ])?;
        Ok(())
    }

    /// Records a table cell.
    ///
    /// # Errors
    /// The store's errors.
    pub fn cell(&mut self, c: &CellRow<'_>) -> Result<()> {
        self.cell.write(args![
            c.unit_id,
            c.col,
            c.col_span,
            c.continues_above,
            c.text,
            c.box_json.as_deref()
        ])?;
        Ok(())
    }

    /// Records a picture.
    ///
    /// # Errors
    /// The store's errors.
    pub fn asset(&mut self, a: &AssetRow<'_>) -> Result<()> {
        self.asset.write(args![
            self.extraction_id,
            a.ordinal,
            a.sha256,
            a.media_type,
            a.width,
            a.height,
            a.part,
            a.relationship,
            a.alt_text,
            a.caption,
            a.context,
            a.unit_id,
            a.page,
            a.box_json.as_deref()
        ])?;
        Ok(())
    }
}

/// The sha256 of the original an extraction was read from.
///
/// # Errors
/// The store's errors (`E_INTERNAL` for no such extraction).
pub fn original_sha256(tx: &dyn Tx, extraction_id: i64) -> Result<String> {
    tx.value(
        "SELECT r.sha256 FROM extractions e JOIN revisions r ON r.id = e.revision_id WHERE e.id = ?1",
        args![extraction_id],
    )
}
