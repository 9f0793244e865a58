//! Descriptions of visual assets by a vision model (`tychora describe`), the core's half: which
//! picture may leave the machine and in what form, and the record of what came back.
//!
//! The provider call itself is TypeScript's (it owns the SDKs); it happens between
//! [`subject`] and [`record`], outside any transaction. A description is derived evidence: it is
//! kept beside the asset, never as a unit, so it can neither be cited as the source's words nor
//! change what a snapshot answers.

use serde::{Deserialize, Serialize};

use crate::artifact::sha256_hex;
use crate::clock::now_ms;
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::parse::image;
use crate::store::descriptions;
pub use crate::store::descriptions::{DescriptionEntry, NewDescription, ReviewStatus};
use crate::store::tx::Tx;

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
    let holders = engine.with_reader(|conn| descriptions::holders(conn, &sha256))?;
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
    if descriptions::holders(&*conn, &new.sha256)?.is_empty()
        || !engine.artifacts().exists(&new.sha256)?
    {
        return Err(Error::NotFound {
            what: "visual asset (erased or purged while it was being described)",
            id: new.sha256.clone(),
        });
    }
    let id = descriptions::insert(&*conn, new, &text, now_ms())?;
    described(&*conn, id)
}

/// The description just written or reviewed, which the writer's lock keeps in place.
fn described(conn: &dyn Tx, id: i64) -> Result<DescriptionEntry> {
    descriptions::entry(conn, id)?.ok_or_else(|| Error::NotFound {
        what: "description",
        id: id.to_string(),
    })
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
    let changed = descriptions::review(
        &*conn,
        id,
        status,
        (status != ReviewStatus::Unreviewed).then(now_ms),
        note.map(clean).as_deref(),
    )?;
    if changed == 0 {
        return Err(Error::NotFound {
            what: "description",
            id: id.to_string(),
        });
    }
    described(&*conn, id)
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
fn resolve(conn: &dyn Tx, selector: &str) -> Result<String> {
    let wanted = selector.trim().to_ascii_lowercase();
    if wanted.len() < 12 || wanted.len() > 64 || !wanted.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(Error::InvalidArgument(
            "an asset is named by its sha256 (or at least its first 12 hex digits), as inspect lists it under assets".into(),
        ));
    }
    let found = descriptions::assets_with_prefix(conn, &wanted)?;
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
