//! A syntactic resolver (DESIGN §9): maps the reference sites [`super::references::extract`]
//! reports to the symbol anchors of the files handed to it. It is **not a compiler** and does
//! no type inference, no control-flow analysis and no inheritance lookup; every result carries
//! [`RESOLUTION`] = `"syntactic"` so consumers can say so. Not wired into ingestion or storage.
//!
//! What it considers, in this order, for a reference's head (`f` in `f()`, `m` in `m.f()`):
//! 1. **Same-file lexical scope**: a module-level function or class of the same file. `self.m`
//!    / `this.m` (and `cls.m` in Python) look `m` up on the innermost enclosing class that has
//!    members.
//! 2. **Explicit visible import bindings**: Python `import a.b [as m]`, `from x import y [as z]`
//!    (relative modules resolved against the importer; a package's `__init__` module is the
//!    package), `from x import *` (as a fallback); JS/TS named, default and namespace imports,
//!    CommonJS `require` and TS `import x = require()`. Relative JS/TS specifiers are joined to the
//!    importer's directory and compared, without extension, with each file's module (`<spec>` and
//!    `<spec>/index`); an exported name is a module-level definition of that file, or ONE level of
//!    `export { x } from` / `export * from` re-exports (Python: one level of the module's own
//!    import bindings).
//! 3. **Qualified names**: the rest of a dotted chain walks through modules (members, then
//!    submodules) and class members.
//!
//! Outcomes: one distinct target → [`Outcome::Resolved`]; several → [`Outcome::Ambiguous`]
//! (sorted); otherwise [`Outcome::Unresolved`] with a reason: `external module <name>` (a bare
//! import of a module not among the files), `no visible binding for <name>`, `builtin`,
//! `attribute not found on the enclosing class`, `<name> not found in module <module>`, and a
//! few more. A module target's anchor is the module itself (the `module` unit's anchor).
//!
//! Known blind spots: local variables and parameters (they read as unbound names), instance
//! attributes, inheritance, `module.exports = …` shapes, path aliases (`@/x`), which names a JS
//! file actually exports (every module-level definition counts as exported), and default exports
//! unless the caller supplies [`SourceFile::default_export`] (see [`default_export`]).

use std::collections::{BTreeMap, BTreeSet};

use super::Language;
use super::language::normalize;
use super::references::{ImportKind, RefKind, References};

/// What every [`Resolution`] is: syntactic, not compiler-checked.
pub const RESOLUTION: &str = "syntactic";

/// How deep re-exports and `__init__` re-bindings are followed (one level, as specified).
const FOLLOW_LEVELS: usize = 1;

/// One file handed to [`resolve`].
#[derive(Debug, Clone)]
pub struct SourceFile<'a> {
    /// Repo-relative, `/`-separated path (`src/lex.ts`, `pkg/__init__.py`).
    pub path: &'a str,
    /// The import path: Python dotted module (`pkg.sub.mod`, `pkg` for `pkg/__init__.py`), JS/TS
    /// the path without extension (`src/lex`), as [`Language::module_path`] gives it.
    pub module: String,
    /// The file's language.
    pub language: Language,
    /// The file's reference sites.
    pub refs: &'a References,
    /// JS/TS: the local name of the module-level definition exported as `default`, if any
    /// ([`default_export`] finds it from the source). Ignored for Python.
    pub default_export: Option<String>,
}

/// What a reference resolved to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Exactly one target: a symbol anchor (`pkg.mod.Class.method`, `src/a.ts#Class.method`) or
    /// a module (`pkg.mod`, `src/a`).
    Resolved {
        /// The target's anchor.
        target: String,
    },
    /// Several distinct targets, sorted.
    Ambiguous {
        /// The candidates' anchors.
        candidates: Vec<String>,
    },
    /// No target, and why.
    Unresolved {
        /// Why: `external module os`, `no visible binding for x`, `builtin`, ….
        reason: String,
    },
}

/// The outcome for one reference site.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolution {
    /// The referring file's path.
    pub file: String,
    /// Index into that file's `refs.references`.
    pub reference_index: usize,
    /// What it resolved to.
    pub outcome: Outcome,
}

/// Resolves every reference (calls, attribute chains and names) of `files` against `files`.
/// Pure and deterministic: files in path order (then input order), references in document
/// order.
#[must_use]
pub fn resolve(files: &[SourceFile<'_>]) -> Vec<Resolution> {
    let index = Index::new(files);
    let mut order: Vec<usize> = (0..files.len()).collect();
    order.sort_by(|&a, &b| files[a].path.cmp(files[b].path));
    let mut out = Vec::new();
    for f in order {
        let file = &files[f];
        for (i, reference) in file.refs.references.iter().enumerate() {
            if !matches!(
                reference.kind,
                RefKind::Call | RefKind::Attribute | RefKind::Name
            ) {
                continue;
            }
            let segments: Vec<&str> = reference.text.split('.').map(str::trim).collect();
            let outcome =
                index.reference(f, &segments, reference.kind, reference.enclosing.as_deref());
            out.push(Resolution {
                file: file.path.to_string(),
                reference_index: i,
                outcome,
            });
        }
    }
    out
}

/// The outcome for one import of a file: the module it names or, for a named import, the member.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportResolution {
    /// The importing file's path.
    pub file: String,
    /// Index into that file's `refs.imports`.
    pub import_index: usize,
    /// What it resolved to: a module's or a symbol's anchor.
    pub outcome: Outcome,
}

