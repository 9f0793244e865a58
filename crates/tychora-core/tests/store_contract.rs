//! The canonical store's contract, one suite over both adapters: the repositories of capture and
//! publication (`store::{workspaces, extractions, snapshots}`) run unchanged on the embedded
//! store's SQLite database and on a real PostgreSQL (tests/common/postgres.rs), through the one
//! transaction interface (`store::tx::Tx`). Every test runs on each; PostgreSQL's own faults come
//! last.

mod common;

use std::sync::Mutex;

use common::postgres::Postgres;
use common::store::Handle;
use tychora_core::job::{JobKind, JobState};
use tychora_core::store::batches::{self, Repoint};
use tychora_core::store::extractions::{
    self, AssetRow, CellRow, ChunkRow, DocLocatorRow, DocumentRow, DocumentWriter, ExtractionRow,
    KindRow, SourceRow, UnitRow, UnitWriter,
};
use tychora_core::store::filter::{Filter, SensitivityScope};
use tychora_core::store::postgres::PgStore;
use tychora_core::store::query_log::QueryRun;
use tychora_core::store::snapshots::{self, Member, NewBatch, NewSnapshot};
use tychora_core::store::tx::{Param, Tx};
use tychora_core::store::{
    self, hydrate, identifiers, integrity, jobs, listings, runs, sources, workspaces,
};
use tychora_core::{ErrorCode, Result, Span, UnitType};

type Open = Box<dyn Fn() -> Handle + Send + Sync>;

/// Runs `check` on a fresh SQLite store, then on a fresh PostgreSQL one (when PostgreSQL is
/// here). Both start as a new workspace does: its row and its `default` collection.
fn each_adapter(check: impl Fn(&str, &Open)) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("corpus.sqlite3");
    {
        let mut conn = store::connect(&db).unwrap();
        store::migrate::apply(&mut conn).unwrap();
        workspaces::create(&conn, "contract", "test", 1).unwrap();
    }
    let open: Open = Box::new(move || Handle::sqlite(&db));
    check("sqlite", &open);

    let Some(pg) = Postgres::start() else { return };
    let url = pg.database();
    let (created, _) = PgStore::open_and_migrate(&url, 2).unwrap();
    created
        .transaction(|tx| workspaces::create(tx, "contract", "test", 1))
        .unwrap();
    let open: Open = Box::new(move || Handle::postgres(&url, 2));
    check("postgres", &open);
}

/// [`each_adapter`], where `read` returns the text of what it read: the two adapters must read
/// the same.
fn each_adapter_alike(read: impl Fn(&str, &Open) -> String) {
    let seen = Mutex::new(Vec::new());
    each_adapter(|name, open| seen.lock().unwrap().push(read(name, open)));
    if let [sqlite, postgres] = seen.into_inner().unwrap().as_slice() {
        assert_eq!(sqlite, postgres, "the adapters read differently");
    }
}

fn sha(n: u64) -> String {
    format!("{n:064x}")
}

/// A captured file with one extraction of `windows` windows (the first repeats its unit's text,
/// the others carry their own): the member a snapshot publishes.
fn capture(tx: &dyn Tx, uri: &str, bytes: u64, windows: usize) -> Result<Member> {
    let root = extractions::root_id(tx, "/corpus", 10)?;
    let (collection, _) = workspaces::collection(tx, "default")?.unwrap();
    let rel_path = uri.trim_start_matches("file:///corpus/");
    let (source, root_id, path) = extractions::upsert_source(
        tx,
        &SourceRow {
            collection_id: collection,
            format: "markdown",
            kind: None,
            root_id: root,
            rel_path,
            uri,
            sensitivity: None,
            default_sensitivity: "internal",
        },
        20,
    )?;
    let sha256 = sha(bytes);
    extractions::put_artifact(tx, &sha256, 100, "text/markdown", 30)?;
    // a file under docs/ was captured from a git checkout and reviewed (its stamp)
    let metadata = if uri.contains("/docs/") {
        r#"{"git":{"commit":"abc123"},"stamp":{"as_of":1700}}"#
    } else {
        r#"{"mtime":1}"#
    };
    let revision = match extractions::revision_with_bytes(tx, source, &sha256)? {
        Some(id) => id,
        None => extractions::insert_revision(tx, source, &sha256, 100, metadata, 40)?,
    };
    let extraction = extractions::insert_extraction(
        tx,
        &ExtractionRow {
            revision_id: revision,
            parser: "markdown@1",
            fingerprint: &format!("fp-{bytes}"),
            unit_count: windows,
            chunk_count: windows,
            diagnostics_json: "[]",
        },
        50,
    )?;
    let mut writer = UnitWriter::new(tx, extraction, revision)?;
    let mut owner = None;
    for i in 0..windows {
        let text = format!("unit {i} of {uri}");
        let span = Span {
            byte_start: i * 10,
            byte_end: i * 10 + 9,
            line_start: i + 1,
            col_start: 1,
            line_end: i + 1,
            col_end: 10,
        };
        let unit = writer.unit(&UnitRow {
            ordinal: i,
            unit_type: UnitType::Paragraph,
            is_leaf: true,
            parent_ordinal: None,
            text: &text,
            heading_path_json: r#"["Title"]"#,
            anchor: None,
            token_count: 4,
            span,
            json_pointer: None,
        })?;
        writer.identifier(unit, "word", "Unit", "unit")?;
        if i == 0 {
            // the file names itself (an RFC's number, a record's key)
            let name = format!("DOC:{rel_path}");
            writer.identifier(unit, "document", &name, &name.to_lowercase())?;
        }
        let own = format!("window {i} of {uri}");
        let chunk = writer.chunk(&ChunkRow {
            ordinal: i,
            first_unit_id: unit,
            last_unit_id: unit,
            owner_key: "doc",
            owner_chunk_id: owner,
            span,
            token_count: 4,
            render_tokens: 9,
            has_code: false,
            may_contain_instructions: i == 1,
            text: (i > 0).then_some(own.as_str()),
            capsule_json: r#"{"title":"Title","kind":"markdown","heading_path":["Title"]}"#,
        })?;
        owner.get_or_insert(chunk);
    }
    Ok(Member {
        source_id: source,
        revision_id: revision,
        extraction_id: extraction,
        collection_id: collection,
        root_id,
        rel_path: path,
        uri: uri.to_string(),
        sha256,
    })
}

