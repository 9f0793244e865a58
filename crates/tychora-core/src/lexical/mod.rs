//! The lexical channel: tantivy BM25 over chunk text and context capsule.
//!
//! Each index generation is a fresh directory under `indexes/lexical/<generation>/`, built from the
//! snapshot's chunk rows, committed, fsynced (tantivy syncs the directory *before* replacing
//! `meta.json`, not after — DESIGN §14), and verified before any snapshot points at it.

pub(crate) mod port;
pub(crate) mod scripts;
mod stem;
mod subtokens;

pub use subtokens::SplitIdentifiers;

use std::path::Path;

use tantivy::collector::TopDocs;
use tantivy::query::{
    BooleanQuery, BoostQuery, ConstScoreQuery, Occur, Query, TermQuery, TermSetQuery,
};
use tantivy::schema::{
    FAST, Field, INDEXED, IndexRecordOption, STORED, STRING, Schema, TextFieldIndexing, TextOptions,
};
use tantivy::tokenizer::{Language, LowerCaser, RemoveLongFilter, StopWordFilter, TextAnalyzer};
use tantivy::{Index, IndexReader, ReloadPolicy, TantivyDocument, Term};

use crate::artifact::sync_dir;
use crate::config::{Idf, Lexical};
use crate::error::{Error, Result};
use scripts::WordTokenizer;
use stem::{MemoStemmer, StemLanguage};

const ANALYZER: &str = "tychora";

/// One chunk as the lexical index sees it.
#[derive(Debug)]
pub struct LexDoc<'a> {
    /// `chunks.id`.
    pub chunk_id: u64,
    /// The evidence owner: `COALESCE(chunks.owner_chunk_id, chunks.id)`.
    pub owner_id: u64,
    /// `revisions.id`.
    pub revision_id: u64,
    /// Collection name (for eligibility filters).
    pub collection: &'a str,
    /// The source's kind, or its format when it has none (for eligibility filters; the index
    /// field is `kind`).
    pub kind: &'a str,
    /// Chunk text.
    pub text: &'a str,
    /// Capsule text.
    pub capsule: &'a str,
}

/// Eligibility applied inside the channel, before ranking.
#[derive(Debug, Default, Clone)]
pub struct Filter {
    /// Only these collections (empty: all).
    pub collections: Vec<String>,
    /// Only these kinds (empty: all); a source with no kind is matched by its format.
    pub kinds: Vec<String>,
    /// Facet conditions, all of which a source must satisfy.
    pub facets: Vec<crate::facet::Condition>,
    /// With facet conditions, the pinned snapshot's windows (chunk ids) that satisfy the whole
    /// filter, resolved once per query: a record's facet admits the windows holding it, not its
    /// whole source (`None`: not resolved).
    pub chunks: Option<std::sync::Arc<std::collections::HashSet<u64>>>,
    /// The verified profile: a structured record counts only once reviewed.
    pub verified: bool,
    /// Only sources labelled with one of these sensitivity levels (empty: any), and the level an
    /// unlabelled source (captured before labels) counts as. Resolved to windows like facets.
    pub sensitivity: Option<SensitivityScope>,
}

/// The sensitivity levels a query may see.
#[derive(Debug, Clone)]
pub struct SensitivityScope {
    /// The levels admitted.
    pub levels: Vec<String>,
    /// What an unlabelled source counts as (the workspace's default).
    pub unlabelled: String,
}

impl Filter {
    /// Whether the filter admits everything.
    #[must_use]
    pub fn is_open(&self) -> bool {
        self.collections.is_empty()
            && self.kinds.is_empty()
            && self.facets.is_empty()
            && self.sensitivity.is_none()
    }

    /// Whether eligibility needs resolving to windows (facets and sensitivity do; collections
    /// and kinds are fields of every index).
    #[must_use]
    pub fn needs_windows(&self) -> bool {
        !self.facets.is_empty() || self.sensitivity.is_some()
    }
}

