//! The words of a text as kebab's search and its answerers see them: runs of
//! letters and digits cut where the script changes, English stop words,
//! question words that carry no topic, and Korean particles stripped from the
//! end of a word. One reading, shared by the FTS5 query builder, the gate and
//! the built-in extractive model, so they always agree on what a word is.

use crate::script::is_cjk;

mod korean;
mod price;

use korean::{KOREAN_FILLERS, KOREAN_QUESTION_STEMS, PARTICLES, QUESTION_ENDINGS, SHORT_PARTICLES, is_korean_function_word};
pub use korean::{fee_of, noun_of_verb, strip_particle};
pub use price::{PriceAsk, asks_price};
use price::names_price;

/// Past this many distinct terms a query is cut: longer ones add cost, not recall.
pub const MAX_TERMS: usize = 64;

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
    "무엇", "어떻게", "왜", "언제", "어디", "누구", "어떤", "무슨", "어느", "몇", "며칠", "얼마", "얼마나",
];

/// Words a question is asked with that name none of its topic, beyond the
/// question words: how the ask gate and the built-in answerer read a
/// question (`topic_terms`). Not for judging an answer's sentences against
/// evidence, where "under six" or "must" is the fact itself.
const NOT_TOPICS: &[&str] = &[
    // Contractions typed without the apostrophe ("whats a closure").
    "whats", "hows", "whys", "im", "ive", "youre", "thats", "its", "dont", "doesnt", "didnt", "cant", "wont", "isnt",
    "arent", "wasnt", "shouldnt", "wouldnt", "couldnt",
    // How a user frames a question ("I'm confused about lifetimes"), not its topic.
    "confused", "confusing", "wondering", "wonder", "curious", "understand", "basically", "hey", "hi", "hello", "quick",
    // A request for an explanation ("give me the gist of traits", "walk me
    // through threads", "summarise what match does").
    "give", "gimme", "summarise", "summarize", "describe", "outline", "overview", "gist", "rundown", "nutshell", "eli5", "teach", "walk",
    "talk", "briefly",
    // The notes themselves ("what do my notes say about hydration?"): every
    // question is asked of them. Not "wrote": "who wrote the BEIR paper?"
    // asks for an author the notes may lack.
    "notes", "notebook",
    // "about" in other words ("anything regarding queen cells?").
    "regarding", "concerning",
    // How people talk around a question ("I want to pass it without …", "I
    // keep getting borrow errors, any tips?", "the compiler yells at me",
    // "what's the Rust equivalent?"): the topic is the rest.
    "want", "wants", "wanted", "wanna", "learn", "trying", "tried", "getting", "tips", "tip", "advice", "suggestions", "yells",
    "complains", "complaining", "equivalent", "counterpart",
    // A choice between things ("Vec vs array - which one should I pick?"):
    // the things are the topic, as with "difference".
    "vs", "versus", "pick", "choose", "prefer",
    // Who the explanation is for ("explain shadowing to a beginner").
    "beginner", "beginners", "newbie",
    // Spoken Korean: "what" with its particle fused (`뭘` = 무엇을), "do" and
    // "use" as `do` and `use` are question words ("null 대신 뭘 써?").
    "뭘", "뭔", "뭐가", "뭐를", "해", "해요", "돼", "돼요", "써", "써요",
    // Function words Lucene's stop list (which the search uses) lacks: a
    // small notebook may hold none of them, and a word the notes lack counts
    // against the question ("which hives were treated?").
    "were", "been", "being", "am", "had", "may", "might", "must", "shall", "us", "his", "hers", "ours", "yours", "theirs",
    "myself", "yourself", "itself", "themselves", "ourselves", "very", "most", "own", "up", "down", "out", "over", "under",
    "off", "through", "during", "before", "after", "until", "upon", "whether", "either", "neither", "nor", "yet", "ever",
    "even", "still", "already", "maybe", "perhaps", "probably", "while", "whilst",
    // How often, as the asker's habit ("what's my usual dose?").
    "usual", "usually", "normally", "typically", "generally",
];

