//! Binary documents (DOCX now, PDF next) as evidence units over a derived text.
//!
//! A document's bytes cannot be sliced into evidence, so its blocks are laid out, in reading order,
//! as a derived text: one block per paragraph, blank lines between blocks. That text is stored as an
//! artifact of the extraction, and every unit and window span indexes it, so chunking, the exact
//! channel, deduplication and `verify` work as they do for Markdown. What a person checks the
//! evidence against (the part, the paragraph, the table row and its cells; for PDF the page and its
//! box) is the unit's [`DocLocator`].

use crate::error::{Diagnostic, ErrorCode};
use crate::unit::{LineIndex, Parsed, Unit};

use super::docx::{self, BlockKind, DocxFailure, DocxLimits};
use super::{Kind, ParseFailure, slugify};

/// The DOCX reader's name and version in every extraction it makes; a change re-extracts.
pub const DOCX_EXTRACTOR: &str = "tychora-docx@1";

/// A cell of a table-row unit.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct DocCell {
    /// First grid column (0-based).
    pub col: usize,
    /// Grid columns it spans.
    pub col_span: usize,
    /// A vertical merge with the cell above.
    pub continues_above: bool,
    /// Its text.
    pub text: String,
}

/// Where a unit sits in its document.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct DocLocator {
    /// `body`, `footnotes`, `endnotes`, `comments`, `textbox`.
    pub part: String,
    /// The index (1-based) of its paragraph in the part.
    pub paragraph: Option<usize>,
    /// Its table in the part (1-based), for a table row.
    pub table: Option<usize>,
    /// Its row in the table (1-based).
    pub row: Option<usize>,
    /// A header row.
    pub header: bool,
    /// A list item's rendered number or bullet.
    pub marker: Option<String>,
    /// A heading's level or a list item's depth.
    pub level: Option<u8>,
    /// A table row's cells.
    pub cells: Vec<DocCell>,
}

/// The part of a locator a citation names.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct DocPlace {
    /// The part (`body`, `footnotes`, …).
    pub part: String,
    /// Paragraph in the part.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paragraph: Option<i64>,
    /// Table in the part.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub table: Option<i64>,
    /// Row in the table.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub row: Option<i64>,
    /// First page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page_start: Option<i64>,
    /// Last page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page_end: Option<i64>,
}

impl DocLocator {
    /// Where the unit sits, as a citation names it.
    #[must_use]
    pub fn place(&self) -> DocPlace {
        let int = |n: Option<usize>| n.and_then(|n| i64::try_from(n).ok());
        DocPlace {
            part: self.part.clone(),
            paragraph: int(self.paragraph),
            table: int(self.table),
            row: int(self.row),
            page_start: None,
            page_end: None,
        }
    }
}

/// A citation a person can check against the document: `policy.docx ¶34–36`,
/// `policy.docx table 2 rows 5–9`, `policy.docx footnotes ¶3`, `report.pdf p.12–13`. `first` and
/// `last` are the places of a window's first and last units.
#[must_use]
pub fn citation(path: &str, first: &DocPlace, last: &DocPlace) -> String {
    let range = |a: i64, b: Option<i64>| match b {
        Some(b) if b > a => format!("{a}–{b}"),
        _ => a.to_string(),
    };
    if let Some(page) = first.page_start {
        let end = last.page_end.or(last.page_start).or(first.page_end);
        return format!("{path} p.{}", range(page, end));
    }
    let part = if first.part == "body" {
        String::new()
    } else {
        format!(" {}", first.part)
    };
    let point = |p: &DocPlace| match (p.paragraph, p.table, p.row) {
        (Some(n), _, _) => Some(format!("¶{n}")),
        (None, Some(t), Some(r)) => Some(format!("table {t} row {r}")),
        _ => None,
    };
    let Some(start) = point(first) else {
        return format!("{path}{part}");
    };
    if first.part != last.part || first == last {
        return format!("{path}{part} {start}");
    }
    match (first, last) {
        (
            DocPlace {
                paragraph: Some(a), ..
            },
            DocPlace {
                paragraph: Some(b), ..
            },
        ) => format!("{path}{part} ¶{}", range(*a, Some(*b))),
        (
            DocPlace {
                table: Some(t),
                row: Some(a),
                ..
            },
            DocPlace {
                table: Some(u),
                row: Some(b),
                ..
            },
        ) if t == u => {
            let rows = if b > a { "rows" } else { "row" };
            format!("{path}{part} table {t} {rows} {}", range(*a, Some(*b)))
        }
        _ => match point(last) {
            Some(end) => format!("{path}{part} {start} to {end}"),
            None => format!("{path}{part} {start}"),
        },
    }
}

