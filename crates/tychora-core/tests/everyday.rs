//! Everyday paths a new user and a hostile run broke (issue 32): overlapping roots, erasure with
//! pinned snapshots, retention whatever runs the job, O(1) no-op syncs, diagnostics of unchanged
//! files, and documents without headings answering window by window.

use std::fs;
use std::path::{Path, PathBuf};

use tychora_core::Workspace;
use tychora_core::ingest::{AddRequest, Receipt, Requester};
use tychora_core::job::Outcome;
use tychora_core::query::{QueryRequest, QueryResult};

mod common;
use common::add;

fn search(ws: &Workspace, query: &str, snapshot: Option<i64>) -> QueryResult {
    ws.search(&QueryRequest {
        query: query.into(),
        snapshot_id: snapshot,
        max_per_source: Some(0),
        limit: Some(20),
        ..Default::default()
    })
    .unwrap()
}

fn count(ws_dir: &Path, sql: &str) -> i64 {
    let db = rusqlite::Connection::open(ws_dir.join("corpus.sqlite3")).unwrap();
    db.query_row(sql, [], |r| r.get(0)).unwrap()
}

fn workspace() -> (tempfile::TempDir, PathBuf, Workspace) {
    let tmp = tempfile::tempdir().unwrap();
    let ws_dir = tmp.path().join("ws");
    Workspace::init(&ws_dir).unwrap();
    let ws = Workspace::open(&ws_dir).unwrap();
    (tmp, ws_dir, ws)
}

fn add_all(ws: &Workspace, paths: &[&Path]) -> Receipt {
    ws.add(
        &AddRequest {
            paths: paths.iter().map(|p| p.display().to_string()).collect(),
            ..Default::default()
        },
        Requester::Owner,
        &|_| {},
    )
    .unwrap()
}

fn tree(root: &Path) {
    fs::create_dir_all(root.join("top/sub/deeper")).unwrap();
    fs::write(
        root.join("top/readme.md"),
        "# Top\n\nAlbatross notes at the top.\n",
    )
    .unwrap();
    fs::write(root.join("top/sub/a.md"), "# A\n\nBarnacle notes in sub.\n").unwrap();
    fs::write(
        root.join("top/sub/deeper/b.md"),
        "# B\n\nCormorant notes deeper.\n",
    )
    .unwrap();
}

#[test]
fn a_parent_added_after_its_child_keeps_one_source_per_file() {
    for order in [["top/sub", "top"], ["top", "top/sub"]] {
        let (tmp, ws_dir, ws) = workspace();
        tree(tmp.path());
        for (i, dir) in order.iter().enumerate() {
            let receipt = add(&ws, &tmp.path().join(dir));
            assert_eq!(
                receipt.status,
                Outcome::Succeeded,
                "{order:?} step {i}: {receipt:?}"
            );
            assert_eq!(
                receipt.files.failed, 0,
                "{order:?}: {:?}",
                receipt.diagnostics
            );
        }
        // Deepest and overlapping both ways: a grandchild root, then the parent again.
        add(&ws, &tmp.path().join("top/sub/deeper"));
        let again = add(&ws, &tmp.path().join("top"));
        assert_eq!(again.files.failed, 0, "{order:?}: {:?}", again.diagnostics);
        assert_eq!(
            again.files.added + again.files.changed,
            0,
            "{order:?}: {again:?}"
        );
        assert_eq!(
            count(&ws_dir, "SELECT COUNT(*) FROM sources"),
            3,
            "{order:?}: one source per file"
        );
        assert_eq!(
            count(
                &ws_dir,
                "SELECT COUNT(*) FROM snapshot_members WHERE snapshot_id = (SELECT current_snapshot_id FROM workspaces)"
            ),
            3
        );
        for word in ["albatross", "barnacle", "cormorant"] {
            assert_eq!(
                search(&ws, word, None).segments.len(),
                1,
                "{order:?}: {word}"
            );
        }
        // A sync of the parent sees a file removed under the child root, and one added.
        fs::remove_file(tmp.path().join("top/sub/a.md")).unwrap();
        fs::write(
            tmp.path().join("top/sub/c.md"),
            "# C\n\nDunlin notes in sub.\n",
        )
        .unwrap();
        let synced = add(&ws, &tmp.path().join("top"));
        assert_eq!(
            (synced.files.added, synced.files.removed),
            (1, 1),
            "{order:?}: {synced:?}"
        );
        assert!(search(&ws, "barnacle", None).segments.is_empty());
        assert_eq!(search(&ws, "dunlin", None).segments.len(), 1);
        assert!(ws.verify().unwrap().ok);
    }
    // Both in one request, child first: the same, in one job.
    let (tmp, ws_dir, ws) = workspace();
    tree(tmp.path());
    let both = add_all(&ws, &[&tmp.path().join("top/sub"), &tmp.path().join("top")]);
    assert_eq!((both.files.added, both.files.failed), (3, 0), "{both:?}");
    let again = add_all(&ws, &[&tmp.path().join("top/sub"), &tmp.path().join("top")]);
    assert_eq!(
        (again.files.unchanged, again.files.failed),
        (3, 0),
        "{again:?}"
    );
    assert_eq!(count(&ws_dir, "SELECT COUNT(*) FROM sources"), 3);
}

