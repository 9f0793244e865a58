//! Lexical generations on a real OpenSearch cluster (`[search]` in workspace.toml) keep the
//! embedded path's guarantees: the same answers as a twin workspace on tantivy; a one-file add
//! writes one part holding that file's chunks; a pinned snapshot answers from its own
//! generation; an erasure leaves no copy on the cluster; a lost index is `E_CORRUPT` until
//! `manage rebuild`; an unreachable cluster publishes nothing; unreferenced generations are
//! collected. tests/common/opensearch.rs starts the nodes (Maven-built, see
//! scripts/opensearch.mjs); skipped without them unless `TYCHORA_REQUIRE` names servers.

mod common;

use std::path::Path;

use common::opensearch::{Cluster, get, request, request_with};
use tychora_core::query::{QueryRequest, QueryResult};
use tychora_core::summary::SummaryBuildOptions;
use tychora_core::{ErrorCode, Workspace};

fn search(ws: &Workspace, query: &str, snapshot: Option<i64>) -> QueryResult {
    ws.search(&QueryRequest {
        query: query.into(),
        snapshot_id: snapshot,
        max_per_source: Some(0),
        limit: Some(10),
        ..Default::default()
    })
    .unwrap()
}

/// What an agent cites, in order.
fn cited(result: &QueryResult) -> Vec<String> {
    result
        .segments
        .iter()
        .map(|s| format!("{} {}", s.citation, s.text))
        .collect()
}

fn with_search(dir: &Path, extra: &str) {
    let toml = dir.join("workspace.toml");
    let text = std::fs::read_to_string(&toml).unwrap();
    std::fs::write(&toml, format!("{text}\n{extra}")).unwrap();
}

/// Indices on the cluster matching `pattern`, sorted.
fn indices(cluster: &Cluster, pattern: &str) -> Vec<String> {
    let (_, body) = get(
        &cluster.hosts[0],
        &format!("/_cat/indices/{pattern}?h=index&format=json"),
    )
    .unwrap();
    let rows: serde_json::Value = serde_json::from_str(&body).unwrap();
    let mut names: Vec<String> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["index"].as_str().unwrap().to_string())
        .collect();
    names.sort();
    names
}

/// Lexical part indices of `prefix` on the cluster.
fn parts(cluster: &Cluster, prefix: &str) -> Vec<String> {
    indices(cluster, &format!("{prefix}-lex-*"))
}

fn write_docs(docs: &Path) {
    std::fs::create_dir_all(docs).unwrap();
    let topics = [
        (
            "pelicans",
            "Pelicans nest on quiet islands and migrate along the coast in spring.",
        ),
        (
            "ledger",
            "The zanzibar ledger records every shipment of cloves by weight.",
        ),
        (
            "kernel",
            "The kernel schedules threads by priority and preempts long runners.",
        ),
        (
            "tides",
            "Spring tides follow the new and full moon; neap tides the quarters.",
        ),
        (
            "bread",
            "Sourdough bread rises slowly because wild yeast ferments the dough.",
        ),
        (
            "glacier",
            "A glacier carves a valley into a U shape over thousands of years.",
        ),
        (
            "orbit",
            "A geostationary orbit keeps a satellite over one point of the equator.",
        ),
        ("東京", "東京都の極洋株式会社は連結株主資本を公表した。"),
    ];
    for (i, (name, text)) in topics.iter().enumerate() {
        std::fs::write(
            docs.join(format!("{i:02}-{name}.md")),
            format!("# {name}\n\n{text}\n\n## Notes\n\nMore about {name}: {text}\n"),
        )
        .unwrap();
    }
}

const QUERIES: [&str; 7] = [
    "pelicans migrate",
    "zanzibar ledger cloves",
    "kernel threads priority",
    "spring tides moon",
    "why does sourdough rise slowly",
    "極洋",
    "連結株主資本",
];

