//! Reference sites: the imports, calls, attribute accesses and names a file uses, and the
//! symbols it defines, as the input of a syntactic resolver (DESIGN §9). Not wired into
//! ingestion; nothing here resolves anything.
//!
//! What is reported:
//! - **Imports.** Python `import a.b [as c]`, `from x import y [as z]` (relative modules as
//!   written, `..pkg`), `from x import *` ([`ImportKind::Name`] named `*`, nothing bound);
//!   ES `import d from`, `import { a, b as c } from`, `import * as ns from`, `import 'm'`, TS
//!   `import x = require('m')`, `export { x } from`, `export * [as ns] from`; CommonJS
//!   `require('m')`, with the names a `const`/`let`/`var` declarator binds from it. An import's
//!   span is its specifier (`b as c`, `* as ns`, the declarator's name) or, where there is none,
//!   the statement.
//! - **Calls** (`f()`, `self.m()`, `obj.attr.m()`, `new C()`): the callee, when it is an
//!   identifier or a dotted chain of identifiers rooted at an identifier or `this`. The span is
//!   the callee expression, arguments excluded.
//! - **Attributes**: such a chain outside callee position (`self.x`, `os.sep`), reads and writes
//!   alike. Only the outermost chain is reported: `a.b.c` is one reference, not three.
//! - **Names**: an identifier read as a value (an argument, a right-hand side, a returned value,
//!   a base class, a decorator, an operand; TS type references too). Declared names, parameters
//!   and assignment targets are not references.
//!
//! Nothing inside an import statement is reported as a reference, and a `require('m')` call is
//! an import, not a call. `enclosing` is the symbol path of the innermost named function, method
//! or class around the site (`Lexer.next`); anonymous functions take their surroundings' path.
//! [`References::definitions`] lists the symbols a same-file lookup can find: module-level
//! functions and classes and, recursively, the members of those classes.

use std::rc::Rc;

use serde::{Deserialize, Serialize};
use tree_sitter::Node;

use super::Language;
use super::outline::text;
use crate::unit::{LineIndex, Span};

/// How an import binds a module or its members.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ImportKind {
    /// The module itself: Python `import a.b [as c]`, ES `import 'm'` (nothing bound).
    Module,
    /// One member, by name: Python `from x import y`, ES `import { y } from 'x'`.
    Name,
    /// The module's namespace under a local name: ES `import * as ns from 'm'`.
    Namespace,
    /// The default export: ES `import d from 'm'`.
    Default,
    /// CommonJS `require('m')`, TS `import x = require('m')`.
    Require,
    /// `export { x [as y] } from 'm'`.
    ReExport,
    /// `export * [as ns] from 'm'`.
    ReExportAll,
}

/// One imported binding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Import {
    /// How the module or member is bound.
    pub kind: ImportKind,
    /// The module as written: `os.path`, `..models`, `./lex.js`.
    pub module: String,
    /// The imported member's name, if one is named (`default` for a default import).
    pub name: Option<String>,
    /// The local name bound (the exported name for a re-export), if any.
    pub binding: Option<String>,
    /// The specifier (`b as c`, `* as ns`), or the statement where there is none.
    pub span: Span,
}

/// What a reference site is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum RefKind {
    /// The callee of a call or `new`.
    Call,
    /// `x.y` where `x` is an identifier or `self`/`this`, outside callee position.
    Attribute,
    /// An identifier read as a value.
    Name,
}

/// One reference site.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reference {
    /// What the site is.
    pub kind: RefKind,
    /// The exact source slice of `span`: `tokenize`, `self.parse`, `os.path.join`.
    pub text: String,
    /// The first identifier: `tokenize`, `self`, `os`.
    pub head: String,
    /// The last segment of a dotted reference.
    pub member: Option<String>,
    /// Symbol path of the enclosing function, method or class (`Lexer.next`); `None` at module
    /// level.
    pub enclosing: Option<String>,
    /// The referring expression (a call's callee, without its arguments).
    pub span: Span,
    /// Set when the site names a base of a class declaration: `extends` (Python bases, ES
    /// `extends`, TS interface `extends`) or `implements` (TS).
    #[serde(default)]
    pub heritage: Option<Heritage>,
}

/// How a class declaration names a base.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Heritage {
    /// A superclass (or an interface's base interface).
    Extends,
    /// An interface a TS class implements.
    Implements,
}