/// Words that name no topic even when nothing else is asked ("tell me
/// more", "what about that one?", "그게 뭐야?", "더 알려줘"): a question made
/// only of these, question words and stop words has nothing to search for.
/// Used to recognise such questions, never to drop words from a search.
const FILLERS: &[&str] = &[
    "more", "please", "ok", "okay", "yes", "yeah", "yep", "nope", "huh", "hmm", "hm", "um", "uh", "so", "one", "ones", "else",
    "again", "mean", "means", "meant", "meaning", "say", "said", "really", "sure", "thanks", "thank", "other", "another", "detail",
    "details", "continue", "go", "on", "next", "also", "too", "what's", "that's", "it's", "s", "something", "anything",
    "thing", "things", "stuff", "those", "them", "him", "her", "he", "she", "here", "now", "just", "like", "right", "wait",
    "뭐야", "뭐지", "뭐라고", "뭔가요", "뭔데", "그래서", "더", "알려줘", "알려", "줘", "주세요", "설명해", "설명", "음", "네", "예", "아니",
    "아니요", "자세히", "말이야", "말", "이게", "거", "거요", "그럼", "그래", "응", "왜요", "좀더", "다시", "계속", "방법", "줄래", "줄래요",
    "줘요",
];

/// Whether `word` is a filler (see `FILLERS`), after particle stripping.
pub fn is_filler(word: &str) -> bool {
    // A particle standing alone: cut off a Latin word by the script change (`match보다`).
    PARTICLES.contains(&word) || SHORT_PARTICLES.contains(&word)
        || STOP_WORDS.contains(&word) || FILLERS.contains(&word) || FILLERS.contains(&strip_particle(word)) || KOREAN_FILLERS.contains(&strip_particle(word))
}

pub fn is_question_word(word: &str) -> bool {
    let stem = strip_particle(word);
    if QUESTION_WORDS.contains(&word) || QUESTION_WORDS.contains(&stem) {
        return true;
    }
    // A question word with whatever ending a question gives it: `뭐였지`,
    // `뭔지`, `언제였지`, `얼마였더라`, `어디서`, `누가`.
    let what = KOREAN_QUESTION_STEMS.iter().any(|w| word.starts_with(w));
    word.chars().any(crate::script::is_hangul)
        && (what || KOREAN_FILLERS.contains(&word) || QUESTION_ENDINGS.iter().any(|e| word.ends_with(e)))
}

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

/// What the trigram index holds of a text: its words with Hangul/CJK in
/// them (as `words` cuts them), one space apart. A query's trigrams come
/// only from such words (`search::query::build`), so the English words and
/// code around them would only add trigrams nothing searches for, one per
/// letter. Written without `words`' allocations: ingest runs it on every
/// chunk with Hangul.
pub fn cjk_words(text: &str) -> String {
    let mut out = String::new();
    let mut keep = |word: &str| {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    };
    // The word being read: where it starts, whether its last character is
    // CJK (a CJK word is ASCII digits then CJK), whether it is all digits.
    let mut start: Option<usize> = None;
    let (mut cjk, mut digits) = (false, true);
    for (i, c) in text.char_indices() {
        // Hangul syllables (all letters) first: `is_alphanumeric` looks
        // each up in a Unicode table, a few percent of a Korean ingest.
        let c_cjk = is_cjk(c);
        if !matches!(c, '\u{AC00}'..='\u{D7A3}') && !c.is_alphanumeric() {
            if let Some(s) = start.take()
                && cjk
            {
                keep(&text[s..i]);
            }
            continue;
        }
        match start {
            Some(s) if c_cjk != cjk && !(c_cjk && digits) => {
                if cjk {
                    keep(&text[s..i]);
                }
                start = Some(i);
                digits = c.is_ascii_digit();
            }
            Some(_) => digits &= c.is_ascii_digit(),
            None => {
                start = Some(i);
                digits = c.is_ascii_digit();
            }
        }
        cjk = c_cjk;
    }
    if let Some(s) = start
        && cjk
    {
        keep(&text[s..]);
    }
    out
}

/// The endings an apostrophe cuts off an English word (`Rust's`, `I'm`,
/// `we've`, `you're`, `we'll`, `I'd`), which name nothing.
const CONTRACTED: &[&str] = &["s", "m", "ve", "re", "ll", "d"];

/// What becomes of a negation's auxiliary (`doesn't`, `isn't`: the index
/// reads `doesn` and `t`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Negation {
    /// `isn't` stays `isn`: which sentence answers "what if it isn't set?"
    /// may be the one that says "isn't set" (the built-in answerer).
    Keep,
    /// Dropped: whether the notes hold a topic does not depend on it (the
    /// ask gate, where a word the notes lack counts against the question).
    Drop,
}

