//! The artifact port, one contract run against both adapters: the workspace's folder and an
//! S3 bucket on a real SeaweedFS server (tests/common/seaweed.rs). Then a whole workspace whose
//! artifacts live in the bucket: add, search, inspect, verify, erasure, retention and backup,
//! with nothing written under its `artifacts/` folder.

mod common;

use std::path::Path;
use std::sync::Arc;

use common::seaweed::Seaweed;
use tychora_core::artifact::{ArtifactStore, S3Artifacts, S3Location, sha256_hex};
use tychora_core::query::QueryRequest;
use tychora_core::{ErrorCode, Workspace};

fn bucket(server: &Seaweed, prefix: &str) -> ArtifactStore {
    server.credentials();
    ArtifactStore::with(Arc::new(
        S3Artifacts::open(&S3Location {
            url: format!("s3://{}/{prefix}", server.bucket),
            endpoint: Some(server.endpoint.clone()),
            region: None,
            allow_http: true,
        })
        .unwrap(),
    ))
}

/// What every adapter does: create-only puts, verified reads, exists, delete, list.
fn contract(store: &ArtifactStore) {
    let (a, b) = (b"first artifact".as_slice(), vec![7u8; 3 << 20]);
    let (sha_a, sha_b) = (sha256_hex(a), sha256_hex(&b));
    assert!(!store.exists(&sha_a).unwrap());
    assert_eq!(store.get(&sha_a).unwrap_err().code(), ErrorCode::NotFound);
    store.put(&sha_a, a).unwrap();
    store.put(&sha_a, a).unwrap(); // a second put of the same bytes is a no-op
    store.put(&sha_b, &b).unwrap();
    assert!(store.exists(&sha_a).unwrap());
    assert_eq!(store.get(&sha_a).unwrap(), a);
    assert_eq!(store.get(&sha_b).unwrap(), b);
    let mut listed = store.list().unwrap();
    listed.sort();
    let mut expected = vec![
        (sha_a.clone(), a.len() as u64),
        (sha_b.clone(), b.len() as u64),
    ];
    expected.sort();
    assert_eq!(listed, expected);
    assert!(store.delete(&sha_a).unwrap());
    assert!(!store.delete(&sha_a).unwrap());
    assert!(!store.exists(&sha_a).unwrap());
    assert_eq!(store.list().unwrap().len(), 1);
    // Many at once: each answered in order, whether it was there; a bad name fails alone.
    let many: Vec<Vec<u8>> = (0..40u8).map(|i| vec![i; 100 + usize::from(i)]).collect();
    let many_shas: Vec<String> = many.iter().map(|m| sha256_hex(m)).collect();
    for (bytes, sha) in many.iter().zip(&many_shas) {
        store.put(sha, bytes).unwrap();
    }
    let mut asked: Vec<&str> = many_shas.iter().map(String::as_str).collect();
    asked.insert(5, &sha_a); // deleted above: not there
    asked.insert(9, "../not-a-sha256");
    let answers = store.delete_many(&asked);
    assert_eq!(answers.len(), asked.len());
    for (name, answer) in asked.iter().zip(&answers) {
        match *name {
            n if n == sha_a => assert!(!answer.as_ref().unwrap(), "{n}: not there"),
            "../not-a-sha256" => {
                assert_eq!(
                    answer.as_ref().unwrap_err().code(),
                    ErrorCode::InvalidArgument
                );
            }
            n => assert!(answer.as_ref().unwrap(), "{n}: removed"),
        }
    }
    assert_eq!(store.list().unwrap().len(), 1, "only b is left");
    assert!(store.delete_many(&[]).is_empty());
    // A name that is not a sha256 never reaches the adapter (no path or key can be smuggled in).
    for bad in ["../../etc/passwd", "ABCDEF", &sha_a.to_uppercase()] {
        assert_eq!(
            store.get(bad).unwrap_err().code(),
            ErrorCode::InvalidArgument,
            "{bad}"
        );
    }
}

#[test]
fn the_folder_adapter_keeps_the_contract() {
    let dir = tempfile::tempdir().unwrap();
    contract(&ArtifactStore::new(dir.path().join("artifacts")));
}

