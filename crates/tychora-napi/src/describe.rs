//! Descriptions of visual assets: the checks before an upload and the record after it. The
//! provider call in between is TypeScript's.

use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::contract::{DescriptionEntry, DescriptionSubject, NewDescription};
use crate::task::{Blocking, blocking};
use crate::workspace::NativeWorkspace;

#[napi]
impl NativeWorkspace {
    /// A visual asset (sha256, or its first 12+ hex digits) checked for description, with the
    /// bytes to upload.
    #[napi(catch_unwind, ts_return_type = "Promise<DescriptionSubject>")]
    pub fn description_subject(
        &self,
        selector: String,
    ) -> Result<AsyncTask<Blocking<DescriptionSubject>>> {
        let ws = self.inner_ref()?;
        Ok(blocking(None, move || {
            Ok(ws.description_subject(&selector)?.into())
        }))
    }

    /// Stores a provider's description of an asset (review status `unreviewed`).
    #[napi(catch_unwind, ts_return_type = "Promise<DescriptionEntry>")]
    pub fn record_description(
        &self,
        description: NewDescription,
    ) -> Result<AsyncTask<Blocking<DescriptionEntry>>> {
        let ws = self.inner_ref()?;
        Ok(blocking(None, move || {
            Ok(ws.record_description(&description.into())?.into())
        }))
    }

    /// Marks a description `accepted`, `rejected` or `unreviewed`.
    #[napi(catch_unwind, ts_return_type = "Promise<DescriptionEntry>")]
    pub fn review_description(
        &self,
        id: i64,
        status: String,
        note: Option<String>,
    ) -> Result<AsyncTask<Blocking<DescriptionEntry>>> {
        let ws = self.inner_ref()?;
        Ok(blocking(None, move || {
            Ok(ws.review_description(id, &status, note.as_deref())?.into())
        }))
    }
}
