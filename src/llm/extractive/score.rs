//! How the extractive model reads a question and scores what could answer
//! it: a unit scores for the question's words it covers (weighted by rarity),
//! but a sentence that only echoes the question scores less than one that
//! adds content, and the question's form asks for a kind of answer — `why`
//! for a cause, `how do I` for a command or call, `how many` for a number,
//! `what is it for` for what it lets one do, `what is` for a definition,
//! `example` for code.

use std::borrow::Cow;

use super::text::{Unit, UnitKind};
use crate::script::is_cjk;
use crate::words;

/// What kind of answer a question asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AskKind {
    Why,
    Example,
    HowTo,
    /// "How many …?", `몇 개`: a number answers.
    Count,
    /// "What is X for?", `무슨 용도`: what it lets one do answers.
    Purpose,
    Define,
    Other,
}

impl AskKind {
    pub fn of(question: &str) -> AskKind {
        let q = format!(" {} ", question.to_lowercase());
        let has = |ws: &[&str]| ws.iter().any(|w| q.contains(w));
        if has(&["example", "show me", "sample code", "예제", "예시", "보여"]) {
            AskKind::Example
        } else if has(&[" why ", " why?", " how come", "reason", "왜", "이유"]) {
            AskKind::Why
        } else if has(&[" how do", " how can", " how to ", " how should", " how would", "what command", "which command", "방법", "려면", "어떻게"]) {
            AskKind::HowTo
        } else if has(&[" how many ", "몇 ", "몇개", "몇번", "몇명", "몇가지"]) && !has(&["몇 시에", "몇 시야", "몇 시예요", "몇 시부터", "몇 시까지"]) {
            AskKind::Count
        } else if has(&[" for?", " for ?", " used for", " good for", " useful for", " purpose", " point of", "용도"]) {
            AskKind::Purpose
        } else if has(&[" what is", " what are", " what's", " whats", " what does", " meaning", " mean?", " means", " define", " stand for", " short for", "이란", "란?", "란 ", "무엇", "뭐예요", "뭔가요", "무슨 뜻", "뭐야", "뭔지", "에 대해"]) {
            AskKind::Define
        } else {
            AskKind::Other
        }
    }
}

/// A value a question asks for by name, which an answer must hold: a note
/// about the dentist without a number does not answer "What is the
/// dentist's phone number?".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Value {
    Phone,
    Email,
    /// A time of day: `07:40`, `3 pm`, `오후 3시`.
    Clock,
    /// A sum of money: `18,000 won`, `$4.50`, `12만원`.
    Money,
    /// A name, asked in English ("what make", "which brand", "who …"): a
    /// word written with a capital that does not open its sentence, or code.
    Name,
    /// A day ("when did …", "what day", `며칠에`, `언제` with a past verb).
    Date,
}

/// Currency words written after a number, and currency signs beside one.
const CURRENCY: &[&str] = &["won", "dollar", "dollars", "usd", "krw", "eur", "euro", "euros", "gbp", "yen", "cents"];
const CURRENCY_KO: &[&str] = &["원", "달러", "유로", "엔"];
const CURRENCY_SIGNS: &[char] = &['$', '£', '€', '₩', '¥'];

impl Value {
    /// The value `question` asks for by name. A price is asked surely ("how
    /// much did I pay") or only of notes that write prices ("how much does
    /// it cost?", which of a programmer's notes asks about speed): `priced`
    /// says whether they do, and is called only then.
    pub fn asked(question: &str, priced: impl FnOnce() -> bool) -> Option<Value> {
        let q = format!(" {} ", question.to_lowercase());
        let has = |ws: &[&str]| ws.iter().any(|w| q.contains(w));
        if has(&["phone number", "telephone number", "전화번호"]) {
            Some(Value::Phone)
        } else if has(&["email address", "e-mail address", "mail address", "이메일 주소", "메일 주소"]) {
            Some(Value::Email)
        } else if has(&[" what time ", "몇 시에", "몇 시야", "몇 시예요", "몇 시부터", "몇 시까지", "몇시"]) && !q.contains("몇시간") {
            Some(Value::Clock)
        } else {
            match words::asks_price(question) {
                Some(words::PriceAsk::Surely) => Some(Value::Money),
                Some(words::PriceAsk::IfPriced) if priced() => Some(Value::Money),
                _ if asks_name(&q) => Some(Value::Name),
                _ if asks_date(&q) => Some(Value::Date),
                _ => None,
            }
        }
    }

