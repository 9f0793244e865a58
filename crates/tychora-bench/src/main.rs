//! `tychora-bench`: the measurement entry points the benchmarks in `bench/code/` spawn. They live
//! in their own binary (with tychora-core's `bench` feature) so the shipped addon carries none of
//! them.
//!
//! ```text
//! tychora-bench analyze-tree ROOT                    → TreeReport JSON (resolver agreement)
//! tychora-bench analyze-sources FILE THREADS [parse] → ParseStats JSON (throughput); FILE holds
//!                                                      JSON [[path, source], …]
//! tychora-bench embed MODEL_DIR FILE [truncate|pool]  → {vectors, tokens, ms} for the JSON array
//!                                                      of texts in FILE (reference check, speed)
//! tychora-bench ann VECTORS QUERIES DIM OUT_DIR [f32|f16|i8]       → build/search figures of the engine's
//!                                                      vector index (exact and HNSW) on raw f32
//! ```

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

mod ann;

/// The addon's allocator, so measurements match it.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use tychora_core::bench::{Work, analyze_sources, analyze_tree};
use tychora_core::vector::LongInputs;

/// Files larger than this are skipped by the tree analysis, as `add`'s default would.
const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;

fn run(args: &[String]) -> Result<String, String> {
    match args {
        [cmd, root] if cmd == "analyze-tree" => {
            json(&analyze_tree(Path::new(root), MAX_FILE_BYTES))
        }
        [cmd, file, threads, rest @ ..] if cmd == "analyze-sources" => {
            let text = std::fs::read_to_string(file).map_err(|e| format!("{file}: {e}"))?;
            let sources: Vec<(String, String)> =
                serde_json::from_str(&text).map_err(|e| format!("{file}: {e}"))?;
            let threads: usize = threads
                .parse()
                .map_err(|_| format!("THREADS must be a number, got {threads}"))?;
            let work = match rest {
                [] => Work::Extract,
                [mode] if mode == "parse" => Work::Parse,
                _ => return Err(format!("unexpected arguments {rest:?}")),
            };
            json(&analyze_sources(&sources, threads, work))
        }
        [cmd, model, file, rest @ ..] if cmd == "embed" => {
            let text = std::fs::read_to_string(file).map_err(|e| format!("{file}: {e}"))?;
            let texts: Vec<String> =
                serde_json::from_str(&text).map_err(|e| format!("{file}: {e}"))?;
            let long = match rest {
                [] => LongInputs::Truncate,
                [m] if m == "truncate" => LongInputs::Truncate,
                [m] if m == "pool" => LongInputs::Pool,
                _ => return Err(format!("unexpected arguments {rest:?}")),
            };
            json(&ann::embed(Path::new(model), &texts, long).map_err(|e| e.to_string())?)
        }
        [cmd, vectors, queries, dim, out, rest @ ..] if cmd == "ann" => {
            let dim: usize = dim
                .parse()
                .map_err(|_| format!("DIM must be a number, got {dim}"))?;
            let quantization = match rest {
                [] => "f32",
                [q] if ["f32", "f16", "i8"].contains(&q.as_str()) => q.as_str(),
                _ => return Err(format!("unexpected arguments {rest:?}")),
            };
            json(&ann::run(
                Path::new(vectors),
                Path::new(queries),
                dim,
                Path::new(out),
                quantization,
            )?)
        }
        _ => Err(
            "usage: tychora-bench analyze-tree ROOT | analyze-sources FILE THREADS [parse] | embed MODEL_DIR FILE [truncate|pool] | ann VECTORS QUERIES DIM OUT_DIR [f32|f16|i8]".into(),
        ),
    }
}

fn json<T: serde::Serialize>(value: &T) -> Result<String, String> {
    serde_json::to_string(value).map_err(|e| e.to_string())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(out) => {
            let mut stdout = std::io::stdout().lock();
            if writeln!(stdout, "{out}").is_err() {
                return ExitCode::FAILURE;
            }
            ExitCode::SUCCESS
        }
        Err(message) => {
            let _ = writeln!(std::io::stderr().lock(), "tychora-bench: {message}");
            ExitCode::from(2)
        }
    }
}