#[test]
fn lexical_generations_on_opensearch_keep_the_embedded_guarantees() {
    let Some(cluster) = Cluster::start(2) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let docs = tmp.path().join("docs");
    write_docs(&docs);
    let (embedded, clustered) = (tmp.path().join("embedded"), tmp.path().join("clustered"));
    Workspace::init(&embedded).unwrap();
    Workspace::init(&clustered).unwrap();
    with_search(
        &clustered,
        &format!(
            "[search]\nurl = {:?}\nprefix = \"t1\"\nreplicas = 1\ncollect_after_seconds = 0\n",
            cluster.url()
        ),
    );
    let twin = Workspace::open(&embedded).unwrap();
    let ws = Workspace::open(&clustered).unwrap();
    assert!(ws.verify().unwrap().ok);

    // The same answers as the embedded twin, Chinese and Japanese words inside runs included.
    let first = common::add(&ws, &docs).snapshot_id.unwrap();
    common::add(&twin, &docs);
    for q in QUERIES {
        let (a, b) = (search(&ws, q, None), search(&twin, q, None));
        assert!(!a.segments.is_empty(), "{q}: nothing found on the cluster");
        assert_eq!(cited(&a), cited(&b), "{q}");
    }
    assert_eq!(
        parts(&cluster, "t1").len(),
        1,
        "a full build writes one part"
    );
    // Another workspace naming the same prefix is refused before it can collect anything there.
    let intruder = tmp.path().join("intruder");
    Workspace::init(&intruder).unwrap();
    with_search(
        &intruder,
        &format!(
            "[search]\nurl = {:?}\nprefix = \"t1\"\ncollect_after_seconds = 0\n",
            cluster.url()
        ),
    );
    let refused = Workspace::open(&intruder).unwrap_err();
    assert_eq!(refused.code(), ErrorCode::Conflict, "{refused}");
    assert!(refused.to_string().contains("prefix"), "{refused}");
    assert_eq!(parts(&cluster, "t1").len(), 1);
    assert!(!search(&ws, "kernel threads", None).segments.is_empty());

    // A one-file change writes one part with that file's chunks; the old text stays in the
    // pinned snapshot only.
    let changed = docs.join("00-pelicans.md");
    std::fs::write(
        &changed,
        "# pelicans\n\nCormorants dive for fish where pelicans once fished.\n",
    )
    .unwrap();
    let second = common::add(&ws, &docs).snapshot_id.unwrap();
    common::add(&twin, &docs);
    assert_ne!(first, second);
    let now = parts(&cluster, "t1");
    assert_eq!(now.len(), 2, "{now:?}");
    let (_, body) = get(&cluster.hosts[0], &format!("/{}/_count", now[1])).unwrap();
    let added: serde_json::Value = serde_json::from_str(&body).unwrap();
    let chunks_of_file = search(&ws, "cormorants dive", None)
        .segments
        .iter()
        .filter(|s| s.citation.contains("00-pelicans"))
        .count();
    assert!(chunks_of_file >= 1);
    assert!(
        added["count"].as_u64().unwrap() <= 3,
        "the new part holds only the changed file's windows: {body}"
    );
    assert!(
        search(&ws, "quiet islands", Some(second))
            .segments
            .is_empty()
    );
    assert!(
        !search(&ws, "quiet islands", Some(first))
            .segments
            .is_empty()
    );
    for q in QUERIES.iter().chain(&["cormorants fish", "quiet islands"]) {
        assert_eq!(
            cited(&search(&ws, q, None)),
            cited(&search(&twin, q, None)),
            "{q}"
        );
    }
    // Filters apply inside the engine's search: a collection's one file is found by a word
    // every file holds, however many others score higher.
    let other = tmp.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("aside.md"), "# aside\n\nMore about nothing.\n").unwrap();
    for w in [&ws, &twin] {
        w.add(
            &tychora_core::ingest::AddRequest {
                paths: vec![other.display().to_string()],
                collection: Some("aside".into()),
                ..Default::default()
            },
            tychora_core::ingest::Requester::Owner,
            &|_| {},
        )
        .unwrap();
    }
    let scoped = ws
        .search(&QueryRequest {
            query: "more about".into(),
            collections: vec!["aside".into()],
            limit: Some(1),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(scoped.segments.len(), 1);
    assert!(scoped.segments[0].citation.contains("aside.md"));
    let verify = ws.verify().unwrap();
    assert!(verify.ok, "{:?}", verify.problems);

    // An erasure reaches every copy on the cluster, the pinned snapshot's included.
    let source = search(&ws, "cormorants", None).segments[0].source.source_id;
    let erased = ws
        .delete_original(&format!("source:{source}"), "a request to erase", &|_| {})
        .unwrap();
    assert_eq!(erased.erased_from_snapshots, 3);
    assert!(
        search(&ws, "quiet islands", Some(first))
            .segments
            .is_empty()
    );
    assert!(search(&ws, "cormorants", None).segments.is_empty());
    let (_, body) = get(
        &cluster.hosts[0],
        "/t1-lex-*/_count?q=body:cormor%20OR%20body:island",
    )
    .unwrap();
    assert!(body.contains("\"count\":0"), "{body}");
    let verify = ws.verify().unwrap();
    assert!(
        verify.ok && verify.erasures_checked >= 1,
        "{:?}",
        verify.problems
    );

    // A lost index is E_CORRUPT naming the rebuild, and the rebuild brings the answers back.
    for index in parts(&cluster, "t1") {
        request(&cluster.hosts[0], "DELETE", &format!("/{index}")).unwrap();
    }
    let lost = ws
        .search(&QueryRequest {
            query: "kernel".into(),
            ..Default::default()
        })
        .unwrap_err();
    assert_eq!(lost.code(), ErrorCode::Corrupt, "{lost}");
    assert!(lost.to_string().contains("rebuild"), "{lost}");
    assert!(!ws.verify().unwrap().ok);
    ws.rebuild(&|_| {}).unwrap();
    assert_eq!(
        cited(&search(&ws, "kernel threads priority", None)),
        cited(&search(&twin, "kernel threads priority", None))
    );
    // An index with another mapping (made by hand, or by another version) is refused at open.
    drop(ws);
    let part = parts(&cluster, "t1").pop().unwrap();
    request(&cluster.hosts[0], "DELETE", &format!("/{part}")).unwrap();
    let (code, body) = request_with(
        &cluster.hosts[0],
        "PUT",
        &format!("/{part}"),
        r#"{"mappings":{"properties":{"body":{"type":"text"}}}}"#,
    )
    .unwrap();
    assert_eq!(code, 200, "{body}");
    let ws = Workspace::open(&clustered).unwrap();
    let refused = ws
        .search(&QueryRequest {
            query: "kernel".into(),
            ..Default::default()
        })
        .unwrap_err();
    assert_eq!(refused.code(), ErrorCode::Corrupt, "{refused}");
    assert!(refused.to_string().contains("another mapping"), "{refused}");
    ws.rebuild(&|_| {}).unwrap();
    assert!(!search(&ws, "kernel threads", None).segments.is_empty());

    // Unreferenced generations are collected (retention keeps the newest one here).
    let lean = tmp.path().join("lean");
    Workspace::init(&lean).unwrap();
    with_search(
        &lean,
        &format!(
            "[search]\nurl = {:?}\nprefix = \"t2\"\nreplicas = 0\ncollect_after_seconds = 0\n",
            cluster.url()
        ),
    );
    let toml = lean.join("workspace.toml");
    let text = std::fs::read_to_string(&toml).unwrap();
    std::fs::write(&toml, text.replace("retain = 5", "retain = 1")).unwrap();
    let lean_ws = Workspace::open(&lean).unwrap();
    common::add(&lean_ws, &docs);
    // Eleven one-file adds: a generation never reads more than 8 indices (the adds' parts are
    // folded into one), and the answers stay the embedded twin's.
    for round in 0..11 {
        std::fs::write(
            docs.join("01-ledger.md"),
            format!("# ledger\n\nround {round} of the ledger: cloves by weight\n"),
        )
        .unwrap();
        common::add(&lean_ws, &docs);
        common::add(&twin, &docs);
        let (_, body) = get(
            &cluster.hosts[0],
            "/t2-manifests/_search?sort=created_ms:desc&size=1",
        )
        .unwrap();
        let newest: serde_json::Value = serde_json::from_str(&body).unwrap();
        let read = newest["hits"]["hits"][0]["_source"]["parts"]
            .as_array()
            .unwrap()
            .len();
        assert!((2..=8).contains(&read), "round {round}: {read} parts");
    }
    for q in QUERIES
        .iter()
        .chain(&["round 10 of the ledger", "round 3 ledger"])
    {
        assert_eq!(
            cited(&search(&lean_ws, q, None)),
            cited(&search(&twin, q, None)),
            "{q}"
        );
    }
    // What a daemon that died mid-build leaves (an index no manifest names) is collected too.
    let (code, body) = request(&cluster.hosts[0], "PUT", "/t2-lex-g1-99").unwrap();
    assert_eq!(code, 200, "{body}");
    lean_ws.purge().unwrap();
    assert!(!parts(&cluster, "t2").contains(&"t2-lex-g1-99".to_string()));
    let (_, body) = get(
        &cluster.hosts[0],
        "/t2-manifests/_count?q=_exists_:created_ms",
    )
    .unwrap();
    assert!(body.contains("\"count\":1"), "one manifest left: {body}");
    assert!(lean_ws.verify().unwrap().ok);
    assert!(!search(&lean_ws, "round 10", None).segments.is_empty());
}

#[test]
fn an_unreachable_cluster_publishes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let docs = tmp.path().join("docs");
    write_docs(&docs);
    let dir = tmp.path().join("ws");
    Workspace::init(&dir).unwrap();
    // A port nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    with_search(
        &dir,
        &format!("[search]\nurl = \"opensearch://127.0.0.1:{port}\"\ntimeout_seconds = 2\n"),
    );
    let ws = Workspace::open(&dir).unwrap();
    let failed = common::try_add(&ws, &docs).unwrap_err();
    assert_eq!(failed.code(), ErrorCode::StoreUnavailable, "{failed}");
    assert_eq!(ws.current_snapshot().unwrap(), None);
    // Credentials in the URL are refused before anything is sent.
    let other = tmp.path().join("creds");
    Workspace::init(&other).unwrap();
    with_search(
        &other,
        "[search]\nurl = \"opensearch://admin:secret@127.0.0.1:9200\"\n",
    );
    let refused = Workspace::open(&other).unwrap_err();
    assert_eq!(refused.code(), ErrorCode::InvalidArgument);
    assert!(!refused.to_string().contains("secret"), "{refused}");
}

