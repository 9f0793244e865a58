//! `tychora serve --store … --artifacts …`: a daemon's folder attached to the service several
//! daemons share (its canonical rows in PostgreSQL, its artifacts in a bucket). The folder keeps
//! what is the daemon's own: its copies of the derived indexes, its tokens, its lock.

use std::path::Path;

use crate::config::Config;
use crate::error::{Error, Result};
use crate::store;

/// Where a daemon's service lives.
#[derive(Debug, Clone, Default)]
pub struct ServiceSettings {
    /// The PostgreSQL database (`[store] url`), never with a password.
    pub store: Option<String>,
    /// The bucket (`[artifacts] url`, `s3://bucket[/prefix]`).
    pub artifacts: Option<String>,
    /// The bucket's endpoint when it is not AWS (`[artifacts] endpoint`); plain HTTP is allowed
    /// for an `http://` endpoint.
    pub endpoint: Option<String>,
    /// The OpenSearch cluster the lexical generations live on (`[search] url`,
    /// `opensearch://host:port[,host:port…]`), never with credentials.
    pub search: Option<String>,
}

/// Writes `settings` into the workspace.toml of the workspace in `dir` unless it already says the
/// same; returns whether it wrote. A folder that names another store or bucket, or whose embedded
/// corpus already holds a snapshot (its evidence would vanish behind the service's), is refused:
/// each daemon gets a folder of its own.
///
/// # Errors
/// `E_INVALID_ARGUMENT` for a password in the store's URL, a conflicting setting or a folder with
/// embedded evidence; `E_NOT_FOUND` without a workspace; I/O errors.
pub fn attach(dir: &Path, settings: &ServiceSettings) -> Result<bool> {
    let dir = crate::engine::resolve(dir)?;
    let path = dir.join("workspace.toml");
    let config = Config::load(&path)?;
    if let Some(url) = &settings.store
        && store::postgres::PgStore::names_a_password(url)
    {
        return Err(Error::InvalidArgument(
            "--store names a password: remove it, and set PGPASSWORD (or a ~/.pgpass entry) in the daemon's environment".into(),
        ));
    }
    let mut text = String::new();
    match (&settings.store, &config.store) {
        (Some(url), Some(held)) if held.url != *url => {
            return Err(Error::InvalidArgument(format!(
                "{} names another store in [store]: give this daemon a folder of its own",
                path.display()
            )));
        }
        (Some(url), None) => {
            if embedded_evidence(&dir)? {
                return Err(Error::InvalidArgument(format!(
                    "{} holds evidence of its own (a published snapshot in corpus.sqlite3): a daemon of a shared service starts from an empty folder",
                    dir.display()
                )));
            }
            text.push_str(&format!("\n[store]\nurl = {}\n", quoted(url)));
        }
        _ => {}
    }
    match (&settings.artifacts, &config.artifacts) {
        (Some(url), Some(held)) if held.url != *url || held.endpoint != settings.endpoint => {
            return Err(Error::InvalidArgument(format!(
                "{} names another bucket in [artifacts]: give this daemon a folder of its own",
                path.display()
            )));
        }
        (Some(url), None) => {
            text.push_str(&format!("\n[artifacts]\nurl = {}\n", quoted(url)));
            if let Some(endpoint) = &settings.endpoint {
                text.push_str(&format!("endpoint = {}\n", quoted(endpoint)));
                if endpoint.starts_with("http://") {
                    text.push_str("allow_http = true\n");
                }
            }
        }
        (None, _) if settings.endpoint.is_some() => {
            return Err(Error::InvalidArgument(
                "--artifacts-endpoint applies only with --artifacts".into(),
            ));
        }
        _ => {}
    }
    match (&settings.search, &config.search) {
        (Some(url), Some(held)) if held.url != *url => {
            return Err(Error::InvalidArgument(format!(
                "{} names another cluster in [search]: give this daemon a folder of its own",
                path.display()
            )));
        }
        (Some(url), None) => {
            if url.contains('@') {
                return Err(Error::InvalidArgument(
                    "--search names credentials: remove them, and set TYCHORA_OPENSEARCH_USER and TYCHORA_OPENSEARCH_PASSWORD in the daemon's environment".into(),
                ));
            }
            if settings.store.is_none() && config.store.is_none() && embedded_evidence(&dir)? {
                return Err(Error::InvalidArgument(format!(
                    "{} holds evidence indexed in its own folder: attach the cluster to an empty folder (or set [search] and run `tychora manage rebuild`)",
                    dir.display()
                )));
            }
            text.push_str(&format!("\n[search]\nurl = {}\n", quoted(url)));
        }
        _ => {}
    }
    if text.is_empty() {
        return Ok(false);
    }
    let before = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, e))?;
    std::fs::write(&path, format!("{before}{text}")).map_err(|e| Error::io(&path, e))?;
    // What was written must read back; otherwise the file is left as it was.
    if let Err(e) = Config::load(&path) {
        std::fs::write(&path, before).map_err(|e| Error::io(&path, e))?;
        return Err(e);
    }
    Ok(true)
}

