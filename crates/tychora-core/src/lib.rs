//! # tychora-core
//!
//! The engine behind Tychora, a local evidence engine for AI agents: versioned documents in,
//! cited source evidence out. No napi and no stdout here; the binding and the TypeScript package
//! sit on top.
//!
//! Vocabulary (DESIGN §4): a **source** has **revisions** (immutable bytes, content-addressed);
//! parsing a revision yields an **extraction** of **evidence units** with exact **locators**;
//! **chunks** are token windows over units, indexed by the lexical (tantivy BM25) and exact
//! (identifier) channels; a **snapshot** pins members and index generations; a query fuses the
//! channels with weighted RRF and reconstructs **segments** with citations.
//!
//! Pipeline, in module order: [`capture`] → [`parse`] → [`chunk`] → [`ingest`] (canonical rows in
//! [`store`], bytes in [`artifact`]) → [`lexical`] + [`exact`] → [`snapshot`] → [`query`]
//! ([`fusion`], [`safety`]).
//!
//! ```no_run
//! use tychora_core::{Workspace, ingest::{AddRequest, Requester}, query::QueryRequest};
//! # fn main() -> tychora_core::Result<()> {
//! Workspace::init(std::path::Path::new("ws"))?;
//! let ws = Workspace::open(std::path::Path::new("ws"))?;
//! ws.add(&AddRequest { paths: vec!["docs".into()], ..Default::default() }, Requester::Owner, &|_| {})?;
//! let result = ws.search(&QueryRequest { query: "snapshot publication".into(), ..Default::default() })?;
//! for segment in &result.segments {
//!     let _ = (&segment.citation, &segment.text);
//! }
//! # Ok(()) }
//! ```
#![warn(missing_docs)]

// The public modules hold the contract: what a caller sends and gets back. Their functions that do
// the work are `pub(crate)`; everything else is internal to the crate. The module graph is acyclic
// and layered; a module uses only modules of lower layers. Layers, lowest first (tests/architecture.rs
// enforces its table on the sources and checks that this list is the same table):
// wire
// error, scripts, clock
// unit, tokenize, parallel, safety, fusion, config, artifact, capture, trust
// facet
// code, job, lexical, vector
// store, opensearch
// parse, snapshot
// chunk, exact, engine
// graph, summary
// query, ingest
// manage
// workspace, bench
pub mod artifact;
pub(crate) mod capture;
pub(crate) mod chunk;
pub(crate) mod clock;
pub(crate) mod code;
pub mod config;
pub(crate) mod engine;
mod error;
pub(crate) mod exact;
pub(crate) mod facet;
pub(crate) mod fusion;
pub mod graph;
pub mod ingest;
pub mod job;
pub(crate) mod lexical;
pub mod manage;
pub(crate) mod opensearch;
pub(crate) mod parallel;
pub(crate) mod parse;
pub mod query;
pub(crate) mod safety;
pub mod scripts;
pub(crate) mod snapshot;
pub mod store;
pub mod summary;
pub(crate) mod tokenize;
pub mod trust;
pub(crate) mod unit;
pub mod vector;
pub(crate) mod wire;
pub mod workspace;

#[cfg(feature = "bench")]
pub mod bench;

pub use error::{Diagnostic, Error, ErrorCode, Level, Result};
pub use unit::{Span, UnitType};

/// What a binding implements to read PDFs for the core (pdf.js on the TypeScript side).
pub mod documents {
    pub use crate::parse::ParseFailure;
    pub use crate::parse::document::{
        DocCell, Furniture, PdfBlock, PdfDocument, PdfPicture, PdfReader, PdfRequest, PdfRow,
    };
}
pub use workspace::{InitReport, Workspace};
