//! The job queue's contract, one suite over both adapters: the embedded store's SQLite database
//! and the service store on a real PostgreSQL (tests/common/postgres.rs). Every test runs on
//! each; PostgreSQL-only faults (unreachable, stopped mid-use, a password) come last.

mod common;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::postgres::Postgres;
use tychora_core::job::{JobKind, JobState};
use tychora_core::store::postgres::{self, PgQueue, PgStore};
use tychora_core::store::queue::{Ending, JobQueue, MAX_ATTEMPTS, SqliteQueue};
use tychora_core::{ErrorCode, Workspace};

/// Opens one more handle on the same queue, as another daemon would.
type Open = Box<dyn Fn() -> Box<dyn JobQueue> + Send + Sync>;

/// Runs `check` on the SQLite queue, then on the PostgreSQL one (when PostgreSQL is here).
fn each_adapter(check: impl Fn(&str, &Open)) {
    let dir = tempfile::tempdir().unwrap();
    Workspace::init(dir.path()).unwrap();
    let db = dir.path().join("corpus.sqlite3");
    let open: Open = Box::new(move || Box::new(SqliteQueue::open(&db).unwrap()));
    check("sqlite", &open);

    let Some(pg) = Postgres::start() else { return };
    let url = pg.database();
    PgStore::open_and_migrate(&url, 2).unwrap();
    let open: Open = Box::new(move || Box::new(PgQueue::new(PgStore::open(&url, 4).unwrap())));
    check("postgres", &open);
}

