//! The word tokenizer: tantivy's `SimpleTokenizer` split (runs of alphanumeric characters), except
//! that scripts written without spaces between words are cut into overlapping n-grams of
//! user-perceived characters (grapheme clusters): Chinese and Japanese into bigrams, as Lucene's
//! `CJKBigramFilter` does; Thai, Lao, Khmer and Myanmar into trigrams.
//!
//! Without it a whole run between two punctuation marks was one term (`这是一个用来测试nodejs解析`),
//! so a word inside it (`nodejs`, `测试`) was never found, and a run over 40 bytes was dropped by
//! the length filter. N-grams need no dictionary and no download, and were measured against a
//! trigram FTS5 on the CJK and Thai dev sets (bench/lexical/long-sets.mjs). A word that holds no
//! such character is emitted exactly as `SimpleTokenizer` emits it, so spaced scripts (Latin,
//! Cyrillic, Korean, …) index the same terms.
//!
//! Why two sizes: a Han or kana character is about a syllable and most words are two of them, so a
//! bigram is about a word. A Thai grapheme is a consonant with its marks, often half a syllable
//! (a leading vowel such as `เ` or a following `า` is a grapheme of its own), so a bigram is often
//! less than a syllable and matches across unrelated words; trigrams of graphemes measured +0.017
//! nDCG@10 over bigrams on the Thai dev set under one ranking function (FTS5 bm25, pre-tokenised).
//!
//! The index side also emits each shorter n-gram of a run (each character, and for trigram
//! scripts each bigram), so a one-character word (`猫`) or a two-grapheme Thai word is found; the
//! query side emits the script's n-grams only (a run shorter than n stays whole), so a query for a
//! longer word matches the n-grams it is made of rather than every document sharing a character.
//! tantivy has no such tokenizer, and lindera/jieba would add per-language dictionaries; hence here.

use tantivy::tokenizer::{Token, TokenStream, Tokenizer};
use unicode_segmentation::UnicodeSegmentation as _;

/// The tokenizer's version, part of a lexical index's recorded analyzer: bump it whenever the terms
/// this module emits for some text change (2: trigrams for Thai, Lao, Khmer and Myanmar, whose
/// sentence punctuation ends a run).
pub const TOKENIZER_VERSION: u32 = 2;

/// Whether `c` belongs to a script written without spaces between words (its punctuation and
/// currency signs excepted: they end a run, as `。` does).
#[must_use]
pub fn unspaced(c: char) -> bool {
    matches!(c as u32,
        0x0E00..=0x0EFF            // Thai, Lao
        | 0x1000..=0x109F          // Myanmar
        | 0x1780..=0x17FF          // Khmer
        | 0x3040..=0x30FF          // Hiragana, Katakana
        | 0x31F0..=0x31FF          // Katakana phonetic extensions
        | 0x3400..=0x4DBF          // CJK extension A
        | 0x4E00..=0x9FFF          // CJK unified ideographs
        | 0xF900..=0xFAFF          // CJK compatibility ideographs
        | 0xFF66..=0xFF9F          // halfwidth Katakana
        | 0x20000..=0x3FFFF        // CJK extensions B–I
    ) && !matches!(c as u32,
        0x0E3F                     // Thai baht sign
        | 0x0E4F | 0x0E5A | 0x0E5B // Thai fongman, angkhankhu, khomut
        | 0x104A..=0x104F          // Myanmar section marks and symbols
        | 0x17D4..=0x17D6          // Khmer khan, bariyoosan, camnuc pii kuuh
        | 0x17D8..=0x17DB          // Khmer beyyal, phnaek muan, koomuut, riel sign
    )
}

/// The n-gram size for a character's script: 0 for spaced scripts (whole words), 2 for Chinese and
/// Japanese, 3 for the Southeast Asian scripts (Thai, Lao, Khmer, Myanmar).
fn gram(c: char) -> usize {
    if !unspaced(c) {
        0
    } else if matches!(c as u32, 0x0E00..=0x0EFF | 0x1000..=0x109F | 0x1780..=0x17FF) {
        3
    } else {
        2
    }
}