fn lexical_dirs(ws_dir: &Path) -> Vec<PathBuf> {
    let db = rusqlite::Connection::open(ws_dir.join("corpus.sqlite3")).unwrap();
    let mut stmt = db
        .prepare(
            "SELECT b.generation FROM snapshot_indexes si JOIN index_batches b ON b.id = si.batch_id JOIN index_families f ON f.id = si.family_id WHERE f.channel = 'lexical'",
        )
        .unwrap();
    stmt.query_map([], |r| r.get::<_, String>(0))
        .unwrap()
        .map(|g| ws_dir.join("indexes/lexical").join(g.unwrap()))
        .collect()
}

#[test]
fn an_erasure_takes_the_text_out_of_every_snapshot_pinned_ones_included() {
    let (tmp, ws_dir, ws) = workspace();
    let docs = tmp.path().join("docs");
    fs::create_dir_all(&docs).unwrap();
    fs::write(docs.join("keep.md"), "# Keep\n\nPelicans stay.\n").unwrap();
    fs::write(
        docs.join("secret.md"),
        "# Secret\n\nZanzibar ledger of the claimant.\n",
    )
    .unwrap();
    let first = add(&ws, &docs);
    let pinned = first.snapshot_id.unwrap();
    fs::write(docs.join("keep.md"), "# Keep\n\nPelicans stay and nest.\n").unwrap();
    let second = add(&ws, &docs).snapshot_id.unwrap();
    for snapshot in [pinned, second] {
        assert_eq!(
            search(&ws, "zanzibar ledger", Some(snapshot))
                .segments
                .len(),
            1
        );
    }
    let hit = search(&ws, "zanzibar ledger", None).segments[0].clone();
    let report = ws
        .delete_original(
            &format!("source:{}", hit.source.source_id),
            "legal request 2026-311",
            &|_| {},
        )
        .unwrap();
    assert_eq!(
        report.erased_from_snapshots, 2,
        "the two snapshots that held it"
    );
    // `inspect job:N` reads the erasure's job back (it stores a selector, not paths).
    let job = ws.job_status(report.receipt.job_id).unwrap();
    assert_eq!(
        (job.kind.as_str(), job.request.reason.as_deref()),
        ("delete-original", Some("legal request 2026-311"))
    );
    assert!(
        ws.inspect(&format!("job:{}", report.receipt.job_id))
            .is_ok()
    );
    for snapshot in [Some(pinned), Some(second), None] {
        assert!(
            search(&ws, "zanzibar ledger", snapshot).segments.is_empty(),
            "snapshot {snapshot:?} still answers with erased text"
        );
        assert_eq!(
            search(&ws, "pelicans", snapshot).segments.len(),
            1,
            "{snapshot:?}"
        );
    }
    let revision = hit.revision.revision_id;
    for sql in [
        format!("SELECT COUNT(*) FROM snapshot_members WHERE revision_id = {revision}"),
        format!("SELECT COUNT(*) FROM extractions WHERE revision_id = {revision}"),
        "SELECT COUNT(*) FROM chunks WHERE text LIKE '%Zanzibar%'".to_string(),
        "SELECT COUNT(*) FROM evidence_units WHERE text LIKE '%Zanzibar%'".to_string(),
    ] {
        assert_eq!(count(&ws_dir, &sql), 0, "{sql}");
    }
    // Read by tantivy itself: no segment of any referenced generation has the erased word, not
    // even in a deleted document's postings.
    for dir in lexical_dirs(&ws_dir) {
        let index = tantivy::Index::open_in_dir(&dir).unwrap();
        let body = index.schema().get_field("body").unwrap();
        let searcher = index.reader().unwrap().searcher();
        for segment in searcher.segment_readers() {
            let terms = segment.inverted_index(body).unwrap();
            let term = tantivy::Term::from_field_text(body, "zanzibar");
            assert_eq!(
                terms.doc_freq(&term).unwrap(),
                0,
                "{} still holds the erased word",
                dir.display()
            );
        }
    }
    let verify = ws.verify().unwrap();
    assert!(verify.ok, "{:?}", verify.problems);
    assert_eq!(verify.erasures_checked, 1);
    let status = ws.status().unwrap();
    assert_eq!(
        (
            status.counts.erased_revisions,
            status.counts.erasures_pending
        ),
        (1, 0)
    );
    let inspected =
        serde_json::to_value(ws.inspect(&format!("revision:{revision}")).unwrap()).unwrap();
    assert_eq!(inspected["tombstones"][0]["kind"], "erasure");
    assert_eq!(
        inspected["tombstones"][0]["reason"],
        "legal request 2026-311"
    );
}

