//! The query log: every query is recorded in `query_runs`, off the query's path.
//!
//! A search hands its row to a background thread that batches inserts in one transaction: on the
//! embedded store, on a connection of its own with `synchronous=NORMAL` (in WAL mode: no fsync per
//! commit); on PostgreSQL, on a pool of its own, so a slow or unreachable database delays the
//! log, never a search. The log is an audit trail, not canonical data, so a power loss may drop
//! its last rows; a commit per query would instead put an fsync (milliseconds) on every search,
//! and waiting on the writer would stall searches behind a long ingest transaction.

use std::path::Path;
use std::sync::Mutex;
use std::sync::mpsc::{self, Receiver, Sender};
use std::thread::JoinHandle;

use super::postgres::PgStore;
use super::tx::{Tx, args};
use crate::error::{Error, Result};
use crate::store;

/// One `query_runs` row.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryRun {
    /// The run's id (`run_…`).
    pub id: String,
    /// The snapshot it read.
    pub snapshot_id: Option<i64>,
    /// The request, JSON.
    pub request_json: String,
    /// What it returned, in short (JSON).
    pub summary_json: String,
    /// The agent that asked.
    pub agent_id: Option<String>,
    /// The agent's task.
    pub task_id: Option<String>,
    /// How long it took.
    pub duration_ms: f64,
    /// When (ms since the epoch).
    pub created_at: i64,
}

/// Writes a batch of rows in one transaction.
type Writer = Box<dyn FnMut(&[QueryRun]) -> Result<()> + Send>;

enum Message {
    Run(QueryRun),
    Flush(Sender<()>),
}

/// Handle to the logging thread; dropping it flushes and joins.
pub struct QueryLog {
    sender: Mutex<Option<Sender<Message>>>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl std::fmt::Debug for QueryLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("QueryLog")
    }
}

impl QueryLog {
    /// Starts the logging thread on its own connection to `db`.
    ///
    /// # Errors
    /// SQLite errors opening the connection.
    pub fn start(db: &Path) -> Result<Self> {
        let conn = store::connect(db)?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        Self::spawn(Box::new(move |rows| {
            let tx = conn.unchecked_transaction()?;
            write(&tx, rows)?;
            tx.commit()?;
            Ok(())
        }))
    }

    /// Starts the logging thread on a PostgreSQL store (a pool of its own: a search never waits
    /// for a connection the log holds).
    ///
    /// # Errors
    /// When the thread cannot start.
    pub fn start_on(store: PgStore) -> Result<Self> {
        Self::spawn(Box::new(move |rows| {
            store.transaction(|tx| write(tx, rows))
        }))
    }

    fn spawn(writer: Writer) -> Result<Self> {
        let (sender, receiver) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("tychora-query-log".into())
            .spawn(move || run(writer, &receiver))
            .map_err(|e| Error::Internal(format!("cannot start the query log thread: {e}")))?;
        Ok(Self {
            sender: Mutex::new(Some(sender)),
            thread: Mutex::new(Some(thread)),
        })
    }

    /// Queues a row.
    pub fn record(&self, run: QueryRun) {
        if let Ok(guard) = self.sender.lock()
            && let Some(sender) = guard.as_ref()
        {
            let _ = sender.send(Message::Run(run));
        }
    }

    /// Waits until every queued row is written.
    pub fn flush(&self) {
        let (ack, done) = mpsc::channel();
        let sent = self
            .sender
            .lock()
            .ok()
            .and_then(|g| g.as_ref().map(|s| s.send(Message::Flush(ack)).is_ok()))
            .unwrap_or(false);
        if sent {
            let _ = done.recv();
        }
    }
}

impl Drop for QueryLog {
    fn drop(&mut self) {
        if let Ok(mut guard) = self.sender.lock() {
            guard.take();
        }
        if let Some(thread) = self.thread.lock().ok().and_then(|mut t| t.take()) {
            let _ = thread.join();
        }
    }
}

/// How long the log thread gathers rows before writing them, and the most it gathers. A write per
/// query woke this thread and appended WAL frames for every search, on the same two cores the next
/// search needed; gathered, a burst of queries costs one transaction. A flush writes at once.
const COALESCE: std::time::Duration = std::time::Duration::from_millis(100);
const MAX_BATCH: usize = 512;

fn run(mut writer: Writer, receiver: &Receiver<Message>) {
    while let Ok(first) = receiver.recv() {
        let mut batch = vec![first];
        let deadline = std::time::Instant::now() + COALESCE;
        while batch.len() < MAX_BATCH && !matches!(batch.last(), Some(Message::Flush(_))) {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match receiver.recv_timeout(left) {
                Ok(message) => batch.push(message),
                Err(_) => break, // the deadline passed, or every sender is gone
            }
        }
        let mut acks = Vec::new();
        let rows: Vec<QueryRun> = batch
            .into_iter()
            .filter_map(|m| match m {
                Message::Run(r) => Some(r),
                Message::Flush(ack) => {
                    acks.push(ack);
                    None
                }
            })
            .collect();
        if let Err(e) = if rows.is_empty() {
            Ok(())
        } else {
            writer(&rows)
        } {
            log::warn!("could not record {} query run(s): {e}", rows.len());
        }
        for ack in acks {
            let _ = ack.send(());
        }
    }
}

/// Inserts `rows` in the caller's transaction.
fn write(tx: &dyn Tx, rows: &[QueryRun]) -> Result<()> {
    let mut insert = tx.prepare(
        "INSERT INTO query_runs (id, snapshot_id, request_json, summary_json, agent_id, task_id, duration_ms, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )?;
    for r in rows {
        insert.write(args![
            r.id.as_str(),
            r.snapshot_id,
            r.request_json.as_str(),
            r.summary_json.as_str(),
            r.agent_id.as_deref(),
            r.task_id.as_deref(),
            r.duration_ms,
            r.created_at
        ])?;
    }
    Ok(())
}
