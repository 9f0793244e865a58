//! Image files (PNG, JPEG, WebP, GIF, TIFF) as visual assets.
//!
//! The bytes are kept as they are (the file is its own asset); what makes an image findable
//! offline is text about it: the words of its file name, and with `[ocr]` on, the text recognized
//! in it. The header's dimensions are read before anything is decoded, so a decompression bomb
//! (a few KB declaring gigapixels) is refused by the pixel limit; a decode happens only for OCR,
//! in memory-safe Rust under allocation limits, into a grey PNG the recognizer reads. Native image
//! decoders never see a stranger's bytes: the canvas used for OCR crashed the process on a TIFF.

use std::io::Cursor;

use image::{ImageFormat, ImageReader, Limits};

use super::ParseFailure;
use super::reading::{
    DocLocator, DocumentText, Layout, OCR_TEXT, OcrRequest, PdfRequest, ReadOptions, VisualAsset,
};
use crate::error::{Diagnostic, ErrorCode};
use crate::unit::Parsed;
use crate::unit::UnitType;

/// The image reader's name and version in every extraction it makes.
pub const IMAGE_EXTRACTOR: &str = "tychora-image@1";

/// The unit type of text about a picture (its alt text, title or file name): it finds the
/// picture, it quotes nothing.
pub const IMAGE: UnitType = UnitType::Image;

/// OCR reads at most this many pixels; a larger image is scaled down first (a 300 dpi A4 page
/// is 8.7 million).
const OCR_MAX_PIXELS: u64 = 25_000_000;

/// What an image's header says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageInfo {
    /// `PNG`, `JPEG`, ….
    pub format: &'static str,
    /// Its media type.
    pub media_type: &'static str,
    /// Pixels across.
    pub width: u32,
    /// Pixels down.
    pub height: u32,
}

fn named(format: ImageFormat) -> Option<(&'static str, &'static str)> {
    Some(match format {
        ImageFormat::Png => ("PNG", "image/png"),
        ImageFormat::Jpeg => ("JPEG", "image/jpeg"),
        ImageFormat::Gif => ("GIF", "image/gif"),
        ImageFormat::WebP => ("WebP", "image/webp"),
        ImageFormat::Tiff => ("TIFF", "image/tiff"),
        _ => return None,
    })
}

fn unsupported(message: String) -> ParseFailure {
    ParseFailure {
        code: ErrorCode::UnsupportedFormat,
        message,
        locator: None,
    }
}

/// Reads an image's format and dimensions from its header, and checks them against the pixel
/// limit. Nothing is decoded.
///
/// # Errors
/// `E_UNSUPPORTED_FORMAT` for bytes that are not one of the five formats or whose header does not
/// read; `E_LIMIT_EXCEEDED` for an image declaring more than `max_pixels`.
pub fn probe(bytes: &[u8], max_pixels: u64) -> Result<ImageInfo, ParseFailure> {
    let reader = ImageReader::new(Cursor::new(bytes))
        .with_guessed_format()
        .map_err(|e| unsupported(format!("the image could not be read: {e}")))?;
    let Some((format, media_type)) = reader.format().and_then(named) else {
        return Err(unsupported(format!(
            "named as an image but its bytes are {}",
            super::reading::sniff(bytes)
        )));
    };
    let (width, height) = reader.into_dimensions().map_err(|e| {
        unsupported(format!(
            "the {format} header could not be read: {}",
            super::reading::clean(&e.to_string())
        ))
    })?;
    let pixels = u64::from(width) * u64::from(height);
    if pixels > max_pixels {
        return Err(ParseFailure {
            code: ErrorCode::LimitExceeded,
            message: format!(
                "the {format} image declares {width}×{height} pixels, over [documents] max_image_pixels = {max_pixels} (a decompression bomb?)"
            ),
            locator: None,
        });
    }
    Ok(ImageInfo {
        format,
        media_type,
        width,
        height,
    })
}

