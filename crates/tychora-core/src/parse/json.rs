//! JSON and JSON Lines: one record per top-level array element, object member, or line.
//!
//! serde_json exposes no source offsets, but a borrowed `&RawValue` is a slice of the input, so
//! its pointer offset gives the record's exact byte range without a hand-written scanner.

use crate::unit::UnitType;
use std::fmt;

use serde::de::{Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;

use super::ParseFailure;
use crate::error::{Diagnostic, ErrorCode};
use crate::unit::{Identifier, LineIndex, Parsed, Unit};

/// Keys whose value names the record; registered for the exact channel, left out of the text.
const ID_KEYS: [&str; 2] = ["_id", "id"];

enum TopLevel<'a> {
    Array(Vec<&'a RawValue>),
    Object(Vec<(String, &'a RawValue)>),
    Scalar,
}

struct TopLevelVisitor;

impl<'de> Visitor<'de> for TopLevelVisitor {
    type Value = TopLevel<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON document")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<&RawValue>()? {
            items.push(item);
        }
        Ok(TopLevel::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut members = Vec::new();
        while let Some((key, value)) = map.next_entry::<String, &RawValue>()? {
            members.push((key, value));
        }
        Ok(TopLevel::Object(members))
    }

    fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
        Ok(TopLevel::Scalar)
    }
    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(TopLevel::Scalar)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok(TopLevel::Scalar)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok(TopLevel::Scalar)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(TopLevel::Scalar)
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(TopLevel::Scalar)
    }
}

fn failure(err: &serde_json::Error) -> ParseFailure {
    failure_after(err, 0)
}

/// A parse error of text that starts `skipped` bytes into its line 1 (after a byte order mark).
fn failure_after(err: &serde_json::Error, skipped: usize) -> ParseFailure {
    let column = err.column() + if err.line() == 1 { skipped } else { 0 };
    ParseFailure {
        code: ErrorCode::UnsupportedFormat,
        message: format!("malformed JSON: {err}"),
        locator: Some(format!("{}:{column}", err.line())),
    }
}

/// A UTF-8 byte order mark some editors write at the start of a file. RFC 8259 forbids emitting one
/// but lets parsers ignore it; serde_json does not, so it is skipped here and every offset still
/// counts the bytes of the original text.
const BOM: char = '\u{feff}';

pub(super) fn parse_document(text: &str, index: &LineIndex) -> Result<Parsed, ParseFailure> {
    let body = text.strip_prefix(BOM).unwrap_or(text);
    let mut de = serde_json::Deserializer::from_str(body);
    let top = de
        .deserialize_any(TopLevelVisitor)
        .map_err(|e| failure_after(&e, text.len() - body.len()))?;
    de.end()
        .map_err(|e| failure_after(&e, text.len() - body.len()))?;
    let offset = |raw: &RawValue| raw.get().as_ptr() as usize - text.as_ptr() as usize;
    let mut units = Vec::new();
    match top {
        TopLevel::Array(items) => {
            for (i, raw) in items.into_iter().enumerate() {
                units.push(record(
                    text,
                    index,
                    offset(raw),
                    raw.get(),
                    format!("/{i}"),
                )?);
            }
        }
        TopLevel::Object(members) => {
            for (key, raw) in members {
                let pointer = format!("/{}", key.replace('~', "~0").replace('/', "~1"));
                // `{"requirements": [{…}, {…}]}`: each object is a record of its own, not one
                // unit the size of the file.
                if let Some(items) = array_of_objects(raw) {
                    for (i, item) in items.into_iter().enumerate() {
                        let mut unit = record(
                            text,
                            index,
                            offset(item),
                            item.get(),
                            format!("{pointer}/{i}"),
                        )?;
                        unit.heading_path = vec![key.clone()];
                        units.push(unit);
                    }
                    continue;
                }
                let mut unit = record(text, index, offset(raw), raw.get(), pointer)?;
                unit.heading_path = vec![key];
                units.push(unit);
            }
        }
        TopLevel::Scalar => {
            let start = text.len() - body.trim_start().len();
            units.push(record(text, index, start, body.trim(), String::new())?);
        }
    }
    Ok(Parsed {
        units,
        diagnostics: Vec::new(),
        title: None,
    })
}

