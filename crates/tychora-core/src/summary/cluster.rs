//! Recursive clustering of unit vectors into a tree whose leaves hold at most `branching` items.
//!
//! Top-down spherical k-means: the items are split into `k = clamp(⌈n / branching⌉, 2,
//! branching)` clusters by cosine, and each cluster larger than `branching` is split again. The
//! cost is O(n · k · d · iterations) per level and the depth is about log_branching(n), where a
//! bottom-up pass (RAPTOR's UMAP + Gaussian mixture per level) would pay a quadratic merge or a
//! model fit over every window of the corpus at its first level.
//!
//! Written here rather than taken from a clustering crate: the vectors are already unit length in
//! one flat buffer (cosine is one dot product), the tree needs k-means only at small k, and the
//! result must be the same on every machine for the same vectors (a seeded generator, ties broken
//! by position), which `linfa`'s ndarray-based k-means and its random initialisation would make us
//! reimplement around anyway.

/// A cluster tree: a leaf holds item positions, a node holds subtrees (two or more).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Tree {
    Leaf(Vec<usize>),
    Node(Vec<Tree>),
}

/// Lloyd iterations per split (assignments rarely move after ten on window vectors).
const ITERATIONS: usize = 15;
/// Splits nested at most this deep before the rest is cut in order (identical vectors).
const MAX_DEPTH: usize = 24;

/// Clusters `items` (positions into `vectors`, each of `dim` numbers, unit length) into a tree.
pub(crate) fn cluster(vectors: &[f32], dim: usize, items: Vec<usize>, branching: usize) -> Tree {
    let branching = branching.max(2);
    split(vectors, dim, items, branching, 0)
}

fn split(vectors: &[f32], dim: usize, items: Vec<usize>, branching: usize, depth: usize) -> Tree {
    if items.len() <= branching {
        return Tree::Leaf(items);
    }
    let k = items.len().div_ceil(branching).clamp(2, branching);
    let mut groups = if depth >= MAX_DEPTH {
        in_order(&items, k)
    } else {
        kmeans(vectors, dim, &items, k)
    };
    // k-means that cannot separate the items (all the same vector) would recurse forever.
    if groups.len() < 2 {
        groups = in_order(&items, k);
    }
    let children: Vec<Tree> = groups
        .into_iter()
        .map(|group| split(vectors, dim, group, branching, depth + 1))
        .collect();
    Tree::Node(children)
}

/// `items` cut into `k` runs of nearly equal length, in order.
fn in_order(items: &[usize], k: usize) -> Vec<Vec<usize>> {
    let size = items.len().div_ceil(k).max(1);
    items.chunks(size).map(<[usize]>::to_vec).collect()
}

fn row(vectors: &[f32], dim: usize, i: usize) -> &[f32] {
    &vectors[i * dim..(i + 1) * dim]
}

