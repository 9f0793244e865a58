//! Forward-only, checksummed schema migrations embedded in the binary.
//!
//! Opening a workspace never migrates it: [`check`] fails with `E_MIGRATION_REQUIRED` when the
//! database is behind, and with `E_CHECKSUM_MISMATCH` when a recorded migration differs from the
//! embedded one. Only [`apply`] (from `tychora init` and `tychora manage migrate`) changes the schema.

use rusqlite::{Connection, OptionalExtension};
use sha2::{Digest, Sha256};

use crate::error::{Error, Result};

/// One embedded migration.
#[derive(Debug, Clone, Copy)]
pub struct Migration {
    /// Version number (the `NNNN` of the file name).
    pub version: i64,
    /// File name.
    pub name: &'static str,
    /// SQL text.
    pub sql: &'static str,
}

/// Every migration this engine knows, in order.
pub const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        name: "0001_initial.sql",
        sql: include_str!("../../../../migrations/0001_initial.sql"),
    },
    Migration {
        version: 2,
        name: "0002_code_relations.sql",
        sql: include_str!("../../../../migrations/0002_code_relations.sql"),
    },
    Migration {
        version: 3,
        name: "0003_vectors.sql",
        sql: include_str!("../../../../migrations/0003_vectors.sql"),
    },
    Migration {
        version: 4,
        name: "0004_operations.sql",
        sql: include_str!("../../../../migrations/0004_operations.sql"),
    },
    Migration {
        version: 5,
        name: "0005_vector_layers.sql",
        sql: include_str!("../../../../migrations/0005_vector_layers.sql"),
    },
    Migration {
        version: 6,
        name: "0006_documents.sql",
        sql: include_str!("../../../../migrations/0006_documents.sql"),
    },
    Migration {
        version: 7,
        name: "0007_pdf.sql",
        sql: include_str!("../../../../migrations/0007_pdf.sql"),
    },
    Migration {
        version: 8,
        name: "0008_pdf_tables.sql",
        sql: include_str!("../../../../migrations/0008_pdf_tables.sql"),
    },
    Migration {
        version: 9,
        name: "0009_ocr.sql",
        sql: include_str!("../../../../migrations/0009_ocr.sql"),
    },
    Migration {
        version: 10,
        name: "0010_visual_assets.sql",
        sql: include_str!("../../../../migrations/0010_visual_assets.sql"),
    },
    Migration {
        version: 11,
        name: "0011_asset_descriptions.sql",
        sql: include_str!("../../../../migrations/0011_asset_descriptions.sql"),
    },
    Migration {
        version: 12,
        name: "0012_visual_vectors.sql",
        sql: include_str!("../../../../migrations/0012_visual_vectors.sql"),
    },
    Migration {
        version: 13,
        name: "0013_legal_kinds.sql",
        sql: include_str!("../../../../migrations/0013_legal_kinds.sql"),
    },
    Migration {
        version: 14,
        name: "0014_formats_and_kinds.sql",
        sql: include_str!("../../../../migrations/0014_formats_and_kinds.sql"),
    },
    Migration {
        version: 15,
        name: "0015_facets_and_records.sql",
        sql: include_str!("../../../../migrations/0015_facets_and_records.sql"),
    },
    Migration {
        version: 16,
        name: "0016_relations.sql",
        sql: include_str!("../../../../migrations/0016_relations.sql"),
    },
    Migration {
        version: 17,
        name: "0017_trust.sql",
        sql: include_str!("../../../../migrations/0017_trust.sql"),
    },
    Migration {
        version: 18,
        name: "0018_summaries.sql",
        sql: include_str!("../../../../migrations/0018_summaries.sql"),
    },
    Migration {
        version: 19,
        name: "0019_sensitivity.sql",
        sql: include_str!("../../../../migrations/0019_sensitivity.sql"),
    },
    Migration {
        version: 20,
        name: "0020_retention.sql",
        sql: include_str!("../../../../migrations/0020_retention.sql"),
    },
    Migration {
        version: 21,
        name: "0021_job_cancellation.sql",
        sql: include_str!("../../../../migrations/0021_job_cancellation.sql"),
    },
    Migration {
        version: 22,
        name: "0022_job_leases.sql",
        sql: include_str!("../../../../migrations/0022_job_leases.sql"),
    },
    Migration {
        version: 23,
        name: "0023_immutable_revisions.sql",
        sql: include_str!("../../../../migrations/0023_immutable_revisions.sql"),
    },
];

/// The newest schema version.
#[must_use]
pub fn latest() -> i64 {
    MIGRATIONS.last().map_or(0, |m| m.version)
}

