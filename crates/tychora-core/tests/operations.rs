//! Operations at scale (issue 11): derived index generations, compaction, withdrawal, erasure of
//! originals, backup and restore, retention, and recorded runs — on real temporary workspaces.

use std::fs;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};

use tychora_core::query::{QueryRequest, QueryResult};
use tychora_core::{ErrorCode, Workspace};

mod common;
use common::add;

fn search_in(ws: &Workspace, query: &str, snapshot: Option<i64>) -> QueryResult {
    ws.search(&QueryRequest {
        query: query.into(),
        snapshot_id: snapshot,
        ..Default::default()
    })
    .unwrap()
}

fn paths(result: &QueryResult) -> Vec<String> {
    result
        .segments
        .iter()
        .map(|s| s.source.path.clone())
        .collect()
}

fn lexical_dir(ws_dir: &Path, ws: &Workspace, snapshot: i64) -> PathBuf {
    let generation = ws
        .inspect(&format!("snapshot:{snapshot}"))
        .map(|e| serde_json::to_value(e).unwrap())
        .unwrap()["indexes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["family"] == "lexical")
        .unwrap()["generation"]
        .as_str()
        .unwrap()
        .to_string();
    ws_dir.join("indexes/lexical").join(generation)
}

fn setup() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let ws_dir = tmp.path().join("ws");
    let docs = tmp.path().join("docs");
    fs::create_dir_all(&docs).unwrap();
    for (name, text) in [
        ("alpha.md", "# Alpha\n\nGlaciers retreat in warm summers.\n"),
        (
            "beta.md",
            "# Beta\n\nVolcanoes vent sulphur into the stratosphere.\n",
        ),
        (
            "gamma.md",
            "# Gamma\n\nCoral reefs bleach when the ocean warms.\n",
        ),
        (
            "delta.md",
            "# Delta\n\nRiver deltas build land from sediment.\n",
        ),
    ] {
        fs::write(docs.join(name), text).unwrap();
    }
    Workspace::init(&ws_dir).unwrap();
    (tmp, ws_dir, docs)
}

fn count(ws_dir: &Path, sql: &str) -> i64 {
    let db = rusqlite::Connection::open(ws_dir.join("corpus.sqlite3")).unwrap();
    db.query_row(sql, [], |r| r.get(0)).unwrap()
}

#[test]
fn a_one_file_change_derives_the_generation_and_older_snapshots_keep_theirs() {
    let (_tmp, ws_dir, docs) = setup();
    let ws = Workspace::open(&ws_dir).unwrap();
    let first = add(&ws, &docs).snapshot_id.unwrap();
    fs::write(
        docs.join("alpha.md"),
        "# Alpha\n\nGlaciers advance in cold winters with heavy snowfall.\n",
    )
    .unwrap();
    let second = add(&ws, &docs.join("alpha.md"));
    assert_eq!(second.files.changed, 1);
    let second = second.snapshot_id.unwrap();

    // The new generation shares the parent's segment files (hard links), and holds one more.
    let (old_dir, new_dir) = (
        lexical_dir(&ws_dir, &ws, first),
        lexical_dir(&ws_dir, &ws, second),
    );
    assert_ne!(old_dir, new_dir);
    // Segment files by name and inode; a segment whose every document was deleted is dropped.
    let segments = |dir: &Path| -> std::collections::HashMap<String, u64> {
        fs::read_dir(dir)
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().ends_with(".idx"))
            .map(|e| {
                (
                    e.file_name().to_string_lossy().into_owned(),
                    e.metadata().unwrap().ino(),
                )
            })
            .collect()
    };
    let (old, new) = (segments(&old_dir), segments(&new_dir));
    let kept: Vec<&String> = new.keys().filter(|name| old.contains_key(*name)).collect();
    assert!(!kept.is_empty(), "{old:?} {new:?}");
    assert!(
        kept.iter().all(|name| old[*name] == new[*name]),
        "the parent's segments are linked, not rewritten"
    );
    assert_eq!(
        new.len() - kept.len(),
        1,
        "one new segment for the changed file"
    );

    // The current snapshot answers from the new text; the pinned older one from the old text.
    assert_eq!(
        paths(&search_in(&ws, "glaciers snowfall winters", None))[0],
        "alpha.md"
    );
    assert!(!paths(&search_in(&ws, "retreat summers", None)).contains(&"alpha.md".to_string()));
    assert_eq!(
        paths(&search_in(&ws, "retreat summers", Some(first))),
        ["alpha.md"]
    );
    assert_eq!(search_in(&ws, "volcanoes", None).segments.len(), 1);

    // A removal (sync of the directory without a file) deletes its documents in the derived generation.
    fs::remove_file(docs.join("beta.md")).unwrap();
    let third = add(&ws, &docs);
    assert_eq!(third.files.removed, 1);
    assert!(
        search_in(&ws, "volcanoes sulphur", None)
            .segments
            .is_empty()
    );
    assert_eq!(
        paths(&search_in(&ws, "volcanoes sulphur", Some(second))),
        ["beta.md"]
    );
    assert!(ws.verify().unwrap().ok);
}

