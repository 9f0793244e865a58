//! Legislative text (the `law` and `regulation` kinds): the numbered structure a lawyer cites —
//! recitals, chapters, sections, articles, paragraphs, points and sub-points — as units whose
//! heading path ends in their citation (`Article 17(1)(b)`), each registering that citation for
//! the exact channel.
//!
//! The same act arrives clean (EUR-Lex text, every marker on its own line) or extracted from a PDF
//! (markers inline, words split, the Official Journal's running header inside sentences, footnotes
//! at page feet). Both give the same structure because a marker is accepted only where the
//! numbering expects it: paragraph `3.` only after `2.`, point `(c)` only after `(b)`, recital
//! `(42)` only after `(41)`. A footnote `(1)OJ C 229…` or a sentence that wraps onto a line
//! starting `2016.` is then text, not structure. Running headers and footnotes are page furniture:
//! kept in the retained bytes (spans still slice them), left out of every unit's text.

use crate::unit::UnitType;
use std::sync::LazyLock;

use regex::Regex;

use crate::unit::{Identifier, LineIndex, Parsed, Unit};

/// `CHAPTER IV`, `Section 2`, `Article 17` (PDF text may split a word: `REGUL ATION`).
static CHAPTER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^CHAPTER\s+([IVXLC]+)$").expect("static regex"));
static SECTION: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^Section\s+(\d{1,3})$").expect("static regex"));
static ARTICLE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^Article\s+(\d{1,3}[a-z]?)$").expect("static regex"));
/// `1.` or `1.   text` (a numbered paragraph).
static PARAGRAPH: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(\d{1,3})\.(?:\s+|$)").expect("static regex"));
/// `(a)`, `(iv)` or `(12)` alone or followed by a space (a point, a sub-point, a recital, a
/// definition); `(1)OJ` with no space is a footnote.
static MARKER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\(([a-z]{1,5}|\d{1,3})\)(?:\s+|$)").expect("static regex"));
static FOOTNOTE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\(\d{1,3}\)\S").expect("static regex"));
/// The Official Journal's running header, as PDF extraction leaves it (inside a sentence, words
/// split): `4.5.2016 L 119/43 Official Jour nal of the European Union EN`.
static RUNNING_HEADER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"\d{1,2}\.\d{1,2}\.\d{4}\s+L\s*\d{1,4}\s*/\s*\d{1,4}\s+O\s*f\s*f\s*i\s*c\s*i\s*a\s*l\s+J\s*o\s*u\s*r\s*n\s*a\s*l\s+of\s+the\s+E\s*u\s*r\s*o\s*p\s*e\s*a\s*n\s+U\s*n\s*i\s*o\s*n\s+EN\s*",
    )
    .expect("static regex")
});
static WHEREAS: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^Whereas\s*:?$").expect("static regex"));
/// The enacting formula that ends the recitals (`HAVE ADOPTED THIS REGULATION:`).
static ENACTING: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^HA\s*VE\s+ADOPTED\b").expect("static regex"));

/// Where a line sits in the structure being read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Level {
    Chapter = 1,
    Section = 2,
    Article = 3,
}

struct Open {
    ordinal: usize,
    level: Level,
}

/// The unit being read: its first byte, its text so far (furniture left out), its type and path.
struct Leaf {
    start: usize,
    end: usize,
    text: String,
    unit_type: UnitType,
    citation: Option<String>,
}

/// Numbering state inside an article.
#[derive(Default)]
struct Numbering {
    /// The article's number (`17`), while inside one.
    article: Option<String>,
    /// Last numbered paragraph (`1.` or `(1)`).
    paragraph: Option<u32>,
    /// Last point letter, under the current paragraph.
    point: Option<String>,
    /// Last roman sub-point, under the current point.
    subpoint: Option<u32>,
    /// Whether the article numbers its paragraphs `(1)` (definitions) rather than `1.`.
    parenthesized: bool,
    /// Last recital.
    recital: Option<u32>,
    in_recitals: bool,
}

