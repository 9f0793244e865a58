//! DOCX (OOXML WordprocessingML, Transitional and Strict) read directly from the package with a
//! maintained zip reader and a streaming XML reader. mammoth (the JavaScript converter DESIGN
//! names) yields HTML with no provenance (which part, which paragraph, which cell) and drops
//! headers, footers and equations; reading the parts here gives every block its place, bounds every
//! inflate, and never follows an external relationship or opens a macro.
//!
//! Blocks come out in reading order: the body (headings with their heading path, paragraphs, list
//! items with their rendered markers, table rows with their cells), then text boxes, footnotes,
//! endnotes and comments, each block naming its part. Headers and footers are furniture: kept,
//! never body blocks.

mod body;
mod math;
mod package;
mod styles;
mod visibility;

use quick_xml::events::BytesStart;

use package::Package;
use styles::{Numbering, Styles};

/// Bounds on what a package may inflate to.
#[derive(Debug, Clone, Copy)]
pub struct DocxLimits {
    /// Entries in the archive.
    pub max_parts: usize,
    /// Bytes one part may inflate to.
    pub max_part_bytes: u64,
    /// Bytes all parts read may inflate to together.
    pub max_total_bytes: u64,
    /// Inflated ÷ compressed size, for parts over 1 MiB.
    pub max_ratio: u64,
}

impl Default for DocxLimits {
    fn default() -> Self {
        Self {
            max_parts: 2_000,
            max_part_bytes: 64 << 20,
            max_total_bytes: 256 << 20,
            max_ratio: 100,
        }
    }
}

/// Why a file could not be read as a DOCX at all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DocxFailure {
    /// Not a readable OOXML package (not a zip, no main part, broken entries).
    Malformed(String),
    /// A bound in [`DocxLimits`] was reached.
    Limit(String),
}

impl std::fmt::Display for DocxFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Malformed(why) => write!(f, "not a readable DOCX: {why}"),
            Self::Limit(why) => write!(f, "DOCX over a limit: {why}"),
        }
    }
}

/// What a block is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockKind {
    /// A heading (a heading style or an outline level).
    Heading,
    /// A body paragraph.
    Paragraph,
    /// A numbered or bulleted list item.
    ListItem,
    /// One row of a table.
    TableRow,
}

/// One cell of a table row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cell {
    /// Its first grid column (0-based).
    pub col: usize,
    /// Grid columns it spans.
    pub col_span: usize,
    /// Whether it continues the cell above (a vertical merge).
    pub continues_above: bool,
    /// Its text (paragraphs joined by newlines).
    pub text: String,
}

/// A table row's place and cells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableRow {
    /// The table's number in its part (1-based).
    pub table: usize,
    /// The row's number in its table (1-based).
    pub row: usize,
    /// Whether it is a header row.
    pub header: bool,
    /// Its cells.
    pub cells: Vec<Cell>,
}

/// One block of a document, with its place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// What it is.
    pub kind: BlockKind,
    /// Its text.
    pub text: String,
    /// A heading's level (1 = top) or a list item's depth (1 = outermost).
    pub level: Option<u8>,
    /// A list item's (or numbered heading's) rendered marker: `1.`, `a)`, `•`.
    pub marker: Option<String>,
    /// The part it came from: `body`, `textbox`, `footnotes`, `endnotes`, `comments`,
    /// `header1`, `footer2`, ….
    pub part: String,
    /// The index (1-based) of its `w:p` in the part; 0 for table rows.
    pub paragraph: usize,
    /// The headings above it in the body.
    pub heading_path: Vec<String>,
    /// A table row's place and cells.
    pub table: Option<TableRow>,
    /// Why a reader of the document cannot see this text (`marked hidden (w:vanish)`, `same
    /// colour as its background`, …): runs Word keeps but never shows, set apart from the
    /// paragraph they sit in as a block of their own.
    pub hidden: Option<String>,
}

impl Block {
    /// A heading as a person cites it, its number first: "1.2 Scope".
    #[must_use]
    pub fn numbered_text(&self) -> String {
        match &self.marker {
            Some(m) => format!("{} {}", m.trim_end_matches('.'), self.text),
            None => self.text.clone(),
        }
    }

    fn paragraph(text: String, part: &str, paragraph: usize) -> Self {
        Self {
            kind: BlockKind::Paragraph,
            text,
            level: None,
            marker: None,
            part: part.to_string(),
            paragraph,
            heading_path: Vec::new(),
            table: None,
            hidden: None,
        }
    }
}