/// A header, footer or page-number block: retained and inspectable, never a unit.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Furniture {
    /// `header1`, `footer2`, ….
    pub part: String,
    /// Its text.
    pub text: String,
}

/// A document read into units over its derived text.
#[derive(Debug)]
pub struct DocumentText {
    /// `docx` (later `pdf`).
    pub format: &'static str,
    /// The reader and its version.
    pub extractor: &'static str,
    /// The units' text in reading order: what their spans index.
    pub text: String,
    /// Units, their diagnostics and the title.
    pub parsed: Parsed,
    /// One per unit, in unit order.
    pub locators: Vec<DocLocator>,
    /// Kept out of units.
    pub furniture: Vec<Furniture>,
    /// Relationship targets outside the package: recorded, never followed.
    pub external_targets: Vec<String>,
}

/// What the bytes of a file are, by their first bytes (an extension may lie).
#[must_use]
pub fn sniff(bytes: &[u8]) -> &'static str {
    if bytes.starts_with(b"PK\x03\x04") || bytes.starts_with(b"PK\x05\x06") {
        "a zip package"
    } else if bytes.starts_with(b"%PDF-") {
        "a PDF"
    } else if bytes.starts_with(&[0xD0, 0xCF, 0x11, 0xE0]) {
        "an OLE compound file (legacy Office or an encrypted package)"
    } else if bytes.starts_with(b"\x89PNG") {
        "a PNG image"
    } else if bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        "a JPEG image"
    } else if bytes.starts_with(b"GIF8") {
        "a GIF image"
    } else if bytes.starts_with(b"II*\0") || bytes.starts_with(b"MM\0*") {
        "a TIFF image"
    } else if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        "a WebP image"
    } else if looks_like_text(&bytes[..bytes.len().min(4096)]) {
        "text"
    } else {
        "binary data of an unknown type"
    }
}

/// UTF-8 without NUL bytes (a sequence cut at the end of the sample still counts).
fn looks_like_text(head: &[u8]) -> bool {
    !head.contains(&0)
        && match std::str::from_utf8(head) {
            Ok(_) => true,
            Err(e) => e.error_len().is_none(),
        }
}

/// Reads a document of `kind` from its bytes.
///
/// # Errors
/// A [`ParseFailure`] when the file as a whole cannot be used: bytes of another type, a package
/// that does not open, a bound reached, an encrypted document.
pub fn extract(kind: Kind, bytes: &[u8], path: &str) -> Result<DocumentText, ParseFailure> {
    match kind {
        Kind::Docx => extract_docx(bytes, path),
        other => Err(ParseFailure {
            code: ErrorCode::InvalidArgument,
            message: format!("{} is not a document kind", other.as_str()),
            locator: None,
        }),
    }
}

