//! Sensitivity labels on captured sources (issue 14): the ceiling past which nothing is captured,
//! a query's `max_sensitivity` applied before ranking in every channel with counts that say
//! nothing of what it hides, and relabelling past the ceiling erasing the source.

use std::fs;
use std::path::Path;

use tychora_core::ingest::{AddRequest, Receipt, Requester};
use tychora_core::query::{QueryRequest, QueryResult};
use tychora_core::{ErrorCode, Workspace};

const DOCS: [(&str, &str, &str); 3] = [
    (
        "public.md",
        "public",
        "# Glacier survey\n\nGlacier GL-7 retreated forty metres; the public report names the valley.\n",
    ),
    (
        "internal.md",
        "internal",
        "# Glacier budget\n\nGlacier GL-7 monitoring costs rose; the internal budget covers two stations.\n",
    ),
    (
        "confidential.md",
        "confidential",
        "# Glacier tender\n\nGlacier GL-7 drilling tender: the confidential bid from the contractor.\n",
    ),
];

fn add_labelled(ws: &Workspace, path: &Path, level: Option<&str>) -> tychora_core::Result<Receipt> {
    ws.add(
        &AddRequest {
            paths: vec![path.display().to_string()],
            sensitivity: level.map(String::from),
            ..Default::default()
        },
        Requester::Owner,
        &|_| {},
    )
}

fn search(ws: &Workspace, query: &str, max: Option<&str>, snapshot: Option<i64>) -> QueryResult {
    ws.search(&QueryRequest {
        query: query.into(),
        max_sensitivity: max.map(String::from),
        snapshot_id: snapshot,
        ..Default::default()
    })
    .unwrap()
}

fn paths(result: &QueryResult) -> Vec<String> {
    let mut p: Vec<String> = result
        .segments
        .iter()
        .map(|s| s.source.path.clone())
        .collect();
    p.sort();
    p
}

fn count(ws_dir: &Path, sql: &str) -> i64 {
    let db = rusqlite::Connection::open(ws_dir.join("corpus.sqlite3")).unwrap();
    db.query_row(sql, [], |r| r.get(0)).unwrap()
}

/// A workspace with `docs` written under `root/<name>/docs`, the folder added (every file gets
/// the default label) and each file then relabelled to its own level.
fn labelled(
    root: &Path,
    name: &str,
    docs: &[(&str, &str, &str)],
) -> (Workspace, std::path::PathBuf) {
    let dir = root.join(name);
    let files = dir.join("docs");
    fs::create_dir_all(&files).unwrap();
    let ws_dir = dir.join("ws");
    Workspace::init(&ws_dir).unwrap();
    let ws = Workspace::open(&ws_dir).unwrap();
    for (file, _, text) in docs {
        fs::write(files.join(file), text).unwrap();
    }
    add_labelled(&ws, &files, None).unwrap();
    for (file, level, _) in docs {
        let report = ws.relabel(file, level, "test labels", &|_| {}).unwrap();
        assert!(report.erased.is_none());
    }
    (ws, ws_dir)
}

#[test]
fn a_lower_max_sensitivity_hides_sources_before_ranking_and_counts_never_reveal_them() {
    let tmp = tempfile::tempdir().unwrap();
    let (ws, ws_dir) = labelled(tmp.path(), "all", &DOCS);
    // The same public and internal files, and no confidential one: what a query limited to
    // internal must be indistinguishable from.
    let (twin, _) = labelled(tmp.path(), "twin", &DOCS[..2]);
    assert_eq!(
        count(
            &ws_dir,
            "SELECT COUNT(*) FROM sources WHERE sensitivity = 'confidential'"
        ),
        1
    );
    for query in ["glacier tender contractor", "GL-7", "confidential bid"] {
        let hidden = search(&ws, query, Some("internal"), None);
        let never = search(&twin, query, None, None);
        assert_eq!(paths(&hidden), paths(&never), "{query}");
        assert_eq!(
            hidden.coverage.eligible_sources, never.coverage.eligible_sources,
            "{query}"
        );
        assert_eq!(hidden.coverage.returned, never.coverage.returned, "{query}");
        for (a, b) in hidden.segments.iter().zip(&never.segments) {
            assert_eq!(a.text, b.text);
        }
        assert!(!paths(&hidden).contains(&"confidential.md".to_string()));
    }
    let all = search(&ws, "glacier tender contractor", None, None);
    assert!(paths(&all).contains(&"confidential.md".to_string()));
    assert_eq!(all.coverage.eligible_sources, 3);
    let public = search(&ws, "glacier", Some("public"), None);
    assert_eq!(paths(&public), ["public.md"]);
    assert_eq!(public.coverage.eligible_sources, 1);
    let unknown = ws
        .search(&QueryRequest {
            query: "glacier".into(),
            max_sensitivity: Some("top-secret".into()),
            ..Default::default()
        })
        .unwrap_err();
    assert_eq!(unknown.code(), ErrorCode::InvalidArgument);
    assert!(
        unknown
            .to_string()
            .contains("public, internal, confidential, secret")
    );
}

