//! Building a summary tree for the current snapshot (`tychora index build --raptor`).
//!
//! Read the windows and their vectors → cluster (documents, then each collection) → summarise
//! level by level (the cache first, then the model for permitted collections, the extractive
//! summary for the rest and as the fallback) → each node's centroid → one transaction replaces the
//! previous tree. Provider calls happen before the transaction; a failed call writes nothing, so
//! the tree that was answering keeps answering.

use std::collections::HashMap;
use std::time::Instant;

use serde::Serialize;
use sha2::{Digest, Sha256};

use super::cluster::{self, Tree};
use super::{Summarizer, SummaryInput, extract};
use crate::clock::now_ms;
use crate::engine::Engine;
use crate::error::{Diagnostic, Error, ErrorCode, Result};
use crate::store::summaries::{self, SummaryWindow as Window};
use crate::store::tx::Tx;

/// What `index build --raptor` was asked.
#[derive(Debug, Clone, Default)]
pub struct SummaryBuildOptions {
    /// Summarise every cluster offline, whatever `[summaries]` names.
    pub extractive: bool,
    /// Cluster and count what would be sent; write nothing and call nothing.
    pub dry_run: bool,
}

/// What a build did.
#[derive(Debug, Clone, Serialize, Default)]
pub struct SummaryReport {
    /// The tree written (`None` for a dry run).
    pub tree_id: Option<i64>,
    /// The snapshot whose windows were clustered.
    pub snapshot_id: i64,
    /// Whether this was a dry run: clustered and counted, nothing sent or written.
    pub dry_run: bool,
    /// Windows clustered.
    pub windows: usize,
    /// Windows left out (flagged by the safety detector, or without a vector).
    pub left_out: usize,
    /// Documents (sources) holding them.
    pub documents: usize,
    /// Summary nodes, and per level (index 0 is level 1).
    pub nodes: usize,
    /// Nodes at each level; index 0 is level 1.
    pub levels: Vec<usize>,
    /// `extractive`, or the provider that summarised the permitted collections.
    pub summarizer: String,
    /// The configured `[summaries]` model (`None` when the summarizer is `extractive`).
    pub model: Option<String>,
    /// Nodes summarised by the model, taken from the cache, and summarised extractively.
    pub by_model: usize,
    /// Nodes whose summary came from the summary cache (same inputs, summarizer, model and prompt).
    pub cached: usize,
    /// Nodes summarised extractively: all of them without a model, else those of collections not
    /// permitted to it and those whose answer was declined or rejected (in a dry run, also those
    /// that would have been sent).
    pub extractive: usize,
    /// Provider requests, and the tokens they took.
    pub calls: usize,
    /// Input tokens the provider counted, over all requests.
    pub input_tokens: u64,
    /// Tokens the model wrote, over all requests.
    pub output_tokens: u64,
    /// Tokens of the model inputs a dry run would send (cache hits excluded).
    pub planned_input_tokens: u64,
    /// Milliseconds spent clustering the windows into the tree.
    pub cluster_ms: f64,
    /// Milliseconds spent summarising every level (extractive summaries, cache lookups, provider
    /// calls).
    pub summarize_ms: f64,
    /// Milliseconds for the whole build, through writing the tree (through summarising, for a dry
    /// run).
    pub build_ms: f64,
    /// Clusters the model declined or answered with something else, and why.
    pub diagnostics: Vec<Diagnostic>,
}

/// Characters of each child a model is sent, at most (the prompt stays near 8,000 tokens).
const CHILD_CHARS: usize = 32_000;
/// Clusters per summariser call.
const BATCH: usize = 16;

/// A child of a node: a window (position in the kept windows) or another node.
#[derive(Debug, Clone, Copy)]
enum Item {
    Window(usize),
    Node(usize),
}

