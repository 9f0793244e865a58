-- A revision is what was captured: it is never changed (a change of bytes is a new revision of
-- the source). The store refuses an UPDATE of one, as the service store on PostgreSQL does
-- (migrations/postgres/0002_canonical.sql).
CREATE TRIGGER revisions_are_immutable BEFORE UPDATE ON revisions
BEGIN
  SELECT RAISE(ABORT, 'revisions are immutable: a change is a new revision');
END;
