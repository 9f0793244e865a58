//! Structured records: listings and one record with its evidence.

use napi::bindgen_prelude::{Either, Null};
use napi_derive::napi;
use tychora_core::manage as core;

use super::nullable;

/// Which records to list.
#[napi(object)]
pub struct ListRecordsOptions {
    pub kind: Option<String>,
    #[napi(js_name = "record_type")]
    pub record_type: Option<String>,
    /// Facet conditions on the records' values (`level<=2`).
    pub facets: Option<Vec<String>>,
    /// At most this many (default 100, at most 1000).
    pub limit: Option<u32>,
}

impl From<ListRecordsOptions> for core::RecordQuery {
    fn from(value: ListRecordsOptions) -> Self {
        let ListRecordsOptions {
            kind,
            record_type,
            facets,
            limit,
        } = value;
        Self {
            kind,
            record_type,
            facets: facets.unwrap_or_default(),
            limit: limit.map(|n| n as usize),
        }
    }
}

/// A record as listed.
#[napi(object)]
pub struct RecordSummary {
    pub id: i64,
    pub kind: String,
    #[napi(js_name = "record_type")]
    pub record_type: String,
    pub key: String,
    #[napi(ts_type = "'captured' | 'reviewed' | 'rejected'")]
    pub status: String,
    #[napi(ts_type = "Record<string, unknown>")]
    pub body: serde_json::Value,
    #[napi(js_name = "evidence_count")]
    pub evidence_count: i64,
}

impl From<core::RecordSummary> for RecordSummary {
    fn from(value: core::RecordSummary) -> Self {
        let core::RecordSummary {
            id,
            kind,
            record_type,
            key,
            status,
            body,
            evidence_count,
        } = value;
        Self {
            id,
            kind,
            record_type,
            key,
            status: status.as_str().into(),
            body,
            evidence_count,
        }
    }
}

/// A page of records.
#[napi(object)]
pub struct RecordList {
    pub records: Vec<RecordSummary>,
    pub total: i64,
}

impl From<core::RecordList> for RecordList {
    fn from(value: core::RecordList) -> Self {
        let core::RecordList { records, total } = value;
        Self {
            records: records.into_iter().map(Into::into).collect(),
            total,
        }
    }
}

/// One unit that states a record.
#[napi(object)]
pub struct RecordEvidence {
    #[napi(js_name = "source_id")]
    pub source_id: i64,
    pub path: String,
    pub collection: String,
    pub format: String,
    #[napi(js_name = "revision_id")]
    pub revision_id: i64,
    pub seq: i64,
    /// Whether this is the source's newest revision.
    pub current: bool,
    #[napi(js_name = "unit_id")]
    pub unit_id: i64,
    pub citation: String,
    #[napi(js_name = "json_pointer")]
    pub json_pointer: Either<String, Null>,
    /// The record as this unit states it.
    #[napi(ts_type = "Record<string, unknown>")]
    pub body: serde_json::Value,
}

/// A record with its evidence.
#[napi(object)]
pub struct RecordDetail {
    pub id: i64,
    pub kind: String,
    #[napi(js_name = "record_type")]
    pub record_type: String,
    pub key: String,
    #[napi(ts_type = "'captured' | 'reviewed' | 'rejected'")]
    pub status: String,
    #[napi(ts_type = "Record<string, unknown>")]
    pub body: serde_json::Value,
    #[napi(js_name = "evidence_count")]
    pub evidence_count: i64,
    pub evidence: Vec<RecordEvidence>,
}

impl From<core::RecordDetail> for RecordDetail {
    fn from(value: core::RecordDetail) -> Self {
        let core::RecordDetail { record, evidence } = value;
        let RecordSummary {
            id,
            kind,
            record_type,
            key,
            status,
            body,
            evidence_count,
        } = record.into();
        Self {
            id,
            kind,
            record_type,
            key,
            status,
            body,
            evidence_count,
            evidence: evidence
                .into_iter()
                .map(|e| {
                    let core::RecordEvidence {
                        source_id,
                        path,
                        collection,
                        format,
                        revision_id,
                        seq,
                        current,
                        unit_id,
                        citation,
                        json_pointer,
                        body,
                    } = e;
                    RecordEvidence {
                        source_id,
                        path,
                        collection,
                        format,
                        revision_id,
                        seq,
                        current,
                        unit_id,
                        citation,
                        json_pointer: nullable(json_pointer),
                        body,
                    }
                })
                .collect(),
        }
    }
}
