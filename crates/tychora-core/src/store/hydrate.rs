//! Hydration: candidate chunk ids → the rows a query's segments are built from (one statement a
//! batch), and the other canonical reads of a query: eligibility resolved to windows and sources,
//! the keys segments state and the accepted assertions about them.

use std::collections::HashMap;
use std::fmt::Write as _;

use super::tx::{Dialect, Row, Tx, Value, args, params};
use crate::error::Result;
use crate::lexical::Filter;
use crate::unit::DocPlace;

/// The part of a stored capsule a segment needs (a typed parse skips the rest cheaply).
#[derive(serde::Deserialize)]
struct CapsuleHeadings {
    #[serde(default)]
    heading_path: Vec<String>,
}

/// Everything a segment needs about one chunk.
#[derive(Debug, Clone)]
pub struct ChunkRow {
    /// The window.
    pub chunk_id: i64,
    /// Its first byte in the original.
    pub byte_start: i64,
    /// One past its last byte.
    pub byte_end: i64,
    /// Its first line (1-based).
    pub line_start: i64,
    /// Its last line.
    pub line_end: i64,
    /// Its first column.
    pub col_start: i64,
    /// One past its last column.
    pub col_end: i64,
    /// Its tokens.
    pub token_count: usize,
    /// Its tokens as rendered with its citation and headings.
    pub render_tokens: usize,
    /// Its text.
    pub text: String,
    /// Its headings.
    pub heading_path: Vec<String>,
    /// Its first unit.
    pub first_unit_id: i64,
    /// Its last unit.
    pub last_unit_id: i64,
    /// The revision it was read from.
    pub revision_id: i64,
    /// That revision's number in its source.
    pub seq: i64,
    /// The revision's bytes' sha256.
    pub sha256: String,
    /// The source.
    pub source_id: i64,
    /// The source's path under its root.
    pub rel_path: String,
    /// The source's identity.
    pub uri: String,
    /// The source's collection.
    pub collection: String,
    /// The source's assigned kind, if any.
    pub kind: Option<String>,
    /// The source's format.
    pub format: String,
    /// Its first unit's JSON Pointer, in a JSON document.
    pub json_pointer: Option<String>,
    /// Its first unit's anchor.
    pub anchor: Option<String>,
    /// Whether it holds a code block.
    pub has_code: bool,
    /// Whether it may carry instructions.
    pub may_contain_instructions: bool,
    /// The git commit the revision was captured at.
    pub commit: Option<String>,
    /// Its collection's trust.
    pub trust: crate::trust::Trust,
    /// When its content became what it is.
    pub freshness: crate::trust::Freshness,
    /// A document's places of the first and last units (`None` for text kinds).
    pub document: Option<(DocPlace, DocPlace)>,
    /// PDF and image windows: the region they cover on each page ([`regions`]).
    pub regions: Vec<[f64; 5]>,
}

/// `?1, ?2, …, ?n`.
fn placeholders(n: usize) -> String {
    let mut out = String::with_capacity(n * 5);
    for i in 1..=n {
        let _ = write!(out, "{}?{i}", if i > 1 { ", " } else { "" });
    }
    out
}

