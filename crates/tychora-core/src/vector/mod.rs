//! The text channel's vectors (DESIGN §7): embedding families, the records of embedded inputs (in
//! the workspace and in a user-level cache), the embedders (a local model run here; providers the
//! TypeScript side calls come in through the same trait), and one ANN/exact index file per
//! (family, generation).
//!
//! An input is the exact text a family embeds for a window ([`input_text`]); its sha256 is its
//! identity, so an input already embedded — in this workspace or any other of this user — is
//! never embedded again.

pub mod embedder;
pub mod index;
pub mod local;
pub mod port;
pub mod records;
pub mod visual;

use std::collections::HashMap;
use std::time::Instant;

use serde::{Deserialize, Serialize};

pub use embedder::{Embedded, Embedder, FamilySpec, InputKind, Reranked, Reranker};
pub use index::{Eligible, Entry, VectorIndex};
pub use local::{LocalEmbedder, LongInputs};
pub use port::{UsearchGenerations, VectorGenerations, VectorSearch, Written};
pub use records::{Record, VectorCache, VectorRecords, input_sha256};
pub use visual::{Picture, VisualEmbedder, VisualReport};

use crate::error::{Error, Result};

/// Inputs per embedder call: large enough for length-sorted batching to pad little, small enough
/// that progress moves and a failure loses little (records are stored after every call).
const CALL_INPUTS: usize = 256;

/// The text a family embeds for a window: the window alone, or its capsule (title, heading path,
/// signature) first, so a window that never names its subject still carries it.
#[must_use]
pub fn input_text(representation: &str, capsule: &str, text: &str) -> String {
    if representation == "window" || capsule.is_empty() {
        text.to_string()
    } else {
        format!("{capsule}\n\n{text}")
    }
}

/// Caps on the tokens sent to an embedder.
#[derive(Debug, Clone, Copy, Default)]
pub struct Budget {
    /// Most tokens one job may embed.
    pub per_job: Option<u64>,
    /// Most tokens this workspace may embed in a calendar month (UTC).
    pub per_month: Option<u64>,
}

/// What making sure a set of inputs has vectors did.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct EmbedReport {
    /// Distinct inputs.
    pub inputs: usize,
    /// Found among the workspace's records.
    pub workspace_cached: usize,
    /// Found in the user-level cache.
    pub user_cached: usize,
    /// Sent to the embedder.
    pub embedded: usize,
    /// Tokens the embedder read for them.
    pub tokens_embedded: u64,
    /// Embedder calls.
    pub calls: usize,
    /// Time spent embedding.
    pub embed_ms: f64,
}

/// Tokens this workspace embedded (billed) since the start of the current UTC month.
///
/// # Errors
/// Store errors.
pub fn month_tokens(records: &dyn VectorRecords) -> Result<u64> {
    let now = crate::clock::now_ms();
    let day_ms = 86_400_000_i64;
    let days = now.div_euclid(day_ms);
    // Civil date from days since the epoch (Howard Hinnant's algorithm), to find the 1st.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day_of_month = doy - (153 * mp + 2) / 5 + 1;
    let month_start = (days - (day_of_month - 1)) * day_ms;
    records.billed_tokens_since(month_start)
}

/// One document's embedding inputs, window by window: each window's identity (a sha256) and the
/// text sent for it.
#[derive(Debug, Clone, Default)]
pub struct DocInputs {
    /// Per window: the sha256 its vector is recorded under.
    pub shas: Vec<String>,
    /// Per window: the text embedded.
    pub texts: Vec<String>,
}

/// The inputs of documents (each a list of `(capsule, window text)`) for a representation.
/// `window` and `window+capsule` windows stand alone: a window's identity is the sha256 of its
/// text, shared by every document holding the same text. `contextual` windows are embedded with
/// their whole document (contextualised chunk embeddings): a window's vector depends on its
/// siblings, so its identity is the document's (the sha256 of every window in order) and its place.
#[must_use]
pub fn document_inputs(representation: &str, documents: &[Vec<(&str, &str)>]) -> Vec<DocInputs> {
    documents
        .iter()
        .map(|windows| {
            if representation == "contextual" {
                let texts: Vec<String> = windows.iter().map(|(_, t)| (*t).to_string()).collect();
                let document = input_sha256(&texts.join("\u{0}"));
                let shas = (0..texts.len())
                    .map(|i| input_sha256(&format!("contextual\u{0}{document}\u{0}{i}")))
                    .collect();
                DocInputs { shas, texts }
            } else {
                let texts: Vec<String> = windows
                    .iter()
                    .map(|(capsule, text)| input_text(representation, capsule, text))
                    .collect();
                DocInputs {
                    shas: texts.iter().map(|t| input_sha256(t)).collect(),
                    texts,
                }
            }
        })
        .collect()
}

