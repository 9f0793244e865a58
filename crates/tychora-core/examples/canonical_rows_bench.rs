//! `npm run bench:store` runs this: the canonical rows of an add written through the store's
//! repositories (`store::extractions`, `store::snapshots`) on both adapters side by side — the
//! embedded store's SQLite (`synchronous=FULL`) and PostgreSQL (Debian's server, `fsync=on`, on a
//! Unix socket) — with 1 and 2 writers, each a handle of its own (as separate daemons are).
//!
//! The documents are SciFact's abstracts (`../shared/data/scifact/corpus.jsonl.gz`), COPIES
//! times over under other paths: per abstract one source, artifact row, revision, extraction,
//! two units (title, abstract) with their locators and an identifier each, and one window; files
//! commit 256 to a transaction, then one snapshot publishes them all. Parsing, hashing the bytes,
//! the artifact bytes and the index builds are left out: this is the store's share of an add.
//! Prints one JSON object: per adapter and writer count, the median of RUNS runs on fresh stores.

#[allow(dead_code)] // the bench starts one durable cluster; the tests use the rest
#[path = "../tests/common/postgres.rs"]
mod postgres;
#[path = "../tests/common/servers.rs"]
mod servers;
#[allow(dead_code)] // the bench writes through it; the tests read its query log too
#[path = "../tests/common/store.rs"]
mod store_handle;

use std::io::{BufRead, BufReader};
use std::time::Instant;

use sha2::{Digest, Sha256};
use tychora_core::store::extractions::{
    self, ChunkRow, ExtractionRow, SourceRow, UnitRow, UnitWriter,
};
use tychora_core::store::postgres::PgStore;
use tychora_core::store::snapshots::{self, Member, NewSnapshot};
use tychora_core::store::tx::Tx;
use tychora_core::store::{self, workspaces};
use tychora_core::{Result, Span, UnitType};

use store_handle::Handle;

const FILES_PER_TRANSACTION: usize = 256;

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

struct Doc {
    uri: String,
    title: String,
    text: String,
}

/// SciFact's abstracts, `copies` times under other paths.
fn load(copies: usize) -> Vec<Doc> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data/scifact/corpus.jsonl.gz");
    let file = std::fs::File::open(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (the shared SciFact data)", path.display()));
    let mut docs = Vec::new();
    let rows: Vec<serde_json::Value> = BufReader::new(flate2::read::GzDecoder::new(file))
        .lines()
        .map(|l| serde_json::from_str(&l.unwrap()).unwrap())
        .collect();
    for copy in 0..copies {
        for row in &rows {
            docs.push(Doc {
                uri: format!(
                    "file:///scifact/{copy}/{}.json",
                    row["_id"].as_str().unwrap()
                ),
                title: row["title"].as_str().unwrap_or_default().to_string(),
                text: row["text"].as_str().unwrap_or_default().to_string(),
            });
        }
    }
    docs
}

fn span(start: usize, end: usize, line: usize) -> Span {
    Span {
        byte_start: start,
        byte_end: end,
        line_start: line,
        col_start: 1,
        line_end: line,
        col_end: end - start + 1,
    }
}

/// One file's rows, as the commit path writes them.
fn write(tx: &dyn Tx, root: i64, collection: i64, doc: &Doc, now: i64) -> Result<Member> {
    let rel_path = doc.uri.trim_start_matches("file:///scifact/");
    let (source, root_id, path) = extractions::upsert_source(
        tx,
        &SourceRow {
            collection_id: collection,
            format: "json",
            kind: None,
            root_id: root,
            rel_path,
            uri: &doc.uri,
            sensitivity: None,
            default_sensitivity: "internal",
        },
        now,
    )?;
    let size = doc.title.len() + doc.text.len() + 1;
    let sha256 = hex::encode(Sha256::digest(format!("{}\n{}", doc.title, doc.text)));
    extractions::put_artifact(tx, &sha256, size, "application/json", now)?;
    let revision = extractions::insert_revision(tx, source, &sha256, size, "{}", now)?;
    let extraction = extractions::insert_extraction(
        tx,
        &ExtractionRow {
            revision_id: revision,
            parser: "json@1",
            fingerprint: "bench",
            unit_count: 2,
            chunk_count: 1,
            diagnostics_json: "[]",
        },
        now,
    )?;
    let mut writer = UnitWriter::new(tx, extraction, revision)?;
    let mut units = Vec::new();
    for (ordinal, (unit_type, text, start)) in [
        (UnitType::Heading, doc.title.as_str(), 0),
        (UnitType::Paragraph, doc.text.as_str(), doc.title.len() + 1),
    ]
    .into_iter()
    .enumerate()
    {
        let unit = writer.unit(&UnitRow {
            ordinal,
            unit_type,
            is_leaf: true,
            parent_ordinal: None,
            text,
            heading_path_json: "[]",
            anchor: None,
            token_count: text.len() / 5,
            span: span(start, start + text.len(), ordinal + 1),
            json_pointer: Some("/text"),
        })?;
        writer.identifier(unit, "word", rel_path, rel_path)?;
        units.push(unit);
    }
    let body = format!("{}\n{}", doc.title, doc.text);
    writer.chunk(&ChunkRow {
        ordinal: 0,
        first_unit_id: units[0],
        last_unit_id: units[1],
        owner_key: rel_path,
        owner_chunk_id: None,
        span: span(0, size, 1),
        token_count: size / 5,
        render_tokens: size / 5 + 8,
        has_code: false,
        may_contain_instructions: false,
        text: Some(&body),
        capsule_json: "{}",
    })?;
    Ok(Member {
        source_id: source,
        revision_id: revision,
        extraction_id: extraction,
        collection_id: collection,
        root_id,
        rel_path: path,
        uri: doc.uri.clone(),
        sha256,
    })
}

