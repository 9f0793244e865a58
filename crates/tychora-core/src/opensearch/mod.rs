//! An OpenSearch cluster as the home of the derived search indexes (`[search]` in
//! workspace.toml): its REST API through `reqwest`, every call with a timeout, a node that does
//! not answer skipped for the next one the URL names, and bulk bodies split when the cluster
//! answers 413. What is stored there is derived: the canonical rows stay in the store, and
//! `manage rebuild` writes any index again from them.

mod lexical;
mod parts;
mod vector;

pub use lexical::OpenSearchGenerations;
pub use vector::OpenSearchVectors;

/// The lexical and vector generations of the workspace whose store has identity `owner`, under
/// `[search]`'s prefix, sharing one client and one claim on the prefix.
///
/// # Errors
/// `E_INVALID_ARGUMENT` for an unusable `[search]` setting.
pub fn generations(
    search: &crate::config::SearchConfig,
    lexical: &crate::config::Lexical,
    owner: &str,
) -> Result<(OpenSearchGenerations, OpenSearchVectors)> {
    let prefix = std::sync::Arc::new(parts::Prefix::open(search, owner)?);
    Ok((
        OpenSearchGenerations::new(std::sync::Arc::clone(&prefix), lexical),
        OpenSearchVectors::new(prefix),
    ))
}

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::Value;

use crate::error::{Error, Result};

/// A connection to a cluster: the nodes the URL names, tried in turn.
#[derive(Debug)]
pub struct OpenSearch {
    nodes: Vec<String>,
    next: AtomicUsize,
    url: String,
    http: reqwest::Client,
    auth: Option<(String, String)>,
    runtime: tokio::runtime::Runtime,
}

/// How often a request is sent again when the cluster is busy or a node is gone.
const ATTEMPTS: usize = 4;

/// The largest bulk body sent in one request (the cluster's default limit is 100 MB; a smaller
/// body keeps a node's memory and a retry's cost low).
const BULK_BYTES: usize = 8 * 1024 * 1024;