/// A word character: alphanumeric (as `SimpleTokenizer` has it), or any character of an unspaced
/// script, whose combining vowel and tone marks (Thai `่`, `ั`) are not alphanumeric but are part
/// of the word.
fn word_char(c: char) -> bool {
    c.is_alphanumeric() || unspaced(c)
}

/// Splits words, and unspaced runs into n-grams.
#[derive(Clone, Debug)]
pub struct WordTokenizer {
    /// Also emit every shorter n-gram of an unspaced run (the index side).
    shorter: bool,
    tokens: Vec<Token>,
}

impl WordTokenizer {
    /// For documents: the script's n-grams and every shorter one.
    #[must_use]
    pub fn for_index() -> Self {
        Self {
            shorter: true,
            tokens: Vec::new(),
        }
    }

    /// For queries: the script's n-grams, a run shorter than n as itself.
    #[must_use]
    pub fn for_query() -> Self {
        Self {
            shorter: false,
            tokens: Vec::new(),
        }
    }
}

/// The tokens of one text, produced up front (the tokens of one chunk or one query).
pub struct WordStream<'a> {
    tokens: &'a mut Vec<Token>,
    next: usize,
}

impl Tokenizer for WordTokenizer {
    type TokenStream<'a> = WordStream<'a>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> WordStream<'a> {
        self.tokens.clear();
        split(text, self.shorter, &mut self.tokens);
        WordStream {
            tokens: &mut self.tokens,
            next: 0,
        }
    }
}

impl TokenStream for WordStream<'_> {
    fn advance(&mut self) -> bool {
        if self.next < self.tokens.len() {
            self.next += 1;
            true
        } else {
            false
        }
    }

    fn token(&self) -> &Token {
        &self.tokens[self.next - 1]
    }

    fn token_mut(&mut self) -> &mut Token {
        &mut self.tokens[self.next - 1]
    }
}

fn split(text: &str, shorter: bool, out: &mut Vec<Token>) {
    let mut push = |from: usize, to: usize| {
        out.push(Token {
            offset_from: from,
            offset_to: to,
            position: out.len(),
            text: text[from..to].to_string(),
            position_length: 1,
        });
    };
    let mut chars = text.char_indices().peekable();
    while let Some((start, c)) = chars.next() {
        if !word_char(c) {
            continue;
        }
        // One word: a maximal run of word characters, cut where it enters or leaves an unspaced
        // script (or passes from one n-gram size to another).
        let mut run: Vec<(usize, char)> = vec![(start, c)];
        while let Some(&(at, next)) = chars.peek() {
            if !word_char(next) {
                break;
            }
            run.push((at, next));
            chars.next();
        }
        let end = run.last().map_or(start, |&(at, ch)| at + ch.len_utf8());
        let mut i = 0;
        while i < run.len() {
            let n = gram(run[i].1);
            let mut j = i + 1;
            while j < run.len() && gram(run[j].1) == n {
                j += 1;
            }
            let from = run[i].0;
            let to = run.get(j).map_or(end, |&(at, _)| at);
            // N-grams of user-perceived characters: a Thai consonant with its vowel and tone
            // marks is one (an n-gram of code points would often end between a consonant and its
            // mark).
            let mut starts: Vec<usize> = if n > 0 {
                text[from..to]
                    .grapheme_indices(true)
                    .map(|(at, _)| from + at)
                    .collect()
            } else {
                vec![from]
            };
            let graphemes = starts.len();
            if n == 0 || graphemes <= 1 || (!shorter && graphemes < n) {
                // A spaced word, a lone character, or (querying) a run shorter than the n-gram.
                push(from, to);
            } else {
                starts.push(to);
                for k in 0..graphemes {
                    let sizes = if shorter { 1..=n } else { n..=n };
                    for size in sizes {
                        if k + size <= graphemes {
                            push(starts[k], starts[k + size]);
                        }
                    }
                }
            }
            i = j;
        }
    }
}