fn extract_docx(bytes: &[u8], path: &str) -> Result<DocumentText, ParseFailure> {
    let found = sniff(bytes);
    if found != "a zip package" && !found.starts_with("an OLE") {
        return Err(ParseFailure {
            code: ErrorCode::UnsupportedFormat,
            message: format!("named as a DOCX but its bytes are {found}"),
            locator: None,
        });
    }
    let doc = docx::read(bytes, DocxLimits::default()).map_err(|e| ParseFailure {
        code: match e {
            DocxFailure::Limit(_) => ErrorCode::LimitExceeded,
            DocxFailure::Malformed(_) => ErrorCode::UnsupportedFormat,
        },
        message: e.to_string(),
        locator: None,
    })?;
    let mut out = Layout::default();
    // Each table's header rows, by (part, table), for the rows below them.
    let mut headers: std::collections::HashMap<(String, usize), String> =
        std::collections::HashMap::new();
    let mut heading_at: Option<usize> = None;
    for block in &doc.blocks {
        let (unit_type, text) = match block.kind {
            // A numbered heading reads as a person cites it: "1.2 Scope".
            BlockKind::Heading => ("heading", block.numbered_text()),
            BlockKind::Paragraph => ("paragraph", block.text.clone()),
            BlockKind::ListItem => (
                "list_item",
                match &block.marker {
                    Some(m) => format!("{m} {}", block.text),
                    None => block.text.clone(),
                },
            ),
            BlockKind::TableRow => ("table_row", row_text(block)),
        };
        let mut locator = DocLocator {
            part: block.part.clone(),
            paragraph: (block.paragraph > 0).then_some(block.paragraph),
            marker: block.marker.clone(),
            level: block.level,
            ..DocLocator::default()
        };
        let mut table_header = None;
        if let Some(row) = &block.table {
            locator.table = Some(row.table);
            locator.row = Some(row.row);
            locator.header = row.header;
            locator.cells = row
                .cells
                .iter()
                .map(|c| DocCell {
                    col: c.col,
                    col_span: c.col_span,
                    continues_above: c.continues_above,
                    text: c.text.clone(),
                })
                .collect();
            let key = (block.part.clone(), row.table);
            if row.header {
                let entry = headers.entry(key).or_default();
                if !entry.is_empty() {
                    entry.push('\n');
                }
                entry.push_str(&text);
            } else {
                table_header = headers.get(&key).cloned();
            }
        }
        // Notes, comments and text boxes are outside the body's sections.
        let in_body = block.part == "body" || block.part == "textbox";
        if block.kind == BlockKind::Heading && in_body {
            heading_at = Some(out.units.len());
        }
        out.push(
            unit_type,
            &text,
            if in_body { heading_at } else { None },
            &block.heading_path,
            table_header,
            locator,
        );
    }
    let title = doc
        .blocks
        .iter()
        .find(|b| b.kind == BlockKind::Heading)
        .map(|b| b.text.clone());
    let mut diagnostics: Vec<Diagnostic> = doc
        .diagnostics
        .iter()
        .map(|d| Diagnostic::info(path, ErrorCode::UnsupportedFormat, d.clone()))
        .collect();
    if !doc.external_targets.is_empty() {
        diagnostics.push(Diagnostic::info(
            path,
            ErrorCode::Forbidden,
            format!(
                "{} relationship(s) to targets outside the package recorded, never followed",
                doc.external_targets.len()
            ),
        ));
    }
    let (text, units, locators) = out.finish();
    Ok(DocumentText {
        format: "docx",
        extractor: DOCX_EXTRACTOR,
        text,
        parsed: Parsed {
            units,
            diagnostics,
            title,
        },
        locators,
        furniture: doc
            .furniture
            .into_iter()
            .map(|b| Furniture {
                part: b.part,
                text: b.text,
            })
            .collect(),
        external_targets: doc.external_targets,
    })
}

