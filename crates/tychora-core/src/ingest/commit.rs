//! Canonical rows for one job: sources, revisions, extractions, units, locators, identifiers, chunks.

use crate::unit::UnitType;
use std::path::Path;

use sha2::{Digest, Sha256};

use super::prepare::{DocumentPlace, Extraction, Prepared};
use super::{Assignment, Receipt};
use crate::clock::now_ms;
use crate::config::{KindDefinition, Pack};
use crate::engine::Engine;
use crate::error::{Diagnostic, Result};
use crate::exact::normalize_identifier;
use crate::job::JobState;
use crate::parse::{Format, FormatOverride, PARSER_VERSION};
use crate::snapshot::Member;
use crate::store::extractions as rows;
use crate::store::tx::Tx;
use crate::tokenize::TOKENIZER;

/// The extraction fingerprint: parser and document reader versions, the assigned kind and forced
/// format, chunking, tokenizer and identifier patterns. A change to any of them re-extracts;
/// nothing else does.
pub fn fingerprint(pack: &Pack, assignment: &Assignment) -> String {
    let mut hasher = Sha256::new();
    hasher.update(PARSER_VERSION);
    hasher.update(assignment.format.map_or("auto", FormatOverride::as_str));
    if let Some(kind) = &assignment.kind {
        hasher.update(format!("kind:{kind}"));
        // Its record rules and schemas, when it has any: a changed rule reads the files again.
        if let Some(rules) = pack
            .kinds
            .get(kind)
            .and_then(KindDefinition::extraction_fingerprint)
        {
            hasher.update(rules);
        }
    }
    hasher.update(crate::code::GRAMMAR_VERSION);
    hasher.update(crate::chunk::OWNER_RULE);
    hasher.update(crate::parse::document::DOCX_EXTRACTOR);
    hasher.update(crate::parse::document::PDF_LAYOUT);
    hasher.update(format!(
        "{}/{}",
        pack.chunking.target_tokens, pack.chunking.soft_ceiling_tokens
    ));
    hasher.update(TOKENIZER);
    for p in &pack.identifiers.patterns {
        hasher.update(&p.name);
        hasher.update(&p.regex);
    }
    hex::encode(&hasher.finalize()[..16])
}

/// The extraction fingerprints of one job, per file: the assignment a file is read under (this
/// add's, or the kind its source keeps) is part of it, and PDFs, image files and Word documents
/// (their pictures) add what their OCR depends on, so turning `[ocr]` on reads them again and
/// nothing else.
pub struct Fingerprints<'a> {
    pack: &'a Pack,
    /// What else changes a document's extraction: OCR, and whether PDF figures are kept.
    extra: Vec<String>,
    /// By (forced format, kind, whether OCR applies): a job meets only a few of them.
    cache: std::sync::Mutex<std::collections::HashMap<FingerprintKey, String>>,
}