/// The records already held for `shas`, in the workspace or (copied into it) from the user cache.
fn resolve_cached(
    records: &dyn VectorRecords,
    family: i64,
    spec: &FamilySpec,
    cache: Option<&dyn VectorCache>,
    shas: &[String],
    report: &mut EmbedReport,
) -> Result<std::collections::HashSet<String>> {
    let mut have: std::collections::HashSet<String> =
        records.lookup(family, shas)?.into_keys().collect();
    report.workspace_cached = have.len();
    let missing: Vec<String> = shas
        .iter()
        .filter(|s| !have.contains(*s))
        .cloned()
        .collect();
    if let Some(cache) = cache
        && !missing.is_empty()
    {
        let rows: Vec<(String, Record)> = cache
            .lookup(&spec.cache_key(), &missing)
            .into_iter()
            .filter(|(_, r)| r.vector.len() == spec.dimension)
            .collect();
        if !rows.is_empty() {
            report.user_cached = rows.len();
            records.insert(
                family,
                &rows,
                &serde_json::json!({ "source": "user-cache", "billed": false }),
            )?;
            have.extend(rows.into_iter().map(|(s, _)| s));
        }
    }
    Ok(have)
}

/// Refuses a job whose new tokens exceed a cap, before anything is sent.
fn check_budget(
    records: &dyn VectorRecords,
    spec: &FamilySpec,
    budget: Budget,
    inputs: usize,
    tokens: u64,
) -> Result<()> {
    if let Some(cap) = budget.per_job
        && tokens > cap
    {
        return Err(Error::BudgetExceeded(format!(
            "this job would embed {tokens} tokens ({inputs} new inputs) with {}/{}, over max_embed_tokens_per_job = {cap}; nothing was sent",
            spec.provider, spec.model
        )));
    }
    if let Some(cap) = budget.per_month {
        let used = month_tokens(records)?;
        if used + tokens > cap {
            return Err(Error::BudgetExceeded(format!(
                "this job would embed {tokens} tokens with {}/{}; {used} were embedded this month and max_embed_tokens_per_month = {cap}; nothing was sent",
                spec.provider, spec.model
            )));
        }
    }
    Ok(())
}

/// Checks an embedder's answer for `count` inputs of `spec`'s dimension.
fn check_answer(spec: &FamilySpec, embedded: &Embedded, count: usize) -> Result<()> {
    if embedded.vectors.len() != count || embedded.tokens.len() != count {
        return Err(Error::Provider(format!(
            "{} returned {} vectors for {count} inputs",
            spec.provider,
            embedded.vectors.len()
        )));
    }
    if let Some(bad) = embedded.vectors.iter().find(|v| v.len() != spec.dimension) {
        return Err(Error::Provider(format!(
            "{}/{} returned a vector of {} dimensions; the family has {}",
            spec.provider,
            spec.model,
            bad.len(),
            spec.dimension
        )));
    }
    if embedded.vectors.iter().flatten().any(|x| !x.is_finite()) {
        return Err(Error::Provider(format!(
            "{}/{} returned a vector with a non-finite component",
            spec.provider, spec.model
        )));
    }
    Ok(())
}

/// Stores one answer's vectors (workspace and user cache).
fn store(
    records: &dyn VectorRecords,
    family: i64,
    spec: &FamilySpec,
    cache: Option<&dyn VectorCache>,
    shas: Vec<String>,
    embedded: Embedded,
    report: &mut EmbedReport,
) -> Result<()> {
    let rows: Vec<(String, Record)> = shas
        .into_iter()
        .zip(embedded.vectors.into_iter().zip(embedded.tokens))
        .map(|(sha, (vector, tokens))| (sha, Record { vector, tokens }))
        .collect();
    let mut receipt = embedded.receipt;
    if let Some(obj) = receipt.as_object_mut() {
        obj.insert("billed".into(), serde_json::Value::from(1));
    }
    records.insert(family, &rows, &receipt)?;
    if let Some(cache) = cache {
        cache.insert(&spec.cache_key(), &rows);
    }
    report.embedded += rows.len();
    report.tokens_embedded += rows.iter().map(|(_, r)| r.tokens as u64).sum::<u64>();
    report.calls += 1;
    Ok(())
}

