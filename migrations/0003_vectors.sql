-- Dense text retrieval: embedding families, the vectors of exact input texts, and the file of each
-- vector index generation.

-- One family per way of turning text into vectors. Switching a model (or its dimension, or what is
-- embedded) is a new family; no family's vectors are ever overwritten by another's.
CREATE TABLE vector_families (
  id             INTEGER PRIMARY KEY,
  provider       TEXT    NOT NULL,
  model          TEXT    NOT NULL,
  dimension      INTEGER NOT NULL CHECK (dimension > 0),
  -- What text is embedded: `window` (the chunk text), `window+capsule` (title and heading path
  -- first), `contextual` (a document's windows embedded together).
  representation TEXT    NOT NULL,
  normalization  TEXT    NOT NULL CHECK (normalization IN ('l2', 'none')),
  quantization   TEXT    NOT NULL CHECK (quantization IN ('f32', 'f16', 'i8')),
  metric         TEXT    NOT NULL CHECK (metric IN ('cos', 'ip', 'l2')),
  created_at     INTEGER NOT NULL,
  UNIQUE (provider, model, dimension, representation, normalization, quantization, metric)
) STRICT;

-- One row per (family, exact input text): an input already embedded is never sent again.
CREATE TABLE vector_records (
  family_id    INTEGER NOT NULL REFERENCES vector_families (id),
  input_sha256 TEXT    NOT NULL,
  -- Little-endian f32 × dimension.
  vector       BLOB    NOT NULL,
  tokens       INTEGER NOT NULL,
  -- Provider, model, time, batch: where the vector came from.
  receipt_json TEXT    NOT NULL CHECK (json_valid(receipt_json)),
  created_at   INTEGER NOT NULL,
  PRIMARY KEY (family_id, input_sha256)
) STRICT, WITHOUT ROWID;

-- A vector generation is one file, not a directory of immutable segments: its sha256 is recorded
-- and checked when it is opened and by `manage verify`.
ALTER TABLE index_batches ADD COLUMN file_sha256 TEXT;