pub(crate) fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// SplitMix64: a small seeded generator, so the same vectors give the same tree.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    #[allow(clippy::cast_precision_loss)]
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Spherical k-means over `items`, seeded by k-means++ (distance 1 − cosine). Returns the
/// non-empty clusters, each in item order.
fn kmeans(vectors: &[f32], dim: usize, items: &[usize], k: usize) -> Vec<Vec<usize>> {
    let mut rng = SplitMix(0x7A3C_u64 ^ (items.len() as u64) ^ ((items[0] as u64) << 20));
    // k-means++ seeding.
    let mut centroids: Vec<Vec<f32>> = Vec::with_capacity(k);
    #[allow(clippy::cast_possible_truncation)]
    let first = items[(rng.next() % items.len() as u64) as usize];
    centroids.push(row(vectors, dim, first).to_vec());
    let mut nearest: Vec<f64> = items
        .iter()
        .map(|&i| f64::from(1.0 - dot(row(vectors, dim, i), &centroids[0])).max(0.0))
        .collect();
    while centroids.len() < k {
        let total: f64 = nearest.iter().map(|d| d * d).sum();
        if total <= f64::EPSILON {
            break;
        }
        let mut target = rng.unit() * total;
        let mut pick = items.len() - 1;
        for (j, d) in nearest.iter().enumerate() {
            target -= d * d;
            if target <= 0.0 {
                pick = j;
                break;
            }
        }
        let centre = row(vectors, dim, items[pick]).to_vec();
        for (j, &i) in items.iter().enumerate() {
            let d = f64::from(1.0 - dot(row(vectors, dim, i), &centre)).max(0.0);
            if d < nearest[j] {
                nearest[j] = d;
            }
        }
        centroids.push(centre);
    }
    let mut assignment = vec![usize::MAX; items.len()];
    for _ in 0..ITERATIONS {
        let mut moved = false;
        for (j, &i) in items.iter().enumerate() {
            let v = row(vectors, dim, i);
            let mut best = (0, f32::NEG_INFINITY);
            for (c, centre) in centroids.iter().enumerate() {
                let s = dot(v, centre);
                if s > best.1 {
                    best = (c, s);
                }
            }
            if assignment[j] != best.0 {
                assignment[j] = best.0;
                moved = true;
            }
        }
        if !moved {
            break;
        }
        // New centroids: the normalised mean of each cluster (an emptied cluster keeps its own).
        let mut sums = vec![vec![0f32; dim]; centroids.len()];
        let mut counts = vec![0usize; centroids.len()];
        for (j, &i) in items.iter().enumerate() {
            let c = assignment[j];
            counts[c] += 1;
            for (s, x) in sums[c].iter_mut().zip(row(vectors, dim, i)) {
                *s += x;
            }
        }
        for (c, sum) in sums.into_iter().enumerate() {
            if counts[c] == 0 {
                continue;
            }
            let norm = sum.iter().map(|x| x * x).sum::<f32>().sqrt();
            if norm > 0.0 {
                centroids[c] = sum.into_iter().map(|x| x / norm).collect();
            }
        }
    }
    let mut groups = vec![Vec::new(); centroids.len()];
    for (j, &i) in items.iter().enumerate() {
        groups[assignment[j]].push(i);
    }
    groups.retain(|g| !g.is_empty());
    groups
}

/// The normalised mean of `items`' vectors.
pub(crate) fn centroid(vectors: &[f32], dim: usize, items: &[usize]) -> Vec<f32> {
    let mut sum = vec![0f32; dim];
    for &i in items {
        for (s, x) in sum.iter_mut().zip(row(vectors, dim, i)) {
            *s += x;
        }
    }
    let norm = sum.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        sum.iter_mut().for_each(|x| *x /= norm);
    }
    sum
}

#[cfg(test)]
mod tests {
    use super::{Tree, cluster};

    fn leaves(tree: &Tree, out: &mut Vec<Vec<usize>>) {
        match tree {
            Tree::Leaf(items) => out.push(items.clone()),
            Tree::Node(children) => children.iter().for_each(|c| leaves(c, out)),
        }
    }

    /// Unit vectors around `centres` (2-d), `per` of each, slightly spread.
    fn blobs(centres: &[(f32, f32)], per: usize) -> Vec<f32> {
        let mut v = Vec::new();
        for &(x, y) in centres {
            for j in 0..per {
                #[allow(clippy::cast_precision_loss)]
                let e = (j as f32) * 0.01;
                let (a, b) = (x + e, y - e);
                let n = (a * a + b * b).sqrt();
                v.extend([a / n, b / n]);
            }
        }
        v
    }

    #[test]
    fn separates_directions_and_bounds_every_leaf() {
        let vectors = blobs(&[(1.0, 0.0), (0.0, 1.0), (-1.0, 0.1)], 4);
        let tree = cluster(&vectors, 2, (0..12).collect(), 4);
        let mut found = Vec::new();
        leaves(&tree, &mut found);
        assert_eq!(found.len(), 3, "{tree:?}");
        for leaf in &found {
            assert!(leaf.len() <= 4);
            // Each leaf is one blob: positions 0-3, 4-7 or 8-11.
            assert!(leaf.iter().all(|&i| i / 4 == leaf[0] / 4), "{leaf:?}");
        }
        // The same vectors give the same tree.
        assert_eq!(tree, cluster(&vectors, 2, (0..12).collect(), 4));
    }

    #[test]
    fn identical_vectors_still_end_in_small_leaves() {
        let vectors = [1.0f32, 0.0].repeat(50);
        let tree = cluster(&vectors, 2, (0..50).collect(), 5);
        let mut found = Vec::new();
        leaves(&tree, &mut found);
        assert!(found.iter().all(|l| l.len() <= 5 && !l.is_empty()));
        assert_eq!(found.iter().map(Vec::len).sum::<usize>(), 50);
    }
}
