//! Running tree-sitter, and locating the first syntax error it recovered from.

use tree_sitter::{Node, Parser, Tree};

use super::Language;

/// Parses `source`; `None` only if the grammar cannot be loaded (an ABI mismatch between the
/// grammar crate and `tree-sitter`, which the tests catch) or tree-sitter gives up.
pub(crate) fn parse(language: Language, source: &str) -> Option<Tree> {
    let mut parser = Parser::new();
    parser.set_language(&language.grammar()).ok()?;
    parser.parse(source, None)
}

/// The first `ERROR` or `MISSING` node in document order, if the tree has any.
pub(super) fn first_error(root: Node<'_>) -> Option<Node<'_>> {
    if !root.has_error() {
        return None;
    }
    // Iterative pre-order walk that only descends into subtrees containing an error.
    let mut cursor = root.walk();
    loop {
        let node = cursor.node();
        if node.is_error() || node.is_missing() {
            return Some(node);
        }
        if node.has_error() && cursor.goto_first_child() {
            continue;
        }
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() {
                return None;
            }
        }
    }
}
