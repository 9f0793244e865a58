//! The content-addressed artifact store: `artifacts/sha256/ab/<64 hex>`, written once, never rewritten.

use std::fs::{self, File};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::error::{Error, Result};

/// sha256 of `bytes`, lowercase hex.
#[must_use]
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// A store rooted at `WORKSPACE/artifacts`.
#[derive(Debug, Clone)]
pub struct ArtifactStore {
    root: PathBuf,
}

impl ArtifactStore {
    /// A store rooted at `root`.
    #[must_use]
    pub fn new(root: PathBuf) -> Self {
        Self { root }
    }

    /// Where an artifact lives.
    #[must_use]
    pub fn path_of(&self, sha256: &str) -> PathBuf {
        self.root.join("sha256").join(&sha256[..2]).join(sha256)
    }

    /// Writes `bytes` under their hash unless already present: temp file, fsync, rename, fsync dir.
    ///
    /// # Errors
    /// I/O errors, with the path.
    pub fn put(&self, sha256: &str, bytes: &[u8]) -> Result<PathBuf> {
        let path = self.path_of(sha256);
        if path.exists() {
            return Ok(path);
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
        sync_dir(dir)?;
        Ok(path)
    }

    /// Reads an artifact and checks its hash.
    ///
    /// # Errors
    /// `E_NOT_FOUND` if missing, `E_CHECKSUM_MISMATCH` if its bytes changed.
    pub fn get(&self, sha256: &str) -> Result<Vec<u8>> {
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
        let computed = sha256_hex(&bytes);
        if computed != sha256 {
            return Err(Error::ChecksumMismatch {
                what: format!("artifact {}", path.display()),
                recorded: sha256.to_string(),
                computed,
            });
        }
        Ok(bytes)
    }
}

/// fsyncs a directory so a rename or new file in it survives power loss.
///
/// # Errors
/// I/O errors.
pub fn sync_dir(dir: &Path) -> Result<()> {
    #[cfg(unix)]
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| Error::io(dir, e))?;
    // Windows cannot open a directory as a file; NTFS journals the rename itself.
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn put_is_idempotent_and_get_verifies() {
        let dir = tempfile::tempdir().unwrap();
        let store = ArtifactStore::new(dir.path().join("artifacts"));
        let sha = sha256_hex(b"hello");
        let path = store.put(&sha, b"hello").unwrap();
        store.put(&sha, b"hello").unwrap();
        assert_eq!(store.get(&sha).unwrap(), b"hello");
        fs::write(&path, b"tampered").unwrap();
        assert_eq!(
            store.get(&sha).unwrap_err().code(),
            crate::ErrorCode::ChecksumMismatch
        );
    }
}
