//! Relation assertions between keys (`RFC 3986 obsoletes RFC 2396`) and the relation types the
//! pack defined when they were stored.

use super::tx::{Row, Tx, args};
use serde::Serialize;

use crate::error::Result;

/// Records a relation type's definition as the pack holds it now (unchanged when its fingerprint
/// is).
///
/// # Errors
/// The store's errors.
pub fn record_type(
    tx: &dyn Tx,
    name: &str,
    fingerprint: &str,
    pack: &str,
    definition_json: &str,
    now: i64,
) -> Result<()> {
    tx.write(
        "INSERT INTO relation_types (name, fingerprint, pack, definition_json, recorded_at) VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT (name) DO UPDATE SET fingerprint = excluded.fingerprint, pack = excluded.pack, definition_json = excluded.definition_json, recorded_at = excluded.recorded_at
         WHERE relation_types.fingerprint != excluded.fingerprint",
        args![name, fingerprint, pack, definition_json, now],
    )
}

/// The id of an identical assertion already stored.
///
/// # Errors
/// The store's errors.
pub fn find(
    tx: &dyn Tx,
    relation: &str,
    from_key: &str,
    to_key: &str,
    method: &str,
    revision_id: Option<i64>,
) -> Result<Option<i64>> {
    tx.optional(
        "SELECT id FROM relation_assertions WHERE relation = ?1 AND from_key = ?2 AND to_key = ?3 AND method = ?4 AND revision_id IS NOT DISTINCT FROM ?5 ORDER BY id",
        args![relation, from_key, to_key, method, revision_id],
        |r| r.get(0),
    )
}

/// An assertion to store.
pub struct NewAssertion<'a> {
    /// The relation type.
    pub relation: &'a str,
    /// The subject's kind.
    pub from_kind: &'a str,
    /// The subject.
    pub from_key: &'a str,
    /// The object's kind.
    pub to_kind: &'a str,
    /// The object.
    pub to_key: &'a str,
    /// `parsed`, `declared` or `proposed`.
    pub method: &'a str,
    /// `proposed` or `accepted`.
    pub status: &'a str,
    /// The revision it was read from.
    pub revision_id: Option<i64>,
    /// The unit that supports it.
    pub support_unit_id: Option<i64>,
    /// Who asserted it.
    pub actor: &'a str,
    /// Why.
    pub note: Option<&'a str>,
    /// When (Unix ms).
    pub created_at: i64,
}

/// Stores an assertion; returns its id.
///
/// # Errors
/// The store's errors.
pub fn insert(tx: &dyn Tx, a: &NewAssertion<'_>) -> Result<i64> {
    tx.insert(
        "INSERT INTO relation_assertions (relation, from_kind, from_key, to_kind, to_key, method, status, revision_id, support_unit_id, actor, note, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
        args![
        a.relation,
        a.from_kind,
        a.from_key,
        a.to_kind,
        a.to_key,
        a.method,
        a.status,
        a.revision_id,
        a.support_unit_id,
        a.actor,
        a.note,
        a.created_at
        ],
    )
}

/// Another subject (not `not_from`) of a standing assertion of `relation` with this object.
///
/// # Errors
/// The store's errors.
pub fn other_subject(
    tx: &dyn Tx,
    relation: &str,
    to_key: &str,
    not_from: &str,
) -> Result<Option<String>> {
    tx.optional(
        "SELECT from_key FROM relation_assertions WHERE relation = ?1 AND to_key = ?2 AND from_key != ?3 AND status != 'rejected' ORDER BY id LIMIT 1",
        args![relation, to_key, not_from],
        |r| r.get(0),
    )
}

/// Another object (not `not_to`) of a standing assertion of `relation` with this subject.
///
/// # Errors
/// The store's errors.
pub fn other_object(
    tx: &dyn Tx,
    relation: &str,
    from_key: &str,
    not_to: &str,
) -> Result<Option<String>> {
    tx.optional(
        "SELECT to_key FROM relation_assertions WHERE relation = ?1 AND from_key = ?2 AND to_key != ?3 AND status != 'rejected' ORDER BY id LIMIT 1",
        args![relation, from_key, not_to],
        |r| r.get(0),
    )
}

crate::wire::wire_enum! {
    /// How an assertion came to be.
    pub enum Basis {
        /// Read from a document by the pack's parser (an RFC header's `Obsoletes:`).
        Parsed = "parsed",
        /// Declared by the owner.
        Declared = "declared",
        /// Proposed, by the owner or an agent, for review.
        Proposed = "proposed",
    }
}

