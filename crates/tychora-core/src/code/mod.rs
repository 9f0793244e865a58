//! Code evidence: symbol-shaped units extracted from source code with tree-sitter (DESIGN §9).
//!
//! [`extract`] yields, in document order, one `module` container spanning the file; `class`,
//! `interface`, `type`, `function` and `method` units whose spans include their leading comment
//! block, decorators and (Python) docstring; and `header` / `statement` leaves for the code
//! between symbols (imports, module-level assignments, `if __name__ == "__main__":` blocks, a
//! class's own declaration and fields), so that every byte of code is indexed by some leaf.
//!
//! A class whose body holds methods (or nested classes) is a container: its members are leaves
//! and its own bytes become a `header` leaf (decorators, `class …` line, docstring, fields up to
//! the first blank line) and `statement` leaves. Leaves never overlap; a container's closing
//! brace is the only code left to the container alone. Every unit's `text` is the exact slice
//! of its `span`.
//!
//! Symbols are named by path: heading path `["pkg.mod", "Class", "method"]`, anchor
//! `pkg.mod.Class.method` (Python) or `src/a.ts#Class.method` (JS/TS), and identifiers
//! `symbol` (the anchor), `symbol_name` (`Class.method` and `method`) and, for JS/TS, `export`.
//!
//! Ingestion calls [`analyze`] once per changed file; [`GRAMMAR_VERSION`] is part of the syntax
//! cache key.

pub mod cache;
mod ecmascript;
mod language;
mod outline;
mod python;
pub mod references;
pub mod resolve;
pub(crate) mod syntax;
mod units;

#[cfg(test)]
mod tests;

pub use language::Language;
pub(crate) use language::normalize as normalize_path;

use crate::error::{Diagnostic, ErrorCode};
use crate::unit::{LineIndex, Parsed};
use units::{Emitter, Naming};

/// Changes whenever a grammar or this adapter changes what [`extract`] returns: `code-<adapter
/// revision>` and the grammar crates' versions (a test checks them against the grammars'
/// own metadata where they report it).
pub const GRAMMAR_VERSION: &str =
    "code-2;tree-sitter-0.26;python-0.25.0;javascript-0.25.0;typescript-0.23.2";

/// Extracts the symbol units of `source`, a file at `path` (relative to its source root; it
/// names the module and the anchors).
///
/// Never fails: tree-sitter recovers from syntax errors, the intact declarations around them
/// still become symbols, and the damage is reported as one warning diagnostic
/// ([`ErrorCode::UnsupportedFormat`]) located at the first error.
#[must_use]
pub fn extract(language: Language, source: &str, path: &str) -> Parsed {
    extract_in_module(language, source, path, &language.module_path(path))
}

/// [`extract`] with the module path given by the caller: for Python, the import path found from
/// the package layout (`src/pkg/mod.py` is `pkg.mod` when `src/` holds no `__init__.py`).
#[must_use]
pub fn extract_in_module(language: Language, source: &str, path: &str, module: &str) -> Parsed {
    let tree = syntax::parse(language, source);
    units_from_tree(language, source, path, module, tree.as_ref())
}

/// Everything ingestion needs from one code file, from a single parse: its symbol units, its
/// reference sites and (JS/TS) the local name it exports as `default`.
#[derive(Debug)]
pub struct Analysis {
    /// Symbol units, as [`extract_in_module`] gives them.
    pub parsed: Parsed,
    /// Reference sites, as [`references::extract`] gives them.
    pub references: references::References,
    /// See [`resolve::SourceFile::default_export`].
    pub default_export: Option<String>,
}

/// Parses `source` once and extracts units, references and the default export from that tree.
#[must_use]
pub fn analyze(language: Language, source: &str, path: &str, module: &str) -> Analysis {
    let tree = syntax::parse(language, source);
    let parsed = units_from_tree(language, source, path, module, tree.as_ref());
    let (references, default_export) = match &tree {
        Some(tree) => (
            references::extract_from_tree(language, source, tree),
            resolve::default_export_from_tree(source, tree),
        ),
        None => (references::References::default(), None),
    };
    Analysis {
        parsed,
        references,
        default_export,
    }
}

