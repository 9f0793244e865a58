//! Paragraph styles (which are headings, at what level) and list numbering (how each level's
//! marker is rendered), from `styles.xml` and `numbering.xml`.

use std::collections::HashMap;

use quick_xml::Reader;
use quick_xml::events::Event;

use super::visibility::{self, RunLook};
use super::{attr, local};

/// Heading levels by style id: an outline level on the style (or a style it is based on), or a
/// name Word gives its built-in headings (`heading 1`, `Title`).
#[derive(Debug, Default)]
pub(super) struct Styles {
    levels: HashMap<String, u8>,
    /// Numbering a style carries (`w:style/w:pPr/w:numPr`): numbered headings get it this way.
    numbering: HashMap<String, (String, u8)>,
    /// What each style sets of a run's look (through its `basedOn` chain), to tell hidden text.
    looks: HashMap<String, RunLook>,
    /// Paragraph shading a paragraph style sets (through its `basedOn` chain).
    shades: HashMap<String, String>,
    /// The document defaults' run look (`w:docDefaults/w:rPrDefault`).
    default_look: RunLook,
    /// The paragraph style of a paragraph that names none.
    default_paragraph: Option<String>,
}

impl Styles {
    pub(super) fn parse(xml: &[u8]) -> Self {
        let mut reader = Reader::from_reader(xml);
        let mut buf = Vec::new();
        // id → (name, outline level, based on)
        let mut styles: HashMap<String, (String, Option<u8>, Option<String>)> = HashMap::new();
        // id → (numId, ilvl) of a style's own numbering.
        let mut numbered: HashMap<String, (Option<String>, u8)> = HashMap::new();
        let mut own_looks: HashMap<String, RunLook> = HashMap::new();
        let mut own_shades: HashMap<String, String> = HashMap::new();
        let mut default_look = RunLook::default();
        let mut default_paragraph = None;
        let mut current: Option<String> = None;
        // Open elements' local names: a property means one thing in `w:rPr`, another in `w:pPr`.
        let mut open: Vec<String> = Vec::new();
        loop {
            let event = reader.read_event_into(&mut buf);
            let parent = open.last().cloned().unwrap_or_default();
            let grandparent = open.iter().rev().nth(1).cloned().unwrap_or_default();
            if let Ok(Event::Start(e)) = &event {
                open.push(local(e.name().as_ref()).to_string());
            }
            match event {
                Ok(Event::Start(e)) if local(e.name().as_ref()) == "style" => {
                    let id = attr(&e, "styleId").unwrap_or_default();
                    styles.entry(id.clone()).or_default();
                    if attr(&e, "type").as_deref() == Some("paragraph")
                        && attr(&e, "default").is_some_and(|d| d == "1" || d == "true")
                    {
                        default_paragraph = Some(id.clone());
                    }
                    current = Some(id);
                }
                Ok(Event::End(e)) => {
                    open.pop();
                    if local(e.name().as_ref()) == "style" {
                        current = None;
                    }
                }
                Ok(Event::Start(e) | Event::Empty(e)) => {
                    let name = local(e.name().as_ref()).to_string();
                    if parent == "rPr" && grandparent == "rPrDefault" {
                        default_look.set(&name, &e);
                    }
                    let Some(id) = &current else {
                        buf.clear();
                        continue;
                    };
                    if parent == "rPr" && grandparent == "style" {
                        own_looks.entry(id.clone()).or_default().set(&name, &e);
                    }
                    if parent == "pPr"
                        && grandparent == "style"
                        && name == "shd"
                        && let Some(fill) = visibility::shading(&e)
                    {
                        own_shades.insert(id.clone(), fill);
                    }
                    let entry = styles.entry(id.clone()).or_default();
                    match local(e.name().as_ref()) {
                        "name" => entry.0 = attr(&e, "val").unwrap_or_default(),
                        "outlineLvl" => {
                            entry.1 = attr(&e, "val").and_then(|v| v.parse::<u8>().ok());
                        }
                        "basedOn" => entry.2 = attr(&e, "val"),
                        "numId" => numbered.entry(id.clone()).or_default().0 = attr(&e, "val"),
                        "ilvl" => {
                            numbered.entry(id.clone()).or_default().1 =
                                attr(&e, "val").and_then(|v| v.parse().ok()).unwrap_or(0);
                        }
                        _ => {}
                    }
                }
                Ok(Event::Eof) | Err(_) => break,
                _ => {}
            }
            buf.clear();
        }
        let mut levels = HashMap::new();
        for id in styles.keys() {
            // Follow basedOn a few steps for an outline level or a heading name.
            let mut at = Some(id.clone());
            for _ in 0..8 {
                let Some(style) = at.as_ref().and_then(|s| styles.get(s)) else {
                    break;
                };
                if let Some(level) = heading_level(&style.0, style.1) {
                    levels.insert(id.clone(), level);
                    break;
                }
                at.clone_from(&style.2);
            }
        }
        let numbering = numbered
            .into_iter()
            .filter_map(|(id, (num, ilvl))| Some((id, (num.filter(|n| n != "0")?, ilvl))))
            .collect();
        // Each style's look and shading with what the styles it is based on set beneath it.
        let chain = |id: &str| {
            let mut ids = vec![id.to_string()];
            while ids.len() < 8 {
                match styles.get(ids.last().unwrap()).and_then(|s| s.2.clone()) {
                    Some(base) if !ids.contains(&base) => ids.push(base),
                    _ => break,
                }
            }
            ids
        };
        let mut looks = HashMap::new();
        let mut shades = HashMap::new();
        for id in styles.keys() {
            let ids = chain(id);
            let look = ids.iter().rev().fold(RunLook::default(), |below, s| {
                own_looks
                    .get(s)
                    .map_or(below.clone(), |own| below.under(own))
            });
            if look != RunLook::default() {
                looks.insert(id.clone(), look);
            }
            if let Some(fill) = ids.iter().find_map(|s| own_shades.get(s)) {
                shades.insert(id.clone(), fill.clone());
            }
        }
        Self {
            levels,
            numbering,
            looks,
            shades,
            default_look,
            default_paragraph,
        }
    }

