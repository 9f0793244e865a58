//! Node-API binding for `tychora-core`: type conversion, scheduling off the event loop and error
//! codes only. Logic lives in the core or in TypeScript, never here.

// napi registers the exports when Node loads the addon; the test harness never calls them.
#![cfg_attr(test, allow(dead_code))]

mod contract;
mod describe;
mod error;
mod ingest;
mod manage;
mod operations;
mod packs;
mod pdf;
mod providers;
mod query;
mod summaries;
mod task;
mod workspace;

/// Rust allocations inside the addon go through mimalloc (Node's own heap is untouched): the local
/// embedder's tensor buffers made glibc spend 30% of the time in page faults (see Cargo.toml).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Routes the core's `log` records to stderr, filtered by `TYCHORA_LOG` (stdout belongs to MCP).
#[napi_derive::module_init]
fn init() {
    let _ = env_logger::Builder::from_env(env_logger::Env::new().filter_or("TYCHORA_LOG", "warn"))
        .target(env_logger::Target::Stderr)
        .try_init();
}
