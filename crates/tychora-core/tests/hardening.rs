//! Findings of a hostile run, each pinned: who may add what, names as exact bytes, exclusions said
//! once per job, job rows that agree with the published snapshot.

use std::fs;
#[cfg(unix)]
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use rusqlite::Connection;
use tychora_core::ingest::{AddRequest, Requester};
use tychora_core::job::Outcome;
use tychora_core::{ErrorCode, Workspace};

fn request(paths: &[&Path]) -> AddRequest {
    AddRequest {
        paths: paths.iter().map(|p| p.display().to_string()).collect(),
        ..Default::default()
    }
}

fn workspace() -> (tempfile::TempDir, Workspace, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let ws_dir = tmp.path().join("ws");
    Workspace::init(&ws_dir).unwrap();
    let docs = tmp.path().join("docs");
    fs::create_dir_all(docs.join("inner")).unwrap();
    fs::write(docs.join("a.md"), "# A\n\nalpha\n").unwrap();
    fs::write(docs.join("inner/b.md"), "# B\n\nbravo\n").unwrap();
    let ws = Workspace::open(&ws_dir).unwrap();
    (tmp, ws, docs)
}

#[test]
fn an_agent_never_widens_the_capture_roots() {
    let (tmp, ws, docs) = workspace();
    let elsewhere = tmp.path().join("elsewhere");
    fs::create_dir_all(&elsewhere).unwrap();
    fs::write(elsewhere.join("private.md"), "# Private\n").unwrap();

    // No root yet: an agent can add nothing, anywhere, even with auto_add_roots on.
    let err = ws
        .enqueue_add(&request(&[&docs]), Requester::Agent)
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::Forbidden);
    assert_eq!(
        ws.enqueue_add(&request(&[Path::new("/")]), Requester::Agent)
            .unwrap_err()
            .code(),
        ErrorCode::Forbidden
    );
    for relative in [".", "docs", "../x"] {
        assert_eq!(
            ws.enqueue_add(&request(&[Path::new(relative)]), Requester::Agent)
                .unwrap_err()
                .code(),
            ErrorCode::InvalidArgument,
            "{relative}"
        );
    }
    let dotdot = docs.join("../elsewhere");
    // The owner registers docs as a root.
    let receipt = ws
        .add(&request(&[&docs]), Requester::Owner, &|_| {})
        .unwrap();
    assert_eq!(receipt.files.added, 2);

    // Inside the root an agent may add; `..` out of it, a sibling or a missing outside path may not.
    let job = ws
        .enqueue_add(&request(&[&docs.join("inner")]), Requester::Agent)
        .unwrap();
    assert_eq!(ws.run_job(job, &|_| {}).unwrap().status, Outcome::Succeeded);
    for outside in [
        dotdot.as_path(),
        elsewhere.as_path(),
        &tmp.path().join("missing/deeper"),
    ] {
        assert_eq!(
            ws.enqueue_add(&request(&[outside]), Requester::Agent)
                .unwrap_err()
                .code(),
            if outside == dotdot {
                ErrorCode::InvalidArgument
            } else {
                ErrorCode::Forbidden
            },
            "{}",
            outside.display()
        );
    }

    // A job queued by an agent and resumed later is judged again when it runs: a row that names
    // an outside path (written before the check existed) captures nothing there.
    let conn = Connection::open(ws.dir().join("corpus.sqlite3")).unwrap();
    let legacy = serde_json::json!({ "paths": [elsewhere.display().to_string()] }).to_string();
    conn.execute(
        "INSERT INTO jobs (kind, status, request_json, created_at) VALUES ('add', 'queued', ?1, 0)",
        [legacy],
    )
    .unwrap();
    let job = conn.last_insert_rowid();
    let receipt = ws.run_job(job, &|_| {}).unwrap();
    assert_eq!(receipt.status, Outcome::Failed);
    assert_eq!(receipt.diagnostics[0].code, ErrorCode::Forbidden);
    assert!(!receipt.published);
    let roots: i64 = conn
        .query_row("SELECT count(*) FROM roots", [], |r| r.get(0))
        .unwrap();
    assert_eq!(roots, 1, "no root was registered by the agent's jobs");
}

