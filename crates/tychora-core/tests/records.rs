//! Structured records end to end, on the OWASP ASVS 5.0 standard as the shared data holds it: the
//! chapter's Markdown table, the CSV and the JSON give one requirement record per id, with three
//! pieces of evidence and its level as a facet; `--facet level=N` keeps to the windows holding
//! such records; a row that breaks the record schema is a diagnostic naming the schema path;
//! sources that disagree are reported.

use std::fs;
use std::path::{Path, PathBuf};

use tychora_core::ingest::{AddRequest, Receipt, Requester};
use tychora_core::manage::RecordQuery;
use tychora_core::query::{QueryRequest, QueryResult};
use tychora_core::{ErrorCode, Workspace};

fn asvs(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data/docs/owasp-asvs-5.0")
        .join(name)
}

const CSV: &str = "OWASP_Application_Security_Verification_Standard_5.0.0_en.csv";
const JSON: &str = "OWASP_Application_Security_Verification_Standard_5.0.0_en.flat.json";
const CHAPTER: &str = "md/0x10-V1-Encoding-and-Sanitization.md";
const DOCX: &str = "OWASP_Application_Security_Verification_Standard_5.0.0_en.docx";

fn add_standard(ws: &Workspace, path: &Path) -> Receipt {
    ws.add(
        &AddRequest {
            paths: vec![path.display().to_string()],
            kind: Some("standard".into()),
            ..Default::default()
        },
        Requester::Owner,
        &|_| {},
    )
    .unwrap()
}

fn search(ws: &Workspace, query: &str, facets: &[&str], channels: &[&str]) -> QueryResult {
    ws.search(&QueryRequest {
        query: query.into(),
        facets: facets.iter().map(|f| (*f).to_string()).collect(),
        channels: Some(channels.iter().map(|c| (*c).to_string()).collect()),
        max_per_source: Some(0),
        limit: Some(30),
        ..Default::default()
    })
    .unwrap()
}

/// Levels by requirement id, read from the CSV with the same crate the engine uses.
fn csv_levels() -> Vec<(String, String)> {
    let mut reader = csv::Reader::from_path(asvs(CSV)).unwrap();
    reader
        .records()
        .map(|r| {
            let r = r.unwrap();
            (r[4].to_string(), r[6].to_string())
        })
        .collect()
}