    /// Whether the question's (stemmed) word `term` names this kind of value
    /// rather than what it is about: `phone` in "the dentist's phone number".
    pub fn named_by(self, term: &str) -> bool {
        let names: &[&str] = match self {
            Value::Phone => &["phone", "telephone", "전화번호"],
            Value::Email => &["email", "mail", "이메일", "메일"],
            // "time" in "what time" is read off as the value it asks for (`words`).
            Value::Clock => &[],
            // "cost", "paid", "fee" in a price question are read off too.
            Value::Money => &[],
            Value::Name => &["name", "brand", "make", "model"],
            Value::Date => &["date", "day", "time", "날짜"],
        };
        names.iter().any(|n| stem(n) == term || *n == term)
    }

    /// Whether `text`, a part of the evidence entry `entry`, holds a value
    /// of this kind. A bare number (not a year, nor a date's `25일`) is a sum
    /// of money in an entry that names its currency once ("Numbers in
    /// euros." over a budget table), not in one that marks its sums (`£85`):
    /// there a bare number is something else (`65 psi`). A name must be
    /// one the question does not give ("the Etsy seller" is not answered
    /// by "from an Etsy shop"): `asked` is the question's words.
    pub fn in_entry(self, text: &str, entry: &str, asked: &[String]) -> bool {
        match self {
            Value::Name => names_one(text, asked),
            _ => self.in_text(text) || self == Value::Money && text.split_whitespace().any(is_amount) && prices_unmarked(&entry.to_lowercase()),
        }
    }

    /// Whether `text` holds a value of this kind.
    pub fn in_text(self, text: &str) -> bool {
        let lower = text.to_lowercase();
        let chars: Vec<char> = lower.chars().collect();
        match self {
            // A run of digits and the separators a number is written with,
            // seven digits or more, not a date (`2025-08-31`).
            Value::Phone => lower.split(|c: char| !(c.is_ascii_digit() || " +-().".contains(c))).any(|run| {
                let digits: Vec<usize> = run.split(|c: char| !c.is_ascii_digit()).filter(|p| !p.is_empty()).map(str::len).collect();
                digits.iter().sum::<usize>() >= 7 && digits != [4, 2, 2]
            }),
            Value::Email => chars.windows(3).any(|w| w[1] == '@' && w[0].is_alphanumeric() && w[2].is_alphanumeric()),
            Value::Clock => (0..chars.len()).any(|i| {
                if !chars[i].is_ascii_digit() || chars.get(i + 1).is_some_and(char::is_ascii_digit) {
                    return false;
                }
                let rest: String = chars[i + 1..].iter().take(6).collect();
                let after = rest.trim_start();
                (rest.starts_with(':') && rest[1..].starts_with(|c: char| c.is_ascii_digit()))
                    || ["am", "pm", "a.m", "p.m", "o'clock", "o’clock"].iter().any(|s| after.starts_with(s))
                    || (rest.starts_with('시') && !rest.starts_with("시간"))
            }) || words::words(&lower).iter().any(|w| ["noon", "midnight", "정오", "자정"].contains(&w.as_str())),
            // Nothing to pay is a price too.
            Value::Money => has_money(&lower) || lower.split_whitespace().map(bare).any(|t| t == "free" || t.starts_with("무료") || t.starts_with("공짜")),
            Value::Name => names_one(text, &[]),
            Value::Date => writes_date(&lower),
        }
    }
}

