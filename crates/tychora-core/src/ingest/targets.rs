//! Where an add may read: the capture roots, and each requested path resolved against them. Only
//! the owner registers a new root; an agent's path must lie inside one that exists.

use std::path::{Path, PathBuf};

use super::{Requester, commit};
use crate::capture;
use crate::engine::Engine;
use crate::error::{Diagnostic, Error, ErrorCode, Result};
use crate::store::tx::Tx;

/// A requested path, resolved: its root (registered), where the walk starts, and whether it is a
/// directory (whose sync removes what is gone).
pub(super) struct Target {
    pub root_id: i64,
    pub root: PathBuf,
    pub start: PathBuf,
    pub is_dir: bool,
    /// Registered roots inside `root`: the walk steps around them, since their files are
    /// walked from their own root (a file has one place, whatever order roots were added in).
    pub nested: Vec<PathBuf>,
}

/// Each target, followed by a target for every registered root nested under its start (a
/// directory added after a folder inside it was): the deepest root holds a file, so its
/// sources keep their identity and path. Deeper targets come first, so that a directory's
/// sync counts what they found before it removes what is gone.
pub(super) fn with_nested(conn: &dyn Tx, targets: Vec<Target>) -> Result<Vec<Target>> {
    let roots: Vec<(i64, PathBuf)> = commit::registered_roots(conn)?
        .into_iter()
        .map(|(id, p)| (id, capture::names::decode_path(&p)))
        .collect();
    let inside = |dir: &Path| -> Vec<PathBuf> {
        roots
            .iter()
            .filter(|(_, r)| r != dir && r.starts_with(dir))
            .map(|(_, r)| r.clone())
            .collect()
    };
    let mut out: Vec<Target> = Vec::new();
    for mut target in targets {
        target.nested = inside(&target.root);
        if target.is_dir {
            for (root_id, root) in roots
                .iter()
                .filter(|(_, r)| *r != target.start && r.starts_with(&target.start))
                .filter(|(_, r)| *r != target.root)
            {
                out.push(Target {
                    root_id: *root_id,
                    root: root.clone(),
                    start: root.clone(),
                    is_dir: true,
                    nested: inside(root),
                });
            }
        }
        out.push(target);
    }
    let mut seen = std::collections::HashSet::new();
    out.retain(|t| seen.insert((t.root_id, t.start.clone())));
    out.sort_by_key(|t| std::cmp::Reverse(t.root.components().count()));
    Ok(out)
}

/// The canonical roots capture may read from: configured `capture.roots` and the roots that
/// earlier owner adds registered.
pub(super) fn capture_roots(engine: &Engine, conn: &dyn Tx) -> Result<Vec<PathBuf>> {
    let mut roots: Vec<PathBuf> = engine
        .config()
        .capture
        .roots
        .iter()
        .filter_map(|r| std::fs::canonicalize(r).ok())
        .collect();
    roots.extend(
        commit::registered_roots(conn)?
            .iter()
            .map(|(_, p)| capture::names::decode_path(p)),
    );
    Ok(roots)
}