#[test]
fn compaction_merges_small_segments_without_changing_answers() {
    let (_tmp, ws_dir, docs) = setup();
    let ws = Workspace::open(&ws_dir).unwrap();
    add(&ws, &docs);
    assert!(
        ws.compact().unwrap().to_generation.is_none(),
        "one fresh build: nothing to merge"
    );
    for i in 0..9 {
        let file = docs.join(format!("note-{i}.md"));
        fs::write(
            &file,
            format!("# Note {i}\n\nObservation {i} of the tidal estuary.\n"),
        )
        .unwrap();
        add(&ws, &file);
    }
    let before = search_in(&ws, "tidal estuary observation", None);
    let snapshot = before.snapshot_id.unwrap();
    let old_dir = lexical_dir(&ws_dir, &ws, snapshot);
    let report = ws.compact().unwrap();
    assert_eq!(report.snapshot_id, Some(snapshot));
    assert!(report.to_generation.is_some(), "{report:?}");
    assert!(report.segments_after < report.segments_before, "{report:?}");
    assert_ne!(
        lexical_dir(&ws_dir, &ws, snapshot),
        old_dir,
        "the snapshot points at the merged generation"
    );
    let after = search_in(&ws, "tidal estuary observation", None);
    let ids = |r: &QueryResult| r.segments.iter().map(|s| s.chunk_id).collect::<Vec<_>>();
    let mut a = ids(&before);
    let mut b = ids(&after);
    a.sort_unstable();
    b.sort_unstable();
    assert_eq!(a, b, "the same documents answer");
    assert!(!old_dir.exists(), "the replaced generation is collected");
    assert!(ws.verify().unwrap().ok);
}

#[test]
fn withdrawal_leaves_history_and_keeps_the_source_out_of_later_syncs() {
    let (_tmp, ws_dir, docs) = setup();
    let ws = Workspace::open(&ws_dir).unwrap();
    let first = add(&ws, &docs).snapshot_id.unwrap();
    let err = ws.withdraw("gamma.md", "  ", &|_| {}).unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidArgument);
    assert_eq!(
        ws.withdraw("nope.md", "x", &|_| {}).unwrap_err().code(),
        ErrorCode::NotFound
    );
    let report = ws
        .withdraw("gamma.md", "superseded by the reef survey", &|_| {})
        .unwrap();
    assert_eq!(report.withdrawn.len(), 1);
    assert_eq!(report.receipt.removed, ["gamma.md"]);
    assert!(report.receipt.published);
    // Its job reads back with what it named (a withdraw stores no paths).
    let job = ws.job_status(report.receipt.job_id).unwrap();
    assert_eq!(job.kind, tychora_core::job::JobKind::Withdraw);
    assert_eq!(job.request.selector.as_deref(), Some("gamma.md"));
    assert_eq!(
        job.request.reason.as_deref(),
        Some("superseded by the reef survey")
    );
    assert!(job.request.request.paths.is_empty());
    assert!(
        search_in(&ws, "coral reefs bleach", None)
            .segments
            .is_empty()
    );
    assert_eq!(
        paths(&search_in(&ws, "coral reefs bleach", Some(first))),
        ["gamma.md"],
        "a pinned snapshot still answers"
    );
    // A sync of the directory skips it, with a diagnostic naming the withdrawal.
    let sync = add(&ws, &docs);
    assert!(
        sync.diagnostics
            .iter()
            .any(|d| d.path == "gamma.md" && d.message.contains("superseded by the reef survey")),
        "{:?}",
        sync.diagnostics
    );
    assert!(
        search_in(&ws, "coral reefs bleach", None)
            .segments
            .is_empty()
    );
    assert_eq!(
        count(
            &ws_dir,
            "SELECT COUNT(*) FROM revisions r JOIN sources s ON s.id = r.source_id WHERE s.rel_path = 'gamma.md'"
        ),
        1,
        "history stays"
    );
    assert!(ws.verify().unwrap().ok);
}