const ROMANS: [&str; 20] = [
    "i", "ii", "iii", "iv", "v", "vi", "vii", "viii", "ix", "x", "xi", "xii", "xiii", "xiv", "xv",
    "xvi", "xvii", "xviii", "xix", "xx",
];

fn next_letter(last: Option<&str>) -> Option<String> {
    match last {
        None => Some("a".into()),
        Some(l) if l.len() == 1 && l < "z" => Some(((l.as_bytes()[0] + 1) as char).to_string()),
        Some("z") => Some("aa".into()),
        Some(l) if l.len() == 2 && l.as_bytes()[0] == l.as_bytes()[1] && l < "zz" => {
            let c = (l.as_bytes()[0] + 1) as char;
            Some(format!("{c}{c}"))
        }
        _ => None,
    }
}

pub(super) fn parse(text: &str, index: &LineIndex) -> Parsed {
    let mut p = Parser {
        text,
        index,
        units: Vec::new(),
        open: Vec::new(),
        headings: Vec::new(),
        leaf: None,
        numbering: Numbering::default(),
        pending_title: None,
        title: None,
    };
    let mut offset = 0;
    let mut in_footnote = false;
    for line in text.split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        let content = line.trim_end_matches(['\n', '\r']);
        let lead = content.len() - content.trim_start().len();
        let trimmed = content.trim();
        if trimmed.is_empty() {
            in_footnote = false;
            continue;
        }
        // Footnotes run from their marker to the next blank line.
        if in_footnote || (FOOTNOTE.is_match(trimmed) && !p.expects_marker(trimmed)) {
            in_footnote = true;
            continue;
        }
        let line_start = start + lead;
        let line_end = start + content.trim_end().len();
        p.line(line_start, line_end, trimmed);
    }
    p.finish()
}

struct Parser<'a> {
    text: &'a str,
    index: &'a LineIndex,
    units: Vec<Unit>,
    open: Vec<Open>,
    headings: Vec<String>,
    leaf: Option<Leaf>,
    numbering: Numbering,
    /// A heading whose title comes next: its section's ordinal, its heading unit's, and whether a
    /// title line was read already (a wrapped title continues on a line that starts lowercase).
    pending_title: Option<(usize, usize, bool)>,
    title: Option<String>,
}

