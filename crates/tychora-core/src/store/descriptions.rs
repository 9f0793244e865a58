//! Descriptions of visual assets by a vision model, and the reviews of them; the assets' holders
//! as `tychora describe` resolves a picture.

use serde::{Deserialize, Serialize};

use super::tx::{Row, Tx, args};
use crate::error::Result;

crate::wire::wire_enum! {
    /// A person's verdict on a picture's description.
    pub enum ReviewStatus {
        /// Nobody has looked yet.
        Unreviewed = "unreviewed",
        /// Looked at and kept.
        Accepted = "accepted",
        /// Looked at and refused: it no longer answers.
        Rejected = "rejected",
    }
}

/// What a model said a picture shows, as stored.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DescriptionEntry {
    /// The description's row id.
    pub id: i64,
    /// sha256 of the visual asset described.
    pub sha256: String,
    /// sha256 of the bytes uploaded: the asset itself, or its PNG re-encoding.
    pub sent_sha256: String,
    /// Media type of the bytes uploaded.
    pub sent_media_type: String,
    /// The provider that answered (`anthropic`).
    pub provider: String,
    /// The model, as the provider reported it.
    pub model: String,
    /// sha256 of the instructions, the model asked for and `max_tokens`.
    pub prompt_fingerprint: String,
    /// What the model said the picture shows (control characters other than line breaks and
    /// tabs dropped, at most 20,000 characters).
    pub text: String,
    /// Why the model stopped (`end_turn`, or `max_tokens` when the text was cut short; `None`:
    /// the provider did not say).
    pub stop_reason: Option<String>,
    /// Input tokens the provider reported for the call.
    pub input_tokens: i64,
    /// Output tokens the provider reported for the call.
    pub output_tokens: i64,
    /// When it was recorded, in milliseconds since the Unix epoch.
    pub created_at: i64,
    /// `unreviewed`, `accepted` or `rejected`.
    pub review_status: ReviewStatus,
    /// When the last review accepted or rejected it, in milliseconds since the Unix epoch
    /// (`None`: unreviewed).
    pub reviewed_at: Option<i64>,
    /// The last review's note (`None`: it gave none, or there was no review).
    pub review_note: Option<String>,
}

/// A provider's answer, to be recorded against the subject it was asked about.
#[derive(Debug, Clone)]
pub struct NewDescription {
    /// sha256 of the visual asset described (the subject's `sha256`).
    pub sha256: String,
    /// sha256 of the bytes uploaded (the subject's `upload_sha256`).
    pub sent_sha256: String,
    /// Media type of the bytes uploaded (the subject's `upload_media_type`).
    pub sent_media_type: String,
    /// The provider that answered (`anthropic`).
    pub provider: String,
    /// The model, as the provider reported it.
    pub model: String,
    /// sha256 of the instructions, the model asked for and `max_tokens`.
    pub prompt_fingerprint: String,
    /// The model's answer as received (cleaned and bounded when recorded; empty is refused).
    pub text: String,
    /// Why the model stopped (`end_turn`, `max_tokens`; `None`: the provider did not say).
    pub stop_reason: Option<String>,
    /// Input tokens the provider reported for the call.
    pub input_tokens: i64,
    /// Output tokens the provider reported for the call.
    pub output_tokens: i64,
}

/// Stores a description (its `text` already cleaned); returns its id.
///
/// # Errors
/// The store's errors.
pub fn insert(tx: &dyn Tx, new: &NewDescription, text: &str, now: i64) -> Result<i64> {
    tx.insert(
        "INSERT INTO asset_descriptions (sha256, sent_sha256, sent_media_type, provider, model, prompt_fingerprint, text, stop_reason, input_tokens, output_tokens, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
        args![
            new.sha256.as_str(),
            new.sent_sha256.as_str(),
            new.sent_media_type.as_str(),
            new.provider.as_str(),
            new.model.as_str(),
            new.prompt_fingerprint.as_str(),
            text,
            new.stop_reason.as_deref(),
            new.input_tokens,
            new.output_tokens,
            now
        ],
    )
}

