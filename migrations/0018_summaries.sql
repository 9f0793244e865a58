-- Tychora canonical corpus, schema 18: summary trees (issue 14, the RAPTOR channel).
--
-- A summary tree clusters a snapshot's window vectors recursively — inside each document first,
-- then across the corpus — and summarises every cluster, bottom up. Summaries are derived text:
-- never a quotation of a source and never a segment. A summary hit in a query resolves to the
-- source windows under it, and those windows are what a result cites.
--
-- `snapshot_id` names the snapshot the tree was built from, without a foreign key: a query on a
-- later snapshot uses the newest tree and keeps only the windows its own snapshot still holds, so
-- retention may drop the snapshot while the tree stays useful. Windows are referenced by chunk id
-- (purge deletes a tree's members before the chunks they name).

CREATE TABLE summary_trees (
  id                 INTEGER PRIMARY KEY,
  snapshot_id        INTEGER NOT NULL,
  -- The vector family the windows were clustered in.
  family_id          INTEGER NOT NULL REFERENCES vector_families (id),
  -- `extractive` or `anthropic`; the model and the prompt fingerprint when a model summarised.
  summarizer         TEXT    NOT NULL,
  model              TEXT,
  prompt_fingerprint TEXT,
  branching          INTEGER NOT NULL,
  windows            INTEGER NOT NULL,
  nodes              INTEGER NOT NULL,
  input_tokens       INTEGER NOT NULL,
  output_tokens      INTEGER NOT NULL,
  calls              INTEGER NOT NULL,
  build_ms           REAL    NOT NULL,
  built_at           INTEGER NOT NULL
) STRICT;

CREATE TABLE summary_nodes (
  id            INTEGER PRIMARY KEY,
  tree_id       INTEGER NOT NULL REFERENCES summary_trees (id),
  parent_id     INTEGER REFERENCES summary_nodes (id),
  -- Height above the windows: 1 summarises windows, 2 summarises level-1 summaries, …
  level         INTEGER NOT NULL CHECK (level >= 1),
  scope         TEXT    NOT NULL CHECK (scope IN ('document', 'corpus')),
  -- The document a document-scope node belongs to.
  source_id     INTEGER REFERENCES sources (id),
  text          TEXT    NOT NULL,
  -- Who wrote this node's text: `extractive` (the cluster's most central sentences) or the model.
  summarizer    TEXT    NOT NULL,
  model         TEXT,
  -- sha256 of what the summariser was given (its cache key).
  input_sha256  TEXT    NOT NULL,
  -- Windows under the node, all levels down.
  leaf_count    INTEGER NOT NULL,
  -- The centroid of the windows under it, in the tree's family (f32 little-endian): a query
  -- finds the node by it.
  vector        BLOB    NOT NULL
) STRICT;

CREATE INDEX summary_nodes_tree ON summary_nodes (tree_id);
CREATE INDEX summary_nodes_parent ON summary_nodes (parent_id);

-- Windows directly under a node (a node's other children are the nodes naming it as parent).
CREATE TABLE summary_members (
  node_id  INTEGER NOT NULL REFERENCES summary_nodes (id),
  chunk_id INTEGER NOT NULL REFERENCES chunks (id),
  PRIMARY KEY (node_id, chunk_id)
) STRICT, WITHOUT ROWID;

CREATE INDEX summary_members_chunk ON summary_members (chunk_id);

-- Summaries a model wrote, by what it was given, so a rebuild pays only for clusters that changed.
CREATE TABLE summary_cache (
  input_sha256       TEXT    NOT NULL,
  summarizer         TEXT    NOT NULL,
  model              TEXT    NOT NULL,
  prompt_fingerprint TEXT    NOT NULL,
  text               TEXT    NOT NULL,
  input_tokens       INTEGER NOT NULL,
  output_tokens      INTEGER NOT NULL,
  created_at         INTEGER NOT NULL,
  PRIMARY KEY (input_sha256, summarizer, model, prompt_fingerprint)
) STRICT, WITHOUT ROWID;
