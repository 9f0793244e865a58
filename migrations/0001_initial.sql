-- Tychora canonical corpus, schema 1.
-- Every table is STRICT; JSON columns are checked with json_valid; timestamps are Unix milliseconds.
-- The canonical rows are the record of truth. Index generations under indexes/ are derived from them.

CREATE TABLE workspaces (
  id                  INTEGER PRIMARY KEY,
  name                TEXT    NOT NULL,
  created_at          INTEGER NOT NULL,
  engine_version      TEXT    NOT NULL,
  -- The published snapshot that readers see by default. Switched in one transaction at publication.
  current_snapshot_id INTEGER REFERENCES snapshots (id)
) STRICT;

CREATE TABLE roots (
  id         INTEGER PRIMARY KEY,
  path       TEXT    NOT NULL UNIQUE,
  added_at   INTEGER NOT NULL
) STRICT;

CREATE TABLE collections (
  id           INTEGER PRIMARY KEY,
  workspace_id INTEGER NOT NULL REFERENCES workspaces (id),
  name         TEXT    NOT NULL UNIQUE,
  created_at   INTEGER NOT NULL
) STRICT;

CREATE TABLE kinds (
  name        TEXT PRIMARY KEY,
  parser      TEXT NOT NULL,
  media_type  TEXT NOT NULL,
  description TEXT NOT NULL
) STRICT;

INSERT INTO kinds (name, parser, media_type, description) VALUES
  ('markdown', 'markdown', 'text/markdown', 'Markdown document: heading sections, paragraphs, list items, code blocks, table rows'),
  ('text',     'text',     'text/plain',    'Plain text: paragraphs separated by blank lines'),
  ('json',     'json',     'application/json', 'JSON document: one record per top-level array element or object member'),
  ('jsonl',    'jsonl',    'application/jsonl', 'JSON Lines: one record per line'),
  ('code_file', 'tree-sitter', 'text/x-source', 'Source code (Python, JavaScript/JSX, TypeScript/TSX): module, class, function and method units via tree-sitter');

CREATE TABLE artifacts (
  sha256     TEXT    PRIMARY KEY CHECK (length(sha256) = 64),
  size       INTEGER NOT NULL CHECK (size >= 0),
  media_type TEXT    NOT NULL,
  created_at INTEGER NOT NULL
) STRICT;

CREATE TABLE sources (
  id            INTEGER PRIMARY KEY,
  collection_id INTEGER NOT NULL REFERENCES collections (id),
  kind          TEXT    NOT NULL REFERENCES kinds (name),
  root_id       INTEGER NOT NULL REFERENCES roots (id),
  -- Path relative to its root, with '/' separators.
  rel_path      TEXT    NOT NULL,
  uri           TEXT    NOT NULL,
  status        TEXT    NOT NULL CHECK (status IN ('active', 'removed')),
  created_at    INTEGER NOT NULL,
  updated_at    INTEGER NOT NULL,
  UNIQUE (collection_id, uri)
) STRICT;

CREATE TABLE revisions (
  id            INTEGER PRIMARY KEY,
  source_id     INTEGER NOT NULL REFERENCES sources (id),
  seq           INTEGER NOT NULL CHECK (seq >= 1),
  sha256        TEXT    NOT NULL REFERENCES artifacts (sha256),
  size          INTEGER NOT NULL,
  metadata_json TEXT    NOT NULL CHECK (json_valid(metadata_json)),
  captured_at   INTEGER NOT NULL,
  UNIQUE (source_id, seq)
) STRICT;
CREATE INDEX revisions_by_sha ON revisions (source_id, sha256);

CREATE TABLE revision_artifacts (
  revision_id INTEGER NOT NULL REFERENCES revisions (id),
  sha256      TEXT    NOT NULL REFERENCES artifacts (sha256),
  role        TEXT    NOT NULL,
  PRIMARY KEY (revision_id, role)
) STRICT;

CREATE TABLE extractions (
  id               INTEGER PRIMARY KEY,
  revision_id      INTEGER NOT NULL REFERENCES revisions (id),
  parser           TEXT    NOT NULL,
  -- Hash of parser version, chunker settings and tokenizer: a change re-extracts, a formatting change does not.
  fingerprint      TEXT    NOT NULL,
  unit_count       INTEGER NOT NULL,
  chunk_count      INTEGER NOT NULL,
  diagnostics_json TEXT    NOT NULL CHECK (json_valid(diagnostics_json)),
  created_at       INTEGER NOT NULL,
  UNIQUE (revision_id, fingerprint)
) STRICT;

CREATE TABLE evidence_units (
  id                INTEGER PRIMARY KEY,
  extraction_id     INTEGER NOT NULL REFERENCES extractions (id),
  ordinal           INTEGER NOT NULL,
  unit_type         TEXT    NOT NULL,
  -- Leaf units are what chunk windows cover; section units span their heading's subtree.
  is_leaf           INTEGER NOT NULL CHECK (is_leaf IN (0, 1)),
  parent_ordinal    INTEGER,
  text              TEXT    NOT NULL,
  heading_path_json TEXT    NOT NULL CHECK (json_valid(heading_path_json) AND json_type(heading_path_json) = 'array'),
  anchor            TEXT,
  token_count       INTEGER NOT NULL,
  UNIQUE (extraction_id, ordinal)
) STRICT;

CREATE TABLE locators (
  unit_id      INTEGER PRIMARY KEY REFERENCES evidence_units (id),
  byte_start   INTEGER NOT NULL,
  byte_end     INTEGER NOT NULL,
  line_start   INTEGER NOT NULL,
  col_start    INTEGER NOT NULL,
  line_end     INTEGER NOT NULL,
  col_end      INTEGER NOT NULL,
  json_pointer TEXT,
  CHECK (byte_end >= byte_start AND line_end >= line_start)
) STRICT;

