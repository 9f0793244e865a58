//! The code graph end to end: relations stored at publication, the graph channel's "found via"
//! paths, `inspect symbol`, relation-set reuse and the syntax cache.

use std::fs;
use std::path::Path;

use rusqlite::Connection;
use tychora_core::Workspace;
use tychora_core::ingest::{AddRequest, Requester};
use tychora_core::job::Outcome;
use tychora_core::query::QueryRequest;

mod common;
use common::add;

const LEX: &str = "\"\"\"Lexing.\"\"\"\n\n\ndef tokenize(text):\n    \"\"\"Split text into tokens.\"\"\"\n    return text.split()\n";
const PARSE: &str = "from .lex import tokenize\nfrom .base import Node\n\n\nclass Parser(Node):\n    \"\"\"Builds syntax trees from marmalade sources.\"\"\"\n\n    def parse(self, source):\n        \"\"\"Parse marmalade source text.\"\"\"\n        words = tokenize(source)\n        return self.visit(words)\n";
const BASE: &str = "class Node:\n    def visit(self, items):\n        return list(items)\n";

fn repo(dir: &Path) {
    fs::create_dir_all(dir.join("lang")).unwrap();
    fs::write(dir.join("lang/__init__.py"), "").unwrap();
    fs::write(dir.join("lang/lex.py"), LEX).unwrap();
    fs::write(dir.join("lang/parse.py"), PARSE).unwrap();
    fs::write(dir.join("lang/base.py"), BASE).unwrap();
}

fn count(db: &Path, sql: &str) -> i64 {
    Connection::open(db)
        .unwrap()
        .query_row(sql, [], |r| r.get(0))
        .unwrap()
}

