//! Relation assertions: parsed from sources (an RFC's `Obsoletes:` and `Updates:` header lines),
//! declared by the owner or proposed by an agent, each checked against its pack definition —
//! endpoint kinds, creation method, cardinality — before it is stored. Declaring a relation type
//! makes no assertion; an assertion that would break its type's cardinality is refused, naming
//! the assertion already there.

use std::sync::LazyLock;

use regex::Regex;
use sha2::Digest as _;

use crate::config::{Pack, RelationDefinition};
use crate::error::{Diagnostic, Error, Result};
use crate::parse::Format;
use crate::store::assertions;
use crate::store::tx::Tx;
use crate::unit::Unit;

/// A relation a file states about itself, found while it was read.
#[derive(Debug, Clone)]
pub struct Parsed {
    /// The relation type (`obsoletes`).
    pub relation: String,
    /// The subject's key (`RFC 3986`).
    pub from_key: String,
    /// The object's key (`RFC 2396`).
    pub to_key: String,
    /// The unit that states it (its ordinal in the extraction).
    pub unit: usize,
}

static NUMBER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"Request for Comments:\s*(\d{1,5})").expect("static regex"));
/// `Obsoletes: 2732, 2396, 1808` at the start of a header line (the right column holds authors
/// and dates).
static HEADER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?m)^(Obsoletes|Updates):\s*((?:\d{1,5}(?:,\s*|\s+(?:\(if approved\)\s*)?)?)+)")
        .expect("static regex")
});
static DIGITS: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\d{1,5}").expect("static regex"));

/// The relations an RFC's header states (`Obsoletes:`, `Updates:`), each with the unit that
/// holds the header line. Only the first page's header is read: the body cites other RFCs
/// freely.
#[must_use]
pub fn parse(format: Format, text: &str, units: &[Unit]) -> Vec<Parsed> {
    if format != Format::Rfc {
        return Vec::new();
    }
    let Some(number) = NUMBER.captures(text).map(|c| c[1].to_string()) else {
        return Vec::new();
    };
    // The header block ends at the first blank line after the `Request for Comments:` line.
    let header_end = NUMBER.find(text).map_or(0, |m| {
        text[m.end()..]
            .find("\n\n")
            .or_else(|| text[m.end()..].find("\r\n\r\n"))
            .map_or(text.len(), |i| m.end() + i)
    });
    let header_start = text[..NUMBER.find(text).map_or(0, |m| m.start())]
        .rfind("\n\n")
        .unwrap_or(0);
    let mut out = Vec::new();
    for c in HEADER.captures_iter(&text[header_start..header_end]) {
        let at = header_start + c.get(0).map_or(0, |m| m.start());
        let Some(unit) = units
            .iter()
            .position(|u| u.is_leaf && u.span.byte_start <= at && at < u.span.byte_end.max(at + 1))
        else {
            continue;
        };
        let relation = if &c[1] == "Obsoletes" {
            "obsoletes"
        } else {
            "updates"
        };
        for target in DIGITS.find_iter(&c[2]) {
            out.push(Parsed {
                relation: relation.into(),
                from_key: format!("RFC {number}"),
                to_key: format!("RFC {}", target.as_str()),
                unit,
            });
        }
    }
    out
}

/// Records `relation`'s definition as the pack holds it now.
fn record_type(
    tx: &dyn Tx,
    pack: &Pack,
    relation: &str,
    definition: &RelationDefinition,
) -> Result<()> {
    let json = serde_json::to_string(definition).unwrap_or_else(|_| "{}".into());
    let fingerprint = hex::encode(sha2::Sha256::digest(json.as_bytes()));
    assertions::record_type(
        tx,
        relation,
        &fingerprint,
        &pack.name,
        &json,
        crate::clock::now_ms(),
    )
}

pub use crate::store::assertions::{Basis, Decision};

/// One assertion to store.
pub(crate) struct Assertion<'a> {
    pub relation: &'a str,
    pub from_kind: &'a str,
    pub from_key: &'a str,
    pub to_kind: &'a str,
    pub to_key: &'a str,
    pub method: Basis,
    pub revision_id: Option<i64>,
    pub support_unit_id: Option<i64>,
    pub actor: &'a str,
    pub note: Option<&'a str>,
}

