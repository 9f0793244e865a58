//! The language-independent outline of a file: symbols (with their members) and the code between
//! them, as byte ranges. Language adapters classify tree-sitter nodes; [`collect`] turns a run of
//! sibling nodes into items and applies the attachment rules every language shares.

use crate::unit::UnitType;
use tree_sitter::Node;

/// Class nesting deeper than this is kept inside one leaf: the outline recurses per level, and
/// real code never nests classes this deep.
pub(super) const MAX_NESTING: usize = 16;

/// What a symbol unit is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum SymbolKind {
    Class,
    Interface,
    /// A TypeScript type alias or enum, a Python `type X = …` statement.
    Type,
    Function,
    Method,
}

impl SymbolKind {
    pub(super) fn unit_type(self) -> UnitType {
        match self {
            Self::Class => UnitType::Class,
            Self::Interface => UnitType::Interface,
            Self::Type => UnitType::Type,
            Self::Function => UnitType::Function,
            Self::Method => UnitType::Method,
        }
    }
}

/// A named declaration and its exact range, leading comments and decorators included.
#[derive(Debug)]
pub(super) struct Symbol {
    pub kind: SymbolKind,
    pub name: String,
    pub start: usize,
    pub end: usize,
    /// Names under which the declaration is exported (JS/TS).
    pub exports: Vec<String>,
    /// A body-less overload signature (TS), merged into an implementation of the same name that
    /// follows it, so that overloads and implementation are one unit.
    pub signature: bool,
    /// The members of a class; `None` for other symbols.
    pub body: Option<Body>,
    /// The declaration's own start (before leading comments and decorators are attached).
    pub decl_start: usize,
    /// A function's body: where its signature ends, and where each of its statements starts.
    pub statements: Option<(usize, Vec<usize>)>,
}

impl Symbol {
    pub(super) fn new(kind: SymbolKind, name: String, node: Node<'_>) -> Self {
        Self {
            kind,
            name,
            start: node.start_byte(),
            end: node.end_byte(),
            exports: Vec::new(),
            signature: false,
            body: None,
            // A decorated definition's declaration starts after its decorators.
            decl_start: node
                .child_by_field_name("definition")
                .map_or(node.start_byte(), |d| d.start_byte()),
            statements: function_body(node).map(|body| {
                let mut cursor = body.walk();
                let starts = body
                    .named_children(&mut cursor)
                    .filter(|c| !c.is_extra())
                    .map(|c| c.start_byte())
                    .collect();
                (body.start_byte(), starts)
            }),
        }
    }

    /// Whether the symbol holds member symbols, and so becomes a container unit.
    pub(super) fn is_container(&self) -> bool {
        self.body
            .as_ref()
            .is_some_and(|b| b.items.iter().any(|i| matches!(i, Item::Symbol(_))))
    }
}

/// The statement block of a function-like declaration: its `body`, or that of the function it
/// declares (`decorated_definition`, `export_statement`, `const f = () => {…}`).
fn function_body(node: Node<'_>) -> Option<Node<'_>> {
    let is_block = |n: &Node<'_>| matches!(n.kind(), "block" | "statement_block");
    if let Some(body) = node.child_by_field_name("body").filter(is_block) {
        return Some(body);
    }
    let mut cursor = node.walk();
    for child in node.named_children(&mut cursor) {
        let inner = child.child_by_field_name("body").or_else(|| {
            child
                .child_by_field_name("value")
                .and_then(|v| v.child_by_field_name("body"))
        });
        if let Some(body) = inner.filter(is_block) {
            return Some(body);
        }
        let mut deeper = child.walk();
        for grandchild in child.named_children(&mut deeper) {
            if let Some(body) = grandchild
                .child_by_field_name("value")
                .and_then(|v| v.child_by_field_name("body"))
                .filter(is_block)
            {
                return Some(body);
            }
        }
    }
    None
}

/// A class body: where the class's own header ends (`{` or `:` included), and its items.
#[derive(Debug)]
pub(super) struct Body {
    pub header_end: usize,
    pub items: Vec<Item>,
}

/// One entry of an outline, in document order.
#[derive(Debug)]
pub(super) enum Item {
    /// Code that is not a symbol: statements, comments, decorators, punctuation.
    Code {
        start: usize,
        end: usize,
        lead: Lead,
    },
    Symbol(Symbol),
}

impl Item {
    pub(super) fn end(&self) -> usize {
        match self {
            Self::Code { end, .. } => *end,
            Self::Symbol(s) => s.end,
        }
    }
}

/// Whether code may become the leading part of the symbol after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Lead {
    No,
    /// A comment: attached when directly above the symbol, on its own line.
    Comment,
    /// A decorator that the grammar places beside, not inside, its member (TS class bodies).
    Decorator,
}

