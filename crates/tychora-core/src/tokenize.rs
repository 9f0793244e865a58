//! Token counting with a real, deterministic, offline tokenizer: OpenAI's `cl100k_base` BPE as
//! implemented by GitHub's `bpe-openai` crate (its vocabulary ships inside the crate; nothing is
//! downloaded). Chunk sizes and output budgets are measured in these tokens.

/// The tokenizer's name as reported in results and budget contracts.
pub const TOKENIZER: &str = "cl100k_base (bpe-openai)";

/// Pieces (pre-tokenizer splits) remembered per thread before the memo starts again.
const MEMO_PIECES: usize = 1 << 16;
/// Longer pieces are counted every time: they rarely repeat.
const MEMO_PIECE_BYTES: usize = 24;

thread_local! {
    /// Token counts of short pieces this thread has counted. Text is Zipfian: most pieces are
    /// common words, and BPE over each of them was a fifth of a full add's CPU time. The counts
    /// are exactly the tokenizer's (the same pieces, each counted by it once).
    static PIECES: std::cell::RefCell<std::collections::HashMap<Box<str>, u32>> =
        std::cell::RefCell::new(std::collections::HashMap::with_capacity(1024));
}

/// Number of `cl100k_base` tokens in `text`: `Tokenizer::count`'s pre-tokenization and
/// per-piece BPE, with the pieces' counts memoised.
#[must_use]
pub fn count(text: &str) -> usize {
    let tokenizer = bpe_openai::cl100k_base();
    let text = tokenizer.normalize(text);
    PIECES.with(|memo| {
        let mut memo = memo.borrow_mut();
        tokenizer
            .split(text.as_str())
            .map(|piece| {
                if piece.len() > MEMO_PIECE_BYTES {
                    return tokenizer.bpe.count(piece.as_bytes());
                }
                if let Some(&n) = memo.get(piece) {
                    return n as usize;
                }
                let n = tokenizer.bpe.count(piece.as_bytes());
                if memo.len() >= MEMO_PIECES {
                    memo.clear();
                }
                memo.insert(piece.into(), u32::try_from(n).unwrap_or(u32::MAX));
                n
            })
            .sum()
    })
}

/// The rendered form the budget counts: the citation line, the heading path and the text, as the
/// Markdown and agent formats print them. The text's count was taken at indexing time (the sum of
/// its units' counts, which BPE makes additive up to a token at each unit boundary).
#[must_use]
pub fn rendered_tokens(citation: &str, heading_path: &[String], text_tokens: usize) -> usize {
    count(citation) + count(&heading_path.join(" > ")) + text_tokens + 4
}

#[cfg(test)]
mod tests {
    #[test]
    fn counts_are_deterministic_and_real() {
        // "hello world" is two tokens in cl100k_base.
        assert_eq!(super::count("hello world"), 2);
        assert_eq!(super::count(""), 0);
    }

    #[test]
    fn memoised_counts_equal_the_tokenizers_own() {
        let text = "The quick brown fox jumps over the lazy dog; the dog sleeps. \
                    Ünïcödé, 数字 1234567 and   spaces\n\n\tcode(x) => x * 2 // the end";
        let tokenizer = bpe_openai::cl100k_base();
        for _ in 0..3 {
            assert_eq!(super::count(text), tokenizer.count(text));
        }
        let long = "supercalifragilisticexpialidocious-antidisestablishmentarianism ".repeat(20);
        assert_eq!(super::count(&long), tokenizer.count(long.as_str()));
    }
}
