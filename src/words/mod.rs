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

/// What a question about an outcome is asked with ("what happens if the
/// power goes out?", "what went wrong in week 5?"): words that name none of
/// its topic, which a small notebook seldom writes. The gate does not weigh
/// them; the built-in answerer still reads them (a sentence saying what
/// happens speaks to "what happens if …"), so they are not `NOT_TOPICS`.
pub const OUTCOME_FRAMES: &[&str] = &["happen", "happens", "happened", "happening", "goes", "went", "gone", "going", "wrong"];

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
                && count_in_one_word(&t.word).is_none()
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
/// (Not "heavy": notes that weigh a thing say "kg" with it, and one that
/// does not answers "how heavy is the grinder?" with the dose it grinds.)
const HOW_MEASURES: &[&str] = &[
    "come", "long", "often", "far", "old", "big", "large", "small", "soon", "fast", "quickly", "frequently", "hot", "cold", "warm", "tall",
    "wide", "deep", "thick", "late", "early",
];

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
        "what" => matches!(next, "time" | "size" | "height" | "width" | "depth" | "length" | "thickness"),
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
    (COUNTS.contains(&word) || word == "몇" || word.chars().all(|c| c.is_ascii_digit())) && COUNTERS.contains(&strip_particle(next))
}

/// Korean counters, as `counts_in_korean` reads them.
const COUNTERS: &[&str] = &["가지", "개", "번", "명", "종류"];

/// The number of things a question asks for: a count word before what it
/// counts ("the five unsafe superpowers"; Korean before a counter, `세 가지`,
/// or run into it, `3가지`). Not one: "one of them" counts nothing.
pub fn listed(question: &str) -> Option<usize> {
    const EN: [&str; 8] = ["two", "three", "four", "five", "six", "seven", "eight", "nine"];
    const KO: [&str; 8] = ["두", "세", "네", "다섯", "여섯", "일곱", "여덟", "아홉"];
    let ws = words(question);
    ws.iter().enumerate().find_map(|(i, w)| {
        let next = ws.get(i + 1).map(|n| strip_particle(n));
        if let Some(k) = EN.iter().position(|e| e == w) {
            return next.filter(|n| !n.chars().any(is_cjk)).map(|_| k + 2);
        }
        if let Some(k) = KO.iter().position(|e| e == w) {
            return next.filter(|n| COUNTERS.contains(n)).map(|_| k + 2);
        }
        count_in_one_word(w).filter(|n| (2..=9).contains(n))
    })
}

/// The number of a count written as one word, a number run into its
/// counter (`3가지가`), as `세 가지` is two.
fn count_in_one_word(word: &str) -> Option<usize> {
    let digits = word.chars().take_while(char::is_ascii_digit).count();
    COUNTERS.contains(&strip_particle(&word[digits..])).then(|| word[..digits].parse().ok()).flatten()
}

/// Months and weekdays, in full and as notes shorten them.
pub const CALENDAR: [(&str, &str); 21] = [
    ("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("june", "jun"), ("july", "jul"),
    ("august", "aug"), ("september", "sep"), ("september", "sept"), ("october", "oct"), ("november", "nov"), ("december", "dec"),
    ("monday", "mon"), ("tuesday", "tue"), ("tuesday", "tues"), ("wednesday", "wed"), ("thursday", "thu"), ("thursday", "thurs"),
    ("friday", "fri"), ("saturday", "sat"), ("sunday", "sun"),
];

/// Whether a lowercased word is a month or weekday, in full, shortened or
/// as a plural ("Tuesdays").
pub fn is_calendar(word: &str) -> bool {
    let one = word.strip_suffix('s').filter(|w| w.ends_with("day")).unwrap_or(word);
    CALENDAR.iter().any(|&(full, short)| one == full || one == short)
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
mod tests;