/// Decodes an image (checked by [`probe`]) into the grey PNG OCR reads, scaled down past
/// [`OCR_MAX_PIXELS`]. The decoder may allocate at most `max_alloc` bytes.
///
/// # Errors
/// Why the pixels could not be decoded (truncated or damaged data), for a diagnostic.
pub fn grey_png(bytes: &[u8], info: ImageInfo, max_alloc: u64) -> Result<Vec<u8>, String> {
    let mut reader = ImageReader::new(Cursor::new(bytes))
        .with_guessed_format()
        .map_err(|e| e.to_string())?;
    let mut limits = Limits::default();
    limits.max_image_width = Some(info.width);
    limits.max_image_height = Some(info.height);
    limits.max_alloc = Some(max_alloc);
    reader.limits(limits);
    let mut grey = reader.decode().map_err(|e| e.to_string())?.into_luma8();
    let pixels = u64::from(grey.width()) * u64::from(grey.height());
    if pixels > OCR_MAX_PIXELS {
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            clippy::cast_precision_loss
        )]
        let scale = (OCR_MAX_PIXELS as f64 / pixels as f64).sqrt();
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            clippy::cast_precision_loss
        )]
        let (w, h) = (
            ((f64::from(grey.width()) * scale) as u32).max(1),
            ((f64::from(grey.height()) * scale) as u32).max(1),
        );
        grey = image::imageops::resize(&grey, w, h, image::imageops::FilterType::Triangle);
    }
    let mut png = Cursor::new(Vec::new());
    grey.write_to(&mut png, ImageFormat::Png)
        .map_err(|e| e.to_string())?;
    Ok(png.into_inner())
}

/// The text recognized in a picture when `[ocr]` is on and a reader is there: the reader's blocks
/// (boxes in pixels, origin bottom-left, with their confidence). `None` when OCR is off, or when it
/// failed: then `diagnostics` says why, naming `what` was being read, and the picture stays
/// findable by its other words.
pub(super) fn recognize(
    bytes: &[u8],
    info: ImageInfo,
    path: &str,
    what: &str,
    options: &ReadOptions<'_>,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<super::reading::PdfDocument> {
    let (true, Some(reader)) = (options.ocr.enabled, options.pdf) else {
        return None;
    };
    let png = match grey_png(bytes, info, options.limits.max_stream_bytes) {
        Ok(png) => png,
        Err(why) => {
            diagnostics.push(Diagnostic::warning(
                path,
                ErrorCode::UnsupportedFormat,
                format!(
                    "{what}'s pixels could not be decoded for OCR: {}",
                    super::reading::clean(&why)
                ),
            ));
            return None;
        }
    };
    let read = reader.read(
        &png,
        &PdfRequest {
            path,
            password: None,
            max_pages: 1,
            page_timeout_ms: options.limits.page_timeout_ms,
            worker_memory_mb: options.limits.worker_memory_mb,
            max_image_pixels: options.limits.max_image_pixels,
            ocr: Some(OcrRequest {
                languages: &options.ocr.languages,
                dpi: options.ocr.dpi,
                page_timeout_ms: options.ocr.page_timeout_ms,
            }),
            image: true,
            pictures: false,
        },
    );
    match read {
        Ok(found) => {
            for d in &found.diagnostics {
                diagnostics.push(Diagnostic::info(
                    path,
                    ErrorCode::UnsupportedFormat,
                    d.clone(),
                ));
            }
            Some(found)
        }
        Err(fail) => {
            diagnostics.push(Diagnostic::warning(
                path,
                fail.code,
                format!("OCR of {what} failed: {}", fail.message),
            ));
            None
        }
    }
}

/// Appends the lines OCR recognized in a picture as `ocr_text` units at `place` (under the
/// heading at `heading`), each with its confidence and the boxes `boxes` makes of its pixel box.
/// Returns the first unit appended.
pub(super) fn push_lines(
    out: &mut Layout,
    found: super::reading::PdfDocument,
    heading: (Option<usize>, &[String]),
    place: &DocLocator,
    boxes: impl Fn([f64; 4]) -> Vec<[f64; 5]>,
) -> Option<usize> {
    let mut first = None;
    for block in found.blocks {
        let before = out.count();
        out.push(
            OCR_TEXT,
            &block.text,
            heading.0,
            heading.1,
            None,
            DocLocator {
                boxes: boxes(block.bbox),
                origin: Some("ocr".into()),
                confidence: block.ocr_confidence,
                ..place.clone()
            },
        );
        if out.count() > before {
            first.get_or_insert(before);
        }
    }
    first
}

/// Formats a vision model reads as they are (Anthropic's Messages API: JPEG, PNG, GIF, WebP).
const UPLOADABLE: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];
/// Bytes one uploaded image may have, and pixels per side (the Messages API's limits).
const UPLOAD_MAX_BYTES: usize = 5 * 1024 * 1024;
const UPLOAD_MAX_SIDE: u32 = 8000;
/// The long edge a re-encoded picture gets: the provider scales anything larger down to it.
const UPLOAD_LONG_EDGE: u32 = 1568;

