//! Reads a repository's HEAD (commit id and branch) and whether its working tree is dirty, by
//! parsing `.git` files.
//!
//! Never runs `git`: a plain `git status` executes commands named in the repository's
//! `.git/config` (fsmonitor, pagers, filter drivers, hooks; DESIGN §14). HEAD, loose refs and
//! `packed-refs` are plain text, so reading them needs no library.
//!
//! The dirty flag needs the binary index and the object database (zlib, packs, deltas), so it uses
//! the low-level gitoxide crates (`gix-index`, `gix-odb`, `gix-object`, `gix-hash`) with default
//! features off: they only read files and hash bytes. The only process-spawning code in their
//! dependency tree is gix-object's `signature` feature (off) and gix-path's lookup of git's
//! installation config (`gix_path::env`, which none of these crates nor this module calls). The
//! `gix` umbrella crate is deliberately not used: its status code applies filter drivers and can
//! consult fsmonitor. See [`GitHead::dirty`] for what counts as dirty, and the limits.

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
    /// Whether tracked content differs from HEAD's tree, like `git status --untracked-files=no`
    /// being non-empty: a tracked file modified, deleted, replaced by another kind of file, or
    /// with a changed executable bit (unless `core.fileMode` is false); staged changes (index ≠
    /// HEAD, including staged additions and removals); unmerged or intent-to-add entries.
    /// Untracked files never count (they are not part of any revision, and an ingest captures
    /// them on its own terms), nor do ignored ones. Covers the whole repository, whatever part of
    /// it was captured.
    ///
    /// `None` when it could not be determined (logged at debug level): an index git wrote in a
    /// format we do not read (unknown version, sparse index), a SHA-256 repository, a HEAD commit
    /// or tree missing from the object database, an unreadable file.
    ///
    /// Like git, a file whose stat data (mtime, ctime, size, inode…) matches its index entry is
    /// trusted unless racy (modified in the same second the index was written); otherwise its
    /// bytes are hashed as a blob and compared with the index. Nothing is executed, so clean
    /// filters (`filter=` in `.gitattributes`), `ident` and working-tree encodings are not
    /// applied: a stat-changed file stored through one is compared raw and may read as dirty.
    /// End-of-line conversion is approximated: with `core.autocrlf` set, CRLF→LF-normalised bytes
    /// also count as a match. Symlinks are not followed (their target text is compared); a tracked
    /// path below a symlinked directory counts as deleted, as in git. Submodules (gitlinks) are
    /// not looked into: only a staged change of the recorded commit counts. Entries marked
    /// assume-unchanged or skip-worktree are not checked against the working tree, as in git.
    pub dirty: Option<bool>,
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
    let (target, branch) = if let Some(reference) = head.strip_prefix("ref:") {
        let reference = reference.trim();
        let branch = reference.strip_prefix("refs/heads/").map(str::to_string);
        (resolve_ref(git_dir, &common, reference), branch)
    } else if is_object_id(head) {
        (Ref::Id(head.to_string()), None)
    } else {
        (Ref::Invalid, None)
    };
    let dirty = match dirty::compute(top, git_dir, &common, &target) {
        Ok(dirty) => Some(dirty),
        Err(why) => {
            log::debug!(
                "git: dirty flag of {} left undetermined: {why}",
                top.display()
            );
            None
        }
    };
    GitHead {
        repo: top.display().to_string(),
        commit: match target {
            Ref::Id(id) => Some(id),
            Ref::Unborn | Ref::Invalid => None,
        },
        branch,
        dirty,
    }
}

/// What a HEAD reference resolved to.
enum Ref {
    /// A commit id.
    Id(String),
    /// A well-formed branch with no commit yet (a fresh `git init`): HEAD's tree is empty.
    Unborn,
    /// Malformed, hostile or unreadable.
    Invalid,
}

fn resolve_ref(git_dir: &Path, common: &Path, reference: &str) -> Ref {
    // Refuse anything that is not a plain ref name: a crafted HEAD must not walk out of .git.
    if reference
        .split('/')
        .any(|part| part.is_empty() || part == ".." || part == ".")
    {
        return Ref::Invalid;
    }
    let checked = |id: &str| {
        if is_object_id(id) {
            Ref::Id(id.to_string())
        } else {
            Ref::Invalid
        }
    };
    for base in [git_dir, common] {
        match fs::read_to_string(base.join(reference)) {
            Ok(text) => return checked(text.trim()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(_) => return Ref::Invalid,
        }
    }
    let packed = match fs::read_to_string(common.join("packed-refs")) {
        Ok(packed) => packed,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ref::Unborn,
        Err(_) => return Ref::Invalid,
    };
    packed
        .lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with('^'))
        .find_map(|line| {
            let (id, name) = line.split_once(' ')?;
            (name.trim() == reference).then(|| checked(id))
        })
        .unwrap_or(Ref::Unborn)
}

