//! Providers the TypeScript side calls (Voyage), handed to the core as its `Embedder` and
//! `Reranker`. The core calls them from worker threads: each call crosses to the JS thread through
//! a threadsafe function, whose JS callback returns a promise; the worker blocks on it. Callers
//! never run on the JS thread, so the promise can settle while the worker waits.

use std::sync::Arc;

use napi::Status;
use napi::bindgen_prelude::{Buffer, Promise};
use napi::threadsafe_function::ThreadsafeFunction;
use napi_derive::napi;
use tychora_core::vector::{
    Embedded, Embedder, FamilySpec, InputKind, Picture, Providers, Reranked, Reranker,
    VisualEmbedder,
};
use tychora_core::{Error, Result};

/// One embedding call: texts of one input type.
#[napi(object)]
pub struct EmbedCall {
    pub texts: Vec<String>,
    #[napi(js_name = "input_type", ts_type = "'query' | 'document'")]
    pub input_type: String,
}

/// Vectors of one call, flattened row by row (`texts.length × dimension` numbers).
#[napi(object)]
pub struct EmbedOutput {
    pub vectors: Vec<f64>,
    /// Tokens the provider counted per text (or its total spread evenly when it reports a total).
    pub tokens: Vec<u32>,
    /// Where they came from (provider, model, request id), as JSON.
    #[napi(js_name = "receipt_json")]
    pub receipt_json: String,
}

/// One contextualised embedding call: documents, each a list of windows embedded together.
#[napi(object)]
pub struct EmbedDocumentsCall {
    pub documents: Vec<Vec<String>>,
    #[napi(js_name = "input_type", ts_type = "'query' | 'document'")]
    pub input_type: String,
}

/// One rerank call.
#[napi(object)]
pub struct RerankCall {
    pub query: String,
    pub documents: Vec<String>,
}

/// Relevance per document, in document order.
#[napi(object)]
pub struct RerankOutput {
    pub scores: Vec<f64>,
    pub tokens: u32,
    #[napi(js_name = "receipt_json")]
    pub receipt_json: String,
}

/// One multimodal embedding call: pictures embedded as documents, or a query's text.
#[napi(object)]
pub struct VisualCall {
    /// Each picture's bytes (empty for a query).
    pub pictures: Vec<Buffer>,
    /// Each picture's media type.
    #[napi(js_name = "media_types")]
    pub media_types: Vec<String>,
    /// The query's text (absent when pictures are embedded).
    pub query: Option<String>,
}

/// The visual family a JS multimodal embedder produces.
#[napi(object)]
pub struct VisualSpec {
    pub provider: String,
    pub model: String,
    pub dimension: u32,
}

/// The family a JS embedder produces.
#[napi(object)]
pub struct EmbedderSpec {
    pub provider: String,
    pub model: String,
    pub dimension: u32,
    #[napi(ts_type = "'window' | 'window+capsule' | 'contextual'")]
    pub representation: String,
    #[napi(ts_type = "'l2' | 'none'")]
    pub normalization: String,
    #[napi(ts_type = "'f32' | 'f16' | 'i8'")]
    pub quantization: String,
    #[napi(ts_type = "'cos' | 'ip' | 'l2'")]
    pub metric: String,
    /// Tokens one input may have before the provider truncates it.
    #[napi(js_name = "max_input_tokens")]
    pub max_input_tokens: u32,
}

type EmbedFn = ThreadsafeFunction<EmbedCall, Promise<EmbedOutput>, EmbedCall, Status, false, true>;
type EmbedDocumentsFn = ThreadsafeFunction<
    EmbedDocumentsCall,
    Promise<EmbedOutput>,
    EmbedDocumentsCall,
    Status,
    false,
    true,
>;
type RerankFn =
    ThreadsafeFunction<RerankCall, Promise<RerankOutput>, RerankCall, Status, false, true>;
type VisualFn =
    ThreadsafeFunction<VisualCall, Promise<EmbedOutput>, VisualCall, Status, false, true>;

