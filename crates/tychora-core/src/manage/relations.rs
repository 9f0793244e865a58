//! Relation assertions as the owner and reviewers see them: listed with their support, declared
//! (or proposed) between named evidence objects, and reviewed — each review an event, its
//! decision the assertion's status.

use rusqlite::{Connection, OptionalExtension as _, params};
use serde::{Deserialize, Serialize};

use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::ingest::relations::{Assertion, assert, cardinality_breach};

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

/// A stored assertion and where it stands.
#[derive(Debug, Clone, Serialize)]
pub struct RelationAssertion {
    /// The assertion's row id (what a review names).
    pub id: i64,
    /// The relation type (`supersedes`).
    pub relation: String,
    /// The subject's kind: that of the record or document its key names (`rfc`).
    pub from_kind: String,
    /// The subject's key (`ADR-7`, `RFC 3986`).
    pub from_key: String,
    /// The object's kind, found the same way.
    pub to_kind: String,
    /// The object's key.
    pub to_key: String,
    /// How it came to be: parsed, declared or proposed.
    pub method: crate::ingest::relations::Basis,
    /// Where it stands: proposed, accepted or rejected (an accept or reject review sets it).
    pub status: crate::ingest::relations::Decision,
    /// Who made it: `parser`, `owner`, or the proposing agent.
    pub actor: String,
    /// The note given with it (`None`: none).
    pub note: Option<String>,
    /// `path:line-line` of the unit that supports it.
    pub support: Option<String>,
    /// The revision it was read from (parsed) or declared against (`None`: declared or proposed
    /// without evidence).
    pub revision_id: Option<i64>,
    /// When it was stored, in milliseconds since the Unix epoch.
    pub created_at: i64,
}

/// An assertion's columns, its support cited as `path:line-line`.
fn select() -> String {
    format!(
        "SELECT a.id, a.relation, a.from_kind, a.from_key, a.to_kind, a.to_key, a.method, a.status, a.actor, a.note, {},
                a.revision_id, a.created_at
           FROM relation_assertions a",
        crate::store::hydrate::SUPPORT_CITATION
    )
}

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<RelationAssertion> {
    Ok(RelationAssertion {
        id: r.get(0)?,
        relation: r.get(1)?,
        from_kind: r.get(2)?,
        from_key: r.get(3)?,
        to_kind: r.get(4)?,
        to_key: r.get(5)?,
        method: r.get(6)?,
        status: r.get(7)?,
        actor: r.get(8)?,
        note: r.get(9)?,
        support: r.get(10)?,
        revision_id: r.get(11)?,
        created_at: r.get(12)?,
    })
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
    engine.with_reader(|conn| {
        Ok(conn
            .prepare_cached(&format!(
                "{} WHERE (?1 IS NULL OR a.from_key = ?1 OR a.to_key = ?1) AND (?2 IS NULL OR a.relation = ?2)
                   AND (?3 IS NULL OR a.status = ?3) ORDER BY a.relation, a.from_key, a.to_key, a.id",
                select()
            ))?
            .query_map(params![key, relation, status], row)?
            .collect::<rusqlite::Result<_>>()?)
    })
}

