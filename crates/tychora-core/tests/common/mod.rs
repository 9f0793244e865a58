//! Helpers shared by the integration tests.
// Each test crate uses its own subset of these.
#![allow(dead_code)]

pub mod opensearch;
pub mod postgres;
pub mod seaweed;
pub mod servers;
pub mod store;

use std::path::{Path, PathBuf};

use tychora_core::Workspace;
use tychora_core::ingest::{AddRequest, Receipt, Requester};

/// Adds `path` to the default collection and waits for the receipt.
pub fn add(ws: &Workspace, path: &Path) -> Receipt {
    try_add(ws, path).unwrap()
}

/// [`add`], for a test that expects it to fail.
pub fn try_add(ws: &Workspace, path: &Path) -> tychora_core::Result<Receipt> {
    ws.add(
        &AddRequest {
            paths: vec![path.display().to_string()],
            ..Default::default()
        },
        Requester::Owner,
        &|_| {},
    )
}

/// The local model's directory: `TYCHORA_TEST_MODEL`, else where the fetch script puts it.
pub fn model_dir() -> PathBuf {
    let dir = std::env::var_os("TYCHORA_TEST_MODEL").map_or_else(
        || {
            let home = std::env::var_os("HOME").expect("HOME");
            PathBuf::from(home).join(".cache/tychora/models/all-MiniLM-L6-v2")
        },
        PathBuf::from,
    );
    assert!(
        dir.join("model.safetensors").is_file(),
        "the local embedding model is missing at {}: run `node scripts/fetch-model.mjs`",
        dir.display()
    );
    dir
}