/// Resolves every import of `files` against `files` (the `imports` relations): Python `import
/// a.b` names module `a.b` (not the `a` it binds), `from x import y` names `y` in `x` (or the
/// submodule `x.y`), `from x import *` names `x`; JS/TS imports and re-exports name the member
/// or, for namespace, side-effect and `require` imports, the module.
#[must_use]
pub fn resolve_imports(files: &[SourceFile<'_>]) -> Vec<ImportResolution> {
    let index = Index::new(files);
    let mut out = Vec::new();
    for (f, file) in files.iter().enumerate() {
        for (i, import) in file.refs.imports.iter().enumerate() {
            let found = if index.python(f) {
                match (import.kind, import.name.as_deref()) {
                    (ImportKind::Module, _) | (_, Some("*")) => index
                        .python_module(f, &import.module)
                        .map(|module| vec![module]),
                    _ => index.import(f, import, 0),
                }
            } else if import.name.as_deref() == Some("*") {
                index
                    .js_module(f, &import.module)
                    .map(|module| vec![module])
            } else {
                index.import(f, import, 0)
            };
            let outcome = match found.map(distinct) {
                Ok(vals) if vals.len() == 1 => Outcome::Resolved {
                    target: index.anchor(&vals[0]),
                },
                Ok(vals) if !vals.is_empty() => {
                    let mut candidates: Vec<String> =
                        vals.iter().map(|v| index.anchor(v)).collect();
                    candidates.sort();
                    candidates.dedup();
                    Outcome::Ambiguous { candidates }
                }
                Ok(_) => unresolved("no target"),
                Err(reason) => Outcome::Unresolved { reason },
            };
            out.push(ImportResolution {
                file: file.path.to_string(),
                import_index: i,
                outcome,
            });
        }
    }
    out
}

/// [`SourceFile::default_export`] of a file whose default export is an object literal of its own
/// module-level names (`export default { forEach, merge }`): the default import is then the module.
pub const NAMESPACE_DEFAULT: &str = "{}";

#[cfg(test)]
/// The local name of the JS/TS module-level definition a file exports as `default`
/// (`export default function f`, `export default class C`, `export default f;`), if any.
#[must_use]
pub fn default_export(language: Language, source: &str) -> Option<String> {
    if language == Language::Python {
        return None;
    }
    let tree = super::syntax::parse(language, source)?;
    default_export_from_tree(source, &tree)
}

/// [`default_export`] over a tree already parsed from `source`.
#[must_use]
pub fn default_export_from_tree(source: &str, tree: &tree_sitter::Tree) -> Option<String> {
    let root = tree.root_node();
    let mut cursor = root.walk();
    for node in root.named_children(&mut cursor) {
        if node.kind() != "export_statement" {
            continue;
        }
        let mut inner = node.walk();
        if !node.children(&mut inner).any(|c| c.kind() == "default") {
            continue;
        }
        // `export default { a, b: b }`, an object of the module's own names, acts as a namespace.
        if let Some(object) = node
            .child_by_field_name("value")
            .filter(|v| v.kind() == "object")
        {
            let mut props = object.walk();
            // Aliases (`hasOwnProp: hasOwnProperty`) are allowed; a member is then looked up by its
            // module-level name, so an alias simply does not resolve.
            let own = object.named_children(&mut props).all(|p| {
                p.kind() == "comment"
                    || p.kind() == "shorthand_property_identifier"
                    || (p.kind() == "pair"
                        && p.child_by_field_name("value")
                            .is_some_and(|v| v.kind() == "identifier"))
            });
            return own.then(|| NAMESPACE_DEFAULT.to_string());
        }
        let named = node
            .child_by_field_name("declaration")
            .and_then(|d| d.child_by_field_name("name"))
            .or_else(|| {
                node.child_by_field_name("value")
                    .filter(|v| v.kind() == "identifier")
            });
        return named.map(|n| source[n.start_byte()..n.end_byte()].to_string());
    }
    None
}

/// A value a name or chain prefix denotes.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Val {
    /// A file's module.
    File(usize),
    /// A Python package with no `__init__` among the files (a namespace package).
    Package(String),
    /// A symbol of a file, by symbol path.
    Symbol(usize, String),
}

/// Candidates (non-empty, sorted, distinct) or why there are none.
type Found = Result<Vec<Val>, String>;

