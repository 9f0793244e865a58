//! Markdown via pulldown-cmark's offset iterator: every unit is an exact byte range of the source.
//!
//! Units: a `section` per heading (container, spans the heading's subtree), and leaf units for
//! headings, paragraphs, list items of top-level lists, code blocks, block quotes, HTML blocks and
//! table rows (each row's text keeps the table's header row).

use crate::unit::UnitType;
use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

use super::slugify;
use super::trim_end;
use crate::unit::{Identifier, LineIndex, Parsed, Unit};

struct OpenSection {
    ordinal: usize,
    level: usize,
}

pub(super) fn parse(text: &str, index: &LineIndex) -> Parsed {
    let options = Options::ENABLE_TABLES
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS;
    let mut units: Vec<Unit> = Vec::new();
    let mut sections: Vec<OpenSection> = Vec::new();
    let mut headings: Vec<String> = Vec::new();
    let mut title = None;
    let mut depth = 0usize;
    // (level, start, end) of the heading being read, and its text so far.
    let mut heading: Option<(usize, usize, usize)> = None;
    let mut heading_text = String::new();
    let mut in_list = false;
    let mut in_table = false;
    let mut table_header: Option<String> = None;

    let leaf = |unit_type: UnitType,
                start: usize,
                end: usize,
                sections: &[OpenSection],
                headings: &[String]|
     -> Option<Unit> {
        let end = trim_end(text, start, end);
        (end > start).then(|| {
            Unit::leaf(
                unit_type,
                sections.last().map(|s| s.ordinal),
                index.span(start, end),
                text[start..end].to_string(),
                headings.to_vec(),
            )
        })
    };

    for (event, range) in Parser::new_ext(text, options).into_offset_iter() {
        match event {
            Event::Start(tag) => {
                match (&tag, depth) {
                    (Tag::Heading { level, .. }, 0) => {
                        heading = Some((*level as usize, range.start, range.end));
                        heading_text.clear();
                    }
                    (Tag::Paragraph, 0) => units.extend(leaf(
                        UnitType::Paragraph,
                        range.start,
                        range.end,
                        &sections,
                        &headings,
                    )),
                    (Tag::CodeBlock(_), 0) => units.extend(leaf(
                        UnitType::CodeBlock,
                        range.start,
                        range.end,
                        &sections,
                        &headings,
                    )),
                    (Tag::BlockQuote(_), 0) => units.extend(leaf(
                        UnitType::BlockQuote,
                        range.start,
                        range.end,
                        &sections,
                        &headings,
                    )),
                    (Tag::HtmlBlock, 0) => units.extend(leaf(
                        UnitType::Html,
                        range.start,
                        range.end,
                        &sections,
                        &headings,
                    )),
                    (Tag::FootnoteDefinition(_), 0) => units.extend(leaf(
                        UnitType::Footnote,
                        range.start,
                        range.end,
                        &sections,
                        &headings,
                    )),
                    (Tag::List(_), 0) => in_list = true,
                    (Tag::Item, 1) if in_list => units.extend(leaf(
                        UnitType::ListItem,
                        range.start,
                        range.end,
                        &sections,
                        &headings,
                    )),
                    (Tag::Table(_), 0) => in_table = true,
                    (Tag::TableHead, 1) if in_table => {
                        let end = trim_end(text, range.start, range.end);
                        table_header = Some(text[range.start..end].to_string());
                    }
                    (Tag::TableRow, 1) if in_table => {
                        if let Some(mut unit) = leaf(
                            UnitType::TableRow,
                            range.start,
                            range.end,
                            &sections,
                            &headings,
                        ) {
                            if let Some(header) = &table_header {
                                unit.text = format!("{header}\n{}", unit.text);
                                unit.table_header = Some(header.clone());
                            }
                            units.push(unit);
                        }
                    }
                    _ => {}
                }
                depth += 1;
            }
            Event::End(tag_end) => {
                depth -= 1;
                match (tag_end, depth) {
                    (TagEnd::Heading(_), 0) => {
                        if let Some((level, start, end)) = heading.take() {
                            let name = heading_text.trim().to_string();
                            open_section(
                                &mut units,
                                &mut sections,
                                &mut headings,
                                level,
                                start,
                                &name,
                                text,
                                index,
                            );
                            if title.is_none() {
                                title = Some(name.clone());
                            }
                            if let Some(mut unit) =
                                leaf(UnitType::Heading, start, end, &sections, &headings)
                            {
                                let slug = slugify(&name);
                                if !slug.is_empty() {
                                    unit.anchor = Some(slug.clone());
                                    unit.identifiers.push(Identifier {
                                        kind: "anchor".into(),
                                        value: slug,
                                    });
                                }
                                units.push(unit);
                            }
                        }
                    }
                    (TagEnd::List(_), 0) => in_list = false,
                    (TagEnd::Table, 0) => {
                        in_table = false;
                        table_header = None;
                    }
                    _ => {}
                }
            }
            Event::Text(t) | Event::Code(t) if heading.is_some() => heading_text.push_str(&t),
            Event::Html(_) | Event::Text(_) if depth == 0 => {
                units.extend(leaf(
                    UnitType::Html,
                    range.start,
                    range.end,
                    &sections,
                    &headings,
                ));
            }
            _ => {}
        }
    }
    let doc_end = trim_end(text, 0, text.len());
    while let Some(section) = sections.pop() {
        close_section(&mut units[section.ordinal], doc_end, text, index);
    }
    Parsed {
        units,
        diagnostics: Vec::new(),
        title,
    }
}

