-- Tychora canonical corpus, schema 9: OCR of pages with no text layer (issue 12). A unit read from
-- an image of its page (doc_locators.origin = 'ocr', a column since schema 6) keeps how sure the
-- recognizer was: it finds the page, it does not quote it.

ALTER TABLE doc_locators ADD COLUMN confidence REAL; -- OCR: mean word confidence, 0 to 1
