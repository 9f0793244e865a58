//! IETF RFCs in their plain-text form (the `rfc` kind): numbered sections (`4.1.2.  Authorization
//! Response`, or `4.1.2 Title` in older RFCs) and appendices (`Appendix A.`, `A.1.`) as sections
//! whose units are the paragraphs under them; each section registers `RFC 6749 §4.1.2` for the
//! exact channel (the pack's patterns turn `Section 4.1.2 of RFC 6749` into the same identifier).
//!
//! Page furniture — the form feed, the footer (`Hardt   Standards Track   [Page 12]`) and the
//! running header after it (`RFC 6749   OAuth 2.0   October 2012`) — stays in the retained bytes
//! and out of every unit; a paragraph a page break cuts continues after it. A heading counts only
//! where the outline expects it (the next sibling, a first child, or the next section of an
//! ancestor), so the table of contents, a numbered list or a wrapped line starting with a number is
//! never mistaken for a section.

use crate::unit::UnitType;
use std::sync::LazyLock;

use regex::Regex;

use crate::unit::{Identifier, LineIndex, Parsed, Unit};

/// A heading at column 0: `4.1.2.  Title`, `4.1.2 Title`, `A.1.  Title`.
static HEADING: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^((?:\d{1,2}|[A-Z])(?:\.\d{1,2})*)(\.?)\s{1,3}(\S.*)$").expect("static regex")
});
static APPENDIX: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^Appendix\s+([A-Z])\.?\s+(\S.*)$").expect("static regex"));
static FOOTER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\[Page \d{1,4}\]\s*$").expect("static regex"));
static HEADER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^RFC \d{1,5}\s{2,}.*\s{2,}(?:[A-Z][a-z]+ )?\d{4}\s*$").expect("static regex")
});
static NUMBER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"Request for Comments:\s*(\d{1,5})").expect("static regex"));

/// Whether `next` is where the outline may go after `last`: a first child (`4.1` → `4.1.1`, or
/// `13` → `13.1.1` where a level is skipped), the
/// next sibling (`4.1` → `4.2`) or the next section of an ancestor (`4.1.2` → `4.2`, `5`).
fn follows(last: &[String], next: &[String]) -> bool {
    if last.is_empty() {
        return next == ["1"];
    }
    // A first child, or a first grandchild where the RFC skips a level (RFC 2616: `13` → `13.1.1`).
    if next.len() > last.len() && next[..last.len()] == *last {
        return next[last.len()..].iter().all(|p| p == "1");
    }
    if next.len() > last.len() || next.is_empty() {
        return false;
    }
    let depth = next.len() - 1;
    next[..depth] == last[..depth] && successor(&last[depth]).as_deref() == Some(&next[depth])
}

/// Whether a heading numbered `next` may come after `outline`: the first appendix (`A`) after the
/// numbered sections, else where [`follows`] allows.
fn accepts(outline: &[String], next: &[String]) -> bool {
    let letter = |p: &str| p.chars().all(|c| c.is_ascii_uppercase());
    if next.len() == 1 && letter(&next[0]) && outline.first().is_some_and(|f| !letter(f)) {
        return next[0] == "A";
    }
    follows(outline, next)
}

fn successor(part: &str) -> Option<String> {
    if let Ok(n) = part.parse::<u32>() {
        return Some((n + 1).to_string());
    }
    let c = part.chars().next()?;
    (part.len() == 1 && c.is_ascii_uppercase() && c < 'Z')
        .then(|| ((c as u8 + 1) as char).to_string())
}

struct Open {
    ordinal: usize,
    depth: usize,
}

struct Paragraph {
    start: usize,
    end: usize,
    lines: Vec<String>,
    /// A blank line followed its last line.
    ended: bool,
    /// Page furniture came after its last line.
    broken: bool,
}

impl Paragraph {
    /// Whether the next text line continues it: nothing but a page break (and the blank lines
    /// around it) came between, and its last line does not end a sentence.
    fn continues(&self) -> bool {
        !self.ended
            || (self.broken
                && !self
                    .lines
                    .last()
                    .is_some_and(|l| l.trim_end().ends_with(['.', ':', ';', '!', '?'])))
    }
}