/// Loads the rows of `ids` (duplicates allowed) keyed by chunk id.
pub fn chunks(tx: &dyn Tx, ids: &[i64]) -> Result<HashMap<i64, ChunkRow>> {
    let commit = tx
        .dialect()
        .json_field("r.metadata_json", &["git", "commit"], false);
    let stamp = tx
        .dialect()
        .json_field("r.metadata_json", &["stamp", "as_of"], true);
    let mut unique: Vec<i64> = ids.to_vec();
    unique.sort_unstable();
    unique.dedup();
    let mut out = HashMap::with_capacity(unique.len());
    // SQLite allows 32766 parameters; stay far below it.
    for batch in unique.chunks(500) {
        let mut sql = format!(
            "SELECT c.id, c.byte_start, c.byte_end, c.line_start, c.line_end, c.col_start, c.col_end,
                    c.token_count, c.render_tokens, COALESCE(c.text, u.text), c.capsule_json, c.first_unit_id, c.last_unit_id,
                    r.id, r.seq, r.sha256, s.id, s.rel_path, s.uri, col.name, s.format, l.json_pointer, u.anchor,
                    c.has_code, c.may_contain_instructions, {commit},
                    d1.part, d1.paragraph, d1.table_no, d1.row_no, d1.page_start, d1.page_end, d1.flags_json, d1.origin,
                    d2.part, d2.paragraph, d2.table_no, d2.row_no, d2.page_start, d2.page_end, d2.flags_json, d2.origin,
                    s.kind, col.trust, {stamp}, r.captured_at
             FROM chunks c
             JOIN extractions e ON e.id = c.extraction_id
             JOIN revisions r ON r.id = e.revision_id
             JOIN sources s ON s.id = r.source_id
             JOIN collections col ON col.id = s.collection_id
             JOIN evidence_units u ON u.id = c.first_unit_id
             JOIN locators l ON l.unit_id = c.first_unit_id
             LEFT JOIN doc_locators d1 ON d1.unit_id = c.first_unit_id
             LEFT JOIN doc_locators d2 ON d2.unit_id = c.last_unit_id
             WHERE c.id IN (",
        );
        sql.push_str(&placeholders(batch.len()));
        sql.push(')');
        let bound: Vec<_> = batch.iter().map(|&id| id.into()).collect();
        let rows = tx.rows(&sql, &bound, |r| {
            let capsule: String = r.get(10)?;
            let heading_path = serde_json::from_str::<CapsuleHeadings>(&capsule)
                .map(|c| c.heading_path)
                .unwrap_or_default();
            Ok(ChunkRow {
                chunk_id: r.get(0)?,
                byte_start: r.get(1)?,
                byte_end: r.get(2)?,
                line_start: r.get(3)?,
                line_end: r.get(4)?,
                col_start: r.get(5)?,
                col_end: r.get(6)?,
                token_count: r.get(7)?,
                render_tokens: r.get(8)?,
                text: r.get(9)?,
                heading_path,
                first_unit_id: r.get(11)?,
                last_unit_id: r.get(12)?,
                revision_id: r.get(13)?,
                seq: r.get(14)?,
                sha256: r.get(15)?,
                source_id: r.get(16)?,
                rel_path: r.get(17)?,
                uri: r.get(18)?,
                collection: r.get(19)?,
                format: r.get(20)?,
                kind: r.get(42)?,
                trust: crate::trust::Trust::parse(&r.get::<String>(43)?).unwrap_or_default(),
                freshness: crate::trust::Freshness::of(r.get(44)?, r.get(45)?),
                json_pointer: r.get(21)?,
                anchor: r.get(22)?,
                has_code: r.get(23)?,
                may_contain_instructions: r.get(24)?,
                commit: r.get(25)?,
                document: match (place(r, 26)?, place(r, 34)?) {
                    (Some(first), Some(last)) => Some((first, last)),
                    _ => None,
                },
                regions: Vec::new(),
            })
        })?;
        for mut row in rows {
            if row.document.is_some() {
                row.regions = regions(tx, row.first_unit_id, row.last_unit_id)?;
            }
            out.insert(row.chunk_id, row);
        }
    }
    Ok(out)
}

/// The region a window of units covers, one box per page `[page, x0, y0, x1, y1]` (PDF points,
/// or an image's pixels, origin bottom-left): the union of its units' boxes. Text drawn unseen
/// (possibly far off the page) widens only a window of unseen text. Empty for DOCX.
///
/// # Errors
/// A database error.
pub fn regions(tx: &dyn Tx, first_unit: i64, last_unit: i64) -> Result<Vec<[f64; 5]>> {
    let rows: Vec<String> = tx.rows(
        "SELECT boxes_json FROM doc_locators WHERE unit_id BETWEEN ?1 AND ?2 AND boxes_json IS NOT NULL
           AND (flags_json = '[]' OR (SELECT flags_json FROM doc_locators WHERE unit_id = ?1) <> '[]')
         ORDER BY unit_id",
        args![first_unit, last_unit],
        |r| r.get(0),
    )?;
    let mut out: Vec<[f64; 5]> = Vec::new();
    for boxes in rows {
        let boxes: Vec<[f64; 5]> = serde_json::from_str(&boxes).unwrap_or_default();
        for [page, x0, y0, x1, y1] in boxes {
            #[allow(clippy::float_cmp)] // page numbers are small integers stored as floats
            match out.iter_mut().find(|b| b[0] == page) {
                Some(b) => *b = [page, b[1].min(x0), b[2].min(y0), b[3].max(x1), b[4].max(y1)],
                None => out.push([page, x0, y0, x1, y1]),
            }
        }
    }
    Ok(out)
}

/// A document place from eight columns starting at `at`; `None` when the unit has none.
fn place(r: &dyn Row, at: usize) -> Result<Option<DocPlace>> {
    let Some(part) = r.get::<Option<String>>(at)? else {
        return Ok(None);
    };
    Ok(Some(DocPlace {
        part,
        paragraph: r.get(at + 1)?,
        table: r.get(at + 2)?,
        row: r.get(at + 3)?,
        page_start: r.get(at + 4)?,
        page_end: r.get(at + 5)?,
        flags: serde_json::from_str(&r.get::<String>(at + 6)?).unwrap_or_default(),
        origin: r.get::<String>(at + 7).ok().filter(|o| o != "text"),
    }))
}

/// How many sources of the snapshot the filter admits.
pub fn eligible_sources(tx: &dyn Tx, snapshot_id: i64, filter: &Filter) -> Result<i64> {
    if filter.is_open() {
        return tx.value(
            "SELECT COUNT(*) FROM snapshot_members WHERE snapshot_id = ?1",
            args![snapshot_id],
        );
    }
    let mut sql = String::from(
        "SELECT COUNT(*) FROM snapshot_members m JOIN sources s ON s.id = m.source_id JOIN collections col ON col.id = s.collection_id WHERE m.snapshot_id = ?1",
    );
    let mut values: Vec<Value> = vec![snapshot_id.into()];
    crate::store::filter::push_sql(filter, &mut sql, &mut values);
    tx.value(&sql, &params(&values))
}

/// The windows of the snapshot the filter admits, for a filter with facet conditions or a
/// sensitivity scope: per facet condition, the windows of sources whose own value satisfies it
/// and the windows holding a record whose value does; every condition must hold, and each
/// source's collection, kind and sensitivity must pass.
pub fn eligible_chunks(
    tx: &dyn Tx,
    snapshot_id: i64,
    filter: &Filter,
) -> Result<std::collections::HashSet<u64>> {
    let mut admitted: Option<std::collections::HashSet<u64>> = None;
    if filter.facets.is_empty() {
        // Sensitivity alone: the windows of the sources the scope admits.
        let mut sql = String::from(
            "SELECT c.id FROM snapshot_members m JOIN sources s ON s.id = m.source_id JOIN collections col ON col.id = s.collection_id
             JOIN chunks c ON c.extraction_id = m.extraction_id WHERE m.snapshot_id = ?1",
        );
        let mut values: Vec<Value> = vec![snapshot_id.into()];
        crate::store::filter::push_scope_sql(filter, &mut sql, &mut values);
        admitted = Some(chunk_set(tx, &sql, &values)?);
    }
    for condition in &filter.facets {
        let (sql, values) = crate::store::facets::chunks_sql(
            condition,
            snapshot_id,
            &|sql, values| {
                crate::store::filter::push_scope_sql(filter, sql, values);
            },
            filter.verified,
        );
        let these = chunk_set(tx, &sql, &values)?;
        admitted = Some(match admitted {
            None => these,
            Some(before) => before.intersection(&these).copied().collect(),
        });
    }
    Ok(admitted.unwrap_or_default())
}

/// The chunk ids a query selecting them returns.
fn chunk_set(tx: &dyn Tx, sql: &str, values: &[Value]) -> Result<std::collections::HashSet<u64>> {
    let mut out = std::collections::HashSet::new();
    tx.each(sql, &params(values), &mut |r| {
        out.extend(u64::try_from(r.get::<i64>(0)?).ok());
        Ok(())
    })?;
    Ok(out)
}

/// `path:line-line` of the unit that supports assertion `a` (a subquery over
/// `relation_assertions a`).
pub(crate) const SUPPORT_CITATION: &str =
    "(SELECT s.rel_path || ':' || l.line_start || '-' || l.line_end FROM locators l
    JOIN evidence_units u ON u.id = l.unit_id JOIN extractions e ON e.id = u.extraction_id
    JOIN revisions r ON r.id = e.revision_id JOIN sources s ON s.id = r.source_id
   WHERE l.unit_id = a.support_unit_id)";

