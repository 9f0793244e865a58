//! Snapshots: a coherent published set of corpus members and index generations.
//!
//! Publication order: read the members' chunk rows → (text channel) make sure every window's input
//! has a vector, embedding only new inputs → build the lexical generation, commit + fsync its
//! directory, verify its document count equals the members' chunk count → (text channel) write the
//! vector generation file, fsync it and its directory, record its sha256 → in one SQLite
//! transaction insert the snapshot, its members and index links, and switch the pointer.
//! Nothing a failed step leaves behind is referenced; garbage collection removes it.

use std::path::Path;

use crate::clock::now_ms;
use crate::config::Lexical;
use crate::error::{Error, Result};
use crate::job::{Phase, Progress, failpoint};
use crate::lexical::{self, LexDoc, port::LexicalGenerations};
use crate::store;
use crate::store::tx::Tx;
use crate::store::vectors::UserCache;
use crate::vector::{self, Budget, EmbedReport, Embedder, FamilySpec, VectorGenerations, Written};

mod scrub;
mod text_layer;

pub use scrub::{pending_erasures, scrub};

pub use crate::store::snapshots::Member;

/// The current snapshot id.
///
/// # Errors
/// SQLite errors.
pub fn current(conn: &dyn Tx) -> Result<Option<i64>> {
    store::snapshots::current(conn)
}

/// The members of a snapshot.
///
/// # Errors
/// SQLite errors.
pub fn members(conn: &dyn Tx, snapshot_id: i64) -> Result<Vec<Member>> {
    store::snapshots::members(conn, snapshot_id)
}

/// The lexical generation a snapshot uses.
///
/// # Errors
/// `E_NOT_FOUND` if the snapshot does not exist or has no lexical index.
pub fn lexical_generation(conn: &dyn Tx, snapshot_id: i64) -> Result<String> {
    store::snapshots::lexical_generation(conn, snapshot_id)?.ok_or_else(|| Error::NotFound {
        what: "snapshot (or its retained index generation)",
        id: snapshot_id.to_string(),
    })
}

/// A snapshot's vector generation: its family, file name and recorded sha256.
#[derive(Debug, Clone)]
pub struct TextGeneration {
    /// The family (as recorded when the generation was built).
    pub spec: FamilySpec,
    /// The file's name under `indexes/text/`.
    pub generation: String,
    /// Its sha256 at publication.
    pub sha256: String,
}

/// The text channel's generation of a snapshot, if the snapshot has one.
///
/// # Errors
/// SQLite errors; `E_CORRUPT` for an unreadable family record.
pub fn text_generation(conn: &dyn Tx, snapshot_id: i64) -> Result<Option<TextGeneration>> {
    let Some((config, generation, sha256)) = store::snapshots::text_generation(conn, snapshot_id)?
    else {
        return Ok(None);
    };
    #[derive(serde::Deserialize)]
    struct Recorded {
        spec: FamilySpec,
    }
    let recorded: Recorded = serde_json::from_str(&config)
        .map_err(|e| Error::Corrupt(format!("text index family record: {e}")))?;
    Ok(Some(TextGeneration {
        spec: recorded.spec,
        generation,
        sha256: sha256.unwrap_or_default(),
    }))
}

/// The `index_families` row of a vector family (one per family: `text:<id>`).
fn text_family(conn: &dyn Tx, family_id: i64, spec: &FamilySpec) -> Result<i64> {
    let name = format!("text:{family_id}");
    let config = serde_json::json!({ "family_id": family_id, "spec": spec }).to_string();
    store::snapshots::family(conn, &name, "text", &config)
}

fn lexical_family(conn: &dyn Tx, lexical: &Lexical) -> Result<i64> {
    store::snapshots::family(conn, "lexical", "lexical", &analyzer_identity(lexical))
}

