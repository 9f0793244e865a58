//! `inspect symbol`: a code symbol's definitions with their references, callers and callees.

use napi::bindgen_prelude::{Either, Null};
use napi_derive::napi;
use tychora_core::graph::symbol as core;

use super::{count, nullable};

/// What to look up.
#[napi(object)]
pub struct InspectSymbolRequest {
    pub name: String,
    pub repo: Option<String>,
    #[napi(js_name = "snapshot_id")]
    pub snapshot_id: Option<i64>,
}

/// Where something is: file, lines, commit.
#[napi(object)]
pub struct Site {
    pub path: String,
    pub root: String,
    #[napi(js_name = "line_start")]
    pub line_start: i64,
    #[napi(js_name = "line_end")]
    pub line_end: i64,
    #[napi(js_name = "revision_id")]
    pub revision_id: i64,
    pub commit: Option<String>,
    pub citation: String,
}

/// One relation row.
#[napi(object)]
pub struct SymbolRelation {
    #[napi(
        ts_type = "'defines' | 'contains' | 'imports' | 'references' | 'calls' | 'inherits' | 'implements'"
    )]
    pub kind: String,
    pub symbol: Either<String, Null>,
    pub text: String,
    #[napi(ts_type = "'resolved' | 'ambiguous' | 'unresolved'")]
    pub outcome: String,
    pub reason: Option<String>,
    pub candidates: Option<Vec<String>>,
    pub site: Site,
}

/// One definition and its relations.
#[napi(object)]
pub struct SymbolDefinition {
    #[napi(js_name = "unit_id")]
    pub unit_id: i64,
    pub symbol: String,
    #[napi(js_name = "unit_type", ts_type = "UnitType")]
    pub unit_type: String,
    pub site: Site,
    pub signature: String,
    pub references: Vec<SymbolRelation>,
    #[napi(js_name = "references_total")]
    pub references_total: i64,
    pub callers: Vec<SymbolRelation>,
    #[napi(js_name = "callers_total")]
    pub callers_total: i64,
    pub callees: Vec<SymbolRelation>,
    #[napi(js_name = "callees_total")]
    pub callees_total: i64,
}

/// What `inspect symbol` returns.
#[napi(object)]
pub struct SymbolReport {
    pub name: String,
    #[napi(js_name = "snapshot_id")]
    pub snapshot_id: Either<i64, Null>,
    #[napi(ts_type = "'syntactic'")]
    pub resolution: String,
    pub definitions: Vec<SymbolDefinition>,
    pub unresolved: Vec<SymbolRelation>,
    #[napi(js_name = "unresolved_total")]
    pub unresolved_total: i64,
}

impl From<core::SymbolReport> for SymbolReport {
    fn from(value: core::SymbolReport) -> Self {
        let core::SymbolReport {
            name,
            snapshot_id,
            resolution,
            definitions,
            unresolved,
            unresolved_total,
        } = value;
        Self {
            name,
            snapshot_id: nullable(snapshot_id),
            resolution: resolution.into(),
            definitions: definitions.into_iter().map(definition).collect(),
            unresolved: unresolved.into_iter().map(relation).collect(),
            unresolved_total: count(unresolved_total),
        }
    }
}

fn definition(value: core::Definition) -> SymbolDefinition {
    let core::Definition {
        unit_id,
        symbol,
        unit_type,
        site: at,
        signature,
        references,
        references_total,
        callers,
        callers_total,
        callees,
        callees_total,
    } = value;
    SymbolDefinition {
        unit_id,
        symbol,
        unit_type: unit_type.to_string(),
        site: site(at),
        signature,
        references: references.into_iter().map(relation).collect(),
        references_total: count(references_total),
        callers: callers.into_iter().map(relation).collect(),
        callers_total: count(callers_total),
        callees: callees.into_iter().map(relation).collect(),
        callees_total: count(callees_total),
    }
}

fn relation(value: core::Relation) -> SymbolRelation {
    let core::Relation {
        kind,
        symbol,
        text,
        outcome,
        reason,
        candidates,
        site: at,
    } = value;
    SymbolRelation {
        kind,
        symbol: nullable(symbol),
        text,
        outcome,
        reason,
        candidates: (!candidates.is_empty()).then_some(candidates),
        site: site(at),
    }
}

fn site(value: core::Site) -> Site {
    let core::Site {
        path,
        root,
        line_start,
        line_end,
        revision_id,
        commit,
        citation,
    } = value;
    Site {
        path,
        root,
        line_start,
        line_end,
        revision_id,
        commit,
        citation,
    }
}
