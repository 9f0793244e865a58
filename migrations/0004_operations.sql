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

-- Chunk text stored once: a window that is exactly one unit with the same text keeps NULL here
-- (the table is rebuilt, since SQLite cannot relax NOT NULL in place).
CREATE TABLE chunks_v4 (
  id             INTEGER PRIMARY KEY,
  extraction_id  INTEGER NOT NULL REFERENCES extractions (id),
  ordinal        INTEGER NOT NULL,
  first_unit_id  INTEGER NOT NULL REFERENCES evidence_units (id),
  last_unit_id   INTEGER NOT NULL REFERENCES evidence_units (id),
  -- The evidence owner: windows of one owner consolidate to one vote per channel. owner_chunk_id
  -- names the owner's first window (NULL on that first window itself): COALESCE(owner_chunk_id, id).
  owner_key      TEXT    NOT NULL,
  owner_chunk_id INTEGER REFERENCES chunks_v4 (id),
  byte_start     INTEGER NOT NULL,
  byte_end       INTEGER NOT NULL,
  line_start     INTEGER NOT NULL,
  col_start      INTEGER NOT NULL,
  line_end       INTEGER NOT NULL,
  col_end        INTEGER NOT NULL,
  token_count    INTEGER NOT NULL,
  -- Tokens of the segment as the md/agent formats render it (citation line + heading path + text),
  -- counted once at indexing so the query-time budget needs no tokenizer.
  render_tokens  INTEGER NOT NULL,
  -- Whether the window holds a code block (the safety triple's `executable`).
  has_code       INTEGER NOT NULL CHECK (has_code IN (0, 1)),
  -- The safety detector's verdict on the window's text, computed once at indexing.
  may_contain_instructions INTEGER NOT NULL CHECK (may_contain_instructions IN (0, 1)),
  -- NULL when the window is exactly one unit and has its text (a JSON record, a short section's
  -- paragraph): read COALESCE(c.text, u.text) with u the first unit. Measured on SciFact: 10.6 MB of
  -- chunk text for 8 MB of input was a second copy of the units' text.
  text           TEXT,
  capsule_json   TEXT    NOT NULL CHECK (json_valid(capsule_json)),
  UNIQUE (extraction_id, ordinal)
) STRICT;

INSERT INTO chunks_v4 SELECT c.id, c.extraction_id, c.ordinal, c.first_unit_id, c.last_unit_id, c.owner_key, c.owner_chunk_id,
  c.byte_start, c.byte_end, c.line_start, c.col_start, c.line_end, c.col_end, c.token_count, c.render_tokens, c.has_code,
  c.may_contain_instructions,
  CASE WHEN c.first_unit_id = c.last_unit_id AND c.text = (SELECT u.text FROM evidence_units u WHERE u.id = c.first_unit_id) THEN NULL ELSE c.text END,
  c.capsule_json
FROM chunks c ORDER BY c.id;
DROP TABLE chunks;
ALTER TABLE chunks_v4 RENAME TO chunks;
-- The exact channel maps a unit to its window: the first chunk of the extraction whose last unit
-- is at or after it (covering index, one seek per identifier hit).
CREATE INDEX chunks_by_last_unit ON chunks (extraction_id, last_unit_id, first_unit_id, owner_chunk_id);

-- Retention deletes units, extractions and snapshots; SQLite checks each deleted parent row's
-- foreign keys by looking up the child table, a full scan without an index on the child column
-- (1,000 syncs: 334 ms of purge per sync before these).
CREATE INDEX chunks_by_first_unit ON chunks (first_unit_id);
CREATE INDEX chunks_by_unit_end ON chunks (last_unit_id);
CREATE INDEX identifiers_by_unit ON identifiers (unit_id);
CREATE INDEX snapshot_members_by_extraction ON snapshot_members (extraction_id);
CREATE INDEX query_runs_by_snapshot ON query_runs (snapshot_id);