/// What a lexical index was built with: the pack's settings and the word tokenizer's version, so a
/// change to either (an upgrade that cuts Thai into trigrams) reads as another analyzer: the next
/// build is a full one, and until then queries say to rebuild.
fn analyzer_identity(lexical: &Lexical) -> String {
    let mut value = serde_json::to_value(lexical).unwrap_or_default();
    if let Some(fields) = value.as_object_mut() {
        fields.insert(
            "tokenizer".into(),
            crate::lexical::scripts::TOKENIZER_VERSION.into(),
        );
    }
    value.to_string()
}

/// What a new snapshot holds, where it comes from, and where its index generation goes.
#[derive(Debug)]
pub struct Publication<'a> {
    /// Where lexical generations are written (the workspace's folder or a cluster).
    pub generations: &'a dyn LexicalGenerations,
    /// The analyzer the generation is built with.
    pub lexical: &'a Lexical,
    /// The snapshot it follows (the current one), if any.
    pub parent: Option<i64>,
    /// Whether the lexical generation may be derived from the parent's (a repair builds afresh).
    pub derive: bool,
    /// The job that publishes it.
    pub job_id: i64,
    /// Its members.
    pub members: &'a [Member],
    /// The code relation sets it pins.
    pub relation_sets: &'a [i64],
    /// The text channel's family, when the workspace embeds.
    pub text: Option<TextPublication<'a>>,
}

/// How a publication gets the text channel's vectors and where their generation goes.
pub struct TextPublication<'a> {
    /// The folder the embedded adapter's vector generations live in (`indexes/text`): where a
    /// layer's base is read.
    pub dir: &'a Path,
    /// Where the vector generation is written (the embedded files, or a cluster).
    pub vectors: &'a dyn VectorGenerations,
    /// The workspace's id of the family.
    pub family_id: i64,
    /// What embeds inputs that have no vector yet.
    pub embedder: &'a dyn Embedder,
    /// The user-level cache, if enabled.
    pub cache: Option<&'a UserCache>,
    /// Caps on tokens embedded.
    pub budget: Budget,
    /// Whether a small change may write a layer over the parent's generation. Not on a shared
    /// store: each daemon holds its own copy of a generation another published (built again from
    /// the records, so not byte for byte the file a layer's header names as its base).
    pub layers: bool,
}

impl std::fmt::Debug for TextPublication<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TextPublication")
            .field("family_id", &self.family_id)
            .field("spec", self.embedder.spec())
            .finish_non_exhaustive()
    }
}

/// What publishing did beyond the snapshot itself.
#[derive(Debug, Clone, Default)]
pub struct Published {
    /// What embedding the windows did (text channel only).
    pub embedding: Option<EmbedReport>,
}

/// One chunk row as a publication reads it.
struct Row {
    /// Index of its member (its document).
    member: usize,
    id: u64,
    owner: u64,
    revision: u64,
    text: String,
    capsule: String,
    kind: String,
    collection: String,
}

impl Row {
    fn lex_doc(&self) -> LexDoc<'_> {
        LexDoc {
            chunk_id: self.id,
            owner_id: self.owner,
            revision_id: self.revision,
            collection: &self.collection,
            kind: &self.kind,
            text: &self.text,
            capsule: &self.capsule,
        }
    }
}

