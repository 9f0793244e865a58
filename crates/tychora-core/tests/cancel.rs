//! The owner cancels a queued job: it never runs, and only a queued job can be cancelled.
//! Migration 21 (the `cancelled` status) applies to a workspace of schema 20 with its history.

use std::fs;
use std::path::Path;
use std::sync::Mutex;

use rusqlite::Connection;
use sha2::{Digest, Sha256};
use tychora_core::ingest::{AddRequest, Requester};
use tychora_core::job::{JobState, Phase};
use tychora_core::manage::{Evidence, MAX_CANCEL_REASON};
use tychora_core::{ErrorCode, Workspace};

mod common;
use common::add;

fn setup() -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let ws_dir = tmp.path().join("ws");
    let docs = tmp.path().join("docs");
    fs::create_dir_all(&docs).unwrap();
    fs::write(
        docs.join("install.md"),
        "# Install\n\nRun the installer.\n\n## Snapshots\n\nPublication switches the pointer.\n",
    )
    .unwrap();
    fs::write(
        docs.join("notes.txt"),
        "Plain notes about tantivy segments.\n",
    )
    .unwrap();
    Workspace::init(&ws_dir).unwrap();
    (tmp, ws_dir, docs)
}

fn request(docs: &Path) -> AddRequest {
    AddRequest {
        paths: vec![docs.display().to_string()],
        ..Default::default()
    }
}

#[test]
fn a_cancelled_job_never_runs() {
    let (_tmp, ws_dir, docs) = setup();
    let ws = Workspace::open(&ws_dir).unwrap();
    let first = ws.enqueue_add(&request(&docs), Requester::Owner).unwrap();
    let second = ws.enqueue_add(&request(&docs), Requester::Owner).unwrap();

    let before = ws.job_status(first).unwrap();
    let cancelled = ws.cancel_job(first, Some("  wrong folder ")).unwrap();
    assert_eq!(cancelled.id, first);
    assert_eq!(cancelled.status, JobState::Cancelled);
    assert_eq!(
        cancelled.error.as_deref(),
        Some("cancelled by the owner: wrong folder")
    );
    let at = cancelled.finished_at.expect("the cancellation's time");
    assert!(at >= before.created_at);
    assert!(cancelled.receipt.is_none());
    assert!(cancelled.steps.is_empty());

    // The queue skips it, now and after a restart; running it is refused.
    assert_eq!(ws.queued_jobs().unwrap(), vec![second]);
    assert_eq!(
        ws.run_job(first, &|_| {}).unwrap_err().code(),
        ErrorCode::Conflict
    );
    drop(ws);
    let ws = Workspace::open(&ws_dir).unwrap();
    assert_eq!(ws.queued_jobs().unwrap(), vec![second]);
    let receipt = ws.run_job(second, &|_| {}).unwrap();
    assert_eq!(receipt.files.added, 2);
    assert!(ws.queued_jobs().unwrap().is_empty());
    // Never started: no steps, no receipt, its row as the cancellation left it.
    let after = ws.job_status(first).unwrap();
    assert_eq!(after.status, JobState::Cancelled);
    assert_eq!(after.finished_at, Some(at));
    assert!(after.steps.is_empty() && after.receipt.is_none());

    // `inspect job:N` and the listing show it; status and doctor still count and read jobs.
    let Evidence::Job(inspected) = ws.inspect(&format!("job:{first}")).unwrap() else {
        panic!("job:{first} is a job");
    };
    assert_eq!(inspected.status, JobState::Cancelled);
    assert_eq!(inspected.error, after.error);
    let listed = ws.list_jobs(None, None).unwrap();
    assert_eq!(
        listed
            .jobs
            .iter()
            .map(|j| (j.id, j.status))
            .collect::<Vec<_>>(),
        vec![(second, JobState::Succeeded), (first, JobState::Cancelled)]
    );
    assert_eq!(ws.status().unwrap().counts.jobs, 2);
    let jobs = ws
        .doctor()
        .unwrap()
        .into_iter()
        .find(|f| f.check == "jobs")
        .unwrap();
    assert_eq!(jobs.detail, "no interrupted job");
    assert!(ws.verify().unwrap().ok);
    let json = serde_json::to_value(&after).unwrap();
    assert_eq!(json["status"], "cancelled");
}

