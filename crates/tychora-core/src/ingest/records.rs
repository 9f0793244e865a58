//! Structured records read from row-shaped units — Markdown table rows, CSV rows, JSON objects —
//! by the rules a kind declares (`records` in its pack definition), validated against the kind's
//! JSON Schema for the record type. A row whose key does not match the rule is not a record; a
//! row that is one but breaks the schema is a diagnostic naming the schema path, and the rest of
//! the file proceeds. Each record's key becomes an identifier of its unit, so the exact channel
//! finds `V1.2.3` where a chapter table writes `**1.2.3**`.

use crate::unit::UnitType;
use serde_json::{Map, Value};

use crate::config::{KindDefinition, RecordRule};
use crate::error::{Diagnostic, ErrorCode};
use crate::parse::Format;
use crate::store::tx::Tx;
use crate::unit::{Identifier, Unit};

/// A record found in one unit of an extraction.
#[derive(Debug, Clone)]
pub struct Candidate {
    /// The unit's ordinal in the extraction.
    pub unit: usize,
    /// Its record type (`requirement`).
    pub record_type: String,
    /// Its key (`V1.2.3`).
    pub key: String,
    /// The validated record.
    pub body: Value,
}

/// The identifier kind a record key is registered under (a definition, like an anchor).
pub const RECORD_IDENTIFIER: &str = "record";

/// Reads the records `definition` declares from `units` (of a file in `format`), registering
/// each key as an identifier of its unit.
pub fn extract(
    definition: &KindDefinition,
    format: Format,
    text: &str,
    units: &mut [Unit],
    path: &str,
) -> (Vec<Candidate>, Vec<Diagnostic>) {
    if definition.records.is_empty() {
        return (Vec::new(), Vec::new());
    }
    let rows: Vec<Row> = units
        .iter()
        .enumerate()
        .filter_map(|(ordinal, unit)| {
            row_fields(format, text, unit).map(|fields| Row {
                ordinal,
                fields,
                at: format!("{}:1", unit.span.line_start),
            })
        })
        .collect();
    read_rows(definition, rows, units, path)
}

/// As [`extract`], for a document (DOCX, PDF) whose table rows carry their cells in `locators`
/// (one per unit): a row's fields are its cells under the header row's cells of the same column.
pub fn extract_document(
    definition: &KindDefinition,
    units: &mut [Unit],
    locators: &[crate::parse::document::DocLocator],
    path: &str,
) -> (Vec<Candidate>, Vec<Diagnostic>) {
    if definition.records.is_empty() {
        return (Vec::new(), Vec::new());
    }
    let mut headers: std::collections::HashMap<(&str, usize), Vec<(usize, String)>> =
        std::collections::HashMap::new();
    for l in locators.iter().filter(|l| l.header) {
        if let Some(table) = l.table {
            headers.entry((l.part.as_str(), table)).or_insert_with(|| {
                l.cells
                    .iter()
                    .map(|c| (c.col, c.text.trim().to_string()))
                    .collect()
            });
        }
    }
    let rows: Vec<Row> = locators
        .iter()
        .enumerate()
        .filter(|(_, l)| !l.header && l.row.is_some())
        .filter_map(|(ordinal, l)| {
            let header = headers.get(&(l.part.as_str(), l.table?))?;
            let fields = l
                .cells
                .iter()
                .filter_map(|c| {
                    header
                        .iter()
                        .find(|(col, _)| *col == c.col)
                        .map(|(_, name)| {
                            (name.clone(), strip_marks(c.text.trim(), "**").to_string())
                        })
                })
                .collect();
            Some(Row {
                ordinal,
                fields,
                at: format!("table {} row {}", l.table?, l.row?),
            })
        })
        .collect();
    read_rows(definition, rows, units, path)
}

/// One row-shaped unit: its ordinal, its (column, value) pairs, and where a diagnostic points.
struct Row {
    ordinal: usize,
    fields: Vec<(String, String)>,
    at: String,
}

