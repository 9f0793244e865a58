//! Whether a reader of a Word document can see a run's text. Word keeps text in a document that it
//! never shows: runs marked hidden (`w:vanish`, directly or through a style), text coloured like
//! what lies under it (white on a white page), type too small to read, type squeezed to a sliver.
//! A PDF's reader flags the same tricks (`ts/extract/pdf-graphics.ts`), and so does this one: such
//! text is kept, but as `hidden_text` of its own, never inside a paragraph a person can check.

use quick_xml::events::BytesStart;

use super::attr;

/// The run properties that decide whether text can be seen, as far as one level (document
/// defaults, a paragraph or character style, the run itself) sets them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct RunLook {
    /// `w:vanish`: hidden text.
    pub vanish: Option<bool>,
    /// `w:color`: `RRGGBB`, or `auto` (Word picks black or white against what lies under it).
    pub color: Option<String>,
    /// `w:sz`: size in half-points.
    pub half_points: Option<u32>,
    /// `w:w`: width as a percentage of the font's.
    pub scale: Option<u32>,
    /// `w:shd`: the run's own shading, `RRGGBB`.
    pub shading: Option<String>,
    /// `w:highlight`: drawn over any shading, `RRGGBB`.
    pub highlight: Option<String>,
}

impl RunLook {
    /// This level under `top`: what `top` sets wins.
    pub(super) fn under(&self, top: &Self) -> Self {
        Self {
            vanish: top.vanish.or(self.vanish),
            color: top.color.clone().or_else(|| self.color.clone()),
            half_points: top.half_points.or(self.half_points),
            scale: top.scale.or(self.scale),
            shading: top.shading.clone().or_else(|| self.shading.clone()),
            highlight: top.highlight.clone().or_else(|| self.highlight.clone()),
        }
    }

    /// Reads one child of a `w:rPr` (by local name); other elements are ignored.
    pub(super) fn set(&mut self, name: &str, e: &BytesStart<'_>) {
        match name {
            "vanish" => self.vanish = Some(toggle(e)),
            "color" => self.color = colour_of(e),
            "sz" => self.half_points = number(e),
            "w" => self.scale = number(e),
            "shd" => self.shading = shading(e),
            "highlight" => {
                self.highlight = attr(e, "val").and_then(|v| highlight(&v).map(str::to_string));
            }
            _ => {}
        }
    }

    /// Why a reader cannot see text drawn with these properties over `background` (`RRGGBB`: the
    /// paragraph's, cell's, text box's or page's colour under the run; `None` when it is not known,
    /// as in a shape filled from its theme), or `None` when it can be seen.
    pub(super) fn hidden(&self, background: Option<&str>) -> Option<&'static str> {
        if self.vanish == Some(true) {
            return Some("marked hidden (w:vanish)");
        }
        // Word's smallest size is 1 pt (half-point 2), which no one reads either; a PDF's reader
        // flags under 1 pt because a PDF's sizes are continuous and small print is common there.
        if self.half_points.is_some_and(|h| h < 4) {
            return Some("type under 2 pt");
        }
        if self.scale.is_some_and(|w| w < 10) {
            return Some("type squeezed under 10% of its width");
        }
        let under = self
            .highlight
            .as_deref()
            .or(self.shading.as_deref())
            .or(background)?;
        match self.color.as_deref() {
            Some(colour) if colour != "auto" && indistinct(colour, under) => {
                Some("same colour as its background")
            }
            _ => None,
        }
    }
}

/// A toggle property: present means on, unless its value says off.
fn toggle(e: &BytesStart<'_>) -> bool {
    attr(e, "val").is_none_or(|v| !matches!(v.as_str(), "0" | "false" | "off"))
}

fn number(e: &BytesStart<'_>) -> Option<u32> {
    attr(e, "val").and_then(|v| v.trim().parse().ok())
}

/// `RRGGBB` in upper case, if `value` is one.
fn hex(value: &str) -> Option<String> {
    let v = value.trim();
    (v.len() == 6 && v.bytes().all(|b| b.is_ascii_hexdigit())).then(|| v.to_ascii_uppercase())
}

/// A `w:color`: the page's own colour when it names it as a theme colour unshaded (`background1`,
/// `light1`: white in every built-in theme, and Word shows the theme's colour whatever `val`
/// says), else its value (a shade or tint of it is written out in `val`).
fn colour_of(e: &BytesStart<'_>) -> Option<String> {
    if attr(e, "themeColor").is_some_and(|t| t == "background1" || t == "light1")
        && attr(e, "themeShade").is_none()
        && attr(e, "themeTint").is_none()
    {
        return Some("FFFFFF".into());
    }
    let value = attr(e, "val")?;
    if value.eq_ignore_ascii_case("auto") {
        return Some("auto".into());
    }
    hex(&value)
}

/// The colour a `w:shd` paints: its pattern colour when the pattern is solid, else its fill;
/// `None` for no shading (`auto`, `nil`).
pub(super) fn shading(e: &BytesStart<'_>) -> Option<String> {
    let pattern = attr(e, "val").unwrap_or_default();
    if pattern == "nil" {
        return None;
    }
    if pattern == "solid"
        && let Some(colour) = attr(e, "color").and_then(|c| hex(&c))
    {
        return Some(colour);
    }
    attr(e, "fill").and_then(|f| hex(&f))
}

