//! A question's misspelt words, read as the notes spell them. "whats the
//! diffrence between Vec and array" was refused: `diffrence` is in no note,
//! so the gate counted it as a rare topic the notes lack, and the search
//! lost the word. A typo is one edit from the word meant, and the notes
//! hold that word; a name the notes lack (a crate, a tool) seldom is
//! (`store::spelling` says which edits).
//!
//! Only words of five letters or more typed in lower case, that no chunk
//! holds, are looked up: a shorter word is a letter short of another word
//! by chance ("form", "forum"), and a capitalised one is more likely a name
//! than a typo.
//!
//! Before a typo, such a word is tried in the other ways notes write it
//! (`other_spellings`): a month or weekday shortened ("august" for notes
//! that say "Aug 21"), a word made with re- as the word it is made from
//! ("redeclaring" → "declaring"), and a word written closed up that the notes
//! hyphenate ("pihole", "wifi" for notes that say "Pi-hole", "Wi-Fi"). That
//! one is tried from four letters: it is two words the notes hold side by
//! side, not a guess.
//!
//! A Korean compound the notes hold no word starting with is read as the two
//! nouns they do hold (`필기시험` → `필기 시험`): `korean_parts`.

use anyhow::Result;
use serde::{Deserialize, Serialize};

use crate::store::{FtsIndex, Store};

/// The shortest word respelt as a typo.
const MIN_LETTERS: usize = 5;

/// The shortest word read as two the notes hyphenate, and the shortest part.
const MIN_SPLIT_LETTERS: usize = 4;
const MIN_PART_LETTERS: usize = 2;

/// The shortest Korean noun read as two written closed up, in syllables,
/// and the shortest part (`필기시험` for notes that write `필기` and `시험`).
const MIN_COMPOUND_SYLLABLES: usize = 4;
const MIN_PART_SYLLABLES: usize = 2;

/// The longest word respelt: each letter adds 26 candidates to look up,
/// and a word this long is a pasted name or code, not a typo.
const MAX_LETTERS: usize = 24;

/// The most words of one question looked up (about 250 index seeks each):
/// a pasted paragraph about something else stays as fast to refuse.
const MAX_LOOKUPS: usize = 3;

/// One word read as another.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Respelling {
    pub typed: String,
    pub read: String,
}

/// `question` with each misspelt word replaced by the word the notes hold,
/// and the words replaced (none for most questions: then the text is
/// `question` itself).
pub fn respell(store: &Store, question: &str) -> Result<(String, Vec<Respelling>)> {
    let mut text = String::with_capacity(question.len());
    let mut done: Vec<Respelling> = Vec::new();
    let mut lookups = 0;
    let mut rest = question;
    while !rest.is_empty() {
        // Runs of letters, digits and `_` are read whole, so an identifier
        // such as `read_to_strng` is left as typed.
        let end = rest.find(|c: char| !c.is_alphanumeric() && c != '_').unwrap_or(rest.len());
        let (word, after) = if end == 0 {
            let c = rest.chars().next().map_or(1, char::len_utf8);
            (&rest[..c], &rest[c..])
        } else {
            (&rest[..end], &rest[end..])
        };
        match respelt(store, word, &done, &mut lookups)? {
            Some(read) => {
                text.push_str(&read);
                if !done.iter().any(|r| r.typed == word) {
                    done.push(Respelling { typed: word.to_string(), read });
                }
            }
            None => text.push_str(word),
        }
        rest = after;
    }
    Ok((text, done))
}

/// What `word` reads as, when it is a typo of a word the notes hold;
/// `lookups` counts the words looked up so far.
fn respelt(store: &Store, word: &str, done: &[Respelling], lookups: &mut usize) -> Result<Option<String>> {
    if let Some(r) = done.iter().find(|r| r.typed == word) {
        return Ok(Some(r.read.clone()));
    }
    if word.chars().all(crate::script::is_hangul) {
        return korean_parts(store, word, lookups);
    }
    if !(MIN_SPLIT_LETTERS..=MAX_LETTERS).contains(&word.len()) || !word.bytes().all(|b| b.is_ascii_lowercase()) {
        return Ok(None);
    }
    if *lookups == MAX_LOOKUPS || store.docs_matching(FtsIndex::Words, &format!("\"{word}\""))? > 0 {
        return Ok(None);
    }
    *lookups += 1;
    // A phrase in quotes is read by the index's own tokenizer: "pi-hole"
    // looks for `pi` then `hole`.
    for other in other_spellings(word) {
        if store.docs_matching(FtsIndex::Words, &format!("\"{other}\""))? > 0 {
            return Ok(Some(other));
        }
    }
    if word.len() < MIN_LETTERS {
        return Ok(None);
    }
    store.nearest_spelling(word)
}

/// A Korean noun the notes hold no word starting with, read as the two
/// they hold that it is made of, its particle kept: `필기시험 점수` asks of
/// notes that write `학과시험 (필기)`, and found nothing. Compounds are
/// written closed up as the asker thinks of them, not as the notes do. Not
/// a verb in the past or a "must" (`올라갔었지`, `넣어야지`), which is no compound.
fn korean_parts(store: &Store, word: &str, lookups: &mut usize) -> Result<Option<String>> {
    let stem = crate::words::strip_particle(word);
    let syllables: Vec<char> = stem.chars().collect();
    if syllables.len() < MIN_COMPOUND_SYLLABLES || crate::script::is_verb_form(word) || *lookups == MAX_LOOKUPS {
        return Ok(None);
    }
    let held = |part: &str| -> Result<bool> { Ok(store.docs_matching(FtsIndex::Words, &format!("\"{part}\"*"))? > 0) };
    if held(stem)? {
        return Ok(None);
    }
    *lookups += 1;
    for at in MIN_PART_SYLLABLES..=syllables.len() - MIN_PART_SYLLABLES {
        let (head, tail): (String, String) = (syllables[..at].iter().collect(), syllables[at..].iter().collect());
        if held(&head)? && held(&tail)? {
            return Ok(Some(format!("{head} {tail}{}", &word[stem.len()..])));
        }
    }
    Ok(None)
}

/// Other spellings of a word the notes lack, to read it as: a month or
/// weekday in full or shortened ("august" for notes that write "Aug 21"),
/// a word made with "re-" as the word it is made from ("redeclaring" →
/// "declaring"), and the word cut in two with a hyphen ("pi-hole").
fn other_spellings(word: &str) -> Vec<String> {
    let mut out: Vec<String> = crate::words::CALENDAR
        .iter()
        .filter_map(|&(full, short)| if word == full { Some(short) } else if word == short { Some(full) } else { None })
        .map(String::from)
        .collect();
    out.extend(word.strip_prefix("re").filter(|b| b.len() >= 5).map(String::from));
    out.extend(
        (MIN_PART_LETTERS..=word.len().saturating_sub(MIN_PART_LETTERS)).map(|at| format!("{}-{}", &word[..at], &word[at..])),
    );
    out
}
