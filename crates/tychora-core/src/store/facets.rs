//! Facets in the canonical store: definitions, the values set on sources and records, and the
//! SQL that tests a facet condition (the channels' eligibility, `facet::Condition`).

use super::tx::{Tx, args};

use std::fmt::Write as _;

use crate::Result;
use crate::config::KindDefinition;
use crate::facet::{Condition, Op, Value};

/// Records `kind`'s facet definitions as the pack holds them now (a changed type or value list
/// replaces the old one; a definition the kind dropped stays, so values set under it still read).
fn record_definitions(tx: &dyn Tx, kind: &str, definition: &KindDefinition) -> Result<()> {
    let mut stmt = tx.prepare(
        "INSERT INTO facet_definitions (kind, name, type, values_json) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (kind, name) DO UPDATE SET type = excluded.type, values_json = excluded.values_json",
    )?;
    for (name, facet) in &definition.facets {
        let values = serde_json::to_string(&facet.values).unwrap_or_else(|_| "[]".into());
        stmt.write(args![kind, name, facet.kind.as_str(), values.as_str()])?;
    }
    Ok(())
}

/// Sets `values` on each of `sources` (all of kind `kind`, recorded in `kinds`), replacing the
/// values those facets had; other facets keep theirs. Returns how many values changed.
///
/// # Errors
/// The store's errors.
pub fn set_source_values(
    tx: &dyn Tx,
    kind: &str,
    definition: &KindDefinition,
    sources: &[i64],
    values: &[(String, Value)],
    now: i64,
) -> Result<usize> {
    if values.is_empty() || sources.is_empty() {
        return Ok(0);
    }
    record_definitions(tx, kind, definition)?;
    let mut changed = 0;
    for (name, value) in values {
        let definition_id: Option<i64> = tx.optional(
            "SELECT id FROM facet_definitions WHERE kind = ?1 AND name = ?2",
            args![kind, name],
            |r| r.get(0),
        )?;
        let Some(definition_id) = definition_id else {
            continue;
        };
        let (text, number) = match value {
            Value::Text(t) => (Some(t.as_str()), None),
            Value::Number(n) => (None, Some(*n)),
        };
        let mut stmt = tx.prepare(
            "INSERT INTO facet_values (definition_id, source_id, text, number, set_at) VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT (source_id, definition_id) WHERE source_id IS NOT NULL DO UPDATE SET text = excluded.text, number = excluded.number, set_at = excluded.set_at
             WHERE facet_values.text IS DISTINCT FROM excluded.text OR facet_values.number IS DISTINCT FROM excluded.number",
        )?;
        for &source in sources {
            let n = stmt.execute(args![definition_id, source, text, number, now])?;
            changed += usize::try_from(n).unwrap_or(usize::MAX);
        }
    }
    Ok(changed)
}

/// Sets a record's facet values from its body: each facet the kind declares that the body holds
/// (read as the facet's type; a value that does not read is left out — the record schema is what
/// refuses bad records). Returns the values set.
///
/// # Errors
/// The store's errors.
pub fn set_record_values(
    tx: &dyn Tx,
    kind: &str,
    definition: &KindDefinition,
    record_id: i64,
    body: &serde_json::Value,
    now: i64,
) -> Result<Vec<String>> {
    record_definitions(tx, kind, definition)?;
    // A field the facet cannot hold (`level: "high"` for a number) leaves that facet unset on
    // the record, and the reason goes back to the job's diagnostics.
    let mut refused = Vec::new();
    for (name, facet) in &definition.facets {
        let raw = match body.get(name) {
            None | Some(serde_json::Value::Null) => continue,
            Some(serde_json::Value::String(s)) => s.clone(),
            Some(v @ (serde_json::Value::Number(_) | serde_json::Value::Bool(_))) => v.to_string(),
            Some(other) => {
                refused.push(format!("facet {name:?}: {other} is not a single value"));
                continue;
            }
        };
        let value = match Value::parse(name, facet, &raw) {
            Ok(value) => value,
            Err(e) => {
                refused.push(e.to_string());
                continue;
            }
        };
        let (text, number) = match &value {
            Value::Text(t) => (Some(t.as_str()), None),
            Value::Number(n) => (None, Some(*n)),
        };
        tx.write(
            "INSERT INTO facet_values (definition_id, record_id, text, number, set_at)
             SELECT id, ?3, ?4, ?5, ?6 FROM facet_definitions WHERE kind = ?1 AND name = ?2
             ON CONFLICT (record_id, definition_id) WHERE record_id IS NOT NULL DO UPDATE SET text = excluded.text, number = excluded.number, set_at = excluded.set_at",
            args![kind, name.as_str(), record_id, text, number, now],
        )?;
    }
    Ok(refused)
}

