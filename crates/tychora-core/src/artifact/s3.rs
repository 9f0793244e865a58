//! The S3 adapter: artifacts as objects `PREFIX/sha256/ab/<64 hex>` in a bucket of any
//! S3-compatible store (AWS S3, MinIO, SeaweedFS, Ceph RGW…), through the `object_store` crate.
//!
//! Writes are create-only (`If-None-Match: *`): an object is never replaced, so two daemons
//! storing the same bytes race harmlessly and a damaged object stays damaged (verify reports it)
//! rather than being papered over. Reads are verified by the store (sha256 of the bytes).
//! Credentials come only from the environment (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`,
//! `AWS_SESSION_TOKEN`, or the machine's instance role), never from workspace.toml.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use futures_util::TryStreamExt as _;
use object_store::aws::AmazonS3Builder;
use object_store::path::Path as ObjectPath;
use object_store::{
    BackoffConfig, ClientOptions, ObjectStore, PutMode, PutOptions, PutPayload, RetryConfig,
};

use super::ArtifactBackend;
use crate::error::{Error, Result};

/// Where a bucket lives and how to reach it (from `[artifacts]` in workspace.toml).
#[derive(Debug, Clone, Default)]
pub struct S3Location {
    /// `s3://bucket` or `s3://bucket/prefix`.
    pub url: String,
    /// The service's endpoint (`http://127.0.0.1:8333`); `None`: AWS, or `AWS_ENDPOINT_URL`.
    pub endpoint: Option<String>,
    /// The bucket's region; `None`: `AWS_REGION`, else `us-east-1`.
    pub region: Option<String>,
    /// Whether a plain `http://` endpoint is allowed (a loopback or private store).
    pub allow_http: bool,
}

/// A bucket (and key prefix) holding a workspace's artifacts.
#[derive(Debug)]
pub struct S3Artifacts {
    store: Arc<dyn ObjectStore>,
    prefix: ObjectPath,
    url: String,
    runtime: tokio::runtime::Runtime,
}

impl S3Artifacts {
    /// Opens the bucket `location` names (nothing is sent until the first call).
    ///
    /// # Errors
    /// `E_INVALID_ARGUMENT` for a URL that is not `s3://bucket[/prefix]` or an unusable setting.
    pub fn open(location: &S3Location) -> Result<Self> {
        let rest = location.url.strip_prefix("s3://").ok_or_else(|| {
            Error::InvalidArgument(format!(
                "[artifacts] url must be s3://bucket[/prefix], not {:?}",
                location.url
            ))
        })?;
        let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        if bucket.is_empty() || bucket.contains(['@', ':', '?', '#']) {
            return Err(Error::InvalidArgument(format!(
                "[artifacts] url {:?} names no bucket (s3://bucket[/prefix]; credentials never go in the URL)",
                location.url
            )));
        }
        let prefix = ObjectPath::parse(prefix.trim_matches('/')).map_err(|e| {
            Error::InvalidArgument(format!("[artifacts] url {:?}: {e}", location.url))
        })?;
        let mut builder = AmazonS3Builder::from_env()
            .with_bucket_name(bucket)
            .with_allow_http(location.allow_http)
            .with_client_options(
                ClientOptions::new()
                    .with_allow_http(location.allow_http)
                    .with_connect_timeout(Duration::from_secs(5))
                    .with_timeout(Duration::from_secs(60)),
            )
            // A store that is down answers within seconds with E_STORE_UNAVAILABLE, not minutes.
            .with_retry(RetryConfig {
                backoff: BackoffConfig::default(),
                max_retries: 3,
                retry_timeout: Duration::from_secs(20),
            });
        if let Some(endpoint) = &location.endpoint {
            builder = builder.with_endpoint(endpoint);
        }
        let region = location
            .region
            .clone()
            .or_else(|| std::env::var("AWS_REGION").ok())
            .or_else(|| std::env::var("AWS_DEFAULT_REGION").ok())
            .unwrap_or_else(|| "us-east-1".into());
        let store = builder
            .with_region(region)
            .build()
            .map_err(|e| Error::InvalidArgument(format!("[artifacts] {}: {e}", location.url)))?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("tychora-s3")
            .enable_all()
            .build()
            .map_err(|e| Error::Internal(format!("the S3 client's runtime: {e}")))?;
        Ok(Self {
            store: Arc::new(store),
            prefix,
            url: format!(
                "s3://{bucket}/{}",
                rest.split_once('/').map_or("", |(_, p)| p)
            ),
            runtime,
        })
    }

    fn key(&self, sha256: &str) -> ObjectPath {
        self.prefix
            .child("sha256")
            .child(&sha256[..2])
            .child(sha256)
    }

    /// A failed call as the caller sees it: absent is `E_NOT_FOUND`, anything else (refused,
    /// unreachable, timed out after the retries) `E_STORE_UNAVAILABLE` with the bucket named.
    fn failure(&self, sha256: &str, error: object_store::Error) -> Error {
        match error {
            // A 404 for the bucket itself (S3's `NoSuchBucket`) is the store's fault, not the object's.
            object_store::Error::NotFound { .. } if one_line(&error).contains("NoSuchBucket") => {
                Error::StoreUnavailable(format!(
                    "artifact store {}: the bucket does not exist",
                    self.url
                ))
            }
            object_store::Error::NotFound { .. } => Error::NotFound {
                what: "artifact",
                id: sha256.to_string(),
            },
            other => Error::StoreUnavailable(format!(
                "artifact store {}: {}",
                self.url,
                one_line(&other)
            )),
        }
    }
}

/// An error and its causes on one line (the client's messages nest).
fn one_line(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let more = cause.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        source = cause.source();
    }
    text
}

