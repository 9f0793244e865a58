//! Evidence units and their exact spans: what every parser (native and tree-sitter) produces and
//! what chunking, the exact channel and the code graph read. Both `parse` and `code` build on this
//! module, so neither depends on the other for its vocabulary.

mod lines;

use serde::Serialize;

use crate::error::Diagnostic;
pub use lines::LineIndex;

/// A byte range with its 1-based line/column range (columns count bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Span {
    /// First byte.
    pub byte_start: usize,
    /// One past the last byte.
    pub byte_end: usize,
    /// Line of the first byte (1-based).
    pub line_start: usize,
    /// Column of the first byte (1-based, in bytes).
    pub col_start: usize,
    /// Line of the last byte (1-based).
    pub line_end: usize,
    /// Column one past the last byte (1-based, in bytes).
    pub col_end: usize,
}

/// An identifier registered for the exact channel.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Identifier {
    /// `anchor`, `json_id` or a pattern name from the config.
    pub kind: String,
    /// The identifier as written.
    pub value: String,
}

/// The identifier kind of a document's own name (`RFC 6749`): a definition, registered once per
/// document, that scopes a query naming it to that document.
pub const DOCUMENT_IDENTIFIER: &str = "document";

/// A pack's identifier pattern, compiled (the exact channel reads queries with it, ingestion
/// reads units): its name, its regex and how a match is written.
#[derive(Debug, Clone)]
pub struct IdentifierRule {
    /// The pattern's name (`rfc`, `article`), part of a mention's identifier kind.
    pub name: String,
    /// Case-insensitive.
    pub regex: regex::Regex,
    /// The template a match is expanded with (`${group}`), when the pack gives one.
    pub canonical: Option<String>,
}

impl IdentifierRule {
    /// The identifiers `text` names, as written or as the canonical template spells them.
    #[must_use]
    pub fn find_all(&self, text: &str) -> Vec<String> {
        match &self.canonical {
            None => self
                .regex
                .find_iter(text)
                .map(|m| m.as_str().to_string())
                .collect(),
            Some(template) => self
                .regex
                .captures_iter(text)
                .map(|c| {
                    let mut out = String::new();
                    c.expand(template, &mut out);
                    out
                })
                .collect(),
        }
    }
}

crate::wire::wire_enum! {
    /// What an evidence unit is: the closed set every parser emits, stored in
    /// `evidence_units.unit_type` and sent on the wire.
    pub enum UnitType {
        /// A heading's container: its span covers the subtree (never a chunk window by itself).
        Section = "section",
        /// A heading line.
        Heading = "heading",
        /// A paragraph of prose.
        Paragraph = "paragraph",
        /// One item of a list.
        ListItem = "list_item",
        /// A fenced or indented code block in prose.
        CodeBlock = "code_block",
        /// One table row, read with its header.
        TableRow = "table_row",
        /// A JSON or JSONL record.
        Record = "record",
        /// A block quote.
        BlockQuote = "block_quote",
        /// A raw HTML block in Markdown.
        Html = "html",
        /// A footnote definition.
        Footnote = "footnote",
        /// Text a reader never sees (white on white, hidden runs, off-page): flagged, kept apart.
        HiddenText = "hidden_text",
        /// Text read by OCR from a scanned page or a picture.
        OcrText = "ocr_text",
        /// A recital of a legal act ("(1) Whereas …").
        Recital = "recital",
        /// A lettered point of a legal paragraph ("(a) …").
        Point = "point",
        /// A numbered point under a lettered one ("(i) …").
        Subpoint = "subpoint",
        /// A picture: its caption, alt text or description.
        Image = "image",
        /// A code file's module unit (its container).
        Module = "module",
        /// A class, struct or trait.
        Class = "class",
        /// An interface.
        Interface = "interface",
        /// A type alias or enum.
        Type = "type",
        /// A free function.
        Function = "function",
        /// A method of a class.
        Method = "method",
        /// A code file's imports and leading declarations.
        Header = "header",
        /// Top-level code between symbols.
        Statement = "statement",
    }
}

impl UnitType {
    /// Whether this names a code symbol (`module`, `class`, `function`, …) rather than a run of
    /// code (`header`, `statement`) or prose.
    #[must_use]
    pub const fn is_symbol(self) -> bool {
        matches!(
            self,
            Self::Module
                | Self::Class
                | Self::Interface
                | Self::Type
                | Self::Function
                | Self::Method
        )
    }
}

