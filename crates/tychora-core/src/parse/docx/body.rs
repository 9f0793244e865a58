//! One WordprocessingML part (the body, footnotes, endnotes, comments, a header or footer) walked
//! into blocks: paragraphs with their style, outline level and list marker; tables as rows of
//! cells with their spans; text boxes set aside. Elements are matched by local name, so the
//! Transitional and Strict namespaces read the same.

use quick_xml::Reader;
use quick_xml::events::Event;

use super::math;
use super::styles::{Numbering, Styles};
use super::visibility::{self, RunLook};
use super::{Block, BlockKind, Cell, TableRow, attr, local};

#[derive(Default)]
struct Para {
    style: Option<String>,
    outline: Option<u8>,
    num_id: Option<String>,
    ilvl: u8,
    /// The text a reader sees.
    text: String,
    index: usize,
    /// `w:pPr/w:shd`: what the paragraph paints under its runs.
    shading: Option<String>,
    /// Runs a reader cannot see, with why, in order; each becomes a block of its own.
    hidden: Vec<(&'static str, String)>,
    /// The last text pushed was hidden: hidden text after it continues the same block.
    hidden_open: bool,
}

impl Para {
    fn push(&mut self, text: &str, hidden: Option<&'static str>) {
        match hidden {
            Some(why) => {
                match self.hidden.last_mut() {
                    Some((w, t)) if self.hidden_open && *w == why => t.push_str(text),
                    _ => self.hidden.push((why, text.to_string())),
                }
                self.hidden_open = true;
            }
            None => {
                self.text.push_str(text);
                // A space between two hidden runs keeps them one block.
                if self.hidden_open && text.trim().is_empty() {
                    if let Some((_, t)) = self.hidden.last_mut() {
                        t.push_str(text);
                    }
                } else {
                    self.hidden_open = false;
                }
            }
        }
    }
}

/// The run being read: its own properties and character style.
#[derive(Default)]
struct Run {
    look: RunLook,
    style: Option<String>,
}

/// What a text box's shape paints under its text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
enum BoxFill {
    /// A fill from the shape's theme style, or none said: the colour under the text is not known.
    #[default]
    Unknown,
    /// No fill: what lies under the shape shows through.
    Clear,
    /// A solid colour, `RRGGBB`.
    Colour(String),
}

/// What decides, as the part is read, whether text can be seen.
struct Sight {
    /// The run being read.
    run: Option<Run>,
    /// The page's colour (`w:background`), `RRGGBB`.
    page: String,
    /// The fill of the shape being read (its text box, if it has one, comes after it).
    shape: BoxFill,
    /// The fills of the text boxes the reader is in, innermost last.
    boxes: Vec<BoxFill>,
}

#[derive(Default)]
struct CellCtx {
    text: String,
    span: usize,
    continues_above: bool,
    /// `w:tcPr/w:shd`: what the cell paints under its paragraphs.
    shading: Option<String>,
    /// Its paragraphs and tables as blocks, for a one-cell table that only lays out its content.
    inner: Vec<Inner>,
}

/// Content of a cell, kept whole in case its table turns out to be a layout frame.
enum Inner {
    Block(Block),
    Table(TableCtx),
}

#[derive(Default)]
struct RowCtx {
    cells: Vec<CellCtx>,
    header: bool,
}

#[derive(Default)]
struct TableCtx {
    rows: Vec<RowCtx>,
}

/// What walking a part produced.
#[derive(Default)]
pub(super) struct Walked {
    pub blocks: Vec<Block>,
    pub textboxes: Vec<Block>,
    pub external_links: usize,
    pub pictures: Vec<Picture>,
}

/// A picture the part draws (DrawingML `a:blip r:embed`, or VML `v:imagedata r:id`): the
/// relationship naming its bytes, its alt text, and where it sits.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Picture {
    pub rid: String,
    /// `wp:docPr descr` (or VML `o:title`).
    pub alt: Option<String>,
    /// `wp:docPr title`.
    pub title: Option<String>,
    /// The paragraph (1-based, in the part) it is anchored in.
    pub paragraph: usize,
    /// The number of the part's blocks before it: its place in reading order.
    pub before: usize,
}