/// The base list a child of `parent` (filling `field`) opens or leaves, given the one around it.
/// Tracked during the walk: asking tree-sitter for a node's parent costs a descent from the root.
fn heritage_below(
    around: Option<Heritage>,
    parent: &str,
    field: Option<&str>,
    child: &str,
) -> Option<Heritage> {
    match child {
        "extends_clause" | "extends_type_clause" => return Some(Heritage::Extends),
        "implements_clause" => return Some(Heritage::Implements),
        "class_heritage" => return Some(Heritage::Extends),
        // A call's arguments, or a body, inside a base list are not bases (`mixin(B)` is).
        "arguments" | "class_body" | "block" | "statement_block" => return None,
        _ => {}
    }
    if parent == "class_definition" && field == Some("superclasses") {
        return Some(Heritage::Extends);
    }
    around
}

/// Everything [`extract`] found in a file, each list in document order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct References {
    /// Imported bindings, re-exports and `require` calls.
    pub imports: Vec<Import>,
    /// Calls, attribute chains and names read, outside import statements.
    pub references: Vec<Reference>,
    /// `(local name, symbol path)`: `("Lexer", "Lexer")`, `("next", "Lexer.next")`.
    pub definitions: Vec<(String, String)>,
}

#[cfg(test)]
/// Extracts the reference sites of `source`. Never fails: a file the grammar cannot parse
/// yields nothing, and tree-sitter's error recovery keeps the intact code around a syntax error.
#[must_use]
pub fn extract(language: Language, source: &str) -> References {
    match super::syntax::parse(language, source) {
        Some(tree) => extract_from_tree(language, source, &tree),
        None => References::default(),
    }
}

/// [`extract`] over a tree already parsed from `source`.
#[must_use]
pub fn extract_from_tree(language: Language, source: &str, tree: &tree_sitter::Tree) -> References {
    let mut walker = Walker {
        python: language == Language::Python,
        source,
        index: LineIndex::new(source),
        position: ("", None),
        heritage: None,
        out: References::default(),
    };
    walker.walk(tree.root_node());
    walker.out
}

/// A named scope: its symbol path, and whether it and every scope around it is a class (so its
/// members are reachable from module level).
struct Scope {
    path: String,
    class_chain: bool,
}

type Enclosing = Option<Rc<Scope>>;

struct Walker<'s> {
    python: bool,
    source: &'s str,
    index: LineIndex,
    /// The kind of the current node's parent, and the field the node fills there.
    position: (&'static str, Option<&'static str>),
    /// The class base list the current node sits in, if any.
    heritage: Option<Heritage>,
    out: References,
}

impl<'s> Walker<'s> {
    fn text(&self, node: Node<'_>) -> &'s str {
        text(self.source, node)
    }

    fn span(&self, node: Node<'_>) -> Span {
        self.index.span(node.start_byte(), node.end_byte())
    }

    /// Iterative pre-order walk (deeply nested code must not overflow the stack).
    fn walk(&mut self, root: Node<'_>) {
        // Each entry: the node, its parent's kind and the field it fills there, the scope, and the
        // class base list it sits in.
        type Entry<'t> = (
            Node<'t>,
            &'static str,
            Option<&'static str>,
            Enclosing,
            Option<Heritage>,
        );
        let mut stack: Vec<Entry<'_>> = vec![(root, "", None, None, None)];
        while let Some((node, parent, field, enclosing, heritage)) = stack.pop() {
            self.position = (parent, field);
            self.heritage = heritage;
            let (skip, inner) = if self.python {
                self.python_node(node, &enclosing)
            } else {
                self.ecma_node(node, &enclosing)
            };
            let Some(skip) = skip else { continue };
            let inner = inner.or(enclosing);
            let start = stack.len();
            let mut cursor = node.walk();
            if cursor.goto_first_child() {
                loop {
                    let child = cursor.node();
                    if Some(child.id()) != skip {
                        let field = cursor.field_name();
                        let below = heritage_below(heritage, node.kind(), field, child.kind());
                        stack.push((child, node.kind(), field, inner.clone(), below));
                    }
                    if !cursor.goto_next_sibling() {
                        break;
                    }
                }
            }
            stack[start..].reverse();
        }
    }

