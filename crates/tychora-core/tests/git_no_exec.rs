//! Proof that reading a repository's HEAD and dirty flag executes nothing (DESIGN §14).
//!
//! Its own test binary with a single test, because it replaces the process-wide `PATH`: every
//! program a spawn could look up (`git`, `sh`, pagers, the hostile config's commands) is a fake
//! that leaves a marker file. Together with the absolute-path markers of the hostile config
//! (hooks, fsmonitor, filter drivers), nothing that runs can go unnoticed.

use std::fs;
use std::path::Path;
use std::process::Command;

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
    let clean = tychora_core::capture::git::head_of(&repo);
    fs::write(repo.join("b.txt"), "BETA\n").unwrap();
    let dirty = tychora_core::capture::git::head_of(&repo);
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
    assert_eq!(clean.unwrap().dirty, Some(false));
    assert_eq!(dirty.unwrap().dirty, Some(true));
}
