//! The core's module graph, read from the sources: acyclic, and layered as `LAYERS` says.
//!
//! Every `crate::module` path in a file is an edge from the file's top-level module to that module.
//! A module may depend on modules of lower layers only (and on itself), so a cycle cannot form and
//! a new dependency upward has to change this table on purpose.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Top-level modules by layer, lowest first. Within a layer, modules do not depend on each other.
const LAYERS: &[&[&str]] = &[
    // The closed sets' declaration macro.
    &["wire"],
    // Vocabulary and storage primitives.
    &["error", "scripts", "clock"],
    &[
        "unit", "tokenize", "parallel", "safety", "fusion", "config", "artifact", "capture",
        "trust",
    ],
    // Typed facet values and conditions, read against the pack's kinds.
    &["facet"],
    // Parsing code, job bookkeeping, the lexical index, the text channel's vectors.
    &["code", "job", "lexical", "vector"],
    // The canonical store's repositories: they speak the domain's closed sets (job states, unit
    // types, facet values) and everything that reads or writes canonical rows sits above them.
    // Beside them, the OpenSearch adapter of the lexical port (derived indexes on a cluster).
    &["store", "opensearch"],
    &["parse", "snapshot"],
    // Windows, the identifier channel, and an open workspace's state.
    &["chunk", "exact", "engine"],
    // Code relations, and the summary tree over the window vectors.
    &["graph", "summary"],
    // The pipelines over an engine.
    &["query", "ingest"],
    &["manage"],
    // The public front, and the benchmark entry points.
    &["workspace", "bench"],
];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|layer| layer.contains(&module))
}

/// The top-level module a file under `src/` belongs to (`None` for `lib.rs`).
fn module_of(rel: &Path) -> Option<String> {
    let first = rel.components().next()?.as_os_str().to_str()?.to_string();
    if first == "lib.rs" {
        return None;
    }
    Some(first.trim_end_matches(".rs").to_string())
}

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// A source file's code that ships: what precedes its unit tests' `mod tests`.
fn shipping(text: &str) -> &str {
    text.split("#[cfg(test)]\nmod tests")
        .next()
        .unwrap_or_default()
}

/// Module → the other modules it names, from the real sources.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let pattern = regex::Regex::new(r"crate::([a-z_]+)").unwrap();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in files {
        let Some(from) = module_of(file.strip_prefix(&src).unwrap()) else {
            continue;
        };
        let text = std::fs::read_to_string(&file).unwrap();
        // A unit test may set up with a module above its own (facet's tests build the real
        // schema with `store::migrate`): the layering is that of the code that ships.
        let code = shipping(&text);
        let entry = edges.entry(from.clone()).or_default();
        for m in pattern.captures_iter(code) {
            if m[1] != *from {
                entry.insert(m[1].to_string());
            }
        }
    }
    edges
}

#[test]
fn the_module_graph_is_read_from_the_sources() {
    let edges = graph();
    assert!(edges.len() >= 20, "{edges:?}");
    assert!(edges["ingest"].contains("engine"));
}

#[test]
fn every_module_has_a_layer() {
    let edges = graph();
    let unknown: Vec<&String> = edges.keys().filter(|m| layer_of(m).is_none()).collect();
    assert!(
        unknown.is_empty(),
        "add these modules to LAYERS in tests/architecture.rs: {unknown:?}"
    );
}

#[test]
fn dependencies_point_down_the_layers_only() {
    let mut upward = Vec::new();
    for (from, targets) in graph() {
        let Some(own) = layer_of(&from) else { continue };
        for to in targets {
            match layer_of(&to) {
                Some(layer) if layer < own => {}
                _ => upward.push(format!("{from} -> {to}")),
            }
        }
    }
    assert!(
        upward.is_empty(),
        "edges that are not downward: {upward:#?}"
    );
}

#[test]
fn the_module_graph_has_no_cycle() {
    fn visit(
        node: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|n| n == node) {
            return Some(path[at..].to_vec());
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_string());
        for next in edges.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, edges, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        done.insert(node.to_string());
        None
    }
    let edges = graph();
    let mut done = BTreeSet::new();
    for node in edges.keys() {
        let cycle = visit(node, &edges, &mut Vec::new(), &mut done);
        assert!(cycle.is_none(), "import cycle: {cycle:?}");
    }
}

#[test]
fn the_layering_comment_in_lib_rs_is_this_table() {
    let lib = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs"))
        .expect("src/lib.rs");
    // The lines after "lowest first" up to the first module declaration, each `// a, b, c`.
    let listed: Vec<Vec<String>> = lib
        .lines()
        .skip_while(|l| !l.contains("lowest first"))
        .skip(2)
        .take_while(|l| l.starts_with("// "))
        .map(|l| {
            l.trim_start_matches("// ")
                .split(", ")
                .map(str::to_string)
                .collect()
        })
        .collect();
    let table: Vec<Vec<String>> = LAYERS
        .iter()
        .map(|layer| layer.iter().map(|m| (*m).to_string()).collect())
        .collect();
    assert_eq!(
        listed, table,
        "src/lib.rs's layering comment must list LAYERS, lowest first"
    );
}

