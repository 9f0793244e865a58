//! The OOXML package: a zip read with bounds (entry count, bytes per part, compression ratio),
//! part names checked, relationships resolved inside the package only. External targets are
//! recorded, never fetched; macros are reported, never read.

use std::collections::BTreeMap;
use std::io::Read;

use quick_xml::Reader;
use quick_xml::events::Event;

use super::{DocxFailure, DocxLimits, attr, local};

/// One relationship of a part: its type's last path segment (`styles`, `footnotes`,
/// `officeDocument`: the same for Transitional and Strict URIs), its target, and whether the
/// target is outside the package.
#[derive(Debug, Clone)]
pub(super) struct Relationship {
    pub id: String,
    pub kind: String,
    pub target: String,
    pub external: bool,
}

/// The package's parts read so far, by normalised name.
pub(super) struct Package<'b> {
    archive: zip::ZipArchive<std::io::Cursor<&'b [u8]>>,
    limits: DocxLimits,
    read_bytes: u64,
}

impl<'b> Package<'b> {
    pub(super) fn open(bytes: &'b [u8], limits: DocxLimits) -> Result<Self, DocxFailure> {
        let archive = zip::ZipArchive::new(std::io::Cursor::new(bytes))
            .map_err(|e| DocxFailure::Malformed(format!("not a zip archive ({e})")))?;
        if archive.len() > limits.max_parts {
            return Err(DocxFailure::Limit(format!(
                "{} entries in the archive, over the limit of {}",
                archive.len(),
                limits.max_parts
            )));
        }
        Ok(Self {
            archive,
            limits,
            read_bytes: 0,
        })
    }

    /// Entry names (for reporting macros and the like).
    pub(super) fn names(&self) -> Vec<String> {
        self.archive
            .file_names()
            .filter_map(Result::ok)
            .map(|n| n.into_owned())
            .collect()
    }

    /// A part's bytes, bounded: its declared and its actual size against `max_part_bytes`, its
    /// compression ratio, and the package's total against `max_total_bytes`.
    pub(super) fn read(&mut self, name: &str) -> Result<Option<Vec<u8>>, DocxFailure> {
        let Some(index) = self.archive.index_for_name(name) else {
            return Ok(None);
        };
        let mut entry = self
            .archive
            .by_index(index)
            .map_err(|e| DocxFailure::Malformed(format!("entry {name}: {e}")))?;
        let declared = entry.size();
        let compressed = entry.compressed_size().max(1);
        let limit = self.limits.max_part_bytes;
        if declared > limit {
            return Err(DocxFailure::Limit(format!(
                "part {name} declares {declared} bytes, over the limit of {limit}"
            )));
        }
        if declared > 1 << 20 && declared / compressed > self.limits.max_ratio {
            return Err(DocxFailure::Limit(format!(
                "part {name} inflates {}× ({compressed} → {declared} bytes), over the limit of {}×",
                declared / compressed,
                self.limits.max_ratio
            )));
        }
        // The declared size can lie: read at most one byte past the limit.
        let mut out = Vec::with_capacity(usize::try_from(declared.min(limit)).unwrap_or(0));
        (&mut entry)
            .take(limit + 1)
            .read_to_end(&mut out)
            .map_err(|e| DocxFailure::Malformed(format!("entry {name}: {e}")))?;
        if out.len() as u64 > limit {
            return Err(DocxFailure::Limit(format!(
                "part {name} inflates past the limit of {limit} bytes"
            )));
        }
        self.read_bytes += out.len() as u64;
        if self.read_bytes > self.limits.max_total_bytes {
            return Err(DocxFailure::Limit(format!(
                "the package inflates past the limit of {} bytes",
                self.limits.max_total_bytes
            )));
        }
        Ok(Some(out))
    }