/// The elements of a non-empty array whose every element is an object.
fn array_of_objects(raw: &RawValue) -> Option<Vec<&RawValue>> {
    let items: Vec<&RawValue> = serde_json::from_str(raw.get()).ok()?;
    (!items.is_empty() && items.iter().all(|i| i.get().starts_with('{'))).then_some(items)
}

pub(super) fn parse_lines(text: &str, index: &LineIndex, path: &str) -> Parsed {
    let mut parsed = Parsed::default();
    let mut offset = 0;
    for (line_no, whole) in text.split_inclusive('\n').enumerate() {
        let line = if line_no == 0 {
            whole.strip_prefix(BOM).unwrap_or(whole)
        } else {
            whole
        };
        let content = line.trim();
        if !content.is_empty() {
            let start = offset + (whole.len() - line.trim_start().len());
            match record(text, index, start, content, String::new()) {
                Ok(unit) => parsed.units.push(unit),
                Err(fail) => parsed.diagnostics.push(
                    Diagnostic::warning(
                        path,
                        fail.code,
                        format!("line {} skipped: {}", line_no + 1, fail.message),
                    )
                    .at(format!("{}:1", line_no + 1)),
                ),
            }
        }
        offset += whole.len();
    }
    parsed
}

fn record(
    text: &str,
    index: &LineIndex,
    start: usize,
    raw: &str,
    pointer: String,
) -> Result<Unit, ParseFailure> {
    let value: Value = serde_json::from_str(raw).map_err(|e| failure(&e))?;
    let mut identifiers = Vec::new();
    let mut parts = Vec::new();
    if let Value::Object(map) = &value {
        for (key, field) in map {
            if ID_KEYS.contains(&key.as_str()) {
                match field {
                    Value::String(s) => identifiers.push(Identifier {
                        kind: "json_id".into(),
                        value: s.clone(),
                    }),
                    Value::Number(n) => identifiers.push(Identifier {
                        kind: "json_id".into(),
                        value: n.to_string(),
                    }),
                    _ => collect_text(field, &mut parts),
                }
            } else {
                collect_text(field, &mut parts);
            }
        }
    } else {
        collect_text(&value, &mut parts);
    }
    let end = start + raw.len();
    debug_assert_eq!(&text[start..end], raw);
    Ok(Unit {
        unit_type: UnitType::Record,
        is_leaf: true,
        parent: None,
        span: index.span(start, end),
        text: parts.join("\n"),
        heading_path: Vec::new(),
        anchor: identifiers.first().map(|i| i.value.clone()),
        json_pointer: Some(pointer),
        table_header: None,
        breaks: Vec::new(),
        signature: None,
        identifiers,
    })
}

