//! Attribute: the stage between generate and validate that checks an answer
//! the model did not fully cite. Each substantive sentence without a marker
//! is aligned with the packed evidence — an exact quote (under the rag-v2
//! verifier's folding) first, then the IDF-weighted share of its content
//! words found in one entry — and gets that entry's marker when the support
//! reaches the calibrated threshold. A number or a name (a capitalised word,
//! an identifier, a code token) that appears in no evidence entry vetoes
//! support outright: an invented fact never gets a marker. The answer is
//! grounded only when every substantive sentence is model-cited or
//! attributed (`validate::verdict`).

use std::collections::{HashMap, HashSet};

use serde::Serialize;

use super::extract::Marker;
use super::sentences;
use crate::markup::fold;
use crate::words::{is_filler, is_question_word, words};

/// The support a sentence needs to be attributed. Fitted on the dev half of
/// fixtures/attribution/ (`kebab eval attribution --fit`), reported on test.
pub const THRESHOLD: f64 = 0.689;

/// An exact quote must be at least this long (folded) to count as one: "It
/// is." occurs in any text. A shorter one counts with this many content
/// words ("Copper kettles tarnish.", quoted for "Do copper kettles tarnish?").
const MIN_QUOTE_CHARS: usize = 24;
const MIN_QUOTE_WORDS: usize = 3;

/// Words that make a sentence courteous, not factual ("I hope this helps").
const COURTESY: &[&str] = &["hope", "helps", "help", "helpful", "glad", "happy", "feel", "free", "further", "let", "know", "here", "following", "below", "above", "summary", "short", "sure"];

/// Phrases with which a model says the notes do not answer: such a reply is
/// the model's own refusal (`llm_self_judge`), not an unsupported claim.
const NO_ANSWER: &[&str] = &[
    "does not answer", "do not answer", "doesn't answer", "don't answer", "does not contain", "do not contain",
    "doesn't contain", "don't contain", "no information", "not mentioned", "does not mention", "doesn't mention",
    "do not mention", "don't mention", "i don't know", "i do not know", "cannot answer", "can't answer",
    "not enough information", "does not say", "doesn't say", "do not say",
    // The Korean prompts' refusal ("노트에 답이 없습니다.") and its kin, and
    // the built-in answerer's ("… 답할 수 없습니다.").
    "답이 없", "언급되어 있지 않", "답할 수 없",
];

/// How a sentence of the answer is backed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SentenceOrigin {
    /// The model cited it.
    Model,
    /// kebab found it in an evidence entry.
    Attributed,
    /// No entry supports it (or it names a fact no entry holds).
    Unsupported,
}

/// One substantive sentence and its backing.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Judged {
    /// Byte range of the sentence in the answer text.
    pub start: usize,
    pub end: usize,
    pub origin: SentenceOrigin,
    /// The evidence entry (`[#n]`) that backs it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub n: Option<usize>,
    /// 0–1: 1 for an exact quote, else the IDF-weighted share of its content
    /// words in entry `n`; 0 when vetoed.
    pub support: f64,
    /// The number or name found in no evidence entry, when that vetoed it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub invented: Option<String>,
}

/// The judgement of a whole answer (`answer.v1.attribution`).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Attribution {
    pub threshold: f64,
    /// Substantive sentences only; courtesy and connective text is left out.
    pub sentences: Vec<Judged>,
    /// The model said the notes do not answer.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub says_no_answer: bool,
}

impl Attribution {
    /// Every substantive sentence is model-cited or attributed (and there is one).
    pub fn grounded(&self) -> bool {
        !self.sentences.is_empty() && self.sentences.iter().all(|s| s.origin != SentenceOrigin::Unsupported)
    }

    /// Whether any sentence was attributed by kebab (else the model cited all).
    pub fn any_attributed(&self) -> bool {
        self.sentences.iter().any(|s| s.origin != SentenceOrigin::Model)
    }

