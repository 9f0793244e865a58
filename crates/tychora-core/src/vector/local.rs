//! The local embedder: a sentence-transformers BERT model read from a directory in Hugging Face
//! layout (`config.json`, `tokenizer.json`, `model.safetensors`, `modules.json` and the pooling
//! config), run on the CPU with candle. It never touches the network.

use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Instant;

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use serde::Deserialize;
use sha2::{Digest, Sha256};
use tokenizers::Tokenizer;

use super::embedder::{Embedded, Embedder, FamilySpec, InputKind};
use crate::error::{Error, Result};

pub use crate::config::LongInputs;

/// Most tokens one forward pass holds (pieces × padded length): bounds memory and padding waste.
const BATCH_TOKENS: usize = 4096;

#[derive(Deserialize)]
struct Module {
    #[serde(rename = "type")]
    kind: String,
}

#[derive(Deserialize)]
struct PoolingConfig {
    #[serde(default)]
    pooling_mode_cls_token: bool,
    #[serde(default)]
    pooling_mode_mean_tokens: bool,
}

#[derive(Deserialize)]
struct SentenceBertConfig {
    max_seq_length: usize,
}

/// How token vectors become one vector.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pooling {
    Mean,
    Cls,
}

/// A loaded model. Loading is deferred to the first embedding (a search without the text channel
/// never pays for it).
pub struct LocalEmbedder {
    spec: FamilySpec,
    dir: PathBuf,
    long_inputs: LongInputs,
    loaded: OnceLock<std::result::Result<Loaded, String>>,
    /// For token counts without loading the model.
    tokenizer: Tokenizer,
    max_len: usize,
    /// Batches embedded at once (one per core).
    threads: usize,
}

struct Loaded {
    model: BertModel,
    pooling: Pooling,
    cls: u32,
    sep: u32,
}

impl std::fmt::Debug for LocalEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalEmbedder")
            .field("dir", &self.dir)
            .field("spec", &self.spec)
            .finish_non_exhaustive()
    }
}

fn read_json<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<T> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    serde_json::from_str(&text)
        .map_err(|e| Error::InvalidArgument(format!("{}: {e}", path.display())))
}

/// A fingerprint of the model files, so that other weights under the same name make another family:
/// config and tokenizer whole, the safetensors tensor table, its size and its first and last MiB.
fn fingerprint(dir: &Path) -> Result<String> {
    let mut hasher = Sha256::new();
    for name in ["config.json", "tokenizer.json"] {
        let path = dir.join(name);
        hasher.update(std::fs::read(&path).map_err(|e| Error::io(&path, e))?);
    }
    let path = dir.join("model.safetensors");
    let mut file = std::fs::File::open(&path).map_err(|e| Error::io(&path, e))?;
    let size = file.metadata().map_err(|e| Error::io(&path, e))?.len();
    hasher.update(size.to_le_bytes());
    let mut buf = vec![0u8; usize::try_from(size.min(1 << 20)).unwrap_or(1 << 20)];
    file.read_exact(&mut buf).map_err(|e| Error::io(&path, e))?;
    hasher.update(&buf);
    file.seek(SeekFrom::Start(size.saturating_sub(buf.len() as u64)))
        .and_then(|_| file.read_exact(&mut buf))
        .map_err(|e| Error::io(&path, e))?;
    hasher.update(&buf);
    Ok(hex::encode(&hasher.finalize()[..8]))
}

impl LocalEmbedder {
    /// Reads the model's description from `dir` (the weights load on first use).
    ///
    /// # Errors
    /// `E_NOT_FOUND` when a required file is missing; `E_INVALID_ARGUMENT` for an unsupported model.
    pub fn open(
        dir: &Path,
        representation: &str,
        quantization: &str,
        long_inputs: LongInputs,
    ) -> Result<Self> {
        for required in ["config.json", "tokenizer.json", "model.safetensors"] {
            if !dir.join(required).is_file() {
                return Err(Error::NotFound {
                    what: "model file",
                    id: dir.join(required).display().to_string(),
                });
            }
        }
        let config: serde_json::Value = read_json(&dir.join("config.json"))?;
        if config.get("model_type").and_then(serde_json::Value::as_str) != Some("bert") {
            return Err(Error::InvalidArgument(format!(
                "{}: only BERT sentence-transformers models are supported (model_type bert)",
                dir.join("config.json").display()
            )));
        }
        let dimension = config
            .get("hidden_size")
            .and_then(serde_json::Value::as_u64)
            .ok_or_else(|| Error::InvalidArgument("config.json has no hidden_size".into()))?;
        let modules: Vec<Module> = if dir.join("modules.json").is_file() {
            read_json(&dir.join("modules.json"))?
        } else {
            Vec::new()
        };
        let normalize = modules.iter().any(|m| m.kind.ends_with("Normalize"));
        let max_seq: usize = if dir.join("sentence_bert_config.json").is_file() {
            read_json::<SentenceBertConfig>(&dir.join("sentence_bert_config.json"))?.max_seq_length
        } else {
            512
        };
        let mut tokenizer = Tokenizer::from_file(dir.join("tokenizer.json")).map_err(|e| {
            Error::InvalidArgument(format!("{}: {e}", dir.join("tokenizer.json").display()))
        })?;
        tokenizer
            .with_truncation(None)
            .map_err(|e| Error::Internal(format!("tokenizer: {e}")))?;
        tokenizer.with_padding(None);
        let name = dir
            .file_name()
            .map_or_else(|| "model".into(), |n| n.to_string_lossy().into_owned());
        let spec = FamilySpec {
            provider: "local".into(),
            // How long inputs are cut is part of what a vector means: a pooled and a truncated
            // vector of the same input must never be taken for each other.
            model: format!(
                "{name}@{}/{}-{}",
                fingerprint(dir)?,
                match long_inputs {
                    LongInputs::Truncate => "truncate",
                    LongInputs::Pool => "pool",
                },
                max_seq.min(512)
            ),
            dimension: usize::try_from(dimension).unwrap_or(0),
            representation: representation.into(),
            normalization: if normalize { "l2" } else { "none" }.into(),
            quantization: quantization.into(),
            metric: "cos".into(),
        };
        Ok(Self {
            spec,
            dir: dir.to_path_buf(),
            long_inputs,
            loaded: OnceLock::new(),
            tokenizer,
            max_len: max_seq.min(512),
            threads: std::thread::available_parallelism().map_or(1, std::num::NonZero::get),
        })
    }