#[derive(Clone, Copy)]
struct Fields {
    chunk_id: Field,
    owner_id: Field,
    revision_id: Field,
    collection: Field,
    kind: Field,
    body: Field,
    capsule: Field,
}

fn schema() -> (Schema, Fields) {
    let mut builder = Schema::builder();
    let text = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer(ANALYZER)
            // Term frequencies, not positions: no query reads positions (BM25 over terms, no
            // phrases); without them the 84k-chunk generation is 16 MB instead of 37 MB.
            .set_index_option(IndexRecordOption::WithFreqs),
    );
    let fields = Fields {
        chunk_id: builder.add_u64_field("chunk_id", INDEXED | STORED | FAST),
        owner_id: builder.add_u64_field("owner_id", FAST),
        revision_id: builder.add_u64_field("revision_id", INDEXED | FAST),
        collection: builder.add_text_field("collection", STRING),
        kind: builder.add_text_field("kind", STRING),
        body: builder.add_text_field("body", text.clone()),
        capsule: builder.add_text_field("capsule", text),
    };
    (builder.build(), fields)
}

fn fields_of(schema: &Schema) -> Result<Fields> {
    let get = |name: &str| {
        schema
            .get_field(name)
            .map_err(|_| Error::Corrupt(format!("lexical index lacks field {name}; rebuild it")))
    };
    Ok(Fields {
        chunk_id: get("chunk_id")?,
        owner_id: get("owner_id")?,
        revision_id: get("revision_id")?,
        collection: get("collection")?,
        kind: get("kind")?,
        body: get("body")?,
        capsule: get("capsule")?,
    })
}

/// The analyzer the pack chose: Unicode word split (n-grams in unspaced scripts), lowercase,
/// optional stop words and stemmer. The query side differs from the index side only in not
/// emitting the shorter n-grams of an unspaced run (lexical/scripts.rs).
pub(crate) fn analyzer(config: &Lexical) -> TextAnalyzer {
    analyzer_with(config, WordTokenizer::for_index())
}

pub(crate) fn query_analyzer(config: &Lexical) -> TextAnalyzer {
    analyzer_with(config, WordTokenizer::for_query())
}

fn analyzer_with(config: &Lexical, words: WordTokenizer) -> TextAnalyzer {
    let mut builder = TextAnalyzer::builder(words).dynamic();
    if config.split_identifiers {
        // Before lowercasing: the parts are found by their case.
        builder = builder.filter_dynamic(SplitIdentifiers);
    }
    builder = builder
        .filter_dynamic(RemoveLongFilter::limit(40))
        .filter_dynamic(LowerCaser);
    let (language, stem_language) = match config.language.as_str() {
        "french" => (Language::French, StemLanguage::French),
        "german" => (Language::German, StemLanguage::German),
        "spanish" => (Language::Spanish, StemLanguage::Spanish),
        _ => (Language::English, StemLanguage::English),
    };
    if config.stopwords
        && let Some(filter) = StopWordFilter::new(language)
    {
        builder = builder.filter_dynamic(filter);
    }
    if config.stemmer {
        builder = builder.filter_dynamic(MemoStemmer(stem_language));
    }
    builder.build()
}

/// Builds a generation in `dir` (which must not exist) and returns its document count.
///
/// # Errors
/// tantivy or I/O errors.
pub fn build_generation<'a>(
    dir: &Path,
    config: &Lexical,
    docs: impl IntoIterator<Item = LexDoc<'a>>,
) -> Result<u64> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let (schema, _) = schema();
    let index = Index::create_in_dir(dir, schema)?;
    let threads = std::thread::available_parallelism()
        .map_or(1, std::num::NonZero::get)
        .min(4);
    write(&index, dir, config, Writing::Build { threads }, &[], docs)
}

