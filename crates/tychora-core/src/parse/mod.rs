//! Native parsers: retained bytes in, evidence units with exact locators out.
//!
//! Every unit's `span` slices the retained bytes exactly; `text` is what gets indexed and shown.
//! For Markdown and plain text the two are the same bytes; for JSON records `text` is the record's
//! decoded values, so that keys and punctuation do not pollute the lexical channel, while the locator
//! still points at the record's raw bytes. Binary documents (DOCX) are read from their bytes into
//! a derived text that their spans index instead ([`document`]).

pub(crate) mod csv;
pub mod document;
pub mod docx;
pub mod image;
mod json;
mod legal;
mod markdown;
pub mod preflight;
pub(crate) mod reading;
mod rfc;
mod text;

use crate::error::ErrorCode;
use crate::unit::{LineIndex, Parsed};

/// The formats the native parsers understand: how a file's bytes are read, apart from what the
/// source is (its kind, defined in packs; [`crate::config::KindDefinition`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// CommonMark + GFM tables.
    Markdown,
    /// Paragraphs separated by blank lines.
    Text,
    /// One JSON document.
    Json,
    /// JSON Lines.
    Jsonl,
    /// Comma-separated values: a header, then one row unit per record.
    Csv,
    /// Source code parsed with tree-sitter (the `code_file` kind).
    Code(crate::code::Language),
    /// A Word document (OOXML); its units index a derived text ([`document`]).
    Docx,
    /// A PDF, read by pdf.js on the TypeScript side; its units index a derived text.
    Pdf,
    /// A PNG, JPEG, WebP, GIF or TIFF file: a visual asset found by its name (and its OCR text).
    Image,
    /// Legislative text (a law, a regulation) as plain text, read for its recitals, articles,
    /// paragraphs and points ([`legal`]); chosen by a kind whose normalisation is `legal`.
    Legal,
    /// An IETF RFC in its plain-text form ([`rfc`]).
    Rfc,
}

impl Format {
    /// The format's name as stored in the `formats` table.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Markdown => "markdown",
            Self::Text => "text",
            Self::Json => "json",
            Self::Jsonl => "jsonl",
            Self::Csv => "csv",
            Self::Code(_) => "code_file",
            Self::Docx => "docx",
            Self::Pdf => "pdf",
            Self::Image => "image",
            Self::Legal => "legal",
            Self::Rfc => "rfc",
        }
    }

    /// Whether the retained bytes are a binary document whose units index a derived text.
    #[must_use]
    pub fn is_document(self) -> bool {
        matches!(self, Self::Docx | Self::Pdf | Self::Image)
    }

    /// Parses a format name given by a user (`--format`).
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        match name.to_ascii_lowercase().as_str() {
            "markdown" | "md" => Some(Self::Markdown),
            "text" | "txt" => Some(Self::Text),
            "json" => Some(Self::Json),
            "jsonl" | "ndjson" => Some(Self::Jsonl),
            "csv" => Some(Self::Csv),
            "docx" => Some(Self::Docx),
            "pdf" => Some(Self::Pdf),
            "image" => Some(Self::Image),
            "legal" => Some(Self::Legal),
            "rfc" => Some(Self::Rfc),
            _ => None,
        }
    }

    /// The format a file name implies, if any.
    #[must_use]
    pub fn from_path(path: &str) -> Option<Self> {
        let ext = path.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase())?;
        match ext.as_str() {
            "md" | "markdown" | "mdown" | "mkd" => Some(Self::Markdown),
            // `rfc6749.txt`, as the RFC Editor names them.
            "txt" if is_rfc_name(path) => Some(Self::Rfc),
            "txt" | "text" => Some(Self::Text),
            "json" => Some(Self::Json),
            "jsonl" | "ndjson" => Some(Self::Jsonl),
            "csv" => Some(Self::Csv),
            // A macro-enabled document reads the same; its macros are never opened.
            "docx" | "docm" => Some(Self::Docx),
            "pdf" => Some(Self::Pdf),
            "png" | "jpg" | "jpeg" | "gif" | "webp" | "tif" | "tiff" => Some(Self::Image),
            _ => crate::code::Language::from_path(path).map(Self::Code),
        }
    }
}