    /// The entries kebab attributed sentences to, in order of first use, each
    /// with its best support.
    pub fn attributed_entries(&self) -> Vec<(usize, f64)> {
        let mut out: Vec<(usize, f64)> = Vec::new();
        for s in self.sentences.iter().filter(|s| s.origin == SentenceOrigin::Attributed) {
            let Some(n) = s.n else { continue };
            match out.iter_mut().find(|(m, _)| *m == n) {
                Some(e) => e.1 = e.1.max(s.support),
                None => out.push((n, s.support)),
            }
        }
        out
    }
}

/// The packed evidence as attribution reads it.
pub struct Evidence {
    entries: Vec<Entry>,
    /// Every word of every entry, unstemmed: where names and numbers are looked up.
    all_words: HashSet<String>,
    /// IDF of each stem over the entries.
    df: HashMap<String, usize>,
    /// The question's content stems: a sentence made only of them restates
    /// the question and claims nothing.
    question: HashSet<String>,
}

struct Entry {
    n: usize,
    /// The text without markup, case kept: where code tokens are looked up.
    plain: String,
    folded: String,
    stems: HashSet<String>,
}

impl Evidence {
    /// `entries`: each evidence entry's number and text.
    pub fn new<'a>(entries: impl IntoIterator<Item = (usize, &'a str)>) -> Evidence {
        let mut ev = Evidence { entries: Vec::new(), all_words: HashSet::new(), df: HashMap::new(), question: HashSet::new() };
        for (n, text) in entries {
            let plain = crate::markup::strip_markup(text);
            let folded = fold(text);
            let ws = words(&folded);
            let stems: HashSet<String> = ws.iter().map(|w| stem(w)).collect();
            for s in &stems {
                *ev.df.entry(s.clone()).or_default() += 1;
            }
            ev.all_words.extend(ws);
            ev.entries.push(Entry { n, plain, folded, stems });
        }
        ev
    }

    /// The question the answer replies to (without it, no sentence is an echo).
    pub fn for_question(mut self, question: &str) -> Evidence {
        self.question = content_stems(question).into_iter().collect();
        self
    }

    /// Whether some entry holds this number or name: a code token or an
    /// identifier exactly as written (`String` is not `string`), anything
    /// else word for word, case folded.
    fn holds(&self, t: &Special) -> bool {
        if t.exact {
            self.entries.iter().any(|e| contains_token(&e.plain, &t.text))
        } else {
            words(&t.text).iter().all(|w| self.all_words.contains(w))
        }
    }

    fn idf(&self, stem: &str) -> f64 {
        let n = self.entries.len() as f64;
        let df = self.df.get(stem).copied().unwrap_or(0) as f64;
        (1.0 + (n + 1.0) / (df + 0.5)).ln()
    }
}

/// What one sentence amounts to against the evidence.
#[derive(Debug, Clone, PartialEq)]
pub enum Judgement {
    /// Too little content to be a claim ("Here is how:").
    Filler,
    /// Only the question's own words, and not a quote of the evidence: it
    /// restates the question ("A loop can hand a value back [#2]." to "Can a
    /// loop hand a value back?").
    Echo,
    /// Names a number or name no entry holds.
    Invented(String),
    /// Its best entry and the support there.
    Scored { n: usize, support: f64 },
}

/// Judges one sentence (markers in it are ignored).
pub fn judge(ev: &Evidence, sentence: &str) -> Judgement {
    let plain = without_markers(sentence);
    if let Some(token) = special_tokens(&plain).into_iter().find(|t| !ev.holds(t)) {
        return Judgement::Invented(token.text);
    }
    let content: Vec<String> = content_stems(&plain);
    let has_special = !special_tokens(&plain).is_empty();
    if content.len() < 2 && !has_special {
        return Judgement::Filler;
    }
    let quote = fold(&plain);
    // The quotation marks a model (or the built-in answerer) puts around a
    // copied sentence are not part of it.
    let quote = quote.trim_matches(['"', '“', '”', ' ']).trim_end_matches(['.', '!', '?', ':', ';', ',', ' ', '"', '”']);
    if (quote.chars().count() >= MIN_QUOTE_CHARS || content.len() >= MIN_QUOTE_WORDS)
        && let Some(e) = ev.entries.iter().find(|e| e.folded.contains(quote))
    {
        return Judgement::Scored { n: e.n, support: 1.0 };
    }
    // After the quote test: an exact quote of the notes is not an echo, even
    // when the question borrowed every word of it.
    if !ev.question.is_empty() && content.iter().all(|w| ev.question.contains(w)) {
        return Judgement::Echo;
    }
    let total: f64 = content.iter().map(|w| ev.idf(w)).sum();
    let mut best = Judgement::Filler;
    let mut best_support = -1.0;
    for e in &ev.entries {
        let found: f64 = content.iter().filter(|w| e.stems.contains(*w)).map(|w| ev.idf(w)).sum();
        let support = if total > 0.0 { found / total } else { 0.0 };
        if support > best_support {
            best_support = support;
            best = Judgement::Scored { n: e.n, support };
        }
    }
    best
}

