//! Facets: typed filter fields a kind declares (`level`, `jurisdiction`, `decided`…). Values are
//! set on sources (`add --kind standard --facet level=2`) and read against the kind's definition;
//! conditions (`level>=2`, `decided=2024-01-01..2024-12-31`) are read against every kind of the
//! pack that declares the name, and narrow what each channel may return before it ranks.

use std::collections::BTreeMap;

use crate::config::{Facet, KindDefinition};
use crate::{Error, Result};

/// A facet value as stored: numbers apart, so `level>=2` compares numbers, not text. Dates are
/// ISO `YYYY-MM-DD` text (which orders as the days do), booleans `true`/`false`.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// string, enum, date and boolean values.
    Text(String),
    /// number values.
    Number(f64),
}

impl Value {
    /// Reads `raw` as a value of `facet`'s type.
    ///
    /// # Errors
    /// `E_INVALID_ARGUMENT` naming the facet, its type and what was given.
    pub fn parse(name: &str, facet: &Facet, raw: &str) -> Result<Self> {
        let wrong = |expected: &str| {
            Error::InvalidArgument(format!(
                "facet {name:?} is a {} ({expected}); got {raw:?}",
                facet.kind
            ))
        };
        match facet.kind.as_str() {
            "number" => raw
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|n| n.is_finite())
                .map(Self::Number)
                .ok_or_else(|| wrong("a finite number")),
            "date" => is_iso_date(raw.trim())
                .then(|| Self::Text(raw.trim().to_string()))
                .ok_or_else(|| wrong("a day as YYYY-MM-DD")),
            "boolean" => match raw.trim() {
                "true" | "false" => Ok(Self::Text(raw.trim().to_string())),
                _ => Err(wrong("true or false")),
            },
            "enum" => {
                if facet.values.iter().any(|v| v == raw) {
                    Ok(Self::Text(raw.to_string()))
                } else {
                    Err(wrong(&format!("one of {}", facet.values.join(", "))))
                }
            }
            _ => Ok(Self::Text(raw.to_string())),
        }
    }
}

/// Reads `YYYY-MM-DD` with a real day of a real month. (A date crate for this one check would be
/// a dependency for ten lines; values are compared as text, which ISO dates order correctly.)
fn is_iso_date(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let num = |r: std::ops::Range<usize>| s.get(r).and_then(|p| p.parse::<u32>().ok());
    let (Some(y), Some(m), Some(d)) = (num(0..4), num(5..7), num(8..10)) else {
        return false;
    };
    if !s
        .bytes()
        .enumerate()
        .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit())
    {
        return false;
    }
    let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    let days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&d)
}

/// How a condition compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `=`.
    Eq,
    /// `!=`: a value of the facet other than this one (lacking the facet does not satisfy it).
    Ne,
    /// `>=` (numbers and dates; also the low end of a range).
    Ge,
    /// `<=` (numbers and dates; also the high end of a range).
    Le,
    /// `>` (numbers and dates).
    Gt,
    /// `<` (numbers and dates).
    Lt,
}

/// One facet condition of a query: a source is eligible when it has a value of the facet that
/// satisfies every comparison (a source without the facet is not).
#[derive(Debug, Clone, PartialEq)]
pub struct Condition {
    /// The facet's name.
    pub name: String,
    /// Comparisons that must all hold (a range `a..b` is `>= a` and `<= b`).
    pub tests: Vec<(Op, Value)>,
}

impl Condition {
    /// Reads `name=value`, `name!=value`, `name>=value` (also `<=`, `>`, `<`) or
    /// `name=low..high` (inclusive; either end may be left out), typed by the facets of that name
    /// the pack's kinds declare.
    ///
    /// # Errors
    /// `E_INVALID_ARGUMENT` for a malformed condition, a facet no kind declares, a value of the
    /// wrong type, or an order comparison on a facet that has no order.
    pub fn parse(kinds: &BTreeMap<String, KindDefinition>, raw: &str) -> Result<Self> {
        let at = raw.find(['=', '!', '>', '<']).ok_or_else(|| {
            Error::InvalidArgument(format!(
                "facet condition {raw:?}: expected NAME=VALUE, NAME>=VALUE, NAME<=VALUE, NAME!=VALUE or NAME=LOW..HIGH"
            ))
        })?;
        let name = raw[..at].trim();
        let rest = &raw[at..];
        let (op, value) = [
            (">=", Op::Ge),
            ("<=", Op::Le),
            ("!=", Op::Ne),
            ("=", Op::Eq),
            (">", Op::Gt),
            ("<", Op::Lt),
        ]
        .into_iter()
        .find_map(|(token, op)| rest.strip_prefix(token).map(|v| (op, v)))
        .ok_or_else(|| Error::InvalidArgument(format!("facet condition {raw:?}: no operator")))?;
        let declared: Vec<&Facet> = kinds.values().filter_map(|k| k.facets.get(name)).collect();
        if declared.is_empty() {
            let mut known: Vec<&str> = kinds
                .values()
                .flat_map(|k| k.facets.keys().map(String::as_str))
                .collect();
            known.sort_unstable();
            known.dedup();
            return Err(Error::InvalidArgument(format!(
                "facet {name:?} is declared by no kind of the pack (facets: {})",
                known.join(", ")
            )));
        }
        let typed = |raw: &str| -> Result<Value> {
            let mut first_error = None;
            for facet in &declared {
                match Value::parse(name, facet, raw) {
                    Ok(v) => return Ok(v),
                    Err(e) => {
                        first_error.get_or_insert(e);
                    }
                }
            }
            Err(first_error.unwrap_or_else(|| Error::InvalidArgument(raw.to_string())))
        };
        let ordered = declared
            .iter()
            .any(|f| matches!(f.kind.as_str(), "number" | "date"));
        let mut tests = Vec::new();
        match value.split_once("..").filter(|_| op == Op::Eq && ordered) {
            Some((low, high)) => {
                if !low.is_empty() {
                    tests.push((Op::Ge, typed(low)?));
                }
                if !high.is_empty() {
                    tests.push((Op::Le, typed(high)?));
                }
                if tests.is_empty() {
                    return Err(Error::InvalidArgument(format!(
                        "facet condition {raw:?}: a range needs at least one end"
                    )));
                }
            }
            None => {
                if !matches!(op, Op::Eq | Op::Ne) && !ordered {
                    return Err(Error::InvalidArgument(format!(
                        "facet {name:?} is not a number or a date: compare it with = or !="
                    )));
                }
                tests.push((op, typed(value)?));
            }
        }
        Ok(Self {
            name: name.to_string(),
            tests,
        })
    }
}