#[cfg(test)]
mod tests {
    use tantivy::tokenizer::SimpleTokenizer;

    use super::*;

    fn texts(tokenizer: &mut impl Tokenizer, text: &str) -> Vec<String> {
        let mut stream = tokenizer.token_stream(text);
        let mut out = Vec::new();
        while stream.advance() {
            let t = stream.token();
            assert_eq!(&text[t.offset_from..t.offset_to], t.text);
            out.push(t.text.clone());
        }
        out
    }

    #[test]
    fn words_inside_unspaced_runs_become_bigrams() {
        let q = texts(
            &mut WordTokenizer::for_query(),
            "这是一个用来测试nodejs解析Word文档",
        );
        assert_eq!(
            q,
            [
                "这是", "是一", "一个", "个用", "用来", "来测", "测试", "nodejs", "解析", "Word",
                "文档"
            ]
        );
        let japanese = texts(&mut WordTokenizer::for_query(), "連結株主資本、極洋");
        assert_eq!(japanese, ["連結", "結株", "株主", "主資", "資本", "極洋"]);
        let index = texts(&mut WordTokenizer::for_index(), "猫が好き");
        assert_eq!(index, ["猫", "猫が", "が", "が好", "好", "好き", "き"]);
        assert_eq!(texts(&mut WordTokenizer::for_query(), "猫"), ["猫"]);
    }

    #[test]
    fn thai_marks_stay_inside_the_run() {
        // "ที่" holds two marks (U+0E35 vowel, U+0E48 tone), and SimpleTokenizer splits on the
        // tone mark.
        // Two grapheme clusters, each a consonant with its marks: shorter than a trigram, so the
        // query keeps the run whole, and the index has it among its shorter n-grams.
        let t = texts(&mut WordTokenizer::for_query(), "ที่นี่");
        assert_eq!(t, ["ที่นี่"]);
        let index = texts(&mut WordTokenizer::for_index(), "ที่นี่");
        assert_eq!(index, ["ที่", "ที่นี่", "นี่"]);
    }

    #[test]
    fn thai_runs_become_grapheme_trigrams() {
        // ภาษาไทย ("Thai language"): graphemes ภ า ษ า ไ ท ย.
        let q = texts(&mut WordTokenizer::for_query(), "ภาษาไทย");
        assert_eq!(q, ["ภาษ", "าษา", "ษาไ", "าไท", "ไทย"]);
        let index = texts(&mut WordTokenizer::for_index(), "ภาษาไทย");
        assert_eq!(index.len(), 7 + 6 + 5, "{index:?}");
        // Every query token is an index token: a word inside the run is found.
        assert!(q.iter().all(|t| index.contains(t)));
        assert!(index.contains(&"ไทย".to_string()) && index.contains(&"ไท".to_string()));
        // Thai sentence punctuation (angkhankhu, U+0E5A) ends a run: no trigram spans it.
        assert_eq!(
            texts(&mut WordTokenizer::for_query(), "ภาษา\u{0E5A}ไทย"),
            ["ภาษ", "าษา", "ไทย"]
        );
        // A Thai run beside a Han run: each cut by its own size.
        let mixed = texts(&mut WordTokenizer::for_query(), "ภาษาไทย中文字");
        assert_eq!(mixed, ["ภาษ", "าษา", "ษาไ", "าไท", "ไทย", "中文", "文字"]);
    }

    #[test]
    fn spaced_scripts_tokenize_exactly_as_simple_tokenizer() {
        let text =
            "Hello, happy tax-payer! Привет мир 안녕하세요 세계 x86_64 naïve café ٣٤ e\u{301}";
        let mut simple = SimpleTokenizer::default();
        assert_eq!(
            texts(&mut WordTokenizer::for_index(), text),
            texts(&mut simple, text)
        );
        assert_eq!(
            texts(&mut WordTokenizer::for_query(), text),
            texts(&mut simple, text)
        );
    }
}
