//! Structured records: listed with their facet conditions, and shown with every piece of
//! evidence that states them (file, lines, revision), the sources' own statements beside the
//! record's merged body.

use rusqlite::{Connection, params, params_from_iter};
use serde::Serialize;

use crate::engine::Engine;
use crate::error::{Error, Result};

/// Which records to list.
#[derive(Debug, Clone, Default)]
pub struct RecordQuery {
    /// Only records of this kind.
    pub kind: Option<String>,
    /// Only records of this type (`requirement`).
    pub record_type: Option<String>,
    /// Facet conditions, all of which the record's values must satisfy (`level<=2`).
    pub facets: Vec<String>,
    /// At most this many (default 100, at most 1000).
    pub limit: Option<usize>,
}

crate::wire::wire_enum! {
    /// Where a structured record stands: the verified profile counts only reviewed ones.
    pub enum RecordStatus {
        /// Read from a source; not yet looked at.
        Captured = "captured",
        /// Accepted by a person.
        Reviewed = "reviewed",
        /// Rejected by a person.
        Rejected = "rejected",
    }
}

/// A record as listed.
#[derive(Debug, Clone, Serialize)]
pub struct RecordSummary {
    /// The record's row id.
    pub id: i64,
    /// The kind whose definition declares its record type.
    pub kind: String,
    /// Its record type (`requirement`), one of the kind's schemas.
    pub record_type: String,
    /// Its key (`V1.2.3`), unique within its kind and record type.
    pub key: String,
    /// Captured, reviewed or rejected.
    pub status: RecordStatus,
    /// The merged body: each capture's fields laid over the earlier ones, so a field holds its
    /// newest captured value.
    pub body: serde_json::Value,
    /// Units that state it.
    pub evidence_count: i64,
}

/// A page of records.
#[derive(Debug, Clone, Serialize)]
pub struct RecordList {
    /// The matching records by kind, record type and key, at most the query's limit.
    pub records: Vec<RecordSummary>,
    /// How many match in all.
    pub total: i64,
}

/// One unit that states a record.
#[derive(Debug, Clone, Serialize)]
pub struct RecordEvidence {
    /// The source the unit was read from.
    pub source_id: i64,
    /// The source's path, relative to its root.
    pub path: String,
    /// The source's collection.
    pub collection: String,
    /// The format its bytes were parsed as (`markdown`, `csv`, `json`…).
    pub format: String,
    /// The revision the unit was read from.
    pub revision_id: i64,
    /// That revision's number within its source (1 for the first capture).
    pub seq: i64,
    /// Whether this is the source's newest revision.
    pub current: bool,
    /// The evidence unit that states the record.
    pub unit_id: i64,
    /// `path:line-line`.
    pub citation: String,
    /// The unit's JSON Pointer in its document (`/0`) for a JSON or JSON Lines record; `None`
    /// for other formats.
    pub json_pointer: Option<String>,
    /// The record as this unit states it.
    pub body: serde_json::Value,
}

/// A record with its evidence.
#[derive(Debug, Clone, Serialize)]
pub struct RecordDetail {
    /// The record as listed (its fields serialized inline).
    #[serde(flatten)]
    pub record: RecordSummary,
    /// Every unit that states it, by path, then newest revision first, then line.
    pub evidence: Vec<RecordEvidence>,
}

const SUMMARY: &str = "SELECT r.id, r.kind, r.record_type, r.key, r.status, r.body_json,
    (SELECT COUNT(*) FROM record_evidence re WHERE re.record_id = r.id) FROM structured_records r";

fn summary(r: &rusqlite::Row<'_>) -> rusqlite::Result<RecordSummary> {
    Ok(RecordSummary {
        id: r.get(0)?,
        kind: r.get(1)?,
        record_type: r.get(2)?,
        key: r.get(3)?,
        status: r.get(4)?,
        body: serde_json::from_str(&r.get::<_, String>(5)?).unwrap_or_default(),
        evidence_count: r.get(6)?,
    })
}