/// `text` with its English contractions cut to the word that names
/// something: `Rust's` → `Rust`, `I'm` → `I`, `doesn't` → `doesn` or
/// nothing. The word index splits at the apostrophe, so they would read
/// as words of their own (`m`, `t`) that no topic is about.
fn without_contractions(text: &str, negation: Negation) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        // Each run of letters, digits and apostrophes is read whole.
        let end = rest.find(|c: char| !c.is_alphanumeric() && !is_apostrophe(c)).unwrap_or(rest.len());
        if end == 0 {
            out.push(c);
            rest = &rest[c.len_utf8()..];
        } else {
            out.push_str(contraction_cut(&rest[..end], negation));
            rest = &rest[end..];
        }
    }
    out
}

fn is_apostrophe(c: char) -> bool {
    matches!(c, '\'' | '\u{2019}' | '\u{02BC}')
}

/// One word with apostrophes, cut as `without_contractions` says.
fn contraction_cut(word: &str, negation: Negation) -> &str {
    let mut parts = word.split(is_apostrophe);
    match (parts.next(), parts.next(), parts.next()) {
        (Some(w), Some(ending), None) if !w.is_empty() && CONTRACTED.contains(&ending.to_lowercase().as_str()) => w,
        (Some(w), Some("t" | "T"), None) if w.to_lowercase().ends_with('n') => match negation {
            Negation::Keep => w,
            Negation::Drop => "",
        },
        _ => word,
    }
}

/// The terms of `text` that name its topic: `terms` without question
/// words, fillers, the endings of contractions, `NOT_TOPICS`, what "how"
/// measures or what a price question says of the price. What the ask gate and the built-in answerer weigh a question
/// by (the search reads `terms`).
pub fn topic_terms(text: &str, negation: Negation) -> Vec<Term> {
    let text = without_contractions(text, negation);
    // Words that frame by their neighbour: what "how long", "how often",
    // "얼마나 오래" measures, and "everything" in "tell me everything about
    // hydration", whose topic is what follows.
    let all = words(&text);
    let framing: Vec<&str> = all
        .windows(2)
        .flat_map(|w| {
            if counts_in_korean(&w[0], &w[1]) {
                vec![w[0].as_str(), w[1].as_str()]
            } else if measures(&w[0], &w[1]) {
                vec![w[1].as_str()]
            } else {
                frames_what_follows(&w[0], &w[1]).then_some(w[0].as_str()).into_iter().collect()
            }
        })
        .collect();
    let price = asks_price(&text) == Some(PriceAsk::Surely);
    let topic: Vec<Term> = terms(&text)
        .into_iter()
        .filter(|t| {
            !framing.contains(&t.word.as_str()) && !is_question_word(&t.word) && !is_filler(&t.word) && !NOT_TOPICS.contains(&strip_particle(&t.word))
                && !is_korean_function_word(&t.word)
                && (!price || !names_price(&t.word))
        })
        .collect();
    // "per month", `한 달에`: how often, not what it is about, when the
    // question names something else ("piano lessons a month").
    let rates: Vec<&str> = all
        .windows(2)
        .filter(|w| RATE_WORDS.contains(&w[0].as_str()) && RATE_UNITS.contains(&w[1].as_str()))
        .flat_map(|w| [w[0].as_str(), w[1].as_str()])
        .chain(all.iter().map(String::as_str).filter(|w| RATES_KO.contains(w)))
        .collect();
    let topic: Vec<Term> = if topic.iter().all(|t| rates.contains(&t.word.as_str())) {
        topic
    } else {
        topic.into_iter().filter(|t| !rates.contains(&t.word.as_str())).collect()
    };
    // "show me an example" names no topic of its own: it asks for an example
    // of what the conversation is about.
    if topic.iter().all(|t| EXAMPLE_ASKS.contains(&strip_particle(&t.word))) { Vec::new() } else { topic }
}

/// The words of a request for an example ("show me an example", "give me
/// some sample code", "예를 들어 주세요", "예시를 보여줘"): a topic only when
/// the question names something else too ("document an example").
const EXAMPLE_ASKS: &[&str] = &["show", "give", "example", "examples", "sample", "samples", "code", "들어", "예시", "보여", "보여줘", "보여주세요"];

