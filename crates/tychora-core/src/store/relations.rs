//! Relation sets and their rows (DESIGN §9): what the code graph's builder reads of the code
//! members (their recorded extraction, syntax cache, units) and writes (a set, its relations, its
//! statistics). The reading side of the graph is `graph::expand` and `graph::symbol`.

use rusqlite::{CachedStatement, Connection, OptionalExtension as _, params};

use crate::clock::now_ms;
use crate::error::Result;
use crate::unit::{Span, UnitType};

/// A unit of one extraction, as relations need it.
pub struct RelationUnit {
    /// `evidence_units.id`.
    pub id: i64,
    /// The ordinal of its parent unit in the extraction.
    pub parent_ordinal: Option<usize>,
    /// Its type.
    pub unit_type: UnitType,
    /// Its anchor (a symbol's path).
    pub anchor: Option<String>,
    /// Where it is.
    pub span: Span,
}

/// `(language, module, syntax cache key)` as `code_extractions` records an extraction, or `None`
/// for an extraction that is not code.
///
/// # Errors
/// SQLite errors.
pub fn code_extraction(
    conn: &Connection,
    extraction_id: i64,
) -> Result<Option<(String, String, String)>> {
    Ok(conn
        .prepare_cached(
            "SELECT language, module, syntax_key FROM code_extractions WHERE extraction_id = ?1",
        )?
        .query_row(params![extraction_id], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })
        .optional()?)
}

/// The set already built for these members of a root in a collection.
///
/// # Errors
/// SQLite errors.
pub fn set_by_members(
    conn: &Connection,
    root_id: i64,
    collection_id: i64,
    members_hash: &str,
) -> Result<Option<i64>> {
    Ok(conn
        .prepare_cached(
            "SELECT id FROM relation_sets WHERE root_id = ?1 AND collection_id = ?2 AND members_hash = ?3",
        )?
        .query_row(params![root_id, collection_id, members_hash], |r| r.get(0))
        .optional()?)
}

/// A syntax cache entry's payload.
///
/// # Errors
/// SQLite errors.
pub fn syntax_payload(conn: &Connection, key: &str) -> Result<Option<String>> {
    Ok(conn
        .prepare_cached("SELECT payload FROM syntax_cache WHERE key = ?1")?
        .query_row(params![key], |r| r.get(0))
        .optional()?)
}

/// The units of an extraction with their locators, in order.
///
/// # Errors
/// SQLite errors.
pub fn units_of(conn: &Connection, extraction_id: i64) -> Result<Vec<RelationUnit>> {
    let mut stmt = conn.prepare_cached(
        "SELECT u.id, u.parent_ordinal, u.unit_type, u.anchor, l.byte_start, l.byte_end, l.line_start, l.col_start, l.line_end, l.col_end
         FROM evidence_units u JOIN locators l ON l.unit_id = u.id WHERE u.extraction_id = ?1 ORDER BY u.ordinal",
    )?;
    let rows = stmt
        .query_map(params![extraction_id], |r| {
            Ok(RelationUnit {
                id: r.get(0)?,
                parent_ordinal: r.get(1)?,
                unit_type: r.get(2)?,
                anchor: r.get(3)?,
                span: Span {
                    byte_start: r.get(4)?,
                    byte_end: r.get(5)?,
                    line_start: r.get(6)?,
                    col_start: r.get(7)?,
                    line_end: r.get(8)?,
                    col_end: r.get(9)?,
                },
            })
        })?
        .collect::<rusqlite::Result<_>>()?;
    Ok(rows)
}

/// Records a new set (its statistics come with [`finish_set`]) and returns its id.
///
/// # Errors
/// SQLite errors.
pub fn begin_set(
    conn: &Connection,
    root_id: i64,
    collection_id: i64,
    members_hash: &str,
    resolver: &str,
) -> Result<i64> {
    conn.execute(
        "INSERT INTO relation_sets (root_id, collection_id, members_hash, resolver, stats_json, created_at) VALUES (?1, ?2, ?3, ?4, '{}', ?5)",
        params![root_id, collection_id, members_hash, resolver, now_ms()],
    )?;
    Ok(conn.last_insert_rowid())
}

/// Records a set's statistics (JSON).
///
/// # Errors
/// SQLite errors.
pub fn finish_set(conn: &Connection, set_id: i64, stats_json: &str) -> Result<()> {
    conn.execute(
        "UPDATE relation_sets SET stats_json = ?2 WHERE id = ?1",
        params![set_id, stats_json],
    )?;
    Ok(())
}