#[test]
fn relations_graph_channel_and_inspect_symbol() {
    let tmp = tempfile::tempdir().unwrap();
    let ws_dir = tmp.path().join("ws");
    let src = tmp.path().join("repo");
    repo(&src);
    Workspace::init_with_profile(&ws_dir, "code").unwrap();
    let ws = Workspace::open(&ws_dir).unwrap();
    let receipt = add(&ws, &src);
    assert_eq!(receipt.files.added, 3, "{:?}", receipt.diagnostics); // the empty __init__.py is skipped
    let db = ws_dir.join("corpus.sqlite3");

    // Relation assertions with their sites, bound to revisions.
    let relation = |kind: &str, text: &str| {
        count(
            &db,
            &format!(
                "SELECT count(*) FROM relations WHERE kind = '{kind}' AND ref_text = '{text}' AND outcome = 'resolved' AND target_unit_id IS NOT NULL"
            ),
        )
    };
    assert_eq!(relation("calls", "tokenize"), 1);
    assert_eq!(
        relation("calls", "self.visit"),
        1,
        "found on the base class"
    );
    assert_eq!(relation("inherits", "Node"), 1);
    assert_eq!(relation("imports", ".lex.tokenize"), 1);
    assert_eq!(relation("defines", "lang.lex.tokenize"), 1);
    assert_eq!(relation("contains", "lang.parse.Parser.parse"), 1);
    assert_eq!(
        count(
            &db,
            "SELECT line_start FROM relations WHERE kind = 'calls' AND ref_text = 'tokenize'"
        ),
        10
    );
    assert_eq!(
        count(
            &db,
            "SELECT count(*) FROM relations WHERE outcome = 'unresolved' AND reason = 'builtin' AND ref_text = 'list'"
        ),
        1
    );

    // The graph channel reaches `tokenize` from `Parser.parse`, which only the words match.
    let result = ws
        .search(&QueryRequest {
            query: "marmalade source".into(),
            channels: Some(vec!["exact".into(), "lexical".into(), "graph".into()]),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(
        result.segments[0].locator.anchor.as_deref(),
        Some("lang.parse.Parser.parse")
    );
    let via_graph = result
        .segments
        .iter()
        .find(|s| s.locator.anchor.as_deref() == Some("lang.lex.tokenize"))
        .expect("tokenize reached through the graph");
    assert!(via_graph.channels.iter().any(|c| c.channel == "graph"));
    let hop = &via_graph.found_via[0];
    assert_eq!(
        hop.describe(),
        "`Parser.parse` calls `tokenize` (lang/parse.py:10)"
    );
    // Without the graph channel (the code profile's default), tokenize is not found at all.
    let lexical = ws
        .search(&QueryRequest {
            query: "marmalade source".into(),
            ..Default::default()
        })
        .unwrap();
    assert!(lexical.segments.iter().all(
        |s| s.found_via.is_empty() && s.locator.anchor.as_deref() != Some("lang.lex.tokenize")
    ));

    // Test files rank at half their fused score in the code pack (pack.fusion.test_weight).
    fs::create_dir_all(src.join("tests")).unwrap();
    fs::write(
        src.join("tests/test_parse.py"),
        "from lang.parse import Parser\n\n\ndef test_marmalade():\n    \"\"\"Parse marmalade source.\"\"\"\n    assert Parser().parse(\"marmalade\")\n",
    )
    .unwrap();
    add(&ws, &src);
    let ranked = ws
        .search(&QueryRequest {
            query: "marmalade source".into(),
            ..Default::default()
        })
        .unwrap();
    let rrf = |s: &tychora_core::query::Segment| -> f64 {
        s.channels
            .iter()
            .map(|c| if c.channel == "exact" { 2.0 } else { 1.0 } / (60.0 + c.rank as f64))
            .sum()
    };
    let test = ranked
        .segments
        .iter()
        .find(|s| s.source.path == "tests/test_parse.py")
        .expect("the test is found");
    assert!((test.score - 0.5 * rrf(test)).abs() < 1e-12);
    let implementation = &ranked.segments[0];
    assert_eq!(implementation.source.path, "lang/parse.py");
    assert!((implementation.score - rrf(implementation)).abs() < 1e-12);
    fs::remove_dir_all(src.join("tests")).unwrap();
    assert_eq!(add(&ws, &src).files.removed, 1);

    // inspect symbol: definition, caller, callees with outcomes.
    let report = ws.inspect_symbol("tokenize", None, None).unwrap();
    assert_eq!(report.definitions.len(), 1);
    let def = &report.definitions[0];
    assert_eq!(def.symbol, "lang.lex.tokenize");
    assert_eq!(def.site.citation, "lang/lex.py:4-6");
    assert_eq!(def.signature, "def tokenize(text):");
    assert_eq!(def.callers.len(), 1);
    assert_eq!(def.callers[0].symbol.as_deref(), Some("Parser.parse"));
    assert_eq!(def.callers[0].site.citation, "lang/parse.py:10");
    assert!(
        def.callees
            .iter()
            .any(|c| c.text == "text.split" && c.outcome == "unresolved")
    );
    let parse = ws.inspect_symbol("Parser.parse", None, None).unwrap();
    let callees: Vec<_> = parse.definitions[0]
        .callees
        .iter()
        .map(|c| (c.text.as_str(), c.symbol.as_deref()))
        .collect();
    assert_eq!(
        callees,
        [
            ("tokenize", Some("tokenize")),
            ("self.visit", Some("Node.visit"))
        ]
    );
    assert!(
        ws.inspect_symbol("tokenize", Some("elsewhere"), None)
            .unwrap()
            .definitions
            .is_empty()
    );
    assert!(ws.inspect_symbol("  ", None, None).is_err());

    // An unchanged re-add publishes nothing and parses nothing; a change re-resolves the root.
    let cache_rows = count(&db, "SELECT count(*) FROM syntax_cache");
    let again = add(&ws, &src);
    assert!(!again.published);
    // Two sets so far: without and with the test file; removing it again reused the first.
    assert_eq!(count(&db, "SELECT count(*) FROM relation_sets"), 2);
    fs::write(
        src.join("lang/lex.py"),
        LEX.replace("text.split()", "text.split(None)"),
    )
    .unwrap();
    let changed = add(&ws, &src);
    assert_eq!(changed.files.changed, 1);
    assert_eq!(count(&db, "SELECT count(*) FROM relation_sets"), 3);
    assert_eq!(
        count(&db, "SELECT count(*) FROM syntax_cache"),
        cache_rows + 1
    );
    let report = ws.inspect_symbol("tokenize", None, None).unwrap();
    assert_eq!(
        report.definitions[0].callers.len(),
        1,
        "callers survive a callee change"
    );

    // The same bytes in another collection reuse the cached parses: no new cache rows.
    let copy = tmp.path().join("copy");
    repo(&copy);
    fs::write(
        copy.join("lang/lex.py"),
        LEX.replace("text.split()", "text.split(None)"),
    )
    .unwrap();
    let receipt = ws
        .add(
            &AddRequest {
                paths: vec![copy.display().to_string()],
                collection: Some("mirror".into()),
                ..Default::default()
            },
            Requester::Owner,
            &|_| {},
        )
        .unwrap();
    assert_eq!(receipt.files.added, 3);
    assert_eq!(
        count(&db, "SELECT count(*) FROM syntax_cache"),
        cache_rows + 1
    );
    assert_eq!(count(&db, "SELECT count(*) FROM relation_sets"), 4);
    // Pinned to the first snapshot, inspect still sees the first relations.
    let first = ws
        .inspect_symbol(
            "tokenize",
            None,
            receipt.previous_snapshot_id.map(|s| s - 1),
        )
        .unwrap();
    assert_eq!(first.definitions.len(), 1);
    assert_eq!(
        ws.inspect_symbol("tokenize", None, None)
            .unwrap()
            .definitions
            .len(),
        2
    );
}

#[test]
fn bad_code_inputs_get_one_diagnostic_each_and_the_rest_is_indexed() {
    let tmp = tempfile::tempdir().unwrap();
    let ws_dir = tmp.path().join("ws");
    let src = tmp.path().join("repo");
    repo(&src);
    // A syntax error: still indexed through error recovery, with a warning at its line.
    fs::write(
        src.join("lang/broken.py"),
        "def ok():\n    return 1\n\ndef broken(:\n    pass\n\nclass After:\n    def m(self):\n        return ok()\n",
    )
    .unwrap();
    // Latin-1 bytes: not UTF-8.
    fs::write(src.join("lang/latin1.py"), b"# caf\xe9\nx = 1\n").unwrap();
    // NUL bytes: binary.
    fs::write(src.join("lang/blob.py"), b"x = 1\n\0\0\0").unwrap();
    // Oversize (above the configured cap) and minified (a line longer than max_line_bytes).
    fs::write(src.join("lang/huge.py"), "x = 1\n".repeat(2_000)).unwrap();
    fs::write(
        src.join("lang/min.js"),
        format!("var a=[{}];\n", "1,".repeat(3_000)),
    )
    .unwrap();
    // A symlink out of the repository: never followed.
    let outside = tmp.path().join("secret.py");
    fs::write(&outside, "TOKEN = 'do not capture'\n").unwrap();
    std::os::unix::fs::symlink(&outside, src.join("lang/leak.py")).unwrap();
    Workspace::init_with_profile(&ws_dir, "code").unwrap();
    let config = fs::read_to_string(ws_dir.join("workspace.toml"))
        .unwrap()
        .replace("max_file_bytes = 67108864", "max_file_bytes = 8000");
    fs::write(ws_dir.join("workspace.toml"), config).unwrap();
    let ws = Workspace::open(&ws_dir).unwrap();
    let receipt = add(&ws, &src);
    let diag = |path: &str| {
        let found: Vec<_> = receipt
            .diagnostics
            .iter()
            .filter(|d| d.path == path)
            .map(|d| (d.level.as_str(), d.code.as_str(), d.message.as_str()))
            .collect();
        assert_eq!(found.len(), 1, "{path}: {found:?}");
        found[0]
    };
    let (level, code, message) = diag("lang/broken.py");
    assert_eq!((level, code), ("warning", "E_UNSUPPORTED_FORMAT"));
    assert!(message.contains("syntax error at line 4"), "{message}");
    let (level, code, message) = diag("lang/latin1.py");
    assert_eq!((level, code), ("error", "E_UNSUPPORTED_FORMAT"));
    assert!(message.contains("invalid UTF-8 at byte 5"), "{message}");
    assert_eq!(diag("lang/blob.py").1, "E_UNSUPPORTED_FORMAT");
    assert_eq!(diag("lang/huge.py").1, "E_LIMIT_EXCEEDED");
    assert_eq!(diag("lang/min.js").1, "E_LIMIT_EXCEEDED");
    let leak = diag("lang/leak.py");
    assert!(leak.2.contains("symbolic link"), "{leak:?}");
    assert_eq!(receipt.status, Outcome::Partial);
    assert_eq!(
        receipt.added,
        [
            "lang/base.py",
            "lang/broken.py",
            "lang/lex.py",
            "lang/parse.py"
        ]
    );
    // The damaged file's intact declarations are symbols, and its call resolves.
    let report = ws.inspect_symbol("After.m", None, None).unwrap();
    assert_eq!(report.definitions.len(), 1);
    assert_eq!(
        report.definitions[0].callees[0].symbol.as_deref(),
        Some("ok")
    );
    // Nothing of the symlink's target was captured.
    let hits = ws
        .search(&QueryRequest {
            query: "do not capture TOKEN".into(),
            ..Default::default()
        })
        .unwrap();
    assert!(
        hits.segments
            .iter()
            .all(|s| !s.text.contains("do not capture"))
    );
}
