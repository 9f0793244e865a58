//! Facets end to end: values set by `add --kind K --facet NAME=VALUE`, typed by the kind; query
//! conditions that narrow every channel before it ranks (exact, lexical, text), with coverage
//! that counts only what the conditions admit; a changed value applies without a new snapshot;
//! values of the wrong type, and facets without a kind that declares them, are refused with
//! nothing published.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use tychora_core::ingest::{AddRequest, Requester};
use tychora_core::query::{QueryRequest, QueryResult};
use tychora_core::{ErrorCode, Workspace};

fn add(
    ws: &Workspace,
    path: &Path,
    kind: &str,
    facets: &[(&str, serde_json::Value)],
) -> tychora_core::Result<tychora_core::ingest::Receipt> {
    ws.add(
        &AddRequest {
            paths: vec![path.display().to_string()],
            kind: Some(kind.into()),
            facets: facets
                .iter()
                .map(|(k, v)| ((*k).to_string(), v.clone()))
                .collect::<BTreeMap<_, _>>(),
            ..Default::default()
        },
        Requester::Owner,
        &|_| {},
    )
}

fn search(ws: &Workspace, query: &str, facets: &[&str], channels: &[&str]) -> QueryResult {
    try_search(ws, query, facets, channels).unwrap()
}

fn try_search(
    ws: &Workspace,
    query: &str,
    facets: &[&str],
    channels: &[&str],
) -> tychora_core::Result<QueryResult> {
    ws.search(&QueryRequest {
        query: query.into(),
        facets: facets.iter().map(|f| (*f).to_string()).collect(),
        channels: Some(channels.iter().map(|c| (*c).to_string()).collect()),
        ..Default::default()
    })
}

fn paths(result: &QueryResult) -> Vec<String> {
    let mut out: Vec<String> = result
        .segments
        .iter()
        .map(|s| s.source.path.clone())
        .collect();
    out.sort();
    out.dedup();
    out
}

/// Three requirement files, one per verification level, and a guidance note; every one mentions
/// password length and the requirement id V2.1.1.
fn write_standards(dir: &Path) -> Vec<PathBuf> {
    std::fs::create_dir_all(dir).unwrap();
    let mut out = Vec::new();
    for level in 1..=3 {
        let path = dir.join(format!("level{level}.md"));
        std::fs::write(
            &path,
            format!(
                "# Level {level} requirements\n\nV2.1.1 Verify that the password length is at least {} characters at level {level}.\n",
                6 + level * 2
            ),
        )
        .unwrap();
        out.push(path);
    }
    let note = dir.join("note.md");
    std::fs::write(
        &note,
        "# A note\n\nV2.1.1 says a longer password length helps; this note is guidance.\n",
    )
    .unwrap();
    out.push(note);
    out
}

fn workspace(root: &Path) -> Workspace {
    let dir = root.join("ws");
    Workspace::init_with_profile(&dir, "documents").unwrap();
    Workspace::open(&dir).unwrap()
}

#[test]
fn facet_conditions_narrow_exact_and_lexical_and_coverage_counts_only_what_they_admit() {
    let tmp = tempfile::tempdir().unwrap();
    let files = write_standards(&tmp.path().join("docs"));
    let ws = workspace(tmp.path());
    for (level, path) in files[..3].iter().enumerate() {
        add(
            &ws,
            path,
            "standard",
            &[("level", serde_json::json!(level + 1))],
        )
        .unwrap();
    }
    add(&ws, &files[3], "guidance", &[]).unwrap();

    for channels in [&["exact"][..], &["lexical"], &["exact", "lexical"]] {
        let all = search(&ws, "V2.1.1 password length", &[], channels);
        assert_eq!(
            paths(&all),
            ["level1.md", "level2.md", "level3.md", "note.md"],
            "{channels:?}"
        );
        assert_eq!(all.coverage.eligible_sources, 4);
        let low = search(&ws, "V2.1.1 password length", &["level<=2"], channels);
        assert_eq!(paths(&low), ["level1.md", "level2.md"], "{channels:?}");
        // Counts do not reveal what the condition excluded.
        assert_eq!(low.coverage.eligible_sources, 2);
        for channel in &low.coverage.channels {
            assert!(channel.candidates <= 2, "{channel:?}");
        }
        assert_eq!(low.applied_scope.facets, vec!["level<=2".to_string()]);
        let range = search(&ws, "V2.1.1 password length", &["level=2..3"], channels);
        assert_eq!(paths(&range), ["level2.md", "level3.md"]);
        let none = search(&ws, "V2.1.1 password length", &["level>3"], channels);
        assert!(none.segments.is_empty());
        assert_eq!(none.coverage.eligible_sources, 0);
    }

    // A facet condition and a kind filter both hold.
    let both = ws
        .search(&QueryRequest {
            query: "password length".into(),
            kinds: vec!["standard".into()],
            facets: vec!["level!=1".into()],
            ..Default::default()
        })
        .unwrap();
    assert_eq!(paths(&both), ["level2.md", "level3.md"]);

    // The values are the source's, shown by inspect.
    let level3 = both
        .segments
        .iter()
        .find(|s| s.source.path == "level3.md")
        .unwrap()
        .source
        .source_id;
    let shown = serde_json::to_value(ws.inspect(&format!("source:{level3}")).unwrap()).unwrap();
    assert_eq!(
        shown["facets"],
        serde_json::json!({ "level": 3.0 }),
        "{shown}"
    );
}

