//! Token counting with a real, deterministic, offline tokenizer: OpenAI's `cl100k_base` BPE as
//! implemented by GitHub's `bpe-openai` crate (its vocabulary ships inside the crate; nothing is
//! downloaded). Chunk sizes and output budgets are measured in these tokens.

/// The tokenizer's name as reported in results and budget contracts.
pub const TOKENIZER: &str = "cl100k_base (bpe-openai)";

/// Number of `cl100k_base` tokens in `text`.
#[must_use]
pub fn count(text: &str) -> usize {
    bpe_openai::cl100k_base().count(text)
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
}
