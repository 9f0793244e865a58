-- Tychora canonical corpus, schema 20: retention that holds at any size (issue 32).
--
-- Purge works in bounded batches: the snapshots outside the policy go in one short transaction
-- that records what they released (extractions, relation sets) in `purge_pending`; each later
-- batch checks a few hundred of them, removes what nothing retained uses, and deletes their
-- entries. A purge killed between batches resumes from the table. The indexes let every step find
-- its rows by key instead of scanning (a relation set's rows, a revision's memberships, runs and
-- jobs past their age).
CREATE INDEX relations_by_set ON relations (set_id);
CREATE INDEX snapshot_members_by_revision ON snapshot_members (revision_id);
CREATE INDEX query_runs_by_created ON query_runs (created_at);
CREATE INDEX jobs_by_finished ON jobs (finished_at) WHERE finished_at IS NOT NULL;

CREATE TABLE purge_pending (
  kind TEXT    NOT NULL CHECK (kind IN ('extraction', 'relation_set')),
  id   INTEGER NOT NULL,
  PRIMARY KEY (kind, id)
) STRICT, WITHOUT ROWID;

-- When each periodic maintenance pass last ran (the expiry of original bytes scans revisions, so
-- the maintenance after a job runs it at most daily; `manage purge` always runs it).
CREATE TABLE maintenance_runs (
  task   TEXT    PRIMARY KEY,
  ran_at INTEGER NOT NULL
) STRICT;

-- A job's diagnostics, stored once by their content: a sync that finds what the last one found
-- (10,000 skipped files) points at the same list and writes one row, not one per file. The job's
-- receipt is read back with its list. `job_events` is no longer written.
CREATE TABLE diagnostic_lists (
  sha256 TEXT    PRIMARY KEY CHECK (length(sha256) = 64),
  count  INTEGER NOT NULL,
  json   TEXT    NOT NULL CHECK (json_valid(json) AND json_type(json) = 'array')
) STRICT;
ALTER TABLE jobs ADD COLUMN diagnostics_sha256 TEXT REFERENCES diagnostic_lists (sha256);