#[test]
fn the_bucket_adapter_keeps_the_contract_and_names_its_failures() {
    let Some(server) = Seaweed::start() else {
        return;
    };
    let store = bucket(&server, "contract");
    contract(&store);
    assert_eq!(store.location(), format!("s3://{}/contract", server.bucket));
    assert!(store.local_path(&sha256_hex(b"x")).is_none());

    // Create-only: an object of the same name is never replaced, even by other bytes.
    let sha = sha256_hex(b"kept");
    store.put(&sha, b"kept").unwrap();
    let other = bucket(&server, "contract");
    other.put(&sha, b"kept").unwrap();
    assert_eq!(store.get(&sha).unwrap(), b"kept");

    // Two prefixes in one bucket do not see each other's objects.
    assert!(!bucket(&server, "elsewhere").exists(&sha).unwrap());

    // A missing bucket, an unreachable endpoint, wrong credentials: E_STORE_UNAVAILABLE, with the
    // bucket named and no secret in the message.
    let missing = ArtifactStore::with(Arc::new(
        S3Artifacts::open(&S3Location {
            url: "s3://no-such-bucket/p".into(),
            endpoint: Some(server.endpoint.clone()),
            region: None,
            allow_http: true,
        })
        .unwrap(),
    ));
    let err = missing.put(&sha, b"kept").unwrap_err();
    assert_eq!(err.code(), ErrorCode::StoreUnavailable, "{err}");
    assert!(err.to_string().contains("s3://no-such-bucket/p"), "{err}");
    let err = missing.get(&sha).unwrap_err();
    assert_eq!(err.code(), ErrorCode::StoreUnavailable, "{err}");
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let unreachable = ArtifactStore::with(Arc::new(
        S3Artifacts::open(&S3Location {
            url: format!("s3://{}/p", server.bucket),
            endpoint: Some(format!("http://127.0.0.1:{closed}")),
            region: None,
            allow_http: true,
        })
        .unwrap(),
    ));
    let started = std::time::Instant::now();
    let err = unreachable.get(&sha).unwrap_err();
    assert_eq!(err.code(), ErrorCode::StoreUnavailable, "{err}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
    // SAFETY: this file's tests set these variables to the same values; restored below.
    unsafe { std::env::set_var("AWS_SECRET_ACCESS_KEY", "not-the-secret") };
    let forged = S3Artifacts::open(&S3Location {
        url: format!("s3://{}/contract", server.bucket),
        endpoint: Some(server.endpoint.clone()),
        region: None,
        allow_http: true,
    })
    .unwrap();
    server.credentials();
    let err = ArtifactStore::with(Arc::new(forged)).get(&sha).unwrap_err();
    assert_eq!(err.code(), ErrorCode::StoreUnavailable, "{err}");
    assert!(!err.to_string().contains("not-the-secret"), "{err}");

    // A URL that is not s3://bucket[/prefix], or carries credentials, is refused before any call.
    for url in ["https://bucket/p", "s3://", "s3://user:pass@bucket/p"] {
        let err = S3Artifacts::open(&S3Location {
            url: url.into(),
            ..S3Location::default()
        })
        .unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidArgument, "{url}");
        assert!(
            !err.to_string().contains("pass@") || url.contains("pass@"),
            "{err}"
        );
    }
}

/// Replaces an object unconditionally, as a person with the bucket's keys could (the store never does).
fn overwrite(server: &Seaweed, key: &str, bytes: &[u8]) {
    use object_store::ObjectStore as _;
    let raw = object_store::aws::AmazonS3Builder::from_env()
        .with_bucket_name(&server.bucket)
        .with_endpoint(&server.endpoint)
        .with_allow_http(true)
        .with_region("us-east-1")
        .build()
        .unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime
        .block_on(raw.put(&object_store::path::Path::from(key), bytes.to_vec().into()))
        .unwrap();
}

fn docs(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    for (name, text) in [
        ("alpha.md", "# Alpha\n\nGlaciers retreat in warm summers.\n"),
        (
            "beta.md",
            "# Beta\n\nVolcanoes vent sulphur into the stratosphere.\n",
        ),
        (
            "delta.md",
            "# Delta\n\nRiver deltas build land from sediment.\n",
        ),
    ] {
        std::fs::write(dir.join(name), text).unwrap();
    }
}

fn search(ws: &Workspace, query: &str) -> Vec<String> {
    ws.search(&QueryRequest {
        query: query.into(),
        ..Default::default()
    })
    .unwrap()
    .segments
    .iter()
    .map(|s| s.text.clone())
    .collect()
}

