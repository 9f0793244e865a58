//! The commit path's writes (`ingest::commit`): roots, kinds, sources, artifacts, revisions and
//! extractions with their units, locators, identifiers, windows and document rows. Each writer
//! prepares its statements once per file; the caller's transaction holds them all.

use rusqlite::{CachedStatement, Connection, OptionalExtension as _, params};

use crate::error::Result;
use crate::unit::{Span, UnitType};

/// `(extraction, fingerprint, format, kind)` of a member.
pub type MemberFingerprint = (i64, String, String, Option<String>);

/// `(extraction, fingerprint, format, kind)` of a snapshot's members.
///
/// # Errors
/// SQLite errors.
pub fn member_fingerprints(conn: &Connection, snapshot_id: i64) -> Result<Vec<MemberFingerprint>> {
    Ok(conn
        .prepare_cached(
            "SELECT m.extraction_id, e.fingerprint, s.format, s.kind FROM snapshot_members m
             JOIN extractions e ON e.id = m.extraction_id JOIN sources s ON s.id = m.source_id
             WHERE m.snapshot_id = ?1",
        )?
        .query_map(params![snapshot_id], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
        })?
        .collect::<rusqlite::Result<_>>()?)
}

/// `(id, encoded path)` of every capture root.
///
/// # Errors
/// SQLite errors.
pub fn roots(conn: &Connection) -> Result<Vec<(i64, String)>> {
    Ok(conn
        .prepare_cached("SELECT id, path FROM roots")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?)
}

