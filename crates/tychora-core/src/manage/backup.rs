//! `manage backup` and `manage restore`: a consistent, self-verifying copy of a workspace.
//!
//! The backup holds the writer (jobs and garbage collection wait; queries go on), copies
//! `corpus.sqlite3` with SQLite's online backup API in one step (one read transaction, so one
//! consistent state), then follows that copy's own references — the artifacts its revisions
//! name (minus erased ones) and the index generations its snapshots name — never a scan of names
//! that look like hashes. Every file is hashed as it is copied into a temporary folder beside the
//! destination; `manifest.json` (sha256 and size of every file) is written last, fsynced, and the
//! folder renamed into place. A backup cut short (a full disk, a kill) leaves no folder at the
//! destination and nothing restore accepts.
//!
//! Restore checks the manifest against every file before anything becomes a workspace, copies
//! into a temporary folder beside the target, and renames it into place.

use std::collections::HashMap;
use std::fs::{self, File};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::artifact::sync_dir;
use crate::engine::Engine;
use crate::error::{Error, Result};

const MANIFEST: &str = "manifest.json";
const FORMAT: &str = "tychora-backup/1";

/// One file of a backup.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ManifestEntry {
    /// Its path relative to the backup folder, with `/` separators (the same path in the
    /// workspace).
    pub path: String,
    /// Its size in bytes, as copied.
    pub size: u64,
    /// sha256 of its bytes, computed as it was copied.
    pub sha256: String,
}

/// `manifest.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Manifest {
    /// `tychora-backup/1`; restore refuses any other.
    pub format: String,
    /// The version of the engine that wrote the backup.
    pub engine_version: String,
    /// The copied database's schema version (its newest applied migration).
    pub schema_version: i64,
    /// When the manifest was written, in milliseconds since the Unix epoch.
    pub created_at: i64,
    /// The snapshot readers see in the copy (`None`: nothing was published yet).
    pub current_snapshot_id: Option<i64>,
    /// Every file of the backup but the manifest: the database, `workspace.toml`, the
    /// artifacts and the index generation files it references.
    pub files: Vec<ManifestEntry>,
    /// A service store's backup: the file holding the database's own dump (`pg_dump`'s custom
    /// format) instead of `corpus.sqlite3`, and no index generations (each daemon builds its own
    /// from the store).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_dump: Option<String>,
    /// Folders of index generations the backup does not hold because they live on the search
    /// cluster (`[search]`): `indexes/lexical/`, `indexes/text/`. The restored workspace names
    /// the same cluster and prefix; `manage rebuild` writes them again if the cluster lost them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub on_cluster: Vec<String>,
}

/// The dump of a service store's database in its backup.
const SERVICE_DUMP: &str = "store.pgdump";

/// What `manage backup` or `manage restore` did.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BackupReport {
    /// The backup folder (backup) or the restored workspace (restore).
    pub dir: String,
    /// Files written and verified.
    pub files: usize,
    /// Their bytes.
    pub bytes: u64,
    /// Retained originals among them.
    pub artifacts: usize,
    /// Index generations among them.
    pub generations: usize,
    /// The snapshot readers see in the copy.
    pub current_snapshot_id: Option<i64>,
    /// Wall time in milliseconds.
    pub duration_ms: f64,
}

/// A folder beside `dest` that becomes `dest` by one rename, removed if dropped before that.
struct Staging {
    dir: PathBuf,
    done: bool,
}

