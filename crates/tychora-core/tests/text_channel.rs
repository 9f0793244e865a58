//! The text (dense) channel end to end with the local model (all-MiniLM-L6-v2, fetched by
//! `node scripts/fetch-model.mjs`; `npm test` and `.ci/run` fetch it first): embedding at
//! publication, the vector caches, paraphrase recall, filters, explain, budgets, provider
//! failures, and a damaged vector file detected and rebuilt.

mod common;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tychora_core::ingest::{AddRequest, Requester};
use tychora_core::query::QueryRequest;
use tychora_core::vector::{Embedded, Embedder, FamilySpec, InputKind, LocalEmbedder, Providers};
use tychora_core::{ErrorCode, Workspace};

use common::model_dir;

/// A workspace with the text channel on the local model, its user cache in `cache`, and extra
/// `[embeddings]` lines.
fn text_workspace(root: &Path, cache: &Path, extra: &str) -> Workspace {
    let dir = root.join("ws");
    Workspace::init_with(&dir, "documents", Some("local")).unwrap();
    let toml = dir.join("workspace.toml");
    let cache_line = if extra.contains("cache_dir") {
        String::new()
    } else {
        format!("cache_dir = {:?}\n", cache.display().to_string())
    };
    let text = std::fs::read_to_string(&toml).unwrap().replace(
        "provider = \"local\"\n",
        &format!(
            "provider = \"local\"\nmodel_dir = {:?}\n{cache_line}{extra}",
            model_dir().display().to_string(),
        ),
    );
    std::fs::write(&toml, text).unwrap();
    Workspace::open(&dir).unwrap()
}

fn write_docs(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    let docs = [
        (
            "pets.md",
            "# Household animals\n\nThe feline dozed on the rug all afternoon, purring quietly.\n",
        ),
        (
            "cars.md",
            "# Engines\n\nA turbocharger forces extra air into the combustion chamber to raise power output.\n",
        ),
        (
            "cooking.md",
            "# Bread\n\nKnead the dough until it is elastic, then let it rise in a warm place for an hour.\n",
        ),
        (
            "space.md",
            "# Orbits\n\nA geostationary satellite circles the planet once per day above the equator.\n",
        ),
        (
            "finance.md",
            "# Interest\n\nCompound interest adds the earned interest back to the principal every period.\n",
        ),
    ];
    for (name, text) in docs {
        std::fs::write(dir.join(name), text).unwrap();
    }
}

fn search(ws: &Workspace, query: &str, channels: &[&str]) -> tychora_core::query::QueryResult {
    ws.search(&QueryRequest {
        query: query.into(),
        channels: Some(channels.iter().map(|c| (*c).to_string()).collect()),
        explain: true,
        ..Default::default()
    })
    .unwrap()
}

fn records(ws: &Workspace) -> i64 {
    ws.status().unwrap().counts.vector_records
}

/// The text channel's weight in one answer (absent when it did not run).
fn text_weight(result: &tychora_core::query::QueryResult) -> Option<f64> {
    result
        .coverage
        .channels
        .iter()
        .find(|c| c.channel == "text")
        .map(|c| c.weight)
}

