//! Summary trees (DESIGN §7, RAPTOR-style): the windows a tree is built from, the model's cached
//! summaries, a tree's nodes and members as one build writes them, the newest tree as queries
//! load it, and what erasure, relabelling and purges take out of them.

use super::tx::{Statement, Tx, args};
use crate::error::Result;
use crate::vector::FamilySpec;

/// A window of the snapshot as a summary tree reads it.
#[derive(Debug, Clone)]
pub struct SummaryWindow {
    /// The window.
    pub chunk_id: i64,
    /// Its source.
    pub source_id: i64,
    /// Its collection's name.
    pub collection: String,
    /// The source's sensitivity label: a corpus-level summary never mixes two, so a query that
    /// may not see a level never reads a summary of its text.
    pub sensitivity: String,
    /// The window's text.
    pub text: String,
}

/// The snapshot's windows by collection, sensitivity, source and order, each with whether it may
/// carry instructions (a hidden unit or a flagged window); `unlabelled` is the level an
/// unlabelled source counts as.
///
/// # Errors
/// The store's errors.
pub fn windows(
    tx: &dyn Tx,
    snapshot_id: i64,
    unlabelled: &str,
) -> Result<Vec<(SummaryWindow, bool)>> {
    tx.rows(
        "SELECT c.id, sm.source_id, col.name, COALESCE(c.text, u.text),
                c.may_contain_instructions = 1 OR u.unit_type = 'hidden_text',
                COALESCE(s.sensitivity, ?2) AS level
         FROM snapshot_members sm
         JOIN chunks c ON c.extraction_id = sm.extraction_id
         JOIN evidence_units u ON u.id = c.first_unit_id
         JOIN sources s ON s.id = sm.source_id JOIN collections col ON col.id = s.collection_id
         WHERE sm.snapshot_id = ?1 ORDER BY col.name, level, sm.source_id, c.ordinal",
        args![snapshot_id, unlabelled],
        |r| {
            Ok((
                SummaryWindow {
                    chunk_id: r.get(0)?,
                    source_id: r.get(1)?,
                    collection: r.get(2)?,
                    sensitivity: r.get(5)?,
                    text: r.get(3)?,
                },
                r.get::<bool>(4)?,
            ))
        },
    )
}

/// The model's cached summary of one input.
///
/// # Errors
/// The store's errors.
pub fn cached_text(
    tx: &dyn Tx,
    input_sha256: &str,
    summarizer: &str,
    model: &str,
    fingerprint: &str,
) -> Result<Option<String>> {
    tx.optional(
        "SELECT text FROM summary_cache WHERE input_sha256 = ?1 AND summarizer = ?2 AND model = ?3 AND prompt_fingerprint = ?4",
        args![input_sha256, summarizer, model, fingerprint],
        |r| r.get(0),
    )
}

/// A tree as one build records it.
pub struct TreeRow<'a> {
    /// The snapshot summarised.
    pub snapshot_id: i64,
    /// The vector family of its nodes.
    pub family_id: i64,
    /// `anthropic`, `extractive`…
    pub summarizer: &'a str,
    /// The model, when one wrote summaries.
    pub model: Option<&'a str>,
    /// The prompt's fingerprint, when a model wrote summaries.
    pub fingerprint: Option<&'a str>,
    /// Children per node.
    pub branching: usize,
    /// Windows summarised.
    pub windows: usize,
    /// Nodes.
    pub nodes: usize,
    /// Tokens read by the model.
    pub input_tokens: u64,
    /// Tokens written by the model.
    pub output_tokens: u64,
    /// Model calls.
    pub calls: usize,
    /// How long the build took.
    pub build_ms: f64,
    /// When (Unix ms).
    pub built_at: i64,
}

/// Records a tree; returns its id.
///
/// # Errors
/// The store's errors.
pub fn insert_tree(tx: &dyn Tx, tree: &TreeRow<'_>) -> Result<i64> {
    tx.insert(
        "INSERT INTO summary_trees (snapshot_id, family_id, summarizer, model, prompt_fingerprint, branching, windows, nodes, input_tokens, output_tokens, calls, build_ms, built_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
        args![
            tree.snapshot_id,
            tree.family_id,
            tree.summarizer,
            tree.model,
            tree.fingerprint,
            tree.branching,
            tree.windows,
            tree.nodes,
            tree.input_tokens,
            tree.output_tokens,
            tree.calls,
            tree.build_ms,
            tree.built_at
        ],
    )
}

/// Deletes every tree but `tree_id`, with their nodes and members.
///
/// # Errors
/// The store's errors.
pub fn keep_only(tx: &dyn Tx, tree_id: i64) -> Result<()> {
    for sql in [
        "DELETE FROM summary_members WHERE node_id IN (SELECT id FROM summary_nodes WHERE tree_id <> ?1)",
        "UPDATE summary_nodes SET parent_id = NULL WHERE tree_id <> ?1",
        "DELETE FROM summary_nodes WHERE tree_id <> ?1",
        "DELETE FROM summary_trees WHERE id <> ?1",
    ] {
        tx.execute(sql, args![tree_id])?;
    }
    Ok(())
}