/// Records a review of a description; returns how many rows changed (0: no such description).
///
/// # Errors
/// The store's errors.
pub fn review(
    tx: &dyn Tx,
    id: i64,
    status: ReviewStatus,
    reviewed_at: Option<i64>,
    note: Option<&str>,
) -> Result<usize> {
    let changed = tx.execute(
        "UPDATE asset_descriptions SET review_status = ?2, reviewed_at = ?3, review_note = ?4 WHERE id = ?1",
        args![id, status.as_str(), reviewed_at, note],
    )?;
    Ok(usize::try_from(changed).unwrap_or(usize::MAX))
}

/// An asset's descriptions, oldest first.
///
/// # Errors
/// The store's errors.
pub fn of_asset(tx: &dyn Tx, sha256: &str) -> Result<Vec<DescriptionEntry>> {
    tx.rows(
        &format!("SELECT {COLUMNS} FROM asset_descriptions WHERE sha256 = ?1 ORDER BY id"),
        args![sha256],
        row,
    )
}

const COLUMNS: &str = "id, sha256, sent_sha256, sent_media_type, provider, model, prompt_fingerprint, text, stop_reason, input_tokens, output_tokens, created_at, review_status, reviewed_at, review_note";

fn row(r: &dyn Row) -> Result<DescriptionEntry> {
    Ok(DescriptionEntry {
        id: r.get(0)?,
        sha256: r.get(1)?,
        sent_sha256: r.get(2)?,
        sent_media_type: r.get(3)?,
        provider: r.get(4)?,
        model: r.get(5)?,
        prompt_fingerprint: r.get(6)?,
        text: r.get(7)?,
        stop_reason: r.get(8)?,
        input_tokens: r.get(9)?,
        output_tokens: r.get(10)?,
        created_at: r.get(11)?,
        review_status: r.get(12)?,
        reviewed_at: r.get(13)?,
        review_note: r.get(14)?,
    })
}

/// A description by id (`None`: no such description).
///
/// # Errors
/// The store's errors.
pub fn entry(tx: &dyn Tx, id: i64) -> Result<Option<DescriptionEntry>> {
    tx.optional(
        &format!("SELECT {COLUMNS} FROM asset_descriptions WHERE id = ?1"),
        args![id],
        row,
    )
}

/// At most two assets whose sha256 starts with `prefix` (lowercase hex), in order.
///
/// # Errors
/// The store's errors.
pub fn assets_with_prefix(tx: &dyn Tx, prefix: &str) -> Result<Vec<String>> {
    tx.rows(
        "SELECT DISTINCT sha256 FROM visual_assets WHERE sha256 >= ?1 AND sha256 < ?2 ORDER BY sha256 LIMIT 2",
        args![prefix, format!("{prefix}g").as_str()],
        |r| r.get(0),
    )
}

/// An extraction that keeps an asset.
#[derive(Debug, Clone)]
pub struct Holder {
    /// Its media type as this holder recorded it.
    pub media_type: String,
    /// The holder's path.
    pub path: String,
    /// The holder's collection.
    pub collection: String,
    /// Its page in a PDF.
    pub page: Option<i64>,
    /// Its alt text.
    pub alt_text: Option<String>,
    /// Its caption.
    pub caption: Option<String>,
}

/// The extractions that keep the asset, newest first.
///
/// # Errors
/// The store's errors.
pub fn holders(tx: &dyn Tx, sha256: &str) -> Result<Vec<Holder>> {
    tx.rows(
        "SELECT v.media_type, s.rel_path, c.name, v.page, v.alt_text, v.caption
         FROM visual_assets v JOIN extractions e ON e.id = v.extraction_id
         JOIN revisions r ON r.id = e.revision_id JOIN sources s ON s.id = r.source_id
         JOIN collections c ON c.id = s.collection_id
         WHERE v.sha256 = ?1 ORDER BY e.id DESC, v.ordinal",
        args![sha256],
        |r| {
            Ok(Holder {
                media_type: r.get(0)?,
                path: r.get(1)?,
                collection: r.get(2)?,
                page: r.get(3)?,
                alt_text: r.get(4)?,
                caption: r.get(5)?,
            })
        },
    )
}
