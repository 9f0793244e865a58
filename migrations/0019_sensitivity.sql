-- Tychora canonical corpus, schema 19: sensitivity labels on sources (issue 14).
--
-- Every source carries the level it was captured with (`add --sensitivity`, else the workspace's
-- `[sensitivity] default`), relabelled by `manage sensitivity`. A label is access policy, not
-- content: it lives on the source, so a relabel applies to every snapshot at once, pinned ones
-- included. Sources captured before labels existed hold NULL, read as the workspace's default.
-- Content above the ceiling is never captured; the index lets a query find cheaply whether any
-- labelled source is above it (the ceiling lowered after capture), which eligibility then hides.

ALTER TABLE sources ADD COLUMN sensitivity TEXT CHECK (sensitivity IS NULL OR length(sensitivity) BETWEEN 1 AND 64);
CREATE INDEX sources_by_sensitivity ON sources (sensitivity) WHERE sensitivity IS NOT NULL;