/// Checks `a` against its definition and stores it: parsed and declared assertions are accepted,
/// proposed ones wait for review. Returns its id (an identical assertion already stored is that
/// one).
///
/// # Errors
/// `E_INVALID_ARGUMENT` for a relation the pack does not define, a method it does not allow, an
/// endpoint of a kind it does not join, or missing support it requires; `E_CONFLICT` for an
/// assertion that would break its cardinality.
pub(crate) fn assert(tx: &dyn Tx, pack: &Pack, a: &Assertion<'_>) -> Result<i64> {
    let definition = pack.relations.get(a.relation).ok_or_else(|| {
        Error::InvalidArgument(format!(
            "relation {:?} is not defined by pack {:?} (it defines {})",
            a.relation,
            pack.name,
            pack.relations
                .keys()
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        ))
    })?;
    if !definition.creation.iter().any(|m| m == a.method.as_str()) {
        return Err(Error::InvalidArgument(format!(
            "{} assertions cannot be {}: the type allows {}",
            a.relation,
            a.method,
            definition.creation.join(", ")
        )));
    }
    for (side, kind, allowed) in [
        ("subject", a.from_kind, &definition.from),
        ("object", a.to_kind, &definition.to),
    ] {
        if !allowed.iter().any(|k| k == kind) {
            return Err(Error::InvalidArgument(format!(
                "{} joins {} to {}: its {side} cannot be of kind {kind:?}",
                a.relation,
                definition.from.join("|"),
                definition.to.join("|")
            )));
        }
    }
    if definition.requires_support && a.support_unit_id.is_none() {
        return Err(Error::InvalidArgument(format!(
            "{} assertions cite the evidence that supports them: give one (unit:N or a segment id)",
            a.relation
        )));
    }
    if let Some(existing) = assertions::find(
        tx,
        a.relation,
        a.from_key,
        a.to_key,
        a.method.as_str(),
        a.revision_id,
    )? {
        return Ok(existing);
    }
    if let Some(breach) = cardinality_breach(tx, a.relation, definition, a.from_key, a.to_key)? {
        return Err(Error::Conflict(breach));
    }
    record_type(tx, pack, a.relation, definition)?;
    let status = if a.method == Basis::Proposed {
        Decision::Proposed
    } else {
        Decision::Accepted
    };
    assertions::insert(
        tx,
        &assertions::NewAssertion {
            relation: a.relation,
            from_kind: a.from_kind,
            from_key: a.from_key,
            to_kind: a.to_kind,
            to_key: a.to_key,
            method: a.method.as_str(),
            status: status.as_str(),
            revision_id: a.revision_id,
            support_unit_id: a.support_unit_id,
            actor: a.actor,
            note: a.note,
            created_at: crate::clock::now_ms(),
        },
    )
}

/// Why `from → to` would break `relation`'s cardinality, given the assertions not rejected.
pub(crate) fn cardinality_breach(
    tx: &dyn Tx,
    relation: &str,
    definition: &RelationDefinition,
    from_key: &str,
    to_key: &str,
) -> Result<Option<String>> {
    let one_subject = matches!(
        definition.cardinality.as_str(),
        "one_to_one" | "one_to_many"
    );
    let one_object = matches!(
        definition.cardinality.as_str(),
        "one_to_one" | "many_to_one"
    );
    if one_subject && let Some(holder) = assertions::other_subject(tx, relation, to_key, from_key)?
    {
        return Ok(Some(format!(
            "{to_key} is already the object of `{holder} {relation} {to_key}` and {relation} is {}: reject that assertion first",
            definition.cardinality
        )));
    }
    if one_object && let Some(held) = assertions::other_object(tx, relation, from_key, to_key)? {
        return Ok(Some(format!(
            "{from_key} already {relation} {held} and {relation} is {}: reject that assertion first",
            definition.cardinality
        )));
    }
    Ok(None)
}

/// Stores the relations a new extraction states about itself; one that cannot be stored (a type
/// the pack lacks, a cardinality breach) is a diagnostic, and the file is still recorded.
pub(super) fn store_parsed(
    tx: &dyn Tx,
    pack: &Pack,
    from_kind: &str,
    revision_id: i64,
    extraction_id: i64,
    parsed: &[Parsed],
    path: &str,
) -> Result<Vec<Diagnostic>> {
    let mut diagnostics = Vec::new();
    for p in parsed {
        let unit_id = super::unit_id(tx, extraction_id, p.unit)?;
        let stored = assert(
            tx,
            pack,
            &Assertion {
                relation: &p.relation,
                from_kind,
                from_key: &p.from_key,
                // An RFC's header names RFCs.
                to_kind: from_kind,
                to_key: &p.to_key,
                method: Basis::Parsed,
                revision_id: Some(revision_id),
                support_unit_id: Some(unit_id),
                actor: "parser",
                note: None,
            },
        );
        match stored {
            Ok(_) => {}
            Err(e @ (Error::InvalidArgument(_) | Error::Conflict(_))) => {
                diagnostics.push(Diagnostic::warning(
                    path,
                    e.code(),
                    format!(
                        "`{} {} {}` not recorded: {e}",
                        p.from_key, p.relation, p.to_key
                    ),
                ));
            }
            Err(e) => return Err(e),
        }
    }
    Ok(diagnostics)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_rfc_header_states_what_it_obsoletes_and_updates() {
        let text = "\n\nNetwork Working Group                                     T. Berners-Lee\nRequest for Comments: 3986                                       W3C/MIT\nSTD: 66                                                      R. Fielding\nUpdates: 1738                                               Day Software\nObsoletes: 2732, 2396, 1808                                  L. Masinter\nCategory: Standards Track                                  Adobe Systems\n                                                            January 2005\n\n\n1.  Introduction\n\n   This obsoletes nothing. Obsoletes: 9999\n";
        let units = crate::parse::parse(Format::Rfc, text, "rfc3986.txt")
            .unwrap()
            .units;
        let found = parse(Format::Rfc, text, &units);
        let pairs: Vec<(String, String)> = found
            .iter()
            .map(|p| (p.relation.clone(), p.to_key.clone()))
            .collect();
        assert_eq!(
            pairs,
            [
                ("updates".to_string(), "RFC 1738".to_string()),
                ("obsoletes".into(), "RFC 2732".into()),
                ("obsoletes".into(), "RFC 2396".into()),
                ("obsoletes".into(), "RFC 1808".into()),
            ]
        );
        assert!(found.iter().all(|p| p.from_key == "RFC 3986"));
        assert!(units[found[0].unit].text.contains("Updates: 1738"));
        assert!(parse(Format::Text, text, &units).is_empty());
    }
}