/// Builds, verifies and publishes a snapshot of `members`. `finish` writes the caller's own rows
/// (the job's end) in the pointer switch's transaction. Returns the snapshot's id.
///
/// # Errors
/// `E_CORRUPT` if verification fails (nothing is published); tantivy, I/O and SQLite errors.
pub fn publish(
    conn: &dyn Tx,
    publication: &Publication<'_>,
    on_progress: &(dyn Fn(Progress) + Sync),
    finish: impl FnOnce(&dyn Tx, i64, &Published) -> Result<()>,
) -> Result<i64> {
    let Publication {
        generations,
        lexical,
        parent,
        derive,
        job_id,
        members,
        relation_sets,
        ref text,
    } = *publication;
    let base = match parent {
        Some(parent) if derive => incremental_base(conn, parent, members, generations, lexical)?,
        _ => None,
    };
    // The text channel's generation: a layer over the parent's when the change is small.
    let layer = match (&base, text, parent) {
        (Some(base), Some(t), Some(parent)) if t.layers => text_layer::plan(
            conn,
            parent,
            t,
            &base.removed_extractions,
            base.added_documents,
        )?,
        _ => None,
    };
    // ... or a generation the vector store derives from the parent's (a cluster's parts).
    let vector_base = match (&base, text, parent, &layer) {
        (Some(_), Some(t), Some(parent), None) if t.vectors.derives() => {
            text_generation(conn, parent)?
                .filter(|g| g.spec == *t.embedder.spec())
                .map(|g| g.generation)
        }
        _ => None,
    };
    // The rows a publication reads: every member's when the text channel writes a full
    // generation (it holds every window), otherwise only the members the parent does not have.
    let changed: Vec<Member> = match &base {
        Some(base) => base.added.clone(),
        None => members.to_vec(),
    };
    let all_rows = text.is_some() && layer.is_none() && vector_base.is_none();
    let rows = read_rows(conn, if all_rows { members } else { &changed })?;
    let expected = match &base {
        Some(base) if !all_rows => {
            (base.documents + rows.len() as u64).saturating_sub(base.removed_documents)
        }
        _ => rows.len() as u64,
    };
    let mut published = Published::default();
    // Vectors first: a provider failure or a budget stop leaves nothing half-built.
    let inputs = match text {
        Some(t) => {
            let documents = row_inputs(&t.embedder.spec().representation, &rows);
            let report = vector::ensure(
                &store::vectors::Records(conn),
                t.family_id,
                t.embedder,
                t.cache.map(|c| c as &dyn vector::VectorCache),
                &documents,
                t.budget,
                &|done, total| {
                    on_progress(Progress {
                        phase: Phase::Embed,
                        done,
                        total,
                    });
                },
            )?;
            published.embedding = Some(report);
            Some(
                documents
                    .into_iter()
                    .flat_map(|d| d.shas)
                    .collect::<Vec<_>>(),
            )
        }
        None => None,
    };
    let generation = format!("g{}-{job_id}", now_ms());
    // When every row was read (a full vector generation), the lexical generation takes the
    // changed ones; otherwise the rows are the changed members' already (`r.member` indexes them).
    let changed_sources: std::collections::HashSet<i64> =
        changed.iter().map(|m| m.source_id).collect();
    let lex_rows: Vec<&Row> = rows
        .iter()
        .filter(|r| {
            base.is_none() || !all_rows || changed_sources.contains(&members[r.member].source_id)
        })
        .collect();
    on_progress(Progress {
        phase: Phase::Index,
        done: 0,
        total: lex_rows.len(),
    });
    let mut docs = lex_rows.iter().map(|r| r.lex_doc());
    let count = match &base {
        Some(base) => {
            match generations.derive(
                &base.generation,
                &generation,
                &base.removed_revisions,
                &mut docs,
            ) {
                Ok(count) => count,
                Err(e) if e.code() == crate::ErrorCode::StoreUnavailable => {
                    generations.discard(&generation);
                    return Err(e);
                }
                Err(e) => {
                    // A damaged parent generation costs a full build, not the job.
                    log::warn!(
                        "cannot derive from lexical generation {}: {e}; building afresh",
                        base.generation
                    );
                    generations.discard(&generation);
                    let all = read_rows(conn, members)?;
                    let mut docs = all.iter().map(Row::lex_doc);
                    build_or_discard(generations, &generation, &mut docs)?
                }
            }
        }
        None => build_or_discard(generations, &generation, &mut docs)?,
    };
    failpoint("after-lexical-generation");
    if count != expected {
        generations.discard(&generation);
        return Err(Error::Corrupt(format!(
            "index generation {generation} holds {count} documents but the snapshot has {expected} chunks; not published"
        )));
    }
    let text_file = match (text, &inputs) {
        (Some(t), Some(per_row)) => Some(match (&layer, &vector_base, &base) {
            (Some(plan), _, _) => {
                let (name, sha256, base) =
                    text_layer::write(conn, t, &generation, plan, &rows, per_row, expected)?;
                (name, sha256, Some(base))
            }
            (None, Some(from), Some(base)) => {
                let written = derive_text(
                    conn,
                    t,
                    from,
                    &generation,
                    base,
                    members,
                    &rows,
                    per_row,
                    expected,
                )?;
                (written.name, written.sha256, None)
            }
            _ => {
                let written = build_text(conn, t, &generation, &rows, per_row)?;
                if written.documents != expected {
                    t.vectors.discard(&written.name);
                    return Err(Error::Corrupt(format!(
                        "vector generation {} holds {} vectors but the snapshot has {expected} chunks; not published",
                        written.name, written.documents
                    )));
                }
                (written.name, written.sha256, None)
            }
        }),
        _ => None,
    };
    on_progress(Progress {
        phase: Phase::Index,
        done: lex_rows.len(),
        total: lex_rows.len(),
    });
    failpoint("after-index");
    let family = lexical_family(conn, lexical)?;
    let text_family = match (text, &text_file) {
        (Some(t), Some(_)) => Some(text_family(conn, t.family_id, t.embedder.spec())?),
        _ => None,
    };
    let mut batches = vec![store::snapshots::NewBatch {
        family_id: family,
        generation: &generation,
        file_sha256: None,
        base_generation: None,
    }];
    if let (Some(text_family), Some((name, sha256, base))) = (text_family, &text_file) {
        batches.push(store::snapshots::NewBatch {
            family_id: text_family,
            generation: name,
            file_sha256: Some(sha256),
            base_generation: base.as_deref(),
        });
    }
    let snapshot_id = conn.together(true, |tx| {
        let snapshot_id = store::snapshots::publish(
            tx,
            &store::snapshots::NewSnapshot {
                parent,
                job_id: Some(job_id),
                chunk_count: expected,
                members,
                batches: &batches,
                relation_sets,
                created_at: now_ms(),
            },
        )?;
        // The caller's own rows (the job's end) commit with the pointer switch, or not at all.
        finish(tx, snapshot_id, &published)?;
        failpoint("before-switch-commit");
        Ok(snapshot_id)
    })?;
    on_progress(Progress {
        phase: Phase::Publish,
        done: 1,
        total: 1,
    });
    Ok(snapshot_id)
}

