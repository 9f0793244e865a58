//! Vector records in the canonical store (one vector per family and input sha256), and the
//! user-level cache's own database (`vectors.sqlite3`, shared by every workspace of the user).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OptionalExtension, params};

use super::tx::{Dialect, Param, Tx, args};
use crate::clock::now_ms;
use crate::error::{Error, Result};
use crate::vector::records::{VectorCache, VectorRecords, from_blob, to_blob};
use crate::vector::{FamilySpec, Record};

/// The id of `spec`'s family in this workspace, created on first use.
///
/// # Errors
/// The store's errors.
pub fn family_id(tx: &dyn Tx, spec: &FamilySpec) -> Result<i64> {
    let key = args![
        spec.provider.as_str(),
        spec.model.as_str(),
        spec.dimension,
        spec.representation.as_str(),
        spec.normalization.as_str(),
        spec.quantization.as_str(),
        spec.metric.as_str(),
        now_ms()
    ];
    // Two writers creating the same family at once (two daemons): one inserts, the other's
    // insert does nothing, and both read the one row.
    tx.execute(
        "INSERT INTO vector_families (provider, model, dimension, representation, normalization, quantization, metric, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
         ON CONFLICT (provider, model, dimension, representation, normalization, quantization, metric) DO NOTHING",
        key,
    )?;
    tx.value(
        "SELECT id FROM vector_families WHERE provider = ?1 AND model = ?2 AND dimension = ?3 AND representation = ?4 AND normalization = ?5 AND quantization = ?6 AND metric = ?7",
        &key[..7],
    )
}

/// The vectors of `shas` this family already has, by sha.
///
/// # Errors
/// The store's errors.
pub fn lookup(tx: &dyn Tx, family: i64, shas: &[String]) -> Result<HashMap<String, Record>> {
    let mut unique: Vec<&str> = shas.iter().map(String::as_str).collect();
    unique.sort_unstable();
    unique.dedup();
    let mut out = HashMap::with_capacity(unique.len());
    // A few statements for a batch, not one a sha: a round trip each on the service store.
    for part in unique.chunks(LOOKUP_BATCH) {
        let list = (2..part.len() + 2)
            .map(|i| format!("?{i}"))
            .collect::<Vec<_>>()
            .join(", ");
        let mut values = vec![Param::Int(family)];
        values.extend(part.iter().map(|&sha| Param::Text(sha)));
        tx.each(
            &format!(
                "SELECT input_sha256, vector, tokens FROM vector_records WHERE family_id = ?1 AND input_sha256 IN ({list})"
            ),
            &values,
            &mut |r| {
                out.insert(r.get(0)?, record(r.get(1)?, r.get(2)?));
                Ok(())
            },
        )?;
    }
    Ok(out)
}

/// Shas looked up in one statement.
const LOOKUP_BATCH: usize = 256;

fn record(blob: Vec<u8>, tokens: i64) -> Record {
    Record {
        vector: from_blob(&blob),
        tokens: usize::try_from(tokens).unwrap_or(0),
    }
}

/// Stores vectors (an input already stored keeps its first vector).
///
/// # Errors
/// The store's errors.
pub fn insert(
    tx: &dyn Tx,
    family: i64,
    rows: &[(String, Record)],
    receipt: &serde_json::Value,
) -> Result<()> {
    let mut stmt = tx.prepare(
        "INSERT INTO vector_records (family_id, input_sha256, vector, tokens, receipt_json, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
         ON CONFLICT (family_id, input_sha256) DO NOTHING",
    )?;
    let receipt = receipt.to_string();
    let now = now_ms();
    for (sha, record) in rows {
        let blob = to_blob(&record.vector);
        stmt.write(args![
            family,
            sha,
            blob.as_slice(),
            record.tokens,
            receipt.as_str(),
            now
        ])?;
    }
    Ok(())
}

/// The user-level cache: `vectors.sqlite3` in a directory every workspace of this user shares
/// (by default under the OS cache directory), keyed by the family's cache key, so separate and
/// scratch workspaces (evaluations) reuse vectors for the same model and input.
#[derive(Debug)]
pub struct UserCache {
    path: PathBuf,
}

