//! The summary tree (`index build --raptor`): the build runs on a thread of its own, and a model
//! summariser the TypeScript side provides (Anthropic) is called through a threadsafe function,
//! one batch of clusters per call, as the Voyage hooks are.

use napi::Status;
use napi::bindgen_prelude::{Either, Null, Object, Promise};
use napi::threadsafe_function::ThreadsafeFunction;
use napi::{Env, Result};
use napi_derive::napi;
use tychora_core::summary as core;

use crate::contract::{count, nullable};
use crate::workspace::NativeWorkspace;

/// One cluster to summarise.
#[napi(object)]
pub struct SummaryCluster {
    /// Height above the windows (1: its children are windows).
    pub level: u32,
    /// Its children's texts, in order.
    pub texts: Vec<String>,
}

/// One call of the summariser: a batch of clusters.
#[napi(object)]
pub struct SummarizeCall {
    pub model: String,
    #[napi(js_name = "max_tokens")]
    pub max_tokens: u32,
    pub clusters: Vec<SummaryCluster>,
}

/// The answer for one cluster: a summary, or why there is none.
#[napi(object)]
pub struct SummaryAnswer {
    pub text: Option<String>,
    pub declined: Option<String>,
    pub model: String,
    #[napi(js_name = "input_tokens")]
    pub input_tokens: u32,
    #[napi(js_name = "output_tokens")]
    pub output_tokens: u32,
}

/// A call's answers (one per cluster, in order) and the HTTP requests it took.
#[napi(object)]
pub struct SummarizeOutput {
    pub answers: Vec<SummaryAnswer>,
    pub calls: u32,
}

type SummarizeFn =
    ThreadsafeFunction<SummarizeCall, Promise<SummarizeOutput>, SummarizeCall, Status, false, true>;

/// A model summariser handed in by the TypeScript side.
#[napi(object, object_to_js = false)]
pub struct SummarizerHook {
    pub provider: String,
    #[napi(js_name = "prompt_fingerprint")]
    pub prompt_fingerprint: String,
    #[napi(ts_type = "(call: SummarizeCall) => Promise<SummarizeOutput>")]
    pub summarize: SummarizeFn,
}

struct JsSummarizer(SummarizerHook);

impl core::Summarizer for JsSummarizer {
    fn provider(&self) -> &str {
        &self.0.provider
    }

    fn prompt_fingerprint(&self) -> &str {
        &self.0.prompt_fingerprint
    }

    fn summarize(
        &self,
        model: &str,
        max_tokens: u32,
        inputs: &[core::SummaryInput],
    ) -> tychora_core::Result<core::SummarizeCall> {
        let call = SummarizeCall {
            model: model.to_string(),
            max_tokens,
            clusters: inputs
                .iter()
                .map(|i| SummaryCluster {
                    level: i.level,
                    texts: i.texts.clone(),
                })
                .collect(),
        };
        let what = format!("{} summaries ({model})", self.0.provider);
        let out = futures_executor::block_on(async {
            let promise = self.0.summarize.call_async(call).await?;
            promise.await
        })
        .map_err(|e| {
            let reason = e.reason.trim();
            let reason = reason.strip_prefix("[E_PROVIDER] ").unwrap_or(reason);
            tychora_core::Error::Provider(format!("{what}: {reason}"))
        })?;
        Ok(core::SummarizeCall {
            answers: out
                .answers
                .into_iter()
                .map(|a| core::SummaryAnswer {
                    text: a.text,
                    declined: a.declined,
                    model: a.model,
                    input_tokens: u64::from(a.input_tokens),
                    output_tokens: u64::from(a.output_tokens),
                })
                .collect(),
            calls: out.calls as usize,
        })
    }
}

/// What `index build --raptor` was asked.
#[napi(object)]
pub struct SummaryBuildOptions {
    /// Summarise every cluster offline, whatever `[summaries]` names.
    pub extractive: Option<bool>,
    /// Cluster and count what would be sent; write nothing, call nothing.
    #[napi(js_name = "dry_run")]
    pub dry_run: Option<bool>,
}

/// A cluster the model declined, or answered with something else.
#[napi(object)]
pub struct SummaryDiagnostic {
    pub path: String,
    #[napi(ts_type = "'info' | 'warning' | 'error'")]
    pub level: String,
    #[napi(ts_type = "ErrorCode")]
    pub code: String,
    pub message: String,
}

