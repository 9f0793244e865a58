//! Descriptions of visual assets: the subject handed to the provider call, and what is stored.

use napi::bindgen_prelude::{Buffer, Either, Null};
use napi_derive::napi;
use tychora_core::manage as core;

use super::nullable;

/// A picture checked for upload: permitted, retained, verified, in a form a vision model reads.
#[napi(object)]
pub struct DescriptionSubject {
    pub sha256: String,
    #[napi(js_name = "media_type")]
    pub media_type: String,
    pub path: String,
    pub page: Either<i64, Null>,
    pub collections: Vec<String>,
    #[napi(js_name = "alt_text")]
    pub alt_text: Either<String, Null>,
    pub caption: Either<String, Null>,
    #[napi(js_name = "upload_media_type")]
    pub upload_media_type: String,
    #[napi(js_name = "upload_sha256")]
    pub upload_sha256: String,
    pub upload: Buffer,
    pub provider: String,
    pub model: String,
    #[napi(js_name = "max_tokens")]
    pub max_tokens: u32,
}

impl From<core::DescriptionSubject> for DescriptionSubject {
    fn from(value: core::DescriptionSubject) -> Self {
        let core::DescriptionSubject {
            sha256,
            media_type,
            path,
            page,
            collections,
            alt_text,
            caption,
            upload_media_type,
            upload_sha256,
            upload,
            provider,
            model,
            max_tokens,
        } = value;
        Self {
            sha256,
            media_type,
            path,
            page: nullable(page),
            collections,
            alt_text: nullable(alt_text),
            caption: nullable(caption),
            upload_media_type,
            upload_sha256,
            upload: Buffer::from(upload),
            provider,
            model,
            max_tokens,
        }
    }
}

/// What a vision model said a picture shows: derived evidence, never a quotation of the source.
#[napi(object)]
pub struct DescriptionEntry {
    pub id: i64,
    pub sha256: String,
    #[napi(js_name = "sent_sha256")]
    pub sent_sha256: String,
    #[napi(js_name = "sent_media_type")]
    pub sent_media_type: String,
    pub provider: String,
    pub model: String,
    #[napi(js_name = "prompt_fingerprint")]
    pub prompt_fingerprint: String,
    pub text: String,
    #[napi(js_name = "stop_reason")]
    pub stop_reason: Either<String, Null>,
    #[napi(js_name = "input_tokens")]
    pub input_tokens: i64,
    #[napi(js_name = "output_tokens")]
    pub output_tokens: i64,
    #[napi(js_name = "created_at")]
    pub created_at: i64,
    /// `unreviewed`, `accepted` or `rejected`.
    #[napi(
        js_name = "review_status",
        ts_type = "'unreviewed' | 'accepted' | 'rejected'"
    )]
    pub review_status: String,
    #[napi(js_name = "reviewed_at")]
    pub reviewed_at: Either<i64, Null>,
    #[napi(js_name = "review_note")]
    pub review_note: Either<String, Null>,
}

impl From<core::DescriptionEntry> for DescriptionEntry {
    fn from(value: core::DescriptionEntry) -> Self {
        let core::DescriptionEntry {
            id,
            sha256,
            sent_sha256,
            sent_media_type,
            provider,
            model,
            prompt_fingerprint,
            text,
            stop_reason,
            input_tokens,
            output_tokens,
            created_at,
            review_status,
            reviewed_at,
            review_note,
        } = value;
        Self {
            id,
            sha256,
            sent_sha256,
            sent_media_type,
            provider,
            model,
            prompt_fingerprint,
            text,
            stop_reason: nullable(stop_reason),
            input_tokens,
            output_tokens,
            created_at,
            review_status: review_status.as_str().into(),
            reviewed_at: nullable(reviewed_at),
            review_note: nullable(review_note),
        }
    }
}

/// A provider's answer to record.
#[napi(object)]
pub struct NewDescription {
    pub sha256: String,
    #[napi(js_name = "sent_sha256")]
    pub sent_sha256: String,
    #[napi(js_name = "sent_media_type")]
    pub sent_media_type: String,
    pub provider: String,
    pub model: String,
    #[napi(js_name = "prompt_fingerprint")]
    pub prompt_fingerprint: String,
    pub text: String,
    #[napi(js_name = "stop_reason")]
    pub stop_reason: Option<String>,
    #[napi(js_name = "input_tokens")]
    pub input_tokens: i64,
    #[napi(js_name = "output_tokens")]
    pub output_tokens: i64,
}

impl From<NewDescription> for core::NewDescription {
    fn from(value: NewDescription) -> Self {
        let NewDescription {
            sha256,
            sent_sha256,
            sent_media_type,
            provider,
            model,
            prompt_fingerprint,
            text,
            stop_reason,
            input_tokens,
            output_tokens,
        } = value;
        Self {
            sha256,
            sent_sha256,
            sent_media_type,
            provider,
            model,
            prompt_fingerprint,
            text,
            stop_reason,
            input_tokens,
            output_tokens,
        }
    }
}
