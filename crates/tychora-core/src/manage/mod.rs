//! Administration and provenance: `manage status`, `manage verify`, `inspect ID`, job status and
//! the paged listings the agent surfaces serve. Every result is a typed struct.

mod backup;
mod cancel;
mod clone;
mod describe;
mod doctor;
mod evidence;
mod listing;
mod purge;
mod records;
mod relations;
mod runs;
mod status;
mod verify;

pub use crate::ingest::relations::{Basis, Decision};
pub use backup::{BackupReport, Manifest, ManifestEntry, RestoreTarget, restore};
pub use cancel::MAX_CANCEL_REASON;
pub use clone::{CloneReport, clone_workspace};
pub use describe::{DescriptionEntry, DescriptionSubject, NewDescription, ReviewStatus};
pub use doctor::{Finding, Verdict};
pub use evidence::{
    BatchStatus, CapsuleView, CellEntry, ChunkEvidence, ChunkLocator, DocumentBrief, Evidence,
    ExtractionBrief, ExtractionEvidence, FurnitureEntry, IdentifierEntry, IndexBrief, JobList,
    JobStatus, JobStep, MemberBrief, RevisionBrief, RevisionEvidence, RevisionTombstone,
    SnapshotEvidence, SourceEvidence, SourceStatus, TombstoneKind, UnitBrief, UnitDocument,
    UnitEvidence, UnitLocator,
};
pub use listing::{SnapshotList, SnapshotSummary, SourceList, SourceQuery, SourceSummary};
pub use purge::PurgeReport;
pub use records::{
    RecordDetail, RecordEvidence, RecordList, RecordQuery, RecordStatus, RecordSummary,
};
pub use relations::{DeclareRelation, RelationAssertion};
pub use runs::{RunBrief, RunList, RunRecord};
pub use status::{
    Bytes, CollectionCount, Counts, CurrentSnapshot, KindUse, Status, StatusOptions, TableBytes,
};
pub use verify::{Problem, VerifyReport};

pub(crate) use backup::backup;
pub(crate) use cancel::cancel_job;
pub(crate) use describe::{
    record as record_description, review as review_description, subject as description_subject,
};
pub(crate) use doctor::doctor;
pub(crate) use evidence::{inspect, job_status, list_jobs};
pub(crate) use listing::{list_snapshots, list_sources};
pub(crate) use purge::{erase_everywhere, purge, retain};
pub(crate) use records::{list_records, review_record, show_record};
pub(crate) use relations::{declare_relation, list_relations, review_relation};
pub(crate) use runs::{list_runs, run_record};
pub(crate) use status::status;
pub(crate) use verify::verify;

/// The page size of the newest-first listings (`list_jobs`, `list_runs`) when none is given.
pub const DEFAULT_PAGE: u32 = 50;
/// The largest page those listings return.
pub const MAX_PAGE: u32 = 500;

/// A listing's page size: `limit`, else [`DEFAULT_PAGE`].
///
/// # Errors
/// `E_INVALID_ARGUMENT` for a limit outside `1..=MAX_PAGE`.
fn page_limit(limit: Option<u32>) -> crate::error::Result<u32> {
    match limit.unwrap_or(DEFAULT_PAGE) {
        n @ 1..=MAX_PAGE => Ok(n),
        n => Err(crate::error::Error::InvalidArgument(format!(
            "limit must be between 1 and {MAX_PAGE} (got {n})"
        ))),
    }
}
