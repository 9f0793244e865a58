//! The service store on PostgreSQL: a pool of connections (deadpool over tokio-postgres), driven
//! from the synchronous core by a tokio runtime of its own that the calling thread drives.
//!
//! Where it stands (docs/plans/scale-out.md): the job queue ([`PgQueue`]) runs on it with the
//! embedded queue's contract, and the repositories that take the store's transaction interface
//! run on a [`PgTx`] (capture, publication, sources, the query log, a query's reads); the others
//! follow domain by domain.
//!
//! A connection string may carry a password (`postgres://user:secret@host/db`, or `PGPASSWORD`
//! in the environment): it is handed to the client and never put in a message or a log line;
//! the store is named as `postgres://user@host:port/db` ([`PgStore::location`]).

mod migrate;
mod queue;
pub mod tools;
mod tx;

use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod, Runtime};
use tokio_postgres::NoTls;
use tokio_postgres::config::Host;

use crate::error::{Error, Result};

pub use migrate::{MIGRATIONS, latest};
pub use queue::PgQueue;
pub use tx::PgTx;

/// How long a connection attempt, and a wait for a pooled connection, may take before the store
/// reads as unavailable.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// An open pool on one PostgreSQL database.
pub struct PgStore {
    pool: Pool,
    runtime: tokio::runtime::Runtime,
    location: String,
    /// Each table's foreign keys' tables, read from the catalog on first need (`tx::runs`).
    references: std::sync::OnceLock<std::collections::HashMap<String, Vec<String>>>,
}

impl PgStore {
    /// Connects to the database `url` names (a `postgres://` URL or a `key=value` string) with up
    /// to `connections` pooled connections, and checks it answers and its schema is current.
    ///
    /// # Errors
    /// `E_INVALID_ARGUMENT` for a string that does not parse; `E_STORE_UNAVAILABLE` when the
    /// database cannot be reached or refuses the login; `E_MIGRATION_REQUIRED` /
    /// `E_CHECKSUM_MISMATCH` as for the embedded store.
    pub fn open(url: &str, connections: usize) -> Result<Self> {
        let store = Self::connect(url, connections)?;
        store.run(async |client| migrate::check(client, &store.location).await)?;
        Ok(store)
    }

    /// As [`PgStore::open`], applying pending migrations instead of refusing them (two daemons
    /// migrating at once take turns on an advisory lock). Returns the store and the versions
    /// applied.
    ///
    /// # Errors
    /// As [`PgStore::open`].
    pub fn open_and_migrate(url: &str, connections: usize) -> Result<(Self, Vec<i64>)> {
        let store = Self::connect(url, connections)?;
        let applied = store.run(async |client| migrate::apply(client, &store.location).await)?;
        Ok((store, applied))
    }

    fn connect(url: &str, connections: usize) -> Result<Self> {
        let mut config: tokio_postgres::Config = url.parse().map_err(|e| {
            Error::InvalidArgument(format!(
                "the PostgreSQL connection string does not parse ({e}); expected postgres://USER@HOST:PORT/DATABASE"
            ))
        })?;
        // A password from the environment, as libpq reads it, when the string names none.
        if config.get_password().is_none()
            && let Ok(password) = std::env::var("PGPASSWORD")
        {
            config.password(password);
        }
        config.connect_timeout(CONNECT_TIMEOUT);
        config.application_name("tychora");
        let location = location(&config);
        let manager = Manager::from_config(
            config,
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        // The caller's thread drives the client while it waits (`block_on`), so a statement's
        // round trip has no hand-off between threads: 50 µs a trivial statement over a Unix
        // socket here, and the SciFact rows of an add 7.2 s instead of 8.2 s on one writer (2.4 s
        // instead of 3.7 s on two) than with two worker threads of its own.
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| Error::Internal(format!("the PostgreSQL client's runtime: {e}")))?;
        let pool = Pool::builder(manager)
            .max_size(connections.max(1))
            .runtime(Runtime::Tokio1)
            .wait_timeout(Some(CONNECT_TIMEOUT))
            .create_timeout(Some(CONNECT_TIMEOUT))
            .recycle_timeout(Some(CONNECT_TIMEOUT))
            .build()
            .map_err(|e| Error::Internal(format!("the PostgreSQL pool: {e}")))?;
        Ok(Self {
            pool,
            runtime,
            location,
            references: std::sync::OnceLock::new(),
        })
    }

    /// Whether `url` carries a password (a setting stored in a file must not: the password comes
    /// from `PGPASSWORD`). A string that does not parse carries none.
    #[must_use]
    pub fn names_a_password(url: &str) -> bool {
        url.parse::<tokio_postgres::Config>()
            .is_ok_and(|c| c.get_password().is_some())
    }

    /// The store as messages name it: no password, ever.
    #[must_use]
    pub fn location(&self) -> &str {
        &self.location
    }

    /// Runs `f` with a pooled connection (it may open transactions on it).
    pub(crate) fn run<T>(
        &self,
        f: impl AsyncFnOnce(&mut tokio_postgres::Client) -> Result<T>,
    ) -> Result<T> {
        self.runtime.block_on(async {
            let mut client = self.pool.get().await.map_err(|e| self.pool_error(&e))?;
            f(&mut client).await
        })
    }

    fn pool_error(&self, error: &deadpool_postgres::PoolError) -> Error {
        Error::StoreUnavailable(format!(
            "the store {} cannot be reached: {}",
            self.location,
            one_line(&error.to_string())
        ))
    }
}

/// `postgres://user@host:port/db`, from the parsed configuration (so never its password).
fn location(config: &tokio_postgres::Config) -> String {
    let host = config
        .get_hosts()
        .first()
        .map_or_else(String::new, |h| match h {
            Host::Tcp(name) => name.clone(),
            Host::Unix(path) => path.display().to_string(),
        });
    let port = config.get_ports().first().copied().unwrap_or(5432);
    let user = config.get_user().unwrap_or_default();
    let db = config.get_dbname().unwrap_or(user);
    format!("postgres://{user}@{host}:{port}/{db}")
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A client error as the core's: unreachable or dropped connections and a database shutting
/// down are `E_STORE_UNAVAILABLE`; a broken constraint `E_CONFLICT`; the rest internal.
pub(crate) fn error(location: &str, error: &tokio_postgres::Error) -> Error {
    use tokio_postgres::error::SqlState;
    let Some(db) = error.as_db_error() else {
        return Error::StoreUnavailable(format!(
            "the store {location} cannot be reached: {}",
            one_line(&error.to_string())
        ));
    };
    let code = db.code();
    let class = &code.code()[..2];
    if class == "08"
        || class == "53"
        || class == "57"
        || *code == SqlState::READ_ONLY_SQL_TRANSACTION
    {
        return Error::StoreUnavailable(format!(
            "the store {location} refused the call: {} ({})",
            one_line(db.message()),
            code.code()
        ));
    }
    if class == "23" {
        return Error::Conflict(format!(
            "the store {location} refused a row: {} ({})",
            one_line(db.message()),
            code.code()
        ));
    }
    Error::Internal(format!(
        "the store {location}: {} ({})",
        one_line(db.message()),
        code.code()
    ))
}
