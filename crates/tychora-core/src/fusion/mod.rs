//! Fusion of the channels' ranked lists.
//!
//! Weighted reciprocal-rank fusion, `score(owner) = Σ_c weight_c / (k + rank_c(owner))`, crosses
//! channels by rank: BM25 scores, exact matches and graph hops live on different scales. Each
//! channel's list is first consolidated to one vote per evidence owner (its best rank).
//!
//! Ranks throw away how sure a channel is. Where two channels score the same content on scales that
//! can be normalised (the lexical channel's BM25 and the text channel's cosine), their lists carry
//! their scores and **blend** first: each list's scores are min-max normalised between its best
//! and its [`NORM_DEPTH`]-th hit (clamped to [0, 1]; an owner a list lacks counts 0), summed with the channels' weights as shares (a convex combination, the
//! rule Bruch et al., "An Analysis of Fusion Functions for Hybrid Retrieval", TOIS 2023, found to
//! beat RRF in and out of domain), and the blended ranking then enters RRF with the channels' summed
//! weight. With paragraph-length queries the text channel is often far surer than BM25, and RRF
//! could not see it (hybrid 0.018 under the text channel alone on the paragraph dev set; blended,
//! within 0.003 of it and above the better channel everywhere else: bench/results/fusion-rules.md).

use std::collections::{HashMap, HashSet};
use std::hash::Hash;

/// Hits of a blended list whose scores set its normalisation (its best and its `NORM_DEPTH`-th
/// score): fixed, and no deeper than the fewest hits a channel is asked for, so that asking for
/// more results (a deeper list) does not reorder the top.
pub const NORM_DEPTH: usize = 30;

/// One channel's ranked candidates (best first). Repeated owners are consolidated to their best rank.
#[derive(Debug, Clone)]
pub struct ChannelList<O> {
    /// Channel name.
    pub channel: &'static str,
    /// Fusion weight.
    pub weight: f64,
    /// Owners, best first.
    pub owners: Vec<O>,
    /// The channel's own score for each entry of `owners` (higher is better), for a list that
    /// blends with the other scored lists; `None` fuses by rank only.
    pub scores: Option<Vec<f64>>,
}