/// What a file's extraction fingerprint varies by within one job.
type FingerprintKey = (&'static str, Option<String>, bool);

impl<'a> Fingerprints<'a> {
    pub fn new(engine: &'a Engine) -> Self {
        let config = engine.config();
        let extra = [
            config.ocr.fingerprint(),
            (!config.documents.pdf_figures).then(|| "pdf_figures:false".to_string()),
        ];
        Self {
            pack: engine.pack(),
            extra: extra.into_iter().flatten().collect(),
            cache: std::sync::Mutex::default(),
        }
    }

    /// The fingerprint a file in `format` read under `assignment` gets.
    pub fn of(&self, format: Format, assignment: &Assignment) -> String {
        self.of_file(Self::reads_by_ocr(format), assignment)
    }

    /// As [`Self::of`], for a file OCR applies to or not.
    fn of_file(&self, reads_by_ocr: bool, assignment: &Assignment) -> String {
        let ocr = reads_by_ocr && !self.extra.is_empty();
        let key = (
            assignment.format.map_or("auto", FormatOverride::as_str),
            assignment.kind.clone(),
            ocr,
        );
        let mut cache = self
            .cache
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        cache
            .entry(key)
            .or_insert_with(|| {
                let base = fingerprint(self.pack, assignment);
                if !ocr {
                    return base;
                }
                let mut hasher = Sha256::new();
                hasher.update(&base);
                for e in &self.extra {
                    hasher.update(e);
                }
                hex::encode(&hasher.finalize()[..16])
            })
            .clone()
    }

    fn reads_by_ocr(format: Format) -> bool {
        matches!(format, Format::Pdf | Format::Image | Format::Docx)
    }
}

/// The extractions of `snapshot_id` made with the fingerprint their file gets now under
/// `assignment` (this job's, or the kind each source keeps).
pub fn fresh_extractions(
    conn: &dyn Tx,
    snapshot_id: i64,
    fingerprints: &Fingerprints<'_>,
    assignment: &Assignment,
) -> Result<std::collections::HashSet<i64>> {
    let mut fresh = std::collections::HashSet::new();
    for (id, fingerprint, format, kind) in rows::member_fingerprints(conn, snapshot_id)? {
        let effective = assignment.for_file(
            &fingerprints.pack.kinds,
            kind.as_deref(),
            super::implied_kind_of(&format),
        );
        let ocr = Format::from_name(&format).is_some_and(Fingerprints::reads_by_ocr);
        if fingerprint == fingerprints.of_file(ocr, &effective) {
            fresh.insert(id);
        }
    }
    Ok(fresh)
}

pub fn registered_roots(conn: &dyn Tx) -> Result<Vec<(i64, String)>> {
    rows::roots(conn)
}

pub fn root_id(conn: &dyn Tx, root: &Path) -> Result<i64> {
    let path = crate::capture::names::encode_path(root);
    rows::root_id(conn, &path, now_ms())
}

/// Records the definition of `kind` the pack holds now (version, fingerprint, lane), replacing an
/// older one, so the store says which definition its sources were read under.
fn record_kind(tx: &dyn Tx, pack: &Pack, kind: &str, now: i64) -> Result<()> {
    let Some(definition) = pack.kinds.get(kind) else {
        return Ok(());
    };
    let json = serde_json::to_string(definition).unwrap_or_else(|_| "{}".into());
    rows::record_kind(
        tx,
        &rows::KindRow {
            name: kind,
            version: definition.version,
            fingerprint: &definition.fingerprint(),
            pack: &pack.name,
            lane: &definition.lane,
            definition_json: &json,
        },
        now,
    )
}

/// Where a file sits: its collection, root and paths.
pub(super) struct Place<'a> {
    pub collection_id: i64,
    pub root_id: i64,
    pub rel_path: &'a str,
    pub abs_path: &'a Path,
    /// The add's label (`None`: a new source gets the default, a known one keeps its own).
    pub sensitivity: Option<&'a str>,
}

/// A file's identity as a source: `file://` and its exact path, reversibly escaped.
pub(super) fn source_uri(abs_path: &Path) -> String {
    format!("file://{}", crate::capture::names::encode_path(abs_path))
}

/// The prefix every source URI under directory `dir` starts with.
pub(super) fn uri_prefix(dir: &Path) -> String {
    let mut prefix = source_uri(dir);
    if !prefix.ends_with('/') {
        prefix.push('/');
    }
    prefix
}

