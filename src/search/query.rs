//! Builds FTS5 MATCH expressions from what a user typed. User text never
//! reaches FTS5 raw: it is cut into words, and each word goes in as a quoted
//! string, so quotes, `AND`/`OR`/`NOT`/`NEAR`, `*`, `:`, `^`, parentheses and
//! `-` are searched as words (or dropped as punctuation) and never error.
//!
//! Latin-script words go to the word index (porter stemming); English stop
//! words are dropped when anything else is left. Hangul/CJK words go to both
//! indexes: to the word index as a prefix of the word with a Korean particle
//! stripped (`분석기는` → `분석기*`), and, when at least three characters long,
//! to the trigram index as their trigrams, which match inside longer words.

use crate::script::is_cjk;

/// The MATCH expressions for one query; `None` where an index has nothing to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LexicalQuery {
    pub words: Option<String>,
    pub trigram: Option<String>,
}

impl LexicalQuery {
    pub fn is_empty(&self) -> bool {
        self.words.is_none() && self.trigram.is_none()
    }
}

/// Past this many distinct terms a query is cut: longer ones add cost, not recall.
const MAX_TERMS: usize = 64;

/// Lucene's English stop words: frequent words that only add noise to an OR query.
const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it", "no", "not",
    "of", "on", "or", "such", "that", "the", "their", "then", "there", "these", "they", "this", "to", "was",
    "will", "with",
];

/// Question words that carry no topic: left out when judging how much of a
/// question some text covers (the ask gate, the extractive model).
const QUESTION_WORDS: &[&str] = &[
    "what", "how", "why", "which", "who", "whom", "whose", "when", "where", "do", "does", "did", "can", "could",
    "should", "would", "i", "you", "we", "my", "me", "your", "our", "use", "using", "used", "about", "explain",
    "tell", "get", "make", "way", "there", "any", "some", "have", "has", "from", "so", "than", "between", "difference",
    "many", "much", "makes", "made", "gets", "got", "doing",
    "무엇", "어떻게", "왜", "언제", "어디", "누구", "어떤", "무슨", "어느", "몇", "얼마", "얼마나",
];

/// Korean sentence-final and connective endings: a word ending in one is the
/// question's predicate (`쓰나요`, `있을까요`, `만들려면`), not its topic.
const QUESTION_ENDINGS: &[&str] = &[
    "나요", "가요", "까요", "는지", "은지", "인지", "습니까", "합니까", "니까", "려면", "으면", "나", "죠", "요",
];

/// Korean words too common or too grammatical to count as a topic.
const KOREAN_FILLERS: &[&str] = &[
    "수", "것", "등", "때", "있는", "있다", "하는", "할", "한", "및", "또는", "그", "이", "저", "뭐", "좀", "중", "그럼", "그러면", "그건",
    "그게", "그것", "그거", "이건", "이거", "거기", "저기", "건", "거", "게", "걸",
];

/// Words that name no topic even when nothing else is asked ("tell me
/// more", "what about that one?", "그게 뭐야?", "더 알려줘"): a question made
/// only of these, question words and stop words has nothing to search for.
/// Used to recognise such questions, never to drop words from a search.
const FILLERS: &[&str] = &[
    "more", "please", "ok", "okay", "yes", "yeah", "yep", "nope", "huh", "hmm", "hm", "um", "uh", "so", "one", "ones", "else",
    "again", "mean", "means", "meant", "say", "said", "really", "sure", "thanks", "thank", "other", "another", "detail",
    "details", "continue", "go", "on", "next", "also", "too", "what's", "that's", "it's", "s", "something", "anything",
    "thing", "things", "stuff", "those", "them", "him", "her", "he", "she", "here", "now", "just", "like", "right", "wait",
    "뭐야", "뭐지", "뭐라고", "뭔가요", "뭔데", "그래서", "더", "알려줘", "알려", "줘", "주세요", "설명해", "설명", "음", "네", "예", "아니",
    "아니요", "자세히", "말이야", "말", "이게", "거", "거요", "그럼", "그래", "응", "왜요", "좀더", "다시", "계속", "방법",
];

/// Whether `word` is a filler (see `FILLERS`), after particle stripping.
pub fn is_filler(word: &str) -> bool {
    // A particle standing alone: cut off a Latin word by the script change (`match보다`).
    PARTICLES.contains(&word)
        || STOP_WORDS.contains(&word) || FILLERS.contains(&word) || FILLERS.contains(&strip_particle(word)) || KOREAN_FILLERS.contains(&strip_particle(word))
}

pub fn is_question_word(word: &str) -> bool {
    let stem = strip_particle(word);
    if QUESTION_WORDS.contains(&word) || QUESTION_WORDS.contains(&stem) {
        return true;
    }
    word.chars().any(crate::script::is_hangul)
        && (KOREAN_FILLERS.contains(&word) || QUESTION_ENDINGS.iter().any(|e| word.ends_with(e)))
}