mod dirty {
    //! The dirty flag: index against HEAD's tree, then the working tree against the index.

    use std::collections::HashSet;
    use std::fs;
    use std::io::Read;
    use std::path::{Path, PathBuf};

    use gix_hash::{Kind, ObjectId};
    use gix_index::entry::{Flags, Mode, Stage, Stat, stat};
    use gix_object::FindExt;

    use super::Ref;

    /// Files bigger than this are not re-read for the CRLF comparison.
    const CRLF_RETRY_LIMIT: u64 = 64 << 20;

    type Result<T> = std::result::Result<T, String>;

    pub(super) fn compute(top: &Path, git_dir: &Path, common: &Path, head: &Ref) -> Result<bool> {
        let head = match head {
            Ref::Id(id) if id.len() == 40 => {
                Some(ObjectId::from_hex(id.as_bytes()).map_err(|e| format!("HEAD id {id}: {e}"))?)
            }
            Ref::Id(_) => return Err("SHA-256 repositories are not supported".into()),
            Ref::Unborn => None,
            Ref::Invalid => return Err("HEAD does not resolve".into()),
        };
        let config = Config::read(git_dir, common);
        // No process, no lock: `at_or_default` only reads (a missing index is an empty one).
        let index = gix_index::File::at_or_default(
            git_dir.join("index"),
            Kind::Sha1,
            false,
            gix_index::decode::Options {
                thread_limit: Some(1),
                ..Default::default()
            },
        )
        .map_err(|e| format!("index: {e}"))?;
        if index.is_sparse() {
            return Err("sparse index (directory entries) is not supported".into());
        }
        if index
            .entries()
            .iter()
            .any(|e| e.stage() != Stage::Unconflicted || e.flags.contains(Flags::INTENT_TO_ADD))
        {
            return Ok(true);
        }
        if index_differs_from_head(&index, common, head)? {
            return Ok(true);
        }
        worktree_differs_from_index(top, &index, &config)
    }

    /// Compares the index with HEAD's tree: through the cached root tree when the index has a
    /// valid one (git keeps it up to date on commit and checkout), else entry by entry.
    fn index_differs_from_head(
        index: &gix_index::File,
        common: &Path,
        head: Option<ObjectId>,
    ) -> Result<bool> {
        let Some(commit) = head else {
            return Ok(!index.entries().is_empty());
        };
        let odb = gix_odb::at(common.join("objects"), Kind::Sha1)
            .map_err(|e| format!("object database: {e}"))?;
        let mut buf = Vec::new();
        let tree = odb
            .find_commit_iter(&commit, &mut buf)
            .and_then(|mut c| c.tree_id())
            .map_err(|e| format!("HEAD commit {commit}: {e}"))?;
        if let Some(cached) = index.tree()
            && cached
                .num_entries
                .is_some_and(|n| n as usize == index.entries().len())
            && cached.id == tree
        {
            return Ok(false);
        }
        // Flatten HEAD's tree (explicit stack, no recursion), giving up as soon as it has more
        // entries than the index: a hostile tree cannot make us hold more than the index.
        let limit = index.entries().len();
        let mut in_head: Vec<(Vec<u8>, u32, ObjectId)> = Vec::new();
        let mut stack = vec![(Vec::new(), tree)];
        while let Some((prefix, id)) = stack.pop() {
            let tree = odb
                .find_tree(&id, &mut buf)
                .map_err(|e| format!("tree {id}: {e}"))?;
            for entry in &tree.entries {
                let mut path = prefix.clone();
                if !path.is_empty() {
                    path.push(b'/');
                }
                path.extend_from_slice(entry.filename);
                if entry.mode.is_tree() {
                    stack.push((path, entry.oid.to_owned()));
                } else {
                    if in_head.len() == limit {
                        return Ok(true);
                    }
                    let mode = Mode::from(entry.mode.kind()).bits();
                    in_head.push((path, mode, entry.oid.to_owned()));
                }
            }
        }
        in_head.sort_unstable();
        let mut in_index: Vec<(&[u8], u32, ObjectId)> = index
            .entries()
            .iter()
            .map(|e| -> (&[u8], u32, ObjectId) { (e.path(index), e.mode.bits(), e.id) })
            .collect();
        in_index.sort_unstable();
        Ok(in_head.len() != in_index.len()
            || in_head
                .iter()
                .zip(&in_index)
                .any(|(h, i)| (h.0.as_slice(), h.1, h.2) != *i))
    }

