//! The parallel, side-effect-free half of ingestion: read, hash, decode, parse, count, chunk.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::artifact::sha256_hex;
use crate::capture::{self, Candidate};
use crate::chunk::{self, Chunk, ChunkOptions};
use crate::error::{Diagnostic, ErrorCode};
use crate::parse::{self, Format, document};
use crate::tokenize;
use crate::unit::Unit;

/// A file ready to be committed.
#[derive(Debug)]
pub struct Prepared {
    pub bytes: Vec<u8>,
    pub sha256: String,
    pub format: Format,
    /// What it was read under: this add's kind and forced format, or the kind its source keeps.
    pub assignment: super::Assignment,
    /// `None` when the bytes equal the current revision's (nothing to parse).
    pub extraction: Option<Extraction>,
}

/// Parser output for one revision.
#[derive(Debug)]
pub struct Extraction {
    pub units: Vec<Unit>,
    pub unit_tokens: Vec<usize>,
    pub chunks: Vec<Chunk>,
    pub diagnostics: Vec<Diagnostic>,
    /// For a code file: its module path and syntax cache entry (the resolver reads the
    /// references from there).
    pub code: Option<CodeSyntax>,
    /// For a document: the derived text the spans index, and each unit's place in the document.
    pub document: Option<Box<DocumentPlace>>,
    /// Structured records its kind's rules read from its rows.
    pub records: Vec<super::records::Candidate>,
    /// Relations it states about itself (an RFC's `Obsoletes:` header).
    pub relations: Vec<super::relations::Parsed>,
}

/// A document's derived text (stored as an artifact) and where its units sit.
#[derive(Debug)]
pub struct DocumentPlace {
    /// sha256 of `read.text`.
    pub text_sha256: String,
    /// sha256 of each asset's embedded bytes, in asset order (`None`: the file itself).
    pub asset_sha256: Vec<Option<String>>,
    /// The reader's output, its units moved into the extraction.
    pub read: crate::parse::document::DocumentText,
}

/// Where a code file's parse lives in the syntax cache.
#[derive(Debug)]
pub struct CodeSyntax {
    pub language: crate::code::Language,
    pub module: String,
    /// The syntax cache key ([`crate::code::cache::key`]).
    pub key: String,
    /// A payload to store under `key`: `None` when it came from the cache.
    pub new_payload: Option<String>,
}

/// What happened to one candidate.
#[derive(Debug)]
pub enum Outcome {
    /// Read and parsed (boxed: a prepared file is several times the size of a diagnostic).
    Ready(Box<Prepared>),
    /// Not a format this profile indexes (silently counted as skipped, with an info diagnostic).
    Skipped(Diagnostic),
    Failed(Diagnostic),
}

pub struct PrepareContext<'a> {
    pub root: &'a Path,
    /// What this add assigns.
    pub assignment: &'a super::Assignment,
    /// The pack's kinds.
    pub kinds: &'a std::collections::BTreeMap<String, crate::config::KindDefinition>,
    /// The kind each path of this root and collection was given before, where one was.
    pub stored_kinds: &'a std::collections::HashMap<String, String>,
    /// Formats the profile's pack reads when none is forced.
    pub formats: &'a [String],
    /// The profile's name, for diagnostics.
    pub profile: &'a str,
    /// Code files with a longer line are skipped as minified or generated.
    pub max_line_bytes: usize,
    /// Directories (relative to the root) that hold an `__init__.py`: Python packages.
    pub python_packages: &'a std::collections::HashSet<String>,
    pub max_file_bytes: u64,
    pub chunking: ChunkOptions,
    /// Current sha256 of a rel path in this root, if it is a published member.
    pub current_sha: &'a (dyn Fn(&str) -> Option<String> + Sync),
    /// The syntax cache's payload under a key, if present.
    pub syntax_cached: &'a (dyn Fn(&str) -> Option<String> + Sync),
    /// Reads PDFs (pdf.js, through the binding); `None` outside it.
    pub pdf: Option<&'a dyn document::PdfReader>,
    /// `[documents]`: bounds on each file, and where PDF passwords come from.
    pub documents: &'a crate::config::Documents,
    /// `[ocr]`: whether pages with no text layer are recognized.
    pub ocr: &'a crate::config::Ocr,
}

/// Prepares every candidate on all cores; results keep the candidates' order.
pub fn prepare_all(
    ctx: &PrepareContext<'_>,
    candidates: &[Candidate],
    on_progress: &(dyn Fn(usize) + Sync),
) -> Vec<Outcome> {
    let done = AtomicUsize::new(0);
    let results = crate::parallel::map(candidates, crate::parallel::cores(), |candidate| {
        let outcome = prepare_one(ctx, candidate);
        on_progress(done.fetch_add(1, Ordering::Relaxed) + 1);
        outcome
    });
    results
        .into_iter()
        .zip(candidates)
        .map(|(slot, c)| {
            slot.unwrap_or_else(|| {
                Outcome::Failed(Diagnostic::error(
                    &c.rel_path,
                    ErrorCode::Internal,
                    "worker thread panicked",
                ))
            })
        })
        .collect()
}

