-- Tychora canonical corpus, schema 13: legislative text (issue 13). `law` and `regulation` are
-- plain text read for the structure a lawyer cites: recitals, chapters, sections, articles,
-- numbered paragraphs, points and sub-points, each unit carrying its citation (`Article 17(1)(b)`)
-- for the exact channel; the Official Journal's running headers and page footnotes are furniture.
-- Chosen with `add --kind law|regulation` (a file's extension cannot tell a law from other text).

INSERT INTO kinds (name, parser, media_type, description) VALUES
  ('law', 'legal', 'text/plain',
   'Law as plain text: recitals, chapters, sections, articles, paragraphs, points and sub-points as units cited `Article 17(1)(b)`'),
  ('regulation', 'legal', 'text/plain',
   'Regulation as plain text: recitals, chapters, sections, articles, paragraphs, points and sub-points as units cited `Article 17(1)(b)`');

-- IETF RFCs in their plain-text form (`rfc6749.txt` is detected by its name): numbered sections
-- and appendices as sections cited `RFC 6749 §4.1.2`; form feeds, page footers and running
-- headers are furniture.
INSERT INTO kinds (name, parser, media_type, description) VALUES
  ('rfc', 'rfc', 'text/plain',
   'IETF RFC (plain text): numbered sections and appendices cited `RFC 6749 §4.1.2`, page furniture left out of units');
