//! A service store's backup (`manage backup` on a workspace whose rows are in PostgreSQL and whose
//! artifacts are in a bucket): the database's own dump, taken in one exported snapshot, plus the
//! artifacts that snapshot references. Restored into a fresh database and a fresh bucket prefix,
//! it answers every query byte for byte as the original did, and verifies clean. A real
//! PostgreSQL and a real SeaweedFS (tests/common); skipped without them unless `TYCHORA_REQUIRE`
//! names servers.

mod common;

use std::path::Path;

use common::postgres::Postgres;
use common::seaweed::Seaweed;
use tychora_core::manage::RestoreTarget;
use tychora_core::query::QueryRequest;
use tychora_core::{ErrorCode, Workspace};

/// Every query's whole answer, as JSON, without what differs between two runs of one query
/// (its timing and its run id).
fn answers(ws: &Workspace, queries: &[&str]) -> Vec<String> {
    queries
        .iter()
        .map(|q| {
            let result = ws
                .search(&QueryRequest {
                    query: (*q).into(),
                    limit: Some(10),
                    ..Default::default()
                })
                .unwrap();
            let mut json = serde_json::to_value(&result.segments).unwrap();
            strip(&mut json);
            json.to_string()
        })
        .collect()
}

fn strip(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::Object(map) => {
            map.retain(|k, _| k != "duration_ms" && k != "query_run_id");
            map.values_mut().for_each(strip);
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(strip),
        _ => {}
    }
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn a_service_backup_restores_into_a_fresh_database_and_bucket_with_the_same_answers() {
    let Some(pg) = Postgres::start() else { return };
    let Some(s3) = Seaweed::start() else { return };
    s3.credentials();
    let tmp = tempfile::tempdir().unwrap();
    let docs = tmp.path().join("docs");
    for i in 0..30 {
        write(
            &docs.join(format!("note-{i:02}.md")),
            &format!(
                "# Note {i}\n\nThe survey of moraine {i} found sediment layers.\n\n## Birds\n\nA heron {i} nests by the weir.\n"
            ),
        );
    }
    write(
        &docs.join("glacier.md"),
        "# Glacier\n\nThe glacier retreated four kilometres.\n",
    );
    let service = tmp.path().join("service");
    Workspace::init(&service).unwrap();
    let url = pg.database();
    let toml = service.join("workspace.toml");
    std::fs::write(
        &toml,
        std::fs::read_to_string(&toml).unwrap()
            + &format!("\n[store]\nurl = {url:?}\n")
            + &s3.toml("original"),
    )
    .unwrap();
    Workspace::migrate(&service).unwrap();
    let queries = [
        "moraine sediment survey",
        "heron weir",
        "glacier retreated",
        "note 7",
    ];
    let backup = tmp.path().join("backup");
    let before = {
        let ws = Workspace::open(&service).unwrap();
        let receipt = common::add(&ws, &docs);
        assert_eq!(receipt.files.added, 31);
        let before = answers(&ws, &queries);
        let report = ws.backup(&backup).unwrap();
        assert_eq!(report.artifacts, 31);
        assert_eq!(report.generations, 0, "each daemon builds its own indexes");
        // A write after the backup is not in it: the dump is one snapshot.
        write(&docs.join("late.md"), "# Late\n\nAn osprey arrived late.\n");
        assert_eq!(common::add(&ws, &docs).files.added, 1);
        before
    };
    assert!(backup.join("store.pgdump").is_file());
    assert!(!backup.join("corpus.sqlite3").exists());

    // Restored into a fresh database and a fresh prefix of the bucket.
    let fresh = pg.database();
    let restored = tmp.path().join("restored");
    let endpoint = s3.endpoint.clone();
    let refused = Workspace::restore(&backup, &restored).unwrap_err();
    assert_eq!(refused.code(), ErrorCode::InvalidArgument, "{refused}");
    let target = RestoreTarget {
        store: Some(&fresh),
        artifacts: Some("s3://tychora/restored"),
        endpoint: Some(&endpoint),
    };
    let report = Workspace::restore_to(&backup, &restored, &target).unwrap();
    assert_eq!(report.artifacts, 31);
    let config = std::fs::read_to_string(restored.join("workspace.toml")).unwrap();
    assert!(config.contains(&fresh), "{config}");
    assert!(config.contains("s3://tychora/restored"), "{config}");
    assert!(!restored.join("store.pgdump").exists());
    let ws = Workspace::open(&restored).unwrap();
    let verify = ws.verify().unwrap();
    assert!(verify.ok, "{:?}", verify.problems);
    assert_eq!(
        answers(&ws, &queries),
        before,
        "the restored service answers differently"
    );
    // The late add is not in the backup.
    let late = ws
        .search(&QueryRequest {
            query: "osprey arrived late".into(),
            limit: Some(3),
            ..Default::default()
        })
        .unwrap();
    assert!(
        late.segments.iter().all(|s| s.source.path != "late.md"),
        "the backup holds a write made after it"
    );
    drop(ws);

    // A database that is not empty refuses a restore whole.
    let again = tmp.path().join("again");
    let err = Workspace::restore_to(&backup, &again, &target).unwrap_err();
    assert_eq!(err.code(), ErrorCode::Conflict, "{err}");
    assert!(!again.exists());
}
