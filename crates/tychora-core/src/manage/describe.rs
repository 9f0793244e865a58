//! Descriptions of visual assets by a vision model (`tychora describe`), the core's half: which
//! picture may leave the machine and in what form, and the record of what came back.
//!
//! The provider call itself is TypeScript's (it owns the SDKs); it happens between
//! [`subject`] and [`record`], outside any transaction. A description is derived evidence: it is
//! kept beside the asset, never as a unit, so it can neither be cited as the source's words nor
//! change what a snapshot answers.

use rusqlite::{Connection, params};
use serde::{Deserialize, Serialize};

use crate::artifact::sha256_hex;
use crate::clock::now_ms;
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::parse::image;

/// A picture someone asked to have described, checked and ready to upload.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DescriptionSubject {
    /// The asset's sha256 (its retained bytes, re-hashed when read).
    pub sha256: String,
    /// Its media type as the newest holder recorded it (`image/png`, …).
    pub media_type: String,
    /// Where it is: the file that is or holds it, relative to its root (the newest holder).
    pub path: String,
    /// Its page (1-based) when the newest holder is a PDF; `None` otherwise.
    pub page: Option<i64>,
    /// Every collection that holds it (each permits upload, or the subject is refused).
    pub collections: Vec<String>,
    /// Its alt text in the newest holder (DOCX `descr` or `title`; `None`: it has none).
    pub alt_text: Option<String>,
    /// Its caption in the newest holder (an image file's: the words of its name; `None`: none
    /// was found).
    pub caption: Option<String>,
    /// The form uploaded: the asset itself, or its PNG re-encoding.
    pub upload_media_type: String,
    /// sha256 of `upload`, recorded as the description's `sent_sha256`.
    pub upload_sha256: String,
    /// The bytes to upload, in `upload_media_type` (not serialized).
    #[serde(skip)]
    pub upload: Vec<u8>,
    /// From `[descriptions]`.
    pub provider: String,
    /// The model to ask (`[descriptions] model`).
    pub model: String,
    /// Most tokens the description may take (`[descriptions] max_tokens`).
    pub max_tokens: u32,
}

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

/// Longest description kept (characters); `max_tokens` already bounds an honest answer.
const MAX_TEXT_CHARS: usize = 20_000;

/// The asset `selector` names (its sha256, or a prefix of at least 12 hex digits), checked: the
/// workspace has `[descriptions]`, every collection holding it permits upload, its bytes are
/// retained and still hash to their name, and they are in a form the model reads.
///
/// # Errors
/// `E_INVALID_ARGUMENT` when descriptions are off or the selector is not hex;
/// `E_NOT_FOUND` for no such asset (or an ambiguous prefix names several: `E_CONFLICT`);
/// `E_FORBIDDEN` when a collection does not permit upload; `E_NOT_FOUND` when its bytes were
/// erased; `E_CHECKSUM_MISMATCH` when they changed; `E_UNSUPPORTED_FORMAT` for a picture no vision
/// model reads (EMF, WMF, SVG).
pub(crate) fn subject(engine: &Engine, selector: &str) -> Result<DescriptionSubject> {
    let Some(settings) = engine.config().descriptions.clone() else {
        return Err(Error::InvalidArgument(
            "descriptions are off: add a [descriptions] section to workspace.toml naming the provider, the model and the collections whose pictures may be uploaded".into(),
        ));
    };
    let sha256 = engine.with_reader(|conn| resolve(conn, selector))?;
    let holders = engine.with_reader(|conn| holders(conn, &sha256))?;
    let Some(newest) = holders.first().cloned() else {
        return Err(Error::NotFound {
            what: "visual asset",
            id: sha256,
        });
    };
    let mut collections: Vec<String> = holders.iter().map(|h| h.collection.clone()).collect();
    collections.sort();
    collections.dedup();
    if let Some(closed) = collections.iter().find(|c| !settings.permits(c)) {
        return Err(Error::Forbidden(format!(
            "asset {sha256} is held by collection {closed:?}, whose pictures may not be uploaded: [descriptions] collections = {:?}",
            settings.collections
        )));
    }
    let bytes = engine.artifacts().get(&sha256).map_err(|e| match e {
        Error::NotFound { .. } => Error::NotFound {
            what: "retained bytes of visual asset (erased or purged)",
            id: sha256.clone(),
        },
        other => other,
    })?;
    let documents = &engine.config().documents;
    let (upload_media_type, upload) = image::upload_form(
        &bytes,
        documents.max_image_pixels,
        u64::from(documents.worker_memory_mb) << 20,
    )
    .map_err(|f| {
        let why = format!(
            "asset {sha256} ({}) cannot be described: {}; a vision model reads PNG, JPEG, GIF, WebP and TIFF pictures",
            newest.media_type, f.message
        );
        match f.code {
            crate::error::ErrorCode::LimitExceeded => Error::LimitExceeded(why),
            _ => Error::UnsupportedFormat(why),
        }
    })?;
    Ok(DescriptionSubject {
        upload_sha256: sha256_hex(&upload),
        sha256,
        media_type: newest.media_type,
        path: newest.path,
        page: newest.page,
        collections,
        alt_text: newest.alt_text,
        caption: newest.caption,
        upload_media_type: upload_media_type.to_string(),
        upload,
        provider: settings.provider,
        model: settings.model,
        max_tokens: settings.max_tokens,
    })
}