#[cfg(unix)]
#[test]
fn names_that_differ_only_in_invalid_bytes_are_two_sources_and_resync() {
    let (_tmp, ws, docs) = workspace();
    for (name, body) in [
        (&b"bad\xff.md"[..], "# FF\n\nfirst variant\n"),
        (b"bad\xfe.md", "# FE\n\nsecond variant\n"),
    ] {
        fs::write(docs.join(std::ffi::OsStr::from_bytes(name)), body).unwrap();
    }
    for round in 0..3 {
        if round == 2 {
            fs::write(
                docs.join(std::ffi::OsStr::from_bytes(b"bad\xfe.md")),
                "# FE\n\nchanged\n",
            )
            .unwrap();
        }
        let receipt = ws
            .add(&request(&[&docs]), Requester::Owner, &|_| {})
            .unwrap();
        assert_ne!(receipt.status, Outcome::Failed, "{:?}", receipt.diagnostics);
        assert!(receipt.diagnostics.is_empty(), "{:?}", receipt.diagnostics);
        match round {
            0 => assert_eq!(receipt.files.added, 4),
            1 => assert_eq!(receipt.files.unchanged, 4),
            _ => assert_eq!(receipt.changed, ["bad\\xfe.md"]),
        }
    }
    let sources = ws
        .list_sources(&tychora_core::manage::SourceQuery {
            limit: 100,
            ..Default::default()
        })
        .unwrap();
    let text = serde_json::to_string(&sources).unwrap();
    assert!(
        text.contains("bad\\\\xff.md") && text.contains("bad\\\\xfe.md"),
        "{text}"
    );
}

#[test]
fn exclusions_are_counted_in_the_receipt() {
    let (_tmp, ws, docs) = workspace();
    fs::write(docs.join(".env"), "SECRET=1\n").unwrap();
    fs::create_dir_all(docs.join(".git")).unwrap();
    fs::create_dir_all(docs.join("dist")).unwrap();
    fs::write(docs.join("dist/bundle.md"), "# built\n").unwrap();
    let receipt = ws
        .add(&request(&[&docs]), Requester::Owner, &|_| {})
        .unwrap();
    let rules: Vec<(&str, usize)> = receipt
        .excluded
        .iter()
        .map(|e| (e.rule.as_str(), e.count))
        .collect();
    assert_eq!(
        rules,
        [
            ("capture.exclude: dist/", 1),
            ("hidden (dotfiles and dot-directories)", 2)
        ]
    );
    let json = serde_json::to_value(&receipt).unwrap();
    assert_eq!(json["excluded"][1]["example"], ".env");
}

#[test]
fn the_job_row_agrees_with_the_published_snapshot() {
    let (_tmp, ws, docs) = workspace();
    let receipt = ws
        .add(&request(&[&docs]), Requester::Owner, &|_| {})
        .unwrap();
    let conn = Connection::open(ws.dir().join("corpus.sqlite3")).unwrap();
    let (status, snapshot): (String, i64) = conn
        .query_row(
            "SELECT j.status, s.id FROM jobs j JOIN snapshots s ON s.job_id = j.id WHERE j.id = ?1",
            [receipt.job_id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(
        (status.as_str(), Some(snapshot)),
        ("succeeded", receipt.snapshot_id)
    );
    let stored: String = conn
        .query_row(
            "SELECT receipt_json FROM jobs WHERE id = ?1",
            [receipt.job_id],
            |r| r.get(0),
        )
        .unwrap();
    let stored: serde_json::Value = serde_json::from_str(&stored).unwrap();
    assert_eq!(stored["snapshot_id"], snapshot);
    assert_eq!(stored["published"], true);
}