/// Publishes `members` on top of `parent` with one lexical generation.
fn publish(tx: &dyn Tx, parent: Option<i64>, members: &[Member], generation: &str) -> Result<i64> {
    let family = snapshots::family(tx, "lexical", "lexical", r#"{"v":1}"#)?;
    snapshots::publish(
        tx,
        &NewSnapshot {
            parent,
            job_id: None,
            chunk_count: 0,
            members,
            batches: &[NewBatch {
                family_id: family,
                generation,
                file_sha256: None,
                base_generation: None,
            }],
            relation_sets: &[],
            created_at: 60,
        },
    )
}

#[test]
fn capture_rows_are_written_once_and_read_back_alike() {
    each_adapter(|name, open| {
        let store = open();
        let first = store
            .write(|tx| capture(tx, "file:///corpus/a.md", 1, 3))
            .unwrap();
        // the same path is the same root; the same uri the same source, first place kept
        store
            .write(|tx| {
                assert_eq!(
                    extractions::root_id(tx, "/corpus", 99)?,
                    first.root_id,
                    "{name}"
                );
                assert_eq!(
                    extractions::roots(tx)?,
                    vec![(first.root_id, "/corpus".to_string())],
                    "{name}"
                );
                let other_root = extractions::root_id(tx, "/elsewhere", 99)?;
                assert_ne!(other_root, first.root_id, "{name}");
                let again = extractions::upsert_source(
                    tx,
                    &SourceRow {
                        collection_id: first.collection_id,
                        format: "markdown",
                        kind: None,
                        root_id: other_root,
                        rel_path: "x/a.md",
                        uri: "file:///corpus/a.md",
                        sensitivity: None,
                        default_sensitivity: "internal",
                    },
                    70,
                )?;
                assert_eq!(
                    again,
                    (first.source_id, first.root_id, "a.md".to_string()),
                    "{name}"
                );
                Ok(())
            })
            .unwrap();
        // new bytes are the next revision; known bytes find theirs
        let (second, found) = store
            .write(|tx| {
                extractions::put_artifact(tx, &sha(2), 7, "text/markdown", 80)?;
                extractions::put_artifact(tx, &sha(2), 7, "text/markdown", 81)?;
                let second =
                    extractions::insert_revision(tx, first.source_id, &sha(2), 7, "{}", 80)?;
                let found = extractions::revision_with_bytes(tx, first.source_id, &sha(1))?;
                Ok((second, found))
            })
            .unwrap();
        assert!(second > first.revision_id, "{name}");
        assert_eq!(found, Some(first.revision_id), "{name}");
        // the extraction and its windows, in order, each with its text
        store
            .write(|tx| {
                assert_eq!(
                    extractions::extraction_with(tx, first.revision_id, "fp-1")?,
                    Some(first.extraction_id),
                    "{name}"
                );
                assert_eq!(
                    extractions::extraction_with(tx, first.revision_id, "fp-9")?,
                    None,
                    "{name}"
                );
                extractions::set_diagnostics(tx, first.extraction_id, r#"[{"code":"W"}]"#)?;
                assert_eq!(
                    extractions::diagnostics(tx, first.extraction_id)?.as_deref(),
                    Some(r#"[{"code":"W"}]"#),
                    "{name}"
                );
                assert_eq!(
                    snapshots::chunks_of_extraction(tx, first.extraction_id)?,
                    3,
                    "{name}"
                );
                let windows = snapshots::index_windows(tx, first.extraction_id)?;
                let texts: Vec<&str> = windows.iter().map(|w| w.text.as_str()).collect();
                assert_eq!(
                    texts,
                    [
                        "unit 0 of file:///corpus/a.md",
                        "window 1 of file:///corpus/a.md",
                        "window 2 of file:///corpus/a.md"
                    ],
                    "{name}"
                );
                let owner = windows[0].chunk_id;
                assert!(windows.iter().all(|w| w.owner_id == owner), "{name}");
                assert!(
                    windows
                        .iter()
                        .all(|w| w.kind == "markdown" && w.collection == "default"),
                    "{name}"
                );
                Ok(())
            })
            .unwrap();
        // a kind's definition is replaced only when its fingerprint changes
        store
            .write(|tx| {
                let kind = |fingerprint, version| KindRow {
                    name: "adr",
                    version,
                    fingerprint,
                    pack: "team",
                    lane: "docs",
                    definition_json: "{}",
                };
                let (a, b) = ("a".repeat(64), "b".repeat(64));
                extractions::record_kind(tx, &kind(a.as_str(), 1), 1)?;
                extractions::record_kind(tx, &kind(a.as_str(), 2), 2)?;
                extractions::record_kind(tx, &kind(b.as_str(), 3), 3)?;
                Ok(())
            })
            .unwrap();
    });
}

#[test]
fn sources_withdrawal_labels_and_document_rows_read_back_alike() {
    each_adapter(|name, open| {
        let store = open();
        let a = store
            .write(|tx| capture(tx, "file:///corpus/a.md", 1, 2))
            .unwrap();
        let b = store
            .write(|tx| capture(tx, "file:///corpus/docs/b.md", 2, 1))
            .unwrap();
        store
            .write(|tx| {
                assert_eq!(sources::count(tx)?, 2, "{name}");
                assert!(sources::exists(tx, a.source_id)?, "{name}");
                assert!(!sources::exists(tx, a.source_id + b.source_id)?, "{name}");
                assert!(sources::revision_exists(tx, a.revision_id)?, "{name}");
                assert_eq!(sources::revisions_of(tx, a.source_id)?, [a.revision_id], "{name}");
                assert_eq!(sources::revision_sha256(tx, b.revision_id)?, sha(2), "{name}");
                assert_eq!(
                    sources::revisions_holding(tx, &sha(2))?,
                    [(b.revision_id, b.source_id, 100)],
                    "{name}"
                );
                assert_eq!(sources::with_uri(tx, "file:///corpus/a.md")?, [a.source_id], "{name}");
                assert_eq!(sources::with_path(tx, "docs/b.md")?, [b.source_id], "{name}");
                assert_eq!(sources::all_paths(tx)?.len(), 2, "{name}");
                let (u0, u1) = (
                    sources::unit_id(tx, a.extraction_id, 0)?,
                    sources::unit_id(tx, a.extraction_id, 1)?,
                );
                assert!(u1 > u0, "{name}");

                // sensitivity labels, by source and under a prefix
                assert!(!sources::any_labelled(tx, "secret")?, "{name}");
                sources::label(tx, [&b.source_id], "secret")?;
                assert!(sources::any_labelled(tx, "secret")?, "{name}");
                assert_eq!(
                    sources::labels_under(tx, b.collection_id, "file:///corpus/docs/")?,
                    [("file:///corpus/docs/b.md".to_string(), "secret".to_string())],
                    "{name}"
                );
                assert!(
                    sources::labels_under(tx, b.collection_id, "file:///corpus/x")?.is_empty(),
                    "{name}"
                );
                assert!(
                    sources::kinds_under(tx, b.collection_id, "file:///")?.is_empty(),
                    "{name}"
                );
                sources::relabel(tx, a.source_id, "public", 5)?;
                assert_eq!(
                    sources::path_and_label(tx, a.source_id)?,
                    ("a.md".to_string(), Some("public".to_string())),
                    "{name}"
                );

                // withdrawal: why, by which job, and the source removed from new snapshots
                let job: i64 = tx.value(
                    "INSERT INTO jobs (kind, status, request_json, created_at) VALUES ('withdraw', 'queued', '{}', 1) RETURNING id",
                    &[],
                )?;
                let withdrawn = sources::withdraw(tx, a.source_id, job, "asked to", 7)?;
                assert_eq!(
                    withdrawn,
                    ("file:///corpus/a.md".to_string(), "a.md".to_string()),
                    "{name}"
                );
                assert_eq!(
                    sources::withdrawal(tx, a.collection_id, "file:///corpus/a.md")?,
                    Some((7, "asked to".to_string())),
                    "{name}"
                );
                assert_eq!(
                    sources::withdrawal(tx, a.collection_id, "file:///corpus/docs/b.md")?,
                    None,
                    "{name}"
                );
                sources::mark_removed(tx, b.source_id, 8)?;

                // a document's rows and a code file's, and the artifacts they reference
                extractions::put_artifact(tx, &sha(3), 10, "text/plain", 9)?;
                extractions::put_artifact(tx, &sha(4), 10, "image/png", 9)?;
                let mut doc = DocumentWriter::new(
                    tx,
                    b.extraction_id,
                    &DocumentRow {
                        format: "pdf",
                        extractor: "pdfjs@5",
                        derived_sha256: &sha(3),
                        furniture_json: "[]",
                        external_json: "[]",
                        pages: Some(2),
                    },
                )?;
                let unit = sources::unit_id(tx, b.extraction_id, 0)?;
                doc.locator(&DocLocatorRow {
                    unit_id: unit,
                    part: "page",
                    paragraph: None,
                    table: Some(1),
                    row: Some(1),
                    header: true,
                    marker: None,
                    level: Some(2),
                    page: Some(1),
                    boxes_json: Some("[[1, 0, 0, 10, 10]]".into()),
                    flags_json: "[]",
                    origin: "ocr",
                    confidence: Some(0.75),
                })?;
                let cell = CellRow {
                    unit_id: unit,
                    col: 0,
                    col_span: 2,
                    continues_above: false,
                    text: "Cell",
                    box_json: None,
                };
                doc.cell(&cell)?;
                doc.cell(&cell)?;
                doc.asset(&AssetRow {
                    ordinal: 1,
                    sha256: &sha(4),
                    media_type: "image/png",
                    width: Some(10),
                    height: Some(20),
                    part: "page",
                    relationship: None,
                    alt_text: Some("a chart"),
                    caption: None,
                    context: None,
                    unit_id: Some(unit),
                    page: Some(1),
                    box_json: None,
                })?;
                let key = "c".repeat(64);
                extractions::put_code(tx, a.extraction_id, "python", "pkg.a", &key, Some("{}"), 9)?;
                extractions::put_code(tx, b.extraction_id, "python", "pkg.b", &key, Some("{}"), 9)?;
                assert_eq!(extractions::original_sha256(tx, b.extraction_id)?, sha(2), "{name}");
                let mut referenced = sources::referenced_artifacts(tx, false)?;
                referenced.sort();
                assert_eq!(referenced, [sha(1), sha(2), sha(3), sha(4)], "{name}");
                let mut present = sources::referenced_artifacts(tx, true)?;
                present.sort();
                assert_eq!(present, referenced, "{name}");
                Ok(())
            })
            .unwrap();
    });
}

/// The reads a query makes — windows hydrated into segments, the exact channel's identifier
/// lookups, eligibility by collection and label, the keys segments state and the accepted
/// relations about them — return the same rows, field for field, on both adapters.
#[test]
fn a_query_reads_the_same_evidence_on_both() {
    each_adapter_alike(|name, open| {
        use std::fmt::Write as _;
        let store = open();
        // Ids are opaque, and the service store hands them out in blocks per transaction: both
        // files are captured in one here, so that the rows compare whole, ids included.
        let (a, b) = store
            .write(|tx| {
                Ok((
                    capture(tx, "file:///corpus/a.md", 1, 3)?,
                    capture(tx, "file:///corpus/docs/b.md", 2, 2)?,
                ))
            })
            .unwrap();
        let snapshot = store
            .write(|tx| {
                sources::label(tx, [&b.source_id], "secret")?;
                let unit = sources::unit_id(tx, a.extraction_id, 0)?;
                tx.execute(
                    "INSERT INTO relation_types (name, fingerprint, pack, definition_json, recorded_at) VALUES ('supersedes', ?1, 'team', '{}', 1)",
                    &[Param::Text(&"f".repeat(64))],
                )?;
                for (method, status) in [("parsed", "accepted"), ("declared", "accepted"), ("proposed", "proposed")] {
                    tx.execute(
                        "INSERT INTO relation_assertions (relation, from_kind, from_key, to_kind, to_key, method, status, revision_id, support_unit_id, actor, created_at)
                         VALUES ('supersedes', 'adr', 'ADR-2', 'adr', 'ADR-1', ?1, ?2, ?3, ?4, 'owner', 1)",
                        &[Param::Text(method), Param::Text(status), Param::Int(a.revision_id), Param::Int(unit)],
                    )?;
                }
                publish(tx, None, &[a.clone(), b.clone()], "g1")
            })
            .unwrap();
        store
            .write(|tx| {
                let mut out = String::new();
                let mut windows = Vec::new();
                for e in [a.extraction_id, b.extraction_id] {
                    windows.extend(snapshots::index_windows(tx, e)?.iter().map(|w| w.chunk_id));
                }
                let rows = hydrate::chunks(tx, &windows)?;
                let mut ids: Vec<&i64> = rows.keys().collect();
                ids.sort();
                for id in ids {
                    writeln!(out, "{:?}", rows[id]).unwrap();
                }
                let b_first = &rows[&windows[3]];
                assert_eq!(b_first.commit.as_deref(), Some("abc123"), "{name}");
                assert_eq!(
                    (b_first.freshness.as_of, b_first.freshness.basis),
                    (1700, "reviewed"),
                    "{name}"
                );
                let open_filter = Filter::default();
                let asked: Vec<String> = ["unit", "doc:docs/b.md", "nothing"]
                    .map(String::from)
                    .into();
                let sorted = |mut v: Vec<String>| {
                    v.sort();
                    v
                };
                let present = sorted(identifiers::present(tx, snapshot, &asked, &open_filter)?);
                assert_eq!(present, ["doc:docs/b.md", "unit"], "{name}");
                let defined = sorted(identifiers::defined(tx, snapshot, &asked, &open_filter)?);
                assert_eq!(defined, ["doc:docs/b.md"], "{name}");
                let found = identifiers::windows(tx, snapshot, &asked, &open_filter, &defined, 10)?;
                assert_eq!(found.first(), Some(&(windows[3], windows[3])), "{name}");
                writeln!(out, "{present:?} {defined:?} {found:?}").unwrap();
                writeln!(
                    out,
                    "{:?} {:?}",
                    identifiers::documents(tx, snapshot, &asked, &open_filter)?,
                    identifiers::first_window(tx, snapshot, b.source_id)?
                )
                .unwrap();
                let default_only = Filter {
                    collections: vec!["default".into()],
                    ..Filter::default()
                };
                let mut paths = identifiers::member_paths(tx, snapshot, &default_only)?;
                paths.sort();
                writeln!(out, "{paths:?}").unwrap();
                let elsewhere = Filter {
                    collections: vec!["elsewhere".into()],
                    ..Filter::default()
                };
                assert_eq!(
                    hydrate::eligible_sources(tx, snapshot, &open_filter)?,
                    2,
                    "{name}"
                );
                assert_eq!(
                    hydrate::eligible_sources(tx, snapshot, &elsewhere)?,
                    0,
                    "{name}"
                );
                let internal = Filter {
                    sensitivity: Some(SensitivityScope {
                        levels: vec!["internal".into()],
                        unlabelled: "internal".into(),
                    }),
                    ..Filter::default()
                };
                let mut admitted: Vec<u64> = hydrate::eligible_chunks(tx, snapshot, &internal)?
                    .into_iter()
                    .collect();
                admitted.sort_unstable();
                let a_windows: Vec<u64> = windows[..3].iter().map(|&w| w as u64).collect();
                assert_eq!(admitted, a_windows, "{name}");
                let mut of_b: Vec<u64> = hydrate::chunks_of_sources(tx, snapshot, &[b.source_id])?
                    .into_iter()
                    .collect();
                of_b.sort_unstable();
                writeln!(out, "{admitted:?} {of_b:?}").unwrap();
                let keys = hydrate::segment_keys(tx, snapshot, &[(b.source_id, windows[3])])?;
                assert_eq!(keys.iter().collect::<Vec<_>>(), ["DOC:docs/b.md"], "{name}");
                assert!(hydrate::any_relations(tx)?, "{name}");
                let about = hydrate::relations_about(tx, &["ADR-1".to_string()].into())?;
                assert_eq!(about.len(), 1, "{name}: one row per relation and pair");
                assert_eq!(about[0].method, "parsed", "{name}: the first assertion's");
                assert_eq!(about[0].support.as_deref(), Some("a.md:1-1"), "{name}");
                writeln!(
                    out,
                    "{keys:?} {about:?} {:?}",
                    hydrate::code_paths(tx, &windows)?
                )
                .unwrap();
                Ok(out)
            })
            .unwrap()
    });
}

/// A write nobody waits for may be sent late (PostgreSQL pipelines it before the next read or
/// the commit): refused, it fails its transaction all the same, and nothing of it is kept.
#[test]
fn a_refused_write_fails_its_transaction_whenever_it_is_sent() {
    each_adapter(|name, open| {
        let store = open();
        let insert = "INSERT INTO roots (path, added_at) VALUES (?1, 1)";
        let err = store
            .write(|tx| {
                tx.write(insert, &[Param::Text("/kept?")])?;
                tx.write(insert, &[Param::Text("/same")])?;
                tx.write(insert, &[Param::Text("/same")])?;
                tx.write(insert, &[Param::Text("/after")])?;
                Ok(())
            })
            .unwrap_err();
        assert!(
            err.to_string().to_lowercase().contains("unique"),
            "{name}: {err}"
        );
        let roots = store.write(|tx| extractions::roots(tx)).unwrap();
        assert!(roots.is_empty(), "{name}: {roots:?}");
    });
}

#[test]
fn a_revision_is_never_changed() {
    each_adapter(|name, open| {
        let store = open();
        let member = store
            .write(|tx| capture(tx, "file:///corpus/a.md", 1, 1))
            .unwrap();
        let err = store
            .write(|tx| {
                tx.execute(
                    "UPDATE revisions SET size = 0 WHERE id = ?1",
                    &[Param::Int(member.revision_id)],
                )
            })
            .unwrap_err();
        assert!(err.to_string().contains("immutable"), "{name}: {err}");
        let found = store
            .write(|tx| extractions::revision_with_bytes(tx, member.source_id, &sha(1)))
            .unwrap();
        assert_eq!(found, Some(member.revision_id), "{name}");
    });
}

#[test]
fn the_pointer_switches_only_from_the_snapshot_the_publisher_read() {
    each_adapter(|name, open| {
        let store = open();
        assert_eq!(
            store.write(|tx| snapshots::current(tx)).unwrap(),
            None,
            "{name}"
        );
        let a = store
            .write(|tx| capture(tx, "file:///corpus/a.md", 1, 2))
            .unwrap();
        let first = store
            .write(|tx| publish(tx, None, std::slice::from_ref(&a), "g-first"))
            .unwrap();
        assert_eq!(
            store.write(|tx| snapshots::current(tx)).unwrap(),
            Some(first),
            "{name}"
        );

        // a publisher that read no snapshot (or an older one) loses, and keeps nothing
        let b = store
            .write(|tx| capture(tx, "file:///corpus/b.md", 2, 1))
            .unwrap();
        let err = store
            .write(|tx| publish(tx, None, &[a.clone(), b.clone()], "g-stale"))
            .unwrap_err();
        assert_eq!(err.code(), ErrorCode::Conflict, "{name}: {err}");
        assert!(err.to_string().contains("moved"), "{name}: {err}");
        store
            .write(|tx| {
                assert_eq!(snapshots::current(tx)?, Some(first), "{name}");
                let kept = snapshots::referenced_generations(tx)?;
                assert_eq!(kept, ["g-first"], "{name}");
                Ok(())
            })
            .unwrap();

        // built again on the pointer it now reads, it wins
        let second = store
            .write(|tx| {
                let parent = snapshots::current(tx)?;
                let mut members = snapshots::members(tx, parent.unwrap())?;
                members.push(b.clone());
                publish(tx, parent, &members, "g-second")
            })
            .unwrap();
        store
            .write(|tx| {
                assert_eq!(snapshots::current(tx)?, Some(second), "{name}");
                let members = snapshots::members(tx, second)?;
                let uris: Vec<&str> = members.iter().map(|m| m.uri.as_str()).collect();
                assert_eq!(
                    uris,
                    ["file:///corpus/a.md", "file:///corpus/b.md"],
                    "{name}"
                );
                assert_eq!(members[0].sha256, sha(1), "{name}");
                assert_eq!(snapshots::member_count(tx, second)?, 2, "{name}");
                let map = snapshots::member_map(tx, second)?;
                assert_eq!(
                    map[&b.source_id],
                    (b.revision_id, b.extraction_id),
                    "{name}"
                );
                assert_eq!(
                    snapshots::lexical_generation(tx, second)?.as_deref(),
                    Some("g-second"),
                    "{name}"
                );
                assert!(snapshots::publishes(tx, b.revision_id)?, "{name}");
                let fingerprints = extractions::member_fingerprints(tx, second)?;
                assert_eq!(fingerprints.len(), 2, "{name}");
                snapshots::retire_generation(tx, "g-first")?;
                assert_eq!(snapshots::lexical_generation(tx, first)?, None, "{name}");
                Ok(())
            })
            .unwrap();
    });
}

#[test]
fn index_generations_are_recorded_and_repointed_alike() {
    each_adapter(|name, open| {
        let store = open();
        let a = store
            .write(|tx| capture(tx, "file:///corpus/a.md", 1, 1))
            .unwrap();
        let snapshot = store
            .write(|tx| publish(tx, None, std::slice::from_ref(&a), "g1"))
            .unwrap();
        store
            .write(|tx| {
                let (batch, family, generation, documents) = batches::lexical_batch(tx, snapshot)?;
                assert_eq!((generation.as_str(), documents), ("g1", 0), "{name}");
                assert_eq!(
                    batches::of_generation(tx, "g1")?,
                    (batch, family, 0, None),
                    "{name}"
                );
                batches::repoint(
                    tx,
                    &[Repoint {
                        snapshot_id: snapshot,
                        family_id: family,
                        old_batch: batch,
                        generation: "g2".into(),
                        documents: 5,
                        sha256: None,
                    }],
                    70,
                )?;
                let (_, _, generation, documents) = batches::lexical_batch(tx, snapshot)?;
                assert_eq!((generation.as_str(), documents), ("g2", 5), "{name}");
                assert_eq!(batches::referenced_generations(tx)?, ["g2"], "{name}");
                assert_eq!(
                    batches::generation_paths(tx)?,
                    ["indexes/lexical/g2"],
                    "{name}"
                );
                assert_eq!(batches::indexed_snapshots(tx)?, [snapshot], "{name}");
                assert_eq!(batches::base_of(tx, "g2")?, None, "{name}");
                assert_eq!(batches::base_of(tx, "nowhere")?, None, "{name}");
                batches::verify(tx, "g2", &sha(9))?;
                Ok(())
            })
            .unwrap();
    });
}

#[test]
fn listings_and_what_verify_reads_are_alike() {
    each_adapter(|name, open| {
        let store = open();
        let (a, b) = store
            .write(|tx| {
                Ok((
                    capture(tx, "file:///corpus/a.md", 1, 2)?,
                    capture(tx, "file:///corpus/docs/b.md", 2, 1)?,
                ))
            })
            .unwrap();
        let first = store
            .write(|tx| publish(tx, None, std::slice::from_ref(&a), "g1"))
            .unwrap();
        let second = store
            .write(|tx| publish(tx, Some(first), &[a.clone(), b.clone()], "g2"))
            .unwrap();
        store
            .write(|tx| {
                let paths = |page: (i64, Vec<listings::SourceSummary>)| {
                    (
                        page.0,
                        page.1.into_iter().map(|s| s.path).collect::<Vec<_>>(),
                    )
                };
                assert_eq!(
                    paths(listings::source_page(tx, second, None, 10, 0)?),
                    (2, vec!["a.md".to_string(), "docs/b.md".to_string()]),
                    "{name}"
                );
                assert_eq!(
                    paths(listings::source_page(tx, second, Some("default"), 1, 1)?),
                    (2, vec!["docs/b.md".to_string()]),
                    "{name}"
                );
                assert_eq!(
                    paths(listings::source_page(tx, second, Some("other"), 10, 0)?),
                    (0, vec![]),
                    "{name}"
                );
                let listed: Vec<(i64, Option<i64>, i64, bool, bool)> = listings::snapshots(tx)?
                    .into_iter()
                    .map(|s| (s.id, s.parent_id, s.sources, s.current, s.retained))
                    .collect();
                assert_eq!(
                    listed,
                    [
                        (second, Some(first), 2, true, true),
                        (first, None, 1, false, true)
                    ],
                    "{name}"
                );
                let mut artifacts = integrity::artifacts(tx)?;
                artifacts.sort();
                assert_eq!(artifacts, [(sha(1), 100), (sha(2), 100)], "{name}");
                assert!(integrity::tombstoned(tx)?.is_empty(), "{name}");
                let mut references = integrity::artifact_references(tx)?;
                references.sort();
                assert_eq!(
                    references,
                    [
                        (format!("revision {}", a.revision_id), sha(1), 100),
                        (format!("revision {}", b.revision_id), sha(2), 100),
                        (
                            format!("revision_artifact {}/original", a.revision_id),
                            sha(1),
                            -1
                        ),
                        (
                            format!("revision_artifact {}/original", b.revision_id),
                            sha(2),
                            -1
                        ),
                    ],
                    "{name}"
                );
                assert_eq!(integrity::chunks_out_of_range(tx)?, 0, "{name}");
                let mut lexical = integrity::lexical_snapshots(tx)?;
                lexical.sort();
                assert_eq!(
                    lexical,
                    [
                        (first, 0, "g1".to_string(), 2),
                        (second, 0, "g2".to_string(), 3)
                    ],
                    "{name}"
                );
                assert!(integrity::erased_revisions(tx)?.is_empty(), "{name}");
                Ok(())
            })
            .unwrap();
    });
}

/// A job's life as the embedded engine records it — queued, claimed, its steps, ended with its
/// diagnostics stored once by content — and its expiry, alike on both stores.
#[test]
fn job_rows_record_a_job_and_expire_alike() {
    each_adapter(|name, open| {
        let store = open();
        store
            .write(|tx| {
                let first = jobs::enqueue(tx, JobKind::Add, r#"{"paths":["a"]}"#)?;
                let second = jobs::enqueue(tx, JobKind::Add, r#"{"paths":["b"]}"#)?;
                assert_eq!(jobs::queued_ids(tx)?, [first, second], "{name}");
                assert_eq!(
                    jobs::state_and_request(tx, first)?,
                    Some((JobState::Queued, r#"{"paths":["a"]}"#.to_string())),
                    "{name}"
                );
                assert!(jobs::claim(tx, first)?, "{name}");
                assert!(!jobs::claim(tx, first)?, "{name}: taken once");
                let mut steps = jobs::Steps::new(first);
                steps.begin(tx, "walk")?;
                steps.finish(tx, &serde_json::json!({ "files": 2 }))?;
                steps.record(tx, "commit", 5, 9, &serde_json::json!({}))?;
                let list = sha(7);
                jobs::put_diagnostic_list(tx, &list, 1, r#"[{"code":"W"}]"#)?;
                jobs::put_diagnostic_list(tx, &list, 1, r#"[{"code":"W"}]"#)?;
                jobs::finish(tx, first, JobState::Succeeded, "{}", Some(&list), 10)?;
                assert_eq!(
                    jobs::diagnostic_list(tx, &list)?.as_deref(),
                    Some(r#"[{"code":"W"}]"#),
                    "{name}"
                );
                jobs::cancel(tx, second, "asked to")?;
                let third = jobs::start(tx, JobKind::Rebuild, "{}")?;
                assert_eq!(jobs::interrupt_running(tx)?, 1, "{name}");
                assert_eq!(jobs::count_in(tx, JobState::Interrupted)?, 1, "{name}");
                let (latest, state, error) = jobs::latest(tx)?.unwrap();
                assert_eq!((latest, state), (third, JobState::Interrupted), "{name}");
                assert!(error.unwrap().contains("exited"), "{name}");
                let page: Vec<(i64, JobState)> = jobs::page(tx, None, 2)?
                    .into_iter()
                    .map(|j| (j.id, j.status))
                    .collect();
                assert_eq!(
                    page,
                    [
                        (third, JobState::Interrupted),
                        (second, JobState::Cancelled)
                    ],
                    "{name}"
                );
                let older: Vec<i64> = jobs::page(tx, Some(second), 5)?
                    .into_iter()
                    .map(|j| j.id)
                    .collect();
                assert_eq!(older, [first], "{name}");
                let row = jobs::get(tx, first)?.unwrap();
                assert_eq!(
                    (row.kind, row.status, row.diagnostics.as_deref()),
                    (JobKind::Add, JobState::Succeeded, Some(list.as_str())),
                    "{name}"
                );
                let recorded: Vec<(String, bool)> = jobs::steps_between(tx, first, third)?
                    .into_iter()
                    .map(|s| (s.name, s.detail.is_some()))
                    .collect();
                assert_eq!(
                    recorded,
                    [("walk".to_string(), true), ("commit".to_string(), true)],
                    "{name}"
                );
                // expiry: every ended job before the cut goes, with its steps; then the list
                let gone = jobs::expire(tx, i64::MAX, 10)?;
                assert_eq!(gone, 3, "{name}");
                assert!(jobs::get(tx, first)?.is_none(), "{name}");
                assert!(jobs::steps_between(tx, first, third)?.is_empty(), "{name}");
                assert_eq!(jobs::drop_unreferenced_diagnostics(tx)?, 1, "{name}");
                assert_eq!(jobs::expire(tx, i64::MAX, 10)?, 0, "{name}: again, none");
                Ok(())
            })
            .unwrap();
    });
}

#[test]
fn the_query_log_writes_off_the_query_path_and_pages_alike() {
    each_adapter(|name, open| {
        let store = open();
        let log = store.query_log();
        let run = |n: i64| QueryRun {
            id: format!("run_{n}"),
            snapshot_id: None,
            request_json: format!(r#"{{"query":"q{n}"}}"#),
            summary_json: "{}".into(),
            agent_id: (n % 2 == 0).then(|| "agent".to_string()),
            task_id: None,
            duration_ms: 1.25 * n as f64,
            created_at: n,
        };
        for n in 1..=5 {
            log.record(run(n));
        }
        log.flush();
        store
            .write(|tx| {
                let ids = |runs: Vec<QueryRun>| runs.into_iter().map(|r| r.id).collect::<Vec<_>>();
                assert_eq!(ids(runs::page(tx, None, 2)?), ["run_5", "run_4"], "{name}");
                assert_eq!(
                    ids(runs::page(tx, Some((4, "run_4".into())), 2)?),
                    ["run_3", "run_2"],
                    "{name}"
                );
                assert_eq!(
                    runs::position(tx, "run_3")?,
                    Some((3, "run_3".into())),
                    "{name}"
                );
                assert_eq!(runs::get(tx, "run_2")?, Some(run(2)), "{name}");
                assert_eq!(runs::get(tx, "run_9")?, None, "{name}");
                assert_eq!(runs::expire(tx, 3, 10)?, 2, "{name}");
                assert_eq!(
                    ids(runs::page(tx, None, 10)?),
                    ["run_5", "run_4", "run_3"],
                    "{name}"
                );
                Ok(())
            })
            .unwrap();
    });
}

/// Several daemons publish at once, each adding its own sources: every publication lands on
/// the one before it (one wins, the others build again on the new pointer), and no member is
/// lost.
#[test]
#[allow(clippy::print_stderr)] // how often each adapter rebuilt is for whoever runs it to see
fn concurrent_publishers_lose_no_member() {
    const WRITERS: usize = 4;
    const EACH: usize = 5;
    each_adapter(|name, open| {
        let retries = std::sync::atomic::AtomicUsize::new(0);
        std::thread::scope(|scope| {
            for w in 0..WRITERS {
                let store = open();
                let retries = &retries;
                scope.spawn(move || {
                    for i in 0..EACH {
                        let uri = format!("file:///corpus/w{w}/{i}.md");
                        let mine = store
                            .write(|tx| capture(tx, &uri, (w * 100 + i) as u64 + 10, 1))
                            .unwrap();
                        loop {
                            let published = store.write(|tx| {
                                let parent = snapshots::current(tx)?;
                                let mut members = match parent {
                                    Some(p) => snapshots::members(tx, p)?,
                                    None => Vec::new(),
                                };
                                // the other writers' files take a moment to build on
                                std::thread::sleep(std::time::Duration::from_millis(2));
                                members.push(mine.clone());
                                publish(tx, parent, &members, &format!("g-{w}-{i}-{}", now()))
                            });
                            match published {
                                Ok(_) => break,
                                Err(e) if e.code() == ErrorCode::Conflict => {
                                    retries.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                                }
                                Err(e) => panic!("{name}: {e}"),
                            }
                        }
                    }
                });
            }
        });
        let store = open();
        let members = store
            .write(|tx| snapshots::members(tx, snapshots::current(tx)?.unwrap()))
            .unwrap();
        assert_eq!(members.len(), WRITERS * EACH, "{name}");
        eprintln!(
            "{name}: {} publications by {WRITERS} writers, {} rebuilt on a moved pointer",
            WRITERS * EACH,
            retries.load(std::sync::atomic::Ordering::Relaxed)
        );
    });
}

fn now() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos()
}

/// The service store going away mid-transaction: the commit fails with `E_STORE_UNAVAILABLE`,
/// and when the store is back, nothing of the half-done publication is there.
#[test]
fn a_store_lost_mid_publication_keeps_nothing_of_it() {
    let Some(pg) = Postgres::start_with(true) else {
        return;
    };
    let url = pg.database();
    let (store, _) = PgStore::open_and_migrate(&url, 2).unwrap();
    store
        .transaction(|tx| workspaces::create(tx, "contract", "test", 1))
        .unwrap();
    let a = store
        .transaction(|tx| capture(tx, "file:///corpus/a.md", 1, 2))
        .unwrap();
    let first = store
        .transaction(|tx| publish(tx, None, std::slice::from_ref(&a), "g-first"))
        .unwrap();

    let tx = store.begin().unwrap();
    let b = capture(&tx, "file:///corpus/b.md", 2, 1).unwrap();
    publish(&tx, Some(first), &[a.clone(), b], "g-lost").unwrap();
    pg.stop();
    let err = tx.commit().unwrap_err();
    assert_eq!(err.code(), ErrorCode::StoreUnavailable, "{err}");
    assert!(!err.to_string().contains("password"), "{err}");
    let err = store.begin().err().unwrap();
    assert_eq!(err.code(), ErrorCode::StoreUnavailable, "{err}");

    pg.start_server();
    let store = PgStore::open(&url, 2).unwrap();
    store
        .transaction(|tx| {
            assert_eq!(snapshots::current(tx)?, Some(first));
            assert_eq!(snapshots::referenced_generations(tx)?, ["g-first"]);
            assert_eq!(snapshots::members(tx, first)?.len(), 1);
            Ok(())
        })
        .unwrap();
}

/// A statement whose placeholder the service store types otherwise than the value given is
/// refused before it runs, naming the placeholder — not sent to be misread.
#[test]
fn a_value_of_the_wrong_type_is_refused_by_name() {
    let Some(pg) = Postgres::start() else { return };
    let url = pg.database();
    let (store, _) = PgStore::open_and_migrate(&url, 1).unwrap();
    let err = store
        .transaction(|tx| {
            tx.execute(
                "UPDATE roots SET added_at = ?1 WHERE path = ?2",
                &[Param::Text("soon"), Param::Text("/x")],
            )
        })
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::Internal, "{err}");
    assert!(err.to_string().contains("parameter 1"), "{err}");
    // the pool's connection came back usable
    store
        .transaction(|tx| extractions::root_id(tx, "/x", 1))
        .unwrap();
}

/// A code file's units for the graph: a module, a class and two methods in `m.py` (heading paths
/// `["m.py", …]`, symbol identifiers), written into capture `of`'s extraction after its own.
fn code_units(tx: &dyn Tx, of: &Member) -> Result<Vec<i64>> {
    let mut writer = UnitWriter::new(tx, of.extraction_id, of.revision_id)?;
    let mut ids = Vec::new();
    for (i, (unit_type, path, anchor)) in [
        (UnitType::Module, r#"["m.py"]"#, "m"),
        (UnitType::Class, r#"["m.py","Parser"]"#, "m.Parser"),
        (
            UnitType::Method,
            r#"["m.py","Parser","parse"]"#,
            "m.Parser.parse",
        ),
        (
            UnitType::Method,
            r#"["m.py","Parser","feed"]"#,
            "m.Parser.feed",
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let line = 100 + i;
        let span = Span {
            byte_start: 1000 + i * 10,
            byte_end: 1009 + i * 10,
            line_start: line,
            col_start: 1,
            line_end: line,
            col_end: 10,
        };
        let unit = writer.unit(&UnitRow {
            ordinal: 10 + i,
            unit_type,
            is_leaf: i > 1,
            parent_ordinal: (i > 0).then_some(10 + usize::from(i > 1)),
            text: &format!("def {anchor}"),
            heading_path_json: path,
            anchor: Some(anchor),
            token_count: 2,
            span,
            json_pointer: None,
        })?;
        writer.identifier(unit, "symbol", anchor, &anchor.to_lowercase())?;
        ids.push(unit);
    }
    Ok(ids)
}

#[test]
fn derived_rows_read_back_alike() {
    use std::fmt::Write as _;
    use tychora_core::store::relations::{self, Edges, Inserter, NewRelation, Which};
    use tychora_core::store::summaries::{self, NodeRow, NodeWriter, TreeRow};
    use tychora_core::store::{descriptions, pictures, vectors};
    use tychora_core::vector::{FamilySpec, Record};

    each_adapter_alike(|name, open| {
        let store = open();
        let mut out = String::new();
        let (a, units) = store
            .write(|tx| {
                let a = capture(tx, "file:///corpus/m.md", 7, 2)?;
                let units = code_units(tx, &a)?;
                Ok((a, units))
            })
            .unwrap();
        let (module, class, parse, feed) = (units[0], units[1], units[2], units[3]);

        // The code graph: a set, its relations, the snapshot that carries it, the edges read back.
        let (set, snapshot) = store
            .write(|tx| {
                let set = relations::begin_set(tx, a.root_id, a.collection_id, &sha(99), "test@1")?;
                let mut insert = Inserter::new(tx, set)?;
                let site = |line: usize| Span {
                    byte_start: line * 10,
                    byte_end: line * 10 + 4,
                    line_start: line,
                    col_start: 5,
                    line_end: line,
                    col_end: 9,
                };
                for (kind, src, target, anchor, line) in [
                    ("calls", parse, Some(feed), Some("m.Parser.feed"), 102),
                    ("calls", parse, Some(feed), Some("m.Parser.feed"), 103),
                    ("references", feed, Some(class), Some("m.Parser"), 104),
                    ("calls", module, Some(parse), Some("m.Parser.parse"), 105),
                ] {
                    insert.put(&NewRelation {
                        kind,
                        revision_id: a.revision_id,
                        src_unit_id: src,
                        outcome: "resolved",
                        target_unit_id: target,
                        target_anchor: anchor,
                        candidates_json: None,
                        reason: None,
                        ref_text: "self.feed",
                        name: "feed",
                        span: site(line),
                    })?;
                }
                insert.put(&NewRelation {
                    kind: "calls",
                    revision_id: a.revision_id,
                    src_unit_id: feed,
                    outcome: "ambiguous",
                    target_unit_id: None,
                    target_anchor: None,
                    candidates_json: Some(r#"["x.close","y.close"]"#),
                    reason: None,
                    ref_text: "thing.close",
                    name: "close",
                    span: site(106),
                })?;
                drop(insert);
                relations::finish_set(tx, set, r#"{"relations":5}"#)?;
                let family = snapshots::family(tx, "lexical", "lexical", r#"{"v":1}"#)?;
                let snapshot = snapshots::publish(
                    tx,
                    &NewSnapshot {
                        parent: None,
                        job_id: None,
                        chunk_count: 0,
                        members: std::slice::from_ref(&a),
                        batches: &[NewBatch {
                            family_id: family,
                            generation: "g1",
                            file_sha256: None,
                            base_generation: None,
                        }],
                        relation_sets: &[set],
                        created_at: 60,
                    },
                )?;
                Ok((set, snapshot))
            })
            .unwrap();
        store
            .write(|tx| {
                assert_eq!(
                    relations::set_by_members(tx, a.root_id, a.collection_id, &sha(99))?,
                    Some(set),
                    "{name}"
                );
                assert_eq!(
                    relations::snapshot_sets(tx, snapshot)?,
                    [(set, "default".to_string())],
                    "{name}"
                );
                let edges = Edges::new(tx.dialect(), &[set], &["calls", "references"], 8, true);
                let from_parse = edges.of(tx, parse)?;
                assert_eq!(
                    from_parse
                        .iter()
                        .map(|e| (e.0.as_str(), e.1, e.3, e.4))
                        .collect::<Vec<_>>(),
                    [("calls", feed, 102, false), ("calls", module, 105, true)],
                    "{name}: one edge per neighbour, at its first line; callees, then callers"
                );
                writeln!(out, "{from_parse:?} {:?}", edges.of(tx, feed)?).unwrap();
                let (callers, total) =
                    relations::site_relations(tx, &[set], &Which::CallersOf(feed), 10)?;
                assert_eq!(total, 1, "{name}: the first site per calling unit");
                assert_eq!(
                    callers[0].symbol.as_deref(),
                    Some("Parser.parse"),
                    "{name}: the path without its file"
                );
                let (callees, _) =
                    relations::site_relations(tx, &[set], &Which::CalleesOf(module), 10)?;
                assert_eq!(callees[0].symbol.as_deref(), Some("Parser.parse"), "{name}");
                let (unresolved, total) =
                    relations::site_relations(tx, &[set], &Which::Unresolved("close"), 10)?;
                assert_eq!(
                    (total, unresolved[0].outcome.as_str()),
                    (1, "ambiguous"),
                    "{name}"
                );
                let (refs, total) =
                    relations::site_relations(tx, &[set], &Which::ReferencesTo(feed), 1)?;
                assert_eq!(
                    (refs.len(), total),
                    (1, 2),
                    "{name}: at most `max`, and how many"
                );
                for rows in [&callers, &callees, &unresolved, &refs] {
                    for r in rows.iter() {
                        writeln!(
                            out,
                            "{} {:?} {} {} {:?} {:?} {} {} {}-{} {:?}",
                            r.kind,
                            r.symbol,
                            r.text,
                            r.outcome,
                            r.reason,
                            r.candidates_json,
                            r.site.path,
                            r.site.root,
                            r.site.line_start,
                            r.site.line_end,
                            r.site.commit
                        )
                        .unwrap();
                    }
                }
                let symbols = relations::symbol_units(tx, snapshot, "m.parser.parse")?;
                assert_eq!(symbols.len(), 1, "{name}");
                assert_eq!(
                    (symbols[0].0, symbols[0].2),
                    (parse, UnitType::Method),
                    "{name}"
                );
                let heading = relations::unit_heading(tx, parse)?.unwrap();
                assert_eq!(heading.1, UnitType::Method, "{name}");
                let units_of = relations::units_of(tx, a.extraction_id)?;
                assert_eq!(
                    units_of.len(),
                    6,
                    "{name}: two paragraphs and four code units"
                );
                assert_eq!(units_of[4].parent_ordinal, Some(11), "{name}");
                writeln!(
                    out,
                    "{} {} {:?} {:?} {:?}",
                    symbols[0].1,
                    symbols[0].4.path,
                    heading.0,
                    relations::window_of(tx, parse)?,
                    units_of
                        .iter()
                        .map(|u| (u.id, u.unit_type, u.anchor.clone(), u.span.line_start))
                        .collect::<Vec<_>>()
                )
                .unwrap();
                Ok(())
            })
            .unwrap();

        // Vectors: a family made once, records kept first-come, looked up in a batch.
        store
            .write(|tx| {
                let spec = FamilySpec {
                    provider: "local".into(),
                    model: "mini".into(),
                    dimension: 2,
                    representation: "window".into(),
                    normalization: "l2".into(),
                    quantization: "f32".into(),
                    metric: "cos".into(),
                };
                let family = vectors::family_id(tx, &spec)?;
                assert_eq!(vectors::family_id(tx, &spec)?, family, "{name}: made once");
                let record = |x: f32| Record { vector: vec![x, 1.0 - x], tokens: 3 };
                let billed = serde_json::json!({"billed": true});
                vectors::insert(tx, family, &[(sha(1), record(0.25)), (sha(2), record(0.5))], &billed)?;
                vectors::insert(tx, family, &[(sha(1), record(0.75))], &serde_json::json!({"billed": false}))?;
                let found = vectors::lookup(tx, family, &[sha(1), sha(3), sha(2), sha(1)])?;
                assert_eq!(found.len(), 2, "{name}");
                assert_eq!(found[&sha(1)].vector, [0.25, 0.75], "{name}: the first vector stays");
                assert_eq!(vectors::billed_tokens_since(tx, 0)?, 6, "{name}");

                // Pictures: an asset of the capture, its vector replaced by a newer answer, its description reviewed.
                let picture = sha(50);
                extractions::put_artifact(tx, &picture, 10, "image/png", 30)?;
                tx.execute(
                    "INSERT INTO visual_assets (extraction_id, ordinal, sha256, media_type, part, page, alt_text, unit_id) VALUES (?1, 0, ?2, 'image/png', 'page', 2, 'a chart', ?3)",
                    &[Param::Int(a.extraction_id), Param::Text(&picture), Param::Int(sources::unit_id(tx, a.extraction_id, 1)?)],
                )?;
                pictures::put_vectors(tx, "local|clip|2", &[(picture.as_str(), &[0.5, 0.5][..])], "{}", 70)?;
                pictures::put_vectors(tx, "local|clip|2", &[(picture.as_str(), &[0.0, 1.0][..])], "{}", 71)?;
                assert!(pictures::has_vector(tx, "local|clip|2", &picture)?, "{name}");
                assert_eq!(pictures::coverage(tx, snapshot, "local|clip|2")?, (1, 0), "{name}");
                let mut scanned = Vec::new();
                pictures::scan_vectors(tx, snapshot, "local|clip|2", &Filter::default(), |chunk, owner, sha, blob| {
                    scanned.push((chunk, owner, sha, blob.to_vec()));
                })?;
                assert_eq!(scanned.len(), 1, "{name}");
                assert_eq!(scanned[0].3, [0.0f32, 1.0].iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<_>>(), "{name}: the newer answer");
                let id = descriptions::insert(
                    tx,
                    &descriptions::NewDescription {
                        sha256: picture.clone(),
                        sent_sha256: picture.clone(),
                        sent_media_type: "image/png".into(),
                        provider: "anthropic".into(),
                        model: "claude".into(),
                        prompt_fingerprint: sha(60),
                        text: String::new(),
                        stop_reason: Some("end_turn".into()),
                        input_tokens: 5,
                        output_tokens: 6,
                    },
                    "a bar chart",
                    80,
                )?;
                assert_eq!(descriptions::review(tx, id, descriptions::ReviewStatus::Accepted, Some(90), Some("ok"))?, 1, "{name}");
                assert_eq!(descriptions::review(tx, id + 100, descriptions::ReviewStatus::Accepted, None, None)?, 0, "{name}");
                assert!(descriptions::entry(tx, id + 100)?.is_none(), "{name}");
                let entry = descriptions::entry(tx, id)?.unwrap();
                assert_eq!(entry.review_status, descriptions::ReviewStatus::Accepted, "{name}");
                assert_eq!(descriptions::assets_with_prefix(tx, &picture[..12])?, std::slice::from_ref(&picture), "{name}");
                let holders = descriptions::holders(tx, &picture)?;
                assert_eq!((holders[0].path.as_str(), holders[0].page), ("m.md", Some(2)), "{name}");
                writeln!(
                    out,
                    "{:?} {:?} {:?}",
                    pictures::of_extraction(tx, a.extraction_id, a.collection_id)?,
                    descriptions::of_asset(tx, &picture)?.iter().map(|d| (d.id, d.text.clone(), d.reviewed_at, d.review_note.clone())).collect::<Vec<_>>(),
                    holders.iter().map(|h| (h.media_type.clone(), h.collection.clone(), h.alt_text.clone())).collect::<Vec<_>>()
                )
                .unwrap();

                // A summary tree: written, read back, kept alone, erased with what it summarised.
                let windows: Vec<i64> = snapshots::index_windows(tx, a.extraction_id)?.iter().map(|w| w.chunk_id).collect();
                let summary_windows = summaries::windows(tx, snapshot, "internal")?;
                assert_eq!(summary_windows.len(), 2, "{name}");
                assert!(summary_windows[1].1, "{name}: the second window may carry instructions");
                let tree_row = |built_at| TreeRow {
                    snapshot_id: snapshot,
                    family_id: family,
                    summarizer: "extractive",
                    model: None,
                    fingerprint: None,
                    branching: 4,
                    windows: 2,
                    nodes: 1,
                    input_tokens: 0,
                    output_tokens: 0,
                    calls: 0,
                    build_ms: 1.5,
                    built_at,
                };
                let old = summaries::insert_tree(tx, &tree_row(100))?;
                let tree = summaries::insert_tree(tx, &tree_row(200))?;
                for t in [old, tree] {
                    let mut writer = NodeWriter::new(tx)?;
                    let node = writer.node(&NodeRow {
                        tree_id: t,
                        parent_id: None,
                        level: 1,
                        scope: "document",
                        source_id: Some(a.source_id),
                        text: "what m.md says",
                        summarizer: "extractive",
                        model: None,
                        input_sha256: &sha(70 + t as u64),
                        leaf_count: 2,
                        vector: &[0.5, 0.5],
                    })?;
                    for &w in &windows {
                        writer.member(node, w)?;
                        writer.member(node, w)?;
                    }
                }
                summaries::cache_texts(tx, "anthropic", Some("claude"), "fp", &[(sha(80), "first".into(), 1, 2)], 10)?;
                summaries::cache_texts(tx, "anthropic", Some("claude"), "fp", &[(sha(80), "second".into(), 1, 2)], 11)?;
                assert_eq!(summaries::cached_text(tx, &sha(80), "anthropic", "claude", "fp")?.as_deref(), Some("second"), "{name}");
                assert_eq!(summaries::newest(tx)?, Some((tree, 200)), "{name}");
                summaries::keep_only(tx, tree)?;
                assert_eq!(summaries::tree_count(tx)?, 1, "{name}");
                let (tree_snapshot, tree_family) = summaries::tree_head(tx, tree)?.unwrap();
                assert_eq!((tree_snapshot, tree_family.dimension), (snapshot, 2), "{name}");
                let nodes = summaries::tree_nodes(tx, tree)?;
                assert_eq!((nodes.len(), nodes[0].vector.as_slice()), (1, &[0.5f32, 0.5][..]), "{name}");
                let members = summaries::tree_members(tx, tree)?;
                assert_eq!(members.len(), 2, "{name}: a member written twice is one");
                assert!(summaries::summarises_source(tx, a.source_id)?, "{name}");
                writeln!(out, "{:?} {:?}", nodes.iter().map(|n| (n.level, n.scope.clone(), n.leaf_count)).collect::<Vec<_>>(), summary_windows.iter().map(|w| (w.0.chunk_id == windows[0], w.0.sensitivity.clone(), w.0.text.clone())).collect::<Vec<_>>()).unwrap();
                assert_eq!(summaries::erase_derived(tx, a.revision_id)?, 1, "{name}");
                assert_eq!((summaries::tree_count(tx)?, summaries::newest(tx)?), (0, None), "{name}");
                Ok(())
            })
            .unwrap();
        out
    });
}

#[test]
fn knowledge_erasure_retention_and_evidence_alike() {
    use std::fmt::Write as _;
    use tychora_core::store::assertions::{self, Decision, NewAssertion};
    use tychora_core::store::erasure::{self, NewTombstone};
    use tychora_core::store::records::{self, RecordStatus};
    use tychora_core::store::{evidence, inventory, retention};

    each_adapter_alike(|name, open| {
        let store = open();
        let mut out = String::new();
        let (a, b) = store
            .write(|tx| {
                Ok((
                    capture(tx, "file:///corpus/docs/a.md", 11, 2)?,
                    capture(tx, "file:///corpus/b.md", 12, 3)?,
                ))
            })
            .unwrap();
        let first = store
            .write(|tx| publish(tx, None, &[a.clone(), b.clone()], "g1"))
            .unwrap();

        // Records and the units that state them; relation assertions and their review.
        store
            .write(|tx| {
                extractions::record_kind(
                    tx,
                    &KindRow {
                        name: "standard",
                        version: 1,
                        fingerprint: &sha(5),
                        pack: "team",
                        lane: "documents",
                        definition_json: "{}",
                    },
                    1,
                )?;
                let unit_a = sources::unit_id(tx, a.extraction_id, 0)?;
                let unit_b = sources::unit_id(tx, b.extraction_id, 0)?;
                let record = records::insert(
                    tx,
                    "standard",
                    "requirement",
                    "V1.1",
                    r#"{"text":"first"}"#,
                    2,
                )?;
                assert_eq!(
                    records::by_key(tx, "standard", "requirement", "V1.1")?,
                    Some((record, r#"{"text":"first"}"#.to_string())),
                    "{name}"
                );
                records::set_body(tx, record, r#"{"text":"second"}"#, 3)?;
                records::put_evidence(tx, record, unit_a, a.revision_id, r#"{"text":"in a"}"#)?;
                records::put_evidence(tx, record, unit_b, b.revision_id, r#"{"text":"in b"}"#)?;
                records::put_evidence(
                    tx,
                    record,
                    unit_b,
                    b.revision_id,
                    r#"{"text":"in b, again"}"#,
                )?;
                records::set_status(tx, record, RecordStatus::Reviewed, 4)?;
                let (total, listed) = records::list(tx, Some("standard"), None, &[], 10)?;
                assert_eq!((total, listed.len()), (1, 1), "{name}");
                assert_eq!(
                    (listed[0].status, listed[0].evidence_count),
                    (RecordStatus::Reviewed, 2),
                    "{name}"
                );
                assert_eq!(records::with_key(tx, "V1.1", None)?.len(), 1, "{name}");
                assert!(
                    records::with_key(tx, "V1.1", Some("other"))?.is_empty(),
                    "{name}"
                );
                let stated = records::stated_elsewhere(tx, record, a.revision_id)?;
                assert_eq!(
                    stated,
                    [("b.md".to_string(), r#"{"text":"in b, again"}"#.to_string())],
                    "{name}"
                );
                let evidence = records::evidence(tx, record)?;
                writeln!(
                    out,
                    "{:?} {:?}",
                    listed[0].body,
                    evidence
                        .iter()
                        .map(|e| (
                            e.path.clone(),
                            e.citation.clone(),
                            e.current,
                            e.body.clone()
                        ))
                        .collect::<Vec<_>>()
                )
                .unwrap();

                assertions::record_type(tx, "supersedes", &sha(6), "team", "{}", 5)?;
                assertions::record_type(tx, "supersedes", &sha(6), "team", "{}", 6)?;
                let new = |from: &'static str, to: &'static str, revision| NewAssertion {
                    relation: "supersedes",
                    from_kind: "standard",
                    from_key: from,
                    to_kind: "adr",
                    to_key: to,
                    method: "parsed",
                    status: "accepted",
                    revision_id: revision,
                    support_unit_id: Some(unit_a),
                    actor: "owner",
                    note: None,
                    created_at: 7,
                };
                let parsed = assertions::insert(tx, &new("V1.1", "ADR-1", Some(a.revision_id)))?;
                let declared = assertions::insert(tx, &new("V1.2", "ADR-1", None))?;
                assert_eq!(
                    assertions::find(tx, "supersedes", "V1.2", "ADR-1", "parsed", None)?,
                    Some(declared),
                    "{name}: a missing revision matches a missing one"
                );
                assert_eq!(
                    assertions::find(
                        tx,
                        "supersedes",
                        "V1.1",
                        "ADR-1",
                        "parsed",
                        Some(a.revision_id)
                    )?,
                    Some(parsed),
                    "{name}"
                );
                assert_eq!(
                    assertions::find(tx, "supersedes", "V1.1", "ADR-1", "parsed", None)?,
                    None,
                    "{name}"
                );
                assert_eq!(
                    assertions::other_subject(tx, "supersedes", "ADR-1", "V1.1")?.as_deref(),
                    Some("V1.2"),
                    "{name}"
                );
                assert_eq!(
                    assertions::other_object(tx, "supersedes", "V1.1", "ADR-9")?.as_deref(),
                    Some("ADR-1"),
                    "{name}"
                );
                assertions::review(
                    tx,
                    declared,
                    "reject",
                    "owner",
                    Some("wrong"),
                    Some(Decision::Rejected),
                    8,
                )?;
                let listed = assertions::list(tx, Some("ADR-1"), None, None)?;
                assert_eq!(listed.len(), 2, "{name}");
                assert_eq!(
                    assertions::list(tx, None, None, Some("rejected"))?.len(),
                    1,
                    "{name}"
                );
                assert_eq!(
                    assertions::get(tx, declared)?.unwrap().status,
                    Decision::Rejected,
                    "{name}"
                );
                assert_eq!(
                    assertions::named_kind(tx, "ADR-1")?.as_deref(),
                    Some("adr"),
                    "{name}"
                );
                assert_eq!(
                    assertions::record_kind(tx, "V1.1")?.as_deref(),
                    Some("standard"),
                    "{name}"
                );
                assert_eq!(
                    assertions::document_kind(tx, "doc:docs/a.md")?.as_deref(),
                    Some("markdown"),
                    "{name}"
                );
                let window = snapshots::index_windows(tx, a.extraction_id)?[0].chunk_id;
                assert_eq!(
                    assertions::first_unit_of_chunk(tx, window)?,
                    Some(unit_a),
                    "{name}"
                );
                assert_eq!(
                    assertions::unit_revision(tx, unit_a)?,
                    Some((unit_a, a.revision_id)),
                    "{name}"
                );
                writeln!(
                    out,
                    "{:?}",
                    listed
                        .iter()
                        .map(|l| (
                            l.from_key.clone(),
                            l.method,
                            l.status,
                            l.support.clone(),
                            l.note.clone()
                        ))
                        .collect::<Vec<_>>()
                )
                .unwrap();
                Ok(())
            })
            .unwrap();

        // Every evidence type reads back, and status counts the store.
        store
            .write(|tx| {
                let window = snapshots::index_windows(tx, a.extraction_id)?[1].chunk_id;
                let unit = sources::unit_id(tx, a.extraction_id, 1)?;
                let source = evidence::source(tx, a.source_id)?.unwrap();
                let revision = evidence::revision(tx, a.revision_id)?.unwrap();
                let unit = evidence::unit(tx, unit)?.unwrap();
                let extraction = evidence::extraction(tx, a.extraction_id)?.unwrap();
                let chunk = evidence::chunk(tx, window)?.unwrap();
                let snapshot = evidence::snapshot(tx, first)?.unwrap();
                assert!(snapshot.current, "{name}");
                assert!(evidence::source(tx, 9_999)?.is_none(), "{name}");
                for value in [
                    serde_json::to_value(&source).unwrap(),
                    serde_json::to_value(&revision).unwrap(),
                    serde_json::to_value(&unit).unwrap(),
                    serde_json::to_value(&extraction).unwrap(),
                    serde_json::to_value(&chunk).unwrap(),
                    serde_json::to_value(&snapshot).unwrap(),
                ] {
                    writeln!(out, "{value}").unwrap();
                }
                let counts = inventory::counts(tx, 0)?;
                assert_eq!(
                    (counts.sources, counts.chunks, counts.snapshots),
                    (2, 5, 1),
                    "{name}"
                );
                assert_eq!(
                    inventory::current_snapshot(tx, first)?.unwrap().sources,
                    2,
                    "{name}"
                );
                assert_eq!(inventory::kept_artifact_bytes(tx)?, 200, "{name}");
                assert!(
                    inventory::table_bytes(tx)?
                        .iter()
                        .any(|t| t.table == "chunks" && t.bytes > 0),
                    "{name}"
                );
                writeln!(
                    out,
                    "{} {:?} {:?}",
                    serde_json::to_string(&counts).unwrap(),
                    inventory::collections(tx)?
                        .iter()
                        .map(|c| (c.name.clone(), c.active_sources))
                        .collect::<Vec<_>>(),
                    inventory::kinds(tx)?
                        .iter()
                        .map(|k| (k.name.clone(), k.sources))
                        .collect::<Vec<_>>()
                )
                .unwrap();
                Ok(())
            })
            .unwrap();

        // Erasure of b's revision: tombstoned once, taken out of the snapshot, queued for purge;
        // retention then releases the old snapshot and drains what nothing references.
        let second = store
            .write(|tx| {
                let job = jobs::enqueue(tx, JobKind::Add, "{}")?;
                let t = NewTombstone {
                    sha256: &b.sha256,
                    size: 100,
                    source_id: b.source_id,
                    revision_id: b.revision_id,
                    job_id: job,
                    reason: "request",
                    at: 9,
                };
                assert!(erasure::tombstone(tx, &t)?, "{name}");
                assert!(!erasure::tombstone(tx, &t)?, "{name}: once");
                assert_eq!(
                    erasure::erased(tx, &b.sha256)?,
                    Some((9, "request".to_string())),
                    "{name}"
                );
                assert_eq!(erasure::pending(tx)?, [b.revision_id], "{name}");
                assert_eq!(
                    erasure::extractions_of(tx, &[b.revision_id])?,
                    [b.extraction_id],
                    "{name}"
                );
                assert_eq!(
                    erasure::chunks_of(tx, &[b.extraction_id])?.len(),
                    3,
                    "{name}"
                );
                assert_eq!(
                    erasure::snapshots_holding(tx, &[b.revision_id])?,
                    [first],
                    "{name}"
                );
                assert_eq!(erasure::all_snapshots(tx)?, [first], "{name}");
                assert!(
                    erasure::derived_bytes(tx, b.revision_id, &b.sha256)?.is_empty(),
                    "{name}"
                );
                let before = inventory::current_snapshot(tx, first)?.unwrap();
                erasure::take_out(tx, b.revision_id)?;
                erasure::queue_purge(tx)?;
                erasure::queue_purge(tx)?;
                erasure::forget_picture(tx, &sha(77))?;
                assert_eq!(erasure::delete_vector_record(tx, 1, &sha(78))?, 0, "{name}");
                let after = inventory::current_snapshot(tx, first)?.unwrap();
                assert_eq!(
                    (before.chunks - after.chunks, before.sources - after.sources),
                    (3, 1),
                    "{name}: b and its windows left the snapshot"
                );
                publish(tx, Some(first), std::slice::from_ref(&a), "g2")
            })
            .unwrap();
        store
            .write(|tx| {
                assert_eq!(
                    retention::release_snapshots(tx, 1, i64::MAX, true)?,
                    1,
                    "{name}: the older snapshot"
                );
                let drained = retention::drain_extractions(tx, 100)?.unwrap();
                assert_eq!(
                    (drained.extractions, drained.chunks, drained.evidence_units),
                    (1, 3, 3),
                    "{name}"
                );
                assert!(
                    retention::drain_extractions(tx, 100)?.is_none(),
                    "{name}: nothing left"
                );
                assert!(retention::drain_relation_set(tx, 100)?.is_none(), "{name}");
                assert_eq!(retention::last_expiry(tx)?, None, "{name}");
                let expired = retention::expire_revisions(tx, 1, i64::MAX, "policy", 10)?;
                assert!(
                    expired.is_empty(),
                    "{name}: every revision is its source's newest"
                );
                assert_eq!(retention::last_expiry(tx)?, Some(10), "{name}");
                assert_eq!(erasure::all_snapshots(tx)?, [second], "{name}");
                let counts = inventory::counts(tx, 0)?;
                writeln!(out, "{}", serde_json::to_string(&counts).unwrap()).unwrap();
                Ok(())
            })
            .unwrap();
        out
    });
}

/// A session (the engine's writer) runs statements on their own until a transaction begins;
/// `atomic` is a transaction of its own there and a savepoint inside one: a failing block keeps
/// nothing and the enclosing transaction goes on.
#[test]
fn a_session_commits_as_it_goes_and_nests_atomic_blocks() {
    each_adapter(|name, open| {
        let store = open();
        let count = |tx: &dyn Tx| -> Result<i64> { tx.value("SELECT COUNT(*) FROM roots", &[]) };
        let refused = || tychora_core::Error::Conflict("refused on purpose".into());
        store
            .session(|s| {
                assert!(!s.in_transaction(), "{name}");
                extractions::root_id(s, "/autocommit", 1)?;
                // a block of its own: kept whole, or (failing) not at all
                s.together(true, |tx| extractions::root_id(tx, "/kept", 2))?;
                let failed = s.together(true, |tx| {
                    extractions::root_id(tx, "/undone", 3)?;
                    Err::<(), _>(refused())
                });
                assert!(failed.is_err(), "{name}");
                assert!(
                    !s.in_transaction(),
                    "{name}: the block's own transaction ended"
                );
                s.begin(true)?;
                assert!(s.in_transaction(), "{name}");
                extractions::root_id(s, "/in-job", 4)?;
                // inside the transaction, a failing block is a savepoint rolled back
                let failed = s.together(true, |tx| {
                    extractions::root_id(tx, "/file-that-failed", 5)?;
                    Err::<(), _>(refused())
                });
                assert!(failed.is_err(), "{name}");
                s.together(true, |tx| extractions::root_id(tx, "/file-that-held", 6))?;
                s.commit()?;
                assert!(!s.in_transaction(), "{name}");
                s.begin(false)?;
                extractions::root_id(s, "/dry-run", 7)?;
                s.rollback()?;
                s.begin(true)?;
                assert!(s.begin(true).is_err(), "{name}: one at a time");
                extractions::root_id(s, "/rolled-back", 8)?;
                s.rollback()?;
                Ok(())
            })
            .unwrap();
        let roots = store
            .write(|tx| {
                tx.rows("SELECT path FROM roots ORDER BY path", &[], |r| {
                    r.get::<String>(0)
                })
            })
            .unwrap();
        assert_eq!(
            roots,
            ["/autocommit", "/file-that-held", "/in-job", "/kept"],
            "{name}"
        );
        assert_eq!(
            store.write(|tx| count(tx)).unwrap(),
            roots.len() as i64,
            "{name}"
        );
    });
}