    fn loaded(&self) -> Result<&Loaded> {
        self.loaded
            .get_or_init(|| self.load().map_err(|e| e.to_string()))
            .as_ref()
            .map_err(|e| Error::Internal(format!("local model {}: {e}", self.dir.display())))
    }

    fn load(&self) -> Result<Loaded> {
        let config: Config = read_json(&self.dir.join("config.json"))?;
        let weights = self.dir.join("model.safetensors");
        // SAFETY: the weights file is memory-mapped read-only; a file changed underneath while
        // mapped is outside what the model directory promises (it is not a capture input).
        let vb =
            unsafe { VarBuilder::from_mmaped_safetensors(&[weights], DType::F32, &Device::Cpu) }
                .map_err(|e| Error::Internal(format!("loading weights: {e}")))?;
        let model = BertModel::load(vb, &config)
            .map_err(|e| Error::Internal(format!("building the model: {e}")))?;
        let pooling_dir = self.dir.join("1_Pooling").join("config.json");
        let pooling = if pooling_dir.is_file() {
            let p: PoolingConfig = read_json(&pooling_dir)?;
            if p.pooling_mode_cls_token && !p.pooling_mode_mean_tokens {
                Pooling::Cls
            } else {
                Pooling::Mean
            }
        } else {
            Pooling::Mean
        };
        let id = |t: &str| {
            self.tokenizer
                .token_to_id(t)
                .ok_or_else(|| Error::InvalidArgument(format!("the tokenizer has no {t} token")))
        };
        Ok(Loaded {
            model,
            pooling,
            cls: id("[CLS]")?,
            sep: id("[SEP]")?,
        })
    }

    /// The token ids between `[CLS]` and `[SEP]` of one text.
    fn content_ids(&self, text: &str) -> Result<Vec<u32>> {
        let encoding = self
            .tokenizer
            .encode(text, false)
            .map_err(|e| Error::Internal(format!("tokenizing: {e}")))?;
        Ok(encoding.get_ids().to_vec())
    }

