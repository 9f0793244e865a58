//! Trust: a collection's trust is fixed when it is created; a capture of another trust is refused
//! from anyone; only the owner may stamp a capture as curated knowledge; and every segment says
//! how far it can be trusted and how current it is.

use std::path::Path;

use tychora_core::ingest::{AddRequest, Requester};
use tychora_core::query::QueryRequest;
use tychora_core::trust::{Stamp, Trust};
use tychora_core::{ErrorCode, Workspace};

fn add(
    ws: &Workspace,
    path: &Path,
    collection: &str,
    stamp: Option<Stamp>,
    requester: Requester,
) -> tychora_core::Result<tychora_core::ingest::Receipt> {
    ws.add(
        &AddRequest {
            paths: vec![path.display().to_string()],
            collection: Some(collection.into()),
            stamp,
            ..Default::default()
        },
        requester,
        &|_| {},
    )
}

fn approved(as_of: i64) -> Option<Stamp> {
    Some(Stamp {
        trust: Trust::Approved,
        as_of,
        origin: "0001-create-freeze".into(),
    })
}

#[test]
fn curated_knowledge_is_written_only_with_its_stamp_and_says_so_in_every_segment() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("ws");
    Workspace::init_with_profile(&dir, "documents").unwrap();
    let ws = Workspace::open(&dir).unwrap();
    let bodies = tmp.path().join("bodies");
    std::fs::create_dir_all(&bodies).unwrap();
    let freeze = bodies.join("freeze.md");
    std::fs::write(
        &freeze,
        "# Release freeze\n\nNo releases during the December freeze window.\n",
    )
    .unwrap();
    let note = bodies.join("note.md");
    std::fs::write(
        &note,
        "# Note\n\nA captured note about the freeze window.\n",
    )
    .unwrap();

    // An agent cannot stamp, whatever the collection; nothing is published.
    let refused = add(&ws, &freeze, "knowledge", approved(1), Requester::Agent).unwrap_err();
    assert_eq!(refused.code(), ErrorCode::Forbidden);

    let receipt = add(
        &ws,
        &freeze,
        "knowledge",
        approved(1_764_000_000_000),
        Requester::Owner,
    )
    .unwrap();
    assert!(receipt.published);
    // A capture without the stamp into approved knowledge is refused, the owner's too; a stamped
    // capture into a collection of captured sources likewise.
    assert_eq!(
        add(&ws, &note, "knowledge", None, Requester::Owner)
            .unwrap_err()
            .code(),
        ErrorCode::Forbidden
    );
    add(&ws, &note, "notes", None, Requester::Owner).unwrap();
    assert_eq!(
        add(&ws, &freeze, "notes", approved(2), Requester::Owner)
            .unwrap_err()
            .code(),
        ErrorCode::Forbidden
    );

    let result = ws
        .search(&QueryRequest {
            query: "freeze window".into(),
            ..Default::default()
        })
        .unwrap();
    let knowledge = result
        .segments
        .iter()
        .find(|s| s.source.collection == "knowledge")
        .unwrap();
    assert_eq!(knowledge.trust_level, Trust::Approved);
    // A lane of its own, first: what a person approved reads apart from what was only captured.
    assert_eq!(knowledge.source.lane.as_deref(), Some("approved_knowledge"));
    assert_eq!(
        result.lanes.first().map(String::as_str),
        Some("approved_knowledge")
    );
    assert_eq!(
        (knowledge.freshness.as_of, knowledge.freshness.basis),
        (1_764_000_000_000, "reviewed")
    );
    let captured = result
        .segments
        .iter()
        .find(|s| s.source.collection == "notes")
        .unwrap();
    assert_eq!(captured.trust_level, Trust::CapturedSource);
    assert_eq!(captured.freshness.basis, "captured");
    assert!(captured.freshness.as_of > 1_764_000_000_000);
}
