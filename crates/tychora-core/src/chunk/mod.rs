//! Chunk windows: exact windows over leaf evidence units, for indexing.
//!
//! A window grows unit by unit up to the target size (512 tokens) and may pass it up to the soft
//! ceiling (800) only to avoid leaving a tiny remainder. Windows never cross an evidence owner
//! (a Markdown section, a JSON record), so one owner's windows consolidate cleanly at query time.
//! A unit larger than the ceiling is split on line boundaries (or, for a single huge line, on
//! character boundaries) into pieces near the target.

use serde::Serialize;

use crate::parse::Format;
use crate::tokenize;
use crate::unit::{LineIndex, Span, Unit};

/// Window sizes in tokens.
#[derive(Debug, Clone, Copy)]
pub struct ChunkOptions {
    /// The size a window aims for.
    pub target_tokens: usize,
    /// The size a window may reach to absorb a small remainder.
    pub soft_ceiling_tokens: usize,
}

impl Default for ChunkOptions {
    fn default() -> Self {
        Self {
            target_tokens: 512,
            soft_ceiling_tokens: 800,
        }
    }
}

/// The context capsule: indexed with the chunk, never part of its text.
#[derive(Debug, Clone, Serialize)]
pub struct Capsule {
    /// Document title.
    pub title: String,
    /// The source's format (the capsule field predates the format/kind split).
    pub kind: &'static str,
    /// Heading path of the window's first unit.
    pub heading_path: Vec<String>,
    /// The table header, when the window starts inside a table.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub table_header: Option<String>,
    /// The declaration of the code symbol the window belongs to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
}

/// One window.
#[derive(Debug, Clone, Serialize)]
pub struct Chunk {
    /// Position in the extraction.
    pub ordinal: usize,
    /// Ordinal of the first unit covered.
    pub first_unit: usize,
    /// Ordinal of the last unit covered.
    pub last_unit: usize,
    /// The evidence owner key.
    pub owner_key: String,
    /// Exact source span.
    pub span: Span,
    /// Tokens in `text`.
    pub token_count: usize,
    /// The indexed text: the exact source slice, or the record's decoded text for JSON.
    pub text: String,
    /// Context capsule.
    pub capsule: Capsule,
}

/// The owner of units that belong to no section: never an owner of windows (a whole document
/// is not one piece of evidence), each window stands alone.
const WHOLE_DOCUMENT: &str = "doc";

/// Which owner rule the windows follow: part of the extraction fingerprint, so a change of rule
/// reads documents again.
pub const OWNER_RULE: &str = "owners.2";

fn owner_key(unit: &Unit, ordinal: usize, format: Format) -> String {
    // Unseen text is never folded into a window of text a reader can see.
    if unit.unit_type == crate::parse::document::HIDDEN_TEXT {
        return format!("h{ordinal}");
    }
    match format {
        // A record, a JSON line or a CSV row is evidence on its own.
        Format::Json | Format::Jsonl | Format::Csv => format!("r{ordinal}"),
        // A document's units name their nearest heading as parent: windows follow its sections.
        Format::Markdown
        | Format::Docx
        | Format::Pdf
        | Format::Image
        | Format::Legal
        | Format::Rfc => unit
            .parent
            .map_or_else(|| WHOLE_DOCUMENT.to_string(), |p| format!("s{p}")),
        Format::Text => WHOLE_DOCUMENT.to_string(),
        // Each symbol (or group of statements) is its own owner: windows follow symbol boundaries.
        Format::Code(_) => format!("u{ordinal}"),
    }
}

