//! A workspace whose canonical rows live in PostgreSQL (`[store] url` in workspace.toml) runs the
//! same engine as the embedded default: SciFact's 5,183 abstracts added to one workspace on each
//! store, then its 300 test queries asked of both, give the same ranked evidence — so the same
//! figures. A real PostgreSQL (tests/common/postgres.rs); skipped without it unless
//! `TYCHORA_REQUIRE` names servers.

mod common;

use std::io::{BufRead, BufReader, Write as _};
use std::path::Path;

use common::postgres::Postgres;
use tychora_core::query::QueryRequest;
use tychora_core::{ErrorCode, Workspace};

const SCIFACT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/data/scifact");

/// SciFact's corpus as JSON Lines files of 50 abstracts each (as `eval beir` lays it out).
fn corpus(dir: &Path) -> usize {
    std::fs::create_dir_all(dir).unwrap();
    let file = std::fs::File::open(Path::new(SCIFACT).join("corpus.jsonl.gz")).unwrap();
    let lines: Vec<String> = BufReader::new(flate2::read::GzDecoder::new(file))
        .lines()
        .map(Result::unwrap)
        .filter(|l| !l.trim().is_empty())
        .collect();
    for (n, part) in lines.chunks(50).enumerate() {
        let mut out = std::fs::File::create(dir.join(format!("scifact-{n:03}.jsonl"))).unwrap();
        for line in part {
            writeln!(out, "{line}").unwrap();
        }
    }
    lines.len()
}

/// The test split's query texts, in order.
fn test_queries() -> Vec<String> {
    let judged: std::collections::BTreeSet<String> =
        std::fs::read_to_string(Path::new(SCIFACT).join("qrels/test.tsv"))
            .unwrap()
            .lines()
            .skip(1)
            .filter_map(|l| l.split('\t').next().map(str::to_string))
            .collect();
    std::fs::read_to_string(Path::new(SCIFACT).join("queries.jsonl"))
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|q| judged.contains(q["_id"].as_str().unwrap_or_default()))
        .map(|q| q["text"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// A query's top 10 as what an agent cites: the file, the lines and the text.
fn answer(ws: &Workspace, query: &str) -> Vec<String> {
    ws.search(&QueryRequest {
        query: query.into(),
        limit: Some(10),
        ..Default::default()
    })
    .unwrap()
    .segments
    .iter()
    .map(|s| format!("{} {}", s.citation, s.text))
    .collect()
}

#[test]
#[cfg_attr(not(shared_data), ignore = "reads ../shared/data, not present")]
fn a_workspace_on_postgresql_answers_as_the_embedded_one() {
    let Some(pg) = Postgres::start() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let docs = tmp.path().join("scifact");
    let abstracts = corpus(&docs);
    let (embedded, service) = (tmp.path().join("embedded"), tmp.path().join("service"));
    Workspace::init(&embedded).unwrap();
    Workspace::init(&service).unwrap();
    let url = pg.database();
    let toml = service.join("workspace.toml");
    std::fs::write(
        &toml,
        std::fs::read_to_string(&toml).unwrap() + &format!("\n[store]\nurl = {url:?}\n"),
    )
    .unwrap();
    // Opening never migrates: the service store is migrated on request, then opens.
    let refused = Workspace::open(&service).unwrap_err();
    assert_eq!(refused.code(), ErrorCode::MigrationRequired, "{refused}");
    assert!(!Workspace::migrate(&service).unwrap().is_empty());

    let mut answers = Vec::new();
    for dir in [&embedded, &service] {
        let ws = Workspace::open(dir).unwrap();
        let receipt = common::add(&ws, &docs);
        assert_eq!(
            receipt.files.added,
            abstracts.div_ceil(50),
            "{}",
            dir.display()
        );
        let status = ws.status().unwrap();
        assert_eq!(
            status.counts.sources,
            i64::try_from(abstracts.div_ceil(50)).unwrap()
        );
        let schema = if dir == &service {
            tychora_core::store::postgres::latest()
        } else {
            tychora_core::store::migrate::latest()
        };
        assert_eq!(status.schema_version, schema, "{}", dir.display());
        assert!(status.bytes.corpus > 0, "{}", dir.display());
        let queries = test_queries();
        assert_eq!(queries.len(), 300);
        answers.push(queries.iter().map(|q| answer(&ws, q)).collect::<Vec<_>>());
        // A second add finds nothing new: the service store's fingerprints read back.
        let again = common::add(&ws, &docs);
        assert_eq!(
            again.files.unchanged,
            abstracts.div_ceil(50),
            "{}",
            dir.display()
        );
        let verify = ws.verify().unwrap();
        assert!(verify.ok, "{}: {:?}", dir.display(), verify.problems);
        // Inspect, erasure of an original, withdrawal and retention run on the same store.
        let hit = &ws
            .search(&QueryRequest {
                query: "cholesterol".into(),
                limit: Some(1),
                ..Default::default()
            })
            .unwrap()
            .segments[0];
        let evidence = ws
            .inspect(&format!("source:{}", hit.source.source_id))
            .unwrap();
        let erased = ws
            .delete_original("scifact-000.jsonl", "a request to erase", &|_| {})
            .unwrap();
        assert_eq!(erased.erased.len(), 1, "{}", dir.display());
        let withdrawn = ws
            .withdraw("scifact-001.jsonl", "out of scope", &|_| {})
            .unwrap();
        assert_eq!(withdrawn.withdrawn.len(), 1, "{}", dir.display());
        let purged = ws.purge_at(i64::MAX / 2).unwrap();
        let after = ws.status().unwrap();
        assert_eq!(
            after.counts.sources,
            i64::try_from(abstracts.div_ceil(50)).unwrap() - 2,
            "{}",
            dir.display()
        );
        let verify = ws.verify().unwrap();
        assert!(verify.ok, "{}: {:?}", dir.display(), verify.problems);
        let evidence = serde_json::to_value(&evidence).unwrap();
        answers.push(vec![vec![
            format!(
                "{} {} {} {}",
                evidence["type"],
                evidence["path"],
                evidence["status"],
                evidence["revisions"].as_array().map_or(0, Vec::len)
            ),
            format!(
                "{} {} {}",
                purged.snapshots, purged.extractions, after.counts.chunks
            ),
        ]]);
    }
    let (sqlite, postgres) = (&answers[0], &answers[2]);
    let dump = |i: usize| &answers[i][0];
    assert_eq!(
        dump(1),
        dump(3),
        "inspect, erasure, withdrawal and retention differ"
    );
    let differing = sqlite.iter().zip(postgres).filter(|(a, b)| a != b).count();
    assert_eq!(differing, 0, "queries answered differently on PostgreSQL");
    assert!(sqlite.iter().all(|a| !a.is_empty()));

    // The password never sits in the configuration: a URL naming one is refused at open.
    std::fs::write(
        &toml,
        std::fs::read_to_string(&toml)
            .unwrap()
            .replace(&url, &format!("{url} password=secret")),
    )
    .unwrap();
    let refused = Workspace::open(&service).unwrap_err();
    assert_eq!(refused.code(), ErrorCode::InvalidArgument);
    assert!(!refused.to_string().contains("secret"), "{refused}");
}