#[test]
fn an_interrupted_erasure_is_reported_and_finished_by_the_next_purge() {
    let (tmp, ws_dir, ws) = workspace();
    let docs = tmp.path().join("docs");
    fs::create_dir_all(&docs).unwrap();
    fs::write(docs.join("keep.md"), "# Keep\n\nPelicans stay.\n").unwrap();
    fs::write(docs.join("secret.md"), "# Secret\n\nZanzibar ledger.\n").unwrap();
    let snapshot = add(&ws, &docs).snapshot_id.unwrap();
    let hit = search(&ws, "zanzibar", None).segments[0].clone();
    // What a crash right after the tombstone leaves: the tombstone, the text everywhere.
    {
        let db = rusqlite::Connection::open(ws_dir.join("corpus.sqlite3")).unwrap();
        db.execute(
            "INSERT INTO tombstones (kind, sha256, size, source_id, revision_id, job_id, reason, deleted_at) VALUES ('erasure', ?1, 1, ?2, ?3, NULL, 'test', 0)",
            rusqlite::params![hit.revision.sha256, hit.source.source_id, hit.revision.revision_id],
        )
        .unwrap();
    }
    let verify = ws.verify().unwrap();
    assert!(!verify.ok);
    assert!(
        verify
            .problems
            .iter()
            .any(|p| p.object == format!("revision {}", hit.revision.revision_id)),
        "{:?}",
        verify.problems
    );
    assert_eq!(ws.status().unwrap().counts.erasures_pending, 1);
    let purged = ws.purge().unwrap();
    assert_eq!(
        (purged.erased_revisions, purged.erased_from_snapshots),
        (1, 1)
    );
    assert!(search(&ws, "zanzibar", Some(snapshot)).segments.is_empty());
    assert_eq!(ws.status().unwrap().counts.erasures_pending, 0);
}

#[test]
fn retention_holds_for_every_job_and_a_no_op_sync_writes_constant_rows() {
    let (tmp, ws_dir, ws) = workspace();
    let docs = tmp.path().join("docs");
    fs::create_dir_all(&docs).unwrap();
    for i in 0..20 {
        fs::write(
            docs.join(format!("f{i}.md")),
            format!("# F{i}\n\nNote {i}.\n"),
        )
        .unwrap();
        // Files the profile has no parser for: a diagnostic each, every sync.
        fs::write(docs.join(format!("blob{i}.bin")), [0u8, 1, 2, 3]).unwrap();
    }
    for round in 0..30 {
        fs::write(docs.join("f0.md"), format!("# F0\n\nRound {round}.\n")).unwrap();
        add(&ws, &docs);
        assert!(
            count(&ws_dir, "SELECT COUNT(*) FROM snapshots") <= 5,
            "round {round}"
        );
    }
    assert_eq!(count(&ws_dir, "SELECT COUNT(*) FROM purge_pending"), 0);
    assert_eq!(
        count(
            &ws_dir,
            "SELECT COUNT(*) FROM extractions WHERE id NOT IN (SELECT extraction_id FROM snapshot_members)"
        ),
        0,
        "what only purged snapshots used went with them"
    );
    // No-op syncs: the same diagnostics are one stored list, and no per-file events.
    let lists = count(&ws_dir, "SELECT COUNT(*) FROM diagnostic_lists");
    let mut last = None;
    for _ in 0..10 {
        let receipt = add(&ws, &docs);
        assert!(!receipt.published);
        assert_eq!(receipt.diagnostics.len(), 20, "{:?}", receipt.diagnostics);
        last = Some(receipt.job_id);
    }
    assert_eq!(
        count(&ws_dir, "SELECT COUNT(*) FROM diagnostic_lists"),
        lists
    );
    assert_eq!(count(&ws_dir, "SELECT COUNT(*) FROM job_events"), 0);
    let job = serde_json::to_value(ws.inspect(&format!("job:{}", last.unwrap())).unwrap()).unwrap();
    assert_eq!(
        job["receipt"]["diagnostics"].as_array().unwrap().len(),
        20,
        "the receipt reads back whole"
    );
    // Old finished jobs go with the policy; those a snapshot names stay.
    let far = 1_000 * 86_400_000 + count(&ws_dir, "SELECT MAX(created_at) FROM jobs");
    let purged = ws.purge_at(far).unwrap();
    assert!(purged.jobs >= 10, "{purged:?}");
    assert_eq!(
        count(
            &ws_dir,
            "SELECT COUNT(*) FROM jobs WHERE id NOT IN (SELECT job_id FROM snapshots WHERE job_id IS NOT NULL)"
        ),
        0
    );
    assert!(ws.verify().unwrap().ok);
}

