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
