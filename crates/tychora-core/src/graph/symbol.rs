//! `inspect symbol NAME`: a symbol's definitions in a snapshot, with the references that resolve to
//! each (and their outcome), its callers and its callees, each cited to file:line and commit.

use serde::Serialize;

use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::exact::normalize_identifier;
use crate::store::relations;
use crate::store::tx::Tx;
use crate::unit::UnitType;

/// Most rows listed per section; the counts are always complete.
const MAX_ROWS: usize = 200;

/// Where something is: file, lines, commit.
#[derive(Debug, Clone, Serialize)]
pub struct Site {
    /// The file, relative to its capture root.
    pub path: String,
    /// The repository (capture root) the file was captured from.
    pub root: String,
    /// First line (1-based).
    pub line_start: i64,
    /// Last line (1-based).
    pub line_end: i64,
    /// The revision of the file the site was read from.
    pub revision_id: i64,
    /// The repository commit the file was captured at, when it came from a Git checkout.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// `path:line` or `path:start-end`.
    pub citation: String,
}

/// One definition and its relations.
#[derive(Debug, Clone, Serialize)]
pub struct Definition {
    /// The definition's evidence unit (`evidence_units.id`).
    pub unit_id: i64,
    /// Its symbol path (`pkg.mod.Class.method`, `src/a.ts#Class.method`); empty if the unit has no
    /// anchor.
    pub symbol: String,
    /// The unit's type (`class`, `function`, `method`, …).
    pub unit_type: UnitType,
    /// Where the definition is (leading comments and decorators included).
    pub site: Site,
    /// The definition's head, past leading comments and decorators: up to four lines, ending at
    /// the first that ends in `:`, `{` or `;`, joined by spaces (a wrapped parameter list stays
    /// whole).
    pub signature: String,
    /// References that resolve here, by kind (`calls`, `references`, `inherits`, …).
    pub references: Vec<Relation>,
    /// All references that resolve here; `references` lists at most 200.
    pub references_total: usize,
    /// Distinct symbols calling this one.
    pub callers: Vec<Relation>,
    /// All distinct calling symbols; `callers` lists at most 200.
    pub callers_total: usize,
    /// Calls made from this symbol, with their outcome.
    pub callees: Vec<Relation>,
    /// All calls made from this symbol; `callees` lists at most 200.
    pub callees_total: usize,
}

/// One relation row as `inspect symbol` lists it.
#[derive(Debug, Clone, Serialize)]
pub struct Relation {
    /// `calls`, `references`, `inherits`, `implements` or `imports`.
    pub kind: String,
    /// The other symbol: the referring one for references/callers, the target for callees.
    pub symbol: Option<String>,
    /// The site as written (`self.parse`).
    pub text: String,
    /// `resolved`, `ambiguous` or `unresolved`.
    pub outcome: String,
    /// Why it did not resolve (`external module os`, `no visible binding for x`); `None` when it
    /// resolved or is ambiguous.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The anchors an ambiguous site could mean, sorted; empty otherwise.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub candidates: Vec<String>,
    /// Where the site is written.
    pub site: Site,
}

/// What `inspect symbol` returns.
#[derive(Debug, Clone, Serialize)]
pub struct SymbolReport {
    /// The name asked for, trimmed.
    pub name: String,
    /// The snapshot searched (`None`: nothing is published, and the report is empty).
    pub snapshot_id: Option<i64>,
    /// `syntactic`: scope rules and import bindings, not a compiler.
    pub resolution: &'static str,
    /// The definitions of `name` in the snapshot, by path and line (only those under the requested
    /// repository, when one was given).
    pub definitions: Vec<Definition>,
    /// Sites naming `NAME` that did not resolve to one definition (ambiguous or unresolved).
    pub unresolved: Vec<Relation>,
    /// All such sites; `unresolved` lists at most 200.
    pub unresolved_total: usize,
}

impl From<relations::SiteRow> for Site {
    fn from(row: relations::SiteRow) -> Self {
        Self {
            citation: if row.line_end > row.line_start {
                format!("{}:{}-{}", row.path, row.line_start, row.line_end)
            } else {
                format!("{}:{}", row.path, row.line_start)
            },
            root: row.root,
            path: row.path,
            line_start: row.line_start,
            line_end: row.line_end,
            revision_id: row.revision_id,
            commit: row.commit,
        }
    }
}