/// Providers to open a workspace with.
#[napi(object, object_to_js = false)]
pub struct ProviderHooks {
    #[napi(js_name = "embedder_spec")]
    pub embedder_spec: Option<EmbedderSpec>,
    #[napi(ts_type = "(call: EmbedCall) => Promise<EmbedOutput>")]
    pub embed: Option<EmbedFn>,
    /// Contextualised embeddings (families whose representation is `contextual`): the vectors of
    /// every window of every document, flattened in order.
    #[napi(
        js_name = "embed_documents",
        ts_type = "(call: EmbedDocumentsCall) => Promise<EmbedOutput>"
    )]
    pub embed_documents: Option<EmbedDocumentsFn>,
    /// `provider/model` of the reranker.
    #[napi(js_name = "reranker_name")]
    pub reranker_name: Option<String>,
    #[napi(ts_type = "(call: RerankCall) => Promise<RerankOutput>")]
    pub rerank: Option<RerankFn>,
    /// The visual channel's family (`[visual]`).
    #[napi(js_name = "visual_spec")]
    pub visual_spec: Option<VisualSpec>,
    /// Embeds pictures, or a query's text, with the multimodal model.
    #[napi(
        js_name = "embed_visual",
        ts_type = "(call: VisualCall) => Promise<EmbedOutput>"
    )]
    pub embed_visual: Option<VisualFn>,
    /// Reads a PDF (pdf.js in a worker pool); without it, PDFs are reported and not read.
    #[napi(
        js_name = "read_pdf",
        ts_type = "(call: PdfCall) => Promise<PdfOutput>"
    )]
    pub read_pdf: Option<crate::pdf::ReadPdfFn>,
}

fn provider_error(what: &str, e: &napi::Error) -> Error {
    // The JS side throws coded errors ("[E_PROVIDER] …"); keep its message, never a key.
    let reason = e.reason.trim();
    let reason = reason
        .strip_prefix("[E_PROVIDER] ")
        .or_else(|| reason.strip_prefix("E_PROVIDER: "))
        .unwrap_or(reason);
    Error::Provider(format!("{what}: {reason}"))
}

struct JsEmbedder {
    spec: FamilySpec,
    max_input_tokens: usize,
    embed: EmbedFn,
    embed_documents: Option<EmbedDocumentsFn>,
}

/// Splits a flattened answer into `counts[i]` vectors of `dim` numbers each.
fn unflatten(what: &str, out: EmbedOutput, counts: &[usize], dim: usize) -> Result<Vec<Embedded>> {
    let total: usize = counts.iter().sum();
    if out.vectors.len() != total * dim || out.tokens.len() != total {
        return Err(Error::Provider(format!(
            "{what}: {} numbers and {} token counts for {total} inputs of dimension {dim}",
            out.vectors.len(),
            out.tokens.len()
        )));
    }
    let receipt: serde_json::Value =
        serde_json::from_str(&out.receipt_json).unwrap_or(serde_json::Value::Null);
    #[allow(clippy::cast_possible_truncation)]
    let mut rows = out
        .vectors
        .chunks_exact(dim.max(1))
        .map(|row| row.iter().map(|x| *x as f32).collect::<Vec<f32>>());
    let mut tokens = out.tokens.into_iter().map(|t| t as usize);
    Ok(counts
        .iter()
        .map(|&n| Embedded {
            vectors: rows.by_ref().take(n).collect(),
            tokens: tokens.by_ref().take(n).collect(),
            receipt: receipt.clone(),
        })
        .collect())
}

impl Embedder for JsEmbedder {
    fn spec(&self) -> &FamilySpec {
        &self.spec
    }

    fn embed(&self, texts: &[&str], kind: InputKind) -> Result<Embedded> {
        let call = EmbedCall {
            texts: texts.iter().map(|t| (*t).to_string()).collect(),
            input_type: match kind {
                InputKind::Query => "query",
                InputKind::Document => "document",
            }
            .into(),
        };
        let what = format!("{} embeddings ({})", self.spec.provider, self.spec.model);
        let out = futures_executor::block_on(async {
            let promise = self.embed.call_async(call).await?;
            promise.await
        })
        .map_err(|e| provider_error(&what, &e))?;
        unflatten(&what, out, &[texts.len()], self.spec.dimension)?
            .pop()
            .ok_or_else(|| Error::Provider(format!("{what}: no answer")))
    }

