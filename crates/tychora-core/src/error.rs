//! One error type for the core, grouped by what the caller can do about it.
//!
//! Each variant maps to a stable [`ErrorCode`]; the binding passes the code to JavaScript as
//! `error.code`, and every surface (CLI exit code, HTTP status, MCP `isError`) reads the same table.

use std::path::PathBuf;

crate::wire::wire_enum! {
    /// Stable error codes shared by every surface. Adding one is an API change. Serialized in its
    /// wire form (`E_NOT_FOUND`), as receipts and reports store and send it.
    pub enum ErrorCode {
        /// Bad input from the caller.
        InvalidArgument = "E_INVALID_ARGUMENT",
        /// No such object.
        NotFound = "E_NOT_FOUND",
        /// Already exists, or a stale snapshot.
        Conflict = "E_CONFLICT",
        /// The workspace is owned by another process.
        Locked = "E_LOCKED",
        /// The workspace needs an explicit `tychora manage migrate`.
        MigrationRequired = "E_MIGRATION_REQUIRED",
        /// A migration or artifact failed its integrity check.
        ChecksumMismatch = "E_CHECKSUM_MISMATCH",
        /// A derived index is damaged; rebuild it.
        Corrupt = "E_CORRUPT",
        /// The input format is not supported.
        UnsupportedFormat = "E_UNSUPPORTED_FORMAT",
        /// A size or budget limit was exceeded.
        LimitExceeded = "E_LIMIT_EXCEEDED",
        /// The call was cancelled.
        Cancelled = "E_CANCELLED",
        /// The handle was closed.
        Closed = "E_CLOSED",
        /// An I/O failure.
        Io = "E_IO",
        /// A bug, including caught panics.
        Internal = "E_INTERNAL",
        /// Missing or wrong bearer token (raised by the HTTP and MCP surfaces).
        Unauthorized = "E_UNAUTHORIZED",
        /// Refused: foreign Host or Origin, or not allowed by the workspace config.
        Forbidden = "E_FORBIDDEN",
        /// An embedding or rerank provider failed (HTTP status, timeout, malformed answer), after retries.
        Provider = "E_PROVIDER",
        /// A job would exceed a configured cap on paid provider use; nothing was sent.
        BudgetExceeded = "E_BUDGET_EXCEEDED",
        /// A store the workspace is configured with (the artifact bucket) cannot be reached or
        /// refuses the call, after its retries; nothing was half written.
        StoreUnavailable = "E_STORE_UNAVAILABLE",
    }
}

