//! End-to-end tests of the core on real temporary workspaces.

use std::fs;
use std::path::Path;

use tychora_core::ingest::{AddRequest, Requester};
use tychora_core::job::Outcome;
use tychora_core::manage::{Evidence, SourceQuery};
use tychora_core::query::QueryRequest;
use tychora_core::{ErrorCode, Workspace};

mod common;
use common::add;

fn search(ws: &Workspace, query: &str) -> tychora_core::query::QueryResult {
    ws.search(&QueryRequest {
        query: query.into(),
        ..Default::default()
    })
    .unwrap()
}

fn setup() -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let ws_dir = tmp.path().join("ws");
    let docs = tmp.path().join("docs");
    fs::create_dir_all(docs.join("guide")).unwrap();
    fs::write(docs.join("guide/install.md"), "# Install\n\nRun the installer with `npm i tychora`.\n\n## Snapshots\n\nPublication switches the snapshot pointer atomically.\n").unwrap();
    fs::write(
        docs.join("notes.txt"),
        "Plain notes about tantivy segments.\n\nSecond paragraph on BM25 scoring.\n",
    )
    .unwrap();
    fs::write(docs.join("records.json"), r#"[{"id": "REC-1", "body": "first record about zebras"}, {"id": "REC-2", "body": "second record about lions"}]"#).unwrap();
    Workspace::init(&ws_dir).unwrap();
    (tmp, ws_dir, docs)
}

