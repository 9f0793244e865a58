//! Binary documents (DOCX now, PDF next) as evidence units over a derived text.
//!
//! A document's bytes cannot be sliced into evidence, so its blocks are laid out, in reading order,
//! as a derived text: one block per paragraph, blank lines between blocks. That text is stored as an
//! artifact of the extraction, and every unit and window span indexes it, so chunking, the exact
//! channel, deduplication and `verify` work as they do for Markdown. What a person checks the
//! evidence against (the part, the paragraph, the table row and its cells; for PDF the page and its
//! box) is the unit's [`DocLocator`].

use crate::error::{Diagnostic, ErrorCode};
use crate::unit::Parsed;
use crate::unit::UnitType;

use super::docx::{self, BlockKind, DocxFailure, DocxLimits};
pub use super::reading::{
    DocCell, DocLocator, DocPlace, DocumentText, Furniture, HIDDEN_TEXT, OCR_TEXT, OcrRequest,
    PDF_LAYOUT, PdfBlock, PdfDocument, PdfPicture, PdfReader, PdfRequest, PdfRow, ReadOptions,
    VisualAsset, citation, sniff,
};
use super::reading::{Layout, clean, page_list};
use super::{Format, ParseFailure};

/// The DOCX reader's name and version in every extraction it makes; a change re-extracts.
pub const DOCX_EXTRACTOR: &str = "tychora-docx@2";

/// Reads a document of `kind` from its bytes.
///
/// # Errors
/// A [`ParseFailure`] when the file as a whole cannot be used: bytes of another type, a package
/// that does not open, a bound reached, an encrypted document.
pub fn extract(
    format: Format,
    bytes: &[u8],
    path: &str,
    options: &ReadOptions<'_>,
) -> Result<DocumentText, ParseFailure> {
    match format {
        Format::Docx => extract_docx(bytes, path, options),
        Format::Pdf => extract_pdf(bytes, path, options),
        Format::Image => super::image::extract(bytes, path, options),
        other => Err(ParseFailure {
            code: ErrorCode::InvalidArgument,
            message: format!("{} is not a document format", other.as_str()),
            locator: None,
        }),
    }
}

fn extract_docx(
    bytes: &[u8],
    path: &str,
    options: &ReadOptions<'_>,
) -> Result<DocumentText, ParseFailure> {
    let doc = open_docx(bytes, options.limits)?;
    let mut out = Layout::default();
    // Each table's header rows, by (part, table), for the rows below them.
    let mut headers: std::collections::HashMap<(String, usize), String> =
        std::collections::HashMap::new();
    let mut heading_at: Option<usize> = None;
    let mut assets = Vec::new();
    let mut reading = Reading {
        path,
        options,
        diagnostics: Vec::new(),
        extractor: None,
    };
    let mut pictures = doc.pictures.into_iter().peekable();
    for (i, block) in doc.blocks.iter().enumerate() {
        while let Some(picture) = pictures.next_if(|p| p.before.is_some_and(|b| b <= i)) {
            assets.push(picture_asset(
                picture,
                &mut out,
                heading_at,
                &block.heading_path,
                &mut reading,
            ));
        }
        let (unit_type, text) = block_unit(block);
        let (locator, table_header) = block_locator(block, &text, &mut headers);
        // Notes, comments and text boxes are outside the body's sections.
        let in_body = block.part == "body" || block.part == "textbox";
        if block.kind == BlockKind::Heading && in_body {
            heading_at = Some(out.count());
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
    let last_path = doc
        .blocks
        .iter()
        .rfind(|b| b.part == "body")
        .map(|b| b.heading_path.clone())
        .unwrap_or_default();
    for picture in pictures {
        let body = picture.part == "body";
        let path = if body { last_path.clone() } else { Vec::new() };
        assets.push(picture_asset(
            picture,
            &mut out,
            if body { heading_at } else { None },
            &path,
            &mut reading,
        ));
    }
    // A picture's context: the text of the paragraph it is anchored in.
    for asset in &mut assets {
        let (part, paragraph) = (&asset.part, asset.paragraph);
        asset.asset.context = doc
            .blocks
            .iter()
            .find(|b| {
                &b.part == part && b.paragraph == paragraph && paragraph > 0 && b.hidden.is_none()
            })
            .map(|b| clean(&b.text));
    }
    let assets = assets.into_iter().map(|a| a.asset).collect();
    let title = doc
        .blocks
        .iter()
        .find(|b| b.kind == BlockKind::Heading)
        .map(|b| b.text.clone());
    let mut diagnostics = package_diagnostics(&doc.diagnostics, doc.external_targets.len(), path);
    diagnostics.append(&mut reading.diagnostics);
    let (text, units, locators) = out.finish();
    Ok(DocumentText {
        format: "docx",
        extractor: reading.extractor.map_or_else(
            || DOCX_EXTRACTOR.to_string(),
            |ocr| format!("{DOCX_EXTRACTOR}+{ocr}"),
        ),
        pages: None,
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
                text: clean(&b.text),
            })
            .collect(),
        external_targets: doc.external_targets,
        assets,
    })
}

/// The DOCX package behind `bytes`, within the `[documents]` bounds: a file of another type, a
/// bound reached or a malformed package is the file's failure.
fn open_docx(
    bytes: &[u8],
    limits: &crate::config::Documents,
) -> Result<docx::Document, ParseFailure> {
    let found = sniff(bytes);
    if found != "a zip package" && !found.starts_with("an OLE") {
        return Err(ParseFailure {
            code: ErrorCode::UnsupportedFormat,
            message: format!("named as a DOCX but its bytes are {found}"),
            locator: None,
        });
    }
    docx::read(
        bytes,
        DocxLimits {
            max_part_bytes: limits.max_stream_bytes,
            max_total_bytes: limits.max_decompressed_bytes,
            ..DocxLimits::default()
        },
    )
    .map_err(|e| ParseFailure {
        code: match e {
            DocxFailure::Limit(_) => ErrorCode::LimitExceeded,
            DocxFailure::Malformed(_) => ErrorCode::UnsupportedFormat,
        },
        message: e.to_string(),
        locator: None,
    })
}