/// Alt text of the drawing being read (`wp:docPr` comes before the picture it describes).
type PendingAlt = (Option<String>, Option<String>);

fn note_picture(
    e: &quick_xml::events::BytesStart<'_>,
    name: &str,
    pending: &mut PendingAlt,
    out: &mut Walked,
    paragraph: usize,
) {
    let present = |v: Option<String>| v.map(|v| v.trim().to_string()).filter(|v| !v.is_empty());
    match name {
        "docPr" => *pending = (present(attr(e, "descr")), present(attr(e, "title"))),
        "blip" | "imagedata" => {
            let rid = if name == "blip" {
                attr(e, "embed")
            } else {
                attr(e, "id")
            };
            let Some(rid) = rid else { return };
            let (alt, title) = std::mem::take(pending);
            out.pictures.push(Picture {
                rid,
                alt: alt.or_else(|| present(attr(e, "title")).filter(|_| name == "imagedata")),
                title,
                paragraph,
                before: out.blocks.len(),
            });
        }
        _ => {}
    }
}

/// Notes and comments whose type marks them as separators carry no text of the document.
fn is_separator(kind: Option<&str>) -> bool {
    matches!(
        kind,
        Some("separator" | "continuationSeparator" | "continuationNotice")
    )
}

/// Walks `xml` (the part `part`) into blocks. Malformed XML ends the walk with what was read and
/// a diagnostic.
pub(super) fn walk(
    xml: &[u8],
    part: &str,
    styles: &Styles,
    numbering: &mut Numbering,
    diagnostics: &mut Vec<String>,
) -> Walked {
    let mut out = Walked::default();
    let mut reader = Reader::from_reader(xml);
    let mut buf = Vec::new();
    let mut names: Vec<String> = Vec::new();
    let mut paras: Vec<Para> = Vec::new();
    let mut tables: Vec<TableCtx> = Vec::new();
    let mut paragraphs = 0usize;
    let mut table_count = 0usize;
    let mut textbox_depth = 0usize;
    let mut in_text = false;
    let mut pending_alt = PendingAlt::default();
    // Depth at which a skipped subtree (a separator note) started.
    let mut skipping: Option<usize> = None;
    // The equation being read (`m:oMath`, `m:oMathPara`): its elements build a tree, not text.
    let mut equation: Option<math::Builder> = None;
    // The run being read, the page's colour, text boxes' fills: to tell text no one sees.
    let mut sight = Sight {
        run: None,
        page: "FFFFFF".into(),
        shape: BoxFill::Unknown,
        boxes: Vec::new(),
    };
    // Hidden blocks of paragraphs inside a top-level block (a table's cells, a text box): they
    // follow that block once it is done.
    let mut pending: Vec<Block> = Vec::new();
    loop {
        let event = match reader.read_event_into(&mut buf) {
            Ok(event) => event,
            Err(e) => {
                diagnostics.push(format!(
                    "{part}: malformed XML at byte {} ({e}); the rest of the part is not read",
                    reader.buffer_position()
                ));
                break;
            }
        };
        match event {
            Event::Start(e) => {
                let name = local(e.name().as_ref()).to_string();
                names.push(name.clone());
                if skipping.is_some() {
                    buf.clear();
                    continue;
                }
                if let Some(b) = equation.as_mut() {
                    b.open(&e);
                    buf.clear();
                    continue;
                }
                if name == "oMathPara" || name == "oMath" {
                    equation = Some(math::Builder::start(&e));
                    buf.clear();
                    continue;
                }
                // `names` ends with this element: its parent is the one before.
                let up = |n: usize| {
                    let at = names.len().checked_sub(n)?;
                    names.get(at).map(String::as_str)
                };
                let scope = Scope {
                    parent: up(2),
                    grandparent: up(3),
                };
                look_property(&name, &e, scope, &mut paras, &mut tables, &mut sight);
                match name.as_str() {
                    "footnote" | "endnote" if is_separator(attr(&e, "type").as_deref()) => {
                        skipping = Some(names.len());
                    }
                    "r" => sight.run = Some(Run::default()),
                    // `mc:AlternateContent` holds the same content twice (DrawingML in the
                    // choice, VML in the fallback): read the choice only.
                    "Fallback" => skipping = Some(names.len()),
                    "p" => {
                        paragraphs += 1;
                        paras.push(Para {
                            index: paragraphs,
                            ..Para::default()
                        });
                    }
                    "t" => in_text = true,
                    "txbxContent" => {
                        textbox_depth += 1;
                        let fill = std::mem::take(&mut sight.shape);
                        sight.boxes.push(fill);
                    }
                    "tbl" => tables.push(TableCtx::default()),
                    "tr" => {
                        if let Some(t) = tables.last_mut() {
                            t.rows.push(RowCtx::default());
                        }
                    }
                    "tc" => {
                        if let Some(row) = tables.last_mut().and_then(|t| t.rows.last_mut()) {
                            row.cells.push(CellCtx {
                                span: 1,
                                ..CellCtx::default()
                            });
                        }
                    }
                    "hyperlink" if attr(&e, "id").is_some() => out.external_links += 1,
                    "docPr" | "blip" | "imagedata" => {
                        let at = paras.last().map_or(paragraphs, |p| p.index);
                        note_picture(&e, &name, &mut pending_alt, &mut out, at);
                    }
                    _ => {}
                }
            }
            Event::Empty(e) => {
                if skipping.is_some() {
                    buf.clear();
                    continue;
                }
                if let Some(b) = equation.as_mut() {
                    b.empty(&e);
                    buf.clear();
                    continue;
                }
                let parent = names.last().map(String::as_str);
                let qname = e.name();
                let name = local(qname.as_ref());
                let val = || attr(&e, "val");
                let scope = Scope {
                    parent,
                    grandparent: names
                        .len()
                        .checked_sub(2)
                        .and_then(|i| names.get(i))
                        .map(String::as_str),
                };
                look_property(name, &e, scope, &mut paras, &mut tables, &mut sight);
                // Tabs, breaks and hyphens are text of their run, hidden with it.
                let hidden = matches!(name, "tab" | "br" | "cr" | "noBreakHyphen")
                    .then(|| hidden_now(styles, &paras, &tables, &sight))
                    .flatten();
                match (name, parent) {
                    ("pStyle", _) => {
                        if let Some(p) = paras.last_mut() {
                            p.style = val();
                        }
                    }
                    ("outlineLvl", Some("pPr")) => {
                        if let Some(p) = paras.last_mut() {
                            p.outline = val().and_then(|v| v.parse().ok());
                        }
                    }
                    ("numId", Some("numPr")) => {
                        if let Some(p) = paras.last_mut() {
                            p.num_id = val().filter(|v| v != "0");
                        }
                    }
                    ("ilvl", Some("numPr")) => {
                        if let Some(p) = paras.last_mut() {
                            p.ilvl = val().and_then(|v| v.parse().ok()).unwrap_or(0);
                        }
                    }
                    ("tab", Some("r")) => push_text(&mut paras, "\t", hidden),
                    ("br" | "cr", Some("r")) => push_text(&mut paras, "\n", hidden),
                    ("noBreakHyphen", _) => push_text(&mut paras, "-", hidden),
                    ("tblHeader", Some("trPr")) => {
                        if let Some(row) = tables.last_mut().and_then(|t| t.rows.last_mut()) {
                            row.header = val().is_none_or(|v| v != "0" && v != "false");
                        }
                    }
                    ("gridSpan", _) => {
                        if let Some(cell) = current_cell(&mut tables) {
                            cell.span = val().and_then(|v| v.parse().ok()).unwrap_or(1).max(1);
                        }
                    }
                    ("vMerge", _) => {
                        if let Some(cell) = current_cell(&mut tables) {
                            cell.continues_above = val().is_none_or(|v| v == "continue");
                        }
                    }
                    ("docPr" | "blip" | "imagedata", _) => {
                        let at = paras.last().map_or(paragraphs, |p| p.index);
                        note_picture(&e, name, &mut pending_alt, &mut out, at);
                    }
                    _ => {}
                }
            }
            Event::Text(t) if equation.is_some() && skipping.is_none() => {
                if let Some(b) = equation.as_mut() {
                    b.text(&t.xml10_content());
                }
            }
            Event::GeneralRef(r) if equation.is_some() && skipping.is_none() => {
                if let Some(b) = equation.as_mut() {
                    b.text(&general_ref(&r));
                }
            }
            Event::Text(t) if in_text && skipping.is_none() => {
                let hidden = hidden_now(styles, &paras, &tables, &sight);
                push_text(&mut paras, &t.xml10_content(), hidden);
            }
            Event::GeneralRef(r) if in_text && skipping.is_none() => {
                let hidden = hidden_now(styles, &paras, &tables, &sight);
                push_text(&mut paras, &general_ref(&r), hidden);
            }
            Event::End(e) => {
                let name = local(e.name().as_ref()).to_string();
                let depth = names.len();
                names.pop();
                if let Some(start) = skipping {
                    if depth == start {
                        skipping = None;
                    }
                    buf.clear();
                    continue;
                }
                if let Some(b) = equation.as_mut() {
                    if let Some(root) = b.close() {
                        equation = None;
                        let tex = math::latex(&root);
                        if !tex.is_empty() {
                            push_text(&mut paras, &format!(" {tex} "), None);
                        }
                    }
                    buf.clear();
                    continue;
                }
                match name.as_str() {
                    "t" => in_text = false,
                    "r" => sight.run = None,
                    "txbxContent" => {
                        textbox_depth = textbox_depth.saturating_sub(1);
                        sight.boxes.pop();
                    }
                    "p" => {
                        let Some(mut para) = paras.pop() else {
                            continue;
                        };
                        let home = if textbox_depth > 0 { "textbox" } else { part };
                        for (why, text) in std::mem::take(&mut para.hidden) {
                            let text = text.trim();
                            if !text.is_empty() {
                                let mut block =
                                    Block::paragraph(text.to_string(), home, para.index);
                                block.hidden = Some(why.to_string());
                                pending.push(block);
                            }
                        }
                        let at_top = textbox_depth == 0 && tables.is_empty() && paras.is_empty();
                        let text = para.text.trim().to_string();
                        if text.is_empty() {
                            if at_top {
                                out.blocks.append(&mut pending);
                            }
                            continue;
                        }
                        if textbox_depth > 0 {
                            out.textboxes
                                .push(Block::paragraph(text, "textbox", para.index));
                        } else if let Some(cell) = current_cell(&mut tables) {
                            if !cell.text.is_empty() {
                                cell.text.push('\n');
                            }
                            cell.text.push_str(&text);
                            cell.inner.push(Inner::Block(paragraph_block(
                                para, text, part, styles, numbering,
                            )));
                        } else if let Some(parent) = paras.last_mut() {
                            // A paragraph nested in another outside a text box (rare): one text.
                            parent.text.push('\n');
                            parent.text.push_str(&text);
                        } else {
                            out.blocks
                                .push(paragraph_block(para, text, part, styles, numbering));
                            out.blocks.append(&mut pending);
                        }
                    }
                    "tbl" => {
                        let Some(table) = tables.pop() else { continue };
                        // A one-cell table is a frame around its content (docling reads it so
                        // too): its paragraphs and tables stand on their own.
                        let content = match layout_frame(table) {
                            Ok(inner) => inner,
                            Err(table) => vec![Inner::Table(table)],
                        };
                        if let Some(cell) = current_cell(&mut tables) {
                            // A nested table flattens into its cell's text, a row per line.
                            for item in &content {
                                let lines: Vec<String> = match item {
                                    Inner::Block(b) => vec![b.text.clone()],
                                    Inner::Table(t) => t
                                        .rows
                                        .iter()
                                        .map(|row| {
                                            let line: Vec<&str> =
                                                row.cells.iter().map(|c| c.text.as_str()).collect();
                                            line.join(" | ")
                                        })
                                        .collect(),
                                };
                                for line in lines {
                                    if !cell.text.is_empty() {
                                        cell.text.push('\n');
                                    }
                                    cell.text.push_str(&line);
                                }
                            }
                            cell.inner.extend(content);
                            continue;
                        }
                        for item in content {
                            match item {
                                Inner::Block(b) => out.blocks.push(b),
                                Inner::Table(t) => {
                                    table_count += 1;
                                    out.blocks.extend(table_rows(t, table_count, part));
                                }
                            }
                        }
                        if paras.is_empty() {
                            out.blocks.append(&mut pending);
                        }
                    }
                    _ => {}
                }
            }
            Event::Eof => break,
            _ => {}
        }
        buf.clear();
    }
    // Malformed XML may end the walk inside a block: its hidden text is kept all the same.
    out.blocks.append(&mut pending);
    out
}

