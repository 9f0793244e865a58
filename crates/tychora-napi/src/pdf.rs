//! The PDF reader the TypeScript side provides (pdf.js in a worker pool), handed to the core as its
//! `PdfReader`. A prepare thread calls it with one file's bytes and blocks on the promise, as the
//! embedder hooks do; the JS thread only routes the call to a worker.

use napi::Status;
use napi::bindgen_prelude::{Buffer, Promise};
use napi::threadsafe_function::ThreadsafeFunction;
use napi_derive::napi;
use tychora_core::ErrorCode;
use tychora_core::documents::{
    DocCell, Furniture, ParseFailure, PdfBlock, PdfDocument, PdfPicture, PdfReader, PdfRequest,
    PdfRow,
};

/// One PDF to read.
#[napi(object)]
pub struct PdfCall {
    pub bytes: Buffer,
    /// The file's path relative to its root, for messages.
    pub path: String,
    /// Its password (from the variable `[[documents.passwords]]` names), if one is configured.
    pub password: Option<String>,
    /// Pages it may have.
    #[napi(js_name = "max_pages")]
    pub max_pages: u32,
    /// Milliseconds one page may take before the worker is stopped.
    #[napi(js_name = "page_timeout_ms")]
    pub page_timeout_ms: u32,
    /// Heap (MB) of the worker that reads it.
    #[napi(js_name = "worker_memory_mb")]
    pub worker_memory_mb: u32,
    /// Pixels an image may have for pdf.js to decode it (its `maxImageSize`); 1: none is decoded.
    #[napi(js_name = "max_image_pixels")]
    pub max_image_pixels: f64,
    /// Pages with no text layer to recognize, and how (absent: `[ocr]` is off).
    pub ocr: Option<OcrCall>,
    /// The bytes are a grey PNG of one picture (an image file) to recognize, not a PDF.
    pub image: bool,
    /// Find the figures the pages draw (each drawn to PNG) instead of reading the text.
    pub pictures: bool,
}

/// How pages with no text layer are recognized.
#[napi(object)]
pub struct OcrCall {
    /// Tesseract language codes, each from its `@tesseract.js-data` package.
    pub languages: Vec<String>,
    /// Resolution pages are rendered at.
    pub dpi: u32,
    /// Milliseconds rendering and reading one page may take.
    #[napi(js_name = "page_timeout_ms")]
    pub page_timeout_ms: u32,
}

/// A text block in reading order.
#[napi(object)]
pub struct PdfBlockOutput {
    #[napi(ts_type = "'heading' | 'paragraph' | 'list_item' | 'table_row'")]
    pub kind: String,
    pub text: String,
    pub level: Option<u32>,
    pub page: u32,
    /// `[x0, y0, x1, y1]` in PDF points, origin bottom-left.
    pub bbox: Vec<f64>,
    /// Why a reader of the page cannot see it, when drawn unseen.
    pub hidden: Option<String>,
    /// A table row's logical table (1-based; kept across the pages it continues on).
    pub table: Option<u32>,
    /// Its row in the table (1-based).
    pub row: Option<u32>,
    /// A header row.
    pub header: Option<bool>,
    /// A table row's cells.
    pub cells: Option<Vec<PdfCellOutput>>,
    /// Recognized by OCR from the page's image: the recognizer's confidence, 0 to 1.
    #[napi(js_name = "ocr_confidence")]
    pub ocr_confidence: Option<f64>,
}

/// A cell of a PDF table row.
#[napi(object)]
pub struct PdfCellOutput {
    /// First grid column (0-based).
    pub col: u32,
    #[napi(js_name = "col_span")]
    pub col_span: u32,
    pub text: String,
    /// `[x0, y0, x1, y1]` in points.
    pub bbox: Vec<f64>,
}

/// A running header, footer or page number.
#[napi(object)]
pub struct PdfFurniture {
    pub page: u32,
    pub text: String,
}

/// Why a file could not be read: a stable code and a message.
#[napi(object)]
pub struct PdfFailure {
    #[napi(
        ts_type = "'E_UNSUPPORTED_FORMAT' | 'E_LIMIT_EXCEEDED' | 'E_INVALID_ARGUMENT' | 'E_INTERNAL'"
    )]
    pub code: String,
    pub message: String,
}

/// What the reader made of one file, or why it could not.
#[napi(object)]
pub struct PdfOutput {
    pub extractor: String,
    pub pages: u32,
    #[napi(js_name = "pages_without_text")]
    pub pages_without_text: Vec<u32>,
    /// Pages pdf.js could not read, with why (the rest of the file is kept).
    #[napi(js_name = "unreadable_pages")]
    pub unreadable_pages: Option<Vec<PdfUnreadablePage>>,
    pub blocks: Vec<PdfBlockOutput>,
    pub furniture: Vec<PdfFurniture>,
    pub diagnostics: Vec<String>,
    pub failure: Option<PdfFailure>,
    /// Figures the pages draw, each drawn to PNG.
    pub pictures: Option<Vec<PdfPictureOutput>>,
}

