-- Tychora canonical corpus, schema 10: pictures as visual assets (issue 12). An image file is its
-- own asset (its original); a picture a DOCX embeds, or a figure a PDF page draws (as drawn, in
-- PNG), is kept as an artifact of its own. Each is
-- found offline through the unit that names it (alt text, title, file name, OCR text).

INSERT INTO kinds (name, parser, media_type, description) VALUES
  ('image', 'image', 'image/*',
   'Image file (PNG, JPEG, WebP, GIF, TIFF): a visual asset found by the words of its name, and with [ocr] on by the text recognized in it');

CREATE TABLE visual_assets (
  extraction_id INTEGER NOT NULL REFERENCES extractions (id),
  ordinal       INTEGER NOT NULL,               -- 1-based, in the document
  sha256        TEXT    NOT NULL REFERENCES artifacts (sha256),
  media_type    TEXT    NOT NULL,
  width         INTEGER,                        -- pixels, when the header was read
  height        INTEGER,
  part          TEXT    NOT NULL,               -- 'image' (the file itself), or the DOCX part
  relationship  TEXT,                           -- DOCX: 'rId7 → word/media/image2.png'
  page          INTEGER,                        -- PDF: its page (1-based)
  box_json      TEXT,                           -- PDF: [x0, y0, x1, y1] in points, origin bottom-left
  alt_text      TEXT,
  caption       TEXT,
  context       TEXT,                           -- text of the paragraph it is anchored in
  unit_id       INTEGER REFERENCES evidence_units (id),  -- the unit that finds it
  PRIMARY KEY (extraction_id, ordinal)
) STRICT;

CREATE INDEX visual_assets_by_sha ON visual_assets (sha256);
CREATE INDEX visual_assets_by_unit ON visual_assets (unit_id);