pub(super) fn parse(text: &str, index: &LineIndex) -> Parsed {
    let number = NUMBER.captures(text).map(|c| c[1].to_string());
    let mut units: Vec<Unit> = Vec::new();
    let mut open: Vec<Open> = Vec::new();
    let mut headings: Vec<String> = Vec::new();
    let mut outline: Vec<String> = Vec::new();
    let mut paragraph: Option<Paragraph> = None;
    let mut title = None;
    let mut after_form_feed = false;
    let mut offset = 0;

    let flush = |paragraph: &mut Option<Paragraph>,
                 units: &mut Vec<Unit>,
                 open: &[Open],
                 headings: &[String]| {
        if let Some(p) = paragraph.take() {
            units.push(leaf(
                index,
                UnitType::Paragraph,
                p.start,
                p.end,
                p.lines.join("\n"),
                open,
                headings,
            ));
        }
    };

    for line in text.split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        let content = line.trim_end_matches(['\n', '\r']);
        let end = start + content.trim_end().len();
        if content.contains('\u{c}') {
            after_form_feed = true;
            if let Some(p) = &mut paragraph {
                p.broken = true;
            }
            continue;
        }
        if FOOTER.is_match(content) || (after_form_feed && HEADER.is_match(content)) {
            after_form_feed = false;
            if let Some(p) = &mut paragraph {
                p.broken = true;
            }
            continue;
        }
        if content.trim().is_empty() {
            if let Some(p) = &mut paragraph {
                p.ended = true;
            }
            continue;
        }
        after_form_feed = false;
        let heading = if content.starts_with(char::is_whitespace) {
            None
        } else if let Some(c) = APPENDIX.captures(content) {
            Some((
                vec![c[1].to_string()],
                format!("Appendix {}. {}", &c[1], c[2].trim()),
            ))
        } else {
            HEADING.captures(content).and_then(|c| {
                let parts: Vec<String> = c[1].split('.').map(str::to_string).collect();
                // `2 clients were…` is prose that starts with a number; `2.  Title`, `3.2.2 http
                // URL` are headings.
                let prose =
                    parts.len() == 1 && c[2].is_empty() && c[3].starts_with(char::is_lowercase);
                (!prose).then(|| (parts, format!("{}. {}", &c[1], c[3].trim())))
            })
        };
        if let Some((parts, name)) = heading.filter(|(parts, _)| accepts(&outline, parts)) {
            flush(&mut paragraph, &mut units, &open, &headings);
            let depth = parts.len();
            while let Some(o) = open.pop_if(|o| o.depth >= depth) {
                super::close_section_over_leaves(&mut units, o.ordinal, text, start, index);
                headings.pop();
            }
            headings.push(name.clone());
            title.get_or_insert_with(|| name.clone());
            let ordinal = units.len();
            let citation = number
                .as_ref()
                .map(|n| format!("RFC {n} §{}", parts.join(".")));
            units.push(Unit::section(
                open.last().map(|o| o.ordinal),
                index.span(start, start),
                headings.clone(),
                Some(format!("section-{}", parts.join("."))),
                citation
                    .into_iter()
                    .map(|value| Identifier {
                        kind: "anchor".into(),
                        value,
                    })
                    .collect(),
            ));
            open.push(Open { ordinal, depth });
            units.push(leaf(
                index,
                UnitType::Heading,
                start,
                end,
                name,
                &open,
                &headings,
            ));
            outline = parts;
            continue;
        }
        match &mut paragraph {
            Some(p) if p.continues() => {
                p.end = end;
                p.lines.push(content.trim_end().to_string());
                p.ended = false;
                p.broken = false;
            }
            _ => {
                flush(&mut paragraph, &mut units, &open, &headings);
                paragraph = Some(Paragraph {
                    start: start + (content.len() - content.trim_start().len()),
                    end,
                    lines: vec![content.trim_end().to_string()],
                    ended: false,
                    broken: false,
                });
            }
        }
    }
    flush(&mut paragraph, &mut units, &open, &headings);
    while let Some(o) = open.pop() {
        super::close_section_over_leaves(&mut units, o.ordinal, text, text.len(), index);
    }
    // The document's own name (`RFC 6749`), on the header block that states it: a query that
    // names the RFC is answered from it, not from the passages elsewhere that cite it.
    if let Some(n) = &number
        && let Some(unit) = units
            .iter_mut()
            .find(|u| u.is_leaf && NUMBER.is_match(&u.text))
    {
        unit.identifiers.push(Identifier {
            kind: crate::unit::DOCUMENT_IDENTIFIER.into(),
            value: format!("RFC {n}"),
        });
    }
    Parsed {
        units,
        diagnostics: Vec::new(),
        title,
    }
}