#[test]
fn only_a_queued_job_is_cancelled() {
    let (_tmp, ws_dir, docs) = setup();
    let ws = Workspace::open(&ws_dir).unwrap();
    let queued = ws.enqueue_add(&request(&docs), Requester::Owner).unwrap();

    // A reason past the bound is refused, and the job is left queued.
    let long = "x".repeat(MAX_CANCEL_REASON + 1);
    assert_eq!(
        ws.cancel_job(queued, Some(&long)).unwrap_err().code(),
        ErrorCode::InvalidArgument
    );
    assert_eq!(ws.job_status(queued).unwrap().status, JobState::Queued);

    // Without a reason, then again: the second is a conflict that says why.
    let cancelled = ws.cancel_job(queued, None).unwrap();
    assert_eq!(cancelled.error.as_deref(), Some("cancelled by the owner"));
    let again = ws.cancel_job(queued, None).unwrap_err();
    assert_eq!(again.code(), ErrorCode::Conflict);
    assert!(again.to_string().contains("is cancelled"), "{again}");
    assert_eq!(
        ws.job_status(queued).unwrap().finished_at,
        cancelled.finished_at
    );

    // Unknown: not found. Finished: a conflict naming its status.
    assert_eq!(
        ws.cancel_job(9_999, None).unwrap_err().code(),
        ErrorCode::NotFound
    );
    let done = add(&ws, &docs).job_id;
    let finished = ws.cancel_job(done, Some("too late")).unwrap_err();
    assert_eq!(finished.code(), ErrorCode::Conflict);
    assert!(finished.to_string().contains("is succeeded"), "{finished}");
    assert_eq!(ws.job_status(done).unwrap().status, JobState::Succeeded);

    // Running: refused while it runs (asked from its own progress callback), and it ends as it
    // would have.
    let running = ws.enqueue_add(&request(&docs), Requester::Owner).unwrap();
    let asked = Mutex::new(None);
    let receipt = ws
        .run_job(running, &|p| {
            if p.phase == Phase::Walk {
                let mut asked = asked.lock().unwrap();
                if asked.is_none() {
                    *asked = Some(ws.cancel_job(running, None).map(|s| s.status));
                }
            }
        })
        .unwrap();
    let refused = asked
        .into_inner()
        .unwrap()
        .expect("asked while it ran")
        .unwrap_err();
    assert_eq!(refused.code(), ErrorCode::Conflict);
    let message = refused.to_string();
    assert!(message.contains("is running"), "{message}");
    assert!(message.contains("safe points"), "{message}");
    assert_eq!(
        ws.job_status(running).unwrap().status,
        JobState::from_outcome(receipt.status)
    );
}

/// Every migration in `migrations/`, in order: (version, file name, SQL), as the engine embeds them.
fn migration_files() -> Vec<(i64, String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../migrations");
    let mut found: Vec<(i64, String, String)> = fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let version = name.get(..4)?.parse().ok()?;
            Some((version, name, fs::read_to_string(e.path()).unwrap()))
        })
        .collect();
    found.sort();
    found
}

/// The schema objects on `jobs` (the table, then its indexes), as `sqlite_schema` has them.
fn jobs_schema(conn: &Connection) -> Vec<(String, String, String)> {
    conn.prepare("SELECT type, name, sql FROM sqlite_schema WHERE tbl_name = 'jobs' AND sql IS NOT NULL ORDER BY type DESC, name")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap()
}