/// How an adapter reads one node.
pub(super) enum Role {
    Symbol(Symbol),
    Comment,
    Decorator,
    Code,
    /// An `ERROR` node: its children are read as if they were siblings, so that intact
    /// declarations inside a damaged region still become symbols.
    Recover,
    /// Not part of the outline (a class body's opening brace, already in the header).
    Skip,
}

/// Reads `nodes` (siblings, in order) into items.
///
/// Attachment rules: comments directly above a symbol (no blank line between, each starting its
/// own line), decorators, and same-named overload signatures before it become part of its range;
/// a `;` right after a symbol (a class member's terminator) does too.
pub(super) fn collect<'t>(
    source: &str,
    nodes: impl IntoIterator<Item = Node<'t>>,
    classify: &mut dyn FnMut(Node<'t>) -> Role,
) -> Vec<Item> {
    let mut items: Vec<Item> = Vec::new();
    // A stack rather than recursion: damaged regions can nest `ERROR` nodes deeply.
    let mut pending: Vec<Node<'t>> = nodes.into_iter().collect();
    pending.reverse();
    while let Some(node) = pending.pop() {
        let (start, end) = (node.start_byte(), node.end_byte());
        if start >= end {
            continue; // MISSING nodes are zero-width
        }
        match classify(node) {
            Role::Recover if node.child_count() > 0 => {
                let mut cursor = node.walk();
                let children: Vec<_> = node.children(&mut cursor).collect();
                pending.extend(children.into_iter().rev());
            }
            Role::Symbol(symbol) => push_symbol(source, &mut items, symbol),
            Role::Comment => items.push(Item::Code {
                start,
                end,
                lead: Lead::Comment,
            }),
            Role::Decorator => items.push(Item::Code {
                start,
                end,
                lead: Lead::Decorator,
            }),
            Role::Code | Role::Recover => {
                if let Some(Item::Symbol(prev)) = items.last_mut()
                    && node.kind() == ";"
                    && source[prev.end..start]
                        .bytes()
                        .all(|b| b == b' ' || b == b'\t')
                {
                    prev.end = end;
                } else {
                    items.push(Item::Code {
                        start,
                        end,
                        lead: Lead::No,
                    });
                }
            }
            Role::Skip => {}
        }
    }
    items
}

fn push_symbol(source: &str, items: &mut Vec<Item>, mut symbol: Symbol) {
    loop {
        match items.last() {
            Some(&Item::Code {
                start,
                lead: Lead::Decorator,
                ..
            }) => symbol.start = start,
            Some(&Item::Code {
                start,
                end,
                lead: Lead::Comment,
            }) if starts_line(source, start) && !blank_line(&source[end..symbol.start]) => {
                symbol.start = start;
            }
            Some(Item::Symbol(prev))
                if prev.signature
                    && prev.kind == symbol.kind
                    && prev.name == symbol.name
                    && source[prev.end..symbol.start].trim().is_empty() =>
            {
                symbol.start = prev.start;
                for name in &prev.exports {
                    if !symbol.exports.contains(name) {
                        symbol.exports.push(name.clone());
                    }
                }
            }
            _ => break,
        }
        items.pop();
    }
    items.push(Item::Symbol(symbol));
}

/// Whether only spaces and tabs precede `offset` on its line (the comment is not trailing code).
pub(super) fn starts_line(source: &str, offset: usize) -> bool {
    source[..offset]
        .bytes()
        .rev()
        .take_while(|&b| b != b'\n')
        .all(|b| b == b' ' || b == b'\t' || b == b'\r')
}

/// Whether whitespace `gap` contains an empty line.
pub(super) fn blank_line(gap: &str) -> bool {
    gap.bytes().filter(|&b| b == b'\n').nth(1).is_some()
}

/// The source text of a node (tree-sitter offsets of a `&str` lie on character boundaries).
pub(super) fn text<'s>(source: &'s str, node: Node<'_>) -> &'s str {
    source.get(node.start_byte()..node.end_byte()).unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blank_lines_and_line_starts() {
        assert!(!blank_line("\n    "));
        assert!(blank_line("\n\n"));
        assert!(blank_line("\r\n  \r\n"));
        let src = "x = 1  # trailing\n    # own line\n";
        assert!(!starts_line(src, 7));
        assert!(starts_line(src, 22));
    }
}