/// Makes sure every window of `documents` has a vector of `family` in the workspace: workspace
/// records first, then the user cache, then the embedder for the rest — standalone windows in
/// calls of [`CALL_INPUTS`], contextual documents whole, grouped up to [`CALL_INPUTS`] windows. The
/// budget is checked against the tokens still to embed before the first call, so a job over its
/// cap sends nothing.
///
/// # Errors
/// `E_BUDGET_EXCEEDED`; the embedder's errors (records of calls that succeeded are kept: they are
/// valid vectors, and the next attempt does not pay for them again); SQLite errors.
pub fn ensure(
    records: &dyn VectorRecords,
    family: i64,
    embedder: &dyn Embedder,
    cache: Option<&dyn VectorCache>,
    documents: &[DocInputs],
    budget: Budget,
    on_progress: &dyn Fn(usize, usize),
) -> Result<EmbedReport> {
    let spec = embedder.spec();
    let mut texts: HashMap<&str, &str> = HashMap::new();
    for d in documents {
        for (sha, text) in d.shas.iter().zip(&d.texts) {
            texts.insert(sha, text);
        }
    }
    let mut shas: Vec<String> = texts.keys().map(|s| (*s).to_string()).collect();
    shas.sort();
    let mut report = EmbedReport {
        inputs: shas.len(),
        ..EmbedReport::default()
    };
    let have = resolve_cached(records, family, spec, cache, &shas, &mut report)?;
    let tokens = |text: &str| embedder.count_tokens(text).min(embedder.max_input_tokens()) as u64;
    let started = Instant::now();
    if spec.representation == "contextual" {
        // A document with any window missing is embedded whole: its windows' vectors depend on
        // each other.
        let missing: Vec<&DocInputs> = documents
            .iter()
            .filter(|d| d.shas.iter().any(|s| !have.contains(s)))
            .collect();
        if missing.is_empty() {
            return Ok(report);
        }
        let windows: usize = missing.iter().map(|d| d.shas.len()).sum();
        let cost: u64 = missing
            .iter()
            .flat_map(|d| &d.texts)
            .map(|t| tokens(t))
            .sum();
        check_budget(records, spec, budget, windows, cost)?;
        on_progress(0, windows);
        let mut start = 0;
        while start < missing.len() {
            let mut end = start + 1;
            let mut size = missing[start].shas.len();
            while end < missing.len() && size + missing[end].shas.len() <= CALL_INPUTS {
                size += missing[end].shas.len();
                end += 1;
            }
            let call: Vec<Vec<&str>> = missing[start..end]
                .iter()
                .map(|d| d.texts.iter().map(String::as_str).collect())
                .collect();
            let answers = embedder.embed_documents(&call, InputKind::Document)?;
            if answers.len() != call.len() {
                return Err(Error::Provider(format!(
                    "{} returned {} documents for {}",
                    spec.provider,
                    answers.len(),
                    call.len()
                )));
            }
            for (doc, answer) in missing[start..end].iter().zip(answers) {
                check_answer(spec, &answer, doc.shas.len())?;
                store(
                    records,
                    family,
                    spec,
                    cache,
                    doc.shas.clone(),
                    answer,
                    &mut report,
                )?;
            }
            on_progress(report.embedded, windows);
            start = end;
        }
    } else {
        let missing: Vec<String> = shas.into_iter().filter(|s| !have.contains(s)).collect();
        if missing.is_empty() {
            return Ok(report);
        }
        let cost: u64 = missing.iter().map(|s| tokens(texts[s.as_str()])).sum();
        check_budget(records, spec, budget, missing.len(), cost)?;
        on_progress(0, missing.len());
        for call in missing.chunks(CALL_INPUTS) {
            let inputs: Vec<&str> = call.iter().map(|s| texts[s.as_str()]).collect();
            let embedded = embedder.embed(&inputs, InputKind::Document)?;
            check_answer(spec, &embedded, inputs.len())?;
            store(
                records,
                family,
                spec,
                cache,
                call.to_vec(),
                embedded,
                &mut report,
            )?;
            on_progress(report.embedded, missing.len());
        }
    }
    report.embed_ms = started.elapsed().as_secs_f64() * 1000.0;
    Ok(report)
}