    /// The look a run gets from the document defaults, its paragraph's style (or the default
    /// paragraph style) and its own character style, before its own properties.
    pub(super) fn run_look(&self, paragraph: Option<&str>, character: Option<&str>) -> RunLook {
        let paragraph = paragraph.or(self.default_paragraph.as_deref());
        let of = |style: Option<&str>| style.and_then(|s| self.looks.get(s));
        let mut look = self.default_look.clone();
        for level in [of(paragraph), of(character)].into_iter().flatten() {
            look = look.under(level);
        }
        look
    }

    /// The shading a paragraph style paints under its paragraphs.
    pub(super) fn paragraph_shading(&self, paragraph: Option<&str>) -> Option<&str> {
        let paragraph = paragraph.or(self.default_paragraph.as_deref());
        paragraph
            .and_then(|s| self.shades.get(s))
            .map(String::as_str)
    }

    /// The list numbering (numId, level) a paragraph style applies, if any.
    pub(super) fn numbering(&self, style: &str) -> Option<(&str, u8)> {
        self.numbering
            .get(style)
            .map(|(num, ilvl)| (num.as_str(), *ilvl))
    }

    /// The heading level (1 = top) of a paragraph style, if it is a heading style.
    pub(super) fn heading_level(&self, style: &str) -> Option<u8> {
        self.levels.get(style).copied()
    }
}

/// A heading level from a style's name or outline level (0-based in OOXML; 9 means body text).
pub(super) fn heading_level(name: &str, outline: Option<u8>) -> Option<u8> {
    if let Some(level) = outline.filter(|l| *l < 9) {
        return Some(level + 1);
    }
    let lower = name.to_ascii_lowercase();
    if lower == "title" {
        return Some(1);
    }
    lower
        .strip_prefix("heading")
        .map(str::trim)
        .and_then(|n| n.parse::<u8>().ok())
        .filter(|n| (1..=9).contains(n))
}

/// One list level's format.
#[derive(Debug, Clone, Default)]
struct Level {
    format: String,
    text: String,
    start: u32,
}

/// List numbering: levels per abstract definition, instances (`numId`) pointing at them, and the
/// counters as the document runs.
#[derive(Debug, Default)]
pub(super) struct Numbering {
    abstracts: HashMap<String, HashMap<u8, Level>>,
    instances: HashMap<String, String>,
    counters: HashMap<String, [u32; 9]>,
}

