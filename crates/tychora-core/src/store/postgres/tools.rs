//! PostgreSQL's own dump and restore programs (`pg_dump`, `pg_restore`), run as child processes:
//! a service store's backup is the database's own consistent dump, not a copy Tychora writes row
//! by row. Found in `TYCHORA_PG_BIN`, else on `PATH`, else in the newest Debian server's folder
//! (`/usr/lib/postgresql/<version>/bin`, where Debian's `postgresql-client` puts them).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::{Error, Result};

/// The program `name`, or `E_INVALID_ARGUMENT` saying where it was looked for.
fn tool(name: &str) -> Result<PathBuf> {
    let mut places: Vec<PathBuf> = Vec::new();
    if let Some(dir) = std::env::var_os("TYCHORA_PG_BIN") {
        places.push(PathBuf::from(dir));
    }
    if let Some(path) = std::env::var_os("PATH") {
        places.extend(std::env::split_paths(&path));
    }
    if let Ok(entries) = std::fs::read_dir("/usr/lib/postgresql") {
        let mut versions: Vec<(u32, PathBuf)> = entries
            .flatten()
            .filter_map(|e| {
                let v = e.file_name().to_string_lossy().parse::<u32>().ok()?;
                Some((v, e.path().join("bin")))
            })
            .collect();
        versions.sort();
        places.extend(versions.into_iter().rev().map(|(_, p)| p));
    }
    places
        .into_iter()
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
        .ok_or_else(|| {
            Error::InvalidArgument(format!(
                "{name} not found (TYCHORA_PG_BIN, PATH, /usr/lib/postgresql/*/bin): install PostgreSQL's client programs (Debian: postgresql-client)"
            ))
        })
}

/// Runs `program` with `args`; its error output, on one line, when it fails.
fn run(program: &str, args: &[&std::ffi::OsStr]) -> Result<()> {
    let path = tool(program)?;
    let out = Command::new(&path)
        .args(args)
        .output()
        .map_err(|e| Error::io(&path, e))?;
    if out.status.success() {
        return Ok(());
    }
    let said = String::from_utf8_lossy(&out.stderr)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let said: String = said.chars().take(600).collect();
    Err(if said.contains("already exists") {
        Error::Conflict(format!(
            "{program}: the target database is not empty ({said})"
        ))
    } else if said.contains("could not connect") || said.contains("connection to server") {
        Error::StoreUnavailable(format!("{program}: {said}"))
    } else {
        Error::Internal(format!("{program} failed: {said}"))
    })
}

/// Dumps the database `url` names, as it is in the exported snapshot `snapshot`, into `file`
/// (`pg_dump`'s custom format: compressed, restored by `pg_restore`). No owners or privileges: a
/// restore belongs to whoever restores it.
///
/// # Errors
/// `E_INVALID_ARGUMENT` without `pg_dump`; `E_STORE_UNAVAILABLE` when it cannot connect; its
/// other failures as `E_INTERNAL`.
pub fn dump(url: &str, snapshot: &str, file: &Path) -> Result<()> {
    let snapshot = format!("--snapshot={snapshot}");
    let db = format!("--dbname={url}");
    let mut out = std::ffi::OsString::from("--file=");
    out.push(file);
    run(
        "pg_dump",
        &[
            "--format=custom".as_ref(),
            "--no-owner".as_ref(),
            "--no-privileges".as_ref(),
            snapshot.as_ref(),
            out.as_ref(),
            db.as_ref(),
        ],
    )
}

/// Restores the dump `file` into the database `url` names, in one transaction: an error (a
/// database that is not empty) leaves it as it was.
///
/// # Errors
/// `E_CONFLICT` for a database that already holds the tables; as [`dump`].
pub fn restore(url: &str, file: &Path) -> Result<()> {
    let db = format!("--dbname={url}");
    run(
        "pg_restore",
        &[
            "--no-owner".as_ref(),
            "--no-privileges".as_ref(),
            "--single-transaction".as_ref(),
            "--exit-on-error".as_ref(),
            db.as_ref(),
            file.as_os_str(),
        ],
    )
}