/// Writes (or reuses) the source, revision and extraction of one prepared file.
pub(super) fn write_revision(
    tx: &dyn Tx,
    engine: &Engine,
    place: &Place<'_>,
    prepared: &Prepared,
    extraction: &Extraction,
    fingerprint: &str,
    provenance: &serde_json::Value,
) -> Result<(Member, Vec<Diagnostic>)> {
    let mut diagnostics = Vec::new();
    let Place {
        collection_id,
        root_id,
        rel_path,
        abs_path,
        sensitivity,
    } = *place;
    let now = now_ms();
    let kind = prepared
        .assignment
        .kind_for(&engine.pack().kinds, prepared.format);
    if let Some(kind) = kind {
        record_kind(tx, engine.pack(), kind, now)?;
    }
    // The exact bytes of the path (reversibly escaped), so names that differ only in invalid
    // UTF-8 stay different sources.
    let uri = source_uri(abs_path);
    let format = prepared.format.as_str();
    // A known source keeps the place it was first captured under (its root and path there),
    // whichever overlapping root walked it this time.
    let (source_id, root_id, rel_path) = rows::upsert_source(
        tx,
        &rows::SourceRow {
            collection_id,
            format,
            kind,
            root_id,
            rel_path,
            uri: &uri,
            sensitivity,
            default_sensitivity: &engine.config().sensitivity.default,
        },
        now,
    )?;
    let rel_path = rel_path.as_str();
    rows::put_artifact(
        tx,
        &prepared.sha256,
        prepared.bytes.len(),
        media_type(prepared.format, &prepared.bytes),
        now,
    )?;
    // Bytes the retention policy erased are back on disk (the capture stored them again).
    rows::clear_retention_tombstone(tx, &prepared.sha256)?;
    // Bytes identical to an earlier revision of this source reuse that revision.
    let revision_id = if let Some(id) = rows::revision_with_bytes(tx, source_id, &prepared.sha256)?
    {
        id
    } else {
        let mut metadata = serde_json::json!({ "path": rel_path, "format": format, "kind": kind });
        if let (Some(m), Some(extra)) = (metadata.as_object_mut(), provenance.as_object()) {
            m.extend(extra.clone());
        }
        rows::insert_revision(
            tx,
            source_id,
            &prepared.sha256,
            prepared.bytes.len(),
            &metadata.to_string(),
            now,
        )?
    };
    let extraction_id = match rows::extraction_with(tx, revision_id, fingerprint)? {
        Some(id) => id,
        None => {
            let id = write_extraction(
                tx,
                engine,
                revision_id,
                rel_path,
                prepared.format,
                extraction,
                fingerprint,
            )?;
            if let Some(kind) = kind
                && let Some(definition) = engine.pack().kinds.get(kind)
                && !extraction.records.is_empty()
            {
                diagnostics = super::records::store(
                    tx,
                    kind,
                    definition,
                    revision_id,
                    id,
                    &extraction.records,
                    rel_path,
                )?;
            }
            if let Some(kind) = kind
                && !extraction.relations.is_empty()
            {
                diagnostics.extend(super::relations::store_parsed(
                    tx,
                    engine.pack(),
                    kind,
                    revision_id,
                    id,
                    &extraction.relations,
                    rel_path,
                )?);
            }
            if !diagnostics.is_empty() {
                // Kept with the extraction beside the reader's own, so that a later sync which
                // finds the file unchanged reports them again.
                let all: Vec<&Diagnostic> =
                    extraction.diagnostics.iter().chain(&diagnostics).collect();
                rows::set_diagnostics(
                    tx,
                    id,
                    &serde_json::to_string(&all).unwrap_or_else(|_| "[]".into()),
                )?;
            }
            id
        }
    };
    let member = Member {
        source_id,
        revision_id,
        extraction_id,
        collection_id,
        root_id,
        rel_path: rel_path.to_string(),
        uri,
        sha256: prepared.sha256.clone(),
    };
    Ok((member, diagnostics))
}

fn media_type(format: Format, bytes: &[u8]) -> &'static str {
    match format {
        Format::Image => crate::parse::image::probe(bytes, u64::MAX)
            .map_or("application/octet-stream", |i| i.media_type),
        Format::Markdown => "text/markdown",
        Format::Text | Format::Legal | Format::Rfc => "text/plain",
        Format::Json => "application/json",
        Format::Jsonl => "application/jsonl",
        Format::Csv => "text/csv",
        Format::Code(language) => match language {
            crate::code::Language::Python => "text/x-python",
            crate::code::Language::JavaScript => "text/javascript",
            crate::code::Language::TypeScript | crate::code::Language::Tsx => "text/x-typescript",
        },
        Format::Docx => "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        Format::Pdf => "application/pdf",
    }
}