/// The facet values of a source, by name (numbers as JSON numbers).
///
/// # Errors
/// The store's errors.
pub fn source_values(
    tx: &dyn Tx,
    source_id: i64,
) -> Result<serde_json::Map<String, serde_json::Value>> {
    let rows = tx.rows(
        "SELECT fd.name, fd.type, fv.text, fv.number FROM facet_values fv
         JOIN facet_definitions fd ON fd.id = fv.definition_id WHERE fv.source_id = ?1 ORDER BY fd.name",
        args![source_id],
        |r| {
            Ok((
                r.get::<String>(0)?,
                r.get::<String>(1)?,
                r.get::<Option<String>>(2)?,
                r.get::<Option<f64>>(3)?,
            ))
        },
    )?;
    let mut out = serde_json::Map::new();
    for (name, kind, text, number) in rows {
        let value = match (text, number) {
            (Some(t), _) if kind == "boolean" => serde_json::Value::Bool(t == "true"),
            (Some(t), _) => serde_json::Value::String(t),
            (None, Some(n)) => serde_json::json!(n),
            (None, None) => serde_json::Value::Null,
        };
        out.insert(name, value);
    }
    Ok(out)
}

/// The column a value is compared in, and the bound value.
fn column(value: &Value) -> (&'static str, super::tx::Value) {
    match value {
        Value::Text(t) => ("fv.text", t.clone().into()),
        Value::Number(n) => ("fv.number", (*n).into()),
    }
}

/// A comparison's SQL operator.
fn operator(op: Op) -> &'static str {
    match op {
        Op::Eq => "=",
        Op::Ne => "!=",
        Op::Ge => ">=",
        Op::Le => "<=",
        Op::Gt => ">",
        Op::Lt => "<",
    }
}

/// The verified profile's condition on a record's facet value: the record was reviewed.
const REVIEWED: &str = " AND EXISTS (SELECT 1 FROM structured_records sr WHERE sr.id = fv.record_id AND sr.status = 'reviewed')";

/// `fd.name = ? AND fv.number >= ? …` over `facet_values fv JOIN facet_definitions fd`.
pub(crate) fn tests_sql(
    condition: &Condition,
    sql: &mut String,
    values: &mut Vec<super::tx::Value>,
) {
    values.push(condition.name.clone().into());
    let _ = write!(sql, "fd.name = ?{}", values.len());
    for (op, value) in &condition.tests {
        let (column, bound) = column(value);
        values.push(bound);
        let _ = write!(sql, " AND {column} {} ?{}", operator(*op), values.len());
    }
}

/// Appends `AND s.id IN (…)` for a query that joins `sources s`: the sources whose own value
/// satisfies the condition, or that hold evidence of a record whose value does (the
/// channels narrow those to the record's windows; [`chunks_sql`]).
pub(crate) fn push_sql(
    condition: &Condition,
    sql: &mut String,
    values: &mut Vec<super::tx::Value>,
    reviewed_only: bool,
) {
    sql.push_str(
        " AND s.id IN (SELECT fv.source_id FROM facet_values fv JOIN facet_definitions fd ON fd.id = fv.definition_id WHERE fv.source_id IS NOT NULL AND ",
    );
    tests_sql(condition, sql, values);
    sql.push_str(
        " UNION SELECT r.source_id FROM facet_values fv JOIN facet_definitions fd ON fd.id = fv.definition_id JOIN record_evidence re ON re.record_id = fv.record_id JOIN revisions r ON r.id = re.revision_id WHERE ",
    );
    tests_sql(condition, sql, values);
    if reviewed_only {
        sql.push_str(REVIEWED);
    }
    sql.push(')');
}