/// Korean particles and copula endings, longest first, stripped from the end
/// of a word before it is used as a prefix.
const PARTICLES: &[&str] = &[
    "에서부터", "으로부터", "으로서", "으로써", "이라는", "에게서", "까지는", "에서는", "으로는", "이라고", "입니다", "에서", "에게",
    "으로", "부터", "까지", "라는", "라고", "이란", "이다", "하는", "하고", "보다", "처럼", "마다", "에는", "에도", "로서", "로써",
    "란", "은", "는", "이", "가", "을", "를", "의", "에", "로", "와", "과", "도", "만",
];

/// Splits text into lowercase words: runs of letters and digits, cut where
/// the script changes between CJK and the rest (`Rust의` → `rust`, `의`).
pub fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut cur_cjk = false;
    for c in text.chars() {
        if c.is_alphanumeric() {
            let cjk = is_cjk(c);
            // A number runs into the Hangul after it, as the index tokenises
            // it: `2024년에는` is one token, so `2024년` must stay one word.
            let number_then_cjk = cjk && cur.chars().all(|d| d.is_ascii_digit());
            if !cur.is_empty() && cjk != cur_cjk && !number_then_cjk {
                out.push(std::mem::take(&mut cur));
            }
            cur_cjk = cjk;
            cur.extend(c.to_lowercase());
        } else if !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// One searchable term of a query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Term {
    /// The word as typed (lowercased).
    pub word: String,
    /// Its expression on the word index: `"borrow"`, or `"소유권"*` for Hangul/CJK.
    pub word_expr: String,
    pub cjk: bool,
}

/// The distinct content terms of `text`: English stop words dropped unless
/// nothing else is left, capped at `MAX_TERMS`.
pub fn terms(text: &str) -> Vec<Term> {
    let all = words(text);
    let has_content = all.iter().any(|w| w.chars().any(is_cjk) || !STOP_WORDS.contains(&w.as_str()));
    let mut out: Vec<Term> = Vec::new();
    for w in all {
        let cjk = w.chars().any(is_cjk);
        if !cjk && has_content && STOP_WORDS.contains(&w.as_str()) {
            continue;
        }
        let word_expr = if cjk { format!("\"{}\"*", strip_particle(&w)) } else { format!("\"{w}\"") };
        if out.len() < MAX_TERMS && !out.iter().any(|t| t.word_expr == word_expr) {
            out.push(Term { word: w, word_expr, cjk });
        }
    }
    out
}

pub fn build(text: &str) -> LexicalQuery {
    let terms = terms(text);
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
    let words: Vec<String> = terms.into_iter().map(|t| t.word_expr).collect();
    let join = |v: Vec<String>| if v.is_empty() { None } else { Some(v.join(" OR ")) };
    LexicalQuery { words: join(words), trigram: join(tri_terms) }
}

/// The word without a trailing particle, keeping at least one character.
pub fn strip_particle(word: &str) -> &str {
    for p in PARTICLES {
        if let Some(stem) = word.strip_suffix(p)
            && !stem.is_empty()
        {
            return stem;
        }
    }
    word
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operator_soup_becomes_quoted_words() {
        let q = build(r#"foo AND "bar" OR (baz* NOT -qux) NEAR(a b) col:val ^x"#);
        let w = q.words.unwrap();
        for term in ["\"foo\"", "\"bar\"", "\"baz\"", "\"qux\"", "\"near\"", "\"col\"", "\"val\"", "\"x\""] {
            assert!(w.contains(term), "{term} missing from {w}");
        }
        // Every token between ORs is a quoted string: nothing FTS5 could read as an operator.
        assert!(w.split(" OR ").all(|t| t.starts_with('"') && t.ends_with('"')), "{w}");
        assert!(q.trigram.is_none());
    }

    #[test]
    fn stop_words_drop_unless_nothing_else_is_left() {
        assert_eq!(build("the borrow checker").words.unwrap(), "\"borrow\" OR \"checker\"");
        assert_eq!(build("to be or not to be").words.unwrap(), "\"to\" OR \"be\" OR \"or\" OR \"not\"");
    }

    #[test]
    fn punctuation_only_and_empty_queries_are_empty() {
        assert!(build("").is_empty());
        assert!(build("  \"\" *** () - : ^ ").is_empty());
    }

    #[test]
    fn korean_words_get_a_prefix_and_trigrams() {
        let q = build("분석기는 무엇");
        assert_eq!(q.words.unwrap(), "\"분석기\"* OR \"무엇\"*");
        assert_eq!(q.trigram.unwrap(), "\"분석기\" OR \"석기는\"");
    }

    #[test]
    fn script_change_splits_a_word() {
        assert_eq!(words("Rust의 소유권"), ["rust", "의", "소유권"]);
        assert_eq!(words("2024년에는 3개"), ["2024년에는", "3개"]);
        assert_eq!(words("v2 소유권2"), ["v2", "소유권", "2"]);
        let q = build("Rust의 소유권");
        assert_eq!(q.words.unwrap(), "\"rust\" OR \"의\"* OR \"소유권\"*");
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
        assert_eq!(q.words.unwrap().matches(" OR ").count(), MAX_TERMS - 1);
    }
}