#[test]
fn a_workspace_of_schema_20_migrates_with_its_jobs() {
    let (_tmp, ws_dir, docs) = setup();
    // History whose rows name their jobs: a published job (its snapshot, steps and diagnostics
    // list) and a queued one.
    let ws = Workspace::open(&ws_dir).unwrap();
    let published = add(&ws, &docs);
    let queued = ws.enqueue_add(&request(&docs), Requester::Owner).unwrap();
    drop(ws);

    // Back to schema 20 exactly: `jobs` as migrations 1 to 20 leave it, no trigger guarding
    // revisions (23 adds it), and no ledger row for 21 or later (22 adds the lease columns to
    // the same table).
    let migrations = migration_files();
    assert!(migrations.last().unwrap().0 >= 21);
    let v20 = Connection::open_in_memory().unwrap();
    for (version, _, sql) in migrations.iter().filter(|m| m.0 <= 20) {
        v20.execute_batch(sql)
            .unwrap_or_else(|e| panic!("{version}: {e}"));
    }
    let old = jobs_schema(&v20);
    assert!(old[0].2.contains("'interrupted')"), "{old:?}");
    let corpus = ws_dir.join("corpus.sqlite3");
    let conn = Connection::open(&corpus).unwrap();
    conn.pragma_update(None, "foreign_keys", "ON").unwrap();
    let recreate: String = old.iter().map(|(_, _, sql)| format!("{sql};\n")).collect();
    conn.execute_batch(&format!(
        "BEGIN;
         PRAGMA defer_foreign_keys = ON;
         CREATE TEMP TABLE saved AS SELECT * FROM jobs;
         DROP TABLE jobs;
         {recreate}
         INSERT INTO jobs SELECT id, kind, status, request_json, receipt_json, pid, error, created_at, started_at, finished_at, diagnostics_sha256 FROM saved;
         DROP TABLE saved;
         DROP TRIGGER revisions_are_immutable;
         DELETE FROM schema_migrations WHERE version >= 21;
         COMMIT;"
    ))
    .unwrap();
    assert_eq!(jobs_schema(&conn), old);
    drop(conn);

    assert_eq!(
        Workspace::open(&ws_dir).unwrap_err().code(),
        ErrorCode::MigrationRequired
    );
    assert_eq!(
        Workspace::migrate(&ws_dir).unwrap(),
        (21..=migrations.last().unwrap().0).collect::<Vec<_>>()
    );

    // The ledger records 21 as the engine embeds it; `jobs` is what a new workspace has.
    let conn = Connection::open(&corpus).unwrap();
    let (name, recorded): (String, String) = conn
        .query_row(
            "SELECT name, checksum FROM schema_migrations WHERE version = 21",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    let (_, file, sql) = &migrations[20];
    assert_eq!(&name, file);
    assert_eq!(recorded, hex::encode(Sha256::digest(sql.as_bytes())));
    let fresh = tempfile::tempdir().unwrap();
    Workspace::init(&fresh.path().join("ws")).unwrap();
    let new = Connection::open(fresh.path().join("ws/corpus.sqlite3")).unwrap();
    assert_eq!(jobs_schema(&conn), jobs_schema(&new));
    let orphans: i64 = conn
        .query_row("SELECT COUNT(*) FROM pragma_foreign_key_check", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(orphans, 0);
    drop(conn);

    // Every job reads as before, the published one still named by its snapshot; the queued one
    // can now be cancelled.
    let ws = Workspace::open(&ws_dir).unwrap();
    let status = ws.job_status(published.job_id).unwrap();
    assert_eq!(status.status, JobState::from_outcome(published.status));
    assert!(!status.steps.is_empty());
    let snapshot = published.snapshot_id.expect("the add published");
    let Evidence::Snapshot(s) = ws.inspect(&format!("snapshot:{snapshot}")).unwrap() else {
        panic!("snapshot:{snapshot} is a snapshot");
    };
    assert_eq!(s.job_id, Some(published.job_id));
    assert_eq!(ws.queued_jobs().unwrap(), vec![queued]);
    assert_eq!(
        ws.cancel_job(queued, Some("migrated")).unwrap().status,
        JobState::Cancelled
    );
    assert!(ws.queued_jobs().unwrap().is_empty());
    assert!(ws.verify().unwrap().ok);
}