#[test]
fn a_workspace_keeps_its_artifacts_in_the_bucket() {
    let Some(server) = Seaweed::start() else {
        return;
    };
    server.credentials();
    let tmp = tempfile::tempdir().unwrap();
    let (ws_dir, corpus) = (tmp.path().join("ws"), tmp.path().join("docs"));
    docs(&corpus);
    Workspace::init(&ws_dir).unwrap();
    let toml = ws_dir.join("workspace.toml");
    std::fs::write(
        &toml,
        std::fs::read_to_string(&toml).unwrap() + &server.toml("ws1"),
    )
    .unwrap();
    let ws = Workspace::open(&ws_dir).unwrap();
    assert_eq!(
        ws.artifact_location(),
        format!("s3://{}/ws1", server.bucket)
    );
    common::add(&ws, &corpus);
    let hits = search(&ws, "river deltas sediment");
    assert!(hits[0].contains("River deltas build land"), "{hits:?}");
    // Nothing under the workspace's own folder: every original is in the bucket.
    let local = ws_dir.join("artifacts/sha256");
    assert!(!local.exists() || std::fs::read_dir(&local).unwrap().next().is_none());
    let bucket = bucket(&server, "ws1");
    assert_eq!(bucket.list().unwrap().len(), 3);
    let hit = &ws
        .search(&QueryRequest {
            query: "river deltas sediment".into(),
            ..Default::default()
        })
        .unwrap()
        .segments[0];
    let sha = hit.revision.sha256.clone();
    assert_eq!(
        ws.artifact(&sha).unwrap(),
        std::fs::read(corpus.join("delta.md")).unwrap()
    );
    let verify = ws.verify().unwrap();
    assert!(verify.ok, "{:?}", verify.problems);
    let sizes: u64 = ["alpha.md", "beta.md", "delta.md"]
        .iter()
        .map(|n| std::fs::metadata(corpus.join(n)).unwrap().len())
        .sum();
    assert_eq!(ws.status().unwrap().bytes.artifacts, sizes);

    // A backup holds the artifacts as files, fetched from the bucket and checked.
    let backup = tmp.path().join("backup");
    ws.backup(&backup).unwrap();
    let copied = backup.join("artifacts/sha256").join(&sha[..2]).join(&sha);
    assert_eq!(
        std::fs::read(copied).unwrap(),
        std::fs::read(corpus.join("delta.md")).unwrap()
    );

    // An object whose bytes no longer match its key (replaced behind the store's back): refused
    // on read, reported by verify.
    let alpha = sha256_hex(&std::fs::read(corpus.join("alpha.md")).unwrap());
    overwrite(
        &server,
        &format!("ws1/sha256/{}/{alpha}", &alpha[..2]),
        b"tampered",
    );
    assert_eq!(
        ws.artifact(&alpha).unwrap_err().code(),
        ErrorCode::ChecksumMismatch
    );
    let verify = ws.verify().unwrap();
    assert!(!verify.ok);
    assert!(
        verify
            .problems
            .iter()
            .any(|p| p.code == ErrorCode::ChecksumMismatch && p.object.contains(&alpha)),
        "{:?}",
        verify.problems
    );
    overwrite(
        &server,
        &format!("ws1/sha256/{}/{alpha}", &alpha[..2]),
        &std::fs::read(corpus.join("alpha.md")).unwrap(),
    );

    // Erasure removes the object from the bucket; verify agrees it is gone on purpose.
    ws.delete_original(
        &format!("revision:{}", hit.revision.revision_id),
        "request 2026-12",
        &|_| {},
    )
    .unwrap();
    assert!(!bucket.exists(&sha).unwrap());
    assert_eq!(ws.artifact(&sha).unwrap_err().code(), ErrorCode::NotFound);
    assert!(
        search(&ws, "river deltas sediment")
            .iter()
            .all(|t| !t.contains("River deltas"))
    );
    let verify = ws.verify().unwrap();
    assert!(verify.ok, "{:?}", verify.problems);
    let findings = ws.doctor().unwrap();
    let orphans = findings
        .iter()
        .find(|f| f.check == "orphaned originals")
        .unwrap();
    assert!(
        orphans
            .detail
            .contains(&format!("s3://{}/ws1", server.bucket)),
        "{orphans:?}"
    );
}
