-- Tychora canonical corpus, schema 14: a source's format and its kind are different things
-- (issue 13). The format says how its bytes are parsed (markdown, pdf, code_file, legal text…);
-- the kind says what the source is (law, standard, decision… — 15 built in) and how its evidence
-- is to be read. Kinds are versioned definitions in packs; the ones sources use are recorded
-- here with their version and fingerprint, so a changed definition is visible in the store.

ALTER TABLE kinds RENAME TO formats;
ALTER TABLE sources RENAME COLUMN kind TO format;

-- Laws and regulations were two names for one parser: the `legal` format. Their sources keep
-- what they were as their kind.
INSERT INTO formats (name, parser, media_type, description) VALUES
  ('legal', 'legal', 'text/plain',
   'Legislative text (plain): recitals, chapters, sections, articles, paragraphs, points and sub-points as units cited `Article 17(1)(b)`');

CREATE TABLE kinds (
  name            TEXT    PRIMARY KEY,
  version         INTEGER NOT NULL CHECK (version >= 1),
  fingerprint     TEXT    NOT NULL CHECK (length(fingerprint) = 64),
  pack            TEXT    NOT NULL,
  lane            TEXT    NOT NULL,
  definition_json TEXT    NOT NULL CHECK (json_valid(definition_json)),
  recorded_at     INTEGER NOT NULL
) STRICT;

ALTER TABLE sources ADD COLUMN kind TEXT REFERENCES kinds (name);

-- Sources added as law or regulation before this schema keep that as their kind. Their
-- definitions were not recorded then: an all-zero fingerprint says so, and the next add that uses
-- the kind records the definition in force.
INSERT INTO kinds (name, version, fingerprint, pack, lane, definition_json, recorded_at)
SELECT DISTINCT format, 1, printf('%064d', 0), 'core', 'authority', '{}', 0
  FROM sources WHERE format IN ('law', 'regulation');
UPDATE sources SET kind = format, format = 'legal' WHERE format IN ('law', 'regulation');
DELETE FROM formats WHERE name IN ('law', 'regulation');

CREATE INDEX sources_by_kind ON sources (kind);