/// Within each top-level module, its files (a sibling `x.rs` or folder `x/` is one node) → the
/// siblings they name (`super::x`, `crate::module::x`); the folder's `mod.rs` is not a node.
fn file_graphs() -> BTreeMap<String, BTreeMap<String, BTreeSet<String>>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out: BTreeMap<String, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    for dir in std::fs::read_dir(&src).unwrap().flatten() {
        let top = dir.file_name().to_string_lossy().to_string();
        if !dir.path().is_dir() {
            continue;
        }
        let siblings: BTreeSet<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .map(|e| {
                e.file_name()
                    .to_string_lossy()
                    .trim_end_matches(".rs")
                    .to_string()
            })
            .filter(|n| n != "mod")
            .collect();
        let named = regex::Regex::new(&format!(r"(?:super|crate::{top})::([a-z_]+)")).unwrap();
        let mut files = Vec::new();
        rust_files(&dir.path(), &mut files);
        let edges = out.entry(top.clone()).or_default();
        for file in files {
            let rel = file.strip_prefix(dir.path()).unwrap();
            let first = rel
                .components()
                .next()
                .unwrap()
                .as_os_str()
                .to_string_lossy();
            let from = first.trim_end_matches(".rs").to_string();
            if from == "mod" {
                continue;
            }
            // A file one folder down names its own folder's siblings with `super::`; only the
            // folder's direct files speak for this level.
            let direct = rel.components().count() == 1
                || rel.file_name().is_some_and(|f| f == "mod.rs") && rel.components().count() == 2;
            let text = std::fs::read_to_string(&file).unwrap();
            // Tests may reach anywhere; a doc link is not a dependency.
            let code: String = text
                .split("#[cfg(test)]")
                .next()
                .unwrap_or_default()
                .lines()
                .filter(|l| !l.trim_start().starts_with("//"))
                .collect::<Vec<_>>()
                .join("\n");
            let entry = edges.entry(from.clone()).or_default();
            for m in named.captures_iter(&code) {
                let to = m[1].to_string();
                let via_super = m[0].starts_with("super");
                if to != from && siblings.contains(&to) && (direct || !via_super) {
                    entry.insert(to);
                }
            }
        }
    }
    out
}

#[test]
fn no_two_files_of_a_module_depend_on_each_other_in_a_circle() {
    let mut circles = Vec::new();
    for (top, edges) in file_graphs() {
        fn reaches(
            from: &str,
            target: &str,
            edges: &BTreeMap<String, BTreeSet<String>>,
            seen: &mut BTreeSet<String>,
        ) -> bool {
            edges.get(from).into_iter().flatten().any(|next| {
                next == target || (seen.insert(next.clone()) && reaches(next, target, edges, seen))
            })
        }
        for file in edges.keys() {
            if reaches(file, file, &edges, &mut BTreeSet::new()) {
                circles.push(format!("{top}/{file}"));
            }
        }
    }
    assert!(circles.is_empty(), "files on an import circle: {circles:?}");
}

/// SQL statement literals (`"SELECT …"`, `r#"INSERT …"#`, …) outside `store/` by top-level
/// module, tests inside the sources left out.
fn sql_outside_the_store() -> BTreeMap<String, usize> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let statement = regex::Regex::new(
        r#"r?#*"\s*(?:(?:SELECT|INSERT|UPDATE|DELETE|WITH|CREATE|DROP|ALTER|PRAGMA|REPLACE|ATTACH)\s|(?:BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE|VACUUM)\b)"#,
    )
    .unwrap();
    let mut counts = BTreeMap::new();
    for file in files {
        let Some(module) = module_of(file.strip_prefix(&src).unwrap()) else {
            continue;
        };
        if module == "store" {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        let code = shipping(&text);
        let n = statement.find_iter(code).count();
        if n > 0 {
            *counts.entry(module).or_insert(0) += n;
        }
    }
    counts
}

/// Nothing outside the store module writes SQL (issue 36's store port, docs/plans/scale-out.md):
/// every canonical read and write goes through `store/`'s repositories, so a second adapter
/// (PostgreSQL) replaces one module, not statements spread through the application. Moved domain
/// by domain under a ratchet from 306 statements in 11 modules to none.
#[test]
fn no_sql_outside_the_store() {
    let found = sql_outside_the_store();
    assert!(
        found.is_empty(),
        "SQL outside crates/tychora-core/src/store: put it behind a store repository instead: {found:?}"
    );
}

/// Every repository under `store/` speaks the transaction interface (`store::tx::Tx`), so the
/// same function runs on SQLite and on PostgreSQL: rusqlite is named only by the embedded
/// adapter's own files — the interface's SQLite side (`tx.rs`), opening and migrating the
/// database (`mod.rs`, `migrate.rs`), the queue's SQLite adapter (`queue.rs`) and the user's
/// own vector cache, a separate SQLite file (`vectors.rs`). Tests inside the sources are left out.
#[test]
fn store_repositories_speak_only_the_transaction_interface() {
    const SQLITE_ADAPTER: &[&str] = &["tx.rs", "mod.rs", "migrate.rs", "queue.rs", "vectors.rs"];
    let store = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/store");
    let mut found = Vec::new();
    for entry in std::fs::read_dir(&store).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if path.extension().is_none_or(|e| e != "rs") || SQLITE_ADAPTER.contains(&name.as_str()) {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        if shipping(&text).contains("rusqlite") {
            found.push(name);
        }
    }
    found.sort();
    assert!(
        found.is_empty(),
        "store repositories naming rusqlite instead of `store::tx::Tx`: {found:?}"
    );
}