#[test]
#[cfg_attr(not(shared_data), ignore = "reads ../shared/data, not present")]
fn one_requirement_record_per_id_from_markdown_csv_and_json_with_its_level_as_a_facet() {
    let tmp = tempfile::tempdir().unwrap();
    let docs = tmp.path().join("asvs");
    fs::create_dir_all(&docs).unwrap();
    for name in [CSV, JSON, CHAPTER, DOCX] {
        fs::copy(asvs(name), docs.join(Path::new(name).file_name().unwrap())).unwrap();
    }
    let dir = tmp.path().join("ws");
    Workspace::init_with_profile(&dir, "documents").unwrap();
    let ws = Workspace::open(&dir).unwrap();
    let receipt = add_standard(&ws, &docs);
    assert_eq!(receipt.files.added, 4, "{:?}", receipt.diagnostics);
    // The four statements of the standard agree, typography aside (curly quotes, dashes,
    // Markdown escapes): no invalid record, and the few conflicts are real differences in words.
    assert!(
        receipt
            .diagnostics
            .iter()
            .all(|d| d.level == tychora_core::Level::Info),
        "{:?}",
        receipt.diagnostics
    );
    let conflicts: Vec<&str> = receipt
        .diagnostics
        .iter()
        .filter(|d| d.code == ErrorCode::Conflict)
        .map(|d| d.message.as_str())
        .collect();
    assert!(conflicts.len() <= 6, "{conflicts:#?}");

    let levels = csv_levels();
    assert_eq!(levels.len(), 345);
    let all = ws
        .list_records(&RecordQuery {
            kind: Some("standard".into()),
            record_type: Some("requirement".into()),
            limit: Some(1000),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(all.total, 345);
    for level in ["1", "2", "3"] {
        let listed = ws
            .list_records(&RecordQuery {
                facets: vec![format!("level={level}")],
                limit: Some(1000),
                ..Default::default()
            })
            .unwrap();
        let expected = levels.iter().filter(|(_, l)| l == level).count();
        assert_eq!(listed.total as usize, expected, "level {level}");
    }

    // V1.2.1: one record, stated by the chapter's table row, the CSV row, the JSON object and the
    // Word document's table row.
    let record = ws.show_record("V1.2.1", None).unwrap();
    assert_eq!(record.record.body["level"], 1);
    assert_eq!(record.record.body["chapter"], "V1");
    assert_eq!(record.record.body["section"], "V1.2");
    let mut formats: Vec<&str> = record.evidence.iter().map(|e| e.format.as_str()).collect();
    formats.sort_unstable();
    assert_eq!(formats, ["csv", "docx", "json", "markdown"]);
    let docx = record.evidence.iter().find(|e| e.format == "docx").unwrap();
    assert_eq!(
        docx.body, record.evidence[0].body,
        "the Word row states what the CSV row does"
    );
    let md = record
        .evidence
        .iter()
        .find(|e| e.format == "markdown")
        .unwrap();
    let chapter = fs::read_to_string(asvs(CHAPTER)).unwrap();
    let line = md
        .citation
        .rsplit(':')
        .next()
        .unwrap()
        .split('-')
        .next()
        .unwrap();
    let row = chapter
        .lines()
        .nth(line.parse::<usize>().unwrap() - 1)
        .unwrap();
    assert!(row.starts_with("| **1.2.1** |"), "{row}");
    let json = record.evidence.iter().find(|e| e.format == "json").unwrap();
    assert!(
        json.json_pointer
            .as_deref()
            .unwrap()
            .starts_with("/requirements/")
    );

    // The exact channel finds the id where the table writes `**1.2.1**`, and in the CSV and JSON.
    let exact = search(&ws, "V1.2.1", &[], &["exact"]);
    let mut paths: Vec<&str> = exact
        .segments
        .iter()
        .map(|s| s.source.path.as_str())
        .collect();
    paths.sort_unstable();
    paths.dedup();
    assert_eq!(paths.len(), 4, "{paths:?}");

    // A record's facet admits the windows holding it: the CSV row of V1.2.6 (level 2) only
    // with level 2.
    let ldap = |facets: &[&str]| {
        search(&ws, "LDAP injection", facets, &["lexical"])
            .segments
            .into_iter()
            .filter(|s| s.source.format == "csv")
            .map(|s| s.text)
            .collect::<Vec<_>>()
    };
    assert!(ldap(&[]).iter().any(|t| t.contains("V1.2.6")));
    assert!(ldap(&["level=1"]).iter().all(|t| !t.contains("V1.2.6")));
    assert!(ldap(&["level=2"]).iter().any(|t| t.contains("V1.2.6")));
    let counted = search(
        &ws,
        "LDAP injection",
        &["level=1", "chapter=V1"],
        &["lexical"],
    );
    assert_eq!(counted.coverage.eligible_sources, 4);
}

#[test]
fn a_row_that_breaks_the_schema_is_a_diagnostic_and_disagreeing_sources_are_reported() {
    let tmp = tempfile::tempdir().unwrap();
    let docs = tmp.path().join("docs");
    fs::create_dir_all(&docs).unwrap();
    fs::write(
        docs.join("a.csv"),
        "req_id,req_description,L\nV9.1.1,Verify that secrets are rotated.,1\nV9.1.2,Verify nothing.,7\n",
    )
    .unwrap();
    let dir = tmp.path().join("ws");
    Workspace::init_with_profile(&dir, "documents").unwrap();
    let ws = Workspace::open(&dir).unwrap();
    let receipt = add_standard(&ws, &docs);
    let invalid = receipt
        .diagnostics
        .iter()
        .find(|d| d.message.contains("V9.1.2"))
        .unwrap_or_else(|| panic!("{:?}", receipt.diagnostics));
    assert!(invalid.message.contains("/level"), "{}", invalid.message);
    assert!(
        invalid.message.contains("/properties/level/maximum"),
        "{}",
        invalid.message
    );
    assert_eq!(invalid.locator.as_deref(), Some("3:1"));
    assert!(ws.show_record("V9.1.2", None).is_err());
    // The row is still evidence: only the record is refused.
    assert!(
        search(&ws, "Verify nothing", &[], &["lexical"])
            .segments
            .iter()
            .any(|s| s.text.contains("V9.1.2,Verify nothing.,7"))
    );

    // Another source says V9.1.1 is level 3: reported, and the record now says 3.
    fs::write(
        docs.join("b.md"),
        "# V9\n\n| # | Description | Level |\n| --- | --- | --- |\n| **9.1.1** | Verify that secrets are rotated. | 3 |\n",
    )
    .unwrap();
    let receipt = add_standard(&ws, &docs);
    let conflict = receipt
        .diagnostics
        .iter()
        .find(|d| d.code == ErrorCode::Conflict)
        .unwrap_or_else(|| panic!("{:?}", receipt.diagnostics));
    assert!(
        conflict.message.contains("level is 3 here and 1 in a.csv"),
        "{}",
        conflict.message
    );
    let record = ws.show_record("V9.1.1", Some("standard")).unwrap();
    assert_eq!(record.record.body["level"], 3);
    assert_eq!(record.evidence.len(), 2);
}

#[test]
fn the_verified_profile_counts_a_record_once_reviewed_and_names_the_rest_as_gaps() {
    let tmp = tempfile::tempdir().unwrap();
    let docs = tmp.path().join("docs");
    fs::create_dir_all(&docs).unwrap();
    // A chapter table writes `9.1.1`: `V9.1.1` is only the record's key, not the text's.
    fs::write(
        docs.join("v9.md"),
        "# V9 Secrets\n\n| # | Description | Level |\n| --- | --- | --- |\n| **9.1.1** | Verify that secrets are rotated. | 1 |\n\nA paragraph between the tables.\n\n| # | Description | Level |\n| --- | --- | --- |\n| **9.1.2** | Verify that keys are stored in a vault. | 2 |\n",
    )
    .unwrap();
    let dir = tmp.path().join("ws");
    Workspace::init_with_profile(&dir, "verified").unwrap();
    let ws = Workspace::open(&dir).unwrap();
    add_standard(&ws, &docs);

    // Nothing reviewed: neither key is an exact hit nor a record facet; both are gaps.
    let before = search(&ws, "V9.1.1 V9.1.2", &[], &["exact"]);
    assert!(before.segments.is_empty(), "{:?}", before.segments);
    let gaps: Vec<&str> = before
        .coverage_gaps
        .iter()
        .map(|g| g.name.as_str())
        .collect();
    assert_eq!(gaps, ["V9.1.1", "V9.1.2"]);
    assert!(before.coverage_gaps[0].detail.contains("verified profile"));
    assert!(
        search(&ws, "secrets vault", &["level=1"], &["lexical"])
            .segments
            .is_empty()
    );

    // Reviewed, V9.1.1 counts; rejected, V9.1.2 stays out.
    assert_eq!(
        ws.review_record("V9.1.1", None, "accept")
            .unwrap()
            .record
            .status,
        tychora_core::manage::RecordStatus::Reviewed
    );
    assert_eq!(
        ws.review_record("V9.1.2", Some("standard"), "reject")
            .unwrap()
            .record
            .status,
        tychora_core::manage::RecordStatus::Rejected
    );
    assert!(ws.review_record("V9.1.1", None, "approve").is_err());
    let after = search(&ws, "V9.1.1 V9.1.2", &[], &["exact"]);
    assert_eq!(after.segments.len(), 1);
    assert!(after.segments[0].text.contains("| **9.1.1** |"));
    let gaps: Vec<&str> = after
        .coverage_gaps
        .iter()
        .map(|g| g.name.as_str())
        .collect();
    assert_eq!(gaps, ["V9.1.2"]);
    let level1 = search(&ws, "secrets vault", &["level=1"], &["lexical"]);
    assert_eq!(level1.segments.len(), 1);
    assert!(level1.segments[0].text.contains("| **9.1.1** |"));
}
