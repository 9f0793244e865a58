//! Word documents as cited evidence, end to end: capture, derived text, locators, citations,
//! inspection, verify, purge; and hostile packages, each failing alone with one diagnostic.

use std::fs;
use std::io::Write as _;
use std::path::PathBuf;

use tychora_core::Workspace;
use tychora_core::job::Outcome;
use tychora_core::manage::Evidence;
use tychora_core::query::QueryRequest;

mod common;
use common::add;

fn shared(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data/docs")
        .join(rel)
}

const ASVS: &str = "owasp-asvs-5.0/OWASP_Application_Security_Verification_Standard_5.0.0_en.docx";

fn search(ws: &Workspace, query: &str) -> tychora_core::query::QueryResult {
    ws.search(&QueryRequest {
        query: query.into(),
        ..Default::default()
    })
    .unwrap()
}

/// A package of `entries` (name, bytes), deflated.
fn package(entries: &[(&str, &[u8])]) -> Vec<u8> {
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for (name, bytes) in entries {
        zip.start_file(*name, options).unwrap();
        zip.write_all(bytes).unwrap();
    }
    zip.finish().unwrap().into_inner()
}

const CONTENT_TYPES: &[u8] = br#"<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>"#;
const ROOT_RELS: &[u8] = br#"<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>"#;

fn body(paragraphs: &[&str]) -> Vec<u8> {
    let mut xml = String::from(
        r#"<?xml version="1.0"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>"#,
    );
    for p in paragraphs {
        xml.push_str(&format!("<w:p><w:r><w:t>{p}</w:t></w:r></w:p>"));
    }
    xml.push_str("</w:body></w:document>");
    xml.into_bytes()
}

#[test]
#[cfg_attr(not(shared_data), ignore = "reads ../shared/data, not present")]
fn a_docx_is_cited_by_paragraph_and_table_row_over_its_derived_text() {
    let tmp = tempfile::tempdir().unwrap();
    let docs = tmp.path().join("docs");
    fs::create_dir_all(&docs).unwrap();
    fs::copy(shared(ASVS), docs.join("asvs.docx")).unwrap();
    let ws_dir = tmp.path().join("ws");
    Workspace::init(&ws_dir).unwrap();
    let ws = Workspace::open(&ws_dir).unwrap();
    let receipt = add(&ws, &docs);
    assert_eq!(
        receipt.status,
        Outcome::Succeeded,
        "{:?}",
        receipt.diagnostics
    );
    assert_eq!(receipt.files.added, 1);
    assert!(receipt.units > 1000, "{} units", receipt.units);

    // A requirement row is found with its table header in the capsule and cited by its row.
    let result = search(
        &ws,
        "output encoding or escaping when dynamically building JavaScript content JSON injection",
    );
    let row = result
        .segments
        .iter()
        .find(|s| s.text.contains("1.2.3"))
        .expect("the row of requirement 1.2.3");
    assert!(row.citation.starts_with("asvs.docx "), "{}", row.citation);
    let place = row.locator.document.as_ref().expect("a document locator");
    assert!(
        row.citation.contains('¶') || row.citation.contains("table"),
        "{}",
        row.citation
    );
    assert_eq!(place.first.part, "body");
    assert!(
        row.locator
            .heading_path
            .iter()
            .any(|h| h.starts_with("V1.2")),
        "{:?}",
        row.locator.heading_path
    );

    // The spans index the derived text, stored as an artifact and named by the extraction.
    let Evidence::Revision(revision) = ws
        .inspect(&format!("revision:{}", row.revision.revision_id))
        .unwrap()
    else {
        panic!("a revision")
    };
    let brief = revision.extractions[0]
        .document
        .as_ref()
        .expect("a document extraction");
    assert_eq!(brief.format, "docx");
    assert!(
        !brief.external_targets.is_empty(),
        "ASVS links to the web: recorded, never followed"
    );
    let derived = fs::read(
        ws_dir
            .join("artifacts/sha256")
            .join(&brief.derived_sha256[..2])
            .join(&brief.derived_sha256),
    )
    .unwrap();
    let (start, end) = (
        row.locator.byte_start as usize,
        row.locator.byte_end as usize,
    );
    assert_eq!(&derived[start..end], row.text.as_bytes());

    // A table row unit carries its cells.
    let row_unit = row
        .unit_ids
        .iter()
        .find_map(|id| match ws.inspect(&format!("unit:{id}")).unwrap() {
            Evidence::Unit(u)
                if u.unit_type == tychora_core::UnitType::TableRow && u.text.contains("1.2.3") =>
            {
                Some(u)
            }
            _ => None,
        })
        .expect("the row's unit");
    let unit_doc = row_unit.document.expect("its place");
    assert!(unit_doc.table.is_some() && unit_doc.row.is_some());
    assert!(unit_doc.cells.len() >= 2, "{:?}", unit_doc.cells);
    assert!(unit_doc.cells.iter().any(|c| c.text.contains("1.2.3")));

    let verify = ws.verify().unwrap();
    assert!(verify.problems.is_empty(), "{:?}", verify.problems);
}