/// Where a property element sits: its parent's and grandparent's local names.
#[derive(Clone, Copy)]
struct Scope<'a> {
    parent: Option<&'a str>,
    grandparent: Option<&'a str>,
}

/// Reads a property that decides whether text can be seen: a run's (`w:r/w:rPr/…`), a
/// paragraph's or a cell's shading, a shape's fill, the page's colour. Called for empty and
/// non-empty elements alike (`<w:vanish></w:vanish>` hides as `<w:vanish/>` does).
fn look_property(
    name: &str,
    e: &quick_xml::events::BytesStart<'_>,
    scope: Scope<'_>,
    paras: &mut [Para],
    tables: &mut [TableCtx],
    sight: &mut Sight,
) {
    match (scope.parent, scope.grandparent) {
        // A DrawingML shape: its fill is what its text box's text is drawn over.
        _ if name == "wsp" => sight.shape = BoxFill::Unknown,
        (Some("solidFill"), Some("spPr")) if name == "srgbClr" => {
            sight.shape = visibility::drawing_colour(e).map_or(BoxFill::Unknown, BoxFill::Colour);
        }
        (Some("solidFill"), Some("spPr")) => sight.shape = BoxFill::Unknown,
        (Some("spPr"), _) if name == "noFill" => sight.shape = BoxFill::Clear,
        // A VML shape (documents older than DrawingML): `filled="f"`, or `fillcolor="#RRGGBB"`.
        _ if matches!(name, "shape" | "rect" | "roundrect" | "oval") => {
            let filled = attr(e, "filled").is_none_or(|f| !matches!(f.as_str(), "f" | "false"));
            let colour = attr(e, "fillcolor")
                .and_then(|c| visibility::drawing_colour_hex(c.split_whitespace().next()?));
            sight.shape = match (filled, colour) {
                (false, _) => BoxFill::Clear,
                (true, Some(c)) => BoxFill::Colour(c),
                (true, None) => BoxFill::Unknown,
            };
        }
        (Some("rPr"), Some("r")) => {
            if let Some(run) = sight.run.as_mut() {
                if name == "rStyle" {
                    run.style = attr(e, "val");
                } else {
                    run.look.set(name, e);
                }
            }
        }
        (Some("pPr"), _) if name == "shd" => {
            if let Some(p) = paras.last_mut() {
                p.shading = visibility::shading(e);
            }
        }
        (Some("tcPr"), _) if name == "shd" => {
            if let Some(cell) = current_cell(tables) {
                cell.shading = visibility::shading(e);
            }
        }
        (Some("document"), _) if name == "background" => {
            if let Some(colour) = visibility::page_colour(e) {
                sight.page = colour;
            }
        }
        _ => {}
    }
}