fn add(queue: &dyn JobQueue, n: usize) -> Vec<i64> {
    (0..n)
        .map(|i| {
            queue
                .enqueue(JobKind::Add, &format!(r#"{{"paths":["f{i}.md"]}}"#))
                .unwrap()
        })
        .collect()
}

const LEASE: Duration = Duration::from_secs(30);

fn succeeded() -> Ending<'static> {
    Ending {
        state: JobState::Succeeded,
        receipt_json: Some(r#"{"files":1}"#),
        error: None,
    }
}

#[test]
fn jobs_are_taken_oldest_first_each_once_and_end_as_told() {
    each_adapter(|name, open| {
        let queue = open();
        let ids = add(queue.as_ref(), 3);
        let first = queue.claim("w1", LEASE).unwrap().unwrap();
        assert_eq!(
            (first.id, first.attempt, first.kind),
            (ids[0], 1, JobKind::Add),
            "{name}"
        );
        assert_eq!(first.request_json, r#"{"paths":["f0.md"]}"#, "{name}");
        assert_eq!(
            queue.holder(first.id).unwrap(),
            Some(("w1".into(), 1)),
            "{name}"
        );
        let second = queue.claim("w2", LEASE).unwrap().unwrap();
        let third = queue.claim("w1", LEASE).unwrap().unwrap();
        assert_eq!((second.id, third.id), (ids[1], ids[2]), "{name}");
        assert!(queue.claim("w3", LEASE).unwrap().is_none(), "{name}");

        assert!(queue.finish(&first, succeeded()).unwrap(), "{name}");
        let failed = Ending {
            state: JobState::Failed,
            receipt_json: None,
            error: Some("E_IO: disk full"),
        };
        assert!(queue.finish(&second, failed).unwrap(), "{name}");
        let row = queue.job(first.id).unwrap().unwrap();
        assert_eq!(row.status, JobState::Succeeded, "{name}");
        assert_eq!(row.receipt.as_deref(), Some(r#"{"files":1}"#), "{name}");
        assert!(row.finished_at.is_some() && row.error.is_none(), "{name}");
        let row = queue.job(second.id).unwrap().unwrap();
        assert_eq!(
            (row.status, row.error.as_deref()),
            (JobState::Failed, Some("E_IO: disk full")),
            "{name}"
        );
        assert_eq!(queue.holder(first.id).unwrap(), None, "{name}");

        // Ending twice, or as a state that is not an ending, is refused.
        assert!(!queue.finish(&first, succeeded()).unwrap(), "{name}");
        let bogus = Ending {
            state: JobState::Queued,
            receipt_json: None,
            error: None,
        };
        let err = queue.finish(&third, bogus).unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidArgument, "{name}");
        assert!(queue.job(999_999).unwrap().is_none(), "{name}");
    });
}

#[test]
fn many_workers_in_many_handles_take_every_job_exactly_once() {
    each_adapter(|name, open| {
        let ids = add(open().as_ref(), 120);
        let taken: Arc<Mutex<BTreeMap<i64, Vec<String>>>> = Arc::default();
        std::thread::scope(|scope| {
            for w in 0..4 {
                let queue = open();
                let taken = Arc::clone(&taken);
                scope.spawn(move || {
                    let worker = format!("worker-{w}");
                    while let Some(claim) = queue.claim(&worker, LEASE).unwrap() {
                        taken
                            .lock()
                            .unwrap()
                            .entry(claim.id)
                            .or_default()
                            .push(worker.clone());
                        // The job's work, outside any transaction: the other workers take
                        // jobs meanwhile.
                        std::thread::sleep(Duration::from_millis(2));
                        assert!(queue.finish(&claim, succeeded()).unwrap());
                    }
                });
            }
        });
        let taken = taken.lock().unwrap();
        assert_eq!(
            taken.keys().copied().collect::<Vec<_>>(),
            ids,
            "{name}: every job taken"
        );
        let twice: Vec<_> = taken.iter().filter(|(_, w)| w.len() > 1).collect();
        assert!(twice.is_empty(), "{name}: taken twice: {twice:?}");
        let workers: std::collections::BTreeSet<&String> = taken.values().flatten().collect();
        assert!(
            workers.len() > 1,
            "{name}: one worker did everything: {workers:?}"
        );
    });
}

#[test]
fn an_expired_lease_passes_the_job_on_and_fences_the_first_worker() {
    each_adapter(|name, open| {
        let queue = open();
        let id = add(queue.as_ref(), 1)[0];
        let dead = queue
            .claim("dies", Duration::from_millis(200))
            .unwrap()
            .unwrap();
        assert!(
            queue.claim("other", LEASE).unwrap().is_none(),
            "{name}: leased"
        );
        std::thread::sleep(Duration::from_millis(400));
        let again = open().claim("other", LEASE).unwrap().unwrap();
        assert_eq!((again.id, again.attempt), (id, 2), "{name}");
        assert_eq!(
            queue.holder(id).unwrap(),
            Some(("other".into(), 2)),
            "{name}"
        );
        // The first worker comes back: its renewal and its finish are refused, nothing written.
        assert!(!queue.renew(&dead, LEASE).unwrap(), "{name}");
        assert!(!queue.finish(&dead, succeeded()).unwrap(), "{name}");
        assert_eq!(
            queue.job(id).unwrap().unwrap().status,
            JobState::Running,
            "{name}"
        );
        assert!(queue.finish(&again, succeeded()).unwrap(), "{name}");
        assert_eq!(
            queue.job(id).unwrap().unwrap().status,
            JobState::Succeeded,
            "{name}"
        );
    });
}

#[test]
fn a_renewed_lease_keeps_the_job() {
    each_adapter(|name, open| {
        let queue = open();
        add(queue.as_ref(), 1);
        let lease = Duration::from_millis(300);
        let claim = queue.claim("alive", lease).unwrap().unwrap();
        let other = open();
        for _ in 0..6 {
            std::thread::sleep(Duration::from_millis(100));
            assert!(queue.renew(&claim, lease).unwrap(), "{name}");
            assert!(
                other.claim("other", LEASE).unwrap().is_none(),
                "{name}: still held"
            );
        }
        assert!(queue.finish(&claim, succeeded()).unwrap(), "{name}");
    });
}

#[test]
fn a_job_whose_lease_keeps_expiring_ends_interrupted() {
    each_adapter(|name, open| {
        let queue = open();
        let id = add(queue.as_ref(), 1)[0];
        let short = Duration::from_millis(50);
        for attempt in 1..=MAX_ATTEMPTS {
            let claim = queue.claim(&format!("w{attempt}"), short).unwrap().unwrap();
            assert_eq!(claim.attempt, attempt, "{name}");
            std::thread::sleep(Duration::from_millis(120));
        }
        assert!(
            queue.claim("last", LEASE).unwrap().is_none(),
            "{name}: given up"
        );
        let row = queue.job(id).unwrap().unwrap();
        assert_eq!(row.status, JobState::Interrupted, "{name}");
        assert!(
            row.error.unwrap().contains("lease expired 3 times"),
            "{name}"
        );
        assert!(row.finished_at.is_some(), "{name}");
    });
}

#[test]
fn only_a_queued_job_is_cancelled_and_a_cancelled_job_is_never_taken() {
    each_adapter(|name, open| {
        let queue = open();
        let ids = add(queue.as_ref(), 2);
        queue
            .cancel(ids[0], "cancelled by the owner: wrong folder")
            .unwrap();
        let row = queue.job(ids[0]).unwrap().unwrap();
        assert_eq!(row.status, JobState::Cancelled, "{name}");
        assert_eq!(
            row.error.as_deref(),
            Some("cancelled by the owner: wrong folder"),
            "{name}"
        );
        let claim = queue.claim("w", LEASE).unwrap().unwrap();
        assert_eq!(claim.id, ids[1], "{name}: the cancelled job is passed over");
        let err = queue.cancel(ids[1], "too late").unwrap_err();
        assert_eq!(err.code(), ErrorCode::Conflict, "{name}: running");
        let err = queue.cancel(ids[0], "again").unwrap_err();
        assert_eq!(err.code(), ErrorCode::Conflict, "{name}: already cancelled");
        let err = queue.cancel(424_242, "none").unwrap_err();
        assert_eq!(err.code(), ErrorCode::NotFound, "{name}");
    });
}

#[test]
fn a_request_that_is_not_json_is_refused_by_the_store() {
    each_adapter(|name, open| {
        let queue = open();
        let err = queue.enqueue(JobKind::Add, "{not json").unwrap_err();
        assert!(
            matches!(err.code(), ErrorCode::Conflict | ErrorCode::Internal),
            "{name}: {err}"
        );
        assert!(
            queue.claim("w", LEASE).unwrap().is_none(),
            "{name}: nothing queued"
        );
    });
}

// PostgreSQL only: the store's faults.

#[test]
fn an_unreachable_store_is_unavailable_and_its_password_is_never_shown() {
    let Some(pg) = Postgres::start() else { return };
    let missing = format!("postgres://postgres:s3cret-pass@localhost:1/{}", "nowhere");
    let err = PgStore::open(&missing, 1).err().unwrap();
    assert_eq!(err.code(), ErrorCode::StoreUnavailable, "{err}");
    let text = err.to_string();
    assert!(!text.contains("s3cret-pass"), "{text}");
    assert!(
        text.contains("postgres://postgres@localhost:1/nowhere"),
        "{text}"
    );

    let bad = PgStore::open("postgres://[::1", 1).err().unwrap();
    assert_eq!(bad.code(), ErrorCode::InvalidArgument, "{bad}");

    // A database that is there but not migrated: refused, not migrated on open.
    let url = pg.database();
    let err = PgStore::open(&url, 1).err().unwrap();
    assert_eq!(err.code(), ErrorCode::MigrationRequired, "{err}");
    let (_, applied) = PgStore::open_and_migrate(&url, 1).unwrap();
    assert_eq!(applied, (1..=postgres::latest()).collect::<Vec<_>>());
    let (_, applied) = PgStore::open_and_migrate(&url, 1).unwrap();
    assert!(applied.is_empty());

    // A recorded migration whose text differs from this build's.
    let name = url.rsplit('=').next().unwrap().to_string();
    pg.psql(
        &name,
        "UPDATE schema_migrations SET checksum = repeat('0', 64)",
    );
    let err = PgStore::open(&url, 1).err().unwrap();
    assert_eq!(err.code(), ErrorCode::ChecksumMismatch, "{err}");
}

#[test]
fn a_store_that_goes_away_mid_use_is_unavailable_and_comes_back() {
    let Some(pg) = Postgres::start() else { return };
    let url = pg.database();
    PgStore::open_and_migrate(&url, 1).unwrap();
    let queue = PgQueue::new(PgStore::open(&url, 2).unwrap());
    let id = queue.enqueue(JobKind::Add, "{}").unwrap();
    pg.stop();
    let err = queue.claim("w", LEASE).unwrap_err();
    assert_eq!(err.code(), ErrorCode::StoreUnavailable, "{err}");
    let err = queue.enqueue(JobKind::Add, "{}").unwrap_err();
    assert_eq!(err.code(), ErrorCode::StoreUnavailable, "{err}");
    pg.start_server();
    // The pool drops its dead connections and opens new ones: the same handle works again.
    let mut claim = None;
    for _ in 0..20 {
        match queue.claim("w", LEASE) {
            Ok(found) => {
                claim = found;
                break;
            }
            Err(e) => {
                assert_eq!(e.code(), ErrorCode::StoreUnavailable, "{e}");
                std::thread::sleep(Duration::from_millis(100));
            }
        }
    }
    assert_eq!(
        claim.map(|c| c.id),
        Some(id),
        "the queued job survived the outage"
    );
}
