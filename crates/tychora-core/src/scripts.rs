//! Which scripts an embedding model reads, and how much of a query is written in them.
//!
//! all-MiniLM-L6-v2, the local default, was trained on English: a Chinese or Thai query gets a
//! vector that says little of its meaning. On the dev sets its text channel alone has nDCG@10
//! 0.116 (CMRC 2018, Chinese) and 0.041 (iApp Wiki QA, Thai) where the lexical channel has 0.984
//! and 0.933, and fused at full weight it pulled the hybrid down to 0.734 and 0.742
//! (bench/results/fusion-dev.md). So the text channel's weight in the fusion is scaled, query by
//! query, by the share of the query's letters written in a script the model reads: an English
//! query keeps the full weight, a Chinese one turns the channel off (as does one with less than
//! half its letters readable, [`MIN_SHARE`]), a mostly readable one sits between.
//! Voyage's models are multilingual and read every script.
use unicode_script::{Script, UnicodeScript as _};

/// Below this share the text channel is off: the vector of a query written mostly in a script the
/// model does not read is about its few readable words (an English name inside a Japanese
/// question), not the question. At full share × weight instead, Japanese lost 0.012 and Chinese
/// 0.005 nDCG@10 against the lexical channel alone; with the channel off below half, 0.001.
pub const MIN_SHARE: f64 = 0.5;

/// What the local default model reads (`[embeddings] scripts` changes it for another model).
pub const LOCAL_DEFAULT: &[&str] = &["Latin"];

/// Scripts by their Unicode names (`Latin`, `Han`, `Cyrillic`; short names such as `Latn` too).
///
/// # Errors
/// The first name that is not a Unicode script.
pub fn parse(names: &[impl AsRef<str>]) -> Result<Vec<Script>, String> {
    names
        .iter()
        .map(AsRef::as_ref)
        .map(|name| {
            Script::from_full_name(name)
                .or_else(|| Script::from_short_name(name))
                .filter(|s| !matches!(s, Script::Common | Script::Inherited | Script::Unknown))
                .ok_or_else(|| format!("[embeddings] scripts: {name:?} is not a Unicode script name (Latin, Han, Cyrillic, …)"))
        })
        .collect()
}

/// The share of `text`'s letters (characters of a script other than Common and Inherited: not
/// digits, punctuation or emoji) that are written in one of `scripts`; 1 when it has none.
#[must_use]
pub fn share(text: &str, scripts: &[Script]) -> f64 {
    let (mut letters, mut read) = (0_u32, 0_u32);
    for c in text.chars() {
        let script = c.script();
        if matches!(script, Script::Common | Script::Inherited | Script::Unknown) {
            continue;
        }
        letters += 1;
        if scripts.contains(&script) {
            read += 1;
        }
    }
    if letters == 0 {
        1.0
    } else {
        f64::from(read) / f64::from(letters)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_query_counts_by_its_letters_in_the_scripts_the_model_reads() {
        let latin = parse(&["Latin"]).unwrap();
        assert!((share("conditional request revalidates", &latin) - 1.0).abs() < f64::EPSILON);
        assert!(share("这是一个用来测试解析文档", &latin).abs() < f64::EPSILON);
        assert!(share("สวัสดีครับ", &latin).abs() < f64::EPSILON);
        // Mixed: four Latin letters of ten; digits, spaces and punctuation do not count.
        let mixed = share("测试nodejs解析 2024!", &latin);
        assert!((mixed - 6.0 / 10.0).abs() < 1e-9, "{mixed}");
        // No letters at all: nothing says the model cannot read it.
        assert!((share("1234 !? 🙂", &latin) - 1.0).abs() < f64::EPSILON);
        let both = parse(&["Latin", "Hani"]).unwrap();
        assert!((share("测试nodejs", &both) - 1.0).abs() < f64::EPSILON);
    }

    #[test]
    fn names_that_are_not_scripts_are_refused() {
        assert!(parse(&["Klingon"]).unwrap_err().contains("\"Klingon\""));
        assert!(parse(&["Common"]).is_err());
    }
}
