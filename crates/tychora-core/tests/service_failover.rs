//! The service store's primary dies and a streaming standby is promoted (`pg_basebackup -R`,
//! `pg_ctl promote`): what a workspace on it does. Its connection string names both servers with
//! `target_session_attrs=read-write`, as a team running a standby would write it. While no
//! primary answers, every call fails with `E_STORE_UNAVAILABLE` (no other error, no partial
//! snapshot); once the standby is promoted the same open workspace answers again — the same
//! evidence as before — and takes writes, and verify finds nothing wrong. The outage measured here
//! is printed. A real PostgreSQL (tests/common/postgres.rs); skipped without it unless
//! `TYCHORA_REQUIRE` names servers.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::postgres::Postgres;
use tychora_core::query::QueryRequest;
use tychora_core::{ErrorCode, Workspace};

fn top(ws: &Workspace, query: &str) -> tychora_core::Result<Vec<String>> {
    Ok(ws
        .search(&QueryRequest {
            query: query.into(),
            limit: Some(5),
            ..Default::default()
        })?
        .segments
        .iter()
        .map(|s| format!("{} {}", s.citation, s.text))
        .collect())
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
#[allow(clippy::print_stderr)] // the measured outage is for whoever runs it to see
fn a_promoted_standby_takes_over_and_the_workspace_answers_again() {
    let Some(primary) = Postgres::start() else {
        return;
    };
    let url = primary.database();
    let name = url.rsplit("dbname=").next().unwrap().to_string();
    let standby = primary.standby();
    let both = format!(
        "host={},{} port={},{} user=postgres dbname={name} target_session_attrs=read-write",
        primary.socket.display(),
        standby.socket.display(),
        primary.port,
        standby.port
    );
    let tmp = tempfile::tempdir().unwrap();
    let docs = tmp.path().join("docs");
    for i in 0..20 {
        write(
            &docs.join(format!("n{i}.md")),
            &format!("# Note {i}\n\nThe moraine survey {i} found sediment.\n"),
        );
    }
    let dir = tmp.path().join("ws");
    Workspace::init(&dir).unwrap();
    let toml = dir.join("workspace.toml");
    std::fs::write(
        &toml,
        std::fs::read_to_string(&toml).unwrap() + &format!("\n[store]\nurl = {both:?}\n"),
    )
    .unwrap();
    Workspace::migrate(&dir).unwrap();
    let ws = Workspace::open(&dir).unwrap();
    assert_eq!(common::add(&ws, &docs).files.added, 20);
    let before = top(&ws, "moraine survey sediment").unwrap();
    assert!(!before.is_empty());
    // The standby has replayed the publication before the primary dies.
    let published = primary.psql(&name, "SELECT current_snapshot_id FROM workspaces");
    let started = Instant::now();
    while standby.psql(&name, "SELECT current_snapshot_id FROM workspaces") != published {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the standby never caught up"
        );
        std::thread::sleep(Duration::from_millis(50));
    }

    primary.stop();
    let down = Instant::now();
    // No primary: a clear error, every time, and nothing else.
    for _ in 0..3 {
        let err = top(&ws, "moraine survey sediment").unwrap_err();
        assert_eq!(err.code(), ErrorCode::StoreUnavailable, "{err}");
        assert!(!err.to_string().contains("password"), "{err}");
    }
    write(&docs.join("late.md"), "# Late\n\nAn osprey came late.\n");
    let refused = common::try_add(&ws, &docs).unwrap_err();
    assert_eq!(refused.code(), ErrorCode::StoreUnavailable, "{refused}");
    let failing = down.elapsed();

    let promoting = Instant::now();
    standby.promote();
    let promoted = promoting.elapsed();
    let back = loop {
        match top(&ws, "moraine survey sediment") {
            Ok(answer) => break answer,
            Err(e) => {
                assert_eq!(e.code(), ErrorCode::StoreUnavailable, "{e}");
                assert!(
                    down.elapsed() < Duration::from_secs(60),
                    "never came back: {e}"
                );
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    };
    let outage = down.elapsed();
    assert_eq!(back, before, "the promoted standby answers differently");
    // Writes go to the new primary; the add refused during the outage succeeds now.
    assert_eq!(common::add(&ws, &docs).files.added, 1);
    assert!(top(&ws, "osprey came late").unwrap()[0].contains("late.md"));
    let verify = ws.verify().unwrap();
    assert!(verify.ok, "{:?}", verify.problems);
    eprintln!(
        "failover: calls failed E_STORE_UNAVAILABLE for {} ms before promotion (the test's own pause), `pg_ctl promote` took {} ms, the first answer came {} ms after promotion began ({} ms after the primary died)",
        failing.as_millis(),
        promoted.as_millis(),
        (outage - (promoting - down)).as_millis(),
        outage.as_millis()
    );
}
