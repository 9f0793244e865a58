//! Relations end to end: the RFCs' `Obsoletes:`/`Updates:` headers parsed into accepted
//! assertions with their supporting unit; a relation type declared in the pack manufactures
//! nothing; a declared assertion is checked (endpoint kinds, support, cardinality), a proposed
//! one waits for review, and each review is an event whose decision is the assertion's status.

use std::fs;
use std::path::{Path, PathBuf};

use tychora_core::ingest::{AddRequest, Requester};
use tychora_core::manage::DeclareRelation;
use tychora_core::manage::{Basis, Decision};
use tychora_core::{ErrorCode, Workspace};

fn rfc(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data/docs/rfc")
        .join(name)
}

fn add(ws: &Workspace, path: &Path, kind: Option<&str>) -> tychora_core::ingest::Receipt {
    ws.add(
        &AddRequest {
            paths: vec![path.display().to_string()],
            kind: kind.map(str::to_string),
            ..Default::default()
        },
        Requester::Owner,
        &|_| {},
    )
    .unwrap()
}

#[test]
#[cfg_attr(not(shared_data), ignore = "reads ../shared/data, not present")]
fn rfc_headers_are_parsed_into_assertions_and_declarations_are_checked_and_reviewed() {
    let tmp = tempfile::tempdir().unwrap();
    let docs = tmp.path().join("rfc");
    fs::create_dir_all(&docs).unwrap();
    for name in ["rfc3986.txt", "rfc6749.txt", "rfc2616.txt"] {
        fs::copy(rfc(name), docs.join(name)).unwrap();
    }
    let dir = tmp.path().join("ws");
    Workspace::init_with_profile(&dir, "documents").unwrap();
    let ws = Workspace::open(&dir).unwrap();
    let receipt = add(&ws, &docs, None);
    assert_eq!(receipt.files.added, 3, "{:?}", receipt.diagnostics);

    // RFC 3986: `Updates: 1738` and `Obsoletes: 2732, 2396, 1808`.
    let of_3986 = ws.list_relations(Some("RFC 3986"), None, None).unwrap();
    let mut stated: Vec<(String, String)> = of_3986
        .iter()
        .map(|a| (a.relation.clone(), a.to_key.clone()))
        .collect();
    stated.sort();
    assert_eq!(
        stated,
        [
            ("obsoletes".to_string(), "RFC 1808".to_string()),
            ("obsoletes".into(), "RFC 2396".into()),
            ("obsoletes".into(), "RFC 2732".into()),
            ("updates".into(), "RFC 1738".into()),
        ]
    );
    for a in &of_3986 {
        assert_eq!(
            (a.method.as_str(), a.status.as_str()),
            ("parsed", "accepted")
        );
        assert_eq!((a.from_kind.as_str(), a.to_kind.as_str()), ("rfc", "rfc"));
        let support = a.support.as_deref().unwrap();
        assert!(support.starts_with("rfc3986.txt:"), "{support}");
    }
    assert_eq!(
        ws.list_relations(Some("RFC 5849"), Some("obsoletes"), None)
            .unwrap()
            .len(),
        1
    );
    // Defined types with nothing to parse stay empty: declaring `supersedes` made no assertion.
    assert!(
        ws.list_relations(None, Some("supersedes"), None)
            .unwrap()
            .is_empty()
    );

    // Declarations between objects the store knows by name.
    let declare = |relation: &str, from: &str, to: &str, evidence: Option<&str>, propose: bool| {
        ws.declare_relation(&DeclareRelation {
            relation: relation.into(),
            from: from.into(),
            to: to.into(),
            evidence: evidence.map(str::to_string),
            propose,
            ..Default::default()
        })
    };
    // Support is required.
    let e = declare("updates", "RFC 6749", "RFC 2616", None, false).unwrap_err();
    assert_eq!(e.code(), ErrorCode::InvalidArgument, "{e}");
    assert!(e.to_string().contains("cite the evidence"), "{e}");
    // An endpoint the store does not hold.
    let e = declare("updates", "RFC 6749", "RFC 9999", Some("unit:1"), false).unwrap_err();
    assert_eq!(e.code(), ErrorCode::NotFound, "{e}");
    // A kind the type does not join: `supersedes` is between decisions.
    let e = declare("supersedes", "RFC 6749", "RFC 2616", Some("unit:1"), false).unwrap_err();
    assert!(e.to_string().contains("cannot be of kind \"rfc\""), "{e}");
    // Cardinality: RFC 2396 is already obsoleted by RFC 3986 (one_to_many).
    let e = declare("obsoletes", "RFC 6749", "RFC 2396", Some("unit:1"), false).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Conflict, "{e}");
    assert!(e.to_string().contains("RFC 3986 obsoletes RFC 2396"), "{e}");
    // Nothing of the refused ones was stored.
    assert_eq!(
        ws.list_relations(Some("RFC 6749"), None, None)
            .unwrap()
            .len(),
        1
    );

    // A proposal waits for review; its review is an event and its decision the status.
    let proposed = declare("updates", "RFC 6749", "RFC 2616", Some("unit:1"), true).unwrap();
    assert_eq!(proposed.status, Decision::Proposed);
    assert_eq!(proposed.method, Basis::Proposed);
    let commented = ws
        .review_relation(proposed.id, "comment", "reviewer", Some("checking"))
        .unwrap();
    assert_eq!(commented.status, Decision::Proposed);
    let rejected = ws
        .review_relation(proposed.id, "reject", "reviewer", Some("it does not"))
        .unwrap();
    assert_eq!(rejected.status, Decision::Rejected);
    let accepted = ws
        .review_relation(proposed.id, "accept", "reviewer", None)
        .unwrap();
    assert_eq!(accepted.status, Decision::Accepted);
    assert_eq!(
        ws.review_relation(proposed.id, "approve", "x", None)
            .unwrap_err()
            .code(),
        ErrorCode::InvalidArgument
    );
    assert_eq!(
        ws.review_relation(999, "accept", "x", None)
            .unwrap_err()
            .code(),
        ErrorCode::NotFound
    );

    // An answer from RFC 3986 says what it obsoletes and updates; one from RFC 6749 now also
    // says it updates RFC 2616 (accepted on review).
    let answer = ws
        .search(&tychora_core::query::QueryRequest {
            query: "RFC 3986 §3.2.2".into(),
            limit: Some(1),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(answer.segments[0].source.path, "rfc3986.txt");
    let said: Vec<String> = answer
        .relations
        .iter()
        .map(|r| format!("{} {} {}", r.from_key, r.relation, r.to_key))
        .collect();
    assert_eq!(
        said,
        [
            "RFC 3986 obsoletes RFC 1808",
            "RFC 3986 obsoletes RFC 2396",
            "RFC 3986 obsoletes RFC 2732",
            "RFC 3986 updates RFC 1738",
        ]
    );
    let oauth = ws
        .search(&tychora_core::query::QueryRequest {
            query: "RFC 6749 §4.1.2".into(),
            limit: Some(1),
            ..Default::default()
        })
        .unwrap();
    assert!(
        oauth
            .relations
            .iter()
            .any(|r| r.relation == "updates" && r.to_key == "RFC 2616" && r.method == "proposed"),
        "{:?}",
        oauth.relations
    );

    // A second capture of the same RFC re-reads nothing and duplicates nothing.
    let again = add(&ws, &docs, None);
    assert_eq!(again.files.unchanged, 3);
    assert_eq!(
        ws.list_relations(Some("RFC 3986"), None, None)
            .unwrap()
            .len(),
        4
    );
}
