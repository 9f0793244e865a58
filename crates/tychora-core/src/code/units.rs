//! Outline → evidence units: one `module` container, symbol units (classes with members are
//! containers, everything else is a leaf), and `header`/`statement` leaves for the code between
//! symbols, so that every byte of code outside a symbol is still indexed.

use super::outline::{Body, Item, MAX_NESTING, Symbol, blank_line};
use crate::unit::UnitType;
use crate::unit::{Identifier, LineIndex, Unit};

/// How symbol paths are spelled in one file.
pub(super) struct Naming {
    /// The module path: the first heading path component and the module unit's anchor.
    pub module: String,
    /// Prefix of every symbol anchor: `pkg.mod.` (Python) or `src/a.ts#` (JS/TS).
    pub anchor_prefix: String,
}

pub(super) struct Emitter<'s> {
    source: &'s str,
    index: &'s LineIndex,
    naming: &'s Naming,
    pub units: Vec<Unit>,
}

impl<'s> Emitter<'s> {
    pub(super) fn new(source: &'s str, index: &'s LineIndex, naming: &'s Naming) -> Self {
        Self {
            source,
            index,
            naming,
            units: Vec::new(),
        }
    }

    /// The module unit, then the file's items.
    pub(super) fn module(&mut self, items: &[Item]) {
        let end = self.source.trim_end().len();
        let module = self.naming.module.clone();
        self.push(Unit {
            unit_type: UnitType::Module,
            is_leaf: false,
            parent: None,
            span: self.index.span(0, end),
            text: self.source[..end].to_string(),
            heading_path: vec![module.clone()],
            anchor: Some(module.clone()),
            json_pointer: None,
            table_header: None,
            breaks: Vec::new(),
            signature: None,
            identifiers: vec![identifier("symbol", module)],
        });
        self.items(items, 0, end, &[], None, 0);
    }

    /// Units for the `items` of the container unit `parent`, which ends at `to`; `header` is the
    /// container's own declaration (a class's), which starts the first run of code. Code runs
    /// not separated by a blank line form one unit; bytes no item covers (a grammar quirk) are
    /// read as code, so coverage never depends on the adapter listing every node.
    fn items(
        &mut self,
        items: &[Item],
        parent: usize,
        to: usize,
        scope: &[&str],
        header: Option<(usize, usize)>,
        depth: usize,
    ) {
        let mut run = Run {
            range: header,
            header: header.is_some(),
        };
        let mut cursor = header.map_or(0, |(_, end)| end);
        for item in items {
            let start = match item {
                Item::Code { start, .. } => *start,
                Item::Symbol(symbol) => symbol.start,
            };
            if start < cursor {
                // Overlaps what is already emitted; adapters never produce this, but a unit
                // must never overlap another.
                continue;
            }
            match item {
                Item::Code { start, end, .. } => {
                    self.gap(&mut run, cursor, *start, parent, scope);
                    self.code(&mut run, *start, *end, parent, scope);
                }
                Item::Symbol(symbol) => {
                    self.gap(&mut run, cursor, symbol.start, parent, scope);
                    self.flush(&mut run, parent, scope);
                    self.symbol(symbol, parent, scope, depth);
                }
            }
            cursor = cursor.max(item.end());
        }
        self.gap(&mut run, cursor, to, parent, scope);
        // A class's closing brace, alone after its last member, is left to the class: as a unit
        // it would have nothing to find.
        let closing = header.is_some()
            && run
                .range
                .is_some_and(|(s, e)| !self.source[s..e].chars().any(char::is_alphanumeric));
        if !closing {
            self.flush(&mut run, parent, scope);
        }
    }

    /// Adds the non-whitespace part of `[from, to)`, if any, as code.
    fn gap(&mut self, run: &mut Run, from: usize, to: usize, parent: usize, scope: &[&str]) {
        if from >= to {
            return;
        }
        let gap = &self.source[from..to];
        let trimmed = gap.trim_start();
        if trimmed.trim_end().is_empty() {
            return;
        }
        let start = from + (gap.len() - trimmed.len());
        let end = start + trimmed.trim_end().len();
        self.code(run, start, end, parent, scope);
    }