/// Records matching `query`, by kind, type and key.
///
/// # Errors
/// `E_INVALID_ARGUMENT` for a facet condition that does not read; SQLite errors.
pub(crate) fn list_records(engine: &Engine, query: &RecordQuery) -> Result<RecordList> {
    let mut clause = String::from(" WHERE 1 = 1");
    let mut values: Vec<rusqlite::types::Value> = Vec::new();
    for (column, value) in [
        ("r.kind", &query.kind),
        ("r.record_type", &query.record_type),
    ] {
        if let Some(value) = value {
            values.push(value.clone().into());
            clause.push_str(&format!(" AND {column} = ?{}", values.len()));
        }
    }
    for raw in &query.facets {
        let condition = crate::facet::Condition::parse(&engine.pack().kinds, raw)?;
        clause.push_str(" AND r.id IN (SELECT fv.record_id FROM facet_values fv JOIN facet_definitions fd ON fd.id = fv.definition_id WHERE fv.record_id IS NOT NULL AND ");
        crate::store::facets::tests_sql(&condition, &mut clause, &mut values);
        clause.push(')');
    }
    let limit = query.limit.unwrap_or(100).min(1000);
    engine.with_reader(|conn| {
        let total: i64 = conn.query_row(
            &format!("SELECT COUNT(*) FROM structured_records r{clause}"),
            params_from_iter(values.iter()),
            |r| r.get(0),
        )?;
        let records = conn
            .prepare(&format!(
                "{SUMMARY}{clause} ORDER BY r.kind, r.record_type, r.key LIMIT {limit}"
            ))?
            .query_map(params_from_iter(values.iter()), summary)?
            .collect::<rusqlite::Result<_>>()?;
        Ok(RecordList { records, total })
    })
}

/// The record `key` (of `kind` when several kinds have one), with its evidence.
///
/// # Errors
/// `E_NOT_FOUND` for no such record; `E_INVALID_ARGUMENT` when the key names records of several
/// kinds and none was given.
pub(crate) fn show_record(engine: &Engine, key: &str, kind: Option<&str>) -> Result<RecordDetail> {
    engine.with_reader(|conn| {
        let found: Vec<RecordSummary> = conn
            .prepare_cached(&format!(
                "{SUMMARY} WHERE r.key = ?1 AND (?2 IS NULL OR r.kind = ?2) ORDER BY r.kind, r.record_type"
            ))?
            .query_map(params![key, kind], summary)?
            .collect::<rusqlite::Result<_>>()?;
        let record = match <[RecordSummary; 1]>::try_from(found) {
            Ok([only]) => only,
            Err(none) if none.is_empty() => {
                return Err(Error::NotFound {
                    what: "record",
                    id: key.to_string(),
                });
            }
            Err(several) => {
                return Err(Error::InvalidArgument(format!(
                    "{key} names records of several kinds or types ({}): give the kind",
                    several
                        .iter()
                        .map(|r| format!("{} {}", r.kind, r.record_type))
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            }
        };
        let evidence = evidence_of(conn, record.id)?;
        Ok(RecordDetail { record, evidence })
    })
}

fn evidence_of(conn: &Connection, record_id: i64) -> Result<Vec<RecordEvidence>> {
    let mut stmt = conn.prepare_cached(
        "SELECT s.id, s.rel_path, col.name, s.format, rv.id, rv.seq,
                rv.seq = (SELECT MAX(seq) FROM revisions WHERE source_id = s.id),
                re.unit_id, l.line_start, l.line_end, l.json_pointer, re.body_json
         FROM record_evidence re
         JOIN revisions rv ON rv.id = re.revision_id
         JOIN sources s ON s.id = rv.source_id
         JOIN collections col ON col.id = s.collection_id
         JOIN locators l ON l.unit_id = re.unit_id
         WHERE re.record_id = ?1
         ORDER BY s.rel_path, rv.seq DESC, l.line_start",
    )?;
    let rows = stmt.query_map([record_id], |r| {
        let path: String = r.get(1)?;
        let (start, end): (i64, i64) = (r.get(8)?, r.get(9)?);
        Ok(RecordEvidence {
            source_id: r.get(0)?,
            citation: format!("{path}:{start}-{end}"),
            path,
            collection: r.get(2)?,
            format: r.get(3)?,
            revision_id: r.get(4)?,
            seq: r.get(5)?,
            current: r.get(6)?,
            unit_id: r.get(7)?,
            json_pointer: r.get(10)?,
            body: serde_json::from_str(&r.get::<_, String>(11)?).unwrap_or_default(),
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// A person's decision on the record `key` (of `kind`, when several kinds have one): `accept`
/// makes it `reviewed` (the verified profile counts it), `reject` makes it `rejected`.
///
/// # Errors
/// `E_INVALID_ARGUMENT` for another action or an ambiguous key; `E_NOT_FOUND` for no such record.
pub(crate) fn review_record(
    engine: &Engine,
    key: &str,
    kind: Option<&str>,
    action: &str,
) -> Result<RecordDetail> {
    let status = match action {
        "accept" => RecordStatus::Reviewed,
        "reject" => RecordStatus::Rejected,
        _ => {
            return Err(Error::InvalidArgument(format!(
                "review action {action:?}: expected accept or reject"
            )));
        }
    };
    let id = show_record(engine, key, kind)?.record.id;
    engine.writer()?.execute(
        "UPDATE structured_records SET status = ?2, updated_at = ?3 WHERE id = ?1",
        params![id, status, crate::clock::now_ms()],
    )?;
    show_record(engine, key, kind)
}