/// What a summary-tree build did.
#[napi(object)]
pub struct SummaryReport {
    #[napi(js_name = "tree_id")]
    pub tree_id: Either<i64, Null>,
    #[napi(js_name = "snapshot_id")]
    pub snapshot_id: i64,
    #[napi(js_name = "dry_run")]
    pub dry_run: bool,
    pub windows: i64,
    #[napi(js_name = "left_out")]
    pub left_out: i64,
    pub documents: i64,
    pub nodes: i64,
    pub levels: Vec<i64>,
    pub summarizer: String,
    pub model: Either<String, Null>,
    #[napi(js_name = "by_model")]
    pub by_model: i64,
    pub cached: i64,
    pub extractive: i64,
    pub calls: i64,
    #[napi(js_name = "input_tokens")]
    pub input_tokens: i64,
    #[napi(js_name = "output_tokens")]
    pub output_tokens: i64,
    #[napi(js_name = "planned_input_tokens")]
    pub planned_input_tokens: i64,
    #[napi(js_name = "cluster_ms")]
    pub cluster_ms: f64,
    #[napi(js_name = "summarize_ms")]
    pub summarize_ms: f64,
    #[napi(js_name = "build_ms")]
    pub build_ms: f64,
    pub diagnostics: Vec<SummaryDiagnostic>,
}

#[allow(clippy::cast_possible_wrap)]
fn tokens(n: u64) -> i64 {
    n as i64
}

impl From<core::SummaryReport> for SummaryReport {
    fn from(value: core::SummaryReport) -> Self {
        let core::SummaryReport {
            tree_id,
            snapshot_id,
            dry_run,
            windows,
            left_out,
            documents,
            nodes,
            levels,
            summarizer,
            model,
            by_model,
            cached,
            extractive,
            calls,
            input_tokens,
            output_tokens,
            planned_input_tokens,
            cluster_ms,
            summarize_ms,
            build_ms,
            diagnostics,
        } = value;
        Self {
            tree_id: nullable(tree_id),
            snapshot_id,
            dry_run,
            windows: count(windows),
            left_out: count(left_out),
            documents: count(documents),
            nodes: count(nodes),
            levels: levels.into_iter().map(count).collect(),
            summarizer,
            model: nullable(model),
            by_model: count(by_model),
            cached: count(cached),
            extractive: count(extractive),
            calls: count(calls),
            input_tokens: tokens(input_tokens),
            output_tokens: tokens(output_tokens),
            planned_input_tokens: tokens(planned_input_tokens),
            cluster_ms,
            summarize_ms,
            build_ms,
            diagnostics: diagnostics
                .into_iter()
                .map(|d| {
                    let tychora_core::Diagnostic {
                        path,
                        level,
                        code,
                        message,
                        locator: _,
                    } = d;
                    SummaryDiagnostic {
                        path,
                        level: level.as_str().into(),
                        code: code.as_str().into(),
                        message,
                    }
                })
                .collect(),
        }
    }
}

#[napi]
impl NativeWorkspace {
    /// Builds the summary tree of the current snapshot on a thread of its own, replacing the
    /// previous tree; `summarizer` writes the summaries of the collections `[summaries]` permits.
    #[napi(
        catch_unwind,
        ts_args_type = "options: SummaryBuildOptions, summarizer?: SummarizerHook",
        ts_return_type = "Promise<SummaryReport>"
    )]
    pub fn build_summaries<'env>(
        &self,
        env: &'env Env,
        options: SummaryBuildOptions,
        summarizer: Option<SummarizerHook>,
    ) -> Result<Object<'env>> {
        let ws = self.inner_ref()?;
        let options = core::SummaryBuildOptions {
            extractive: options.extractive.unwrap_or(false),
            dry_run: options.dry_run.unwrap_or(false),
        };
        crate::task::own_thread(env, move || {
            let hook = summarizer.map(JsSummarizer);
            let report =
                ws.build_summaries(hook.as_ref().map(|h| h as &dyn core::Summarizer), &options)?;
            Ok(SummaryReport::from(report))
        })
    }
}
