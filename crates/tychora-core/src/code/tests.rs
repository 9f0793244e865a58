//! Fixture tests: exact spans, symbol paths, identifiers, attachment of comments, decorators and
//! docstrings, leaf coverage, and recovery from syntax errors.

use super::*;
use crate::unit::Unit;
use crate::unit::UnitType;

const SHAPES_PY: &str = include_str!("../../tests/fixtures/code/geometry/shapes.py");
const INIT_PY: &str = include_str!("../../tests/fixtures/code/geometry/__init__.py");
const WIDGETS_TS: &str = include_str!("../../tests/fixtures/code/widgets.ts");
const COMPONENTS_JS: &str = include_str!("../../tests/fixtures/code/components.js");
const BROKEN_TS: &str = include_str!("../../tests/fixtures/code/broken.ts");

/// Extracts and checks the invariants every extraction must keep.
fn extract_checked(language: Language, source: &str, path: &str) -> Parsed {
    let parsed = extract(language, source, path);
    assert_invariants(source, &parsed);
    parsed
}

fn assert_invariants(source: &str, parsed: &Parsed) {
    let index = LineIndex::new(source);
    let units = &parsed.units;
    assert_eq!(units[0].unit_type, UnitType::Module);
    assert!(!units[0].is_leaf && units[0].parent.is_none());
    assert_eq!(
        parsed.title.as_deref(),
        Some(units[0].heading_path[0].as_str())
    );
    for (i, unit) in units.iter().enumerate() {
        let s = unit.span;
        // The span slices the source exactly to the unit's text, with consistent lines/columns.
        assert_eq!(&source[s.byte_start..s.byte_end], unit.text, "unit {i}");
        assert_eq!(s, index.span(s.byte_start, s.byte_end), "unit {i}");
        assert_eq!(unit.text.trim(), unit.text, "unit {i} is trimmed");
        assert!(unit.json_pointer.is_none() && unit.table_header.is_none());
        // Document order, and parents are earlier containers that contain the unit.
        if i > 0 {
            assert!(units[i - 1].span.byte_start <= s.byte_start, "order at {i}");
            let parent = &units[unit.parent.expect("only the module has no parent")];
            assert!(unit.parent < Some(i) && !parent.is_leaf, "unit {i}");
            assert!(parent.span.byte_start <= s.byte_start && s.byte_end <= parent.span.byte_end);
            assert!(
                unit.heading_path.starts_with(&parent.heading_path),
                "unit {i}"
            );
        }
        // A symbol's anchor is its full path and its first identifier.
        if let Some(anchor) = &unit.anchor {
            assert_eq!(unit.identifiers[0].kind, "symbol");
            assert_eq!(&unit.identifiers[0].value, anchor);
        }
    }
    // Leaves are sorted and never overlap.
    let leaves: Vec<&Unit> = units.iter().filter(|u| u.is_leaf).collect();
    for pair in leaves.windows(2) {
        assert!(
            pair[0].span.byte_end <= pair[1].span.byte_start,
            "{:?} overlaps {:?}",
            pair[0].text,
            pair[1].text
        );
    }
    // Every non-whitespace byte belongs to a leaf, except the closing punctuation of a
    // container (`}` of a class).
    let mut covered = vec![false; source.len()];
    for leaf in &leaves {
        covered[leaf.span.byte_start..leaf.span.byte_end].fill(true);
    }
    for (offset, c) in source.char_indices() {
        if c.is_whitespace() || covered[offset] {
            continue;
        }
        assert!(
            matches!(c, '}' | ')' | ']' | ';' | ','),
            "byte {offset} ({c:?}, line {}) is in no leaf",
            index.position(offset).0
        );
        assert!(
            units
                .iter()
                .skip(1)
                .any(|u| !u.is_leaf && u.span.byte_start <= offset && offset < u.span.byte_end),
            "stray {c:?} at byte {offset} is in no container"
        );
    }
}

/// The unit with this anchor.
fn symbol<'p>(parsed: &'p Parsed, anchor: &str) -> &'p Unit {
    parsed
        .units
        .iter()
        .find(|u| u.anchor.as_deref() == Some(anchor))
        .unwrap_or_else(|| panic!("no unit {anchor}"))
}

fn ids(unit: &Unit) -> Vec<(&str, &str)> {
    unit.identifiers
        .iter()
        .map(|i| (i.kind.as_str(), i.value.as_str()))
        .collect()
}

