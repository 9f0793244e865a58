//! Facet definitions and source values in the canonical store.

use rusqlite::{Connection, OptionalExtension as _, params};

use super::Value;
use crate::Result;
use crate::config::KindDefinition;

/// Records `kind`'s facet definitions as the pack holds them now (a changed type or value list
/// replaces the old one; a definition the kind dropped stays, so values set under it still read).
fn record_definitions(tx: &Connection, kind: &str, definition: &KindDefinition) -> Result<()> {
    let mut stmt = tx.prepare_cached(
        "INSERT INTO facet_definitions (kind, name, type, values_json) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (kind, name) DO UPDATE SET type = excluded.type, values_json = excluded.values_json",
    )?;
    for (name, facet) in &definition.facets {
        let values = serde_json::to_string(&facet.values).unwrap_or_else(|_| "[]".into());
        stmt.execute(params![kind, name, facet.kind, values])?;
    }
    Ok(())
}

/// Sets `values` on each of `sources` (all of kind `kind`, recorded in `kinds`), replacing the
/// values those facets had; other facets keep theirs. Returns how many values changed.
///
/// # Errors
/// SQLite errors.
pub fn set_source_values(
    tx: &Connection,
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
        let definition_id: Option<i64> = tx
            .query_row(
                "SELECT id FROM facet_definitions WHERE kind = ?1 AND name = ?2",
                params![kind, name],
                |r| r.get(0),
            )
            .optional()?;
        let Some(definition_id) = definition_id else {
            continue;
        };
        let (text, number) = match value {
            Value::Text(t) => (Some(t.as_str()), None),
            Value::Number(n) => (None, Some(*n)),
        };
        let mut stmt = tx.prepare_cached(
            "INSERT INTO facet_values (definition_id, source_id, text, number, set_at) VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT (source_id, definition_id) WHERE source_id IS NOT NULL DO UPDATE SET text = excluded.text, number = excluded.number, set_at = excluded.set_at
             WHERE facet_values.text IS NOT excluded.text OR facet_values.number IS NOT excluded.number",
        )?;
        for source in sources {
            changed += stmt.execute(params![definition_id, source, text, number, now])?;
        }
    }
    Ok(changed)
}

/// Sets a record's facet values from its body: each facet the kind declares that the body holds
/// (read as the facet's type; a value that does not read is left out — the record schema is what
/// refuses bad records). Returns the values set.
///
/// # Errors
/// SQLite errors.
pub fn set_record_values(
    tx: &Connection,
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
        tx.prepare_cached(
                "INSERT INTO facet_values (definition_id, record_id, text, number, set_at)
                 SELECT id, ?3, ?4, ?5, ?6 FROM facet_definitions WHERE kind = ?1 AND name = ?2
                 ON CONFLICT (record_id, definition_id) WHERE record_id IS NOT NULL DO UPDATE SET text = excluded.text, number = excluded.number, set_at = excluded.set_at",
            )?
            .execute(params![kind, name, record_id, text, number, now])?;
    }
    Ok(refused)
}

/// The facet values of a source, by name (numbers as JSON numbers).
///
/// # Errors
/// SQLite errors.
pub fn source_values(
    conn: &Connection,
    source_id: i64,
) -> Result<serde_json::Map<String, serde_json::Value>> {
    let mut stmt = conn.prepare_cached(
        "SELECT fd.name, fd.type, fv.text, fv.number FROM facet_values fv
         JOIN facet_definitions fd ON fd.id = fv.definition_id WHERE fv.source_id = ?1 ORDER BY fd.name",
    )?;
    let rows = stmt.query_map([source_id], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, Option<String>>(2)?,
            r.get::<_, Option<f64>>(3)?,
        ))
    })?;
    let mut out = serde_json::Map::new();
    for row in rows {
        let (name, kind, text, number) = row?;
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