/// Derives a generation in `dir` (which must not exist) from the generation in `parent`: the
/// parent's files are hard-linked (tantivy never rewrites a file once written: segments, deletion
/// bitsets and `meta.json` are new files or atomic renames, so a link shared by two generations is
/// never changed under either), the documents of `removed_revisions` are deleted, and `docs` go
/// into one new segment. Nothing is merged here (see [`compact_generation`]), so the cost follows
/// the change, not the corpus. Returns the new generation's document count.
///
/// # Errors
/// tantivy or I/O errors (a failed link falls back to a copy).
pub fn derive_generation<'a>(
    parent: &Path,
    dir: &Path,
    config: &Lexical,
    removed_revisions: &[u64],
    docs: impl IntoIterator<Item = LexDoc<'a>>,
) -> Result<u64> {
    link_generation(parent, dir)?;
    let index = open_index(dir)?;
    write(
        &index,
        dir,
        config,
        Writing::Derive,
        removed_revisions,
        docs,
    )
}

/// What [`compact_generation`] merged.
#[derive(Debug, Clone, Copy, Default)]
pub struct Compaction {
    /// Segments after the merge.
    pub segments_after: usize,
    /// Documents in the compacted generation.
    pub documents: u64,
}

/// Segments of a generation and the deleted documents they still hold.
///
/// # Errors
/// `E_CORRUPT` when the directory is not a readable index.
pub fn segment_stats(dir: &Path) -> Result<(usize, u64)> {
    let index = open_index(dir)?;
    let metas = index.searchable_segment_metas()?;
    Ok((
        metas.len(),
        metas.iter().map(|m| u64::from(m.num_deleted_docs())).sum(),
    ))
}

/// When [`compact_generation`] merges: tantivy's log-structured policy (segments grouped by size
/// level, a level merged once it holds 8 segments), plus any segment whose deleted documents
/// exceed a quarter of it. Small segments left by one-file adds merge with each other; the large
/// segments of a full build are merged only when deletions have eaten into them.
fn merge_policy() -> tantivy::indexer::LogMergePolicy {
    let mut policy = tantivy::indexer::LogMergePolicy::default();
    policy.set_del_docs_ratio_before_merge(0.25);
    policy
}

/// Writes a compacted copy of the generation in `parent` into `dir` when the merge policy finds
/// segments to merge; `None` (and nothing written) when it finds none. The parent is untouched, so
/// a reader holding it, or a snapshot pinning it, sees what it saw.
///
/// # Errors
/// tantivy or I/O errors.
pub fn compact_generation(
    parent: &Path,
    dir: &Path,
    config: &Lexical,
) -> Result<Option<Compaction>> {
    use tantivy::indexer::MergePolicy as _;
    let metas = open_index(parent)?.searchable_segment_metas()?;
    let candidates = merge_policy().compute_merge_candidates(&metas);
    if candidates.is_empty() {
        return Ok(None);
    }
    link_generation(parent, dir)?;
    let index = open_index(dir)?;
    index.tokenizers().register(ANALYZER, analyzer(config));
    let mut writer = index.writer_with_num_threads::<TantivyDocument>(1, WRITER_ARENA)?;
    writer.set_merge_policy(Box::new(tantivy::indexer::NoMergePolicy));
    for candidate in candidates {
        writer.merge(&candidate.0).wait()?;
    }
    writer.wait_merging_threads()?;
    sync_dir(dir)?;
    let documents = LexicalIndex::open(dir, config)?.num_docs();
    let (segments_after, _) = segment_stats(dir)?;
    Ok(Some(Compaction {
        segments_after,
        documents,
    }))
}

/// Ids of the segments of the index in `dir` whose inverted index still holds a document of one
/// of `revisions`, live or deleted: a deleted document's terms stay in its segment until the
/// segment is rewritten.
fn segments_holding(index: &Index, revisions: &[u64]) -> Result<Vec<tantivy::index::SegmentId>> {
    let f = fields_of(&index.schema())?;
    let reader = index
        .reader_builder()
        .reload_policy(ReloadPolicy::Manual)
        .try_into()?;
    let searcher: tantivy::Searcher = reader.searcher();
    let mut found = Vec::new();
    for segment in searcher.segment_readers() {
        let inverted = segment.inverted_index(f.revision_id)?;
        for revision in revisions {
            let freq = inverted
                .doc_freq(&Term::from_field_u64(f.revision_id, *revision))
                .map_err(|e| Error::io(Path::new("lexical generation"), e))?;
            if freq > 0 {
                found.push(segment.segment_id());
                break;
            }
        }
    }
    Ok(found)
}

