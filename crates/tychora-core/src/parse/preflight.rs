//! A bounded look at a PDF's streams before pdf.js reads it. A worker's heap limit does not cover
//! the typed arrays pdf.js decodes into (a 510 KB file whose content stream inflates to 512 MiB
//! peaked at 1.1 GB RSS in a worker limited to 128 MB), so the bytes are checked here first:
//! every Flate stream is inflated into a counting sink that stops one byte past the limit, and
//! every image's declared size is checked against a pixel limit (images are not inflated: a large
//! scan is legitimate, and its decoded size follows from its dimensions). An image over the limit
//! does not fail the file: pdf.js reads a page's text without decoding its images, so such a file
//! is read with no image decoded at all, and loses its figures, never its text.

use std::io::Read;

use memchr::memmem;

use super::ParseFailure;
use crate::error::ErrorCode;

/// Bounds on what a PDF's streams may decode to.
#[derive(Debug, Clone, Copy)]
pub struct PdfLimits {
    /// Bytes one non-image stream may inflate to.
    pub max_stream_bytes: u64,
    /// Bytes all non-image streams may inflate to together.
    pub max_total_bytes: u64,
    /// Pixels one image may declare.
    pub max_image_pixels: u64,
}

impl Default for PdfLimits {
    fn default() -> Self {
        Self {
            max_stream_bytes: 64 << 20,
            max_total_bytes: 512 << 20,
            max_image_pixels: 100_000_000,
        }
    }
}

fn limit(message: String) -> ParseFailure {
    ParseFailure {
        code: ErrorCode::LimitExceeded,
        message,
        locator: None,
    }
}

/// An integer after `/Key` in a dictionary's bytes.
fn number_after(dict: &[u8], key: &[u8]) -> Option<u64> {
    let at = memmem::find(dict, key)? + key.len();
    let digits: Vec<u8> = dict[at..]
        .iter()
        .skip_while(|b| b.is_ascii_whitespace())
        .take_while(|b| b.is_ascii_digit())
        .copied()
        .collect();
    std::str::from_utf8(&digits).ok()?.parse().ok()
}

/// What the look at a file's streams found.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Preflight {
    /// Images the file holds.
    pub images: usize,
    /// The first image declaring more pixels than the limit: (width, height, byte offset).
    pub oversized: Option<(u64, u64, usize)>,
    /// Images declaring more pixels than the limit.
    pub oversized_count: usize,
}

