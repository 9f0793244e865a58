//! Weighted reciprocal-rank fusion: `score(owner) = Σ_c weight_c / (k + rank_c(owner))`.
//!
//! Ranks, not scores, cross channels: BM25 scores and exact matches live on different scales.
//! Each channel's list is first consolidated to one vote per evidence owner (its best rank).

use std::collections::HashMap;
use std::hash::Hash;

/// One channel's ranked candidates (best first). Repeated owners are consolidated to their best rank.
#[derive(Debug, Clone)]
pub struct ChannelList<O> {
    /// Channel name.
    pub channel: &'static str,
    /// Fusion weight.
    pub weight: f64,
    /// Owners, best first.
    pub owners: Vec<O>,
}

/// A fused owner with its score and 1-based rank per channel.
#[derive(Debug, Clone, PartialEq)]
pub struct Fused<O> {
    /// The owner.
    pub owner: O,
    /// Σ weight / (k + rank).
    pub score: f64,
    /// `(channel, rank)` for each channel that found it.
    pub ranks: Vec<(&'static str, usize)>,
}

/// Fuses channel lists. The result is sorted by score, then by best rank, then by owner, so it is
/// independent of the order in which channels are given.
#[must_use]
pub fn rrf<O: Clone + Eq + Hash + Ord>(lists: &[ChannelList<O>], k: f64) -> Vec<Fused<O>> {
    // Per owner: its fused entry and the weight of each channel that found it.
    type Entry<O> = (Fused<O>, Vec<(&'static str, f64)>);
    let mut fused: HashMap<O, Entry<O>> = HashMap::new();
    for list in lists {
        let mut rank = 0;
        let mut seen = std::collections::HashSet::new();
        for owner in &list.owners {
            if !seen.insert(owner) {
                continue;
            }
            rank += 1;
            let entry = fused.entry(owner.clone()).or_insert_with(|| {
                (
                    Fused {
                        owner: owner.clone(),
                        score: 0.0,
                        ranks: Vec::new(),
                    },
                    Vec::new(),
                )
            });
            entry.0.ranks.push((list.channel, rank));
            entry.1.push((list.channel, list.weight));
        }
    }
    let mut out: Vec<Fused<O>> = fused
        .into_values()
        .map(|(mut f, mut weights)| {
            // Sum in channel-name order: float addition is not associative, and the result must
            // not depend on the order the channels ran in.
            f.ranks.sort_unstable();
            weights.sort_unstable_by(|a, b| a.0.cmp(b.0));
            #[allow(clippy::cast_precision_loss)] // ranks are small
            let score = f
                .ranks
                .iter()
                .zip(&weights)
                .map(|(&(_, rank), &(_, w))| w / (k + rank as f64))
                .sum();
            f.score = score;
            f
        })
        .collect();
    out.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| best_rank(a).cmp(&best_rank(b)))
            .then_with(|| a.owner.cmp(&b.owner))
    });
    out
}

fn best_rank<O>(f: &Fused<O>) -> usize {
    f.ranks.iter().map(|r| r.1).min().unwrap_or(usize::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weighted_sum_with_owner_consolidation() {
        let lexical = ChannelList {
            channel: "lexical",
            weight: 1.0,
            owners: vec!["a", "b", "a", "c"],
        };
        let exact = ChannelList {
            channel: "exact",
            weight: 2.0,
            owners: vec!["c"],
        };
        let fused = rrf(&[lexical, exact], 60.0);
        assert_eq!(fused[0].owner, "c");
        // c: 2/61 + 1/63 (rank 3 after consolidating the repeated "a")
        assert!((fused[0].score - (2.0 / 61.0 + 1.0 / 63.0)).abs() < 1e-12);
        assert_eq!(fused[0].ranks, vec![("exact", 1), ("lexical", 3)]);
        assert_eq!(
            fused.iter().map(|f| f.owner).collect::<Vec<_>>(),
            ["c", "a", "b"]
        );
    }

    #[test]
    fn independent_of_channel_order() {
        // Deterministic pseudo-random lists (a small LCG) instead of a proptest dependency.
        let mut seed = 7u64;
        let mut next = || {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            seed >> 33
        };
        for _ in 0..200 {
            let lists: Vec<ChannelList<u64>> = ["a", "b", "c"]
                .iter()
                .enumerate()
                .map(|(i, &name)| ChannelList {
                    channel: name,
                    weight: 1.0 + i as f64 / 2.0,
                    owners: (0..next() % 12).map(|_| next() % 10).collect(),
                })
                .collect();
            let forward = rrf(&lists, 60.0);
            let mut reversed = lists.clone();
            reversed.reverse();
            assert_eq!(forward, rrf(&reversed, 60.0));
        }
    }
}
