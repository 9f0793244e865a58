-- Tychora canonical corpus, schema 15: facets and structured records (issue 13).
--
-- A kind declares typed filter fields (`level`, `jurisdiction`, `decided`…); the definitions in
-- force are recorded with the kind. Values are set on sources (source metadata, like the
-- collection and the kind: a changed value applies from then on) and on structured records.
--
-- A structured record (a requirement, a decision…) is one per (kind, record type, key): the same
-- requirement read from a Markdown table, a CSV row and a JSON object is one record with three
-- pieces of evidence, each bound to its revision and unit. Its body is validated against the
-- kind's JSON Schema before it is stored.

INSERT INTO formats (name, parser, media_type, description) VALUES
  ('csv', 'csv', 'text/csv', 'Comma-separated values: a header, then one row unit per record, cited by its lines');

CREATE TABLE facet_definitions (
  id          INTEGER PRIMARY KEY,
  kind        TEXT    NOT NULL REFERENCES kinds (name),
  name        TEXT    NOT NULL,
  type        TEXT    NOT NULL CHECK (type IN ('string', 'enum', 'number', 'date', 'boolean')),
  values_json TEXT    NOT NULL DEFAULT '[]' CHECK (json_valid(values_json)),
  UNIQUE (kind, name)
) STRICT;

CREATE TABLE structured_records (
  id          INTEGER PRIMARY KEY,
  kind        TEXT    NOT NULL REFERENCES kinds (name),
  record_type TEXT    NOT NULL,
  key         TEXT    NOT NULL,
  body_json   TEXT    NOT NULL CHECK (json_valid(body_json)),
  -- captured: read from a source; reviewed/rejected: a person's decision (the verified profile
  -- admits reviewed records only).
  status      TEXT    NOT NULL DEFAULT 'captured' CHECK (status IN ('captured', 'reviewed', 'rejected')),
  created_at  INTEGER NOT NULL,
  updated_at  INTEGER NOT NULL,
  UNIQUE (kind, record_type, key)
) STRICT;

CREATE TABLE record_evidence (
  record_id   INTEGER NOT NULL REFERENCES structured_records (id),
  unit_id     INTEGER NOT NULL REFERENCES evidence_units (id),
  revision_id INTEGER NOT NULL REFERENCES revisions (id),
  -- The record as this unit states it (sources may disagree; the job reports where).
  body_json   TEXT    NOT NULL CHECK (json_valid(body_json)),
  PRIMARY KEY (record_id, unit_id)
) STRICT;

CREATE INDEX record_evidence_by_unit ON record_evidence (unit_id);
CREATE INDEX record_evidence_by_revision ON record_evidence (revision_id);

CREATE TABLE facet_values (
  id            INTEGER PRIMARY KEY,
  definition_id INTEGER NOT NULL REFERENCES facet_definitions (id),
  -- Exactly one of: a source's value, a record's value.
  source_id     INTEGER REFERENCES sources (id),
  record_id     INTEGER REFERENCES structured_records (id),
  -- string, enum, date (YYYY-MM-DD) and boolean ('true'/'false') values; numbers apart, so that
  -- `level>=2` compares numbers.
  text          TEXT,
  number        REAL,
  set_at        INTEGER NOT NULL,
  CHECK ((source_id IS NULL) != (record_id IS NULL)),
  CHECK ((text IS NULL) != (number IS NULL))
) STRICT;

CREATE UNIQUE INDEX facet_values_of_source ON facet_values (source_id, definition_id) WHERE source_id IS NOT NULL;
CREATE UNIQUE INDEX facet_values_of_record ON facet_values (record_id, definition_id) WHERE record_id IS NOT NULL;
CREATE INDEX facet_values_by_definition ON facet_values (definition_id, text, number);
