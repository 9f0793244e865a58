//! Python: functions, classes (methods, nested classes), decorated definitions, `type` aliases
//! and module-level lambdas. Decorators are part of a definition's node; a docstring is the first
//! statement of its body, so both lie inside the symbol's span without extra work.

use tree_sitter::Node;

use super::outline::{self, Body, Item, MAX_NESTING, Role, Symbol, SymbolKind, text};

/// The file's outline.
pub(super) fn outline(root: Node<'_>, source: &str) -> Vec<Item> {
    items(root, source, false, 0)
}

/// Items of a module or class body (`in_class`: functions are methods there).
fn items(parent: Node<'_>, source: &str, in_class: bool, depth: usize) -> Vec<Item> {
    let mut cursor = parent.walk();
    let children: Vec<_> = parent.children(&mut cursor).collect();
    outline::collect(source, children, &mut |node| {
        match node.kind() {
            "comment" => return Role::Comment,
            "ERROR" => return Role::Recover,
            _ => {}
        }
        symbol(node, node, source, in_class, depth).map_or(Role::Code, Role::Symbol)
    })
}

/// The symbol `node` declares, if any; `outer` is the node whose range it takes (a decorated
/// definition's decorators included).
fn symbol(
    node: Node<'_>,
    outer: Node<'_>,
    source: &str,
    in_class: bool,
    depth: usize,
) -> Option<Symbol> {
    let function = if in_class {
        SymbolKind::Method
    } else {
        SymbolKind::Function
    };
    match node.kind() {
        "decorated_definition" => symbol(
            node.child_by_field_name("definition")?,
            outer,
            source,
            in_class,
            depth,
        ),
        "function_definition" => Some(Symbol::new(function, name(node, source)?, outer)),
        "class_definition" => {
            let mut class = Symbol::new(SymbolKind::Class, name(node, source)?, outer);
            if depth < MAX_NESTING
                && let Some(block) = node.child_by_field_name("body")
            {
                class.body = Some(Body {
                    // Everything before the block (`class A(B):`, a comment after the colon).
                    header_end: block.start_byte(),
                    items: items(block, source, true, depth + 1),
                });
            }
            Some(class)
        }
        "type_alias_statement" => {
            // `type X = …` wraps the name in a `type` node, `type X[T] = …` in a generic type
            // too: the name is the first identifier down the left side.
            let mut ident = node.child_by_field_name("left")?;
            for _ in 0..3 {
                if ident.kind() == "identifier" {
                    break;
                }
                ident = ident.named_child(0)?;
            }
            if ident.kind() != "identifier" {
                return None;
            }
            Some(Symbol::new(
                SymbolKind::Type,
                text(source, ident).to_string(),
                outer,
            ))
        }
        "expression_statement" => {
            // `name = lambda …` (optionally annotated): a function named by the variable.
            let assignment = node.named_child(0).filter(|n| n.kind() == "assignment")?;
            let left = assignment.child_by_field_name("left")?;
            let right = assignment.child_by_field_name("right")?;
            (node.named_child_count() == 1
                && left.kind() == "identifier"
                && right.kind() == "lambda")
                .then(|| Symbol::new(function, text(source, left).to_string(), outer))
        }
        _ => None,
    }
}

fn name(node: Node<'_>, source: &str) -> Option<String> {
    let name = text(source, node.child_by_field_name("name")?);
    (!name.is_empty()).then(|| name.to_string())
}