    fn worktree_differs_from_index(
        top: &Path,
        index: &gix_index::File,
        config: &Config,
    ) -> Result<bool> {
        let options = stat::Options::default();
        let timestamp = index.timestamp();
        // Directories already seen to be real directories (not symlinks) in the working tree.
        let mut real_dirs: HashSet<Vec<u8>> = HashSet::new();
        for entry in index.entries() {
            let rela: &[u8] = entry.path(index);
            let parts: Vec<&[u8]> = rela.split(|&b| b == b'/').collect();
            // Git never writes such paths; a crafted index must not make us read outside the
            // working tree (or inside .git).
            if parts.iter().any(|p| {
                p.is_empty() || *p == b"." || *p == b".." || p.eq_ignore_ascii_case(b".git")
            }) {
                return Err(format!(
                    "index path {:?} is not a plain relative path",
                    String::from_utf8_lossy(rela)
                ));
            }
            if entry.mode == Mode::COMMIT
                || entry
                    .flags
                    .intersects(Flags::ASSUME_VALID | Flags::SKIP_WORKTREE)
            {
                continue;
            }
            // Like git, a tracked path below a symlink (or a file) is gone: never follow one.
            let mut dir_len = 0;
            for part in &parts[..parts.len() - 1] {
                dir_len += part.len() + usize::from(dir_len > 0);
                let dir = &rela[..dir_len];
                if real_dirs.contains(dir) {
                    continue;
                }
                match fs::symlink_metadata(join(top, dir)?) {
                    Ok(meta) if meta.is_dir() => {
                        real_dirs.insert(dir.to_vec());
                    }
                    Ok(_) => return Ok(true),
                    Err(e) if gone(&e) => return Ok(true),
                    Err(e) => return Err(format!("{}: {e}", String::from_utf8_lossy(dir))),
                }
            }
            let path = join(top, rela)?;
            let meta = match gix_index::fs::Metadata::from_path_no_follow(&path) {
                Ok(meta) => meta,
                Err(e) if gone(&e) => return Ok(true),
                Err(e) => return Err(format!("{}: {e}", path.display())),
            };
            let is_link = entry.mode == Mode::SYMLINK;
            if !(meta.is_file() || (is_link && meta.is_symlink())) {
                return Ok(true);
            }
            if !is_link
                && config.file_mode
                && cfg!(unix)
                && meta.is_executable() != (entry.mode == Mode::FILE_EXECUTABLE)
            {
                return Ok(true);
            }
            let current = Stat::from_fs(&meta).unwrap_or_default();
            if current.matches(&entry.stat, options) && !entry.stat.is_racy(timestamp, options) {
                continue;
            }
            let same = if meta.is_symlink() {
                let target =
                    fs::read_link(&path).map_err(|e| format!("{}: {e}", path.display()))?;
                blob_id(&os_bytes(target.as_os_str())?)? == entry.id
            } else {
                file_matches(&path, meta.len(), entry.id, config.autocrlf)?
            };
            if !same {
                return Ok(true);
            }
        }
        Ok(false)
    }

    fn gone(e: &std::io::Error) -> bool {
        matches!(
            e.kind(),
            std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
        )
    }

    #[cfg(unix)]
    fn join(top: &Path, rela: &[u8]) -> Result<PathBuf> {
        use std::os::unix::ffi::OsStrExt;
        Ok(top.join(std::ffi::OsStr::from_bytes(rela)))
    }

    #[cfg(not(unix))]
    fn join(top: &Path, rela: &[u8]) -> Result<PathBuf> {
        let rela = std::str::from_utf8(rela).map_err(|e| format!("index path: {e}"))?;
        Ok(top.join(rela))
    }

    #[cfg(unix)]
    #[allow(clippy::unnecessary_wraps)]
    fn os_bytes(s: &std::ffi::OsStr) -> Result<Vec<u8>> {
        use std::os::unix::ffi::OsStrExt;
        Ok(s.as_bytes().to_vec())
    }