/// Whether a (lowercased, space-padded) English question asks for a name:
/// who did something, or what make, brand or model a thing is. Names are
/// told by their capital, which Korean does not write.
fn asks_name(q: &str) -> bool {
    const ASKING: &[&str] = &[
        " what make ", " what brand", " which brand", " what model", " which model", " name of the ", "what's the name", "whats the name",
        "what is the name", "what was the name",
    ];
    let who = ["who", "who's", "whos", "whom"].iter().any(|w| q.trim_start().starts_with(&format!("{w} ")));
    !q.chars().any(crate::script::is_hangul) && (who || ASKING.iter().any(|a| q.contains(a)))
}

/// Whether a (lowercased, space-padded) question asks for a day: "when
/// did …" or "when was …" (not "when is it fine to …", which asks for a
/// case), "what day", `며칠에` (not `며칠 숙성해`, which asks how many days),
/// or `언제` with a verb in the past tense.
fn asks_date(q: &str) -> bool {
    const ASKING: &[&str] = &[
        " when did ", " when was ", " when were ", " what date", " which date", " what day", " which day", "며칠에", "며칠까지", "며칠이",
        "며칠날", "몇 월", "몇월",
    ];
    ASKING.iter().any(|a| q.contains(a)) || q.contains("언제") && words::words(q).iter().any(|w| crate::script::is_past_tense(w))
}

/// Whether English text names something, other than the `asked` words: a
/// word with a capital that does not open its sentence, line or table
/// cell ("the shop on Call Lane", "tutor: Dr. Elena Moreau"; not "I" nor a
/// month or weekday), or code (`read_to_string`).
fn names_one(text: &str, asked: &[String]) -> bool {
    if text.contains('`') {
        return true;
    }
    let mut opens = true;
    for token in text.split_whitespace() {
        let word = bare(token);
        if word.is_empty() {
            // A list marker keeps the next word opening its line; a cell's bar starts one.
            opens |= token.contains('|');
            continue;
        }
        let lower = word.to_lowercase();
        // "May" with a capital inside a sentence is the month.
        let calendar = words::is_calendar(&lower) || word == "May";
        if !opens && word.starts_with(char::is_uppercase) && word != "I" && !calendar && !asked.contains(&lower) {
            return true;
        }
        opens = token.ends_with(['.', '!', '?', '|']);
    }
    false
}

/// Whether lowercased text writes a day: a month or weekday ("8 Mar",
/// "Tues"), a date or a year in figures (`2024-01-17`, `3/4`, `3월 14일`,
/// "built in 1872"), or a day named from today ("yesterday", `지난주`).
fn writes_date(lower: &str) -> bool {
    const DAYS: &[&str] = &["yesterday", "today", "tonight", "tomorrow", "어제", "오늘", "내일", "그제", "지난주", "지난달", "작년", "올해"];
    let ws = words::words(lower);
    let named = ws.iter().any(|w| words::is_calendar(w) || DAYS.iter().any(|d| w.starts_with(d)));
    let korean = ws.iter().any(|w| {
        let rest = w.trim_start_matches(|c: char| c.is_ascii_digit());
        rest.len() < w.len() && ["월", "일", "년"].iter().any(|u| rest.starts_with(u))
    });
    let figures = lower.split_whitespace().map(bare).any(|t| {
        let parts: Vec<&str> = t.split(['/', '-']).collect();
        let dated = (2..=3).contains(&parts.len()) && parts.iter().all(|p| !p.is_empty() && p.len() <= 4 && p.chars().all(|c| c.is_ascii_digit()));
        // "When was the lighthouse built?" is answered by a year.
        dated || t.len() == 4 && t.parse::<u32>().is_ok_and(|y| (1000..=2100).contains(&y))
    });
    named || korean || figures
}