/// A query for the windows of snapshot `?1` the condition admits: every window of a source
/// whose own value satisfies it, and the windows holding a unit of a record whose value
/// does. `scope` appends the collection and kind conditions to both halves (it may name `s`
/// and `col`).
pub(crate) fn chunks_sql(
    condition: &Condition,
    snapshot_id: i64,
    scope: &dyn Fn(&mut String, &mut Vec<super::tx::Value>),
    reviewed_only: bool,
) -> (String, Vec<super::tx::Value>) {
    let mut values: Vec<super::tx::Value> = vec![snapshot_id.into()];
    let mut sql = String::from(
        "SELECT c.id FROM snapshot_members m JOIN sources s ON s.id = m.source_id JOIN collections col ON col.id = s.collection_id
         JOIN chunks c ON c.extraction_id = m.extraction_id
         WHERE m.snapshot_id = ?1 AND s.id IN (SELECT fv.source_id FROM facet_values fv JOIN facet_definitions fd ON fd.id = fv.definition_id WHERE fv.source_id IS NOT NULL AND ",
    );
    tests_sql(condition, &mut sql, &mut values);
    sql.push(')');
    scope(&mut sql, &mut values);
    sql.push_str(
        " UNION SELECT c.id FROM facet_values fv JOIN facet_definitions fd ON fd.id = fv.definition_id
         JOIN record_evidence re ON re.record_id = fv.record_id
         JOIN evidence_units u ON u.id = re.unit_id
         JOIN snapshot_members m ON m.snapshot_id = ?1 AND m.extraction_id = u.extraction_id
         JOIN sources s ON s.id = m.source_id JOIN collections col ON col.id = s.collection_id
         JOIN chunks c ON c.extraction_id = u.extraction_id AND u.id BETWEEN c.first_unit_id AND c.last_unit_id
         WHERE ",
    );
    tests_sql(condition, &mut sql, &mut values);
    if reviewed_only {
        sql.push_str(REVIEWED);
    }
    scope(&mut sql, &mut values);
    (sql, values)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facet::tests::kinds;

    #[test]
    fn a_record_field_its_facet_cannot_hold_is_reported_and_left_unset() {
        let mut conn = rusqlite::Connection::open_in_memory().unwrap();
        crate::store::migrate::apply(&mut conn).unwrap();
        // The record alone: no kind row, source or unit is needed to set its facets.
        conn.execute_batch("PRAGMA foreign_keys = OFF").unwrap();
        conn.execute(
            "INSERT INTO structured_records (id, kind, record_type, key, body_json, created_at, updated_at)
             VALUES (1, 'standard', 'requirement', 'V1.1.1', '{}', 0, 0)",
            [],
        )
        .unwrap();
        let kinds = kinds();
        let body = serde_json::json!({ "level": "high", "text": "Verify input" });
        let refused =
            set_record_values(&conn, "standard", &kinds["standard"], 1, &body, 0).unwrap();
        assert_eq!(refused.len(), 1, "{refused:?}");
        assert!(refused[0].contains("level"), "{refused:?}");
        let set: i64 = conn
            .query_row(
                "SELECT COUNT(*) FROM facet_values WHERE record_id = 1",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(set, 0);
        let good = serde_json::json!({ "level": 2 });
        assert!(
            set_record_values(&conn, "standard", &kinds["standard"], 1, &good, 0)
                .unwrap()
                .is_empty()
        );
    }
}