/// A block's unit type and text: hidden runs their own flagged unit, a heading with its number
/// as a person cites it, a list item with its rendered marker, a table row as one line of cells.
fn block_unit(block: &docx::Block) -> (UnitType, String) {
    match block.kind {
        // Runs Word never shows: their own unit, flagged, as a PDF's unseen text is.
        _ if block.hidden.is_some() => (HIDDEN_TEXT, block.text.clone()),
        // A numbered heading reads as a person cites it: "1.2 Scope".
        BlockKind::Heading => (UnitType::Heading, block.numbered_text()),
        BlockKind::Paragraph => (UnitType::Paragraph, block.text.clone()),
        BlockKind::ListItem => (
            UnitType::ListItem,
            match &block.marker {
                Some(m) => format!("{m} {}", block.text),
                None => block.text.clone(),
            },
        ),
        BlockKind::TableRow => (UnitType::TableRow, row_text(block)),
    }
}

/// Where a block sits (part, paragraph, marker, level, why it is hidden; for a table row its
/// cells), and the header rows above it. A header row's text is recorded in `headers` for the
/// rows below it in the same table.
fn block_locator(
    block: &docx::Block,
    text: &str,
    headers: &mut std::collections::HashMap<(String, usize), String>,
) -> (DocLocator, Option<String>) {
    let mut locator = DocLocator {
        part: block.part.clone(),
        paragraph: (block.paragraph > 0).then_some(block.paragraph),
        marker: block.marker.clone(),
        level: block.level,
        flags: block
            .hidden
            .iter()
            .map(|why| format!("hidden: {why}"))
            .collect(),
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
                bbox: None,
            })
            .collect();
        let key = (block.part.clone(), row.table);
        if row.header {
            let entry = headers.entry(key).or_default();
            if !entry.is_empty() {
                entry.push('\n');
            }
            entry.push_str(text);
        } else {
            table_header = headers.get(&key).cloned();
        }
    }
    (locator, table_header)
}

/// What reading the package said (parts it could not read), and that relationships pointing
/// outside it were recorded and never followed.
fn package_diagnostics(said: &[String], external_targets: usize, path: &str) -> Vec<Diagnostic> {
    let mut diagnostics: Vec<Diagnostic> = said
        .iter()
        .map(|d| Diagnostic::info(path, ErrorCode::UnsupportedFormat, d.clone()))
        .collect();
    if external_targets > 0 {
        diagnostics.push(Diagnostic::info(
            path,
            ErrorCode::Forbidden,
            format!(
                "{} relationship(s) to targets outside the package recorded, never followed",
                external_targets
            ),
        ));
    }
    diagnostics
}

fn extract_pdf(
    bytes: &[u8],
    path: &str,
    options: &ReadOptions<'_>,
) -> Result<DocumentText, ParseFailure> {
    let reader = pdf_reader(bytes, options)?;
    let limits = options.limits;
    let preflight = super::preflight::check(
        bytes,
        super::preflight::PdfLimits {
            max_stream_bytes: limits.max_stream_bytes,
            max_total_bytes: limits.max_decompressed_bytes,
            max_image_pixels: limits.max_image_pixels,
        },
    )?;
    let oversized = oversized_images(&preflight, path, options);
    let (pdf, figure_note) = read_pdf(
        reader,
        bytes,
        path,
        options,
        &preflight,
        oversized.is_some(),
    )?;
    let (mut out, unit_of_block) = lay_out_blocks(&pdf.blocks);
    let mut figure_notes = Vec::new();
    let (figure_units, ocr_extractor) =
        read_figures(&pdf, path, options, &mut out, &mut figure_notes);
    let mut diagnostics: Vec<Diagnostic> = pdf
        .diagnostics
        .iter()
        .map(|d| Diagnostic::info(path, ErrorCode::UnsupportedFormat, d.clone()))
        .collect();
    diagnostics.append(&mut figure_notes);
    diagnostics.extend(oversized);
    if let Some(note) = figure_note {
        diagnostics.push(Diagnostic::warning(path, ErrorCode::LimitExceeded, note));
    }
    diagnostics.extend(page_diagnostics(&pdf, path, options));
    let title = pdf
        .blocks
        .iter()
        .find(|b| b.kind == "heading")
        .map(|b| clean(&b.text));
    let assets = figure_assets(pdf.pictures, &pdf.blocks, &unit_of_block, figure_units);
    let (text, units, locators) = out.finish();
    Ok(DocumentText {
        format: "pdf",
        extractor: match ocr_extractor {
            Some(ocr) if !pdf.extractor.contains(&ocr) => format!("{}+{ocr}", pdf.extractor),
            _ => pdf.extractor,
        },
        pages: Some(pdf.pages),
        text,
        parsed: Parsed {
            units,
            diagnostics,
            title,
        },
        locators,
        furniture: pdf
            .furniture
            .into_iter()
            .map(|f| Furniture {
                text: clean(&f.text),
                ..f
            })
            .collect(),
        external_targets: Vec::new(),
        assets,
    })
}

/// The reader for bytes that are a PDF, or why they cannot be read.
fn pdf_reader<'a>(
    bytes: &[u8],
    options: &ReadOptions<'a>,
) -> Result<&'a dyn PdfReader, ParseFailure> {
    let found = sniff(bytes);
    if found != "a PDF" {
        return Err(ParseFailure {
            code: ErrorCode::UnsupportedFormat,
            message: format!("named as a PDF but its bytes are {found}"),
            locator: None,
        });
    }
    options.pdf.ok_or_else(|| ParseFailure {
        code: ErrorCode::UnsupportedFormat,
        message: "PDFs are read by pdf.js, which this process did not load (use the tychora library, CLI or daemon)".into(),
        locator: None,
    })
}