/// What a derived lexical generation starts from: the parent snapshot's generation and how the
/// new members differ from its members.
struct Base {
    generation: String,
    /// Documents in the parent's generation.
    documents: u64,
    /// Revisions whose documents the new generation deletes (members gone or replaced).
    removed_revisions: Vec<u64>,
    /// Chunk rows of those members.
    removed_documents: u64,
    /// Their extractions.
    removed_extractions: Vec<i64>,
    /// Members the parent does not have (new sources, new revisions or extractions).
    added: Vec<Member>,
    /// Chunk rows of those members.
    added_documents: u64,
}

/// Whether the lexical generations were last built with this analyzer (`None`: none built yet).
///
/// # Errors
/// SQLite errors.
pub fn lexical_analyzer_matches(conn: &dyn Tx, lexical: &Lexical) -> Result<Option<bool>> {
    let recorded = store::snapshots::family_config(conn, "lexical")?;
    Ok(recorded.map(|r| r == analyzer_identity(lexical)))
}

/// The parent's generation to derive from, or `None` for a full build: when the parent has no
/// readable generation, when the analyzer changed since it was built, or when the change is more
/// than half of the new snapshot (a fresh build is then as cheap and leaves no deleted documents).
fn incremental_base(
    conn: &dyn Tx,
    parent: i64,
    members: &[Member],
    generations: &dyn LexicalGenerations,
    lexical: &Lexical,
) -> Result<Option<Base>> {
    let Ok(generation) = lexical_generation(conn, parent) else {
        return Ok(None);
    };
    if lexical_analyzer_matches(conn, lexical)? != Some(true) || !generations.derivable(&generation)
    {
        return Ok(None);
    }
    let documents = store::snapshots::chunk_count(conn, parent)?;
    let before = store::snapshots::member_map(conn, parent)?;
    let now: std::collections::HashSet<(i64, i64)> = members
        .iter()
        .map(|m| (m.source_id, m.extraction_id))
        .collect();
    let mut removed_revisions = Vec::new();
    let mut removed_extractions = Vec::new();
    let mut removed_documents = 0u64;
    for (source, (revision, extraction)) in &before {
        if !now.contains(&(*source, *extraction)) {
            removed_revisions.push(u64::try_from(*revision).unwrap_or_default());
            removed_extractions.push(*extraction);
            removed_documents += store::snapshots::chunks_of_extraction(conn, *extraction)?;
        }
    }
    let added: Vec<Member> = members
        .iter()
        .filter(|m| before.get(&m.source_id).map(|b| b.1) != Some(m.extraction_id))
        .cloned()
        .collect();
    let mut added_documents = 0u64;
    for m in &added {
        added_documents += store::snapshots::chunks_of_extraction(conn, m.extraction_id)?;
    }
    let documents = u64::try_from(documents).unwrap_or_default();
    let total = (documents + added_documents).saturating_sub(removed_documents);
    if (removed_documents + added_documents) * 2 > total.max(1) {
        return Ok(None);
    }
    Ok(Some(Base {
        generation,
        documents,
        removed_revisions,
        removed_documents,
        removed_extractions,
        added,
        added_documents,
    }))
}

