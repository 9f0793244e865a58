//! Whole-tree analysis outside any workspace, for measurement only (the `bench` feature, used by
//! the `tychora-bench` binary; never compiled into the shipped addon): the resolver agreement
//! benchmark compares [`analyze_tree`]'s outcomes with a compiler's go-to-definition, and the
//! throughput benchmark times [`analyze_sources`] against other tree-sitter runtimes on the same
//! strings. Nothing here writes anything.

use crate::unit::UnitType;
use std::path::Path;
use std::time::Instant;

use serde::Serialize;

use crate::capture;
use crate::code::resolve::{self, Outcome, SourceFile};
use crate::code::{Analysis, Language, analyze, module_of};
use crate::error::Diagnostic;

/// One symbol definition: a unit with an anchor.
#[derive(Debug, Clone, Serialize)]
pub struct Definition {
    /// The unit's anchor (`pkg.mod.Class.method`, `src/a.ts#Class.method`), as a resolved
    /// target names it.
    pub anchor: String,
    /// The file, relative to the analyzed root.
    pub path: String,
    /// `module`, `class`, `interface`, `type`, `function` or `method`.
    pub unit_type: UnitType,
    /// Line of its first byte (1-based).
    pub line_start: usize,
    /// Line of its last byte (1-based).
    pub line_end: usize,
    /// Offset of its first byte in the file.
    pub byte_start: usize,
    /// Offset one past its last byte.
    pub byte_end: usize,
}

/// One reference site with its outcome.
#[derive(Debug, Clone, Serialize)]
pub struct ReferenceOutcome {
    /// The referring file, relative to the analyzed root.
    pub path: String,
    /// `call`, `attribute` or `name`.
    pub kind: &'static str,
    /// The referring expression as written (`self.parse`, `os.path.join`).
    pub text: String,
    /// Symbol path of the enclosing function, method or class; `None` at module level.
    pub enclosing: Option<String>,
    /// Line of the expression's first byte (1-based).
    pub line: usize,
    /// Column of its first byte (1-based, in bytes).
    pub col: usize,
    /// Offset of its first byte in the file.
    pub byte_start: usize,
    /// Offset one past its last byte.
    pub byte_end: usize,
    /// `resolved`, `ambiguous` or `unresolved`.
    pub outcome: &'static str,
    /// The target's anchor, when resolved.
    pub target: Option<String>,
    /// The candidates' anchors, sorted, when ambiguous; empty otherwise.
    pub candidates: Vec<String>,
    /// Why it is unresolved (`external module os`, `builtin`, …); `None` otherwise.
    pub reason: Option<String>,
}

/// What [`analyze_tree`] found.
#[derive(Debug, Serialize)]
pub struct TreeReport {
    /// What the resolution is: `syntactic` (not compiler-checked).
    pub resolution: &'static str,
    /// Code files read and analyzed.
    pub files: usize,
    /// Their total size in bytes.
    pub bytes: usize,
    /// Every unit with an anchor: modules and symbols.
    pub definitions: Vec<Definition>,
    /// Every reference site, with its outcome.
    pub references: Vec<ReferenceOutcome>,
    /// What the walk skipped and the files that could not be read or analyzed.
    pub diagnostics: Vec<Diagnostic>,
}

/// Parse statistics of [`analyze_sources`].
#[derive(Debug, Serialize)]
pub struct ParseStats {
    /// Files given, including those in no known language (skipped).
    pub files: usize,
    /// Their total size in bytes.
    pub bytes: usize,
    /// Evidence units extracted, of every type; with [`Work::Parse`], syntax tree nodes instead.
    pub units: usize,
    /// Reference sites extracted (0 with [`Work::Parse`]).
    pub references: usize,
    /// Threads it ran on, as given.
    pub threads: usize,
    /// Wall-clock seconds the parsing (and extraction) took.
    pub seconds: f64,
}

/// What [`analyze_sources`] does per file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Work {
    /// Parse only (the tree is dropped): comparable with other runtimes' `parse`.
    Parse,
    /// Parse, then extract symbol units, reference sites and the default export ([`analyze`]).
    Extract,
}

/// Parses (and, with [`Work::Extract`], extracts) `(path, source)` pairs on `threads` threads and
/// reports the time taken by that alone (the strings are already in memory).
#[must_use]
pub fn analyze_sources(sources: &[(String, String)], threads: usize, work: Work) -> ParseStats {
    let started = Instant::now();
    let counts = crate::parallel::map(sources, threads, |(path, source)| {
        let Some(language) = Language::from_path(path) else {
            return (0, 0);
        };
        if work == Work::Parse {
            let nodes = crate::code::syntax::parse(language, source)
                .map_or(0, |tree| tree.root_node().descendant_count());
            return (nodes, 0);
        }
        let analysis = analyze(language, source, path, &language.module_path(path));
        (
            analysis.parsed.units.len(),
            analysis.references.references.len(),
        )
    });
    let seconds = started.elapsed().as_secs_f64();
    ParseStats {
        files: sources.len(),
        bytes: sources.iter().map(|(_, s)| s.len()).sum(),
        units: counts.iter().flatten().map(|c| c.0).sum(),
        references: counts.iter().flatten().map(|c| c.1).sum(),
        threads,
        seconds,
    }
}