/// The newest migration a database has applied (0 for none).
///
/// # Errors
/// SQLite errors.
pub fn version(conn: &Connection) -> Result<i64> {
    Ok(conn.query_row(
        "SELECT COALESCE(MAX(version), 0) FROM schema_migrations",
        [],
        |r| r.get(0),
    )?)
}

/// sha256 of a migration's SQL.
#[must_use]
pub fn checksum(sql: &str) -> String {
    hex::encode(Sha256::digest(sql.as_bytes()))
}

const LEDGER: &str = "CREATE TABLE IF NOT EXISTS schema_migrations (
  version    INTEGER PRIMARY KEY,
  name       TEXT    NOT NULL,
  checksum   TEXT    NOT NULL,
  applied_at INTEGER NOT NULL
) STRICT";

/// Versions applied so far, with their recorded checksums.
fn applied(conn: &Connection) -> Result<Vec<(i64, String)>> {
    let exists: Option<i64> = conn
        .query_row(
            "SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'schema_migrations'",
            [],
            |r| r.get(0),
        )
        .optional()?;
    if exists.is_none() {
        return Ok(Vec::new());
    }
    let mut stmt =
        conn.prepare("SELECT version, checksum FROM schema_migrations ORDER BY version")?;
    let rows = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(rows)
}