/// The relations `which` selects in `sets`: at most [`MAX_ROWS`], and how many there are.
fn relations_of(
    conn: &dyn Tx,
    sets: &[i64],
    which: &relations::Which<'_>,
) -> Result<(Vec<Relation>, usize)> {
    let (rows, total) = relations::site_relations(conn, sets, which, MAX_ROWS)?;
    let out = rows
        .into_iter()
        .map(|row| Relation {
            kind: row.kind,
            symbol: row.symbol,
            text: row.text,
            outcome: row.outcome,
            reason: row.reason,
            candidates: row
                .candidates_json
                .and_then(|c| serde_json::from_str(&c).ok())
                .unwrap_or_default(),
            site: row.site.into(),
        })
        .collect();
    Ok((out, total))
}

/// Lists the definitions of `name` (a simple or qualified symbol name, or a full symbol path)
/// in the current (or given) snapshot, each with its references, callers and callees, and
/// the sites naming it that did not resolve. `repo` keeps definitions captured under a root
/// whose path ends with it (a repository directory name or path).
///
/// # Errors
/// `E_INVALID_ARGUMENT` for an empty name; SQLite errors.
pub(crate) fn inspect(
    engine: &Engine,
    name: &str,
    repo: Option<&str>,
    snapshot_id: Option<i64>,
) -> Result<SymbolReport> {
    let name = name.trim();
    if name.is_empty() {
        return Err(Error::InvalidArgument("a symbol name is needed".into()));
    }
    engine.with_reader(|conn| {
        let snapshot_id = match snapshot_id {
            Some(id) => Some(id),
            None => engine.cached_current(conn)?,
        };
        let mut report = SymbolReport {
            name: name.to_string(),
            snapshot_id,
            resolution: crate::code::resolve::RESOLUTION,
            definitions: Vec::new(),
            unresolved: Vec::new(),
            unresolved_total: 0,
        };
        let Some(snapshot_id) = snapshot_id else {
            return Ok(report);
        };
        let sets: Vec<i64> = relations::snapshot_sets(conn, snapshot_id)?
            .into_iter()
            .map(|(id, _)| id)
            .collect();
        let repo = repo.map(|r| r.trim_end_matches('/').to_string());
        let found = relations::symbol_units(conn, snapshot_id, &normalize_identifier(name))?;
        for (unit_id, symbol, unit_type, text, site) in found {
            let site = Site::from(site);
            if let Some(repo) = &repo
                && !(site.root.ends_with(repo.as_str()) || site.root == *repo)
            {
                continue;
            }
            let (references, references_total) =
                relations_of(conn, &sets, &relations::Which::ReferencesTo(unit_id))?;
            let (callers, callers_total) =
                relations_of(conn, &sets, &relations::Which::CallersOf(unit_id))?;
            let (callees, callees_total) =
                relations_of(conn, &sets, &relations::Which::CalleesOf(unit_id))?;
            let signature = signature_of(&text);
            report.definitions.push(Definition {
                unit_id,
                symbol,
                unit_type,
                site,
                signature,
                references,
                references_total,
                callers,
                callers_total,
                callees,
                callees_total,
            });
        }
        // Sites naming the last segment that resolved nowhere or to several candidates.
        let last = name.rsplit(['.', '#']).next().unwrap_or(name).to_string();
        let (unresolved, unresolved_total) =
            relations_of(conn, &sets, &relations::Which::Unresolved(&last))?;
        report.unresolved = unresolved;
        report.unresolved_total = unresolved_total;
        Ok(report)
    })
}

/// The declaration, after decorators and leading comments, up to the line that opens its body
/// (`:` or `{`), at most four lines.
fn signature_of(text: &str) -> String {
    let mut lines = text.lines().map(str::trim).skip_while(|l| {
        l.is_empty()
            || l.starts_with('@')
            || l.starts_with('#')
            || l.starts_with("//")
            || l.starts_with("/*")
            || l.starts_with('*')
    });
    let mut out: Vec<&str> = Vec::new();
    for line in lines.by_ref().take(4) {
        out.push(line);
        if line.ends_with(':') || line.ends_with('{') || line.ends_with(';') {
            break;
        }
    }
    out.join(" ")
}

#[cfg(test)]
mod tests {
    #[test]
    fn signatures_span_wrapped_parameter_lists() {
        assert_eq!(
            super::signature_of("@cache\n# why\ndef f(\n    a,\n    b,\n) -> int:\n    return 1\n"),
            "def f( a, b, ) -> int:"
        );
        assert_eq!(
            super::signature_of("/** Doc. */\nexport class A extends B {\n  x = 1\n}\n"),
            "export class A extends B {"
        );
    }
}
