//! The exact channel: identifiers (heading anchors, JSON ids, configured patterns such as
//! `RFC 9110` or `Article 17`) matched exactly after normalisation.

pub mod mentions;

use crate::error::Result;
use crate::lexical::Filter;
use crate::parse::slugify;
use crate::store::identifiers as identifier_rows;
use crate::store::tx::Tx;
use crate::unit::IdentifierRule;

/// Normal form of an identifier for exact matching: lowercase, no whitespace.
#[must_use]
pub fn normalize_identifier(value: &str) -> String {
    value
        .chars()
        .filter(|c| !c.is_whitespace())
        .flat_map(char::to_lowercase)
        .collect()
}

/// Normalised identifiers a query names: pattern matches, the whole query, and its heading slug.
#[must_use]
pub fn query_identifiers(query: &str, patterns: &[IdentifierRule]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut push = |v: String| {
        if !v.is_empty() && !out.contains(&v) {
            out.push(v);
        }
    };
    for found in named_identifiers(query, patterns) {
        push(normalize_identifier(&found));
    }
    let trimmed = query.trim();
    // A whole query is an identifier only when it is short enough to be one.
    if trimmed.chars().count() <= 80 {
        push(normalize_identifier(trimmed));
        push(slugify(trimmed));
    }
    out
}

/// `(chunk_id, owner_id)` of chunks whose units carry one of `identifiers`, best first: anchors and ids, then identifiers
/// in headings (definitions), then mentions; within a class, the longest identifier matched (the
/// most specific), then document order.
///
/// Where the corpus defines an identifier the query names (an anchor: a section, an article's
/// point), the channel votes for the definition, not for the passages that mention it, nor for
/// the identifiers it contains: asked `RFC 6749 §4.1.2`, it answers with that section, not with
/// the registry that cites it or with every window naming `RFC 6749`. Those passages stay
/// findable through the other channels.
///
/// # Errors
/// SQLite errors.
pub fn search(
    conn: &dyn Tx,
    snapshot_id: i64,
    identifiers: &[String],
    filter: &Filter,
    limit: usize,
) -> Result<Vec<(i64, i64)>> {
    if identifiers.is_empty() || limit == 0 {
        return Ok(Vec::new());
    }
    let defined = identifier_rows::defined(conn, snapshot_id, identifiers, filter)?;
    let kept: Vec<String> = identifiers
        .iter()
        .filter(|id| !defined.iter().any(|d| d != *id && d.contains(id.as_str())))
        .cloned()
        .collect();
    identifier_rows::windows(conn, snapshot_id, &kept, filter, &defined, limit)
}

/// The sources of the snapshot (within the filter) that a query's identifiers name as a whole
/// document (`RFC 2616`: the RFC itself, not a passage citing it).
///
/// # Errors
/// SQLite errors.
pub fn documents_named(
    conn: &dyn Tx,
    snapshot_id: i64,
    identifiers: &[String],
    filter: &Filter,
) -> Result<Vec<i64>> {
    if identifiers.is_empty() {
        return Ok(Vec::new());
    }
    identifier_rows::documents(conn, snapshot_id, identifiers, filter)
}

/// The identifiers the patterns find in a query, as written (or as their canonical template
/// spells them), each once.
#[must_use]
pub fn named_identifiers(query: &str, patterns: &[IdentifierRule]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for pattern in patterns {
        for found in pattern.find_all(query) {
            if !out
                .iter()
                .any(|o| normalize_identifier(o) == normalize_identifier(&found))
            {
                out.push(found);
            }
        }
    }
    out
}

/// Of `identifiers` (as written), those no eligible unit of the snapshot carries.
///
/// # Errors
/// SQLite errors.
pub fn unmatched(
    conn: &dyn Tx,
    snapshot_id: i64,
    identifiers: &[String],
    filter: &Filter,
) -> Result<Vec<String>> {
    if identifiers.is_empty() {
        return Ok(Vec::new());
    }
    let normalized: Vec<String> = identifiers
        .iter()
        .map(|i| normalize_identifier(i))
        .collect();
    let found = identifier_rows::present(conn, snapshot_id, &normalized, filter)?;
    Ok(identifiers
        .iter()
        .zip(&normalized)
        .filter(|(_, n)| !found.contains(n))
        .map(|(i, _)| i.clone())
        .collect())
}

/// Words that only connect an identifier to a question (`what does RFC 2616 say about`): left
/// alone, they ask nothing of the document.
const GLUE: &[&str] = &[
    "a", "about", "an", "and", "are", "as", "at", "by", "does", "do", "for", "from", "how", "in",
    "is", "it", "of", "on", "or", "say", "says", "see", "the", "to", "what", "which", "with",
];

/// What a query asks besides the identifiers the patterns find in it (`Entity Tags in RFC 2616`
/// → `Entity Tags in`): `None` when only identifiers and glue words are left.
#[must_use]
pub fn residual(query: &str, patterns: &[IdentifierRule]) -> Option<String> {
    // Every pattern reads the whole query (`Section 4.2 of RFC 3986` is one match of one pattern
    // and holds a match of another), then every matched byte is blanked.
    let mut blank = vec![false; query.len()];
    for pattern in patterns {
        for m in pattern.regex.find_iter(query) {
            blank[m.range()].fill(true);
        }
    }
    let rest: String = query
        .char_indices()
        .map(|(i, c)| if blank[i] { ' ' } else { c })
        .collect();
    let words: Vec<&str> = rest
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    words
        .iter()
        .any(|w| !GLUE.contains(&w.to_lowercase().as_str()))
        .then(|| words.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_identifiers_normalise_patterns_and_short_queries() {
        let patterns = vec![IdentifierRule {
            name: "rfc".to_string(),
            regex: regex::Regex::new(r"(?i)\bRFC\s?\d{1,5}\b").unwrap(),
            canonical: None,
        }];
        let ids = query_identifiers("what does RFC 9110 say", &patterns);
        assert_eq!(ids[0], "rfc9110");
        assert!(ids.contains(&"what-does-rfc-9110-say".to_string()));
        let long = "x ".repeat(60);
        assert!(query_identifiers(&long, &patterns).is_empty());
    }

    fn rule(name: &str, regex: &str) -> IdentifierRule {
        IdentifierRule {
            name: name.into(),
            regex: regex::RegexBuilder::new(regex)
                .case_insensitive(true)
                .build()
                .unwrap(),
            canonical: None,
        }
    }

    #[test]
    fn the_residual_is_what_a_query_asks_besides_its_identifiers() {
        let patterns = [
            rule("rfc", r"\bRFC\s?\d{1,5}\b"),
            rule(
                "section_of_rfc",
                r"(?:§|\bsection)\s*\d+(?:\.\d+)*\b\s+of\s+RFC\s?\d{1,5}",
            ),
        ];
        assert_eq!(
            residual("Entity Tags in RFC 2616", &patterns).as_deref(),
            Some("Entity Tags in")
        );
        // One pattern's match holds another's: nothing is left.
        assert_eq!(residual("Section 4.2 of RFC 3986", &patterns), None);
        assert_eq!(residual("what does RFC 2616 say about", &patterns), None);
        assert_eq!(residual("RFC 2616", &patterns), None);
        assert_eq!(
            residual("URI in RFC 3986", &patterns).as_deref(),
            Some("URI in")
        );
    }
}