impl S3Artifacts {
    /// One create-only put (see [`ArtifactBackend::put`]).
    async fn put_async(&self, sha256: &str, bytes: &[u8]) -> Result<()> {
        let options = PutOptions {
            mode: PutMode::Create,
            ..PutOptions::default()
        };
        let key = self.key(sha256);
        let put = self
            .store
            .put_opts(&key, PutPayload::from(bytes.to_vec()), options);
        match put.await {
            // Stored already (by this or another daemon): content addressing makes it the same bytes.
            Ok(_)
            | Err(
                object_store::Error::AlreadyExists { .. }
                | object_store::Error::Precondition { .. },
            ) => Ok(()),
            // A put never looks for the object: a 404 can only be the bucket's.
            Err(object_store::Error::NotFound { .. }) => Err(Error::StoreUnavailable(format!(
                "artifact store {}: the bucket does not exist",
                self.url
            ))),
            Err(e) => Err(self.failure(sha256, e)),
        }
    }
}

impl ArtifactBackend for S3Artifacts {
    fn put(&self, sha256: &str, bytes: &[u8]) -> Result<()> {
        self.runtime.block_on(self.put_async(sha256, bytes))
    }

    fn put_many(&self, items: &[(&str, &[u8])]) -> Result<()> {
        use futures_util::StreamExt as _;
        // Each put as `put`, `concurrency` at a time on the adapter's runtime; the first refusal
        // in the order given is the error.
        let results: Vec<Result<()>> = self.runtime.block_on(
            futures_util::stream::iter(items)
                .map(|(sha256, bytes)| self.put_async(sha256, bytes))
                .buffered(self.concurrency())
                .collect(),
        );
        results.into_iter().collect()
    }

    fn remote(&self) -> bool {
        true
    }

    fn read(&self, sha256: &str) -> Result<Vec<u8>> {
        let key = self.key(sha256);
        self.runtime
            .block_on(async {
                let got = self.store.get(&key).await?;
                got.bytes().await
            })
            .map(|b| b.to_vec())
            .map_err(|e| self.failure(sha256, e))
    }

    fn exists(&self, sha256: &str) -> Result<bool> {
        match self.runtime.block_on(self.store.head(&self.key(sha256))) {
            Ok(_) => Ok(true),
            Err(object_store::Error::NotFound { .. }) => Ok(false),
            Err(e) => Err(self.failure(sha256, e)),
        }
    }

    fn delete(&self, sha256: &str) -> Result<bool> {
        // S3's DELETE succeeds whether or not the object was there: ask first.
        if !self.exists(sha256)? {
            return Ok(false);
        }
        self.runtime
            .block_on(self.store.delete(&self.key(sha256)))
            .map_err(|e| self.failure(sha256, e))?;
        Ok(true)
    }

    fn delete_many(&self, sha256s: &[&str]) -> Vec<Result<bool>> {
        use futures_util::StreamExt as _;
        self.runtime.block_on(async {
            // Which are there: S3's DELETE succeeds either way. Asked `concurrency` at a time.
            let present: Vec<Result<bool>> = futures_util::stream::iter(sha256s)
                .map(|sha| async move {
                    match self.store.head(&self.key(sha)).await {
                        Ok(_) => Ok(true),
                        Err(object_store::Error::NotFound { .. }) => Ok(false),
                        Err(e) => Err(self.failure(sha, e)),
                    }
                })
                .buffered(self.concurrency())
                .collect()
                .await;
            let doomed: Vec<ObjectPath> = sha256s
                .iter()
                .zip(&present)
                .filter(|(_, p)| matches!(p, Ok(true)))
                .map(|(sha, _)| self.key(sha))
                .collect();
            // `delete_stream` sends them in bulk requests (up to 1,000 keys each on S3).
            let keys = futures_util::stream::iter(doomed.into_iter().map(Ok)).boxed();
            let refused: Vec<object_store::Error> = self
                .store
                .delete_stream(keys)
                .filter_map(|answer| async move { answer.err() })
                .collect()
                .await;
            let mut out = Vec::with_capacity(sha256s.len());
            for (sha, present) in sha256s.iter().zip(present) {
                out.push(match present {
                    // A bulk answer names a refused key only inside its message: when any was
                    // refused, whether each object is gone is asked again, one by one.
                    Ok(true) if !refused.is_empty() => {
                        match self.store.head(&self.key(sha)).await {
                            Err(object_store::Error::NotFound { .. }) => Ok(true),
                            Ok(_) => Err(Error::StoreUnavailable(format!(
                                "artifact store {}: {sha} was not deleted: {}",
                                self.url,
                                one_line(&refused[0])
                            ))),
                            Err(e) => Err(self.failure(sha, e)),
                        }
                    }
                    other => other,
                });
            }
            out
        })
    }

    fn list(&self) -> Result<Vec<(String, u64)>> {
        let root = self.prefix.child("sha256");
        let listed: Vec<object_store::ObjectMeta> = self
            .runtime
            .block_on(self.store.list(Some(&root)).try_collect())
            .map_err(|e| {
                Error::StoreUnavailable(format!(
                    "artifact store {}: listing: {}",
                    self.url,
                    one_line(&e)
                ))
            })?;
        Ok(listed
            .into_iter()
            .filter_map(|m| {
                let name = m.location.filename()?.to_string();
                (name.len() == 64).then_some((name, m.size))
            })
            .collect())
    }

    fn concurrency(&self) -> usize {
        16
    }

    fn local_path(&self, _sha256: &str) -> Option<PathBuf> {
        None
    }

    fn location(&self) -> String {
        self.url.clone()
    }
}