impl Staging {
    fn beside(dest: &Path) -> Result<Self> {
        if dest.exists() && fs::read_dir(dest).map_or(true, |mut d| d.next().is_some()) {
            return Err(Error::Conflict(format!(
                "{} already exists and is not empty",
                dest.display()
            )));
        }
        let parent = dest
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
        let name = dest
            .file_name()
            .map_or_else(|| "backup".into(), |n| n.to_string_lossy().into_owned());
        let dir = parent.join(format!(".{name}.partial-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        remove_abandoned(parent, &name);
        fs::create_dir(&dir).map_err(|e| Error::io(&dir, e))?;
        Ok(Self { dir, done: false })
    }

    fn commit(mut self, dest: &Path) -> Result<()> {
        if dest.exists() {
            fs::remove_dir(dest).map_err(|e| Error::io(dest, e))?;
        }
        fs::rename(&self.dir, dest).map_err(|e| Error::io(dest, e))?;
        if let Some(parent) = dest.parent().filter(|p| !p.as_os_str().is_empty()) {
            sync_dir(parent)?;
        }
        self.done = true;
        Ok(())
    }
}

/// Removes the staging folders of earlier backups or restores to the same destination whose
/// process is gone (killed mid-copy: nothing else ever collects them). A folder whose process
/// still runs is left alone: it may be a concurrent copy.
fn remove_abandoned(parent: &Path, name: &str) {
    let prefix = format!(".{name}.partial-");
    let Ok(entries) = fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let Some(pid) = file_name
            .to_str()
            .and_then(|n| n.strip_prefix(&prefix))
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if pid != std::process::id() && !process_alive(pid) {
            log::info!(
                "removing {} (left by a copy that did not finish)",
                entry.path().display()
            );
            let _ = fs::remove_dir_all(entry.path());
        }
    }
}

#[cfg(unix)]
fn process_alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return true;
    };
    // Signal 0 checks existence only; EPERM means it exists under another user.
    // SAFETY: kill(2) with signal 0 sends nothing.
    let rc = unsafe { libc::kill(pid, 0) };
    rc == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

#[cfg(not(unix))]
fn process_alive(_pid: u32) -> bool {
    // Without a cheap liveness check, keep the folder (never remove a running copy's).
    true
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.done {
            let _ = fs::remove_dir_all(&self.dir);
        }
    }
}

/// Copies the database `source` holds open into a new file `to` through SQLite's backup API:
/// every page in one step, so one read transaction and one consistent state, while other readers
/// keep reading.
pub(super) fn copy_database(source: &Connection, to: &Path) -> Result<()> {
    let mut copy = Connection::open(to)?;
    let backup = rusqlite::backup::Backup::new(source, &mut copy)?;
    match backup.step(-1)? {
        rusqlite::backup::StepResult::Done => Ok(()),
        other => Err(Error::Conflict(format!(
            "the database could not be copied in one step ({other:?}); try again"
        ))),
    }
}

/// Copies `from` to `to` (a new file), fsyncs it, and returns its size and sha256.
fn copy_hashed(from: &Path, to: &Path) -> Result<(u64, String)> {
    if let Some(parent) = to.parent() {
        fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
    }
    let mut input = File::open(from).map_err(|e| Error::io(from, e))?;
    let mut output = File::create_new(to).map_err(|e| Error::io(to, e))?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut size = 0u64;
    loop {
        let n = input.read(&mut buf).map_err(|e| Error::io(from, e))?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        output.write_all(&buf[..n]).map_err(|e| Error::io(to, e))?;
        size += n as u64;
    }
    output.sync_all().map_err(|e| Error::io(to, e))?;
    Ok((size, hex::encode(hasher.finalize())))
}

/// Writes `bytes` to a new file `to` (fsynced), returning their size and sha256.
fn write_new(to: &Path, bytes: &[u8]) -> Result<(u64, String)> {
    if let Some(parent) = to.parent() {
        fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
    }
    let mut output = File::create_new(to).map_err(|e| Error::io(to, e))?;
    output
        .write_all(bytes)
        .and_then(|()| output.sync_all())
        .map_err(|e| Error::io(to, e))?;
    Ok((bytes.len() as u64, crate::artifact::sha256_hex(bytes)))
}

