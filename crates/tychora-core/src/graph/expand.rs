//! Bounded graph expansion for the graph channel (DESIGN §9): from the symbols of the top fused
//! candidates, follow resolved `calls`, `references`, `inherits` and `implements` relations both
//! ways (callees and callers), breadth first, to a fixed depth with a per-node fanout, and report
//! each symbol reached with the path that reached it.
//!
//! Structural relations (`defines`, `contains`) and `imports` are not followed: from a module or
//! a class they would pull in every member, which is proximity, not evidence.

use std::collections::{HashMap, HashSet, VecDeque};

use serde::Serialize;

use crate::error::Result;
use crate::lexical::Filter;
use crate::store::relations;
use crate::store::tx::Tx;
use crate::unit::UnitType;

/// Expansion limits: the pack's `graph` section.
pub use crate::config::Graph as Limits;

/// One step of a "found via" path, stated in the relation's own direction: `from` calls `to`.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Hop {
    /// The symbol making the reference (`Parser.parse`).
    pub from: String,
    /// `calls`, `references`, `inherits` or `implements`.
    pub relation: String,
    /// The symbol referred to.
    pub to: String,
    /// The file holding the site, relative to its root.
    pub path: String,
    /// The site's line.
    pub line: i64,
}

impl Hop {
    /// "`parse` calls `tokenize` (src/lex.ts:40)".
    #[must_use]
    pub fn describe(&self) -> String {
        format!(
            "`{}` {} `{}` ({}:{})",
            self.from, self.relation, self.to, self.path, self.line
        )
    }
}

/// A chunk the expansion reached, with the path from a seed.
#[derive(Debug, Clone)]
pub struct Reached {
    /// The window holding the symbol reached.
    pub chunk_id: i64,
    /// Its evidence owner.
    pub owner_id: i64,
    /// Seed first.
    pub via: Vec<Hop>,
}

/// A symbol unit's display name (`Class.method`) and whether it is a module.
fn name_of(conn: &dyn Tx, unit_id: i64) -> Result<Option<(String, UnitType)>> {
    let row = relations::unit_heading(conn, unit_id)?;
    Ok(row.map(|(path, unit_type)| {
        let parts: Vec<String> = serde_json::from_str(&path).unwrap_or_default();
        // The first heading is the module; a module's own name is that.
        let name = if parts.len() > 1 {
            parts[1..].join(".")
        } else {
            parts.join(".")
        };
        (name, unit_type)
    }))
}

/// The symbols a seed window shows: its symbol units, or the class around a class's header and
/// statement leaves.
fn seed_units(conn: &dyn Tx, chunk_id: i64) -> Result<Vec<i64>> {
    let rows = relations::chunk_units(conn, chunk_id)?;
    let mut out = Vec::new();
    for (id, unit_type, parent, parent_type) in rows {
        let unit = match unit_type {
            UnitType::Module => None,
            t if t.is_symbol() => Some(id),
            UnitType::Header | UnitType::Statement => parent.filter(|_| {
                parent_type.is_some_and(|t| t != UnitType::Module && t != UnitType::Section)
            }),
            _ => None,
        };
        if let Some(unit) = unit
            && !out.contains(&unit)
        {
            out.push(unit);
        }
    }
    Ok(out)
}

/// Expands from `seeds` (`(chunk, owner)`, best first) and returns the windows reached, nearest
/// first, each once, excluding the seeds' own windows.
///
/// # Errors
/// SQLite errors.
pub fn expand(
    conn: &dyn Tx,
    snapshot_id: i64,
    seeds: &[(i64, i64)],
    filter: &Filter,
    limits: &Limits,
) -> Result<Vec<Reached>> {
    if !filter.kinds.is_empty() && !filter.kinds.iter().any(|k| k == "code_file") {
        return Ok(Vec::new());
    }
    let set_ids: Vec<i64> = relations::snapshot_sets(conn, snapshot_id)?
        .into_iter()
        .filter(|(_, c)| filter.collections.is_empty() || filter.collections.contains(c))
        .map(|(id, _)| id)
        .collect();
    if set_ids.is_empty() || limits.depth == 0 {
        return Ok(Vec::new());
    }
    // Only the four reference kinds can be followed; anything else in the pack is ignored.
    let followed: Vec<&str> = limits
        .relations
        .iter()
        .map(String::as_str)
        .filter(|k| matches!(*k, "calls" | "references" | "inherits" | "implements"))
        .collect();
    if followed.is_empty() {
        return Ok(Vec::new());
    }
    let edges = relations::Edges::new(
        conn.dialect(),
        &set_ids,
        &followed,
        limits.fanout,
        limits.callers,
    );
    let mut names: HashMap<i64, Option<(String, UnitType)>> = HashMap::new();
    let mut name = |conn: &dyn Tx, id: i64| -> Result<Option<(String, UnitType)>> {
        if let Some(found) = names.get(&id) {
            return Ok(found.clone());
        }
        let found = name_of(conn, id)?;
        names.insert(id, found.clone());
        Ok(found)
    };

    let mut visited: HashSet<i64> = HashSet::new();
    let mut seed_owners: HashSet<i64> = HashSet::new();
    // Queue items: unit, depth, seed index, callers followed so far, path.
    let mut queue: VecDeque<(i64, usize, usize, usize, Vec<Hop>)> = VecDeque::new();
    for (seed, &(chunk, owner)) in seeds.iter().take(limits.seeds).enumerate() {
        seed_owners.insert(owner);
        for unit in seed_units(conn, chunk)? {
            if visited.insert(unit) {
                queue.push_back((unit, 0, seed, 0, Vec::new()));
            }
        }
    }
    // Each reached window with its rank key: nearer first; then callees before callers (what a
    // candidate depends on is more often the evidence than who uses it, e.g. its tests); then the
    // better seed; then discovery order.
    let mut reached: Vec<((usize, usize, usize, usize), Reached)> = Vec::new();
    let mut owners: HashSet<i64> = HashSet::new();
    while let Some((unit, depth, seed, callers, path)) = queue.pop_front() {
        if depth >= limits.depth || visited.len() >= limits.max_nodes + seeds.len() {
            continue;
        }
        let Some((unit_name, _)) = name(conn, unit)? else {
            continue;
        };
        for (relation, other, site_path, line, incoming) in edges.of(conn, unit)? {
            if !visited.insert(other) {
                continue;
            }
            let Some((other_name, other_type)) = name(conn, other)? else {
                continue;
            };
            if other_type == UnitType::Module {
                continue;
            }
            let (from, to) = if incoming {
                (other_name, unit_name.clone())
            } else {
                (unit_name.clone(), other_name)
            };
            let mut via = path.clone();
            via.push(Hop {
                from,
                relation,
                to,
                path: site_path,
                line,
            });
            let callers = callers + usize::from(incoming);
            if let Some((chunk_id, owner_id)) = relations::window_of(conn, other)?
                && !seed_owners.contains(&owner_id)
                && owners.insert(owner_id)
            {
                let key = (depth + 1, callers, seed, reached.len());
                reached.push((
                    key,
                    Reached {
                        chunk_id,
                        owner_id,
                        via: via.clone(),
                    },
                ));
            }
            queue.push_back((other, depth + 1, seed, callers, via));
        }
    }
    reached.sort_by_key(|(key, _)| *key);
    Ok(reached.into_iter().map(|(_, r)| r).collect())
}