#[test]
fn the_text_channel_counts_as_far_as_the_model_reads_the_query() {
    let tmp = tempfile::tempdir().unwrap();
    let docs = tmp.path().join("docs");
    write_docs(&docs);
    std::fs::write(
        docs.join("zh.md"),
        "# 面包\n\n把面团揉到有弹性，然后放在温暖的地方发酵一个小时。\n",
    )
    .unwrap();
    let ws = text_workspace(tmp.path(), &tmp.path().join("cache"), "");
    common::add(&ws, &docs);
    let all = ["exact", "lexical", "text"];

    // English: all-MiniLM-L6-v2 reads it, full weight (the documents pack's 1.25). No word of it
    // is in the documents, so the lexical channel has nothing to blend with: rank fusion alone.
    let english = search(&ws, "kitten napping atop carpet", &all);
    assert_eq!(text_weight(&english), Some(1.25));
    let share = |r: &tychora_core::query::QueryResult, channel: &str| {
        r.coverage
            .channels
            .iter()
            .find(|c| c.channel == channel)
            .and_then(|c| c.blend)
    };
    assert_eq!(share(&english, "text"), None);
    // Found by both: their scores blend, each at its share of the two weights.
    let both = search(&ws, "interest added back to the principal", &all);
    assert!((share(&both, "text").unwrap() - 1.25 / 2.25).abs() < 1e-9);
    assert!((share(&both, "lexical").unwrap() - 1.0 / 2.25).abs() < 1e-9);
    assert_eq!(share(&both, "exact"), None);
    assert_eq!(both.segments[0].source.path, "finance.md");
    assert!(english.warnings.is_empty(), "{:?}", english.warnings);

    // Chinese: the model does not read Han, so the channel is off and the answer says why; the
    // lexical channel still finds the document.
    let chinese = search(&ws, "面团发酵", &all);
    assert_eq!(text_weight(&chinese), None);
    assert_eq!(
        share(&chinese, "lexical"),
        None,
        "one scored channel fuses by rank"
    );
    assert!(
        chinese
            .warnings
            .iter()
            .any(|w| w.contains("[embeddings] scripts")),
        "{:?}",
        chinese.warnings
    );
    assert_eq!(chinese.segments[0].source.path, "zh.md");
    assert!(chinese.trace.iter().all(|t| t.stage != "text"));

    // Mostly Latin: the weight is the share of letters the model reads (11 of 13).
    let mixed = search(&ws, "dough rising 面团", &all);
    let weight = text_weight(&mixed).expect("the text channel ran");
    assert!((weight - 1.25 * 11.0 / 13.0).abs() < 1e-9, "{weight}");

    // A model said to read Han too counts the Chinese query whole.
    drop(ws);
    let other = tmp.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    let han = text_workspace(
        &other,
        &tmp.path().join("cache"),
        "scripts = [\"Latin\", \"Han\"]\n",
    );
    common::add(&han, &docs);
    assert_eq!(text_weight(&search(&han, "面团发酵", &all)), Some(1.25));
}

#[test]
fn a_script_name_that_is_not_one_is_refused_on_open() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("ws");
    Workspace::init_with(&dir, "documents", Some("local")).unwrap();
    let toml = dir.join("workspace.toml");
    let text = std::fs::read_to_string(&toml).unwrap().replace(
        "provider = \"local\"\n",
        "provider = \"local\"\nscripts = [\"Klingon\"]\n",
    );
    std::fs::write(&toml, text).unwrap();
    let Err(err) = Workspace::open(&dir) else {
        panic!("a script name that is not one is refused");
    };
    assert!(
        err.to_string()
            .contains("\"Klingon\" is not a Unicode script name"),
        "{err}"
    );
}

#[test]
fn a_paraphrase_is_found_by_the_text_channel_and_inputs_are_embedded_once() {
    let tmp = tempfile::tempdir().unwrap();
    let docs = tmp.path().join("docs");
    write_docs(&docs);
    let cache = tmp.path().join("cache");
    let ws = text_workspace(tmp.path(), &cache, "");
    let receipt = common::add(&ws, &docs);
    let embedding = receipt.embedding.expect("the receipt reports embedding");
    assert_eq!(embedding.inputs, 5);
    assert_eq!(embedding.embedded, 5);
    assert!(embedding.tokens_embedded > 0);
    assert_eq!(records(&ws), 5);

    // No shared word with the document: lexical finds nothing, the text channel finds it first.
    let lexical = search(&ws, "kitten napping atop carpet", &["lexical"]);
    assert!(lexical.segments.iter().all(|s| s.source.path != "pets.md"));
    let text = search(&ws, "kitten napping atop carpet", &["text"]);
    assert_eq!(
        text.segments[0].source.path, "pets.md",
        "{:?}",
        text.warnings
    );
    let explained = &text.segments[0].channels[0];
    assert_eq!(explained.channel, "text");
    let similarity = explained
        .score
        .expect("explain gives the cosine similarity");
    assert!(similarity > 0.2 && similarity <= 1.0, "{similarity}");
    let stage = text.trace.iter().find(|t| t.stage == "text").unwrap();
    assert_eq!(stage.candidates, Some(5));
    let call = stage
        .provider
        .as_ref()
        .expect("the query embedding is traced");
    assert_eq!(call.provider, "local");
    assert!(call.tokens > 2);

    // Hybrid: the text channel fuses with the others at weight 1.
    let hybrid = search(
        &ws,
        "kitten napping atop carpet",
        &["exact", "lexical", "text"],
    );
    assert_eq!(hybrid.segments[0].source.path, "pets.md");

    // A file changed: only its new input is embedded, and the others are not even read (the
    // new generation is a layer over the first one's vectors).
    std::fs::write(
        docs.join("space.md"),
        "# Orbits\n\nA polar orbit passes over both poles.\n",
    )
    .unwrap();
    let again = common::add(&ws, &docs).embedding.unwrap();
    assert_eq!(
        (again.inputs, again.workspace_cached, again.embedded),
        (1, 0, 1)
    );

    // Another workspace of the same user embeds nothing: the user cache has every input.
    drop(ws);
    let other_root = tmp.path().join("other");
    std::fs::create_dir_all(&other_root).unwrap();
    let other = text_workspace(&other_root, &cache, "");
    let cold = common::add(&other, &docs).embedding.unwrap();
    assert_eq!((cold.user_cached, cold.embedded), (5, 0));
    assert_eq!(records(&other), 5);
}

