//! The vocabulary of reading a binary document (DOCX, PDF, an image): the derived text and its
//! locators, what a reader is given and what the PDF reader answers, and the layout the blocks go
//! into. Its own module so the readers (`document`, `image`) share it without depending on each
//! other's files.

use crate::config::Documents;
use crate::unit::UnitType;
use crate::unit::{LineIndex, Parsed, Unit};

use super::{ParseFailure, slugify};

/// A cell of a table-row unit.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct DocCell {
    /// First grid column (0-based).
    pub col: usize,
    /// Grid columns it spans.
    pub col_span: usize,
    /// A vertical merge with the cell above.
    pub continues_above: bool,
    /// Its text.
    pub text: String,
    /// PDF: its box `[x0, y0, x1, y1]` in points, origin bottom-left.
    pub bbox: Option<[f64; 4]>,
}

/// Where a unit sits in its document.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
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
    /// A PDF page (1-based).
    pub page: Option<u32>,
    /// PDF boxes `[page, x0, y0, x1, y1]` in points, origin bottom-left, unrotated.
    pub boxes: Vec<[f64; 5]>,
    /// Findings about the unit (`hidden: invisible render mode`): stored, shown, and they mark
    /// its window as possibly carrying instructions.
    pub flags: Vec<String>,
    /// `ocr` for text read from an image of the page, not from its text layer.
    pub origin: Option<String>,
    /// OCR: the recognizer's confidence in the unit's words, 0 to 1.
    pub confidence: Option<f64>,
}

pub use crate::unit::DocPlace;

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
            page_start: self.page.map(i64::from),
            page_end: self.page.map(i64::from),
            flags: self.flags.clone(),
            origin: self.origin.clone(),
        }
    }
}

pub use crate::unit::document_citation as citation;

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
    /// `docx` or `pdf`.
    pub format: &'static str,
    /// The reader and its version.
    pub extractor: String,
    /// A PDF's page count.
    pub pages: Option<u32>,
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
    /// Pictures: an image file itself, or the images a document embeds.
    pub assets: Vec<VisualAsset>,
}

/// A picture kept as evidence: its bytes (retained by sha256), where it sits, and the text that
/// makes it findable offline (alt text, caption, the words around it).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct VisualAsset {
    /// `image/png`, ….
    pub media_type: String,
    /// Pixels across, when its header was read.
    pub width: Option<u32>,
    /// Pixels down.
    pub height: Option<u32>,
    /// `image` for an image file; the DOCX part (`body`, `header1`, …) an embedded one is in.
    pub part: String,
    /// DOCX: the relationship that names it (`rId7 → media/image2.png`).
    pub relationship: Option<String>,
    /// PDF: its page (1-based).
    pub page: Option<u32>,
    /// PDF: where it is drawn, `[x0, y0, x1, y1]` in points, origin bottom-left.
    pub bbox: Option<[f64; 4]>,
    /// Its alt text (DOCX `descr`, or `title`).
    pub alt_text: Option<String>,
    /// Its caption (for an image file: the words of its name).
    pub caption: Option<String>,
    /// Text of the paragraph it sits in.
    pub context: Option<String>,
    /// The unit (index) that makes it searchable.
    pub unit: Option<usize>,
    /// The embedded bytes; `None` for an image file, which is its own asset.
    pub bytes: Option<Vec<u8>>,
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

/// The unit type of text a document draws where a reader cannot see it: its own window, flagged,
/// never part of a paragraph a person can check against the page.
pub const HIDDEN_TEXT: UnitType = UnitType::HiddenText;

/// The unit type of text recognized (OCR) from an image of a page with no text layer: derived
/// evidence with its confidence, cited as OCR of its page.
pub const OCR_TEXT: UnitType = UnitType::OcrText;

/// What reading one document may use: the workspace's bounds, the PDF reader, the file's password.
#[derive(Clone, Copy)]
pub struct ReadOptions<'a> {
    /// `[documents]` bounds.
    pub limits: &'a Documents,
    /// Reads PDFs (pdf.js, through the binding); `None` outside it.
    pub pdf: Option<&'a dyn PdfReader>,
    /// The password of this file, when it is an encrypted PDF with one configured.
    pub password: Option<&'a str>,
    /// `[ocr]`: whether and how pages with no text layer are read from their image.
    pub ocr: &'a crate::config::Ocr,
}

/// The PDF layout's version (the reader in `ts/extract/`); part of the extraction fingerprint.
pub const PDF_LAYOUT: &str = "pdf-layout@1";

/// One text block a PDF reader found, in reading order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PdfBlock {
    /// `heading`, `paragraph` or `list_item`.
    pub kind: String,
    /// Its text.
    pub text: String,
    /// A heading's level (1 = top).
    pub level: Option<u8>,
    /// Its page (1-based).
    pub page: u32,
    /// Its box `[x0, y0, x1, y1]` in PDF points, origin bottom-left.
    pub bbox: [f64; 4],
    /// Why a reader of the page cannot see it (invisible render mode, same colour as its
    /// background, outside the page, type under 1 pt), when it is drawn unseen.
    pub hidden: Option<String>,
    /// A table row's place and cells (`kind` is `table_row`).
    pub row: Option<PdfRow>,
    /// Recognized by OCR from the page's image, with this confidence (0 to 1).
    pub ocr_confidence: Option<f64>,
}

