-- Tychora canonical corpus, schema 11: descriptions of visual assets by a vision model (issue 12).
-- A description is derived evidence: what a model said a picture shows, with the model, the
-- fingerprint of the prompt it was given, when, and whether a person has reviewed it. It is never
-- a quotation of the source. It belongs to the picture's bytes (the same picture in a later
-- revision keeps it) and goes when they are erased or no extraction keeps the picture.

CREATE TABLE asset_descriptions (
  id                 INTEGER PRIMARY KEY,
  sha256             TEXT    NOT NULL,          -- the visual asset described (visual_assets.sha256)
  sent_sha256        TEXT    NOT NULL,          -- the bytes uploaded: the asset, or its PNG re-encoding
  sent_media_type    TEXT    NOT NULL,
  provider           TEXT    NOT NULL,
  model              TEXT    NOT NULL,          -- as the provider reported it
  prompt_fingerprint TEXT    NOT NULL,          -- sha256 of the instructions and their settings
  text               TEXT    NOT NULL,
  stop_reason        TEXT,
  input_tokens       INTEGER NOT NULL DEFAULT 0,
  output_tokens      INTEGER NOT NULL DEFAULT 0,
  created_at         INTEGER NOT NULL,          -- ms since the epoch
  review_status      TEXT    NOT NULL DEFAULT 'unreviewed'
                     CHECK (review_status IN ('unreviewed', 'accepted', 'rejected')),
  reviewed_at        INTEGER,
  review_note        TEXT
) STRICT;

CREATE INDEX asset_descriptions_by_sha ON asset_descriptions (sha256);