#[test]
fn filters_apply_inside_the_vector_search() {
    let tmp = tempfile::tempdir().unwrap();
    let docs = tmp.path().join("docs");
    write_docs(&docs);
    let rare = tmp.path().join("rare");
    std::fs::create_dir_all(&rare).unwrap();
    std::fs::write(
        rare.join("note.md"),
        "# Note\n\nThe stock market fell sharply today.\n",
    )
    .unwrap();
    let ws = text_workspace(tmp.path(), &tmp.path().join("cache"), "");
    common::add(&ws, &docs);
    ws.add(
        &AddRequest {
            paths: vec![rare.display().to_string()],
            collection: Some("rare".into()),
            ..Default::default()
        },
        Requester::Owner,
        &|_| {},
    )
    .unwrap();
    // The nearest window overall is pets.md; restricted to "rare", the only window there.
    let result = ws
        .search(&QueryRequest {
            query: "kitten napping atop carpet".into(),
            channels: Some(vec!["text".into()]),
            collections: vec!["rare".into()],
            ..Default::default()
        })
        .unwrap();
    assert_eq!(result.segments.len(), 1);
    assert_eq!(result.segments[0].source.path, "note.md");
    // A facet condition narrows inside the vector search as well: the note, made a level-1
    // standard, is the only window the text channel may return.
    ws.add(
        &AddRequest {
            paths: vec![rare.display().to_string()],
            collection: Some("rare".into()),
            kind: Some("standard".into()),
            facets: std::collections::BTreeMap::from([("level".into(), serde_json::json!(1))]),
            ..Default::default()
        },
        Requester::Owner,
        &|_| {},
    )
    .unwrap();
    let result = ws
        .search(&QueryRequest {
            query: "kitten napping atop carpet".into(),
            channels: Some(vec!["text".into()]),
            facets: vec!["level>=1".into()],
            ..Default::default()
        })
        .unwrap();
    assert_eq!(result.segments.len(), 1);
    assert_eq!(result.segments[0].source.path, "note.md");
    assert_eq!(result.coverage.channels[0].candidates, 1);
}

#[test]
fn a_damaged_vector_file_is_detected_and_rebuilt_from_the_records() {
    let tmp = tempfile::tempdir().unwrap();
    let docs = tmp.path().join("docs");
    write_docs(&docs);
    let ws = text_workspace(tmp.path(), &tmp.path().join("cache"), "");
    common::add(&ws, &docs);
    let dir = ws.dir().to_path_buf();
    drop(ws);
    let text_dir = dir.join("indexes/text");
    let file = std::fs::read_dir(&text_dir)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let bytes = std::fs::read(&file).unwrap();
    std::fs::write(&file, &bytes[..bytes.len() - 100]).unwrap();

    let ws = Workspace::open(&dir).unwrap();
    let report = ws.verify().unwrap();
    assert!(!report.ok);
    assert!(
        report
            .problems
            .iter()
            .any(|p| p.code == ErrorCode::Corrupt && p.message.contains("manage rebuild")),
        "{:?}",
        report.problems
    );
    // The query still answers, without the text channel, and says so.
    let degraded = search(&ws, "kitten napping atop carpet", &["lexical", "text"]);
    assert!(
        degraded.warnings.iter().any(|w| w.contains("rebuild")),
        "{:?}",
        degraded.warnings
    );

    let records_before = records(&ws);
    let rebuilt = ws.rebuild(&|_| {}).unwrap();
    assert_eq!(rebuilt.repaired.len(), 1, "{rebuilt:?}");
    assert!(!rebuilt.republished, "{}", rebuilt.reason);
    assert_eq!(
        records(&ws),
        records_before,
        "rebuilt from the records, nothing embedded"
    );
    assert!(ws.verify().unwrap().ok);
    let text = search(&ws, "kitten napping atop carpet", &["text"]);
    assert!(text.warnings.is_empty(), "{:?}", text.warnings);
    assert_eq!(text.segments[0].source.path, "pets.md");
}