/// Walks `root` as `add` would (gitignore, no symlinks), analyzes every code file and resolves
/// every reference against the whole tree.
#[must_use]
pub fn analyze_tree(root: &Path, max_file_bytes: u64) -> TreeReport {
    let root = &std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let capture::Walk {
        candidates,
        mut diagnostics,
        ..
    } = capture::walk_around(root, root, Path::new("/nonexistent"), &[], &[]);
    let code: Vec<(&capture::Candidate, Language)> = candidates
        .iter()
        .filter_map(|c| Language::from_path(&c.rel_path).map(|l| (c, l)))
        .collect();
    let packages = crate::code::python_packages(candidates.iter().map(|c| c.rel_path.as_str()));
    let analyzed = crate::parallel::map(&code, crate::parallel::cores(), |(c, language)| {
        capture::read_confined(root, &c.path, &c.rel_path, max_file_bytes)
            .and_then(|bytes| {
                String::from_utf8(bytes).map_err(|e| {
                    Diagnostic::error(
                        &c.rel_path,
                        crate::error::ErrorCode::UnsupportedFormat,
                        format!("invalid UTF-8 at byte {}", e.utf8_error().valid_up_to()),
                    )
                })
            })
            .map(|source| {
                let module = module_of(*language, &c.rel_path, &packages);
                let analysis = analyze(*language, &source, &c.rel_path, &module);
                (module, analysis, source.len())
            })
    });
    let mut kept = Vec::new();
    let mut bytes = 0;
    for ((c, language), result) in code.iter().zip(analyzed) {
        match result {
            Some(Ok((module, analysis, len))) => {
                bytes += len;
                kept.push((c.rel_path.clone(), *language, module, analysis));
            }
            Some(Err(diag)) => diagnostics.push(diag),
            None => diagnostics.push(Diagnostic::error(
                &c.rel_path,
                crate::error::ErrorCode::Internal,
                "worker thread panicked",
            )),
        }
    }
    let files: Vec<SourceFile<'_>> = kept
        .iter()
        .map(|(path, language, module, analysis)| SourceFile {
            path,
            module: module.clone(),
            language: *language,
            refs: &analysis.references,
            default_export: analysis.default_export.clone(),
        })
        .collect();
    let resolutions = resolve::resolve(&files);
    let by_path: std::collections::HashMap<&str, &Analysis> =
        kept.iter().map(|(p, _, _, a)| (p.as_str(), a)).collect();
    let references = resolutions
        .into_iter()
        .filter_map(|r| {
            let analysis = by_path.get(r.file.as_str())?;
            let site = analysis.references.references.get(r.reference_index)?;
            let (outcome, target, candidates, reason) = match r.outcome {
                Outcome::Resolved { target } => ("resolved", Some(target), Vec::new(), None),
                Outcome::Ambiguous { candidates } => ("ambiguous", None, candidates, None),
                Outcome::Unresolved { reason } => ("unresolved", None, Vec::new(), Some(reason)),
            };
            Some(ReferenceOutcome {
                path: r.file,
                kind: match site.kind {
                    crate::code::references::RefKind::Call => "call",
                    crate::code::references::RefKind::Attribute => "attribute",
                    crate::code::references::RefKind::Name => "name",
                },
                text: site.text.clone(),
                enclosing: site.enclosing.clone(),
                line: site.span.line_start,
                col: site.span.col_start,
                byte_start: site.span.byte_start,
                byte_end: site.span.byte_end,
                outcome,
                target,
                candidates,
                reason,
            })
        })
        .collect();
    let definitions = kept
        .iter()
        .flat_map(|(path, _, _, analysis)| {
            analysis.parsed.units.iter().filter_map(move |u| {
                Some(Definition {
                    anchor: u.anchor.clone()?,
                    path: path.clone(),
                    unit_type: u.unit_type,
                    line_start: u.span.line_start,
                    line_end: u.span.line_end,
                    byte_start: u.span.byte_start,
                    byte_end: u.span.byte_end,
                })
            })
        })
        .collect();
    TreeReport {
        resolution: resolve::RESOLUTION,
        files: kept.len(),
        bytes,
        definitions,
        references,
        diagnostics,
    }
}
