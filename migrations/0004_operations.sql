-- Tychora canonical corpus, schema 4: withdrawal and erasure of originals (issue 11).

-- A withdrawn source keeps its history (revisions, extractions, the snapshots that pinned it) but
-- leaves every new snapshot, and a later capture of the same path is skipped with a diagnostic.
CREATE TABLE source_withdrawals (
  source_id    INTEGER PRIMARY KEY REFERENCES sources (id),
  job_id       INTEGER REFERENCES jobs (id),
  reason       TEXT    NOT NULL,
  withdrawn_at INTEGER NOT NULL
) STRICT;

-- Original bytes erased: on request (`erasure`, e.g. a legal request: identical bytes are never
-- captured again) or by the retention policy (`retention`: captured again if they come back).
-- What, when and why. The artifacts row stays, since revisions refer to it; its file is gone, and
-- `verify` reads the tombstone instead of reporting a missing artifact.
CREATE TABLE tombstones (
  id          INTEGER PRIMARY KEY,
  kind        TEXT    NOT NULL CHECK (kind IN ('erasure', 'retention')),
  sha256      TEXT    NOT NULL REFERENCES artifacts (sha256),
  size        INTEGER NOT NULL,
  source_id   INTEGER NOT NULL REFERENCES sources (id),
  revision_id INTEGER NOT NULL REFERENCES revisions (id),
  job_id      INTEGER REFERENCES jobs (id),
  reason      TEXT    NOT NULL,
  deleted_at  INTEGER NOT NULL
) STRICT;
CREATE INDEX tombstones_by_sha ON tombstones (sha256);