struct Index<'f, 'a> {
    files: &'f [SourceFile<'a>],
    /// Module → files, best first (`.ts` before `.js`, then path).
    modules: BTreeMap<&'f str, Vec<usize>>,
    /// Every proper dotted prefix of a Python module (packages, with or without `__init__`).
    packages: BTreeSet<String>,
    /// Per file: symbol paths defined.
    defs: Vec<BTreeSet<&'f str>>,
    /// Per file: class symbol path → its bases as written (`Base`, `mixins.Hooks`).
    bases: Vec<BTreeMap<&'f str, Vec<&'f str>>>,
}

/// How many base classes up `self.m` is looked for.
const BASE_LEVELS: usize = 3;

impl<'f, 'a> Index<'f, 'a> {
    fn new(files: &'f [SourceFile<'a>]) -> Self {
        let mut modules: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        let mut packages = BTreeSet::new();
        for (i, file) in files.iter().enumerate() {
            modules.entry(file.module.as_str()).or_default().push(i);
            if file.language == Language::Python {
                let mut prefix = file.module.as_str();
                while let Some((head, _)) = prefix.rsplit_once('.') {
                    packages.insert(head.to_string());
                    prefix = head;
                }
            }
        }
        for list in modules.values_mut() {
            list.sort_by_key(|&i| (extension_rank(files[i].path), files[i].path));
        }
        let defs = files
            .iter()
            .map(|f| f.refs.definitions.iter().map(|(_, p)| p.as_str()).collect())
            .collect();
        let bases = files
            .iter()
            .map(|f| {
                let mut map: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
                for r in &f.refs.references {
                    if let (Some(_), Some(class)) = (r.heritage, r.enclosing.as_deref()) {
                        map.entry(class).or_default().push(r.text.as_str());
                    }
                }
                map
            })
            .collect();
        Self {
            files,
            modules,
            packages,
            defs,
            bases,
        }
    }

    fn python(&self, f: usize) -> bool {
        self.files[f].language == Language::Python
    }

    /// The outcome for one reference of file `f`.
    fn reference(
        &self,
        f: usize,
        segments: &[&str],
        kind: RefKind,
        enclosing: Option<&str>,
    ) -> Outcome {
        let Some((&head, rest)) = segments.split_first() else {
            return unresolved("empty reference");
        };
        let python = self.python(f);
        let is_self = if python {
            head == "self" || head == "cls"
        } else {
            head == "this"
        };
        let found = if is_self && !rest.is_empty() {
            self.self_chain(f, rest, enclosing)
        } else {
            self.name(f, head).and_then(|vals| self.chain(vals, rest))
        };
        match found {
            Err(reason) => unresolved(&reason),
            Ok(vals) => {
                if kind == RefKind::Call && vals.iter().all(|v| !matches!(v, Val::Symbol(..))) {
                    return unresolved("call of a module");
                }
                let mut anchors: Vec<String> = vals.iter().map(|v| self.anchor(v)).collect();
                anchors.sort();
                anchors.dedup();
                if anchors.len() == 1 {
                    Outcome::Resolved {
                        target: anchors.remove(0),
                    }
                } else {
                    Outcome::Ambiguous {
                        candidates: anchors,
                    }
                }
            }
        }
    }

    /// `self.a.b` / `this.a.b` inside `enclosing`.
    fn self_chain(&self, f: usize, rest: &[&str], enclosing: Option<&str>) -> Found {
        let Some(enclosing) = enclosing else {
            return Err("no enclosing class".to_string());
        };
        // The innermost enclosing scope with members is the class (methods have none).
        let mut scope = Some(enclosing);
        let class = loop {
            let Some(path) = scope else {
                return Err("no enclosing class".to_string());
            };
            if self.has_members(f, path) {
                break path;
            }
            scope = path.rsplit_once('.').map(|(outer, _)| outer);
        };
        match self.class_member(f, class, rest[0], BASE_LEVELS) {
            Some(found) => self.chain(vec![found], &rest[1..]),
            None => Err("attribute not found on the enclosing class".to_string()),
        }
    }

    /// `name` on class `class` of file `f` or, failing that, on its bases (as written in its
    /// declaration and resolved from that file), up to `levels` classes up, first base first.
    fn class_member(&self, f: usize, class: &str, name: &str, levels: usize) -> Option<Val> {
        let member = format!("{class}.{name}");
        if self.defs[f].contains(member.as_str()) {
            return Some(Val::Symbol(f, member));
        }
        if levels == 0 {
            return None;
        }
        for base in self.bases[f].get(class)? {
            let segments: Vec<&str> = base.split('.').map(str::trim).collect();
            let Some((&head, rest)) = segments.split_first() else {
                continue;
            };
            let Ok(vals) = self.name(f, head).and_then(|v| self.chain(v, rest)) else {
                continue;
            };
            for val in vals {
                if let Val::Symbol(g, path) = val
                    && let Some(found) = self.class_member(g, &path, name, levels - 1)
                {
                    return Some(found);
                }
            }
        }
        None
    }

    fn has_members(&self, f: usize, path: &str) -> bool {
        self.defs[f].iter().any(|d| {
            d.len() > path.len() + 1 && d.starts_with(path) && d.as_bytes()[path.len()] == b'.'
        })
    }

    /// What `name` denotes at module level of file `f`.
    fn name(&self, f: usize, name: &str) -> Found {
        self.name_at(f, name, 0)
    }

    fn name_at(&self, f: usize, name: &str, depth: usize) -> Found {
        if self.defs[f].contains(name) {
            return Ok(vec![Val::Symbol(f, name.to_string())]);
        }
        // The last import binding the name wins, as a later statement rebinds it.
        let file = &self.files[f];
        let binding = file.refs.imports.iter().rev().find(|i| {
            i.binding.as_deref() == Some(name)
                && !matches!(i.kind, ImportKind::ReExport | ImportKind::ReExportAll)
        });
        if let Some(import) = binding {
            return self.import(f, import, depth);
        }
        // Python `from m import *`: a fallback over the star-imported internal modules.
        if self.python(f) {
            let mut hits = Vec::new();
            for import in &file.refs.imports {
                if import.name.as_deref() != Some("*") {
                    continue;
                }
                if let Ok(module) = self.python_module(f, &import.module) {
                    hits.extend(self.defined_in(&module, name));
                }
            }
            if !hits.is_empty() {
                return Ok(distinct(hits));
            }
        }
        if is_builtin(file.language, name) {
            return Err("builtin".to_string());
        }
        Err(format!("no visible binding for {name}"))
    }

    /// What an import binding denotes.
    fn import(&self, f: usize, import: &super::references::Import, depth: usize) -> Found {
        let python = self.python(f);
        let module = if python {
            let written = import.module.as_str();
            // `import a.b` binds `a`; `import a.b as m` binds `a.b`.
            let target = match (import.kind, written.split_once('.')) {
                (ImportKind::Module, Some((first, _)))
                    if import.binding.as_deref() == Some(first) && !written.starts_with('.') =>
                {
                    first
                }
                _ => written,
            };
            self.python_module(f, target)?
        } else {
            self.js_module(f, &import.module)?
        };
        match (import.kind, import.name.as_deref()) {
            (ImportKind::Module | ImportKind::Namespace, _) | (ImportKind::Require, None) => {
                Ok(vec![module])
            }
            (_, Some(name)) => self.member(&module, name, depth),
            (_, None) => Ok(vec![module]),
        }
    }

    /// Walks the rest of a chain from `vals`; candidates failing a step are dropped unless
    /// all fail.
    fn chain(&self, mut vals: Vec<Val>, rest: &[&str]) -> Found {
        for segment in rest {
            let mut next = Vec::new();
            let mut first_error = None;
            for val in &vals {
                match self.member(val, segment, 0) {
                    Ok(found) => next.extend(found),
                    Err(e) => {
                        first_error.get_or_insert(e);
                    }
                }
            }
            if next.is_empty() {
                return Err(first_error.unwrap_or_else(|| format!("{segment} not found")));
            }
            vals = distinct(next);
        }
        Ok(vals)
    }

    /// `val.name`.
    fn member(&self, val: &Val, name: &str, depth: usize) -> Found {
        match val {
            Val::Symbol(f, path) => {
                let member = format!("{path}.{name}");
                if self.defs[*f].contains(member.as_str()) {
                    Ok(vec![Val::Symbol(*f, member)])
                } else {
                    Err(format!("{name} not found on {path}"))
                }
            }
            Val::Package(package) => self
                .python_submodule(package, name)
                .map(|v| vec![v])
                .ok_or_else(|| format!("{name} not found in module {package}")),
            Val::File(f) => self.file_member(*f, name, depth),
        }
    }

    /// `name` as a member of file `f`'s module.
    fn file_member(&self, f: usize, name: &str, depth: usize) -> Found {
        let file = &self.files[f];
        let not_found = || format!("{name} not found in module {}", file.module);
        if self.python(f) {
            if self.defs[f].contains(name) {
                return Ok(vec![Val::Symbol(f, name.to_string())]);
            }
            if depth < FOLLOW_LEVELS
                && file
                    .refs
                    .imports
                    .iter()
                    .any(|i| i.binding.as_deref() == Some(name))
                && let Ok(found) = self.name_at(f, name, depth + 1)
            {
                return Ok(found);
            }
            return self
                .python_submodule(&file.module, name)
                .map(|v| vec![v])
                .ok_or_else(not_found);
        }
        // JS/TS: `default` is the caller-supplied default export.
        let local = if name == "default" {
            if file.default_export.as_deref() == Some(NAMESPACE_DEFAULT) {
                return Ok(vec![Val::File(f)]);
            }
            file.default_export.as_deref()
        } else {
            Some(name)
        };
        if let Some(local) = local
            && self.defs[f].contains(local)
        {
            return Ok(vec![Val::Symbol(f, local.to_string())]);
        }
        if depth >= FOLLOW_LEVELS {
            return Err(not_found());
        }
        let mut hits = Vec::new();
        for import in &file.refs.imports {
            let named = import.binding.as_deref() == Some(name);
            match import.kind {
                ImportKind::ReExport if named => {
                    let module = self.js_module(f, &import.module)?;
                    let exported = import.name.as_deref().unwrap_or(name);
                    return self.member(&module, exported, depth + 1);
                }
                ImportKind::ReExportAll if named => {
                    return self.js_module(f, &import.module).map(|m| vec![m]);
                }
                ImportKind::ReExportAll if import.binding.is_none() && name != "default" => {
                    if let Ok(module) = self.js_module(f, &import.module)
                        && let Ok(found) = self.member(&module, name, depth + 1)
                    {
                        hits.extend(found);
                    }
                }
                _ => {}
            }
        }
        if hits.is_empty() {
            Err(not_found())
        } else {
            Ok(distinct(hits))
        }
    }

    /// Symbols named `name` at module level of `module` (for star imports).
    fn defined_in(&self, module: &Val, name: &str) -> Vec<Val> {
        match module {
            Val::File(f) if self.defs[*f].contains(name) => vec![Val::Symbol(*f, name.to_string())],
            _ => Vec::new(),
        }
    }

    /// The Python module `written` (absolute, or relative to file `f`) as a value.
    fn python_module(&self, f: usize, written: &str) -> Result<Val, String> {
        let dots = written.len() - written.trim_start_matches('.').len();
        let rest = &written[dots..];
        let absolute = if dots == 0 {
            written.to_string()
        } else {
            let file = &self.files[f];
            let is_package = file
                .path
                .rsplit('/')
                .next()
                .is_some_and(|n| n.starts_with("__init__."));
            let mut base: Vec<&str> = file.module.split('.').collect();
            if !is_package {
                base.pop();
            }
            for _ in 1..dots {
                if base.pop().is_none() {
                    return Err(format!("module not found: {written}"));
                }
            }
            if !rest.is_empty() {
                base.push(rest);
            }
            base.join(".")
        };
        if let Some(&first) = self.modules.get(absolute.as_str()).and_then(|l| l.first())
            && self.python(first)
        {
            return Ok(Val::File(first));
        }
        if self.packages.contains(&absolute) {
            return Ok(Val::Package(absolute));
        }
        if dots > 0 {
            Err(format!("module not found: {written}"))
        } else {
            Err(format!("external module {written}"))
        }
    }

    /// Submodule `package.name`, if one is among the files.
    fn python_submodule(&self, package: &str, name: &str) -> Option<Val> {
        let full = format!("{package}.{name}");
        if let Some(&f) = self.modules.get(full.as_str()).and_then(|l| l.first()) {
            return Some(Val::File(f));
        }
        self.packages.contains(&full).then_some(Val::Package(full))
    }

    /// The JS/TS module `spec` imports from file `f`.
    fn js_module(&self, f: usize, spec: &str) -> Result<Val, String> {
        if !(spec.starts_with("./") || spec.starts_with("../") || spec == "." || spec == "..") {
            return Err(format!("external module {spec}"));
        }
        let importer = normalize(self.files[f].path);
        let dir = importer.rsplit_once('/').map_or("", |(d, _)| d);
        let mut parts: Vec<&str> = dir.split('/').filter(|p| !p.is_empty()).collect();
        for part in spec.split('/') {
            match part {
                "" | "." => {}
                ".." => {
                    if parts.pop().is_none() {
                        return Err(format!("module not found: {spec}"));
                    }
                }
                p => parts.push(p),
            }
        }
        // `.js` → `.ts`/`.tsx`/`.js`: modules are compared without extension.
        let joined = parts.join("/");
        let stem = Language::TypeScript.module_path(&joined);
        for candidate in [stem.clone(), format!("{stem}/index")] {
            let hit = self
                .modules
                .get(candidate.as_str())
                .and_then(|l| l.iter().find(|&&i| !self.python(i)));
            if let Some(&i) = hit {
                return Ok(Val::File(i));
            }
        }
        Err(format!("module not found: {spec}"))
    }

    fn anchor(&self, val: &Val) -> String {
        match val {
            Val::File(f) => self.files[*f].module.clone(),
            Val::Package(p) => p.clone(),
            Val::Symbol(f, path) => {
                let file = &self.files[*f];
                if file.language == Language::Python {
                    format!("{}.{path}", file.module)
                } else {
                    format!("{}#{path}", normalize(file.path))
                }
            }
        }
    }
}