pub(crate) fn prepare_one(ctx: &PrepareContext<'_>, candidate: &Candidate) -> Outcome {
    let rel = candidate.rel_path.as_str();
    let assignment = ctx.assignment.for_file(
        ctx.kinds,
        ctx.stored_kinds.get(rel).map(String::as_str),
        Format::from_path(rel).and_then(super::implied_kind),
    );
    let format = match assignment.format {
        Some(forced) => forced.resolve(rel),
        None => {
            Format::from_path(rel).filter(|k| ctx.formats.iter().any(|name| name == k.as_str()))
        }
    };
    let Some(format) = format else {
        return Outcome::Skipped(Diagnostic::info(
            rel,
            ErrorCode::UnsupportedFormat,
            format!(
                "no parser for this file type in the {} profile; skipped",
                ctx.profile
            ),
        ));
    };
    let bytes = match capture::read_confined(ctx.root, &candidate.path, rel, ctx.max_file_bytes) {
        Ok(bytes) => bytes,
        Err(diag) => return Outcome::Failed(diag),
    };
    if bytes.is_empty() {
        return Outcome::Failed(Diagnostic::warning(
            rel,
            ErrorCode::InvalidArgument,
            "empty file: nothing to index",
        ));
    }
    if format.is_document() {
        return prepare_document(ctx, rel, format, assignment, bytes);
    }
    if bytes[..bytes.len().min(8192)].contains(&0) {
        return Outcome::Failed(Diagnostic::error(
            rel,
            ErrorCode::UnsupportedFormat,
            format!(
                "binary file (NUL byte in the first 8 KiB; by its first bytes {}), named as {}; not indexed",
                document::sniff(&bytes),
                format.as_str()
            ),
        ));
    }
    let text = match std::str::from_utf8(&bytes) {
        Ok(text) => text,
        Err(e) => {
            let at = e.valid_up_to();
            let line = bytes[..at].iter().filter(|&&b| b == b'\n').count() + 1;
            return Outcome::Failed(
                Diagnostic::error(
                    rel,
                    ErrorCode::UnsupportedFormat,
                    format!("invalid UTF-8 at byte {at}; not indexed"),
                )
                .at(format!("{line}:1")),
            );
        }
    };
    if matches!(format, Format::Code(_))
        && let Some(longest) = text
            .lines()
            .map(str::len)
            .max()
            .filter(|&n| n > ctx.max_line_bytes)
    {
        return Outcome::Failed(Diagnostic::warning(
            rel,
            ErrorCode::LimitExceeded,
            format!(
                "a line of {longest} bytes exceeds capture.max_line_bytes {}: minified or generated code; skipped",
                ctx.max_line_bytes
            ),
        ));
    }
    let sha256 = sha256_hex(&bytes);
    if (ctx.current_sha)(rel).as_deref() == Some(sha256.as_str()) {
        return Outcome::Ready(Box::new(Prepared {
            bytes,
            sha256,
            format,
            assignment,
            extraction: None,
        }));
    }
    let mut code = None;
    let parsed = match format {
        Format::Code(language) => {
            let module = crate::code::module_of(language, rel, ctx.python_packages);
            let key = crate::code::cache::key(&sha256, language, rel, &module);
            // An unchanged file is never parsed twice: the cache holds its last parse.
            let cached = (ctx.syntax_cached)(&key)
                .and_then(|payload| crate::code::cache::decode(&payload, text));
            let (analysis, new_payload) = match cached {
                Some(analysis) => (analysis, None),
                None => {
                    let analysis = crate::code::analyze(language, text, rel, &module);
                    let payload = crate::code::cache::encode(&analysis);
                    (analysis, Some(payload))
                }
            };
            code = Some(CodeSyntax {
                language,
                module,
                key,
                new_payload,
            });
            Ok(analysis.parsed)
        }
        _ => parse::parse(format, text, rel),
    };
    let mut parsed = match parsed {
        Ok(parsed) => parsed,
        Err(fail) => {
            let diag = Diagnostic::error(rel, fail.code, format!("{}; not indexed", fail.message));
            return Outcome::Failed(match fail.locator {
                Some(at) => diag.at(at),
                None => diag,
            });
        }
    };
    let mut records = Vec::new();
    if let Some(definition) = assignment
        .kind_for(ctx.kinds, format)
        .and_then(|k| ctx.kinds.get(k))
    {
        let (found, diagnostics) =
            super::records::extract(definition, format, text, &mut parsed.units, rel);
        records = found;
        parsed.diagnostics.extend(diagnostics);
    }
    let relations = super::relations::parse(format, text, &parsed.units);
    let mut extraction = extraction_of(ctx, rel, format, text, parsed, code);
    extraction.records = records;
    extraction.relations = relations;
    Outcome::Ready(Box::new(Prepared {
        extraction: Some(extraction),
        bytes,
        sha256,
        format,
        assignment,
    }))
}