/// A page pdf.js could not read.
#[napi(object)]
pub struct PdfUnreadablePage {
    pub page: u32,
    pub reason: String,
}

/// A picture a page draws, as a person sees it.
#[napi(object)]
pub struct PdfPictureOutput {
    pub page: u32,
    /// `[x0, y0, x1, y1]` in PDF points, origin bottom-left.
    pub bbox: Vec<f64>,
    pub png: Buffer,
}

pub(crate) type ReadPdfFn =
    ThreadsafeFunction<PdfCall, Promise<PdfOutput>, PdfCall, Status, false, true>;

pub(crate) struct JsPdfReader {
    pub(crate) read: ReadPdfFn,
}

fn failure(code: ErrorCode, message: String) -> ParseFailure {
    ParseFailure {
        code,
        message,
        locator: None,
    }
}

impl PdfReader for JsPdfReader {
    fn read(&self, bytes: &[u8], request: &PdfRequest<'_>) -> Result<PdfDocument, ParseFailure> {
        let call = PdfCall {
            bytes: Buffer::from(bytes.to_vec()),
            path: request.path.to_string(),
            password: request.password.map(str::to_string),
            max_pages: request.max_pages,
            page_timeout_ms: request.page_timeout_ms,
            worker_memory_mb: request.worker_memory_mb,
            // A JavaScript number holds every bound a person sets exactly (below 2^53).
            max_image_pixels: request.max_image_pixels as f64,
            ocr: request.ocr.map(|o| OcrCall {
                languages: o.languages.to_vec(),
                dpi: o.dpi,
                page_timeout_ms: o.page_timeout_ms,
            }),
            image: request.image,
            pictures: request.pictures,
        };
        let out = futures_executor::block_on(async {
            let promise = self.read.call_async(call).await?;
            promise.await
        })
        .map_err(|e| {
            failure(
                ErrorCode::Internal,
                format!("the PDF reader failed: {}", e.reason),
            )
        })?;
        if let Some(f) = out.failure {
            let code = match f.code.as_str() {
                "E_UNSUPPORTED_FORMAT" => ErrorCode::UnsupportedFormat,
                "E_LIMIT_EXCEEDED" => ErrorCode::LimitExceeded,
                "E_INVALID_ARGUMENT" => ErrorCode::InvalidArgument,
                _ => ErrorCode::Internal,
            };
            return Err(failure(code, f.message));
        }
        let blocks = out
            .blocks
            .into_iter()
            .map(|b| PdfBlock {
                kind: b.kind,
                text: b.text,
                level: b.level.and_then(|l| u8::try_from(l).ok()),
                page: b.page,
                bbox: [0, 1, 2, 3].map(|i| b.bbox.get(i).copied().unwrap_or(0.0)),
                hidden: b.hidden,
                ocr_confidence: b.ocr_confidence.map(|c| c.clamp(0.0, 1.0)),
                row: match (b.table, b.row, b.cells) {
                    (Some(table), Some(row), Some(cells)) => Some(PdfRow {
                        table: table as usize,
                        row: row as usize,
                        header: b.header.unwrap_or(false),
                        cells: cells
                            .into_iter()
                            .map(|c| DocCell {
                                col: c.col as usize,
                                col_span: c.col_span.max(1) as usize,
                                continues_above: false,
                                text: c.text,
                                bbox: Some(
                                    [0, 1, 2, 3].map(|i| c.bbox.get(i).copied().unwrap_or(0.0)),
                                ),
                            })
                            .collect(),
                    }),
                    _ => None,
                },
            })
            .collect();
        Ok(PdfDocument {
            extractor: out.extractor,
            pages: out.pages,
            pages_without_text: out.pages_without_text,
            unreadable_pages: out
                .unreadable_pages
                .unwrap_or_default()
                .into_iter()
                .map(|u| (u.page, u.reason))
                .collect(),
            blocks,
            furniture: out
                .furniture
                .into_iter()
                .map(|f| Furniture {
                    part: format!("p.{}", f.page),
                    text: f.text,
                })
                .collect(),
            diagnostics: out.diagnostics,
            pictures: out
                .pictures
                .unwrap_or_default()
                .into_iter()
                .map(|p| PdfPicture {
                    page: p.page,
                    bbox: [0, 1, 2, 3].map(|i| p.bbox.get(i).copied().unwrap_or(0.0)),
                    png: p.png.to_vec(),
                    caption: None, // the core matches captions
                })
                .collect(),
        })
    }
}