/// A document's extraction: its derived text's artifact row and its units' places.
fn write_document(
    tx: &dyn Tx,
    extraction_id: i64,
    unit_ids: &[i64],
    document: &DocumentPlace,
) -> Result<()> {
    let read = &document.read;
    rows::put_artifact(
        tx,
        &document.text_sha256,
        read.text.len(),
        "text/plain; charset=utf-8",
        now_ms(),
    )?;
    let mut writer = rows::DocumentWriter::new(
        tx,
        extraction_id,
        &rows::DocumentRow {
            format: read.format,
            extractor: &read.extractor,
            derived_sha256: &document.text_sha256,
            furniture_json: &serde_json::to_string(&read.furniture).unwrap_or_else(|_| "[]".into()),
            external_json: &serde_json::to_string(&read.external_targets)
                .unwrap_or_else(|_| "[]".into()),
            pages: read.pages,
        },
    )?;
    write_assets(tx, &mut writer, extraction_id, unit_ids, document)?;
    for (unit_id, locator) in unit_ids.iter().zip(&read.locators) {
        writer.locator(&rows::DocLocatorRow {
            unit_id: *unit_id,
            part: &locator.part,
            paragraph: locator.paragraph,
            table: locator.table,
            row: locator.row,
            header: locator.header,
            marker: locator.marker.as_deref(),
            level: locator.level,
            page: locator.page,
            boxes_json: (!locator.boxes.is_empty())
                .then(|| serde_json::to_string(&locator.boxes).unwrap_or_default()),
            flags_json: &serde_json::to_string(&locator.flags).unwrap_or_else(|_| "[]".into()),
            origin: locator.origin.as_deref().unwrap_or("text"),
            confidence: locator.confidence,
        })?;
        for cell in &locator.cells {
            writer.cell(&rows::CellRow {
                unit_id: *unit_id,
                col: cell.col,
                col_span: cell.col_span,
                continues_above: cell.continues_above,
                text: &cell.text,
                box_json: cell
                    .bbox
                    .map(|b| serde_json::to_string(&b).unwrap_or_default()),
            })?;
        }
    }
    Ok(())
}

/// A document's pictures: embedded bytes as artifacts of their own (an image file is its own
/// asset, its original), each with its place and the unit that finds it.
fn write_assets(
    tx: &dyn Tx,
    writer: &mut rows::DocumentWriter<'_>,
    extraction_id: i64,
    unit_ids: &[i64],
    document: &DocumentPlace,
) -> Result<()> {
    if document.read.assets.is_empty() {
        return Ok(());
    }
    let original = rows::original_sha256(tx, extraction_id)?;
    for (i, (asset, sha)) in document
        .read
        .assets
        .iter()
        .zip(&document.asset_sha256)
        .enumerate()
    {
        let sha = sha.as_deref().unwrap_or(&original);
        if let Some(bytes) = &asset.bytes {
            rows::put_artifact(tx, sha, bytes.len(), &asset.media_type, now_ms())?;
        }
        writer.asset(&rows::AssetRow {
            ordinal: i + 1,
            sha256: sha,
            media_type: &asset.media_type,
            width: asset.width,
            height: asset.height,
            part: &asset.part,
            relationship: asset.relationship.as_deref(),
            alt_text: asset.alt_text.as_deref(),
            caption: asset.caption.as_deref(),
            context: asset.context.as_deref(),
            unit_id: asset.unit.and_then(|u| unit_ids.get(u)).copied(),
            page: asset.page,
            box_json: asset
                .bbox
                .map(|b| serde_json::to_string(&b).unwrap_or_default()),
        })?;
    }
    Ok(())
}

