//! The single-owner lock: an OS advisory lock on `runtime/lock` holding the owner's pid.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Held for as long as the workspace is open; released on drop (and by the OS if the process dies).
#[derive(Debug)]
pub struct WorkspaceLock {
    _file: File,
}

impl WorkspaceLock {
    /// Takes the lock of the workspace in `dir`, or fails naming the owner's pid.
    ///
    /// # Errors
    /// `E_LOCKED` when another process holds it; I/O errors.
    pub fn acquire(dir: &Path) -> Result<Self> {
        let runtime = dir.join("runtime");
        std::fs::create_dir_all(&runtime).map_err(|e| Error::io(&runtime, e))?;
        let path = runtime.join("lock");
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| Error::io(&path, e))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                let mut owner = String::new();
                let _ = file.read_to_string(&mut owner);
                let owner = owner.trim();
                return Err(Error::Locked {
                    path: dir.to_path_buf(),
                    owner: if owner.is_empty() {
                        "unknown".into()
                    } else {
                        owner.to_string()
                    },
                });
            }
            Err(TryLockError::Error(e)) => return Err(Error::io(&path, e)),
        }
        file.set_len(0)
            .and_then(|()| file.seek(SeekFrom::Start(0)))
            .and_then(|_| write!(file, "{}", std::process::id()))
            .map_err(|e| Error::io(&path, e))?;
        Ok(Self { _file: file })
    }

    /// The pid recorded by the process holding the lock of the workspace in `dir`, or `None`
    /// when nobody holds it (probed without blocking; the probe's own hold ends at once).
    ///
    /// # Errors
    /// I/O errors other than a missing lock file.
    pub fn owner(dir: &Path) -> Result<Option<String>> {
        let path = Self::path(dir);
        let mut file = match OpenOptions::new().read(true).write(true).open(&path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io(&path, e)),
        };
        match file.try_lock() {
            Ok(()) => Ok(None),
            Err(TryLockError::WouldBlock) => {
                let mut owner = String::new();
                let _ = file.read_to_string(&mut owner);
                let owner = owner.trim();
                Ok(Some(if owner.is_empty() {
                    "unknown".into()
                } else {
                    owner.to_string()
                }))
            }
            Err(TryLockError::Error(e)) => Err(Error::io(&path, e)),
        }
    }

    /// The lock file of a workspace.
    #[must_use]
    pub fn path(dir: &Path) -> PathBuf {
        dir.join("runtime").join("lock")
    }
}