/// The kind of the object `key` names: a structured record's kind, the kind of the source whose
/// own name it is (`RFC 3986`), or the kind an assertion already gives it.
fn kind_of(conn: &Connection, key: &str) -> Result<String> {
    let record: Option<String> = conn
        .query_row(
            "SELECT kind FROM structured_records WHERE key = ?1 ORDER BY id LIMIT 1",
            [key],
            |r| r.get(0),
        )
        .optional()?;
    if let Some(kind) = record {
        return Ok(kind);
    }
    let document: Option<String> = conn
        .query_row(
            "SELECT COALESCE(s.kind, s.format) FROM identifiers i JOIN revisions r ON r.id = i.revision_id
               JOIN sources s ON s.id = r.source_id
              WHERE i.kind = 'document' AND i.normalized = ?1 ORDER BY r.id DESC LIMIT 1",
            [crate::exact::normalize_identifier(key)],
            |r| r.get(0),
        )
        .optional()?;
    if let Some(kind) = document {
        return Ok(kind);
    }
    // An object the store holds no text of, but that an assertion already names with its kind
    // (`RFC 2396`, obsoleted by RFC 3986's header).
    let named: Option<String> = conn
        .query_row(
            "SELECT kind FROM (SELECT to_kind AS kind, id FROM relation_assertions WHERE to_key = ?1
                               UNION ALL SELECT from_kind, id FROM relation_assertions WHERE from_key = ?1)
              ORDER BY id LIMIT 1",
            [key],
            |r| r.get(0),
        )
        .optional()?;
    named.ok_or_else(|| Error::NotFound {
        what: "record or document",
        id: key.to_string(),
    })
}

/// The unit and revision `evidence` names (`unit:N`, `chunk:N`, `seg_S_C`).
fn support(conn: &Connection, evidence: &str) -> Result<(i64, i64)> {
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
            Some(c) => conn
                .query_row("SELECT first_unit_id FROM chunks WHERE id = ?1", [c], |r| {
                    r.get(0)
                })
                .optional()?,
            None => None,
        }
    };
    let unit = unit.ok_or_else(|| {
        Error::InvalidArgument(format!(
            "evidence {evidence:?}: expected unit:N, chunk:N or a segment id seg_S_C"
        ))
    })?;
    conn.query_row(
        "SELECT u.id, e.revision_id FROM evidence_units u JOIN extractions e ON e.id = u.extraction_id WHERE u.id = ?1",
        [unit],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
    .optional()?
    .ok_or_else(|| Error::NotFound {
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
        let mut conn = engine.writer()?;
        let tx = conn.transaction()?;
        let from_kind = kind_of(&tx, &request.from)?;
        let to_kind = kind_of(&tx, &request.to)?;
        let backing = request
            .evidence
            .as_deref()
            .map(|e| support(&tx, e))
            .transpose()?;
        let id = assert(
            &tx,
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
        let stored = tx.query_row(&format!("{} WHERE a.id = ?1", select()), [id], row)?;
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
        let mut conn = engine.writer()?;
        let tx = conn.transaction()?;
        let current = tx
            .query_row(&format!("{} WHERE a.id = ?1", select()), [id], row)
            .optional()?
            .ok_or_else(|| Error::NotFound {
                what: "relation assertion",
                id: id.to_string(),
            })?;
        if action == "accept"
            && current.status != crate::ingest::relations::Decision::Accepted
            && let Some(definition) = engine.pack().relations.get(&current.relation)
            && let Some(breach) = cardinality_breach(
                &tx,
                &current.relation,
                definition,
                &current.from_key,
                &current.to_key,
            )?
        {
            return Err(Error::Conflict(breach));
        }
        let now = crate::clock::now_ms();
        tx.execute(
            "INSERT INTO review_events (assertion_id, action, actor, note, at) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![id, action, actor, note, now],
        )?;
        let event = tx.last_insert_rowid();
        if action != "comment" {
            let decision = if action == "accept" {
                crate::ingest::relations::Decision::Accepted
            } else {
                crate::ingest::relations::Decision::Rejected
            };
            tx.execute(
                "INSERT INTO assertion_decisions (assertion_id, decision, event_id, decided_at) VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (assertion_id) DO UPDATE SET decision = excluded.decision, event_id = excluded.event_id, decided_at = excluded.decided_at",
                params![id, decision, event, now],
            )?;
            tx.execute(
                "UPDATE relation_assertions SET status = ?2 WHERE id = ?1",
                params![id, decision],
            )?;
        }
        let stored = tx.query_row(&format!("{} WHERE a.id = ?1", select()), [id], row)?;
        tx.commit()?;
        Ok(stored)
    }
}
