//! Reads a repository's HEAD (commit id and branch) by parsing `.git` files.
//!
//! Never runs `git`: a plain `git status` executes commands named in the repository's
//! `.git/config` (fsmonitor, pagers, filters; DESIGN §14). HEAD, loose refs and `packed-refs` are
//! plain text, so reading them needs no library. (Working-tree dirtiness needs the index and
//! object hashing; it is left to the code profile, which will bring a library that executes
//! nothing.)

use std::fs;
use std::path::{Path, PathBuf};

use serde::Serialize;

/// What HEAD points at.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GitHead {
    /// The repository's top directory.
    pub repo: String,
    /// The commit id (40 or 64 hex digits), if HEAD resolves.
    pub commit: Option<String>,
    /// The branch name, unless HEAD is detached.
    pub branch: Option<String>,
}

/// The nearest repository containing `path` (walking up), with its HEAD.
#[must_use]
pub fn head_of(path: &Path) -> Option<GitHead> {
    let mut dir = Some(path);
    while let Some(d) = dir {
        if let Some(git_dir) = git_dir(d) {
            return Some(read_head(d, &git_dir));
        }
        dir = d.parent();
    }
    None
}

/// `.git` as a directory, or the `gitdir:` a `.git` file (worktree, submodule) points to.
fn git_dir(top: &Path) -> Option<PathBuf> {
    let dot_git = top.join(".git");
    let meta = fs::symlink_metadata(&dot_git).ok()?;
    if meta.is_dir() {
        return Some(dot_git);
    }
    if meta.is_file() {
        let text = fs::read_to_string(&dot_git).ok()?;
        let target = text.lines().find_map(|l| l.strip_prefix("gitdir:"))?.trim();
        let path = Path::new(target);
        return Some(if path.is_absolute() {
            path.to_path_buf()
        } else {
            top.join(path)
        });
    }
    None
}

fn is_object_id(s: &str) -> bool {
    matches!(s.len(), 40 | 64) && s.bytes().all(|b| b.is_ascii_hexdigit())
}

fn read_head(top: &Path, git_dir: &Path) -> GitHead {
    // Linked worktrees keep refs in the common dir.
    let common = fs::read_to_string(git_dir.join("commondir"))
        .ok()
        .map_or_else(|| git_dir.to_path_buf(), |c| git_dir.join(c.trim()));
    let head = fs::read_to_string(git_dir.join("HEAD")).unwrap_or_default();
    let head = head.trim();
    let (commit, branch) = if let Some(reference) = head.strip_prefix("ref:") {
        let reference = reference.trim();
        let branch = reference.strip_prefix("refs/heads/").map(str::to_string);
        (resolve_ref(git_dir, &common, reference), branch)
    } else if is_object_id(head) {
        (Some(head.to_string()), None)
    } else {
        (None, None)
    };
    GitHead {
        repo: top.display().to_string(),
        commit,
        branch,
    }
}

fn resolve_ref(git_dir: &Path, common: &Path, reference: &str) -> Option<String> {
    // Refuse anything that is not a plain ref name: a crafted HEAD must not walk out of .git.
    if reference
        .split('/')
        .any(|part| part.is_empty() || part == ".." || part == ".")
    {
        return None;
    }
    for base in [git_dir, common] {
        if let Ok(text) = fs::read_to_string(base.join(reference)) {
            let id = text.trim();
            return is_object_id(id).then(|| id.to_string());
        }
    }
    let packed = fs::read_to_string(common.join("packed-refs")).ok()?;
    packed
        .lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with('^'))
        .find_map(|line| {
            let (id, name) = line.split_once(' ')?;
            (name.trim() == reference && is_object_id(id)).then(|| id.to_string())
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "0123456789abcdef0123456789abcdef01234567";
    const B: &str = "89abcdef0123456789abcdef0123456789abcdef";

    #[test]
    fn loose_packed_detached_and_hostile_heads() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp.path().join("repo");
        let git = repo.join(".git");
        fs::create_dir_all(git.join("refs/heads")).unwrap();
        fs::create_dir_all(repo.join("src/deep")).unwrap();
        fs::write(git.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        fs::write(git.join("refs/heads/main"), format!("{A}\n")).unwrap();
        let head = head_of(&repo.join("src/deep")).unwrap();
        assert_eq!(
            (head.commit.as_deref(), head.branch.as_deref()),
            (Some(A), Some("main"))
        );

        fs::write(git.join("HEAD"), "ref: refs/heads/release\n").unwrap();
        fs::write(
            git.join("packed-refs"),
            format!("# pack-refs with: peeled\n{B} refs/heads/release\n^{A}\n"),
        )
        .unwrap();
        assert_eq!(head_of(&repo).unwrap().commit.as_deref(), Some(B));

        fs::write(git.join("HEAD"), format!("{A}\n")).unwrap();
        let detached = head_of(&repo).unwrap();
        assert_eq!(
            (detached.commit.as_deref(), detached.branch),
            (Some(A), None)
        );

        fs::write(git.join("HEAD"), "ref: ../../../etc/passwd\n").unwrap();
        assert_eq!(head_of(&repo).unwrap().commit, None);
        assert!(head_of(tmp.path()).is_none());
    }
}
