//! The syntax cache's payload: one [`Analysis`] as JSON, without the unit texts (each is the exact
//! slice of its span, so it is cut again from the source on load).

use crate::unit::UnitType;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::references::References;
use super::{Analysis, GRAMMAR_VERSION, Language};
use crate::error::Diagnostic;
use crate::unit::{Identifier, Parsed, Span, Unit};

/// The cache key of a file's parse: everything [`super::analyze`]'s output depends on.
#[must_use]
pub fn key(content_sha256: &str, language: Language, path: &str, module: &str) -> String {
    let mut hasher = Sha256::new();
    for part in [
        content_sha256,
        GRAMMAR_VERSION,
        language.as_str(),
        path,
        module,
    ] {
        hasher.update(part.as_bytes());
        hasher.update([0]);
    }
    hex::encode(hasher.finalize())
}

#[derive(Serialize, Deserialize)]
struct CachedUnit {
    unit_type: UnitType,
    is_leaf: bool,
    parent: Option<usize>,
    span: Span,
    heading_path: Vec<String>,
    anchor: Option<String>,
    identifiers: Vec<(String, String)>,
    #[serde(default)]
    breaks: Vec<usize>,
    #[serde(default)]
    signature: Option<String>,
}

#[derive(Serialize, Deserialize)]
struct Payload {
    units: Vec<CachedUnit>,
    title: Option<String>,
    diagnostics: Vec<Diagnostic>,
    references: References,
    default_export: Option<String>,
}

/// Serializes an analysis for the cache.
#[must_use]
pub fn encode(analysis: &Analysis) -> String {
    let payload = Payload {
        units: analysis
            .parsed
            .units
            .iter()
            .map(|u| CachedUnit {
                unit_type: u.unit_type,
                is_leaf: u.is_leaf,
                parent: u.parent,
                span: u.span,
                heading_path: u.heading_path.clone(),
                anchor: u.anchor.clone(),
                identifiers: u
                    .identifiers
                    .iter()
                    .map(|i| (i.kind.clone(), i.value.clone()))
                    .collect(),
                breaks: u.breaks.clone(),
                signature: u.signature.clone(),
            })
            .collect(),
        title: analysis.parsed.title.clone(),
        diagnostics: analysis.parsed.diagnostics.clone(),
        references: analysis.references.clone(),
        default_export: analysis.default_export.clone(),
    };
    serde_json::to_string(&payload).unwrap_or_else(|_| "null".into())
}

/// Reads a cached analysis of `source` back; `None` if the payload does not fit the source (a
/// damaged or foreign entry), in which case the caller parses again.
#[must_use]
pub fn decode(payload: &str, source: &str) -> Option<Analysis> {
    let payload: Payload = serde_json::from_str(payload).ok()?;
    let units = payload
        .units
        .into_iter()
        .map(|u| {
            Some(Unit {
                unit_type: u.unit_type,
                is_leaf: u.is_leaf,
                parent: u.parent,
                text: source.get(u.span.byte_start..u.span.byte_end)?.to_string(),
                span: u.span,
                heading_path: u.heading_path,
                anchor: u.anchor,
                json_pointer: None,
                table_header: None,
                breaks: u.breaks,
                signature: u.signature,
                identifiers: u
                    .identifiers
                    .into_iter()
                    .map(|(kind, value)| Identifier { kind, value })
                    .collect(),
            })
        })
        .collect::<Option<Vec<_>>>()?;
    Some(Analysis {
        parsed: Parsed {
            units,
            diagnostics: payload.diagnostics,
            title: payload.title,
        },
        references: payload.references,
        default_export: payload.default_export,
    })
}

/// Reads only the references and default export of a payload (resolution needs no units).
#[must_use]
pub fn decode_references(payload: &str) -> Option<(References, Option<String>)> {
    #[derive(Deserialize)]
    struct Refs {
        references: References,
        default_export: Option<String>,
    }
    let refs: Refs = serde_json::from_str(payload).ok()?;
    Some((refs.references, refs.default_export))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cached_analysis_reads_back_equal() {
        let source = "import os\n\nclass A(Base):\n    \"\"\"Doc.\"\"\"\n    def f(self):\n        return os.path.join(self.g())\n";
        let fresh = super::super::analyze(Language::Python, source, "pkg/a.py", "pkg.a");
        let back = decode(&encode(&fresh), source).expect("decodes");
        assert_eq!(back.references, fresh.references);
        assert_eq!(back.parsed.units.len(), fresh.parsed.units.len());
        for (a, b) in back.parsed.units.iter().zip(&fresh.parsed.units) {
            assert_eq!(
                (a.unit_type, &a.text, a.span, &a.anchor, &a.identifiers),
                (b.unit_type, &b.text, b.span, &b.anchor, &b.identifiers)
            );
        }
        // A payload whose spans do not fit the source is refused, not trusted.
        assert!(decode(&encode(&fresh), "x = 1\n").is_none());
        assert_ne!(
            key("abc", Language::Python, "pkg/a.py", "pkg.a"),
            key("abc", Language::Python, "pkg/a.py", "a")
        );
    }
}