fn read_rows(
    definition: &KindDefinition,
    rows: Vec<Row>,
    units: &mut [Unit],
    path: &str,
) -> (Vec<Candidate>, Vec<Diagnostic>) {
    let mut found = Vec::new();
    let mut diagnostics = Vec::new();
    let mut rules = Vec::new();
    for (record_type, rule) in &definition.records {
        // Both were checked when the pack was resolved; a rule that still fails is reported once.
        let compiled = definition
            .schemas
            .get(record_type)
            .map(|s| crate::config::record_schema_options().build(s));
        match (compiled, regex::Regex::new(&rule.key_pattern)) {
            (Some(Ok(validator)), Ok(pattern)) => {
                rules.push((record_type, rule, validator, pattern))
            }
            _ => diagnostics.push(Diagnostic::error(
                path,
                ErrorCode::InvalidArgument,
                format!("record type {record_type:?}: its schema or key pattern does not compile"),
            )),
        }
    }
    for Row {
        ordinal,
        fields: row,
        at,
    } in rows
    {
        let Some(unit) = units.get_mut(ordinal) else {
            continue;
        };
        for (record_type, rule, validator, pattern) in &rules {
            let Some(key) = key_of(rule, pattern, &row) else {
                continue;
            };
            let body = body_of(rule, &key, &row, definition.schemas.get(*record_type));
            let errors: Vec<String> = validator
                .iter_errors(&body)
                .map(|e| {
                    format!(
                        "{}: {e} (schema {})",
                        if e.instance_path().as_str().is_empty() {
                            "/"
                        } else {
                            e.instance_path().as_str()
                        },
                        e.schema_path().as_str()
                    )
                })
                .collect();
            if !errors.is_empty() {
                diagnostics.push(
                    Diagnostic::warning(
                        path,
                        ErrorCode::InvalidArgument,
                        format!("{record_type} {key} is not recorded: {}", errors.join("; ")),
                    )
                    .at(at.clone()),
                );
                continue;
            }
            if !unit
                .identifiers
                .iter()
                .any(|i| i.kind == RECORD_IDENTIFIER && i.value == key)
            {
                unit.identifiers.push(Identifier {
                    kind: RECORD_IDENTIFIER.into(),
                    value: key.clone(),
                });
            }
            found.push(Candidate {
                unit: ordinal,
                record_type: (*record_type).clone(),
                key,
                body,
            });
        }
    }
    (found, diagnostics)
}

/// Whether two statements of a field say the same: equal, or text that differs only in
/// typography — curly quotes, dashes, Markdown escapes, spacing — which the formats of one
/// document (Word, Markdown, CSV) render each their own way.
fn same_statement(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::String(a), Value::String(b)) => {
            let words = |s: &str| -> String {
                s.chars()
                    .filter(|c| c.is_alphanumeric())
                    .flat_map(char::to_lowercase)
                    .collect()
            };
            a == b || words(a) == words(b)
        }
        _ => a == b,
    }
}

/// A row's (column, value) pairs, for the units that are rows.
fn row_fields(format: Format, text: &str, unit: &Unit) -> Option<Vec<(String, String)>> {
    let slice = text.get(unit.span.byte_start..unit.span.byte_end)?;
    match (format, unit.unit_type) {
        (Format::Markdown, UnitType::TableRow) => {
            let header = markdown_cells(unit.table_header.as_deref()?.lines().next()?);
            Some(header.into_iter().zip(markdown_cells(slice)).collect())
        }
        (Format::Csv, UnitType::TableRow) => {
            let header = crate::parse::csv::fields(unit.table_header.as_deref()?);
            Some(
                header
                    .into_iter()
                    .zip(crate::parse::csv::fields(slice))
                    .collect(),
            )
        }
        (Format::Json | Format::Jsonl, UnitType::Record) => {
            let Ok(Value::Object(map)) = serde_json::from_str::<Value>(slice) else {
                return None;
            };
            Some(
                map.into_iter()
                    .filter_map(|(k, v)| match v {
                        Value::String(s) => Some((k, s)),
                        Value::Number(n) => Some((k, n.to_string())),
                        Value::Bool(b) => Some((k, b.to_string())),
                        _ => None,
                    })
                    .collect(),
            )
        }
        _ => None,
    }
}

/// The cells of a GFM table line, their inline emphasis and code marks taken off. (pulldown-cmark
/// gives cell events but not a row's cells with their columns once a cell holds inline markup;
/// splitting the already-delimited row line on unescaped pipes is what GFM itself specifies.)
fn markdown_cells(line: &str) -> Vec<String> {
    let line = line.trim();
    let line = line.strip_prefix('|').unwrap_or(line);
    let line = line.strip_suffix('|').unwrap_or(line);
    let mut cells = Vec::new();
    let mut cell = String::new();
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                cell.push('|');
                chars.next();
            }
            '|' => cells.push(std::mem::take(&mut cell)),
            _ => cell.push(c),
        }
    }
    cells.push(cell);
    cells
        .into_iter()
        .map(|c| {
            let c = c.trim();
            let c = strip_marks(c, "**");
            let c = strip_marks(c, "__");
            strip_marks(c, "`").trim().to_string()
        })
        .collect()
}

