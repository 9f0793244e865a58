//! One handle on a canonical store, as one daemon holds it: the embedded store's SQLite database
//! or the service store on PostgreSQL, with a write transaction and a query log on either. The
//! store's contract suite (tests/store_contract.rs) and its bench
//! (examples/canonical_rows_bench.rs) run the same repositories through it.

use std::path::PathBuf;
use std::sync::Mutex;

use rusqlite::{Connection, TransactionBehavior};
use tychora_core::Result;
use tychora_core::store::postgres::PgStore;
use tychora_core::store::query_log::QueryLog;
use tychora_core::store::tx::{Session, Tx};

/// A store handle: the database file or the connection string it was opened from, for what opens
/// its own connection (the query log).
pub enum Handle {
    /// The embedded store.
    Sqlite(Mutex<Connection>, PathBuf),
    /// The service store.
    Postgres(PgStore, String),
}

impl Handle {
    /// A handle on the SQLite database at `db`.
    pub fn sqlite(db: &std::path::Path) -> Self {
        Self::Sqlite(
            Mutex::new(tychora_core::store::connect(db).unwrap()),
            db.to_path_buf(),
        )
    }

    /// A handle on the PostgreSQL database `url`, with `connections` pooled.
    pub fn postgres(url: &str, connections: usize) -> Self {
        Self::Postgres(PgStore::open(url, connections).unwrap(), url.to_string())
    }

    /// Runs `f` in one write transaction: kept when it returns `Ok`, rolled back when it fails.
    pub fn write<T>(&self, f: impl FnOnce(&dyn Tx) -> Result<T>) -> Result<T> {
        match self {
            Self::Sqlite(conn, _) => {
                let mut conn = conn.lock().unwrap();
                let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
                let out = f(&tx)?;
                tx.commit()?;
                Ok(out)
            }
            Self::Postgres(store, _) => store.transaction(f),
        }
    }

    /// Runs `f` on a session (a connection in autocommit, as the engine's writer is).
    pub fn session<T>(&self, f: impl FnOnce(&dyn Session) -> Result<T>) -> Result<T> {
        match self {
            Self::Sqlite(conn, _) => f(&*conn.lock().unwrap()),
            Self::Postgres(store, _) => f(&store.session()?),
        }
    }

    /// The store's query log, as a daemon starts it.
    pub fn query_log(&self) -> QueryLog {
        match self {
            Self::Sqlite(_, db) => QueryLog::start(db).unwrap(),
            Self::Postgres(_, url) => QueryLog::start_on(PgStore::open(url, 1).unwrap()).unwrap(),
        }
    }
}