impl UserCache {
    /// The cache in `dir` (created on first write).
    #[must_use]
    pub fn new(dir: &Path) -> Self {
        Self {
            path: dir.join("vectors.sqlite3"),
        }
    }

    /// The default directory: `$TYCHORA_CACHE_DIR`, else the OS cache directory's `tychora`.
    #[must_use]
    pub fn default_dir() -> Option<PathBuf> {
        if let Some(dir) = std::env::var_os("TYCHORA_CACHE_DIR") {
            return Some(PathBuf::from(dir));
        }
        if let Some(dir) = std::env::var_os("XDG_CACHE_HOME") {
            return Some(PathBuf::from(dir).join("tychora"));
        }
        let home = std::env::var_os("HOME").or_else(|| std::env::var_os("USERPROFILE"))?;
        let base = PathBuf::from(home);
        Some(if cfg!(target_os = "macos") {
            base.join("Library").join("Caches").join("tychora")
        } else {
            base.join(".cache").join("tychora")
        })
    }

    fn connect(&self) -> Result<Connection> {
        if let Some(parent) = self.path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
        }
        let conn = Connection::open(&self.path)?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        // A cache: a lost last write is re-embedded, never wrong.
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.busy_timeout(std::time::Duration::from_secs(10))?;
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS vectors (family_key TEXT NOT NULL, input_sha256 TEXT NOT NULL, vector BLOB NOT NULL, tokens INTEGER NOT NULL, PRIMARY KEY (family_key, input_sha256)) WITHOUT ROWID",
        )?;
        Ok(conn)
    }

    /// Cached vectors of `shas`, by sha. A cache that cannot be read answers nothing.
    #[must_use]
    pub fn lookup(&self, key: &str, shas: &[String]) -> HashMap<String, Record> {
        let run = || -> Result<HashMap<String, Record>> {
            if !self.path.is_file() {
                return Ok(HashMap::new());
            }
            let conn = self.connect()?;
            let mut stmt = conn.prepare(
                "SELECT vector, tokens FROM vectors WHERE family_key = ?1 AND input_sha256 = ?2",
            )?;
            let mut out = HashMap::with_capacity(shas.len());
            for sha in shas {
                if out.contains_key(sha) {
                    continue;
                }
                if let Some((blob, tokens)) = stmt
                    .query_row(params![key, sha], |r| Ok((r.get(0)?, r.get(1)?)))
                    .optional()?
                {
                    out.insert(sha.clone(), record(blob, tokens));
                }
            }
            Ok(out)
        };
        run().unwrap_or_else(|e| {
            log::warn!("user vector cache {} not read: {e}", self.path.display());
            HashMap::new()
        })
    }

    /// Removes the vectors of `shas` under every family: inputs of erased text (an erasure on
    /// request leaves no derivative of the text behind, in this cache either).
    ///
    /// # Errors
    /// SQLite errors: the caller reports them, since an erasure that cannot finish must say so.
    pub fn remove(&self, shas: &[String]) -> Result<usize> {
        if shas.is_empty() || !self.path.is_file() {
            return Ok(0);
        }
        let mut conn = self.connect()?;
        let tx = conn.transaction()?;
        let mut removed = 0;
        {
            // `Connection::prepare`: `Tx::prepare` (in scope) would be found first on the transaction.
            let mut stmt = Connection::prepare(&tx, "DELETE FROM vectors WHERE input_sha256 = ?1")?;
            for sha in shas {
                removed += stmt.execute(params![sha])?;
            }
        }
        tx.commit()?;
        Ok(removed)
    }

    /// Adds vectors; a cache that cannot be written is skipped with a warning.
    pub fn insert(&self, key: &str, rows: &[(String, Record)]) {
        let run = || -> Result<()> {
            let mut conn = self.connect()?;
            let tx = conn.transaction()?;
            {
                let mut stmt = Connection::prepare(
                    &tx,
                    "INSERT INTO vectors (family_key, input_sha256, vector, tokens) VALUES (?1, ?2, ?3, ?4) ON CONFLICT DO NOTHING",
                )?;
                for (sha, record) in rows {
                    stmt.execute(params![
                        key,
                        sha,
                        to_blob(&record.vector),
                        record.tokens as i64
                    ])?;
                }
            }
            tx.commit()?;
            Ok(())
        };
        if let Err(e) = run() {
            log::warn!("user vector cache {} not written: {e}", self.path.display());
        }
    }
}