fn strip_marks<'a>(cell: &'a str, mark: &str) -> &'a str {
    cell.strip_prefix(mark)
        .and_then(|c| c.strip_suffix(mark))
        .unwrap_or(cell)
}

/// The row's key under `rule`: the first key column with a value, prefixed when it lacks the
/// prefix and only then matches.
fn key_of(rule: &RecordRule, pattern: &regex::Regex, row: &[(String, String)]) -> Option<String> {
    let raw = rule
        .key
        .iter()
        .find_map(|column| row.iter().find(|(c, v)| c == column && !v.is_empty()))
        .map(|(_, v)| v.trim())?;
    if pattern.is_match(raw) {
        return Some(raw.to_string());
    }
    let prefixed = format!("{}{raw}", rule.key_prefix.as_deref()?);
    pattern.is_match(&prefixed).then_some(prefixed)
}

/// The record: `id`, the key's parts, then each field from its first column with a value, typed
/// as the schema's property says (a value that does not read as that type is kept as text, and
/// validation names it).
fn body_of(
    rule: &RecordRule,
    key: &str,
    row: &[(String, String)],
    schema: Option<&Value>,
) -> Value {
    let mut body = Map::new();
    body.insert("id".into(), Value::String(key.to_string()));
    let parts: Vec<&str> = key.split('.').collect();
    for (field, n) in &rule.key_parts {
        if *n <= parts.len() {
            body.insert(field.clone(), Value::String(parts[..*n].join(".")));
        }
    }
    let property_type = |field: &str| {
        schema
            .and_then(|s| s.pointer(&format!("/properties/{field}/type")))
            .and_then(Value::as_str)
    };
    for (field, columns) in &rule.fields {
        let Some(raw) = columns
            .iter()
            .find_map(|column| row.iter().find(|(c, v)| c == column && !v.is_empty()))
            .map(|(_, v)| v.trim())
        else {
            continue;
        };
        let value = match property_type(field) {
            Some("integer") => raw.parse::<i64>().map_or_else(|_| raw.into(), Value::from),
            Some("number") => raw
                .parse::<f64>()
                .ok()
                .and_then(serde_json::Number::from_f64)
                .map_or_else(|| raw.into(), Value::Number),
            Some("boolean") => match raw {
                "true" => Value::Bool(true),
                "false" => Value::Bool(false),
                _ => raw.into(),
            },
            _ => raw.into(),
        };
        body.insert(field.clone(), value);
    }
    Value::Object(body)
}