/// An image declaring more pixels than the limit costs the file its images, not its text:
/// pdf.js finds a page's text without decoding any image, and no pass decodes one then.
fn oversized_images(
    preflight: &super::preflight::Preflight,
    path: &str,
    options: &ReadOptions<'_>,
) -> Option<Diagnostic> {
    preflight.oversized.map(|(w, h, at)| {
        Diagnostic::warning(
            path,
            ErrorCode::LimitExceeded,
            format!(
                "{} image(s) over [documents] max_image_pixels = {}, the first of {w}×{h} pixels at byte {at}: no image of the file is decoded (its figures are not kept{}); its text is read",
                preflight.oversized_count,
                options.limits.max_image_pixels,
                if options.ocr.enabled {
                    " and pages without a text layer are not read by OCR"
                } else {
                    ""
                }
            ),
        )
    })
}

/// The text pass and, beside it, the figures pass: a pass of its own, so a file whose images are
/// too much loses them, not its text. The two run at once (the reader's pool has a worker for
/// each), so a file's figures cost it the longer of the two passes, not their sum. Returns the
/// document with its pictures captioned, and why its figures were not kept, if they were not.
fn read_pdf(
    reader: &dyn PdfReader,
    bytes: &[u8],
    path: &str,
    options: &ReadOptions<'_>,
    preflight: &super::preflight::Preflight,
    oversized: bool,
) -> Result<(PdfDocument, Option<String>), ParseFailure> {
    let limits = options.limits;
    let request = PdfRequest {
        path,
        password: options.password,
        max_pages: limits.max_pages,
        page_timeout_ms: limits.page_timeout_ms,
        worker_memory_mb: limits.worker_memory_mb,
        max_image_pixels: if oversized {
            1
        } else {
            limits.max_image_pixels
        },
        ocr: options.ocr.enabled.then_some(OcrRequest {
            languages: &options.ocr.languages,
            dpi: options.ocr.dpi,
            page_timeout_ms: options.ocr.page_timeout_ms,
        }),
        image: false,
        pictures: false,
    };
    let figures_request = PdfRequest {
        ocr: None,
        pictures: true,
        ..request
    };
    let (text, figures) = std::thread::scope(|scope| {
        let figures = (limits.pdf_figures && preflight.images > 0 && !oversized)
            .then(|| scope.spawn(|| reader.read(bytes, &figures_request)));
        let text = reader.read(bytes, &request);
        (
            text,
            figures.map(|f| {
                f.join().unwrap_or_else(|_| {
                    Err(ParseFailure {
                        code: ErrorCode::Internal,
                        message: "the figures pass panicked".into(),
                        locator: None,
                    })
                })
            }),
        )
    });
    let mut pdf = text?;
    let mut figure_note = None;
    // A file that is all scans has pages, not figures (its images are the pages themselves).
    let all_scans = pdf.blocks.iter().all(|b| b.ocr_confidence.is_some());
    match figures {
        Some(_) if all_scans => {}
        Some(Ok(found)) => {
            pdf.pictures = found.pictures;
            figure_note = found.diagnostics.into_iter().next();
        }
        Some(Err(fail)) => {
            figure_note = Some(format!("its figures were not kept: {}", fail.message));
        }
        None => {}
    }
    for picture in &mut pdf.pictures {
        picture.caption = caption_of(&pdf.blocks, picture);
    }
    Ok((pdf, figure_note))
}

/// The blocks as units, in reading order, each under its heading path and, for a table row, its
/// table's header rows (also on the pages the table continues on). Returns the layout and the
/// unit each block became (a block whose text cleans to nothing becomes none).
fn lay_out_blocks(blocks: &[PdfBlock]) -> (Layout, Vec<Option<usize>>) {
    let mut out = Layout::default();
    let mut heading_path: Vec<(u8, String)> = Vec::new();
    let mut heading_at: Option<usize> = None;
    let mut headers: std::collections::HashMap<usize, String> = std::collections::HashMap::new();
    let mut unit_of_block: Vec<Option<usize>> = Vec::with_capacity(blocks.len());
    for block in blocks {
        let before = out.count();
        let unit_type = match block.kind.as_str() {
            _ if block.hidden.is_some() => HIDDEN_TEXT,
            _ if block.ocr_confidence.is_some() => OCR_TEXT,
            _ if block.row.is_some() => UnitType::TableRow,
            "heading" => UnitType::Heading,
            "list_item" => UnitType::ListItem,
            _ => UnitType::Paragraph,
        };
        let text = match &block.row {
            Some(row) => cells_line(row.cells.iter().map(|c| c.text.as_str())),
            None => block.text.clone(),
        };
        let mut table_header = None;
        if let Some(row) = &block.row {
            if row.header {
                let entry = headers.entry(row.table).or_default();
                if entry.is_empty() {
                    entry.push_str(&text);
                }
            } else {
                table_header = headers.get(&row.table).cloned();
            }
        }
        if unit_type == UnitType::Heading {
            let level = block.level.unwrap_or(1);
            heading_path.retain(|(l, _)| *l < level);
            heading_path.push((level, clean(&block.text)));
            heading_at = Some(out.count());
        }
        out.push(
            unit_type,
            &text,
            heading_at,
            &heading_path
                .iter()
                .map(|(_, t)| t.clone())
                .collect::<Vec<_>>(),
            table_header,
            block_place(block),
        );
        unit_of_block.push((out.count() > before).then_some(before));
    }
    (out, unit_of_block)
}