#[test]
fn a_bulk_body_over_the_cluster_limit_is_split() {
    // The node refuses any body over 64 KB with 413: the first bulk of a full build is several
    // megabytes, so it is split (and split again) until each part fits.
    let Some(cluster) = Cluster::start_with(1, "http.max_content_length: 64kb\n") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let docs = tmp.path().join("docs");
    std::fs::create_dir_all(&docs).unwrap();
    let records: Vec<String> = (0..600)
        .map(|i| {
            serde_json::json!({
                "_id": format!("r{i}"),
                "title": format!("Record {i}"),
                "text": format!("Record number {i} mentions the albatross {} times over the southern ocean.", i % 7),
            })
            .to_string()
        })
        .collect();
    std::fs::write(docs.join("records.jsonl"), records.join("\n") + "\n").unwrap();
    let dir = tmp.path().join("ws");
    Workspace::init(&dir).unwrap();
    with_search(
        &dir,
        &format!("[search]\nurl = {:?}\nreplicas = 0\n", cluster.url()),
    );
    let ws = Workspace::open(&dir).unwrap();
    let receipt = common::add(&ws, &docs);
    assert!(receipt.snapshot_id.is_some(), "{:?}", receipt.diagnostics);
    let (_, body) = get(&cluster.hosts[0], "/tychora-lex-*/_count").unwrap();
    let count: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert!(count["count"].as_u64().unwrap() >= 600, "{body}");
    let found = search(&ws, "record number 417", None);
    assert!(
        found
            .segments
            .iter()
            .any(|s| s.text.contains("Record number 417 "))
    );
    assert!(ws.verify().unwrap().ok);
}