    /// Enters the scope `name` declares inside `enclosing`, recording a definition when the
    /// scope is reachable from module level.
    fn scope(&mut self, name: Option<Node<'_>>, class: bool, enclosing: &Enclosing) -> Enclosing {
        let name = self.text(name?);
        if name.is_empty() {
            return None;
        }
        let (path, reachable) = match enclosing {
            Some(outer) if outer.path.is_empty() => (name.to_string(), outer.class_chain),
            Some(outer) => (format!("{}.{name}", outer.path), outer.class_chain),
            None => (name.to_string(), true),
        };
        if reachable {
            self.out.definitions.push((name.to_string(), path.clone()));
        }
        Some(Rc::new(Scope {
            path,
            class_chain: class && reachable,
        }))
    }

    /// Records a declaration's name as a definition reachable as `scope.name`, opening no scope.
    fn declare(&mut self, name: Option<Node<'_>>, enclosing: &Enclosing) {
        let Some(name) = name.map(|n| self.text(n)).filter(|n| !n.is_empty()) else {
            return;
        };
        match enclosing {
            Some(outer) if outer.class_chain => self
                .out
                .definitions
                .push((name.to_string(), format!("{}.{name}", outer.path))),
            None => self
                .out
                .definitions
                .push((name.to_string(), name.to_string())),
            Some(_) => {}
        }
    }

    fn reference(
        &mut self,
        kind: RefKind,
        node: Node<'_>,
        segments: &[&str],
        enclosing: &Enclosing,
    ) {
        let (Some(head), Some(last)) = (segments.first(), segments.last()) else {
            return;
        };
        self.out.references.push(Reference {
            kind,
            text: self.text(node).to_string(),
            head: (*head).to_string(),
            member: (segments.len() > 1).then(|| (*last).to_string()),
            enclosing: enclosing
                .as_ref()
                .map(|s| s.path.clone())
                .filter(|p| !p.is_empty()),
            span: self.span(node),
            heritage: self.heritage,
        });
    }

    fn import(
        &mut self,
        kind: ImportKind,
        module: &str,
        name: Option<&str>,
        binding: Option<&str>,
        node: Node<'_>,
    ) {
        self.out.imports.push(Import {
            kind,
            module: module.to_string(),
            name: name.map(str::to_string),
            binding: binding.map(str::to_string),
            span: self.span(node),
        });
    }