/// `(unit_type, is_leaf, anchor or first line)` of every unit.
fn outline(parsed: &Parsed) -> Vec<(&'static str, bool, String)> {
    parsed
        .units
        .iter()
        .map(|u| {
            let label = u
                .anchor
                .clone()
                .unwrap_or_else(|| u.text.lines().next().unwrap_or("").to_string());
            (u.unit_type.as_str(), u.is_leaf, label)
        })
        .collect()
}

fn owned(expected: &[(&'static str, bool, &str)]) -> Vec<(&'static str, bool, String)> {
    expected
        .iter()
        .map(|&(t, leaf, label)| (t, leaf, label.to_string()))
        .collect()
}

#[test]
fn python_module_symbols_statements_and_containers() {
    let parsed = extract_checked(Language::Python, SHAPES_PY, "geometry/shapes.py");
    assert!(parsed.diagnostics.is_empty());
    assert_eq!(parsed.title.as_deref(), Some("geometry.shapes"));
    let expected = [
        ("module", false, "geometry.shapes"),
        (
            "statement",
            true,
            "\"\"\"Plane shapes and their areas.\"\"\"",
        ),
        ("statement", true, "from __future__ import annotations"),
        ("statement", true, "import math"),
        ("statement", true, "UNIT = 1.0"),
        ("function", true, "geometry.shapes.square"),
        ("function", true, "geometry.shapes._check"),
        (
            "statement",
            true,
            "# Shapes register themselves here so that `by_name` can find them.",
        ),
        ("class", false, "geometry.shapes.Circle"),
        ("header", true, "@dataclass(frozen=True)"),
        ("statement", true, "radius: float"),
        ("method", true, "geometry.shapes.Circle.area"),
        ("method", true, "geometry.shapes.Circle.scaled"),
        ("class", false, "geometry.shapes.Circle.Meta"),
        ("header", true, "class Meta:"),
        ("method", true, "geometry.shapes.Circle.Meta.describe"),
        ("method", true, "geometry.shapes.Circle.fetch"),
        ("class", true, "geometry.shapes.Point"),
        ("function", true, "geometry.shapes.by_name"),
        ("statement", true, "if __name__ == \"__main__\":"),
    ];
    assert_eq!(outline(&parsed), owned(&expected));

    let circle = symbol(&parsed, "geometry.shapes.Circle");
    assert!(
        circle
            .text
            .starts_with("@dataclass(frozen=True)\nclass Circle:")
    );
    assert_eq!((circle.span.line_start, circle.span.line_end), (23, 47));
    // The class's own header leaf holds its decorator, declaration and docstring.
    let header = &parsed.units[9];
    assert_eq!(header.parent, Some(8));
    assert_eq!(
        header.text,
        "@dataclass(frozen=True)\nclass Circle:\n    \"\"\"A circle given by its radius.\"\"\""
    );
    assert_eq!(header.heading_path, ["geometry.shapes", "Circle"]);

    let area = symbol(&parsed, "geometry.shapes.Circle.area");
    assert!(area.text.starts_with("@property\n    def area(self)"));
    assert!(area.text.contains("\"\"\"The area, pi r squared.\"\"\""));
    assert_eq!(area.parent, Some(8));
    assert_eq!(area.heading_path, ["geometry.shapes", "Circle", "area"]);
    assert_eq!(
        ids(area),
        [
            ("symbol", "geometry.shapes.Circle.area"),
            ("symbol_name", "Circle.area"),
            ("symbol_name", "area"),
        ]
    );
    let scaled = symbol(&parsed, "geometry.shapes.Circle.scaled");
    assert!(
        scaled
            .text
            .starts_with("# Scaling keeps the centre fixed.\n    def scaled")
    );
    assert!(
        scaled
            .text
            .ends_with("return Circle(_check(self.radius * factor))")
    );

    let describe = symbol(&parsed, "geometry.shapes.Circle.Meta.describe");
    assert_eq!(describe.parent, Some(13));
    assert_eq!(
        describe.heading_path,
        ["geometry.shapes", "Circle", "Meta", "describe"]
    );
    assert!(ids(describe).contains(&("symbol_name", "Circle.Meta.describe")));
    let fetch = symbol(&parsed, "geometry.shapes.Circle.fetch");
    assert!(fetch.text.starts_with("async def fetch"));

    let check = symbol(&parsed, "geometry.shapes._check");
    assert!(check.text.contains("\"\"\"Reject negative lengths.\"\"\""));
    assert_eq!(check.parent, Some(0));
    // A top-level function's qualified and simple names coincide: registered once.
    assert_eq!(
        ids(check),
        [
            ("symbol", "geometry.shapes._check"),
            ("symbol_name", "_check")
        ]
    );
    let square = symbol(&parsed, "geometry.shapes.square");
    assert_eq!(square.text, "square = lambda side: side * side");

    let main = parsed.units.last().unwrap();
    assert_eq!(
        main.text,
        "if __name__ == \"__main__\":\n    print(Circle(2.0).area)"
    );
    assert_eq!(main.heading_path, ["geometry.shapes"]);
}

#[test]
fn python_package_init_names_the_package() {
    let parsed = extract_checked(Language::Python, INIT_PY, "geometry/__init__.py");
    assert_eq!(parsed.title.as_deref(), Some("geometry"));
    assert_eq!(parsed.units[0].anchor.as_deref(), Some("geometry"));
    let kinds: Vec<_> = parsed.units.iter().map(|u| u.unit_type.as_str()).collect();
    assert_eq!(kinds, ["module", "statement", "statement", "statement"]);
}

#[test]
fn typescript_declarations_exports_and_overloads() {
    let parsed = extract_checked(Language::TypeScript, WIDGETS_TS, "widgets.ts");
    assert!(parsed.diagnostics.is_empty());
    assert_eq!(parsed.title.as_deref(), Some("widgets"));
    let expected = [
        ("module", false, "widgets"),
        ("statement", true, "// Widgets shown on the dashboard."),
        ("statement", true, "export const DEFAULT_SIZE = 12;"),
        ("interface", true, "widgets.ts#Drawable"),
        ("type", true, "widgets.ts#Size"),
        ("type", true, "widgets.ts#Color"),
        ("type", true, "widgets.ts#Mode"),
        ("class", false, "widgets.ts#Widget"),
        ("header", true, "/**"),
        ("method", true, "widgets.ts#Widget.constructor"),
        ("method", true, "widgets.ts#Widget.draw"),
        ("method", true, "widgets.ts#Widget.resize"),
        ("method", true, "widgets.ts#Widget.onClick"),
        ("class", false, "widgets.ts#Shape"),
        ("header", true, "abstract class Shape {"),
        ("method", true, "widgets.ts#Shape.area"),
        ("class", true, "widgets.ts#Empty"),
        ("function", true, "widgets.ts#toRem"),
        ("function", true, "widgets.ts#clamp"),
        ("function", true, "widgets.ts#render"),
        ("function", true, "widgets.ts#mount"),
        (
            "statement",
            true,
            "render(new Widget(\"main\"), { context: null as never });",
        ),
    ];
    assert_eq!(outline(&parsed), owned(&expected));

    let drawable = symbol(&parsed, "widgets.ts#Drawable");
    assert!(
        drawable
            .text
            .starts_with("/** Anything that can be drawn. */\nexport interface")
    );
    assert_eq!(
        ids(drawable),
        [
            ("symbol", "widgets.ts#Drawable"),
            ("symbol_name", "Drawable"),
            ("export", "Drawable"),
        ]
    );
    assert!(ids(symbol(&parsed, "widgets.ts#Color")).contains(&("export", "Color")));
    assert!(
        !ids(symbol(&parsed, "widgets.ts#Mode"))
            .iter()
            .any(|i| i.0 == "export")
    );

    // The class takes its doc comment and decorator; its header leaf its fields.
    let widget = symbol(&parsed, "widgets.ts#Widget");
    assert!(
        widget
            .text
            .starts_with("/**\n * A resizable widget.\n */\n@sealed\nexport class")
    );
    assert!(widget.text.ends_with("};\n}"));
    let header = &parsed.units[8];
    assert!(header.text.starts_with("/**") && header.text.ends_with("height: DEFAULT_SIZE };"));
    assert!(ids(widget).contains(&("export", "Widget")));

    let draw = symbol(&parsed, "widgets.ts#Widget.draw");
    assert!(draw.text.starts_with("/** Draws the widget. */\n  draw("));
    assert_eq!(draw.heading_path, ["widgets", "Widget", "draw"]);
    assert_eq!(
        ids(draw),
        [
            ("symbol", "widgets.ts#Widget.draw"),
            ("symbol_name", "Widget.draw"),
            ("symbol_name", "draw"),
        ]
    );
    // Overload signatures, their comment and the implementation are one unit.
    let resize = symbol(&parsed, "widgets.ts#Widget.resize");
    assert!(
        resize
            .text
            .starts_with("// Emits `resize` after the size changed.\n  resize(size: Size): void;")
    );
    assert!(
        resize
            .text
            .ends_with("this.emit(\"resize\", this.size);\n  }")
    );
    // A function-valued field is a method, with its terminating `;`.
    let on_click = symbol(&parsed, "widgets.ts#Widget.onClick");
    assert!(
        on_click
            .text
            .starts_with("onClick = (event: MouseEvent): void => {")
    );
    assert!(on_click.text.ends_with("};"));

    let to_rem = symbol(&parsed, "widgets.ts#toRem");
    assert!(
        to_rem
            .text
            .starts_with("/** Pixels to rem. */\nexport const toRem = (px")
    );
    assert!(ids(to_rem).contains(&("export", "toRem")));
    assert!(
        symbol(&parsed, "widgets.ts#clamp")
            .text
            .starts_with("const clamp = function")
    );
    assert!(ids(symbol(&parsed, "widgets.ts#mount")).contains(&("export", "mount")));
}

#[test]
fn javascript_with_jsx() {
    let parsed = extract_checked(Language::JavaScript, COMPONENTS_JS, "src/components.js");
    assert!(parsed.diagnostics.is_empty());
    assert_eq!(parsed.title.as_deref(), Some("src/components"));
    let expected = [
        ("module", false, "src/components"),
        (
            "statement",
            true,
            "import React, { useState } from \"react\";",
        ),
        ("function", true, "src/components.js#Counter"),
        ("function", true, "src/components.js#List"),
        ("class", false, "src/components.js#App"),
        (
            "header",
            true,
            "export default class App extends React.Component {",
        ),
        ("method", true, "src/components.js#App.toggle"),
        ("method", true, "src/components.js#App.render"),
        ("function", true, "src/components.js#helper"),
        ("statement", true, "module.exports.helper = helper;"),
    ];
    assert_eq!(outline(&parsed), owned(&expected));
    let counter = symbol(&parsed, "src/components.js#Counter");
    assert!(
        counter
            .text
            .starts_with("// A counter button.\nexport function Counter")
    );
    assert!(
        counter
            .text
            .contains("<button onClick={() => setCount(count + 1)}>")
    );
    let list = symbol(&parsed, "src/components.js#List");
    assert!(
        list.text
            .starts_with("/**\n * Shows a list of items.\n */\nexport const List")
    );
    assert!(list.text.ends_with("</ul>\n);"));
    assert!(ids(symbol(&parsed, "src/components.js#App")).contains(&("export", "App")));
    assert_eq!(
        parsed.units[5].text,
        "export default class App extends React.Component {\n  state = { open: false };"
    );
    assert!(
        symbol(&parsed, "src/components.js#App.render")
            .text
            .contains("<div className=\"app\">")
    );
}

#[test]
fn tsx_components_and_generic_arrows() {
    let source = "import * as React from \"react\";\n\n/** Says hello. */\nexport const Hello = ({ name }: { name: string }) => <b>Hello {name}</b>;\n\nexport function identity<T,>(value: T): T {\n  return value;\n}\n";
    let parsed = extract_checked(Language::Tsx, source, "ui/Hello.tsx");
    assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
    assert_eq!(parsed.title.as_deref(), Some("ui/Hello"));
    let hello = symbol(&parsed, "ui/Hello.tsx#Hello");
    assert_eq!(hello.unit_type, UnitType::Function);
    assert!(
        hello
            .text
            .starts_with("/** Says hello. */\nexport const Hello")
    );
    assert!(ids(hello).contains(&("export", "Hello")));
    assert_eq!(
        symbol(&parsed, "ui/Hello.tsx#identity").unit_type,
        UnitType::Function
    );
}

#[test]
fn export_clauses_and_anonymous_defaults() {
    let source = "function a() {}\nfunction b() {}\nclass C { m() {} }\nexport { a, b as beta };\nexport default C;\n";
    let parsed = extract_checked(Language::JavaScript, source, "m.js");
    assert_eq!(ids(symbol(&parsed, "m.js#a"))[2], ("export", "a"));
    assert_eq!(ids(symbol(&parsed, "m.js#b"))[2], ("export", "beta"));
    assert!(ids(symbol(&parsed, "m.js#C")).contains(&("export", "C")));

    let parsed = extract_checked(
        Language::JavaScript,
        "export default function () {}\n",
        "d.js",
    );
    let unit = symbol(&parsed, "d.js#default");
    assert_eq!(unit.unit_type, UnitType::Function);
    assert!(ids(unit).contains(&("export", "default")));
    let parsed = extract_checked(
        Language::TypeScript,
        "export default class { run() {} }\n",
        "e.ts",
    );
    assert!(!symbol(&parsed, "e.ts#default").is_leaf);
    assert_eq!(
        symbol(&parsed, "e.ts#default.run").unit_type,
        UnitType::Method
    );
}

#[test]
fn python_type_aliases_and_annotated_lambdas() {
    let source = "type Vector = list[float]\ntype Pair[T] = tuple[T, T]\nnorm: Callable = lambda v: sum(v)\na = b = lambda: 1\n";
    let parsed = extract_checked(Language::Python, source, "vec.py");
    assert_eq!(symbol(&parsed, "vec.Vector").unit_type, UnitType::Type);
    assert_eq!(
        symbol(&parsed, "vec.Pair").text,
        "type Pair[T] = tuple[T, T]"
    );
    assert_eq!(symbol(&parsed, "vec.norm").unit_type, UnitType::Function);
    // A chained assignment names no single function.
    assert_eq!(parsed.units.last().unwrap().unit_type, UnitType::Statement);
}

#[test]
fn comments_attach_only_when_directly_above_on_their_own_line() {
    let source = "x = 1  # trailing\ndef f():\n    pass\n\n# detached\n\ndef g():\n    pass\n";
    let parsed = extract_checked(Language::Python, source, "m.py");
    assert_eq!(symbol(&parsed, "m.f").text, "def f():\n    pass");
    assert_eq!(symbol(&parsed, "m.g").text, "def g():\n    pass");
    let texts: Vec<_> = parsed.units.iter().map(|u| u.text.as_str()).collect();
    assert!(texts.contains(&"x = 1  # trailing"));
    assert!(texts.contains(&"# detached"));
}

#[test]
fn syntax_errors_keep_the_intact_declarations() {
    let parsed = extract_checked(Language::TypeScript, BROKEN_TS, "broken.ts");
    let expected = [
        ("module", false, "broken"),
        ("function", true, "broken.ts#fine"),
        ("function", true, "broken.ts#broken"),
        ("class", false, "broken.ts#Still"),
        ("header", true, "export class Still {"),
        ("method", true, "broken.ts#Still.works"),
    ];
    assert_eq!(outline(&parsed), owned(&expected));
    assert_eq!(parsed.diagnostics.len(), 1);
    let diagnostic = &parsed.diagnostics[0];
    assert_eq!(diagnostic.level, crate::Level::Warning);
    assert_eq!(diagnostic.code, ErrorCode::UnsupportedFormat);
    assert_eq!(diagnostic.path, "broken.ts");
    assert_eq!(diagnostic.locator.as_deref(), Some("5:33"));

    // Garbage between declarations becomes a statement; both neighbours survive.
    let source =
        "def ok():\n    return 1\n\n)))) = (\n\nclass K:\n    def m(self):\n        return 2\n";
    let parsed = extract_checked(Language::Python, source, "k.py");
    assert_eq!(symbol(&parsed, "k.ok").text, "def ok():\n    return 1");
    assert_eq!(symbol(&parsed, "k.K.m").unit_type, UnitType::Method);
    assert_eq!(parsed.diagnostics.len(), 1);
    assert_eq!(
        parsed.diagnostics[0].locator.as_deref().map(|l| &l[..2]),
        Some("4:")
    );
}

#[test]
fn empty_and_whitespace_files_have_only_the_module() {
    for source in ["", "\n\n  \n"] {
        let parsed = extract_checked(Language::Python, source, "empty.py");
        assert_eq!(parsed.units.len(), 1);
        assert!(parsed.diagnostics.is_empty());
    }
}

#[test]
fn unicode_and_crlf_spans_are_exact() {
    let source = "# Größe\r\ndef größe(wert):\r\n    \"\"\"Gibt die Größe zurück — ✓.\"\"\"\r\n    return wert\r\n\r\nclass Ä:\r\n    def ö(self):\r\n        return \"ü\"\r\n";
    let parsed = extract_checked(Language::Python, source, "de/maße.py");
    let f = symbol(&parsed, "de.maße.größe");
    assert!(f.text.starts_with("# Größe\r\ndef größe"));
    assert_eq!((f.span.line_start, f.span.line_end), (1, 4));
    assert_eq!(symbol(&parsed, "de.maße.Ä.ö").span.line_start, 7);
}

#[test]
fn deep_class_nesting_is_bounded() {
    let mut source = String::new();
    for depth in 0..40 {
        source.push_str(&"    ".repeat(depth));
        source.push_str(&format!("class C{depth}:\n"));
    }
    source.push_str(&"    ".repeat(40));
    source.push_str("def m(self):\n");
    source.push_str(&"    ".repeat(41));
    source.push_str("pass\n");
    let parsed = extract_checked(Language::Python, &source, "deep.py");
    let containers = parsed
        .units
        .iter()
        .filter(|u| u.unit_type == UnitType::Class && !u.is_leaf)
        .count();
    assert!(containers <= outline::MAX_NESTING);
}

#[test]
fn grammar_version_names_the_grammars_in_use() {
    for language in [
        Language::Python,
        Language::JavaScript,
        Language::TypeScript,
        Language::Tsx,
    ] {
        // Loads, i.e. the grammar's ABI is one this `tree-sitter` supports.
        assert!(syntax::parse(language, "x").is_some(), "{language:?}");
        if let Some(meta) = language.grammar().metadata() {
            let name = match language {
                Language::Tsx => "typescript",
                other => other.as_str(),
            };
            let version = format!(
                "{name}-{}.{}.{}",
                meta.major_version, meta.minor_version, meta.patch_version
            );
            assert!(
                GRAMMAR_VERSION.contains(&version),
                "{version} not in {GRAMMAR_VERSION}"
            );
        }
    }
}

#[test]
fn decorators_and_comments_attach_to_members() {
    let source = "class A:\n    def m(self):\n        pass\n    # about n\n    @staticmethod\n    def n():\n        pass\n\ndef f():\n    pass\n# about g\n@decorate\n# between\ndef g():\n    pass\n";
    let parsed = extract_checked(Language::Python, source, "a.py");
    assert_eq!(
        symbol(&parsed, "a.A.n").text,
        "# about n\n    @staticmethod\n    def n():\n        pass"
    );
    assert_eq!(symbol(&parsed, "a.f").text, "def f():\n    pass");
    assert_eq!(
        symbol(&parsed, "a.g").text,
        "# about g\n@decorate\n# between\ndef g():\n    pass"
    );

    // In TS class bodies decorators are siblings of their member, not children.
    let source = "class B {\n  @HostListener('click')\n  onClick() {}\n  // about get\n  get v(): number { return 1 }\n  ;\n  static { init(); }\n}\n";
    let parsed = extract_checked(Language::TypeScript, source, "b.ts");
    let kinds: Vec<_> = parsed.units.iter().map(|u| u.unit_type.as_str()).collect();
    assert_eq!(
        kinds,
        ["module", "class", "header", "method", "method", "statement"]
    );
    assert_eq!(parsed.units[2].text, "class B {");
    assert_eq!(
        symbol(&parsed, "b.ts#B.onClick").text,
        "@HostListener('click')\n  onClick() {}"
    );
    assert_eq!(
        symbol(&parsed, "b.ts#B.v").text,
        "// about get\n  get v(): number { return 1 }"
    );
    assert_eq!(parsed.units[5].text, ";\n  static { init(); }\n}");
}

#[test]
fn ambient_declarations_and_top_level_overloads() {
    let source = "declare function d(a: string): void;\nexport declare class E { m(): void; }\ndeclare module 'm' { export function g(): void; }\nnamespace N { export const x = 1; }\nexport function over(a: string): void;\nexport function over(a: any) {}\n";
    let parsed = extract_checked(Language::TypeScript, source, "amb.ts");
    assert_eq!(symbol(&parsed, "amb.ts#d").unit_type, UnitType::Function);
    assert!(ids(symbol(&parsed, "amb.ts#E")).contains(&("export", "E")));
    assert_eq!(symbol(&parsed, "amb.ts#E.m").text, "m(): void;");
    // Module and namespace blocks stay statements (their members are not symbols yet).
    assert!(
        parsed
            .units
            .iter()
            .any(|u| u.unit_type == UnitType::Statement
                && u.text.starts_with("declare module 'm'")
                && u.text.ends_with("export const x = 1; }"))
    );
    let over = symbol(&parsed, "amb.ts#over");
    assert_eq!(
        over.text,
        "export function over(a: string): void;\nexport function over(a: any) {}"
    );
    assert_eq!(
        parsed
            .units
            .iter()
            .filter(|u| u.anchor.as_deref() == Some("amb.ts#over"))
            .count(),
        1
    );
}