/// A TOML basic string.
fn quoted(value: &str) -> String {
    toml::Value::String(value.to_string()).to_string()
}

/// Whether the folder's embedded corpus has published a snapshot.
fn embedded_evidence(dir: &Path) -> Result<bool> {
    let db = dir.join("corpus.sqlite3");
    if !db.exists() {
        return Ok(false);
    }
    let conn = store::connect(&db)?;
    Ok(store::snapshots::current(&conn)?.is_some())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Workspace;

    fn settings(store: &str) -> ServiceSettings {
        ServiceSettings {
            store: Some(store.into()),
            artifacts: Some("s3://bucket/team".into()),
            endpoint: Some("http://127.0.0.1:8333".into()),
            search: Some("opensearch://10.0.0.5:9200,10.0.0.6:9200".into()),
        }
    }

    #[test]
    fn attaching_writes_the_sections_once_and_refuses_what_would_mislead() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("svc");
        Workspace::init(&dir).unwrap();
        let url = "host=/run/pg port=5432 user=tychora dbname=evidence";
        assert!(attach(&dir, &settings(url)).unwrap());
        let config = Config::load(&dir.join("workspace.toml")).unwrap();
        assert_eq!(config.store.as_ref().unwrap().url, url);
        let bucket = config.artifacts.as_ref().unwrap();
        assert_eq!(bucket.url, "s3://bucket/team");
        assert!(bucket.allow_http, "an http:// endpoint allows plain HTTP");
        assert_eq!(
            config.search.as_ref().unwrap().url,
            "opensearch://10.0.0.5:9200,10.0.0.6:9200"
        );
        // The same flags again change nothing; another store or bucket is refused.
        assert!(!attach(&dir, &settings(url)).unwrap());
        let other = attach(&dir, &settings("host=/run/pg dbname=other")).unwrap_err();
        assert_eq!(other.code(), crate::ErrorCode::InvalidArgument);
        let before = std::fs::read_to_string(dir.join("workspace.toml")).unwrap();
        let secret = attach(&dir, &settings("postgres://u:hunter2@db/evidence")).unwrap_err();
        assert!(!secret.to_string().contains("hunter2"), "{secret}");
        assert_eq!(
            std::fs::read_to_string(dir.join("workspace.toml")).unwrap(),
            before,
            "a refused attach leaves the file as it was"
        );
        // An endpoint without a bucket means nothing.
        let lone = ServiceSettings {
            endpoint: Some("http://x".into()),
            ..ServiceSettings::default()
        };
        let fresh = tmp.path().join("fresh");
        Workspace::init(&fresh).unwrap();
        assert!(attach(&fresh, &lone).is_err());
    }

    #[test]
    fn a_folder_with_its_own_evidence_is_not_attached() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("ws");
        let docs = tmp.path().join("docs");
        std::fs::create_dir_all(&docs).unwrap();
        std::fs::write(docs.join("a.md"), "# A\n\nSome text.\n").unwrap();
        Workspace::init(&dir).unwrap();
        {
            let ws = Workspace::open(&dir).unwrap();
            ws.add(
                &crate::ingest::AddRequest {
                    paths: vec![docs.display().to_string()],
                    ..Default::default()
                },
                crate::ingest::Requester::Owner,
                &|_| {},
            )
            .unwrap();
        }
        let refused = attach(&dir, &settings("host=/run/pg dbname=evidence")).unwrap_err();
        assert_eq!(refused.code(), crate::ErrorCode::InvalidArgument);
        assert!(
            refused.to_string().contains("evidence of its own"),
            "{refused}"
        );
        // Nor to a cluster alone: its generations are in the folder, not on the cluster.
        let cluster = ServiceSettings {
            search: Some("opensearch://127.0.0.1:9200".into()),
            ..ServiceSettings::default()
        };
        let refused = attach(&dir, &cluster).unwrap_err();
        assert!(refused.to_string().contains("manage rebuild"), "{refused}");
        // Credentials never go into workspace.toml.
        let fresh = tmp.path().join("fresh");
        Workspace::init(&fresh).unwrap();
        let secret = ServiceSettings {
            search: Some("opensearch://admin:hunter2@127.0.0.1:9200".into()),
            ..ServiceSettings::default()
        };
        let refused = attach(&fresh, &secret).unwrap_err();
        assert!(!refused.to_string().contains("hunter2"), "{refused}");
    }
}