    /// The identifiers of a dotted chain rooted at an identifier (or `this`), if `node` is one.
    fn chain(&self, mut node: Node<'_>) -> Option<Vec<&'s str>> {
        let mut segments = Vec::new();
        loop {
            let (object, property) = match node.kind() {
                "identifier" | "this" => break,
                "attribute" => ("object", "attribute"),
                "member_expression" => ("object", "property"),
                _ => return None,
            };
            let member = node.child_by_field_name(property)?;
            if !matches!(
                member.kind(),
                "identifier" | "property_identifier" | "private_property_identifier"
            ) {
                return None;
            }
            segments.push(self.text(member));
            node = node.child_by_field_name(object)?;
        }
        segments.push(self.text(node));
        segments.reverse();
        Some(segments)
    }

    /// Reports a call's callee if it is a chain; returns the callee to skip when walking on.
    fn call(&mut self, callee: Option<Node<'_>>, enclosing: &Enclosing) -> Option<usize> {
        let callee = callee?;
        let segments = self.chain(callee)?;
        self.reference(RefKind::Call, callee, &segments, enclosing);
        Some(callee.id())
    }

    /// An attribute / member chain outside callee position: reported whole, or walked into.
    fn attribute(&mut self, node: Node<'_>, enclosing: &Enclosing) -> Option<Option<usize>> {
        match self.chain(node) {
            Some(segments) => {
                self.reference(RefKind::Attribute, node, &segments, enclosing);
                None
            }
            None => Some(None),
        }
    }

    /// An identifier: a `Name` reference if its parent reads it as a value.
    fn name(
        &mut self,
        node: Node<'_>,
        reads: fn(&str, Option<&str>) -> bool,
        enclosing: &Enclosing,
    ) {
        let (parent, field) = self.position;
        if reads(parent, field) {
            let name = self.text(node);
            self.reference(RefKind::Name, node, &[name], enclosing);
        }
    }

    /// Handles one Python node. Returns whether to walk on into its children (`None`: prune the
    /// subtree; `Some(Some(id))`: all but child `id`, a callee already reported) and the scope
    /// the node opens, if any.
    fn python_node(
        &mut self,
        node: Node<'_>,
        enclosing: &Enclosing,
    ) -> (Option<Option<usize>>, Enclosing) {
        match node.kind() {
            "import_statement" => {
                for spec in children_by_field(node, "name") {
                    let (module, alias) = aliased(spec);
                    let module = self.text(module);
                    let binding = match alias {
                        Some(alias) => self.text(alias),
                        None => module.split('.').next().unwrap_or(module).trim(),
                    };
                    self.import(ImportKind::Module, module, None, Some(binding), spec);
                }
                (None, None)
            }
            "import_from_statement" | "future_import_statement" => {
                let module = match node.child_by_field_name("module_name") {
                    Some(m) => self.text(m).split_whitespace().collect::<String>(),
                    None => "__future__".to_string(),
                };
                let mut cursor = node.walk();
                if let Some(star) = node
                    .named_children(&mut cursor)
                    .find(|c| c.kind() == "wildcard_import")
                {
                    self.import(ImportKind::Name, &module, Some("*"), None, star);
                }
                for spec in children_by_field(node, "name") {
                    let (name, alias) = aliased(spec);
                    let name = self.text(name);
                    let binding = alias.map_or(name, |a| self.text(a));
                    self.import(ImportKind::Name, &module, Some(name), Some(binding), spec);
                }
                (None, None)
            }
            "function_definition" => (
                Some(None),
                self.scope(node.child_by_field_name("name"), false, enclosing),
            ),
            "class_definition" => (
                Some(None),
                self.scope(node.child_by_field_name("name"), true, enclosing),
            ),
            "call" => (
                Some(self.call(node.child_by_field_name("function"), enclosing)),
                None,
            ),
            "attribute" => (self.attribute(node, enclosing), None),
            "identifier" => {
                if self.text(node) != "self" {
                    self.name(node, python_reads, enclosing);
                }
                (None, None)
            }
            _ => (Some(None), None),
        }
    }

    /// Handles one JavaScript / TypeScript node, as [`Self::python_node`].
    fn ecma_node(
        &mut self,
        node: Node<'_>,
        enclosing: &Enclosing,
    ) -> (Option<Option<usize>>, Enclosing) {
        match node.kind() {
            "import_statement" => {
                self.es_import(node);
                (None, None)
            }
            "export_statement" => match node.child_by_field_name("source") {
                Some(source) => {
                    self.re_export(node, source);
                    (None, None)
                }
                None => (Some(None), None),
            },
            "function_declaration" | "generator_function_declaration" | "method_definition" => (
                Some(None),
                self.scope(node.child_by_field_name("name"), false, enclosing),
            ),
            "class_declaration" | "abstract_class_declaration" => (
                Some(None),
                self.scope(node.child_by_field_name("name"), true, enclosing),
            ),
            "variable_declarator" => {
                let name = node.child_by_field_name("name");
                let value = node.child_by_field_name("value");
                if let (Some(name), Some(value)) = (name, value) {
                    if self.require(value, Some(name)) {
                        return (None, None);
                    }
                    if name.kind() == "identifier"
                        && matches!(
                            value.kind(),
                            "arrow_function"
                                | "function_expression"
                                | "function"
                                | "generator_function"
                        )
                    {
                        return (Some(None), self.scope(Some(name), false, enclosing));
                    }
                }
                (Some(None), None)
            }
            // Interfaces, type aliases and enums are bindings too (a type position or, for an
            // enum, a value refers to them), but open no scope the resolver looks into.
            "interface_declaration" | "type_alias_declaration" | "enum_declaration" => {
                self.declare(node.child_by_field_name("name"), enclosing);
                (Some(None), None)
            }
            // An anonymous function's declarations are local to it: they are not module-level
            // definitions, though its sites keep their surroundings' symbol path.
            "arrow_function" | "function_expression" | "function" | "generator_function" => (
                Some(None),
                Some(Rc::new(Scope {
                    path: enclosing
                        .as_ref()
                        .map_or_else(String::new, |s| s.path.clone()),
                    class_chain: false,
                })),
            ),
            "call_expression" => {
                if self.require(node, None) {
                    return (None, None);
                }
                (
                    Some(self.call(node.child_by_field_name("function"), enclosing)),
                    None,
                )
            }
            "new_expression" => (
                Some(self.call(node.child_by_field_name("constructor"), enclosing)),
                None,
            ),
            "member_expression" => (self.attribute(node, enclosing), None),
            "identifier" | "type_identifier" | "shorthand_property_identifier" => {
                self.name(node, ecma_reads, enclosing);
                (None, None)
            }
            _ => (Some(None), None),
        }
    }

    /// ES `import … from 'm'`, `import 'm'`, TS `import x = require('m')`.
    fn es_import(&mut self, node: Node<'_>) {
        let mut cursor = node.walk();
        let children: Vec<_> = node.named_children(&mut cursor).collect();
        if let Some(clause) = children
            .iter()
            .find(|c| c.kind() == "import_require_clause")
        {
            let mut cursor = clause.walk();
            let ident = clause
                .named_children(&mut cursor)
                .find(|c| c.kind() == "identifier");
            if let Some(source) = clause.child_by_field_name("source") {
                let module = string_value(self.source, source);
                let binding = ident.map(|i| self.text(i));
                self.import(
                    ImportKind::Require,
                    module,
                    None,
                    binding,
                    ident.unwrap_or(node),
                );
            }
            return;
        }
        let Some(source) = node.child_by_field_name("source") else {
            return;
        };
        let module = string_value(self.source, source);
        let Some(clause) = children.iter().find(|c| c.kind() == "import_clause") else {
            self.import(ImportKind::Module, module, None, None, node);
            return;
        };
        let mut cursor = clause.walk();
        for part in clause.named_children(&mut cursor) {
            match part.kind() {
                "identifier" => {
                    let binding = self.text(part);
                    self.import(
                        ImportKind::Default,
                        module,
                        Some("default"),
                        Some(binding),
                        part,
                    );
                }
                "namespace_import" => {
                    let mut cursor = part.walk();
                    let ident = part
                        .named_children(&mut cursor)
                        .find(|c| c.kind() == "identifier");
                    let binding = ident.map(|i| self.text(i));
                    self.import(ImportKind::Namespace, module, None, binding, part);
                }
                "named_imports" => {
                    self.specifiers(part, "import_specifier", ImportKind::Name, module);
                }
                _ => {}
            }
        }
    }

    /// `{ a, b as c }` of an import or re-export: one entry per specifier, bound to its alias or name.
    fn specifiers(&mut self, list: Node<'_>, specifier: &str, kind: ImportKind, module: &str) {
        let mut cursor = list.walk();
        for spec in list
            .named_children(&mut cursor)
            .filter(|c| c.kind() == specifier)
        {
            let Some(name) = spec.child_by_field_name("name") else {
                continue;
            };
            let name = string_value(self.source, name);
            let binding = spec
                .child_by_field_name("alias")
                .map_or(name, |a| string_value(self.source, a));
            self.import(kind, module, Some(name), Some(binding), spec);
        }
    }

    /// `export { x [as y] } from 'm'`, `export * [as ns] from 'm'`.
    fn re_export(&mut self, node: Node<'_>, source: Node<'_>) {
        let module = string_value(self.source, source);
        let mut cursor = node.walk();
        let children: Vec<_> = node.named_children(&mut cursor).collect();
        if let Some(clause) = children.iter().find(|c| c.kind() == "export_clause") {
            self.specifiers(*clause, "export_specifier", ImportKind::ReExport, module);
        } else if let Some(ns) = children.iter().find(|c| c.kind() == "namespace_export") {
            let mut cursor = ns.walk();
            let binding = ns
                .named_children(&mut cursor)
                .last()
                .map(|b| string_value(self.source, b));
            self.import(ImportKind::ReExportAll, module, None, binding, *ns);
        } else {
            self.import(ImportKind::ReExportAll, module, None, None, node);
        }
    }

    /// Records `value` as a CommonJS import if it is `require('m')` or `require('m').x`, with
    /// the names `pattern` (a declarator's name) binds; false if it is neither.
    fn require(&mut self, value: Node<'_>, pattern: Option<Node<'_>>) -> bool {
        let (call, member) = match value.kind() {
            "member_expression" => {
                let Some(object) = value.child_by_field_name("object") else {
                    return false;
                };
                let property = value.child_by_field_name("property");
                (object, property.map(|p| self.text(p)))
            }
            _ => (value, None),
        };
        let Some(module) = self.require_module(call) else {
            return false;
        };
        match pattern {
            Some(p) if p.kind() == "identifier" => {
                self.import(ImportKind::Require, module, member, Some(self.text(p)), p);
            }
            Some(p) if p.kind() == "object_pattern" && member.is_none() => {
                let mut cursor = p.walk();
                for prop in p.named_children(&mut cursor) {
                    match prop.kind() {
                        "shorthand_property_identifier_pattern" => {
                            let name = self.text(prop);
                            self.import(ImportKind::Require, module, Some(name), Some(name), prop);
                        }
                        "pair_pattern" => {
                            let key = prop.child_by_field_name("key").map(|k| self.text(k));
                            let bound = prop
                                .child_by_field_name("value")
                                .filter(|v| v.kind() == "identifier")
                                .map(|v| self.text(v));
                            self.import(ImportKind::Require, module, key, bound, prop);
                        }
                        _ => {}
                    }
                }
            }
            _ => self.import(ImportKind::Require, module, member, None, value),
        }
        true
    }

    /// `m` if `node` is `require('m')`.
    fn require_module(&self, node: Node<'_>) -> Option<&'s str> {
        if node.kind() != "call_expression" {
            return None;
        }
        let callee = node.child_by_field_name("function")?;
        if callee.kind() != "identifier" || self.text(callee) != "require" {
            return None;
        }
        let args = node.child_by_field_name("arguments")?;
        let mut cursor = args.walk();
        let mut named = args.named_children(&mut cursor);
        let arg = named.next().filter(|a| a.kind() == "string")?;
        named
            .next()
            .is_none()
            .then(|| string_value(self.source, arg))
    }
}

fn children_by_field<'t>(node: Node<'t>, field: &str) -> Vec<Node<'t>> {
    let mut cursor = node.walk();
    node.children_by_field_name(field, &mut cursor).collect()
}

