-- Tychora canonical corpus, schema 15: facets (issue 13). A kind declares typed filter fields
-- (`level`, `jurisdiction`, `decided`…); the definitions in force are recorded with the kind, and
-- the values set on sources are what query-time facet conditions read. Values are source
-- metadata, like the collection and the kind: a changed value applies from then on.

CREATE TABLE facet_definitions (
  id          INTEGER PRIMARY KEY,
  kind        TEXT    NOT NULL REFERENCES kinds (name),
  name        TEXT    NOT NULL,
  type        TEXT    NOT NULL CHECK (type IN ('string', 'enum', 'number', 'date', 'boolean')),
  values_json TEXT    NOT NULL DEFAULT '[]' CHECK (json_valid(values_json)),
  UNIQUE (kind, name)
) STRICT;

CREATE TABLE facet_values (
  id            INTEGER PRIMARY KEY,
  definition_id INTEGER NOT NULL REFERENCES facet_definitions (id),
  source_id     INTEGER NOT NULL REFERENCES sources (id),
  -- string, enum, date (YYYY-MM-DD) and boolean ('true'/'false') values; numbers apart, so that
  -- `level>=2` compares numbers.
  text          TEXT,
  number        REAL,
  set_at        INTEGER NOT NULL,
  CHECK ((text IS NULL) != (number IS NULL)),
  UNIQUE (source_id, definition_id)
) STRICT;

CREATE INDEX facet_values_by_definition ON facet_values (definition_id, text, number);