#[test]
fn a_job_over_its_embedding_cap_stops_before_embedding_and_publishes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let docs = tmp.path().join("docs");
    write_docs(&docs);
    let ws = text_workspace(
        tmp.path(),
        &tmp.path().join("cache"),
        "max_embed_tokens_per_job = 20\n",
    );
    let plan = ws
        .plan_add(
            &AddRequest {
                paths: vec![docs.display().to_string()],
                ..Default::default()
            },
            Requester::Owner,
            &|_| {},
        )
        .unwrap();
    let estimate = plan.embedding.unwrap();
    assert_eq!((plan.files.added, plan.windows), (5, 5));
    assert_eq!((estimate.new_inputs, estimate.usd), (5, Some(0.0)));
    assert!(estimate.over_budget && estimate.new_tokens > 20);
    let status = ws.status().unwrap();
    assert_eq!(
        (status.counts.sources, status.counts.jobs),
        (0, 0),
        "a dry run writes nothing"
    );

    let err = common::try_add(&ws, &docs).unwrap_err();
    assert_eq!(err.code(), ErrorCode::BudgetExceeded);
    assert!(
        err.to_string().contains("max_embed_tokens_per_job = 20"),
        "{err}"
    );
    assert_eq!(ws.current_snapshot().unwrap(), None);
    assert_eq!(records(&ws), 0, "nothing was embedded");
}

/// The local model behind a switch that fails every call after the first `ok` ones, the way a
/// provider fails mid-job.
struct Flaky {
    inner: LocalEmbedder,
    ok: usize,
    calls: AtomicUsize,
}

impl Embedder for Flaky {
    fn spec(&self) -> &FamilySpec {
        self.inner.spec()
    }
    fn embed(&self, texts: &[&str], kind: InputKind) -> tychora_core::Result<Embedded> {
        if self.calls.fetch_add(1, Ordering::SeqCst) >= self.ok {
            return Err(tychora_core::Error::Provider(
                "fake outage (HTTP 503)".into(),
            ));
        }
        self.inner.embed(texts, kind)
    }
    fn max_input_tokens(&self) -> usize {
        self.inner.max_input_tokens()
    }
    fn count_tokens(&self, text: &str) -> usize {
        self.inner.count_tokens(text)
    }
}

#[test]
fn a_provider_failure_fails_the_job_keeps_the_snapshot_and_the_vectors_already_made() {
    let tmp = tempfile::tempdir().unwrap();
    let docs = tmp.path().join("docs");
    write_docs(&docs);
    let ws = text_workspace(tmp.path(), &tmp.path().join("cache"), "cache_dir = \"\"\n");
    let first = common::add(&ws, &docs);
    let published = first.snapshot_id;
    let dir = ws.dir().to_path_buf();
    drop(ws);
    // 300 new windows: two embedder calls (256 inputs each); the second fails.
    for i in 0..300 {
        std::fs::write(
            docs.join(format!("n{i}.md")),
            format!("# Note {i}\n\nItem number {i} of a long list.\n"),
        )
        .unwrap();
    }
    let flaky = Arc::new(Flaky {
        inner: LocalEmbedder::open(&model_dir(), "window+capsule", "f32", Default::default())
            .unwrap(),
        ok: 1,
        calls: AtomicUsize::new(0),
    });
    let ws = Workspace::open_with(
        &dir,
        Providers {
            embedder: Some(flaky.clone()),
            reranker: None,
            visual: None,
        },
    )
    .unwrap();
    let err = common::try_add(&ws, &docs).unwrap_err();
    assert_eq!(err.code(), ErrorCode::Provider);
    assert!(err.to_string().contains("503"), "{err}");
    assert_eq!(
        ws.current_snapshot().unwrap(),
        published,
        "the published snapshot is unchanged"
    );
    assert_eq!(records(&ws), 5 + 256, "the first call's vectors are kept");
    assert!(ws.verify().unwrap().ok);

    // The retry pays only for what the failed call did not embed.
    flaky.calls.store(0, Ordering::SeqCst);
    let retry = common::try_add(&ws, &docs).unwrap();
    let embedding = retry.embedding.unwrap();
    assert_eq!((embedding.embedded, embedding.workspace_cached), (44, 261));
    assert!(retry.published);
}