impl Parser<'_> {
    /// Whether a `(n)…` line is a marker the numbering expects (then it is not a footnote).
    fn expects_marker(&self, line: &str) -> bool {
        MARKER.captures(line).is_some_and(|c| {
            let n = &c[1];
            if self.numbering.in_recitals {
                n.parse::<u32>().ok() == Some(self.numbering.recital.map_or(1, |r| r + 1))
            } else {
                self.numbering.article.is_some()
                    && n.parse::<u32>().ok() == Some(self.numbering.paragraph.map_or(1, |r| r + 1))
            }
        })
    }

    fn line(&mut self, start: usize, end: usize, line: &str) {
        let clean = RUNNING_HEADER.replace_all(line, " ");
        let clean = clean.trim();
        if clean.is_empty() {
            return;
        }
        if let Some((section, heading, started)) = self.pending_title.take()
            && !PARAGRAPH.is_match(clean)
            && !MARKER.is_match(clean)
            && !is_heading(clean)
            && (!started || clean.starts_with(|c: char| c.is_lowercase()))
        {
            // The title line names the heading above it; a PDF may wrap a long title.
            self.pending_title = Some((section, heading, true));
            let name = format!(
                "{} {clean}",
                self.headings.last().cloned().unwrap_or_default()
            );
            if let Some(last) = self.headings.last_mut() {
                last.clone_from(&name);
            }
            self.units[section].heading_path.clone_from(&self.headings);
            let unit = &mut self.units[heading];
            unit.span = self.index.span(unit.span.byte_start, end);
            unit.text = format!("{}\n{clean}", unit.text);
            unit.heading_path.clone_from(&self.headings);
            if self.title.is_none() {
                self.title = Some(name);
            }
            return;
        }
        if let Some(c) = CHAPTER.captures(clean) {
            let label = format!("CHAPTER {}", &c[1]);
            self.heading(Level::Chapter, start, end, &label, None);
            return;
        }
        if let Some(c) = SECTION.captures(clean) {
            let label = format!("Section {}", &c[1]);
            self.heading(Level::Section, start, end, &label, None);
            return;
        }
        if let Some(c) = ARTICLE.captures(clean) {
            let number = c[1].to_string();
            let label = format!("Article {number}");
            self.numbering = Numbering {
                article: Some(number),
                recital: self.numbering.recital,
                ..Numbering::default()
            };
            self.heading(Level::Article, start, end, &label, Some(label.clone()));
            return;
        }
        if WHEREAS.is_match(clean) && self.numbering.article.is_none() {
            self.flush();
            self.numbering.in_recitals = true;
            self.start_leaf(start, end, clean, UnitType::Paragraph, None);
            return;
        }
        if ENACTING.is_match(clean) && self.numbering.article.is_none() {
            self.flush();
            self.numbering.in_recitals = false;
            self.start_leaf(start, end, clean, UnitType::Paragraph, None);
            return;
        }
        if self.structure(start, end, clean) {
            return;
        }
        match &mut self.leaf {
            Some(leaf) => {
                leaf.end = end;
                if !leaf.text.is_empty() {
                    leaf.text.push('\n');
                }
                leaf.text.push_str(clean);
            }
            None => self.start_leaf(
                start,
                end,
                clean,
                UnitType::Paragraph,
                self.article_citation(),
            ),
        }
    }

    /// Starts a paragraph, point, sub-point or recital when `line` opens the one the numbering
    /// expects; returns whether it did.
    fn structure(&mut self, start: usize, end: usize, line: &str) -> bool {
        let n = &mut self.numbering;
        if n.in_recitals && n.article.is_none() {
            if let Some(c) = MARKER.captures(line)
                && c[1].parse::<u32>().ok() == Some(n.recital.map_or(1, |r| r + 1))
            {
                let number = n.recital.map_or(1, |r| r + 1);
                n.recital = Some(number);
                self.start_leaf(
                    start,
                    end,
                    line,
                    UnitType::Recital,
                    Some(format!("Recital {number}")),
                );
                return true;
            }
            return false;
        }
        let Some(article) = n.article.clone() else {
            return false;
        };
        let expected_paragraph = n.paragraph.map_or(1, |p| p + 1);
        if let Some(c) = PARAGRAPH.captures(line)
            && c[1].parse::<u32>().ok() == Some(expected_paragraph)
        {
            n.paragraph = Some(expected_paragraph);
            n.point = None;
            n.subpoint = None;
            let citation = format!("Article {article}({expected_paragraph})");
            self.start_leaf(start, end, line, UnitType::Paragraph, Some(citation));
            return true;
        }
        let Some(c) = MARKER.captures(line) else {
            return false;
        };
        let marker = c[1].to_string();
        // `(1)`… in an article without `1.` paragraphs (definitions): numbered paragraphs too.
        if marker.parse::<u32>().ok() == Some(expected_paragraph)
            && (n.point.is_none() || n.parenthesized)
        {
            n.paragraph = Some(expected_paragraph);
            n.parenthesized = true;
            n.point = None;
            n.subpoint = None;
            let citation = format!("Article {article}({expected_paragraph})");
            self.start_leaf(start, end, line, UnitType::Paragraph, Some(citation));
            return true;
        }
        let base = match n.paragraph {
            Some(p) => format!("Article {article}({p})"),
            None => format!("Article {article}"),
        };
        // The letter the list expects wins over a roman sub-point: `(i)` after `(h)` is a point.
        if next_letter(n.point.as_deref()).as_deref() == Some(marker.as_str()) {
            n.point = Some(marker.clone());
            n.subpoint = None;
            self.start_leaf(
                start,
                end,
                line,
                UnitType::Point,
                Some(format!("{base}({marker})")),
            );
            return true;
        }
        let expected_roman = ROMANS.get(n.subpoint.map_or(0, |s| s as usize));
        if let Some(point) = n.point.clone()
            && expected_roman == Some(&marker.as_str())
        {
            n.subpoint = Some(n.subpoint.map_or(1, |s| s + 1));
            self.start_leaf(
                start,
                end,
                line,
                UnitType::Subpoint,
                Some(format!("{base}({point})({marker})")),
            );
            return true;
        }
        false
    }

    fn article_citation(&self) -> Option<String> {
        self.numbering
            .article
            .as_ref()
            .map(|a| format!("Article {a}"))
    }

    fn start_leaf(
        &mut self,
        start: usize,
        end: usize,
        line: &str,
        unit_type: UnitType,
        citation: Option<String>,
    ) {
        self.flush();
        self.leaf = Some(Leaf {
            start,
            end,
            text: line.to_string(),
            unit_type,
            citation,
        });
    }

    /// Ends the unit being read.
    fn flush(&mut self) {
        let Some(leaf) = self.leaf.take() else {
            return;
        };
        let mut heading_path = self.headings.clone();
        let mut identifiers = Vec::new();
        if let Some(citation) = &leaf.citation {
            // An unnumbered paragraph's citation is its article's, which the heading names already.
            let named = heading_path
                .last()
                .is_some_and(|h| h == citation || h.starts_with(&format!("{citation} ")));
            if !named {
                heading_path.push(citation.clone());
            }
            identifiers.push(Identifier {
                kind: "anchor".into(),
                value: citation.clone(),
            });
        }
        if self.numbering.in_recitals && self.numbering.article.is_none() {
            heading_path = vec!["Recitals".into()];
            if let Some(citation) = &leaf.citation {
                heading_path.push(citation.clone());
            }
        }
        self.units.push(Unit {
            anchor: leaf.citation.as_deref().map(super::slugify),
            identifiers,
            ..Unit::leaf(
                leaf.unit_type,
                self.open.last().map(|o| o.ordinal),
                self.index.span(leaf.start, leaf.end),
                leaf.text,
                heading_path,
            )
        });
    }

    fn heading(
        &mut self,
        level: Level,
        start: usize,
        end: usize,
        label: &str,
        citation: Option<String>,
    ) {
        self.flush();
        self.numbering.in_recitals = false;
        if level != Level::Article {
            self.numbering.article = None;
        }
        while let Some(o) = self.open.pop_if(|o| o.level as u8 >= level as u8) {
            self.close(o.ordinal, start);
            self.headings.pop();
        }
        self.headings.push(label.to_string());
        let ordinal = self.units.len();
        let identifiers = citation
            .iter()
            .map(|c| Identifier {
                kind: "anchor".into(),
                value: c.clone(),
            })
            .collect();
        self.units.push(Unit::section(
            self.open.last().map(|o| o.ordinal),
            self.index.span(start, start),
            self.headings.clone(),
            Some(super::slugify(label)),
            identifiers,
        ));
        self.open.push(Open { ordinal, level });
        let heading = self.units.len();
        self.units.push(Unit::leaf(
            UnitType::Heading,
            Some(ordinal),
            self.index.span(start, end),
            label.to_string(),
            self.headings.clone(),
        ));
        self.pending_title = Some((ordinal, heading, false));
    }

    /// A section's span runs to just before `end` (the next heading of its level or above).
    fn close(&mut self, ordinal: usize, end: usize) {
        super::close_section_over_leaves(&mut self.units, ordinal, self.text, end, self.index);
    }

    fn finish(mut self) -> Parsed {
        self.flush();
        let end = self.text.len();
        while let Some(o) = self.open.pop() {
            self.close(o.ordinal, end);
        }
        Parsed {
            units: self.units,
            diagnostics: Vec::new(),
            title: self.title,
        }
    }
}

