//! The summary tree (RAPTOR): a snapshot's window vectors clustered recursively — inside each
//! document first, then across each collection — and every cluster summarised bottom up, by a
//! model when `[summaries]` names one and the collection permits sending its text, otherwise by
//! the cluster's most central sentences (`extract`). A query finds a node by the centroid of the
//! windows under it and the node brings its children's best windows (`tree`); the summary is what
//! the agent reads beside them. A summary is derived text: it is never a segment and never cited;
//! what a result cites are the windows.
//!
//! Collections are clustered apart: a collection has one trust level (approved knowledge,
//! rejected approaches, captured sources), and a summary must not blend them. Windows the safety
//! detector flagged (text addressed to an agent, text a reader cannot see) are left out of the
//! tree: they would carry their instructions into a summary, or into a model's prompt.

mod build;
pub(crate) mod cluster;
mod extract;
pub(crate) mod tree;

pub(crate) use build::build;
pub use build::{SummaryBuildOptions, SummaryReport};

use crate::error::Result;

/// One cluster to summarise: its children's texts in order (windows, or the summaries of the
/// clusters under it).
#[derive(Debug, Clone)]
pub struct SummaryInput {
    /// Height above the windows (1: its children are windows).
    pub level: u32,
    /// The children's texts, each bounded.
    pub texts: Vec<String>,
}

/// A summariser's answer for one cluster.
#[derive(Debug, Clone, Default)]
pub struct SummaryAnswer {
    /// The summary, when the model wrote one.
    pub text: Option<String>,
    /// Why there is none (a refusal, an empty answer), for the diagnostic.
    pub declined: Option<String>,
    /// The model as the provider reported it.
    pub model: String,
    /// Tokens the provider counted.
    pub input_tokens: u64,
    /// Tokens the model wrote.
    pub output_tokens: u64,
}

/// A model that summarises clusters (Anthropic, called from the TypeScript package). A failed
/// call (network, authentication, a provider error after retries) is an `Err` and nothing is
/// written; a cluster the model declines or answers with something that is not a summary gets the
/// extractive summary and a diagnostic.
pub trait Summarizer: Send + Sync {
    /// `anthropic`.
    fn provider(&self) -> &str;
    /// sha256 of the instructions and settings every cluster is sent with.
    fn prompt_fingerprint(&self) -> &str;
    /// Summarises `inputs` (one answer each, in order) with `model`, at most `max_tokens` each.
    ///
    /// # Errors
    /// `E_PROVIDER` for a call that failed.
    fn summarize(
        &self,
        model: &str,
        max_tokens: u32,
        inputs: &[SummaryInput],
    ) -> Result<SummarizeCall>;
}

/// One batch's answers and the HTTP requests it took.
#[derive(Debug, Clone, Default)]
pub struct SummarizeCall {
    /// One per input, in order.
    pub answers: Vec<SummaryAnswer>,
    /// Requests made (retries included).
    pub calls: usize,
}