/// What a rate is per, after `RATE_WORDS` ("per month", "each week", `한
/// 달에`), and Korean words that say it alone (`하루에`, `매달`, `사람당`).
const RATE_WORDS: &[&str] = &["per", "a", "an", "each", "every", "한", "1"];
const RATE_UNITS: &[&str] = &["month", "week", "day", "year", "hour", "달에", "주에", "해에", "시간에"];
const RATES_KO: &[&str] = &["하루에", "일주일에", "한달에", "매달", "매주", "매일", "매년", "사람당", "인당", "1인당"];

/// What "how …" asks to measure ("how long does it ferment?"), and "how
/// come?", which asks why.
const HOW_MEASURES: &[&str] = &["come", "long", "often", "far", "old", "big", "large", "small", "soon", "fast", "quickly", "frequently", "hot", "cold", "warm"];

/// Whether `next` is what the question word `word` asks to measure: "how
/// long", "how often", and Korean "얼마나" ("how much", "how long") before
/// what it measures (`얼마나 오래`, `얼마나 높아`), and the kind of value a
/// "phone number", "email address" or "what time" asks for, which notes
/// written as labels and values seldom name. Not "몇" ("how many") before
/// its counter: `몇 달` is answered by `두 달`.
fn measures(word: &str, next: &str) -> bool {
    match word {
        "how" => HOW_MEASURES.contains(&next),
        "phone" | "telephone" => matches!(next, "number" | "numbers"),
        "email" | "mail" => matches!(next, "address" | "addresses"),
        "what" => matches!(next, "time" | "size"),
        // "two writers at once": together, not a topic. ("At the same time"
        // stays: notes say it in those words.)
        "at" => next == "once",
        "얼마나" => true,
        _ => false,
    }
}

/// Whether `word` and `next` count something, a Korean count word and a
/// counter (`세 가지`, `몇 개`, `두 번`): how many, not what the question is
/// about ("소유권 규칙 세 가지" asks for the ownership rules). Counters that
/// are units (`킬로`, `그램`) stay: notes write them with the number.
fn counts_in_korean(word: &str, next: &str) -> bool {
    const COUNTERS: &[&str] = &["가지", "개", "번", "명", "종류"];
    (COUNTS.contains(&word) || word == "몇" || word.chars().all(|c| c.is_ascii_digit())) && COUNTERS.contains(&strip_particle(next))
}

/// The words for small counts, English and Korean (native numerals, and
/// `한`/`두`/`세`/`네` as they stand before a counter: `두 개`).
pub const COUNTS: &[&str] = &[
    "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "once", "twice", "하나", "둘", "셋", "넷", "다섯", "여섯",
    "일곱", "여덟", "아홉", "한", "두", "세", "네",
];

