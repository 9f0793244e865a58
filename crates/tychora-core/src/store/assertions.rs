//! Relation assertions between keys (`RFC 3986 obsoletes RFC 2396`) and the relation types the
//! pack defined when they were stored.

use rusqlite::{Connection, OptionalExtension as _, params};

use crate::error::Result;

/// Records a relation type's definition as the pack holds it now (unchanged when its fingerprint
/// is).
///
/// # Errors
/// SQLite errors.
pub fn record_type(
    tx: &Connection,
    name: &str,
    fingerprint: &str,
    pack: &str,
    definition_json: &str,
    now: i64,
) -> Result<()> {
    tx.prepare_cached(
        "INSERT INTO relation_types (name, fingerprint, pack, definition_json, recorded_at) VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT (name) DO UPDATE SET fingerprint = excluded.fingerprint, pack = excluded.pack, definition_json = excluded.definition_json, recorded_at = excluded.recorded_at
         WHERE relation_types.fingerprint != excluded.fingerprint",
    )?
    .execute(params![name, fingerprint, pack, definition_json, now])?;
    Ok(())
}

/// The id of an identical assertion already stored.
///
/// # Errors
/// SQLite errors.
pub fn find(
    conn: &Connection,
    relation: &str,
    from_key: &str,
    to_key: &str,
    method: &str,
    revision_id: Option<i64>,
) -> Result<Option<i64>> {
    Ok(conn
        .prepare_cached(
            "SELECT id FROM relation_assertions WHERE relation = ?1 AND from_key = ?2 AND to_key = ?3 AND method = ?4 AND revision_id IS ?5",
        )?
        .query_row(params![relation, from_key, to_key, method, revision_id], |r| r.get(0))
        .optional()?)
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
/// SQLite errors.
pub fn insert(tx: &Connection, a: &NewAssertion<'_>) -> Result<i64> {
    tx.prepare_cached(
        "INSERT INTO relation_assertions (relation, from_kind, from_key, to_kind, to_key, method, status, revision_id, support_unit_id, actor, note, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
    )?
    .execute(params![
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
    ])?;
    Ok(tx.last_insert_rowid())
}

/// Another subject (not `not_from`) of a standing assertion of `relation` with this object.
///
/// # Errors
/// SQLite errors.
pub fn other_subject(
    conn: &Connection,
    relation: &str,
    to_key: &str,
    not_from: &str,
) -> Result<Option<String>> {
    Ok(conn
        .prepare_cached(
            "SELECT from_key FROM relation_assertions WHERE relation = ?1 AND to_key = ?2 AND from_key != ?3 AND status != 'rejected' LIMIT 1",
        )?
        .query_row(params![relation, to_key, not_from], |r| r.get(0))
        .optional()?)
}

/// Another object (not `not_to`) of a standing assertion of `relation` with this subject.
///
/// # Errors
/// SQLite errors.
pub fn other_object(
    conn: &Connection,
    relation: &str,
    from_key: &str,
    not_to: &str,
) -> Result<Option<String>> {
    Ok(conn
        .prepare_cached(
            "SELECT to_key FROM relation_assertions WHERE relation = ?1 AND from_key = ?2 AND to_key != ?3 AND status != 'rejected' LIMIT 1",
        )?
        .query_row(params![relation, from_key, not_to], |r| r.get(0))
        .optional()?)
}