struct Node {
    level: u32,
    scope: &'static str,
    source_id: Option<i64>,
    collection: String,
    children: Vec<Item>,
    leaves: usize,
    text: String,
    summarizer: String,
    model: Option<String>,
    input_sha256: String,
    vector: Vec<f32>,
}

/// Adds `tree`'s clusters as nodes, children before parents; returns what stands for the tree
/// (a lone item is not wrapped in a node of its own).
fn add_tree(
    tree: &Tree,
    items: &[Item],
    nodes: &mut Vec<Node>,
    scope: &'static str,
    source_id: Option<i64>,
    collection: &str,
) -> Item {
    let children: Vec<Item> = match tree {
        Tree::Leaf(positions) => positions.iter().map(|&p| items[p]).collect(),
        Tree::Node(subtrees) => subtrees
            .iter()
            .map(|t| add_tree(t, items, nodes, scope, source_id, collection))
            .collect(),
    };
    if children.len() == 1 {
        return children[0];
    }
    let level_of = |item: &Item, nodes: &[Node]| match item {
        Item::Window(_) => 0,
        Item::Node(n) => nodes[*n].level,
    };
    let leaves_of = |item: &Item, nodes: &[Node]| match item {
        Item::Window(_) => 1,
        Item::Node(n) => nodes[*n].leaves,
    };
    let level = 1 + children
        .iter()
        .map(|c| level_of(c, nodes))
        .max()
        .unwrap_or(0);
    let leaves = children.iter().map(|c| leaves_of(c, nodes)).sum();
    nodes.push(Node {
        level,
        scope,
        source_id,
        collection: collection.to_string(),
        children,
        leaves,
        text: String::new(),
        summarizer: String::new(),
        model: None,
        input_sha256: String::new(),
        vector: Vec::new(),
    });
    Item::Node(nodes.len() - 1)
}

/// The windows under an item, as positions.
fn leaf_positions(item: Item, nodes: &[Node], out: &mut Vec<usize>) {
    match item {
        Item::Window(p) => out.push(p),
        Item::Node(n) => {
            for &c in &nodes[n].children {
                leaf_positions(c, nodes, out);
            }
        }
    }
}

/// Clusters the windows of each document, then each collection's documents and lone windows.
fn plan(windows: &[Window], vectors: &[f32], dim: usize, branching: usize) -> Vec<Node> {
    let mut nodes: Vec<Node> = Vec::new();
    // A document's tree holds window positions, which are the items themselves.
    let all: Vec<Item> = (0..windows.len()).map(Item::Window).collect();
    let mut start = 0;
    // Each document's top, by (collection, sensitivity): the corpus-level groups.
    let mut tops: Vec<((String, String), Item)> = Vec::new();
    while start < windows.len() {
        let source = windows[start].source_id;
        let end = start
            + windows[start..]
                .iter()
                .take_while(|w| w.source_id == source)
                .count();
        let top = if end - start == 1 {
            Item::Window(start)
        } else {
            let tree = cluster::cluster(vectors, dim, (start..end).collect(), branching);
            add_tree(
                &tree,
                &all,
                &mut nodes,
                "document",
                Some(source),
                &windows[start].collection,
            )
        };
        tops.push((
            (
                windows[start].collection.clone(),
                windows[start].sensitivity.clone(),
            ),
            top,
        ));
        start = end;
    }
    // Across each collection, one sensitivity level at a time: every document's top, clustered
    // by the centroid of its windows.
    let mut first = 0;
    while first < tops.len() {
        let group = tops[first].0.clone();
        let collection = group.0.clone();
        let last = first + tops[first..].iter().take_while(|t| t.0 == group).count();
        let members: Vec<Item> = tops[first..last].iter().map(|t| t.1).collect();
        if members.len() > 1 {
            let mut centroids = Vec::with_capacity(members.len() * dim);
            for &m in &members {
                let mut under = Vec::new();
                leaf_positions(m, &nodes, &mut under);
                centroids.extend(cluster::centroid(vectors, dim, &under));
            }
            let tree = cluster::cluster(&centroids, dim, (0..members.len()).collect(), branching);
            add_tree(&tree, &members, &mut nodes, "corpus", None, &collection);
        }
        first = last;
    }
    nodes
}