impl OpenSearch {
    /// A client for `url` (`opensearch://host:port[,host:port…]` or
    /// `opensearch+https://…`). Nothing is sent until the first call.
    ///
    /// # Errors
    /// `E_INVALID_ARGUMENT` for another scheme, no host, or a URL with credentials.
    pub fn connect(url: &str, timeout: Duration) -> Result<Self> {
        let (scheme, rest) = if let Some(rest) = url.strip_prefix("opensearch://") {
            ("http", rest)
        } else if let Some(rest) = url.strip_prefix("opensearch+https://") {
            ("https", rest)
        } else {
            return Err(Error::InvalidArgument(format!(
                "[search] url must be opensearch://host:port or opensearch+https://host:port, not {}",
                quoted(url)
            )));
        };
        let rest = rest.trim_end_matches('/');
        if rest.contains('@') {
            return Err(Error::InvalidArgument(
                "[search] url names credentials: remove them, and set TYCHORA_OPENSEARCH_USER and TYCHORA_OPENSEARCH_PASSWORD in the daemon's environment".into(),
            ));
        }
        let nodes: Vec<String> = rest
            .split(',')
            .map(str::trim)
            .filter(|h| !h.is_empty())
            .map(|h| format!("{scheme}://{h}"))
            .collect();
        if nodes.is_empty() || rest.contains(['/', '?', '#', ' ']) {
            return Err(Error::InvalidArgument(format!(
                "[search] url {} names no host:port",
                quoted(url)
            )));
        }
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(3))
            .timeout(timeout)
            .build()
            .map_err(|e| Error::Internal(format!("the OpenSearch client: {e}")))?;
        let auth = std::env::var("TYCHORA_OPENSEARCH_USER").ok().map(|user| {
            (
                user,
                std::env::var("TYCHORA_OPENSEARCH_PASSWORD").unwrap_or_default(),
            )
        });
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("tychora-opensearch")
            .enable_all()
            .build()
            .map_err(|e| Error::Internal(format!("the OpenSearch client's runtime: {e}")))?;
        Ok(Self {
            nodes,
            next: AtomicUsize::new(0),
            url: url.to_string(),
            http,
            auth,
            runtime,
        })
    }

    /// The URL as configured (no credentials ever are).
    #[must_use]
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Sends one request and returns the status and the parsed body. A node that cannot be
    /// reached, or answers 429/502/503/504, is left for the next node the URL names, up to
    /// [`ATTEMPTS`] tries with a short backoff: a node lost mid-query costs a retry, not the
    /// query.
    fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<(&'static str, String)>,
        timeout: Option<Duration>,
    ) -> Result<(u16, Value)> {
        let mut last = String::new();
        for attempt in 0..ATTEMPTS {
            if attempt > 0 {
                std::thread::sleep(Duration::from_millis(100 << attempt));
            }
            let node = &self.nodes[self.next.load(Ordering::Relaxed) % self.nodes.len()];
            let mut request = self.http.request(method.clone(), format!("{node}{path}"));
            if let Some((user, password)) = &self.auth {
                request = request.basic_auth(user, Some(password));
            }
            if let Some(timeout) = timeout {
                request = request.timeout(timeout);
            }
            if let Some((kind, text)) = &body {
                request = request.header("content-type", *kind).body(text.clone());
            }
            let sent = self.runtime.block_on(async {
                let response = request.send().await?;
                let status = response.status().as_u16();
                let bytes = response.bytes().await?;
                Ok::<_, reqwest::Error>((status, bytes))
            });
            match sent {
                Ok((status, bytes)) if !matches!(status, 429 | 502 | 503 | 504) => {
                    let value = if bytes.is_empty() {
                        Value::Null
                    } else {
                        serde_json::from_slice(&bytes).unwrap_or_else(|_| {
                            Value::String(String::from_utf8_lossy(&bytes).into_owned())
                        })
                    };
                    return Ok((status, value));
                }
                Ok((status, _)) => last = format!("status {status}"),
                Err(e) => {
                    last = e.to_string();
                    self.next.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
        Err(Error::StoreUnavailable(format!(
            "OpenSearch at {} cannot be reached ({last})",
            self.url
        )))
    }

    /// A JSON request whose non-2xx answer is an error: 400 is `E_INVALID_ARGUMENT` (a query the
    /// engine rejects), 404 `E_NOT_FOUND`, 413 `E_LIMIT_EXCEEDED`, anything else
    /// `E_STORE_UNAVAILABLE`.
    pub(crate) fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<Value> {
        self.call_with(method, path, body, None)
    }

    /// [`Self::call`] with a timeout of its own (a reindex, a force merge).
    pub(crate) fn call_with(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<&Value>,
        timeout: Option<Duration>,
    ) -> Result<Value> {
        let body = body.map(|b| ("application/json", b.to_string()));
        let (status, value) = self.send(method, path, body, timeout)?;
        answer(status, value, path)
    }

    /// Sends NDJSON `lines` (action and document pairs) to `_bulk`, in bodies of at most
    /// [`BULK_BYTES`]; a body the cluster refuses as too large (413) is split in two and each
    /// half sent again. Fails on the first document the cluster refused.
    pub(crate) fn bulk(&self, lines: &[String]) -> Result<()> {
        let mut start = 0;
        while start < lines.len() {
            let mut end = start;
            let mut bytes = 0;
            while end < lines.len()
                && (end == start || bytes + lines[end].len() + lines[end + 1].len() < BULK_BYTES)
            {
                bytes += lines[end].len() + lines[end + 1].len() + 2;
                end += 2;
            }
            self.bulk_part(&lines[start..end])?;
            start = end;
        }
        Ok(())
    }

    fn bulk_part(&self, lines: &[String]) -> Result<()> {
        let mut body = String::with_capacity(lines.iter().map(|l| l.len() + 1).sum());
        for line in lines {
            body.push_str(line);
            body.push('\n');
        }
        let (status, value) = self.send(
            reqwest::Method::POST,
            "/_bulk",
            Some(("application/x-ndjson", body)),
            None,
        )?;
        if status == 413 && lines.len() > 2 {
            let half = (lines.len() / 4) * 2;
            self.bulk_part(&lines[..half])?;
            return self.bulk_part(&lines[half..]);
        }
        let value = answer(status, value, "/_bulk")?;
        if value.get("errors").and_then(Value::as_bool) == Some(true) {
            let first = value
                .get("items")
                .and_then(Value::as_array)
                .and_then(|items| {
                    items.iter().find_map(|item| {
                        item.as_object()
                            .and_then(|o| o.values().next())
                            .and_then(|action| action.get("error"))
                            .cloned()
                    })
                })
                .unwrap_or(Value::Null);
            return Err(Error::StoreUnavailable(format!(
                "OpenSearch refused a document of a bulk write: {}",
                quoted(&first.to_string())
            )));
        }
        Ok(())
    }
}

/// The error a non-2xx answer means.
fn answer(status: u16, value: Value, path: &str) -> Result<Value> {
    if (200..300).contains(&status) {
        return Ok(value);
    }
    let reason = value
        .pointer("/error/root_cause/0/reason")
        .or_else(|| value.pointer("/error/reason"))
        .and_then(Value::as_str)
        .map_or_else(|| value.to_string(), str::to_string);
    let reason = quoted(&reason);
    Err(match status {
        400 => Error::InvalidArgument(format!("OpenSearch rejected the request: {reason}")),
        409 => Error::Conflict(format!("OpenSearch: {reason}")),
        404 => Error::NotFound {
            what: "OpenSearch index or document",
            id: format!("{path}: {reason}"),
        },
        413 => Error::LimitExceeded(format!("OpenSearch refused a body as too large: {reason}")),
        _ => Error::StoreUnavailable(format!("OpenSearch answered {status} on {path}: {reason}")),
    })
}

/// Text from the cluster (or a URL from a config file) as a message carries it: Debug-quoted, so
/// no control character reaches a terminal, and cut to a readable length.
fn quoted(text: &str) -> String {
    let cut: String = text.chars().take(400).collect();
    format!("{cut:?}")
}