/// A workspace with the text channel on the local model and, when `search` is given, its derived
/// indexes on that cluster.
fn embedding_workspace(dir: &Path, search: Option<&str>) -> Workspace {
    Workspace::init_with(dir, "documents", Some("local")).unwrap();
    let toml = dir.join("workspace.toml");
    let text = std::fs::read_to_string(&toml).unwrap().replace(
        "provider = \"local\"\n",
        &format!(
            "provider = \"local\"\nmodel_dir = {:?}\ncache_dir = \"\"\n",
            common::model_dir().display().to_string(),
        ),
    );
    std::fs::write(
        &toml,
        format!("{text}\n[summaries]\nprovider = \"extractive\"\nbranching = 3\n"),
    )
    .unwrap();
    if let Some(search) = search {
        with_search(dir, search);
    }
    Workspace::open(dir).unwrap()
}

/// The text channel alone: what it cites, in order, and its cosine similarities.
fn dense(ws: &Workspace, query: &str, snapshot: Option<i64>) -> (Vec<String>, Vec<f64>) {
    let result = ws
        .search(&QueryRequest {
            query: query.into(),
            channels: Some(vec!["text".into()]),
            snapshot_id: snapshot,
            max_per_source: Some(0),
            limit: Some(10),
            explain: true,
            ..Default::default()
        })
        .unwrap();
    assert!(result.warnings.is_empty(), "{query}: {:?}", result.warnings);
    let scores = result
        .segments
        .iter()
        .map(|s| {
            s.channels
                .iter()
                .find(|c| c.channel == "text")
                .and_then(|c| c.score)
                .unwrap_or(f64::NAN)
        })
        .collect();
    (cited(&result), scores)
}