/// A Python import specifier's name and alias (`a.b as c`), or the name alone.
fn aliased(spec: Node<'_>) -> (Node<'_>, Option<Node<'_>>) {
    if spec.kind() == "aliased_import"
        && let Some(name) = spec.child_by_field_name("name")
    {
        return (name, spec.child_by_field_name("alias"));
    }
    (spec, None)
}

/// A JS string literal's contents (as written, escapes kept); other nodes' text.
fn string_value<'s>(source: &'s str, node: Node<'_>) -> &'s str {
    let raw = text(source, node);
    if node.kind() == "string" && raw.len() >= 2 {
        raw.get(1..raw.len() - 1).unwrap_or("")
    } else {
        raw
    }
}

/// Whether a Python identifier under `parent` (as `field`) is read as a value.
fn python_reads(parent: &str, field: Option<&str>) -> bool {
    match parent {
        "argument_list"
        | "return_statement"
        | "decorator"
        | "binary_operator"
        | "comparison_operator"
        | "boolean_operator"
        | "not_operator"
        | "unary_operator"
        | "list"
        | "tuple"
        | "set"
        | "expression_list"
        | "parenthesized_expression"
        | "conditional_expression"
        | "await"
        | "yield"
        | "raise_statement"
        | "assert_statement"
        | "type"
        | "list_splat"
        | "dictionary_splat"
        | "subscript"
        | "slice"
        | "expression_statement"
        | "generic_type"
        | "union_type" => true,
        "keyword_argument" | "pair" | "default_parameter" | "typed_default_parameter" => {
            field == Some("value") || (parent == "pair" && field == Some("key"))
        }
        "assignment" | "augmented_assignment" => field == Some("right"),
        "if_statement" | "elif_clause" | "while_statement" => field == Some("condition"),
        "for_statement" | "for_in_clause" => field == Some("right"),
        "lambda" => field == Some("body"),
        _ => false,
    }
}

