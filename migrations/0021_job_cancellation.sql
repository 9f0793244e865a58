-- Tychora canonical corpus, schema 21: the owner cancels a queued job.
--
-- A cancelled job never ran: `finished_at` says when it was cancelled and `error` why
-- ("cancelled by the owner: <reason>"). SQLite cannot change a CHECK in place, so `jobs` is
-- rebuilt with the same columns, the new status and its index. Its children (job_steps,
-- job_events, snapshots, tombstones, source_withdrawals) name it as `jobs`, so the new table takes
-- that name from the start: the rows move aside, the old table goes, the new one is created and
-- the rows come back under the same ids. Migrations run with foreign keys on and inside a
-- transaction (where they cannot be turned off): deferred to the commit, the children the drop
-- left without a parent find it again when the rows come back, and any that did not would fail
-- the commit.
PRAGMA defer_foreign_keys = ON;

CREATE TEMP TABLE jobs_v20 AS SELECT * FROM jobs;
DROP TABLE jobs;

CREATE TABLE jobs (
  id                 INTEGER PRIMARY KEY,
  kind               TEXT    NOT NULL,
  status             TEXT    NOT NULL CHECK (status IN ('queued', 'running', 'succeeded', 'partial', 'failed', 'interrupted', 'cancelled')),
  request_json       TEXT    NOT NULL CHECK (json_valid(request_json)),
  receipt_json       TEXT    CHECK (receipt_json IS NULL OR json_valid(receipt_json)),
  pid                INTEGER,
  error              TEXT,
  created_at         INTEGER NOT NULL,
  started_at         INTEGER,
  finished_at        INTEGER,
  diagnostics_sha256 TEXT    REFERENCES diagnostic_lists (sha256)
) STRICT;

INSERT INTO jobs (id, kind, status, request_json, receipt_json, pid, error, created_at, started_at, finished_at, diagnostics_sha256)
SELECT id, kind, status, request_json, receipt_json, pid, error, created_at, started_at, finished_at, diagnostics_sha256
  FROM jobs_v20 ORDER BY id;
DROP TABLE jobs_v20;

-- As 0020 made it: retention finds finished jobs past their age by this index.
CREATE INDEX jobs_by_finished ON jobs (finished_at) WHERE finished_at IS NOT NULL;