    fn code(&mut self, run: &mut Run, start: usize, end: usize, parent: usize, scope: &[&str]) {
        match &mut run.range {
            Some((_, run_end)) if !blank_line(&self.source[*run_end..start]) => *run_end = end,
            _ => {
                self.flush(run, parent, scope);
                run.range = Some((start, end));
            }
        }
    }

    /// Emits the pending run of code as a `header` or `statement` leaf.
    fn flush(&mut self, run: &mut Run, parent: usize, scope: &[&str]) {
        let header = std::mem::take(&mut run.header);
        let Some((start, end)) = run.range.take() else {
            return;
        };
        let text = &self.source[start..end];
        self.push(Unit::leaf(
            if header {
                UnitType::Header
            } else {
                UnitType::Statement
            },
            Some(parent),
            self.index.span(start, end),
            text.to_string(),
            self.heading_path(scope, None),
        ));
    }

    fn symbol(&mut self, symbol: &Symbol, parent: usize, scope: &[&str], depth: usize) {
        let qualified = scope
            .iter()
            .copied()
            .chain([symbol.name.as_str()])
            .collect::<Vec<_>>()
            .join(".");
        let anchor = format!("{}{qualified}", self.naming.anchor_prefix);
        let mut identifiers = vec![
            identifier("symbol", anchor.clone()),
            identifier("symbol_name", qualified.clone()),
        ];
        if qualified != symbol.name {
            identifiers.push(identifier("symbol_name", symbol.name.clone()));
        }
        identifiers.extend(
            symbol
                .exports
                .iter()
                .map(|e| identifier("export", e.clone())),
        );
        let container = symbol.is_container() && depth < MAX_NESTING;
        // A function's statements are where a window may cut it; its declaration rides along in
        // the capsule of every window.
        let (breaks, signature) = match (&symbol.statements, container) {
            (Some((body_start, starts)), false) => {
                let decl = symbol.decl_start.clamp(symbol.start, symbol.end);
                let end = (*body_start).clamp(decl, symbol.end);
                let signature = self.source[decl..end]
                    .trim()
                    .trim_end_matches('{')
                    .trim_end()
                    .to_string();
                let breaks = starts
                    .iter()
                    .copied()
                    .filter(|&b| b > symbol.start && b < symbol.end)
                    .collect();
                (breaks, (!signature.is_empty()).then_some(signature))
            }
            _ => (Vec::new(), None),
        };
        let ordinal = self.push(Unit {
            unit_type: symbol.kind.unit_type(),
            is_leaf: !container,
            parent: Some(parent),
            span: self.index.span(symbol.start, symbol.end),
            text: self.source[symbol.start..symbol.end].to_string(),
            heading_path: self.heading_path(scope, Some(&symbol.name)),
            anchor: Some(anchor),
            json_pointer: None,
            table_header: None,
            breaks,
            signature,
            identifiers,
        });
        if let (true, Some(Body { header_end, items })) = (container, &symbol.body) {
            let inner: Vec<&str> = scope
                .iter()
                .copied()
                .chain([symbol.name.as_str()])
                .collect();
            let header_end = (*header_end).clamp(symbol.start, symbol.end);
            let header_end = symbol.start + self.source[symbol.start..header_end].trim_end().len();
            let header = (symbol.start, header_end);
            self.items(items, ordinal, symbol.end, &inner, Some(header), depth + 1);
        }
    }

    fn heading_path(&self, scope: &[&str], name: Option<&str>) -> Vec<String> {
        [self.naming.module.as_str()]
            .into_iter()
            .chain(scope.iter().copied())
            .chain(name)
            .map(str::to_string)
            .collect()
    }

    fn push(&mut self, unit: Unit) -> usize {
        self.units.push(unit);
        self.units.len() - 1
    }
}

/// Consecutive code waiting to become one unit.
struct Run {
    range: Option<(usize, usize)>,
    /// The run starts with the container's own header.
    header: bool,
}

fn identifier(kind: &str, value: String) -> Identifier {
    Identifier {
        kind: kind.to_string(),
        value,
    }
}
