//! `manage status`: counts, sizes and the current snapshot.

use serde::{Deserialize, Serialize};

use crate::engine::Engine;
use crate::error::Result;
use crate::snapshot;
pub use crate::store::inventory::{CollectionCount, Counts, CurrentSnapshot, KindUse, TableBytes};
use crate::store::{inventory, migrate};

/// Bytes on disk. A file hard-linked into several index generations counts once.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Bytes {
    /// `corpus.sqlite3` and its WAL.
    pub corpus: u64,
    /// Retained originals (in a bucket: the sizes the store recorded, not a listing).
    pub artifacts: u64,
    /// Index generations (lexical and vector).
    pub indexes: u64,
    /// Lexical generations.
    pub lexical: u64,
    /// Vector generations.
    pub vectors: u64,
    /// `corpus.sqlite3` by table, each with its indexes, largest first (`None` unless asked:
    /// measuring it reads every page of the corpus, 70 ms at 84k chunks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tables: Option<Vec<TableBytes>>,
}

/// What a status call measures beyond the counts.
#[derive(Debug, Clone, Copy, Default)]
pub struct StatusOptions {
    /// Measure `corpus.sqlite3` table by table (`Bytes::tables`).
    pub tables: bool,
}

/// What `manage status` reports.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Status {
    /// The workspace directory (canonical path).
    pub dir: String,
    /// The newest schema version this engine knows; an open workspace is at it.
    pub schema_version: i64,
    /// This engine's version (the crate version), not the one that created the workspace.
    pub engine_version: String,
    /// The profile used when a call names none (`default_profile` in `workspace.toml`).
    pub profile: String,
    /// The snapshot readers see by default (`None` before the first publication).
    pub current_snapshot: Option<CurrentSnapshot>,
    /// Every collection with its active sources, by name.
    pub collections: Vec<CollectionCount>,
    /// The kinds sources were assigned, by name.
    pub kinds: Vec<KindUse>,
    /// Row counts of the canonical tables.
    pub counts: Counts,
    /// Bytes on disk.
    pub bytes: Bytes,
}

/// Bytes under `path`, each file counted once however many generations link it.
fn dir_size(path: &std::path::Path) -> u64 {
    fn walk(path: &std::path::Path, seen: &mut std::collections::HashSet<(u64, u64)>) -> u64 {
        use std::os::unix::fs::MetadataExt as _;
        let Ok(entries) = std::fs::read_dir(path) else {
            return 0;
        };
        entries
            .flatten()
            .map(|e| match e.file_type() {
                Ok(t) if t.is_dir() => walk(&e.path(), seen),
                Ok(_) => e
                    .metadata()
                    .ok()
                    .filter(|m| seen.insert((m.dev(), m.ino())))
                    .map_or(0, |m| m.len()),
                Err(_) => 0,
            })
            .sum()
    }
    walk(path, &mut std::collections::HashSet::new())
}

/// Counts, sizes and the current snapshot; the per-table breakdown only when `options` ask.
///
/// # Errors
/// SQLite errors.
pub(crate) fn status(engine: &Engine, options: StatusOptions) -> Result<Status> {
    // Queries of a moment ago are counted: the log writes off the query path.
    engine.query_log().flush();
    engine.with_reader(|conn| {
        let current_snapshot = match snapshot::current(conn)? {
            Some(id) => inventory::current_snapshot(conn, id)?,
            None => None,
        };
        let collections = inventory::collections(conn)?;
        let kinds = inventory::kinds(conn)?;
        let corpus = if engine.canonical().postgres_store().is_some() {
            // The service store's tables with their indexes, from its catalogue.
            inventory::table_bytes(conn)?.iter().map(|t| t.bytes).sum()
        } else {
            let db = engine.dir().join("corpus.sqlite3");
            [db.clone(), db.with_extension("sqlite3-wal")]
                .iter()
                .map(|p| std::fs::metadata(p).map_or(0, |m| m.len()))
                .sum::<u64>()
        };
        Ok(Status {
            dir: engine.dir().display().to_string(),
            // The schema of the store that holds the rows.
            schema_version: if engine.canonical().postgres_store().is_some() {
                crate::store::postgres::latest()
            } else {
                migrate::latest()
            },
            engine_version: crate::engine::ENGINE_VERSION.to_string(),
            profile: engine.config().default_profile.clone(),
            current_snapshot,
            collections,
            kinds,
            counts: inventory::counts(
                conn,
                i64::try_from(snapshot::pending_erasures(conn)?.len()).unwrap_or(i64::MAX),
            )?,
            bytes: {
                let indexes = engine.dir().join("indexes");
                let (lexical, vectors) = (
                    dir_size(&indexes.join("lexical")),
                    dir_size(&indexes.join("text")),
                );
                Bytes {
                    corpus,
                    artifacts: match engine.artifacts().local_root() {
                        Some(root) => dir_size(&root),
                        // A bucket is not listed on every status: what the store recorded it
                        // holds (erased originals are gone from it).
                        None => inventory::kept_artifact_bytes(conn)?
                            .try_into()
                            .unwrap_or_default(),
                    },
                    indexes: lexical + vectors,
                    lexical,
                    vectors,
                    tables: options
                        .tables
                        .then(|| inventory::table_bytes(conn))
                        .transpose()?,
                }
            },
        })
    })
}
