//! The identifier rows of a snapshot's members, as the exact channel (`exact`) and the mentions
//! channel (`exact::mentions`) read them: each row with its unit's window, within the query's
//! eligibility filter.

use std::fmt::Write as _;

use super::tx::{Dialect, Tx, Value, args, params};
use crate::error::Result;
use crate::lexical::Filter;

/// The identifiers among `identifiers` (normalised) that an eligible member defines (an anchor,
/// a JSON id, a record key, a whole document).
///
/// # Errors
/// The store's errors.
pub fn defined(
    tx: &dyn Tx,
    snapshot_id: i64,
    identifiers: &[String],
    filter: &Filter,
) -> Result<Vec<String>> {
    let (sql, values) = matching(
        tx.dialect(),
        "SELECT DISTINCT i.normalized",
        snapshot_id,
        identifiers,
        filter,
        Narrow::Definitions,
    );
    tx.rows(&sql, &params(&values), |r| r.get(0))
}

/// `(chunk_id, owner_id)` of the windows carrying one of `identifiers`, leaving out mentions of
/// the `defined` ones: anchors and ids first, then identifiers in headings, then mentions; within
/// a class the longest identifier matched, then document order; at most `limit`.
///
/// # Errors
/// The store's errors.
pub fn windows(
    tx: &dyn Tx,
    snapshot_id: i64,
    identifiers: &[String],
    filter: &Filter,
    defined: &[String],
    limit: usize,
) -> Result<Vec<(i64, i64)>> {
    let (mut sql, values) = matching(
        tx.dialect(),
        "SELECT c.id, COALESCE(c.owner_chunk_id, c.id), MIN(CASE WHEN i.kind IN ('anchor', 'json_id', 'record', 'document') THEN 0 WHEN i.kind LIKE 'heading:%' THEN 1 ELSE 2 END) AS class,
                MAX(length(i.normalized)) AS specific",
        snapshot_id,
        identifiers,
        filter,
        Narrow::NoMentionsOf(defined),
    );
    // Within a class the most specific identifier wins: asked `Article 17(1)(b)`, the point's
    // window comes before Article 17's first window, which also matches `Article 17`.
    let _ = write!(
        sql,
        " GROUP BY c.id ORDER BY class, specific DESC, c.id LIMIT {limit}"
    );
    tx.rows(&sql, &params(&values), |r| Ok((r.get(0)?, r.get(1)?)))
}

/// The eligible sources that `identifiers` name as a whole document.
///
/// # Errors
/// The store's errors.
pub fn documents(
    tx: &dyn Tx,
    snapshot_id: i64,
    identifiers: &[String],
    filter: &Filter,
) -> Result<Vec<i64>> {
    let (mut sql, values) = matching(
        tx.dialect(),
        "SELECT DISTINCT s.id",
        snapshot_id,
        identifiers,
        filter,
        Narrow::NoMentionsOf(&[]),
    );
    sql.push_str(" AND i.kind = 'document'");
    tx.rows(&sql, &params(&values), |r| r.get(0))
}

/// Of `normalized`, those some eligible unit carries.
///
/// # Errors
/// The store's errors.
pub fn present(
    tx: &dyn Tx,
    snapshot_id: i64,
    normalized: &[String],
    filter: &Filter,
) -> Result<Vec<String>> {
    let (sql, values) = matching(
        tx.dialect(),
        "SELECT DISTINCT i.normalized",
        snapshot_id,
        normalized,
        filter,
        Narrow::NoMentionsOf(&[]),
    );
    tx.rows(&sql, &params(&values), |r| r.get(0))
}

/// `(normalized name, chunk_id, owner_id, source_id)` of the code symbols named `names`, in
/// window order.
///
/// # Errors
/// The store's errors.
pub fn symbol_definitions(
    tx: &dyn Tx,
    snapshot_id: i64,
    names: &[String],
    filter: &Filter,
) -> Result<Vec<(String, i64, i64, i64)>> {
    let (mut sql, values) = matching(
        tx.dialect(),
        "SELECT i.normalized, c.id, COALESCE(c.owner_chunk_id, c.id), s.id",
        snapshot_id,
        names,
        filter,
        Narrow::NoMentionsOf(&[]),
    );
    sql.push_str(" AND i.kind IN ('symbol', 'symbol_name') ORDER BY c.id");
    tx.rows(&sql, &params(&values), |r| {
        Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
    })
}