#[test]
fn turning_embeddings_on_later_is_applied_by_rebuild() {
    let tmp = tempfile::tempdir().unwrap();
    let docs = tmp.path().join("docs");
    write_docs(&docs);
    let dir = tmp.path().join("ws");
    Workspace::init_with_profile(&dir, "documents").unwrap();
    let ws = Workspace::open(&dir).unwrap();
    common::add(&ws, &docs);
    drop(ws);
    // Enable the text channel on the existing workspace.
    let toml = dir.join("workspace.toml");
    let mut text = std::fs::read_to_string(&toml).unwrap();
    text.push_str(&format!(
        "\n[embeddings]\nprovider = \"local\"\nmodel_dir = {:?}\ncache_dir = {:?}\n",
        model_dir().display().to_string(),
        tmp.path().join("cache").display().to_string()
    ));
    std::fs::write(&toml, text).unwrap();
    let ws = Workspace::open(&dir).unwrap();
    let before = search(&ws, "kitten napping atop carpet", &["lexical", "text"]);
    assert!(
        before.warnings.iter().any(|w| w.contains("has no vectors")),
        "{:?}",
        before.warnings
    );
    let report = ws.rebuild(&|_| {}).unwrap();
    assert!(
        report.republished && report.reason.contains("no vectors"),
        "{report:?}"
    );
    assert_eq!(report.embedding.unwrap().embedded, 5);
    let after = search(&ws, "kitten napping atop carpet", &["text"]);
    assert!(after.warnings.is_empty(), "{:?}", after.warnings);
    assert_eq!(after.segments[0].source.path, "pets.md");
    // Nothing left to do: a second rebuild changes nothing.
    let again = ws.rebuild(&|_| {}).unwrap();
    assert!(!again.republished && again.repaired.is_empty(), "{again:?}");
}

/// The vector generation files (name, size), sorted by name.
fn text_files(dir: &Path) -> Vec<(String, u64)> {
    let mut files: Vec<(String, u64)> = std::fs::read_dir(dir.join("indexes/text"))
        .unwrap()
        .map(|e| e.unwrap())
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                e.metadata().unwrap().len(),
            )
        })
        .collect();
    files.sort();
    files
}

/// The text channel's results as (path, text) pairs.
fn texts(ws: &Workspace, query: &str, snapshot: Option<i64>) -> Vec<(String, String)> {
    ws.search(&QueryRequest {
        query: query.into(),
        channels: Some(vec!["text".into()]),
        snapshot_id: snapshot,
        ..Default::default()
    })
    .unwrap()
    .segments
    .iter()
    .map(|s| (s.source.path.clone(), s.text.clone()))
    .collect()
}

