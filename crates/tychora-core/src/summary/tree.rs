//! The newest summary tree as a query reads it, and the summary channel's search over it.
//!
//! A query scores every node's centroid (of the windows under it) against the query vector (an exact scan: a tree
//! has about half as many nodes as windows), and each of the best nodes brings its children's best
//! windows — one per child, among those the pinned snapshot holds and the eligibility admits,
//! ranked by their own similarity to the query. A node above many windows is descended through its
//! best child nodes instead of scanning everything under it.

use std::collections::HashMap;
use std::sync::Arc;

use super::cluster::dot;
use crate::engine::Engine;
use crate::error::Result;
use crate::store::summaries;
use crate::store::tx::Tx;
use crate::vector::index::unit;
use crate::vector::{Eligible, FamilySpec, VectorSearch};

/// A node as a query sees it.
#[derive(Debug)]
pub(crate) struct LoadedNode {
    pub id: i64,
    pub level: u32,
    pub scope: String,
    pub text: String,
    pub summarizer: String,
    pub model: Option<String>,
    pub leaf_count: usize,
    vector: Vec<f32>,
    /// Windows directly under it.
    members: Vec<u64>,
    /// Nodes directly under it, and the node above it.
    children: Vec<usize>,
    parent: Option<usize>,
}

/// The newest tree.
#[derive(Debug)]
pub(crate) struct LoadedTree {
    /// The snapshot it was built from.
    pub snapshot_id: i64,
    pub spec: FamilySpec,
    pub nodes: Vec<LoadedNode>,
    /// The node holding each window directly.
    holder: HashMap<u64, usize>,
}

/// A node the channel found, with the windows it brings (chunk id, similarity), best first.
#[derive(Debug, Clone)]
pub(crate) struct NodeHit {
    pub node: usize,
    pub score: f32,
    pub windows: Vec<(u64, f32)>,
}

/// A node scanned through its windows when at most this many lie under it; above, through its
/// best child nodes.
const LEAF_SCAN: usize = 256;
/// Child nodes followed from a node above [`LEAF_SCAN`] windows.
const BEAM: usize = 2;

/// The newest tree, loaded once per tree and then shared.
///
/// # Errors
/// SQLite errors.
pub(crate) fn newest(engine: &Engine, conn: &dyn Tx) -> Result<Option<Arc<LoadedTree>>> {
    let Some(key) = summaries::newest(conn)? else {
        return Ok(None);
    };
    if let Some(held) = engine.cached_summary_tree(key)
        && let Ok(tree) = held.downcast::<LoadedTree>()
    {
        return Ok(Some(tree));
    }
    let Some(tree) = load(conn, key.0)? else {
        return Ok(None);
    };
    let tree = Arc::new(tree);
    engine.cache_summary_tree(
        key,
        Arc::clone(&tree) as Arc<dyn std::any::Any + Send + Sync>,
    );
    Ok(Some(tree))
}

fn load(conn: &dyn Tx, id: i64) -> Result<Option<LoadedTree>> {
    let Some((snapshot_id, spec)) = summaries::tree_head(conn, id)? else {
        return Ok(None);
    };
    let rows: Vec<(i64, Option<i64>, LoadedNode)> = summaries::tree_nodes(conn, id)?
        .into_iter()
        .map(|r| {
            (
                r.id,
                r.parent_id,
                LoadedNode {
                    id: r.id,
                    level: r.level,
                    scope: r.scope,
                    text: r.text,
                    summarizer: r.summarizer,
                    model: r.model,
                    leaf_count: r.leaf_count,
                    vector: r.vector,
                    members: Vec::new(),
                    children: Vec::new(),
                    parent: None,
                },
            )
        })
        .collect();
    let position: HashMap<i64, usize> = rows.iter().enumerate().map(|(i, r)| (r.0, i)).collect();
    let parents: Vec<Option<usize>> = rows
        .iter()
        .map(|r| r.1.and_then(|p| position.get(&p).copied()))
        .collect();
    let mut nodes: Vec<LoadedNode> = rows.into_iter().map(|r| r.2).collect();
    for (i, parent) in parents.iter().enumerate() {
        if let Some(p) = parent {
            nodes[*p].children.push(i);
        }
        nodes[i].parent = *parent;
    }
    let mut holder = HashMap::new();
    for (node, chunk) in summaries::tree_members(conn, id)? {
        if let (Some(&n), Ok(chunk)) = (position.get(&node), u64::try_from(chunk)) {
            nodes[n].members.push(chunk);
            holder.insert(chunk, n);
        }
    }
    Ok(Some(LoadedTree {
        snapshot_id,
        spec,
        nodes,
        holder,
    }))
}

