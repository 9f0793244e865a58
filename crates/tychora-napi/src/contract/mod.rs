//! The seam's types: `#[napi(object)]` mirrors of the core's contract structs, so the generated
//! `index.d.cts` carries every field, and the conversions from the core's types.
//!
//! Every conversion destructures the core struct without `..`: a field added on the Rust side and
//! not here fails to compile, and `test/types` checks these declarations against the zod schemas,
//! so a field cannot exist on one side only.
//!
//! Conventions (napi-rs maps an `Option` field to an omitted property): a field the JSON contract
//! writes as `null` is an `Either<T, Null>`; one it omits is an `Option<T>`. Field names keep the
//! contract's snake_case (`js_name`), since the same objects go out over HTTP and MCP unchanged.

mod describe;
mod ingest;
mod manage;
mod operations;
// The result's declaration: its conversion compiles (the field-for-field check) but never runs.
#[allow(dead_code)]
mod query;
mod records;
mod relations;
mod symbol;

pub use describe::*;
pub use ingest::*;
pub use manage::*;
pub use operations::*;
pub use query::*;
pub use records::*;
pub use relations::*;
pub use symbol::*;

use napi::bindgen_prelude::{Either, Null};

/// A JSON `null` where the core has `None`.
pub(crate) fn nullable<T>(value: Option<T>) -> Either<T, Null> {
    value.map_or(Either::B(Null), Either::A)
}

/// A count as a JS number (counts never come near 2^53).
#[allow(clippy::cast_possible_wrap)]
pub(crate) fn count(n: usize) -> i64 {
    n as i64
}