    #[cfg(not(unix))]
    fn os_bytes(s: &std::ffi::OsStr) -> Result<Vec<u8>> {
        // Git stores symlink targets with forward slashes.
        s.to_str()
            .map(|s| s.replace('\\', "/").into_bytes())
            .ok_or_else(|| "symlink target is not UTF-8".to_string())
    }

    /// The blob id of `data`: the hash of `blob <len>\0<data>`.
    fn blob_id(data: &[u8]) -> Result<ObjectId> {
        let mut hasher = gix_hash::hasher(Kind::Sha1);
        hasher.update(format!("blob {}\0", data.len()).as_bytes());
        hasher.update(data);
        hasher.try_finalize().map_err(|e| e.to_string())
    }

    /// Whether the file's bytes hash to `id`, streamed; with `autocrlf`, also tries the bytes
    /// with CRLF turned into LF (what git's clean conversion would store).
    fn file_matches(path: &Path, len: u64, id: ObjectId, autocrlf: bool) -> Result<bool> {
        let io = |e: std::io::Error| format!("{}: {e}", path.display());
        let mut file = fs::File::open(path).map_err(io)?;
        let mut hasher = gix_hash::hasher(Kind::Sha1);
        hasher.update(format!("blob {len}\0").as_bytes());
        let mut chunk = vec![0u8; 64 << 10];
        let mut read = 0u64;
        loop {
            let n = file.read(&mut chunk).map_err(io)?;
            if n == 0 {
                break;
            }
            read += n as u64;
            hasher.update(&chunk[..n]);
        }
        // A file that changed size while read is being modified: dirty.
        if read != len {
            return Ok(false);
        }
        if hasher.try_finalize().map_err(|e| e.to_string())? == id {
            return Ok(true);
        }
        if !autocrlf || len > CRLF_RETRY_LIMIT {
            return Ok(false);
        }
        let bytes = fs::read(path).map_err(io)?;
        if !bytes.windows(2).any(|w| w == b"\r\n") {
            return Ok(false);
        }
        let mut normalised = Vec::with_capacity(bytes.len());
        let mut iter = bytes.iter().peekable();
        while let Some(&b) = iter.next() {
            if !(b == b'\r' && iter.peek() == Some(&&b'\n')) {
                normalised.push(b);
            }
        }
        Ok(blob_id(&normalised)? == id)
    }

    /// The two settings of git's configuration that change what counts as a modification.
    /// Read with a minimal parser of the `[core]` section: system, global then repository files,
    /// later ones winning, `include`s not followed. Reading config is harmless; only some values
    /// (fsmonitor, filters, hooks) would name commands, and nothing here runs them.
    pub(super) struct Config {
        /// `core.fileMode` (default true): whether the executable bit is compared.
        pub(super) file_mode: bool,
        /// `core.autocrlf` is `true` or `input`: CRLF in the working tree may be LF in blobs.
        pub(super) autocrlf: bool,
    }

    impl Config {
        fn read(git_dir: &Path, common: &Path) -> Self {
            let mut config = Config {
                file_mode: true,
                autocrlf: false,
            };
            let mut files = vec![PathBuf::from("/etc/gitconfig")];
            let home = std::env::var_os("HOME").map(PathBuf::from);
            match std::env::var_os("XDG_CONFIG_HOME").filter(|x| !x.is_empty()) {
                Some(xdg) => files.push(Path::new(&xdg).join("git/config")),
                None => files.extend(home.as_ref().map(|h| h.join(".config/git/config"))),
            }
            files.extend(home.map(|h| h.join(".gitconfig")));
            files.push(common.join("config"));
            files.push(git_dir.join("config.worktree"));
            for file in files {
                if let Ok(text) = fs::read_to_string(&file) {
                    config.apply(&text);
                }
            }
            config
        }