/// Whether any segment of the generation in `dir` still holds (live or deleted) a document of one
/// of `revisions`: text an erasure must take out.
///
/// # Errors
/// `E_CORRUPT` when the directory is not a readable index; tantivy errors.
pub fn holds_revisions(dir: &Path, revisions: &[u64]) -> Result<bool> {
    Ok(!segments_holding(&open_index(dir)?, revisions)?.is_empty())
}

/// Writes into `dir` a copy of the generation in `parent` without any trace of `revisions`: their
/// documents are deleted and every segment that held one (even already deleted) is merged anew,
/// so neither their postings nor their terms remain (deleting alone only marks documents). The
/// parent is untouched; returns the copy's document count.
///
/// # Errors
/// tantivy or I/O errors.
pub fn scrub_generation(
    parent: &Path,
    dir: &Path,
    config: &Lexical,
    revisions: &[u64],
) -> Result<u64> {
    link_generation(parent, dir)?;
    let index = open_index(dir)?;
    index.tokenizers().register(ANALYZER, analyzer(config));
    let f = fields_of(&index.schema())?;
    let mut writer = index.writer_with_num_threads::<TantivyDocument>(1, WRITER_ARENA)?;
    writer.set_merge_policy(Box::new(tantivy::indexer::NoMergePolicy));
    for revision in revisions {
        writer.delete_term(Term::from_field_u64(f.revision_id, *revision));
    }
    writer.commit()?;
    let holding = segments_holding(&index, revisions)?;
    if !holding.is_empty() {
        writer.merge(&holding).wait()?;
    }
    writer.wait_merging_threads()?;
    sync_dir(dir)?;
    if !segments_holding(&index, revisions)?.is_empty() {
        return Err(Error::Internal(format!(
            "lexical generation {} still holds erased documents after its merge",
            dir.display()
        )));
    }
    Ok(LexicalIndex::open(dir, config)?.num_docs())
}

/// The smallest arena tantivy accepts per indexing thread is 15 MB; a one-file add needs no more.
const WRITER_ARENA: usize = 32 * 1024 * 1024;

/// Hard-links every file of the generation in `parent` into a new directory `dir` (copies where
/// the file system refuses links), leaving tantivy's lock files out.
fn link_generation(parent: &Path, dir: &Path) -> Result<()> {
    std::fs::create_dir(dir).map_err(|e| Error::io(dir, e))?;
    for entry in std::fs::read_dir(parent).map_err(|e| Error::io(parent, e))? {
        let entry = entry.map_err(|e| Error::io(parent, e))?;
        let name = entry.file_name();
        if name.to_string_lossy().starts_with(".tantivy-") {
            continue;
        }
        let (from, to) = (entry.path(), dir.join(&name));
        if std::fs::hard_link(&from, &to).is_err() {
            std::fs::copy(&from, &to).map_err(|e| Error::io(&from, e))?;
        }
    }
    sync_dir(dir)
}

fn open_index(dir: &Path) -> Result<Index> {
    Index::open_in_dir(dir).map_err(|e| {
        Error::Corrupt(format!(
            "lexical generation {} cannot be opened ({e}); rebuild it",
            dir.display()
        ))
    })
}

/// How [`write`] writes: a full build on several threads, segments merged as tantivy's default
/// policy decides; or a derived generation on one thread with no merge at all (merging is
/// compaction's job, off the add's critical path).
#[derive(Clone, Copy)]
enum Writing {
    Build { threads: usize },
    Derive,
}