/// How many windows of `documents` still need embedding, and their tokens, without embedding
/// anything (the dry run).
///
/// # Errors
/// SQLite errors.
pub fn estimate(
    records: &dyn VectorRecords,
    family: Option<i64>,
    embedder: &dyn Embedder,
    cache: Option<&dyn VectorCache>,
    documents: &[DocInputs],
) -> Result<Estimate> {
    let mut texts: HashMap<&str, &str> = HashMap::new();
    for d in documents {
        for (sha, text) in d.shas.iter().zip(&d.texts) {
            texts.insert(sha, text);
        }
    }
    let shas: Vec<String> = texts.keys().map(|s| (*s).to_string()).collect();
    let have = match family {
        Some(f) => records.lookup(f, &shas)?,
        None => HashMap::new(),
    };
    let mut missing: Vec<String> = shas
        .iter()
        .filter(|s| !have.contains_key(*s))
        .cloned()
        .collect();
    let cached_user = cache.map_or_else(HashMap::new, |c| {
        c.lookup(&embedder.spec().cache_key(), &missing)
    });
    missing.retain(|s| !cached_user.contains_key(s));
    let tokens = |s: &String| {
        embedder
            .count_tokens(texts[s.as_str()])
            .min(embedder.max_input_tokens()) as u64
    };
    Ok(Estimate {
        inputs: shas.len(),
        cached: shas.len() - missing.len(),
        new_inputs: missing.len(),
        new_tokens: missing.iter().map(tokens).sum(),
        cached_tokens: have.values().map(|r| r.tokens as u64).sum::<u64>()
            + cached_user.values().map(|r| r.tokens as u64).sum::<u64>(),
    })
}

/// What embedding a set of inputs would cost.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Estimate {
    /// Distinct inputs.
    pub inputs: usize,
    /// Already embedded (workspace or user cache).
    pub cached: usize,
    /// Still to embed.
    pub new_inputs: usize,
    /// Their tokens.
    pub new_tokens: u64,
    /// Tokens of the cached ones (what a cold run would have cost).
    pub cached_tokens: u64,
}

/// Providers a caller hands the engine (the binding reaches Voyage through these): an embedder
/// replaces the core's local model for the text channel; a reranker enables `[rerank]`.
#[derive(Clone, Default)]
pub struct Providers {
    /// The text channel's embedder.
    pub embedder: Option<std::sync::Arc<dyn Embedder>>,
    /// The reranker.
    pub reranker: Option<std::sync::Arc<dyn Reranker>>,
    /// The visual channel's multimodal embedder.
    pub visual: Option<std::sync::Arc<dyn VisualEmbedder>>,
}

impl std::fmt::Debug for Providers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Providers")
            .field(
                "embedder",
                &self.embedder.as_ref().map(|e| e.spec().clone()),
            )
            .field("reranker", &self.reranker.as_ref().map(|r| r.name()))
            .field("visual", &self.visual.as_ref().map(|v| v.spec().clone()))
            .finish()
    }
}

/// A provider-neutral token estimate (cl100k_base) for embedders without a local tokenizer: the
/// dry run's and the budget's count for a provider called over the network.
#[must_use]
pub fn estimate_tokens(text: &str) -> usize {
    crate::tokenize::count(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standalone_inputs_are_shared_by_text_and_contextual_ones_by_document() {
        let a = vec![("Title", "one"), ("Title", "two")];
        let b = vec![("Other", "one"), ("Other", "three")];
        let plain = document_inputs("window", &[a.clone(), b.clone()]);
        assert_eq!(plain[0].shas[0], plain[1].shas[0], "same text, same vector");
        let capsuled = document_inputs("window+capsule", &[a.clone(), b.clone()]);
        assert_eq!(capsuled[0].texts[0], "Title\n\none");
        assert_ne!(
            capsuled[0].shas[0], capsuled[1].shas[0],
            "another capsule, another input"
        );
        let ctx = document_inputs("contextual", &[a.clone(), b]);
        assert_eq!(ctx[0].texts, vec!["one", "two"]);
        assert_ne!(
            ctx[0].shas[0], ctx[1].shas[0],
            "the same window in another document differs"
        );
        let edited = document_inputs("contextual", &[vec![("Title", "one"), ("Title", "2")]]);
        assert_ne!(
            ctx[0].shas[0], edited[0].shas[0],
            "a sibling's edit changes every window"
        );
        assert_eq!(
            document_inputs("contextual", &[a])[0].shas,
            ctx[0].shas,
            "stable"
        );
    }
}
