//! CSV (RFC 4180, as the `csv` crate reads it): the first record is the header, every other
//! record one `table_row` unit spanning its exact bytes, its text the header line and the row (so
//! a row is never read without its column names). Rows of another width than the header are kept
//! and reported; quoted fields may span lines.

use crate::error::Diagnostic;
use crate::unit::UnitType;
use crate::unit::{LineIndex, Parsed, Unit};

/// The fields of one CSV line or record (`line` holds exactly one record).
#[must_use]
pub fn fields(line: &str) -> Vec<String> {
    let mut reader = ::csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(line.as_bytes());
    reader
        .records()
        .next()
        .and_then(std::result::Result::ok)
        .map(|r| r.iter().map(|f| f.trim().to_string()).collect())
        .unwrap_or_default()
}

pub(super) fn parse(text: &str, index: &LineIndex, path: &str) -> Parsed {
    let mut parsed = Parsed::default();
    // A byte order mark is not part of the first column's name.
    let bom = if text.starts_with('\u{feff}') { 3 } else { 0 };
    let mut reader = ::csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(&text.as_bytes()[bom..]);
    // Record start offsets (from the reader's positions), then each record's span runs to the
    // next one's start, trailing line break left out.
    let mut starts: Vec<(usize, usize)> = Vec::new(); // (byte start, fields)
    let mut record = ::csv::StringRecord::new();
    loop {
        match reader.read_record(&mut record) {
            Ok(true) => {
                let mut at = record
                    .position()
                    .and_then(|p| usize::try_from(p.byte()).ok())
                    .map_or(text.len(), |b| b + bom);
                // After a CRLF the reader's position is at its LF (it ends a record on either).
                while text
                    .as_bytes()
                    .get(at)
                    .is_some_and(|b| matches!(b, b'\r' | b'\n'))
                {
                    at += 1;
                }
                starts.push((at, record.len()));
            }
            Ok(false) => break,
            Err(e) => {
                let line = e.position().map_or(0, ::csv::Position::line);
                parsed.diagnostics.push(
                    Diagnostic::warning(
                        path,
                        crate::ErrorCode::InvalidArgument,
                        format!(
                            "CSV read stopped at line {line}: {e}; the rows before it are kept"
                        ),
                    )
                    .at(format!("{line}:1")),
                );
                break;
            }
        }
    }
    let Some(&(header_start, width)) = starts.first() else {
        return parsed;
    };
    let end_of = |i: usize| {
        let end = starts.get(i + 1).map_or(text.len(), |s| s.0);
        super::trim_end(text, starts[i].0, end)
    };
    let header = text[header_start..end_of(0)].to_string();
    let mut uneven = 0;
    for (i, &(start, fields)) in starts.iter().enumerate().skip(1) {
        let end = end_of(i);
        if end <= start {
            continue; // a blank line
        }
        if fields != width {
            uneven += 1;
        }
        let row = &text[start..end];
        let mut unit = Unit::leaf(
            UnitType::TableRow,
            None,
            index.span(start, end),
            format!("{header}\n{row}"),
            Vec::new(),
        );
        unit.table_header = Some(header.clone());
        parsed.units.push(unit);
    }
    if uneven > 0 {
        parsed.diagnostics.push(Diagnostic::info(
            path,
            crate::ErrorCode::InvalidArgument,
            format!("{uneven} rows have another number of fields than the header's {width}; kept as they are"),
        ));
    }
    parsed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_span_their_exact_bytes_with_quoted_newlines_and_crlf() {
        let text = "id,text,L\r\nV1.1.1,\"Verify, \"\"quoted\"\"\nacross lines\",2\r\nV1.1.2,Plain,1\r\n\r\nV1.1.3,Short\r\n";
        let parsed = parse(text, &LineIndex::new(text), "a.csv");
        assert_eq!(parsed.units.len(), 3);
        let first = &parsed.units[0];
        assert_eq!(
            &text[first.span.byte_start..first.span.byte_end],
            "V1.1.1,\"Verify, \"\"quoted\"\"\nacross lines\",2"
        );
        assert_eq!(first.span.line_start, 2);
        assert_eq!(first.span.line_end, 3);
        assert_eq!(first.table_header.as_deref(), Some("id,text,L"));
        assert_eq!(
            fields(&text[first.span.byte_start..first.span.byte_end]),
            vec!["V1.1.1", "Verify, \"quoted\"\nacross lines", "2"]
        );
        assert_eq!(parsed.units[2].span.line_start, 6);
        // The short row is kept and reported.
        assert!(
            parsed.diagnostics[0].message.contains("1 rows"),
            "{:?}",
            parsed.diagnostics
        );
    }

    #[test]
    fn a_header_only_or_empty_file_has_no_rows() {
        for text in ["", "a,b,c\n", "\u{feff}a,b\n"] {
            let parsed = parse(text, &LineIndex::new(text), "a.csv");
            assert!(parsed.units.is_empty(), "{text:?}");
        }
    }
}
