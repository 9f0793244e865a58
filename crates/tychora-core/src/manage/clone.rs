//! A closed workspace copied cheaply as the start of another (a knowledge state's descendant):
//! the database through SQLite's backup API (one read transaction, so one consistent state, while
//! readers of the source keep reading), and the immutable files — content-addressed artifacts and
//! lexical generations, which are never rewritten in place, only unlinked — as hard links, so an
//! additional state costs its database and what it adds, not a second copy of every byte.
//! Vector generations are copied: they are not promised immutable.

use std::fs;
use std::path::Path;

use rusqlite::{Connection, OpenFlags};

use crate::error::{Error, Result};

/// What a clone shared and what it copied.
#[derive(Debug, Clone, serde::Serialize)]
pub struct CloneReport {
    /// Files hard-linked (shared with the source).
    pub linked: u64,
    /// Bytes written: the database and the files that had to be copied.
    pub copied_bytes: u64,
    /// Wall time of the clone.
    pub duration_ms: f64,
}

/// Copies the workspace in `src` to `dest` (which must not exist). The source must not be written
/// meanwhile by a job (a built state is not); it may be open for reading.
///
/// # Errors
/// `E_CONFLICT` when `dest` exists; SQLite and I/O errors (a partial `dest` is removed).
pub fn clone_workspace(src: &Path, dest: &Path) -> Result<CloneReport> {
    let started = std::time::Instant::now();
    if dest.exists() {
        return Err(Error::Conflict(format!(
            "{} already exists",
            dest.display()
        )));
    }
    // A clone shares its source's artifacts (hard links in the folder). In a bucket, sharing
    // would let one workspace's erasure or retention delete the other's objects: refused.
    let config = crate::config::Config::load(&src.join("workspace.toml"))?;
    // Its indexes on a search cluster are claimed for its store's identity, which a clone copies:
    // the two would collect and erase each other's generations under one prefix.
    if let Some(search) = &config.search {
        return Err(Error::InvalidArgument(format!(
            "{} keeps its indexes on a search cluster (prefix {:?}): a clone would share (and could collect) them; only a workspace with its indexes in its folder is cloned",
            src.display(),
            search.prefix
        )));
    }
    if let Some(bucket) = config.artifacts {
        return Err(Error::InvalidArgument(format!(
            "{} keeps its artifacts in {}: a clone would share (and could erase) its objects; only a workspace with its artifacts in its folder is cloned",
            src.display(),
            bucket.url
        )));
    }
    let result = copy_into(src, dest);
    if result.is_err() {
        let _ = fs::remove_dir_all(dest);
    }
    let (linked, copied_bytes) = result?;
    Ok(CloneReport {
        linked,
        copied_bytes,
        duration_ms: started.elapsed().as_secs_f64() * 1000.0,
    })
}

fn copy_into(src: &Path, dest: &Path) -> Result<(u64, u64)> {
    fs::create_dir_all(dest.join("runtime")).map_err(|e| Error::io(dest, e))?;
    let db = dest.join("corpus.sqlite3");
    let source = Connection::open_with_flags(
        src.join("corpus.sqlite3"),
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    super::backup::copy_database(&source, &db)?;
    drop(source);
    let mut copied = fs::metadata(&db).map_err(|e| Error::io(&db, e))?.len();
    copied += fs::copy(src.join("workspace.toml"), dest.join("workspace.toml"))
        .map_err(|e| Error::io(src.join("workspace.toml"), e))?;
    let mut linked = 0;
    for (sub, link) in [
        ("artifacts", true),
        ("indexes/lexical", true),
        ("indexes/text", false),
        ("indexes/visual", false),
    ] {
        let from = src.join(sub);
        if from.is_dir() {
            tree(&from, &dest.join(sub), link, &mut linked, &mut copied)?;
        }
    }
    crate::artifact::sync_dir(dest)?;
    Ok((linked, copied))
}

/// Recreates `from` at `to`: files hard-linked when `link` (copied where the file system refuses),
/// otherwise copied.
fn tree(from: &Path, to: &Path, link: bool, linked: &mut u64, copied: &mut u64) -> Result<()> {
    fs::create_dir_all(to).map_err(|e| Error::io(to, e))?;
    for entry in fs::read_dir(from).map_err(|e| Error::io(from, e))? {
        let entry = entry.map_err(|e| Error::io(from, e))?;
        let (path, target) = (entry.path(), to.join(entry.file_name()));
        let kind = entry.file_type().map_err(|e| Error::io(&path, e))?;
        if kind.is_dir() {
            tree(&path, &target, link, linked, copied)?;
        } else if kind.is_file() {
            if link && fs::hard_link(&path, &target).is_ok() {
                *linked += 1;
            } else {
                *copied += fs::copy(&path, &target).map_err(|e| Error::io(&path, e))?;
            }
        }
    }
    Ok(())
}