/// Whether `word` frames a question about what `next` introduces: "tell me
/// everything about", "all about", "what did I write about", "what do you
/// know about", "coming from", "keep getting", "the diff between", "break
/// down". Not
/// "import everything from a module", where the glob is the topic, nor "who
/// wrote the paper?", which asks for its author, nor "keep the starter warm".
fn frames_what_follows(word: &str, next: &str) -> bool {
    match next {
        "about" | "regarding" => {
            matches!(word, "everything" | "all" | "write" | "wrote" | "written" | "know" | "knew" | "noted" | "jotted" | "learned" | "learnt")
        }
        "on" => matches!(word, "everything" | "all"),
        // "what's the diff between a crate and a module": "difference".
        "between" => matches!(word, "diff" | "diffs"),
        // "coming from Python": where the user comes from, not what is asked.
        "from" => matches!(word, "coming" | "come" | "comes"),
        // "what does mpsc stand for?", "short for": asks what it names.
        "for" => matches!(word, "stand" | "stands" | "short"),
        // "break down how a package differs", "spell out the rules": a
        // request for an explanation, as "explain" is.
        "down" => matches!(word, "break"),
        "out" => matches!(word, "spell"),
        // "I keep getting …", "it keeps crashing": how often, not what.
        _ if next.ends_with("ing") => matches!(word, "keep" | "keeps" | "kept"),
        _ => false,
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A question's topic words as the gate reads them.
    pub(super) fn topic(q: &str) -> Vec<String> {
        topic_terms(q, Negation::Drop).into_iter().map(|t| t.word).collect()
    }

    #[test]
    fn a_questions_topic_leaves_out_contractions_framing_and_function_words() {
        assert_eq!(topic("I'm confused about lifetimes, what are they for?"), ["lifetimes"]);
        let q = "Why doesn’t Rust's borrow checker let me? I’ve tried, it won't";
        assert_eq!(topic(q), ["rust", "borrow", "checker", "let"]);
        let kept: Vec<String> = topic_terms(q, Negation::Keep).into_iter().map(|t| t.word).collect();
        assert_eq!(kept, ["doesn", "rust", "borrow", "checker", "let", "won"]);
        assert_eq!(topic("whats a closure"), ["closure"]);
        // An apostrophe that is not a contraction stays as the index reads it.
        assert_eq!(topic("the 'static lifetime and rock'n'roll"), ["static", "lifetime", "rock", "n", "roll"]);
        // A generic `T` is a topic; only `n't`'s `t` is not.
        assert_eq!(topic("What is T in Option<T>?"), ["t", "option"]);
        assert!(topic("what's it?").is_empty() && topic("don't").is_empty());
        assert_eq!(topic("hey, quick question: how does cargo fetch crates"), ["question", "cargo", "fetch", "crates"]);
        // The asker's habit and "while": "what's my usual dose", "while I'm away".
        assert_eq!(topic("whats my usual dose while I'm away"), ["dose", "away"]);
        // "what size" asks a value, as "what time" does.
        assert_eq!(topic("what size pot did the fig get?"), ["pot", "fig"]);
        assert_eq!(topic("which hives were treated before the winter?"), ["hives", "treated", "winter"]);
        // A term is read once, so a second `long` goes with the first.
        assert_eq!(topic("How long does a long string take to sort?"), ["string", "take", "sort"]);
        assert_eq!(topic("how often and how warm should the hive be"), ["hive"]);
        let ko: Vec<String> = topic_terms("러스트에서 null 대신 뭘 써?", Negation::Drop).into_iter().map(|t| t.word).collect();
        assert_eq!(ko, ["러스트에서", "null"]);
        // Korean "use", "make", "do" and "not" in the forms a question takes,
        // as English "use" and "not" are; a word that only starts like one is
        // kept (`쓰레드`; `하나`, "one", is not a topic as English "one" is not).
        let ko: Vec<String> = topic_terms("Rc를 쓰면 스레드를 만들지 않고 쓰레드 하나를 써야 하는 이유는?", Negation::Drop).into_iter().map(|t| t.word).collect();
        assert_eq!(ko, ["rc", "스레드를", "쓰레드"]);
    }

    #[test]
    fn and_or_particles_are_read_off_a_comparisons_words() {
        assert_eq!(topic("String이랑 &str 차이가 뭐야?"), ["string", "str"]);
        assert_eq!(topic("Rc랑 Arc 중에 뭘 써야 돼?"), ["rc", "arc"]);
        assert_eq!(topic("Rc나 Arc?"), ["rc", "arc"]);
        assert_eq!(strip_particle("벡터랑"), "벡터");
        assert_eq!(strip_particle("배열이랑"), "배열");
        assert_eq!(strip_particle("컴파일러한테"), "컴파일러");
        // One syllable before it: part of the word.
        assert_eq!(strip_particle("사랑"), "사랑");
        assert_eq!(strip_particle("하나"), "하나");
        // The spoken copula, likewise: "char 하나는 몇 바이트야?", but `분야` ("field").
        assert_eq!(strip_particle("바이트야"), "바이트");
        assert_eq!(strip_particle("분야"), "분야");
        assert_eq!(topic("char야 아니면 String이야?"), ["char", "string"]);
    }

    #[test]
    fn a_request_for_an_explanation_names_no_topic_but_what_it_is_about() {
        assert_eq!(topic("Give me the gist of traits."), ["traits"]);
        assert_eq!(topic("quick rundown on slices please"), ["slices"]);
        assert_eq!(topic("Summarise what match does for me."), ["match"]);
        assert_eq!(topic("walk me through sourdough feeding, briefly"), ["sourdough", "feeding"]);
        assert_eq!(topic("Break down how a starter differs from a levain."), ["starter", "differs", "levain"]);
        // `break` alone is a word of the notes (a loop's).
        assert_eq!(topic("what does break do in a loop?"), ["break", "loop"]);
        assert_eq!(topic("트레이트가 뭔지 간단히 요약해 줘"), ["트레이트가"]);
        assert_eq!(topic("패키지와 크레이트 차이 좀 정리해 줄래?"), ["패키지와", "크레이트"]);
        assert_eq!(topic("Box<T>를 쉽게 설명해줘"), ["box", "t"]);
        assert_eq!(topic("단위 테스트 작성하는 법 좀 가르쳐 줘"), ["단위", "테스트", "작성하는"]);
        assert_eq!(topic("테스트 하나만 돌리고 싶어"), ["테스트", "돌리고"]);
        assert_eq!(topic("벌집을 옮기고 싶은데"), ["벌집을", "옮기고"]);
    }

    #[test]
    fn a_choice_between_things_names_the_things_not_the_choosing() {
        assert_eq!(topic("Vec vs array - which one should I pick?"), ["vec", "array"]);
        assert_eq!(topic("Whats the diff between a crate and a module"), ["crate", "module"]);
        assert_eq!(topic("Should I prefer rye or spelt? Which would you choose?"), ["rye", "spelt"]);
        assert_eq!(topic("explain shadowing to a beginner"), ["shadowing"]);
        assert_eq!(topic("벡터랑 배열 중에 뭘 골라야 해?"), ["벡터랑", "배열"]);
        assert_eq!(topic("Box는 언제 쓰는 게 좋아?"), ["box"]);
        assert_eq!(topic("호밀이 좋을까 밀이 좋을까?"), ["호밀이", "밀이"]);
        assert_eq!(topic("라이프타임 명시는 왜 필요한 거야?"), ["라이프타임", "명시는", "필요한"]);
        assert_eq!(topic("섀도잉을 초보자한테 설명해 줘"), ["섀도잉을"]);
    }

    #[test]
    fn a_question_about_the_notes_names_what_it_is_about() {
        assert_eq!(topic("tell me everything about hydration"), ["hydration"]);
        assert_eq!(topic("tell me all about hydration"), ["hydration"]);
        assert_eq!(topic("what did I write about sourdough?"), ["sourdough"]);
        assert_eq!(topic("what have I learned about WAL?"), ["wal"]);
        assert_eq!(topic("what do my notes say about checkpoints?"), ["checkpoints"]);
        assert_eq!(topic("anything in my notes regarding queen cells"), ["queen", "cells"]);
        assert_eq!(topic("Coming from Python, I keep reaching for None. What's the Rust equivalent?"), ["python", "reaching", "none", "rust"]);
        assert_eq!(topic("I keep getting \"cannot borrow as mutable\" errors. Any tips?"), ["cannot", "borrow", "mutable", "errors"]);
        assert_eq!(topic("how do I keep the starter warm?"), ["keep", "starter", "warm"]);
        assert_eq!(topic("러스트 처음 배우는데 소유권이 뭔지 모르겠어요"), ["러스트", "소유권이"]);
        // The glob is the topic of "import everything from a module".
        assert_eq!(topic("How do I import everything from a module?"), ["import", "everything", "module"]);
        // An author the notes may lack is asked for.
        assert_eq!(topic("who wrote the BEIR paper?"), ["wrote", "beir", "paper"]);
        assert_eq!(topic("김치에 대해 뭐라고 적었지?"), ["김치에"]);
        // "What was it", "when", "works": spoken forms with no topic.
        assert_eq!(topic("카고 명령 뭐였지?"), ["카고", "명령"]);
        assert_eq!(topic("벡터 쓸까 배열 쓸까?"), ["벡터", "배열"]);
        // Question words with the endings a question gives them; "give"/"pay"; "was it".
        assert_eq!(topic("수술 날짜가 언제였지?"), ["수술", "날짜가"]);
        assert_eq!(topic("재활 치료는 어디서 받아?"), ["재활", "치료는", "받아"]);
        assert_eq!(topic("실리콘 하나에 얼마 줬어?"), ["실리콘"]);
        assert_eq!(topic("욕조를 어떻게 해 두라고 했더라?"), ["욕조를", "두라고"]);
        assert_eq!(topic("Cargo.lock은 무슨 용도야?"), ["cargo", "lock"]);
        assert_eq!(topic("값이 없을 땐 뭘 써?"), ["값이", "없을"]);
        assert_eq!(topic("컴파일이 되는지만 확인하는 명령"), ["컴파일이", "확인하는", "명령"]);
        assert_eq!(topic("내 노트에서 양념 얘기 찾아줘"), ["양념"]);
        assert_eq!(topic("변수 값을 바꾸려고 했더니 에러가 나요"), ["변수", "값을", "바꾸려고", "에러가"]);
    }

    #[test]
    fn korean_measures_and_framing_words_are_not_a_questions_topic() {
        // "how long", "how high": what is measured.
        assert_eq!(topic("배추는 소금물에 얼마나 오래 절여야 해?"), ["배추는", "소금물에", "절여야"]);
        assert_eq!(topic("바람막이는 얼마나 높아?"), ["바람막이는"]);
        // A counter after "몇" stays: the answer says it (`몇 달` → `두 달`).
        assert_eq!(topic("오이지는 몇 달 가요?"), ["오이지는", "달"]);
        // "right away", "most", "all", "can"; `바로` keeps its `로`.
        assert_eq!(topic("담근 김치는 바로 냉장고에 넣나요?"), ["담근", "김치는", "냉장고에"]);
        // "how many days" (`며칠`) is asked as "how many" is: the answer says `이틀`.
        assert_eq!(topic("겨울에 제일 추운 날은 다 며칠이야?"), ["겨울에", "추운", "날은"]);
        assert_eq!(topic("김치는 실온에서 며칠 숙성해?"), ["김치는", "실온에서", "숙성해"]);
        assert_eq!(topic("두 번째 겨울은 추웠나요?"), ["두", "겨울은"]);
        assert_eq!(topic("냉장고에서 먹을 수 있어?"), ["냉장고에서", "먹을"]);
        // A copula is read off like a particle: `꿀이야` is about `꿀`.
        assert_eq!(strip_particle("꿀이야"), "꿀");
        assert_eq!(strip_particle("역할이에요"), "역할");
    }

    #[test]
    fn a_rate_says_how_often_not_what_about() {
        assert_eq!(topic("how many hours does the script save each week?"), ["hours", "script", "save"]);
        assert_eq!(topic("피아노 학원비 한 달에 얼마야"), ["피아노", "학원비"]);
        assert_eq!(topic("재활 치료는 일주일에 몇 번 받으셔?"), ["재활", "치료는", "받으셔"]);
        assert_eq!(topic("잔치 밥값 한 사람당 얼마예요?"), ["잔치", "밥값"]);
        // A rate alone is what is asked about.
        assert_eq!(topic("what do I do every day?"), ["every", "day"]);
    }

    #[test]
    fn a_korean_count_and_its_counter_say_how_many_not_what_about() {
        assert_eq!(topic("러스트의 소유권 규칙 세 가지를 알려주세요."), ["러스트의", "소유권", "규칙"]);
        assert_eq!(topic("첫 겨울에 봉군을 몇 개 잃었나요?"), topic("첫 겨울에 봉군을 잃었나요?"));
        // A unit is what the notes write with the number: it stays.
        assert!(topic("고춧가루 몇 킬로 넣었지").contains(&"킬로".to_string()));
        // A word that is not a count before it: `가지` is an eggplant.
        assert_eq!(topic("가지는 언제 심었어?"), ["가지는", "심었어"]);
    }

    #[test]
    fn korean_verbs_of_taking_time_and_leaving_are_not_a_topic() {
        assert_eq!(topic("배추 절이는 데 몇 시간 걸려?"), ["배추", "절이는", "시간"]);
        assert_eq!(topic("김치는 며칠 실온에 둬?"), ["김치는", "실온에"]);
        // A word that only starts like one stays: `두부` is tofu, `걸레` a rag.
        assert_eq!(topic("두부는 얼마나 걸렸어?"), ["두부는"]);
        assert_eq!(topic("걸레는 어디에 둬?"), ["걸레는"]);
    }

    #[test]
    fn a_korean_verb_made_of_a_noun_gives_the_noun() {
        for (verb, noun) in [("패닉해야", "패닉"), ("통과하게", "통과"), ("유출됐을", "유출"), ("설치된", "설치")] {
            assert_eq!(noun_of_verb(verb), Some(noun), "{verb}");
        }
        // A noun of one syllable would match too much.
        assert_eq!(noun_of_verb("말해"), None);
    }

    #[test]
    fn the_trigram_text_is_the_cjk_words_a_query_reads() {
        for text in [
            "Rust의 소유권 규칙은 `let s = String::from(\"hi\");` 처럼",
            "2024년에는 3개, v2 소유권2 abc2024년 東京タワー",
            "",
            "English only, no Hangul.",
            "소유권",
            "١٢٣년 ok 12345",
            "끝.",
        ] {
            let expected: Vec<String> = words(text).into_iter().filter(|w| w.chars().any(is_cjk)).collect();
            assert_eq!(cjk_words(text), expected.join(" "), "{text}");
        }
    }
}