#[test]
fn a_small_change_writes_a_vector_layer_that_backup_follows_and_compaction_folds() {
    let tmp = tempfile::tempdir().unwrap();
    let docs = tmp.path().join("docs");
    write_docs(&docs);
    let ws = text_workspace(tmp.path(), &tmp.path().join("cache"), "");
    let first = common::add(&ws, &docs).snapshot_id.unwrap();
    let full = text_files(ws.dir());
    assert_eq!(full.len(), 1);

    // One file changed, one added: the new generation is a layer over the first file.
    std::fs::write(
        docs.join("space.md"),
        "# Orbits\n\nA polar orbit passes over both poles.\n",
    )
    .unwrap();
    std::fs::write(
        docs.join("music.md"),
        "# Strings\n\nA cello is tuned in fifths, lower than a viola.\n",
    )
    .unwrap();
    common::add(&ws, &docs);
    let files = text_files(ws.dir());
    assert_eq!(files.len(), 2, "{files:?}");
    assert!(files.contains(&full[0]), "the base file is kept as it was");
    let layer = files.iter().find(|f| **f != full[0]).unwrap();
    assert!(
        layer.1 < full[0].1 + 600,
        "the layer holds the 2 new vectors, not all 6: {files:?}"
    );

    // It answers like a full generation: the new text is found, the replaced one never is.
    assert!(ws.verify().unwrap().ok);
    let polar = texts(
        &ws,
        "a satellite flying over the north and south pole",
        None,
    );
    assert_eq!(polar[0].0, "space.md");
    assert!(
        polar.iter().all(|(_, t)| !t.contains("geostationary")),
        "{polar:?}"
    );
    assert_eq!(polar.len(), 6, "six windows, the replaced one gone");
    assert_eq!(
        texts(&ws, "stringed instrument tuning", None)[0].0,
        "music.md"
    );
    // The older snapshot still answers from the base alone.
    let old = texts(
        &ws,
        "a satellite flying over the north and south pole",
        Some(first),
    );
    assert!(
        old.iter().any(|(_, t)| t.contains("geostationary")),
        "{old:?}"
    );
    assert_eq!(old.len(), 5);

    // A backup follows the layer to its base; the restored workspace answers the same.
    let copy = tmp.path().join("backup");
    ws.backup(&copy).unwrap();
    let restored_dir = tmp.path().join("restored");
    Workspace::restore(&copy, &restored_dir).unwrap();
    let restored = Workspace::open(&restored_dir).unwrap();
    assert!(restored.verify().unwrap().ok);
    assert_eq!(
        texts(
            &restored,
            "a satellite flying over the north and south pole",
            None
        ),
        polar
    );
    drop(restored);

    // Compaction folds the grown layer (2 of 5 base vectors) into one full generation.
    let compacted = ws.compact().unwrap();
    let folded = compacted.text_folded_to.expect("the layer is folded");
    assert!(ws.verify().unwrap().ok);
    assert_eq!(
        texts(
            &ws,
            "a satellite flying over the north and south pole",
            None
        ),
        polar
    );
    assert!(text_files(ws.dir()).iter().any(|(name, _)| *name == folded));
    assert!(
        ws.compact().unwrap().text_folded_to.is_none(),
        "a full generation is not folded again"
    );
}

#[test]
fn a_layer_whose_base_is_gone_is_reported_and_rebuilt_whole() {
    let tmp = tempfile::tempdir().unwrap();
    let docs = tmp.path().join("docs");
    write_docs(&docs);
    let ws = text_workspace(tmp.path(), &tmp.path().join("cache"), "");
    common::add(&ws, &docs);
    let base = text_files(ws.dir())[0].0.clone();
    std::fs::write(
        docs.join("music.md"),
        "# Strings\n\nA cello is tuned in fifths, lower than a viola.\n",
    )
    .unwrap();
    common::add(&ws, &docs);
    assert_eq!(text_files(ws.dir()).len(), 2, "a layer over the base");
    let dir = ws.dir().to_path_buf();
    drop(ws);
    std::fs::remove_file(dir.join("indexes/text").join(&base)).unwrap();

    let ws = Workspace::open(&dir).unwrap();
    let report = ws.verify().unwrap();
    assert!(
        report
            .problems
            .iter()
            .any(|p| p.code == ErrorCode::Corrupt && p.message.contains("manage rebuild")),
        "{:?}",
        report.problems
    );
    // A new layer is never written over the missing base: the next add builds a full file.
    std::fs::write(
        docs.join("tea.md"),
        "# Tea\n\nGreen tea is steeped below boiling.\n",
    )
    .unwrap();
    common::add(&ws, &docs);
    assert_eq!(
        texts(&ws, "stringed instrument tuning", None)[0].0,
        "music.md"
    );
    // The older snapshot's layer is repaired whole from the records.
    let rebuilt = ws.rebuild(&|_| {}).unwrap();
    assert!(ws.verify().unwrap().ok, "{rebuilt:?}");
}
