//! How far evidence can be trusted (DESIGN §8, §10): a property of the collection it lives in,
//! fixed when the collection is created, and a stamp that says when approved content became what
//! it is.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// The trust a collection's evidence carries.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Trust {
    /// Knowledge a person accepted; written only by applying the project's knowledge migrations.
    Approved,
    /// A proposal a person rejected, kept so agents stop proposing it.
    RejectedApproach,
    /// Bytes captured from a configured root.
    #[default]
    CapturedSource,
}

impl Trust {
    /// The stored name.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Approved => "approved",
            Self::RejectedApproach => "rejected_approach",
            Self::CapturedSource => "captured_source",
        }
    }

    /// The lane curated evidence is grouped in, apart from the captured sources' kind lanes
    /// (`None` for a captured source: its kind's lane).
    #[must_use]
    pub fn lane(self) -> Option<&'static str> {
        match self {
            Self::Approved => Some("approved_knowledge"),
            Self::RejectedApproach => Some("rejected_approaches"),
            Self::CapturedSource => None,
        }
    }

    /// Parses a stored name.
    ///
    /// # Errors
    /// `E_INVALID_ARGUMENT` for anything else.
    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "approved" => Ok(Self::Approved),
            "rejected_approach" => Ok(Self::RejectedApproach),
            "captured_source" => Ok(Self::CapturedSource),
            other => Err(Error::InvalidArgument(format!(
                "trust {other:?}: expected approved, rejected_approach or captured_source"
            ))),
        }
    }
}

/// What makes a capture part of curated knowledge: the trust of the collection it writes, the
/// time its content became what it is (a migration's acceptance) and the change that made it so.
/// Only the owner's `migrate apply` sends one; the stamp replaces the root's Git provenance, so
/// rebuilding the state on another commit yields the same revisions.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stamp {
    /// The trust of the target collection.
    pub trust: Trust,
    /// When the content became what it is, in ms since the epoch.
    pub as_of: i64,
    /// The change that made it so (a knowledge migration id).
    pub origin: String,
}

/// How current a piece of evidence is: when its content became what it is, and how that is known.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Freshness {
    /// ms since the epoch.
    pub as_of: i64,
    /// `reviewed` (a person's decision: the migration's acceptance) or `captured` (the capture
    /// of its bytes).
    pub basis: &'static str,
}

impl Freshness {
    /// From a revision's stamp time, if it has one, else its capture time.
    #[must_use]
    pub fn of(stamped: Option<i64>, captured_at: i64) -> Self {
        match stamped {
            Some(as_of) => Self {
                as_of,
                basis: "reviewed",
            },
            None => Self {
                as_of: captured_at,
                basis: "captured",
            },
        }
    }
}