/// Judges every substantive sentence of `answer`: one with a valid model
/// marker is the model's; the rest are attributed at `threshold` or flagged.
/// A sentence that only restates the question is not substantive, cited or
/// not: small models answer that way when they find nothing.
pub fn attribute(answer: &str, markers: &[Marker], ev: &Evidence, threshold: f64) -> Attribution {
    let says_no_answer = |text: &str| {
        let folded = fold(text);
        NO_ANSWER.iter().any(|p| folded.contains(p))
    };
    let mut a = Attribution { threshold, sentences: Vec::new(), says_no_answer: says_no_answer(answer) };
    for span in sentences::split(answer) {
        let text = &answer[span.start..span.end];
        // A copy of an entry's header is the prompt echoed, not a claim.
        if super::extract::is_header_copy(line_of(answer, span.start)) {
            continue;
        }
        let cited = markers.iter().find(|m| m.start >= span.start && m.end <= span.end);
        // "The notes do not answer this." is the model's refusal, not a
        // claim the evidence fails to support.
        if cited.is_none() && says_no_answer(text) {
            continue;
        }
        let judged = |origin, n, support, invented| Judged { start: span.start, end: span.end, origin, n, support, invented };
        let j = judge(ev, text);
        let sentence = match (cited, j) {
            (Some(m), Judgement::Scored { support, .. }) => judged(SentenceOrigin::Model, Some(m.n), support, None),
            (Some(m), Judgement::Filler | Judgement::Invented(_)) => judged(SentenceOrigin::Model, Some(m.n), 0.0, None),
            (_, Judgement::Echo) | (None, Judgement::Filler) => continue,
            (None, Judgement::Invented(t)) => judged(SentenceOrigin::Unsupported, None, 0.0, Some(t)),
            (None, Judgement::Scored { n, support }) if support >= threshold => {
                judged(SentenceOrigin::Attributed, Some(n), round(support), None)
            }
            (None, Judgement::Scored { n, support }) => judged(SentenceOrigin::Unsupported, Some(n), round(support), None),
        };
        a.sentences.push(sentence);
    }
    a
}

/// Whether `needle` occurs in `hay` not as part of a longer word (`Strin`
/// is not in `String`).
fn contains_token(hay: &str, needle: &str) -> bool {
    let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    hay.match_indices(needle).any(|(at, _)| !word(hay[..at].chars().next_back()) && !word(hay[at + needle.len()..].chars().next()))
}

/// The whole line of `answer` holding byte `at`.
fn line_of(answer: &str, at: usize) -> &str {
    let start = answer[..at].rfind('\n').map_or(0, |i| i + 1);
    let end = answer[at..].find('\n').map_or(answer.len(), |i| at + i);
    &answer[start..end]
}

fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// The sentence without `[#n]` markers.
fn without_markers(sentence: &str) -> String {
    let mut out = sentence.to_string();
    for m in super::extract::markers(sentence).iter().rev() {
        out.replace_range(m.start..m.end, "");
    }
    out
}

/// The distinct content words of `text`, stemmed: no stop words, question
/// words, fillers or courtesy words.
pub(crate) fn content_stems(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for w in words(&fold(text)) {
        if is_filler(&w) || is_question_word(&w) || COURTESY.contains(&w.as_str()) {
            continue;
        }
        let s = stem(&w);
        if !out.contains(&s) {
            out.push(s);
        }
    }
    out
}