impl LoadedTree {
    /// The node holding a window directly (a child hit's parent context).
    pub(crate) fn holder_of(&self, chunk: u64) -> Option<usize> {
        self.holder.get(&chunk).copied()
    }

    /// Whether `chunk` lies anywhere under `node`.
    pub(crate) fn holds(&self, node: usize, chunk: u64) -> bool {
        // Walk up from the window's holder; the tree is shallow (log of its size).
        let mut at = self.holder_of(chunk);
        while let Some(n) = at {
            if n == node {
                return true;
            }
            at = self.nodes[n].parent;
        }
        false
    }

    /// The best `top` nodes for `query` that bring at least one admitted window, each with its best
    /// `per_node` windows.
    ///
    /// # Errors
    /// Vector reads of a graph generation.
    pub(crate) fn search(
        &self,
        query: &[f32],
        index: &dyn VectorSearch,
        eligible: &Eligible<'_>,
        top: usize,
        per_node: usize,
    ) -> Result<Vec<NodeHit>> {
        let q = unit(query);
        if self
            .nodes
            .first()
            .is_some_and(|n| n.vector.len() != q.len())
        {
            return Ok(Vec::new());
        }
        let scores: Vec<f32> = self.nodes.iter().map(|n| dot(&n.vector, &q)).collect();
        let mut order: Vec<usize> = (0..self.nodes.len()).collect();
        order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(a.cmp(&b)));
        let scan = Scan {
            tree: self,
            q: &q,
            scores: &scores,
            index,
            eligible,
        };
        let mut hits = Vec::new();
        // Nodes whose windows are all outside the snapshot or the filter bring nothing: look a
        // little further down the order, not through the whole tree.
        for &n in order.iter().take(top * 4 + 16) {
            let windows = scan.brings(n, per_node)?;
            if windows.is_empty() {
                continue;
            }
            hits.push(NodeHit {
                node: n,
                score: scores[n],
                windows,
            });
            if hits.len() == top {
                break;
            }
        }
        Ok(hits)
    }
}

/// One query's walk over the tree: the query, every node's score, the pinned generation and the
/// filter.
struct Scan<'a> {
    tree: &'a LoadedTree,
    q: &'a [f32],
    scores: &'a [f32],
    index: &'a dyn VectorSearch,
    eligible: &'a Eligible<'a>,
}

impl Scan<'_> {
    /// The windows a node brings: each window directly under it, and the best window under each
    /// of its child nodes — one per part of what the summary covers, so that a broad match brings
    /// the breadth of its cluster rather than the nearest windows the text channel finds anyway.
    fn brings(&self, n: usize, per_node: usize) -> Result<Vec<(u64, f32)>> {
        let mut out = Vec::new();
        self.score_members(n, &mut out)?;
        for &c in &self.tree.nodes[n].children {
            let mut under = Vec::new();
            self.gather(c, &mut under)?;
            if let Some(best) = under
                .into_iter()
                .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)))
            {
                out.push(best);
            }
        }
        out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        out.dedup_by_key(|w| w.0);
        out.truncate(per_node);
        Ok(out)
    }

    /// The windows directly under `n` that the generation holds and the filter admits, scored.
    fn score_members(&self, n: usize, out: &mut Vec<(u64, f32)>) -> Result<()> {
        let members = &self.tree.nodes[n].members;
        // One read for the node's windows (one request on a cluster), scored in member order.
        let vectors = self.index.vectors_of(members, self.eligible)?;
        for chunk in members {
            if let Some(v) = vectors.get(chunk) {
                out.push((*chunk, dot(v, self.q)));
            }
        }
        Ok(())
    }

    /// Every window under `n`, scored; below a node above [`LEAF_SCAN`] windows, only through its
    /// [`BEAM`] best child nodes.
    fn gather(&self, n: usize, out: &mut Vec<(u64, f32)>) -> Result<()> {
        let node = &self.tree.nodes[n];
        self.score_members(n, out)?;
        let mut children = node.children.clone();
        if node.leaf_count > LEAF_SCAN {
            children.sort_by(|&a, &b| self.scores[b].total_cmp(&self.scores[a]).then(a.cmp(&b)));
            children.truncate(BEAM);
        }
        for c in children {
            self.gather(c, out)?;
        }
        Ok(())
    }
}