/// A row of a ruled PDF table: its logical table (a table continued on the next page keeps its
/// number), its row in it, and its cells with their boxes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PdfRow {
    /// The table in the document (1-based).
    pub table: usize,
    /// The row in the table (1-based), counted across the pages it continues on.
    pub row: usize,
    /// A header row (the table's first, or its repeat at the top of a continuation).
    pub header: bool,
    /// Its cells, left to right.
    pub cells: Vec<DocCell>,
}

/// What a PDF reader made of one file.
#[derive(Debug, Clone, Default)]
pub struct PdfDocument {
    /// The reader and its version (`pdfjs-dist@5.4.624+layout.1`).
    pub extractor: String,
    /// Pages in the file.
    pub pages: u32,
    /// Pages with no text at all (scanned images, blank pages), 1-based.
    pub pages_without_text: Vec<u32>,
    /// Pages the reader could not read (a Pages tree that loops back on itself), 1-based, with
    /// why: the rest of the file is kept.
    pub unreadable_pages: Vec<(u32, String)>,
    /// Blocks in reading order.
    pub blocks: Vec<PdfBlock>,
    /// Running headers, footers and page numbers: kept out of blocks.
    pub furniture: Vec<Furniture>,
    /// What was left out and why.
    pub diagnostics: Vec<String>,
    /// Figures: pictures the pages draw, as a person sees them.
    pub pictures: Vec<PdfPicture>,
}

/// A picture a PDF page draws (a figure, a chart, a photograph), drawn to PNG as it appears.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PdfPicture {
    /// Its page (1-based).
    pub page: u32,
    /// Where it is drawn, `[x0, y0, x1, y1]` in points, origin bottom-left.
    pub bbox: [f64; 4],
    /// The region drawn to PNG.
    pub png: Vec<u8>,
    /// The block (index in `blocks`) that captions it (`Figure 3: …`), if one does.
    pub caption: Option<usize>,
}

/// Reads PDF bytes into blocks. Implemented by the binding with pdf.js in a worker pool; the core
/// calls it from a prepare thread and blocks on it.
pub trait PdfReader: Send + Sync {
    /// Reads one file.
    ///
    /// # Errors
    /// A [`ParseFailure`] for bytes pdf.js refuses (encrypted, malformed) or a limit reached.
    fn read(&self, bytes: &[u8], request: &PdfRequest<'_>) -> Result<PdfDocument, ParseFailure>;
}

/// One PDF to read and the bounds the reader enforces on it.
#[derive(Debug, Clone, Copy)]
pub struct PdfRequest<'a> {
    /// The file's path relative to its root, for messages.
    pub path: &'a str,
    /// Its password, if it is encrypted and one is configured.
    pub password: Option<&'a str>,
    /// Pages it may have.
    pub max_pages: u32,
    /// Milliseconds one page may take.
    pub page_timeout_ms: u32,
    /// Heap (MB) of the worker that reads it.
    pub worker_memory_mb: u32,
    /// Pixels an image may have for pdf.js to decode it (its `maxImageSize`) in the passes that
    /// look at images; an image over it is left out. 1: no image is decoded at all.
    pub max_image_pixels: u64,
    /// Pages with no text layer to read by OCR, and how; `None` when `[ocr]` is off.
    pub ocr: Option<OcrRequest<'a>>,
    /// The bytes are a grey PNG of one picture (an image file) to read by OCR, not a PDF.
    pub image: bool,
    /// Find the figures the pages draw (each drawn to PNG) instead of reading the text.
    pub pictures: bool,
}

/// How the reader recognizes pages with no text layer.
#[derive(Debug, Clone, Copy)]
pub struct OcrRequest<'a> {
    /// Tesseract language codes.
    pub languages: &'a [String],
    /// Resolution pages are rendered at.
    pub dpi: u32,
    /// Milliseconds rendering and reading one page may take.
    pub page_timeout_ms: u32,
}

/// The derived text under construction: blocks separated by a blank line.
#[derive(Default)]
pub(super) struct Layout {
    text: String,
    /// (unit, byte start, byte end) before line/column spans are known.
    units: Vec<(Unit, usize, usize)>,
    locators: Vec<DocLocator>,
}

impl Layout {
    /// Units pushed so far: the index the next one gets.
    pub(super) fn count(&self) -> usize {
        self.units.len()
    }

    pub(super) fn push(
        &mut self,
        unit_type: UnitType,
        text: &str,
        parent: Option<usize>,
        heading_path: &[String],
        table_header: Option<String>,
        mut locator: DocLocator,
    ) {
        let text = clean(text);
        // Cells are shown beside the unit's text: the same control characters stay out of both.
        for cell in &mut locator.cells {
            cell.text = clean(&cell.text);
        }
        if text.is_empty() {
            return;
        }
        if !self.text.is_empty() {
            self.text.push_str("\n\n");
        }
        let start = self.text.len();
        self.text.push_str(&text);
        let end = self.text.len();
        let is_heading = unit_type == UnitType::Heading;
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

    pub(super) fn finish(self) -> (String, Vec<Unit>, Vec<DocLocator>) {
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

/// Page numbers for a diagnostic: the first 20, then an ellipsis.
pub(super) fn page_list(pages: impl ExactSizeIterator<Item = u32>) -> String {
    let more = pages.len() > 20;
    let mut list = pages
        .take(20)
        .map(|p| p.to_string())
        .collect::<Vec<_>>()
        .join(", ");
    if more {
        list.push_str(", …");
    }
    list
}

/// Block text as it goes into the derived text: control characters (other than line breaks and
/// tabs) dropped, so a hostile document cannot put terminal escapes or form feeds into evidence;
/// blank lines collapsed, so a block never looks like two; ends trimmed.
pub(super) fn clean(text: &str) -> String {
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
