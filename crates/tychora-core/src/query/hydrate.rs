//! Hydration: candidate chunk ids → the rows a segment is built from, in one query.

use std::collections::HashMap;
use std::fmt::Write as _;

use rusqlite::{params_from_iter, Connection};

use crate::error::Result;
use crate::lexical::Filter;

/// Everything a segment needs about one chunk.
#[derive(Debug, Clone)]
pub struct ChunkRow {
    pub chunk_id: i64,
    pub byte_start: i64,
    pub byte_end: i64,
    pub line_start: i64,
    pub line_end: i64,
    pub col_start: i64,
    pub col_end: i64,
    pub token_count: usize,
    pub text: String,
    pub heading_path: Vec<String>,
    pub first_unit_id: i64,
    pub last_unit_id: i64,
    pub revision_id: i64,
    pub seq: i64,
    pub sha256: String,
    pub source_id: i64,
    pub rel_path: String,
    pub uri: String,
    pub collection: String,
    pub kind: String,
    pub json_pointer: Option<String>,
    pub anchor: Option<String>,
    pub has_code: bool,
}

/// `?1, ?2, …, ?n`.
fn placeholders(n: usize) -> String {
    let mut out = String::with_capacity(n * 5);
    for i in 1..=n {
        let _ = write!(out, "{}?{i}", if i > 1 { ", " } else { "" });
    }
    out
}

/// The evidence owner `(extraction_id, owner_key)` of each chunk id.
pub fn owners(conn: &Connection, ids: &[i64]) -> Result<HashMap<i64, (i64, String)>> {
    let mut unique: Vec<i64> = ids.to_vec();
    unique.sort_unstable();
    unique.dedup();
    let mut out = HashMap::with_capacity(unique.len());
    for batch in unique.chunks(500) {
        let sql = format!("SELECT id, extraction_id, owner_key FROM chunks WHERE id IN ({})", placeholders(batch.len()));
        let mut stmt = conn.prepare(&sql)?;
        for row in stmt.query_map(params_from_iter(batch.iter()), |r| Ok((r.get::<_, i64>(0)?, (r.get(1)?, r.get(2)?))))? {
            let (id, owner) = row?;
            out.insert(id, owner);
        }
    }
    Ok(out)
}

/// Loads the rows of `ids` (duplicates allowed) keyed by chunk id.
pub fn chunks(conn: &Connection, ids: &[i64]) -> Result<HashMap<i64, ChunkRow>> {
    let mut unique: Vec<i64> = ids.to_vec();
    unique.sort_unstable();
    unique.dedup();
    let mut out = HashMap::with_capacity(unique.len());
    // SQLite allows 32766 parameters; stay far below it.
    for batch in unique.chunks(500) {
        let mut sql = String::from(
            "SELECT c.id, c.byte_start, c.byte_end, c.line_start, c.line_end, c.col_start, c.col_end,
                    c.token_count, c.text, c.capsule_json, c.first_unit_id, c.last_unit_id,
                    r.id, r.seq, r.sha256, s.id, s.rel_path, s.uri, col.name, s.kind, l.json_pointer, u.anchor,
                    EXISTS (SELECT 1 FROM evidence_units x WHERE x.id BETWEEN c.first_unit_id AND c.last_unit_id AND x.unit_type = 'code_block')
             FROM chunks c
             JOIN extractions e ON e.id = c.extraction_id
             JOIN revisions r ON r.id = e.revision_id
             JOIN sources s ON s.id = r.source_id
             JOIN collections col ON col.id = s.collection_id
             JOIN evidence_units u ON u.id = c.first_unit_id
             JOIN locators l ON l.unit_id = c.first_unit_id
             WHERE c.id IN (",
        );
        sql.push_str(&placeholders(batch.len()));
        sql.push(')');
        let mut stmt = conn.prepare(&sql)?;
        let rows = stmt.query_map(params_from_iter(batch.iter()), |r| {
            let capsule: String = r.get(9)?;
            let heading_path = serde_json::from_str::<serde_json::Value>(&capsule)
                .ok()
                .and_then(|v| v.get("heading_path").and_then(|p| serde_json::from_value::<Vec<String>>(p.clone()).ok()))
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
                text: r.get(8)?,
                heading_path,
                first_unit_id: r.get(10)?,
                last_unit_id: r.get(11)?,
                revision_id: r.get(12)?,
                seq: r.get(13)?,
                sha256: r.get(14)?,
                source_id: r.get(15)?,
                rel_path: r.get(16)?,
                uri: r.get(17)?,
                collection: r.get(18)?,
                kind: r.get(19)?,
                json_pointer: r.get(20)?,
                anchor: r.get(21)?,
                has_code: r.get(22)?,
            })
        })?;
        for row in rows {
            let row = row?;
            out.insert(row.chunk_id, row);
        }
    }
    Ok(out)
}

/// How many sources of the snapshot the filter admits.
pub fn eligible_sources(conn: &Connection, snapshot_id: i64, filter: &Filter) -> Result<i64> {
    let mut sql = String::from(
        "SELECT COUNT(*) FROM snapshot_members m JOIN sources s ON s.id = m.source_id JOIN collections col ON col.id = s.collection_id WHERE m.snapshot_id = ?1",
    );
    let mut values: Vec<rusqlite::types::Value> = vec![snapshot_id.into()];
    filter.push_sql(&mut sql, &mut values);
    Ok(conn.query_row(&sql, params_from_iter(values), |r| r.get(0))?)
}