/// A DOCX read into blocks.
#[derive(Debug, Default)]
pub struct Document {
    /// Body blocks, then text boxes, footnotes, endnotes and comments.
    pub blocks: Vec<Block>,
    /// Headers and footers: kept, never body blocks.
    pub furniture: Vec<Block>,
    /// Relationships to targets outside the package (recorded, never fetched).
    pub external_targets: Vec<String>,
    /// What was left out and why.
    pub diagnostics: Vec<String>,
    /// Pictures embedded in the package, in the parts that draw them.
    pub pictures: Vec<EmbeddedPicture>,
}

/// A picture a part draws, with its bytes from the package.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmbeddedPicture {
    /// The part that draws it: `body`, `footnotes`, `header1`, ….
    pub part: String,
    /// The paragraph (1-based, in the part) it is anchored in.
    pub paragraph: usize,
    /// Body pictures: the index in `blocks` of the first block after it.
    pub before: Option<usize>,
    /// `rId7 → word/media/image2.png`.
    pub relationship: String,
    /// Its alt text (`descr`).
    pub alt: Option<String>,
    /// Its title.
    pub title: Option<String>,
    /// Its bytes, as the package holds them.
    pub bytes: Vec<u8>,
}

/// Pictures read from one package at most; more are reported, not read.
const MAX_PICTURES: usize = 1_000;

/// Reads the bytes of the pictures `walked` names through `rels` (the part's relationships),
/// each package entry once however often it is drawn.
fn embed_pictures(
    package: &mut Package<'_>,
    rels: &[package::Relationship],
    pictures: Vec<body::Picture>,
    part: &str,
    body: bool,
    doc: &mut Document,
) -> Result<(), DocxFailure> {
    for picture in pictures {
        let Some(rel) = rels.iter().find(|r| r.id == picture.rid) else {
            doc.diagnostics.push(format!(
                "{part}: a picture names relationship {}, which the part does not have; skipped",
                picture.rid
            ));
            continue;
        };
        // A linked picture's target is outside the package: recorded, never fetched.
        if rel.external {
            continue;
        }
        if doc.pictures.len() >= MAX_PICTURES {
            doc.diagnostics.push(format!(
                "more than {MAX_PICTURES} pictures; the rest are not kept"
            ));
            break;
        }
        let known = doc
            .pictures
            .iter()
            .find(|p| p.relationship.ends_with(&format!("→ {}", rel.target)))
            .map(|p| p.bytes.clone());
        let bytes = match known {
            Some(bytes) => bytes,
            None => match package.read(&rel.target)? {
                Some(bytes) => bytes,
                None => {
                    doc.diagnostics.push(format!(
                        "{part}: picture {} names {}, which the package does not hold; skipped",
                        picture.rid, rel.target
                    ));
                    continue;
                }
            },
        };
        doc.pictures.push(EmbeddedPicture {
            part: part.to_string(),
            paragraph: picture.paragraph,
            before: body.then_some(picture.before),
            relationship: format!("{} → {}", picture.rid, rel.target),
            alt: picture.alt,
            title: picture.title,
            bytes,
        });
    }
    Ok(())
}