fn is_heading(line: &str) -> bool {
    CHAPTER.is_match(line) || SECTION.is_match(line) || ARTICLE.is_match(line)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::unit::Span;

    /// The bytes a unit's span covers.
    fn slice<'t>(text: &'t str, span: &Span) -> &'t str {
        &text[span.byte_start..span.byte_end]
    }

    fn citations(parsed: &Parsed) -> Vec<String> {
        parsed
            .units
            .iter()
            .flat_map(|u| u.identifiers.iter().map(|i| i.value.clone()))
            .collect()
    }

    const CLEAN: &str = "Whereas:\n\n(1)\n\nThe protection of natural persons.\n\n(2)\n\nThe principles.\n\nHAVE ADOPTED THIS REGULATION:\n\nCHAPTER III\n\nRights of the data subject\n\nSection 3\n\nRectification and erasure\n\nArticle 17\n\nRight to erasure\n\n1.   The data subject shall have the right where one of the following applies:\n\n(a)\n\nthe data are no longer necessary;\n\n(b)\n\nthe data subject withdraws consent;\n\n2.   Where the controller has made the data public.\n\nArticle 18\n\nRight to restriction\n\nThe data subject shall have the right.\n";

    const NOISY: &str = "Whereas: \n(1)  The protection of natural persons. \n(2)  The principles. 4.5.2016 L 119/1 Official Jour nal of the European Union EN     \n(1)OJ C 229, 31.7.2012, p. 90.\n(2)OJ C 391, 18.12.2012, p. 127.\n\nHAVE ADOPTED THIS REGUL ATION: \nCHAPTER III \nRights of the data subject \nSection 3 \nRectif ication and erasure \nArticle 17 \nRight to erasure \n1. The data subject shall have the right where one of the \nfollowing applies: \n(a)  the data are no longer necessar y; \n(b)  the data subject withdra ws consent; \n2. Where the controller has made the data public. \nArticle 18 \nRight to restriction \nThe data subject shall have the right. \n";

    #[test]
    fn clean_and_pdf_extracted_text_give_the_same_structure() {
        let clean = parse(CLEAN, &LineIndex::new(CLEAN));
        let noisy = parse(NOISY, &LineIndex::new(NOISY));
        let expected = [
            "Recital 1",
            "Recital 2",
            "Article 17",
            "Article 17(1)",
            "Article 17(1)(a)",
            "Article 17(1)(b)",
            "Article 17(2)",
            "Article 18",
            "Article 18",
        ];
        assert_eq!(citations(&clean), expected);
        assert_eq!(citations(&noisy), expected);
        for parsed in [&clean, &noisy] {
            let point = parsed
                .units
                .iter()
                .find(|u| u.anchor.as_deref() == Some("article-171b"))
                .expect("Article 17(1)(b)");
            assert_eq!(point.unit_type, UnitType::Point);
            assert_eq!(
                point.heading_path.first().map(String::as_str),
                Some("CHAPTER III Rights of the data subject")
            );
            assert_eq!(
                point.heading_path.last().map(String::as_str),
                Some("Article 17(1)(b)")
            );
            assert!(
                point
                    .heading_path
                    .iter()
                    .any(|h| h.starts_with("Article 17 Right to erasure"))
            );
        }
    }

    #[test]
    fn furniture_stays_out_of_units_and_spans_slice_the_bytes() {
        let noisy = parse(NOISY, &LineIndex::new(NOISY));
        for unit in &noisy.units {
            assert!(!unit.text.contains("Official Jour"), "{}", unit.text);
            assert!(!unit.text.contains("OJ C 229"), "{}", unit.text);
            let raw = slice(NOISY, &unit.span);
            // Every word of the unit's text is in the bytes its span covers.
            for word in unit.text.split_whitespace() {
                assert!(raw.contains(word), "{word} not in {raw}");
            }
        }
        let recital = noisy
            .units
            .iter()
            .find(|u| u.unit_type == UnitType::Recital && u.text.contains("principles"))
            .unwrap();
        assert_eq!(recital.text, "(2)  The principles.");
    }

    #[test]
    fn a_number_out_of_sequence_is_text() {
        let text = "Article 5\n\nPrinciples\n\n1.   Personal data shall be\n2016. processed lawfully;\n\n(b)\n\nnot a point, (a) never came.\n";
        let parsed = parse(text, &LineIndex::new(text));
        assert_eq!(citations(&parsed), ["Article 5", "Article 5(1)"]);
        let paragraph = parsed
            .units
            .iter()
            .find(|u| u.unit_type == UnitType::Paragraph)
            .unwrap();
        assert!(
            paragraph.text.contains("2016. processed") && paragraph.text.contains("(a) never came")
        );
    }

    #[test]
    fn roman_sub_points_and_the_letter_i() {
        let text = "Article 9\n\nT\n\n1.   Intro:\n\n(a)\n\nfirst;\n\n(i)\n\nroman one;\n\n(ii)\n\nroman two;\n\n(b)\n\nsecond;\n\n(c)\n\nc\n\n(d)\n\nd\n\n(e)\n\ne\n\n(f)\n\nf\n\n(g)\n\ng\n\n(h)\n\nh\n\n(i)\n\nthe letter i.\n";
        let parsed = parse(text, &LineIndex::new(text));
        let cites = citations(&parsed);
        assert!(cites.contains(&"Article 9(1)(a)(i)".to_string()));
        assert!(cites.contains(&"Article 9(1)(a)(ii)".to_string()));
        assert!(cites.contains(&"Article 9(1)(i)".to_string()));
    }
}

