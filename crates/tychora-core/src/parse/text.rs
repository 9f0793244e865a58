//! Plain text: one unit per paragraph (runs of non-blank lines).

use crate::unit::UnitType;
use crate::unit::{LineIndex, Parsed, Unit};

pub(super) fn parse(text: &str, index: &LineIndex) -> Parsed {
    let mut units = Vec::new();
    let mut para_start: Option<usize> = None;
    let mut para_end = 0;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let content = line.trim_end_matches(['\n', '\r']);
        if content.trim().is_empty() {
            if let Some(start) = para_start.take() {
                units.push(paragraph(text, index, start, para_end));
            }
        } else {
            if para_start.is_none() {
                para_start = Some(offset + (content.len() - content.trim_start().len()));
            }
            para_end = offset + content.trim_end().len();
        }
        offset += line.len();
    }
    if let Some(start) = para_start {
        units.push(paragraph(text, index, start, para_end));
    }
    Parsed {
        units,
        diagnostics: Vec::new(),
        title: None,
    }
}

fn paragraph(text: &str, index: &LineIndex, start: usize, end: usize) -> Unit {
    Unit::leaf(
        UnitType::Paragraph,
        None,
        index.span(start, end),
        text[start..end].to_string(),
        Vec::new(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paragraphs_slice_exactly() {
        let text = "  first line\nsecond\n\n\nthird para  \n";
        let parsed = parse(text, &LineIndex::new(text));
        assert_eq!(parsed.units.len(), 2);
        for unit in &parsed.units {
            assert_eq!(&text[unit.span.byte_start..unit.span.byte_end], unit.text);
        }
        assert_eq!(parsed.units[0].text, "first line\nsecond");
        assert_eq!(parsed.units[1].span.line_start, 5);
    }
}