/// A crude English stem (`borrows`, `borrowed`, `borrowing` → `borrow`), so
/// a light paraphrase still matches; other scripts are kept as they are.
fn stem(word: &str) -> String {
    if !word.is_ascii() || word.len() <= 4 {
        return crate::words::strip_particle(word).to_string();
    }
    for suffix in ["ing", "ed", "es", "s", "ly"] {
        if let Some(s) = word.strip_suffix(suffix)
            && s.len() >= 3
        {
            return s.to_string();
        }
    }
    word.to_string()
}

/// A number or name of a sentence; `exact`: a number, code token or
/// identifier, looked up as written (`0.10.2` is not `0`, `10` and `2`).
#[derive(Debug, Clone, PartialEq)]
struct Special {
    text: String,
    exact: bool,
}

/// The numbers and names of a sentence: tokens with a digit, code spans'
/// tokens, identifiers (`snake_case`, `Type::path`, `camelCase`, `macro!`),
/// and capitalised words other than the first.
fn special_tokens(sentence: &str) -> Vec<Special> {
    let mut out = Vec::new();
    for (i, part) in sentence.split('`').enumerate() {
        let in_code = i % 2 == 1;
        for (j, raw) in part.split_whitespace().enumerate() {
            let t = raw.trim_matches(|c: char| !c.is_alphanumeric() && !matches!(c, '_' | ':' | '!'));
            let t = t.trim_end_matches([':', '!']).trim_start_matches(':');
            if !t.chars().any(char::is_alphanumeric) {
                continue;
            }
            let first_word = i == 0 && j == 0;
            let inner_upper = t.chars().skip(1).any(char::is_uppercase) && t.chars().any(char::is_lowercase);
            let capitalised = !first_word && t.chars().next().is_some_and(char::is_uppercase) && t != "I";
            let ident = t.contains('_') || t.contains("::") || raw.contains("!(") || raw.ends_with("!`");
            let has_digit = t.chars().any(|c| c.is_ascii_digit());
            let special = in_code || has_digit || inner_upper || capitalised || ident;
            if special {
                out.push(Special { text: t.to_string(), exact: in_code || ident || inner_upper || has_digit });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rag::extract::markers;

    const E1: &str = "## Slices\nA string slice is a reference to part of a String, and it looks like this: `let hello = &s[0..5];`.";
    const E2: &str = "Cargo is Rust's build system and package manager. Run `cargo new hello_cargo` to create a project.";

    fn ev() -> Evidence {
        Evidence::new([(1, E1), (2, E2)])
    }

    fn run(answer: &str) -> Attribution {
        attribute(answer, &markers(answer), &ev(), THRESHOLD)
    }

    #[test]
    fn a_sentence_of_only_the_question_words_is_an_echo_cited_or_not() {
        let asked = ev().for_question("Can a loop hand back a value?");
        assert_eq!(judge(&asked, "A loop can hand back a value [#1]."), Judgement::Echo);
        let a = attribute("A loop can hand back a value [#1].", &markers("A loop can hand back a value [#1]."), &asked, THRESHOLD);
        assert!(a.sentences.is_empty() && !a.grounded(), "{a:?}");
        // A quote of the notes is not an echo, whatever the question borrowed from it.
        let borrowed = ev().for_question("Is a string slice a reference to part of a String?");
        for quoted in ["A string slice is a reference to part of a String.", "\"A string slice is a reference to part of a String.\" [#1]"] {
            assert!(matches!(judge(&borrowed, quoted), Judgement::Scored { support: 1.0, .. }), "{quoted}");
        }
        // Without the question nothing is an echo.
        assert!(matches!(judge(&ev(), "A loop can hand back a value."), Judgement::Scored { .. }));
        // A short quote of the notes answering a yes-or-no question in its words is no echo either.
        let kettles = Evidence::new([(1, "# Gamma\n\nCopper kettles tarnish.")]).for_question("Do copper kettles tarnish?");
        assert!(matches!(judge(&kettles, "\"Copper kettles tarnish.\" [#1]"), Judgement::Scored { support: 1.0, .. }));
    }

    #[test]
    fn a_copied_sentence_is_attributed_to_its_entry_with_full_support() {
        let a = run("A string slice is a reference to part of a String.");
        assert!(a.grounded(), "{a:?}");
        assert_eq!((a.sentences[0].origin, a.sentences[0].n, a.sentences[0].support), (SentenceOrigin::Attributed, Some(1), 1.0));
    }

    #[test]
    fn a_light_paraphrase_is_attributed() {
        let a = run("To create a project, you run `cargo new hello_cargo`. Cargo is the build system and package manager of Rust.");
        assert!(a.grounded(), "{a:?}");
        assert_eq!(a.attributed_entries().iter().map(|e| e.0).collect::<Vec<_>>(), [2]);
    }

    #[test]
    fn an_invented_number_or_name_vetoes_an_otherwise_copied_sentence() {
        for answer in [
            "Cargo is Rust's build system and package manager since 2015.",
            "Run `cargo new hello_world` to create a project.",
            "Cargo is the build system and package manager written by Mozilla.",
        ] {
            let a = run(answer);
            assert!(!a.grounded(), "{answer}: {a:?}");
            assert!(a.sentences[0].invented.is_some(), "{answer}: {a:?}");
        }
    }

    #[test]
    fn a_code_token_must_appear_as_written() {
        // `String` is in E1 only as a word of prose ("a String"), `&String` as code
        // nowhere; "string" lowercase would match the prose.
        let a = run("A string slice has the type `Strin`.");
        assert_eq!(a.sentences[0].invented.as_deref(), Some("Strin"), "{a:?}");
        assert!(run("It looks like `let hello = &s[0..5];`, a string slice.").grounded());
        // A version is one number, not its parts: `0` and `5` are in E1, `0.5` is not.
        assert_eq!(run("A string slice is a reference to part of a String since 0.5.").sentences[0].invented.as_deref(), Some("0.5"));
    }

    #[test]
    fn facts_in_no_entry_are_unsupported() {
        let a = run("Slices are garbage collected at runtime by a tracing collector.");
        assert_eq!(a.sentences[0].origin, SentenceOrigin::Unsupported, "{a:?}");
        assert!(!a.grounded());
    }

    #[test]
    fn model_markers_stay_the_models_and_courtesy_is_not_a_claim() {
        let a = run("Here is how:\nUse slices [#1]. I hope this helps!");
        assert_eq!(a.sentences.len(), 1, "{a:?}");
        assert_eq!(a.sentences[0].origin, SentenceOrigin::Model);
        assert!(!a.any_attributed() && a.grounded());
    }

    #[test]
    fn an_answer_that_says_the_notes_do_not_answer_is_recognised() {
        assert!(run("The notes do not contain the answer.").says_no_answer);
        assert!(run("노트에 답이 없습니다.").says_no_answer);
        // The built-in answerer's own, in both languages: a refusal, not an unsupported claim.
        for refusal in crate::llm::extractive::REFUSALS {
            assert!(run(refusal).says_no_answer, "{refusal}");
        }
        assert!(!run("A string slice is a reference to part of a String.").says_no_answer);
    }

    #[test]
    fn a_refusal_is_not_judged_as_an_unsupported_claim() {
        for refusal in crate::llm::extractive::REFUSALS {
            let a = run(refusal);
            assert!(a.says_no_answer && a.sentences.is_empty(), "{a:?}");
        }
        // What follows a refusal is still judged.
        let a = run("The notes do not say when. The hive weighed 42 kg.");
        assert_eq!(a.sentences.len(), 1, "{a:?}");
        assert_eq!(a.sentences[0].origin, SentenceOrigin::Unsupported);
    }

    #[test]
    fn names_and_numbers_are_found_whatever_their_place() {
        let found: Vec<String> = special_tokens("Then use `Vec::new()` and HashMap with 3 items for Alice.").into_iter().map(|s| s.text).collect();
        assert_eq!(found, ["Vec::new", "HashMap", "3", "Alice"]);
        assert!(special_tokens("Cargo builds it.").is_empty());
    }
}