#[test]
fn add_search_cite_and_resync() {
    let (_tmp, ws_dir, docs) = setup();
    let ws = Workspace::open(&ws_dir).unwrap();
    let receipt = add(&ws, &docs);
    assert_eq!(
        receipt.status,
        Outcome::Succeeded,
        "{:?}",
        receipt.diagnostics
    );
    assert_eq!(receipt.files.added, 3);
    let first_snapshot = receipt.snapshot_id.unwrap();

    let result = search(&ws, "snapshot pointer publication");
    let top = &result.segments[0];
    assert_eq!(top.source.path, "guide/install.md");
    assert_eq!(top.locator.heading_path, ["Install", "Snapshots"]);
    assert_eq!((top.locator.line_start, top.locator.line_end), (5, 7));
    let bytes = fs::read(docs.join("guide/install.md")).unwrap();
    assert_eq!(
        &bytes[top.locator.byte_start as usize..top.locator.byte_end as usize],
        top.text.as_bytes()
    );
    assert_eq!(top.citation, "guide/install.md:5-7");

    // The exact channel finds a JSON id, and the record's pointer is cited.
    let exact = search(&ws, "REC-2");
    assert_eq!(
        exact.segments[0].locator.json_pointer.as_deref(),
        Some("/1")
    );
    assert!(
        exact.segments[0]
            .channels
            .iter()
            .any(|c| c.channel == "exact" && c.rank == 1)
    );

    // Unchanged bytes: no new revision, no new snapshot.
    let again = add(&ws, &docs);
    assert_eq!(
        (again.files.unchanged, again.files.added, again.published),
        (3, 0, false)
    );
    assert_eq!(again.snapshot_id, Some(first_snapshot));

    // Changed bytes: a new revision of the same source; the old revision stays retrievable.
    fs::write(
        docs.join("notes.txt"),
        "Plain notes, revised, about inverted indexes.\n",
    )
    .unwrap();
    fs::remove_file(docs.join("records.json")).unwrap();
    let sync = add(&ws, &docs);
    assert_eq!(
        (sync.files.changed, sync.files.removed, sync.files.unchanged),
        (1, 1, 1),
        "{sync:?}"
    );
    assert_eq!(sync.removed, ["records.json"]);
    let newest = search(&ws, "inverted indexes");
    assert_eq!(newest.segments[0].revision.seq, 2);
    assert!(
        search(&ws, "zebras").segments.is_empty(),
        "a removed file leaves the snapshot"
    );
    // A reader pinned to the first snapshot still sees the old text and the removed file.
    let pinned = ws
        .search(&QueryRequest {
            query: "tantivy segments".into(),
            snapshot_id: Some(first_snapshot),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(pinned.segments[0].revision.seq, 1);
    let pinned_zebra = ws
        .search(&QueryRequest {
            query: "zebras".into(),
            snapshot_id: Some(first_snapshot),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(pinned_zebra.segments.len(), 1);

    let report = ws.verify().unwrap();
    assert!(report.ok, "{:?}", report.problems);
    assert_eq!(report.snapshots_checked, 2);
    let status = ws.status().unwrap();
    assert_eq!(status.counts.revisions, 4);
    assert_eq!(status.counts.query_runs, 6);
    let tables = status.bytes.tables.as_deref().unwrap();
    assert!(tables.iter().any(|t| t.table == "chunks"), "{tables:?}");
    // Without the per-table breakdown: the same counts, no table measured.
    let brief = ws
        .status_with(tychora_core::manage::StatusOptions { tables: false })
        .unwrap();
    assert!(brief.bytes.tables.is_none());
    assert_eq!(
        serde_json::to_value(&brief.counts).unwrap(),
        serde_json::to_value(&status.counts).unwrap()
    );
}

#[test]
fn one_owner_and_explicit_migration() {
    let (_tmp, ws_dir, _docs) = setup();
    let ws = Workspace::open(&ws_dir).unwrap();
    let err = Workspace::open(&ws_dir).unwrap_err();
    assert_eq!(err.code(), ErrorCode::Locked);
    assert!(err.to_string().contains(&std::process::id().to_string()));
    drop(ws);

    // A workspace whose schema ledger is behind needs `manage migrate`; nothing migrates silently.
    let conn = rusqlite::Connection::open(ws_dir.join("corpus.sqlite3")).unwrap();
    conn.execute("DELETE FROM schema_migrations", []).unwrap();
    drop(conn);
    let err = Workspace::open(&ws_dir).unwrap_err();
    assert_eq!(err.code(), ErrorCode::MigrationRequired);
    assert!(err.to_string().contains("tychora manage migrate"));
}

#[test]
fn bad_inputs_get_one_diagnostic_each_and_lose_nothing() {
    let (_tmp, ws_dir, docs) = setup();
    let ws = Workspace::open(&ws_dir).unwrap();
    let first = add(&ws, &docs);
    let bad = docs.join("bad");
    fs::create_dir_all(&bad).unwrap();
    fs::write(bad.join("binary.md"), b"PK\x03\x04\x00\x00binary").unwrap();
    fs::write(bad.join("latin1.txt"), b"caf\xe9 au lait").unwrap();
    fs::write(bad.join("broken.json"), "{\"a\": [1, 2,\n}").unwrap();
    fs::write(bad.join("empty.md"), "").unwrap();
    fs::write(bad.join("image.png"), b"\x89PNG").unwrap();
    std::os::unix::fs::symlink(bad.join("loop-b"), bad.join("loop-a")).unwrap();
    std::os::unix::fs::symlink(bad.join("loop-a"), bad.join("loop-b")).unwrap();
    fs::write(bad.join("good.md"), "# Good\n\nStill indexed.\n").unwrap();

    let receipt = add(&ws, &docs);
    assert_eq!(receipt.status, Outcome::Partial);
    let by_path = |p: &str| {
        receipt
            .diagnostics
            .iter()
            .filter(|d| d.path == p)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        by_path("bad/binary.md")[0].code,
        ErrorCode::UnsupportedFormat
    );
    assert!(
        by_path("bad/latin1.txt")[0]
            .message
            .contains("invalid UTF-8 at byte 3")
    );
    assert_eq!(
        by_path("bad/broken.json")[0].locator.as_deref(),
        Some("2:1")
    );
    assert!(by_path("bad/empty.md")[0].message.contains("empty"));
    // A truncated picture is read as an image, and refused as one.
    let image = by_path("bad/image.png");
    assert_eq!(
        (image[0].level.as_str(), image[0].code.as_str()),
        ("error", "E_UNSUPPORTED_FORMAT")
    );
    assert!(image[0].message.contains("PNG"), "{}", image[0].message);
    assert!(by_path("bad/loop-a")[0].message.contains("symbolic link"));
    assert_eq!(by_path("bad/binary.md").len(), 1);
    assert_eq!(receipt.files.added, 1);
    // Earlier evidence is intact and the good file is searchable.
    assert_eq!(search(&ws, "zebras").segments.len(), 1);
    assert_eq!(
        search(&ws, "still indexed").segments[0].source.path,
        "bad/good.md"
    );
    assert_ne!(receipt.snapshot_id, first.snapshot_id);
}

#[test]
fn outside_roots_and_oversize_are_refused_when_configured() {
    let (tmp, ws_dir, docs) = setup();
    let config = fs::read_to_string(ws_dir.join("workspace.toml")).unwrap();
    let config = config
        .replace(
            "roots = []",
            &format!("roots = [{:?}]", docs.join("guide").display().to_string()),
        )
        .replace("auto_add_roots = true", "auto_add_roots = false")
        .replace("max_file_bytes = 67108864", "max_file_bytes = 40");
    fs::write(ws_dir.join("workspace.toml"), config).unwrap();
    let ws = Workspace::open(&ws_dir).unwrap();
    let receipt = ws
        .add(
            &AddRequest {
                paths: vec![
                    docs.join("notes.txt").display().to_string(),
                    docs.join("guide").display().to_string(),
                ],
                ..Default::default()
            },
            Requester::Owner,
            &|_| {},
        )
        .unwrap();
    assert_eq!(receipt.status, Outcome::Failed);
    let codes: Vec<_> = receipt
        .diagnostics
        .iter()
        .map(|d| (d.path.as_str(), d.code.as_str()))
        .collect();
    assert!(
        codes
            .iter()
            .any(|(p, c)| p.ends_with("notes.txt") && *c == "E_INVALID_ARGUMENT"),
        "{codes:?}"
    );
    assert!(
        codes.contains(&("install.md", "E_LIMIT_EXCEEDED")),
        "{codes:?}"
    );
    drop(tmp);
}

#[test]
fn queued_jobs_are_durable_and_run_in_order() {
    let (_tmp, ws_dir, docs) = setup();
    let ws = Workspace::open(&ws_dir).unwrap();
    let request = AddRequest {
        paths: vec![docs.display().to_string()],
        ..Default::default()
    };
    let first = ws.enqueue_add(&request, Requester::Owner).unwrap();
    let second = ws.enqueue_add(&request, Requester::Owner).unwrap();
    assert_eq!(ws.queued_jobs().unwrap(), vec![first, second]);
    assert_eq!(
        ws.enqueue_add(&AddRequest::default(), Requester::Owner)
            .unwrap_err()
            .code(),
        ErrorCode::InvalidArgument
    );
    drop(ws);

    // Queued jobs survive a restart; running one twice is refused.
    let ws = Workspace::open(&ws_dir).unwrap();
    assert_eq!(ws.queued_jobs().unwrap(), vec![first, second]);
    let receipt = ws.run_job(first, &|_| {}).unwrap();
    assert_eq!(receipt.files.added, 3);
    assert_eq!(
        ws.run_job(first, &|_| {}).unwrap_err().code(),
        ErrorCode::Conflict
    );
    assert_eq!(
        ws.run_job(999, &|_| {}).unwrap_err().code(),
        ErrorCode::NotFound
    );
    let again = ws.run_job(second, &|_| {}).unwrap();
    assert_eq!(again.files.unchanged, 3);
    let status = ws.job_status(second).unwrap();
    assert_eq!(status.status, tychora_core::job::JobState::Succeeded);
    assert_eq!(status.receipt.unwrap().files.unchanged, 3);
    assert!(ws.queued_jobs().unwrap().is_empty());
}

#[test]
fn old_generations_are_collected_beyond_retention() {
    let (_tmp, ws_dir, docs) = setup();
    let ws = Workspace::open(&ws_dir).unwrap();
    for i in 0..8 {
        fs::write(
            docs.join("notes.txt"),
            format!("revision {i} of the notes\n"),
        )
        .unwrap();
        add(&ws, &docs);
    }
    let generations = fs::read_dir(ws_dir.join("indexes/lexical"))
        .unwrap()
        .count();
    assert_eq!(generations, 5, "retain = 5 in the default workspace.toml");
    let snapshots = ws.list_snapshots().unwrap();
    let list = &snapshots.snapshots;
    // Every add applies retention: the three oldest went with their generations.
    assert_eq!(list.len(), 5);
    assert!(list.iter().all(|s| s.retained));
    assert_eq!(list.iter().map(|s| s.id).min(), Some(4));
    // A snapshot that retention removed is reported as not found, not served wrong.
    let err = ws
        .search(&QueryRequest {
            query: "notes".into(),
            snapshot_id: Some(1),
            ..Default::default()
        })
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::NotFound);
    let sources = ws
        .list_sources(&SourceQuery {
            limit: 10,
            ..Default::default()
        })
        .unwrap();
    assert_eq!(sources.total, 3);
    assert!(ws.verify().unwrap().ok);
}

/// Opening collects generations no snapshot row references, and only those: a snapshot that
/// retention has not released yet (a lowered `retain`, or a process killed between publishing
/// and retention) keeps its index files and answers until purge releases its row.
#[test]
fn collection_on_open_leaves_every_snapshot_row_its_generation() {
    let (_tmp, ws_dir, docs) = setup();
    {
        let ws = Workspace::open(&ws_dir).unwrap();
        for i in 0..3 {
            fs::write(
                docs.join("notes.txt"),
                format!("revision {i} of the notes\n"),
            )
            .unwrap();
            add(&ws, &docs);
        }
    }
    let config = ws_dir.join("workspace.toml");
    let text = fs::read_to_string(&config).unwrap();
    assert!(
        text.contains("retain = 5"),
        "the default workspace.toml sets retain"
    );
    fs::write(&config, text.replace("retain = 5", "retain = 1")).unwrap();
    let ws = Workspace::open(&ws_dir).unwrap();
    let report = ws.verify().unwrap();
    assert!(report.ok, "{:?}", report.problems);
    assert_eq!(report.snapshots_checked, 3);
    let oldest = ws
        .search(&QueryRequest {
            query: "revision notes".into(),
            snapshot_id: Some(1),
            ..Default::default()
        })
        .unwrap();
    assert!(!oldest.segments.is_empty());
    // Retention releases the two rows, then their files go.
    ws.purge().unwrap();
    assert_eq!(ws.list_snapshots().unwrap().snapshots.len(), 1);
    let generations = fs::read_dir(ws_dir.join("indexes/lexical"))
        .unwrap()
        .count();
    assert_eq!(generations, 1);
    assert!(ws.verify().unwrap().ok);
}

#[test]
fn revisions_record_the_git_commit_without_running_git() {
    let (_tmp, ws_dir, docs) = setup();
    let git = docs.join(".git");
    fs::create_dir_all(git.join("refs/heads")).unwrap();
    fs::write(git.join("HEAD"), "ref: refs/heads/main\n").unwrap();
    fs::write(
        git.join("refs/heads/main"),
        "0123456789abcdef0123456789abcdef01234567\n",
    )
    .unwrap();
    // A hook that would run if anything executed git; it must never run.
    fs::write(
        git.join("config"),
        "[core]\n\tfsmonitor = touch /tmp/tychora-fsmonitor-ran\n",
    )
    .unwrap();
    let ws = Workspace::open(&ws_dir).unwrap();
    let receipt = add(&ws, &docs);
    assert_eq!(receipt.files.added, 3, ".git is never captured");
    let Evidence::Revision(revision) = ws.inspect("revision:1").unwrap() else {
        panic!("revision:1 is a revision")
    };
    assert_eq!(
        revision.metadata["git"]["commit"],
        "0123456789abcdef0123456789abcdef01234567"
    );
    assert_eq!(revision.metadata["git"]["branch"], "main");
    // The commit is not in an object database here: dirtiness cannot be determined.
    assert!(revision.metadata["git"]["dirty"].is_null());
    assert!(!Path::new("/tmp/tychora-fsmonitor-ran").exists());
    // Segments carry the commit they were captured at.
    let result = search(&ws, "snapshot pointer publication");
    assert_eq!(
        result.segments[0].revision.commit.as_deref(),
        Some("0123456789abcdef0123456789abcdef01234567")
    );
}

#[test]
fn vendored_folders_and_minified_code_are_skipped_with_diagnostics() {
    let tmp = tempfile::tempdir().unwrap();
    let ws_dir = tmp.path().join("ws");
    let repo = tmp.path().join("repo");
    fs::create_dir_all(repo.join("node_modules/left-pad")).unwrap();
    fs::create_dir_all(repo.join("src")).unwrap();
    fs::write(
        repo.join("node_modules/left-pad/index.js"),
        "export function leftPad() {}\n",
    )
    .unwrap();
    fs::write(
        repo.join("src/app.js"),
        "export function start() {\n  return 1;\n}\n",
    )
    .unwrap();
    fs::write(
        repo.join("src/bundle.js"),
        format!("var a={};\n", "1,".repeat(5000)),
    )
    .unwrap();
    fs::write(repo.join("src/vendor.min.js"), "var x=1;\n").unwrap();
    Workspace::init_with_profile(&ws_dir, "code").unwrap();
    let ws = Workspace::open(&ws_dir).unwrap();
    let receipt = add(&ws, &repo);
    assert_eq!(receipt.added, ["src/app.js"], "{:?}", receipt.diagnostics);
    let minified: Vec<_> = receipt
        .diagnostics
        .iter()
        .filter(|d| d.path == "src/bundle.js")
        .collect();
    assert_eq!(minified.len(), 1);
    assert_eq!(minified[0].code, ErrorCode::LimitExceeded);
    assert!(
        receipt
            .diagnostics
            .iter()
            .all(|d| !d.path.contains("node_modules") && !d.path.contains("vendor.min.js"))
    );
}

#[test]
fn code_profile_indexes_symbols_with_paths_and_exact_names() {
    let tmp = tempfile::tempdir().unwrap();
    let ws_dir = tmp.path().join("ws");
    let repo = tmp.path().join("repo");
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/code");
    fs::create_dir_all(repo.join("geometry")).unwrap();
    for name in [
        "geometry/shapes.py",
        "geometry/__init__.py",
        "widgets.ts",
        "broken.ts",
    ] {
        fs::copy(fixtures.join(name), repo.join(name)).unwrap();
    }
    fs::write(
        repo.join("README.md"),
        "# Geometry\n\nCircles and points.\n",
    )
    .unwrap();
    Workspace::init_with_profile(&ws_dir, "code").unwrap();
    assert_eq!(
        Workspace::init_with_profile(&tmp.path().join("x"), "nope")
            .unwrap_err()
            .code(),
        ErrorCode::InvalidArgument
    );
    let ws = Workspace::open(&ws_dir).unwrap();
    let receipt = add(&ws, &repo);
    assert_eq!(receipt.files.added, 5, "{:?}", receipt.diagnostics);
    // The syntax error is a warning; the file is still indexed through error recovery.
    assert!(
        receipt
            .diagnostics
            .iter()
            .any(|d| d.path == "broken.ts" && d.level == tychora_core::Level::Warning)
    );

    // A qualified name goes to the exact channel and finds the method, cited with its symbol path.
    let result = search(&ws, "Circle.area");
    let top = &result.segments[0];
    assert_eq!(top.source.kind.as_deref(), Some("code_file"));
    assert_eq!(top.source.format, "code_file");
    assert_eq!(
        top.locator.anchor.as_deref(),
        Some("geometry.shapes.Circle.area")
    );
    assert_eq!(
        top.locator.heading_path,
        ["geometry.shapes", "Circle", "area"]
    );
    assert!(
        top.channels
            .iter()
            .any(|c| c.channel == "exact" && c.rank == 1)
    );
    let bytes = fs::read(repo.join("geometry/shapes.py")).unwrap();
    assert_eq!(
        &bytes[top.locator.byte_start as usize..top.locator.byte_end as usize],
        top.text.as_bytes()
    );
    assert!(
        top.text.starts_with("@property") && top.text.contains("def area(self)"),
        "decorator and docstring belong to the symbol: {}",
        top.text
    );

    // Filters work on the code kind, under either name.
    let only_code = ws
        .search(&QueryRequest {
            query: "geometry".into(),
            kinds: vec!["code".into()],
            ..Default::default()
        })
        .unwrap();
    assert!(
        only_code
            .segments
            .iter()
            .all(|s| s.source.format == "code_file")
    );

    // A documents workspace skips code files with an info diagnostic instead.
    let docs_ws_dir = tmp.path().join("docs-ws");
    Workspace::init(&docs_ws_dir).unwrap();
    let docs_ws = Workspace::open(&docs_ws_dir).unwrap();
    let docs_receipt = add(&docs_ws, &repo);
    assert_eq!(docs_receipt.files.added, 1);
    assert!(
        docs_receipt
            .diagnostics
            .iter()
            .any(|d| d.path == "widgets.ts"
                && d.level == tychora_core::Level::Info
                && d.message.contains("documents profile"))
    );
}