CREATE TABLE identifiers (
  id          INTEGER PRIMARY KEY,
  unit_id     INTEGER NOT NULL REFERENCES evidence_units (id),
  revision_id INTEGER NOT NULL REFERENCES revisions (id),
  kind        TEXT    NOT NULL,
  value       TEXT    NOT NULL,
  normalized  TEXT    NOT NULL
) STRICT;
CREATE INDEX identifiers_by_value ON identifiers (normalized, unit_id, kind);

CREATE TABLE chunks (
  id             INTEGER PRIMARY KEY,
  extraction_id  INTEGER NOT NULL REFERENCES extractions (id),
  ordinal        INTEGER NOT NULL,
  first_unit_id  INTEGER NOT NULL REFERENCES evidence_units (id),
  last_unit_id   INTEGER NOT NULL REFERENCES evidence_units (id),
  -- The evidence owner: windows of one owner consolidate to one vote per channel. owner_chunk_id
  -- names the owner's first window (NULL on that first window itself): COALESCE(owner_chunk_id, id).
  owner_key      TEXT    NOT NULL,
  owner_chunk_id INTEGER REFERENCES chunks (id),
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
  text           TEXT    NOT NULL,
  capsule_json   TEXT    NOT NULL CHECK (json_valid(capsule_json)),
  UNIQUE (extraction_id, ordinal)
) STRICT;
-- The exact channel maps a unit to its window: the first chunk of the extraction whose last unit
-- is at or after it (covering index, one seek per identifier hit).
CREATE INDEX chunks_by_last_unit ON chunks (extraction_id, last_unit_id, first_unit_id, owner_chunk_id);

CREATE TABLE index_families (
  id          INTEGER PRIMARY KEY,
  name        TEXT NOT NULL UNIQUE,
  channel     TEXT NOT NULL,
  config_json TEXT NOT NULL CHECK (json_valid(config_json))
) STRICT;

-- One batch is one index generation: a directory under indexes/<family>/<generation>/.
CREATE TABLE index_batches (
  id          INTEGER PRIMARY KEY,
  family_id   INTEGER NOT NULL REFERENCES index_families (id),
  generation  TEXT    NOT NULL UNIQUE,
  doc_count   INTEGER NOT NULL,
  status      TEXT    NOT NULL CHECK (status IN ('verified', 'retired')),
  created_at  INTEGER NOT NULL
) STRICT;

CREATE TABLE snapshots (
  id          INTEGER PRIMARY KEY,
  parent_id   INTEGER REFERENCES snapshots (id),
  job_id      INTEGER REFERENCES jobs (id),
  chunk_count INTEGER NOT NULL,
  created_at  INTEGER NOT NULL
) STRICT;

CREATE TABLE snapshot_members (
  snapshot_id   INTEGER NOT NULL REFERENCES snapshots (id),
  source_id     INTEGER NOT NULL REFERENCES sources (id),
  revision_id   INTEGER NOT NULL REFERENCES revisions (id),
  extraction_id INTEGER NOT NULL REFERENCES extractions (id),
  PRIMARY KEY (snapshot_id, source_id)
) STRICT;

CREATE TABLE snapshot_indexes (
  snapshot_id INTEGER NOT NULL REFERENCES snapshots (id),
  family_id   INTEGER NOT NULL REFERENCES index_families (id),
  batch_id    INTEGER NOT NULL REFERENCES index_batches (id),
  PRIMARY KEY (snapshot_id, family_id)
) STRICT;

CREATE TABLE jobs (
  id           INTEGER PRIMARY KEY,
  kind         TEXT    NOT NULL,
  status       TEXT    NOT NULL CHECK (status IN ('queued', 'running', 'succeeded', 'partial', 'failed', 'interrupted')),
  request_json TEXT    NOT NULL CHECK (json_valid(request_json)),
  receipt_json TEXT    CHECK (receipt_json IS NULL OR json_valid(receipt_json)),
  pid          INTEGER,
  error        TEXT,
  created_at   INTEGER NOT NULL,
  started_at   INTEGER,
  finished_at  INTEGER
) STRICT;

CREATE TABLE job_steps (
  id          INTEGER PRIMARY KEY,
  job_id      INTEGER NOT NULL REFERENCES jobs (id),
  name        TEXT    NOT NULL,
  status      TEXT    NOT NULL CHECK (status IN ('running', 'done', 'failed')),
  started_at  INTEGER NOT NULL,
  finished_at INTEGER,
  detail_json TEXT    CHECK (detail_json IS NULL OR json_valid(detail_json))
) STRICT;

CREATE TABLE job_events (
  id      INTEGER PRIMARY KEY,
  job_id  INTEGER NOT NULL REFERENCES jobs (id),
  at      INTEGER NOT NULL,
  level   TEXT    NOT NULL CHECK (level IN ('info', 'warning', 'error')),
  code    TEXT    NOT NULL,
  path    TEXT,
  message TEXT    NOT NULL
) STRICT;
CREATE INDEX job_events_by_job ON job_events (job_id);

CREATE TABLE query_runs (
  id           TEXT    PRIMARY KEY,
  snapshot_id  INTEGER REFERENCES snapshots (id),
  request_json TEXT    NOT NULL CHECK (json_valid(request_json)),
  summary_json TEXT    NOT NULL CHECK (json_valid(summary_json)),
  agent_id     TEXT,
  task_id      TEXT,
  duration_ms  REAL    NOT NULL,
  created_at   INTEGER NOT NULL
) STRICT;