fn write_extraction(
    tx: &dyn Tx,
    engine: &Engine,
    revision_id: i64,
    rel_path: &str,
    format: Format,
    extraction: &Extraction,
    fingerprint: &str,
) -> Result<i64> {
    let parser = match &extraction.document {
        Some(doc) => doc.read.extractor.to_string(),
        None => format!("{}@{PARSER_VERSION}", format.as_str()),
    };
    let extraction_id = rows::insert_extraction(
        tx,
        &rows::ExtractionRow {
            revision_id,
            parser: &parser,
            fingerprint,
            unit_count: extraction.units.len(),
            chunk_count: extraction.chunks.len(),
            diagnostics_json: &serde_json::to_string(&extraction.diagnostics)
                .unwrap_or_else(|_| "[]".into()),
        },
        now_ms(),
    )?;
    if let Some(code) = &extraction.code {
        rows::put_code(
            tx,
            extraction_id,
            code.language.as_str(),
            &code.module,
            &code.key,
            code.new_payload.as_deref(),
            now_ms(),
        )?;
    }
    let mut unit_ids = Vec::with_capacity(extraction.units.len());
    {
        let mut writer = rows::UnitWriter::new(tx, extraction_id, revision_id)?;
        for (ordinal, unit) in extraction.units.iter().enumerate() {
            let unit_id = writer.unit(&rows::UnitRow {
                ordinal,
                unit_type: unit.unit_type,
                is_leaf: unit.is_leaf,
                parent_ordinal: unit.parent,
                text: &unit.text,
                heading_path_json: &serde_json::to_string(&unit.heading_path)
                    .unwrap_or_else(|_| "[]".into()),
                anchor: unit.anchor.as_deref(),
                token_count: extraction.unit_tokens[ordinal],
                span: unit.span,
                json_pointer: unit.json_pointer.as_deref(),
            })?;
            unit_ids.push(unit_id);
            for id in &unit.identifiers {
                writer.identifier(
                    unit_id,
                    &id.kind,
                    &id.value,
                    &normalize_identifier(&id.value),
                )?;
            }
            if unit.is_leaf {
                let scope = if unit.unit_type == UnitType::Heading {
                    "heading"
                } else {
                    "mention"
                };
                let mut found: Vec<(String, String)> = Vec::new();
                for pattern in engine.patterns() {
                    for value in pattern.find_all(&unit.text) {
                        let entry = (format!("{scope}:{}", pattern.name), value);
                        if !found
                            .iter()
                            .any(|f| normalize_identifier(&f.1) == normalize_identifier(&entry.1))
                        {
                            found.push(entry);
                        }
                    }
                }
                for (name, value) in numbered_under_heading(unit, engine.patterns()) {
                    let entry = (format!("mention:{name}"), value);
                    if !found
                        .iter()
                        .any(|f| normalize_identifier(&f.1) == normalize_identifier(&entry.1))
                    {
                        found.push(entry);
                    }
                }
                for (kind, value) in found {
                    writer.identifier(unit_id, &kind, &value, &normalize_identifier(&value))?;
                }
            }
        }
        let mut owner_heads: std::collections::HashMap<&str, i64> =
            std::collections::HashMap::new();
        for chunk in &extraction.chunks {
            let citation = match &extraction.document {
                Some(doc) => crate::parse::document::citation(
                    rel_path,
                    &doc.read.locators[chunk.first_unit].place(),
                    &doc.read.locators[chunk.last_unit].place(),
                ),
                None => format!(
                    "{rel_path}:{}-{}",
                    chunk.span.line_start, chunk.span.line_end
                ),
            };
            let render_tokens = crate::tokenize::rendered_tokens(
                &citation,
                &chunk.capsule.heading_path,
                chunk.token_count,
            );
            let owner_head = owner_heads.get(chunk.owner_key.as_str()).copied();
            let id = writer.chunk(&rows::ChunkRow {
                ordinal: chunk.ordinal,
                first_unit_id: unit_ids[chunk.first_unit],
                last_unit_id: unit_ids[chunk.last_unit],
                owner_key: &chunk.owner_key,
                owner_chunk_id: owner_head,
                span: chunk.span,
                token_count: chunk.token_count,
                render_tokens,
                has_code: (chunk.first_unit..=chunk.last_unit)
                    .any(|i| extraction.units[i].unit_type == UnitType::CodeBlock),
                // Text drawn where a reader cannot see it is where instructions hide.
                may_contain_instructions: crate::safety::may_contain_instructions(&chunk.text)
                    || (chunk.first_unit..=chunk.last_unit).any(|i| {
                        extraction.units[i].unit_type == crate::parse::document::HIDDEN_TEXT
                    }),
                // A window that is exactly one unit with its text is stored once (in the unit).
                text: (chunk.first_unit != chunk.last_unit
                    || extraction.units[chunk.first_unit].text != chunk.text)
                    .then_some(chunk.text.as_str()),
                capsule_json: &serde_json::to_string(&chunk.capsule)
                    .unwrap_or_else(|_| "{}".into()),
            })?;
            if owner_head.is_none() {
                owner_heads.insert(chunk.owner_key.as_str(), id);
            }
        }
    }
    if let Some(document) = &extraction.document {
        write_document(tx, extraction_id, &unit_ids, document)?;
    }
    Ok(extraction_id)
}

