//! What an engine does differently when its canonical rows live in a store other daemons share
//! (PostgreSQL): it holds its jobs on leases it renews, and it builds for itself the derived index
//! generations of snapshots another daemon published (each daemon keeps its own copies until the
//! search indexes move to a shared engine of their own).

use std::fs;
use std::path::PathBuf;
use std::sync::mpsc::{RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use super::{Engine, SnapshotMeta};
use crate::error::{Error, Result};
use crate::store::{self, tx::Tx};

impl Engine {
    /// The lease this process holds jobs on, in milliseconds: `None` on the embedded store, where
    /// the workspace lock makes this process the only worker.
    pub(crate) fn lease_ms(&self) -> Option<i64> {
        self.canonical.postgres_store()?;
        let seconds = self.config.store.as_ref().map_or(30, |s| s.lease_seconds);
        Some(i64::try_from(seconds.clamp(1, 86_400)).unwrap_or(30) * 1000)
    }

    /// Puts a job this process started at once (rebuild, withdraw, erase) on its lease.
    ///
    /// # Errors
    /// Store errors.
    pub(crate) fn lease_started(&self, conn: &dyn Tx, job_id: i64) -> Result<()> {
        match self.lease_ms() {
            Some(lease) => store::jobs::lease(conn, job_id, crate::job::worker(), lease),
            None => Ok(()),
        }
    }

    /// Runs `work` for job `job_id` while a thread renews this worker's lease on it every third of
    /// the lease (on the embedded store, just runs it). A renewal the store refuses (the lease
    /// expired and another worker took the job) stops renewing: this run's end is then refused
    /// by the job's fence, and what it would have published never is.
    pub(crate) fn while_leased<T>(&self, job_id: i64, work: impl FnOnce() -> T) -> T {
        let Some(lease) = self.lease_ms() else {
            return work();
        };
        let every = Duration::from_millis(u64::try_from(lease / 3).unwrap_or(1_000).max(100));
        std::thread::scope(|scope| {
            let (stop, stopped) = channel::<()>();
            scope.spawn(move || {
                while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(every) {
                    let renewed = self.with_reader(|tx| {
                        store::jobs::renew(tx, job_id, crate::job::worker(), lease)
                    });
                    match renewed {
                        Ok(true) => {}
                        Ok(false) => {
                            log::warn!("job {job_id}: its lease was lost to another worker");
                            break;
                        }
                        Err(e) => log::warn!("job {job_id}: renewing its lease failed: {e}"),
                    }
                }
            });
            let out = work();
            drop(stop);
            out
        })
    }

    /// Where this daemon records the sha256 of a vector generation it built for itself from the
    /// records (an HNSW graph built again is not byte for byte the publisher's file).
    fn local_sha_path(&self, generation: &str) -> PathBuf {
        self.dir.join("indexes").join("text-local").join(generation)
    }

    /// The sha256 a vector generation's file here is checked against: the one this daemon
    /// recorded when it built the file itself, else the publisher's.
    pub(crate) fn local_text_sha(&self, generation: &crate::snapshot::TextGeneration) -> String {
        if self.vector_store().local_dir().is_none() {
            // On a cluster every daemon reads the publisher's generation: a sha recorded here for
            // a file of its own (before the service moved its vectors there) no longer applies.
            return generation.sha256.clone();
        }
        fs::read_to_string(self.local_sha_path(&generation.generation))
            .ok()
            .map(|s| s.trim().to_string())
            .filter(|s| s.len() == 64)
            .unwrap_or_else(|| generation.sha256.clone())
    }

    /// The folders a daemon on a shared store keeps for itself, beside the generations (swept
    /// with them).
    pub(crate) fn local_sha_dir(&self) -> PathBuf {
        self.dir.join("indexes").join("text-local")
    }

    /// On a shared store, builds the generations of snapshot `snapshot_id` this daemon lacks
    /// (another daemon published it) from the store: the lexical generation from the members'
    /// rows, the vector generation from the vector records (nothing is embedded). Builds go to
    /// a folder of their own and are renamed into place, so a reader never opens half of one;
    /// concurrent queries wait for one build.
    ///
    /// # Errors
    /// Store, tantivy and I/O errors; `E_CORRUPT` when the built generation does not hold the
    /// snapshot's chunk count or a window has no vector record.
    pub(crate) fn materialize(
        &self,
        conn: &dyn Tx,
        snapshot_id: i64,
        meta: &SnapshotMeta,
    ) -> Result<()> {
        if self.canonical.postgres_store().is_none() {
            return Ok(());
        }
        let _turn = self
            .materializing
            .lock()
            .map_err(|_| Error::Internal("materialization lock poisoned".into()))?;
        let partial = self.dir.join("indexes").join("partial");
        let lexical = self.generation_dir(&meta.generation);
        // On a cluster (`[search]`) every daemon reads the one copy: nothing to build here.
        if self.lexical_store().local_dir().is_some() && !lexical.exists() {
            let started = Instant::now();
            let building = partial.join(&meta.generation);
            let _ = fs::remove_dir_all(&building);
            fs::create_dir_all(&partial).map_err(|e| Error::io(&partial, e))?;
            crate::snapshot::build_lexical_of(conn, snapshot_id, &building, &self.pack.lexical)?;
            fs::create_dir_all(self.generations_dir())
                .map_err(|e| Error::io(self.generations_dir(), e))?;
            fs::rename(&building, &lexical).map_err(|e| Error::io(&lexical, e))?;
            log::info!(
                "built lexical generation {} of snapshot {snapshot_id} from the store in {} ms",
                meta.generation,
                started.elapsed().as_millis()
            );
        }
        if let Some(text) = &meta.text
            && self.vector_store().local_dir().is_some()
        {
            let path = self.text_dir().join(&text.generation);
            let sha = self.local_text_sha(text);
            if crate::vector::VectorIndex::open(&path, &sha).is_err() {
                let started = Instant::now();
                fs::create_dir_all(&partial).map_err(|e| Error::io(&partial, e))?;
                let building = partial.join(&text.generation);
                let built = crate::snapshot::build_text_of(
                    conn,
                    snapshot_id,
                    text,
                    &crate::vector::UsearchGenerations::new(partial.clone()),
                )?
                .sha256;
                let shas = self.local_sha_dir();
                fs::create_dir_all(&shas).map_err(|e| Error::io(&shas, e))?;
                fs::write(self.local_sha_path(&text.generation), &built)
                    .map_err(|e| Error::io(&shas, e))?;
                fs::create_dir_all(self.text_dir()).map_err(|e| Error::io(self.text_dir(), e))?;
                fs::rename(&building, &path).map_err(|e| Error::io(&path, e))?;
                if let Ok(mut cache) = self.vector_indexes.lock() {
                    cache.remove(&text.generation);
                }
                log::info!(
                    "built vector generation {} of snapshot {snapshot_id} from the records in {} ms",
                    text.generation,
                    started.elapsed().as_millis()
                );
            }
        }
        Ok(())
    }
}
