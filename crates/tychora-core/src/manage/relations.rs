//! Relation assertions as the owner and reviewers see them: listed with their support, declared
//! (or proposed) between named evidence objects, and reviewed — each review an event, its
//! decision the assertion's status.

use serde::{Deserialize, Serialize};

use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::ingest::relations::{Assertion, assert, cardinality_breach};
pub use crate::store::assertions::RelationAssertion;
use crate::store::assertions::{self, Decision};
use crate::store::tx::Begun;
use crate::store::tx::Tx;

/// An assertion to declare (the owner: accepted at once) or propose (an agent: reviewed later).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeclareRelation {
    /// The relation type (`supersedes`).
    pub relation: String,
    /// The subject's key (`ADR-7`, `V1.2.3`, `RFC 3986`).
    pub from: String,
    /// The object's key.
    pub to: String,
    /// The evidence that supports it: `unit:N`, `chunk:N` or a segment id `seg_S_C`.
    #[serde(default)]
    pub evidence: Option<String>,
    /// A note stored with the assertion.
    #[serde(default)]
    pub note: Option<String>,
    /// Propose (status `proposed`, for review) instead of declare.
    #[serde(default)]
    pub propose: bool,
    /// Who asserts it (default `owner`).
    #[serde(default)]
    pub actor: Option<String>,
}

/// Assertions touching `key` (either end), of `relation`, in `status`; all when none is given.
///
/// # Errors
/// SQLite errors.
pub(crate) fn list_relations(
    engine: &Engine,
    key: Option<&str>,
    relation: Option<&str>,
    status: Option<&str>,
) -> Result<Vec<RelationAssertion>> {
    engine.with_reader(|conn| assertions::list(conn, key, relation, status))
}

/// The kind of the object `key` names: a structured record's kind, the kind of the source whose
/// own name it is (`RFC 3986`), or the kind an assertion already gives it.
fn kind_of(conn: &dyn Tx, key: &str) -> Result<String> {
    let record = assertions::record_kind(conn, key)?;
    if let Some(kind) = record {
        return Ok(kind);
    }
    let document = assertions::document_kind(conn, &crate::exact::normalize_identifier(key))?;
    if let Some(kind) = document {
        return Ok(kind);
    }
    // An object the store holds no text of, but that an assertion already names with its kind
    // (`RFC 2396`, obsoleted by RFC 3986's header).
    let named = assertions::named_kind(conn, key)?;
    named.ok_or_else(|| Error::NotFound {
        what: "record or document",
        id: key.to_string(),
    })
}

/// The unit and revision `evidence` names (`unit:N`, `chunk:N`, `seg_S_C`).
fn support(conn: &dyn Tx, evidence: &str) -> Result<(i64, i64)> {
    let unit: Option<i64> = if let Some(n) = evidence.strip_prefix("unit:") {
        n.parse().ok()
    } else {
        let chunk = evidence
            .strip_prefix("chunk:")
            .or_else(|| {
                evidence
                    .strip_prefix("seg_")
                    .and_then(|s| s.split('_').nth(1))
            })
            .and_then(|n| n.parse::<i64>().ok());
        match chunk {
            Some(c) => assertions::first_unit_of_chunk(conn, c)?,
            None => None,
        }
    };
    let unit = unit.ok_or_else(|| {
        Error::InvalidArgument(format!(
            "evidence {evidence:?}: expected unit:N, chunk:N or a segment id seg_S_C"
        ))
    })?;
    assertions::unit_revision(conn, unit)?.ok_or_else(|| Error::NotFound {
        what: "evidence",
        id: evidence.to_string(),
    })
}

/// Declares (or proposes) an assertion after checking it against its type.
///
/// # Errors
/// As [`assert`]; `E_NOT_FOUND` for an endpoint or evidence the store does not hold.
pub(crate) fn declare_relation(
    engine: &Engine,
    request: &DeclareRelation,
) -> Result<RelationAssertion> {
    {
        let conn = engine.writer()?;
        let tx = Begun::new(&*conn, false)?;
        let from_kind = kind_of(&*tx, &request.from)?;
        let to_kind = kind_of(&*tx, &request.to)?;
        let backing = request
            .evidence
            .as_deref()
            .map(|e| support(&*tx, e))
            .transpose()?;
        let id = assert(
            &*tx,
            engine.pack(),
            &Assertion {
                relation: &request.relation,
                from_kind: &from_kind,
                from_key: &request.from,
                to_kind: &to_kind,
                to_key: &request.to,
                method: if request.propose {
                    crate::ingest::relations::Basis::Proposed
                } else {
                    crate::ingest::relations::Basis::Declared
                },
                revision_id: backing.map(|b| b.1),
                support_unit_id: backing.map(|b| b.0),
                actor: request.actor.as_deref().unwrap_or("owner"),
                note: request.note.as_deref(),
            },
        )?;
        let stored = assertions::get(&*tx, id)?.ok_or_else(|| Error::NotFound {
            what: "relation assertion",
            id: id.to_string(),
        })?;
        tx.commit()?;
        Ok(stored)
    }
}

/// Records a review of assertion `id` (`accept`, `reject` or `comment`); accept and reject
/// decide it. Accepting one that would now break its type's cardinality is refused.
///
/// # Errors
/// `E_NOT_FOUND` for no such assertion; `E_INVALID_ARGUMENT` for another action; `E_CONFLICT`
/// for a cardinality breach.
pub(crate) fn review_relation(
    engine: &Engine,
    id: i64,
    action: &str,
    actor: &str,
    note: Option<&str>,
) -> Result<RelationAssertion> {
    if !matches!(action, "accept" | "reject" | "comment") {
        return Err(Error::InvalidArgument(format!(
            "review action {action:?}: expected accept, reject or comment"
        )));
    }
    {
        let conn = engine.writer()?;
        let tx = Begun::new(&*conn, false)?;
        let current = assertions::get(&*tx, id)?.ok_or_else(|| Error::NotFound {
            what: "relation assertion",
            id: id.to_string(),
        })?;
        if action == "accept"
            && current.status != Decision::Accepted
            && let Some(definition) = engine.pack().relations.get(&current.relation)
            && let Some(breach) = cardinality_breach(
                &*tx,
                &current.relation,
                definition,
                &current.from_key,
                &current.to_key,
            )?
        {
            return Err(Error::Conflict(breach));
        }
        let decision = match action {
            "accept" => Some(Decision::Accepted),
            "reject" => Some(Decision::Rejected),
            _ => None,
        };
        assertions::review(
            &*tx,
            id,
            action,
            actor,
            note,
            decision,
            crate::clock::now_ms(),
        )?;
        let stored = assertions::get(&*tx, id)?.ok_or_else(|| Error::NotFound {
            what: "relation assertion",
            id: id.to_string(),
        })?;
        tx.commit()?;
        Ok(stored)
    }
}