    fn embed_documents(&self, documents: &[Vec<&str>], kind: InputKind) -> Result<Vec<Embedded>> {
        let Some(embed_documents) = &self.embed_documents else {
            return Err(Error::InvalidArgument(format!(
                "{}/{} was handed to the engine without contextualised embeddings",
                self.spec.provider, self.spec.model
            )));
        };
        let counts: Vec<usize> = documents.iter().map(Vec::len).collect();
        let call = EmbedDocumentsCall {
            documents: documents
                .iter()
                .map(|d| d.iter().map(|t| (*t).to_string()).collect())
                .collect(),
            input_type: match kind {
                InputKind::Query => "query",
                InputKind::Document => "document",
            }
            .into(),
        };
        let what = format!(
            "{} contextualized embeddings ({})",
            self.spec.provider, self.spec.model
        );
        let out = futures_executor::block_on(async {
            let promise = embed_documents.call_async(call).await?;
            promise.await
        })
        .map_err(|e| provider_error(&what, &e))?;
        unflatten(&what, out, &counts, self.spec.dimension)
    }

    fn max_input_tokens(&self) -> usize {
        self.max_input_tokens
    }

    fn count_tokens(&self, text: &str) -> usize {
        tychora_core::vector::estimate_tokens(text)
    }
}

struct JsReranker {
    name: String,
    rerank: RerankFn,
}

impl Reranker for JsReranker {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn rerank(&self, query: &str, documents: &[&str]) -> Result<Reranked> {
        let call = RerankCall {
            query: query.to_string(),
            documents: documents.iter().map(|d| (*d).to_string()).collect(),
        };
        let out = futures_executor::block_on(async {
            let promise = self.rerank.call_async(call).await?;
            promise.await
        })
        .map_err(|e| provider_error(&format!("rerank ({})", self.name), &e))?;
        Ok(Reranked {
            scores: out.scores,
            tokens: out.tokens as usize,
            receipt: serde_json::from_str(&out.receipt_json).unwrap_or(serde_json::Value::Null),
        })
    }
}

struct JsVisual {
    spec: FamilySpec,
    embed: VisualFn,
}

impl JsVisual {
    fn call(&self, call: VisualCall, count: usize) -> Result<Embedded> {
        let what = format!(
            "{} multimodal embeddings ({})",
            self.spec.provider, self.spec.model
        );
        let out = futures_executor::block_on(async {
            let promise = self.embed.call_async(call).await?;
            promise.await
        })
        .map_err(|e| provider_error(&what, &e))?;
        unflatten(&what, out, &[count], self.spec.dimension)?
            .pop()
            .ok_or_else(|| Error::Provider(format!("{what}: no answer")))
    }
}

impl VisualEmbedder for JsVisual {
    fn spec(&self) -> &FamilySpec {
        &self.spec
    }