fn unresolved(reason: &str) -> Outcome {
    Outcome::Unresolved {
        reason: reason.to_string(),
    }
}

fn distinct(mut vals: Vec<Val>) -> Vec<Val> {
    vals.sort();
    vals.dedup();
    vals
}

/// Prefer TypeScript sources over declarations and JavaScript when several files share a module.
fn extension_rank(path: &str) -> usize {
    const ORDER: [&str; 10] = [
        ".ts", ".tsx", ".mts", ".cts", ".d.ts", ".js", ".jsx", ".mjs", ".cjs", ".py",
    ];
    let lower = path.to_ascii_lowercase();
    if lower.ends_with(".d.ts") {
        return 4;
    }
    ORDER
        .iter()
        .position(|e| lower.ends_with(e))
        .unwrap_or(ORDER.len())
}

const PYTHON_BUILTINS: &[&str] = &[
    "__import__",
    "__name__",
    "__file__",
    "abs",
    "all",
    "any",
    "ArithmeticError",
    "AssertionError",
    "AttributeError",
    "BaseException",
    "bool",
    "breakpoint",
    "bytearray",
    "bytes",
    "callable",
    "chr",
    "classmethod",
    "compile",
    "complex",
    "delattr",
    "dict",
    "dir",
    "divmod",
    "enumerate",
    "eval",
    "Exception",
    "exec",
    "filter",
    "float",
    "format",
    "frozenset",
    "getattr",
    "globals",
    "hasattr",
    "hash",
    "help",
    "hex",
    "id",
    "ImportError",
    "IndexError",
    "input",
    "int",
    "isinstance",
    "issubclass",
    "iter",
    "KeyError",
    "len",
    "list",
    "locals",
    "LookupError",
    "map",
    "max",
    "memoryview",
    "min",
    "next",
    "NotImplemented",
    "NotImplementedError",
    "object",
    "oct",
    "open",
    "ord",
    "OSError",
    "pow",
    "print",
    "property",
    "range",
    "repr",
    "reversed",
    "round",
    "RuntimeError",
    "set",
    "setattr",
    "slice",
    "sorted",
    "staticmethod",
    "StopIteration",
    "str",
    "sum",
    "super",
    "tuple",
    "type",
    "TypeError",
    "ValueError",
    "vars",
    "zip",
];