/// One run: `writers` handles write their share of `docs`, then one snapshot publishes them all;
/// returns the seconds.
fn run(open: &(dyn Fn() -> Handle + Sync), docs: &[Doc], writers: usize) -> f64 {
    let first = open();
    let (root, collection) = first
        .write(|tx| {
            let root = extractions::root_id(tx, "/scifact", 1)?;
            let (collection, _) = workspaces::collection(tx, "default")?.unwrap();
            Ok((root, collection))
        })
        .unwrap();
    let started = Instant::now();
    let share = docs.len().div_ceil(writers);
    let members: Vec<Member> = std::thread::scope(|scope| {
        let threads: Vec<_> = docs
            .chunks(share)
            .map(|mine| {
                scope.spawn(move || {
                    let store = open();
                    let mut members = Vec::with_capacity(mine.len());
                    for batch in mine.chunks(FILES_PER_TRANSACTION) {
                        members.extend(
                            store
                                .write(|tx| {
                                    batch
                                        .iter()
                                        .map(|doc| write(tx, root, collection, doc, 2))
                                        .collect::<Result<Vec<_>>>()
                                })
                                .unwrap(),
                        );
                    }
                    members
                })
            })
            .collect();
        threads
            .into_iter()
            .flat_map(|t| t.join().unwrap())
            .collect()
    });
    first
        .write(|tx| {
            snapshots::publish(
                tx,
                &NewSnapshot {
                    parent: snapshots::current(tx)?,
                    job_id: None,
                    chunk_count: members.len() as u64,
                    members: &members,
                    batches: &[],
                    relation_sets: &[],
                    created_at: 3,
                },
            )
        })
        .unwrap();
    started.elapsed().as_secs_f64()
}

/// Microseconds a trivial statement (`SELECT ?1`) takes through the store's interface: the
/// floor under every row the commit path writes one at a time.
fn round_trip_us(store: &Handle) -> f64 {
    const N: i64 = 5000;
    store
        .write(|tx| {
            let started = Instant::now();
            for i in 0..N {
                let back: i64 = tx.value("SELECT CAST(?1 AS BIGINT)", &[i.into()])?;
                assert_eq!(back, i);
            }
            Ok(started.elapsed().as_secs_f64() * 1e6 / N as f64)
        })
        .unwrap()
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

#[allow(clippy::print_stdout)] // the bench's output is its JSON line
fn main() {
    let copies = env("BENCH_COPIES", 1);
    let runs = env("BENCH_RUNS", 3);
    let docs = load(copies);
    let bytes: usize = docs.iter().map(|d| d.title.len() + d.text.len() + 1).sum();
    let pg = postgres::Postgres::start_with(true).expect("PostgreSQL is needed for this bench");
    let mut results = Vec::new();
    let mut floors = Vec::new();
    {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("floor.sqlite3");
        let sqlite = Handle::sqlite(&db);
        let url = pg.database();
        PgStore::open_and_migrate(&url, 1).unwrap();
        for (adapter, handle) in [("sqlite", sqlite), ("postgres", Handle::postgres(&url, 1))] {
            floors.push(
                serde_json::json!({ "adapter": adapter, "round_trip_us": round_trip_us(&handle) }),
            );
        }
    }
    for writers in [1, 2] {
        for adapter in ["sqlite", "postgres"] {
            let mut times = Vec::new();
            for _ in 0..runs {
                let dir = tempfile::tempdir().unwrap();
                let time = if adapter == "sqlite" {
                    let db = dir.path().join("corpus.sqlite3");
                    let mut conn = store::connect(&db).unwrap();
                    store::migrate::apply(&mut conn).unwrap();
                    workspaces::create(&conn, "bench", "bench", 1).unwrap();
                    drop(conn);
                    run(&|| Handle::sqlite(&db), &docs, writers)
                } else {
                    let url = pg.database();
                    let (created, _) = PgStore::open_and_migrate(&url, 1).unwrap();
                    created
                        .transaction(|tx| workspaces::create(tx, "bench", "bench", 1))
                        .unwrap();
                    run(&|| Handle::postgres(&url, 1), &docs, writers)
                };
                times.push(time);
            }
            let seconds = median(times.clone());
            results.push(serde_json::json!({
                "adapter": adapter,
                "writers": writers,
                "runs_s": times,
                "median_s": seconds,
                "files_per_s": docs.len() as f64 / seconds,
                "mb_per_s": bytes as f64 / 1e6 / seconds,
            }));
        }
    }
    println!(
        "{}",
        serde_json::json!({
            "corpus": "SciFact abstracts",
            "copies": copies,
            "files": docs.len(),
            "mb": bytes as f64 / 1e6,
            "runs": runs,
            "files_per_transaction": FILES_PER_TRANSACTION,
            "cores": std::thread::available_parallelism().map_or(0, std::num::NonZero::get),
            "results": results,
            "statement_floor": floors,
        })
    );
}
