-- Tychora canonical corpus, schema 16: relations (issue 13).
--
-- A relation type (`obsoletes`, `supersedes`, `implements`…) is a pack definition: which kinds it
-- joins, its direction and cardinality, how assertions of it may come about. The definitions
-- assertions were made under are recorded here. Declaring a type makes no assertion: an assertion
-- is parsed from a source (an RFC's `Obsoletes:` header), declared by the owner or proposed by an
-- agent, bound to the revision it was read from or declared against, with the unit that supports
-- it. A person's review is an event; the decision it leads to is the assertion's status.

CREATE TABLE relation_types (
  name            TEXT    PRIMARY KEY,
  fingerprint     TEXT    NOT NULL CHECK (length(fingerprint) = 64),
  pack            TEXT    NOT NULL,
  definition_json TEXT    NOT NULL CHECK (json_valid(definition_json)),
  recorded_at     INTEGER NOT NULL
) STRICT;

CREATE TABLE relation_assertions (
  id              INTEGER PRIMARY KEY,
  relation        TEXT    NOT NULL REFERENCES relation_types (name),
  from_kind       TEXT    NOT NULL,
  from_key        TEXT    NOT NULL,
  to_kind         TEXT    NOT NULL,
  to_key          TEXT    NOT NULL,
  method          TEXT    NOT NULL CHECK (method IN ('parsed', 'declared', 'proposed')),
  status          TEXT    NOT NULL CHECK (status IN ('proposed', 'accepted', 'rejected')),
  -- The revision it was read from (parsed) or declared against, and the unit that supports it.
  revision_id     INTEGER REFERENCES revisions (id),
  support_unit_id INTEGER REFERENCES evidence_units (id),
  -- Who made it: `parser`, `owner`, or the proposing agent and task.
  actor           TEXT    NOT NULL,
  note            TEXT,
  created_at      INTEGER NOT NULL,
  UNIQUE (relation, from_key, to_key, method, revision_id)
) STRICT;

CREATE INDEX relation_assertions_from ON relation_assertions (from_key);
CREATE INDEX relation_assertions_to ON relation_assertions (to_key);

CREATE TABLE review_events (
  id           INTEGER PRIMARY KEY,
  assertion_id INTEGER NOT NULL REFERENCES relation_assertions (id),
  action       TEXT    NOT NULL CHECK (action IN ('accept', 'reject', 'comment')),
  actor        TEXT    NOT NULL,
  note         TEXT,
  at           INTEGER NOT NULL
) STRICT;

CREATE TABLE assertion_decisions (
  assertion_id INTEGER PRIMARY KEY REFERENCES relation_assertions (id),
  decision     TEXT    NOT NULL CHECK (decision IN ('accepted', 'rejected')),
  event_id     INTEGER NOT NULL REFERENCES review_events (id),
  decided_at   INTEGER NOT NULL
) STRICT;