        pub(super) fn apply(&mut self, text: &str) {
            let mut in_core = false;
            for line in text.lines() {
                let line = line.trim();
                if let Some(rest) = line.strip_prefix('[') {
                    let name = rest.split(']').next().unwrap_or_default().trim();
                    in_core = name.eq_ignore_ascii_case("core");
                    continue;
                }
                if !in_core || line.starts_with(['#', ';']) {
                    continue;
                }
                let (key, value) = line.split_once('=').unwrap_or((line, "true"));
                let value = value
                    .split(['#', ';'])
                    .next()
                    .unwrap_or_default()
                    .trim()
                    .trim_matches('"')
                    .to_ascii_lowercase();
                let truthy = matches!(value.as_str(), "true" | "yes" | "on" | "1");
                match key.trim().to_ascii_lowercase().as_str() {
                    "filemode" => self.file_mode = truthy,
                    "autocrlf" => self.autocrlf = truthy || value == "input",
                    _ => {}
                }
            }
        }
    }
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
        let hostile = head_of(&repo).unwrap();
        assert_eq!((hostile.commit, hostile.dirty), (None, None));
        assert!(head_of(tmp.path()).is_none());
    }

    /// Runs the git CLI to build a fixture (only tests do; the code under test never does),
    /// isolated from the user's and the system's configuration.
    fn git(dir: &Path, args: &[&str]) {
        let status = std::process::Command::new("git")
            .args(["-c", "user.name=T", "-c", "user.email=t@example.com"])
            .args(["-c", "init.defaultBranch=main", "-c", "core.autocrlf=false"])
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env_remove("GIT_DIR")
            .env_remove("GIT_INDEX_FILE")
            .env_remove("GIT_WORK_TREE")
            .status()
            .expect("git runs");
        assert!(status.success(), "git {args:?}");
    }

    /// A committed repository: `a.txt`, `src/b.rs`, `src/deep/c.md`.
    fn committed_repo() -> (tempfile::TempDir, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp.path().join("repo");
        fs::create_dir_all(repo.join("src/deep")).unwrap();
        git(&repo, &["init", "-q"]);
        fs::write(repo.join("a.txt"), "alpha\n").unwrap();
        fs::write(repo.join("src/b.rs"), "fn b() {}\n").unwrap();
        fs::write(repo.join("src/deep/c.md"), "# c\n").unwrap();
        git(&repo, &["add", "-A"]);
        git(&repo, &["commit", "-q", "-m", "one"]);
        (tmp, repo)
    }

    fn dirty(path: &Path) -> Option<bool> {
        head_of(path).unwrap().dirty
    }

    #[test]
    fn clean_checkout_is_not_dirty_and_head_is_read() {
        let (_tmp, repo) = committed_repo();
        let head = head_of(&repo.join("src/deep")).unwrap();
        assert_eq!(head.branch.as_deref(), Some("main"));
        assert_eq!(head.commit.as_ref().map(String::len), Some(40));
        assert_eq!(head.dirty, Some(false));
        // The flag is serialised next to the commit.
        let json = serde_json::to_value(&head).unwrap();
        assert_eq!(json["dirty"], false);
    }

    #[test]
    fn modified_file_is_dirty_even_with_the_same_size() {
        let (_tmp, repo) = committed_repo();
        fs::write(repo.join("a.txt"), "omega\n").unwrap();
        assert_eq!(dirty(&repo), Some(true));
        fs::write(repo.join("a.txt"), "alpha\n").unwrap();
        assert_eq!(
            dirty(&repo),
            Some(false),
            "same bytes again: clean, as for git"
        );
    }

    #[test]
    fn staged_change_is_dirty_even_when_the_worktree_matches_the_index() {
        let (_tmp, repo) = committed_repo();
        fs::write(repo.join("src/b.rs"), "fn b() { 1 }\n").unwrap();
        git(&repo, &["add", "src/b.rs"]);
        assert_eq!(dirty(&repo), Some(true));
        // Staging the original content back: index = HEAD again, through a full tree compare
        // if the cached tree was invalidated.
        fs::write(repo.join("src/b.rs"), "fn b() {}\n").unwrap();
        git(&repo, &["add", "src/b.rs"]);
        assert_eq!(dirty(&repo), Some(false));
        // A staged removal and a staged addition.
        git(&repo, &["rm", "-q", "--cached", "a.txt"]);
        assert_eq!(dirty(&repo), Some(true));
        git(&repo, &["add", "a.txt"]);
        assert_eq!(dirty(&repo), Some(false));
        fs::write(repo.join("new.txt"), "new\n").unwrap();
        git(&repo, &["add", "new.txt"]);
        assert_eq!(dirty(&repo), Some(true));
    }

    #[test]
    fn full_tree_compare_without_a_cached_tree() {
        let (_tmp, repo) = committed_repo();
        // Objects in a pack, read through deltas and the pack index.
        git(&repo, &["gc", "-q"]);
        assert!(
            fs::read_dir(repo.join(".git/objects/pack"))
                .unwrap()
                .count()
                > 0
        );
        // Removing and re-adding an entry invalidates the index's cached root tree.
        git(&repo, &["update-index", "--force-remove", "a.txt"]);
        git(&repo, &["update-index", "--add", "a.txt"]);
        let index = gix_index::File::at(
            repo.join(".git/index"),
            gix_hash::Kind::Sha1,
            false,
            gix_index::decode::Options::default(),
        )
        .unwrap();
        assert!(index.tree().is_none_or(|t| t.num_entries.is_none()));
        assert_eq!(dirty(&repo), Some(false));
        fs::write(repo.join("src/deep/c.md"), "# c!\n").unwrap();
        git(&repo, &["update-index", "src/deep/c.md"]);
        assert_eq!(dirty(&repo), Some(true));
    }

    #[test]
    fn deleted_or_replaced_tracked_files_are_dirty() {
        let (_tmp, repo) = committed_repo();
        fs::remove_file(repo.join("src/deep/c.md")).unwrap();
        assert_eq!(dirty(&repo), Some(true));
        git(&repo, &["checkout", "-q", "--", "."]);
        assert_eq!(dirty(&repo), Some(false));
        fs::remove_dir_all(repo.join("src")).unwrap();
        assert_eq!(dirty(&repo), Some(true));
        git(&repo, &["checkout", "-q", "--", "."]);
        fs::remove_file(repo.join("a.txt")).unwrap();
        fs::create_dir(repo.join("a.txt")).unwrap();
        assert_eq!(
            dirty(&repo),
            Some(true),
            "a directory where a file was tracked"
        );
    }

    #[test]
    fn untracked_and_ignored_files_do_not_count() {
        let (_tmp, repo) = committed_repo();
        fs::write(repo.join("untracked.txt"), "u\n").unwrap();
        fs::create_dir_all(repo.join("src/new")).unwrap();
        fs::write(repo.join("src/new/x.rs"), "x\n").unwrap();
        fs::write(repo.join(".git/info/exclude"), "*.log\n").unwrap();
        fs::write(repo.join("build.log"), "log\n").unwrap();
        assert_eq!(dirty(&repo), Some(false));
    }

    #[test]
    fn unborn_branch_compares_with_the_empty_tree() {
        let tmp = tempfile::tempdir().unwrap();
        git(tmp.path(), &["init", "-q"]);
        fs::write(tmp.path().join("a.txt"), "a\n").unwrap();
        let head = head_of(tmp.path()).unwrap();
        assert_eq!((head.commit, head.dirty), (None, Some(false)));
        git(tmp.path(), &["add", "a.txt"]);
        assert_eq!(dirty(tmp.path()), Some(true));
    }

    #[cfg(unix)]
    #[test]
    fn executable_bit_symlinks_and_gitlinks() {
        use std::os::unix::fs::{PermissionsExt, symlink};
        let (_tmp, repo) = committed_repo();
        symlink("a.txt", repo.join("link")).unwrap();
        // A gitlink (submodule) with no checkout: never looked into.
        let sub = "0123456789abcdef0123456789abcdef01234567";
        git(
            &repo,
            &[
                "update-index",
                "--add",
                "--cacheinfo",
                &format!("160000,{sub},vendor/sub"),
            ],
        );
        git(&repo, &["add", "link"]);
        git(&repo, &["commit", "-q", "-m", "two"]);
        assert_eq!(dirty(&repo), Some(false));

        // A symlink is compared by its target text, never followed.
        fs::write(repo.join("a.txt"), "changed\n").unwrap();
        git(&repo, &["add", "a.txt"]);
        git(&repo, &["commit", "-q", "-m", "three"]);
        assert_eq!(dirty(&repo), Some(false));
        fs::remove_file(repo.join("link")).unwrap();
        symlink("src/b.rs", repo.join("link")).unwrap();
        assert_eq!(dirty(&repo), Some(true));
        fs::remove_file(repo.join("link")).unwrap();
        symlink("a.txt", repo.join("link")).unwrap();
        assert_eq!(dirty(&repo), Some(false));

        // A tracked directory replaced by a symlink to an identical copy: its files are gone.
        fs::rename(repo.join("src"), repo.join("elsewhere")).unwrap();
        symlink("elsewhere", repo.join("src")).unwrap();
        assert_eq!(dirty(&repo), Some(true));
        fs::remove_file(repo.join("src")).unwrap();
        fs::rename(repo.join("elsewhere"), repo.join("src")).unwrap();
        assert_eq!(dirty(&repo), Some(false));

        let file = repo.join("src/b.rs");
        fs::set_permissions(&file, fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(dirty(&repo), Some(true));
        git(&repo, &["config", "core.fileMode", "false"]);
        assert_eq!(
            dirty(&repo),
            Some(false),
            "core.fileMode=false ignores the bit"
        );
    }

    #[test]
    fn unmerged_entries_are_dirty() {
        let (_tmp, repo) = committed_repo();
        git(&repo, &["checkout", "-q", "-b", "other"]);
        fs::write(repo.join("a.txt"), "other\n").unwrap();
        git(&repo, &["commit", "-q", "-am", "other"]);
        git(&repo, &["checkout", "-q", "main"]);
        fs::write(repo.join("a.txt"), "main\n").unwrap();
        git(&repo, &["commit", "-q", "-am", "main"]);
        // Expected to conflict; the exit status does not matter.
        let _ = std::process::Command::new("git")
            .args(["-c", "user.name=T", "-c", "user.email=t@example.com"])
            .args(["merge", "-q", "other"])
            .current_dir(&repo)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .output();
        assert_eq!(dirty(&repo), Some(true));
    }

    #[test]
    fn hostile_config_filters_and_hooks_never_run() {
        let (tmp, repo) = committed_repo();
        let marker = |name: &str| tmp.path().join(name);
        let touch = |name: &str| format!("touch '{}'", marker(name).display());
        let mut config = fs::read_to_string(repo.join(".git/config")).unwrap();
        config.push_str(&format!(
            "[core]\n\tfsmonitor = \"{}\"\n\tpager = \"{}\"\n\thooksPath = .git/hooks\n\
             [filter \"x\"]\n\tclean = \"{}\"\n\tsmudge = \"{}\"\n\tprocess = \"{}\"\n\trequired = true\n\
             [credential]\n\thelper = \"!{}\"\n",
            touch("MARKER_FSMON"),
            touch("MARKER_PAGER"),
            touch("MARKER_CLEAN"),
            touch("MARKER_SMUDGE"),
            touch("MARKER_PROCESS"),
            touch("MARKER_CREDENTIAL"),
        ));
        fs::write(repo.join(".git/config"), config).unwrap();
        // Written after the commit, so the checkout itself was normal.
        fs::write(repo.join(".gitattributes"), "* filter=x\n").unwrap();
        for hook in [
            "post-checkout",
            "post-index-change",
            "pre-commit",
            "reference-transaction",
            "fsmonitor-watchman",
        ] {
            let path = repo.join(".git/hooks").join(hook);
            fs::write(
                &path,
                format!("#!/bin/sh\n{}\n", touch(&format!("MARKER_HOOK_{hook}"))),
            )
            .unwrap();
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
            }
        }
        // Same bytes, new stat data: git would run the clean filter to compare this file.
        fs::write(repo.join("a.txt"), "alpha\n").unwrap();
        let head = head_of(&repo).unwrap();
        assert_eq!(
            head.dirty,
            Some(false),
            "only the untracked .gitattributes is new"
        );
        fs::write(repo.join("a.txt"), "beta\n").unwrap();
        assert_eq!(dirty(&repo), Some(true));
        let ran: Vec<_> = fs::read_dir(tmp.path())
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("MARKER"))
            .collect();
        assert!(ran.is_empty(), "commands ran: {ran:?}");
    }

    #[test]
    fn autocrlf_normalisation_counts_as_clean() {
        let (_tmp, repo) = committed_repo();
        fs::write(repo.join("a.txt"), "alpha\r\n").unwrap();
        assert_eq!(dirty(&repo), Some(true));
        git(&repo, &["config", "core.autocrlf", "true"]);
        assert_eq!(dirty(&repo), Some(false));
    }

    #[test]
    fn config_parser_reads_core_booleans() {
        let mut config = dirty::Config {
            file_mode: true,
            autocrlf: false,
        };
        config.apply(
            "[user]\n\tfilemode = false\n[core]\n\tFileMode = no ; comment\n\tautocrlf = input\n",
        );
        assert!(!config.file_mode && config.autocrlf);
        config.apply("[Core]\n\tfilemode\n\tautocrlf = \"false\"\n");
        assert!(config.file_mode && !config.autocrlf);
    }
}