impl Numbering {
    pub(super) fn parse(xml: &[u8]) -> Self {
        let mut out = Self::default();
        let mut reader = Reader::from_reader(xml);
        let mut buf = Vec::new();
        let mut abstract_id: Option<String> = None;
        let mut level: Option<u8> = None;
        let mut num_id: Option<String> = None;
        loop {
            match reader.read_event_into(&mut buf) {
                Ok(Event::Start(e) | Event::Empty(e)) => match local(e.name().as_ref()) {
                    "abstractNum" => abstract_id = attr(&e, "abstractNumId"),
                    "lvl" => level = attr(&e, "ilvl").and_then(|v| v.parse().ok()),
                    "num" => num_id = attr(&e, "numId"),
                    "abstractNumId" => {
                        if let (Some(num), Some(val)) = (&num_id, attr(&e, "val")) {
                            out.instances.insert(num.clone(), val);
                        }
                    }
                    name @ ("numFmt" | "lvlText" | "start") => {
                        if let (Some(a), Some(l)) = (&abstract_id, level) {
                            let entry = out
                                .abstracts
                                .entry(a.clone())
                                .or_default()
                                .entry(l)
                                .or_insert_with(|| Level {
                                    start: 1,
                                    ..Level::default()
                                });
                            let val = attr(&e, "val").unwrap_or_default();
                            match name {
                                "numFmt" => entry.format = val,
                                "lvlText" => entry.text = val,
                                _ => entry.start = val.parse().unwrap_or(1),
                            }
                        }
                    }
                    _ => {}
                },
                Ok(Event::End(e)) => match local(e.name().as_ref()) {
                    "abstractNum" => abstract_id = None,
                    "lvl" => level = None,
                    "num" => num_id = None,
                    _ => {}
                },
                Ok(Event::Eof) | Err(_) => break,
                _ => {}
            }
            buf.clear();
        }
        out
    }

    /// The marker of the next item of list `num_id` at level `ilvl` (`1.`, `a)`, `2.1`, `•`),
    /// advancing the counters (a level restarts when a shallower one advances).
    pub(super) fn next_marker(&mut self, num_id: &str, ilvl: u8) -> Option<String> {
        let abstract_id = self.instances.get(num_id)?;
        let levels = self.abstracts.get(abstract_id)?;
        let level = levels.get(&ilvl)?;
        let ilvl = usize::from(ilvl.min(8));
        // Counters are kept per abstract definition: Word continues a list across instances of it.
        let counters = self.counters.entry(abstract_id.clone()).or_insert([0; 9]);
        for (i, c) in counters.iter_mut().enumerate().skip(ilvl + 1) {
            *c = levels
                .get(&(i as u8))
                .map_or(0, |l| l.start.saturating_sub(1));
        }
        if counters[ilvl] == 0 {
            counters[ilvl] = level.start.max(1);
        } else {
            counters[ilvl] += 1;
        }
        if level.format == "bullet" || level.format == "none" {
            return Some(if level.format == "bullet" {
                "•".into()
            } else {
                String::new()
            });
        }
        let mut marker = level.text.clone();
        for (i, count) in counters.iter().enumerate().take(ilvl + 1) {
            let format = levels
                .get(&(i as u8))
                .map_or("decimal", |l| l.format.as_str());
            marker = marker.replace(&format!("%{}", i + 1), &render(*count.max(&1), format));
        }
        Some(marker)
    }
}

/// A counter in a list format.
fn render(n: u32, format: &str) -> String {
    match format {
        "lowerLetter" => letters(n).to_ascii_lowercase(),
        "upperLetter" => letters(n),
        "lowerRoman" => roman(n).to_ascii_lowercase(),
        "upperRoman" => roman(n),
        _ => n.to_string(),
    }
}

fn letters(n: u32) -> String {
    // Word repeats the letter past z: aa, bb, …
    let n = n.max(1) - 1;
    let letter = char::from(b'A' + u8::try_from(n % 26).unwrap_or(0));
    std::iter::repeat_n(letter, (n / 26 + 1) as usize).collect()
}

fn roman(mut n: u32) -> String {
    const TABLE: [(u32, &str); 13] = [
        (1000, "M"),
        (900, "CM"),
        (500, "D"),
        (400, "CD"),
        (100, "C"),
        (90, "XC"),
        (50, "L"),
        (40, "XL"),
        (10, "X"),
        (9, "IX"),
        (5, "V"),
        (4, "IV"),
        (1, "I"),
    ];
    let mut out = String::new();
    for (value, digits) in TABLE {
        while n >= value {
            out.push_str(digits);
            n -= value;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn heading_levels_come_from_outline_levels_and_built_in_names() {
        assert_eq!(super::heading_level("heading 2", None), Some(2));
        assert_eq!(super::heading_level("Title", None), Some(1));
        assert_eq!(super::heading_level("My Style", Some(0)), Some(1));
        assert_eq!(super::heading_level("Normal", Some(9)), None);
        assert_eq!(super::heading_level("Normal", None), None);
    }

    #[test]
    fn counters_render_in_their_formats() {
        assert_eq!(super::render(3, "lowerLetter"), "c");
        assert_eq!(super::render(28, "upperLetter"), "BB");
        assert_eq!(super::render(14, "lowerRoman"), "xiv");
        assert_eq!(super::render(7, "decimal"), "7");
    }
}
