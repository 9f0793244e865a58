//! The embedded adapter: one file per artifact under the workspace's `artifacts/` folder.

use std::fs::{self, File};
use std::io::{Read, Write};
use std::path::PathBuf;

use super::{ArtifactBackend, sync_dir};
use crate::error::{Error, Result};

/// Files at `ROOT/sha256/ab/<64 hex>`.
#[derive(Debug, Clone)]
pub struct LocalArtifacts {
    root: PathBuf,
}

impl LocalArtifacts {
    /// An adapter over `root` (`WORKSPACE/artifacts`).
    #[must_use]
    pub fn new(root: PathBuf) -> Self {
        Self { root }
    }

    fn path_of(&self, sha256: &str) -> PathBuf {
        self.root.join("sha256").join(&sha256[..2]).join(sha256)
    }
}

impl ArtifactBackend for LocalArtifacts {
    /// Temp file, fsync, rename, fsync the folder: a reader sees the whole file or none.
    fn put(&self, sha256: &str, bytes: &[u8]) -> Result<()> {
        let path = self.path_of(sha256);
        if path.exists() {
            return Ok(());
        }
        let dir = path.parent().unwrap_or(&self.root);
        fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        let tmp = dir.join(format!(".{sha256}.{}.tmp", std::process::id()));
        let mut file = File::create(&tmp).map_err(|e| Error::io(&tmp, e))?;
        file.write_all(bytes)
            .and_then(|()| file.sync_all())
            .map_err(|e| Error::io(&tmp, e))?;
        drop(file);
        fs::rename(&tmp, &path).map_err(|e| Error::io(&path, e))?;
        sync_dir(dir)
    }

    fn read(&self, sha256: &str) -> Result<Vec<u8>> {
        let path = self.path_of(sha256);
        let mut bytes = Vec::new();
        File::open(&path)
            .and_then(|mut f| f.read_to_end(&mut bytes))
            .map_err(|e| {
                if e.kind() == std::io::ErrorKind::NotFound {
                    Error::NotFound {
                        what: "artifact",
                        id: sha256.to_string(),
                    }
                } else {
                    Error::io(&path, e)
                }
            })?;
        Ok(bytes)
    }

    fn exists(&self, sha256: &str) -> Result<bool> {
        Ok(self.path_of(sha256).exists())
    }

    fn delete(&self, sha256: &str) -> Result<bool> {
        let path = self.path_of(sha256);
        match fs::remove_file(&path) {
            Ok(()) => {
                if let Some(dir) = path.parent() {
                    sync_dir(dir)?;
                }
                Ok(true)
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(Error::io(&path, e)),
        }
    }

    fn list(&self) -> Result<Vec<(String, u64)>> {
        let mut out = Vec::new();
        let Ok(shards) = fs::read_dir(self.root.join("sha256")) else {
            return Ok(out);
        };
        for shard in shards.flatten() {
            let Ok(files) = fs::read_dir(shard.path()) else {
                continue;
            };
            for file in files.flatten() {
                let name = file.file_name().to_string_lossy().into_owned();
                // Temp files of an interrupted put (`.<sha>.<pid>.tmp`) are not artifacts.
                if name.len() == 64 && !name.starts_with('.') {
                    out.push((name, file.metadata().map_or(0, |m| m.len())));
                }
            }
        }
        Ok(out)
    }

    fn local_path(&self, sha256: &str) -> Option<PathBuf> {
        Some(self.path_of(sha256))
    }

    fn concurrency(&self) -> usize {
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    }

    fn local_root(&self) -> Option<PathBuf> {
        Some(self.root.clone())
    }

    fn location(&self) -> String {
        format!("{}/", self.root.display())
    }
}