    /// Runs the model over `pieces` (each `[CLS] … [SEP]`), sorted by length so that a batch pads
    /// little, and returns their pooled (not yet normalised) vectors in input order.
    ///
    /// Batches run on one thread per core, each inside a one-thread rayon pool: candle otherwise
    /// spreads every operation of one batch over all cores, and with a BERT's many small
    /// operations the threads spent a third of their time waking and parking each other (SciFact,
    /// 2 cores: 2,058 tokens/s with 40% system time; see bench/results/embedding-throughput.md).
    fn forward(&self, loaded: &Loaded, pieces: &[Vec<u32>]) -> Result<Vec<Vec<f32>>> {
        let mut order: Vec<usize> = (0..pieces.len()).collect();
        order.sort_by_key(|&i| pieces[i].len());
        let mut batches: Vec<&[usize]> = Vec::new();
        let mut start = 0;
        while start < order.len() {
            // Grow the batch while its padded size stays within the budget (lengths only grow).
            let mut end = start + 1;
            while end < order.len() && pieces[order[end]].len() * (end + 1 - start) <= BATCH_TOKENS
            {
                end += 1;
            }
            batches.push(&order[start..end]);
            start = end;
        }
        // Largest batches first, so the last one to finish is a small one.
        batches.sort_by_key(|b| std::cmp::Reverse(pieces[b[b.len() - 1]].len() * b.len()));
        let threads = self.threads.min(batches.len()).max(1);
        let results = crate::parallel::map(&batches, threads, |batch| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(1)
                .build()
                .map_err(|e| Error::Internal(format!("embedding thread pool: {e}")))?;
            pool.install(|| self.forward_batch(loaded, pieces, batch))
        });
        let mut out: Vec<Vec<f32>> = vec![Vec::new(); pieces.len()];
        for (batch, rows) in batches.iter().zip(results) {
            let rows =
                rows.ok_or_else(|| Error::Internal("an embedding thread panicked".into()))??;
            for (&i, row) in batch.iter().zip(rows) {
                out[i] = row;
            }
        }
        Ok(out)
    }

    /// One padded batch through the model, pooled.
    fn forward_batch(
        &self,
        loaded: &Loaded,
        pieces: &[Vec<u32>],
        batch: &[usize],
    ) -> Result<Vec<Vec<f32>>> {
        let len = pieces[batch[batch.len() - 1]].len();
        let mut ids = Vec::with_capacity(batch.len() * len);
        let mut mask = Vec::with_capacity(batch.len() * len);
        for &i in batch {
            let piece = &pieces[i];
            ids.extend_from_slice(piece);
            ids.extend(std::iter::repeat_n(0u32, len - piece.len()));
            mask.extend(std::iter::repeat_n(1u32, piece.len()));
            mask.extend(std::iter::repeat_n(0u32, len - piece.len()));
        }
        let shape = (batch.len(), len);
        let candle = |e: candle_core::Error| Error::Internal(format!("model forward: {e}"));
        let ids = Tensor::from_vec(ids, shape, &Device::Cpu).map_err(candle)?;
        let mask = Tensor::from_vec(mask, shape, &Device::Cpu).map_err(candle)?;
        let types = ids.zeros_like().map_err(candle)?;
        let hidden = loaded
            .model
            .forward(&ids, &types, Some(&mask))
            .map_err(candle)?;
        let pooled = match loaded.pooling {
            Pooling::Cls => hidden.narrow(1, 0, 1).and_then(|t| t.squeeze(1)),
            Pooling::Mean => {
                let m = mask
                    .to_dtype(DType::F32)
                    .and_then(|m| m.unsqueeze(2))
                    .map_err(candle)?;
                hidden
                    .broadcast_mul(&m)
                    .and_then(|h| h.sum(1))
                    .and_then(|s| s.broadcast_div(&m.sum(1)?))
            }
        }
        .map_err(candle)?;
        pooled.to_vec2().map_err(candle)
    }
}

fn normalize(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        for x in v {
            *x /= norm;
        }
    }
}

impl Embedder for LocalEmbedder {
    fn spec(&self) -> &FamilySpec {
        &self.spec
    }

    fn embed(&self, texts: &[&str], _kind: InputKind) -> Result<Embedded> {
        let started = Instant::now();
        let loaded = self.loaded()?;
        let room = self.max_len - 2;
        // Each input becomes one piece (truncated) or several (pooled); `owner` maps pieces back.
        let mut pieces: Vec<Vec<u32>> = Vec::new();
        let mut owner: Vec<usize> = Vec::new();
        let mut tokens = Vec::with_capacity(texts.len());
        for (i, text) in texts.iter().enumerate() {
            let ids = self.content_ids(text)?;
            let parts: Vec<&[u32]> = match self.long_inputs {
                LongInputs::Truncate => vec![&ids[..ids.len().min(room)]],
                LongInputs::Pool if ids.is_empty() => vec![&ids[..]],
                LongInputs::Pool => ids.chunks(room).collect(),
            };
            tokens.push(parts.iter().map(|p| p.len() + 2).sum());
            for part in parts {
                let mut piece = Vec::with_capacity(part.len() + 2);
                piece.push(loaded.cls);
                piece.extend_from_slice(part);
                piece.push(loaded.sep);
                pieces.push(piece);
                owner.push(i);
            }
        }
        let vectors = self.forward(loaded, &pieces)?;
        let mut sums = vec![vec![0f32; self.spec.dimension]; texts.len()];
        let mut weights = vec![0f32; texts.len()];
        for ((v, &i), piece) in vectors.iter().zip(&owner).zip(&pieces) {
            let w = piece.len() as f32;
            for (s, x) in sums[i].iter_mut().zip(v) {
                *s += w * x;
            }
            weights[i] += w;
        }
        for (sum, w) in sums.iter_mut().zip(&weights) {
            if *w > 0.0 {
                for x in sum.iter_mut() {
                    *x /= w;
                }
            }
            if self.spec.normalization == "l2" {
                normalize(sum);
            }
        }
        Ok(Embedded {
            vectors: sums,
            tokens,
            receipt: serde_json::json!({
                "provider": "local",
                "model": self.spec.model,
                "inputs": texts.len(),
                "pieces": pieces.len(),
                "ms": started.elapsed().as_secs_f64() * 1000.0,
            }),
        })
    }

    fn max_input_tokens(&self) -> usize {
        self.max_len
    }

    fn count_tokens(&self, text: &str) -> usize {
        self.content_ids(text).map_or(0, |ids| ids.len() + 2)
    }
}
