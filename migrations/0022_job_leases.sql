-- Tychora canonical corpus, schema 22: job leases, the job queue's contract shared with the
-- service store (PostgreSQL, migrations/postgres/).
--
-- A worker that takes a job from the queue holds it for a lease, on the database's clock, and
-- renews it while it works; a worker that dies stops renewing, its lease expires, and another
-- worker takes the job again (`attempts` counts the takes, and a take is fenced by it: the first
-- worker's late finish is refused). The embedded engine still runs its own queue under the
-- workspace lock (a job of a dead process reads as `interrupted` when the workspace is next
-- opened); these columns are the queue port's (store/queue.rs).
ALTER TABLE jobs ADD COLUMN worker TEXT;
ALTER TABLE jobs ADD COLUMN lease_until INTEGER;
ALTER TABLE jobs ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0);

-- Claims look for the oldest queued job, or a running one whose lease has expired.
CREATE INDEX jobs_claimable ON jobs (status, id) WHERE status IN ('queued', 'running');