/// Reads an add's `--facet NAME=VALUE` settings against `kind`'s facets.
///
/// # Errors
/// `E_INVALID_ARGUMENT` when there is no kind, the kind declares no such facet, or the value has
/// the wrong type.
pub fn values_for_kind(
    kinds: &BTreeMap<String, KindDefinition>,
    kind: Option<&str>,
    settings: &BTreeMap<String, String>,
) -> Result<Vec<(String, Value)>> {
    if settings.is_empty() {
        return Ok(Vec::new());
    }
    let Some(kind) = kind else {
        return Err(Error::InvalidArgument(
            "facets are typed by the kind that declares them: give --kind with --facet".into(),
        ));
    };
    let definition = kinds
        .get(kind)
        .ok_or_else(|| Error::InvalidArgument(format!("unknown kind {kind:?}")))?;
    settings
        .iter()
        .map(|(name, raw)| {
            let facet = definition.facets.get(name).ok_or_else(|| {
                Error::InvalidArgument(format!(
                    "kind {kind:?} declares no facet {name:?} (its facets: {})",
                    if definition.facets.is_empty() {
                        "none".to_string()
                    } else {
                        definition
                            .facets
                            .keys()
                            .cloned()
                            .collect::<Vec<_>>()
                            .join(", ")
                    }
                ))
            })?;
            Ok((name.clone(), Value::parse(name, facet, raw)?))
        })
        .collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The documents pack's kinds (the store's facet tests use them too).
    pub(crate) fn kinds() -> BTreeMap<String, KindDefinition> {
        crate::config::resolve(None, "documents", &serde_json::json!({}))
            .unwrap()
            .pack
            .kinds
    }

    #[test]
    fn conditions_are_typed_by_the_kinds_that_declare_them() {
        let kinds = kinds();
        assert!(!kinds.is_empty());
        let level = Condition::parse(&kinds, "level>=2").unwrap();
        assert_eq!(level.tests, vec![(Op::Ge, Value::Number(2.0))]);
        let range = Condition::parse(&kinds, "decided=2024-01-01..2024-12-31").unwrap();
        assert_eq!(range.tests.len(), 2);
        let open = Condition::parse(&kinds, "decided=2024-01-01..").unwrap();
        assert_eq!(open.tests, vec![(Op::Ge, Value::Text("2024-01-01".into()))]);
        let status = Condition::parse(&kinds, "status=accepted").unwrap();
        assert_eq!(status.tests, vec![(Op::Eq, Value::Text("accepted".into()))]);
        for bad in [
            "level=two",
            "decided=2024-02-30",
            "status=nonsense",
            "jurisdiction>EU",
            "colour=red",
            "level",
            "resolved=yes",
        ] {
            let e = Condition::parse(&kinds, bad).unwrap_err();
            assert_eq!(e.code(), crate::ErrorCode::InvalidArgument, "{bad}");
        }
    }

    #[test]
    fn add_settings_need_a_kind_that_declares_them() {
        let kinds = kinds();
        let ok = values_for_kind(
            &kinds,
            Some("standard"),
            &BTreeMap::from([("level".into(), "2".into())]),
        )
        .unwrap();
        assert_eq!(ok, vec![("level".into(), Value::Number(2.0))]);
        let e = values_for_kind(
            &kinds,
            None,
            &BTreeMap::from([("level".into(), "2".into())]),
        )
        .unwrap_err();
        assert!(e.to_string().contains("--kind"), "{e}");
        let e = values_for_kind(
            &kinds,
            Some("guidance"),
            &BTreeMap::from([("level".into(), "2".into())]),
        )
        .unwrap_err();
        assert!(e.to_string().contains("declares no facet"), "{e}");
    }

    #[test]
    fn iso_dates_are_real_days() {
        for ok in ["2024-02-29", "2000-02-29", "1999-12-31"] {
            assert!(is_iso_date(ok), "{ok}");
        }
        for bad in [
            "2023-02-29",
            "1900-02-29",
            "2024-13-01",
            "2024-1-01",
            "２０２４-01-01",
            "2024-00-10",
        ] {
            assert!(!is_iso_date(bad), "{bad}");
        }
    }
}