    fn embed_pictures(&self, pictures: &[Picture<'_>]) -> Result<Embedded> {
        let call = VisualCall {
            pictures: pictures
                .iter()
                .map(|p| Buffer::from(p.bytes.to_vec()))
                .collect(),
            media_types: pictures.iter().map(|p| p.media_type.to_string()).collect(),
            query: None,
        };
        self.call(call, pictures.len())
    }

    fn embed_query(&self, text: &str) -> Result<Embedded> {
        let call = VisualCall {
            pictures: Vec::new(),
            media_types: Vec::new(),
            query: Some(text.to_string()),
        };
        self.call(call, 1)
    }
}

/// The core's PDF reader from the JS hook.
pub(crate) fn pdf_reader(
    hooks: &mut ProviderHooks,
) -> Option<Arc<dyn tychora_core::documents::PdfReader>> {
    hooks.read_pdf.take().map(|read| {
        Arc::new(crate::pdf::JsPdfReader { read }) as Arc<dyn tychora_core::documents::PdfReader>
    })
}

/// The core's providers from the JS hooks.
pub(crate) fn from_hooks(hooks: ProviderHooks) -> Providers {
    let embedder = match (hooks.embedder_spec, hooks.embed) {
        (Some(spec), Some(embed)) => Some(Arc::new(JsEmbedder {
            spec: FamilySpec {
                provider: spec.provider,
                model: spec.model,
                dimension: spec.dimension as usize,
                representation: spec.representation,
                normalization: spec.normalization,
                quantization: spec.quantization,
                metric: spec.metric,
            },
            max_input_tokens: spec.max_input_tokens as usize,
            embed,
            embed_documents: hooks.embed_documents,
        }) as Arc<dyn Embedder>),
        _ => None,
    };
    let reranker = match (hooks.reranker_name, hooks.rerank) {
        (Some(name), Some(rerank)) => {
            Some(Arc::new(JsReranker { name, rerank }) as Arc<dyn Reranker>)
        }
        _ => None,
    };
    let visual = match (hooks.visual_spec, hooks.embed_visual) {
        (Some(spec), Some(embed)) => Some(Arc::new(JsVisual {
            spec: visual_family(spec.provider, spec.model, spec.dimension as usize),
            embed,
        }) as Arc<dyn VisualEmbedder>),
        _ => None,
    };
    Providers {
        embedder,
        reranker,
        visual,
    }
}

/// The visual channel's family: the provider's unit vectors of pictures, compared by cosine.
fn visual_family(provider: String, model: String, dimension: usize) -> FamilySpec {
    FamilySpec {
        provider,
        model,
        dimension,
        representation: "image".into(),
        normalization: "l2".into(),
        quantization: "f32".into(),
        metric: "cos".into(),
    }
}

/// What a workspace's configuration asks of network providers, resolved against its pack.
#[napi(object)]
pub struct ProviderNeeds {
    pub embeddings: Option<EmbeddingNeed>,
    pub rerank: Option<RerankNeed>,
    pub visual: Option<VisualNeed>,
}

/// The multimodal model the visual channel calls.
#[napi(object)]
pub struct VisualNeed {
    pub provider: String,
    pub model: String,
    pub dimension: Option<u32>,
}

/// The embedding family a network provider must produce.
#[napi(object)]
pub struct EmbeddingNeed {
    pub provider: String,
    pub model: String,
    pub dimension: Option<u32>,
    pub representation: String,
    pub quantization: String,
}

/// The reranker to call.
#[napi(object)]
pub struct RerankNeed {
    pub provider: String,
    pub model: String,
}

/// The network providers the workspace in `dir` configures (none for the local model): the
/// TypeScript side builds them before opening it. Reads `workspace.toml` only.
#[napi(catch_unwind)]
pub fn provider_needs(dir: String) -> napi::Result<ProviderNeeds> {
    let run = || -> Result<ProviderNeeds> {
        let path = std::path::Path::new(&dir).join("workspace.toml");
        if !path.exists() {
            // No workspace here: opening it reports E_NOT_FOUND with the directory's name.
            return Ok(ProviderNeeds {
                embeddings: None,
                rerank: None,
                visual: None,
            });
        }
        let config = tychora_core::config::Config::load(&path)?;
        // The pack is resolved only for a default a section leaves unset: a workspace on the
        // local model (every CLI search's case) reads workspace.toml and nothing else.
        let pack_cell = std::cell::OnceCell::new();
        let pack = || -> Result<&tychora_core::config::Pack> {
            if let Some(pack) = pack_cell.get() {
                return Ok(pack);
            }
            let resolved = config.pack()?;
            Ok(pack_cell.get_or_init(|| resolved))
        };
        let embeddings = match &config.embeddings {
            Some(e) if e.provider != "local" => {
                let representation = match &e.representation {
                    Some(r) => r.clone(),
                    None => pack()?.text.representation.clone(),
                };
                // A contextual family uses the provider's contextual model (`voyage_contextual`).
                let slot = if representation == "contextual" {
                    format!("{}_contextual", e.provider)
                } else {
                    e.provider.clone()
                };
                let model = match &e.model {
                    Some(m) => Some(m.clone()),
                    None => pack()?.text.models.get(&slot).cloned(),
                }
                .ok_or_else(|| {
                        Error::InvalidArgument(format!(
                            "[embeddings] provider {:?} has no model: set model, or text.models.{} in the pack",
                            e.provider, e.provider
                        ))
                    })?;
                Some(EmbeddingNeed {
                    provider: e.provider.clone(),
                    model,
                    dimension: e.dimension.and_then(|d| u32::try_from(d).ok()),
                    representation,
                    quantization: e.quantization.clone(),
                })
            }
            _ => None,
        };
        let rerank = match &config.rerank {
            Some(r) => Some(RerankNeed {
                provider: r.provider.clone(),
                model: match &r.model {
                    Some(m) => Some(m.clone()),
                    None => pack()?.text.rerank_model.clone(),
                }
                .ok_or_else(|| {
                    Error::InvalidArgument(
                        "[rerank] has no model: set model, or text.rerank_model in the pack".into(),
                    )
                })?,
            }),
            None => None,
        };
        let visual = config.visual.as_ref().map(|v| VisualNeed {
            provider: v.provider.clone(),
            model: v.model.clone(),
            dimension: v.dimension.and_then(|d| u32::try_from(d).ok()),
        });
        Ok(ProviderNeeds {
            embeddings,
            rerank,
            visual,
        })
    };
    run().map_err(|e| crate::error::to_napi(&e))
}
