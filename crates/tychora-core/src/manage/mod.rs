//! Administration and provenance: `manage status`, `manage verify`, `inspect ID`, job status and
//! the paged listings the agent surfaces serve. Every result is a typed struct.

mod evidence;
mod listing;
mod status;
mod verify;

pub use evidence::{
    CapsuleView, ChunkEvidence, ChunkLocator, Evidence, ExtractionBrief, IdentifierEntry,
    IndexBrief, JobStatus, JobStep, MemberBrief, RevisionBrief, RevisionEvidence, SnapshotEvidence,
    SourceEvidence, UnitEvidence, UnitLocator,
};
pub use listing::{SnapshotList, SnapshotSummary, SourceList, SourceQuery, SourceSummary};
pub use status::{Bytes, CollectionCount, Counts, CurrentSnapshot, Status};
pub use verify::{Problem, VerifyReport};

pub(crate) use evidence::{inspect, job_status};
pub(crate) use listing::{list_snapshots, list_sources};
pub(crate) use status::status;
pub(crate) use verify::verify;