/// Whether lowercased text writes a sum of money: a number with a currency
/// word after it (`18,000 won`, `12만원`, `3만2천원`) or a currency sign
/// beside it (`$4.50`). `won't` is not one.
fn has_money(lower: &str) -> bool {
    let chars: Vec<char> = lower.chars().collect();
    let signed = chars.iter().enumerate().any(|(i, c)| {
        CURRENCY_SIGNS.contains(c) && (chars.get(i + 1).is_some_and(char::is_ascii_digit) || i > 0 && chars[i - 1].is_ascii_digit())
    });
    let tokens: Vec<&str> = lower.split_whitespace().collect();
    // Korean writes large sums with 만/천 apart from their currency: `68만 원`, `3만 9천 원`.
    let number = |t: &str| t.starts_with(|c: char| c.is_ascii_digit()) && t.chars().all(|c| c.is_ascii_digit() || ",.만천백억".contains(c));
    let worded = tokens.iter().enumerate().any(|(i, t)| {
        let t = bare(t);
        // A number and its currency, apart (`129,000 won`) or together (`18,000won`, `6,500원`, `3만2천원`).
        let after = |rest: &str| CURRENCY.iter().chain(CURRENCY_KO).any(|c| rest.starts_with(c));
        (number(t) && tokens.get(i + 1).is_some_and(|n| after(n.trim_start_matches(|c: char| !c.is_alphanumeric()))))
            || t.starts_with(|c: char| c.is_ascii_digit()) && {
                let rest = t.trim_start_matches(|c: char| c.is_ascii_digit() || ",.만천백억".contains(c));
                !rest.is_empty() && after(rest)
            }
    });
    signed || worded
}

/// Whether an evidence entry writes prices: a sum of money, or a currency
/// named over bare numbers ("Numbers in euros." over a budget table). Not
/// "free", which a programmer's notes say of memory.
pub fn writes_prices(entry: &str) -> bool {
    let lower = entry.to_lowercase();
    has_money(&lower) || prices_unmarked(&lower)
}

/// Whether a (lowercased) entry names its currency once and writes its sums
/// as bare numbers, marking none.
fn prices_unmarked(lower: &str) -> bool {
    !has_money(lower) && words::words(lower).iter().any(|w| CURRENCY.contains(&w.as_str())) && lower.split_whitespace().any(is_amount)
}

/// Whether a whitespace-separated token is a bare amount: digits (with `,`
/// or `.`), at least two, not a year.
fn is_amount(token: &str) -> bool {
    let t = bare(token);
    let year = t.len() == 4 && (t.starts_with("19") || t.starts_with("20"));
    t.chars().filter(char::is_ascii_digit).count() >= 2 && t.chars().all(|c| c.is_ascii_digit() || ",.".contains(c)) && !year
}

/// A token without the punctuation around it.
fn bare(token: &str) -> &str {
    token.trim_matches(|c: char| !c.is_alphanumeric())
}

const CAUSAL: &[&str] = &[
    "because", "so that", "since ", "due to", "this is why", "that's why", "that’s why", "the reason", "in order to", "otherwise",
    "prevents", "ensures", "때문", "위해", "따라서", "그래서", "이유",
];
/// What says what a thing is for: what it lets one do.
const PURPOSE: &[&str] = &[
    " lets ", " allows ", " enables ", " useful ", " used to ", " used for ", " use it to ", " so that ", " in order to ", " purpose", " helps ",
    " is for ", " are for ", " is meant ", "위해", "용도", "쓰인", "사용된", "수 있게", "수 있도록", "해 줍니다", "해 준다",
];
const DEFINING: &[&str] = &[" is a ", " is an ", " is the ", " are ", " means ", " refers to", " lets ", " allows ", " stands for ", " short for ", " abbreviation "];
/// Openings of English sentences that announce rather than say ("Let's look at …").
const ANNOUNCING: &[&str] = &[
    "let's", "let’s", "we'll", "we’ll", "we will", "in this section", "in this chapter", "next,", "now,", "now we", "listing ",
    "here's", "here’s", "as you", "you'll", "you’ll", "first, ",
];
/// Korean announcing endings (the verb comes last): "…살펴보겠습니다."
const ANNOUNCING_KO: &[&str] = &["살펴보겠", "알아보겠", "살펴봅시다", "알아봅시다", "보겠습니다", "봅시다", "하겠습니다"];