/// Deletes the documents of `removed_revisions` (first, so they cannot touch what is added next),
/// adds `docs`, commits, makes the commit durable and returns the document count.
fn write<'a>(
    index: &Index,
    dir: &Path,
    config: &Lexical,
    writing: Writing,
    removed_revisions: &[u64],
    docs: impl IntoIterator<Item = LexDoc<'a>>,
) -> Result<u64> {
    index.tokenizers().register(ANALYZER, analyzer(config));
    let f = fields_of(&index.schema())?;
    let mut writer = match writing {
        Writing::Build { threads } => {
            index.writer_with_num_threads::<TantivyDocument>(threads, 64 * 1024 * 1024 * threads)?
        }
        Writing::Derive => {
            let writer = index.writer_with_num_threads::<TantivyDocument>(1, WRITER_ARENA)?;
            writer.set_merge_policy(Box::new(tantivy::indexer::NoMergePolicy));
            writer
        }
    };
    for revision in removed_revisions {
        writer.delete_term(Term::from_field_u64(f.revision_id, *revision));
    }
    for doc in docs {
        let mut d = TantivyDocument::default();
        d.add_u64(f.chunk_id, doc.chunk_id);
        d.add_u64(f.owner_id, doc.owner_id);
        d.add_u64(f.revision_id, doc.revision_id);
        d.add_text(f.collection, doc.collection);
        d.add_text(f.kind, doc.kind);
        d.add_text(f.body, doc.text);
        d.add_text(f.capsule, doc.capsule);
        writer.add_document(d)?;
    }
    writer.commit()?;
    writer.wait_merging_threads()?;
    // tantivy fsyncs the directory before it replaces meta.json, not after: make the commit durable.
    sync_dir(dir)?;
    let opened = LexicalIndex::open(dir, config)?;
    Ok(opened.num_docs())
}

/// An opened generation.
pub struct LexicalIndex {
    reader: IndexReader,
    fields: Fields,
    analyzer: TextAnalyzer,
    capsule_boost: f32,
    idf: Idf,
    max_query_terms: Option<usize>,
}

impl std::fmt::Debug for LexicalIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LexicalIndex")
            .field("num_docs", &self.num_docs())
            .finish_non_exhaustive()
    }
}

impl LexicalIndex {
    /// Opens a generation for reading.
    ///
    /// # Errors
    /// `E_CORRUPT` when the directory is not a readable index.
    pub fn open(dir: &Path, config: &Lexical) -> Result<Self> {
        let index = open_index(dir)?;
        index.tokenizers().register(ANALYZER, analyzer(config));
        let fields = fields_of(&index.schema())?;
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()?;
        Ok(Self {
            reader,
            fields,
            analyzer: query_analyzer(config),
            capsule_boost: config.capsule_boost,
            idf: config.idf,
            max_query_terms: config.max_query_terms,
        })
    }

    /// Documents in the generation.
    #[must_use]
    pub fn num_docs(&self) -> u64 {
        self.reader.searcher().num_docs()
    }

    /// Analyzed terms of a query, deduplicated, in order, each with how often the query repeats it.
    fn terms(&self, text: &str) -> Vec<(String, u32)> {
        query_terms(&self.analyzer, text)
    }

