//! The offline summariser: a cluster's most central sentences.
//!
//! Sentences come from UAX #29 boundaries (`unicode-segmentation`). Each is a bag of its words
//! weighted by how few of the cluster's texts use them (idf over the children); the cluster is the
//! sum of its sentences; a sentence's centrality is its cosine with that sum. The most central are
//! taken until the token budget is spent, skipping one that mostly repeats a sentence already
//! taken, then put back in reading order. Nothing is paraphrased, so the summary says only what the
//! children say — and it is still derived text, never cited as a quotation.

use std::collections::{HashMap, HashSet};

use unicode_segmentation::UnicodeSegmentation;

/// Shortest sentence considered (words): shorter fragments are headings, labels and table cells.
const MIN_WORDS: usize = 4;
/// Longest sentence kept whole (words); a longer one is cut at this length.
const MAX_WORDS: usize = 60;
/// A candidate sharing more than this share of its words with a taken sentence is skipped.
const OVERLAP: f64 = 0.6;

struct Sentence {
    /// (text index, position in text), for reading order.
    at: (usize, usize),
    text: String,
    words: Vec<String>,
}

fn words(text: &str) -> Vec<String> {
    text.unicode_words()
        .map(str::to_lowercase)
        .filter(|w| w.chars().count() >= 3 && w.chars().any(char::is_alphabetic))
        .collect()
}

/// Markdown and layout marks that open a line (`#`, `-`, `|`, `>`, `*`, digits with a dot) are
/// not part of a sentence.
fn clean(sentence: &str) -> String {
    let joined: Vec<&str> = sentence.split_whitespace().collect();
    // Emphasis marks are layout, not words.
    let mut text = joined.join(" ").replace("**", "").replace("__", "");
    let trimmed = text.trim_start_matches(['#', '-', '*', '>', '|', ' ', '+', '=']);
    text = trimmed.to_string();
    let ws: Vec<&str> = text.split(' ').collect();
    if ws.len() > MAX_WORDS {
        text = format!("{} …", ws[..MAX_WORDS].join(" "));
    }
    text
}

fn sentences(texts: &[&str]) -> Vec<Sentence> {
    let mut out = Vec::new();
    for (t, text) in texts.iter().enumerate() {
        // Blank lines end a sentence too (headings, list items and table rows have no full stop).
        for (p, block) in text
            .split("\n\n")
            .flat_map(|b| b.unicode_sentences().collect::<Vec<_>>())
            .enumerate()
        {
            let text = clean(block);
            let w = words(&text);
            if text.split(' ').count() < MIN_WORDS || w.len() < 2 {
                continue;
            }
            // Table rows and code are not prose: most of their characters are not letters.
            let letters = text.chars().filter(|c| c.is_alphabetic()).count();
            if letters * 2 < text.chars().count() {
                continue;
            }
            out.push(Sentence {
                at: (t, p),
                text,
                words: w,
            });
        }
    }
    out
}

/// The summary of `texts` (a cluster's children, in order) within about `max_tokens` tokens.
pub(crate) fn summarize(texts: &[&str], max_tokens: usize) -> String {
    let candidates = sentences(texts);
    central(texts, &candidates, max_tokens)
}

fn central<'a>(texts: &[&str], candidates: &'a [Sentence], max_tokens: usize) -> String {
    if candidates.is_empty() {
        // Nothing reads as a sentence (tables, code): the opening words of the first child.
        let opening: Vec<&str> = texts
            .iter()
            .flat_map(|t| t.split_whitespace())
            .take(40)
            .collect();
        return opening.join(" ");
    }
    // idf over the children: a word in every child says little about any one sentence.
    let mut df: HashMap<&str, usize> = HashMap::new();
    for t in 0..texts.len() {
        let seen: HashSet<&str> = candidates
            .iter()
            .filter(|s| s.at.0 == t)
            .flat_map(|s| s.words.iter().map(String::as_str))
            .collect();
        for w in seen {
            *df.entry(w).or_default() += 1;
        }
    }
    #[allow(clippy::cast_precision_loss)]
    let n = texts.len() as f64;
    #[allow(clippy::cast_precision_loss)]
    let idf = |w: &str| (1.0 + n / df.get(w).copied().unwrap_or(1) as f64).ln();
    let bag = |s: &'a Sentence| -> HashMap<&'a str, f64> {
        let mut tf: HashMap<&'a str, f64> = HashMap::new();
        for w in &s.words {
            *tf.entry(w.as_str()).or_default() += 1.0;
        }
        tf.into_iter()
            .map(|(w, f)| (w, f * idf(w)))
            .collect::<HashMap<&str, f64>>()
    };
    let bags: Vec<HashMap<&'a str, f64>> = candidates.iter().map(bag).collect();
    let mut centre: HashMap<&str, f64> = HashMap::new();
    for b in &bags {
        let norm = b.values().map(|x| x * x).sum::<f64>().sqrt().max(1e-9);
        for (w, x) in b {
            *centre.entry(w).or_default() += x / norm;
        }
    }
    let centre_norm = centre.values().map(|x| x * x).sum::<f64>().sqrt().max(1e-9);
    let mut scored: Vec<(usize, f64)> = bags
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let norm = b.values().map(|x| x * x).sum::<f64>().sqrt().max(1e-9);
            let dot: f64 = b
                .iter()
                .map(|(w, x)| x * centre.get(w).copied().unwrap_or(0.0))
                .sum();
            (i, dot / (norm * centre_norm))
        })
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut taken: Vec<usize> = Vec::new();
    let mut tokens = 0;
    for (i, _) in scored {
        let s = &candidates[i];
        let own: HashSet<&str> = s.words.iter().map(String::as_str).collect();
        let repeats = taken.iter().any(|&j| {
            let other: HashSet<&str> = candidates[j].words.iter().map(String::as_str).collect();
            #[allow(clippy::cast_precision_loss)]
            let shared = own.intersection(&other).count() as f64;
            #[allow(clippy::cast_precision_loss)]
            let share = shared / own.len().max(1) as f64;
            share > OVERLAP
        });
        if repeats {
            continue;
        }
        let cost = crate::tokenize::count(&s.text);
        if !taken.is_empty() && tokens + cost > max_tokens {
            continue;
        }
        tokens += cost;
        taken.push(i);
        if tokens >= max_tokens {
            break;
        }
    }
    taken.sort_by_key(|&i| candidates[i].at);
    taken
        .iter()
        .map(|&i| candidates[i].text.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::summarize;

    #[test]
    fn keeps_the_sentences_the_children_share_in_reading_order() {
        let texts = [
            "Passwords must be hashed with a slow, salted algorithm such as Argon2id. The office is closed on Fridays.",
            "Use a unique salt for every password hash. Store the salted password hash, never the password.",
            "# Heading\n\nA slow password hash such as bcrypt or Argon2id resists offline guessing of the password.",
        ];
        let summary = summarize(&texts, 60);
        assert!(summary.contains("Argon2id"), "{summary}");
        assert!(!summary.contains("Fridays"), "{summary}");
        assert!(!summary.contains('#'), "{summary}");
        // Reading order: a sentence of the first child comes before one of the third.
        if let (Some(a), Some(b)) = (summary.find("salted algorithm"), summary.find("bcrypt")) {
            assert!(a < b, "{summary}");
        }
        assert!(crate::tokenize::count(&summary) <= 60 + 30, "{summary}");
    }

    #[test]
    fn text_without_sentences_gives_its_opening_words() {
        let summary = summarize(&["| a | b |\n|---|---|\n| 1 | 2 |"], 50);
        assert!(summary.starts_with("| a |"), "{summary}");
    }
}