/// The GDPR from `shared/data/docs/gdpr`, clean and as PDF-extracted text: the same structure.
#[cfg(test)]
mod gdpr {
    use super::*;

    fn read(name: &str) -> Option<String> {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/docs/gdpr");
        std::fs::read_to_string(dir.join(name)).ok()
    }

    fn citations(text: &str) -> Vec<String> {
        parse(text, &LineIndex::new(text))
            .units
            .iter()
            .flat_map(|u| u.identifiers.iter().map(|i| i.value.clone()))
            .collect()
    }

    #[test]
    #[cfg_attr(not(shared_data), ignore = "reads ../shared/data, not present")]
    fn clean_and_noisy_twins_give_the_same_citations() {
        // Without shared/ this test is ignored (build.rs), and under TYCHORA_REQUIRE=data the build fails.
        let clean = read("gdpr_2016-679_clean.txt").expect("shared/data/docs/gdpr");
        let noisy = read("gdpr_2016-679_pdf_extracted.txt").expect("shared/data/docs/gdpr");
        let a = citations(&clean);
        let b = citations(&noisy);
        let count = |v: &[String], p: &str| v.iter().filter(|c| c.starts_with(p)).count();
        assert_eq!((a.len(), b.len()), (1046, 1046));
        let only_a: Vec<_> = a.iter().filter(|c| !b.contains(c)).take(20).collect();
        let only_b: Vec<_> = b.iter().filter(|c| !a.contains(c)).take(20).collect();
        assert!(
            only_a.is_empty() && only_b.is_empty(),
            "clean only: {only_a:?}\nnoisy only: {only_b:?}"
        );
        if a != b {
            let at = a
                .iter()
                .zip(&b)
                .position(|(x, y)| x != y)
                .unwrap_or(a.len().min(b.len()));
            panic!(
                "sequences differ at {at}: clean {:?} noisy {:?}",
                &a[at.saturating_sub(3)..(at + 4).min(a.len())],
                &b[at.saturating_sub(3)..(at + 4).min(b.len())]
            );
        }
        assert_eq!(count(&a, "Recital"), 173);
        let articles = a
            .iter()
            .filter(|c| c.starts_with("Article ") && !c.contains('('))
            .collect::<std::collections::BTreeSet<_>>();
        assert_eq!(articles.len(), 99);
        for cite in [
            "Article 99",
            "Article 17(1)(b)",
            "Article 4(26)",
            "Article 9(2)(j)",
            "Article 83(5)(a)",
        ] {
            assert!(a.iter().any(|c| c == cite), "{cite}");
        }
    }
}