/// A node of a tree as a build writes it.
pub struct NodeRow<'a> {
    /// Its tree.
    pub tree_id: i64,
    /// Its parent (written before it: parents are added after their children, so a build writes
    /// from the last node down).
    pub parent_id: Option<i64>,
    /// 1 above the windows.
    pub level: u32,
    /// `document` or `corpus`.
    pub scope: &'a str,
    /// A document node's source.
    pub source_id: Option<i64>,
    /// The summary.
    pub text: &'a str,
    /// Who wrote it.
    pub summarizer: &'a str,
    /// The model, when a model wrote it.
    pub model: Option<&'a str>,
    /// The identity of what it summarised.
    pub input_sha256: &'a str,
    /// Windows under it.
    pub leaf_count: usize,
    /// Its vector.
    pub vector: &'a [f32],
}

/// Writes the nodes and members of one tree through prepared statements.
pub struct NodeWriter<'c> {
    node: Box<dyn Statement + 'c>,
    member: Box<dyn Statement + 'c>,
}

impl<'c> NodeWriter<'c> {
    /// A writer in `tx`.
    ///
    /// # Errors
    /// The store's errors.
    pub fn new(tx: &'c dyn Tx) -> Result<Self> {
        Ok(Self {
            node: tx.prepare_insert(
                "INSERT INTO summary_nodes (tree_id, parent_id, level, scope, source_id, text, summarizer, model, input_sha256, leaf_count, vector)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
            )?,
            member: tx.prepare(
                "INSERT INTO summary_members (node_id, chunk_id) VALUES (?1, ?2) ON CONFLICT DO NOTHING",
            )?,
        })
    }

    /// Writes a node; returns its id.
    ///
    /// # Errors
    /// The store's errors.
    pub fn node(&mut self, node: &NodeRow<'_>) -> Result<i64> {
        let blob: Vec<u8> = node.vector.iter().flat_map(|x| x.to_le_bytes()).collect();
        self.node.insert(args![
            node.tree_id,
            node.parent_id,
            node.level,
            node.scope,
            node.source_id,
            node.text,
            node.summarizer,
            node.model,
            node.input_sha256,
            node.leaf_count,
            blob.as_slice()
        ])
    }

    /// Makes a window a direct member of a node.
    ///
    /// # Errors
    /// The store's errors.
    pub fn member(&mut self, node_id: i64, chunk_id: i64) -> Result<()> {
        self.member.write(args![node_id, chunk_id])
    }
}

/// Caches the model's summaries: `(input sha256, text, input tokens, output tokens)`.
///
/// # Errors
/// The store's errors.
pub fn cache_texts(
    tx: &dyn Tx,
    summarizer: &str,
    model: Option<&str>,
    fingerprint: &str,
    rows: &[(String, String, u64, u64)],
    now: i64,
) -> Result<()> {
    let mut stmt = tx.prepare(
        "INSERT INTO summary_cache (input_sha256, summarizer, model, prompt_fingerprint, text, input_tokens, output_tokens, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
         ON CONFLICT (input_sha256, summarizer, model, prompt_fingerprint) DO UPDATE SET text = excluded.text,
           input_tokens = excluded.input_tokens, output_tokens = excluded.output_tokens, created_at = excluded.created_at",
    )?;
    for (sha, text, input, output) in rows {
        stmt.write(args![
            sha,
            summarizer,
            model,
            fingerprint,
            text,
            *input,
            *output,
            now
        ])?;
    }
    Ok(())
}

