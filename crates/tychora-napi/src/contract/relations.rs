//! Relation assertions: listed, declared or proposed, reviewed.

use napi::bindgen_prelude::{Either, Null};
use napi_derive::napi;
use tychora_core::manage as core;

use super::nullable;

/// Which assertions to list.
#[napi(object)]
pub struct ListRelationsOptions {
    /// Assertions with this key at either end (`RFC 3986`).
    pub key: Option<String>,
    pub relation: Option<String>,
    #[napi(ts_type = "'proposed' | 'accepted' | 'rejected'")]
    pub status: Option<String>,
}

/// An assertion to declare (accepted at once) or propose (reviewed later).
#[napi(object)]
pub struct DeclareRelation {
    pub relation: String,
    pub from: String,
    pub to: String,
    /// `unit:N`, `chunk:N` or a segment id.
    pub evidence: Option<String>,
    pub note: Option<String>,
    pub propose: Option<bool>,
    pub actor: Option<String>,
}

impl From<DeclareRelation> for core::DeclareRelation {
    fn from(value: DeclareRelation) -> Self {
        let DeclareRelation {
            relation,
            from,
            to,
            evidence,
            note,
            propose,
            actor,
        } = value;
        Self {
            relation,
            from,
            to,
            evidence,
            note,
            propose: propose.unwrap_or(false),
            actor,
        }
    }
}

/// A stored assertion and where it stands.
#[napi(object)]
pub struct RelationAssertion {
    pub id: i64,
    pub relation: String,
    #[napi(js_name = "from_kind")]
    pub from_kind: String,
    #[napi(js_name = "from_key")]
    pub from_key: String,
    #[napi(js_name = "to_kind")]
    pub to_kind: String,
    #[napi(js_name = "to_key")]
    pub to_key: String,
    #[napi(ts_type = "'parsed' | 'declared' | 'proposed'")]
    pub method: String,
    #[napi(ts_type = "'proposed' | 'accepted' | 'rejected'")]
    pub status: String,
    pub actor: String,
    pub note: Either<String, Null>,
    /// `path:line-line` of the supporting unit.
    pub support: Either<String, Null>,
    #[napi(js_name = "revision_id")]
    pub revision_id: Either<i64, Null>,
    #[napi(js_name = "created_at")]
    pub created_at: i64,
}

impl From<core::RelationAssertion> for RelationAssertion {
    fn from(value: core::RelationAssertion) -> Self {
        let core::RelationAssertion {
            id,
            relation,
            from_kind,
            from_key,
            to_kind,
            to_key,
            method,
            status,
            actor,
            note,
            support,
            revision_id,
            created_at,
        } = value;
        Self {
            id,
            relation,
            from_kind,
            from_key,
            to_kind,
            to_key,
            method: method.as_str().into(),
            status: status.as_str().into(),
            actor,
            note: nullable(note),
            support: nullable(support),
            revision_id: nullable(revision_id),
            created_at,
        }
    }
}