#[allow(clippy::too_many_arguments)] // One call site; a struct for it would only rename the locals.
fn open_section(
    units: &mut Vec<Unit>,
    sections: &mut Vec<OpenSection>,
    headings: &mut Vec<String>,
    level: usize,
    start: usize,
    name: &str,
    text: &str,
    index: &LineIndex,
) {
    while let Some(section) = sections.pop_if(|s| s.level >= level) {
        close_section(
            &mut units[section.ordinal],
            trim_end(text, 0, start),
            text,
            index,
        );
        headings.pop();
    }
    headings.push(name.to_string());
    let ordinal = units.len();
    units.push(Unit {
        unit_type: UnitType::Section,
        is_leaf: false,
        parent: sections.last().map(|s| s.ordinal),
        span: index.span(start, start),
        text: String::new(),
        heading_path: headings.clone(),
        anchor: Some(slugify(name)).filter(|s| !s.is_empty()),
        json_pointer: None,
        table_header: None,
        breaks: Vec::new(),
        signature: None,
        identifiers: Vec::new(),
    });
    sections.push(OpenSection { ordinal, level });
}

fn close_section(unit: &mut Unit, end: usize, text: &str, index: &LineIndex) {
    let start = unit.span.byte_start;
    let end = end.max(start);
    unit.span = index.span(start, end);
    unit.text = text[start..end].to_string();
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = "# Guide\n\nIntro para.\n\n## Install\n\n- one\n- two\n  nested\n\n```sh\nnpm i\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\n\n# Other\n\nLast.\n";

    #[test]
    fn units_slice_the_source_exactly() {
        let parsed = parse(DOC, &LineIndex::new(DOC));
        for unit in &parsed.units {
            let slice = &DOC[unit.span.byte_start..unit.span.byte_end];
            if unit.unit_type == UnitType::TableRow {
                assert!(unit.text.ends_with(slice), "{unit:?}");
            } else {
                assert_eq!(slice, unit.text, "{unit:?}");
            }
        }
        assert_eq!(parsed.title.as_deref(), Some("Guide"));
    }

    #[test]
    fn sections_lists_tables_and_headings() {
        let parsed = parse(DOC, &LineIndex::new(DOC));
        let types: Vec<_> = parsed.units.iter().map(|u| u.unit_type.as_str()).collect();
        assert_eq!(
            types,
            [
                "section",
                "heading",
                "paragraph",
                "section",
                "heading",
                "list_item",
                "list_item",
                "code_block",
                "table_row",
                "table_row",
                "section",
                "heading",
                "paragraph"
            ]
        );
        let item = &parsed.units[6];
        assert_eq!(item.text, "- two\n  nested");
        assert_eq!(item.heading_path, ["Guide", "Install"]);
        let row = &parsed.units[9];
        assert_eq!(row.text, "| a | b |\n| 3 | 4 |");
        assert_eq!(row.span.line_start, 18);
        let install = &parsed.units[3];
        assert!(install.text.starts_with("## Install") && install.text.ends_with("| 3 | 4 |"));
        assert_eq!(install.anchor.as_deref(), Some("install"));
        assert_eq!(parsed.units[11].heading_path, ["Other"]);
    }
}
