//! The exact channel: identifiers (heading anchors, JSON ids, configured patterns such as
//! `RFC 9110` or `Article 17`) matched exactly after normalisation.

pub mod mentions;

use std::fmt::Write as _;

use rusqlite::{Connection, params_from_iter};

use crate::error::Result;
use crate::lexical::Filter;
use crate::parse::slugify;
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
    conn: &Connection,
    snapshot_id: i64,
    identifiers: &[String],
    filter: &Filter,
    limit: usize,
) -> Result<Vec<(i64, i64)>> {
    if identifiers.is_empty() || limit == 0 {
        return Ok(Vec::new());
    }
    let (sql, values) = matching(
        "SELECT DISTINCT i.normalized",
        snapshot_id,
        identifiers,
        filter,
        Narrow::Definitions,
    );
    let defined: Vec<String> = conn
        .prepare_cached(&sql)?
        .query_map(params_from_iter(values), |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    let kept: Vec<String> = identifiers
        .iter()
        .filter(|id| !defined.iter().any(|d| d != *id && d.contains(id.as_str())))
        .cloned()
        .collect();
    let (mut sql, values) = matching(
        "SELECT c.id, COALESCE(c.owner_chunk_id, c.id), MIN(CASE WHEN i.kind IN ('anchor', 'json_id', 'record', 'document') THEN 0 WHEN i.kind LIKE 'heading:%' THEN 1 ELSE 2 END) AS class,
                MAX(length(i.normalized)) AS specific",
        snapshot_id,
        &kept,
        filter,
        Narrow::NoMentionsOf(&defined),
    );
    // Within a class the most specific identifier wins: asked `Article 17(1)(b)`, the point's
    // window comes before Article 17's first window, which also matches `Article 17`.
    let _ = write!(
        sql,
        " GROUP BY c.id ORDER BY class, specific DESC, c.id LIMIT {limit}"
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let ids = stmt
        .query_map(params_from_iter(values), |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    Ok(ids)
}

/// The sources of the snapshot (within the filter) that a query's identifiers name as a whole
/// document (`RFC 2616`: the RFC itself, not a passage citing it).
///
/// # Errors
/// SQLite errors.
pub fn documents_named(
    conn: &Connection,
    snapshot_id: i64,
    identifiers: &[String],
    filter: &Filter,
) -> Result<Vec<i64>> {
    if identifiers.is_empty() {
        return Ok(Vec::new());
    }
    let (mut sql, values) = matching(
        "SELECT DISTINCT s.id",
        snapshot_id,
        identifiers,
        filter,
        Narrow::NoMentionsOf(&[]),
    );
    sql.push_str(" AND i.kind = 'document'");
    Ok(conn
        .prepare_cached(&sql)?
        .query_map(params_from_iter(values), |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?)
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
    conn: &Connection,
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
    let (sql, values) = matching(
        "SELECT DISTINCT i.normalized",
        snapshot_id,
        &normalized,
        filter,
        Narrow::NoMentionsOf(&[]),
    );
    let found: Vec<String> = conn
        .prepare_cached(&sql)?
        .query_map(params_from_iter(values), |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
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

/// Which identifier rows [`matching`] keeps besides the query's identifiers.
enum Narrow<'a> {
    /// Definitions only (anchors, ids).
    Definitions,
    /// Every row except mentions of these defined identifiers.
    NoMentionsOf(&'a [String]),
}

/// `select` over the identifier rows of the snapshot's eligible members that carry one of
/// `identifiers`, each with its unit's window (`c`), narrowed by `narrow`.
fn matching(
    select: &str,
    snapshot_id: i64,
    identifiers: &[String],
    filter: &Filter,
    narrow: Narrow<'_>,
) -> (String, Vec<rusqlite::types::Value>) {
    // CROSS JOIN fixes the order: start from the few matching identifiers, not from every member.
    let mut sql = format!(
        "{select}
         FROM identifiers i
         CROSS JOIN evidence_units u ON u.id = i.unit_id
         CROSS JOIN snapshot_members m ON m.snapshot_id = ?1 AND m.source_id = (SELECT r.source_id FROM revisions r WHERE r.id = i.revision_id) AND m.extraction_id = u.extraction_id
         CROSS JOIN sources s ON s.id = m.source_id
         CROSS JOIN collections col ON col.id = s.collection_id
         CROSS JOIN chunks c ON c.id = (
             SELECT w.id FROM chunks w
             WHERE w.extraction_id = u.extraction_id AND w.last_unit_id >= u.id
             ORDER BY w.last_unit_id LIMIT 1)
         WHERE i.normalized IN ("
    );
    let mut values: Vec<rusqlite::types::Value> = vec![snapshot_id.into()];
    push_list(&mut sql, &mut values, identifiers);
    sql.push(')');
    match narrow {
        Narrow::Definitions => {
            sql.push_str(" AND i.kind IN ('anchor', 'json_id', 'record', 'document')")
        }
        Narrow::NoMentionsOf([]) => {}
        Narrow::NoMentionsOf(defined) => {
            sql.push_str(
                " AND (i.kind IN ('anchor', 'json_id', 'record', 'document') OR i.normalized NOT IN (",
            );
            push_list(&mut sql, &mut values, defined);
            sql.push_str("))");
        }
    }
    if filter.verified {
        // A record's key counts once a person reviewed the record.
        sql.push_str(
            " AND (i.kind != 'record' OR EXISTS (SELECT 1 FROM structured_records sr WHERE sr.key = i.value AND sr.status = 'reviewed'))",
        );
    }
    crate::store::filter::push_sql(filter, &mut sql, &mut values);
    (sql, values)
}

/// `?n, ?n+1, …` for `items`, bound after the values already there.
fn push_list(sql: &mut String, values: &mut Vec<rusqlite::types::Value>, items: &[String]) {
    for (n, item) in items.iter().enumerate() {
        let _ = write!(
            sql,
            "{}?{}",
            if n > 0 { ", " } else { "" },
            values.len() + 1
        );
        values.push(item.clone().into());
    }
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