/// Builds generation `name`, removing what a failed build left.
fn build_or_discard<'a>(
    generations: &dyn LexicalGenerations,
    name: &str,
    docs: &mut dyn Iterator<Item = LexDoc<'a>>,
) -> Result<u64> {
    generations
        .build(name, docs)
        .inspect_err(|_| generations.discard(name))
}

/// The embedding inputs of `rows`, one document per member, in row order.
fn row_inputs(representation: &str, rows: &[Row]) -> Vec<vector::DocInputs> {
    let mut documents: Vec<Vec<(&str, &str)>> = Vec::new();
    let mut last = None;
    for r in rows {
        if last != Some(r.member) {
            documents.push(Vec::new());
            last = Some(r.member);
        }
        if let Some(d) = documents.last_mut() {
            d.push((r.capsule.as_str(), r.text.as_str()));
        }
    }
    vector::document_inputs(representation, &documents)
}

/// The chunk rows of `members`, in member then window order.
fn read_rows(conn: &dyn Tx, members: &[Member]) -> Result<Vec<Row>> {
    let mut rows = Vec::new();
    for (index, member) in members.iter().enumerate() {
        let revision = u64::try_from(member.revision_id).unwrap_or_default();
        for w in store::snapshots::index_windows(conn, member.extraction_id)? {
            let id = u64::try_from(w.chunk_id).unwrap_or_default();
            rows.push(Row {
                member: index,
                id,
                owner: u64::try_from(w.owner_id).unwrap_or(id),
                revision,
                text: w.text,
                capsule: capsule_text(&w.capsule_json),
                kind: w.kind,
                collection: w.collection,
            });
        }
    }
    Ok(rows)
}

/// The name of the text channel's generation published with lexical generation `generation`.
fn text_name(generation: &str, family_id: i64) -> String {
    format!("{generation}-f{family_id}.tyv")
}

/// Writes the vector generation of `rows` (whose inputs all have records now).
fn build_text(
    conn: &dyn Tx,
    text: &TextPublication<'_>,
    generation: &str,
    rows: &[Row],
    per_row: &[String],
) -> Result<Written> {
    write_text(
        conn,
        text.vectors,
        text.family_id,
        text.embedder.spec(),
        &text_name(generation, text.family_id),
        rows,
        per_row,
    )
}