/// Moves `end` back over trailing whitespace so spans end on content.
fn trim_end(text: &str, start: usize, end: usize) -> usize {
    start + text[start..end.max(start)].trim_end().len()
}

/// Closes the section unit at `ordinal` just before `end` (the next heading of its level or
/// above): its span runs there, and its text is its leaves' (the units after it, all of which are
/// its subtree when it closes), so furniture its parser left out of them stays out.
fn close_section_over_leaves(
    units: &mut [crate::unit::Unit],
    ordinal: usize,
    text: &str,
    end: usize,
    index: &LineIndex,
) {
    let start = units[ordinal].span.byte_start;
    units[ordinal].span = index.span(start, trim_end(text, start, end));
    units[ordinal].text = units[ordinal + 1..]
        .iter()
        .filter(|u| u.is_leaf)
        .map(|u| u.text.as_str())
        .collect::<Vec<_>>()
        .join("\n");
}

/// Whether a file is named as the RFC Editor names RFCs (`rfc6749.txt`).
fn is_rfc_name(path: &str) -> bool {
    let name = path
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or(path)
        .to_ascii_lowercase();
    name.strip_prefix("rfc")
        .and_then(|rest| rest.strip_suffix(".txt"))
        .is_some_and(|n| !n.is_empty() && n.len() <= 5 && n.bytes().all(|b| b.is_ascii_digit()))
}

/// A format forced by the caller (`--format`, or a kind's normalisation): a fixed format, or `code_file`, whose language still
/// comes from each file's extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FormatOverride {
    /// Parse every file in this format.
    Fixed(Format),
    /// Parse every file as code, in the language its extension names.
    Code,
}

impl FormatOverride {
    /// Parses a format name given by a user.
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        match name.to_ascii_lowercase().as_str() {
            "code" | "code_file" => Some(Self::Code),
            other => Format::from_name(other).map(Self::Fixed),
        }
    }

    /// The format of one file under this override.
    #[must_use]
    pub fn resolve(self, path: &str) -> Option<Format> {
        match self {
            Self::Fixed(format) => Some(format),
            Self::Code => crate::code::Language::from_path(path).map(Format::Code),
        }
    }

    /// The override's name (part of the extraction fingerprint).
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Fixed(format) => format.as_str(),
            Self::Code => "code_file",
        }
    }
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

/// Parser version; part of every extraction fingerprint. 2: CSV rows; a JSON object's member
/// holding an array of objects is one unit per object (`/requirements/3`), not one for the array.
pub const PARSER_VERSION: &str = "2";

/// Parses UTF-8 text of a given format.
///
/// # Errors
/// A [`ParseFailure`] when the file as a whole cannot be used (malformed JSON).
pub fn parse(format: Format, text: &str, path: &str) -> Result<Parsed, ParseFailure> {
    let index = LineIndex::new(text);
    match format {
        Format::Markdown => Ok(markdown::parse(text, &index)),
        Format::Text => Ok(text::parse(text, &index)),
        Format::Legal => Ok(legal::parse(text, &index)),
        Format::Rfc => Ok(rfc::parse(text, &index)),
        Format::Json => json::parse_document(text, &index),
        Format::Jsonl => Ok(json::parse_lines(text, &index, path)),
        Format::Csv => Ok(csv::parse(text, &index, path)),
        Format::Code(language) => Ok(crate::code::extract(language, text, path)),
        // Documents are read from their bytes ([`document::extract`]), never as UTF-8 text.
        Format::Docx | Format::Pdf | Format::Image => Err(ParseFailure {
            code: ErrorCode::InvalidArgument,
            message: "a document format is read from its bytes, not as text".into(),
            locator: None,
        }),
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
