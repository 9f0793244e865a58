//! Proof that capturing a repository (its HEAD, branch and dirty flag included) executes nothing
//! (DESIGN §14), through the public API as a user calls it.
//!
//! Its own test binary with a single test, because it replaces the process-wide `PATH`: every
//! program a spawn could look up (`git`, `sh`, pagers, the hostile config's commands) is a fake
//! that leaves a marker file. Together with the absolute-path markers of the hostile config
//! (hooks, fsmonitor, filter drivers), nothing that runs can go unnoticed.

use std::fs;
use std::path::Path;
use std::process::Command;

use tychora_core::Workspace;
use tychora_core::ingest::{AddRequest, Requester};
use tychora_core::job::Outcome;
use tychora_core::manage::Evidence;

/// Adds `repo` and returns the dirty flag recorded on the revision of `file`.
fn add_and_read_dirty(ws: &Workspace, repo: &Path, file: &str) -> Option<bool> {
    let receipt = ws
        .add(
            &AddRequest {
                paths: vec![repo.display().to_string()],
                ..Default::default()
            },
            Requester::Owner,
            &|_| {},
        )
        .unwrap();
    assert_ne!(receipt.status, Outcome::Failed, "{:?}", receipt.diagnostics);
    let sources = ws
        .list_sources(&tychora_core::manage::SourceQuery {
            limit: 100,
            ..Default::default()
        })
        .unwrap();
    let source = sources.sources.iter().find(|s| s.path == file).unwrap();
    let Evidence::Revision(revision) = ws
        .inspect(&format!("revision:{}", source.revision_id))
        .unwrap()
    else {
        panic!("a revision")
    };
    revision.metadata["git"]["dirty"].as_bool()
}

fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args(["-c", "user.name=T", "-c", "user.email=t@example.com"])
        .args(["-c", "init.defaultBranch=main"])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .status()
        .expect("git runs");
    assert!(status.success(), "git {args:?}");
}

#[cfg(unix)]
#[test]
fn head_of_spawns_no_process_even_in_a_hostile_repository() {
    use std::os::unix::fs::PermissionsExt;

    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    let markers = tmp.path().join("markers");
    let bin = tmp.path().join("bin");
    for dir in [&repo, &markers, &bin] {
        fs::create_dir_all(dir).unwrap();
    }
    git(&repo, &["init", "-q"]);
    fs::write(repo.join("a.txt"), "alpha\n").unwrap();
    fs::write(repo.join("b.txt"), "beta\n").unwrap();
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "one"]);

    // Every command the hostile config names, and the programs a careless implementation would
    // spawn, resolve to a fake that records its own name.
    let fake = |name: &str| {
        let path = bin.join(name);
        fs::write(
            &path,
            format!("#!/bin/sh\necho ran > '{}/{name}'\n", markers.display()),
        )
        .unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
    };
    for name in [
        "git", "sh", "bash", "less", "more", "touch", "fsmon", "clean", "smudge", "process",
        "pager", "helper", "watchman",
    ] {
        fake(name);
    }
    let mut config = fs::read_to_string(repo.join(".git/config")).unwrap();
    config.push_str(
        "[core]\n\tfsmonitor = fsmon\n\tpager = pager\n\
         [filter \"x\"]\n\tclean = clean\n\tsmudge = smudge\n\tprocess = process\n\trequired = true\n\
         [credential]\n\thelper = helper\n",
    );
    fs::write(repo.join(".git/config"), config).unwrap();
    fs::write(repo.join(".gitattributes"), "* filter=x\n").unwrap();
    for hook in [
        "post-checkout",
        "post-index-change",
        "reference-transaction",
    ] {
        let path = repo.join(".git/hooks").join(hook);
        fs::write(
            &path,
            format!(
                "#!/bin/sh\necho ran > '{}/hook-{hook}'\n",
                markers.display()
            ),
        )
        .unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
    }
    // Same bytes, new stat data (git would consult fsmonitor and run the clean filter), and a
    // real modification.
    fs::write(repo.join("a.txt"), "alpha\n").unwrap();

    let saved = std::env::var_os("PATH");
    // SAFETY: this binary holds this single test, so no other thread reads the environment.
    unsafe { std::env::set_var("PATH", &bin) };
    let ws_dir = tmp.path().join("ws");
    Workspace::init(&ws_dir).unwrap();
    let ws = Workspace::open(&ws_dir).unwrap();
    let clean = add_and_read_dirty(&ws, &repo, "a.txt");
    fs::write(repo.join("b.txt"), "BETA\n").unwrap();
    let dirty = add_and_read_dirty(&ws, &repo, "b.txt");
    // SAFETY: as above.
    unsafe {
        match saved {
            Some(path) => std::env::set_var("PATH", path),
            None => std::env::remove_var("PATH"),
        }
    }

    let ran: Vec<_> = fs::read_dir(&markers)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(ran.is_empty(), "processes ran: {ran:?}");
    assert_eq!(clean, Some(false));
    assert_eq!(dirty, Some(true));
}