/// Canonicalises `path`, finds its root, registers a new one only for the owner (and only
/// with `auto_add_roots`), and refuses paths outside the roots.
pub(super) fn resolve_target(
    engine: &Engine,
    conn: &dyn Tx,
    path: &Path,
    requester: Requester,
) -> std::result::Result<Target, Diagnostic> {
    let shown = capture::names::encode_path(path);
    if requester == Requester::Agent {
        // The job may run after a restart with different roots: judged again, as at enqueue.
        let roots = capture_roots(engine, conn)
            .map_err(|e| Diagnostic::error(&shown, e.code(), e.to_string()))?;
        agent_may_capture(path, &roots)
            .map_err(|e| Diagnostic::error(&shown, e.code(), e.to_string()))?;
    }
    let abs = std::path::absolute(path).map_err(|e| {
        Diagnostic::error(
            &shown,
            ErrorCode::InvalidArgument,
            format!("cannot resolve path: {e}"),
        )
    })?;
    let meta = std::fs::symlink_metadata(&abs).map_err(|e| {
        Diagnostic::error(
            &shown,
            ErrorCode::NotFound,
            format!("cannot read path: {e}"),
        )
    })?;
    let link = meta.file_type().is_symlink();
    // A symlink given by name is not resolved: the walker reports it and never follows it.
    let real = match (link, abs.parent(), abs.file_name()) {
        (true, Some(parent), Some(name)) => std::fs::canonicalize(parent).map(|p| p.join(name)),
        _ => std::fs::canonicalize(&abs),
    }
    .map_err(|e| {
        Diagnostic::error(
            &shown,
            ErrorCode::NotFound,
            format!("cannot resolve path: {e}"),
        )
    })?;
    if real.starts_with(engine.dir()) {
        return Err(Diagnostic::error(
            &shown,
            ErrorCode::InvalidArgument,
            "refusing to capture the workspace itself",
        ));
    }
    let is_dir = !link && meta.is_dir();
    let roots = capture_roots(engine, conn)
        .map_err(|e| Diagnostic::error(&shown, e.code(), e.to_string()))?;
    let found = roots
        .iter()
        .filter(|r| real.starts_with(r))
        .max_by_key(|r| r.as_os_str().len())
        .cloned();
    let root = match found {
        Some(root) => root,
        None if requester == Requester::Owner && engine.config().capture.auto_add_roots => {
            if is_dir {
                real.clone()
            } else {
                real.parent()
                    .map(Path::to_path_buf)
                    .unwrap_or_else(|| real.clone())
            }
        }
        None if requester == Requester::Agent => {
            return Err(Diagnostic::error(
                &shown,
                ErrorCode::Forbidden,
                OUTSIDE_ROOTS_FOR_AGENTS,
            ));
        }
        None => {
            return Err(Diagnostic::error(
                &shown,
                ErrorCode::InvalidArgument,
                "outside the workspace's configured capture roots (capture.roots in workspace.toml)",
            ));
        }
    };
    let root_id = commit::root_id(conn, &root)
        .map_err(|e| Diagnostic::error(&shown, e.code(), e.to_string()))?;
    Ok(Target {
        root_id,
        root,
        start: real,
        is_dir,
        nested: Vec::new(),
    })
}

const OUTSIDE_ROOTS_FOR_AGENTS: &str = "outside the workspace's capture roots; agents may add only inside roots the owner configured or added (`tychora add` or capture.roots)";

/// Whether an agent may name `path`: absolute, without `..`, and inside one of `roots` once
/// resolved (a link named as the last component is judged by where it sits, since capture never
/// follows it). A path that does not exist is judged by its text, so whether something exists
/// outside the roots is not revealed either.
pub(super) fn agent_may_capture(path: &Path, roots: &[PathBuf]) -> Result<()> {
    let shown = capture::names::encode_path(path);
    if !path.is_absolute() {
        return Err(Error::InvalidArgument(format!(
            "paths must be absolute: {shown}"
        )));
    }
    if path
        .components()
        .any(|c| c == std::path::Component::ParentDir)
    {
        return Err(Error::InvalidArgument(format!(
            "paths must not contain `..`: {shown}"
        )));
    }
    let real = match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) => std::fs::canonicalize(parent).map(|p| p.join(name)),
        _ => std::fs::canonicalize(path),
    };
    let inside = match real {
        Ok(real) => roots.iter().any(|r| real.starts_with(r)),
        Err(_) => roots.iter().any(|r| path.starts_with(r)),
    };
    if inside {
        Ok(())
    } else {
        Err(Error::Forbidden(format!(
            "{shown}: {OUTSIDE_ROOTS_FOR_AGENTS}"
        )))
    }
}
