//! The SQL of a query's eligibility filter (`lexical::Filter`): the collection, kind,
//! sensitivity and facet conditions the channels that read the canonical store append.

use super::tx::Value;
pub use crate::lexical::{Filter, SensitivityScope};

/// Appends `AND col.name IN (…) AND COALESCE(s.kind, s.format) IN (…)` and one
/// `AND s.id IN (…)` per facet condition, for a query that joins `collections col` and
/// `sources s`, pushing the bound values.
pub(crate) fn push_sql(filter: &Filter, sql: &mut String, values: &mut Vec<Value>) {
    push_scope_sql(filter, sql, values);
    for condition in &filter.facets {
        super::facets::push_sql(condition, sql, values, filter.verified);
    }
}

/// The collection, kind and sensitivity conditions of [`push_sql`], without the
/// facets.
pub(crate) fn push_scope_sql(filter: &Filter, sql: &mut String, values: &mut Vec<Value>) {
    for (column, wanted) in [
        ("col.name", &filter.collections),
        ("COALESCE(s.kind, s.format)", &filter.kinds),
    ] {
        if !wanted.is_empty() {
            push_in(sql, values, column, wanted);
        }
    }
    if let Some(scope) = &filter.sensitivity {
        values.push(scope.unlabelled.clone().into());
        let column = format!("COALESCE(s.sensitivity, ?{})", values.len());
        push_in(sql, values, &column, &scope.levels);
    }
}

/// Appends ` AND {column} IN (?…)` with one bound value per wanted string.
fn push_in(sql: &mut String, values: &mut Vec<Value>, column: &str, wanted: &[String]) {
    use std::fmt::Write as _;
    let _ = write!(sql, " AND {column} IN (");
    for (n, w) in wanted.iter().enumerate() {
        let _ = write!(
            sql,
            "{}?{}",
            if n > 0 { ", " } else { "" },
            values.len() + 1
        );
        values.push(w.clone().into());
    }
    sql.push(')');
}
