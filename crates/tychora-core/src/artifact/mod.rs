//! The content-addressed artifact store: every original, derived text and picture under its
//! sha256, written once, never rewritten, read back only when its bytes still hash to their name.
//!
//! One port, two adapters: the workspace's own folder (`artifacts/sha256/ab/<64 hex>`, the
//! embedded default, [`LocalArtifacts`]) and an S3-compatible bucket ([`S3Artifacts`], configured
//! by `[artifacts] url = "s3://bucket/prefix"`). Callers see only [`ArtifactStore`]: what a
//! revision references, retention and erasure decide in the canonical store, never by listing.

mod local;
mod s3;

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use sha2::{Digest, Sha256};

use crate::error::{Error, Result};

pub use local::LocalArtifacts;
pub use s3::{S3Artifacts, S3Location};

/// sha256 of `bytes`, lowercase hex.
#[must_use]
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// What an artifact adapter does. Names are sha256 hex strings the store has already checked.
pub trait ArtifactBackend: Send + Sync + std::fmt::Debug {
    /// Stores `bytes` under `sha256` unless an object of that name exists (create-only: an
    /// existing one is left as it is, a no-op).
    ///
    /// # Errors
    /// I/O or store errors.
    fn put(&self, sha256: &str, bytes: &[u8]) -> Result<()>;
    /// Stores several objects as [`ArtifactBackend::put`] does each; the first failure is the
    /// error (the others may or may not be stored: content addressing makes a retry harmless).
    /// A bucket sends several at once instead of one round trip after another.
    ///
    /// # Errors
    /// As [`ArtifactBackend::put`].
    fn put_many(&self, items: &[(&str, &[u8])]) -> Result<()> {
        items
            .iter()
            .try_for_each(|(sha, bytes)| self.put(sha, bytes))
    }
    /// Whether [`ArtifactBackend::put_many`] is worth gathering puts for (round trips, not disk
    /// writes, are its cost).
    fn remote(&self) -> bool {
        false
    }
    /// The stored bytes, as stored (the store verifies them).
    ///
    /// # Errors
    /// `E_NOT_FOUND` when absent; I/O or store errors.
    fn read(&self, sha256: &str) -> Result<Vec<u8>>;
    /// Whether an object of that name is stored.
    ///
    /// # Errors
    /// I/O or store errors.
    fn exists(&self, sha256: &str) -> Result<bool>;
    /// Removes the object; `false` when there was none.
    ///
    /// # Errors
    /// I/O or store errors.
    fn delete(&self, sha256: &str) -> Result<bool>;
    /// Removes several objects; for each, in the order given, whether it was there (as
    /// [`ArtifactBackend::delete`]) or why it could not be removed. One object's failure does
    /// not stop the others. A bucket asks and deletes many at a time (`DeleteObjects`), not one
    /// round trip after another.
    fn delete_many(&self, sha256s: &[&str]) -> Vec<Result<bool>> {
        sha256s.iter().map(|sha| self.delete(sha)).collect()
    }
    /// Every stored object's name with its size, in no order (for doctor's orphan count).
    ///
    /// # Errors
    /// I/O or store errors.
    fn list(&self) -> Result<Vec<(String, u64)>>;
    /// The object's file, where the adapter keeps files (a backup copies or links it).
    fn local_path(&self, sha256: &str) -> Option<PathBuf>;
    /// The folder holding every object, where the adapter keeps files.
    fn local_root(&self) -> Option<PathBuf> {
        None
    }
    /// How many reads are worth running at once (a walk over every object, as verify does).
    fn concurrency(&self) -> usize;
    /// Where the objects live, for messages (`artifacts/` or `s3://bucket/prefix`; never a secret).
    fn location(&self) -> String;
}

/// The workspace's artifacts, behind whichever adapter its configuration names.
#[derive(Debug, Clone)]
pub struct ArtifactStore {
    backend: Arc<dyn ArtifactBackend>,
}

impl ArtifactStore {
    /// The embedded store: files under `root` (`WORKSPACE/artifacts`).
    #[must_use]
    pub fn new(root: PathBuf) -> Self {
        Self::with(Arc::new(LocalArtifacts::new(root)))
    }

    /// A store over `backend`.
    #[must_use]
    pub fn with(backend: Arc<dyn ArtifactBackend>) -> Self {
        Self { backend }
    }

    fn checked(sha256: &str) -> Result<&str> {
        if sha256.len() == 64
            && sha256
                .bytes()
                .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
        {
            Ok(sha256)
        } else {
            Err(Error::InvalidArgument(format!(
                "{sha256:?} is not an artifact name (64 lowercase hex digits)"
            )))
        }
    }

