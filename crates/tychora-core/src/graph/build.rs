//! Relation sets: the resolver run over the code members of one root in one collection, stored as
//! relation assertions (DESIGN §9) with the site that supports each.
//!
//! A set is keyed by the extractions it covers, so publishing a snapshot whose code is unchanged
//! reuses the set of its parent; a changed file re-resolves its whole root, since a change in one
//! file can change what the references of every other file resolve to.

use std::collections::{BTreeMap, HashMap};

use serde_json::json;
use sha2::{Digest, Sha256};

use crate::code::references::{Heritage, RefKind, References};
use crate::code::resolve::{self, Outcome, SourceFile};
use crate::code::{Language, cache};
use crate::error::Result;
use crate::snapshot::Member;
use crate::store::relations::{self, NewRelation, RelationUnit};
use crate::store::tx::Tx;
use crate::unit::Span;
use crate::unit::UnitType;

/// A code member with what the resolver needs.
struct CodeMember<'m> {
    member: &'m Member,
    language: Language,
    module: String,
    references: References,
    default_export: Option<String>,
}

/// A code member as `code_extractions` records it: language, module path, syntax cache key.
type Recorded<'m> = (&'m Member, String, String, String);

/// Finds or builds the relation set of every (collection, root) with code among `members`, and
/// returns their ids. Called inside the publishing job, before the snapshot is published.
///
/// # Errors
/// SQLite errors.
pub fn relation_sets(conn: &dyn Tx, members: &[Member]) -> Result<Vec<i64>> {
    let mut groups: BTreeMap<(i64, i64), Vec<Recorded<'_>>> = BTreeMap::new();
    for member in members {
        if let Some((language, module, key)) =
            relations::code_extraction(conn, member.extraction_id)?
        {
            groups
                .entry((member.collection_id, member.root_id))
                .or_default()
                .push((member, language, module, key));
        }
    }
    let mut ids = Vec::new();
    for ((collection_id, root_id), group) in groups {
        let mut extraction_ids: Vec<i64> = group.iter().map(|g| g.0.extraction_id).collect();
        extraction_ids.sort_unstable();
        let mut hasher = Sha256::new();
        for id in &extraction_ids {
            hasher.update(id.to_le_bytes());
        }
        let hash = hex::encode(hasher.finalize());
        let existing = relations::set_by_members(conn, root_id, collection_id, &hash)?;
        let id = match existing {
            Some(id) => id,
            None => {
                let code = load_members(conn, &group)?;
                // Immediate: the set reads units before it writes, and a deferred transaction
                // whose snapshot went stale (the query log commits on its own connection) cannot
                // upgrade to a writer (SQLITE_BUSY_SNAPSHOT, seen in CI).
                conn.together(true, |tx| {
                    build_set(tx, root_id, collection_id, &hash, &code)
                })?
            }
        };
        ids.push(id);
    }
    Ok(ids)
}

fn load_members<'m>(conn: &dyn Tx, group: &[Recorded<'m>]) -> Result<Vec<CodeMember<'m>>> {
    let mut out = Vec::with_capacity(group.len());
    for (member, language, module, key) in group {
        let Some(language) = Language::from_name(language) else {
            continue;
        };
        let payload = relations::syntax_payload(conn, key)?;
        let Some((references, default_export)) =
            payload.as_deref().and_then(cache::decode_references)
        else {
            log::warn!(
                "syntax cache entry {key} of {} is missing or unreadable; its references are not resolved",
                member.rel_path
            );
            continue;
        };
        out.push(CodeMember {
            member,
            language,
            module: module.clone(),
            references,
            default_export,
        });
    }
    Ok(out)
}

/// One relation row before insertion.
struct Row<'a> {
    kind: &'static str,
    revision_id: i64,
    src_unit_id: i64,
    outcome: &'a Outcome,
    target_unit_id: Option<i64>,
    text: &'a str,
    span: Span,
}

