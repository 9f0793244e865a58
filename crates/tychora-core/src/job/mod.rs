//! Durable jobs: the progress a running job reports, the steps it records as it goes, and the
//! failpoints the crash tests stop it at.

use std::collections::HashMap;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

/// This process's name as a job worker on a shared store: the host, the process id and the
/// moment it first asked (a pid reused after a restart is another worker). Leases name it; a
/// job's end is recorded only by the worker that holds it.
pub fn worker() -> &'static str {
    static WORKER: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    WORKER.get_or_init(|| {
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .ok()
            .map(|h| h.trim().to_string())
            .filter(|h| !h.is_empty())
            .or_else(|| std::env::var("HOSTNAME").ok())
            .unwrap_or_else(|| "host".into());
        format!("{host}/{}/{:x}", std::process::id(), crate::clock::now_ms())
    })
}

/// The phases of an add job, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    /// Listing the files under each target (items: files found).
    Walk,
    /// Reading, hashing, parsing and chunking each file, on all cores (items: files).
    Prepare,
    /// Writing each prepared file's original and canonical rows (interleaved with prepare,
    /// whose count covers it).
    Commit,
    /// Embedding windows that have no vector yet (text channel).
    Embed,
    /// Building the snapshot's index generations and checking their document count (items:
    /// chunks).
    Index,
    /// Switching the current snapshot to the new one (one item).
    Publish,
}

crate::wire::wire_enum! {
    /// Where a job stands: `queued` until the writer takes it, `running`, then how it ended
    /// ([`Outcome`]) or `interrupted` when its process died first; `cancelled` when the owner
    /// took it off the queue before it ran.
    pub enum JobState {
        /// Waiting for the single writer.
        Queued = "queued",
        /// On the writer now.
        Running = "running",
        /// Ended; everything it was asked for was captured.
        Succeeded = "succeeded",
        /// Ended; some items failed (see the receipt's diagnostics).
        Partial = "partial",
        /// Ended with nothing published.
        Failed = "failed",
        /// Its process exited before it ended (found when the workspace is next opened).
        Interrupted = "interrupted",
        /// Taken off the queue by the owner before it ran; it never runs (`finished_at` is when,
        /// `error` why).
        Cancelled = "cancelled",
    }
}

crate::wire::wire_enum! {
    /// How a job that ran to its end ended (a receipt's `status`).
    pub enum Outcome {
        /// Everything it was asked for was captured.
        Succeeded = "succeeded",
        /// Some items failed; the rest was captured and published.
        Partial = "partial",
        /// Nothing could be captured and nothing was published.
        Failed = "failed",
    }
}

crate::wire::wire_enum! {
    /// What a job does.
    pub enum JobKind {
        /// Capture paths and publish a snapshot (`tychora add`, a sync, an HTTP or MCP add).
        Add = "add",
        /// Rewrite derived index data (`tychora manage rebuild`).
        Rebuild = "rebuild",
        /// Take sources out of new snapshots (`tychora manage withdraw`).
        Withdraw = "withdraw",
        /// Erase original bytes (`tychora manage delete-original`, or a relabel above the ceiling).
        DeleteOriginal = "delete-original",
    }
}

crate::wire::wire_enum! {
    /// Where a job's step stands.
    pub enum StepState {
        /// Started; a step its job died in stays here.
        Running = "running",
        /// Finished.
        Done = "done",
    }
}

impl JobState {
    /// The state a job that ended with `outcome` is left in.
    #[must_use]
    pub const fn from_outcome(outcome: Outcome) -> Self {
        match outcome {
            Outcome::Succeeded => Self::Succeeded,
            Outcome::Partial => Self::Partial,
            Outcome::Failed => Self::Failed,
        }
    }
}

/// Progress of a running job.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Progress {
    /// The phase it is in.
    pub phase: Phase,
    /// Items done in this phase.
    pub done: usize,
    /// Items in this phase (0 when unknown).
    pub total: usize,
}

/// The latest progress of each job running in this process, for `job_status`.
#[derive(Debug, Default)]
pub(crate) struct ProgressBoard(Mutex<HashMap<i64, Progress>>);

impl ProgressBoard {
    pub(crate) fn record(&self, job_id: i64, progress: &Progress) {
        if let Ok(mut map) = self.0.lock() {
            map.insert(job_id, progress.clone());
        }
    }

    pub(crate) fn clear(&self, job_id: i64) {
        if let Ok(mut map) = self.0.lock() {
            map.remove(&job_id);
        }
    }

    pub(crate) fn get(&self, job_id: i64) -> Option<Progress> {
        self.0.lock().ok().and_then(|m| m.get(&job_id).cloned())
    }
}

/// Test hook: when `TYCHORA_FAILPOINT` names this step, aborts the process there (`NAME`) or
/// pauses it for a minute (`NAME:sleep`, so a test can kill it mid-job). Crash safety is tested at
/// exact points rather than by timing.
pub(crate) fn failpoint(name: &str) {
    let Ok(value) = std::env::var("TYCHORA_FAILPOINT") else {
        return;
    };
    if value == name {
        log::error!("failpoint {name}: aborting");
        std::process::abort();
    }
    if value.strip_suffix(":sleep") == Some(name) {
        log::error!("failpoint {name}: sleeping");
        std::thread::sleep(std::time::Duration::from_secs(60));
    }
}
