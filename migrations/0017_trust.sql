-- Tychora canonical corpus, schema 17: trust (issue 14).
--
-- How far evidence can be trusted is a property of the collection it lives in, fixed when the
-- collection is created: `approved` (knowledge a person accepted, written only by `migrate apply`
-- from the project's checksummed knowledge migrations), `rejected_approach` (a proposal a person
-- rejected, kept searchable so agents stop proposing it) or `captured_source` (bytes captured from
-- a root, the default). A capture into a collection of another trust is refused, so no agent path
-- can write into approved knowledge or dress a capture up as approved.

ALTER TABLE collections ADD COLUMN trust TEXT NOT NULL DEFAULT 'captured_source'
  CHECK (trust IN ('approved', 'rejected_approach', 'captured_source'));