fn input_sha256(parts: &[&str]) -> String {
    let mut hasher = Sha256::new();
    for part in parts {
        hasher.update((part.len() as u64).to_le_bytes());
        hasher.update(part.as_bytes());
    }
    hex::encode(hasher.finalize())
}

/// `text` as a model's summary of `children`, or why it is not one.
fn check_answer(
    text: &str,
    children: &[String],
    max_tokens: u32,
) -> std::result::Result<String, String> {
    let cleaned: String = text
        .chars()
        .map(|c| if c.is_control() && c != '\n' { ' ' } else { c })
        .collect();
    let cleaned = cleaned.trim().to_string();
    if cleaned.is_empty() {
        return Err("the answer is empty".into());
    }
    let tokens = crate::tokenize::count(&cleaned);
    if tokens > (max_tokens as usize) * 2 {
        return Err(format!(
            "the answer has {tokens} tokens, over twice max_tokens = {max_tokens}"
        ));
    }
    let letters = cleaned.chars().filter(|c| c.is_alphabetic()).count();
    if letters * 2 < cleaned.chars().count() {
        return Err("most of the answer is not words".into());
    }
    // A summary shares words with what it summarises; an answer about something else does not.
    let lower = |t: &str| -> std::collections::HashSet<String> {
        t.split(|c: char| !c.is_alphanumeric())
            .filter(|w| w.chars().count() >= 4)
            .map(str::to_lowercase)
            .collect()
    };
    let own = lower(&cleaned);
    let source: std::collections::HashSet<String> =
        children.iter().flat_map(|c| lower(c)).collect();
    let shared = own.intersection(&source).count();
    if shared < 2.min(own.len()) || shared == 0 {
        return Err("the answer shares no word with the cluster's text".into());
    }
    Ok(cleaned)
}

fn ms(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1000.0
}