/// Checks every stream of `bytes` against `limits`: how many images the file holds, and which
/// declare more pixels than the limit.
///
/// # Errors
/// `E_LIMIT_EXCEEDED` for a stream that inflates past a limit, naming its byte offset.
pub fn check(bytes: &[u8], limits: PdfLimits) -> Result<Preflight, ParseFailure> {
    let mut total = 0u64;
    let mut seen = Preflight::default();
    let mut at = 0usize;
    let finder = memmem::Finder::new(b"stream");
    while let Some(found) = finder.find(&bytes[at..]) {
        let start = at + found;
        at = start + 6;
        // `endstream` ends a stream; only the keyword opening one counts.
        if start >= 3 && &bytes[start - 3..start] == b"end" {
            continue;
        }
        let mut data = at;
        if bytes.get(data) == Some(&b'\r') {
            data += 1;
        }
        if bytes.get(data) == Some(&b'\n') {
            data += 1;
        }
        // The stream's dictionary: from the object header before it.
        let window = &bytes[start.saturating_sub(4096)..start];
        let dict = memmem::rfind(window, b"obj").map_or(window, |o| &window[o..]);
        if memmem::find(dict, b"/Image").is_some() {
            seen.images += 1;
            let (w, h) = (
                number_after(dict, b"/Width"),
                number_after(dict, b"/Height"),
            );
            if let (Some(w), Some(h)) = (w, h)
                && w.saturating_mul(h) > limits.max_image_pixels
            {
                seen.oversized_count += 1;
                seen.oversized.get_or_insert((w, h, start));
            }
            continue;
        }
        if memmem::find(dict, b"/FlateDecode").is_none() && memmem::find(dict, b"/Fl ").is_none() {
            continue;
        }
        // The decoder finds the stream's end itself, so a false `endstream` inside the data
        // cannot cut the count short.
        let inflated = std::io::copy(
            &mut flate2::read::ZlibDecoder::new(&bytes[data..]).take(limits.max_stream_bytes + 1),
            &mut std::io::sink(),
        )
        .unwrap_or(0); // A damaged stream is pdf.js's to judge; it inflated what it could.
        if inflated > limits.max_stream_bytes {
            return Err(limit(format!(
                "a stream at byte {start} inflates past {} bytes (a decompression bomb?)",
                limits.max_stream_bytes
            )));
        }
        total += inflated;
        if total > limits.max_total_bytes {
            return Err(limit(format!(
                "the file's streams inflate past {} bytes together",
                limits.max_total_bytes
            )));
        }
    }
    Ok(seen)
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    fn pdf_with_stream(dict: &str, body: &[u8]) -> Vec<u8> {
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        z.write_all(body).unwrap();
        let data = z.finish().unwrap();
        let mut out = b"%PDF-1.7\n1 0 obj\n".to_vec();
        out.extend_from_slice(format!("<< {dict} /Length {} >>\nstream\n", data.len()).as_bytes());
        out.extend_from_slice(&data);
        out.extend_from_slice(b"\nendstream\nendobj\n%%EOF\n");
        out
    }

    #[test]
    fn a_stream_that_inflates_past_the_limit_is_refused() {
        let tight = PdfLimits {
            max_stream_bytes: 1 << 20,
            ..PdfLimits::default()
        };
        let bomb = pdf_with_stream("/Filter /FlateDecode", &vec![0u8; 4 << 20]);
        assert!(bomb.len() < 10_000, "{} bytes", bomb.len());
        let err = check(&bomb, tight).unwrap_err();
        assert_eq!(err.code, ErrorCode::LimitExceeded);
        assert!(
            err.message.contains("decompression bomb"),
            "{}",
            err.message
        );
        let fine = pdf_with_stream("/Filter /FlateDecode", &vec![b'x'; 1 << 19]);
        check(&fine, tight).unwrap();
    }

    #[test]
    fn an_image_is_judged_by_its_declared_pixels() {
        let huge = pdf_with_stream(
            "/Type /XObject /Subtype /Image /Width 20000 /Height 20000 /Filter /FlateDecode",
            b"tiny",
        );
        let found = check(&huge, PdfLimits::default()).unwrap();
        assert_eq!(found.images, 1);
        assert_eq!(found.oversized_count, 1);
        assert_eq!(
            found.oversized.map(|(w, h, _)| (w, h)),
            Some((20_000, 20_000))
        );
        let small = pdf_with_stream(
            "/Type /XObject /Subtype /Image /Width 2000 /Height 2000 /Filter /FlateDecode",
            b"tiny",
        );
        let found = check(&small, PdfLimits::default()).unwrap();
        assert_eq!((found.images, found.oversized), (1, None));
    }

    #[test]
    #[cfg_attr(not(shared_data), ignore = "reads ../shared/data, not present")]
    fn every_shared_pdf_passes_the_default_limits() {
        let root =
            std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/docs");
        let mut checked = 0;
        for dir in ["pdf", "pdf/docling", "pdf/pdfplumber", "scanned"] {
            for entry in std::fs::read_dir(root.join(dir)).unwrap() {
                let path = entry.unwrap().path();
                if path.extension().is_some_and(|e| e == "pdf") {
                    let bytes = std::fs::read(&path).unwrap();
                    let found = check(&bytes, PdfLimits::default())
                        .unwrap_or_else(|e| panic!("{}: {}", path.display(), e.message));
                    assert_eq!(found.oversized, None, "{}", path.display());
                    checked += 1;
                }
            }
        }
        assert!(checked >= 40, "{checked}");
    }
}