fn hash_file(path: &Path) -> Result<(u64, String)> {
    let mut input = File::open(path).map_err(|e| Error::io(path, e))?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut size = 0u64;
    loop {
        let n = input.read(&mut buf).map_err(|e| Error::io(path, e))?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        size += n as u64;
    }
    Ok((size, hex::encode(hasher.finalize())))
}

/// Syncs every directory under `dir` (and `dir`), so the renames and creations are durable.
fn sync_tree(dir: &Path) -> Result<()> {
    for entry in fs::read_dir(dir).map_err(|e| Error::io(dir, e))?.flatten() {
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            sync_tree(&entry.path())?;
        }
    }
    sync_dir(dir)
}

/// The files a copy of the database references: artifacts (`artifacts/sha256/…`) and index
/// generations (`indexes/lexical/<g>/…`, `indexes/text/<g>`), as paths relative to the workspace.
fn referenced(db: &Connection) -> Result<(Vec<String>, Vec<String>)> {
    let artifacts = crate::store::sources::referenced_artifacts(db, true)?;
    let generations = crate::store::batches::generation_paths(db)?;
    Ok((artifacts, generations))
}

/// Writes a verified backup of the workspace to `dest` (which must not exist, or be empty).
///
/// # Errors
/// `E_CONFLICT` when `dest` holds something; I/O errors (a full disk) leave nothing at `dest`.
pub(crate) fn backup(engine: &Engine, dest: &Path) -> Result<BackupReport> {
    let started = std::time::Instant::now();
    let dest = absolute(dest)?;
    if dest.starts_with(engine.dir()) {
        return Err(Error::InvalidArgument(format!(
            "the backup destination {} is inside the workspace",
            dest.display()
        )));
    }
    let staging = Staging::beside(&dest)?;
    // The writer is held: no job publishes and no garbage collection removes a generation or an
    // artifact while the references are followed. Readers (queries) are not blocked.
    if let Some(pg) = engine.canonical().postgres_store() {
        return backup_service(engine, pg, &dest, staging, started);
    }
    let writer = engine.writer()?;
    let Some(connection) = writer.sqlite() else {
        return Err(Error::Internal(
            "an embedded store without its database".into(),
        ));
    };
    let db_path = staging.dir.join("corpus.sqlite3");
    copy_database(connection, &db_path)?;
    let mut files: Vec<ManifestEntry> = Vec::new();
    let (db_size, db_sha) = {
        // A backup written by the API is a rollback-journal database; checkpoint nothing, just hash.
        File::open(&db_path)
            .and_then(|f| f.sync_all())
            .map_err(|e| Error::io(&db_path, e))?;
        hash_file(&db_path)?
    };
    files.push(ManifestEntry {
        path: "corpus.sqlite3".into(),
        size: db_size,
        sha256: db_sha,
    });
    let copy = Connection::open_with_flags(&db_path, OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    let (artifacts, generations) = referenced(&copy)?;
    // Generations on a search cluster are not files of the workspace: not copied.
    let mut on_cluster = Vec::new();
    if engine.lexical_store().local_dir().is_none() {
        on_cluster.push("indexes/lexical/".to_string());
    }
    if engine.vector_store().local_dir().is_none() {
        on_cluster.push("indexes/text/".to_string());
    }
    let generations: Vec<String> = generations
        .into_iter()
        .filter(|g| !on_cluster.iter().any(|c| g.starts_with(c.as_str())))
        .collect();
    let current = crate::store::snapshots::current(&copy)?;
    let schema = crate::store::migrate::version(&copy)?;
    drop(copy);
    copy_config_and_artifacts(engine, &staging, &artifacts, &mut files)?;
    crate::job::failpoint("backup-after-artifacts");
    for rel in &generations {
        let from = engine.dir().join(rel);
        let entries: Vec<(PathBuf, String)> = if from.is_dir() {
            fs::read_dir(&from)
                .map_err(|e| Error::io(&from, e))?
                .flatten()
                .filter(|e| !e.file_name().to_string_lossy().starts_with(".tantivy-"))
                .map(|e| {
                    (
                        e.path(),
                        format!("{rel}/{}", e.file_name().to_string_lossy()),
                    )
                })
                .collect()
        } else {
            vec![(from.clone(), rel.clone())]
        };
        for (path, rel) in entries {
            let (size, sha256) = copy_hashed(&path, &staging.dir.join(&rel))?;
            files.push(ManifestEntry {
                path: rel,
                size,
                sha256,
            });
        }
    }
    drop(writer);
    let manifest = Manifest {
        format: FORMAT.into(),
        engine_version: crate::engine::ENGINE_VERSION.into(),
        schema_version: schema,
        created_at: crate::clock::now_ms(),
        current_snapshot_id: current,
        files,
        service_dump: None,
        on_cluster,
    };
    let report = BackupReport {
        dir: dest.display().to_string(),
        files: manifest.files.len(),
        bytes: manifest.files.iter().map(|f| f.size).sum(),
        artifacts: artifacts.len(),
        generations: generations.len(),
        current_snapshot_id: current,
        duration_ms: 0.0,
    };
    seal(&staging, &manifest)?;
    crate::job::failpoint("backup-before-rename");
    staging.commit(&dest)?;
    Ok(BackupReport {
        duration_ms: started.elapsed().as_secs_f64() * 1000.0,
        ..report
    })
}

/// A service store's backup: the database's own dump, taken in one exported snapshot, and the
/// artifacts that snapshot's rows reference, read in the same snapshot (so the dump and the
/// artifacts agree whatever the other daemons write meanwhile), fetched from the bucket and
/// checked. Nothing is held: daemons go on taking writes.
fn backup_service(
    engine: &Engine,
    pg: &crate::store::postgres::PgStore,
    dest: &Path,
    staging: Staging,
    started: std::time::Instant,
) -> Result<BackupReport> {
    let url = &engine
        .config()
        .store
        .as_ref()
        .ok_or_else(|| Error::Internal("a service store without its [store] setting".into()))?
        .url;
    let dump = staging.dir.join(SERVICE_DUMP);
    let (artifacts, current, schema) = pg.exported_snapshot(|snapshot, tx| {
        crate::store::postgres::tools::dump(url, snapshot, &dump)?;
        Ok((
            crate::store::sources::referenced_artifacts(tx, true)?,
            crate::store::snapshots::current(tx)?,
            crate::store::postgres::latest(),
        ))
    })?;
    let mut files = vec![];
    let (size, sha256) = hash_file(&dump)?;
    files.push(ManifestEntry {
        path: SERVICE_DUMP.into(),
        size,
        sha256,
    });
    copy_config_and_artifacts(engine, &staging, &artifacts, &mut files)?;
    let manifest = Manifest {
        format: FORMAT.into(),
        engine_version: crate::engine::ENGINE_VERSION.into(),
        schema_version: schema,
        created_at: crate::clock::now_ms(),
        current_snapshot_id: current,
        files,
        service_dump: Some(SERVICE_DUMP.into()),
        on_cluster: Vec::new(),
    };
    let report = BackupReport {
        dir: dest.display().to_string(),
        files: manifest.files.len(),
        bytes: manifest.files.iter().map(|f| f.size).sum(),
        artifacts: artifacts.len(),
        generations: 0,
        current_snapshot_id: current,
        duration_ms: 0.0,
    };
    seal(&staging, &manifest)?;
    staging.commit(dest)?;
    Ok(BackupReport {
        duration_ms: started.elapsed().as_secs_f64() * 1000.0,
        ..report
    })
}

/// Copies `workspace.toml` and the `artifacts` into the backup, each hashed as it is copied and
/// listed in `files`. A backup holds its artifacts as files in the embedded layout, wherever the
/// workspace keeps them (its folder or a bucket): it restores anywhere.
fn copy_config_and_artifacts(
    engine: &Engine,
    staging: &Staging,
    artifacts: &[String],
    files: &mut Vec<ManifestEntry>,
) -> Result<()> {
    let toml = engine.dir().join("workspace.toml");
    let (size, sha256) = copy_hashed(&toml, &staging.dir.join("workspace.toml"))?;
    files.push(ManifestEntry {
        path: "workspace.toml".into(),
        size,
        sha256,
    });
    for sha in artifacts {
        let rel = format!("artifacts/sha256/{}/{sha}", &sha[..2.min(sha.len())]);
        let (size, actual) = match engine.artifacts().local_path(sha) {
            Some(from) => copy_hashed(&from, &staging.dir.join(&rel))?,
            None => write_new(&staging.dir.join(&rel), &engine.artifacts().get(sha)?)?,
        };
        if &actual != sha {
            return Err(Error::ChecksumMismatch {
                what: format!("artifact {sha} (run `manage verify` before backing up)"),
                recorded: sha.clone(),
                computed: actual,
            });
        }
        files.push(ManifestEntry {
            path: rel,
            size,
            sha256: actual,
        });
    }
    Ok(())
}

/// Writes a backup's manifest last (a folder without it is not a backup), everything synced.
fn seal(staging: &Staging, manifest: &Manifest) -> Result<()> {
    sync_tree(&staging.dir)?;
    let json = serde_json::to_vec_pretty(manifest).map_err(|e| Error::Internal(e.to_string()))?;
    let path = staging.dir.join(MANIFEST);
    let mut file = File::create_new(&path).map_err(|e| Error::io(&path, e))?;
    file.write_all(&json)
        .and_then(|()| file.sync_all())
        .map_err(|e| Error::io(&path, e))?;
    sync_dir(&staging.dir)
}

/// Reads `manifest.json` of the backup in `src` and checks every file it lists (size and sha256)
/// and that the database references nothing the manifest lacks.
fn check(src: &Path) -> Result<Manifest> {
    let path = src.join(MANIFEST);
    let text = fs::read(&path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            Error::NotFound {
                what: "backup manifest (an unfinished or foreign folder is not a backup)",
                id: path.display().to_string(),
            }
        } else {
            Error::io(&path, e)
        }
    })?;
    let manifest: Manifest = serde_json::from_slice(&text)
        .map_err(|e| Error::Corrupt(format!("{}: {e}", path.display())))?;
    if manifest.format != FORMAT {
        return Err(Error::Corrupt(format!(
            "{}: format {:?}, expected {FORMAT}",
            path.display(),
            manifest.format
        )));
    }
    let mut listed: HashMap<&str, &ManifestEntry> = HashMap::new();
    for entry in &manifest.files {
        let rel = Path::new(&entry.path);
        if rel.is_absolute()
            || rel
                .components()
                .any(|c| !matches!(c, std::path::Component::Normal(_)))
        {
            return Err(Error::Corrupt(format!(
                "manifest names {:?}, outside the backup",
                entry.path
            )));
        }
        let (size, sha256) = hash_file(&src.join(rel))?;
        if size != entry.size || sha256 != entry.sha256 {
            return Err(Error::ChecksumMismatch {
                what: format!(
                    "{} in the backup ({size} bytes; manifest: {})",
                    entry.path, entry.size
                ),
                recorded: entry.sha256.clone(),
                computed: sha256,
            });
        }
        listed.insert(&entry.path, entry);
    }
    let database = manifest.service_dump.as_deref().unwrap_or("corpus.sqlite3");
    for required in [database, "workspace.toml"] {
        if !listed.contains_key(required) {
            return Err(Error::Corrupt(format!(
                "the manifest does not list {required}"
            )));
        }
    }
    if manifest.service_dump.is_some() {
        // The dump's references are read once it is restored (`manage verify`); its artifacts
        // were listed from the same snapshot as the dump.
        return Ok(manifest);
    }
    let db =
        Connection::open_with_flags(src.join("corpus.sqlite3"), OpenFlags::SQLITE_OPEN_READ_ONLY)?;
    let (artifacts, generations) = referenced(&db)?;
    for sha in &artifacts {
        let rel = format!("artifacts/sha256/{}/{sha}", &sha[..2.min(sha.len())]);
        if !listed.contains_key(rel.as_str()) {
            return Err(Error::Corrupt(format!(
                "the database references artifact {sha}, which the backup lacks"
            )));
        }
    }
    for rel in &generations {
        if manifest
            .on_cluster
            .iter()
            .any(|c| rel.starts_with(c.as_str()))
        {
            continue;
        }
        if !listed
            .keys()
            .any(|p| p == rel || p.starts_with(&format!("{rel}/")))
        {
            return Err(Error::Corrupt(format!(
                "the database references index generation {rel}, which the backup lacks"
            )));
        }
    }
    Ok(manifest)
}

