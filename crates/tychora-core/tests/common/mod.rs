//! Helpers shared by the integration tests.

use std::path::Path;

use tychora_core::Workspace;
use tychora_core::ingest::{AddRequest, Receipt, Requester};

/// Adds `path` to the default collection and waits for the receipt.
pub fn add(ws: &Workspace, path: &Path) -> Receipt {
    ws.add(
        &AddRequest {
            paths: vec![path.display().to_string()],
            ..Default::default()
        },
        Requester::Owner,
        &|_| {},
    )
    .unwrap()
}