#[test]
fn a_changed_value_applies_without_a_new_snapshot_and_bad_values_change_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let files = write_standards(&tmp.path().join("docs"));
    let ws = workspace(tmp.path());
    add(
        &ws,
        &files[0],
        "standard",
        &[("level", serde_json::json!(1))],
    )
    .unwrap();
    let before = ws.status().unwrap().current_snapshot.map(|s| s.id);
    assert_eq!(
        paths(&search(&ws, "password", &["level=1"], &["lexical"])),
        ["level1.md"]
    );

    // The same bytes, another level: no new snapshot, and the condition reads the new value.
    let receipt = add(
        &ws,
        &files[0],
        "standard",
        &[("level", serde_json::json!("3"))],
    )
    .unwrap();
    assert_eq!(receipt.files.unchanged, 1);
    assert_eq!(ws.status().unwrap().current_snapshot.map(|s| s.id), before);
    assert!(
        search(&ws, "password", &["level=1"], &["lexical"])
            .segments
            .is_empty()
    );
    assert_eq!(
        paths(&search(&ws, "password", &["level=3"], &["lexical"])),
        ["level1.md"]
    );

    // An add without --facet keeps the values.
    add(&ws, &files[0], "standard", &[]).unwrap();
    assert_eq!(
        paths(&search(&ws, "password", &["level=3"], &["lexical"])),
        ["level1.md"]
    );

    // Refused before anything is read: the wrong type, a facet the kind does not declare, a
    // facet without a kind.
    for (kind, facets, expected) in [
        (
            "standard",
            vec![("level", serde_json::json!("two"))],
            "a number",
        ),
        (
            "guidance",
            vec![("level", serde_json::json!(2))],
            "declares no facet",
        ),
        (
            "standard",
            vec![("colour", serde_json::json!("red"))],
            "declares no facet",
        ),
        (
            "standard",
            vec![("level", serde_json::json!([1, 2]))],
            "expected a string",
        ),
    ] {
        let e = add(&ws, &files[1], kind, &facets).unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidArgument, "{e}");
        assert!(e.to_string().contains(expected), "{e}");
    }
    let e = ws
        .add(
            &AddRequest {
                paths: vec![files[1].display().to_string()],
                facets: BTreeMap::from([("level".into(), serde_json::json!(2))]),
                ..Default::default()
            },
            Requester::Owner,
            &|_| {},
        )
        .unwrap_err();
    assert!(e.to_string().contains("--kind"), "{e}");
    assert_eq!(ws.status().unwrap().current_snapshot.map(|s| s.id), before);
    assert_eq!(
        paths(&search(&ws, "password", &[], &["lexical"])),
        ["level1.md"]
    );

    // Conditions are typed too.
    for bad in ["level=two", "colour=red", "decided=2024-02-30", "level"] {
        let e = try_search(&ws, "password", &[bad], &["lexical"]).unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidArgument, "{bad}: {e}");
    }
}

#[test]
fn date_ranges_select_decisions() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("decisions");
    std::fs::create_dir_all(&dir).unwrap();
    let ws = workspace(tmp.path());
    for (name, day) in [
        ("a.md", "2023-06-30"),
        ("b.md", "2024-03-01"),
        ("c.md", "2024-12-31"),
        ("d.md", "2025-01-01"),
    ] {
        let path = dir.join(name);
        std::fs::write(
            &path,
            format!("# Decision\n\nWe decided on caching on {day}.\n"),
        )
        .unwrap();
        add(
            &ws,
            &path,
            "decision",
            &[
                ("decided", serde_json::json!(day)),
                ("status", serde_json::json!("accepted")),
            ],
        )
        .unwrap();
    }
    let in_2024 = search(
        &ws,
        "decided caching",
        &["decided=2024-01-01..2024-12-31", "status=accepted"],
        &["lexical"],
    );
    assert_eq!(paths(&in_2024), ["b.md", "c.md"]);
    let since = search(
        &ws,
        "decided caching",
        &["decided>=2024-12-31"],
        &["lexical"],
    );
    assert_eq!(paths(&since), ["c.md", "d.md"]);
    assert!(
        search(&ws, "decided caching", &["status=superseded"], &["lexical"])
            .segments
            .is_empty()
    );
}