crate::wire::wire_enum! {
    /// Where an assertion stands: only accepted ones are evidence.
    pub enum Decision {
        /// Waiting for review.
        Proposed = "proposed",
        /// Parsed, declared, or accepted on review.
        Accepted = "accepted",
        /// Rejected on review (kept, with the review, for the record).
        Rejected = "rejected",
    }
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
    pub method: Basis,
    /// Where it stands: proposed, accepted or rejected (an accept or reject review sets it).
    pub status: Decision,
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
        super::hydrate::SUPPORT_CITATION
    )
}

fn row(r: &dyn Row) -> Result<RelationAssertion> {
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
/// The store's errors.
pub fn list(
    tx: &dyn Tx,
    key: Option<&str>,
    relation: Option<&str>,
    status: Option<&str>,
) -> Result<Vec<RelationAssertion>> {
    tx.rows(
        &format!(
            "{} WHERE (CAST(?1 AS TEXT) IS NULL OR a.from_key = ?1 OR a.to_key = ?1) AND (CAST(?2 AS TEXT) IS NULL OR a.relation = ?2)
               AND (CAST(?3 AS TEXT) IS NULL OR a.status = ?3) ORDER BY a.relation, a.from_key, a.to_key, a.id",
            select()
        ),
        args![key, relation, status],
        row,
    )
}

/// An assertion by id.
///
/// # Errors
/// The store's errors.
pub fn get(tx: &dyn Tx, id: i64) -> Result<Option<RelationAssertion>> {
    tx.optional(&format!("{} WHERE a.id = ?1", select()), args![id], row)
}

/// The kind of the structured record with this key (the oldest, when several kinds have one).
///
/// # Errors
/// The store's errors.
pub fn record_kind(tx: &dyn Tx, key: &str) -> Result<Option<String>> {
    tx.optional(
        "SELECT kind FROM structured_records WHERE key = ?1 ORDER BY id LIMIT 1",
        args![key],
        |r| r.get(0),
    )
}

/// The kind (or format) of the newest source whose own name is this normalised identifier.
///
/// # Errors
/// The store's errors.
pub fn document_kind(tx: &dyn Tx, normalized: &str) -> Result<Option<String>> {
    tx.optional(
        "SELECT COALESCE(s.kind, s.format) FROM identifiers i JOIN revisions r ON r.id = i.revision_id
           JOIN sources s ON s.id = r.source_id
          WHERE i.kind = 'document' AND i.normalized = ?1 ORDER BY r.id DESC LIMIT 1",
        args![normalized],
        |r| r.get(0),
    )
}

/// The kind the oldest assertion naming `key` (at either end) gives it.
///
/// # Errors
/// The store's errors.
pub fn named_kind(tx: &dyn Tx, key: &str) -> Result<Option<String>> {
    tx.optional(
        "SELECT kind FROM (SELECT to_kind AS kind, id FROM relation_assertions WHERE to_key = ?1
                           UNION ALL SELECT from_kind, id FROM relation_assertions WHERE from_key = ?1) named
          ORDER BY id LIMIT 1",
        args![key],
        |r| r.get(0),
    )
}

/// A window's first unit.
///
/// # Errors
/// The store's errors.
pub fn first_unit_of_chunk(tx: &dyn Tx, chunk_id: i64) -> Result<Option<i64>> {
    tx.optional(
        "SELECT first_unit_id FROM chunks WHERE id = ?1",
        args![chunk_id],
        |r| r.get(0),
    )
}

/// `(unit, revision)` of a unit the store holds.
///
/// # Errors
/// The store's errors.
pub fn unit_revision(tx: &dyn Tx, unit_id: i64) -> Result<Option<(i64, i64)>> {
    tx.optional(
        "SELECT u.id, e.revision_id FROM evidence_units u JOIN extractions e ON e.id = u.extraction_id WHERE u.id = ?1",
        args![unit_id],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
}

/// Records a review event of an assertion; a decision (accept or reject) becomes its status.
///
/// # Errors
/// The store's errors.
pub fn review(
    tx: &dyn Tx,
    id: i64,
    action: &str,
    actor: &str,
    note: Option<&str>,
    decision: Option<Decision>,
    now: i64,
) -> Result<()> {
    let event = tx.insert(
        "INSERT INTO review_events (assertion_id, action, actor, note, at) VALUES (?1, ?2, ?3, ?4, ?5)",
        args![id, action, actor, note, now],
    )?;
    if let Some(decision) = decision {
        tx.execute(
            "INSERT INTO assertion_decisions (assertion_id, decision, event_id, decided_at) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (assertion_id) DO UPDATE SET decision = excluded.decision, event_id = excluded.event_id, decided_at = excluded.decided_at",
            args![id, decision.as_str(), event, now],
        )?;
        tx.execute(
            "UPDATE relation_assertions SET status = ?2 WHERE id = ?1",
            args![id, decision.as_str()],
        )?;
    }
    Ok(())
}