/// One relation assertion of a set.
pub struct NewRelation<'a> {
    /// `defines`, `contains`, `imports`, `calls`, `references`, `inherits`, `implements`.
    pub kind: &'static str,
    /// The revision the site is in.
    pub revision_id: i64,
    /// The unit the site sits in.
    pub src_unit_id: i64,
    /// `resolved`, `ambiguous` or `unresolved`.
    pub outcome: &'static str,
    /// The target's unit, when it resolved to one in the root.
    pub target_unit_id: Option<i64>,
    /// The target's anchor, when resolved.
    pub target_anchor: Option<&'a str>,
    /// The candidates (a JSON list), when ambiguous.
    pub candidates_json: Option<&'a str>,
    /// Why not, when unresolved.
    pub reason: Option<&'a str>,
    /// The reference as written.
    pub ref_text: &'a str,
    /// Its last name part.
    pub name: &'a str,
    /// Where the site is.
    pub span: Span,
}

/// Inserts the relations of one set through one prepared statement.
pub struct Inserter<'c> {
    stmt: CachedStatement<'c>,
    set_id: i64,
}

impl<'c> Inserter<'c> {
    /// An inserter for set `set_id`.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn new(conn: &'c Connection, set_id: i64) -> Result<Self> {
        Ok(Self {
            stmt: conn.prepare_cached(
                "INSERT INTO relations (set_id, kind, revision_id, src_unit_id, outcome, target_unit_id, target_anchor, candidates_json, reason, ref_text, name, byte_start, byte_end, line_start, col_start, line_end)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
            )?,
            set_id,
        })
    }

    /// Inserts one relation.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn put(&mut self, row: &NewRelation<'_>) -> Result<()> {
        self.stmt.execute(params![
            self.set_id,
            row.kind,
            row.revision_id,
            row.src_unit_id,
            row.outcome,
            row.target_unit_id,
            row.target_anchor,
            row.candidates_json,
            row.reason,
            row.ref_text,
            row.name,
            row.span.byte_start,
            row.span.byte_end,
            row.span.line_start,
            row.span.col_start,
            row.span.line_end,
        ])?;
        Ok(())
    }
}

/// `(set id, collection name)` of the relation sets a snapshot carries.
///
/// # Errors
/// SQLite errors.
pub fn snapshot_sets(conn: &Connection, snapshot_id: i64) -> Result<Vec<(i64, String)>> {
    let mut stmt = conn.prepare_cached(
        "SELECT rs.id, c.name FROM snapshot_relation_sets srs JOIN relation_sets rs ON rs.id = srs.set_id
         JOIN collections c ON c.id = rs.collection_id WHERE srs.snapshot_id = ?1",
    )?;
    Ok(stmt
        .query_map(params![snapshot_id], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?)
}

/// A unit's heading path (JSON list) and type.
///
/// # Errors
/// SQLite errors.
pub fn unit_heading(conn: &Connection, unit_id: i64) -> Result<Option<(String, UnitType)>> {
    Ok(conn
        .prepare_cached("SELECT heading_path_json, unit_type FROM evidence_units WHERE id = ?1")?
        .query_row(params![unit_id], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?)
}

/// A unit a window spans: `(id, type, parent id, parent type)`.
pub type SpannedUnit = (i64, UnitType, Option<i64>, Option<UnitType>);

/// The units a window spans, each with its parent unit: `(id, type, parent id, parent type)`.
///
/// # Errors
/// SQLite errors.
pub fn chunk_units(conn: &Connection, chunk_id: i64) -> Result<Vec<SpannedUnit>> {
    let mut stmt = conn.prepare_cached(
        "SELECT u.id, u.unit_type, p.id, p.unit_type FROM chunks c
         JOIN evidence_units u ON u.extraction_id = c.extraction_id AND u.id BETWEEN c.first_unit_id AND c.last_unit_id
         LEFT JOIN evidence_units p ON p.extraction_id = u.extraction_id AND p.ordinal = u.parent_ordinal
         WHERE c.id = ?1 ORDER BY u.id",
    )?;
    Ok(stmt
        .query_map(params![chunk_id], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
        })?
        .collect::<rusqlite::Result<_>>()?)
}

/// `(chunk_id, owner_id)` of the window a unit is read in: the extraction's first window ending
/// at or after it.
///
/// # Errors
/// SQLite errors.
pub fn window_of(conn: &Connection, unit_id: i64) -> Result<Option<(i64, i64)>> {
    Ok(conn
        .prepare_cached(
            "SELECT c.id, COALESCE(c.owner_chunk_id, c.id) FROM evidence_units u
             JOIN chunks c ON c.extraction_id = u.extraction_id AND c.last_unit_id >= u.id
             WHERE u.id = ?1 ORDER BY c.last_unit_id LIMIT 1",
        )?
        .query_row(params![unit_id], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?)
}

/// One edge from or to a unit: (relation, neighbour, site path, site line, neighbour is source).
pub type Edge = (String, i64, String, i64, bool);

/// The resolved edges of some relation sets and kinds, read unit by unit (the statements are
/// built once per expansion).
pub struct Edges {
    /// Callees, then (when callers are followed) callers.
    statements: Vec<(String, bool)>,
    fanout: usize,
}

impl Edges {
    /// Edges of `kinds` (the four reference kinds only; others are dropped) in `sets`, at most
    /// `fanout` per unit and direction.
    #[must_use]
    pub fn new(sets: &[i64], kinds: &[&str], fanout: usize, callers: bool) -> Self {
        let sets = sets
            .iter()
            .map(i64::to_string)
            .collect::<Vec<_>>()
            .join(",");
        // Only the closed set of reference kinds reaches the text of a statement.
        let kinds = kinds
            .iter()
            .filter(|k| matches!(**k, "calls" | "references" | "inherits" | "implements"))
            .map(|k| format!("'{k}'"))
            .collect::<Vec<_>>()
            .join(",");
        // Callees first, then callers; calls before other references; first site in file order.
        let directions: &[(&str, &str, bool)] = if callers {
            &[
                ("src_unit_id", "target_unit_id", false),
                ("target_unit_id", "src_unit_id", true),
            ]
        } else {
            &[("src_unit_id", "target_unit_id", false)]
        };
        let statements = directions
            .iter()
            .map(|&(column, other, incoming)| {
                (
                    format!(
                        "SELECT r.kind, r.{other}, s.rel_path, MIN(r.line_start) FROM relations r
                         JOIN revisions rv ON rv.id = r.revision_id JOIN sources s ON s.id = rv.source_id
                         WHERE r.{column} = ?1 AND r.set_id IN ({sets}) AND r.outcome = 'resolved'
                           AND r.target_unit_id IS NOT NULL AND r.kind IN ({kinds}) AND r.{other} != ?1
                         GROUP BY r.{other} ORDER BY r.kind = 'calls' DESC, MIN(r.id) LIMIT ?2"
                    ),
                    incoming,
                )
            })
            .collect();
        Self { statements, fanout }
    }

    /// The edges from and to `unit_id`.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn of(&self, conn: &Connection, unit_id: i64) -> Result<Vec<Edge>> {
        let mut out = Vec::new();
        for (sql, incoming) in &self.statements {
            let mut stmt = conn.prepare_cached(sql)?;
            let rows = stmt.query_map(params![unit_id, self.fanout], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, *incoming))
            })?;
            for row in rows {
                out.push(row?);
            }
        }
        Ok(out)
    }
}