#[test]
fn delete_original_erases_the_bytes_leaves_a_tombstone_and_verify_accepts_it() {
    let (_tmp, ws_dir, docs) = setup();
    let ws = Workspace::open(&ws_dir).unwrap();
    add(&ws, &docs);
    let hit = &search_in(&ws, "river deltas sediment", None).segments[0];
    let sha = hit.revision.sha256.clone();
    let artifact = ws_dir.join("artifacts/sha256").join(&sha[..2]).join(&sha);
    assert!(artifact.exists());
    let report = ws
        .delete_original(
            &format!("revision:{}", hit.revision.revision_id),
            "legal request 2026-117",
            &|_| {},
        )
        .unwrap();
    assert_eq!(report.erased.len(), 1);
    assert_eq!(report.erased[0].reason, "legal request 2026-117");
    assert!(!artifact.exists(), "the original bytes are gone");
    assert!(
        search_in(&ws, "river deltas sediment", None)
            .segments
            .is_empty(),
        "new snapshots lose what was derived from them"
    );
    assert_eq!(
        count(
            &ws_dir,
            "SELECT COUNT(*) FROM tombstones WHERE kind = 'erasure'"
        ),
        1
    );
    let verify = ws.verify().unwrap();
    assert!(verify.ok, "{:?}", verify.problems);
    // The same bytes at another path are not captured again.
    let copy = docs.join("copy-of-delta.md");
    fs::copy(docs.join("delta.md"), &copy).unwrap();
    let again = add(&ws, &copy);
    assert_eq!(again.files.skipped, 1);
    assert!(!artifact.exists());
    assert!(again.diagnostics[0].message.contains("erased on request"));
}

#[test]
fn backup_and_restore_answer_byte_for_byte_and_refuse_damage() {
    let (tmp, ws_dir, docs) = setup();
    let ws = Workspace::open(&ws_dir).unwrap();
    add(&ws, &docs);
    fs::write(docs.join("alpha.md"), "# Alpha\n\nGlaciers advance.\n").unwrap();
    add(&ws, &docs);
    let dest = tmp.path().join("backups/one");
    let report = ws.backup(&dest).unwrap();
    assert!(
        report.artifacts >= 5 && report.generations >= 2,
        "{report:?}"
    );
    assert!(dest.join("manifest.json").exists());
    assert_eq!(
        ws.backup(&dest).unwrap_err().code(),
        ErrorCode::Conflict,
        "never over an existing backup"
    );
    let queries = [
        "glaciers",
        "coral reefs",
        "volcanoes sulphur",
        "river deltas",
    ];
    let answers = |ws: &Workspace| -> Vec<String> {
        queries
            .iter()
            .map(|q| {
                let r = search_in(ws, q, None);
                serde_json::to_string(&(
                    r.snapshot_id,
                    &r.segments
                        .iter()
                        .map(|s| (&s.id, &s.text, &s.citation, s.score))
                        .collect::<Vec<_>>(),
                ))
                .unwrap()
            })
            .collect()
    };
    let expected = answers(&ws);
    let restored = tmp.path().join("restored");
    Workspace::restore(&dest, &restored).unwrap();
    drop(ws);
    let back = Workspace::open(&restored).unwrap();
    assert_eq!(answers(&back), expected);
    assert!(back.verify().unwrap().ok);
    drop(back);

    // A damaged file, a missing manifest: refused before anything becomes a workspace.
    let sha_file = fs::read_dir(dest.join("artifacts/sha256"))
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    let victim = fs::read_dir(&sha_file)
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    let mut bytes = fs::read(&victim).unwrap();
    bytes[0] ^= 1;
    fs::write(&victim, bytes).unwrap();
    let target = tmp.path().join("restored-2");
    assert_eq!(
        Workspace::restore(&dest, &target).unwrap_err().code(),
        ErrorCode::ChecksumMismatch
    );
    assert!(!target.exists());
    fs::remove_file(dest.join("manifest.json")).unwrap();
    assert_eq!(
        Workspace::restore(&dest, &target).unwrap_err().code(),
        ErrorCode::NotFound
    );
    assert!(!target.exists());
}