/// Why text pushed now cannot be seen: the run's look (document defaults, paragraph style,
/// character style, its own properties) over what lies under it (the run's shading, else the
/// paragraph's, its text box's fill, the innermost shaded cell's, the page's).
fn hidden_now(
    styles: &Styles,
    paras: &[Para],
    tables: &[TableCtx],
    sight: &Sight,
) -> Option<&'static str> {
    let para = paras.last()?;
    let style = para.style.as_deref();
    let own = sight.run.as_ref().map(|r| (&r.look, r.style.as_deref()));
    let look = styles.run_look(style, own.and_then(|(_, s)| s));
    let look = match own {
        Some((direct, _)) => look.under(direct),
        None => look,
    };
    let cell = tables
        .iter()
        .rev()
        .find_map(|t| t.rows.last()?.cells.last()?.shading.as_deref());
    let shaded = para
        .shading
        .as_deref()
        .or_else(|| styles.paragraph_shading(style));
    let under = match (shaded, sight.boxes.last()) {
        (Some(fill), _) => Some(fill),
        (None, Some(BoxFill::Colour(fill))) => Some(fill.as_str()),
        // A shape filled from its theme: the colour under its text is not known.
        (None, Some(BoxFill::Unknown)) => None,
        (None, Some(BoxFill::Clear) | None) => Some(cell.unwrap_or(&sight.page)),
    };
    look.hidden(under)
}