/// Stores a description of an asset that is still kept (it may have been erased while the
/// provider answered: then nothing is stored).
///
/// # Errors
/// `E_NOT_FOUND` when the asset is no longer kept; `E_INVALID_ARGUMENT` for an empty text.
pub(crate) fn record(engine: &Engine, new: &NewDescription) -> Result<DescriptionEntry> {
    let text = clean(&new.text);
    if text.is_empty() {
        return Err(Error::InvalidArgument(
            "the description is empty: nothing to record".into(),
        ));
    }
    let conn = engine.writer()?;
    if holders(&conn, &new.sha256)?.is_empty() || !engine.artifacts().exists(&new.sha256)? {
        return Err(Error::NotFound {
            what: "visual asset (erased or purged while it was being described)",
            id: new.sha256.clone(),
        });
    }
    conn.execute(
        "INSERT INTO asset_descriptions (sha256, sent_sha256, sent_media_type, provider, model, prompt_fingerprint, text, stop_reason, input_tokens, output_tokens, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
        params![
            new.sha256,
            new.sent_sha256,
            new.sent_media_type,
            new.provider,
            new.model,
            new.prompt_fingerprint,
            text,
            new.stop_reason,
            new.input_tokens,
            new.output_tokens,
            now_ms()
        ],
    )?;
    let id = conn.last_insert_rowid();
    entry(&conn, id)
}

/// Records a person's review of a description.
///
/// # Errors
/// `E_INVALID_ARGUMENT` for a status other than accepted, rejected or unreviewed; `E_NOT_FOUND`.
pub(crate) fn review(
    engine: &Engine,
    id: i64,
    status: &str,
    note: Option<&str>,
) -> Result<DescriptionEntry> {
    let Ok(status) = status.parse::<ReviewStatus>() else {
        return Err(Error::InvalidArgument(format!(
            "review status {status:?}; expected accepted, rejected or unreviewed"
        )));
    };
    let conn = engine.writer()?;
    let changed = conn.execute(
        "UPDATE asset_descriptions SET review_status = ?2, reviewed_at = ?3, review_note = ?4 WHERE id = ?1",
        params![id, status, (status != ReviewStatus::Unreviewed).then(now_ms), note.map(clean)],
    )?;
    if changed == 0 {
        return Err(Error::NotFound {
            what: "description",
            id: id.to_string(),
        });
    }
    entry(&conn, id)
}

/// An asset's descriptions, oldest first.
///
/// # Errors
/// SQLite errors.
pub(crate) fn of_asset(conn: &Connection, sha256: &str) -> Result<Vec<DescriptionEntry>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM asset_descriptions WHERE sha256 = ?1 ORDER BY id"
    ))?;
    let rows = stmt.query_map(params![sha256], row)?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

const COLUMNS: &str = "id, sha256, sent_sha256, sent_media_type, provider, model, prompt_fingerprint, text, stop_reason, input_tokens, output_tokens, created_at, review_status, reviewed_at, review_note";

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<DescriptionEntry> {
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

fn entry(conn: &Connection, id: i64) -> Result<DescriptionEntry> {
    Ok(conn.query_row(
        &format!("SELECT {COLUMNS} FROM asset_descriptions WHERE id = ?1"),
        params![id],
        row,
    )?)
}

/// A model's words are a stranger's text too: no control characters (line breaks and tabs stay),
/// bounded length.
fn clean(text: &str) -> String {
    text.chars()
        .filter(|c| !c.is_control() || *c == '\n' || *c == '\t')
        .take(MAX_TEXT_CHARS)
        .collect::<String>()
        .trim()
        .to_string()
}

/// A full sha256, or a unique prefix of at least 12 hex digits, of a visual asset.
fn resolve(conn: &Connection, selector: &str) -> Result<String> {
    let wanted = selector.trim().to_ascii_lowercase();
    if wanted.len() < 12 || wanted.len() > 64 || !wanted.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(Error::InvalidArgument(
            "an asset is named by its sha256 (or at least its first 12 hex digits), as inspect lists it under assets".into(),
        ));
    }
    let found: Vec<String> = conn
        .prepare_cached(
            "SELECT DISTINCT sha256 FROM visual_assets WHERE sha256 >= ?1 AND sha256 < ?1 || 'g' ORDER BY sha256 LIMIT 2",
        )?
        .query_map(params![wanted], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    match found.as_slice() {
        [one] => Ok(one.clone()),
        [] => Err(Error::NotFound {
            what: "visual asset",
            id: wanted,
        }),
        _ => Err(Error::Conflict(format!(
            "{wanted} is the start of more than one asset's sha256: give more digits"
        ))),
    }
}

#[derive(Debug, Clone)]
struct Holder {
    media_type: String,
    path: String,
    collection: String,
    page: Option<i64>,
    alt_text: Option<String>,
    caption: Option<String>,
}

/// The extractions that keep the asset, newest first.
fn holders(conn: &Connection, sha256: &str) -> Result<Vec<Holder>> {
    let mut stmt = conn.prepare_cached(
        "SELECT v.media_type, s.rel_path, c.name, v.page, v.alt_text, v.caption
         FROM visual_assets v JOIN extractions e ON e.id = v.extraction_id
         JOIN revisions r ON r.id = e.revision_id JOIN sources s ON s.id = r.source_id
         JOIN collections c ON c.id = s.collection_id
         WHERE v.sha256 = ?1 ORDER BY e.id DESC, v.ordinal",
    )?;
    let rows = stmt.query_map(params![sha256], |r| {
        Ok(Holder {
            media_type: r.get(0)?,
            path: r.get(1)?,
            collection: r.get(2)?,
            page: r.get(3)?,
            alt_text: r.get(4)?,
            caption: r.get(5)?,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}
