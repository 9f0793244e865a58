//! Relabelling a source's sensitivity (`manage sensitivity`). A label is access policy: it is
//! set on the source at once, for every snapshot. Raised above the ceiling, the source's original
//! bytes are erased in the same call (a tombstone says why) and a snapshot without it is
//! published, so content above the ceiling leaves the index as if it had never been captured; a
//! later sync of its folder leaves it out.

use serde::{Deserialize, Serialize};

use super::withdraw::{Removal, WithdrawReport, resolve, withdraw};
use crate::clock::now_ms;
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::job::Progress;
use crate::store::tx::Begun;

/// What `manage sensitivity` did.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RelabelReport {
    /// The source relabelled.
    pub source_id: i64,
    /// Its path relative to its root.
    pub path: String,
    /// Its label before (`None`: captured before labels, counted as the default).
    pub from: Option<String>,
    /// Its label now.
    pub to: String,
    /// Summary trees deleted because they summarised it under its old label (rebuild with
    /// `index build --raptor`).
    pub summary_trees_deleted: usize,
    /// When the new label is above the ceiling: the erasure that took it out of new snapshots.
    pub erased: Option<WithdrawReport>,
}

/// Labels the source `selector` names (`source:N`, a URI or a path: `selector.rs`) `level`.
///
/// # Errors
/// `E_INVALID_ARGUMENT` for an unknown level, an empty reason or an ambiguous path;
/// `E_NOT_FOUND` when no source matches; as [`withdraw`] for the erasure.
pub(crate) fn relabel(
    engine: &Engine,
    selector: &str,
    level: &str,
    reason: &str,
    on_progress: &(dyn Fn(Progress) + Sync),
) -> Result<RelabelReport> {
    let sensitivity = &engine.config().sensitivity;
    let above = !sensitivity.within_ceiling(level)?;
    if reason.trim().is_empty() {
        return Err(Error::InvalidArgument(
            "a reason is required: it is recorded with the relabelling".into(),
        ));
    }
    let (source_id, path, from, summary_trees_deleted) = {
        let conn = engine.writer()?;
        let (sources, _) = resolve(&*conn, selector, Removal::Withdraw)?;
        let source_id = sources[0];
        let (path, from) = crate::store::sources::path_and_label(&*conn, source_id)?;
        let tx = Begun::new(&*conn, false)?;
        crate::store::sources::relabel(&*tx, source_id, level, now_ms())?;
        // A corpus-level summary groups one level's documents: under a new label, a tree that
        // summarised this source would show its text to queries of its old level.
        let in_tree = crate::store::summaries::summarises_source(&*tx, source_id)?;
        let deleted = if in_tree && from.as_deref() != Some(level) {
            let trees = crate::store::summaries::tree_count(&*tx)?;
            crate::store::summaries::delete_trees(&*tx)?;
            trees
        } else {
            0
        };
        tx.commit()?;
        (source_id, path, from, deleted)
    };
    let erased = if above {
        let why = format!(
            "sensitivity raised to {level}, above the ceiling {}: {}",
            sensitivity.ceiling,
            reason.trim()
        );
        Some(withdraw(
            engine,
            &format!("source:{source_id}"),
            &why,
            Removal::Erase,
            on_progress,
        )?)
    } else {
        None
    };
    Ok(RelabelReport {
        source_id,
        path,
        from,
        to: level.to_string(),
        summary_trees_deleted,
        erased,
    })
}
