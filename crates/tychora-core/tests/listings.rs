//! The dashboard's newest-first listings: jobs (each as `job_status` shows it) and recorded
//! query runs, paged by a `before` cursor.

use std::fs;
use std::time::Duration;

use tychora_core::query::QueryRequest;
use tychora_core::{ErrorCode, Workspace};

mod common;
use common::add;

/// A workspace with one document folder, and the folder.
fn setup() -> (tempfile::TempDir, Workspace, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let ws_dir = tmp.path().join("ws");
    let docs = tmp.path().join("docs");
    fs::create_dir_all(&docs).unwrap();
    fs::write(
        docs.join("tides.md"),
        "# Tides\n\nThe harbour tide gauge reads twice a day.\n\n## Storms\n\nA storm surge raises the water above the predicted tide.\n",
    )
    .unwrap();
    fs::write(
        docs.join("notes.txt"),
        "Plain notes about lighthouse keepers.\n\nSecond paragraph on fog signals.\n",
    )
    .unwrap();
    Workspace::init(&ws_dir).unwrap();
    let ws = Workspace::open(&ws_dir).unwrap();
    (tmp, ws, docs)
}

#[test]
fn jobs_page_newest_first_each_as_job_status_shows_it() {
    let (_tmp, ws, docs) = setup();
    let mut ids = Vec::new();
    for i in 0..3 {
        fs::write(
            docs.join(format!("log-{i}.md")),
            format!("# Log {i}\n\nEntry {i} of the keeper's log.\n"),
        )
        .unwrap();
        ids.push(add(&ws, &docs).job_id);
    }
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");

    let first = ws.list_jobs(Some(2), None).unwrap();
    let got: Vec<i64> = first.jobs.iter().map(|j| j.id).collect();
    assert_eq!(got, [ids[2], ids[1]]);
    assert_eq!(first.next_before, Some(ids[1]));
    for job in &first.jobs {
        // Exactly what `job_status` returns for it, receipt and steps included.
        let status = ws.job_status(job.id).unwrap();
        assert_eq!(
            serde_json::to_value(job).unwrap(),
            serde_json::to_value(&status).unwrap()
        );
        let receipt = job
            .receipt
            .as_ref()
            .expect("a finished add has its receipt");
        assert_eq!(receipt.job_id, job.id);
        assert!(!job.steps.is_empty());
    }

    let second = ws.list_jobs(Some(2), first.next_before).unwrap();
    let got: Vec<i64> = second.jobs.iter().map(|j| j.id).collect();
    assert_eq!(got, [ids[0]]);
    assert_eq!(second.next_before, None);
    assert_eq!(
        serde_json::to_value(&second.jobs[0]).unwrap(),
        serde_json::to_value(ws.job_status(ids[0]).unwrap()).unwrap()
    );

    // The default page holds all three; a cursor below every id gives an empty page.
    let all = ws.list_jobs(None, None).unwrap();
    assert_eq!(all.jobs.len(), 3);
    assert_eq!(all.next_before, None);
    let none = ws.list_jobs(None, Some(ids[0])).unwrap();
    assert!(none.jobs.is_empty());
    assert_eq!(none.next_before, None);
}

#[test]
fn runs_page_newest_first_with_query_and_result_count() {
    let (_tmp, ws, docs) = setup();
    add(&ws, &docs);
    let queries = [
        "tide gauge harbour",
        "storm surge",
        "fog signals lighthouse",
    ];
    let mut expected = Vec::new();
    for (i, query) in queries.iter().enumerate() {
        let result = ws
            .search(&QueryRequest {
                query: (*query).into(),
                agent_id: Some("dashboard-test".into()),
                task_id: (i == 2).then(|| "task-7".into()),
                ..Default::default()
            })
            .unwrap();
        expected.push((
            result.run_id.clone(),
            result.segments.len(),
            result.snapshot_id,
        ));
        // Distinct milliseconds, so the order by `created_at` is the order of the searches.
        std::thread::sleep(Duration::from_millis(3));
    }
    assert!(expected.iter().all(|(_, n, _)| *n > 0), "{expected:?}");

    let first = ws.list_runs(Some(2), None).unwrap();
    let got: Vec<&str> = first.runs.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(got, [expected[2].0.as_str(), expected[1].0.as_str()]);
    assert_eq!(first.next_before.as_deref(), Some(expected[1].0.as_str()));
    let newest = &first.runs[0];
    assert_eq!(newest.query, queries[2]);
    assert_eq!(newest.results as usize, expected[2].1);
    assert_eq!(newest.snapshot_id, expected[2].2);
    assert_eq!(newest.agent_id.as_deref(), Some("dashboard-test"));
    assert_eq!(newest.task_id.as_deref(), Some("task-7"));
    assert!(newest.duration_ms > 0.0);
    assert!(newest.created_at >= first.runs[1].created_at);
    assert_eq!(first.runs[1].query, queries[1]);
    assert_eq!(first.runs[1].results as usize, expected[1].1);
    assert_eq!(first.runs[1].task_id, None);
    // The brief agrees with the full record.
    let record = ws.inspect_run(&newest.id).unwrap();
    assert_eq!(record.summary["returned"], newest.results);
    assert_eq!(record.created_at, newest.created_at);

    let second = ws.list_runs(Some(2), first.next_before.as_deref()).unwrap();
    let got: Vec<&str> = second.runs.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(got, [expected[0].0.as_str()]);
    assert_eq!(second.runs[0].query, queries[0]);
    assert_eq!(second.runs[0].results as usize, expected[0].1);
    assert_eq!(second.next_before, None);

    assert_eq!(ws.list_runs(None, None).unwrap().runs.len(), 3);
    let unknown = ws
        .list_runs(None, Some("qr_00000000000000000000"))
        .unwrap_err();
    assert_eq!(unknown.code(), ErrorCode::NotFound);
}

#[test]
fn a_limit_outside_1_to_500_is_an_invalid_argument() {
    let (_tmp, ws, _docs) = setup();
    for limit in [0, 501, u32::MAX] {
        let jobs = ws.list_jobs(Some(limit), None).unwrap_err();
        assert_eq!(jobs.code(), ErrorCode::InvalidArgument);
        assert!(jobs.to_string().contains("between 1 and 500"), "{jobs}");
        let runs = ws.list_runs(Some(limit), None).unwrap_err();
        assert_eq!(runs.code(), ErrorCode::InvalidArgument);
    }
    // The bounds themselves are fine, on an empty workspace too.
    for limit in [1, 500] {
        assert!(ws.list_jobs(Some(limit), None).unwrap().jobs.is_empty());
        assert!(ws.list_runs(Some(limit), None).unwrap().runs.is_empty());
    }
}