#[test]
#[cfg_attr(not(shared_data), ignore = "reads ../shared/data, not present")]
fn hostile_packages_each_fail_alone_and_committed_data_stays() {
    let tmp = tempfile::tempdir().unwrap();
    let docs = tmp.path().join("docs");
    fs::create_dir_all(&docs).unwrap();
    fs::write(
        docs.join("good.md"),
        "# Good\n\nA healthy paragraph about lighthouses.\n",
    )
    .unwrap();
    fs::write(
        docs.join("plain.docx"),
        package(&[
            ("[Content_Types].xml", CONTENT_TYPES),
            ("_rels/.rels", ROOT_RELS),
            (
                "word/document.xml",
                &body(&["Harbour pilots board at dawn.", "Second paragraph."]),
            ),
        ]),
    )
    .unwrap();
    let ws_dir = tmp.path().join("ws");
    Workspace::init(&ws_dir).unwrap();
    let ws = Workspace::open(&ws_dir).unwrap();
    let first = add(&ws, &docs);
    assert_eq!(first.files.added, 2, "{:?}", first.diagnostics);
    let before = search(&ws, "harbour pilots dawn");
    // One window holds both paragraphs.
    assert_eq!(before.segments[0].citation, "plain.docx ¶1–2");

    // A zip bomb: one part of 100 MiB of zeros.
    let zeros = vec![b' '; 100 << 20];
    fs::write(
        docs.join("bomb.docx"),
        package(&[
            ("[Content_Types].xml", CONTENT_TYPES),
            ("_rels/.rels", ROOT_RELS),
            ("word/document.xml", &zeros),
        ]),
    )
    .unwrap();
    drop(zeros);
    // Path tricks: an entry named outside the package and a relationship pointing out of it.
    fs::write(
        docs.join("paths.docx"),
        package(&[
            ("[Content_Types].xml", CONTENT_TYPES),
            ("_rels/.rels", ROOT_RELS),
            ("../../escape.xml", b"<x/>"),
            ("word/_rels/document.xml.rels", br#"<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId9" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="../../../../etc/passwd"/><Relationship Id="rId8" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/hyperlink" Target="https://attacker.example/x" TargetMode="External"/></Relationships>"#),
            ("word/document.xml", &body(&["Lanterns guide the ferries."])),
        ]),
    )
    .unwrap();
    // Macros: present, never read.
    fs::write(
        docs.join("macro.docm"),
        package(&[
            ("[Content_Types].xml", CONTENT_TYPES),
            ("_rels/.rels", ROOT_RELS),
            (
                "word/vbaProject.bin",
                b"\xD0\xCF\x11\xE0 not really a macro",
            ),
            (
                "word/document.xml",
                &body(&["Tide tables for the estuary."]),
            ),
        ]),
    )
    .unwrap();
    // Extensions that lie, an empty file, a truncated package, legacy OLE bytes.
    fs::copy(
        shared("pdf/docling/2305.03393v1-pg9.pdf"),
        docs.join("really-a-pdf.docx"),
    )
    .unwrap();
    fs::write(docs.join("really-text.docx"), "just some words\n").unwrap();
    fs::copy(docs.join("plain.docx"), docs.join("really-a-docx.md")).unwrap();
    fs::write(docs.join("empty.docx"), b"").unwrap();
    let whole = fs::read(docs.join("plain.docx")).unwrap();
    fs::write(docs.join("truncated.docx"), &whole[..whole.len() / 2]).unwrap();
    fs::write(
        docs.join("legacy.docx"),
        [0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1, 0, 0],
    )
    .unwrap();

    let second = add(&ws, &docs);
    // The bad files fail; the good ones publish.
    assert_eq!(second.status, Outcome::Partial, "{:?}", second.diagnostics);
    assert_eq!(second.files.added, 2, "{:?}", second.diagnostics);
    assert!(second.snapshot_id > first.snapshot_id);
    let about = |name: &str| -> Vec<String> {
        second
            .diagnostics
            .iter()
            .filter(|d| d.path == name)
            .map(|d| format!("{} {} {}", d.level, d.code, d.message))
            .collect()
    };
    let one_error = |name: &str, code: &str, words: &str| {
        let found = about(name);
        let errors: Vec<&String> = found.iter().filter(|d| !d.starts_with("info")).collect();
        assert_eq!(errors.len(), 1, "{name}: {found:?}");
        assert!(
            errors[0].contains(code) && errors[0].contains(words),
            "{name}: {found:?}"
        );
    };
    one_error("bomb.docx", "E_LIMIT_EXCEEDED", "limit");
    one_error(
        "really-a-pdf.docx",
        "E_UNSUPPORTED_FORMAT",
        "its bytes are a PDF",
    );
    one_error(
        "really-text.docx",
        "E_UNSUPPORTED_FORMAT",
        "its bytes are text",
    );
    one_error("really-a-docx.md", "E_UNSUPPORTED_FORMAT", "a zip package");
    one_error("empty.docx", "E_INVALID_ARGUMENT", "empty");
    one_error(
        "truncated.docx",
        "E_UNSUPPORTED_FORMAT",
        "not a readable DOCX",
    );
    one_error("legacy.docx", "E_UNSUPPORTED_FORMAT", "encrypted");
    // The package with path tricks is read, its tricks reported and not followed.
    let paths = about("paths.docx");
    assert!(
        paths.iter().any(|d| d.contains("outside the package")),
        "{paths:?}"
    );
    assert!(paths.iter().all(|d| d.starts_with("info")), "{paths:?}");
    assert!(!tmp.path().join("escape.xml").exists());
    let macros = about("macro.docm");
    assert!(
        macros
            .iter()
            .any(|d| d.contains("macros") && d.contains("never read")),
        "{macros:?}"
    );
    assert!(search(&ws, "lanterns ferries").segments[0].citation == "paths.docx ¶1");
    assert!(search(&ws, "tide tables estuary").segments[0].citation == "macro.docm ¶1");

    // What was committed before still answers the same.
    let after = search(&ws, "harbour pilots dawn");
    assert_eq!(after.segments[0].text, before.segments[0].text);
    assert_eq!(after.segments[0].citation, "plain.docx ¶1–2");
    let verify = ws.verify().unwrap();
    assert!(verify.problems.is_empty(), "{:?}", verify.problems);
}

#[test]
fn erasing_a_document_erases_its_derived_text_too() {
    let tmp = tempfile::tempdir().unwrap();
    let docs = tmp.path().join("docs");
    fs::create_dir_all(&docs).unwrap();
    fs::write(
        docs.join("letter.docx"),
        package(&[
            ("[Content_Types].xml", CONTENT_TYPES),
            ("_rels/.rels", ROOT_RELS),
            (
                "word/document.xml",
                &body(&["The applicant lives at 12 Quay Street."]),
            ),
        ]),
    )
    .unwrap();
    let ws_dir = tmp.path().join("ws");
    Workspace::init(&ws_dir).unwrap();
    let ws = Workspace::open(&ws_dir).unwrap();
    add(&ws, &docs);
    let hit = search(&ws, "applicant quay street").segments[0].clone();
    let Evidence::Revision(revision) = ws
        .inspect(&format!("revision:{}", hit.revision.revision_id))
        .unwrap()
    else {
        panic!("a revision")
    };
    let derived = revision.extractions[0]
        .document
        .as_ref()
        .unwrap()
        .derived_sha256
        .clone();
    let path_of = |sha: &str| ws_dir.join("artifacts/sha256").join(&sha[..2]).join(sha);
    assert!(path_of(&derived).exists());
    let report = ws
        .delete_original(
            &format!("revision:{}", hit.revision.revision_id),
            "erasure request",
            &|_| {},
        )
        .unwrap();
    assert_eq!(report.erased.len(), 2, "{:?}", report.erased);
    assert!(!path_of(&hit.revision.sha256).exists());
    assert!(!path_of(&derived).exists(), "the derived text is gone");
    assert!(search(&ws, "applicant quay street").segments.is_empty());
    let verify = ws.verify().unwrap();
    assert!(verify.ok, "{:?}", verify.problems);
}

#[test]
#[cfg_attr(not(shared_data), ignore = "reads ../shared/data, not present")]
fn requirement_ids_are_exact_hits_from_the_docx_as_from_the_markdown() {
    let tmp = tempfile::tempdir().unwrap();
    let docs = tmp.path().join("docs");
    fs::create_dir_all(&docs).unwrap();
    fs::copy(shared(ASVS), docs.join("asvs.docx")).unwrap();
    fs::copy(
        shared("owasp-asvs-5.0/md/0x10-V1-Encoding-and-Sanitization.md"),
        docs.join("v1.md"),
    )
    .unwrap();
    let ws_dir = tmp.path().join("ws");
    Workspace::init(&ws_dir).unwrap();
    let ws = Workspace::open(&ws_dir).unwrap();
    add(&ws, &docs);
    let result = search(&ws, "V1.2.3");
    let exact: Vec<&tychora_core::query::Segment> = result
        .segments
        .iter()
        .filter(|s| s.channels.iter().any(|c| c.channel == "exact"))
        .collect();
    for path in ["asvs.docx", "v1.md"] {
        let hit = exact
            .iter()
            .find(|s| s.source.path == path)
            .unwrap_or_else(|| panic!("{path}: no exact hit in {:?}", result.segments));
        assert!(hit.text.contains("1.2.3"), "{path}: {}", hit.text);
    }
    // A number that does not continue the heading's stays bare: no V1.2.3 under V1.3.
    assert!(
        exact
            .iter()
            .all(|s| s.locator.heading_path.iter().any(|h| h.starts_with("V1.2"))),
        "{exact:?}"
    );
}

#[test]
fn a_job_that_publishes_a_snapshot_is_never_failed() {
    // A first add whose only file cannot be read publishes nothing: the job failed, and no
    // snapshot says otherwise; its row says what its receipt says.
    let tmp = tempfile::tempdir().unwrap();
    let docs = tmp.path().join("docs");
    fs::create_dir_all(&docs).unwrap();
    fs::write(docs.join("broken.docx"), "not a package at all\n").unwrap();
    let ws_dir = tmp.path().join("ws");
    Workspace::init(&ws_dir).unwrap();
    let ws = Workspace::open(&ws_dir).unwrap();
    let agree = |receipt: &tychora_core::ingest::Receipt| {
        let row = ws.job_status(receipt.job_id).unwrap();
        assert_eq!(
            row.status,
            tychora_core::job::JobState::from_outcome(receipt.status)
        );
        assert_eq!(
            row.receipt.as_ref().map(|r| (r.published, r.snapshot_id)),
            Some((receipt.published, receipt.snapshot_id))
        );
        // A job is failed only when it published nothing.
        assert!(
            !(receipt.published && receipt.status == Outcome::Failed),
            "{receipt:?}"
        );
    };
    let first = add(&ws, &docs);
    assert!(!first.published && first.snapshot_id.is_none(), "{first:?}");
    assert_eq!(first.status, Outcome::Failed, "{:?}", first.diagnostics);
    assert_eq!(first.files.failed, 1);
    agree(&first);
    // Nothing new to publish: the file fails again.
    let second = add(&ws, &docs);
    assert!(!second.published);
    assert_eq!(second.status, Outcome::Failed, "{:?}", second.diagnostics);
    agree(&second);
    // A readable file beside it: published, partial.
    fs::write(docs.join("good.md"), "# Good\n\nLighthouses guide ships.\n").unwrap();
    let third = add(&ws, &docs);
    assert!(third.published);
    assert_eq!(third.status, Outcome::Partial);
    agree(&third);
}
