-- Tychora canonical corpus, schema 12: the visual channel (issue 12, DESIGN §9). A multimodal
-- model (Voyage) embeds each visual asset's pixels; a text query embedded by the same model finds
-- pictures whose words are not in any text layer. The vectors are a family of their own, keyed by
-- the asset's bytes (the same picture in a later revision, or in another document, is embedded
-- once), and derived from those bytes: they go when the bytes are erased or no extraction keeps
-- the picture.

CREATE TABLE visual_vectors (
  family       TEXT    NOT NULL,                -- provider|model|dimension (FamilySpec::cache_key)
  sha256       TEXT    NOT NULL,                -- the visual asset (visual_assets.sha256)
  dimension    INTEGER NOT NULL CHECK (dimension > 0),
  vector       BLOB    NOT NULL CHECK (length(vector) = 4 * dimension),  -- f32, little-endian
  receipt_json TEXT    NOT NULL CHECK (json_valid(receipt_json)),
  created_at   INTEGER NOT NULL,                -- ms since the epoch
  PRIMARY KEY (family, sha256)
) STRICT, WITHOUT ROWID;