/// Builds windows over `units` (all of them, in order) of a document whose text is `source`.
/// `unit_tokens[i]` is the token count of `units[i].text`.
#[must_use]
pub fn windows(
    source: &str,
    format: Format,
    title: &str,
    units: &[Unit],
    unit_tokens: &[usize],
    options: ChunkOptions,
) -> Vec<Chunk> {
    let index = LineIndex::new(source);
    // A document's units are slices of its derived text.
    let slices_source = matches!(
        format,
        Format::Markdown
            | Format::Text
            | Format::Code(_)
            | Format::Docx
            | Format::Pdf
            | Format::Image
    );
    let mut chunks = Vec::new();
    let mut window: Vec<usize> = Vec::new();
    let mut window_tokens = 0;
    let mut window_owner = String::new();

    let flush = |window: &mut Vec<usize>, tokens: &mut usize, chunks: &mut Vec<Chunk>| {
        if let (Some(&first), Some(&last)) = (window.first(), window.last()) {
            let (a, b) = (&units[first], &units[last]);
            let span = index.span(a.span.byte_start, b.span.byte_end);
            let text = if slices_source {
                source[span.byte_start..span.byte_end].to_string()
            } else {
                window
                    .iter()
                    .map(|&i| units[i].text.as_str())
                    .collect::<Vec<_>>()
                    .join("\n")
            };
            chunks.push(Chunk {
                ordinal: chunks.len(),
                first_unit: first,
                last_unit: last,
                // Text outside any section (plain text, a PDF or Markdown file without
                // headings) packs into windows under one owner, but each window ranks on its own:
                // a long law, RFC or statement is not one candidate.
                owner_key: match owner_key(a, first, format) {
                    whole if whole == WHOLE_DOCUMENT => format!("w{}", chunks.len()),
                    owner => owner,
                },
                span,
                token_count: *tokens,
                text,
                capsule: capsule(title, format, a),
            });
        }
        window.clear();
        *tokens = 0;
    };

    for (i, unit) in units.iter().enumerate().filter(|(_, u)| u.is_leaf) {
        let tokens = unit_tokens[i];
        let owner = owner_key(unit, i, format);
        if tokens > options.soft_ceiling_tokens {
            flush(&mut window, &mut window_tokens, &mut chunks);
            split_unit(
                source,
                slices_source,
                &index,
                title,
                format,
                i,
                unit,
                // The pieces of one oversize paragraph outside any section rank together.
                &if owner == WHOLE_DOCUMENT {
                    format!("u{i}")
                } else {
                    owner.clone()
                },
                options,
                &mut chunks,
            );
            continue;
        }
        let fits = window_tokens + tokens <= options.target_tokens
            || (window_tokens < options.target_tokens / 4
                && window_tokens + tokens <= options.soft_ceiling_tokens);
        if !window.is_empty() && (owner != window_owner || !fits) {
            flush(&mut window, &mut window_tokens, &mut chunks);
        }
        window_owner = owner;
        window.push(i);
        window_tokens += tokens;
    }
    flush(&mut window, &mut window_tokens, &mut chunks);
    chunks
}

fn capsule(title: &str, format: Format, unit: &Unit) -> Capsule {
    Capsule {
        title: title.to_string(),
        kind: format.as_str(),
        heading_path: unit.heading_path.clone(),
        table_header: unit.table_header.clone(),
        // Only a window cut from inside a function needs its declaration repeated: the first
        // holds it in its text (CoSQA dev MRR@10 0.336 with it in every capsule, see ARCHITECTURE).
        signature: None,
    }
}

/// Splits one oversize unit into pieces near the target size.
#[allow(clippy::too_many_arguments)] // Internal helper of `windows`, sharing its locals.
fn split_unit(
    source: &str,
    slices_source: bool,
    index: &LineIndex,
    title: &str,
    format: Format,
    ordinal: usize,
    unit: &Unit,
    owner: &str,
    options: ChunkOptions,
    chunks: &mut Vec<Chunk>,
) {
    // Work in the coordinates of the unit's text; for source slices that is the source itself.
    let text = &unit.text;
    let base = unit.span.byte_start;
    // A table row's text carries its header, so it is not a slice of the source.
    let slices_source =
        slices_source && source.get(base..unit.span.byte_end) == Some(text.as_str());
    // Atoms a piece is made of, in `text` coordinates: the code symbol's statements (a window then
    // never starts mid-statement), or lines; an atom still over the ceiling is cut on lines, and a
    // single huge line on characters.
    let mut atoms: Vec<(usize, usize)> = Vec::new();
    let mut cuts: Vec<usize> = unit
        .breaks
        .iter()
        .filter_map(|&b| b.checked_sub(base))
        .filter(|&b| b > 0 && b < text.len() && text.is_char_boundary(b))
        .collect();
    cuts.sort_unstable();
    cuts.dedup();
    let mut bounds = vec![0];
    bounds.extend(cuts);
    bounds.push(text.len());
    for pair in bounds.windows(2) {
        let (from, to) = (pair[0], pair[1]);
        let statement = &text[from..to];
        if !unit.breaks.is_empty() && tokenize::count(statement) <= options.soft_ceiling_tokens {
            atoms.push((from, to));
            continue;
        }
        let mut offset = from;
        for line in statement.split_inclusive('\n') {
            for part in split_long_line(line, options.target_tokens * 4) {
                atoms.push((offset, offset + part.len()));
                offset += part.len();
            }
        }
    }
    let mut pieces: Vec<(usize, usize, usize)> = Vec::new(); // (start, end, tokens) within `text`
    let mut start = 0;
    let mut tokens = 0;
    let mut offset = 0;
    for (from, to) in atoms {
        let part_tokens = tokenize::count(&text[from..to]);
        if tokens > 0 && tokens + part_tokens > options.target_tokens {
            pieces.push((start, offset, tokens));
            start = offset;
            tokens = 0;
        }
        tokens += part_tokens;
        offset = to;
    }
    if offset > start {
        pieces.push((start, offset, tokens));
    }
    for (start, end, tokens) in pieces {
        let piece = &text[start..end];
        let trimmed_end = start + piece.trim_end().len();
        if trimmed_end <= start {
            continue;
        }
        let span = if slices_source {
            index.span(base + start, base + trimmed_end)
        } else {
            unit.span
        };
        chunks.push(Chunk {
            ordinal: chunks.len(),
            first_unit: ordinal,
            last_unit: ordinal,
            owner_key: owner.to_string(),
            span,
            token_count: tokens,
            text: if slices_source {
                source[span.byte_start..span.byte_end].to_string()
            } else {
                text[start..trimmed_end].to_string()
            },
            capsule: Capsule {
                signature: if start > 0 {
                    unit.signature.clone()
                } else {
                    None
                },
                ..capsule(title, format, unit)
            },
        });
    }
}

