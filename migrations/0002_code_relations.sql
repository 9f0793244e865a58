-- Tychora schema 2: the syntax cache and code relations (DESIGN §9).

-- One parse of one code file: symbol units, reference sites and default export, as JSON. The key
-- hashes the content, the grammar/adapter version, the language, the path and the module path
-- (anchors depend on both), so an unchanged file is never parsed twice, across revisions and sources.
CREATE TABLE syntax_cache (
  key        TEXT    PRIMARY KEY CHECK (length(key) = 64),
  payload    TEXT    NOT NULL CHECK (json_valid(payload)),
  created_at INTEGER NOT NULL
) STRICT;

-- Which parse a code extraction came from, and the module path it was resolved under.
CREATE TABLE code_extractions (
  extraction_id INTEGER PRIMARY KEY REFERENCES extractions (id),
  language      TEXT    NOT NULL,
  module        TEXT    NOT NULL,
  syntax_key    TEXT    NOT NULL REFERENCES syntax_cache (key)
) STRICT;

-- The resolver's output over the code members of one root in one collection. A set is keyed by the
-- extractions it resolved, so a snapshot whose code did not change reuses its parent's set.
CREATE TABLE relation_sets (
  id            INTEGER PRIMARY KEY,
  root_id       INTEGER NOT NULL REFERENCES roots (id),
  collection_id INTEGER NOT NULL REFERENCES collections (id),
  members_hash  TEXT    NOT NULL CHECK (length(members_hash) = 64),
  -- 'syntactic': scope rules and import bindings, not a compiler.
  resolver      TEXT    NOT NULL,
  stats_json    TEXT    NOT NULL CHECK (json_valid(stats_json)),
  created_at    INTEGER NOT NULL,
  UNIQUE (root_id, collection_id, members_hash)
) STRICT;

CREATE TABLE snapshot_relation_sets (
  snapshot_id INTEGER NOT NULL REFERENCES snapshots (id),
  set_id      INTEGER NOT NULL REFERENCES relation_sets (id),
  PRIMARY KEY (snapshot_id, set_id)
) STRICT;

-- One assertion with its supporting evidence: the site (byte and line range) in the revision that
-- makes it. defines/contains come from the symbol tree; the others from reference sites.
CREATE TABLE relations (
  id              INTEGER PRIMARY KEY,
  set_id          INTEGER NOT NULL REFERENCES relation_sets (id),
  kind            TEXT    NOT NULL CHECK (kind IN ('defines', 'contains', 'imports', 'references', 'calls', 'inherits', 'implements')),
  revision_id     INTEGER NOT NULL REFERENCES revisions (id),
  -- The innermost symbol unit holding the site (the module unit at top level).
  src_unit_id     INTEGER NOT NULL REFERENCES evidence_units (id),
  outcome         TEXT    NOT NULL CHECK (outcome IN ('resolved', 'ambiguous', 'unresolved')),
  target_unit_id  INTEGER REFERENCES evidence_units (id),
  -- The target's symbol path (resolved), else NULL.
  target_anchor   TEXT,
  candidates_json TEXT    CHECK (candidates_json IS NULL OR (json_valid(candidates_json) AND json_type(candidates_json) = 'array')),
  reason          TEXT,
  -- The site as written (`self.parse`, `os.path.join`) and its last segment, for lookups by name.
  ref_text        TEXT    NOT NULL,
  name            TEXT    NOT NULL,
  byte_start      INTEGER NOT NULL,
  byte_end        INTEGER NOT NULL,
  line_start      INTEGER NOT NULL,
  col_start       INTEGER NOT NULL,
  line_end        INTEGER NOT NULL,
  CHECK (byte_end >= byte_start AND line_end >= line_start),
  CHECK ((outcome = 'resolved') = (target_anchor IS NOT NULL))
) STRICT;
CREATE INDEX relations_by_target ON relations (target_unit_id, set_id, kind);
CREATE INDEX relations_by_source ON relations (src_unit_id, set_id, kind);
CREATE INDEX relations_by_name ON relations (name, set_id);