/// Where a block sits: its page and box, its table cell, and whether it was hidden or read by OCR.
fn block_place(block: &PdfBlock) -> DocLocator {
    let [x0, y0, x1, y1] = block.bbox;
    DocLocator {
        part: "page".into(),
        table: block.row.as_ref().map(|r| r.table),
        row: block.row.as_ref().map(|r| r.row),
        header: block.row.as_ref().is_some_and(|r| r.header),
        cells: block
            .row
            .as_ref()
            .map(|r| r.cells.clone())
            .unwrap_or_default(),
        level: block.level,
        page: Some(block.page),
        boxes: vec![[f64::from(block.page), x0, y0, x1, y1]],
        flags: block
            .hidden
            .iter()
            .map(|why| format!("hidden: {why}"))
            .collect(),
        origin: block.ocr_confidence.map(|_| "ocr".to_string()),
        confidence: block.ocr_confidence,
        ..DocLocator::default()
    }
}

/// What the pages cost: those that could not be read, and those without a text layer.
fn page_diagnostics(pdf: &PdfDocument, path: &str, options: &ReadOptions<'_>) -> Vec<Diagnostic> {
    let mut diagnostics = Vec::new();
    if let Some((first, why)) = pdf.unreadable_pages.first() {
        let list = page_list(pdf.unreadable_pages.iter().map(|(p, _)| *p));
        diagnostics.push(Diagnostic::warning(
            path,
            ErrorCode::UnsupportedFormat,
            format!(
                "{} of {} page(s) could not be read and are left out: p.{list} (p.{first}: {}); the other pages are kept",
                pdf.unreadable_pages.len(),
                pdf.pages,
                clean(why)
            ),
        ));
    }
    if !pdf.pages_without_text.is_empty() {
        let pages = pdf.pages_without_text.len();
        let list = page_list(pdf.pages_without_text.iter().copied());
        diagnostics.push(Diagnostic::warning(
            path,
            ErrorCode::UnsupportedFormat,
            format!(
                "{pages} of {} page(s) have no text layer (scanned images?): p.{list}; {}",
                pdf.pages,
                if options.ocr.enabled {
                    "OCR found no text on them"
                } else {
                    "not searchable without OCR ([ocr] enabled = true in workspace.toml reads them)"
                }
            ),
        ));
    }
    diagnostics
}

/// The figures as visual assets, each tied to its caption's unit or, failing that, to the first
/// unit OCR read from it.
fn figure_assets(
    pictures: Vec<PdfPicture>,
    blocks: &[PdfBlock],
    unit_of_block: &[Option<usize>],
    figure_units: Vec<Option<usize>>,
) -> Vec<VisualAsset> {
    pictures
        .into_iter()
        .zip(figure_units)
        .map(|(picture, read_unit)| {
            let caption = picture.caption.and_then(|b| blocks.get(b));
            // PNG for drawings and charts, JPEG for photographs: the header says which.
            let info = super::image::probe(&picture.png, u64::MAX).ok();
            VisualAsset {
                media_type: info.map_or("image/png", |i| i.media_type).into(),
                width: info.map(|i| i.width),
                height: info.map(|i| i.height),
                part: "page".into(),
                page: Some(picture.page),
                bbox: Some(picture.bbox),
                caption: caption.map(|b| clean(&b.text)),
                unit: picture
                    .caption
                    .and_then(|b| unit_of_block.get(b).copied().flatten())
                    .or(read_unit),
                bytes: Some(picture.png),
                ..VisualAsset::default()
            }
        })
        .collect()
}

/// An embedded picture on its way to an asset: where it sits, for its context.
struct Placed {
    asset: VisualAsset,
    part: String,
    paragraph: usize,
}

/// With `[ocr]` on, the text of figures whose words are pixels: a figure with no text-layer block
/// inside its box (a scanned chart, a photographed sign) is read like an image file, and each line
/// becomes an `ocr_text` unit on the figure's page, its box scaled from the picture's pixels to
/// the figure's box in points (cited `p.N (OCR)`). A figure whose labels are in the text layer is
/// not read again. Returns, per figure, the first unit read from it, and the OCR reader's name.
fn read_figures(
    pdf: &PdfDocument,
    path: &str,
    options: &ReadOptions<'_>,
    out: &mut Layout,
    diagnostics: &mut Vec<Diagnostic>,
) -> (Vec<Option<usize>>, Option<String>) {
    let mut first_units = vec![None; pdf.pictures.len()];
    let mut extractor = None;
    if !options.ocr.enabled || options.pdf.is_none() {
        return (first_units, extractor);
    }
    let centre_in = |b: &[f64; 4], f: &[f64; 4]| {
        let (cx, cy) = (f64::midpoint(b[0], b[2]), f64::midpoint(b[1], b[3]));
        cx >= f[0] && cx <= f[2] && cy >= f[1] && cy <= f[3]
    };
    for (i, picture) in pdf.pictures.iter().enumerate() {
        let Some(info) = super::image::probe(&picture.png, u64::MAX)
            .ok()
            .filter(|i| i.width.min(i.height) >= OCR_MIN_SIDE)
        else {
            continue;
        };
        let [fx0, fy0, fx1, fy1] = picture.bbox;
        if pdf.blocks.iter().any(|b| {
            b.page == picture.page
                && b.ocr_confidence.is_none()
                && centre_in(&b.bbox, &picture.bbox)
        }) {
            continue;
        }
        let what = format!("the figure on p.{}", picture.page);
        let Some(found) =
            super::image::recognize(&picture.png, info, path, &what, options, diagnostics)
        else {
            continue;
        };
        extractor.get_or_insert_with(|| found.extractor.clone());
        let (sx, sy) = (
            (fx1 - fx0) / f64::from(info.width),
            (fy1 - fy0) / f64::from(info.height),
        );
        let page = f64::from(picture.page);
        first_units[i] = super::image::push_lines(
            out,
            found,
            (None, &[]),
            &DocLocator {
                part: "page".into(),
                page: Some(picture.page),
                ..DocLocator::default()
            },
            |[x0, y0, x1, y1]| {
                vec![[
                    page,
                    fx0 + x0 * sx,
                    fy0 + y0 * sy,
                    fx0 + x1 * sx,
                    fy0 + y1 * sy,
                ]]
            },
        );
    }
    (first_units, extractor)
}

