//! `manage doctor`, the checks that need the open workspace: integrity (`verify`), disk space,
//! index generations on disk that no snapshot references, originals on disk that no revision
//! references, and interrupted jobs. Each finding says what to do. (The lock owner, the daemon and
//! the schema are checked by the CLI before it opens the workspace.)

use std::collections::HashSet;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::engine::Engine;
use crate::error::Result;

/// One check and what it found.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Finding {
    /// The check's name: `verify`, `disk space`, `stale generations`, `orphaned originals` or
    /// `jobs`.
    pub check: String,
    /// `ok`, `warn` or `fail`.
    pub status: Verdict,
    /// What it found, in words (counts, sizes in MB, or the first five problems).
    pub detail: String,
    /// What to do about it (empty when ok).
    pub fix: String,
}

crate::wire::wire_enum! {
    /// What a check concluded.
    pub enum Verdict {
        /// Nothing to do.
        Ok = "ok",
        /// Worth a look; the workspace works.
        Warn = "warn",
        /// Something is damaged; the fix says what to run.
        Fail = "fail",
    }
}

fn finding(check: &str, status: Verdict, detail: String, fix: &str) -> Finding {
    Finding {
        check: check.into(),
        status,
        detail,
        fix: fix.into(),
    }
}

/// Free bytes on the file system holding `dir` (statvfs).
fn free_bytes(dir: &Path) -> Option<u64> {
    let stat = rustix::fs::statvfs(dir).ok()?;
    Some(stat.f_bavail.saturating_mul(stat.f_frsize))
}

/// Runs the checks.
///
/// # Errors
/// SQLite errors.
pub(crate) fn doctor(engine: &Engine) -> Result<Vec<Finding>> {
    let mut findings = Vec::new();
    let report = crate::manage::verify(engine)?;
    findings.push(if report.ok {
        finding("verify", Verdict::Ok, format!("{} originals re-hashed, {} snapshots checked", report.artifacts_checked, report.snapshots_checked), "")
    } else {
        finding("verify", Verdict::Fail,
            report.problems.iter().take(5).map(|p| format!("{} {}: {}", p.code, p.object, p.message)).collect::<Vec<_>>().join("; "),
            "`tychora manage rebuild` rewrites damaged index files; a damaged original can only come back from a backup (`tychora manage restore`)",
        )
    });
    let status = crate::manage::status(engine, crate::manage::StatusOptions::default())?;
    let used = status.bytes.corpus + status.bytes.artifacts + status.bytes.indexes;
    match free_bytes(engine.dir()) {
        Some(free) if free < used / 2 || free < 256 * 1024 * 1024 => findings.push(finding("disk space", Verdict::Warn,
            format!("{} MB free beside a {} MB workspace", free / 1_000_000, used / 1_000_000),
            "free space or move the workspace: a full add writes a new index generation and a backup copies everything",
        )),
        Some(free) => findings.push(finding("disk space", Verdict::Ok, format!("{} MB free, workspace {} MB", free / 1_000_000, used / 1_000_000), "")),
        None => findings.push(finding("disk space", Verdict::Warn, "free space could not be read".into(), "")),
    }
    let (referenced, artifacts, interrupted) = engine.with_reader(|conn| {
        let generations: HashSet<String> = crate::store::batches::referenced_generations(conn)?
            .into_iter()
            .collect();
        let artifacts: HashSet<String> = crate::store::sources::referenced_artifacts(conn, false)?
            .into_iter()
            .collect();
        let interrupted = crate::store::jobs::count_in(conn, crate::job::JobState::Interrupted)?;
        Ok((generations, artifacts, interrupted))
    })?;
    let mut stale = 0usize;
    for dir in [engine.generations_dir(), engine.text_dir()] {
        if let Ok(entries) = std::fs::read_dir(&dir) {
            stale += entries
                .flatten()
                .filter(|e| !referenced.contains(&e.file_name().to_string_lossy().into_owned()))
                .count();
        }
    }
    findings.push(if stale == 0 {
        finding("stale generations", Verdict::Ok, "every index generation on disk belongs to a snapshot".into(), "")
    } else {
        finding("stale generations", Verdict::Warn, format!("{stale} index generation(s) on disk belong to no snapshot (a crash, or a reader held them at the last collection)"), "`tychora manage purge` collects them (so does the next add)")
    });
    let location = engine.artifacts().location();
    findings.push(match engine.artifacts().list() {
        Ok(stored) => match stored.iter().filter(|(sha, _)| !artifacts.contains(sha)).count() {
            0 => finding("orphaned originals", Verdict::Ok, format!("every original in {location} belongs to a revision"), ""),
            orphans => finding("orphaned originals", Verdict::Warn, format!("{orphans} object(s) in {location} belong to no revision (an add interrupted between storing bytes and committing rows)"), "harmless; the next add of the same bytes reuses them"),
        },
        Err(e) => finding("orphaned originals", Verdict::Fail, format!("the artifact store cannot be listed: {e}"), "check that the store is reachable and the credentials in the environment can list the bucket"),
    });
    findings.push(if interrupted == 0 {
        finding("jobs", Verdict::Ok, "no interrupted job".into(), "")
    } else {
        finding("jobs", Verdict::Warn, format!("{interrupted} job(s) were interrupted (the process died); what they captured was never published"), "run the same `tychora add` again")
    });
    Ok(findings)
}
