//! tantivy's `Stemmer` filter with a per-thread memo of the words it has stemmed. Snowball
//! stemming of every token was a fifth of a full add's CPU time, and text is Zipfian: most tokens
//! are words already seen. The stems are exactly the Snowball stemmer's (the same crate tantivy
//! uses, each word stemmed by it once), so an index built either way is the same.

use std::cell::RefCell;
use std::collections::HashMap;

use rust_stemmers::Algorithm;
use tantivy::tokenizer::{Token, TokenFilter, TokenStream, Tokenizer};

/// Words remembered per thread and language before the memo starts again.
const MEMO_WORDS: usize = 1 << 16;
/// Longer words are stemmed every time: they rarely repeat.
const MEMO_WORD_BYTES: usize = 24;

/// The languages a pack may choose (config `lexical.language`), each with its own memo.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StemLanguage {
    /// English (Porter 2).
    English,
    /// French.
    French,
    /// German.
    German,
    /// Spanish.
    Spanish,
}

impl StemLanguage {
    fn algorithm(self) -> Algorithm {
        match self {
            Self::English => Algorithm::English,
            Self::French => Algorithm::French,
            Self::German => Algorithm::German,
            Self::Spanish => Algorithm::Spanish,
        }
    }

    fn slot(self) -> usize {
        self as usize
    }
}

thread_local! {
    static STEMS: RefCell<[HashMap<Box<str>, Box<str>>; 4]> = RefCell::new(Default::default());
}

/// Replaces each token by its stem.
#[derive(Clone, Copy, Debug)]
pub struct MemoStemmer(pub StemLanguage);

impl TokenFilter for MemoStemmer {
    type Tokenizer<T: Tokenizer> = MemoStemmerFilter<T>;

    fn transform<T: Tokenizer>(self, tokenizer: T) -> MemoStemmerFilter<T> {
        MemoStemmerFilter {
            language: self.0,
            inner: tokenizer,
        }
    }
}

/// The tokenizer [`MemoStemmer`] wraps around another.
#[derive(Clone)]
pub struct MemoStemmerFilter<T> {
    language: StemLanguage,
    inner: T,
}

impl<T: Tokenizer> Tokenizer for MemoStemmerFilter<T> {
    type TokenStream<'a> = MemoStemmerStream<T::TokenStream<'a>>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> Self::TokenStream<'a> {
        MemoStemmerStream {
            tail: self.inner.token_stream(text),
            language: self.language,
            stemmer: rust_stemmers::Stemmer::create(self.language.algorithm()),
        }
    }
}

/// Stems each token of its tail.
pub struct MemoStemmerStream<T> {
    tail: T,
    language: StemLanguage,
    stemmer: rust_stemmers::Stemmer,
}

impl<T: TokenStream> TokenStream for MemoStemmerStream<T> {
    fn advance(&mut self) -> bool {
        if !self.tail.advance() {
            return false;
        }
        let token = self.tail.token_mut();
        if token.text.len() > MEMO_WORD_BYTES {
            let stem = self.stemmer.stem(&token.text).into_owned();
            token.text = stem;
            return true;
        }
        STEMS.with(|memo| {
            let memo = &mut memo.borrow_mut()[self.language.slot()];
            if let Some(stem) = memo.get(token.text.as_str()) {
                if **stem != *token.text {
                    token.text.clear();
                    token.text.push_str(stem);
                }
                return;
            }
            let stem: Box<str> = self.stemmer.stem(&token.text).into();
            if memo.len() >= MEMO_WORDS {
                memo.clear();
            }
            memo.insert(token.text.as_str().into(), stem.clone());
            if *stem != *token.text {
                token.text.clear();
                token.text.push_str(&stem);
            }
        });
        true
    }

    fn token(&self) -> &Token {
        self.tail.token()
    }

    fn token_mut(&mut self) -> &mut Token {
        self.tail.token_mut()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tantivy::tokenizer::{Language, SimpleTokenizer, Stemmer, TextAnalyzer};

    fn tokens(analyzer: &mut TextAnalyzer, text: &str) -> Vec<String> {
        let mut stream = analyzer.token_stream(text);
        let mut out = Vec::new();
        while stream.advance() {
            out.push(stream.token().text.clone());
        }
        out
    }

    #[test]
    fn stems_exactly_as_tantivys_stemmer() {
        let text = "running runners ran easily fairly generously organizational \
                    internationalization connections connected connecting runs running";
        for (ours, theirs) in [
            (StemLanguage::English, Language::English),
            (StemLanguage::French, Language::French),
            (StemLanguage::German, Language::German),
            (StemLanguage::Spanish, Language::Spanish),
        ] {
            let mut memo = TextAnalyzer::builder(SimpleTokenizer::default())
                .filter(MemoStemmer(ours))
                .build();
            let mut plain = TextAnalyzer::builder(SimpleTokenizer::default())
                .filter(Stemmer::new(theirs))
                .build();
            for _ in 0..2 {
                assert_eq!(tokens(&mut memo, text), tokens(&mut plain, text));
            }
        }
    }
}