/// The form a picture is uploaded in: as it is when a vision model reads it and it is within the
/// upload limits; otherwise (TIFF, too large) decoded under the allocation limit and re-encoded as
/// PNG with its long edge at most 1568 pixels. Returns the media type and the bytes.
///
/// # Errors
/// [`probe`]'s errors; `E_UNSUPPORTED_FORMAT` when the pixels do not decode.
pub fn upload_form(
    bytes: &[u8],
    max_pixels: u64,
    max_alloc: u64,
) -> Result<(&'static str, Vec<u8>), ParseFailure> {
    let info = probe(bytes, max_pixels)?;
    if UPLOADABLE.contains(&info.media_type)
        && bytes.len() <= UPLOAD_MAX_BYTES
        && info.width <= UPLOAD_MAX_SIDE
        && info.height <= UPLOAD_MAX_SIDE
    {
        return Ok((info.media_type, bytes.to_vec()));
    }
    let mut reader = ImageReader::new(Cursor::new(bytes))
        .with_guessed_format()
        .map_err(|e| unsupported(e.to_string()))?;
    let mut limits = Limits::default();
    limits.max_image_width = Some(info.width);
    limits.max_image_height = Some(info.height);
    limits.max_alloc = Some(max_alloc);
    reader.limits(limits);
    let picture = reader.decode().map_err(|e| {
        unsupported(format!(
            "the {} pixels could not be decoded: {}",
            info.format,
            super::reading::clean(&e.to_string())
        ))
    })?;
    let picture = if info.width.max(info.height) > UPLOAD_LONG_EDGE {
        picture.resize(
            UPLOAD_LONG_EDGE,
            UPLOAD_LONG_EDGE,
            image::imageops::FilterType::Triangle,
        )
    } else {
        picture
    };
    let mut png = Cursor::new(Vec::new());
    picture
        .to_rgba8()
        .write_to(&mut png, ImageFormat::Png)
        .map_err(|e| unsupported(e.to_string()))?;
    Ok(("image/png", png.into_inner()))
}