/// A numbered row or item under a heading that carries an identifier extending to it: under
/// "V1.2 Injection Prevention", the row "1.2.3 | Verify that …" is requirement `V1.2.3`; under
/// "Article 5", the item "5.1 …" is `Article 5.1` when the article pattern matches that. Standards
/// write the section's prefix once in its heading and the bare number in each row; the exact
/// channel needs the whole identifier on the row. Only numbers that continue the heading's own
/// number count, and only when the composed value matches the same pattern.
fn numbered_under_heading(
    unit: &crate::unit::Unit,
    patterns: &[crate::unit::IdentifierRule],
) -> Vec<(String, String)> {
    static LEADING_NUMBER: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"^[\s|*_]*(\d+(?:\.\d+)+)\b").expect("a valid regex")
    });
    // A Markdown row's text starts with its table's header.
    let text = unit
        .table_header
        .as_deref()
        .and_then(|h| unit.text.strip_prefix(h))
        .unwrap_or(&unit.text);
    let (Some(heading), Some(number)) = (
        unit.heading_path.last(),
        LEADING_NUMBER
            .captures(text)
            .and_then(|c| c.get(1))
            .map(|m| m.as_str()),
    ) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for crate::unit::IdentifierRule {
        name, regex: re, ..
    } in patterns
    {
        let Some(m) = re.find(heading) else { continue };
        let id = m.as_str();
        // The heading's identifier is a prefix followed by its dotted number ("V" + "1.2").
        let Some(at) = id.find(|c: char| c.is_ascii_digit()) else {
            continue;
        };
        let (prefix, own) = id.split_at(at);
        if number.len() > own.len()
            && number.starts_with(own)
            && number.as_bytes()[own.len()] == b'.'
        {
            let composed = format!("{prefix}{number}");
            if re.find(&composed).is_some_and(|c| c.as_str() == composed) {
                out.push((name.clone(), composed));
            }
        }
    }
    out
}

/// The diagnostics recorded when an extraction was made: an unchanged file reports them again.
///
/// # Errors
/// SQLite errors; a row that does not parse is reported as `E_CORRUPT`.
pub(super) fn extraction_diagnostics(conn: &dyn Tx, extraction_id: i64) -> Result<Vec<Diagnostic>> {
    rows::diagnostics(conn, extraction_id)?.map_or_else(
        || Ok(Vec::new()),
        |json| {
            serde_json::from_str(&json).map_err(|e| {
                crate::error::Error::Corrupt(format!("extraction {extraction_id} diagnostics: {e}"))
            })
        },
    )
}

/// Marks the job finished with its receipt. The diagnostics are stored once by their content
/// (`diagnostic_lists`), so a sync that finds what the last one found writes O(1) rows; the
/// caller's transaction holds the writes, or one is opened here (one fsync, not one per row).
pub fn finish_job(conn: &dyn Tx, receipt: &Receipt) -> Result<()> {
    let now = now_ms();
    conn.together(true, |conn| {
        let list = if receipt.diagnostics.is_empty() {
            None
        } else {
            let json = serde_json::to_string(&receipt.diagnostics).unwrap_or_else(|_| "[]".into());
            let sha = hex::encode(Sha256::digest(json.as_bytes()));
            crate::store::jobs::put_diagnostic_list(conn, &sha, receipt.diagnostics.len(), &json)?;
            Some(sha)
        };
        let mut stored = serde_json::to_value(receipt).unwrap_or(serde_json::Value::Null);
        if list.is_some()
            && let Some(fields) = stored.as_object_mut()
        {
            fields.insert("diagnostics".into(), serde_json::Value::Array(Vec::new()));
        }
        crate::store::jobs::finish(
            conn,
            receipt.job_id,
            JobState::from_outcome(receipt.status),
            &stored.to_string(),
            list.as_deref(),
            now,
        )?;
        Ok(())
    })
}

/// A stored receipt's diagnostics, read back from their list.
///
/// # Errors
/// SQLite errors; a list that does not parse is `E_CORRUPT`.
pub fn stored_diagnostics(conn: &dyn Tx, sha256: &str) -> Result<Vec<Diagnostic>> {
    let json = crate::store::jobs::diagnostic_list(conn, sha256)?.ok_or_else(|| {
        crate::error::Error::Corrupt(format!("diagnostic list {sha256} is missing"))
    })?;
    serde_json::from_str(&json)
        .map_err(|e| crate::error::Error::Corrupt(format!("diagnostic list {sha256}: {e}")))
}