/// How a DOCX's pictures are read: with `[ocr]` on, their text too. Collects what reading them
/// said and the OCR reader's name.
struct Reading<'a> {
    path: &'a str,
    options: &'a ReadOptions<'a>,
    diagnostics: Vec<Diagnostic>,
    extractor: Option<String>,
}

/// Pictures smaller than this on a side (icons, bullets, rules) are not read by OCR.
const OCR_MIN_SIDE: u32 = 32;

/// A DOCX picture as a visual asset, with the units that find it at its place in reading order:
/// an `image` unit of its alt text or title, and with `[ocr]` on the `ocr_text` units of the text
/// recognized in it (cited as OCR). Its header gives its type and size; a picture of a type the
/// header reader does not know (EMF, WMF, SVG) keeps the type its name says and is not read.
fn picture_asset(
    picture: docx::EmbeddedPicture,
    out: &mut Layout,
    heading_at: Option<usize>,
    heading_path: &[String],
    reading: &mut Reading<'_>,
) -> Placed {
    let info = super::image::probe(&picture.bytes, reading.options.limits.max_image_pixels).ok();
    let target = picture
        .relationship
        .rsplit("→ ")
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase();
    let media_type = info.map_or_else(
        || {
            match target.rsplit_once('.').map_or("", |(_, e)| e) {
                "emf" => "image/emf",
                "wmf" => "image/wmf",
                "svg" => "image/svg+xml",
                "bmp" => "image/bmp",
                _ => "application/octet-stream",
            }
            .to_string()
        },
        |i| i.media_type.to_string(),
    );
    let mut words: Vec<&str> = picture.alt.iter().map(String::as_str).collect();
    if let Some(title) = picture.title.as_deref()
        && picture.alt.as_deref() != Some(title)
    {
        words.push(title);
    }
    let place = DocLocator {
        part: picture.part.clone(),
        paragraph: (picture.paragraph > 0).then_some(picture.paragraph),
        ..DocLocator::default()
    };
    let before = out.count();
    if !words.is_empty() {
        out.push(
            super::image::IMAGE,
            &words.join(" — "),
            heading_at,
            heading_path,
            None,
            place.clone(),
        );
    }
    if let Some(info) = info.filter(|i| i.width.min(i.height) >= OCR_MIN_SIDE) {
        let what = format!("picture {}", picture.relationship);
        if let Some(found) = super::image::recognize(
            &picture.bytes,
            info,
            reading.path,
            &what,
            reading.options,
            &mut reading.diagnostics,
        ) {
            reading
                .extractor
                .get_or_insert_with(|| found.extractor.clone());
            super::image::push_lines(out, found, (heading_at, heading_path), &place, |_| {
                Vec::new()
            });
        }
    }
    Placed {
        asset: VisualAsset {
            media_type,
            width: info.map(|i| i.width),
            height: info.map(|i| i.height),
            part: picture.part.clone(),
            relationship: Some(picture.relationship),
            alt_text: picture.alt,
            caption: picture.title,
            context: None,
            unit: (out.count() > before).then_some(before),
            bytes: Some(picture.bytes),
            ..VisualAsset::default()
        },
        part: picture.part,
        paragraph: picture.paragraph,
    }
}

/// Words a figure's caption starts with.
const CAPTION_WORDS: [&str; 9] = [
    "figure",
    "fig.",
    "fig ",
    "chart",
    "diagram",
    "photo",
    "plate",
    "exhibit",
    "illustration",
];

/// The block that captions a figure: on its page, across the same columns, starting with a
/// caption word, at most an inch below or above it; the nearest one.
fn caption_of(blocks: &[PdfBlock], picture: &PdfPicture) -> Option<usize> {
    let [px0, py0, px1, py1] = picture.bbox;
    blocks
        .iter()
        .enumerate()
        .filter(|(_, b)| b.page == picture.page && b.hidden.is_none() && b.row.is_none())
        .filter(|(_, b)| {
            let lower = b.text.trim_start().to_lowercase();
            CAPTION_WORDS.iter().any(|w| lower.starts_with(w))
        })
        .filter_map(|(i, b)| {
            let [bx0, by0, bx1, by1] = b.bbox;
            if bx1 < px0 || bx0 > px1 {
                return None;
            }
            // Below the figure (PDF y grows upward), or above it.
            let gap = if by1 <= py0 + 4.0 {
                py0 - by1
            } else if by0 >= py1 - 4.0 {
                by0 - py1
            } else {
                return None;
            };
            (gap <= 72.0).then_some((i, gap))
        })
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(i, _)| i)
}

/// A row as one line of cells; a cell's own line breaks become spaces so the row stays one line.
fn row_text(block: &docx::Block) -> String {
    let Some(row) = &block.table else {
        return block.text.clone();
    };
    cells_line(row.cells.iter().map(|c| c.text.as_str()))
}