/// The core's error. Foreign errors are wrapped at the module edge and carried as a source.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The caller passed something unusable.
    #[error("{0}")]
    InvalidArgument(String),
    /// A named object does not exist.
    #[error("{what} not found: {id}")]
    NotFound {
        /// The kind of object ("snapshot", "workspace", …).
        what: &'static str,
        /// The id or path that was looked up.
        id: String,
    },
    /// The object exists already, or the request conflicts with the current state.
    #[error("{0}")]
    Conflict(String),
    /// Another process holds the workspace lock.
    #[error(
        "workspace {path} is locked by another process (pid {owner}); stop it or talk to it through `tychora serve`"
    )]
    Locked {
        /// The workspace directory.
        path: PathBuf,
        /// The owner's pid as recorded in the lock file, or "unknown".
        owner: String,
    },
    /// The database schema is older than the engine's and needs an explicit migration.
    #[error("workspace {path} is at schema {current} but this engine needs {required}; run `tychora manage migrate {path}`", path = .path.display())]
    MigrationRequired {
        /// The workspace directory.
        path: PathBuf,
        /// The schema version recorded in the workspace.
        current: i64,
        /// The newest schema version this engine knows.
        required: i64,
    },
    /// Recorded and computed checksums differ.
    #[error("checksum mismatch for {what}: recorded {recorded}, computed {computed}")]
    ChecksumMismatch {
        /// What was checked (a migration or an artifact).
        what: String,
        /// The checksum on record.
        recorded: String,
        /// The checksum computed now.
        computed: String,
    },
    /// A derived index or the corpus is damaged.
    #[error("{0}")]
    Corrupt(String),
    /// The input's format is not supported.
    #[error("{0}")]
    UnsupportedFormat(String),
    /// A limit was exceeded.
    #[error("{0}")]
    LimitExceeded(String),
    /// The caller is not allowed to do this (e.g. an agent naming a path outside the roots).
    #[error("{0}")]
    Forbidden(String),
    /// A provider (embeddings, rerank) failed after its retries.
    #[error("{0}")]
    Provider(String),
    /// A job would exceed a cap on paid provider use.
    #[error("{0}")]
    BudgetExceeded(String),
    /// A configured store (the artifact bucket) is unreachable or refused the call.
    #[error("{0}")]
    StoreUnavailable(String),
    /// The work was cancelled.
    #[error("cancelled")]
    Cancelled,
    /// The handle has been closed.
    #[error("{0} is closed")]
    Closed(String),
    /// An I/O error with the path it concerns.
    #[error("I/O error on {path}: {source}", path = .path.display())]
    Io {
        /// The path involved.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// SQLite failed.
    #[error("corpus database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// tantivy failed.
    #[error("lexical index error: {0}")]
    Tantivy(#[from] tantivy::TantivyError),
    /// A bug.
    #[error("internal error: {0}")]
    Internal(String),
}

impl Error {
    /// The stable code of this error.
    #[must_use]
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::InvalidArgument(_) => ErrorCode::InvalidArgument,
            Self::NotFound { .. } => ErrorCode::NotFound,
            Self::Conflict(_) => ErrorCode::Conflict,
            Self::Locked { .. } => ErrorCode::Locked,
            Self::MigrationRequired { .. } => ErrorCode::MigrationRequired,
            Self::ChecksumMismatch { .. } => ErrorCode::ChecksumMismatch,
            Self::Corrupt(_) => ErrorCode::Corrupt,
            Self::UnsupportedFormat(_) => ErrorCode::UnsupportedFormat,
            Self::LimitExceeded(_) => ErrorCode::LimitExceeded,
            Self::Forbidden(_) => ErrorCode::Forbidden,
            Self::Provider(_) => ErrorCode::Provider,
            Self::BudgetExceeded(_) => ErrorCode::BudgetExceeded,
            Self::StoreUnavailable(_) => ErrorCode::StoreUnavailable,
            Self::Cancelled => ErrorCode::Cancelled,
            Self::Closed(_) => ErrorCode::Closed,
            Self::Io { .. } => ErrorCode::Io,
            // The disk failed or filled up under SQLite: an I/O condition, not a bug.
            Self::Sqlite(rusqlite::Error::SqliteFailure(e, _))
                if matches!(
                    e.code,
                    rusqlite::ErrorCode::SystemIoFailure | rusqlite::ErrorCode::DiskFull
                ) =>
            {
                ErrorCode::Io
            }
            Self::Sqlite(_) | Self::Internal(_) => ErrorCode::Internal,
            Self::Tantivy(_) => ErrorCode::Corrupt,
        }
    }

    /// Wraps an I/O error with the path it concerns.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io {
            path: path.into(),
            source,
        }
    }
}

/// The core's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// How much a diagnostic matters: an `error` fails its item, a `warning` skips or degrades it, an
/// `info` only says something (serialized lowercase, as the contracts spell it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// Said for the record.
    Info,
    /// The item was skipped or is answered with less.
    Warning,
    /// The item failed.
    Error,
}

impl Level {
    /// `info`, `warning` or `error`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Info => "info",
            Self::Warning => "warning",
            Self::Error => "error",
        }
    }
}

impl std::fmt::Display for Level {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A per-item problem found during a job. Per-item failures are data, not throws.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize, PartialEq, Eq)]
pub struct Diagnostic {
    /// The file or record concerned.
    pub path: String,
    /// How much it matters.
    pub level: Level,
    /// A stable code from the table.
    pub code: ErrorCode,
    /// What happened, for a person.
    pub message: String,
    /// Where in the file, when known (`line:col`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub locator: Option<String>,
}

impl Diagnostic {
    /// An error-level diagnostic.
    pub fn error(path: impl Into<String>, code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            level: Level::Error,
            code,
            message: message.into(),
            locator: None,
        }
    }

    /// A warning-level diagnostic: the file was still indexed.
    pub fn warning(path: impl Into<String>, code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            level: Level::Warning,
            ..Self::error(path, code, message)
        }
    }

    /// An info-level diagnostic, e.g. a skipped file of an unsupported type.
    pub fn info(path: impl Into<String>, code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            level: Level::Info,
            ..Self::error(path, code, message)
        }
    }

    /// Attaches a `line:col` locator.
    #[must_use]
    pub fn at(mut self, locator: impl Into<String>) -> Self {
        self.locator = Some(locator.into());
        self
    }
}