/// Stores the records of a new extraction: each is upserted by (kind, record type, key) — the
/// same requirement read from several files is one record — its body taking this unit's fields
/// over what it held, its evidence bound to the unit and revision, its facet values set. A field
/// that another source states differently is reported (the newest capture is what the record
/// says; both statements stay in `record_evidence`).
pub(super) fn store(
    tx: &dyn Tx,
    kind: &str,
    definition: &KindDefinition,
    revision_id: i64,
    extraction_id: i64,
    candidates: &[Candidate],
    path: &str,
) -> crate::Result<Vec<Diagnostic>> {
    use crate::store::records as rows;
    let now = crate::clock::now_ms();
    let mut diagnostics = Vec::new();
    for candidate in candidates {
        let unit_id = super::unit_id(tx, extraction_id, candidate.unit)?;
        let existing = rows::by_key(tx, kind, &candidate.record_type, &candidate.key)?;
        let body = match &existing {
            Some((_, old)) => {
                let mut merged: Map<String, Value> = serde_json::from_str(old).unwrap_or_default();
                if let Value::Object(new) = &candidate.body {
                    merged.extend(new.clone());
                }
                Value::Object(merged)
            }
            None => candidate.body.clone(),
        };
        let record_id = match existing {
            Some((id, _)) => {
                rows::set_body(tx, id, &body.to_string(), now)?;
                id
            }
            None => rows::insert(
                tx,
                kind,
                &candidate.record_type,
                &candidate.key,
                &body.to_string(),
                now,
            )?,
        };
        // What other sources state about it, at their newest revision.
        let others = rows::stated_elsewhere(tx, record_id, revision_id)?;
        for (other_path, other_body) in others {
            let Ok(Value::Object(other)) = serde_json::from_str::<Value>(&other_body) else {
                continue;
            };
            for (field, value) in candidate.body.as_object().into_iter().flatten() {
                if let Some(theirs) = other.get(field).filter(|t| !same_statement(t, value)) {
                    diagnostics.push(Diagnostic::info(
                        path,
                        ErrorCode::Conflict,
                        format!(
                            "{} {}: {field} is {value} here and {theirs} in {other_path}; the record now says {value}",
                            candidate.record_type, candidate.key
                        ),
                    ));
                }
            }
        }
        rows::put_evidence(
            tx,
            record_id,
            unit_id,
            revision_id,
            &candidate.body.to_string(),
        )?;
        for refused in
            crate::store::facets::set_record_values(tx, kind, definition, record_id, &body, now)?
        {
            diagnostics.push(Diagnostic::warning(
                path,
                ErrorCode::InvalidArgument,
                format!(
                    "{} {}: {refused}; the record is kept without that facet",
                    candidate.record_type, candidate.key
                ),
            ));
        }
    }
    Ok(diagnostics)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn standard() -> KindDefinition {
        crate::config::resolve(None, "documents", &serde_json::json!({}))
            .unwrap()
            .pack
            .kinds
            .remove("standard")
            .unwrap()
    }

    #[test]
    fn the_same_requirement_is_read_from_a_markdown_table_a_csv_row_and_a_json_object() {
        let standard = standard();
        let md = "# V1\n\n## V1.2 Injection\n\n| # | Description | Level |\n| :---: | :--- | :---: |\n| **1.2.1** | Verify that output encoding \\| escaping is used. | 1 |\n| **1.2.2** | Verify URLs. | 9 |\n";
        let csv = "chapter_id,req_id,req_description,L\nV1,V1.2.1,\"Verify that output encoding | escaping is used.\",1\n";
        let json = "{\"requirements\": [{\"req_id\": \"V1.2.1\", \"req_description\": \"Verify that output encoding | escaping is used.\", \"L\": \"1\"}]}";
        let mut bodies = Vec::new();
        for (format, text) in [
            (Format::Markdown, md),
            (Format::Csv, csv),
            (Format::Json, json),
        ] {
            let mut units = crate::parse::parse(format, text, "x").unwrap().units;
            let (found, diagnostics) = extract(&standard, format, text, &mut units, "x");
            assert_eq!(found.len(), 1, "{format:?}");
            let record = &found[0];
            assert_eq!(record.key, "V1.2.1");
            assert!(
                units[record.unit]
                    .identifiers
                    .iter()
                    .any(|i| i.kind == RECORD_IDENTIFIER && i.value == "V1.2.1")
            );
            bodies.push(record.body.clone());
            if format == Format::Markdown {
                // Level 9 breaks the schema's maximum: reported with where, not recorded.
                assert_eq!(diagnostics.len(), 1);
                let message = &diagnostics[0].message;
                assert!(
                    message.contains("V1.2.2 is not recorded: /level:"),
                    "{message}"
                );
                assert!(message.contains("/properties/level/maximum"), "{message}");
                assert_eq!(diagnostics[0].locator.as_deref(), Some("8:1"));
            } else {
                assert!(diagnostics.is_empty(), "{diagnostics:?}");
            }
        }
        assert_eq!(
            bodies[0],
            serde_json::json!({ "id": "V1.2.1", "chapter": "V1", "section": "V1.2", "level": 1, "text": "Verify that output encoding | escaping is used." })
        );
        assert_eq!(bodies[0], bodies[1]);
        assert_eq!(bodies[1], bodies[2]);
    }

    #[test]
    fn rows_whose_key_does_not_match_are_not_records() {
        let standard = standard();
        let md = "| # | Description |\n| - | - |\n| Note | Not a requirement |\n| 1.2 | A section, not a requirement |\n";
        let mut units = crate::parse::parse(Format::Markdown, md, "x")
            .unwrap()
            .units;
        let (found, diagnostics) = extract(&standard, Format::Markdown, md, &mut units, "x");
        assert!(found.is_empty() && diagnostics.is_empty());
    }
}