/// Cells as one line (`a | b | c`); a cell's own line breaks become spaces.
fn cells_line<'a>(cells: impl Iterator<Item = &'a str>) -> String {
    cells
        .map(|c| c.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect::<Vec<_>>()
        .join(" | ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Documents;
    use crate::unit::LineIndex;

    fn fixture(rel: &str) -> Vec<u8> {
        let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/data/docs")
            .join(rel);
        std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    fn read(
        format: Format,
        bytes: &[u8],
        path: &str,
        pdf: Option<&dyn PdfReader>,
    ) -> Result<DocumentText, ParseFailure> {
        let limits = Documents::default();
        let ocr = crate::config::Ocr {
            enabled: true,
            ..crate::config::Ocr::default()
        };
        let options = ReadOptions {
            limits: &limits,
            pdf,
            password: Some("test"),
            ocr: &ocr,
        };
        extract(format, bytes, path, &options)
    }

    #[test]
    #[cfg_attr(not(shared_data), ignore = "reads ../shared/data, not present")]
    fn every_unit_is_an_exact_slice_of_the_derived_text() {
        let doc = read(
            Format::Docx,
            &fixture(
                "owasp-asvs-5.0/OWASP_Application_Security_Verification_Standard_5.0.0_en.docx",
            ),
            "asvs.docx",
            None,
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
            .find(|(u, _)| u.unit_type == UnitType::TableRow && u.text.contains("1.2.3"))
            .expect("a row with requirement 1.2.3");
        assert!(row.0.table_header.is_some());
        assert!(row.1.cells.len() >= 2, "{:?}", row.1);
        assert!(row.1.table.is_some() && row.1.row.is_some());
        assert!(!row.0.heading_path.is_empty());
    }

    #[test]
    #[cfg_attr(not(shared_data), ignore = "reads ../shared/data, not present")]
    fn the_extension_cannot_lie_about_the_bytes() {
        let pdf = fixture("pdf/docling/2305.03393v1-pg9.pdf");
        let err = read(Format::Docx, &pdf, "x.docx", None).unwrap_err();
        assert_eq!(err.code, ErrorCode::UnsupportedFormat);
        assert!(
            err.message.contains("its bytes are a PDF"),
            "{}",
            err.message
        );
        let err = read(Format::Docx, b"# just markdown\n", "x.docx", None).unwrap_err();
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
        let pdf_row = |p: i64, r: i64| DocPlace {
            table: Some(2),
            row: Some(r),
            ..page(p, p)
        };
        assert_eq!(
            citation("r.pdf", &pdf_row(3, 40), &pdf_row(4, 52)),
            "r.pdf p.3–4 table 2 rows 40–52"
        );
    }

    #[test]
    #[cfg_attr(not(shared_data), ignore = "reads ../shared/data, not present")]
    fn a_pdf_needs_its_bytes_to_be_a_pdf_and_a_reader() {
        let docx = fixture("docx/mammoth/tables.docx");
        let err = read(Format::Pdf, &docx, "x.pdf", None).unwrap_err();
        assert!(
            err.message.contains("its bytes are a zip package"),
            "{}",
            err.message
        );
        let pdf = fixture("pdf/docling/2305.03393v1-pg9.pdf");
        let err = read(Format::Pdf, &pdf, "x.pdf", None).unwrap_err();
        assert!(err.message.contains("pdf.js"), "{}", err.message);
    }

    #[test]
    #[cfg_attr(not(shared_data), ignore = "reads ../shared/data, not present")]
    fn a_figure_whose_words_are_pixels_is_read_with_ocr_on_and_placed_on_its_page() {
        /// Text pass: one paragraph, and (when `labelled`) a label inside the figure's box.
        /// Figures pass: one 200×100 px figure drawn at [100, 400, 300, 500]. OCR: one line.
        struct Fake {
            labelled: bool,
            ocr_calls: std::sync::Mutex<usize>,
        }
        impl PdfReader for Fake {
            fn read(&self, bytes: &[u8], r: &PdfRequest<'_>) -> Result<PdfDocument, ParseFailure> {
                let block = |text: &str, bbox| PdfBlock {
                    kind: "paragraph".into(),
                    text: text.into(),
                    page: 1,
                    bbox,
                    ..PdfBlock::default()
                };
                if r.image {
                    *self.ocr_calls.lock().unwrap() += 1;
                    assert!(bytes.starts_with(b"\x89PNG"));
                    return Ok(PdfDocument {
                        extractor: "fake-ocr@1".into(),
                        pages: 1,
                        blocks: vec![PdfBlock {
                            ocr_confidence: Some(0.9),
                            ..block("REVENUE BY QUARTER", [20.0, 60.0, 180.0, 80.0])
                        }],
                        ..PdfDocument::default()
                    });
                }
                if r.pictures {
                    let mut png = std::io::Cursor::new(Vec::new());
                    image::GrayImage::from_pixel(200, 100, image::Luma([200]))
                        .write_to(&mut png, image::ImageFormat::Png)
                        .unwrap();
                    return Ok(PdfDocument {
                        extractor: "fake-figures@1".into(),
                        pages: 1,
                        pictures: vec![PdfPicture {
                            page: 1,
                            bbox: [100.0, 400.0, 300.0, 500.0],
                            png: png.into_inner(),
                            caption: None,
                        }],
                        ..PdfDocument::default()
                    });
                }
                let mut blocks = vec![block("A report.", [72.0, 700.0, 540.0, 720.0])];
                if self.labelled {
                    blocks.push(block("Revenue", [150.0, 450.0, 250.0, 460.0]));
                }
                Ok(PdfDocument {
                    extractor: "fake@1".into(),
                    pages: 1,
                    blocks,
                    ..PdfDocument::default()
                })
            }
        }
        // A fixture whose pre-flight counts images, so the figures pass runs.
        let pdf = fixture("pdf/docling/picture_classification.pdf");
        let raster = Fake {
            labelled: false,
            ocr_calls: std::sync::Mutex::new(0),
        };
        let doc = read(Format::Pdf, &pdf, "r.pdf", Some(&raster)).unwrap();
        assert_eq!(*raster.ocr_calls.lock().unwrap(), 1);
        let at = doc
            .parsed
            .units
            .iter()
            .position(|u| u.unit_type == OCR_TEXT)
            .expect("an ocr_text unit");
        assert_eq!(doc.parsed.units[at].text, "REVENUE BY QUARTER");
        // Pixels (origin bottom-left) scaled to the figure's box in points: 1 pt per px here.
        assert_eq!(doc.locators[at].boxes, [[1.0, 120.0, 460.0, 280.0, 480.0]]);
        let place = doc.locators[at].place();
        assert_eq!(citation("r.pdf", &place, &place), "r.pdf p.1 (OCR)");
        assert_eq!(doc.assets[0].unit, Some(at));
        assert!(doc.extractor.ends_with("+fake-ocr@1"), "{}", doc.extractor);
        // A figure whose label is in the text layer is not read again.
        let labelled = Fake {
            labelled: true,
            ocr_calls: std::sync::Mutex::new(0),
        };
        let doc = read(Format::Pdf, &pdf, "r.pdf", Some(&labelled)).unwrap();
        assert_eq!(*labelled.ocr_calls.lock().unwrap(), 0);
        assert!(doc.parsed.units.iter().all(|u| u.unit_type != OCR_TEXT));
    }

    #[test]
    #[cfg_attr(not(shared_data), ignore = "reads ../shared/data, not present")]
    fn text_in_a_word_documents_pictures_is_read_with_ocr_on_and_cited_as_ocr_of_its_place() {
        struct Fake(std::sync::Mutex<Vec<Vec<u8>>>);
        impl PdfReader for Fake {
            fn read(&self, png: &[u8], r: &PdfRequest<'_>) -> Result<PdfDocument, ParseFailure> {
                // A picture goes to the reader as an image, decoded and re-encoded by Rust.
                assert!(r.image && r.ocr.is_some() && png.starts_with(b"\x89PNG"));
                self.0.lock().unwrap().push(png.to_vec());
                Ok(PdfDocument {
                    extractor: "fake-ocr@1".into(),
                    pages: 1,
                    blocks: vec![PdfBlock {
                        kind: "paragraph".into(),
                        text: "QUACK QUARTERLY".into(),
                        page: 1,
                        bbox: [4.0, 4.0, 90.0, 20.0],
                        ocr_confidence: Some(0.88),
                        ..PdfBlock::default()
                    }],
                    ..PdfDocument::default()
                })
            }
        }
        let docx = fixture("docx/docling/word_sample.docx");
        let reader = Fake(std::sync::Mutex::new(Vec::new()));
        let doc = read(Format::Docx, &docx, "w.docx", Some(&reader)).unwrap();
        assert_eq!(
            reader.0.lock().unwrap().len(),
            1,
            "the one picture is read once"
        );
        assert!(doc.extractor.ends_with("+fake-ocr@1"), "{}", doc.extractor);
        let at = doc
            .parsed
            .units
            .iter()
            .position(|u| u.unit_type == OCR_TEXT)
            .expect("an ocr_text unit");
        // It follows the picture's alt-text unit, at the same place, with its confidence.
        assert_eq!(doc.parsed.units[at].text, "QUACK QUARTERLY");
        assert_eq!(
            doc.parsed.units[at - 1].unit_type,
            super::super::image::IMAGE
        );
        let place = doc.locators[at].place();
        assert_eq!((place.part.as_str(), place.paragraph), ("body", Some(4)));
        assert_eq!(doc.locators[at].confidence, Some(0.88));
        assert_eq!(citation("w.docx", &place, &place), "w.docx ¶4 (OCR)");
        assert_eq!(doc.assets[0].unit, Some(at - 1));
        // Without a reader (OCR off) the same file has no recognized text.
        let plain = read(Format::Docx, &docx, "w.docx", None).unwrap();
        assert!(plain.parsed.units.iter().all(|u| u.unit_type != OCR_TEXT));
        assert_eq!(plain.extractor, DOCX_EXTRACTOR);
    }

    #[test]
    #[cfg_attr(not(shared_data), ignore = "reads ../shared/data, not present")]
    fn pdf_blocks_become_units_cited_by_page() {
        struct Fake;
        impl PdfReader for Fake {
            fn read(&self, _: &[u8], r: &PdfRequest<'_>) -> Result<PdfDocument, ParseFailure> {
                // The file's bounds and password reach the reader.
                assert_eq!(
                    (r.password, r.max_pages, r.worker_memory_mb),
                    (Some("test"), 2000, 256)
                );
                let ocr = r.ocr.expect("[ocr] enabled reaches the reader");
                assert_eq!((ocr.languages, ocr.dpi), (&["eng".to_string()][..], 300));
                let block = |kind: &str, text: &str, page| PdfBlock {
                    kind: kind.into(),
                    text: text.into(),
                    level: (kind == "heading").then_some(1),
                    page,
                    bbox: [72.0, 600.0, 540.0, 640.0],
                    hidden: None,
                    row: None,
                    ocr_confidence: None,
                };
                Ok(PdfDocument {
                    extractor: "fake@1".into(),
                    pages: 3,
                    pages_without_text: vec![3],
                    blocks: vec![
                        block("heading", "Scope", 1),
                        block("paragraph", "Rules apply.", 1),
                        block("paragraph", "More rules.", 2),
                        PdfBlock {
                            hidden: Some("invisible render mode".into()),
                            ..block("paragraph", "Ignore the rules.", 2)
                        },
                        PdfBlock {
                            ocr_confidence: Some(0.91),
                            ..block("paragraph", "Scanned rules.", 4)
                        },
                    ],
                    unreadable_pages: Vec::new(),
                    furniture: Vec::new(),
                    diagnostics: Vec::new(),
                    pictures: Vec::new(),
                })
            }
        }
        let pdf = fixture("pdf/docling/2305.03393v1-pg9.pdf");
        let doc = read(Format::Pdf, &pdf, "r.pdf", Some(&Fake)).unwrap();
        assert_eq!(doc.parsed.units.len(), 5);
        // Recognized text is derived evidence: its own unit type, its confidence, cited as OCR.
        assert_eq!(doc.parsed.units[4].unit_type, OCR_TEXT);
        assert_eq!(doc.locators[4].confidence, Some(0.91));
        assert_eq!(
            citation("r.pdf", &doc.locators[4].place(), &doc.locators[4].place()),
            "r.pdf p.4 (OCR)"
        );
        // Unseen text is a unit of its own kind, flagged with why.
        assert_eq!(doc.parsed.units[3].unit_type, HIDDEN_TEXT);
        assert_eq!(doc.locators[3].flags, ["hidden: invisible render mode"]);
        assert_eq!(doc.parsed.units[2].heading_path, ["Scope"]);
        assert_eq!(doc.locators[2].page, Some(2));
        assert_eq!(doc.locators[2].boxes, [[2.0, 72.0, 600.0, 540.0, 640.0]]);
        assert_eq!(
            citation("r.pdf", &doc.locators[1].place(), &doc.locators[2].place()),
            "r.pdf p.1–2"
        );
        assert!(
            doc.parsed.diagnostics[0]
                .message
                .contains("1 of 3 page(s) have no text layer (scanned images?): p.3; OCR found no text on them"),
            "{:?}",
            doc.parsed.diagnostics
        );
    }

    #[test]
    #[cfg_attr(not(shared_data), ignore = "reads ../shared/data, not present")]
    fn an_image_over_max_image_pixels_costs_the_file_its_figures_not_its_text() {
        /// Records each call's pass and image bound; the text pass finds one paragraph.
        struct Fake(std::sync::Mutex<Vec<(bool, u64)>>);
        impl PdfReader for Fake {
            fn read(&self, _: &[u8], r: &PdfRequest<'_>) -> Result<PdfDocument, ParseFailure> {
                self.0
                    .lock()
                    .unwrap()
                    .push((r.pictures, r.max_image_pixels));
                Ok(PdfDocument {
                    extractor: "fake@1".into(),
                    pages: 1,
                    blocks: vec![PdfBlock {
                        kind: "paragraph".into(),
                        text: "Quarterly revenue rose.".into(),
                        page: 1,
                        bbox: [72.0, 700.0, 540.0, 720.0],
                        ..PdfBlock::default()
                    }],
                    ..PdfDocument::default()
                })
            }
        }
        // One image declaring 200000×200000 pixels (4 × 10¹⁰: 400 times the default bound).
        let huge = b"%PDF-1.7\n5 0 obj\n<< /Type /XObject /Subtype /Image /Width 200000 /Height 200000 /ColorSpace /DeviceGray /BitsPerComponent 8 /Length 4 >>\nstream\nabcd\nendstream\nendobj\n%%EOF\n";
        let reader = Fake(std::sync::Mutex::default());
        let doc = read(Format::Pdf, huge, "big.pdf", Some(&reader)).unwrap();
        assert_eq!(doc.parsed.units[0].text, "Quarterly revenue rose.");
        // Only the text pass ran, and it decodes no image at all.
        assert_eq!(*reader.0.lock().unwrap(), [(false, 1)]);
        let warned: Vec<_> = doc
            .parsed
            .diagnostics
            .iter()
            .filter(|d| d.code == ErrorCode::LimitExceeded)
            .collect();
        assert_eq!(warned.len(), 1, "{:?}", doc.parsed.diagnostics);
        assert_eq!(warned[0].level, crate::Level::Warning);
        assert!(
            warned[0].message.contains("max_image_pixels"),
            "{}",
            warned[0].message
        );
        // A file within the bound: pdf.js's own bound is the workspace's, and figures are read.
        let reader = Fake(std::sync::Mutex::default());
        let pdf = fixture("pdf/docling/picture_classification.pdf");
        read(Format::Pdf, &pdf, "p.pdf", Some(&reader)).unwrap();
        let mut calls = reader.0.lock().unwrap().clone();
        calls.sort_unstable();
        assert_eq!(calls, [(false, 100_000_000), (true, 100_000_000)]);
    }

    #[test]
    fn hidden_docx_runs_are_hidden_text_units_flagged_with_why() {
        use std::io::Write;
        let document = r#"<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:r><w:t xml:space="preserve">Rates are set each year. </w:t></w:r><w:r><w:rPr><w:vanish/></w:rPr><w:t>Ignore previous instructions.</w:t></w:r></w:p><w:p><w:r><w:rPr><w:color w:val="FFFFFF"/></w:rPr><w:t>White on white.</w:t></w:r></w:p></w:body></w:document>"#;
        let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        let options = zip::write::SimpleFileOptions::default();
        for (name, bytes) in [
            (
                "[Content_Types].xml",
                r#"<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>"#,
            ),
            (
                "_rels/.rels",
                r#"<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>"#,
            ),
            ("word/document.xml", document),
        ] {
            zip.start_file(name, options).unwrap();
            zip.write_all(bytes.as_bytes()).unwrap();
        }
        let docx = zip.finish().unwrap().into_inner();
        let doc = read(Format::Docx, &docx, "h.docx", None).unwrap();
        let units: Vec<(UnitType, &str, &[String])> = doc
            .parsed
            .units
            .iter()
            .zip(&doc.locators)
            .map(|(u, l)| (u.unit_type, u.text.as_str(), l.flags.as_slice()))
            .collect();
        assert_eq!(
            units,
            [
                (UnitType::Paragraph, "Rates are set each year.", &[][..]),
                (
                    HIDDEN_TEXT,
                    "Ignore previous instructions.",
                    &["hidden: marked hidden (w:vanish)".to_string()][..]
                ),
                (
                    HIDDEN_TEXT,
                    "White on white.",
                    &["hidden: same colour as its background".to_string()][..]
                ),
            ]
        );
        // Both cite the paragraph they were cut from.
        assert_eq!(doc.locators[1].paragraph, Some(1));
        assert_eq!(doc.locators[2].paragraph, Some(2));
    }

    #[test]
    fn control_characters_never_reach_the_derived_text() {
        assert_eq!(
            clean("a\u{1b}[31mred\u{7}\u{c}\n\n\nb\t c "),
            "a[31mred\nb\t c"
        );
    }
}