fn leaf(
    index: &LineIndex,
    unit_type: UnitType,
    start: usize,
    end: usize,
    text: String,
    open: &[Open],
    headings: &[String],
) -> Unit {
    Unit::leaf(
        unit_type,
        open.last().map(|o| o.ordinal),
        index.span(start, end),
        text,
        headings.to_vec(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const RFC: &str = "Request for Comments: 6749\r\n\r\nTable of Contents\r\n\r\n   1. Introduction ....4\r\n   4.1.2. Authorization Response ....24\r\n\r\n1.  Introduction\r\n\r\n   Intro text.\r\n\r\n4.  Obtaining Authorization\r\n\r\n2 clients were not a heading.\r\n\r\n1.1.  Roles\r\n\r\n   OAuth defines four roles, and a paragraph that a page\r\n   break cuts\r\n\r\n\r\nHardt                        Standards Track                   [Page 5]\r\n\u{c}\r\nRFC 6749                        OAuth 2.0                   October 2012\r\n\r\n\r\n   continues here.\r\n\r\n2.  Client Registration\r\n\r\n   Before initiating.\r\n\r\nAppendix A.  Augmented Backus-Naur Form (ABNF) Syntax\r\n\r\n   This section.\r\n\r\nA.1.  \"client_id\" Syntax\r\n\r\n   VSCHAR.\r\n";

    #[test]
    #[cfg_attr(not(shared_data), ignore = "reads ../shared/data, not present")]
    fn sections_follow_the_outline_and_furniture_stays_out() {
        let parsed = parse(RFC, &LineIndex::new(RFC));
        let ids: Vec<String> = parsed
            .units
            .iter()
            .flat_map(|u| u.identifiers.iter().map(|i| i.value.clone()))
            .collect();
        // The document's own name first, on its header block; then each section's citation.
        assert_eq!(
            ids,
            [
                "RFC 6749",
                "RFC 6749 §1",
                "RFC 6749 §1.1",
                "RFC 6749 §2",
                "RFC 6749 §A",
                "RFC 6749 §A.1"
            ]
        );
        let roles = parsed
            .units
            .iter()
            .find(|u| u.text.starts_with("   OAuth defines"))
            .expect("the Roles paragraph");
        assert_eq!(
            roles.text,
            "   OAuth defines four roles, and a paragraph that a page\n   break cuts\n   continues here."
        );
        assert_eq!(roles.heading_path, ["1. Introduction", "1.1. Roles"]);
        // CRLF text keeps exact line locators.
        assert_eq!(roles.span.line_start, 18);
        assert_eq!(roles.span.line_end, 27);
        // `4.` after `1.` skips a number and `2 clients` is prose: neither is a heading.
        assert!(
            parsed
                .units
                .iter()
                .any(|u| u.unit_type == UnitType::Paragraph
                    && u.text.contains("4.  Obtaining Authorization"))
        );
        assert!(
            parsed
                .units
                .iter()
                .all(|u| !u.text.contains("[Page 5]") && !u.text.contains("October 2012"))
        );
    }
}

/// The three RFCs in `shared/data/docs/rfc` (one with CRLF line ends, one in the older `4.1.2 Title`
/// style): every section of their tables of contents, and nothing else, becomes a section.
#[cfg(test)]
mod shared {
    use super::*;

    fn sections(name: &str) -> Vec<String> {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/docs/rfc");
        // Without shared/ this test is ignored (build.rs), and under TYCHORA_REQUIRE=data the build fails.
        let text = std::fs::read_to_string(dir.join(name)).expect("shared/data/docs/rfc");
        parse(&text, &LineIndex::new(&text))
            .units
            .iter()
            .filter(|u| u.unit_type == UnitType::Section)
            .filter_map(|u| u.identifiers.first().map(|i| i.value.clone()))
            .collect()
    }

    #[test]
    #[cfg_attr(not(shared_data), ignore = "reads ../shared/data, not present")]
    fn the_shared_rfcs_give_their_outlines() {
        let oauth = sections("rfc6749.txt");
        assert!(oauth.contains(&"RFC 6749 §4.1.2".to_string()));
        assert!(oauth.contains(&"RFC 6749 §4.1.2.1".to_string()));
        assert!(oauth.contains(&"RFC 6749 §A.1".to_string()));
        let http = sections("rfc2616.txt");
        assert!(http.contains(&"RFC 2616 §14.9.4".to_string()));
        let uri = sections("rfc3986.txt");
        assert!(uri.contains(&"RFC 3986 §3.2.2".to_string()));
        // Every entry of each table of contents (111, 252, 71), plus the sections deeper than
        // the table goes (4.1.2.1, 8.1.2.1, 6.2.2.1, …) and two whose entries wrap (10.16, 13.3.4).
        assert_eq!((oauth.len(), http.len(), uri.len()), (119, 256, 74));
    }
}