/// Tokens this workspace embedded and was billed for since `since_ms`.
///
/// # Errors
/// The store's errors.
pub fn billed_tokens_since(tx: &dyn Tx, since_ms: i64) -> Result<u64> {
    // The receipt's `billed` is JSON `true`: `json_extract` reads it as 1, `#>>` as the text `true`.
    let billed = match tx.dialect() {
        Dialect::Sqlite => "json_extract(receipt_json, '$.billed') = 1",
        Dialect::Postgres => "(receipt_json::jsonb #>> '{billed}') = 'true'",
    };
    let tokens: i64 = tx.value(
        &format!(
            "SELECT CAST(COALESCE(SUM(tokens), 0) AS BIGINT) FROM vector_records WHERE created_at >= ?1 AND {billed}"
        ),
        args![since_ms],
    )?;
    Ok(u64::try_from(tokens).unwrap_or(0))
}

/// The canonical records, in whatever transaction of either store holds them.
macro_rules! vector_records {
    ($($store:ty),*) => {$(
        impl VectorRecords for $store {
            fn family_id(&self, spec: &FamilySpec) -> Result<i64> {
                family_id(self, spec)
            }

            fn lookup(&self, family: i64, shas: &[String]) -> Result<HashMap<String, Record>> {
                lookup(self, family, shas)
            }

            fn insert(
                &self,
                family: i64,
                rows: &[(String, Record)],
                receipt: &serde_json::Value,
            ) -> Result<()> {
                insert(self, family, rows, receipt)
            }

            fn billed_tokens_since(&self, since_ms: i64) -> Result<u64> {
                billed_tokens_since(self, since_ms)
            }
        }
    )*};
}
vector_records!(Connection, super::postgres::PgTx<'_>, Records<'_>);

/// The records of whatever transaction `0` is, as the vector port names them (a `&dyn Tx` is
/// not itself a `&dyn VectorRecords`).
pub struct Records<'a>(pub &'a dyn Tx);

impl Tx for Records<'_> {
    fn dialect(&self) -> Dialect {
        self.0.dialect()
    }

    fn execute(&self, sql: &str, params: &[Param<'_>]) -> Result<u64> {
        self.0.execute(sql, params)
    }

    fn each(
        &self,
        sql: &str,
        params: &[Param<'_>],
        each: &mut dyn FnMut(&dyn super::tx::Row) -> Result<()>,
    ) -> Result<()> {
        self.0.each(sql, params, each)
    }

    fn prepare<'t>(&'t self, sql: &str) -> Result<Box<dyn super::tx::Statement + 't>> {
        self.0.prepare(sql)
    }

    fn prepare_insert<'t>(&'t self, sql: &str) -> Result<Box<dyn super::tx::Statement + 't>> {
        self.0.prepare_insert(sql)
    }

    fn write(&self, sql: &str, params: &[Param<'_>]) -> Result<()> {
        self.0.write(sql, params)
    }

    fn insert(&self, sql: &str, params: &[Param<'_>]) -> Result<i64> {
        self.0.insert(sql, params)
    }

    fn next_id(&self, table: &str) -> Result<Option<i64>> {
        self.0.next_id(table)
    }

    fn atomic(&self, write: bool, f: &mut dyn FnMut(&dyn Tx) -> Result<()>) -> Result<()> {
        self.0.atomic(write, f)
    }
}

impl VectorCache for UserCache {
    fn lookup(&self, key: &str, shas: &[String]) -> HashMap<String, Record> {
        Self::lookup(self, key, shas)
    }

    fn insert(&self, key: &str, rows: &[(String, Record)]) {
        Self::insert(self, key, rows);
    }
}
