//! The service store's migrations: forward-only and checksummed under the embedded store's rule
//! (`store::migrate`): opening never migrates, a recorded migration whose text changed is refused.
//! PostgreSQL has its own files (`migrations/postgres/`): the same rows, its own types.

use tokio_postgres::{Client, GenericClient};

use super::error;
use crate::error::{Error, Result};
use crate::store::migrate::{Migration, checksum};

/// Every migration of the service store, in order.
pub const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        name: "0001_jobs.sql",
        sql: include_str!("../../../../../migrations/postgres/0001_jobs.sql"),
    },
    Migration {
        version: 2,
        name: "0002_canonical.sql",
        sql: include_str!("../../../../../migrations/postgres/0002_canonical.sql"),
    },
    Migration {
        version: 3,
        name: "0003_job_history.sql",
        sql: include_str!("../../../../../migrations/postgres/0003_job_history.sql"),
    },
    Migration {
        version: 4,
        name: "0004_derived_rows.sql",
        sql: include_str!("../../../../../migrations/postgres/0004_derived_rows.sql"),
    },
];

/// The newest schema version of the service store.
#[must_use]
pub fn latest() -> i64 {
    MIGRATIONS.last().map_or(0, |m| m.version)
}

const LEDGER: &str = "CREATE TABLE IF NOT EXISTS schema_migrations (
  version    INTEGER PRIMARY KEY,
  name       TEXT    NOT NULL,
  checksum   TEXT    NOT NULL CHECK (length(checksum) = 64),
  applied_at BIGINT  NOT NULL
)";

/// A key for `pg_advisory_xact_lock`: daemons that migrate at once take turns.
const MIGRATION_LOCK: i64 = 0x0074_7963_686f_7261; // "tychora"

/// Versions applied so far with their recorded checksums, checked against the embedded texts.
async fn verify(client: &impl GenericClient, location: &str) -> Result<i64> {
    let exists = client
        .query_opt("SELECT 1 FROM pg_tables WHERE tablename = 'schema_migrations' AND schemaname = current_schema()", &[])
        .await
        .map_err(|e| error(location, &e))?
        .is_some();
    if !exists {
        return Ok(0);
    }
    let rows = client
        .query(
            "SELECT version, checksum FROM schema_migrations ORDER BY version",
            &[],
        )
        .await
        .map_err(|e| error(location, &e))?;
    let mut current = 0;
    for row in rows {
        let version = i64::from(row.get::<_, i32>(0));
        let recorded: String = row.get(1);
        let Some(migration) = MIGRATIONS.iter().find(|m| m.version == version) else {
            return Err(Error::Conflict(format!(
                "the store {location} has schema version {version}, newer than this engine knows ({}); upgrade tychora",
                latest()
            )));
        };
        let computed = checksum(migration.sql);
        if computed != recorded {
            return Err(Error::ChecksumMismatch {
                what: format!(
                    "migration postgres/{} of the store {location} (migrated by a different build)",
                    migration.name
                ),
                recorded,
                computed,
            });
        }
        current = version;
    }
    Ok(current)
}

/// Fails unless the store is at the latest schema with matching checksums.
pub(super) async fn check(client: &mut Client, location: &str) -> Result<()> {
    let current = verify(client, location).await?;
    if current < latest() {
        return Err(Error::MigrationRequired {
            path: location.into(),
            current,
            required: latest(),
        });
    }
    Ok(())
}

/// Applies every pending migration, each in its own transaction, under an advisory lock.
pub(super) async fn apply(client: &mut Client, location: &str) -> Result<Vec<i64>> {
    let failed = |e: tokio_postgres::Error| error(location, &e);
    let mut done = Vec::new();
    loop {
        let tx = client.transaction().await.map_err(failed)?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
            .await
            .map_err(failed)?;
        tx.batch_execute(LEDGER).await.map_err(failed)?;
        let current = verify(&tx, location).await?;
        let Some(migration) = MIGRATIONS.iter().find(|m| m.version > current) else {
            tx.commit().await.map_err(failed)?;
            return Ok(done);
        };
        tx.batch_execute(migration.sql).await.map_err(failed)?;
        let version = i32::try_from(migration.version)
            .map_err(|_| Error::Internal("migration version out of range".into()))?;
        tx.execute(
            "INSERT INTO schema_migrations (version, name, checksum, applied_at) VALUES ($1, $2, $3, (extract(epoch FROM clock_timestamp()) * 1000)::BIGINT)",
            &[&version, &migration.name, &checksum(migration.sql)],
        )
        .await
        .map_err(failed)?;
        tx.commit().await.map_err(failed)?;
        done.push(migration.version);
    }
}