#[test]
fn nothing_above_the_ceiling_is_captured_and_relabelling_past_it_erases_the_source() {
    let tmp = tempfile::tempdir().unwrap();
    let docs = tmp.path().join("docs");
    fs::create_dir_all(&docs).unwrap();
    let ws_dir = tmp.path().join("ws");
    Workspace::init(&ws_dir).unwrap();
    let ws = Workspace::open(&ws_dir).unwrap();
    fs::write(
        docs.join("secret.md"),
        "# Keys\n\nThe launch codes are kept in vault nine.\n",
    )
    .unwrap();
    let refused = add_labelled(&ws, &docs.join("secret.md"), Some("secret")).unwrap_err();
    assert_eq!(refused.code(), ErrorCode::Forbidden);
    assert!(refused.to_string().contains("ceiling"), "{refused}");
    assert_eq!(count(&ws_dir, "SELECT COUNT(*) FROM sources"), 0);
    assert_eq!(count(&ws_dir, "SELECT COUNT(*) FROM artifacts"), 0);
    fs::remove_file(docs.join("secret.md")).unwrap();

    // An agent cannot label at all (it could lower a label to read what it may not).
    let agent = ws.add(
        &AddRequest {
            paths: vec![docs.display().to_string()],
            sensitivity: Some("public".into()),
            ..Default::default()
        },
        Requester::Agent,
        &|_| {},
    );
    assert_eq!(agent.unwrap_err().code(), ErrorCode::Forbidden);

    fs::write(
        docs.join("alpha.md"),
        "# Alpha\n\nGlaciers retreat in warm summers.\n",
    )
    .unwrap();
    fs::write(
        docs.join("beta.md"),
        "# Beta\n\nVolcanoes vent sulphur into the stratosphere.\n",
    )
    .unwrap();
    let first = add_labelled(&ws, &docs, None).unwrap();
    let before = first.snapshot_id;
    assert_eq!(
        count(
            &ws_dir,
            "SELECT COUNT(*) FROM sources WHERE sensitivity = 'internal'"
        ),
        2,
        "a new source gets the default label"
    );
    assert_eq!(
        paths(&search(&ws, "volcanoes sulphur", None, None)),
        ["beta.md"]
    );

    let report = ws
        .relabel("beta.md", "secret", "it names the vent sites", &|_| {})
        .unwrap();
    assert_eq!(report.from.as_deref(), Some("internal"));
    assert_eq!(report.to, "secret");
    let erased = report
        .erased
        .expect("above the ceiling, the source is erased");
    assert_eq!(erased.erased.len(), 1);
    assert!(erased.receipt.published);
    assert!(paths(&search(&ws, "volcanoes sulphur", None, None)).is_empty());
    // A label is policy: the snapshot pinned before the relabel hides it too.
    assert!(paths(&search(&ws, "volcanoes sulphur", None, before)).is_empty());
    assert_eq!(count(&ws_dir, "SELECT COUNT(*) FROM tombstones"), 1);

    // A sync of the folder leaves it out, before reading a byte of it.
    let sync = add_labelled(&ws, &docs, None).unwrap();
    let withheld: Vec<_> = sync
        .diagnostics
        .iter()
        .filter(|d| d.path == "beta.md")
        .collect();
    assert_eq!(withheld.len(), 1, "{:?}", sync.diagnostics);
    assert_eq!(withheld[0].code, ErrorCode::Forbidden);
    assert!(
        withheld[0]
            .message
            .contains("above this workspace's sensitivity ceiling")
    );
    assert!(paths(&search(&ws, "volcanoes sulphur", None, None)).is_empty());
    assert_eq!(paths(&search(&ws, "glaciers", None, None)), ["alpha.md"]);

    // Relabelling within the ceiling changes the label and nothing else.
    let within = ws
        .relabel("alpha.md", "public", "cleared for release", &|_| {})
        .unwrap();
    assert!(within.erased.is_none());
    assert_eq!(
        paths(&search(&ws, "glaciers", Some("public"), None)),
        ["alpha.md"]
    );
    let bad = ws.relabel("alpha.md", "top-secret", "no such level", &|_| {});
    assert_eq!(bad.unwrap_err().code(), ErrorCode::InvalidArgument);
}

#[test]
fn a_ceiling_lowered_after_capture_hides_what_is_now_above_it_and_the_next_sync_drops_it() {
    let tmp = tempfile::tempdir().unwrap();
    let (ws, ws_dir) = labelled(tmp.path(), "ws", &DOCS);
    assert_eq!(paths(&search(&ws, "GL-7", None, None)).len(), 3);
    drop(ws);
    let config = ws_dir.join("workspace.toml");
    let text = fs::read_to_string(&config).unwrap();
    fs::write(
        &config,
        text.replace("ceiling = \"confidential\"", "ceiling = \"internal\""),
    )
    .unwrap();
    let ws = Workspace::open(&ws_dir).unwrap();
    let found = search(&ws, "GL-7", None, None);
    assert_eq!(paths(&found), ["internal.md", "public.md"]);
    assert_eq!(found.coverage.eligible_sources, 2);
    // Asking for more than the ceiling is answered up to the ceiling.
    assert_eq!(paths(&search(&ws, "GL-7", Some("secret"), None)).len(), 2);
    let sync = add_labelled(&ws, &ws_dir.parent().unwrap().join("docs"), None).unwrap();
    assert!(
        sync.diagnostics
            .iter()
            .any(|d| d.path == "confidential.md" && d.code == ErrorCode::Forbidden),
        "{:?}",
        sync.diagnostics
    );
    assert!(sync.published);
    assert_eq!(
        count(
            &ws_dir,
            &format!(
                "SELECT COUNT(*) FROM snapshot_members m JOIN sources s ON s.id = m.source_id WHERE m.snapshot_id = {} AND s.rel_path = 'confidential.md'",
                sync.snapshot_id.unwrap()
            )
        ),
        0,
        "the new snapshot no longer holds it"
    );
}