#[test]
fn retention_purges_old_snapshots_history_and_expired_runs() {
    let (_tmp, ws_dir, docs) = setup();
    let ws = Workspace::open(&ws_dir).unwrap();
    add(&ws, &docs);
    for i in 0..12 {
        fs::write(
            docs.join("alpha.md"),
            format!("# Alpha\n\nGlaciers measured on day {i}.\n"),
        )
        .unwrap();
        add(&ws, &docs.join("alpha.md"));
    }
    let run = search_in(&ws, "glaciers measured", None).run_id;
    // Every job that publishes applies retention: 13 snapshots published, 5 kept.
    assert_eq!(count(&ws_dir, "SELECT COUNT(*) FROM snapshots"), 5);
    let now = 1_000 * 86_400_000 + count(&ws_dir, "SELECT MAX(created_at) FROM snapshots");
    let report = ws.purge_at(now).unwrap();
    assert_eq!(
        count(&ws_dir, "SELECT COUNT(*) FROM snapshots"),
        5,
        "{report:?}"
    );
    assert_eq!(report.snapshots, 0, "the jobs purged them already");
    assert_eq!(count(&ws_dir, "SELECT COUNT(*) FROM purge_pending"), 0);
    // What only purged snapshots used is gone; what the retained ones use stays.
    assert_eq!(
        count(
            &ws_dir,
            "SELECT COUNT(*) FROM extractions WHERE id NOT IN (SELECT extraction_id FROM snapshot_members)"
        ),
        0
    );

    assert_eq!(
        count(
            &ws_dir,
            "SELECT COUNT(*) FROM revisions r JOIN sources s ON s.id = r.source_id WHERE s.rel_path = 'alpha.md'"
        ),
        13,
        "revision rows stay as history"
    );
    // alpha.md keeps its newest 10 revisions' bytes; the 3 oldest get a retention tombstone.
    assert_eq!(report.revisions_expired, 3, "{report:?}");
    assert_eq!(report.artifacts_removed, 3);
    assert_eq!(
        ws.inspect_run(&run).unwrap_err().code(),
        ErrorCode::NotFound,
        "query runs past query_days are gone"
    );
    let verify = ws.verify().unwrap();
    assert!(verify.ok, "{:?}", verify.problems);
    assert_eq!(
        paths(&search_in(&ws, "glaciers measured day", None))[0],
        "alpha.md"
    );
    // A second purge at the same time finds nothing more.
    let again = ws.purge_at(now).unwrap();
    assert_eq!(
        (again.snapshots, again.extractions, again.revisions_expired),
        (0, 0, 0)
    );
}

#[test]
fn a_query_run_is_recorded_with_its_scope_results_and_trace() {
    let (_tmp, ws_dir, docs) = setup();
    let ws = Workspace::open(&ws_dir).unwrap();
    add(&ws, &docs);
    let result = search_in(&ws, "coral reefs", None);
    let run = ws.inspect_run(&result.run_id).unwrap();
    assert_eq!(run.snapshot_id, result.snapshot_id);
    assert_eq!(run.request["query"], "coral reefs");
    assert_eq!(run.summary["segments"][0], result.segments[0].id.as_str());
    assert_eq!(
        run.summary["citations"][0],
        result.segments[0].citation.as_str()
    );
    let stages: Vec<&str> = run.summary["trace"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["stage"].as_str().unwrap())
        .collect();
    assert!(
        stages.contains(&"lexical") && stages.contains(&"fusion"),
        "{stages:?}"
    );
    assert!(run.summary["coverage"]["channels"].as_array().is_some());
    assert_eq!(
        ws.inspect_run("nope").unwrap_err().code(),
        ErrorCode::NotFound
    );
    let _ = ws_dir;
}

#[cfg(unix)]
#[test]
fn a_killed_copys_staging_folder_is_removed_by_the_next_copy_and_a_live_ones_is_kept() {
    let (tmp, ws_dir, docs) = setup();
    let ws = Workspace::open(&ws_dir).unwrap();
    add(&ws, &docs);
    // A process that has exited: its pid names a staging folder nobody will finish.
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    let abandoned = tmp.path().join(format!(".copy.partial-{dead}"));
    std::fs::create_dir_all(abandoned.join("artifacts")).unwrap();
    std::fs::write(abandoned.join("corpus.sqlite3"), b"half a copy").unwrap();
    // A running process (this test's parent, the harness) may be copying still.
    let live = tmp.path().join(format!(
        ".copy.partial-{}",
        std::os::unix::process::parent_id()
    ));
    std::fs::create_dir_all(&live).unwrap();
    // Another destination's folder is not this copy's business.
    let other = tmp.path().join(format!(".other.partial-{dead}"));
    std::fs::create_dir_all(&other).unwrap();

    ws.backup(&tmp.path().join("copy")).unwrap();
    assert!(!abandoned.exists(), "the dead copy's folder is collected");
    assert!(live.exists(), "a live process's folder is kept");
    assert!(other.exists(), "another destination's folder is kept");
}