/// The id of the capture root at `path` (encoded), recorded on first use.
///
/// # Errors
/// SQLite errors.
pub fn root_id(conn: &Connection, path: &str, now: i64) -> Result<i64> {
    if let Some(id) = conn
        .prepare_cached("SELECT id FROM roots WHERE path = ?1")?
        .query_row(params![path], |r| r.get(0))
        .optional()?
    {
        return Ok(id);
    }
    conn.execute(
        "INSERT INTO roots (path, added_at) VALUES (?1, ?2)",
        params![path, now],
    )?;
    Ok(conn.last_insert_rowid())
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
/// SQLite errors.
pub fn record_kind(tx: &Connection, kind: &KindRow<'_>, now: i64) -> Result<()> {
    tx.prepare_cached(
        "INSERT INTO kinds (name, version, fingerprint, pack, lane, definition_json, recorded_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
         ON CONFLICT (name) DO UPDATE SET version = excluded.version, fingerprint = excluded.fingerprint, pack = excluded.pack,
           lane = excluded.lane, definition_json = excluded.definition_json, recorded_at = excluded.recorded_at
         WHERE kinds.fingerprint != excluded.fingerprint",
    )?
    .execute(params![
        kind.name,
        kind.version,
        kind.fingerprint,
        kind.pack,
        kind.lane,
        kind.definition_json,
        now
    ])?;
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
/// SQLite errors.
pub fn upsert_source(tx: &Connection, s: &SourceRow<'_>, now: i64) -> Result<(i64, i64, String)> {
    tx.prepare_cached(
        "INSERT INTO sources (collection_id, format, kind, root_id, rel_path, uri, status, created_at, updated_at, sensitivity) VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'active', ?7, ?7, COALESCE(?8, ?9))
         ON CONFLICT (collection_id, uri) DO UPDATE SET status = 'active', format = excluded.format, kind = excluded.kind, updated_at = excluded.updated_at, sensitivity = COALESCE(?8, sources.sensitivity)",
    )?
    .execute(params![
        s.collection_id,
        s.format,
        s.kind,
        s.root_id,
        s.rel_path,
        s.uri,
        now,
        s.sensitivity,
        s.default_sensitivity
    ])?;
    Ok(tx
        .prepare_cached(
            "SELECT id, root_id, rel_path FROM sources WHERE collection_id = ?1 AND uri = ?2",
        )?
        .query_row(params![s.collection_id, s.uri], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })?)
}

/// Records an artifact (bytes already stored under their sha256); a known one is left as it is.
///
/// # Errors
/// SQLite errors.
pub fn put_artifact(
    tx: &Connection,
    sha256: &str,
    size: usize,
    media_type: &str,
    now: i64,
) -> Result<()> {
    tx.prepare_cached(
        "INSERT INTO artifacts (sha256, size, media_type, created_at) VALUES (?1, ?2, ?3, ?4) ON CONFLICT (sha256) DO NOTHING",
    )?
    .execute(params![sha256, size, media_type, now])?;
    Ok(())
}

/// Bytes the retention policy erased are back (a capture stored them again): their retention
/// tombstone goes.
///
/// # Errors
/// SQLite errors.
pub fn clear_retention_tombstone(tx: &Connection, sha256: &str) -> Result<()> {
    tx.prepare_cached("DELETE FROM tombstones WHERE sha256 = ?1 AND kind = 'retention'")?
        .execute(params![sha256])?;
    Ok(())
}

/// The newest revision of a source with these bytes.
///
/// # Errors
/// SQLite errors.
pub fn revision_with_bytes(tx: &Connection, source_id: i64, sha256: &str) -> Result<Option<i64>> {
    Ok(tx
        .prepare_cached(
            "SELECT id FROM revisions WHERE source_id = ?1 AND sha256 = ?2 ORDER BY seq DESC LIMIT 1",
        )?
        .query_row(params![source_id, sha256], |r| r.get(0))
        .optional()?)
}

/// Records a source's next revision (its bytes as its original); returns its id.
///
/// # Errors
/// SQLite errors.
pub fn insert_revision(
    tx: &Connection,
    source_id: i64,
    sha256: &str,
    size: usize,
    metadata_json: &str,
    now: i64,
) -> Result<i64> {
    let seq: i64 = tx
        .prepare_cached("SELECT COALESCE(MAX(seq), 0) + 1 FROM revisions WHERE source_id = ?1")?
        .query_row(params![source_id], |r| r.get(0))?;
    tx.prepare_cached(
        "INSERT INTO revisions (source_id, seq, sha256, size, metadata_json, captured_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![source_id, seq, sha256, size, metadata_json, now])?;
    let id = tx.last_insert_rowid();
    tx.prepare_cached(
        "INSERT INTO revision_artifacts (revision_id, sha256, role) VALUES (?1, ?2, 'original')",
    )?
    .execute(params![id, sha256])?;
    Ok(id)
}

/// The extraction of a revision made with this fingerprint.
///
/// # Errors
/// SQLite errors.
pub fn extraction_with(
    tx: &Connection,
    revision_id: i64,
    fingerprint: &str,
) -> Result<Option<i64>> {
    Ok(tx
        .prepare_cached("SELECT id FROM extractions WHERE revision_id = ?1 AND fingerprint = ?2")?
        .query_row(params![revision_id, fingerprint], |r| r.get(0))
        .optional()?)
}

/// Replaces an extraction's diagnostics (JSON).
///
/// # Errors
/// SQLite errors.
pub fn set_diagnostics(tx: &Connection, extraction_id: i64, json: &str) -> Result<()> {
    tx.execute(
        "UPDATE extractions SET diagnostics_json = ?2 WHERE id = ?1",
        params![extraction_id, json],
    )?;
    Ok(())
}

/// An extraction's diagnostics (JSON).
///
/// # Errors
/// SQLite errors.
pub fn diagnostics(conn: &Connection, extraction_id: i64) -> Result<Option<String>> {
    Ok(conn
        .prepare_cached("SELECT diagnostics_json FROM extractions WHERE id = ?1")?
        .query_row(params![extraction_id], |r| r.get(0))
        .optional()?)
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
/// SQLite errors.
pub fn insert_extraction(tx: &Connection, e: &ExtractionRow<'_>, now: i64) -> Result<i64> {
    tx.prepare_cached(
        "INSERT INTO extractions (revision_id, parser, fingerprint, unit_count, chunk_count, diagnostics_json, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?
    .execute(params![
        e.revision_id,
        e.parser,
        e.fingerprint,
        e.unit_count,
        e.chunk_count,
        e.diagnostics_json,
        now
    ])?;
    Ok(tx.last_insert_rowid())
}

/// Records a code file's syntax: the cache entry (when new) and the extraction's language,
/// module and cache key.
///
/// # Errors
/// SQLite errors.
pub fn put_code(
    tx: &Connection,
    extraction_id: i64,
    language: &str,
    module: &str,
    key: &str,
    new_payload: Option<&str>,
    now: i64,
) -> Result<()> {
    if let Some(payload) = new_payload {
        tx.prepare_cached(
            "INSERT INTO syntax_cache (key, payload, created_at) VALUES (?1, ?2, ?3) ON CONFLICT (key) DO NOTHING",
        )?
        .execute(params![key, payload, now])?;
    }
    tx.prepare_cached(
        "INSERT INTO code_extractions (extraction_id, language, module, syntax_key) VALUES (?1, ?2, ?3, ?4)",
    )?
    .execute(params![extraction_id, language, module, key])?;
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

/// Writes one extraction's units, locators, identifiers and windows.
pub struct UnitWriter<'c> {
    conn: &'c Connection,
    extraction_id: i64,
    revision_id: i64,
    unit: CachedStatement<'c>,
    locator: CachedStatement<'c>,
    identifier: CachedStatement<'c>,
    chunk: CachedStatement<'c>,
}

impl<'c> UnitWriter<'c> {
    /// A writer for an extraction of a revision.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn new(tx: &'c Connection, extraction_id: i64, revision_id: i64) -> Result<Self> {
        Ok(Self {
            conn: tx,
            extraction_id,
            revision_id,
            unit: tx.prepare_cached(
                "INSERT INTO evidence_units (extraction_id, ordinal, unit_type, is_leaf, parent_ordinal, text, heading_path_json, anchor, token_count)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            )?,
            locator: tx.prepare_cached(
                "INSERT INTO locators (unit_id, byte_start, byte_end, line_start, col_start, line_end, col_end, json_pointer) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            )?,
            identifier: tx.prepare_cached(
                "INSERT INTO identifiers (unit_id, revision_id, kind, value, normalized) VALUES (?1, ?2, ?3, ?4, ?5)",
            )?,
            chunk: tx.prepare_cached(
                "INSERT INTO chunks (extraction_id, ordinal, first_unit_id, last_unit_id, owner_key, owner_chunk_id, byte_start, byte_end, line_start, col_start, line_end, col_end, token_count, render_tokens, has_code, may_contain_instructions, text, capsule_json)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)",
            )?,
        })
    }

    /// Writes a unit with its locator; returns its id.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn unit(&mut self, u: &UnitRow<'_>) -> Result<i64> {
        self.unit.execute(params![
            self.extraction_id,
            u.ordinal,
            u.unit_type,
            u.is_leaf,
            u.parent_ordinal,
            u.text,
            u.heading_path_json,
            u.anchor,
            u.token_count
        ])?;
        let id = self.conn.last_insert_rowid();
        let s = u.span;
        self.locator.execute(params![
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
    /// SQLite errors.
    pub fn identifier(
        &mut self,
        unit_id: i64,
        kind: &str,
        value: &str,
        normalized: &str,
    ) -> Result<()> {
        self.identifier
            .execute(params![unit_id, self.revision_id, kind, value, normalized])?;
        Ok(())
    }

    /// Writes a window; returns its id.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn chunk(&mut self, c: &ChunkRow<'_>) -> Result<i64> {
        self.chunk.execute(params![
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
        ])?;
        Ok(self.conn.last_insert_rowid())
    }
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
    locator: CachedStatement<'c>,
    cell: CachedStatement<'c>,
    asset: CachedStatement<'c>,
}

impl<'c> DocumentWriter<'c> {
    /// Records the document row of an extraction and returns a writer for its places.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn new(tx: &'c Connection, extraction_id: i64, doc: &DocumentRow<'_>) -> Result<Self> {
        tx.prepare_cached(
            "INSERT INTO doc_extractions (extraction_id, format, extractor, derived_sha256, furniture_json, external_json, pages) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )?
        .execute(params![
            extraction_id,
            doc.format,
            doc.extractor,
            doc.derived_sha256,
            doc.furniture_json,
            doc.external_json,
            doc.pages
        ])?;
        Ok(Self {
            extraction_id,
            locator: tx.prepare_cached(
                "INSERT INTO doc_locators (unit_id, part, paragraph, table_no, row_no, header, marker, level, page_start, page_end, boxes_json, flags_json, origin, confidence) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
            )?,
            cell: tx.prepare_cached(
                "INSERT INTO table_cells (unit_id, col, col_span, continues_above, text, box_json) VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT DO NOTHING",
            )?,
            asset: tx.prepare_cached(
                "INSERT INTO visual_assets (extraction_id, ordinal, sha256, media_type, width, height, part, relationship, alt_text, caption, context, unit_id, page, box_json) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
            )?,
        })
    }

    /// Records a unit's place.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn locator(&mut self, l: &DocLocatorRow<'_>) -> Result<()> {
        self.locator.execute(params![
            l.unit_id,
            l.part,
            l.paragraph,
            l.table,
            l.row,
            l.header,
            l.marker,
            l.level,
            l.page,
            l.page,
            l.boxes_json,
            l.flags_json,
            l.origin,
            l.confidence
        ])?;
        Ok(())
    }

    /// Records a table cell.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn cell(&mut self, c: &CellRow<'_>) -> Result<()> {
        self.cell.execute(params![
            c.unit_id,
            c.col,
            c.col_span,
            c.continues_above,
            c.text,
            c.box_json
        ])?;
        Ok(())
    }

    /// Records a picture.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn asset(&mut self, a: &AssetRow<'_>) -> Result<()> {
        self.asset.execute(params![
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
            a.box_json
        ])?;
        Ok(())
    }
}

/// The sha256 of the original an extraction was read from.
///
/// # Errors
/// SQLite errors.
pub fn original_sha256(conn: &Connection, extraction_id: i64) -> Result<String> {
    Ok(conn
        .prepare_cached(
            "SELECT r.sha256 FROM extractions e JOIN revisions r ON r.id = e.revision_id WHERE e.id = ?1",
        )?
        .query_row(params![extraction_id], |r| r.get(0))?)
}
