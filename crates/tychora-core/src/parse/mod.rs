//! Native parsers: retained bytes in, evidence units with exact locators out.
//!
//! Every unit's `span` slices the retained bytes exactly; `text` is what gets indexed and shown.
//! For Markdown and plain text the two are the same bytes; for JSON records `text` is the record's
//! decoded values, so that keys and punctuation do not pollute the lexical channel, while the locator
//! still points at the record's raw bytes.

mod json;
mod lines;
mod markdown;
mod text;

use serde::Serialize;

use crate::error::{Diagnostic, ErrorCode};
pub use lines::LineIndex;

/// The kinds the native parsers understand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// CommonMark + GFM tables.
    Markdown,
    /// Paragraphs separated by blank lines.
    Text,
    /// One JSON document.
    Json,
    /// JSON Lines.
    Jsonl,
    /// Source code parsed with tree-sitter (the `code_file` kind).
    Code(crate::code::Language),
}

impl Kind {
    /// The kind's name as stored in the `kinds` table.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Markdown => "markdown",
            Self::Text => "text",
            Self::Json => "json",
            Self::Jsonl => "jsonl",
            Self::Code(_) => "code_file",
        }
    }

    /// Parses a kind name given by a user (`--kind`).
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        match name.to_ascii_lowercase().as_str() {
            "markdown" | "md" => Some(Self::Markdown),
            "text" | "txt" => Some(Self::Text),
            "json" => Some(Self::Json),
            "jsonl" | "ndjson" => Some(Self::Jsonl),
            _ => None,
        }
    }

    /// The kind a file name implies, if any.
    #[must_use]
    pub fn from_path(path: &str) -> Option<Self> {
        let ext = path.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase())?;
        match ext.as_str() {
            "md" | "markdown" | "mdown" | "mkd" => Some(Self::Markdown),
            "txt" | "text" => Some(Self::Text),
            "json" => Some(Self::Json),
            "jsonl" | "ndjson" => Some(Self::Jsonl),
            _ => crate::code::Language::from_path(path).map(Self::Code),
        }
    }
}

/// A kind forced by the caller (`--kind`): a fixed kind, or `code_file`, whose language still
/// comes from each file's extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KindOverride {
    /// Parse every file as this kind.
    Fixed(Kind),
    /// Parse every file as code, in the language its extension names.
    Code,
}

impl KindOverride {
    /// Parses a kind name given by a user.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        match name.to_ascii_lowercase().as_str() {
            "code" | "code_file" => Some(Self::Code),
            other => Kind::from_name(other).map(Self::Fixed),
        }
    }

    /// The kind of one file under this override.
    #[must_use]
    pub fn resolve(self, path: &str) -> Option<Kind> {
        match self {
            Self::Fixed(kind) => Some(kind),
            Self::Code => crate::code::Language::from_path(path).map(Kind::Code),
        }
    }

    /// The override's name (part of the extraction fingerprint).
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Fixed(kind) => kind.as_str(),
            Self::Code => "code_file",
        }
    }
}

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

/// One evidence unit.
#[derive(Debug, Clone, Serialize)]
pub struct Unit {
    /// `section`, `heading`, `paragraph`, `list_item`, `code_block`, `table_row`, `record`, `block_quote`, `html`, `rule`.
    pub unit_type: &'static str,
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

/// Why a whole file could not be parsed.
#[derive(Debug)]
pub struct ParseFailure {
    /// The stable code.
    pub code: ErrorCode,
    /// The message for a person.
    pub message: String,
    /// `line:col`, when known.
    pub locator: Option<String>,
}

/// Parser version; part of every extraction fingerprint.
pub const PARSER_VERSION: &str = "1";

/// Parses UTF-8 text of a given kind.
///
/// # Errors
/// A [`ParseFailure`] when the file as a whole cannot be used (malformed JSON).
pub fn parse(kind: Kind, text: &str, path: &str) -> Result<Parsed, ParseFailure> {
    let index = LineIndex::new(text);
    match kind {
        Kind::Markdown => Ok(markdown::parse(text, &index)),
        Kind::Text => Ok(text::parse(text, &index)),
        Kind::Json => json::parse_document(text, &index),
        Kind::Jsonl => Ok(json::parse_lines(text, &index, path)),
        Kind::Code(language) => Ok(crate::code::extract(language, text, path)),
    }
}

/// GitHub-style heading slug: lowercase, spaces to '-', punctuation dropped.
#[must_use]
pub fn slugify(heading: &str) -> String {
    let mut out = String::with_capacity(heading.len());
    for c in heading.trim().chars() {
        if c.is_alphanumeric() || c == '_' || c == '-' {
            out.extend(c.to_lowercase());
        } else if c.is_whitespace() {
            out.push('-');
        }
    }
    out
}