/// Writes the vector generation as the parent's generation `from` less the replaced revisions,
/// plus the new windows `rows` (a cluster's part); checks it holds `expected` vectors. A parent
/// that cannot be derived from costs a full generation from the records, not the job.
#[allow(clippy::too_many_arguments)]
fn derive_text(
    conn: &dyn Tx,
    text: &TextPublication<'_>,
    from: &str,
    generation: &str,
    base: &Base,
    members: &[Member],
    rows: &[Row],
    per_row: &[String],
    expected: u64,
) -> Result<Written> {
    let name = text_name(generation, text.family_id);
    let spec = text.embedder.spec();
    let derived = with_entries(conn, text.family_id, spec, rows, per_row, |entries| {
        text.vectors
            .derive(from, &name, spec, &base.removed_revisions, entries)
    });
    let written = match derived {
        Ok(Some(written)) if written.documents == expected => written,
        Err(e) if e.code() == crate::ErrorCode::StoreUnavailable => {
            text.vectors.discard(&name);
            return Err(e);
        }
        other => {
            match other {
                Err(e) => {
                    log::warn!("cannot derive from vector generation {from}: {e}; building afresh")
                }
                // The parent does not hold what its snapshot has (damaged on the cluster).
                Ok(Some(w)) => log::warn!(
                    "vector generation {name} derived from {from} holds {} vectors, the snapshot {expected}; building afresh",
                    w.documents
                ),
                Ok(None) => {}
            }
            text.vectors.discard(&name);
            let all = read_rows(conn, members)?;
            let inputs: Vec<String> = row_inputs(&spec.representation, &all)
                .into_iter()
                .flat_map(|d| d.shas)
                .collect();
            write_text(
                conn,
                text.vectors,
                text.family_id,
                spec,
                &name,
                &all,
                &inputs,
            )?
        }
    };
    if written.documents != expected {
        text.vectors.discard(&written.name);
        return Err(Error::Corrupt(format!(
            "vector generation {} holds {} vectors but the snapshot has {expected} chunks; not published",
            written.name, written.documents
        )));
    }
    Ok(written)
}

