//! Administration and provenance: `manage status`, `manage verify`, `inspect ID`, job status and
//! the paged listings the agent surfaces serve. Every result is a typed struct.

mod backup;
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
pub use backup::{BackupReport, Manifest, ManifestEntry, restore};
pub use clone::{CloneReport, clone_workspace};
pub use describe::{DescriptionEntry, DescriptionSubject, NewDescription, ReviewStatus};
pub use doctor::{Finding, Verdict};
pub use evidence::{
    BatchStatus, CapsuleView, CellEntry, ChunkEvidence, ChunkLocator, DocumentBrief, Evidence,
    ExtractionBrief, ExtractionEvidence, FurnitureEntry, IdentifierEntry, IndexBrief, JobStatus,
    JobStep, MemberBrief, RevisionBrief, RevisionEvidence, RevisionTombstone, SnapshotEvidence,
    SourceEvidence, SourceStatus, TombstoneKind, UnitBrief, UnitDocument, UnitEvidence,
    UnitLocator,
};
pub use listing::{SnapshotList, SnapshotSummary, SourceList, SourceQuery, SourceSummary};
pub use purge::PurgeReport;
pub use records::{
    RecordDetail, RecordEvidence, RecordList, RecordQuery, RecordStatus, RecordSummary,
};
pub use relations::{DeclareRelation, RelationAssertion};
pub use runs::RunRecord;
pub use status::{Bytes, CollectionCount, Counts, CurrentSnapshot, KindUse, Status, TableBytes};
pub use verify::{Problem, VerifyReport};

pub(crate) use backup::backup;
pub(crate) use describe::{
    of_asset as descriptions_of_asset, record as record_description, review as review_description,
    subject as description_subject,
};
pub(crate) use doctor::doctor;
pub(crate) use evidence::{inspect, job_status};
pub(crate) use listing::{list_snapshots, list_sources};
pub(crate) use purge::{erase_everywhere, purge, retain};
pub(crate) use records::{list_records, review_record, show_record};
pub(crate) use relations::{declare_relation, list_relations, review_relation};
pub(crate) use runs::run_record;
pub(crate) use status::status;
pub(crate) use verify::verify;