const JS_BUILTINS: &[&str] = &[
    "Array",
    "ArrayBuffer",
    "BigInt",
    "Boolean",
    "Buffer",
    "Date",
    "Error",
    "JSON",
    "Map",
    "Math",
    "NaN",
    "Number",
    "Object",
    "Omit",
    "Partial",
    "Pick",
    "Promise",
    "Proxy",
    "Readonly",
    "ReadonlyArray",
    "Record",
    "Reflect",
    "RegExp",
    "Set",
    "String",
    "Symbol",
    "TypeError",
    "Uint8Array",
    "WeakMap",
    "WeakSet",
    "__dirname",
    "__filename",
    "clearInterval",
    "clearTimeout",
    "console",
    "decodeURIComponent",
    "document",
    "encodeURIComponent",
    "exports",
    "fetch",
    "globalThis",
    "isNaN",
    "module",
    "parseFloat",
    "parseInt",
    "process",
    "queueMicrotask",
    "require",
    "setInterval",
    "setTimeout",
    "structuredClone",
    "undefined",
    "window",
];

fn is_builtin(language: Language, name: &str) -> bool {
    match language {
        Language::Python => PYTHON_BUILTINS.contains(&name),
        _ => JS_BUILTINS.contains(&name),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::code::references::extract;

    /// `(path, source)` pairs → extracted references, kept alive for the `SourceFile`s.
    fn build(sources: &[(&str, &str)]) -> Vec<(String, Language, References, Option<String>)> {
        sources
            .iter()
            .map(|(path, source)| {
                let language = Language::from_path(path).unwrap();
                (
                    (*path).to_string(),
                    language,
                    extract(language, source),
                    default_export(language, source),
                )
            })
            .collect()
    }

    fn files(built: &[(String, Language, References, Option<String>)]) -> Vec<SourceFile<'_>> {
        built
            .iter()
            .map(|(path, language, refs, default)| SourceFile {
                path,
                module: language.module_path(path),
                language: *language,
                refs,
                default_export: default.clone(),
            })
            .collect()
    }

    fn show(outcome: &Outcome) -> String {
        match outcome {
            Outcome::Resolved { target } => format!("= {target}"),
            Outcome::Ambiguous { candidates } => format!("? {}", candidates.join(" | ")),
            Outcome::Unresolved { reason } => format!("! {reason}"),
        }
    }

    /// `(file, text, outcome)` for every call and attribute reference, and the name outcomes.
    fn table(files: &[SourceFile<'_>]) -> (Vec<String>, Vec<String>) {
        let by_path: BTreeMap<&str, &SourceFile<'_>> = files.iter().map(|f| (f.path, f)).collect();
        let mut chains = Vec::new();
        let mut names = Vec::new();
        for r in resolve(files) {
            let reference = &by_path[r.file.as_str()].refs.references[r.reference_index];
            let line = format!("{} {} {}", r.file, reference.text, show(&r.outcome));
            if reference.kind == RefKind::Name {
                names.push(line);
            } else {
                chains.push(line);
            }
        }
        (chains, names)
    }

    fn share(files: &[SourceFile<'_>]) -> (usize, usize, usize) {
        let all = resolve(files);
        let count = |p: fn(&Outcome) -> bool| all.iter().filter(|r| p(&r.outcome)).count();
        (
            count(|o| matches!(o, Outcome::Resolved { .. })),
            count(|o| matches!(o, Outcome::Ambiguous { .. })),
            count(|o| matches!(o, Outcome::Unresolved { .. })),
        )
    }

    const PY: &[(&str, &str)] = &[
        (
            "pkg/__init__.py",
            include_str!("../../tests/fixtures/code/resolve/py/pkg/__init__.py"),
        ),
        (
            "pkg/core.py",
            include_str!("../../tests/fixtures/code/resolve/py/pkg/core.py"),
        ),
        (
            "pkg/util.py",
            include_str!("../../tests/fixtures/code/resolve/py/pkg/util.py"),
        ),
        (
            "pkg/extra.py",
            include_str!("../../tests/fixtures/code/resolve/py/pkg/extra.py"),
        ),
        (
            "app/main.py",
            include_str!("../../tests/fixtures/code/resolve/py/app/main.py"),
        ),
    ];

    const TS: &[(&str, &str)] = &[
        (
            "src/lex.ts",
            include_str!("../../tests/fixtures/code/resolve/ts/src/lex.ts"),
        ),
        (
            "src/util/index.ts",
            include_str!("../../tests/fixtures/code/resolve/ts/src/util/index.ts"),
        ),
        (
            "src/util/a.ts",
            include_str!("../../tests/fixtures/code/resolve/ts/src/util/a.ts"),
        ),
        (
            "src/util/b.ts",
            include_str!("../../tests/fixtures/code/resolve/ts/src/util/b.ts"),
        ),
        (
            "src/legacy.js",
            include_str!("../../tests/fixtures/code/resolve/ts/src/legacy.js"),
        ),
        (
            "src/main.ts",
            include_str!("../../tests/fixtures/code/resolve/ts/src/main.ts"),
        ),
    ];

    #[test]
    fn python_package() {
        let built = build(PY);
        let files = files(&built);
        let (chains, names) = table(&files);
        assert_eq!(
            chains,
            [
                "app/main.py Engine = pkg.core.Engine",
                "app/main.py util.helper = pkg.util.helper",
                "app/main.py E.run = pkg.core.Engine.run",
                "app/main.py pkg.core.Engine.step = pkg.core.Engine.step",
                "app/main.py print ! builtin",
                "pkg/core.py self.step = pkg.core.Engine.step",
                "pkg/core.py self.nope ! attribute not found on the enclosing class",
                "pkg/core.py helper = pkg.util.helper",
                "pkg/core.py u.helper = pkg.util.helper",
                "pkg/core.py os.path.join ! external module os",
                "pkg/core.py len ! builtin",
                "pkg/core.py requests.get ! external module requests",
                "pkg/core.py thing ! module not found: ..outside",
                "pkg/core.py undefined_thing ! no visible binding for undefined_thing",
                "pkg/core.py self.step = pkg.core.Engine.step",
                "pkg/core.py Engine = pkg.core.Engine",
                "pkg/extra.py helper = pkg.util.helper",
                "pkg/extra.py twin = pkg.util.twin",
                "pkg/extra.py version ! no visible binding for version",
            ]
        );
        assert_eq!(
            names,
            ["app/main.py version ! no visible binding for version"]
        );
        assert_eq!(share(&files), (11, 0, 9));
    }

    #[test]
    fn typescript_modules() {
        let built = build(TS);
        let files = files(&built);
        let (chains, names) = table(&files);
        assert_eq!(
            chains,
            [
                "src/legacy.js module.exports ! builtin",
                "src/lex.ts this.peek = src/lex.ts#Lexer.peek",
                "src/lex.ts this.missing ! attribute not found on the enclosing class",
                "src/main.ts lex = src/lex.ts#lex",
                "src/main.ts tk = src/lex.ts#tokenize",
                "src/main.ts Lexer = src/lex.ts#Lexer",
                "src/main.ts util.flatten = src/util/index.ts#flatten",
                "src/main.ts util.tok = src/lex.ts#tokenize",
                "src/main.ts tok = src/lex.ts#tokenize",
                "src/main.ts shared ? src/util/a.ts#shared | src/util/b.ts#shared",
                "src/main.ts onlyA = src/util/a.ts#onlyA",
                "src/main.ts flatten = src/util/index.ts#flatten",
                "src/main.ts legacy.old = src/legacy.js#old",
                "src/main.ts old = src/legacy.js#old",
                "src/main.ts x.tokenize = src/lex.ts#tokenize",
                "src/main.ts fs.readFileSync ! external module fs",
                "src/main.ts console.log ! builtin",
                "src/main.ts nothing ! no visible binding for nothing",
                "src/main.ts util.missing ! missing not found in module src/util/index",
                "src/main.ts dflt ! default not found in module src/util/a",
                "src/main.ts Lexer.prototype ! prototype not found on Lexer",
            ]
        );
        // Parameters are not tracked: they read as unbound names.
        assert_eq!(
            names,
            [
                "src/legacy.js old = src/legacy.js#old",
                "src/lex.ts s ! no visible binding for s",
                "src/lex.ts s ! no visible binding for s",
                "src/util/index.ts x ! no visible binding for x",
            ]
        );
        assert_eq!(share(&files), (13, 1, 11));
    }

    #[test]
    fn deterministic_and_order_independent() {
        for sources in [PY, TS] {
            let built = build(sources);
            let forward = files(&built);
            let first = resolve(&forward);
            assert_eq!(first, resolve(&forward));
            let mut reversed = forward.clone();
            reversed.reverse();
            assert_eq!(first, resolve(&reversed));
        }
    }

    #[test]
    fn default_exports_and_edges() {
        let ts = Language::TypeScript;
        assert_eq!(
            default_export(ts, "function f() {}\nexport default f;\n"),
            Some("f".into())
        );
        assert_eq!(
            default_export(ts, "export default class C {}\n"),
            Some("C".into())
        );
        assert_eq!(default_export(ts, "export default () => 1;\n"), None);
        assert_eq!(
            default_export(
                ts,
                "function a() {}\nconst b = 1;\nexport default { a, b: b };\n"
            )
            .as_deref(),
            Some(NAMESPACE_DEFAULT)
        );
        assert_eq!(default_export(ts, "export default { a: 1 };\n"), None);
        assert_eq!(
            default_export(ts, "export default {\n  a, // why\n  alias: b\n};\n").as_deref(),
            Some(NAMESPACE_DEFAULT)
        );
        assert_eq!(default_export(Language::Python, "x = 1\n"), None);
        assert!(resolve(&[]).is_empty());
        // A namespace package (no `__init__.py`) still binds its submodules; `self` outside a
        // class has no class to look in.
        let built = build(&[
            ("ns/a.py", "def f():\n    pass\n"),
            (
                "b.py",
                "from ns import a\nimport ns.a\n\ndef g(self):\n    a.f()\n    ns.a.f()\n    self.x()\n",
            ),
        ]);
        let (chains, _) = table(&files(&built));
        assert_eq!(
            chains,
            [
                "b.py a.f = ns.a.f",
                "b.py ns.a.f = ns.a.f",
                "b.py self.x ! no enclosing class",
            ]
        );
    }

    #[test]
    fn bases_interfaces_and_imports() {
        // `self.m` found on a base class in another module; a base that names a class.
        let built = build(&[
            (
                "pkg/hooks.py",
                "class Hooks:\n    def register(self):\n        pass\n",
            ),
            (
                "pkg/models.py",
                "from .hooks import Hooks\n\nclass Request(Hooks):\n    def prepare(self):\n        self.register()\n        self.missing()\n",
            ),
            ("pkg/__init__.py", ""),
        ]);
        let py = files(&built);
        let (chains, names) = table(&py);
        assert!(
            chains.contains(&"pkg/models.py self.register = pkg.hooks.Hooks.register".to_string()),
            "{chains:?}"
        );
        assert!(
            chains.contains(
                &"pkg/models.py self.missing ! attribute not found on the enclosing class"
                    .to_string()
            ),
            "{chains:?}"
        );
        let bases: Vec<_> = built[1]
            .2
            .references
            .iter()
            .filter(|r| r.heritage.is_some())
            .map(|r| r.text.as_str())
            .collect();
        assert_eq!(bases, ["Hooks"]);
        assert!(
            names.contains(&"pkg/models.py Hooks = pkg.hooks.Hooks".to_string()),
            "{names:?}"
        );
        let imports: Vec<String> = resolve_imports(&py)
            .iter()
            .map(|r| show(&r.outcome))
            .collect();
        assert_eq!(imports, ["= pkg.hooks.Hooks"]);

        // TS interfaces and type aliases are bindings, imported and used in type positions.
        let built = build(&[
            (
                "src/types.ts",
                "export interface Teardown { close(): void }\nexport type Logic = Teardown | null;\n",
            ),
            (
                "src/sub.ts",
                "import { Teardown, Logic } from './types';\nexport class Sub implements Teardown {\n  close(): void {}\n  run(l: Logic) {}\n}\n",
            ),
        ]);
        let (_, names) = table(&files(&built));
        assert!(
            names.contains(&"src/sub.ts Teardown = src/types.ts#Teardown".to_string()),
            "{names:?}"
        );
        assert!(
            names.contains(&"src/sub.ts Logic = src/types.ts#Logic".to_string()),
            "{names:?}"
        );
        let heritage: Vec<_> = built[0]
            .2
            .references
            .iter()
            .chain(&built[1].2.references)
            .filter_map(|r| r.heritage.map(|h| (r.text.as_str(), h)))
            .collect();
        assert_eq!(
            heritage,
            [("Teardown", crate::code::references::Heritage::Implements)]
        );
    }
}