/// A light English stemmer: enough to match `borrowing` with `borrow`, not a
/// linguistic one.
pub fn stem(word: &str) -> String {
    if word.chars().any(is_cjk) {
        return word.to_string();
    }
    let mut base = word;
    for suffix in ["ations", "ation", "ings", "ing", "ers", "ies", "ied", "ed", "es", "er", "ly", "s"] {
        if let Some(b) = word.strip_suffix(suffix)
            && b.chars().count() >= 3
        {
            base = b;
            break;
        }
    }
    // A final e goes too, so `take`, `takes` and `taken`'s neighbours meet: `tak`.
    match base.strip_suffix('e') {
        Some(b) if b.chars().count() >= 3 => b.to_string(),
        _ => base.to_string(),
    }
}

/// Verb endings a Korean question's words come in (`최적화해서`, `공유하는`)
/// that the notes' sentences rarely share; stripped after the particle.
const KOREAN_VERB_ENDINGS: &[&str] = &["해서", "하는", "하고", "하면", "하여", "해야", "되는", "된다", "한다", "하게", "해요", "했을", "할"];

/// A Korean word as matched against sentences: particle, then a verb ending
/// stripped, keeping at least two syllables.
pub fn korean_stem(word: &str) -> String {
    let w = words::strip_particle(word);
    for e in KOREAN_VERB_ENDINGS {
        if let Some(stem) = w.strip_suffix(e)
            && stem.chars().count() >= 2
        {
            return stem.to_string();
        }
    }
    w.to_string()
}

/// Content words of `text`, stemmed (Korean: particle stripped, shared with search).
pub fn content_terms(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for t in words::topic_terms(text, words::Negation::Keep) {
        let term = if t.cjk { korean_stem(&t.word) } else { stem(&t.word) };
        if !out.contains(&term) {
            out.push(term);
        }
    }
    out
}

/// A unit's words, stemmed, for matching.
pub struct Indexed<'a> {
    pub unit: &'a Unit,
    words: Vec<String>,
    /// The unit's text and the text of what it introduces, lowercased.
    lower: String,
    follow_lower: String,
    /// How many list items the unit introduces.
    follow_items: usize,
    /// The title the unit's text goes on from (the first unit of a titled
    /// entry): its words count as the unit's own.
    pub title: String,
    /// The title's words, stemmed as `words` are, and its text lowercased.
    title_words: Vec<String>,
    title_lower: String,
}