    /// Writes `bytes` under their hash unless already present. The name must be their sha256
    /// (every caller hashed them already; debug builds check it again).
    ///
    /// # Errors
    /// `E_INVALID_ARGUMENT` for a name that is not a sha256; I/O or store errors.
    pub fn put(&self, sha256: &str, bytes: &[u8]) -> Result<()> {
        let sha256 = Self::checked(sha256)?;
        debug_assert_eq!(
            sha256_hex(bytes),
            sha256,
            "artifact put under a name that is not its bytes' sha256"
        );
        self.backend.put(sha256, bytes)
    }

    /// Writes several artifacts as [`ArtifactStore::put`] does each (a bucket several at once).
    ///
    /// # Errors
    /// As [`ArtifactStore::put`]; the first failure.
    pub fn put_many(&self, items: &[(&str, &[u8])]) -> Result<()> {
        for (sha256, bytes) in items {
            Self::checked(sha256)?;
            debug_assert_eq!(
                sha256_hex(bytes),
                *sha256,
                "artifact put under another name"
            );
        }
        self.backend.put_many(items)
    }

    /// Whether puts are worth gathering into [`ArtifactStore::put_many`] (a bucket).
    #[must_use]
    pub fn remote(&self) -> bool {
        self.backend.remote()
    }

    /// Reads an artifact and checks its hash.
    ///
    /// # Errors
    /// `E_NOT_FOUND` if missing, `E_CHECKSUM_MISMATCH` if its bytes changed, I/O or store errors.
    pub fn get(&self, sha256: &str) -> Result<Vec<u8>> {
        let bytes = self.backend.read(Self::checked(sha256)?)?;
        let computed = sha256_hex(&bytes);
        if computed != sha256 {
            return Err(Error::ChecksumMismatch {
                what: format!("artifact {sha256} in {}", self.backend.location()),
                recorded: sha256.to_string(),
                computed,
            });
        }
        Ok(bytes)
    }

    /// Whether the artifact is stored (its bytes are not read).
    ///
    /// # Errors
    /// I/O or store errors.
    pub fn exists(&self, sha256: &str) -> Result<bool> {
        self.backend.exists(Self::checked(sha256)?)
    }

    /// Removes an artifact (erasure, retention); `false` when it was not stored.
    ///
    /// # Errors
    /// I/O or store errors.
    pub fn delete(&self, sha256: &str) -> Result<bool> {
        self.backend.delete(Self::checked(sha256)?)
    }

    /// Removes several artifacts: for each, in order, whether it was there, or why not (a name
    /// that is no sha256 among them; one failure does not stop the others).
    #[must_use]
    pub fn delete_many(&self, sha256s: &[&str]) -> Vec<Result<bool>> {
        let checked: Vec<Result<&str>> = sha256s.iter().map(|s| Self::checked(s)).collect();
        let valid: Vec<&str> = checked
            .iter()
            .filter_map(|c| c.as_ref().ok().copied())
            .collect();
        let mut removed = self.backend.delete_many(&valid).into_iter();
        checked
            .into_iter()
            .map(|c| match c {
                Ok(_) => removed.next().unwrap_or_else(|| {
                    Err(Error::Internal(
                        "the artifact store answered fewer deletes than asked".into(),
                    ))
                }),
                Err(e) => Err(e),
            })
            .collect()
    }

    /// Every stored artifact with its size.
    ///
    /// # Errors
    /// I/O or store errors.
    pub fn list(&self) -> Result<Vec<(String, u64)>> {
        self.backend.list()
    }

    /// The artifact's file, when the adapter keeps files.
    #[must_use]
    pub fn local_path(&self, sha256: &str) -> Option<PathBuf> {
        Self::checked(sha256)
            .ok()
            .and_then(|s| self.backend.local_path(s))
    }

    /// How many reads are worth running at once: the cores for the folder (hashing is the
    /// work), more for a bucket (round trips are).
    #[must_use]
    pub fn concurrency(&self) -> usize {
        self.backend.concurrency()
    }

    /// The folder holding every artifact, for the embedded adapter.
    #[must_use]
    pub fn local_root(&self) -> Option<PathBuf> {
        self.backend.local_root()
    }

    /// Where the artifacts live (`artifacts/`, `s3://bucket/prefix`).
    #[must_use]
    pub fn location(&self) -> String {
        self.backend.location()
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
        store.put(&sha, b"hello").unwrap();
        store.put(&sha, b"hello").unwrap();
        assert_eq!(store.get(&sha).unwrap(), b"hello");
        let path = store.local_path(&sha).unwrap();
        std::fs::write(&path, b"tampered").unwrap();
        assert_eq!(
            store.get(&sha).unwrap_err().code(),
            crate::ErrorCode::ChecksumMismatch
        );
        assert_eq!(
            store.get("../../etc/passwd").unwrap_err().code(),
            crate::ErrorCode::InvalidArgument
        );
    }
}