#[allow(clippy::too_many_lines)] // One pass per relation family, in the order a reader expects.
fn build_set(
    tx: &dyn Tx,
    root_id: i64,
    collection_id: i64,
    hash: &str,
    code: &[CodeMember<'_>],
) -> Result<i64> {
    let files: Vec<SourceFile<'_>> = code
        .iter()
        .map(|c| SourceFile {
            path: &c.member.rel_path,
            module: c.module.clone(),
            language: c.language,
            refs: &c.references,
            default_export: c.default_export.clone(),
        })
        .collect();
    let resolutions = resolve::resolve(&files);
    let imports = resolve::resolve_imports(&files);

    // Units of every member; symbol anchors → unit ids across the root.
    let mut units: HashMap<&str, Vec<RelationUnit>> = HashMap::new();
    for c in code {
        units.insert(
            c.member.rel_path.as_str(),
            relations::units_of(tx, c.member.extraction_id)?,
        );
    }
    let mut by_anchor: HashMap<&str, i64> = HashMap::new();
    for rows in units.values() {
        for u in rows {
            if let Some(anchor) = &u.anchor
                && u.unit_type.is_symbol()
            {
                by_anchor.entry(anchor.as_str()).or_insert(u.id);
            }
        }
    }
    let member_of: HashMap<&str, &CodeMember<'_>> = code
        .iter()
        .map(|c| (c.member.rel_path.as_str(), c))
        .collect();
    // The unit a site sits in: its enclosing symbol's, else the module's.
    let enclosing_unit = |c: &CodeMember<'_>, enclosing: Option<&str>| -> Option<i64> {
        let rows = units.get(c.member.rel_path.as_str())?;
        let module_unit = rows.first().map(|u| u.id);
        let Some(path) = enclosing else {
            return module_unit;
        };
        let anchor = if c.language == Language::Python {
            format!("{}.{path}", c.module)
        } else {
            format!("{}#{path}", crate::code::normalize_path(&c.member.rel_path))
        };
        rows.iter()
            .find(|u| u.anchor.as_deref() == Some(anchor.as_str()) && u.unit_type.is_symbol())
            .map(|u| u.id)
            .or(module_unit)
    };
    let target_unit = |outcome: &Outcome| match outcome {
        Outcome::Resolved { target } => by_anchor.get(target.as_str()).copied(),
        _ => None,
    };

    let set_id = relations::begin_set(tx, root_id, collection_id, hash, resolve::RESOLUTION)?;
    let mut insert = relations::Inserter::new(tx, set_id)?;
    let mut stats: BTreeMap<String, usize> = BTreeMap::new();
    let mut put = |row: Row<'_>| -> Result<()> {
        let (outcome, target, candidates, reason) = match row.outcome {
            Outcome::Resolved { target } => ("resolved", Some(target.as_str()), None, None),
            Outcome::Ambiguous { candidates } => (
                "ambiguous",
                None,
                Some(serde_json::to_string(candidates).unwrap_or_else(|_| "[]".into())),
                None,
            ),
            Outcome::Unresolved { reason } => ("unresolved", None, None, Some(reason.as_str())),
        };
        *stats.entry(format!("{}.{outcome}", row.kind)).or_default() += 1;
        let name = row
            .text
            .rsplit(['.', '#'])
            .next()
            .unwrap_or(row.text)
            .trim();
        insert.put(&NewRelation {
            kind: row.kind,
            revision_id: row.revision_id,
            src_unit_id: row.src_unit_id,
            outcome,
            target_unit_id: row.target_unit_id,
            target_anchor: target,
            candidates_json: candidates.as_deref(),
            reason,
            ref_text: row.text,
            name,
            span: row.span,
        })?;
        Ok(())
    };

    // defines / contains: the symbol tree of each file.
    for c in code {
        let Some(rows) = units.get(c.member.rel_path.as_str()) else {
            continue;
        };
        for u in rows {
            let (Some(parent), Some(anchor)) = (u.parent_ordinal, &u.anchor) else {
                continue;
            };
            if !u.unit_type.is_symbol() {
                continue;
            }
            let Some(owner) = rows.get(parent) else {
                continue;
            };
            let kind = if owner.unit_type == UnitType::Module {
                "defines"
            } else {
                "contains"
            };
            let outcome = Outcome::Resolved {
                target: anchor.clone(),
            };
            put(Row {
                kind,
                revision_id: c.member.revision_id,
                src_unit_id: owner.id,
                outcome: &outcome,
                target_unit_id: Some(u.id),
                text: anchor,
                span: u.span,
            })?;
        }
    }
    // imports
    for r in &imports {
        let Some(c) = member_of.get(r.file.as_str()) else {
            continue;
        };
        let Some(import) = c.references.imports.get(r.import_index) else {
            continue;
        };
        let Some(src) = enclosing_unit(c, None) else {
            continue;
        };
        let text = match &import.name {
            Some(name) if name != "*" => format!("{}.{name}", import.module),
            _ => import.module.clone(),
        };
        put(Row {
            kind: "imports",
            revision_id: c.member.revision_id,
            src_unit_id: src,
            outcome: &r.outcome,
            target_unit_id: target_unit(&r.outcome),
            text: &text,
            span: import.span,
        })?;
    }
    // calls / references / inherits / implements
    for r in &resolutions {
        let Some(c) = member_of.get(r.file.as_str()) else {
            continue;
        };
        let Some(site) = c.references.references.get(r.reference_index) else {
            continue;
        };
        let Some(src) = enclosing_unit(c, site.enclosing.as_deref()) else {
            continue;
        };
        let kind = match (site.heritage, site.kind) {
            (Some(Heritage::Extends), _) => "inherits",
            (Some(Heritage::Implements), _) => "implements",
            (None, RefKind::Call) => "calls",
            (None, _) => "references",
        };
        put(Row {
            kind,
            revision_id: c.member.revision_id,
            src_unit_id: src,
            outcome: &r.outcome,
            target_unit_id: target_unit(&r.outcome),
            text: &site.text,
            span: site.span,
        })?;
    }
    drop(insert);
    relations::finish_set(
        tx,
        set_id,
        &json!({ "files": code.len(), "relations": stats }).to_string(),
    )?;
    Ok(set_id)
}