/// The newest tree's id and build time, if the workspace holds one (one indexed read).
///
/// # Errors
/// The store's errors.
pub fn newest(tx: &dyn Tx) -> Result<Option<(i64, i64)>> {
    tx.optional(
        "SELECT id, built_at FROM summary_trees ORDER BY id DESC LIMIT 1",
        &[],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
}

/// A tree's snapshot and the vector family of its nodes.
///
/// # Errors
/// The store's errors.
pub fn tree_head(tx: &dyn Tx, tree_id: i64) -> Result<Option<(i64, FamilySpec)>> {
    tx.optional(
        "SELECT t.snapshot_id, f.provider, f.model, f.dimension, f.representation, f.normalization, f.quantization, f.metric
         FROM summary_trees t JOIN vector_families f ON f.id = t.family_id WHERE t.id = ?1",
        args![tree_id],
        |r| {
            Ok((
                r.get::<i64>(0)?,
                FamilySpec {
                    provider: r.get(1)?,
                    model: r.get(2)?,
                    dimension: r.get(3)?,
                    representation: r.get(4)?,
                    normalization: r.get(5)?,
                    quantization: r.get(6)?,
                    metric: r.get(7)?,
                },
            ))
        },
    )
}

/// A stored node.
pub struct StoredNode {
    /// `summary_nodes.id`.
    pub id: i64,
    /// Its parent.
    pub parent_id: Option<i64>,
    /// 1 above the windows.
    pub level: u32,
    /// `document` or `corpus`.
    pub scope: String,
    /// The summary.
    pub text: String,
    /// Who wrote it.
    pub summarizer: String,
    /// The model, when a model wrote it.
    pub model: Option<String>,
    /// Windows under it.
    pub leaf_count: usize,
    /// Its vector.
    pub vector: Vec<f32>,
}

/// A tree's nodes by level and id.
///
/// # Errors
/// The store's errors.
pub fn tree_nodes(tx: &dyn Tx, tree_id: i64) -> Result<Vec<StoredNode>> {
    tx.rows(
        "SELECT id, parent_id, level, scope, text, summarizer, model, leaf_count, vector FROM summary_nodes WHERE tree_id = ?1 ORDER BY level, id",
        args![tree_id],
        |r| {
            let blob: Vec<u8> = r.get(8)?;
            Ok(StoredNode {
                id: r.get(0)?,
                parent_id: r.get(1)?,
                level: u32::try_from(r.get::<i64>(2)?).unwrap_or_default(),
                scope: r.get(3)?,
                text: r.get(4)?,
                summarizer: r.get(5)?,
                model: r.get(6)?,
                leaf_count: r.get(7)?,
                vector: crate::vector::records::from_blob(&blob),
            })
        },
    )
}

/// `(node id, chunk id)` of a tree's direct window members.
///
/// # Errors
/// The store's errors.
pub fn tree_members(tx: &dyn Tx, tree_id: i64) -> Result<Vec<(i64, i64)>> {
    tx.rows(
        "SELECT m.node_id, m.chunk_id FROM summary_members m JOIN summary_nodes n ON n.id = m.node_id WHERE n.tree_id = ?1 ORDER BY m.node_id, m.chunk_id",
        args![tree_id],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
}

/// Deletes every summary tree with its nodes and members (the cache stays).
///
/// # Errors
/// The store's errors.
pub fn delete_trees(tx: &dyn Tx) -> Result<()> {
    for sql in [
        "DELETE FROM summary_members",
        "UPDATE summary_nodes SET parent_id = NULL",
        "DELETE FROM summary_nodes",
        "DELETE FROM summary_trees",
    ] {
        tx.execute(sql, &[])?;
    }
    Ok(())
}

/// Erasure of an original takes what was derived from it: a tree summarising any window of the
/// revision is deleted whole (a summary above the window may repeat its words), and so are the
/// model's cached summaries of that tree. Returns the trees deleted.
///
/// # Errors
/// The store's errors.
pub fn erase_derived(tx: &dyn Tx, revision_id: i64) -> Result<usize> {
    let trees: Vec<i64> = tx.rows(
        "SELECT DISTINCT n.tree_id FROM summary_members m JOIN summary_nodes n ON n.id = m.node_id
         JOIN chunks c ON c.id = m.chunk_id JOIN extractions e ON e.id = c.extraction_id
         WHERE e.revision_id = ?1",
        args![revision_id],
        |r| r.get(0),
    )?;
    if trees.is_empty() {
        return Ok(0);
    }
    tx.execute(
        "DELETE FROM summary_cache WHERE input_sha256 IN (SELECT input_sha256 FROM summary_nodes)",
        &[],
    )?;
    delete_trees(tx)?;
    Ok(trees.len())
}

/// Windows about to be purged leave the tree's members first (the tree's other windows still
/// answer).
///
/// # Errors
/// The store's errors.
pub fn forget_purged(tx: &dyn Tx, extraction_ids_sql: &str) -> Result<()> {
    tx.execute(
        &format!(
            "DELETE FROM summary_members WHERE chunk_id IN (SELECT id FROM chunks WHERE extraction_id IN ({extraction_ids_sql}))"
        ),
        &[],
    )?;
    Ok(())
}

/// Whether a summary tree has a window of this source among its members.
///
/// # Errors
/// The store's errors.
pub fn summarises_source(tx: &dyn Tx, source_id: i64) -> Result<bool> {
    tx.value(
        "SELECT EXISTS (SELECT 1 FROM summary_members m JOIN chunks c ON c.id = m.chunk_id
         JOIN extractions e ON e.id = c.extraction_id JOIN revisions r ON r.id = e.revision_id
         WHERE r.source_id = ?1)",
        args![source_id],
    )
}

/// How many summary trees the workspace holds.
///
/// # Errors
/// The store's errors.
pub fn tree_count(tx: &dyn Tx) -> Result<usize> {
    tx.value("SELECT COUNT(*) FROM summary_trees", &[])
}
