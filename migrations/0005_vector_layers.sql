-- Tychora canonical corpus, schema 5: vector generations that are layers (issue 11).

-- A text generation may be a layer over a full generation file (its base): the vectors added
-- since the base and the base keys it removes (vector/index.rs). The base is named here so that
-- collection and backup follow it as an explicit reference, never by reading file headers.
ALTER TABLE index_batches ADD COLUMN base_generation TEXT;
