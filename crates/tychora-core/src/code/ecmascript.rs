//! JavaScript, TypeScript and TSX (one adapter: the TypeScript grammars extend the JavaScript
//! one). Symbols: function, generator and class declarations, TS interfaces, type aliases, enums
//! and overload signatures, `const f = () => …` / `function` expressions, class methods and
//! function-valued fields. Exports are read from `export` statements, `export default …` and
//! `export { a, b as c }` clauses.

use tree_sitter::Node;

use super::outline::{self, Body, Item, Role, Symbol, SymbolKind, text};

/// The file's outline.
pub(super) fn outline(root: Node<'_>, source: &str) -> Vec<Item> {
    let mut cursor = root.walk();
    let children: Vec<_> = root.children(&mut cursor).collect();
    let mut items = outline::collect(
        source,
        children.iter().copied(),
        &mut |node| match node.kind() {
            "comment" => Role::Comment,
            "decorator" => Role::Decorator,
            "ERROR" => Role::Recover,
            "export_statement" => exported(node, source).map_or(Role::Code, Role::Symbol),
            _ => declaration(node, node, source).map_or(Role::Code, Role::Symbol),
        },
    );
    mark_clause_exports(&children, source, &mut items);
    items
}

/// `export <declaration>`, `export default <declaration or expression>`.
fn exported(node: Node<'_>, source: &str) -> Option<Symbol> {
    let mut symbol = if let Some(decl) = node.child_by_field_name("declaration") {
        declaration(decl, node, source)?
    } else {
        let value = node.child_by_field_name("value")?;
        let kind = match value.kind() {
            "function_expression" | "function" | "generator_function" | "arrow_function" => {
                SymbolKind::Function
            }
            "class" => SymbolKind::Class,
            _ => return None,
        };
        let name = name(value, source).unwrap_or_else(|| "default".to_string());
        let mut symbol = Symbol::new(kind, name, node);
        if kind == SymbolKind::Class {
            symbol.body = class_body(value, source);
        }
        symbol
    };
    // A default export is importable under any name, so it is registered under its local name
    // (what a reader searches for); an anonymous one is named `default`.
    symbol.exports.push(symbol.name.clone());
    Some(symbol)
}

/// The symbol `node` declares, if any, spanning `outer` (the `export` or `declare` around it).
fn declaration(node: Node<'_>, outer: Node<'_>, source: &str) -> Option<Symbol> {
    let simple = |kind| Some(Symbol::new(kind, name(node, source)?, outer));
    match node.kind() {
        "function_declaration" | "generator_function_declaration" => simple(SymbolKind::Function),
        "function_signature" => simple(SymbolKind::Function).map(|mut s| {
            s.signature = true;
            s
        }),
        "interface_declaration" => simple(SymbolKind::Interface),
        "type_alias_declaration" | "enum_declaration" => simple(SymbolKind::Type),
        "class_declaration" | "abstract_class_declaration" => {
            let mut class = Symbol::new(SymbolKind::Class, name(node, source)?, outer);
            class.body = class_body(node, source);
            Some(class)
        }
        // `declare function f(): void;`, `declare class C {}`.
        "ambient_declaration" => declaration(node.named_child(0)?, outer, source),
        "lexical_declaration" | "variable_declaration" => {
            // Only a single declarator names its value unambiguously.
            let mut cursor = node.walk();
            let mut declarators = node
                .named_children(&mut cursor)
                .filter(|c| c.kind() == "variable_declarator");
            let declarator = declarators.next()?;
            if declarators.next().is_some() {
                return None;
            }
            let name = declarator.child_by_field_name("name")?;
            let value = declarator.child_by_field_name("value")?;
            if name.kind() != "identifier" {
                return None;
            }
            let name = text(source, name).to_string();
            match value.kind() {
                "arrow_function" | "function_expression" | "function" | "generator_function" => {
                    Some(Symbol::new(SymbolKind::Function, name, outer))
                }
                "class" => {
                    let mut class = Symbol::new(SymbolKind::Class, name, outer);
                    class.body = class_body(value, source);
                    Some(class)
                }
                _ => None,
            }
        }
        _ => None,
    }
}

/// The members of a class node (declaration or expression).
/// JavaScript has no class declarations inside class bodies, so there is no nesting to bound.
fn class_body(class: Node<'_>, source: &str) -> Option<Body> {
    let body = class.child_by_field_name("body")?;
    let mut cursor = body.walk();
    let children: Vec<_> = body.children(&mut cursor).collect();
    let items = outline::collect(source, children, &mut |node| match node.kind() {
        "{" if node.start_byte() == body.start_byte() => Role::Skip,
        "comment" => Role::Comment,
        "decorator" => Role::Decorator,
        "ERROR" => Role::Recover,
        _ => member(node, source).map_or(Role::Code, Role::Symbol),
    });
    Some(Body {
        header_end: body.start_byte() + 1,
        items,
    })
}

/// A class member that is a method: a method definition or signature, or a field whose value
/// is a function (`onClick = () => …`).
fn member(node: Node<'_>, source: &str) -> Option<Symbol> {
    let named = |field| {
        let n = text(source, node.child_by_field_name(field)?);
        (!n.is_empty()).then(|| Symbol::new(SymbolKind::Method, n.to_string(), node))
    };
    match node.kind() {
        "method_definition" => named("name"),
        "method_signature" | "abstract_method_signature" => named("name").map(|mut s| {
            s.signature = true;
            s
        }),
        "field_definition" | "public_field_definition" => {
            let value = node.child_by_field_name("value")?;
            let function = matches!(
                value.kind(),
                "arrow_function" | "function_expression" | "function" | "generator_function"
            );
            // JavaScript names the field `property`, TypeScript `name`.
            function
                .then(|| named("property").or_else(|| named("name")))
                .flatten()
        }
        _ => None,
    }
}

/// `export { a, b as c }` and `export default a;` export declarations made elsewhere in the file.
fn mark_clause_exports(children: &[Node<'_>], source: &str, items: &mut [Item]) {
    let mut exported: Vec<(String, String)> = Vec::new();
    for node in children.iter().filter(|n| n.kind() == "export_statement") {
        if node.child_by_field_name("source").is_some() {
            continue; // a re-export names another module's symbols
        }
        if let Some(value) = node.child_by_field_name("value")
            && value.kind() == "identifier"
        {
            let local = text(source, value).to_string();
            exported.push((local.clone(), local));
        }
        let mut cursor = node.walk();
        for clause in node
            .named_children(&mut cursor)
            .filter(|c| c.kind() == "export_clause")
        {
            let mut inner = clause.walk();
            for spec in clause
                .named_children(&mut inner)
                .filter(|c| c.kind() == "export_specifier")
            {
                let Some(local) = spec.child_by_field_name("name") else {
                    continue;
                };
                let local = text(source, local).to_string();
                let alias = spec
                    .child_by_field_name("alias")
                    .map(|a| text(source, a).to_string())
                    .filter(|a| a != "default");
                exported.push((local.clone(), alias.unwrap_or(local)));
            }
        }
    }
    for item in items {
        if let Item::Symbol(symbol) = item {
            for (local, name) in &exported {
                if *local == symbol.name && !symbol.exports.contains(name) {
                    symbol.exports.push(name.clone());
                }
            }
        }
    }
}

fn name(node: Node<'_>, source: &str) -> Option<String> {
    let name = text(source, node.child_by_field_name("name")?);
    (!name.is_empty()).then(|| name.to_string())
}