/// A `w:background`'s colour (the page's), if it sets one.
pub(super) fn page_colour(e: &BytesStart<'_>) -> Option<String> {
    attr(e, "color").and_then(|c| hex(&c))
}

/// A DrawingML colour's value (`a:srgbClr val`), if it is one.
pub(super) fn drawing_colour(e: &BytesStart<'_>) -> Option<String> {
    attr(e, "val").and_then(|c| hex(&c))
}

/// A VML colour (`#RRGGBB`), if it is written out.
pub(super) fn drawing_colour_hex(value: &str) -> Option<String> {
    hex(value.strip_prefix('#')?)
}

/// The colour of a named highlight (`w:highlight w:val`); `none` paints nothing.
fn highlight(name: &str) -> Option<&'static str> {
    Some(match name {
        "black" => "000000",
        "blue" => "0000FF",
        "cyan" => "00FFFF",
        "green" => "00FF00",
        "magenta" => "FF00FF",
        "red" => "FF0000",
        "yellow" => "FFFF00",
        "white" => "FFFFFF",
        "darkBlue" => "000080",
        "darkCyan" => "008080",
        "darkGreen" => "008000",
        "darkMagenta" => "800080",
        "darkRed" => "800000",
        "darkYellow" => "808000",
        "darkGray" => "808080",
        "lightGray" => "C0C0C0",
        _ => return None,
    })
}

/// Two colours a reader cannot tell apart: every channel within 8 of the other's (the PDF
/// reader's rule).
fn indistinct(a: &str, b: &str) -> bool {
    let channels = |c: &str| -> Option<[u8; 3]> {
        let n = u32::from_str_radix(c, 16).ok()?;
        Some([(n >> 16) as u8, (n >> 8) as u8, n as u8])
    };
    match (channels(a), channels(b)) {
        (Some(p), Some(q)) => p.iter().zip(q).all(|(x, y)| x.abs_diff(y) <= 8),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn look(xml: &str) -> RunLook {
        let mut reader = quick_xml::Reader::from_str(xml);
        let mut out = RunLook::default();
        loop {
            match reader.read_event() {
                Ok(quick_xml::events::Event::Empty(e)) => {
                    let name = super::super::local(e.name().as_ref()).to_string();
                    out.set(&name, &e);
                }
                Ok(quick_xml::events::Event::Eof) | Err(_) => break,
                _ => {}
            }
        }
        out
    }

    #[test]
    fn what_a_reader_cannot_see_is_named() {
        let white = Some("FFFFFF");
        assert_eq!(
            look(r#"<w:vanish/>"#).hidden(white),
            Some("marked hidden (w:vanish)")
        );
        assert_eq!(look(r#"<w:vanish w:val="0"/>"#).hidden(white), None);
        assert_eq!(
            look(r#"<w:color w:val="FEFEFE"/>"#).hidden(white),
            Some("same colour as its background")
        );
        assert_eq!(
            look(r#"<w:color w:val="000000" w:themeColor="background1"/>"#).hidden(white),
            Some("same colour as its background")
        );
        // A shade of the page's colour is written out, and seen.
        assert_eq!(
            look(r#"<w:color w:val="D9D9D9" w:themeColor="background1" w:themeShade="D9"/>"#)
                .hidden(white),
            None
        );
        // Under a shape filled from its theme, the colour under the text is not known.
        assert_eq!(look(r#"<w:color w:val="FFFFFF"/>"#).hidden(None), None);
        assert_eq!(
            look(r#"<w:vanish/>"#).hidden(None),
            Some("marked hidden (w:vanish)")
        );
        assert_eq!(look(r#"<w:color w:val="auto"/>"#).hidden(white), None);
        // White on a dark shading, or on a highlight, is plain to see; black on black is not.
        assert_eq!(
            look(r#"<w:color w:val="FFFFFF"/>"#).hidden(Some("1F3864")),
            None
        );
        assert_eq!(
            look(r#"<w:color w:val="FFFFFF"/><w:highlight w:val="darkBlue"/>"#).hidden(white),
            None
        );
        assert_eq!(
            look(r#"<w:color w:val="000000"/><w:shd w:val="solid" w:color="000000" w:fill="FFFFFF"/>"#)
                .hidden(white),
            Some("same colour as its background")
        );
        assert_eq!(
            look(r#"<w:sz w:val="1"/>"#).hidden(white),
            Some("type under 2 pt")
        );
        assert_eq!(look(r#"<w:sz w:val="16"/>"#).hidden(white), None);
        assert_eq!(
            look(r#"<w:w w:val="1"/>"#).hidden(white),
            Some("type squeezed under 10% of its width")
        );
    }

    #[test]
    fn a_run_overrides_its_styles() {
        let style = look(r#"<w:vanish/><w:color w:val="FFFFFF"/>"#);
        let run = look(r#"<w:vanish w:val="false"/><w:color w:val="000000"/>"#);
        assert_eq!(style.under(&run).hidden(Some("FFFFFF")), None);
        assert_eq!(
            RunLook::default().under(&style).hidden(Some("FFFFFF")),
            Some("marked hidden (w:vanish)")
        );
    }
}