/// Decoded string and number values, depth first, in document order.
fn collect_text(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) if !s.trim().is_empty() => out.push(s.clone()),
        Value::Number(n) => out.push(n.to_string()),
        Value::Bool(b) => out.push(b.to_string()),
        Value::Array(items) => items.iter().for_each(|v| collect_text(v, out)),
        Value::Object(map) => map.values().for_each(|v| collect_text(v, out)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn array_records_have_pointers_and_exact_spans() {
        let text = "[\n  {\"id\": \"a1\", \"title\": \"Alpha\", \"body\": \"first\"},\n  {\"id\": 7, \"tags\": [\"x\", \"y\"]}\n]\n";
        let parsed = parse_document(text, &LineIndex::new(text)).unwrap();
        assert_eq!(parsed.units.len(), 2);
        let first = &parsed.units[0];
        assert_eq!(
            &text[first.span.byte_start..first.span.byte_end],
            "{\"id\": \"a1\", \"title\": \"Alpha\", \"body\": \"first\"}"
        );
        assert_eq!(first.json_pointer.as_deref(), Some("/0"));
        assert_eq!(first.text, "Alpha\nfirst");
        assert_eq!(first.anchor.as_deref(), Some("a1"));
        assert_eq!(parsed.units[1].span.line_start, 3);
        assert_eq!(parsed.units[1].identifiers[0].value, "7");
    }

    #[test]
    fn a_member_holding_objects_is_one_record_per_object() {
        let text = "{\"requirements\": [\n {\"req_id\": \"V1.1.1\", \"L\": \"2\"},\n {\"req_id\": \"V1.1.2\"}\n], \"tags\": [\"a\", {\"b\": 1}], \"version\": \"5.0\"}";
        let parsed = parse_document(text, &LineIndex::new(text)).unwrap();
        let pointers: Vec<_> = parsed
            .units
            .iter()
            .map(|u| u.json_pointer.clone().unwrap())
            .collect();
        // A mixed array stays one unit.
        assert_eq!(
            pointers,
            ["/requirements/0", "/requirements/1", "/tags", "/version"]
        );
        let second = &parsed.units[1];
        assert_eq!(
            &text[second.span.byte_start..second.span.byte_end],
            "{\"req_id\": \"V1.1.2\"}"
        );
        assert_eq!(second.span.line_start, 3);
        assert_eq!(second.heading_path, ["requirements"]);
    }

    #[test]
    fn object_members_escape_pointer_tokens() {
        let text = r#"{"a/b": {"v": "one"}, "t~": "two"}"#;
        let parsed = parse_document(text, &LineIndex::new(text)).unwrap();
        let pointers: Vec<_> = parsed
            .units
            .iter()
            .map(|u| u.json_pointer.clone().unwrap())
            .collect();
        assert_eq!(pointers, ["/a~1b", "/t~0"]);
    }

    #[test]
    fn malformed_json_fails_with_position() {
        let text = "{\n  \"a\": [1, 2,\n}";
        let err = parse_document(text, &LineIndex::new(text)).unwrap_err();
        assert_eq!(err.code, ErrorCode::UnsupportedFormat);
        assert_eq!(err.locator.as_deref(), Some("3:1"));
    }

    #[test]
    fn a_byte_order_mark_is_skipped_and_offsets_count_it() {
        let text = "\u{feff}{\"id\": \"b1\", \"t\": \"bom\"}";
        let parsed = parse_document(text, &LineIndex::new(text)).unwrap();
        let unit = &parsed.units[0];
        assert_eq!(unit.span.byte_start, text.find("\"b1\"").unwrap());
        assert_eq!(&text[unit.span.byte_start..unit.span.byte_end], "\"b1\"");
        let lines = "\u{feff}{\"_id\": \"l1\", \"text\": \"one\"}\n{\"_id\": \"l2\"}\n";
        let parsed = parse_lines(lines, &LineIndex::new(lines), "f.jsonl");
        assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
        assert_eq!(parsed.units.len(), 2);
        assert_eq!(parsed.units[0].span.byte_start, 3);
        let scalar = "\u{feff} 42 ";
        let parsed = parse_document(scalar, &LineIndex::new(scalar)).unwrap();
        assert_eq!(
            &scalar[parsed.units[0].span.byte_start..parsed.units[0].span.byte_end],
            "42"
        );
        let broken = "\u{feff}{,}";
        let err = parse_document(broken, &LineIndex::new(broken)).unwrap_err();
        assert_eq!(err.locator.as_deref(), Some("1:5"));
    }

    #[test]
    fn jsonl_skips_bad_lines_with_a_diagnostic() {
        let text = "{\"_id\": \"d1\", \"text\": \"one\"}\n{broken\n\n{\"_id\": \"d2\", \"text\": \"two\"}\n";
        let parsed = parse_lines(text, &LineIndex::new(text), "f.jsonl");
        assert_eq!(parsed.units.len(), 2);
        assert_eq!(parsed.units[1].span.line_start, 4);
        assert_eq!(parsed.diagnostics.len(), 1);
        assert_eq!(parsed.diagnostics[0].locator.as_deref(), Some("2:1"));
    }
}