/// Verifies the backup in `src` and makes it the workspace `dir` (which must not exist, or be
/// empty). Nothing is written to `dir` unless every file checks out.
///
/// # Errors
/// `E_NOT_FOUND` (no manifest), `E_CHECKSUM_MISMATCH`, `E_CORRUPT`, `E_CONFLICT` (`dir` not
/// empty), I/O errors.
pub fn restore(src: &Path, dir: &Path, target: &RestoreTarget<'_>) -> Result<BackupReport> {
    let started = std::time::Instant::now();
    let manifest = check(src)?;
    let service = match (&manifest.service_dump, target.store) {
        (Some(dump), Some(url)) => Some((dump.clone(), url)),
        (Some(_), None) => {
            return Err(Error::InvalidArgument(
                "this is a service store's backup: restore it into an empty PostgreSQL database named with --store".into(),
            ));
        }
        (None, Some(_)) => {
            return Err(Error::InvalidArgument(
                "this is an embedded workspace's backup: it restores into a folder, without --store".into(),
            ));
        }
        (None, None) => None,
    };
    if let Some((_, url)) = &service
        && crate::store::postgres::PgStore::names_a_password(url)
    {
        return Err(Error::InvalidArgument(
            "--store names a password: remove it, and set PGPASSWORD (or a ~/.pgpass entry)".into(),
        ));
    }
    let dir = absolute(dir)?;
    let staging = Staging::beside(&dir)?;
    for entry in &manifest.files {
        let (size, sha256) = copy_hashed(&src.join(&entry.path), &staging.dir.join(&entry.path))?;
        if size != entry.size || sha256 != entry.sha256 {
            return Err(Error::ChecksumMismatch {
                what: format!("{} (changed while it was restored)", entry.path),
                recorded: entry.sha256.clone(),
                computed: sha256,
            });
        }
    }
    retarget(
        &staging.dir.join("workspace.toml"),
        service.as_ref().map(|(_, url)| *url),
        target,
    )?;
    // A workspace that keeps its artifacts in a bucket gets them back there (create-only: an
    // object already in the bucket stays as it is; verify reads every one back), not in its folder.
    let config = crate::config::Config::load(&staging.dir.join("workspace.toml"))?;
    if config.artifacts.is_some() {
        let store = crate::engine::artifact_store(&staging.dir, &config)?;
        for entry in manifest
            .files
            .iter()
            .filter(|f| f.path.starts_with("artifacts/"))
        {
            let path = staging.dir.join(&entry.path);
            let bytes = fs::read(&path).map_err(|e| Error::io(&path, e))?;
            store.put(&entry.sha256, &bytes)?;
        }
        let folder = staging.dir.join("artifacts");
        fs::remove_dir_all(&folder).map_err(|e| Error::io(&folder, e))?;
    }
    if let Some((dump, url)) = &service {
        // Last: the database becomes the service's only once its artifacts are in place, in one
        // transaction (a database that is not empty refuses it whole).
        let path = staging.dir.join(dump);
        crate::store::postgres::tools::restore(url, &path)?;
        fs::remove_file(&path).map_err(|e| Error::io(&path, e))?;
    }
    for sub in ["artifacts", "indexes/lexical", "indexes/text", "runtime"] {
        let path = staging.dir.join(sub);
        fs::create_dir_all(&path).map_err(|e| Error::io(&path, e))?;
    }
    sync_tree(&staging.dir)?;
    crate::job::failpoint("restore-before-rename");
    staging.commit(&dir)?;
    Ok(BackupReport {
        dir: dir.display().to_string(),
        files: manifest.files.len(),
        bytes: manifest.files.iter().map(|f| f.size).sum(),
        artifacts: manifest
            .files
            .iter()
            .filter(|f| f.path.starts_with("artifacts/"))
            .count(),
        generations: manifest
            .files
            .iter()
            .filter_map(|f| f.path.strip_prefix("indexes/"))
            .map(|p| p.split('/').take(2).collect::<Vec<_>>().join("/"))
            .collect::<std::collections::HashSet<_>>()
            .len(),
        current_snapshot_id: manifest.current_snapshot_id,
        duration_ms: started.elapsed().as_secs_f64() * 1000.0,
    })
}