/// Builds the summary tree of the current snapshot, replacing the previous one.
///
/// # Errors
/// `E_INVALID_ARGUMENT` without `[embeddings]` or vectors; `E_NOT_FOUND` with nothing published;
/// the summariser's `E_PROVIDER` (nothing written); SQLite errors.
#[allow(clippy::too_many_lines)]
pub(crate) fn build(
    engine: &Engine,
    summarizer: Option<&dyn Summarizer>,
    options: &SummaryBuildOptions,
) -> Result<SummaryReport> {
    let started = Instant::now();
    let settings = engine.config().summaries.clone().unwrap_or_default();
    let embedder = engine.embedder()?.ok_or_else(|| {
        Error::InvalidArgument(
            "the summary tree clusters the text channel's window vectors: add an [embeddings] section (for example `tychora init --embeddings local`) and run `tychora manage rebuild`".into(),
        )
    })?;
    let (snapshot_id, generation, rows) = engine.with_reader(|conn| {
        let snapshot_id = engine
            .cached_current(conn)?
            .ok_or_else(|| Error::NotFound {
                what: "published snapshot (add sources before building summaries)",
                id: "current".into(),
            })?;
        let generation = engine
            .snapshot_meta(conn, snapshot_id)?
            .text
            .ok_or_else(|| {
                Error::InvalidArgument(format!(
                    "snapshot {snapshot_id} has no vectors: run `tychora manage rebuild` first"
                ))
            })?;
        Ok((
            snapshot_id,
            generation,
            summaries::windows(conn, snapshot_id, &engine.config().sensitivity.default)?,
        ))
    })?;
    if generation.spec != *embedder.spec() {
        return Err(Error::InvalidArgument(format!(
            "snapshot {snapshot_id}'s vectors are from {}, the workspace now embeds with {}: run `tychora manage rebuild` first",
            generation.spec,
            embedder.spec()
        )));
    }
    let index = engine.vector_index(&generation)?;
    let dim = generation.spec.dimension;
    let open = crate::vector::Eligible::default();
    let mut report = SummaryReport {
        snapshot_id,
        dry_run: options.dry_run,
        ..SummaryReport::default()
    };
    let mut windows = Vec::with_capacity(rows.len());
    let mut vectors: Vec<f32> = Vec::with_capacity(rows.len() * dim);
    // The unflagged windows' vectors in one read (batched requests on a cluster).
    let wanted: Vec<u64> = rows
        .iter()
        .filter(|(_, flagged)| !flagged)
        .map(|(w, _)| u64::try_from(w.chunk_id).unwrap_or_default())
        .collect();
    let mut held = index.vectors_of(&wanted, &open)?;
    for (window, flagged) in rows {
        let vector = if flagged {
            None
        } else {
            held.remove(&u64::try_from(window.chunk_id).unwrap_or_default())
        };
        match vector {
            Some(v) if v.len() == dim => {
                vectors.extend(v);
                windows.push(window);
            }
            _ => report.left_out += 1,
        }
    }
    report.windows = windows.len();
    report.documents = {
        let mut sources: Vec<i64> = windows.iter().map(|w| w.source_id).collect();
        sources.dedup();
        sources.len()
    };
    let branching = settings.branching;
    let clustered = Instant::now();
    let mut nodes = plan(&windows, &vectors, dim, branching);
    report.cluster_ms = ms(clustered);
    report.nodes = nodes.len();
    let max_level = nodes.iter().map(|n| n.level).max().unwrap_or(0);
    report.levels = (1..=max_level)
        .map(|l| nodes.iter().filter(|n| n.level == l).count())
        .collect();

    // Who summarises: the model for permitted collections, unless asked for extractive.
    let model = settings.model.clone().unwrap_or_default();
    let provider = (!options.extractive && settings.provider == "anthropic")
        .then_some(summarizer)
        .flatten();
    if !options.extractive
        && settings.provider == "anthropic"
        && provider.is_none()
        && !options.dry_run
    {
        return Err(Error::InvalidArgument(
            "[summaries] provider = \"anthropic\" needs the TypeScript package's summariser (tychora CLI, server or library); use --extractive to summarise offline".into(),
        ));
    }
    report.summarizer = if provider.is_some()
        || (options.dry_run && settings.provider == "anthropic" && !options.extractive)
    {
        settings.provider.clone()
    } else {
        "extractive".into()
    };
    report.model = (report.summarizer != "extractive").then(|| model.clone());
    let fingerprint = provider
        .map(|p| p.prompt_fingerprint().to_string())
        .unwrap_or_default();
    let max_tokens = settings.max_tokens;
    let summarized = Instant::now();
    let mut cache_rows: Vec<(String, String, u64, u64)> = Vec::new();
    for level in 1..=max_level {
        let at_level: Vec<usize> = (0..nodes.len())
            .filter(|&n| nodes[n].level == level)
            .collect();
        let mut to_send: Vec<(usize, Vec<String>)> = Vec::new();
        for &n in &at_level {
            let texts: Vec<String> = nodes[n]
                .children
                .iter()
                .map(|c| match c {
                    Item::Window(p) => windows[*p].text.clone(),
                    Item::Node(m) => nodes[*m].text.clone(),
                })
                .collect();
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            nodes[n].text = extract::summarize(&refs, max_tokens as usize);
            nodes[n].summarizer = "extractive".into();
            let permitted = settings
                .collections
                .iter()
                .any(|c| *c == nodes[n].collection);
            let wants_model = report.summarizer != "extractive";
            if !wants_model || !permitted {
                nodes[n].input_sha256 = input_sha256(&refs);
                report.extractive += 1;
                continue;
            }
            let bounded: Vec<String> = texts
                .iter()
                .map(|t| t.chars().take(CHILD_CHARS / texts.len().max(1)).collect())
                .collect();
            let mut parts: Vec<&str> = vec![
                report.summarizer.as_str(),
                model.as_str(),
                fingerprint.as_str(),
            ];
            let budget = max_tokens.to_string();
            parts.push(&budget);
            parts.extend(bounded.iter().map(String::as_str));
            nodes[n].input_sha256 = input_sha256(&parts);
            let cached: Option<String> = engine.with_reader(|conn| {
                summaries::cached_text(
                    conn,
                    &nodes[n].input_sha256,
                    &report.summarizer,
                    &model,
                    &fingerprint,
                )
            })?;
            if let Some(text) = cached {
                nodes[n].text = text;
                nodes[n].summarizer.clone_from(&report.summarizer);
                nodes[n].model = Some(model.clone());
                report.cached += 1;
                continue;
            }
            report.planned_input_tokens += bounded
                .iter()
                .map(|t| crate::tokenize::count(t) as u64)
                .sum::<u64>();
            to_send.push((n, bounded));
        }
        if options.dry_run {
            report.extractive += to_send.len();
            continue;
        }
        let Some(provider) = provider else {
            continue;
        };
        for batch in to_send.chunks(BATCH) {
            let inputs: Vec<SummaryInput> = batch
                .iter()
                .map(|(_, texts)| SummaryInput {
                    level,
                    texts: texts.clone(),
                })
                .collect();
            let call = provider.summarize(&model, max_tokens, &inputs)?;
            if call.answers.len() != inputs.len() {
                return Err(Error::Provider(format!(
                    "{} summaries: {} answers for {} clusters",
                    provider.provider(),
                    call.answers.len(),
                    inputs.len()
                )));
            }
            report.calls += call.calls;
            for ((n, texts), answer) in batch.iter().zip(call.answers) {
                report.input_tokens += answer.input_tokens;
                report.output_tokens += answer.output_tokens;
                let verdict = match (&answer.text, &answer.declined) {
                    (Some(text), _) => check_answer(text, texts, max_tokens),
                    (None, Some(why)) => Err(why.clone()),
                    (None, None) => Err("no answer".into()),
                };
                match verdict {
                    Ok(text) => {
                        cache_rows.push((
                            nodes[*n].input_sha256.clone(),
                            text.clone(),
                            answer.input_tokens,
                            answer.output_tokens,
                        ));
                        nodes[*n].text = text;
                        nodes[*n].summarizer.clone_from(&report.summarizer);
                        nodes[*n].model = Some(if answer.model.is_empty() {
                            model.clone()
                        } else {
                            answer.model.clone()
                        });
                        report.by_model += 1;
                    }
                    Err(why) => {
                        report.extractive += 1;
                        report.diagnostics.push(Diagnostic::warning(
                            format!(
                                "summary of a level-{level} cluster of {}",
                                nodes[*n].collection
                            ),
                            ErrorCode::Provider,
                            format!(
                                "{} did not summarise it ({why}); the extractive summary stands in",
                                provider.provider()
                            ),
                        ));
                    }
                }
            }
        }
    }
    report.summarize_ms = ms(summarized);
    if options.dry_run {
        report.build_ms = ms(started);
        return Ok(report);
    }
    // A node is found by where its windows are (their centroid), not by its summary's embedding:
    // on the dev half of the multi-passage set the centroid found 0.736 of the expected evidence
    // against 0.674 for the summaries' embeddings (bench/results/raptor.md), it costs no embedding
    // call, and a summary a model got wrong cannot move what the channel finds.
    for n in 0..nodes.len() {
        let mut under = Vec::new();
        leaf_positions(Item::Node(n), &nodes, &mut under);
        nodes[n].vector = cluster::centroid(&vectors, dim, &under);
    }
    report.build_ms = ms(started);
    let tree_id = write(
        engine,
        &report,
        &generation.spec,
        &fingerprint,
        branching,
        &windows,
        &nodes,
        &cache_rows,
    )?;
    report.tree_id = Some(tree_id);
    report.build_ms = ms(started);
    Ok(report)
}

