-- Tychora service store on PostgreSQL, schema 1: the job queue.
--
-- The same rows as the embedded store's `jobs` and `job_steps` (migrations/0001, 0021, 0022), with
-- SQLite's STRICT types and CHECKs written as PostgreSQL types and CHECKs. Times the store sets are
-- milliseconds since the Unix epoch from the database's clock (`tychora_now_ms()`), never a
-- worker's: daemons whose clocks disagree still agree on who holds a lease.
CREATE FUNCTION tychora_now_ms() RETURNS BIGINT LANGUAGE SQL VOLATILE AS
  $$ SELECT (extract(epoch FROM clock_timestamp()) * 1000)::BIGINT $$;

CREATE TABLE jobs (
  id                 BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  kind               TEXT    NOT NULL CHECK (kind IN ('add', 'rebuild', 'withdraw', 'delete-original')),
  status             TEXT    NOT NULL CHECK (status IN ('queued', 'running', 'succeeded', 'partial', 'failed', 'interrupted', 'cancelled')),
  request_json       TEXT    NOT NULL CHECK (request_json::jsonb IS NOT NULL),
  receipt_json       TEXT    CHECK (receipt_json IS NULL OR receipt_json::jsonb IS NOT NULL),
  pid                INTEGER,
  error              TEXT,
  created_at         BIGINT  NOT NULL,
  started_at         BIGINT,
  finished_at        BIGINT,
  diagnostics_sha256 TEXT,
  worker             TEXT,
  lease_until        BIGINT,
  attempts           INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  -- A running job taken from the queue holds a lease; an ended one has an end.
  CHECK (status <> 'running' OR (worker IS NULL) = (lease_until IS NULL)),
  CHECK (status IN ('queued', 'running') OR finished_at IS NOT NULL)
);

CREATE INDEX jobs_claimable ON jobs (status, id) WHERE status IN ('queued', 'running');
CREATE INDEX jobs_by_finished ON jobs (finished_at) WHERE finished_at IS NOT NULL;

CREATE TABLE job_steps (
  id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  job_id      BIGINT NOT NULL REFERENCES jobs (id),
  name        TEXT   NOT NULL,
  status      TEXT   NOT NULL CHECK (status IN ('running', 'done', 'failed')),
  started_at  BIGINT NOT NULL,
  finished_at BIGINT,
  detail_json TEXT   CHECK (detail_json IS NULL OR detail_json::jsonb IS NOT NULL)
);

CREATE INDEX job_steps_by_job ON job_steps (job_id, id);