/// The words a file name gives a picture: `q3-revenue_chart.png` → `q3 revenue chart`.
#[must_use]
pub fn name_words(path: &str) -> String {
    let name = path.rsplit('/').next().unwrap_or(path);
    let stem = name.rsplit_once('.').map_or(name, |(s, _)| s);
    stem.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Reads an image file: one `image` unit (its name and size), its visual asset (the file itself),
/// and with `[ocr]` on and a reader, the text recognized in it as `ocr_text` units whose boxes are
/// in pixels, origin bottom-left (as a PDF page's boxes are in points).
///
/// # Errors
/// A [`ParseFailure`] from [`probe`].
pub fn extract(
    bytes: &[u8],
    path: &str,
    options: &ReadOptions<'_>,
) -> Result<DocumentText, ParseFailure> {
    let info = probe(bytes, options.limits.max_image_pixels)?;
    let words = name_words(path);
    let caption = format!(
        "{words} ({} image, {}×{} pixels)",
        info.format, info.width, info.height
    );
    let mut out = Layout::default();
    out.push(
        IMAGE,
        &caption,
        None,
        &[],
        None,
        DocLocator {
            part: "image".into(),
            ..DocLocator::default()
        },
    );
    let mut diagnostics = Vec::new();
    let mut extractor = IMAGE_EXTRACTOR.to_string();
    let what = format!("the {} image", info.format);
    if let Some(found) = recognize(bytes, info, path, &what, options, &mut diagnostics) {
        extractor = format!("{extractor}+{}", found.extractor);
        push_lines(
            &mut out,
            found,
            (None, &[]),
            &DocLocator {
                part: "image".into(),
                ..DocLocator::default()
            },
            |[x0, y0, x1, y1]| vec![[1.0, x0, y0, x1, y1]],
        );
    }
    let (text, units, locators) = out.finish();
    Ok(DocumentText {
        format: "image",
        extractor,
        pages: None,
        text,
        parsed: Parsed {
            units,
            diagnostics,
            title: None,
        },
        locators,
        furniture: Vec::new(),
        external_targets: Vec::new(),
        assets: vec![VisualAsset {
            media_type: info.media_type.to_string(),
            width: Some(info.width),
            height: Some(info.height),
            part: "image".into(),
            caption: Some(words),
            unit: Some(0),
            ..VisualAsset::default()
        }],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn png(width: u32, height: u32) -> Vec<u8> {
        let img = image::GrayImage::from_pixel(width, height, image::Luma([255]));
        let mut out = Cursor::new(Vec::new());
        img.write_to(&mut out, ImageFormat::Png).unwrap();
        out.into_inner()
    }

    /// The PNG chunk checksum (a bomb's header is well-formed: only its dimensions lie).
    fn crc32(bytes: &[u8]) -> u32 {
        let mut crc = !0u32;
        for &b in bytes {
            crc ^= u32::from(b);
            for _ in 0..8 {
                crc = if crc & 1 == 1 {
                    (crc >> 1) ^ 0xEDB8_8320
                } else {
                    crc >> 1
                };
            }
        }
        !crc
    }

    #[test]
    fn upload_form_keeps_what_a_model_reads_and_re_encodes_the_rest() {
        let small = png(40, 20);
        let (media, bytes) = upload_form(&small, 1_000_000, 1 << 30).unwrap();
        assert_eq!((media, bytes.as_slice()), ("image/png", small.as_slice()));
        // A TIFF is re-encoded as PNG; so is a picture wider than the upload limit, scaled.
        let mut tiff = Cursor::new(Vec::new());
        image::GrayImage::from_pixel(30, 10, image::Luma([9]))
            .write_to(&mut tiff, ImageFormat::Tiff)
            .unwrap();
        let (media, bytes) = upload_form(tiff.get_ref(), 1_000_000, 1 << 30).unwrap();
        assert_eq!(media, "image/png");
        assert_eq!(probe(&bytes, 1_000_000).unwrap().width, 30);
        let wide = png(9000, 10);
        let (media, bytes) = upload_form(&wide, 1_000_000, 1 << 30).unwrap();
        let info = probe(&bytes, 1_000_000).unwrap();
        assert_eq!((media, info.width), ("image/png", 1568));
        assert_eq!(
            upload_form(b"<svg/>", 100, 1 << 20).unwrap_err().code,
            ErrorCode::UnsupportedFormat
        );
    }

    #[test]
    fn probe_reads_the_header_and_refuses_a_bomb_before_decoding() {
        let small = png(40, 20);
        let info = probe(&small, 1_000_000).unwrap();
        assert_eq!((info.format, info.width, info.height), ("PNG", 40, 20));
        // A PNG header declaring 100,000 × 100,000 pixels over a few bytes of data.
        let mut bomb = small.clone();
        bomb[16..20].copy_from_slice(&100_000u32.to_be_bytes());
        bomb[20..24].copy_from_slice(&100_000u32.to_be_bytes());
        let crc = crc32(&bomb[12..29]);
        bomb[29..33].copy_from_slice(&crc.to_be_bytes());
        let err = probe(&bomb, 100_000_000).unwrap_err();
        assert_eq!(err.code, ErrorCode::LimitExceeded);
        assert!(err.message.contains("100000×100000"), "{}", err.message);
        let err = probe(b"%PDF-1.7 not an image", 100).unwrap_err();
        assert_eq!(err.code, ErrorCode::UnsupportedFormat);
        assert!(err.message.contains("a PDF"), "{}", err.message);
    }

    #[test]
    fn grey_png_decodes_every_format_and_reports_truncation() {
        let img = image::RgbImage::from_pixel(30, 10, image::Rgb([200, 10, 10]));
        for format in [
            ImageFormat::Png,
            ImageFormat::Jpeg,
            ImageFormat::Gif,
            ImageFormat::WebP,
            ImageFormat::Tiff,
        ] {
            let mut bytes = Cursor::new(Vec::new());
            img.write_to(&mut bytes, format).unwrap();
            let bytes = bytes.into_inner();
            let info = probe(&bytes, 1_000).unwrap();
            let grey = grey_png(&bytes, info, 1 << 20).unwrap();
            let back = probe(&grey, 1_000).unwrap();
            assert_eq!((back.width, back.height), (30, 10), "{format:?}");
            let cut = &bytes[..bytes.len() / 2];
            if let Ok(info) = probe(cut, 1_000) {
                assert!(grey_png(cut, info, 1 << 20).is_err(), "{format:?}");
            }
        }
    }

    #[test]
    fn file_names_become_words() {
        assert_eq!(
            name_words("a/q3-revenue_chart.final.png"),
            "q3 revenue chart final"
        );
    }
}
