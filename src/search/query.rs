//! Builds FTS5 MATCH expressions from what a user typed. User text never
//! reaches FTS5 raw: it is cut into words, and each word goes in as a quoted
//! string, so quotes, `AND`/`OR`/`NOT`/`NEAR`, `*`, `:`, `^`, parentheses and
//! `-` are searched as words (or dropped as punctuation) and never error.
//!
//! Latin-script words go to the word index (porter stemming); English stop
//! words, and a Korean question's predicate and request words (`알려주세요`),
//! are dropped when anything else is left. Hangul/CJK words go to both
//! indexes: to the word index as a prefix of the word with a Korean particle
//! stripped (`분석기는` → `분석기*`), and, when at least three characters long,
//! to the trigram index as their trigrams, which match inside longer words.

/// The phrases one query asks each index for: quoted strings, ORed in the
/// MATCH expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LexicalQuery {
    pub words: Vec<String>,
    pub trigram: Vec<String>,
}

impl LexicalQuery {
    pub fn is_empty(&self) -> bool {
        self.words.is_empty() && self.trigram.is_empty()
    }

    /// The phrases for `index`.
    pub fn phrases(&self, index: FtsIndex) -> &[String] {
        match index {
            FtsIndex::Words => &self.words,
            FtsIndex::Trigrams => &self.trigram,
        }
    }

    /// The MATCH expression for `index`; `None` when it has nothing to do.
    pub fn expr(&self, index: FtsIndex) -> Option<String> {
        let phrases = self.phrases(index);
        if phrases.is_empty() { None } else { Some(phrases.join(" OR ")) }
    }
}

use crate::store::FtsIndex;
pub use crate::words::{MAX_TERMS, Term, is_filler, is_question_word, strip_particle, terms, words};

pub fn build(text: &str) -> LexicalQuery {
    // A Korean question's predicate and request words (`알려주세요`,
    // `다른가요`, `뭔지`) name no topic, and are rare in notes: they ranked a
    // chunk that happens to say them ("…에 의존함을 알려주세요") above the
    // topic's. They are searched only when nothing else is asked.
    let all = terms(text);
    let framing = |t: &Term| t.cjk && (is_question_word(&t.word) || is_filler(&t.word));
    let terms: Vec<Term> = if all.iter().all(framing) { all } else { all.into_iter().filter(|t| !framing(t)).collect() };
    let mut tri_terms: Vec<String> = Vec::new();
    for t in terms.iter().filter(|t| t.cjk) {
        let chars: Vec<char> = t.word.chars().collect();
        for tri in chars.windows(3) {
            let expr = format!("\"{}\"", tri.iter().collect::<String>());
            if !tri_terms.contains(&expr) && tri_terms.len() < MAX_TERMS {
                tri_terms.push(expr);
            }
        }
    }
    LexicalQuery { words: terms.into_iter().map(|t| t.word_expr).collect(), trigram: tri_terms }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operator_soup_becomes_quoted_words() {
        let q = build(r#"foo AND "bar" OR (baz* NOT -qux) NEAR(a b) col:val ^x"#);
        let w = q.expr(FtsIndex::Words).unwrap();
        for term in ["\"foo\"", "\"bar\"", "\"baz\"", "\"qux\"", "\"near\"", "\"col\"", "\"val\"", "\"x\""] {
            assert!(w.contains(term), "{term} missing from {w}");
        }
        // Every token between ORs is a quoted string: nothing FTS5 could read as an operator.
        assert!(w.split(" OR ").all(|t| t.starts_with('"') && t.ends_with('"')), "{w}");
        assert!(q.trigram.is_empty());
    }

    #[test]
    fn stop_words_drop_unless_nothing_else_is_left() {
        assert_eq!(build("the borrow checker").expr(FtsIndex::Words).unwrap(), "\"borrow\" OR \"checker\"");
        assert_eq!(build("to be or not to be").expr(FtsIndex::Words).unwrap(), "\"to\" OR \"be\" OR \"or\" OR \"not\"");
    }

    #[test]
    fn punctuation_only_and_empty_queries_are_empty() {
        assert!(build("").is_empty());
        assert!(build("  \"\" *** () - : ^ ").is_empty());
    }

    #[test]
    fn korean_words_get_a_prefix_and_trigrams() {
        let q = build("분석기는 소유권");
        assert_eq!(q.expr(FtsIndex::Words).unwrap(), "\"분석기\"* OR \"소유권\"*");
        assert_eq!(q.expr(FtsIndex::Trigrams).unwrap(), "\"분석기\" OR \"석기는\" OR \"소유권\"");
        // A question word is searched only when nothing else is asked.
        assert_eq!(build("분석기는 무엇").expr(FtsIndex::Words).unwrap(), "\"분석기\"*");
        assert_eq!(build("무엇").expr(FtsIndex::Words).unwrap(), "\"무엇\"*");
    }

    #[test]
    fn script_change_splits_a_word() {
        assert_eq!(words("Rust의 소유권"), ["rust", "의", "소유권"]);
        assert_eq!(words("2024년에는 3개"), ["2024년에는", "3개"]);
        assert_eq!(words("v2 소유권2"), ["v2", "소유권", "2"]);
        // The particle cut off `Rust` is not searched on its own.
        let q = build("Rust의 소유권");
        assert_eq!(q.expr(FtsIndex::Words).unwrap(), "\"rust\" OR \"소유권\"*");
    }

    #[test]
    fn common_korean_particles_are_stripped() {
        for (word, stem) in [("소유권이란", "소유권"), ("트레이트란", "트레이트"), ("소유권이라는", "소유권"), ("소유권은", "소유권"),
            ("벡터를", "벡터"), ("스레드에는", "스레드"), ("클로저라고", "클로저")] {
            assert_eq!(strip_particle(word), stem, "{word}");
        }
    }

    #[test]
    fn huge_queries_are_capped() {
        let text: String = (0..5000).map(|i| format!("w{i} ")).collect();
        assert!(text.len() > 10_000);
        let q = build(&text);
        assert_eq!(q.words.len(), MAX_TERMS);
    }
}