/// One evidence unit.
#[derive(Debug, Clone, Serialize)]
pub struct Unit {
    /// What the unit is.
    pub unit_type: UnitType,
    /// Leaf units are covered by chunk windows; sections are containers.
    pub is_leaf: bool,
    /// The ordinal of the enclosing section unit, if any.
    pub parent: Option<usize>,
    /// The exact source span.
    pub span: Span,
    /// The indexed and displayed text.
    pub text: String,
    /// Headings from the document root down to this unit's section.
    pub heading_path: Vec<String>,
    /// A stable anchor (heading slug, JSON id).
    pub anchor: Option<String>,
    /// JSON pointer of a record.
    pub json_pointer: Option<String>,
    /// For a table row, the table's header row (kept so a row is never read without its header).
    pub table_header: Option<String>,
    /// Identifiers this unit registers.
    pub identifiers: Vec<Identifier>,
    /// Where an oversize unit may be cut (absolute byte offsets of its statements' starts, for
    /// a code symbol); empty means cut on lines.
    pub breaks: Vec<usize>,
    /// A code symbol's declaration (`def f(a, b) -> int:`), repeated in the capsule of every
    /// window cut from it.
    pub signature: Option<String>,
}

impl Unit {
    /// A leaf unit of prose (no anchor, pointer, header, breaks, signature or identifiers yet).
    #[must_use]
    pub fn leaf(
        unit_type: UnitType,
        parent: Option<usize>,
        span: Span,
        text: String,
        heading_path: Vec<String>,
    ) -> Self {
        Self {
            unit_type,
            is_leaf: true,
            parent,
            span,
            text,
            heading_path,
            anchor: None,
            json_pointer: None,
            table_header: None,
            breaks: Vec::new(),
            signature: None,
            identifiers: Vec::new(),
        }
    }

    /// A section container opened at `span` (closed later over its subtree), with its anchor
    /// and the identifiers it registers.
    #[must_use]
    pub fn section(
        parent: Option<usize>,
        span: Span,
        heading_path: Vec<String>,
        anchor: Option<String>,
        identifiers: Vec<Identifier>,
    ) -> Self {
        Self {
            is_leaf: false,
            anchor,
            identifiers,
            ..Self::leaf(UnitType::Section, parent, span, String::new(), heading_path)
        }
    }
}

/// The result of parsing one file.
#[derive(Debug, Default)]
pub struct Parsed {
    /// Units in document order.
    pub units: Vec<Unit>,
    /// Per-record problems; the file is still indexed.
    pub diagnostics: Vec<Diagnostic>,
    /// A document title (first heading), if found.
    pub title: Option<String>,
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
    /// Findings about the unit, e.g. `hidden: same colour as its background`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub flags: Vec<String>,
    /// `ocr`: the text was recognized from an image of the page; it finds the page, it is not a
    /// quotation of it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
}

/// A citation a person can check against the document: `policy.docx ¶34–36`,
/// `policy.docx table 2 rows 5–9`, `policy.docx footnotes ¶3`, `report.pdf p.12–13`,
/// `report.pdf p.3–4 table 2 rows 40–52`, `scan.pdf p.2 (OCR)`. `first` and
/// `last` are the places of a window's first and last units.
#[must_use]
pub fn document_citation(path: &str, first: &DocPlace, last: &DocPlace) -> String {
    let range = |a: i64, b: Option<i64>| match b {
        Some(b) if b > a => format!("{a}–{b}"),
        _ => a.to_string(),
    };
    if let Some(page) = first.page_start {
        let end = last.page_end.or(last.page_start).or(first.page_end);
        let pages = format!("{path} p.{}", range(page, end));
        // Recognized text names its origin: a person checks it against the page, not the words.
        let ocr = if first.origin.as_deref() == Some("ocr") || last.origin.as_deref() == Some("ocr")
        {
            " (OCR)"
        } else {
            ""
        };
        // The rows of one table: where on those pages.
        return match (first.table, first.row, last.table, last.row) {
            (Some(t), Some(a), Some(u), Some(b)) if t == u => {
                let rows = if b > a { "rows" } else { "row" };
                format!("{pages} table {t} {rows} {}{ocr}", range(a, Some(b)))
            }
            _ => format!("{pages}{ocr}"),
        };
    }
    // Text read from a picture a Word document embeds: its place, marked as OCR.
    let ocr = |p: &DocPlace| p.origin.as_deref() == Some("ocr");
    if first.part != "image" && (ocr(first) || ocr(last)) {
        let plain = |p: &DocPlace| DocPlace {
            origin: None,
            ..p.clone()
        };
        return format!(
            "{} (OCR)",
            document_citation(path, &plain(first), &plain(last))
        );
    }
    // An image file: the picture itself, or text read from it.
    if first.part == "image" {
        let ocr = [first, last]
            .iter()
            .any(|p| p.origin.as_deref() == Some("ocr"));
        return format!("{path}{}", if ocr { " (OCR)" } else { "" });
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