/// A binary document: read from its bytes into units over a derived text.
fn prepare_document(
    ctx: &PrepareContext<'_>,
    rel: &str,
    format: Format,
    assignment: super::Assignment,
    bytes: Vec<u8>,
) -> Outcome {
    let sha256 = sha256_hex(&bytes);
    if (ctx.current_sha)(rel).as_deref() == Some(sha256.as_str()) {
        return Outcome::Ready(Box::new(Prepared {
            bytes,
            sha256,
            format,
            assignment,
            extraction: None,
        }));
    }
    let wanted = match format {
        Format::Pdf => ctx.documents.password_for(rel, &ctx.root.join(rel)),
        _ => Ok(None),
    };
    let password = match wanted {
        Ok(p) => p,
        Err(why) => {
            return Outcome::Failed(Diagnostic::error(
                rel,
                ErrorCode::InvalidArgument,
                format!("{why}; not indexed"),
            ));
        }
    };
    let options = document::ReadOptions {
        limits: ctx.documents,
        pdf: ctx.pdf,
        password: password.as_deref(),
        ocr: ctx.ocr,
    };
    let mut read = match document::extract(format, &bytes, rel, &options) {
        Ok(read) => read,
        Err(fail) => {
            let diag = Diagnostic::error(rel, fail.code, format!("{}; not indexed", fail.message));
            return Outcome::Failed(match fail.locator {
                Some(at) => diag.at(at),
                None => diag,
            });
        }
    };
    let mut parsed = std::mem::take(&mut read.parsed);
    let mut records = Vec::new();
    if let Some(definition) = assignment
        .kind_for(ctx.kinds, format)
        .and_then(|k| ctx.kinds.get(k))
    {
        let (found, diagnostics) =
            super::records::extract_document(definition, &mut parsed.units, &read.locators, rel);
        records = found;
        parsed.diagnostics.extend(diagnostics);
    }
    let text = std::mem::take(&mut read.text);
    let mut extraction = extraction_of(ctx, rel, format, &text, parsed, None);
    extraction.records = records;
    read.text = text;
    extraction.document = Some(Box::new(DocumentPlace {
        text_sha256: sha256_hex(read.text.as_bytes()),
        asset_sha256: read
            .assets
            .iter()
            .map(|a| a.bytes.as_deref().map(sha256_hex))
            .collect(),
        read,
    }));
    Outcome::Ready(Box::new(Prepared {
        bytes,
        sha256,
        format,
        assignment,
        extraction: Some(extraction),
    }))
}

/// Token counts, windows and the empty-file warning for parsed units over `text`.
fn extraction_of(
    ctx: &PrepareContext<'_>,
    rel: &str,
    format: Format,
    text: &str,
    parsed: crate::unit::Parsed,
    code: Option<CodeSyntax>,
) -> Extraction {
    let unit_tokens: Vec<usize> = parsed
        .units
        .iter()
        .map(|u| {
            if u.is_leaf {
                tokenize::count(&u.text)
            } else {
                0
            }
        })
        .collect();
    // JSON records get no file-name title: it would put the same words into every record's capsule.
    let title = match (&parsed.title, format) {
        (Some(t), _) => t.clone(),
        (None, Format::Json | Format::Jsonl) => String::new(),
        (None, _) => rel.rsplit('/').next().unwrap_or(rel).to_string(),
    };
    let chunks = chunk::windows(
        text,
        format,
        &title,
        &parsed.units,
        &unit_tokens,
        ctx.chunking,
    );
    let mut diagnostics = parsed.diagnostics;
    if chunks.is_empty() {
        diagnostics.push(Diagnostic::warning(
            rel,
            ErrorCode::InvalidArgument,
            "no indexable text found",
        ));
    }
    Extraction {
        units: parsed.units,
        unit_tokens,
        chunks,
        diagnostics,
        code,
        document: None,
        records: Vec::new(),
        relations: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    fn python_module(rel: &str, packages: &HashSet<String>) -> String {
        crate::code::module_of(crate::code::Language::Python, rel, packages)
    }

    #[test]
    fn python_modules_follow_the_package_layout() {
        let packages: HashSet<String> = ["src/pkg", "src/pkg/sub", "lib"]
            .map(String::from)
            .into_iter()
            .collect();
        assert_eq!(
            python_module("src/pkg/sub/mod.py", &packages),
            "pkg.sub.mod"
        );
        assert_eq!(python_module("src/pkg/__init__.py", &packages), "pkg");
        assert_eq!(python_module("scripts/run.py", &packages), "run");
        assert_eq!(python_module("setup.py", &packages), "setup");
        assert_eq!(python_module("lib/util.py", &packages), "lib.util");
        // A directory without `__init__.py` inside a package is a namespace subpackage.
        let packages: HashSet<String> = ["flask"].map(String::from).into_iter().collect();
        assert_eq!(
            python_module("flask/sansio/app.py", &packages),
            "flask.sansio.app"
        );
    }
}