/// Cuts a line longer than `max_bytes` on character boundaries (minified files, huge records).
fn split_long_line(line: &str, max_bytes: usize) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut rest = line;
    while rest.len() > max_bytes {
        let mut cut = max_bytes;
        while !rest.is_char_boundary(cut) {
            cut -= 1;
        }
        // Prefer the last whitespace before the cut so words stay whole.
        // The cut goes after the whitespace character, whose width is not always one byte
        // (U+3000, the ideographic space of Chinese and Japanese text, is three).
        if let Some((ws, c)) = rest[..cut]
            .char_indices()
            .rev()
            .find(|(_, c)| c.is_whitespace())
            .filter(|&(w, _)| w > max_bytes / 2)
        {
            cut = ws + c.len_utf8();
        }
        parts.push(&rest[..cut]);
        rest = &rest[cut..];
    }
    parts.push(rest);
    parts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse;

    fn chunk_doc(format: Format, text: &str, options: ChunkOptions) -> (Vec<Unit>, Vec<Chunk>) {
        let parsed = parse::parse(format, text, "t").unwrap();
        let tokens: Vec<usize> = parsed
            .units
            .iter()
            .map(|u| tokenize::count(&u.text))
            .collect();
        let chunks = windows(text, format, "T", &parsed.units, &tokens, options);
        (parsed.units, chunks)
    }

    #[test]
    fn long_lines_split_after_wide_whitespace_on_char_boundaries() {
        // CMRC 2018 passages: Chinese text whose only spaces are ideographic (3 bytes each).
        let line = "这是一个用来测试的句子\u{3000}".repeat(200);
        let parts = split_long_line(&line, 64);
        assert!(parts.len() > 1);
        assert_eq!(parts.concat(), line);
        assert!(parts.iter().all(|p| p.len() <= 64 && !p.is_empty()));
        assert!(
            parts[..parts.len() - 1]
                .iter()
                .all(|p| p.ends_with('\u{3000}'))
        );
    }

    #[test]
    fn windows_cover_every_leaf_unit_without_gaps_and_slice_exactly() {
        let mut doc = String::from("# Top\n\n");
        for s in 0..6 {
            doc.push_str(&format!("## Section {s}\n\n"));
            for p in 0..15 {
                doc.push_str(&format!(
                    "Paragraph {p} of section {s} says something about retrieval and windows.\n\n"
                ));
            }
        }
        let (units, chunks) = chunk_doc(
            Format::Markdown,
            &doc,
            ChunkOptions {
                target_tokens: 120,
                soft_ceiling_tokens: 200,
            },
        );
        let mut covered = Vec::new();
        for chunk in &chunks {
            assert_eq!(&doc[chunk.span.byte_start..chunk.span.byte_end], chunk.text);
            assert!(chunk.token_count <= 200, "{}", chunk.token_count);
            covered.extend((chunk.first_unit..=chunk.last_unit).filter(|&i| units[i].is_leaf));
        }
        let leaves: Vec<usize> = units
            .iter()
            .enumerate()
            .filter(|(_, u)| u.is_leaf)
            .map(|(i, _)| i)
            .collect();
        assert_eq!(covered, leaves);
        // Windows never cross a section: each chunk's units share one parent.
        for chunk in &chunks {
            let parent = units[chunk.first_unit].parent;
            assert!(
                (chunk.first_unit..=chunk.last_unit)
                    .filter(|&i| units[i].is_leaf)
                    .all(|i| units[i].parent == parent)
            );
        }
    }

    #[test]
    fn oversize_units_split_on_lines_with_exact_spans() {
        let body: String = (0..400)
            .map(|i| format!("line {i} of a very long paragraph without blank lines\n"))
            .collect();
        let (_, chunks) = chunk_doc(Format::Text, &body, ChunkOptions::default());
        assert!(chunks.len() > 1);
        for chunk in &chunks {
            assert_eq!(
                &body[chunk.span.byte_start..chunk.span.byte_end],
                chunk.text
            );
            assert!(chunk.token_count <= 512 + 20);
        }
        assert_eq!(chunks[0].span.byte_start, 0);
        assert_eq!(chunks.last().unwrap().span.byte_end, body.trim_end().len());
        // The pieces of one paragraph rank together.
        assert!(chunks.iter().all(|c| c.owner_key == chunks[0].owner_key));
    }

    #[test]
    fn each_window_of_plain_text_ranks_on_its_own() {
        let body: String = (0..300)
            .map(|i| format!("Paragraph {i} says something about topic {i}.\n\n"))
            .collect();
        let (_, chunks) = chunk_doc(Format::Text, &body, ChunkOptions::default());
        assert!(chunks.len() > 2);
        let owners: std::collections::HashSet<&str> =
            chunks.iter().map(|c| c.owner_key.as_str()).collect();
        assert_eq!(owners.len(), chunks.len());
    }

    #[test]
    fn json_records_never_share_a_window() {
        let text = "{\"_id\":\"a\",\"t\":\"one\"}\n{\"_id\":\"b\",\"t\":\"two\"}\n";
        let (_, chunks) = chunk_doc(Format::Jsonl, text, ChunkOptions::default());
        assert_eq!(chunks.len(), 2);
        assert_eq!(chunks[1].text, "two");
        assert_eq!(chunks[1].owner_key, "r1");
    }

    #[test]
    fn a_large_function_is_cut_between_statements_with_its_signature_in_every_capsule() {
        // Multi-line statements: a line cut would land inside them.
        let mut source = String::from(
            "import os\n\n\n@trace\ndef big(alpha, beta):\n    \"\"\"A long function.\"\"\"\n",
        );
        for i in 0..60 {
            source.push_str(&format!(
                "    value_{i} = compute(\n        alpha + {i},\n        beta * {i},\n        os.sep,\n    )\n"
            ));
        }
        source.push_str("    return alpha\n");
        let language = crate::code::Language::Python;
        let parsed = crate::code::extract(language, &source, "m.py");
        let tokens: Vec<usize> = parsed
            .units
            .iter()
            .map(|u| {
                if u.is_leaf {
                    tokenize::count(&u.text)
                } else {
                    0
                }
            })
            .collect();
        let options = ChunkOptions {
            target_tokens: 200,
            soft_ceiling_tokens: 300,
        };
        let chunks = windows(
            &source,
            Format::Code(language),
            "m",
            &parsed.units,
            &tokens,
            options,
        );
        let big: Vec<&Chunk> = chunks
            .iter()
            .filter(|c| c.capsule.heading_path.last().map(String::as_str) == Some("big"))
            .collect();
        assert!(big.len() > 3, "{} windows", big.len());
        for (i, chunk) in big.iter().enumerate() {
            // The first window holds the declaration in its text; the others in their capsule.
            let signature = (i > 0).then_some("def big(alpha, beta):");
            assert_eq!(chunk.capsule.signature.as_deref(), signature);
            assert!(
                chunk
                    .capsule
                    .signature
                    .as_deref()
                    .is_some_and(|s| s.contains("def big(alpha, beta):"))
                    || i == 0
            );
            assert!(i > 0 || chunk.text.contains("def big(alpha, beta):"));
            assert_eq!(
                &source[chunk.span.byte_start..chunk.span.byte_end],
                chunk.text
            );
            if i > 0 {
                assert!(
                    chunk.text.starts_with("value_") || chunk.text.starts_with("return"),
                    "cut mid-statement: {:?}",
                    &chunk.text[..20]
                );
            }
            assert!(chunk.token_count <= 300);
        }
        assert!(big[0].text.starts_with("@trace\ndef big"));
        assert!(big.last().unwrap().text.ends_with("return alpha"));
    }
}
