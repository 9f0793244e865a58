//! Capture: walk configured roots and read files race-free, confined to their root.
//!
//! The walk (`walk.rs`) lists directories through descriptors opened without following links, so
//! no name from outside a root is ever listed, and counts what the ignore rules leave out.
//! Reading opens the final component with `O_NOFOLLOW`, checks the *opened* descriptor (regular
//! file, real path inside the root, size) and reads through that same descriptor, so a file
//! swapped for a symlink between check and read cannot leak (DESIGN §14). File names keep their
//! exact bytes as identity (`names.rs`).

pub mod git;
pub mod names;
mod walk;

#[cfg(feature = "bench")]
pub use walk::Walk;
#[cfg(test)]
use walk::walk;
pub use walk::{Candidate, Exclusion, walk_around};

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::error::{Diagnostic, ErrorCode};

/// Reads `path` through a descriptor that was checked to be a regular file inside `root` and at
/// most `max_bytes` long. `root` must be canonical.
///
/// # Errors
/// A diagnostic naming the reason (symlink, outside root, not a regular file, oversize, I/O).
pub fn read_confined(
    root: &Path,
    path: &Path,
    rel: &str,
    max_bytes: u64,
) -> Result<Vec<u8>, Diagnostic> {
    let file = open_no_follow(path).map_err(|e| {
        if is_symlink_error(&e) {
            Diagnostic::warning(
                rel,
                ErrorCode::InvalidArgument,
                "symbolic link not followed: capture never follows links",
            )
        } else {
            Diagnostic::error(rel, ErrorCode::Io, format!("cannot open: {e}"))
        }
    })?;
    let meta = file
        .metadata()
        .map_err(|e| Diagnostic::error(rel, ErrorCode::Io, format!("cannot stat: {e}")))?;
    if !meta.is_file() {
        return Err(Diagnostic::warning(
            rel,
            ErrorCode::UnsupportedFormat,
            "not a regular file; skipped",
        ));
    }
    let real = opened_path(&file, path).map_err(|e| {
        Diagnostic::error(
            rel,
            ErrorCode::Io,
            format!("cannot resolve opened file: {e}"),
        )
    })?;
    if !real.starts_with(root) {
        // Where it resolves is not said: that would name a file outside every capture root.
        return Err(Diagnostic::error(
            rel,
            ErrorCode::InvalidArgument,
            "changed during capture: it now resolves outside the capture root; refused",
        ));
    }
    if meta.len() > max_bytes {
        return Err(Diagnostic::error(
            rel,
            ErrorCode::LimitExceeded,
            format!("{} bytes exceeds max_file_bytes {max_bytes}", meta.len()),
        ));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    // Read one byte past the limit: a file that grew after fstat is still caught.
    file.take(max_bytes + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Diagnostic::error(rel, ErrorCode::Io, format!("cannot read: {e}")))?;
    if bytes.len() as u64 > max_bytes {
        return Err(Diagnostic::error(
            rel,
            ErrorCode::LimitExceeded,
            format!("grew past max_file_bytes {max_bytes} while being read"),
        ));
    }
    Ok(bytes)
}

#[cfg(unix)]
fn open_no_follow(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    // O_NONBLOCK: opening a FIFO must not hang; fstat then rejects it as not a regular file.
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
}

#[cfg(windows)]
fn open_no_follow(path: &Path) -> std::io::Result<File> {
    use std::os::windows::fs::OpenOptionsExt;
    const FILE_FLAG_OPEN_REPARSE_POINT: u32 = 0x0020_0000;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(FILE_FLAG_OPEN_REPARSE_POINT)
        .open(path)?;
    if file.metadata()?.file_type().is_symlink() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "symbolic link",
        ));
    }
    Ok(file)
}

#[cfg(unix)]
fn is_symlink_error(err: &std::io::Error) -> bool {
    err.raw_os_error() == Some(libc::ELOOP)
}

#[cfg(windows)]
fn is_symlink_error(err: &std::io::Error) -> bool {
    err.kind() == std::io::ErrorKind::InvalidInput
}

/// The real path of an opened descriptor: what was actually opened, not what the name says now.
#[cfg(target_os = "linux")]
fn opened_path(file: &File, _path: &Path) -> std::io::Result<PathBuf> {
    use std::os::fd::AsRawFd;
    std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd()))
}

#[cfg(target_os = "macos")]
fn opened_path(file: &File, _path: &Path) -> std::io::Result<PathBuf> {
    use std::os::fd::AsRawFd;
    use std::os::unix::ffi::OsStrExt;
    let mut buf = vec![0u8; libc::PATH_MAX as usize];
    // SAFETY: F_GETPATH writes at most PATH_MAX bytes into `buf`, which is that long.
    let rc = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_GETPATH, buf.as_mut_ptr()) };
    if rc == -1 {
        return Err(std::io::Error::last_os_error());
    }
    let len = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    Ok(PathBuf::from(std::ffi::OsStr::from_bytes(&buf[..len])))
}

/// Elsewhere the descriptor's path is not available; the link-free open above is the guard and the
/// name is resolved once more (a weaker check, documented in ARCHITECTURE.md).
#[cfg(not(any(target_os = "linux", target_os = "macos")))]
fn opened_path(_file: &File, path: &Path) -> std::io::Result<PathBuf> {
    std::fs::canonicalize(path)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn refuses_symlinks_fifos_oversize_and_escapes() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        let outside = dir.path().join("secret.txt");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::write(&outside, "secret").unwrap();
        std::fs::write(root.join("ok.md"), "hello").unwrap();
        std::os::unix::fs::symlink(&outside, root.join("link.md")).unwrap();
        std::os::unix::fs::symlink(dir.path(), root.join("sub/up")).unwrap();
        let root = std::fs::canonicalize(&root).unwrap();

        assert_eq!(
            read_confined(&root, &root.join("ok.md"), "ok.md", 100).unwrap(),
            b"hello"
        );
        let link = read_confined(&root, &root.join("link.md"), "link.md", 100).unwrap_err();
        assert!(link.message.contains("symbolic link"));
        // A directory symlink in the middle of the path: the opened file is outside the root.
        let escape = read_confined(
            &root,
            &root.join("sub/up/secret.txt"),
            "sub/up/secret.txt",
            100,
        )
        .unwrap_err();
        assert!(
            escape.message.contains("outside the capture root"),
            "{escape:?}"
        );
        assert!(
            !escape.message.contains("secret"),
            "the outside name is not repeated"
        );
        let big = read_confined(&root, &root.join("ok.md"), "ok.md", 3).unwrap_err();
        assert_eq!(big.code, ErrorCode::LimitExceeded);

        let fifo = root.join("pipe.md");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: `c` is a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert_eq!(
            read_confined(&root, &fifo, "pipe.md", 100)
                .unwrap_err()
                .code,
            ErrorCode::UnsupportedFormat
        );

        let found = walk(&root, &root, Path::new("/nonexistent"), &[]);
        let names: Vec<_> = found
            .candidates
            .iter()
            .map(|c| c.rel_path.as_str())
            .collect();
        assert_eq!(names, ["ok.md"]);
        assert_eq!(found.diagnostics.len(), 3, "{:?}", found.diagnostics); // link.md, pipe.md, sub/up
    }
}