/// A row as one line of cells; a cell's own line breaks become spaces so the row stays one line.
fn row_text(block: &docx::Block) -> String {
    let Some(row) = &block.table else {
        return block.text.clone();
    };
    row.cells
        .iter()
        .map(|c| c.text.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect::<Vec<_>>()
        .join(" | ")
}

/// The derived text under construction: blocks separated by a blank line.
#[derive(Default)]
struct Layout {
    text: String,
    /// (unit, byte start, byte end) before line/column spans are known.
    units: Vec<(Unit, usize, usize)>,
    locators: Vec<DocLocator>,
}

impl Layout {
    fn push(
        &mut self,
        unit_type: &'static str,
        text: &str,
        parent: Option<usize>,
        heading_path: &[String],
        table_header: Option<String>,
        locator: DocLocator,
    ) {
        let text = clean(text);
        if text.is_empty() {
            return;
        }
        if !self.text.is_empty() {
            self.text.push_str("\n\n");
        }
        let start = self.text.len();
        self.text.push_str(&text);
        let end = self.text.len();
        let is_heading = unit_type == "heading";
        self.units.push((
            Unit {
                unit_type,
                is_leaf: true,
                parent,
                span: crate::unit::Span {
                    byte_start: start,
                    byte_end: end,
                    line_start: 0,
                    col_start: 0,
                    line_end: 0,
                    col_end: 0,
                },
                anchor: is_heading.then(|| slugify(&text)).filter(|s| !s.is_empty()),
                text,
                heading_path: heading_path.to_vec(),
                json_pointer: None,
                table_header,
                identifiers: Vec::new(),
                breaks: Vec::new(),
                signature: None,
            },
            start,
            end,
        ));
        self.locators.push(locator);
    }

    fn finish(self) -> (String, Vec<Unit>, Vec<DocLocator>) {
        let index = LineIndex::new(&self.text);
        let units = self
            .units
            .into_iter()
            .map(|(mut unit, start, end)| {
                unit.span = index.span(start, end);
                unit
            })
            .collect();
        (self.text, units, self.locators)
    }
}

/// Block text as it goes into the derived text: control characters (other than line breaks and
/// tabs) dropped, so a hostile document cannot put terminal escapes or form feeds into evidence;
/// blank lines collapsed, so a block never looks like two; ends trimmed.
fn clean(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c == '\n' {
            if !out.ends_with('\n') {
                out.push('\n');
            }
        } else if c == '\t' || !c.is_control() {
            out.push(c);
        }
    }
    out.trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(rel: &str) -> Vec<u8> {
        let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/data/docs")
            .join(rel);
        std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    #[test]
    fn every_unit_is_an_exact_slice_of_the_derived_text() {
        let doc = extract(
            Kind::Docx,
            &fixture(
                "owasp-asvs-5.0/OWASP_Application_Security_Verification_Standard_5.0.0_en.docx",
            ),
            "asvs.docx",
        )
        .unwrap();
        assert!(doc.parsed.units.len() > 500, "{}", doc.parsed.units.len());
        assert_eq!(doc.parsed.units.len(), doc.locators.len());
        let index = LineIndex::new(&doc.text);
        for unit in &doc.parsed.units {
            let s = unit.span;
            assert_eq!(&doc.text[s.byte_start..s.byte_end], unit.text);
            assert_eq!(index.span(s.byte_start, s.byte_end), s);
        }
        // A requirement row carries its table header and its cells.
        let row = doc
            .parsed
            .units
            .iter()
            .zip(&doc.locators)
            .find(|(u, _)| u.unit_type == "table_row" && u.text.contains("1.2.3"))
            .expect("a row with requirement 1.2.3");
        assert!(row.0.table_header.is_some());
        assert!(row.1.cells.len() >= 2, "{:?}", row.1);
        assert!(row.1.table.is_some() && row.1.row.is_some());
        assert!(!row.0.heading_path.is_empty());
    }

    #[test]
    fn the_extension_cannot_lie_about_the_bytes() {
        let pdf = fixture("pdf/docling/2305.03393v1-pg9.pdf");
        let err = extract(Kind::Docx, &pdf, "x.docx").unwrap_err();
        assert_eq!(err.code, ErrorCode::UnsupportedFormat);
        assert!(
            err.message.contains("its bytes are a PDF"),
            "{}",
            err.message
        );
        let err = extract(Kind::Docx, b"# just markdown\n", "x.docx").unwrap_err();
        assert!(
            err.message.contains("its bytes are text"),
            "{}",
            err.message
        );
    }

    #[test]
    fn citations_name_paragraphs_rows_and_pages() {
        let para = |part: &str, p: i64| DocPlace {
            part: part.into(),
            paragraph: Some(p),
            ..DocPlace::default()
        };
        let row = |t: i64, r: i64| DocPlace {
            part: "body".into(),
            table: Some(t),
            row: Some(r),
            ..DocPlace::default()
        };
        assert_eq!(
            citation("a.docx", &para("body", 34), &para("body", 36)),
            "a.docx ¶34–36"
        );
        assert_eq!(
            citation("a.docx", &para("body", 7), &para("body", 7)),
            "a.docx ¶7"
        );
        assert_eq!(
            citation("a.docx", &para("footnotes", 3), &para("footnotes", 3)),
            "a.docx footnotes ¶3"
        );
        assert_eq!(
            citation("a.docx", &row(2, 5), &row(2, 9)),
            "a.docx table 2 rows 5–9"
        );
        assert_eq!(
            citation("a.docx", &row(2, 5), &row(3, 1)),
            "a.docx table 2 row 5 to table 3 row 1"
        );
        assert_eq!(
            citation("a.docx", &para("body", 4), &row(1, 2)),
            "a.docx ¶4 to table 1 row 2"
        );
        let page = |a: i64, b: i64| DocPlace {
            part: "page".into(),
            page_start: Some(a),
            page_end: Some(b),
            ..DocPlace::default()
        };
        assert_eq!(
            citation("r.pdf", &page(12, 12), &page(13, 13)),
            "r.pdf p.12–13"
        );
    }

    #[test]
    fn control_characters_never_reach_the_derived_text() {
        assert_eq!(
            clean("a\u{1b}[31mred\u{7}\u{c}\n\n\nb\t c "),
            "a[31mred\nb\t c"
        );
    }
}