/// Whether the store holds any relation assertion.
pub fn any_relations(tx: &dyn Tx) -> Result<bool> {
    tx.value("SELECT EXISTS (SELECT 1 FROM relation_assertions)", &[])
}

/// What the segments (`(source id, chunk id)`) are, by key: their documents' own names
/// (`RFC 3986`) and the records their windows state (`V1.2.3`).
///
/// # Errors
/// The store's errors.
pub fn segment_keys(
    tx: &dyn Tx,
    snapshot_id: i64,
    segments: &[(i64, i64)],
) -> Result<std::collections::BTreeSet<String>> {
    let mut keys: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
    let mut documents = tx.prepare(
        "SELECT i.value FROM snapshot_members m JOIN evidence_units u ON u.extraction_id = m.extraction_id
           JOIN identifiers i ON i.unit_id = u.id
          WHERE m.snapshot_id = ?1 AND m.source_id = ?2 AND i.kind = 'document'",
    )?;
    let mut records = tx.prepare(
        "SELECT i.value FROM chunks c JOIN identifiers i ON i.unit_id BETWEEN c.first_unit_id AND c.last_unit_id
          WHERE c.id = ?1 AND i.kind = 'record'",
    )?;
    let mut sources = std::collections::BTreeSet::new();
    for &(source_id, chunk_id) in segments {
        if sources.insert(source_id) {
            documents.each(args![snapshot_id, source_id], &mut |r| {
                keys.insert(r.get(0)?);
                Ok(())
            })?;
        }
        records.each(args![chunk_id], &mut |r| {
            keys.insert(r.get(0)?);
            Ok(())
        })?;
    }
    Ok(keys)
}