/// Reads a DOCX package into blocks.
///
/// # Errors
/// [`DocxFailure`] when the bytes are not a readable OOXML package or a bound is reached.
pub fn read(bytes: &[u8], limits: DocxLimits) -> Result<Document, DocxFailure> {
    if bytes.starts_with(&[0xD0, 0xCF, 0x11, 0xE0]) {
        return Err(DocxFailure::Malformed(
            "an OLE compound file: a password-protected (encrypted) or legacy .doc document".into(),
        ));
    }
    let mut package = Package::open(bytes, limits)?;
    let mut doc = Document::default();
    let root = package.relationships("", &mut doc.diagnostics)?;
    let main = root
        .iter()
        .find(|r| r.kind == "officeDocument" && !r.external)
        .map(|r| r.target.clone())
        .or_else(|| {
            package::content_types(&mut package).ok().and_then(|types| {
                types
                    .into_iter()
                    .find(|(_, kind)| kind.contains("wordprocessingml.document.main"))
                    .map(|(part, _)| part)
            })
        })
        .ok_or_else(|| DocxFailure::Malformed("no main document part".into()))?;
    let rels = package.relationships(&main, &mut doc.diagnostics)?;
    for r in rels.iter().filter(|r| r.external) {
        doc.external_targets.push(r.target.clone());
    }
    if package
        .names()
        .iter()
        .any(|n| n.ends_with("vbaProject.bin"))
    {
        doc.diagnostics
            .push("the package holds macros (vbaProject.bin); never read".into());
    }
    let part_of = |kind: &str| {
        rels.iter()
            .find(|r| r.kind == kind && !r.external)
            .map(|r| r.target.clone())
    };
    let styles = match part_of("styles") {
        Some(name) => package
            .read(&name)?
            .map(|xml| Styles::parse(&xml))
            .unwrap_or_default(),
        None => Styles::default(),
    };
    let mut numbering = match part_of("numbering") {
        Some(name) => package
            .read(&name)?
            .map(|xml| Numbering::parse(&xml))
            .unwrap_or_default(),
        None => Numbering::default(),
    };
    let Some(main_xml) = package.read(&main)? else {
        return Err(DocxFailure::Malformed(format!(
            "the main part {main} is missing"
        )));
    };
    let body = body::walk(
        &main_xml,
        "body",
        &styles,
        &mut numbering,
        &mut doc.diagnostics,
    );
    doc.blocks = with_heading_paths(body.blocks);
    embed_pictures(&mut package, &rels, body.pictures, "body", true, &mut doc)?;
    let mut textboxes = body.textboxes;
    for kind in ["footnotes", "endnotes", "comments"] {
        if let Some(name) = part_of(kind)
            && let Some(xml) = package.read(&name)?
        {
            let walked = body::walk(&xml, kind, &styles, &mut numbering, &mut doc.diagnostics);
            textboxes.extend(walked.textboxes);
            doc.blocks.extend(walked.blocks);
            if !walked.pictures.is_empty() {
                let part_rels = package.relationships(&name, &mut doc.diagnostics)?;
                embed_pictures(
                    &mut package,
                    &part_rels,
                    walked.pictures,
                    kind,
                    false,
                    &mut doc,
                )?;
            }
        }
    }
    doc.blocks.splice(
        doc.blocks
            .iter()
            .position(|b| b.part != "body")
            .unwrap_or(doc.blocks.len())
            ..doc
                .blocks
                .iter()
                .position(|b| b.part != "body")
                .unwrap_or(doc.blocks.len()),
        textboxes,
    );
    let mut furniture: Vec<(String, String)> = rels
        .iter()
        .filter(|r| !r.external && (r.kind == "header" || r.kind == "footer"))
        .map(|r| (r.kind.clone(), r.target.clone()))
        .collect();
    furniture.sort_by(|a, b| a.1.cmp(&b.1));
    for (i, (kind, name)) in furniture.into_iter().enumerate() {
        if let Some(xml) = package.read(&name)? {
            let label = format!("{kind}{}", i + 1);
            let walked = body::walk(&xml, &label, &styles, &mut numbering, &mut doc.diagnostics);
            // Text a header hides is no running header a reader sees: flagged with the rest.
            let (hidden, shown): (Vec<Block>, Vec<Block>) =
                walked.blocks.into_iter().partition(|b| b.hidden.is_some());
            doc.furniture.extend(shown);
            doc.blocks.extend(hidden);
            if !walked.pictures.is_empty() {
                let part_rels = package.relationships(&name, &mut doc.diagnostics)?;
                embed_pictures(
                    &mut package,
                    &part_rels,
                    walked.pictures,
                    &label,
                    false,
                    &mut doc,
                )?;
            }
        }
    }
    Ok(doc)
}

/// Each body block gets the headings above it; a heading's path ends with itself (as a Markdown
/// heading's section does).
fn with_heading_paths(blocks: Vec<Block>) -> Vec<Block> {
    let mut path: Vec<(u8, String)> = Vec::new();
    blocks
        .into_iter()
        .map(|mut b| {
            if b.kind == BlockKind::Heading {
                let level = b.level.unwrap_or(1);
                path.retain(|(l, _)| *l < level);
                path.push((level, b.numbered_text()));
                b.heading_path = path.iter().map(|(_, t)| t.clone()).collect();
            } else {
                b.heading_path = path.iter().map(|(_, t)| t.clone()).collect();
            }
            b
        })
        .collect()
}

/// An element's local name (the part after any namespace prefix).
fn local(name: &str) -> &str {
    name.rsplit(':').next().unwrap_or(name)
}

/// An attribute's value by local name, unescaped.
fn attr(e: &BytesStart<'_>, name: &str) -> Option<String> {
    e.attributes()
        .flatten()
        .find(|a| local(a.key.as_ref()) == name)
        .and_then(|a| {
            a.normalized_value(quick_xml::XmlVersion::Implicit1_0)
                .ok()
                .map(|v| v.into_owned())
        })
}

#[cfg(test)]
mod tests;