/// Where a restore puts a service store's backup: the database (empty) and, when it is not the
/// backup's own, the bucket.
#[derive(Debug, Clone, Copy, Default)]
pub struct RestoreTarget<'a> {
    /// The PostgreSQL database (a service store's backup only).
    pub store: Option<&'a str>,
    /// The bucket (`s3://bucket/prefix`) the artifacts go into instead of the backup's.
    pub artifacts: Option<&'a str>,
    /// The bucket's endpoint when it is not AWS.
    pub endpoint: Option<&'a str>,
}

/// Points the restored workspace.toml at the target's store and bucket.
fn retarget(path: &Path, store: Option<&str>, target: &RestoreTarget<'_>) -> Result<()> {
    if store.is_none() && target.artifacts.is_none() {
        if target.endpoint.is_some() {
            return Err(Error::InvalidArgument(
                "--artifacts-endpoint applies only with --artifacts".into(),
            ));
        }
        return Ok(());
    }
    let text = fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let mut table: toml::Table = toml::from_str(&text)
        .map_err(|e| Error::Corrupt(format!("the backup's workspace.toml: {e}")))?;
    let section = |table: &mut toml::Table, name: &str| -> Result<toml::Table> {
        match table.remove(name) {
            None => Ok(toml::Table::new()),
            Some(toml::Value::Table(t)) => Ok(t),
            Some(_) => Err(Error::Corrupt(format!(
                "the backup's workspace.toml: [{name}] is not a table"
            ))),
        }
    };
    if let Some(url) = store {
        let mut held = section(&mut table, "store")?;
        held.insert("url".into(), toml::Value::String(url.into()));
        table.insert("store".into(), toml::Value::Table(held));
    }
    if let Some(url) = target.artifacts {
        let mut bucket = toml::Table::new();
        bucket.insert("url".into(), toml::Value::String(url.into()));
        if let Some(endpoint) = target.endpoint {
            bucket.insert("endpoint".into(), toml::Value::String(endpoint.into()));
            bucket.insert(
                "allow_http".into(),
                toml::Value::Boolean(endpoint.starts_with("http://")),
            );
        }
        table.insert("artifacts".into(), toml::Value::Table(bucket));
    }
    let text = toml::to_string(&table).map_err(|e| Error::Internal(e.to_string()))?;
    fs::write(path, text).map_err(|e| Error::io(path, e))
}

fn absolute(path: &Path) -> Result<PathBuf> {
    std::path::absolute(path).map_err(|e| Error::io(path, e))
}
