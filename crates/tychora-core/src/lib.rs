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

pub mod artifact;
pub mod capture;
pub mod chunk;
pub mod code;
pub mod config;
mod error;
pub mod exact;
pub mod fusion;
pub mod graph;
pub mod ingest;
pub mod lexical;
pub mod parallel;
pub mod parse;
pub mod query;
pub mod safety;
pub mod snapshot;
pub mod store;
pub mod tokenize;
pub mod workspace;

pub use error::{Diagnostic, Error, ErrorCode, Result};
pub use workspace::Workspace;