/// `(source_id, rel_path)` of the snapshot's eligible members.
///
/// # Errors
/// The store's errors.
pub fn member_paths(tx: &dyn Tx, snapshot_id: i64, filter: &Filter) -> Result<Vec<(i64, String)>> {
    let mut sql = String::from(
        "SELECT s.id, s.rel_path FROM snapshot_members m
         JOIN sources s ON s.id = m.source_id
         JOIN collections col ON col.id = s.collection_id
         WHERE m.snapshot_id = ?1",
    );
    let mut values: Vec<Value> = vec![snapshot_id.into()];
    super::filter::push_sql(filter, &mut sql, &mut values);
    tx.rows(&sql, &params(&values), |r| Ok((r.get(0)?, r.get(1)?)))
}

/// `(chunk_id, owner_id)` of a member's first window.
///
/// # Errors
/// The store's errors.
pub fn first_window(tx: &dyn Tx, snapshot_id: i64, source_id: i64) -> Result<Option<(i64, i64)>> {
    tx.optional(
        "SELECT c.id, COALESCE(c.owner_chunk_id, c.id) FROM snapshot_members m
         JOIN chunks c ON c.extraction_id = m.extraction_id
         WHERE m.snapshot_id = ?1 AND m.source_id = ?2 ORDER BY c.ordinal LIMIT 1",
        args![snapshot_id, source_id],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
}

/// Which identifier rows [`matching`] keeps besides the query's identifiers.
enum Narrow<'a> {
    /// Definitions only (anchors, ids).
    Definitions,
    /// Every row except mentions of these defined identifiers.
    NoMentionsOf(&'a [String]),
}

/// `select` over the identifier rows of the snapshot's eligible members that carry one of
/// `identifiers`, each with its unit's window (`c`), narrowed by `narrow`.
fn matching(
    dialect: Dialect,
    select: &str,
    snapshot_id: i64,
    identifiers: &[String],
    filter: &Filter,
    narrow: Narrow<'_>,
) -> (String, Vec<Value>) {
    // On SQLite, CROSS JOIN fixes the order: start from the few matching identifiers, not from
    // every member. PostgreSQL has no CROSS JOIN with a condition, and its planner orders the
    // joins by the statistics itself.
    let join = match dialect {
        Dialect::Sqlite => "CROSS JOIN",
        Dialect::Postgres => "JOIN",
    };
    let mut sql = format!(
        "{select}
         FROM identifiers i
         {join} evidence_units u ON u.id = i.unit_id
         {join} snapshot_members m ON m.snapshot_id = ?1 AND m.source_id = (SELECT r.source_id FROM revisions r WHERE r.id = i.revision_id) AND m.extraction_id = u.extraction_id
         {join} sources s ON s.id = m.source_id
         {join} collections col ON col.id = s.collection_id
         {join} chunks c ON c.id = (
             SELECT w.id FROM chunks w
             WHERE w.extraction_id = u.extraction_id AND w.last_unit_id >= u.id
             ORDER BY w.last_unit_id LIMIT 1)
         WHERE i.normalized IN ("
    );
    let mut values: Vec<Value> = vec![snapshot_id.into()];
    push_list(&mut sql, &mut values, identifiers);
    sql.push(')');
    match narrow {
        Narrow::Definitions => {
            sql.push_str(" AND i.kind IN ('anchor', 'json_id', 'record', 'document')")
        }
        Narrow::NoMentionsOf([]) => {}
        Narrow::NoMentionsOf(defined) => {
            sql.push_str(
                " AND (i.kind IN ('anchor', 'json_id', 'record', 'document') OR i.normalized NOT IN (",
            );
            push_list(&mut sql, &mut values, defined);
            sql.push_str("))");
        }
    }
    if filter.verified {
        // A record's key counts once a person reviewed the record.
        sql.push_str(
            " AND (i.kind != 'record' OR EXISTS (SELECT 1 FROM structured_records sr WHERE sr.key = i.value AND sr.status = 'reviewed'))",
        );
    }
    super::filter::push_sql(filter, &mut sql, &mut values);
    (sql, values)
}

/// `?n, ?n+1, …` for `items`, bound after the values already there.
fn push_list(sql: &mut String, values: &mut Vec<Value>, items: &[String]) {
    for (n, item) in items.iter().enumerate() {
        let _ = write!(
            sql,
            "{}?{}",
            if n > 0 { ", " } else { "" },
            values.len() + 1
        );
        values.push(item.clone().into());
    }
}