/// An accepted assertion between two keys, with the citation of the unit supporting it.
#[derive(Debug, Clone)]
pub struct AssertionRow {
    /// `relation_assertions.id` (one per relation and pair of keys).
    pub id: i64,
    /// The relation type.
    pub relation: String,
    /// The key it runs from.
    pub from_key: String,
    /// The key it runs to.
    pub to_key: String,
    /// `parsed`, `declared` or `proposed`.
    pub method: String,
    /// `path:line-line` of the supporting unit.
    pub support: Option<String>,
}

/// Accepted assertions with one of `keys` at either end.
///
/// # Errors
/// The store's errors.
pub fn relations_about(
    tx: &dyn Tx,
    keys: &std::collections::BTreeSet<String>,
) -> Result<Vec<AssertionRow>> {
    if keys.is_empty() {
        return Ok(Vec::new());
    }
    let bound: Vec<_> = keys.iter().map(|k| k.as_str().into()).collect();
    let list = placeholders(keys.len());
    // One row per relation and pair of keys: the first assertion of each (several methods may
    // assert one pair). With `MIN(a.id)`, SQLite reads the bare columns beside `GROUP BY` from
    // the row holding the minimum; PostgreSQL says the same with `DISTINCT ON`.
    let sql = match tx.dialect() {
        Dialect::Sqlite => format!(
            "SELECT MIN(a.id), a.relation, a.from_key, a.to_key, a.method, {SUPPORT_CITATION}
               FROM relation_assertions a
              WHERE a.status = 'accepted' AND (a.from_key IN ({list}) OR a.to_key IN ({list}))
              GROUP BY a.relation, a.from_key, a.to_key ORDER BY a.relation, a.from_key, a.to_key"
        ),
        Dialect::Postgres => format!(
            "SELECT DISTINCT ON (a.relation, a.from_key, a.to_key) a.id, a.relation, a.from_key, a.to_key, a.method, {SUPPORT_CITATION}
               FROM relation_assertions a
              WHERE a.status = 'accepted' AND (a.from_key IN ({list}) OR a.to_key IN ({list}))
              ORDER BY a.relation, a.from_key, a.to_key, a.id"
        ),
    };
    // Both lists are `?1…?n`: the keys are bound once.
    tx.rows(&sql, &bound, |r| {
        Ok(AssertionRow {
            id: r.get(0)?,
            relation: r.get(1)?,
            from_key: r.get(2)?,
            to_key: r.get(3)?,
            method: r.get(4)?,
            support: r.get(5)?,
        })
    })
}

/// The windows of `sources` in the snapshot.
pub fn chunks_of_sources(
    tx: &dyn Tx,
    snapshot_id: i64,
    sources: &[i64],
) -> Result<std::collections::HashSet<u64>> {
    let mut out = std::collections::HashSet::new();
    let mut stmt = tx.prepare(
        "SELECT c.id FROM snapshot_members m JOIN chunks c ON c.extraction_id = m.extraction_id
         WHERE m.snapshot_id = ?1 AND m.source_id = ?2",
    )?;
    for &source in sources {
        stmt.each(args![snapshot_id, source], &mut |r| {
            out.extend(u64::try_from(r.get::<i64>(0)?).ok());
            Ok(())
        })?;
    }
    Ok(out)
}

/// `(chunk id, file path)` of those of `ids` that are windows of code files.
///
/// # Errors
/// The store's errors.
pub fn code_paths(tx: &dyn Tx, ids: &[i64]) -> Result<Vec<(i64, String)>> {
    let mut out = Vec::new();
    for batch in ids.chunks(500) {
        let sql = format!(
            "SELECT c.id, s.rel_path FROM chunks c JOIN extractions e ON e.id = c.extraction_id
             JOIN revisions r ON r.id = e.revision_id JOIN sources s ON s.id = r.source_id
             WHERE s.format = 'code_file' AND c.id IN ({})",
            placeholders(batch.len())
        );
        let bound: Vec<_> = batch.iter().map(|&id| id.into()).collect();
        out.extend(tx.rows(&sql, &bound, |r| Ok((r.get(0)?, r.get(1)?)))?);
    }
    Ok(out)
}