    /// BM25 over body and capsule; query terms are OR-ed. Returns `(chunk_id, owner_id, score)`, best first.
    ///
    /// # Errors
    /// tantivy errors.
    pub fn search(
        &self,
        query: &str,
        filter: &Filter,
        limit: usize,
    ) -> Result<Vec<(u64, u64, f32)>> {
        let f = self.fields;
        let terms = self.terms(query);
        if terms.is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        let searcher = self.reader.searcher();
        let weighted = self.weigh(&searcher, &terms)?;
        let mut should: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        for (term, weight) in &weighted {
            let body: Box<dyn Query> = Box::new(TermQuery::new(
                Term::from_field_text(f.body, term),
                IndexRecordOption::WithFreqs,
            ));
            should.push((Occur::Should, boosted(body, *weight)));
            if self.capsule_boost > 0.0 {
                let capsule = TermQuery::new(
                    Term::from_field_text(f.capsule, term),
                    IndexRecordOption::WithFreqs,
                );
                should.push((
                    Occur::Should,
                    Box::new(BoostQuery::new(
                        Box::new(capsule),
                        self.capsule_boost * weight,
                    )),
                ));
            }
        }
        let mut clauses: Vec<(Occur, Box<dyn Query>)> =
            vec![(Occur::Must, Box::new(BooleanQuery::new(should)))];
        for (field, values) in [(f.collection, &filter.collections), (f.kind, &filter.kinds)] {
            if !values.is_empty() {
                let any: Vec<(Occur, Box<dyn Query>)> = values
                    .iter()
                    .map(|v| {
                        (
                            Occur::Should,
                            Box::new(TermQuery::new(
                                Term::from_field_text(field, v),
                                IndexRecordOption::Basic,
                            )) as Box<dyn Query>,
                        )
                    })
                    .collect();
                // Eligibility filters restrict the candidates without touching the BM25 score.
                clauses.push((
                    Occur::Must,
                    Box::new(ConstScoreQuery::new(Box::new(BooleanQuery::new(any)), 0.0)),
                ));
            }
        }
        if let Some(chunks) = &filter.chunks {
            let terms = chunks.iter().map(|c| Term::from_field_u64(f.chunk_id, *c));
            clauses.push((
                Occur::Must,
                Box::new(ConstScoreQuery::new(
                    Box::new(TermSetQuery::new(terms)),
                    0.0,
                )),
            ));
        }
        let query = BooleanQuery::new(clauses);
        // Equal scores are ordered by chunk id, not by where a document landed in the index:
        // generations are built on several threads, so document addresses differ between two
        // builds of the same chunks, and so did the order of ties (CoSQA dev MRR@10 moved by 0.001
        // between runs). A margin past the limit lets a tie at the cut be resolved the same way.
        let top = searcher.search(&query, &TopDocs::with_limit(limit + TIE_MARGIN))?;
        let mut columns = Vec::with_capacity(searcher.segment_readers().len());
        for segment in searcher.segment_readers() {
            columns.push((
                segment.fast_fields().u64("chunk_id")?,
                segment.fast_fields().u64("owner_id")?,
            ));
        }
        let hits = top
            .into_iter()
            .map(|(score, address)| {
                let (chunks, owners) = &columns[address.segment_ord as usize];
                chunks
                    .first(address.doc_id)
                    .zip(owners.first(address.doc_id))
                    .map(|(chunk, owner)| (score, chunk, owner))
                    .ok_or_else(|| {
                        Error::Corrupt(
                            "lexical document without chunk_id/owner_id; rebuild the index".into(),
                        )
                    })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(best_first(hits, limit))
    }
}

impl LexicalIndex {
    fn weigh(
        &self,
        searcher: &tantivy::Searcher,
        terms: &[(String, u32)],
    ) -> Result<Vec<(String, f32)>> {
        let body = self.fields.body;
        weigh(terms, self.idf, self.max_query_terms, &mut |asked| {
            let n = searcher.num_docs() as f64;
            let mut dfs = Vec::with_capacity(asked.len());
            for term in asked {
                dfs.push(searcher.doc_freq(&Term::from_field_text(body, term))? as f64);
            }
            Ok((n, dfs))
        })
    }
}

/// The analyzed terms of `text`, deduplicated, in order, each with how often it repeats.
pub(crate) fn query_terms(analyzer: &TextAnalyzer, text: &str) -> Vec<(String, u32)> {
    let mut analyzer = analyzer.clone();
    let mut stream = analyzer.token_stream(text);
    let mut terms: Vec<(String, u32)> = Vec::new();
    let mut at: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    while let Some(token) = stream.next() {
        if let Some(&i) = at.get(&token.text) {
            terms[i].1 += 1;
        } else {
            at.insert(token.text.clone(), terms.len());
            terms.push((token.text.clone(), 1));
        }
    }
    terms
}

/// Document and term statistics of a generation: `(documents, document frequency of each term
/// asked)`, read only when a weight needs them.
pub(crate) type TermStats<'s> = dyn FnMut(&[&str]) -> Result<(f64, Vec<f64>)> + 's;

/// Each query term with the weight its BM25 score is multiplied by: its IDF factor (1 with
/// Lucene's IDF; the ratio of the probabilistic IDF to Lucene's — 0 for a term in half the
/// documents or more — otherwise) times BM25's query-term saturation of its repeats
/// (`(k3 + 1)·qtf / (k3 + qtf)`: a term a paragraph repeats counts more, never linearly more).
/// With `max_query_terms`, only the rarest terms are kept; past [`MAX_TERMS`] a query keeps its
/// rarest, a bound on cost rather than a ranking rule. A query whose every term weighs 0
/// keeps them all at 1, so it still finds something. Both adapters weigh with this one rule;
/// the statistics are asked for only when the IDF rule or the cut needs them.
pub(crate) fn weigh(
    terms: &[(String, u32)],
    idf: Idf,
    max_query_terms: Option<usize>,
    stats: &mut TermStats<'_>,
) -> Result<Vec<(String, f32)>> {
    let max = max_query_terms.unwrap_or(MAX_TERMS).min(MAX_TERMS);
    let needed = idf == Idf::Probabilistic || terms.len() > max;
    let (n, dfs) = if needed {
        let asked: Vec<&str> = terms.iter().map(|(t, _)| t.as_str()).collect();
        stats(&asked)?
    } else {
        (0.0, vec![0.0; terms.len()])
    };
    let mut scored = Vec::with_capacity(terms.len());
    for ((term, repeats), df) in terms.iter().zip(dfs) {
        let odds = (n - df + 0.5) / (df + 0.5);
        let idf = match idf {
            Idf::Lucene => 1.0,
            Idf::Probabilistic => odds.ln().max(0.0) / odds.ln_1p(),
        };
        let qtf = f64::from(*repeats);
        let saturation = (QUERY_K3 + 1.0) * qtf / (QUERY_K3 + qtf);
        #[allow(clippy::cast_possible_truncation)] // weights are small
        scored.push((term.clone(), (idf * saturation) as f32, df));
    }
    if scored.len() > max {
        // Rarest first; the query's own order breaks ties, so the choice is stable.
        let mut order: Vec<usize> = (0..scored.len()).collect();
        order.sort_by(|&a, &b| scored[a].2.total_cmp(&scored[b].2).then(a.cmp(&b)));
        let keep: std::collections::HashSet<usize> = order.into_iter().take(max).collect();
        scored = scored
            .into_iter()
            .enumerate()
            .filter(|(i, _)| keep.contains(i))
            .map(|(_, t)| t)
            .collect();
    }
    if scored.iter().all(|(_, w, _)| *w <= 0.0) {
        return Ok(scored.into_iter().map(|(t, _, _)| (t, 1.0)).collect());
    }
    Ok(scored
        .into_iter()
        .filter(|(_, w, _)| *w > 0.0)
        .map(|(t, w, _)| (t, w))
        .collect())
}

/// `(score, chunk_id, owner_id)` hits as a search answers them: best first, equal scores by chunk
/// id (so two builds of the same chunks, or two engines, order ties alike), cut to `limit`.
pub(crate) fn best_first(mut hits: Vec<(f32, u64, u64)>, limit: usize) -> Vec<(u64, u64, f32)> {
    hits.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    hits.into_iter()
        .take(limit)
        .map(|(score, chunk, owner)| (chunk, owner, score))
        .collect()
}

/// BM25's `k3`, the saturation of a query term's repeats (Robertson et al.; 1.2 like `k1`).
const QUERY_K3: f64 = 1.2;

/// The most distinct terms one query searches for: a 10,000-character query has about 1,500
/// words, and each term is a posting list read. Queries of the dev sets stay far below it.
const MAX_TERMS: usize = 1024;

/// `query` scaled by `weight` (left as it is at 1).
fn boosted(query: Box<dyn Query>, weight: f32) -> Box<dyn Query> {
    if (weight - 1.0).abs() < f32::EPSILON {
        query
    } else {
        Box::new(BoostQuery::new(query, weight))
    }
}

/// Candidates fetched past the limit so that documents tied at the cut are ordered by chunk id.
pub(crate) const TIE_MARGIN: usize = 32;

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> Lexical {
        Lexical {
            language: "english".into(),
            stemmer: true,
            stopwords: false,
            capsule_boost: 0.5,
            split_identifiers: false,
            idf: crate::config::Idf::Lucene,
            max_query_terms: None,
        }
    }

    #[test]
    fn builds_verifies_and_ranks_with_filters() {
        let dir = tempfile::tempdir().unwrap();
        let gen_dir = dir.path().join("g1");
        let docs = [
            LexDoc {
                chunk_id: 1,
                owner_id: 1,
                revision_id: 1,
                collection: "a",
                kind: "markdown",
                text: "Retrieval of running processes",
                capsule: "Guide",
            },
            LexDoc {
                chunk_id: 2,
                owner_id: 2,
                revision_id: 1,
                collection: "a",
                kind: "markdown",
                text: "Unrelated words entirely",
                capsule: "Processes",
            },
            LexDoc {
                chunk_id: 3,
                owner_id: 3,
                revision_id: 2,
                collection: "b",
                kind: "text",
                text: "the process runs and runs",
                capsule: "",
            },
        ];
        assert_eq!(build_generation(&gen_dir, &config(), docs).unwrap(), 3);
        let index = LexicalIndex::open(&gen_dir, &config()).unwrap();
        let hits = index.search("run process", &Filter::default(), 10).unwrap();
        let ids: Vec<u64> = hits.iter().map(|h| h.0).collect();
        assert_eq!(
            ids.len(),
            3,
            "stemming matches runs/running and process/processes"
        );
        assert!(ids[..2].contains(&1) && ids[..2].contains(&3));
        let filtered = index
            .search(
                "process",
                &Filter {
                    collections: vec!["b".into()],
                    ..Filter::default()
                },
                10,
            )
            .unwrap();
        assert_eq!(filtered.iter().map(|h| h.0).collect::<Vec<_>>(), vec![3]);
        // Resolved facet conditions restrict by window, as a set of terms.
        let by_chunk = index
            .search(
                "process",
                &Filter {
                    chunks: Some(std::sync::Arc::new([3].into_iter().collect())),
                    ..Filter::default()
                },
                10,
            )
            .unwrap();
        assert_eq!(by_chunk.iter().map(|h| h.0).collect::<Vec<_>>(), vec![3]);
        assert!(
            index
                .search("!!!", &Filter::default(), 10)
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn a_long_query_keeps_its_rarest_terms_and_a_short_one_all() {
        let dir = tempfile::tempdir().unwrap();
        let gen_dir = dir.path().join("g1");
        // "common" is in every document, "rare" in one; the others in none.
        let texts: Vec<String> = (0..20)
            .map(|i| {
                if i == 7 {
                    "common rare".to_string()
                } else {
                    format!("common filler{i}")
                }
            })
            .collect();
        let docs = texts.iter().enumerate().map(|(i, t)| LexDoc {
            chunk_id: i as u64 + 1,
            owner_id: i as u64 + 1,
            revision_id: 1,
            collection: "a",
            kind: "text",
            text: t,
            capsule: "",
        });
        let pruned = Lexical {
            max_query_terms: Some(2),
            ..config()
        };
        build_generation(&gen_dir, &pruned, docs).unwrap();
        let index = LexicalIndex::open(&gen_dir, &pruned).unwrap();
        // Three terms, two kept: "common" (df 20) is dropped, so only the rare match remains.
        let hits = index
            .search("common rare absent", &Filter::default(), 30)
            .unwrap();
        assert_eq!(hits.iter().map(|h| h.0).collect::<Vec<_>>(), vec![8]);
        // Two terms are within the cap: every document matches "common".
        let all = index.search("common rare", &Filter::default(), 30).unwrap();
        assert_eq!(all.len(), 20);
        assert_eq!(all[0].0, 8);
    }
}
