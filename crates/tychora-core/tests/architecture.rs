//! The core's module graph, read from the sources: acyclic, and layered as `LAYERS` says.
//!
//! Every `crate::module` path in a file is an edge from the file's top-level module to that module.
//! A module may depend on modules of lower layers only (and on itself), so a cycle cannot form and
//! a new dependency upward has to change this table on purpose.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Top-level modules by layer, lowest first. Within a layer, modules do not depend on each other.
const LAYERS: &[&[&str]] = &[
    // Vocabulary and storage primitives.
    &["error"],
    &[
        "unit", "tokenize", "parallel", "safety", "fusion", "config", "store", "artifact",
        "capture", "trust",
    ],
    // Typed facet values and conditions, read against the pack's kinds.
    &["facet"],
    // Parsing code, job bookkeeping, the lexical index, the text channel's vectors.
    &["code", "job", "lexical", "vector"],
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
        let entry = edges.entry(from.clone()).or_default();
        for m in pattern.captures_iter(&text) {
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