/// Calls `write` with the entries of `rows` from the records of `family`.
fn with_entries<T>(
    conn: &dyn Tx,
    family: i64,
    spec: &FamilySpec,
    rows: &[Row],
    per_row: &[String],
    write: impl FnOnce(&[vector::Entry<'_>]) -> Result<T>,
) -> Result<T> {
    let records = crate::store::vectors::lookup(conn, family, per_row)?;
    let mut entries = Vec::with_capacity(rows.len());
    for (row, sha) in rows.iter().zip(per_row) {
        let record = records.get(sha).ok_or_else(|| {
            Error::Corrupt(format!(
                "window {} has no vector record of {}/{}; publish again with that family configured",
                row.id, spec.provider, spec.model
            ))
        })?;
        entries.push(vector::Entry {
            key: row.id,
            owner: row.owner,
            revision: row.revision,
            collection: &row.collection,
            kind: &row.kind,
            vector: &record.vector,
        });
    }
    write(&entries)
}

/// Writes vector generation `name` into `vectors` from the records of `family`.
fn write_text(
    conn: &dyn Tx,
    vectors: &dyn VectorGenerations,
    family: i64,
    spec: &FamilySpec,
    name: &str,
    rows: &[Row],
    per_row: &[String],
) -> Result<Written> {
    with_entries(conn, family, spec, rows, per_row, |entries| {
        vectors.build(name, spec, entries)
    })
}

/// Rewrites a snapshot's vector generation from the workspace's vector records when it is
/// missing or does not match its recorded sha256, and records the new sha256 (the members and
/// vectors are the same; an HNSW graph built again may differ byte for byte). Returns whether
/// it rewrote the generation.
///
/// # Errors
/// `E_CORRUPT` when a window has no record of the family; the vector store's and SQLite errors.
pub fn repair_text(
    conn: &dyn Tx,
    snapshot_id: i64,
    generation: &TextGeneration,
    vectors: &dyn VectorGenerations,
) -> Result<bool> {
    let expected = u64::try_from(store::snapshots::chunk_count(conn, snapshot_id)?).unwrap_or(0);
    // Sound means readable and holding the snapshot's windows (a cluster's parts can lose
    // documents that its manifest still lists).
    match vectors
        .open(&generation.generation, &generation.sha256)
        .and_then(|index| index.documents())
    {
        Ok(documents) if documents == expected => return Ok(false),
        Err(e) if e.code() == crate::ErrorCode::StoreUnavailable => return Err(e),
        _ => {}
    }
    // Written over under the same name (not discarded first: on a cluster, the generations
    // derived from this one may read its part).
    let written = build_text_of(conn, snapshot_id, generation, vectors)?;
    store::batches::verify(conn, &generation.generation, &written.sha256)?;
    Ok(true)
}

/// Writes into `vectors` a full vector generation of a snapshot's windows under its recorded
/// name, from the vector records (nothing is embedded). A daemon on a shared store builds so
/// the generations another daemon published.
///
/// # Errors
/// `E_CORRUPT` when a window has no record of the family; the vector store's and store errors.
pub fn build_text_of(
    conn: &dyn Tx,
    snapshot_id: i64,
    generation: &TextGeneration,
    vectors: &dyn VectorGenerations,
) -> Result<Written> {
    let rows = read_rows(conn, &members(conn, snapshot_id)?)?;
    let per_row: Vec<String> = row_inputs(&generation.spec.representation, &rows)
        .into_iter()
        .flat_map(|d| d.shas)
        .collect();
    let family = crate::store::vectors::family_id(conn, &generation.spec)?;
    write_text(
        conn,
        vectors,
        family,
        &generation.spec,
        &generation.generation,
        &rows,
        &per_row,
    )
}

/// Builds into `dir` the lexical generation of a snapshot from its members' rows, and checks it
/// holds the snapshot's chunk count (a daemon on a shared store builds so the generations
/// another daemon published).
///
/// # Errors
/// `E_CORRUPT` when the count differs; tantivy, I/O and store errors.
pub fn build_lexical_of(
    conn: &dyn Tx,
    snapshot_id: i64,
    dir: &Path,
    lexical: &Lexical,
) -> Result<()> {
    let rows = read_rows(conn, &members(conn, snapshot_id)?)?;
    let count = lexical::build_generation(dir, lexical, rows.iter().map(Row::lex_doc))?;
    let expected = store::snapshots::chunk_count(conn, snapshot_id)?;
    if i64::try_from(count).ok() != Some(expected) {
        return Err(Error::Corrupt(format!(
            "the lexical generation built for snapshot {snapshot_id} holds {count} documents but the snapshot has {expected} chunks"
        )));
    }
    Ok(())
}

/// The capsule as indexed text.
pub(crate) fn capsule_text(json: &str) -> String {
    serde_json::from_str::<serde_json::Value>(json)
        .ok()
        .map(|v| {
            let mut parts: Vec<String> = Vec::new();
            if let Some(t) = v
                .get("title")
                .and_then(|t| t.as_str())
                .filter(|t| !t.is_empty())
            {
                parts.push(t.to_string());
            }
            if let Some(path) = v.get("heading_path").and_then(|p| p.as_array()) {
                parts.extend(path.iter().filter_map(|h| h.as_str().map(str::to_string)));
            }
            for field in ["table_header", "signature"] {
                if let Some(h) = v.get(field).and_then(|t| t.as_str()) {
                    parts.push(h.to_string());
                }
            }
            parts.join("\n")
        })
        .unwrap_or_default()
}

/// What compacting the current snapshot's lexical generation did.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct CompactReport {
    /// The snapshot whose generation was compacted (none without a published snapshot).
    pub snapshot_id: Option<i64>,
    /// The generation it read, and the one it now uses (the same when nothing was merged).
    pub from_generation: Option<String>,
    /// The compacted generation, when the merge policy found segments to merge.
    pub to_generation: Option<String>,
    /// Segments before and after.
    pub segments_before: usize,
    /// Segments after.
    pub segments_after: usize,
    /// Deleted documents the generation held before (purged by the merge).
    pub deleted_before: u64,
    /// The full vector generation a grown layer was folded into, when it was.
    #[serde(default)]
    pub text_folded_to: Option<String>,
    /// Wall time in milliseconds.
    pub duration_ms: f64,
}

/// Merges the current snapshot's lexical generation into a new generation when tantivy's merge
/// policy finds segments to merge, verifies it holds the snapshot's documents, and points the
/// snapshot at it in one transaction. The old generation stays on disk for readers that hold it
/// and is collected later; what the snapshot answers does not change (same documents).
///
/// # Errors
/// `E_CORRUPT` when the merged generation's count differs (nothing switches); tantivy, I/O and
/// SQLite errors.
pub fn compact(conn: &dyn Tx, generations: &dyn LexicalGenerations) -> Result<CompactReport> {
    let started = std::time::Instant::now();
    let mut report = CompactReport::default();
    let Some(snapshot_id) = current(conn)? else {
        return Ok(report);
    };
    report.snapshot_id = Some(snapshot_id);
    let (batch_id, family_id, generation, documents) =
        store::batches::lexical_batch(conn, snapshot_id)?;
    let (segments, deleted) = generations.shape(&generation)?;
    report.from_generation = Some(generation.clone());
    report.segments_before = segments;
    report.segments_after = segments;
    report.deleted_before = deleted;
    let name = format!("g{}-c{snapshot_id}", now_ms());
    let Some(compaction) = generations.compact(&generation, &name)? else {
        report.duration_ms = started.elapsed().as_secs_f64() * 1000.0;
        return Ok(report);
    };
    failpoint("after-compact-generation");
    if compaction.documents != documents {
        generations.discard(&name);
        return Err(Error::Corrupt(format!(
            "compacted generation {name} holds {} documents but snapshot {snapshot_id} has {documents}; not switched",
            compaction.documents
        )));
    }
    repoint(
        conn,
        snapshot_id,
        family_id,
        batch_id,
        &name,
        documents,
        None,
    )?;
    report.to_generation = Some(name);
    report.segments_after = compaction.segments_after;
    report.duration_ms = started.elapsed().as_secs_f64() * 1000.0;
    Ok(report)
}

/// Folds the current snapshot's vector layer into a new full generation when it has grown past
/// [`text_layer::FOLD_SHARE`] of its base, and points the snapshot at it in one transaction (the
/// same vectors; readers holding the layer keep it). Returns the new generation's name.
///
/// # Errors
/// `E_CORRUPT` when a window has no vector record; I/O and SQLite errors.
pub fn fold_text(conn: &dyn Tx, dir: &Path) -> Result<Option<String>> {
    let Some(snapshot_id) = current(conn)? else {
        return Ok(None);
    };
    if !text_layer::should_fold(conn, snapshot_id, dir)? {
        return Ok(None);
    }
    let Some(generation) = text_generation(conn, snapshot_id)? else {
        return Ok(None);
    };
    let (batch_id, index_family, documents, _) =
        store::batches::of_generation(conn, &generation.generation)?;
    let rows = read_rows(conn, &members(conn, snapshot_id)?)?;
    let per_row: Vec<String> = row_inputs(&generation.spec.representation, &rows)
        .into_iter()
        .flat_map(|d| d.shas)
        .collect();
    let family = crate::store::vectors::family_id(conn, &generation.spec)?;
    let name = format!("g{}-c{snapshot_id}-f{family}.tyv", now_ms());
    let sha256 = write_text(
        conn,
        &crate::vector::UsearchGenerations::new(dir.to_path_buf()),
        family,
        &generation.spec,
        &name,
        &rows,
        &per_row,
    )?
    .sha256;
    let documents = u64::try_from(documents).unwrap_or_default();
    repoint(
        conn,
        snapshot_id,
        index_family,
        batch_id,
        &name,
        documents,
        Some(&sha256),
    )?;
    Ok(Some(name))
}

/// Points a snapshot's index of `family_id` from `old_batch` at a new verified batch of
/// `generation` holding the same documents (a merge or a fold), in one transaction.
fn repoint(
    conn: &dyn Tx,
    snapshot_id: i64,
    family_id: i64,
    old_batch: i64,
    generation: &str,
    documents: u64,
    sha256: Option<&str>,
) -> Result<()> {
    conn.together(true, |tx| {
        store::batches::repoint(
            tx,
            &[store::batches::Repoint {
                snapshot_id,
                family_id,
                old_batch,
                generation: generation.to_string(),
                documents,
                sha256: sha256.map(str::to_string),
            }],
            now_ms(),
        )
    })
}