/// The content of a table of one row and one cell, or the table itself.
fn layout_frame(mut table: TableCtx) -> Result<Vec<Inner>, TableCtx> {
    if table.rows.len() == 1 && table.rows[0].cells.len() == 1 {
        let cell = table.rows.remove(0).cells.remove(0);
        return Ok(cell.inner);
    }
    Err(table)
}

/// An entity or character reference as the text it stands for (unknown entities stand for nothing).
fn general_ref(r: &quick_xml::events::BytesRef<'_>) -> String {
    if let Ok(Some(c)) = r.resolve_char_ref() {
        return c.to_string();
    }
    match r.as_ref() {
        "amp" => "&",
        "lt" => "<",
        "gt" => ">",
        "quot" => "\"",
        "apos" => "'",
        _ => "",
    }
    .to_string()
}

fn push_text(paras: &mut [Para], text: &str, hidden: Option<&'static str>) {
    if let Some(p) = paras.last_mut() {
        p.push(text, hidden);
    }
}

fn current_cell(tables: &mut [TableCtx]) -> Option<&mut CellCtx> {
    tables.last_mut()?.rows.last_mut()?.cells.last_mut()
}

fn paragraph_block(
    para: Para,
    text: String,
    part: &str,
    styles: &Styles,
    numbering: &mut Numbering,
) -> Block {
    let level = para
        .outline
        .filter(|l| *l < 9)
        .map(|l| l + 1)
        .or_else(|| para.style.as_deref().and_then(|s| styles.heading_level(s)));
    // Numbering set on the paragraph, or else by its style (numbered headings).
    let (num_id, ilvl) = match (&para.num_id, para.style.as_deref()) {
        (Some(num), _) => (Some(num.as_str()), para.ilvl),
        (None, Some(style)) => styles
            .numbering(style)
            .map_or((None, 0), |(num, ilvl)| (Some(num), ilvl)),
        (None, None) => (None, 0),
    };
    let marker = num_id.and_then(|num| numbering.next_marker(num, ilvl));
    let mut block = Block::paragraph(text, part, para.index);
    match (level, marker) {
        (Some(level), marker) => {
            block.kind = BlockKind::Heading;
            block.level = Some(level);
            block.marker = marker.filter(|m| !m.is_empty());
        }
        (None, Some(marker)) => {
            block.kind = BlockKind::ListItem;
            block.level = Some(ilvl + 1);
            block.marker = Some(marker).filter(|m| !m.is_empty());
        }
        (None, None) => {}
    }
    block
}

/// A table's rows as blocks: the first row, or rows marked as header rows, are the header; a cell
/// merged with the one above carries `continues_above`.
fn table_rows(table: TableCtx, number: usize, part: &str) -> Vec<Block> {
    let marked = table.rows.iter().any(|r| r.header);
    table
        .rows
        .into_iter()
        .enumerate()
        .map(|(i, row)| {
            let mut col = 0;
            let cells: Vec<Cell> = row
                .cells
                .into_iter()
                .map(|c| {
                    let cell = Cell {
                        col,
                        col_span: c.span,
                        continues_above: c.continues_above,
                        text: c.text,
                    };
                    col += c.span;
                    cell
                })
                .collect();
            let text = cells
                .iter()
                .map(|c| c.text.replace('\n', " "))
                .collect::<Vec<_>>()
                .join(" | ");
            Block {
                kind: BlockKind::TableRow,
                text,
                level: None,
                marker: None,
                part: part.to_string(),
                paragraph: 0,
                heading_path: Vec::new(),
                hidden: None,
                table: Some(TableRow {
                    table: number,
                    row: i + 1,
                    header: if marked { row.header } else { i == 0 },
                    cells,
                }),
            }
        })
        .collect()
}
