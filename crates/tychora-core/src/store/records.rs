//! Structured records (a kind's requirements, controls, obligations…) and the evidence that
//! states them, as ingest writes them.

use std::fmt::Write as _;

use super::tx::{Row, Tx, args, params};
use serde::Serialize;

use crate::error::Result;
use crate::facet::Condition;

/// `(id, body JSON)` of the record of this kind, type and key.
///
/// # Errors
/// The store's errors.
pub fn by_key(
    tx: &dyn Tx,
    kind: &str,
    record_type: &str,
    key: &str,
) -> Result<Option<(i64, String)>> {
    tx.optional(
        "SELECT id, body_json FROM structured_records WHERE kind = ?1 AND record_type = ?2 AND key = ?3",
        args![kind, record_type, key],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
}

/// Replaces a record's body.
///
/// # Errors
/// The store's errors.
pub fn set_body(tx: &dyn Tx, record_id: i64, body_json: &str, now: i64) -> Result<()> {
    tx.write(
        "UPDATE structured_records SET body_json = ?2, updated_at = ?3 WHERE id = ?1",
        args![record_id, body_json, now],
    )
}

/// Records a new record; returns its id.
///
/// # Errors
/// The store's errors.
pub fn insert(
    tx: &dyn Tx,
    kind: &str,
    record_type: &str,
    key: &str,
    body_json: &str,
    now: i64,
) -> Result<i64> {
    tx.insert(
        "INSERT INTO structured_records (kind, record_type, key, body_json, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?5)",
        args![kind, record_type, key, body_json, now],
    )
}

/// `(path, body JSON)` of what other sources state about a record, at their newest revision
/// (other than the source of `revision_id`).
///
/// # Errors
/// The store's errors.
pub fn stated_elsewhere(
    tx: &dyn Tx,
    record_id: i64,
    revision_id: i64,
) -> Result<Vec<(String, String)>> {
    tx.rows(
        "SELECT s.rel_path, re.body_json FROM record_evidence re
         JOIN revisions r ON r.id = re.revision_id JOIN sources s ON s.id = r.source_id
         WHERE re.record_id = ?1 AND r.source_id != (SELECT source_id FROM revisions WHERE id = ?2)
           AND r.seq = (SELECT MAX(seq) FROM revisions WHERE source_id = r.source_id)
         ORDER BY s.rel_path, re.unit_id",
        args![record_id, revision_id],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
}

/// Records that a unit states (part of) a record, with what it states.
///
/// # Errors
/// The store's errors.
pub fn put_evidence(
    tx: &dyn Tx,
    record_id: i64,
    unit_id: i64,
    revision_id: i64,
    body_json: &str,
) -> Result<()> {
    tx.write(
        "INSERT INTO record_evidence (record_id, unit_id, revision_id, body_json) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (record_id, unit_id) DO UPDATE SET body_json = excluded.body_json",
        args![record_id, unit_id, revision_id, body_json],
    )
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

const SUMMARY: &str = "SELECT r.id, r.kind, r.record_type, r.key, r.status, r.body_json,
    (SELECT COUNT(*) FROM record_evidence re WHERE re.record_id = r.id) FROM structured_records r";

fn summary(r: &dyn Row) -> Result<RecordSummary> {
    Ok(RecordSummary {
        id: r.get(0)?,
        kind: r.get(1)?,
        record_type: r.get(2)?,
        key: r.get(3)?,
        status: r.get(4)?,
        body: serde_json::from_str(&r.get::<String>(5)?).unwrap_or_default(),
        evidence_count: r.get(6)?,
    })
}

/// Records of `kind` and `record_type` (each when given) whose facet values satisfy every
/// condition, by kind, type and key, at most `limit`; and how many match in all.
///
/// # Errors
/// The store's errors.
pub fn list(
    tx: &dyn Tx,
    kind: Option<&str>,
    record_type: Option<&str>,
    conditions: &[Condition],
    limit: usize,
) -> Result<(i64, Vec<RecordSummary>)> {
    let mut clause = String::from(" WHERE 1 = 1");
    let mut values: Vec<super::tx::Value> = Vec::new();
    for (column, value) in [("r.kind", kind), ("r.record_type", record_type)] {
        if let Some(value) = value {
            values.push(value.to_string().into());
            let _ = write!(clause, " AND {column} = ?{}", values.len());
        }
    }
    for condition in conditions {
        clause.push_str(" AND r.id IN (SELECT fv.record_id FROM facet_values fv JOIN facet_definitions fd ON fd.id = fv.definition_id WHERE fv.record_id IS NOT NULL AND ");
        super::facets::tests_sql(condition, &mut clause, &mut values);
        clause.push(')');
    }
    let values = params(&values);
    let total: i64 = tx.value(
        &format!("SELECT COUNT(*) FROM structured_records r{clause}"),
        &values,
    )?;
    let records = tx.rows(
        &format!("{SUMMARY}{clause} ORDER BY r.kind, r.record_type, r.key LIMIT {limit}"),
        &values,
        summary,
    )?;
    Ok((total, records))
}

/// The records with this key (of `kind`, when given), by kind and type.
///
/// # Errors
/// The store's errors.
pub fn with_key(tx: &dyn Tx, key: &str, kind: Option<&str>) -> Result<Vec<RecordSummary>> {
    tx.rows(
        &format!(
            "{SUMMARY} WHERE r.key = ?1 AND (CAST(?2 AS TEXT) IS NULL OR r.kind = ?2) ORDER BY r.kind, r.record_type"
        ),
        args![key, kind],
        summary,
    )
}

/// Every unit that states a record, by path, then newest revision first, then line.
///
/// # Errors
/// The store's errors.
pub fn evidence(tx: &dyn Tx, record_id: i64) -> Result<Vec<RecordEvidence>> {
    tx.rows(
        "SELECT s.id, s.rel_path, col.name, s.format, rv.id, rv.seq,
                rv.seq = (SELECT MAX(seq) FROM revisions WHERE source_id = s.id),
                re.unit_id, l.line_start, l.line_end, l.json_pointer, re.body_json
         FROM record_evidence re
         JOIN revisions rv ON rv.id = re.revision_id
         JOIN sources s ON s.id = rv.source_id
         JOIN collections col ON col.id = s.collection_id
         JOIN locators l ON l.unit_id = re.unit_id
         WHERE re.record_id = ?1
         ORDER BY s.rel_path, rv.seq DESC, l.line_start, re.unit_id",
        args![record_id],
        |r| {
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
                body: serde_json::from_str(&r.get::<String>(11)?).unwrap_or_default(),
            })
        },
    )
}

/// Records a person's decision on a record.
///
/// # Errors
/// The store's errors.
pub fn set_status(tx: &dyn Tx, record_id: i64, status: RecordStatus, now: i64) -> Result<()> {
    tx.execute(
        "UPDATE structured_records SET status = ?2, updated_at = ?3 WHERE id = ?1",
        args![record_id, status.as_str(), now],
    )?;
    Ok(())
}
