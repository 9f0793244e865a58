//! Structured records: listed with their facet conditions, and shown with every piece of
//! evidence that states them (file, lines, revision), the sources' own statements beside the
//! record's merged body.

use serde::Serialize;

use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::store::records as record_rows;
pub use crate::store::records::{RecordEvidence, RecordStatus, RecordSummary};

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

/// A page of records.
#[derive(Debug, Clone, Serialize)]
pub struct RecordList {
    /// The matching records by kind, record type and key, at most the query's limit.
    pub records: Vec<RecordSummary>,
    /// How many match in all.
    pub total: i64,
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

/// Records matching `query`, by kind, type and key.
///
/// # Errors
/// `E_INVALID_ARGUMENT` for a facet condition that does not read; SQLite errors.
pub(crate) fn list_records(engine: &Engine, query: &RecordQuery) -> Result<RecordList> {
    let conditions = query
        .facets
        .iter()
        .map(|raw| crate::facet::Condition::parse(&engine.pack().kinds, raw))
        .collect::<Result<Vec<_>>>()?;
    let limit = query.limit.unwrap_or(100).min(1000);
    engine.with_reader(|conn| {
        let (total, records) = record_rows::list(
            conn,
            query.kind.as_deref(),
            query.record_type.as_deref(),
            &conditions,
            limit,
        )?;
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
        let found = record_rows::with_key(conn, key, kind)?;
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
        let evidence = record_rows::evidence(conn, record.id)?;
        Ok(RecordDetail { record, evidence })
    })
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
    record_rows::set_status(&*engine.writer()?, id, status, crate::clock::now_ms())?;
    show_record(engine, key, kind)
}