fn assert_same_dense(a: (Vec<String>, Vec<f64>), b: (Vec<String>, Vec<f64>), what: &str) {
    assert_eq!(a.0, b.0, "{what}");
    for (x, y) in a.1.iter().zip(&b.1) {
        assert!((x - y).abs() < 1e-4, "{what}: similarity {x} against {y}");
    }
}

/// Vector part indices of `prefix` on the cluster.
fn vector_parts(cluster: &Cluster, prefix: &str) -> Vec<String> {
    indices(cluster, &format!("{prefix}-vec-*"))
}

const PARAPHRASES: [&str; 5] = [
    "birds that fly along the shore when the season turns",
    "how an operating system decides which task runs next",
    "why ocean water rises higher at some phases of the moon",
    "ice slowly shaping mountain landscapes",
    "a spacecraft that stays above the same spot on earth",
];

#[test]
fn vector_generations_on_opensearch_keep_the_embedded_guarantees() {
    let Some(cluster) = Cluster::start(2) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let docs = tmp.path().join("docs");
    write_docs(&docs);
    let twin = embedding_workspace(&tmp.path().join("embedded"), None);
    let clustered = tmp.path().join("clustered");
    let ws = embedding_workspace(
        &clustered,
        Some(&format!(
            "[search]\nurl = {:?}\nprefix = \"v1\"\nreplicas = 1\ncollect_after_seconds = 0\n",
            cluster.url()
        )),
    );

    // The text channel answers as on the embedded path: the same windows, the same similarities.
    let first = common::add(&ws, &docs).snapshot_id.unwrap();
    common::add(&twin, &docs);
    for q in PARAPHRASES {
        assert_same_dense(dense(&ws, q, None), dense(&twin, q, None), q);
    }
    assert_eq!(
        vector_parts(&cluster, "v1").len(),
        1,
        "a full build writes one part"
    );
    // The summary tree is clustered from the windows' vectors read back from the cluster, and
    // its channel scores each node's windows from there: the same tree, the same answers.
    for w in [&ws, &twin] {
        w.build_summaries(None, &SummaryBuildOptions::default())
            .unwrap();
    }
    for q in PARAPHRASES {
        let summary = |w: &Workspace| {
            let result = w
                .search(&QueryRequest {
                    query: q.into(),
                    channels: Some(vec!["summary".into()]),
                    max_per_source: Some(0),
                    limit: Some(5),
                    ..Default::default()
                })
                .unwrap();
            assert!(result.warnings.is_empty(), "{q}: {:?}", result.warnings);
            cited(&result)
        };
        let found = summary(&ws);
        assert!(!found.is_empty(), "{q}");
        assert_eq!(found, summary(&twin), "{q}");
    }
    assert!(
        !clustered.join("indexes/text").exists()
            || std::fs::read_dir(clustered.join("indexes/text"))
                .unwrap()
                .next()
                .is_none(),
        "no vector file is written beside the workspace"
    );

    // A one-file change writes one part holding that file's windows; the pinned snapshot keeps
    // the old vectors, the new one does not.
    std::fs::write(
        docs.join("00-pelicans.md"),
        "# pelicans\n\nCormorants dive for fish where pelicans once fished.\n",
    )
    .unwrap();
    let second = common::add(&ws, &docs).snapshot_id.unwrap();
    common::add(&twin, &docs);
    let now = vector_parts(&cluster, "v1");
    assert_eq!(now.len(), 2, "{now:?}");
    let (_, body) = get(&cluster.hosts[0], &format!("/{}/_count", now[1])).unwrap();
    let added: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert!(
        added["count"].as_u64().unwrap() <= 3,
        "the new part holds only the changed file's windows: {body}"
    );
    let shore = PARAPHRASES[0];
    let (old, _) = dense(&ws, shore, Some(first));
    let (new, _) = dense(&ws, shore, Some(second));
    assert!(old[0].contains("quiet islands"), "{old:?}");
    assert!(new.iter().all(|c| !c.contains("quiet islands")), "{new:?}");
    for q in PARAPHRASES.iter().chain(&["seabirds diving to catch fish"]) {
        assert_same_dense(dense(&ws, q, None), dense(&twin, q, None), q);
    }

    // Eligibility applies inside the graph search: the one window of a collection is found by a
    // query it hardly matches, however many windows elsewhere are nearer.
    let other = tmp.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(
        other.join("aside.md"),
        "# aside\n\nMinutes of the garden committee.\n",
    )
    .unwrap();
    for w in [&ws, &twin] {
        w.add(
            &tychora_core::ingest::AddRequest {
                paths: vec![other.display().to_string()],
                collection: Some("aside".into()),
                ..Default::default()
            },
            tychora_core::ingest::Requester::Owner,
            &|_| {},
        )
        .unwrap();
    }
    let scoped = ws
        .search(&QueryRequest {
            query: "a spacecraft that stays above the same spot on earth".into(),
            channels: Some(vec!["text".into()]),
            collections: vec!["aside".into()],
            limit: Some(1),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(scoped.segments.len(), 1, "{:?}", scoped.warnings);
    assert!(scoped.segments[0].citation.contains("aside.md"));
    let verify = ws.verify().unwrap();
    assert!(verify.ok, "{:?}", verify.problems);

    // An erasure takes the windows out of every copy, the pinned snapshot's included.
    for w in [&ws, &twin] {
        let source = search(w, "cormorants", None).segments[0].source.source_id;
        w.delete_original(&format!("source:{source}"), "a request to erase", &|_| {})
            .unwrap();
    }
    for snapshot in [Some(first), Some(second), None] {
        let (cited, _) = dense(&ws, shore, snapshot);
        assert!(
            cited.iter().all(|c| !c.contains("pelicans")),
            "{snapshot:?}: {cited:?}"
        );
    }
    let (_, body) = get(&cluster.hosts[0], "/v1-vec-*/_count").unwrap();
    let left: serde_json::Value = serde_json::from_str(&body).unwrap();
    let (_, body) = get(&cluster.hosts[0], "/v1-lex-*/_count").unwrap();
    let lexical: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        left["count"], lexical["count"],
        "the same windows left in both channels"
    );
    let verify = ws.verify().unwrap();
    assert!(verify.ok, "{:?}", verify.problems);

    // One generation's manifest damaged (it names a part that is not there): the rebuild writes
    // that generation again beside the parts other generations still read, and every snapshot
    // answers as before.
    let before: Vec<_> = [Some(second), None]
        .into_iter()
        .map(|s| dense(&ws, shore, s))
        .collect();
    let (_, body) = get(
        &cluster.hosts[0],
        "/v1-manifests/_search?sort=created_ms:asc&size=100",
    )
    .unwrap();
    let listed: serde_json::Value = serde_json::from_str(&body).unwrap();
    let hit = listed["hits"]["hits"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["_source"]["channel"] == "vector")
        .unwrap();
    let mut damaged = hit["_source"].clone();
    damaged["parts"] = serde_json::json!([{ "index": "v1-vec-gone", "excluded": [] }]);
    let (code, body) = request_with(
        &cluster.hosts[0],
        "PUT",
        &format!(
            "/v1-manifests/_doc/{}?refresh=true",
            hit["_id"].as_str().unwrap()
        ),
        &damaged.to_string(),
    )
    .unwrap();
    assert_eq!(code, 200, "{body}");
    drop(ws);
    let ws = Workspace::open(&clustered).unwrap();
    assert!(!ws.verify().unwrap().ok);
    ws.rebuild(&|_| {}).unwrap();
    let verify = ws.verify().unwrap();
    assert!(verify.ok, "{:?}", verify.problems);
    for (snapshot, answer) in [Some(second), None].into_iter().zip(before) {
        assert_same_dense(dense(&ws, shore, snapshot), answer, "after the repair");
    }

    // A lost vector index is found by verify and rebuilt from the records (nothing embedded).
    for index in vector_parts(&cluster, "v1") {
        request(&cluster.hosts[0], "DELETE", &format!("/{index}")).unwrap();
    }
    drop(ws);
    let ws = Workspace::open(&clustered).unwrap();
    let verify = ws.verify().unwrap();
    assert!(!verify.ok);
    assert!(
        verify
            .problems
            .iter()
            .any(|p| p.code == ErrorCode::Corrupt && p.message.contains("rebuild")),
        "{:?}",
        verify.problems
    );
    let rebuilt = ws.rebuild(&|_| {}).unwrap();
    assert!(!rebuilt.repaired.is_empty(), "{rebuilt:?}");
    assert!(ws.verify().unwrap().ok);
    for q in PARAPHRASES {
        assert_same_dense(dense(&ws, q, None), dense(&twin, q, None), q);
    }

    // What a daemon that died mid-build leaves (a vector part no manifest names) is collected.
    let (code, body) = request(&cluster.hosts[0], "PUT", "/v1-vec-g1-99-f1.tyv").unwrap();
    assert_eq!(code, 200, "{body}");
    ws.purge().unwrap();
    assert!(!vector_parts(&cluster, "v1").contains(&"v1-vec-g1-99-f1.tyv".to_string()));
    assert!(ws.verify().unwrap().ok);

    // A clone would share the prefix (and collect the original's generations): refused.
    let refused = Workspace::clone_into(&clustered, &tmp.path().join("clone")).unwrap_err();
    assert_eq!(refused.code(), ErrorCode::InvalidArgument, "{refused}");
    assert!(!tmp.path().join("clone").exists());

    // A backup holds the store, not the cluster's generations; the restored workspace names the
    // same cluster and answers from it.
    let backup = tmp.path().join("backup");
    let report = ws.backup(&backup).unwrap();
    assert_eq!(report.generations, 0, "{report:?}");
    drop(ws);
    let restored = tmp.path().join("restored");
    Workspace::restore(&backup, &restored).unwrap();
    let ws = Workspace::open(&restored).unwrap();
    assert!(ws.verify().unwrap().ok);
    for q in PARAPHRASES {
        assert_same_dense(dense(&ws, q, None), dense(&twin, q, None), q);
    }
}