/// The directories holding an `__init__.py` among `paths` (relative, `/`-separated): the Python
/// packages [`module_of`] needs (`""` when the root itself is one).
pub fn python_packages<'a>(
    paths: impl Iterator<Item = &'a str>,
) -> std::collections::HashSet<String> {
    paths
        .filter_map(|rel| {
            if rel == "__init__.py" {
                Some(String::new())
            } else {
                rel.strip_suffix("/__init__.py").map(str::to_string)
            }
        })
        .collect()
}

/// The import path of a file: for Python, from the parent of its outermost enclosing package (a
/// chain of directories holding `__init__.py`, listed in `packages`), so `src/pkg/sub/mod.py` is
/// `pkg.sub.mod` under a `src/` layout; for JS/TS, [`Language::module_path`].
#[must_use]
pub fn module_of(
    language: Language,
    rel: &str,
    packages: &std::collections::HashSet<String>,
) -> String {
    if language != Language::Python {
        return language.module_path(rel);
    }
    let parent = |p: &str| p.rsplit_once('/').map(|(d, _)| d.to_string());
    // The outermost enclosing package, even across directories without `__init__.py` below it:
    // those are namespace packages (`flask/sansio/app.py` is `flask.sansio.app`).
    let mut top: Option<String> = None;
    let mut dir = parent(rel);
    while let Some(d) = dir {
        if packages.contains(&d) {
            top = Some(d.clone());
        }
        dir = parent(&d);
    }
    let base = match top {
        Some(t) => parent(&t),
        None => parent(rel),
    };
    let relative = match base {
        Some(b) => &rel[b.len() + 1..],
        None => rel,
    };
    Language::Python.module_path(relative)
}

fn units_from_tree(
    language: Language,
    source: &str,
    path: &str,
    module: &str,
    tree: Option<&tree_sitter::Tree>,
) -> Parsed {
    let index = LineIndex::new(source);
    let module = module.to_string();
    let anchor_prefix = match language {
        Language::Python => format!("{module}."),
        Language::JavaScript | Language::TypeScript | Language::Tsx => {
            format!("{}#", language::normalize(path))
        }
    };
    let naming = Naming {
        module,
        anchor_prefix,
    };
    let mut diagnostics = Vec::new();
    let items = match tree {
        Some(tree) => {
            let root = tree.root_node();
            if let Some(error) = syntax::first_error(root) {
                let (line, col) = index.position(error.start_byte());
                let what = if error.is_missing() {
                    format!("missing `{}`", error.kind())
                } else {
                    "unexpected code".to_string()
                };
                diagnostics.push(
                    Diagnostic::warning(
                        path,
                        ErrorCode::UnsupportedFormat,
                        format!(
                            "{} syntax error at line {line}, column {col} ({what}); the \
                             declarations around it were still extracted",
                            language.as_str()
                        ),
                    )
                    .at(format!("{line}:{col}")),
                );
            }
            match language {
                Language::Python => python::outline(root, source),
                Language::JavaScript | Language::TypeScript | Language::Tsx => {
                    ecmascript::outline(root, source)
                }
            }
        }
        None => {
            diagnostics.push(Diagnostic::warning(
                path,
                ErrorCode::UnsupportedFormat,
                format!(
                    "the {} grammar could not parse this file; it is indexed as plain code",
                    language.as_str()
                ),
            ));
            // With no items, the whole file is one run of code (see `Emitter::items`).
            Vec::new()
        }
    };
    let mut emitter = Emitter::new(source, &index, &naming);
    emitter.module(&items);
    Parsed {
        units: emitter.units,
        diagnostics,
        title: Some(naming.module),
    }
}