/// Verifies recorded checksums; returns the current schema version.
fn verify(conn: &Connection) -> Result<i64> {
    let mut current = 0;
    for (version, recorded) in applied(conn)? {
        let Some(migration) = MIGRATIONS.iter().find(|m| m.version == version) else {
            return Err(Error::Conflict(format!(
                "workspace has schema version {version}, newer than this engine knows ({}); upgrade tychora",
                latest()
            )));
        };
        let computed = checksum(migration.sql);
        if computed != recorded {
            return Err(Error::ChecksumMismatch {
                what: format!(
                    "migration {} (the workspace was migrated by a different build; `tychora manage migrate` applies only pending migrations and cannot repair this: restore the workspace or rebuild it from its sources)",
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

/// Fails unless the database is at the latest schema with matching checksums.
///
/// # Errors
/// `E_MIGRATION_REQUIRED` or `E_CHECKSUM_MISMATCH`.
pub fn check(conn: &Connection, workspace: &std::path::Path) -> Result<()> {
    let current = verify(conn)?;
    if current < latest() {
        return Err(Error::MigrationRequired {
            path: workspace.to_path_buf(),
            current,
            required: latest(),
        });
    }
    Ok(())
}

/// Applies every pending migration, each in its own transaction. Returns the versions applied.
///
/// # Errors
/// `E_CHECKSUM_MISMATCH` when an applied migration was altered; SQLite errors.
pub fn apply(conn: &mut Connection) -> Result<Vec<i64>> {
    conn.execute_batch(LEDGER)?;
    let current = verify(conn)?;
    let mut done = Vec::new();
    for migration in MIGRATIONS.iter().filter(|m| m.version > current) {
        let tx = conn.transaction()?;
        tx.execute_batch(migration.sql)?;
        tx.execute(
            "INSERT INTO schema_migrations (version, name, checksum, applied_at) VALUES (?1, ?2, ?3, ?4)",
            rusqlite::params![migration.version, migration.name, checksum(migration.sql), crate::clock::now_ms()],
        )?;
        tx.commit()?;
        done.push(migration.version);
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fresh_database_needs_migration_then_passes() {
        let mut conn = Connection::open_in_memory().unwrap();
        let err = check(&conn, std::path::Path::new("/ws")).unwrap_err();
        assert_eq!(err.code(), crate::ErrorCode::MigrationRequired);
        assert_eq!(
            apply(&mut conn).unwrap(),
            (1..=latest()).collect::<Vec<_>>()
        );
        check(&conn, std::path::Path::new("/ws")).unwrap();
        assert!(apply(&mut conn).unwrap().is_empty());
    }

    #[test]
    fn altered_checksum_is_refused() {
        let mut conn = Connection::open_in_memory().unwrap();
        apply(&mut conn).unwrap();
        conn.execute(
            "UPDATE schema_migrations SET checksum = 'abc' WHERE version = 1",
            [],
        )
        .unwrap();
        assert_eq!(
            check(&conn, std::path::Path::new("/ws"))
                .unwrap_err()
                .code(),
            crate::ErrorCode::ChecksumMismatch
        );
    }

    /// Migration 21 rebuilds `jobs` (a new status in its CHECK) under the children that name it.
    #[test]
    fn cancellation_rebuilds_jobs_under_its_children() {
        let mut conn = Connection::open_in_memory().unwrap();
        // As every workspace connection is (`store::configure`).
        conn.pragma_update(None, "foreign_keys", "ON").unwrap();
        conn.execute_batch(LEDGER).unwrap();
        for migration in MIGRATIONS.iter().filter(|m| m.version <= 20) {
            conn.execute_batch(migration.sql).unwrap();
            conn.execute(
                "INSERT INTO schema_migrations (version, name, checksum, applied_at) VALUES (?1, ?2, ?3, 0)",
                rusqlite::params![migration.version, migration.name, checksum(migration.sql)],
            )
            .unwrap();
        }
        conn.execute_batch(
            "INSERT INTO diagnostic_lists (sha256, count, json) VALUES (printf('%064d', 1), 0, '[]');
             INSERT INTO jobs (id, kind, status, request_json, receipt_json, pid, error, created_at, started_at, finished_at, diagnostics_sha256)
               VALUES (1, 'add', 'succeeded', '{}', '{\"status\":\"succeeded\"}', 7, NULL, 10, 11, 12, printf('%064d', 1)),
                      (2, 'add', 'queued', '{\"request\":{}}', NULL, NULL, NULL, 20, NULL, NULL, NULL),
                      (3, 'rebuild', 'interrupted', '{}', NULL, 8, 'died', 30, 31, 32, NULL);
             INSERT INTO job_steps (job_id, name, status, started_at, finished_at, detail_json) VALUES (1, 'walk', 'done', 11, 12, '{}');
             INSERT INTO job_events (job_id, at, level, code, message) VALUES (3, 31, 'error', 'E_IO', 'gone');
             INSERT INTO snapshots (id, parent_id, job_id, chunk_count, created_at) VALUES (1, NULL, 1, 0, 12);",
        )
        .unwrap();
        let rows = |conn: &Connection| -> Vec<String> {
            conn.prepare("SELECT id || kind || status || request_json || ifnull(receipt_json, '-') || ifnull(pid, '-') || ifnull(error, '-') || created_at || ifnull(started_at, '-') || ifnull(finished_at, '-') || ifnull(diagnostics_sha256, '-') FROM jobs ORDER BY id")
                .unwrap()
                .query_map([], |r| r.get(0))
                .unwrap()
                .collect::<rusqlite::Result<_>>()
                .unwrap()
        };
        let before = rows(&conn);
        let cancel = "UPDATE jobs SET status = 'cancelled' WHERE id = 2";
        assert!(
            conn.execute(cancel, []).is_err(),
            "schema 20 has no 'cancelled'"
        );

        assert_eq!(
            apply(&mut conn).unwrap(),
            (21..=latest()).collect::<Vec<_>>()
        );
        check(&conn, std::path::Path::new("/ws")).unwrap();
        assert_eq!(rows(&conn), before);
        // Migration 22: the rows kept, no lease held, no take counted.
        let leases: (i64, Option<String>, Option<i64>) = conn
            .query_row(
                "SELECT attempts, worker, lease_until FROM jobs WHERE id = 2",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .unwrap();
        assert_eq!(leases, (0, None, None));
        let orphans: i64 = conn
            .query_row("SELECT COUNT(*) FROM pragma_foreign_key_check", [], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(orphans, 0);
        let index: String = conn
            .query_row(
                "SELECT tbl_name FROM sqlite_schema WHERE type = 'index' AND name = 'jobs_by_finished'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(index, "jobs");
        // The children still name `jobs`, and their keys are still enforced against it.
        let dangling: i64 = conn
            .query_row(
                "SELECT COUNT(*) FROM sqlite_schema WHERE sql LIKE '%jobs_v20%'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(dangling, 0);
        assert!(
            conn.execute(
                "INSERT INTO job_steps (job_id, name, status, started_at) VALUES (99, 'walk', 'running', 0)",
                []
            )
            .is_err()
        );
        assert!(
            conn.execute("DELETE FROM jobs WHERE id = 1", []).is_err(),
            "a snapshot names job 1"
        );
        assert_eq!(conn.execute(cancel, []).unwrap(), 1);
        assert!(
            conn.execute("UPDATE jobs SET status = 'paused' WHERE id = 2", [])
                .is_err()
        );
    }

    #[test]
    fn every_table_is_strict() {
        let mut conn = Connection::open_in_memory().unwrap();
        apply(&mut conn).unwrap();
        let loose: Vec<String> = conn
            .prepare(
                "SELECT name FROM sqlite_schema WHERE type = 'table' AND sql NOT LIKE '%STRICT%'",
            )
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        assert!(loose.is_empty(), "{loose:?}");
    }
}
