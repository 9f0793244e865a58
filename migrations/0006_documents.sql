-- Tychora canonical corpus, schema 6: documents (PDF, DOCX) as cited evidence (issue 12).

INSERT INTO kinds (name, parser, media_type, description) VALUES
  ('docx', 'docx', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
   'Word document (OOXML, Transitional and Strict): headings, paragraphs, list items, table rows with cells; notes, comments and text boxes by part; headers and footers kept as furniture');

-- A document's bytes cannot be sliced, so its extraction stores a derived text (the units' text in
-- reading order) as an artifact; the byte and line spans of its units and chunks index that text.
-- Evidence text is read from here, never by parsing the original again.
CREATE TABLE doc_extractions (
  extraction_id    INTEGER PRIMARY KEY REFERENCES extractions (id),
  format           TEXT    NOT NULL,            -- 'docx', 'pdf'
  extractor        TEXT    NOT NULL,            -- the reader and its version
  derived_sha256   TEXT    NOT NULL REFERENCES artifacts (sha256),
  pages            INTEGER,                     -- PDF page count
  furniture_json   TEXT    NOT NULL DEFAULT '[]',  -- headers, footers, page numbers: kept out of units
  external_json    TEXT    NOT NULL DEFAULT '[]'   -- relationships to outside targets: recorded, never followed
) STRICT;

CREATE INDEX doc_extractions_derived ON doc_extractions (derived_sha256);

-- Where a unit sits in its document, beside its span in the derived text.
CREATE TABLE doc_locators (
  unit_id     INTEGER PRIMARY KEY REFERENCES evidence_units (id),
  part        TEXT    NOT NULL,                 -- 'body', 'footnotes', 'comments', 'textbox', 'page'
  paragraph   INTEGER,                          -- DOCX: index of its w:p in the part (1-based)
  page_start  INTEGER,                          -- PDF pages (1-based)
  page_end    INTEGER,
  boxes_json  TEXT,                             -- PDF: [[page, x0, y0, x1, y1], ...] in points
  table_no    INTEGER,                          -- table in its part (1-based)
  row_no      INTEGER,                          -- row in its table (1-based)
  header      INTEGER NOT NULL DEFAULT 0,       -- a header row
  marker      TEXT,                             -- a list item's rendered number or bullet
  level       INTEGER,                          -- heading level or list depth
  flags_json  TEXT    NOT NULL DEFAULT '[]',    -- hidden-text findings and the like
  origin      TEXT    NOT NULL DEFAULT 'text'   -- 'text' (the file's own text) or 'ocr'
) STRICT;

-- The cells of a table-row unit (row provenance: a row is never read without its place).
CREATE TABLE table_cells (
  unit_id         INTEGER NOT NULL REFERENCES evidence_units (id),
  col             INTEGER NOT NULL,             -- first grid column (0-based)
  col_span        INTEGER NOT NULL DEFAULT 1,
  continues_above INTEGER NOT NULL DEFAULT 0,   -- a vertical merge with the cell above
  text            TEXT    NOT NULL,
  PRIMARY KEY (unit_id, col)
) STRICT, WITHOUT ROWID;