impl<'a> Indexed<'a> {
    pub fn new(unit: &'a Unit, all: &[Unit]) -> Indexed<'a> {
        let follow_lower = unit.follow.iter().map(|&i| all[i].text.to_lowercase()).collect::<Vec<_>>().join(" ");
        // A table row reads with its header: the header names what the cells are.
        let text: Cow<str> = match unit.header {
            Some(h) => Cow::Owned(format!("{}\n{}", all[h].text, unit.text)),
            None => Cow::Borrowed(&unit.text),
        };
        let words = words::words(&text).iter().map(|w| stem(w)).collect();
        let follow_items = unit.follow.iter().filter(|&&i| all[i].kind == UnitKind::Item).count();
        Indexed {
            unit,
            words,
            lower: text.to_lowercase(),
            follow_lower,
            follow_items,
            title: String::new(),
            title_words: Vec::new(),
            title_lower: String::new(),
        }
    }

    /// The unit opens an entry whose text goes on from `title`.
    pub fn with_title(self, title: &str) -> Self {
        let title_words = words::words(title).iter().map(|w| stem(w)).collect();
        Indexed { title: title.to_string(), title_words, title_lower: title.to_lowercase(), ..self }
    }

    fn title_has(&self, term: &str) -> bool {
        if term.chars().any(is_cjk) { self.title_lower.contains(term) } else { self.title_words.iter().any(|w| w == term) }
    }

    pub fn has(&self, term: &str) -> bool {
        self.own_has(term) || self.title_has(term)
    }

    fn own_has(&self, term: &str) -> bool {
        match term.chars().count() {
            // One syllable matches inside too many words (`값` in `값을`, but
            // also `건` in `조건`): it must be a whole word.
            1 if term.chars().any(is_cjk) => self.words.iter().any(|w| words::strip_particle(w) == term),
            _ if term.chars().any(is_cjk) => self.lower.contains(term),
            _ => self.words.iter().any(|w| w == term),
        }
    }

    fn follow_has(&self, term: &str) -> bool {
        if term.chars().any(is_cjk) {
            self.follow_lower.contains(term)
        } else {
            words::words(&self.follow_lower).iter().any(|w| stem(w) == term)
        }
    }
}

/// The question as the scorer reads it.
pub struct Question {
    pub kind: AskKind,
    pub terms: Vec<String>,
    pub weights: Vec<f64>,
    /// How many things the question asks for by number ("the three Fn
    /// traits", `세 가지`): a list of that many items answers it.
    pub listed: Option<usize>,
}

/// Rarity weights of `terms` among the units: a word in every sentence says little.
pub fn weigh(terms: &[String], units: &[Indexed]) -> Vec<f64> {
    let total = units.len() as f64;
    terms
        .iter()
        .map(|t| {
            let df = units.iter().filter(|u| u.has(t)).count() as f64;
            (1.0 + total / (1.0 + df)).ln()
        })
        .collect()
}

/// The share of the question's weight a unit covers (with what it introduces).
pub fn coverage(u: &Indexed, q: &Question) -> f64 {
    let sum: f64 = q.weights.iter().sum();
    if sum <= 0.0 {
        return 0.0;
    }
    let own: f64 = q.terms.iter().zip(&q.weights).filter(|(t, _)| u.has(t)).map(|(_, w)| w).sum();
    let with_follow: f64 = q.terms.iter().zip(&q.weights).filter(|(t, _)| u.has(t) || u.follow_has(t)).map(|(_, w)| w).sum();
    // What a sentence introduces counts, a little less than its own words.
    (own.max(0.9 * with_follow)) / sum
}

/// How well a unit answers, given its coverage: new content over echo, and
/// the kind of sentence the question's form asks for.
pub fn answer_score(u: &Indexed, q: &Question, cov: f64) -> f64 {
    // New content: the unit's words (numbers included) that are not the
    // question's. Three say something; fewer only echo the question.
    let new = u
        .words
        .iter()
        .filter(|w| {
            let cjk = w.chars().any(is_cjk);
            let key = if cjk { korean_stem(w) } else { (*w).clone() };
            let counts = w.chars().any(|c| c.is_ascii_digit()) || w.chars().count() > if cjk { 1 } else { 2 };
            counts && !q.terms.iter().any(|t| if cjk { key.starts_with(t.as_str()) } else { &key == t })
        })
        .count();
    let novelty = (new as f64 / 3.0).min(1.0);
    let text = format!(" {} ", u.lower);
    let has_any = |ws: &[&str]| ws.iter().any(|w| text.contains(w));
    let has_code = u.unit.text.contains('`') || u.unit.follow.iter().any(|_| u.follow_lower.contains("$ ") || u.follow_lower.contains('('));
    let score = cov * (0.6 + 0.4 * novelty);
    // The kind of sentence the question's form asks for.
    let fits = match q.kind {
        AskKind::Why => has_any(CAUSAL),
        AskKind::HowTo => has_code,
        AskKind::Example => !u.unit.follow.is_empty(),
        AskKind::Count => states_count(u),
        AskKind::Purpose => has_any(PURPOSE),
        AskKind::Define => has_any(DEFINING) || subject_is_asked(u, q),
        AskKind::Other => false,
    };
    let mut factor = if fits { FITS_FACTOR } else { 1.0 };
    // A list of as many items as the question asks for ("the three rules")
    // is the answer, whatever the sentence introducing it says.
    if q.listed.is_some_and(|n| u.follow_items == n) {
        factor *= FITS_FACTOR;
    }
    if only_announces(u) {
        factor *= ANNOUNCE_FACTOR;
    }
    if u.unit.text.chars().count() > 400 {
        factor *= 0.85;
    }
    score * factor
}

/// Words after which a number names a place in the text, not a count
/// ("Listing 8-25", "Chapter 4", `예제 7-15`).
const NUMBERED: &[&str] = &["listing", "chapter", "figure", "table", "section", "appendix", "예제", "그림", "표"];

/// Whether a unit states a count: a number that is not a listing's or a
/// chapter's, or a word for one (`하나만` counts as `하나`).
fn states_count(u: &Indexed) -> bool {
    let ws = words::words(&u.lower);
    ws.iter().enumerate().any(|(i, w)| {
        let numbered = i > 0 && NUMBERED.contains(&ws[i - 1].as_str());
        let bare = words::strip_particle(w);
        (w.starts_with(|c: char| c.is_ascii_digit()) && !numbered) || words::COUNTS.contains(&bare) || words::COUNTS.contains(&w.as_str())
    })
}

/// How much more a unit of the kind the question's form asks for counts.
const FITS_FACTOR: f64 = 1.6;

/// How much less a sentence that only announces counts.
pub const ANNOUNCE_FACTOR: f64 = 0.6;

/// Whether a sentence announces what comes ("Let's look at …") without
/// bringing it (a sentence that introduces a list or code block does).
pub fn only_announces(u: &Indexed) -> bool {
    let lower = u.lower.trim_start();
    u.unit.kind == UnitKind::Sentence
        && u.unit.follow.is_empty()
        && (ANNOUNCING.iter().any(|a| lower.starts_with(a)) || ANNOUNCING_KO.iter().any(|a| lower.contains(a)))
}

/// Openings of a sentence that goes on from the one before it, as its
/// consequence or the way out of the problem it set ("Because of this
/// common usage, … Rust has a shorthand", "To do that, we add …"):
/// without them the sentence before tells only half.
const CONTINUING: &[&str] = &[
    "because of this", "because of that", "to do that", "to do this", "to fix this", "to fix that", "to solve this", "to avoid this",
    "luckily", "fortunately", "instead,", "that's why", "that’s why", "this is why", "this is called", "this technique",
    "therefore", "as a result", "so,", "thus", "that way", "for this reason", "for these reasons", "in that case",
];
/// Korean ones: "그래서", "이 때문에" …
const CONTINUING_KO: &[&str] = &["그래서", "따라서", "이 때문에", "그러므로", "다행히", "대신", "이를 위해", "이렇게 하면", "그러면"];

/// Whether a sentence goes on from the one before it (`CONTINUING`).
pub fn continues(u: &Indexed) -> bool {
    let lower = u.lower.trim_start();
    u.unit.kind == UnitKind::Sentence && CONTINUING.iter().chain(CONTINUING_KO).any(|a| lower.starts_with(a))
}

/// Whether one of the question's words is the sentence's subject.
fn subject_is_asked(u: &Indexed, q: &Question) -> bool {
    q.terms.iter().any(|t| u.subject_has(t))
}

impl Indexed<'_> {
    /// Whether `term` is in the sentence's subject: before its first `is`/
    /// `are`/`means` (within 80 characters), or a Korean word marked with a
    /// topic particle (`소유권은`, `벌집이란`).
    pub fn subject_has(&self, term: &str) -> bool {
        if self.title_has(term) {
            return true;
        }
        if term.chars().any(is_cjk) {
            return words::words(&self.lower).iter().take(6).any(|w| {
                ["은", "는", "이란", "란", "이라는"].iter().any(|p| w.strip_suffix(p).is_some_and(|s| korean_stem(s).starts_with(term)))
            });
        }
        let cut = [" is ", " are ", " means ", " refers "].iter().filter_map(|v| self.lower.find(v)).min();
        match cut {
            Some(end) if end <= 80 => words::words(&self.lower[..end]).iter().any(|w| stem(w) == term),
            _ => false,
        }
    }
}
