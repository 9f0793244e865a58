//! Identifier sub-token splitting for code: `parseArgs` and `HTTPServer2` are indexed as the whole
//! identifier and as its parts (`parse`, `args`; `http`, `server`, `2`), so a query for either
//! form matches. (`snake_case` is already split by the word tokenizer, since `_` is not
//! alphanumeric.) tantivy ships no such filter, so it is written here, after the shape of its
//! `SplitCompoundWords` filter.

use tantivy::tokenizer::{Token, TokenFilter, TokenStream, Tokenizer};

/// Emits each token, then its camelCase / letter-digit parts when it has more than one.
#[derive(Clone, Copy, Debug, Default)]
pub struct SplitIdentifiers;

impl TokenFilter for SplitIdentifiers {
    type Tokenizer<T: Tokenizer> = SplitIdentifiersFilter<T>;

    fn transform<T: Tokenizer>(self, tokenizer: T) -> SplitIdentifiersFilter<T> {
        SplitIdentifiersFilter {
            inner: tokenizer,
            parts: Vec::new(),
        }
    }
}

/// The tokenizer [`SplitIdentifiers`] wraps around another.
#[derive(Clone)]
pub struct SplitIdentifiersFilter<T> {
    inner: T,
    parts: Vec<Token>,
}

impl<T: Tokenizer> Tokenizer for SplitIdentifiersFilter<T> {
    type TokenStream<'a> = SplitIdentifiersStream<'a, T::TokenStream<'a>>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> Self::TokenStream<'a> {
        self.parts.clear();
        SplitIdentifiersStream {
            tail: self.inner.token_stream(text),
            parts: &mut self.parts,
            current: None,
        }
    }
}

/// Yields the original token, then its parts (pending parts are kept in reverse order).
pub struct SplitIdentifiersStream<'a, T> {
    tail: T,
    parts: &'a mut Vec<Token>,
    current: Option<Token>,
}

/// Byte offsets where a new part starts: lower→Upper, Upper→Upper+lower ("HTTPServer" → HTTP|Server),
/// letter↔digit.
#[must_use]
pub fn cuts(word: &str) -> Vec<usize> {
    let chars: Vec<(usize, char)> = word.char_indices().collect();
    let mut out = Vec::new();
    for i in 1..chars.len() {
        let (at, c) = chars[i];
        let prev = chars[i - 1].1;
        let next = chars.get(i + 1).map(|&(_, n)| n);
        let boundary = (prev.is_lowercase() && c.is_uppercase())
            || (prev.is_uppercase() && c.is_uppercase() && next.is_some_and(char::is_lowercase))
            || (prev.is_alphabetic() && c.is_numeric())
            || (prev.is_numeric() && c.is_alphabetic());
        if boundary {
            out.push(at);
        }
    }
    out
}

impl<T: TokenStream> TokenStream for SplitIdentifiersStream<'_, T> {
    fn advance(&mut self) -> bool {
        if let Some(part) = self.parts.pop() {
            self.current = Some(part);
            return true;
        }
        self.current = None;
        if !self.tail.advance() {
            return false;
        }
        let token = self.tail.token();
        let bounds = cuts(&token.text);
        if !bounds.is_empty() {
            let mut starts = vec![0];
            starts.extend(&bounds);
            let mut ends = bounds.clone();
            ends.push(token.text.len());
            for (&s, &e) in starts.iter().zip(&ends).rev() {
                self.parts.push(Token {
                    text: token.text[s..e].to_string(),
                    offset_from: token.offset_from + s,
                    offset_to: token.offset_from + e,
                    ..token.clone()
                });
            }
        }
        true
    }

    fn token(&self) -> &Token {
        self.current.as_ref().unwrap_or_else(|| self.tail.token())
    }

    fn token_mut(&mut self) -> &mut Token {
        match self.current.as_mut() {
            Some(token) => token,
            None => self.tail.token_mut(),
        }
    }
}

#[cfg(test)]
mod tests {
    use tantivy::tokenizer::{LowerCaser, SimpleTokenizer, TextAnalyzer};

    use super::*;

    fn tokens(text: &str) -> Vec<String> {
        let mut analyzer = TextAnalyzer::builder(SimpleTokenizer::default())
            .filter(SplitIdentifiers)
            .filter(LowerCaser)
            .build();
        let mut stream = analyzer.token_stream(text);
        let mut out = Vec::new();
        while let Some(t) = stream.next() {
            out.push(t.text.clone());
        }
        out
    }

    #[test]
    fn splits_camel_case_acronyms_and_digits_keeping_the_whole() {
        assert_eq!(tokens("parseArgs"), ["parseargs", "parse", "args"]);
        assert_eq!(
            tokens("HTTPServer2 ok"),
            ["httpserver2", "http", "server", "2", "ok"]
        );
        assert_eq!(tokens("parse_args plain"), ["parse", "args", "plain"]);
        assert_eq!(cuts("getURLForID"), vec![3, 6, 9]);
    }
}