#[test]
fn an_unchanged_file_keeps_its_diagnostics_in_the_receipt() {
    let (tmp, _ws_dir, ws) = workspace();
    let docs = tmp.path().join("docs");
    fs::create_dir_all(&docs).unwrap();
    fs::write(docs.join("ok.md"), "# Ok\n\nText.\n").unwrap();
    // Text with nothing to index: captured, with a warning.
    fs::write(docs.join("blank.txt"), "   \n\n \t \n").unwrap();
    let first = add(&ws, &docs);
    let second = add(&ws, &docs);
    let shown = |r: &Receipt| {
        let mut v: Vec<(String, &str)> = r
            .diagnostics
            .iter()
            .map(|d| (d.path.clone(), d.code.as_str()))
            .collect();
        v.sort();
        v
    };
    assert!(!first.diagnostics.is_empty(), "{first:?}");
    assert_eq!(shown(&first), shown(&second));
}

#[test]
fn a_document_without_headings_answers_window_by_window() {
    let (tmp, _ws_dir, ws) = workspace();
    let docs = tmp.path().join("docs");
    fs::create_dir_all(&docs).unwrap();
    let mut text = String::new();
    for i in 0..5 {
        text.push_str(&format!("Paragraph {i} names CITIBANK once.\n\n"));
        for j in 0..60 {
            text.push_str(&format!(
                "Filler sentence {i}-{j} about ledgers and statements. "
            ));
        }
        text.push_str("\n\n");
    }
    fs::write(docs.join("statement.md"), &text).unwrap();
    add(&ws, &docs);
    let hits = search(&ws, "CITIBANK", None).segments;
    assert!(
        hits.len() >= 4,
        "{} segment(s) for a word in 5 windows",
        hits.len()
    );
}

/// A workspace whose lexical index was built before the tokenizer cut Thai into trigrams (its
/// recorded analyzer has no tokenizer version): queries say to rebuild instead of silently missing
/// Thai words, and after `rebuild` the word is found and the warning is gone.
#[test]
fn an_index_from_an_older_tokenizer_asks_for_a_rebuild() {
    let tmp = tempfile::tempdir().unwrap();
    let ws_dir = tmp.path().join("ws");
    let docs = tmp.path().join("docs");
    fs::create_dir_all(&docs).unwrap();
    fs::write(
        docs.join("thai.md"),
        "# ภาษา\n\nภาษาไทยเป็นภาษาราชการของประเทศไทย\n",
    )
    .unwrap();
    fs::write(docs.join("other.md"), "# Other\n\nNothing Thai here.\n").unwrap();
    Workspace::init(&ws_dir).unwrap();
    let ws = Workspace::open(&ws_dir).unwrap();
    add(&ws, &docs);
    let fresh = search(&ws, "ประเทศไทย", None);
    assert!(fresh.warnings.is_empty(), "{:?}", fresh.warnings);
    assert_eq!(fresh.segments[0].source.path, "thai.md");
    drop(ws);

    let db = rusqlite::Connection::open(ws_dir.join("corpus.sqlite3")).unwrap();
    let changed = db
        .execute(
            "UPDATE index_families SET config_json = json_remove(config_json, '$.tokenizer') WHERE name = 'lexical'",
            [],
        )
        .unwrap();
    assert_eq!(changed, 1);
    drop(db);

    let ws = Workspace::open(&ws_dir).unwrap();
    let stale = search(&ws, "ประเทศไทย", None);
    assert!(
        stale
            .warnings
            .iter()
            .any(|w| w.contains("another analyzer") && w.contains("manage rebuild")),
        "{:?}",
        stale.warnings
    );
    ws.rebuild(&|_| {}).unwrap();
    let rebuilt = search(&ws, "ประเทศไทย", None);
    assert!(rebuilt.warnings.is_empty(), "{:?}", rebuilt.warnings);
    assert_eq!(rebuilt.segments[0].source.path, "thai.md");
}