    /// The relationships of `part` (from `<dir>/_rels/<file>.rels`), targets resolved against the
    /// part's folder. A target that leaves the package is an error for that relationship only.
    pub(super) fn relationships(
        &mut self,
        part: &str,
        diagnostics: &mut Vec<String>,
    ) -> Result<Vec<Relationship>, DocxFailure> {
        let (dir, file) = part.rsplit_once('/').unwrap_or(("", part));
        let rels_name = if dir.is_empty() {
            format!("_rels/{file}.rels")
        } else {
            format!("{dir}/_rels/{file}.rels")
        };
        let Some(xml) = self.read(&rels_name)? else {
            return Ok(Vec::new());
        };
        let mut reader = Reader::from_reader(xml.as_slice());
        let mut buf = Vec::new();
        let mut out = Vec::new();
        loop {
            match reader.read_event_into(&mut buf) {
                Ok(Event::Start(e) | Event::Empty(e))
                    if local(e.name().as_ref()) == "Relationship" =>
                {
                    let id = attr(&e, "Id").unwrap_or_default();
                    let kind = attr(&e, "Type")
                        .map(|t| t.rsplit('/').next().unwrap_or_default().to_string())
                        .unwrap_or_default();
                    let raw = attr(&e, "Target").unwrap_or_default();
                    let external = attr(&e, "TargetMode").is_some_and(|m| m == "External");
                    if external {
                        out.push(Relationship {
                            id,
                            kind,
                            target: raw,
                            external,
                        });
                        continue;
                    }
                    match resolve(dir, &raw) {
                        Some(target) => out.push(Relationship {
                            id,
                            kind,
                            target,
                            external,
                        }),
                        None => diagnostics.push(format!(
                            "relationship {id} of {part} points outside the package ({raw}); ignored"
                        )),
                    }
                }
                Ok(Event::Eof) => break,
                Err(e) => {
                    return Err(DocxFailure::Malformed(format!("{rels_name}: {e}")));
                }
                _ => {}
            }
            buf.clear();
        }
        Ok(out)
    }
}

/// `target` resolved against the folder `dir` inside the package (`..` allowed while it stays
/// inside), or `None` when it would leave the package or is not a plain relative name.
fn resolve(dir: &str, target: &str) -> Option<String> {
    if target.contains('\\') || target.contains(':') {
        return None;
    }
    let mut parts: Vec<&str> = if target.starts_with('/') {
        Vec::new()
    } else {
        dir.split('/').filter(|s| !s.is_empty()).collect()
    };
    for segment in target.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            s => parts.push(s),
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

/// Parts named by content-type overrides (`[Content_Types].xml`), by content type.
pub(super) fn content_types(
    package: &mut Package<'_>,
) -> Result<BTreeMap<String, String>, DocxFailure> {
    let Some(xml) = package.read("[Content_Types].xml")? else {
        return Err(DocxFailure::Malformed(
            "no [Content_Types].xml: not an OOXML package".into(),
        ));
    };
    let mut reader = Reader::from_reader(xml.as_slice());
    let mut buf = Vec::new();
    let mut out = BTreeMap::new();
    loop {
        match reader.read_event_into(&mut buf) {
            Ok(Event::Start(e) | Event::Empty(e)) if local(e.name().as_ref()) == "Override" => {
                if let (Some(part), Some(kind)) = (attr(&e, "PartName"), attr(&e, "ContentType")) {
                    out.insert(part.trim_start_matches('/').to_string(), kind);
                }
            }
            Ok(Event::Eof) => break,
            Err(e) => return Err(DocxFailure::Malformed(format!("[Content_Types].xml: {e}"))),
            _ => {}
        }
        buf.clear();
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    #[test]
    fn targets_stay_inside_the_package() {
        assert_eq!(
            super::resolve("word", "styles.xml").as_deref(),
            Some("word/styles.xml")
        );
        assert_eq!(
            super::resolve("word", "../customXml/item1.xml").as_deref(),
            Some("customXml/item1.xml")
        );
        assert_eq!(
            super::resolve("word", "/word/media/a.png").as_deref(),
            Some("word/media/a.png")
        );
        assert_eq!(super::resolve("word", "../../etc/passwd"), None);
        assert_eq!(super::resolve("word", "..\\..\\x"), None);
        assert_eq!(super::resolve("word", "C:/x"), None);
    }
}