/// Whether a JS/TS identifier under `parent` (as `field`) is read as a value or type.
fn ecma_reads(parent: &str, field: Option<&str>) -> bool {
    match parent {
        "arguments"
        | "return_statement"
        | "binary_expression"
        | "unary_expression"
        | "update_expression"
        | "array"
        | "spread_element"
        | "template_substitution"
        | "parenthesized_expression"
        | "await_expression"
        | "expression_statement"
        | "class_heritage"
        | "extends_clause"
        | "jsx_expression"
        | "throw_statement"
        | "sequence_expression"
        | "as_expression"
        | "satisfies_expression"
        | "non_null_expression"
        | "type_annotation"
        | "type_arguments"
        | "implements_clause"
        | "extends_type_clause"
        | "union_type"
        | "intersection_type"
        | "array_type"
        | "object" => true,
        "variable_declarator" | "pair" | "assignment_pattern" => field == Some("value"),
        "assignment_expression" | "augmented_assignment_expression" => field == Some("right"),
        "ternary_expression" | "if_statement" | "while_statement" => true,
        "subscript_expression" => true,
        "generic_type" => field == Some("name"),
        "arrow_function" => field == Some("body"),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PY: &str = include_str!("../../tests/fixtures/code/refs/lexer.py");
    const TS: &str = include_str!("../../tests/fixtures/code/refs/parser.ts");

    fn imports(refs: &References) -> Vec<(ImportKind, &str, Option<&str>, Option<&str>)> {
        refs.imports
            .iter()
            .map(|i| {
                (
                    i.kind,
                    i.module.as_str(),
                    i.name.as_deref(),
                    i.binding.as_deref(),
                )
            })
            .collect()
    }

    fn has(refs: &References, kind: RefKind, text: &str, enclosing: Option<&str>) -> bool {
        refs.references
            .iter()
            .any(|r| r.kind == kind && r.text == text && r.enclosing.as_deref() == enclosing)
    }

    /// Spans slice the source exactly, and no reference lies inside an import.
    fn check_spans(source: &str, refs: &References, import_lines: &[usize]) {
        let index = LineIndex::new(source);
        for r in &refs.references {
            let s = r.span;
            assert_eq!(&source[s.byte_start..s.byte_end], r.text, "{r:?}");
            assert_eq!(index.span(s.byte_start, s.byte_end), s);
            assert!(
                !import_lines.contains(&s.line_start),
                "reference in an import: {r:?}"
            );
            assert!(r.text.starts_with(&r.head), "{r:?}");
            if let Some(member) = &r.member {
                assert!(r.text.ends_with(member.as_str()), "{r:?}");
            }
        }
        for i in &refs.imports {
            let s = i.span;
            assert!(source.get(s.byte_start..s.byte_end).is_some(), "{i:?}");
            assert_eq!(index.span(s.byte_start, s.byte_end), s);
        }
    }

    #[test]
    fn python_imports() {
        use ImportKind::{Module, Name};
        let refs = extract(Language::Python, PY);
        assert_eq!(
            imports(&refs),
            vec![
                (Module, "os.path", None, Some("os")),
                (Module, "json", None, Some("js")),
                (Name, "typing", Some("List"), Some("List")),
                (Name, "typing", Some("Optional"), Some("Opt")),
                (Name, ".", Some("tokens"), Some("tokens")),
                (Name, "..util", Some("helpers"), Some("h")),
                (Name, ".grammar", Some("*"), None),
            ]
        );
        let spans: Vec<_> = refs
            .imports
            .iter()
            .map(|i| &PY[i.span.byte_start..i.span.byte_end])
            .collect();
        assert_eq!(
            spans,
            [
                "os.path",
                "json as js",
                "List",
                "Optional as Opt",
                "tokens",
                "helpers as h",
                "*"
            ]
        );
    }

    #[test]
    fn python_references() {
        use RefKind::{Attribute, Call, Name};
        let refs = extract(Language::Python, PY);
        check_spans(PY, &refs, &[3, 4, 5, 6, 7, 8]);
        let expected = [
            (Call, "os.path.join", None),
            (Call, "helpers_split", Some("tokenize")),
            (Name, "text", Some("tokenize")),
            (Name, "List", Some("tokenize")),
            (Name, "Base", Some("Lexer")),
            (Attribute, "self.source", Some("Lexer.__init__")),
            (Name, "source", Some("Lexer.__init__")),
            (Call, "tokenize", Some("Lexer.next")),
            (Call, "self.advance", Some("Lexer.next")),
            (Call, "len", Some("Lexer.next")),
            (Name, "tok", Some("Lexer.next")),
            (Call, "tokens.Token", Some("Lexer.next")),
            (Attribute, "os.sep", Some("Lexer.next")),
            (Call, "js.dumps", Some("Lexer.advance")),
            (Call, "h.log.write", Some("Lexer.advance")),
            (Call, "Lexer", Some("main")),
            (Call, "lexer.next", Some("main")),
        ];
        for (kind, text, enclosing) in expected {
            assert!(
                has(&refs, kind, text, enclosing),
                "{kind:?} {text} in {enclosing:?}: {:#?}",
                refs.references
            );
        }
        let call = refs
            .references
            .iter()
            .find(|r| r.text == "h.log.write")
            .unwrap();
        assert_eq!(
            (call.head.as_str(), call.member.as_deref()),
            ("h", Some("write"))
        );
        // Only the outermost chain; declared names, parameters and targets are not references.
        let at = |text: &str, line: usize| {
            refs.references
                .iter()
                .any(|r| r.text == text && r.span.line_start == line)
        };
        assert!(!at("os.path", 11) && !at("h.log", 30) && !at("self", 25));
        assert!(!at("tok", 24) && at("tok", 25) && !at("data", 29) && at("data", 30));
        assert!(!at("tokenize", 14) && !at("Lexer", 18) && !at("lexer", 34) && !at("n", 28));
        assert_eq!(
            refs.definitions,
            [
                ("tokenize", "tokenize"),
                ("Lexer", "Lexer"),
                ("__init__", "Lexer.__init__"),
                ("next", "Lexer.next"),
                ("advance", "Lexer.advance"),
                ("main", "main"),
            ]
            .map(|(a, b)| (a.to_string(), b.to_string()))
        );
    }

    #[test]
    fn typescript_imports() {
        use ImportKind::*;
        let refs = extract(Language::TypeScript, TS);
        assert_eq!(
            imports(&refs),
            vec![
                (Default, "./lex.js", Some("default"), Some("lex")),
                (Name, "./tokens", Some("tokenize"), Some("tokenize")),
                (Name, "./tokens", Some("Token"), Some("Tok")),
                (Namespace, "../util", None, Some("util")),
                (Name, "./options", Some("Options"), Some("Options")),
                (Module, "./polyfill", None, None),
                (ReExport, "./format", Some("format"), Some("format")),
                (ReExportAll, "./ast", None, None),
                (Require, "fs", None, Some("fs")),
                (Require, "path", Some("join"), Some("join")),
                (Require, "path", Some("dirname"), Some("dir")),
            ]
        );
    }

    #[test]
    fn typescript_references() {
        use RefKind::{Attribute, Call, Name};
        let refs = extract(Language::TypeScript, TS);
        check_spans(TS, &refs, &[2, 3, 4, 5, 6, 7, 8, 9, 10]);
        let expected = [
            (Call, "tokenize", Some("parse")),
            (Name, "text", Some("parse")),
            (Call, "Parser", Some("parse")),
            (Name, "toks", Some("parse")),
            (Name, "Options", Some("parse")),
            (Name, "Base", Some("Parser")),
            (Call, "this.step", Some("Parser.run")),
            (Call, "util.flatten", Some("Parser.run")),
            (Attribute, "this.toks", Some("Parser.run")),
            (Call, "fs.writeFileSync", Some("Parser.run")),
            (Call, "join", Some("Parser.run")),
            (Call, "dir", Some("Parser.run")),
            (Call, "lex", Some("Parser.run")),
            (Name, "out", Some("Parser.run")),
            (Call, "this.toks.shift", Some("Parser.step")),
            (Call, "util.math.abs", Some("helper")),
        ];
        for (kind, text, enclosing) in expected {
            assert!(
                has(&refs, kind, text, enclosing),
                "{kind:?} {text} in {enclosing:?}: {:#?}",
                refs.references
            );
        }
        assert!(!refs.references.iter().any(|r| r.text == "require"));
        assert_eq!(
            refs.definitions,
            [
                ("parse", "parse"),
                ("Parser", "Parser"),
                ("constructor", "Parser.constructor"),
                ("run", "Parser.run"),
                ("step", "Parser.step"),
                ("helper", "helper"),
            ]
            .map(|(a, b)| (a.to_string(), b.to_string()))
        );
    }

    #[test]
    fn commonjs_and_edge_cases() {
        use ImportKind::*;
        let src = "const a = require('a').b;\nrequire('side');\nconst x = new ns.C();\nexport * as q from 'q';\n";
        let refs = extract(Language::JavaScript, src);
        assert_eq!(
            imports(&refs),
            vec![
                (Require, "a", Some("b"), Some("a")),
                (Require, "side", None, None),
                (ReExportAll, "q", None, Some("q")),
            ]
        );
        assert_eq!(refs.references.len(), 1, "{:?}", refs.references);
        assert_eq!(refs.references[0].text, "ns.C");
        assert_eq!(refs.references[0].kind, RefKind::Call);
        // Unparseable or empty input yields nothing, and never panics.
        assert_eq!(extract(Language::Python, ""), References::default());
        let broken = extract(Language::Python, "def f(:\n    g(\nimport\n");
        // Deep chains and nesting are walked without recursion.
        let deep = format!("x = a{}\n", ".b".repeat(50_000));
        let refs = extract(Language::Python, &deep);
        assert_eq!(refs.references.len(), 1);
        assert_eq!(refs.references[0].member.as_deref(), Some("b"));
        check_spans("def f(:\n    g(\nimport\n", &broken, &[]);
    }
}