#[allow(clippy::too_many_arguments)]
fn write(
    engine: &Engine,
    report: &SummaryReport,
    spec: &crate::vector::FamilySpec,
    fingerprint: &str,
    branching: usize,
    windows: &[Window],
    nodes: &[Node],
    cache_rows: &[(String, String, u64, u64)],
) -> Result<i64> {
    let conn = engine.writer()?;
    let conn: &dyn Tx = &*conn;
    conn.together(true, |tx| {
        let family = crate::store::vectors::family_id(tx, spec)?;
        let now = now_ms();
        let tree_id = summaries::insert_tree(
            tx,
            &summaries::TreeRow {
                snapshot_id: report.snapshot_id,
                family_id: family,
                summarizer: &report.summarizer,
                model: report.model.as_deref(),
                fingerprint: (!fingerprint.is_empty()).then_some(fingerprint),
                branching,
                windows: report.windows,
                nodes: report.nodes,
                input_tokens: report.input_tokens,
                output_tokens: report.output_tokens,
                calls: report.calls,
                build_ms: report.build_ms,
                built_at: now,
            },
        )?;
        // The trees before it go (inserted first, the new tree's id is past theirs).
        summaries::keep_only(tx, tree_id)?;
        // Parents are added after their children, so insert from the last node down: each parent's
        // id is known when its children are written.
        let mut parent: HashMap<usize, usize> = HashMap::new();
        for (n, node) in nodes.iter().enumerate() {
            for c in &node.children {
                if let Item::Node(m) = c {
                    parent.insert(*m, n);
                }
            }
        }
        let mut ids: HashMap<usize, i64> = HashMap::new();
        {
            let mut writer = summaries::NodeWriter::new(tx)?;
            for n in (0..nodes.len()).rev() {
                let node = &nodes[n];
                let id = writer.node(&summaries::NodeRow {
                    tree_id,
                    parent_id: parent.get(&n).and_then(|p| ids.get(p)).copied(),
                    level: node.level,
                    scope: node.scope,
                    source_id: node.source_id,
                    text: &node.text,
                    summarizer: &node.summarizer,
                    model: node.model.as_deref(),
                    input_sha256: &node.input_sha256,
                    leaf_count: node.leaves,
                    vector: &node.vector,
                })?;
                ids.insert(n, id);
                for c in &node.children {
                    if let Item::Window(p) = c {
                        writer.member(id, windows[*p].chunk_id)?;
                    }
                }
            }
        }
        summaries::cache_texts(
            tx,
            &report.summarizer,
            report.model.as_deref(),
            fingerprint,
            cache_rows,
            now,
        )?;
        Ok(tree_id)
    })
}

#[cfg(test)]
mod tests {
    use super::check_answer;

    #[test]
    fn a_summary_must_read_as_one_of_its_cluster() {
        let children = vec!["Passwords are hashed with Argon2id and a unique salt.".to_string()];
        assert!(check_answer("Passwords should be hashed with Argon2id.", &children, 100).is_ok());
        assert!(
            check_answer("   ", &children, 100)
                .unwrap_err()
                .contains("empty")
        );
        assert!(
            check_answer("The weather in Lisbon is mild in winter.", &children, 100)
                .unwrap_err()
                .contains("shares no word")
        );
        assert!(check_answer("{{{{ 1234 ]]]] 5678 ;;;; ????", &children, 100).is_err());
        let long = "passwords ".repeat(500);
        assert!(
            check_answer(&long, &children, 100)
                .unwrap_err()
                .contains("tokens")
        );
    }
}