/// A fused owner with its score and 1-based rank per channel.
#[derive(Debug, Clone, PartialEq)]
pub struct Fused<O> {
    /// The owner.
    pub owner: O,
    /// Σ weight / (k + rank), the blended lists counting once at their blended rank.
    pub score: f64,
    /// `(channel, rank)` for each channel that found it (its own rank in its own list).
    pub ranks: Vec<(&'static str, usize)>,
}

/// Each channel's share of the blend, for the lists that blend: those with scores and a positive
/// weight, when there are two or more of them (one alone fuses by rank, as before blending).
#[must_use]
pub fn blend_shares<O>(lists: &[ChannelList<O>]) -> Vec<(&'static str, f64)> {
    let mut scored: Vec<(&'static str, f64)> = lists
        .iter()
        .filter(|l| blends(l))
        .map(|l| (l.channel, l.weight))
        .collect();
    if scored.len() < 2 {
        return Vec::new();
    }
    // Summed in channel-name order, so the shares do not depend on the order channels ran in.
    scored.sort_unstable_by(|a, b| a.0.cmp(b.0));
    let total: f64 = scored.iter().map(|s| s.1).sum();
    scored.into_iter().map(|(c, w)| (c, w / total)).collect()
}

/// A list that blends: scored (one score per entry), weighted above 0, and not empty (an empty
/// list would hand the other channel both weights).
fn blends<O>(list: &ChannelList<O>) -> bool {
    list.weight > 0.0
        && !list.owners.is_empty()
        && list
            .scores
            .as_ref()
            .is_some_and(|s| s.len() == list.owners.len())
}

/// Fuses channel lists. The result is sorted by score, then by best rank, then by owner, so it is
/// independent of the order in which channels are given.
#[must_use]
pub fn rrf<O: Clone + Eq + Hash + Ord>(lists: &[ChannelList<O>], k: f64) -> Vec<Fused<O>> {
    let shares = blend_shares(lists);
    let mut fused: HashMap<O, Entry<O>> = HashMap::new();
    for list in lists {
        let blended = shares.iter().any(|(c, _)| *c == list.channel);
        for (rank, owner) in consolidated(&list.owners).into_iter().enumerate() {
            let rank = rank + 1;
            let e = entry(&mut fused, owner);
            e.0.ranks.push((list.channel, rank));
            if !blended {
                #[allow(clippy::cast_precision_loss)] // ranks are small
                e.1.push((list.channel, list.weight / (k + rank as f64)));
            }
        }
    }
    if !shares.is_empty() {
        let mut weights: Vec<(&'static str, f64)> = lists
            .iter()
            .filter(|l| blends(l))
            .map(|l| (l.channel, l.weight))
            .collect();
        weights.sort_unstable_by(|a, b| a.0.cmp(b.0));
        let weight: f64 = weights.iter().map(|w| w.1).sum();
        for (rank, owner) in blend(lists, &shares).into_iter().enumerate() {
            #[allow(clippy::cast_precision_loss)]
            entry(&mut fused, &owner)
                .1
                .push(("", weight / (k + (rank + 1) as f64)));
        }
    }
    let mut out: Vec<Fused<O>> = fused
        .into_values()
        .map(|(mut f, mut parts)| {
            // Sum in channel-name order: float addition is not associative, and the result must
            // not depend on the order the channels ran in.
            f.ranks.sort_unstable();
            parts.sort_unstable_by(|a, b| a.0.cmp(b.0));
            f.score = parts.iter().map(|(_, p)| p).sum();
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

/// Per owner: its fused entry and what each channel (or the blend, once) adds to its score.
type Entry<O> = (Fused<O>, Vec<(&'static str, f64)>);

fn entry<'m, O: Clone + Eq + Hash>(
    fused: &'m mut HashMap<O, Entry<O>>,
    owner: &O,
) -> &'m mut Entry<O> {
    fused.entry(owner.clone()).or_insert_with(|| {
        (
            Fused {
                owner: owner.clone(),
                score: 0.0,
                ranks: Vec::new(),
            },
            Vec::new(),
        )
    })
}

/// Each owner once, at its first (best) place.
fn consolidated<O: Eq + Hash>(owners: &[O]) -> Vec<&O> {
    let mut seen = HashSet::new();
    owners.iter().filter(|o| seen.insert(*o)).collect()
}

/// Per owner in the blend: each channel's share of its normalised score, and its best own rank.
type Blended = (Vec<(&'static str, f64)>, usize);

/// The blended ranking of the scored lists' owners: `Σ share_c · norm_c(owner)`, best first. A
/// channel's scores are min-max normalised between its best and its `NORM_DEPTH`-th hit (hits, not
/// owners: a channel returns at least that many whatever the limit, however many owners they
/// hold) and clamped to [0, 1], so an owner past the anchor and one the channel did not return
/// count alike, 0, and a deeper list changes nothing above the anchor. A score that is not a
/// number counts 0. Ties go to the better own rank, then the owner.
fn blend<O: Clone + Eq + Hash + Ord>(
    lists: &[ChannelList<O>],
    shares: &[(&'static str, f64)],
) -> Vec<O> {
    let mut blended: HashMap<O, Blended> = HashMap::new();
    for list in lists.iter().filter(|l| blends(l)) {
        let share = shares
            .iter()
            .find(|(c, _)| *c == list.channel)
            .map_or(0.0, |s| s.1);
        let scores = list.scores.as_deref().unwrap_or_default();
        let finite = || scores.iter().copied().filter(|s| s.is_finite());
        let top = finite().fold(f64::NEG_INFINITY, f64::max);
        let anchor = scores
            .iter()
            .take(NORM_DEPTH)
            .copied()
            .filter(|s| s.is_finite())
            .fold(f64::INFINITY, f64::min);
        let norm = |s: f64| {
            if !s.is_finite() {
                0.0
            } else if top > anchor {
                ((s - anchor) / (top - anchor)).clamp(0.0, 1.0)
            } else if s >= top {
                1.0
            } else {
                0.0
            }
        };
        let mut seen = HashSet::new();
        let mut rank = 0;
        for (owner, &score) in list.owners.iter().zip(scores) {
            if !seen.insert(owner) {
                continue;
            }
            rank += 1;
            let entry = blended
                .entry(owner.clone())
                .or_insert_with(|| (Vec::new(), usize::MAX));
            entry.0.push((list.channel, share * norm(score)));
            entry.1 = entry.1.min(rank);
        }
    }
    let mut ranked: Vec<(O, f64, usize)> = blended
        .into_iter()
        .map(|(owner, (mut parts, best))| {
            parts.sort_unstable_by(|a, b| a.0.cmp(b.0));
            (owner, parts.iter().map(|(_, p)| p).sum(), best)
        })
        .collect();
    ranked.sort_by(|a, b| {
        b.1.total_cmp(&a.1)
            .then_with(|| a.2.cmp(&b.2))
            .then_with(|| a.0.cmp(&b.0))
    });
    ranked.into_iter().map(|(o, _, _)| o).collect()
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
            scores: None,
        };
        let exact = ChannelList {
            channel: "exact",
            weight: 2.0,
            owners: vec!["c"],
            scores: None,
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

    /// Deterministic pseudo-random numbers (a small LCG) instead of a proptest dependency.
    fn lcg(mut seed: u64) -> impl FnMut() -> u64 {
        move || {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            seed >> 33
        }
    }

    #[test]
    fn independent_of_channel_order() {
        let mut next = lcg(7);
        for _ in 0..200 {
            let lists: Vec<ChannelList<u64>> = ["a", "b", "c"]
                .iter()
                .enumerate()
                .map(|(i, &name)| ChannelList {
                    channel: name,
                    weight: 1.0 + i as f64 / 2.0,
                    owners: (0..next() % 12).map(|_| next() % 10).collect(),
                    scores: None,
                })
                .collect();
            let forward = rrf(&lists, 60.0);
            let mut reversed = lists.clone();
            reversed.reverse();
            assert_eq!(forward, rrf(&reversed, 60.0));
        }
    }

    fn scored(
        channel: &'static str,
        weight: f64,
        hits: &[(&'static str, f64)],
    ) -> ChannelList<&'static str> {
        ChannelList {
            channel,
            weight,
            owners: hits.iter().map(|h| h.0).collect(),
            scores: Some(hits.iter().map(|h| h.1).collect()),
        }
    }

    fn unscored(
        channel: &'static str,
        weight: f64,
        owners: Vec<&'static str>,
    ) -> ChannelList<&'static str> {
        ChannelList {
            channel,
            weight,
            owners,
            scores: None,
        }
    }

    #[test]
    fn blended_channels_rank_by_how_sure_each_is() {
        // Lexical barely prefers a over b; text is sure of b. By rank alone a and b tie (1st and
        // 2nd each) and the tie goes to a; blended, b leads.
        let lexical = scored("lexical", 1.0, &[("a", 10.0), ("b", 9.8), ("c", 2.0)]);
        let text = scored("text", 1.0, &[("b", 0.9), ("a", 0.3), ("c", 0.2)]);
        let unblended: Vec<ChannelList<&str>> = [&lexical, &text]
            .iter()
            .map(|l| ChannelList {
                scores: None,
                ..(*l).clone()
            })
            .collect();
        assert_eq!(rrf(&unblended, 60.0)[0].owner, "a");
        let fused = rrf(&[lexical, text], 60.0);
        assert_eq!(
            fused.iter().map(|f| f.owner).collect::<Vec<_>>(),
            ["b", "a", "c"]
        );
        // The blend counts once, at its rank, with the channels' summed weight; each channel's
        // own rank stays on the owner for --explain.
        assert!((fused[0].score - 2.0 / 61.0).abs() < 1e-12);
        assert_eq!(fused[0].ranks, vec![("lexical", 2), ("text", 1)]);
    }

    #[test]
    fn one_scored_list_alone_fuses_by_rank() {
        let lexical = scored("lexical", 1.0, &[("a", 3.0), ("b", 2.0)]);
        let exact = unscored("exact", 2.0, vec!["b"]);
        assert!(blend_shares(&[lexical.clone(), exact.clone()]).is_empty());
        let by_rank = ChannelList {
            scores: None,
            ..lexical.clone()
        };
        assert_eq!(
            rrf(&[lexical, exact.clone()], 60.0),
            rrf(&[by_rank, exact], 60.0)
        );
        // A weight of 0 (the text channel when its model cannot read the query) leaves it out.
        let text = scored("text", 0.0, &[("c", 0.9)]);
        let lexical = scored("lexical", 1.0, &[("a", 3.0)]);
        assert!(blend_shares(&[lexical, text]).is_empty());
    }

    #[test]
    fn shares_follow_the_weights() {
        let shares = blend_shares(&[
            scored("lexical", 1.0, &[("a", 1.0)]),
            scored("text", 1.5, &[("a", 0.5)]),
        ]);
        assert_eq!(shares.len(), 2);
        assert!((shares[0].1 - 0.4).abs() < 1e-12 && (shares[1].1 - 0.6).abs() < 1e-12);
    }

    #[test]
    fn owners_past_the_normalisation_depth_do_not_reorder_the_top() {
        let lexical: Vec<(String, f64)> = (0..NORM_DEPTH)
            .map(|i| (format!("l{i:03}"), 30.0 - i as f64))
            .collect();
        let text: Vec<(String, f64)> = (0..NORM_DEPTH)
            .map(|i| {
                // Every third owner of the text channel is one lexical did not return.
                let owner = if i % 3 == 0 {
                    format!("t{i:03}")
                } else {
                    format!("l{:03}", (i * 7) % NORM_DEPTH)
                };
                (owner, 0.9 - i as f64 / 100.0)
            })
            .collect();
        let list = |channel, hits: &[(String, f64)]| ChannelList {
            channel,
            weight: 1.0,
            owners: hits.iter().map(|h| h.0.clone()).collect(),
            scores: Some(hits.iter().map(|h| h.1).collect()),
        };
        let shallow = rrf(&[list("lexical", &lexical), list("text", &text)], 60.0);
        let mut deeper = lexical.clone();
        deeper.extend((0..200).map(|i| (format!("x{i:03}"), -f64::from(i))));
        let deep = rrf(&[list("lexical", &deeper), list("text", &text)], 60.0);
        let top = |f: &[Fused<String>]| {
            f.iter()
                .take(10)
                .map(|f| f.owner.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(top(&shallow), top(&deep));
    }

    #[test]
    fn blended_fusion_is_independent_of_channel_order() {
        let mut next = lcg(11);
        for _ in 0..200 {
            let lists: Vec<ChannelList<u64>> = ["lexical", "text", "exact"]
                .iter()
                .enumerate()
                .map(|(i, &name)| {
                    let owners: Vec<u64> = (0..next() % 40).map(|_| next() % 50).collect();
                    let mut scores: Vec<f64> = owners
                        .iter()
                        .map(|_| (next() % 1000) as f64 / 100.0)
                        .collect();
                    scores.sort_by(|a, b| b.total_cmp(a));
                    ChannelList {
                        channel: name,
                        weight: 1.0 + i as f64 / 2.0,
                        owners,
                        scores: (name != "exact").then_some(scores),
                    }
                })
                .collect();
            let forward = rrf(&lists, 60.0);
            let mut reversed = lists.clone();
            reversed.reverse();
            assert_eq!(forward, rrf(&reversed, 60.0));
        }
    }

    #[test]
    fn an_empty_scored_list_does_not_blend() {
        // A lexical channel that matched nothing must not hand its weight to the text channel.
        let lexical = scored("lexical", 1.0, &[]);
        let text = scored("text", 1.25, &[("a", 0.9), ("b", 0.8)]);
        let exact = unscored("exact", 2.0, vec!["b"]);
        assert!(blend_shares(&[lexical.clone(), text.clone()]).is_empty());
        let fused = rrf(&[lexical, text, exact], 60.0);
        assert_eq!(fused[0].owner, "b");
        assert!((fused[0].score - (2.0 / 61.0 + 1.25 / 62.0)).abs() < 1e-12);
    }

    #[test]
    fn scores_that_are_not_numbers_count_nothing() {
        let lexical = scored(
            "lexical",
            1.0,
            &[
                ("a", f64::NAN),
                ("b", 5.0),
                ("c", 1.0),
                ("d", f64::INFINITY),
            ],
        );
        let text = scored("text", 1.0, &[("c", 0.9), ("b", 0.5), ("a", 0.1)]);
        let fused = rrf(&[lexical.clone(), text.clone()], 60.0);
        assert!(fused.iter().all(|f| f.score.is_finite()));
        // b: 0.5 + 0.5·(0.4/0.8) = 0.75; c: 0 + 0.5 = 0.5; a and d: 0.
        assert_eq!(
            fused.iter().map(|f| f.owner).collect::<Vec<_>>()[..2],
            ["b", "c"]
        );
        assert_eq!(fused, rrf(&[text, lexical], 60.0));
    }
}
