//! Helpers shared by the integration tests.

use std::path::Path;

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