/// Where a relation's site or a symbol's definition is, as stored.
pub struct SiteRow {
    /// The file, relative to its root.
    pub path: String,
    /// The root's path.
    pub root: String,
    /// First line.
    pub line_start: i64,
    /// Last line.
    pub line_end: i64,
    /// The revision.
    pub revision_id: i64,
    /// The git commit the revision was captured at, when it was.
    pub commit: Option<String>,
}

const SITE_COLUMNS: &str = "s.rel_path, ro.path, r.line_start, r.line_end, r.revision_id, json_extract(rv.metadata_json, '$.git.commit')";

fn site(row: &rusqlite::Row<'_>, at: usize) -> rusqlite::Result<SiteRow> {
    Ok(SiteRow {
        path: row.get(at)?,
        root: row.get(at + 1)?,
        line_start: row.get(at + 2)?,
        line_end: row.get(at + 3)?,
        revision_id: row.get(at + 4)?,
        commit: row.get(at + 5)?,
    })
}

/// A symbol's unit: `(unit id, anchor, type, text, definition site)`.
pub type SymbolUnit = (i64, String, UnitType, String, SiteRow);

/// The symbol units of a snapshot a normalised name identifies (a symbol path, a simple or
/// qualified name, an export): `(unit id, anchor, type, text, definition site)`, by file and line.
///
/// # Errors
/// SQLite errors.
pub fn symbol_units(
    conn: &Connection,
    snapshot_id: i64,
    normalized: &str,
) -> Result<Vec<SymbolUnit>> {
    let mut stmt = conn.prepare_cached(
        "SELECT DISTINCT u.id, u.anchor, u.unit_type, u.text, s.rel_path, ro.path, l.line_start, l.line_end,
                e.revision_id, json_extract(rv.metadata_json, '$.git.commit')
         FROM identifiers i JOIN evidence_units u ON u.id = i.unit_id JOIN locators l ON l.unit_id = u.id
         JOIN extractions e ON e.id = u.extraction_id JOIN revisions rv ON rv.id = e.revision_id
         JOIN snapshot_members m ON m.extraction_id = e.id AND m.snapshot_id = ?2
         JOIN sources s ON s.id = m.source_id JOIN roots ro ON ro.id = s.root_id
         WHERE i.normalized = ?1 AND i.kind IN ('symbol', 'symbol_name', 'export')
         ORDER BY s.rel_path, l.line_start",
    )?;
    Ok(stmt
        .query_map(params![normalized, snapshot_id], |r| {
            Ok((
                r.get(0)?,
                r.get::<_, Option<String>>(1)?.unwrap_or_default(),
                r.get(2)?,
                r.get(3)?,
                site(r, 4)?,
            ))
        })?
        .collect::<rusqlite::Result<_>>()?)
}

