//! Relation sets and their rows (DESIGN §9): what the code graph's builder reads of the code
//! members (their recorded extraction, syntax cache, units) and writes (a set, its relations, its
//! statistics). The reading side of the graph is `graph::expand` and `graph::symbol`.

use super::tx::{Dialect, Param, Row, Statement, Tx, args};

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
/// The store's errors.
pub fn code_extraction(
    tx: &dyn Tx,
    extraction_id: i64,
) -> Result<Option<(String, String, String)>> {
    tx.optional(
        "SELECT language, module, syntax_key FROM code_extractions WHERE extraction_id = ?1",
        args![extraction_id],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )
}

/// The set already built for these members of a root in a collection.
///
/// # Errors
/// The store's errors.
pub fn set_by_members(
    tx: &dyn Tx,
    root_id: i64,
    collection_id: i64,
    members_hash: &str,
) -> Result<Option<i64>> {
    tx.optional(
        "SELECT id FROM relation_sets WHERE root_id = ?1 AND collection_id = ?2 AND members_hash = ?3",
        args![root_id, collection_id, members_hash],
        |r| r.get(0),
    )
}

/// A syntax cache entry's payload.
///
/// # Errors
/// The store's errors.
pub fn syntax_payload(tx: &dyn Tx, key: &str) -> Result<Option<String>> {
    tx.optional(
        "SELECT payload FROM syntax_cache WHERE key = ?1",
        args![key],
        |r| r.get(0),
    )
}

