//! Where an open workspace's canonical rows live: the embedded store (the workspace's SQLite
//! file: one writer connection, pooled readers) or the service store (a PostgreSQL database: a
//! pool). The pipelines see neither: a read gets a `&dyn Tx`, the writer a `&dyn Session`.

use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use rusqlite::Connection;

use crate::error::{Error, Result};
use crate::store::postgres::{PgStore, PgTx};
use crate::store::tx::{Session, Tx};

/// The canonical store of an open workspace.
pub(crate) enum Canonical {
    /// `corpus.sqlite3` in the workspace.
    Sqlite {
        /// The database file (a reader the pool lacks is opened from it).
        db: PathBuf,
        /// Writes serialise on one connection.
        writer: Mutex<Connection>,
        /// Read connections, reused (WAL readers run beside the writer).
        readers: Mutex<Vec<Connection>>,
    },
    /// A PostgreSQL database shared by the daemons that serve the workspace.
    Postgres {
        /// The pool every session and read takes a connection from.
        store: PgStore,
        /// This process's writes serialise as they do on the embedded store (other daemons'
        /// go on beside: the pointer switch refuses a publication whose parent moved).
        writer: Mutex<()>,
    },
}

impl std::fmt::Debug for Canonical {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Sqlite { db, .. } => write!(f, "Canonical::Sqlite({})", db.display()),
            Self::Postgres { store, .. } => write!(f, "Canonical::Postgres({})", store.location()),
        }
    }
}

/// Readers kept for reuse (a burst of concurrent queries opens more, then closes them).
const POOLED_READERS: usize = 8;

impl Canonical {
    /// The embedded store whose writer is `writer`, opened on `db`.
    pub(crate) fn sqlite(db: &Path, writer: Connection) -> Self {
        Self::Sqlite {
            db: db.to_path_buf(),
            writer: Mutex::new(writer),
            readers: Mutex::new(Vec::new()),
        }
    }

    /// The service store.
    pub(crate) fn postgres(store: PgStore) -> Self {
        Self::Postgres {
            store,
            writer: Mutex::new(()),
        }
    }

    /// The writer: the one connection this process writes through, held until dropped.
    ///
    /// # Errors
    /// `E_INTERNAL` for a writer poisoned by an earlier panic; `E_STORE_UNAVAILABLE` when the
    /// service store cannot be reached.
    pub(crate) fn writer(&self) -> Result<Writer<'_>> {
        let poisoned = || Error::Internal("writer connection poisoned by an earlier panic".into());
        match self {
            Self::Sqlite { writer, .. } => {
                Ok(Writer::Sqlite(writer.lock().map_err(|_| poisoned())?))
            }
            Self::Postgres { store, writer } => {
                let held = writer.lock().map_err(|_| poisoned())?;
                Ok(Writer::Postgres {
                    _turn: held,
                    session: Box::new(store.session()?),
                })
            }
        }
    }

    /// Runs `f` on a read connection: a pooled SQLite reader, or a pooled PostgreSQL connection
    /// in autocommit.
    ///
    /// # Errors
    /// What `f` returns; opening a connection's errors.
    pub(crate) fn read<T>(&self, f: impl FnOnce(&dyn Tx) -> Result<T>) -> Result<T> {
        match self {
            Self::Sqlite { db, readers, .. } => {
                let pooled = readers
                    .lock()
                    .map_err(|_| Error::Internal("reader pool poisoned".into()))?
                    .pop();
                let conn = match pooled {
                    Some(conn) => conn,
                    None => crate::store::connect(db)?,
                };
                let out = f(&conn);
                if let Ok(mut pool) = readers.lock()
                    && pool.len() < POOLED_READERS
                {
                    pool.push(conn);
                }
                out
            }
            Self::Postgres { store, .. } => f(&store.session()?),
        }
    }

    /// The service store, when the rows live there.
    pub(crate) fn postgres_store(&self) -> Option<&PgStore> {
        match self {
            Self::Sqlite { .. } => None,
            Self::Postgres { store, .. } => Some(store),
        }
    }
}

/// The writer held: derefs to the session every pipeline writes through.
pub(crate) enum Writer<'a> {
    /// The embedded store's connection.
    Sqlite(MutexGuard<'a, Connection>),
    /// The service store's session, with this process's writer turn (held while it lives).
    Postgres {
        /// This process's turn to write.
        _turn: MutexGuard<'a, ()>,
        /// The session (boxed: the embedded variant is a pointer's size).
        session: Box<PgTx<'a>>,
    },
}

impl<'a> Deref for Writer<'a> {
    type Target = dyn Session + 'a;

    fn deref(&self) -> &Self::Target {
        match self {
            Self::Sqlite(conn) => &**conn,
            Self::Postgres { session, .. } => &**session,
        }
    }
}

impl Writer<'_> {
    /// The embedded store's connection, for what only SQLite has (the online backup API).
    pub(crate) fn sqlite(&self) -> Option<&Connection> {
        match self {
            Self::Sqlite(conn) => Some(conn),
            Self::Postgres { .. } => None,
        }
    }
}