/// Which relations of a symbol to list.
pub enum Which<'a> {
    /// Every non-structural relation whose target is the unit (named by their source).
    ReferencesTo(i64),
    /// `calls` into the unit, the first site per calling unit and set.
    CallersOf(i64),
    /// `calls` out of the unit (named by their target).
    CalleesOf(i64),
    /// Sites naming this last name segment that resolved nowhere or to several candidates.
    Unresolved(&'a str),
}

/// A relation with its site, as stored.
pub struct RelationRow {
    /// The relation's kind.
    pub kind: String,
    /// The other end's symbol name (`Class.method`), when it is a unit.
    pub symbol: Option<String>,
    /// The reference as written.
    pub text: String,
    /// `resolved`, `ambiguous` or `unresolved`.
    pub outcome: String,
    /// Why not, when unresolved.
    pub reason: Option<String>,
    /// The candidates (a JSON list), when ambiguous.
    pub candidates_json: Option<String>,
    /// The site.
    pub site: SiteRow,
}

/// The display name of a unit's symbol (`Class.method`), from its heading path.
const NAME_OF: &str = "(SELECT CASE WHEN json_array_length(x.heading_path_json) > 1
      THEN (SELECT group_concat(value, '.') FROM json_each(x.heading_path_json) WHERE key > 0)
      ELSE json_extract(x.heading_path_json, '$[0]') END FROM evidence_units x WHERE x.id = {unit})";

/// The relations `which` selects in `sets`, by file and line: at most `max` rows, and how many
/// there are.
///
/// # Errors
/// SQLite errors.
pub fn site_relations(
    conn: &Connection,
    sets: &[i64],
    which: &Which<'_>,
    max: usize,
) -> Result<(Vec<RelationRow>, usize)> {
    let (condition, other_unit, id): (&str, &str, &dyn rusqlite::ToSql) = match which {
        Which::ReferencesTo(unit) => (
            "r.target_unit_id = ?1 AND r.kind NOT IN ('defines', 'contains')",
            "r.src_unit_id",
            unit,
        ),
        Which::CallersOf(unit) => (
            "r.target_unit_id = ?1 AND r.kind = 'calls' AND r.id IN (SELECT MIN(id) FROM relations WHERE target_unit_id = ?1 AND kind = 'calls' GROUP BY src_unit_id, set_id)",
            "r.src_unit_id",
            unit,
        ),
        Which::CalleesOf(unit) => (
            "r.src_unit_id = ?1 AND r.kind = 'calls'",
            "r.target_unit_id",
            unit,
        ),
        Which::Unresolved(name) => (
            "r.name = ?1 AND r.outcome != 'resolved'",
            "r.src_unit_id",
            name,
        ),
    };
    let sets = if sets.is_empty() {
        "NULL".to_string()
    } else {
        sets.iter()
            .map(i64::to_string)
            .collect::<Vec<_>>()
            .join(",")
    };
    let name = NAME_OF.replace("{unit}", other_unit);
    let sql = format!(
        "SELECT r.kind, {name}, r.ref_text, r.outcome, r.reason, r.candidates_json, {SITE_COLUMNS}
         FROM relations r JOIN revisions rv ON rv.id = r.revision_id JOIN sources s ON s.id = rv.source_id
         JOIN roots ro ON ro.id = s.root_id
         WHERE r.set_id IN ({sets}) AND {condition} ORDER BY s.rel_path, r.line_start, r.col_start"
    );
    let mut stmt = conn.prepare(&sql)?;
    let mut rows = stmt.query(params![id])?;
    let mut out = Vec::new();
    let mut total = 0;
    while let Some(row) = rows.next()? {
        total += 1;
        if out.len() >= max {
            continue;
        }
        out.push(RelationRow {
            kind: row.get(0)?,
            symbol: row.get(1)?,
            text: row.get(2)?,
            outcome: row.get(3)?,
            reason: row.get(4)?,
            candidates_json: row.get(5)?,
            site: site(row, 6)?,
        });
    }
    Ok((out, total))
}