/// The units of an extraction with their locators, in order.
///
/// # Errors
/// The store's errors.
pub fn units_of(tx: &dyn Tx, extraction_id: i64) -> Result<Vec<RelationUnit>> {
    tx.rows(
        "SELECT u.id, u.parent_ordinal, u.unit_type, u.anchor, l.byte_start, l.byte_end, l.line_start, l.col_start, l.line_end, l.col_end
         FROM evidence_units u JOIN locators l ON l.unit_id = u.id WHERE u.extraction_id = ?1 ORDER BY u.ordinal",
        args![extraction_id],
        |r| {
            Ok(RelationUnit {
                id: r.get(0)?,
                parent_ordinal: r.get::<Option<i64>>(1)?.and_then(|o| usize::try_from(o).ok()),
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
        },
    )
}

/// Records a new set (its statistics come with [`finish_set`]) and returns its id.
///
/// # Errors
/// The store's errors.
pub fn begin_set(
    tx: &dyn Tx,
    root_id: i64,
    collection_id: i64,
    members_hash: &str,
    resolver: &str,
) -> Result<i64> {
    tx.insert(
        "INSERT INTO relation_sets (root_id, collection_id, members_hash, resolver, stats_json, created_at) VALUES (?1, ?2, ?3, ?4, '{}', ?5)",
        args![root_id, collection_id, members_hash, resolver, now_ms()],
    )
}

/// Records a set's statistics (JSON).
///
/// # Errors
/// The store's errors.
pub fn finish_set(tx: &dyn Tx, set_id: i64, stats_json: &str) -> Result<()> {
    tx.execute(
        "UPDATE relation_sets SET stats_json = ?2 WHERE id = ?1",
        args![set_id, stats_json],
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
    stmt: Box<dyn Statement + 'c>,
    set_id: i64,
}

impl<'c> Inserter<'c> {
    /// An inserter for set `set_id`.
    ///
    /// # Errors
    /// The store's errors.
    pub fn new(tx: &'c dyn Tx, set_id: i64) -> Result<Self> {
        Ok(Self {
            stmt: tx.prepare(
                "INSERT INTO relations (set_id, kind, revision_id, src_unit_id, outcome, target_unit_id, target_anchor, candidates_json, reason, ref_text, name, byte_start, byte_end, line_start, col_start, line_end)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
            )?,
            set_id,
        })
    }

    /// Inserts one relation.
    ///
    /// # Errors
    /// The store's errors.
    pub fn put(&mut self, row: &NewRelation<'_>) -> Result<()> {
        // Written behind: nothing reads a relation before the set's statistics are recorded.
        self.stmt.write(args![
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
        ])
    }
}

/// `(set id, collection name)` of the relation sets a snapshot carries.
///
/// # Errors
/// The store's errors.
pub fn snapshot_sets(tx: &dyn Tx, snapshot_id: i64) -> Result<Vec<(i64, String)>> {
    tx.rows(
        "SELECT rs.id, c.name FROM snapshot_relation_sets srs JOIN relation_sets rs ON rs.id = srs.set_id
         JOIN collections c ON c.id = rs.collection_id WHERE srs.snapshot_id = ?1 ORDER BY rs.id",
        args![snapshot_id],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
}

/// A unit's heading path (JSON list) and type.
///
/// # Errors
/// The store's errors.
pub fn unit_heading(tx: &dyn Tx, unit_id: i64) -> Result<Option<(String, UnitType)>> {
    tx.optional(
        "SELECT heading_path_json, unit_type FROM evidence_units WHERE id = ?1",
        args![unit_id],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
}

/// A unit a window spans: `(id, type, parent id, parent type)`.
pub type SpannedUnit = (i64, UnitType, Option<i64>, Option<UnitType>);

/// The units a window spans, each with its parent unit: `(id, type, parent id, parent type)`.
///
/// # Errors
/// The store's errors.
pub fn chunk_units(tx: &dyn Tx, chunk_id: i64) -> Result<Vec<SpannedUnit>> {
    tx.rows(
        "SELECT u.id, u.unit_type, p.id, p.unit_type FROM chunks c
         JOIN evidence_units u ON u.extraction_id = c.extraction_id AND u.id BETWEEN c.first_unit_id AND c.last_unit_id
         LEFT JOIN evidence_units p ON p.extraction_id = u.extraction_id AND p.ordinal = u.parent_ordinal
         WHERE c.id = ?1 ORDER BY u.id",
        args![chunk_id],
        |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
        },
    )
}

/// `(chunk_id, owner_id)` of the window a unit is read in: the extraction's first window ending
/// at or after it.
///
/// # Errors
/// The store's errors.
pub fn window_of(tx: &dyn Tx, unit_id: i64) -> Result<Option<(i64, i64)>> {
    tx.optional(
        "SELECT c.id, COALESCE(c.owner_chunk_id, c.id) FROM evidence_units u
         JOIN chunks c ON c.extraction_id = u.extraction_id AND c.last_unit_id >= u.id
         WHERE u.id = ?1 ORDER BY c.last_unit_id LIMIT 1",
        args![unit_id],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
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
    pub fn new(
        dialect: Dialect,
        sets: &[i64],
        kinds: &[&str],
        fanout: usize,
        callers: bool,
    ) -> Self {
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
                let from = format!(
                    "FROM relations r
                     JOIN revisions rv ON rv.id = r.revision_id JOIN sources s ON s.id = rv.source_id
                     WHERE r.{column} = ?1 AND r.set_id IN ({sets}) AND r.outcome = 'resolved'
                       AND r.target_unit_id IS NOT NULL AND r.kind IN ({kinds}) AND r.{other} != ?1"
                );
                let sql = match dialect {
                    // One row per neighbour. SQLite fills the bare columns (kind, path) from a
                    // row of the group (one holding a minimum).
                    Dialect::Sqlite => format!(
                        "SELECT r.kind, r.{other}, s.rel_path, MIN(r.line_start) {from}
                         GROUP BY r.{other} ORDER BY r.kind = 'calls' DESC, MIN(r.id) LIMIT ?2"
                    ),
                    // PostgreSQL has no bare columns: the neighbour's first relation (lowest id)
                    // gives them, with the group's first line beside it.
                    Dialect::Postgres => format!(
                        "SELECT kind, neighbour, rel_path, line FROM (
                           SELECT DISTINCT ON (r.{other}) r.kind, r.{other} AS neighbour, s.rel_path,
                                  MIN(r.line_start) OVER (PARTITION BY r.{other}) AS line, r.id AS first
                           {from} ORDER BY r.{other}, r.id) g
                         ORDER BY kind = 'calls' DESC, first LIMIT ?2"
                    ),
                };
                (sql, incoming)
            })
            .collect();
        Self { statements, fanout }
    }

    /// The edges from and to `unit_id`.
    ///
    /// # Errors
    /// The store's errors.
    pub fn of(&self, tx: &dyn Tx, unit_id: i64) -> Result<Vec<Edge>> {
        let mut out = Vec::new();
        for (sql, incoming) in &self.statements {
            tx.each(sql, args![unit_id, self.fanout], &mut |r| {
                out.push((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, *incoming));
                Ok(())
            })?;
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

/// The site's columns: the file, its root, its lines, its revision and that revision's commit.
fn site_columns(dialect: Dialect, lines: &str) -> String {
    let commit = dialect.json_field("rv.metadata_json", &["git", "commit"], false);
    format!(
        "s.rel_path, ro.path, {lines}.line_start, {lines}.line_end, {lines}.revision_id, {commit}"
    )
}

fn site(row: &dyn Row, at: usize) -> Result<SiteRow> {
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
/// The store's errors.
pub fn symbol_units(tx: &dyn Tx, snapshot_id: i64, normalized: &str) -> Result<Vec<SymbolUnit>> {
    let commit = tx
        .dialect()
        .json_field("rv.metadata_json", &["git", "commit"], false);
    tx.rows(
        &format!(
            "SELECT DISTINCT u.id, u.anchor, u.unit_type, u.text, s.rel_path, ro.path, l.line_start, l.line_end,
                e.revision_id, {commit}
         FROM identifiers i JOIN evidence_units u ON u.id = i.unit_id JOIN locators l ON l.unit_id = u.id
         JOIN extractions e ON e.id = u.extraction_id JOIN revisions rv ON rv.id = e.revision_id
         JOIN snapshot_members m ON m.extraction_id = e.id AND m.snapshot_id = ?2
         JOIN sources s ON s.id = m.source_id JOIN roots ro ON ro.id = s.root_id
         WHERE i.normalized = ?1 AND i.kind IN ('symbol', 'symbol_name', 'export')
         ORDER BY s.rel_path, l.line_start, u.id"
        ),
        args![normalized, snapshot_id],
        |r| {
            Ok((
                r.get(0)?,
                r.get::<Option<String>>(1)?.unwrap_or_default(),
                r.get(2)?,
                r.get(3)?,
                site(r, 4)?,
            ))
        },
    )
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

/// The display name of a unit's symbol (`Class.method`) from its heading path: the path without
/// its first part (the file), dot-joined, or the first part alone when that is all there is.
fn name_of(dialect: Dialect, unit: &str) -> String {
    match dialect {
        Dialect::Sqlite => format!(
            "(SELECT CASE WHEN json_array_length(x.heading_path_json) > 1
               THEN (SELECT group_concat(value, '.') FROM json_each(x.heading_path_json) WHERE key > 0)
               ELSE json_extract(x.heading_path_json, '$[0]') END FROM evidence_units x WHERE x.id = {unit})"
        ),
        Dialect::Postgres => format!(
            "(SELECT CASE WHEN jsonb_array_length(x.heading_path_json::jsonb) > 1
               THEN (SELECT string_agg(p.part, '.' ORDER BY p.at)
                     FROM jsonb_array_elements_text(x.heading_path_json::jsonb) WITH ORDINALITY AS p(part, at) WHERE p.at > 1)
               ELSE x.heading_path_json::jsonb ->> 0 END FROM evidence_units x WHERE x.id = {unit})"
        ),
    }
}

/// The relations `which` selects in `sets`, by file and line: at most `max` rows, and how many
/// there are.
///
/// # Errors
/// The store's errors.
pub fn site_relations(
    tx: &dyn Tx,
    sets: &[i64],
    which: &Which<'_>,
    max: usize,
) -> Result<(Vec<RelationRow>, usize)> {
    let (condition, other_unit, id): (&str, &str, Param<'_>) = match which {
        Which::ReferencesTo(unit) => (
            "r.target_unit_id = ?1 AND r.kind NOT IN ('defines', 'contains')",
            "r.src_unit_id",
            Param::Int(*unit),
        ),
        Which::CallersOf(unit) => (
            "r.target_unit_id = ?1 AND r.kind = 'calls' AND r.id IN (SELECT MIN(id) FROM relations WHERE target_unit_id = ?1 AND kind = 'calls' GROUP BY src_unit_id, set_id)",
            "r.src_unit_id",
            Param::Int(*unit),
        ),
        Which::CalleesOf(unit) => (
            "r.src_unit_id = ?1 AND r.kind = 'calls'",
            "r.target_unit_id",
            Param::Int(*unit),
        ),
        Which::Unresolved(name) => (
            "r.name = ?1 AND r.outcome != 'resolved'",
            "r.src_unit_id",
            Param::Text(name),
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
    let name = name_of(tx.dialect(), other_unit);
    let site_columns = site_columns(tx.dialect(), "r");
    let sql = format!(
        "SELECT r.kind, {name}, r.ref_text, r.outcome, r.reason, r.candidates_json, {site_columns}
         FROM relations r JOIN revisions rv ON rv.id = r.revision_id JOIN sources s ON s.id = rv.source_id
         JOIN roots ro ON ro.id = s.root_id
         WHERE r.set_id IN ({sets}) AND {condition} ORDER BY s.rel_path, r.line_start, r.col_start, r.id"
    );
    let mut out = Vec::new();
    let mut total = 0;
    tx.each(&sql, &[id], &mut |row| {
        total += 1;
        if out.len() < max {
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
        Ok(())
    })?;
    Ok((out, total))
}
